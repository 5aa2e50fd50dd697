//! Whether the disk still holds a recorded tree, checked entry by entry from the record alone
//! ([`Checker`]): what a read asks before it answers from the last scan, without the walk that
//! builds a new listing.
use std::ffi::OsStr;
use std::path::Path;

use super::Racy;
use super::fsdir::{self, DirHandle, Root};
use crate::node::{self, NodeKind, TreeEntry};

/// Checks a recorded tree's entries, given in path order, against the disk: every folder's
/// stat is the one recorded (a stat a scan records vouches for the folder's entries, so none
/// came or went), and every file's and symlink's is the one recorded, a file's not racy. The
/// same rules a scan's walk reuses a folder's listing and a leaf's hash by.
pub(crate) struct Checker<'a> {
    root: Root,
    racy: Racy<'a>,
    /// The folders along the last entry's path, the workspace root first, each open where it
    /// holds [`fsdir::OPEN_MIN_ENTRIES`] or more or is more than [`fsdir::MAX_NAMES_BELOW`] names
    /// below the nearest open one: entries come in path order, so a folder is looked up once
    /// for a run of its entries, and once more, opened whatever it holds, where a sibling's
    /// name sorts between them (`a/b.rs` between `a/b` and `a/b/c`) or the entries given skip
    /// ahead (as a stat check's thread does from one part to the next).
    open: Vec<(String, Option<DirHandle>)>,
}

impl<'a> Checker<'a> {
    /// A checker for the workspace at `root`, trusting file stats by `racy`.
    pub(crate) fn new(root: &Path, racy: Racy<'a>) -> std::io::Result<Self> {
        let root = Root::open(root)?;
        let top = root.handle("", None)?;
        Ok(Checker {
            root,
            racy,
            open: vec![(String::new(), Some(top))],
        })
    }

    /// Whether entry `path` of the recorded tree is as recorded on disk.
    pub(crate) fn holds(&mut self, path: &str, entry: &TreeEntry) -> bool {
        if path.is_empty() {
            return entry.kind == NodeKind::Dir
                && self.open[0]
                    .1
                    .as_ref()
                    .is_some_and(|top| top.stat().is_ok_and(|s| s.same_dir(&entry.stat)));
        }
        let (parent, _) = node::split(path);
        let Some(at) = self.folder(parent) else {
            return false;
        };
        let (above, Some(dir)) = &self.open[at] else {
            return false;
        };
        // By the names below the nearest open folder: its own name where that is its folder.
        let rel = fsdir::below(above, path);
        if entry.kind == NodeKind::Dir {
            if !fsdir::looked_up_through(above, path, entry.stat.size) {
                // Opened rather than stat'ed by name, its stat taken from the open folder: its
                // entries follow in path order and are looked up from it, so its name is
                // looked up once, not once for the stat and once for the opening.
                let Ok(opened) = self.root.handle(path, Some((above, dir))) else {
                    return false;
                };
                let same = opened.stat().is_ok_and(|s| s.same_dir(&entry.stat));
                self.open.push((path.to_owned(), Some(opened)));
                return same;
            }
            let same = dir
                .stat_at(OsStr::new(rel))
                .is_ok_and(|(kind, s)| kind == Some(NodeKind::Dir) && s.same_dir(&entry.stat));
            self.open.push((path.to_owned(), None));
            return same;
        }
        let Ok((kind, stat)) = dir.stat_at(OsStr::new(rel)) else {
            return false;
        };
        kind == Some(entry.kind)
            && stat == entry.stat
            && (entry.kind != NodeKind::File || self.racy.trusts(path, &stat))
    }

    /// Folder `path` at the top of the folders along the path (those not above it let go,
    /// those below the deepest one left opened one name at a time), and where the nearest
    /// open one at or above it is among them.
    fn folder(&mut self, path: &str) -> Option<usize> {
        while self.open.len() > 1 {
            let top = self.open.last().map_or("", |(p, _)| p.as_str());
            let above = path.len() > top.len()
                && path.starts_with(top)
                && path.as_bytes()[top.len()] == b'/';
            if top == path || above {
                break;
            }
            self.open.pop();
        }
        loop {
            let top = self.open.last()?.0.as_str();
            if top == path {
                break;
            }
            let from = if top.is_empty() { 0 } else { top.len() + 1 };
            let end = path[from..].find('/').map_or(path.len(), |i| from + i);
            let next = &path[..end];
            let at = self.open.iter().rposition(|(_, h)| h.is_some())?;
            let (above, dir) = (&self.open[at].0, self.open[at].1.as_ref()?);
            let opened = self.root.handle(next, Some((above, dir))).ok()?;
            self.open.push((next.to_owned(), Some(opened)));
        }
        self.open.iter().rposition(|(_, h)| h.is_some())
    }
}
