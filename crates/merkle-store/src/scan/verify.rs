//! Whether the disk still holds a recorded tree, checked entry by entry from the record alone
//! ([`Checker`]): what a read asks before it answers from the last scan, without the walk that
//! builds a new listing.
use std::ffi::OsStr;
use std::path::Path;

use super::Racy;
use super::fsdir::{DirHandle, Root};
use crate::node::{self, NodeKind, TreeEntry};

/// Checks a recorded tree's entries, given in path order, against the disk: every folder's
/// stat is the one recorded (a stat a scan records vouches for the folder's entries, so none
/// came or went), and every file's and symlink's is the one recorded, a file's not racy. The
/// same rules a scan's walk reuses a folder's listing and a leaf's hash by.
pub(crate) struct Checker<'a> {
    root: Root,
    racy: Racy<'a>,
    /// The folders open along the last entry's path, the workspace root first: entries come in
    /// path order, so a folder is opened once for a run of its entries (once more where a
    /// sibling's name sorts between them, as `a/b.rs` between `a/b` and `a/b/c`, or where the
    /// entries given skip ahead, as a stat check's thread does from one part to the next).
    open: Vec<(String, DirHandle)>,
}

impl<'a> Checker<'a> {
    /// A checker for the workspace at `root`, trusting file stats by `racy`.
    pub(crate) fn new(root: &Path, racy: Racy<'a>) -> std::io::Result<Self> {
        let root = Root::open(root)?;
        let top = root.handle("", None)?;
        Ok(Checker {
            root,
            racy,
            open: vec![(String::new(), top)],
        })
    }

    /// Whether entry `path` of the recorded tree is as recorded on disk.
    pub(crate) fn holds(&mut self, path: &str, entry: &TreeEntry) -> bool {
        if path.is_empty() {
            return entry.kind == NodeKind::Dir
                && self.open[0].1.stat().is_ok_and(|s| s.same_dir(&entry.stat));
        }
        let (parent, name) = node::split(path);
        if self.folder(parent).is_none() {
            return false;
        }
        let Some((_, dir)) = self.open.last() else {
            return false;
        };
        if entry.kind == NodeKind::Dir {
            // Opened rather than stat'ed by name, its stat taken from the open folder: its
            // entries follow in path order and are looked up from it, so its name is looked
            // up once, not once for the stat and once for the opening.
            let Ok(opened) = self.root.handle(path, Some(dir)) else {
                return false;
            };
            let same = opened.stat().is_ok_and(|s| s.same_dir(&entry.stat));
            self.open.push((path.to_owned(), opened));
            return same;
        }
        let Ok((kind, stat)) = dir.stat_at(OsStr::new(name)) else {
            return false;
        };
        kind == Some(entry.kind)
            && stat == entry.stat
            && (entry.kind != NodeKind::File || self.racy.trusts(path, &stat))
    }

    /// Folder `path`, open: the folders open that are not above it closed, those below the
    /// deepest one left opened one name at a time.
    fn folder(&mut self, path: &str) -> Option<&DirHandle> {
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
            let (top, handle) = self.open.last()?;
            if top == path {
                break;
            }
            let from = if top.is_empty() { 0 } else { top.len() + 1 };
            let end = path[from..].find('/').map_or(path.len(), |i| from + i);
            let next = &path[..end];
            let opened = self.root.handle(next, Some(handle)).ok()?;
            self.open.push((next.to_owned(), opened));
        }
        self.open.last().map(|(_, h)| h)
    }
}
