//! [`Store::scan_paths`]: a rescan of only what changes at known paths can have changed, for
//! callers told where the disk changed (`merkle watch`'s file events), built on the last scan's
//! tree without visiting the rest of the disk.
//!
//! For each touched path, the directory holding it is listed again (its entries stat'ed, and
//! hashed where the stat changed, as a full scan does), and so is the path itself if it is a
//! directory of the last tree; a touched path whose directory is not in the last tree hands on
//! to the nearest one that is. A directory that appeared in a listing is walked whole; one that
//! is gone is dropped with everything below it; a directory whose `.gitignore` changed is walked
//! again whole. Then the changed directories and everything above them are recomputed from
//! their children: listed ones from their listing, the others from their last record with the
//! recomputed children swapped in. The result is the tree a full scan would have built, if the
//! touched paths cover every change (a caller that may have missed one, after a watcher's queue
//! overflowed, say, runs a full [`Store::scan`]).
//!
//! **Racy files are tracked by path.** A file whose mtime is not older than the start of the
//! scan that hashed it may be written again in the same clock tick with an unchanged stat, so
//! it is hashed again when next seen. A full scan could keep that as one stamp (every file
//! not older than it is suspect), but a targeted scan sees only part of the tree: moving the
//! stamp on would vouch for files it never looked at, and not moving it would make every file
//! changed since the last full scan suspect for ever. So each scan records the racy paths
//! themselves (beside the stamp): those it hashed racily, and those of the last record it did
//! not see.
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::{META_COUNTS, META_ROOT, META_STAMP, ScanOptions, ScanReport, Store, StoredNode};
use crate::engine::{Batch, Table};
use crate::error::{Error, Result};
use crate::hash::NodeId;
use crate::node::{self, Child, NodeKind, PathMap, PathSet, TreeEntry};
use crate::scan::{self, HashConfig, Walked};

/// Directories to list again (those holding a touched path) and directories to walk again
/// whole (a touched path that is a directory, or holds a `.gitignore` that changed) for changes
/// at `paths`; `None` when only a full scan will do (the root itself is touched, or its
/// `.gitignore`, or `.git/info/exclude`, or a path is not a workspace path).
///
/// A touched directory is walked whole, not only listed, because an event naming a directory
/// can mean anything below it changed: `mv dist dist.old && mv dist.new dist` names only `dist`.
fn touched(paths: &[String]) -> Option<(BTreeSet<String>, BTreeSet<String>)> {
    let mut list = BTreeSet::new();
    let mut walk = BTreeSet::new();
    for path in paths {
        let p = path.trim_end_matches('/');
        if p.is_empty() || p == ".git/info/exclude" {
            return None;
        }
        if p.starts_with('/') || p.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
            return None;
        }
        // Never part of the tree, and the store's own writes are no change to it.
        if p.split('/').any(|c| c == ".git") || p == ".merkle" || p.starts_with(".merkle/") {
            continue;
        }
        let (parent, name) = node::split(p);
        if name == ".gitignore" {
            if parent.is_empty() {
                return None;
            }
            walk.insert(parent.to_owned());
        }
        list.insert(parent.to_owned());
        walk.insert(p.to_owned());
    }
    Some((list, walk))
}

/// Whether `path` is `dir` or below it.
fn at_or_below(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path == dir
        || (path.len() > dir.len() && path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/')
}

fn depth(path: &str) -> usize {
    if path.is_empty() {
        0
    } else {
        path.matches('/').count() + 1
    }
}

/// The last tree's entries a targeted scan has read, by path: only those it needs.
struct Last<'s> {
    store: &'s Store,
    entries: PathMap<Option<TreeEntry>>,
}

impl Last<'_> {
    fn entry(&mut self, path: &str) -> Result<Option<TreeEntry>> {
        if let Some(e) = self.entries.get(path) {
            return Ok(*e);
        }
        let e = match self.store.engine.get(Table::Tree, path.as_bytes())? {
            Some(v) => Some(TreeEntry::decode(path.as_bytes(), &v)?),
            None => None,
        };
        self.entries.insert(path.to_owned(), e);
        Ok(e)
    }

    fn is_dir(&mut self, path: &str) -> Result<bool> {
        Ok(self.entry(path)?.is_some_and(|e| e.kind == NodeKind::Dir))
    }

    /// A directory's children in the last tree.
    fn children(&mut self, dir: &str) -> Result<Vec<Child>> {
        let Some(e) = self.entry(dir)? else {
            return Ok(Vec::new());
        };
        let record = self.store.node(&e.node_id)?.ok_or_else(|| {
            Error::corrupt("nodes", &e.node_id.0, "a tree entry's node is missing")
        })?;
        Ok(record.children)
    }

    /// Marks `path` and, for a directory, everything below it as gone from the tree.
    fn remove(&mut self, removed: &mut BTreeSet<String>, path: &str) -> Result<()> {
        if removed.insert(path.to_owned()) && self.is_dir(path)? {
            removed.extend(self.below(path)?);
        }
        Ok(())
    }

    /// Every path strictly below `dir` in the last tree, read in one ordered scan.
    fn below(&mut self, dir: &str) -> Result<Vec<String>> {
        let mut found = Vec::new();
        let entries = &mut self.entries;
        self.store.tree_entries(&format!("{dir}/"), |path, e| {
            entries.insert(path.to_owned(), Some(e));
            found.push(path.to_owned());
        })?;
        Ok(found)
    }
}

impl Store {
    /// The report of a targeted scan that found nothing of the tree touched.
    fn unchanged_report(&self, warnings: Vec<String>, dirs_read: u64) -> Result<ScanReport> {
        let (files, dirs) = self.tree_counts()?.unwrap_or_default();
        Ok(ScanReport {
            root: self.root()?.ok_or(Error::NotScanned)?,
            files,
            dirs,
            changed_paths: Vec::new(),
            hashed: 0,
            hashed_bytes: 0,
            dirs_recomputed: 0,
            writes: 0,
            warnings,
            dirs_read,
        })
    }

    /// Rescans only what changes at `paths` (workspace-relative, `/`-separated) can have
    /// changed: a path that is a file, with its directory's other entries; a directory, with
    /// everything below it. The rest of the disk is not visited; see the module documentation.
    /// Falls back to a full [`Store::scan`] where it cannot build on the last scan (there is
    /// none, the root or its `.gitignore` is touched, or the disk changed under the scan in a
    /// way its listings did not see). The report's `files` and `dirs` count the whole tree.
    pub fn scan_paths(&self, paths: &[String], opts: &ScanOptions<'_>) -> Result<ScanReport> {
        if let Some((to_list, to_walk)) = touched(paths) {
            let guard = self.lock();
            if let Some(report) = self.scan_touched(to_list, to_walk, opts)? {
                return Ok(report);
            }
            drop(guard);
        }
        self.scan(opts)
    }

    /// The targeted scan itself, under the write lock; `None`: a full scan must do.
    fn scan_touched(
        &self,
        to_list: BTreeSet<String>,
        to_walk: BTreeSet<String>,
        opts: &ScanOptions<'_>,
    ) -> Result<Option<ScanReport>> {
        let Some(counts) = self.tree_counts()? else {
            return Ok(None);
        };
        let (_, Some(racy_prev)) = self.racy_record()? else {
            return Ok(None);
        };
        if self.root()?.is_none() {
            return Ok(None);
        }
        let stamp = self.take_stamp()?;
        let last = Last {
            store: self,
            entries: PathMap::default(),
        };
        let skip = self.skip_dirs();
        // The ignore rules from outside the tree, read once for every walk below, must be the
        // ones the last full scan recorded: under any others (`.git/info/exclude` edited, say)
        // the whole tree may change, and the folder stats recorded here would vouch for
        // listings made under rules the tree was not.
        let sources = scan::IgnoreSources::read(&self.workspace);
        if self.ignore_record()? != Some(sources.fingerprint) {
            return Ok(None);
        }
        let mut t = Targeted {
            store: self,
            last,
            sources,
            skip,
            stamp,
            racy_prev,
            counts,
            warnings: Vec::new(),
            dirs_read: 0,
            removed: BTreeSet::new(),
        };

        let mut listed = t.list(to_list)?;
        let new_dirs = t.take_away(&mut listed)?;
        let Some(to_walk) = t.changed_ignores(&listed, to_walk)? else {
            return Ok(None);
        };
        let Some((deep, roots)) = t.walk_whole(new_dirs, to_walk)? else {
            return Ok(None);
        };
        listed.retain(|dir, _| !roots.iter().any(|r| at_or_below(dir, r)));
        let (seen, prev) = t.hash_seen(deep, &mut listed, opts)?;

        // The new entries: leaves first, then directories deepest first.
        let mut entries: BTreeMap<String, TreeEntry> = BTreeMap::new();
        let mut records: Vec<StoredNode> = Vec::new();
        for leaf in &seen.leaves {
            let (entry, record) = super::build::leaf_entry(leaf, prev.get(&leaf.path));
            entries.insert(leaf.path.clone(), entry);
            records.extend(record);
        }
        let (children, dir_stats) = disk_children(&listed, &seen, &roots);
        t.drop_unlisted(&listed, &children)?;
        if children.is_empty() {
            // Nothing the tree holds was touched.
            return self.unchanged_report(t.warnings, t.dirs_read).map(Some);
        }
        let Some(dirs_recomputed) =
            t.recompute(children, &dir_stats, &mut entries, &mut records)?
        else {
            return Ok(None);
        };
        t.commit(entries, records, &seen, dirs_recomputed).map(Some)
    }
}

/// A targeted scan under way: what it read once at the start, and what its phases gather.
struct Targeted<'s> {
    store: &'s Store,
    last: Last<'s>,
    sources: scan::IgnoreSources,
    skip: Vec<PathBuf>,
    stamp: i64,
    /// The racy paths the last scan recorded.
    racy_prev: PathSet,
    /// The tree's (files, dirs), as recorded and then as the scan changes it.
    counts: (u64, u64),
    warnings: Vec<String>,
    dirs_read: u64,
    /// Paths of the last tree that are gone from the new one (or walked again).
    removed: BTreeSet<String>,
}

impl Targeted<'_> {
    /// Lists each touched directory again; a path that is no directory of the last tree (a
    /// file, or something new or gone) hands on to its nearest directory that is.
    fn list(&mut self, mut to_list: BTreeSet<String>) -> Result<BTreeMap<String, Walked>> {
        let mut listed: BTreeMap<String, Walked> = BTreeMap::new();
        let mut tried = BTreeSet::new();
        while let Some(dir) = to_list.pop_last() {
            if !tried.insert(dir.clone()) {
                continue;
            }
            if !self.last.is_dir(&dir)? {
                to_list.insert(node::split(&dir).0.to_owned());
                continue;
            }
            match scan::walk_below(
                &self.store.workspace,
                &self.sources,
                &dir,
                false,
                self.skip.clone(),
                Some(self.stamp),
            ) {
                Ok(w) => {
                    self.dirs_read += w.dirs_read;
                    listed.insert(dir, w);
                }
                Err(e) if dir.is_empty() => return Err(Error::io(&self.store.workspace, e)),
                // Gone, or no longer a directory: the listing of its parent says so.
                Err(_) => {
                    to_list.insert(node::split(&dir).0.to_owned());
                }
            }
        }
        Ok(listed)
    }

    /// Marks what each listing took away from the last tree as removed, and returns the
    /// directories that are new. Parents first: a directory its parent's listing removed has
    /// nothing left to list, and leaves `listed`.
    fn take_away(&mut self, listed: &mut BTreeMap<String, Walked>) -> Result<BTreeSet<String>> {
        let mut new_dirs: BTreeSet<String> = BTreeSet::new();
        let dirs_listed: Vec<String> = listed.keys().cloned().collect();
        for dir in dirs_listed {
            if self.removed.contains(&dir) {
                listed.remove(&dir);
                continue;
            }
            let w = listed.get(&dir).expect("listed above");
            let now: BTreeMap<&str, bool> = w
                .leaves
                .iter()
                .map(|l| (node::split(&l.path).1, false))
                .chain(w.dirs.iter().map(|d| (node::split(&d.path).1, true)))
                .collect();
            let before = self.last.children(&dir)?;
            let mut gone = Vec::new();
            for child in &before {
                let was_dir = child.kind == NodeKind::Dir;
                if now.get(child.name.as_str()) != Some(&was_dir) {
                    gone.push(node::join(&dir, &child.name));
                }
            }
            let kept_dirs: BTreeSet<&str> = before
                .iter()
                .filter(|c| c.kind == NodeKind::Dir)
                .map(|c| c.name.as_str())
                .collect();
            for d in &w.dirs {
                if !kept_dirs.contains(node::split(&d.path).1) {
                    new_dirs.insert(d.path.clone());
                }
            }
            for path in gone {
                self.last.remove(&mut self.removed, &path)?;
            }
        }
        listed.retain(|dir, _| !self.removed.contains(dir.as_str()));
        Ok(new_dirs)
    }

    /// `to_walk` with every listed directory whose `.gitignore` changed (before that file's
    /// own event came, or without one): that changes the rules below it, so it is walked whole,
    /// as that event would have had it; the directory stats below were recorded under the old
    /// rules. `None` when the root's changed: a full scan must do.
    fn changed_ignores(
        &mut self,
        listed: &BTreeMap<String, Walked>,
        mut to_walk: BTreeSet<String>,
    ) -> Result<Option<BTreeSet<String>>> {
        for (dir, w) in listed {
            let path = node::join(dir, ".gitignore");
            let now = w.leaves.iter().find(|l| l.path == path);
            let before = self.last.entry(&path)?;
            let same = match (now, before) {
                (None, None) => true,
                (Some(l), Some(e)) => {
                    l.kind == e.kind && l.stat == e.stat && !self.racy_prev.contains(&path)
                }
                _ => false,
            };
            if !same {
                if dir.is_empty() {
                    return Ok(None);
                }
                to_walk.insert(dir.clone());
            }
        }
        Ok(Some(to_walk))
    }

    /// Walks new directories whole, and touched ones that are still there. Outermost first:
    /// one inside another is covered by it. What the walks found, and the directories walked;
    /// `None` when one listed a moment ago is gone (the disk is still changing under the scan).
    fn walk_whole(
        &mut self,
        new_dirs: BTreeSet<String>,
        to_walk: BTreeSet<String>,
    ) -> Result<Option<(Walked, Vec<String>)>> {
        let mut roots: Vec<String> = Vec::new();
        let mut candidates: BTreeSet<String> = new_dirs;
        for dir in to_walk {
            if self.last.is_dir(&dir)? && !self.removed.contains(&dir) {
                candidates.insert(dir);
            }
        }
        let mut deep = Walked::default();
        for dir in candidates {
            if roots.iter().any(|r| at_or_below(&dir, r)) {
                continue;
            }
            if self.last.is_dir(&dir)? {
                // What was below it goes; the walk brings back what still belongs.
                self.removed.extend(self.last.below(&dir)?);
            }
            match scan::walk_below(
                &self.store.workspace,
                &self.sources,
                &dir,
                true,
                self.skip.clone(),
                Some(self.stamp),
            ) {
                Ok(mut w) => {
                    self.dirs_read += w.dirs_read;
                    deep.leaves.append(&mut w.leaves);
                    deep.dirs.append(&mut w.dirs);
                    deep.dirs.push(scan::WalkedDir {
                        path: dir.clone(),
                        stat: w.top,
                    });
                    self.warnings.append(&mut w.warnings);
                    roots.push(dir);
                }
                // Listed a moment ago, gone now: the disk is still changing under the scan.
                Err(_) => return Ok(None),
            }
        }
        Ok(Some((deep, roots)))
    }

    /// Every leaf seen on disk (walked in `deep`, or taken out of `listed`), hashed where its
    /// stat changed, with the last tree's entries at their paths.
    fn hash_seen(
        &mut self,
        deep: Walked,
        listed: &mut BTreeMap<String, Walked>,
        opts: &ScanOptions<'_>,
    ) -> Result<(Walked, PathMap<TreeEntry>)> {
        let mut seen = deep;
        for w in listed.values_mut() {
            seen.leaves.append(&mut w.leaves);
            self.warnings.append(&mut w.warnings);
        }
        let mut prev: PathMap<TreeEntry> = PathMap::default();
        for leaf in &seen.leaves {
            if let Some(e) = self.last.entry(&leaf.path)? {
                prev.insert(leaf.path.clone(), e);
            }
        }
        scan::hash_leaves(
            &mut seen,
            &HashConfig {
                root: &self.store.workspace,
                prev: &prev,
                racy: scan::Racy::Paths(&self.racy_prev),
                force: opts.force,
                progress: opts.progress,
            },
        );
        self.warnings.append(&mut seen.warnings);
        Ok((seen, prev))
    }

    /// Marks removed a listed directory's children of the last tree that it no longer holds
    /// (gone since, or unreadable now, as a full scan would leave them out).
    fn drop_unlisted(
        &mut self,
        listed: &BTreeMap<String, Walked>,
        children: &BTreeMap<String, Vec<String>>,
    ) -> Result<()> {
        for dir in listed.keys() {
            let now: BTreeSet<&String> = children.get(dir).into_iter().flatten().collect();
            for child in self.last.children(dir)? {
                let path = node::join(dir, &child.name);
                if !now.contains(&path) {
                    self.last.remove(&mut self.removed, &path)?;
                }
            }
        }
        Ok(())
    }

    /// Recomputes the directories of `children` and every directory above them, deepest
    /// first, into `entries` and `records`: those with children from the disk from them, the
    /// others from their last record with the recomputed children swapped in. How many nodes
    /// changed; `None` when a child is one the last tree does not hold, or one this scan took
    /// away: the disk changed between the listings, and only a full scan sees it whole.
    fn recompute(
        &mut self,
        mut children: BTreeMap<String, Vec<String>>,
        dir_stats: &BTreeMap<&str, node::Stat>,
        entries: &mut BTreeMap<String, TreeEntry>,
        records: &mut Vec<StoredNode>,
    ) -> Result<Option<u64>> {
        let mut dirs_recomputed = 0;
        for dir in recompute_order(&children) {
            let kids: Vec<String> = match children.remove(&dir) {
                Some(kids) => kids,
                None => self
                    .last
                    .children(&dir)?
                    .into_iter()
                    .map(|c| node::join(&dir, &c.name))
                    .collect(),
            };
            let mut named: Vec<(String, TreeEntry)> = Vec::with_capacity(kids.len());
            for path in kids {
                let e = match entries.get(&path) {
                    Some(e) => *e,
                    None => match self.last.entry(&path)? {
                        Some(e) if !self.removed.contains(&path) => e,
                        _ => return Ok(None),
                    },
                };
                named.push((node::split(&path).1.to_owned(), e));
            }
            // One not read again keeps its stat: its entries are the last tree's.
            let stat = match dir_stats.get(dir.as_str()) {
                Some(stat) => *stat,
                None => self.last.entry(&dir)?.map(|e| e.stat).unwrap_or_default(),
            };
            let (entry, record) = super::build::dir_entry(&dir, stat, &mut named);
            if self.last.entry(&dir)?.map(|e| e.node_id) != Some(entry.node_id) {
                dirs_recomputed += 1;
                records.push(record);
            }
            entries.insert(dir, entry);
        }
        Ok(Some(dirs_recomputed))
    }

    /// Stages the changed entries and the removal of the paths gone, counting the tree's files
    /// and directories as they change; the paths whose node changed or that went, and of
    /// those, the ones that held a node before, with it.
    fn stage_tree(
        &mut self,
        entries: &BTreeMap<String, TreeEntry>,
        batch: &mut Batch,
    ) -> Result<(Vec<String>, Replaced)> {
        let (mut files, mut dirs) = self.counts;
        let mut changed = Vec::new();
        let mut replaced = Vec::new();
        let count = |e: Option<&TreeEntry>| match e {
            Some(e) if e.kind == NodeKind::Dir => (0, 1),
            Some(_) => (1, 0),
            None => (0, 0),
        };
        for (path, entry) in entries {
            let old = self.last.entry(path)?;
            if old.map(|o| o.node_id) != Some(entry.node_id) {
                changed.push(path.clone());
                if let Some(o) = &old {
                    replaced.push((path.clone(), o.node_id));
                }
            }
            if old.as_ref() != Some(entry) {
                batch.put(Table::Tree, path.clone().into_bytes(), entry.encode());
            }
            let (f0, d0) = count(old.as_ref());
            let (f1, d1) = count(Some(entry));
            files = (files + f1).saturating_sub(f0);
            dirs = (dirs + d1).saturating_sub(d0);
        }
        for path in &self.removed {
            if entries.contains_key(path) {
                continue;
            }
            let old = self.last.entry(path)?;
            let (f0, d0) = count(old.as_ref());
            files = files.saturating_sub(f0);
            dirs = dirs.saturating_sub(d0);
            changed.push(path.clone());
            if let Some(o) = &old {
                replaced.push((path.clone(), o.node_id));
            }
            batch.delete(Table::Tree, path.clone().into_bytes());
        }
        self.counts = (files, dirs);
        Ok((changed, replaced))
    }

    /// Commits in one transaction the changed entries, the removed ones, the new records, the
    /// root and the counts, and reports the scan.
    fn commit(
        mut self,
        entries: BTreeMap<String, TreeEntry>,
        records: Vec<StoredNode>,
        seen: &Walked,
        dirs_recomputed: u64,
    ) -> Result<ScanReport> {
        let store = self.store;
        let mut batch = Batch::default();
        let (mut changed, replaced) = self.stage_tree(&entries, &mut batch)?;
        // The nodes that leave their paths take their implied path heads with them.
        let replaced = replaced.iter().map(|(p, n)| (p.as_str(), *n));
        store.stage_replaced_path_heads(replaced, &mut batch)?;
        let (files, dirs) = self.counts;
        for rec in records {
            batch.put(Table::Nodes, rec.id.0.to_vec(), rec.bytes);
        }
        let root: NodeId = entries
            .get("")
            .expect("the root is above every change, so it is recomputed")
            .node_id;
        if store.root()? != Some(root) {
            batch.put(Table::Meta, META_ROOT.to_vec(), root.0.to_vec());
        }
        // The racy paths it saw are settled or recorded again; those it did not see stay.
        let removed = &self.removed;
        let racy = scan::racy_after(
            &self.racy_prev,
            &seen.leaves,
            |p| removed.contains(p),
            self.stamp,
        );
        if !batch.is_empty() || seen.hashed > 0 || racy != self.racy_prev {
            batch.put(
                Table::Meta,
                META_STAMP.to_vec(),
                super::tree::encode_racy(self.stamp, &racy),
            );
        }
        if (files, dirs) != store.tree_counts()?.unwrap_or_default() {
            batch.put(
                Table::Meta,
                META_COUNTS.to_vec(),
                super::tree::encode_counts(files, dirs),
            );
        }
        let writes = batch.len() as u64;
        if !batch.is_empty() {
            store.engine.commit(batch)?;
        }
        changed.sort_unstable();
        self.warnings.sort();
        Ok(ScanReport {
            root,
            files,
            dirs,
            changed_paths: changed,
            hashed: seen.hashed,
            hashed_bytes: seen.hashed_bytes,
            dirs_recomputed,
            writes,
            warnings: self.warnings,
            dirs_read: self.dirs_read,
        })
    }
}

/// The paths whose node a scan replaced or removed, with that node.
type Replaced = Vec<(String, NodeId)>;

/// Each directory whose children are known from the disk (those listed and those walked)
/// with its children's paths, and the stat each directory read from the disk had before it
/// was read, to record.
fn disk_children<'a>(
    listed: &'a BTreeMap<String, Walked>,
    seen: &'a Walked,
    roots: &[String],
) -> (BTreeMap<String, Vec<String>>, BTreeMap<&'a str, node::Stat>) {
    let mut children: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (dir, w) in listed {
        let kids = children.entry(dir.clone()).or_default();
        kids.extend(w.dirs.iter().map(|d| d.path.clone()));
    }
    for leaf in &seen.leaves {
        children
            .entry(node::split(&leaf.path).0.to_owned())
            .or_default()
            .push(leaf.path.clone());
    }
    let mut dir_stats: BTreeMap<&str, node::Stat> = BTreeMap::new();
    for (dir, w) in listed {
        dir_stats.insert(dir, w.top);
    }
    for dir in &seen.dirs {
        dir_stats.insert(&dir.path, dir.stat);
        children.entry(dir.path.clone()).or_default();
        if !roots.contains(&dir.path) {
            children
                .entry(node::split(&dir.path).0.to_owned())
                .or_default()
                .push(dir.path.clone());
        }
    }
    // A folder that lost a leaf it could not hash must vouch for nothing (see
    // `Walked::unrecorded`).
    for dir in &seen.unrecorded {
        dir_stats.insert(dir, node::Stat::default());
    }
    (children, dir_stats)
}

/// The directories of `children` and every directory above them, deepest first.
fn recompute_order(children: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let mut recompute: BTreeSet<String> = BTreeSet::new();
    for dir in children.keys() {
        let mut d = dir.as_str();
        loop {
            if !recompute.insert(d.to_owned()) {
                break;
            }
            if d.is_empty() {
                break;
            }
            d = node::split(d).0;
        }
    }
    let mut order: Vec<String> = recompute.into_iter().collect();
    order.sort_by(|a, b| depth(b).cmp(&depth(a)).then_with(|| a.cmp(b)));
    order
}
