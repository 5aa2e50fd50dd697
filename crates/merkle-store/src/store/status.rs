//! `status`: what changed on disk since the last scan, read without writing anything.
use super::tree::racy_rule;
use super::*;

/// A scan's racy record: its stamp, and the paths it could not trust where it kept them.
type RacyRecord = (Option<i64>, Option<PathSet>);

/// The store against the disk, without writing anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusReport {
    /// The root hash of the last scan.
    pub root: NodeId,
    /// Nodes in the last scan's tree.
    pub nodes: u64,
    /// Frames in the store.
    pub frames: u64,
    /// Leaves that differ on disk from the last scan, and folders added or removed that no
    /// such leaf implies (one that is empty, or whose files are all ignored: a scan records it
    /// all the same), sorted by path. Empty exactly when a scan would keep the root.
    pub changed_on_disk: Vec<(String, Change)>,
    /// Entries skipped, with why.
    pub warnings: Vec<String>,
    /// Directories read from the disk; the others' entries were those of the last scan, whose
    /// stat vouched for them (see the scan module's documentation).
    pub dirs_read: u64,
}

impl Store {
    /// The last scan's root when the disk still holds its tree, as far as stats tell: every
    /// folder's stat is the one the scan recorded (so no entry came or went), every file's and
    /// symlink's stat is the one recorded and a file's is not racy, and the ignore rules from
    /// outside the tree are those it was walked under; the rules a scan's walk reuses the last
    /// listing and hash by, so a scan now would find nothing changed. `None` when anything
    /// differs or cannot be vouched for (a folder whose stat was not recorded, a racy file):
    /// a scan, or its plan, then says what changed. Writes nothing and builds nothing: the
    /// recorded tree is read once by two threads side by side (the table's two halves), each
    /// entry stat'ed from its folder, open where it holds many entries (else from the nearest open
    /// folder above), the first that differs ending both threads' reads.
    pub fn unchanged_on_disk(&self) -> Result<Option<NodeId>> {
        let _guard = self.lock();
        let Some((root, (stamp, racy_paths))) = self.stat_check_record()? else {
            return Ok(None);
        };
        let racy = racy_rule(stamp, racy_paths.as_ref());
        // Whether an entry holds on disk; the first that does not ends both threads' reads.
        use std::sync::atomic::Ordering::Relaxed;
        let differs = std::sync::atomic::AtomicBool::new(false);
        let checker = || scan::Checker::new(&self.workspace, racy).ok();
        let holds = |checker: &mut scan::Checker, path: &str, e: &TreeEntry| {
            if !checker.holds(path, e) {
                differs.store(true, Relaxed);
            }
            !differs.load(Relaxed)
        };
        // Each half from `start` up to `end`.
        let check = |start: &[u8], end: Option<&[u8]>| -> Result<bool> {
            let Some(mut checker) = checker() else {
                return Ok(false);
            };
            self.tree_range(
                start,
                |k| !differs.load(Relaxed) && end.is_none_or(|end| k < end),
                |path, e| {
                    holds(&mut checker, path, &e);
                },
            )?;
            Ok(!differs.load(Relaxed))
        };
        let all_hold = self.tree_halves(check)?.into_iter().all(|h| h);
        // A scan through another handle may have landed meanwhile: the answer is for one tree.
        Ok((all_hold && self.root()? == Some(root)).then_some(root))
    }

    /// What a stat check of the last scan's tree reads first: its root and racy record; `None`
    /// where there is no scan, or the ignore rules from outside the tree are not those it was
    /// walked under (the whole tree may differ).
    fn stat_check_record(&self) -> Result<Option<(NodeId, RacyRecord)>> {
        let Some(root) = self.root()? else {
            return Ok(None);
        };
        let ignores = scan::IgnoreSources::read(&self.workspace).fingerprint;
        if self.ignore_record()? != Some(ignores) {
            return Ok(None);
        }
        Ok(Some((root, self.racy_record()?)))
    }

    /// [`Store::unchanged_on_disk`] for the part of the tree at or below `folders` alone
    /// (workspace-relative, `/`-separated; `""` is the whole tree): what a file watcher that
    /// could not watch those folders leaves a read to check, by the same rules. A folder the
    /// tree does not hold (an ignored one) holds: its parent's stat, checked where the parent
    /// is not watched, says whether entries came or went. Two folders or more are checked on
    /// two threads, each taking the next folder. Writes nothing.
    pub fn unchanged_below(&self, folders: &[String]) -> Result<Option<NodeId>> {
        if folders.iter().any(String::is_empty) {
            return self.unchanged_on_disk();
        }
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
        self.stat_checked(|racy| {
            // Two threads side by side, each taking the next folder (the stats are most of a
            // read beside a watch that could not watch the whole tree); a folder that differs,
            // or an error, ends both at their next folder.
            let next = AtomicUsize::new(0);
            let stop = AtomicBool::new(false);
            let checked = || -> Result<bool> {
                let Ok(mut checker) = scan::Checker::new(&self.workspace, racy) else {
                    return Ok(false);
                };
                while let Some(folder) = folders.get(next.fetch_add(1, Relaxed)) {
                    if stop.load(Relaxed) || !self.entries_hold(&mut checker, folder, true)?.0 {
                        return Ok(false);
                    }
                }
                Ok(true)
            };
            let part = || {
                let held = checked();
                if !matches!(held, Ok(true)) {
                    stop.store(true, Relaxed);
                }
                held
            };
            if folders.len() < 2 {
                return part();
            }
            let (first, second) = super::tree::side_by_side(part, part);
            match (first, second) {
                (Err(e), _) | (_, Err(e)) => Err(e),
                (Ok(a), Ok(b)) => Ok(a && b),
            }
        })
    }

    /// [`Store::unchanged_on_disk`] for what a read of the node at `path` answers from (`""`
    /// is the whole tree): the entries at and below `path`, and along the way to it each
    /// folder's own entry (its stat says whether an entry came or went there, `path` itself
    /// or a `.gitignore`) and its `.gitignore`, which decide what the tree holds at `path`.
    /// `None` also where the tree holds nothing at `path` (given as the tree spells it:
    /// [`crate::normalize_path`]'s form). The rest of the tree is not looked at: a read of one
    /// file pays for a handful of stats, not for the whole tree. Writes nothing.
    pub fn unchanged_along(&self, path: &str) -> Result<Option<NodeId>> {
        if path.is_empty() {
            return self.unchanged_on_disk();
        }
        self.stat_checked(|racy| {
            let Ok(mut checker) = scan::Checker::new(&self.workspace, racy) else {
                return Ok(false);
            };
            let checker = &mut checker;
            let mut above = vec![""];
            above.extend(path.match_indices('/').map(|(i, _)| &path[..i]));
            for folder in above {
                let ignore = node::join(folder, ".gitignore");
                for entry in [folder, ignore.as_str()] {
                    if !self.entries_hold(checker, entry, false)?.0 {
                        return Ok(false);
                    }
                }
            }
            let (holds, found) = self.entries_hold(checker, path, true)?;
            Ok(holds && found)
        })
    }

    /// The last scan's root where `check` finds its recorded stats hold on disk, by checkers
    /// under that scan's racy rule (false where one cannot be made); `None` where they do not,
    /// or cannot be vouched for (no scan, other ignore rules from outside the tree). Writes
    /// nothing.
    fn stat_checked(
        &self,
        check: impl FnOnce(scan::Racy<'_>) -> Result<bool>,
    ) -> Result<Option<NodeId>> {
        let _guard = self.lock();
        let Some((root, (stamp, racy_paths))) = self.stat_check_record()? else {
            return Ok(None);
        };
        if !check(racy_rule(stamp, racy_paths.as_ref()))? {
            return Ok(None);
        }
        // A scan through another handle may have landed meanwhile: the answer is for one tree.
        Ok((self.root()? == Some(root)).then_some(root))
    }

    /// Whether the tree's entry at `path`, and with `below` every entry below it, hold on disk
    /// by `checker`; and whether the tree has an entry at `path`. Holds where it has none.
    fn entries_hold(
        &self,
        checker: &mut scan::Checker,
        path: &str,
        below: bool,
    ) -> Result<(bool, bool)> {
        let holds = std::cell::Cell::new(true);
        let mut found = false;
        self.tree_range(
            path.as_bytes(),
            |k| holds.get() && k == path.as_bytes(),
            |p, e| {
                found = true;
                holds.set(checker.holds(p, &e));
            },
        )?;
        if below && holds.get() {
            // Everything below it: a range of its own, as `a.rs` sorts between `a` and `a/`.
            let prefix = format!("{path}/");
            self.tree_range(
                prefix.as_bytes(),
                |k| holds.get() && k.starts_with(prefix.as_bytes()),
                |p, e| holds.set(checker.holds(p, &e)),
            )?;
        }
        Ok((holds.get(), found))
    }

    /// Compares the disk with the last scan. Writes nothing: files whose stat changed are hashed
    /// to tell a real change from a touch.
    pub fn status(&self) -> Result<StatusReport> {
        // The tree and the racy record must be the same scan's: not one from before and one
        // from after a scan through this handle.
        let _guard = self.lock();
        let root = self.root()?.ok_or(Error::NotScanned)?;
        let (stamp_prev, racy_prev) = self.racy_record()?;
        let racy = racy_rule(stamp_prev, racy_prev.as_ref());
        let (mut walked, prev) = self.walk_and_load(None, racy, self.ignore_record()?)?;
        scan::hash_leaves(
            &mut walked,
            &HashConfig {
                root: &self.workspace,
                prev: &prev,
                racy,
                force: false,
                progress: None,
            },
        );
        let mut changes = Vec::new();
        let mut seen_before = 0;
        for leaf in &walked.leaves {
            if leaf.reused {
                // Same kind and stat as the last scan recorded: unchanged, no lookup needed.
                seen_before += 1;
                continue;
            }
            match prev.get(&leaf.path) {
                None => changes.push((leaf.path.clone(), Change::Added)),
                Some(p) if p.kind == NodeKind::Dir => {
                    changes.push((leaf.path.clone(), Change::Added))
                }
                Some(p) => {
                    seen_before += 1;
                    if p.content_hash != leaf.content_hash || p.kind != leaf.kind {
                        changes.push((leaf.path.clone(), Change::Modified));
                    }
                }
            }
        }
        // Only when some leaf of the last scan was not met on disk is it worth finding which.
        if seen_before < prev.values().filter(|e| e.kind.is_leaf()).count() {
            let on_disk: std::collections::HashSet<&str> =
                walked.leaves.iter().map(|l| l.path.as_str()).collect();
            for (path, e) in &prev {
                if e.kind.is_leaf() && !on_disk.contains(path.as_str()) {
                    changes.push((path.clone(), Change::Deleted));
                }
            }
        }
        folder_changes(&walked, &prev, &mut changes);
        changes.sort();
        let report = StatusReport {
            root,
            nodes: prev.len() as u64,
            frames: self.engine.count(Table::Frames)?,
            changed_on_disk: changes,
            warnings: std::mem::take(&mut walked.warnings),
            dirs_read: walked.dirs_read,
        };
        // Freeing a map and a list of every path is a hundred thousand frees: do it off the
        // caller's path, on the pool.
        rayon::spawn(move || drop((prev, walked)));
        Ok(report)
    }
}

/// Adds to `changes` the folders that appeared or went away with no leaf change beneath them
/// to say so (`changes` holds the leaves' changes). A hash lookup per folder on disk; the
/// last scan's folders are looked through only when some of them were not met.
fn folder_changes(
    walked: &scan::Walked,
    prev: &PathMap<TreeEntry>,
    changes: &mut Vec<(String, Change)>,
) {
    let is_dir = |path: &str| prev.get(path).is_some_and(|e| e.kind == NodeKind::Dir);
    let mut met = 0;
    let mut new: Vec<&str> = Vec::new();
    for dir in &walked.dirs {
        if is_dir(&dir.path) {
            met += 1;
        } else {
            new.push(&dir.path);
        }
    }
    let before = prev
        .iter()
        .filter(|(path, e)| e.kind == NodeKind::Dir && !path.is_empty())
        .count();
    if new.is_empty() && met == before {
        return;
    }
    // The folders above a changed leaf: a change of theirs is already said.
    let mut implied: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (path, _) in changes.iter() {
        let mut at = path.as_str();
        while let Some((parent, _)) = at.rsplit_once('/') {
            if !implied.insert(parent) {
                break;
            }
            at = parent;
        }
    }
    let mut found: Vec<(String, Change)> = new
        .into_iter()
        .filter(|d| !implied.contains(d))
        .map(|d| (d.to_owned(), Change::Added))
        .collect();
    if met < before {
        let on_disk: std::collections::HashSet<&str> =
            walked.dirs.iter().map(|d| d.path.as_str()).collect();
        for (path, e) in prev {
            if e.kind == NodeKind::Dir
                && !path.is_empty()
                && !on_disk.contains(path.as_str())
                && !implied.contains(path.as_str())
            {
                found.push((path.clone(), Change::Deleted));
            }
        }
    }
    changes.extend(found);
}
