//! The tree room: scanning the workspace (walk, plan, apply), the stat cache and its racy
//! rule, the path-keyed tree table, and status.
//!
//! **A scan's tree is one transaction** (a large scan's node records go ahead of it, a chunk
//! at a time: [`RECORDS_APART`]), and writes scale with what changed: a path-keyed `tree` table
//! holds the last scan's entry per path (node, stat); unchanged files are not re-hashed (stat
//! cache with a stricter-than-git racy rule: the stamp is the scan's start), unchanged
//! directories are not recomputed, and only changed entries and new node records are written. A
//! folder is not even read when its stat (mtime, ctime, inode, taken before the last scan read
//! it and older than that scan's start) is unchanged, every `.gitignore` above it and in it is
//! the same unchanged file of the tree and the ignore rules from outside the tree (the
//! `.gitignore`s above the root, `.git/info/exclude`, `core.excludesFile`, found where git
//! finds it without the `ignore` crate's regex) have the same content (a blake3 fingerprint in
//! `meta`): git's untracked cache. Its entries are then the tree's, each stat'ed by name
//! relative to the open folder (an `O_PATH` handle; for a folder of few entries, by the names
//! below the nearest open folder above it); no ignore rule is compiled or matched. A
//! `.gitignore` that ignores itself is no file of the tree, so the folders below it are always
//! read, and a forced scan reads every folder. A folder vouches for nothing when its listing
//! had a warning or lost a leaf that could not be hashed (it would never be looked for again),
//! when its times are whole milliseconds and not two seconds older than the scan (a coarse file
//! system's clock is not the stamp's), and off Unix (no ctime, no inode). A scan that finds a
//! folder's stat able to vouch where the recorded one is not (changed by an ignored file)
//! writes it. A scan is planned first (`Store::plan_scan`, which writes nothing and works on a
//! read-only handle) and committed second (`Store::apply_scan`, which scans again if the tree
//! moved in between): the CLI opens the store for writing only when the plan has something to
//! write, so a no-op scan costs what `status` costs (with redb a writable open and close are
//! durable commits of their own). When the walk met exactly the last scan's paths, only re-
//! hashed leaves and the folders above a changed node are recomputed (a folder's children from
//! its node record), never a map of every path; batches are committed in key order. A whole-
//! tree build (a cold scan, or paths added or removed) finds each folder's children by index
//! into the walk and builds a depth of folders at a time on the pool; redb writes a big batch's
//! tables on a thread each (one transaction, a B-tree per table), and loads keys given in order
//! above a table's last (a cold scan's, a chunk of its records) through a cursor at its end,
//! which packs whole leaves instead of descending the B-tree per key. Files under 1 MiB are
//! read in pieces into a worker's buffer rather than memory-mapped (unmapping flushes the other
//! cores' TLBs).
use super::build::{Built, build_tree, leaf_record, same_paths};
use super::scan_writes::{
    BOOKKEEPING_ROOM, RECORDS_APART, RECORDS_CHUNK, Writes, node_writes, sorted_writes, tree_batch,
    walked_paths,
};
use super::*;

/// The rule [`scan::hash_leaves`] trusts stats by: the racy paths when the store has them.
pub(super) fn racy_rule(stamp: Option<i64>, paths: Option<&PathSet>) -> scan::Racy<'_> {
    match paths {
        Some(paths) => scan::Racy::Paths(paths),
        None => scan::Racy::Since(stamp),
    }
}

/// The scan stamp record: the stamp, then the racy paths in path order.
pub(super) fn encode_racy(stamp: i64, racy: &PathSet) -> Vec<u8> {
    let mut paths: Vec<&String> = racy.iter().collect();
    paths.sort_unstable();
    let mut w = Writer::default();
    w.i64(stamp).u64(paths.len() as u64);
    for p in paths {
        w.str(p);
    }
    w.0
}

pub(super) fn encode_counts(files: u64, dirs: u64) -> Vec<u8> {
    let mut v = files.to_le_bytes().to_vec();
    v.extend_from_slice(&dirs.to_le_bytes());
    v
}

/// How to scan.
#[derive(Clone, Copy, Default)]
pub struct ScanOptions<'a> {
    /// Hash every file, ignoring the stat cache.
    pub force: bool,
    /// Called now and then with how far the scan is.
    pub progress: Option<&'a (dyn Fn(Progress) + Sync)>,
}

/// What a scan found and wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanReport {
    /// The new root hash.
    pub root: NodeId,
    /// Leaves (files and symlinks).
    pub files: u64,
    /// Directories, the root included.
    pub dirs: u64,
    /// Paths whose node was added, changed or removed since the last scan, sorted: every
    /// changed leaf, and every directory above one (its NodeID changes with its children).
    pub changed_paths: Vec<String>,
    /// Leaves whose content was hashed (the rest came from the stat cache).
    pub hashed: u64,
    /// Bytes hashed.
    pub hashed_bytes: u64,
    /// Directories whose NodeID was computed (the rest were unchanged).
    pub dirs_recomputed: u64,
    /// Store writes the scan committed.
    pub writes: u64,
    /// Entries skipped, with why.
    pub warnings: Vec<String>,
    /// Directories read from the disk; the others' entries were those of the last scan, whose
    /// stat vouched for them (see the scan module's documentation).
    pub dirs_read: u64,
}

impl ScanReport {
    /// How many paths were added, changed or removed.
    pub fn changed(&self) -> u64 {
        self.changed_paths.len() as u64
    }
}

/// How a path differs between the disk and the last scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// On disk, not in the last scan.
    Added,
    /// Both, with different content or kind.
    Modified,
    /// In the last scan, gone from disk.
    Deleted,
}

impl Change {
    /// The change as JSON spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Modified => "modified",
            Change::Deleted => "deleted",
        }
    }
}

/// What a scan found before writing it: see [`Store::plan_scan`].
pub struct ScanPlan {
    /// The store folder of the handle that made it: a plan applies to that store only.
    dir: PathBuf,
    stamp: i64,
    walked: scan::Walked,
    prev: PathMap<TreeEntry>,
    stamp_prev: Option<i64>,
    racy_prev: Option<PathSet>,
    /// The fingerprint of the outside ignore rules the last scan recorded (see
    /// [`META_IGNORES`]).
    ignores_prev: Option<Hash>,
    /// What [`Store::scan_basis`] read when the plan was made.
    basis: [Option<Vec<u8>>; 3],
    unchanged: Option<ScanReport>,
    /// See [`ScanPlan::same_tree`].
    same_tree: bool,
}

impl ScanPlan {
    /// The scan's report when the disk matches the last scan: there is nothing to write.
    pub fn unchanged(&self) -> Option<&ScanReport> {
        self.unchanged.as_ref()
    }

    /// Whether committing the plan leaves the tree as the last scan left it (the same paths,
    /// each file of the same kind and content), so that what it would write is the scan's
    /// bookkeeping alone: a file written in the clock tick of the last scan, hashed again and
    /// found the same, or a folder's stat. True where [`ScanPlan::unchanged`] is some.
    pub fn same_tree(&self) -> bool {
        self.same_tree
    }
}

impl std::fmt::Debug for ScanPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanPlan")
            .field("leaves", &self.walked.leaves.len())
            .field("unchanged", &self.unchanged)
            .finish_non_exhaustive()
    }
}

impl Store {
    pub(super) fn skip_dirs(&self) -> Vec<PathBuf> {
        let mut skip = vec![self.workspace.join(".merkle"), self.dir.clone()];
        if let Ok(c) = self.dir.canonicalize() {
            skip.push(c);
        }
        skip
    }

    /// Loads the last scan's tree, then walks the disk, reusing the tree's listings of the
    /// directories that have not changed since (see [`scan::Listing`]), given the last scan's
    /// racy entries and outside ignore rules. With `stamp`, the start of a scan, and the scan's
    /// options, the walk records directory stats for the scan to write; without, it is status's
    /// walk.
    pub(super) fn walk_and_load(
        &self,
        scan: Option<(i64, &ScanOptions<'_>)>,
        racy: scan::Racy<'_>,
        ignores: Option<Hash>,
    ) -> Result<(scan::Walked, PathMap<TreeEntry>)> {
        let (stamp, force, progress) = match scan {
            Some((stamp, opts)) => (Some(stamp), opts.force, opts.progress),
            None => (None, false, None),
        };
        let prev = self.load_tree()?;
        let walked = {
            // A forced scan trusts nothing the last one recorded: every folder is read again.
            let last =
                (!prev.is_empty() && !force).then(|| scan::Listing::new(&prev, racy, ignores));

            scan::walk(
                &self.workspace,
                &scan::WalkOptions {
                    skip: self.skip_dirs(),
                    progress,
                    last: last.as_ref(),
                    stamp,
                    // A scan with nothing to go by hashes every file.
                    hash_all: stamp.is_some() && (prev.is_empty() || force),
                },
            )
        };
        Ok((walked, prev))
    }

    /// The fingerprint of the ignore rules from outside the tree that the last full scan
    /// walked under, when it recorded one.
    pub(super) fn ignore_record(&self) -> Result<Option<Hash>> {
        Ok(self
            .engine
            .get(Table::Meta, META_IGNORES)?
            .and_then(|v| <[u8; 32]>::try_from(v.as_slice()).ok())
            .map(Hash))
    }

    /// A path near the middle of the tree, kept by a scan that wrote most of a large tree: a
    /// reader of every entry reads the two halves side by side. Any key splits the table
    /// correctly; a stale one only less evenly.
    pub(super) fn tree_split(&self) -> Result<Option<Vec<u8>>> {
        self.engine.get(Table::Meta, META_TREE_SPLIT)
    }

    /// `read(start, end)` over the tree, in the two halves the kept middle path makes
    /// ([`Store::tree_split`]) side by side, the second on a thread of its own (the pool may be
    /// busy with a rescan's walk); over the whole tree at once where none is kept. The answers
    /// in path order; `end` is where a half stops (`None`: the table's end).
    pub(super) fn tree_halves<T: Send>(
        &self,
        read: impl Fn(&[u8], Option<&[u8]>) -> Result<T> + Sync,
    ) -> Result<Vec<T>> {
        let Some(split) = self.tree_split()? else {
            return Ok(vec![read(b"", None)?]);
        };
        let (first, second) = side_by_side(|| read(b"", Some(&split)), || read(&split, None));
        Ok(vec![first?, second?])
    }

    pub(super) fn load_tree(&self) -> Result<PathMap<TreeEntry>> {
        // Sized up front: growing a map of every path rehashes it a dozen times.
        let n = usize::try_from(self.engine.count(Table::Tree)?).unwrap_or(0);
        let mut map = PathMap::with_capacity_and_hasher(n, Default::default());
        let split = match n {
            0..TREE_SPLIT_MIN => None,
            _ => self.tree_split()?,
        };
        let Some(split) = split else {
            self.tree_entries("", |path, e| {
                map.insert(path.to_owned(), e);
            })?;
            return Ok(map);
        };
        // Two halves side by side: reading and decoding the entries costs more than the map.
        let (first, second) = rayon::join(
            || {
                self.tree_range(
                    b"",
                    |k| k < split.as_slice(),
                    |path, e| {
                        map.insert(path.to_owned(), e);
                    },
                )
                .map(|()| map)
            },
            || {
                let mut rest = Vec::with_capacity(n / 2);
                self.tree_range(&split, |_| true, |path, e| rest.push((path.to_owned(), e)))
                    .map(|()| rest)
            },
        );
        let mut map = first?;
        map.extend(second?);
        Ok(map)
    }

    /// Visits the last scan's entries whose path starts with `prefix`, in path order.
    pub(super) fn tree_entries(
        &self,
        prefix: &str,
        visit: impl FnMut(&str, TreeEntry),
    ) -> Result<()> {
        self.tree_range(
            prefix.as_bytes(),
            |k| k.starts_with(prefix.as_bytes()),
            visit,
        )
    }

    /// Visits the last scan's entries from path `start` on, in path order, while `within`
    /// holds for their path.
    pub(super) fn tree_range(
        &self,
        start: &[u8],
        within: impl Fn(&[u8]) -> bool,
        mut visit: impl FnMut(&str, TreeEntry),
    ) -> Result<()> {
        let mut err = None;
        self.engine.scan(Table::Tree, start, &mut |k, v| {
            if !within(k) {
                return false;
            }
            match (std::str::from_utf8(k), TreeEntry::decode(k, v)) {
                (Ok(path), Ok(e)) => {
                    visit(path, e);
                    true
                }
                (Err(_), _) => {
                    err = Some(Error::corrupt("tree", k, "path is not UTF-8"));
                    false
                }
                (_, Err(e)) => {
                    err = Some(e);
                    false
                }
            }
        })?;
        err.map_or(Ok(()), Err)
    }

    /// The last scan's (files, directories), when it recorded them.
    pub(super) fn tree_counts(&self) -> Result<Option<(u64, u64)>> {
        self.engine
            .get(Table::Meta, META_COUNTS)?
            .map(|v| decode_counts(&v))
            .transpose()
    }

    /// Scans the workspace and commits the new tree in one transaction: a crash mid-scan leaves
    /// the previous tree intact (and, after a large scan's records went ahead, records no tree
    /// names, which `gc` collects). Only paths whose node changed are written.
    pub fn scan(&self, opts: &ScanOptions<'_>) -> Result<ScanReport> {
        let plan = self.plan_scan(opts)?;
        self.apply_scan(plan, opts)
    }

    /// The meta records a scan's plan depends on: the root, the stamp record and the counts.
    /// Every commit that changes the tree changes the stamp record or the root.
    pub(super) fn scan_basis(&self) -> Result<[Option<Vec<u8>>; 3]> {
        Ok([
            self.engine.get(Table::Meta, META_ROOT)?,
            self.engine.get(Table::Meta, META_STAMP)?,
            self.engine.get(Table::Meta, META_COUNTS)?,
        ])
    }

    /// The first half of [`Store::scan`], which writes nothing and works on a read-only handle:
    /// walks the disk, hashes what the stat cache does not vouch for, and decides whether there
    /// is anything to write. When there is not ([`ScanPlan::unchanged`]), that is the scan's
    /// report, and the store need not be opened for writing at all (with redb, a writable open
    /// and close are durable commits of their own). Otherwise [`Store::apply_scan`] on a
    /// writable handle commits it.
    pub fn plan_scan(&self, opts: &ScanOptions<'_>) -> Result<ScanPlan> {
        let _guard = self.lock();
        let basis = self.scan_basis()?;
        let stamp = self.take_stamp()?;
        let (stamp_prev, racy_prev) = self.racy_record()?;
        let ignores_prev = self.ignore_record()?;
        let racy = racy_rule(stamp_prev, racy_prev.as_ref());
        let (mut walked, prev) = self.walk_and_load(Some((stamp, opts)), racy, ignores_prev)?;
        scan::hash_leaves(
            &mut walked,
            &HashConfig {
                root: &self.workspace,
                prev: &prev,
                racy,
                force: opts.force,
                progress: opts.progress,
            },
        );
        let mut plan = ScanPlan {
            dir: self.dir.clone(),
            stamp,
            walked,
            prev,
            stamp_prev,
            racy_prev,
            ignores_prev,
            basis,
            unchanged: None,
            same_tree: true,
        };
        if let Some(report) = self.nothing_to_write(&plan)? {
            plan.unchanged = Some(report);
            // Freeing a map and a list of every path is a hundred thousand frees: do it off
            // the caller's path, on the pool.
            let (prev, walked) = (
                std::mem::take(&mut plan.prev),
                std::mem::take(&mut plan.walked),
            );
            rayon::spawn(move || drop((prev, walked)));
        } else {
            let (walked, prev) = (&plan.walked, &plan.prev);
            plan.same_tree = same_paths(walked, prev, |l| {
                prev.get(&l.path)
                    .is_some_and(|e| e.kind == l.kind && e.content_hash == l.content_hash)
            }) && prev.get("").map(|e| e.node_id) == self.root()?;
        }
        Ok(plan)
    }

    /// The report of a scan that has nothing to write, or `None`: every leaf's content came
    /// from the stat cache, the walk met exactly the last scan's paths, nothing is racy, every
    /// folder's stat that can vouch for its listing is the one recorded and the root and counts
    /// are recorded. Then the tree [`build_tree`] would build is the last one,
    /// entry for entry, and building it (a map of every path) is skipped.
    pub(super) fn nothing_to_write(&self, plan: &ScanPlan) -> Result<Option<ScanReport>> {
        let ScanPlan {
            walked,
            prev,
            stamp,
            stamp_prev,
            racy_prev,
            ignores_prev,
            ..
        } = plan;
        // A reused leaf's kind and content are its entry's.
        let same_paths = same_paths(walked, prev, |l| l.reused);
        let settled = stamp_prev.is_some()
            && racy_prev.as_ref().is_some_and(PathSet::is_empty)
            && scan::racy_after(&PathSet::default(), &walked.leaves, |_| false, *stamp).is_empty();
        // A folder whose stat can now vouch for its listing where the one recorded does not
        // (it changed for an ignored file, say) is worth a write: else it is read every time.
        let listings_kept = walked
            .dirs
            .iter()
            .map(|d| (d.path.as_str(), d.stat))
            .chain(std::iter::once(("", walked.top)))
            .all(|(path, stat)| {
                !stat.is_recorded()
                    || prev
                        .get(path)
                        .is_some_and(|e| stat.dir_record(e.stat.size) == e.stat)
            });
        if walked.hashed > 0
            || !same_paths
            || !settled
            || !listings_kept
            || *ignores_prev != walked.ignores
        {
            return Ok(None);
        }
        let root = prev.get("").expect("checked above").node_id;
        let counts = (walked.leaves.len() as u64, walked.dirs.len() as u64 + 1);
        if self.root()? != Some(root) || self.tree_counts()? != Some(counts) {
            return Ok(None);
        }
        Ok(Some(ScanReport {
            root,
            files: counts.0,
            dirs: counts.1,
            changed_paths: Vec::new(),
            hashed: 0,
            hashed_bytes: 0,
            dirs_recomputed: 0,
            writes: 0,
            warnings: walked.warnings.clone(),
            dirs_read: walked.dirs_read,
        }))
    }

    /// The second half of [`Store::scan`]: commits what `plan` found, in one transaction. The
    /// plan may come from another handle on the same store (a read-only one); if the store's
    /// tree moved since it was made, by a scan in this process or another (or the plan is
    /// another store's), the scan is made again here.
    pub fn apply_scan(&self, plan: ScanPlan, opts: &ScanOptions<'_>) -> Result<ScanReport> {
        if let Some(report) = plan.unchanged {
            return Ok(report);
        }
        let guard = self.lock();
        if plan.dir != self.dir || self.scan_basis()? != plan.basis {
            drop(guard);
            let again = self.plan_scan(opts)?;
            return self.apply_scan(again, opts);
        }
        let ScanPlan {
            stamp,
            mut walked,
            prev,
            stamp_prev,
            racy_prev,
            ignores_prev,
            ..
        } = plan;
        let racy = scan::racy_after(&PathSet::default(), &walked.leaves, |_| false, stamp);
        let warnings = std::mem::take(&mut walked.warnings);
        let mut built = match self.build_changes(&walked, &prev)? {
            Some(changes) => changes,
            None => build_tree(&walked, &prev),
        };
        let dirs_recomputed = built.records.iter().filter(|r| r.dir).count() as u64;
        let records_apart = if built.records.len() + built.fresh_leaves.len() >= RECORDS_APART {
            self.commit_records_apart(&walked, &mut built)?
        } else {
            let made: Vec<StoredNode> = built
                .fresh_leaves
                .par_iter()
                .map(|&i| leaf_record(&walked.leaves[i], built.entries[i].1.node_id))
                .collect();
            built.records.extend(made);
            0
        };
        let records = std::mem::take(&mut built.records);
        // Into a first tree every path is new: its changed paths are the walk's own
        // (`walked_paths`, taken once the tree's writes are made).
        let first_tree = prev.is_empty();
        let (tree_ops, node_ops, mut changed) = sorted_writes(&built, records, &prev, first_tree);
        let mut batch = tree_batch(&built, &prev, tree_ops, node_ops, &mut changed);
        // The nodes that leave their paths take their implied path heads with them.
        let replaced = changed
            .iter()
            .filter_map(|p| prev.get(p).map(|e| (p.as_str(), e.node_id)));
        self.stage_replaced_path_heads(replaced, &mut batch)?;
        self.stage_meta(&mut batch, built.root, &walked, ignores_prev)?;
        // The racy record only changes with entries hashed in this scan; with none written and
        // none racy there is nothing to record, and a no-op scan writes nothing at all.
        if !batch.is_empty()
            || walked.hashed > 0
            || stamp_prev.is_none()
            || racy_prev.as_ref() != Some(&racy)
        {
            batch.put(Table::Meta, META_STAMP.to_vec(), encode_racy(stamp, &racy));
        }
        let writes = batch.len() as u64 + records_apart;
        let root = built.root;
        drop(built);
        if first_tree {
            changed = walked_paths(&mut walked);
        }
        let report = ScanReport {
            root,
            files: walked.leaves.len() as u64,
            dirs: walked.dirs.len() as u64 + 1,
            changed_paths: {
                changed.par_sort_unstable();
                changed
            },
            hashed: walked.hashed,
            hashed_bytes: walked.hashed_bytes,
            dirs_recomputed,
            writes,
            warnings,
            dirs_read: walked.dirs_read,
        };
        if batch.len() >= RECORDS_APART {
            // The maps of every path are freed before a large commit, whose pages are the
            // scan's largest allocation: held through it, a cold scan's peak is the sum of
            // both (at a million files, about a third of it).
            drop((prev, walked));
        } else {
            // Few writes (an edit, a small tree): the maps are freed off the caller's path, on
            // the pool, as a scan with nothing to write frees them (a tenth of an edit's scan
            // of a large tree).
            rayon::spawn(move || drop((prev, walked)));
        }
        if !batch.is_empty() {
            self.engine.commit(batch)?;
        }
        Ok(report)
    }

    /// Commits the node records of `built` (its fresh leaves' made here) ahead of the tree that
    /// names them (see [`RECORDS_APART`]): the files' in key order, [`RECORDS_CHUNK`] at a
    /// time, then the folders' in one commit; how many. A folder's record names its children,
    /// and every stored one must have its children stored (`validate` checks every record, and
    /// may read between two commits).
    fn commit_records_apart(&self, walked: &scan::Walked, built: &mut Built<'_>) -> Result<u64> {
        #[derive(Clone, Copy)]
        enum Made {
            Leaf(usize),
            Record(usize),
        }
        let mut order: Vec<(NodeId, Made)> = built
            .fresh_leaves
            .iter()
            .map(|&i| (built.entries[i].1.node_id, Made::Leaf(i)))
            .chain(
                built
                    .records
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| !r.dir)
                    .map(|(j, r)| (r.id, Made::Record(j))),
            )
            .collect();
        order.par_sort_unstable_by(|a, b| a.0.0.cmp(&b.0.0));
        for chunk in order.chunks(RECORDS_CHUNK) {
            let mut ops: Writes = Vec::with_capacity(chunk.len() + BOOKKEEPING_ROOM);
            ops.par_extend(chunk.par_iter().map(|&(id, made)| {
                let bytes = match made {
                    Made::Leaf(i) => leaf_record(&walked.leaves[i], id).bytes,
                    Made::Record(j) => built.records[j].bytes.clone(),
                };
                (Table::Nodes, id.0.to_vec(), Some(bytes))
            }));
            self.engine.commit(Batch { ops })?;
        }
        built.fresh_leaves = Vec::new();
        // Then every folder's record in one commit: none is stored before its children.
        built.records.retain(|r| r.dir);
        let folders = node_writes(std::mem::take(&mut built.records));
        let written = order.len() + folders.len();
        if !folders.is_empty() {
            self.engine.commit(Batch { ops: folders })?;
        }
        Ok(written as u64)
    }

    /// Stages the meta records a scan changes besides the stamp: the root, the fingerprint of
    /// the ignore rules from outside the tree, and the counts.
    fn stage_meta(
        &self,
        batch: &mut Batch,
        root: NodeId,
        walked: &scan::Walked,
        ignores_prev: Option<Hash>,
    ) -> Result<()> {
        let root_changed = self.root()? != Some(root);
        if root_changed {
            batch.put(Table::Meta, META_ROOT.to_vec(), root.0.to_vec());
        }
        if let Some(ignores) = walked.ignores.filter(|i| ignores_prev != Some(*i)) {
            batch.put(Table::Meta, META_IGNORES.to_vec(), ignores.0.to_vec());
        }
        let counts = (walked.leaves.len() as u64, walked.dirs.len() as u64 + 1);
        if self.tree_counts()? != Some(counts) {
            batch.put(
                Table::Meta,
                META_COUNTS.to_vec(),
                encode_counts(counts.0, counts.1),
            );
        }
        Ok(())
    }

    /// The last scan's start stamp and racy paths (see [`scan::Racy`]); a store written before
    /// racy paths were recorded has the stamp alone. A damaged record is as none at all: every
    /// file is hashed again, and the next scan writes a good record.
    pub(super) fn racy_record(&self) -> Result<(Option<i64>, Option<PathSet>)> {
        Ok(self
            .engine
            .get(Table::Meta, META_STAMP)?
            .and_then(|v| decode_racy(&v))
            .unwrap_or((None, None)))
    }

    /// Touches the stamp file and returns its mtime: the filesystem's own clock, which is the
    /// clock file mtimes are compared with.
    pub(super) fn take_stamp(&self) -> Result<i64> {
        use std::io::Write;
        let path = self.dir.join("scan-stamp");
        // Overwritten in place, never truncated: ext4 starts writing back a file that is
        // truncated and written again when it is closed, which every scan would wait on.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        file.write_all(b"the mtime of this file is the start of the last scan\n")
            .map_err(|e| Error::io(&path, e))?;
        let m = file.metadata().map_err(|e| Error::io(&path, e))?;
        Ok(node::Stat::of(&m).mtime_ns)
    }
}

/// `first` here and `second` on a thread of its own (not the pool's, which may be busy with a
/// rescan's walk), side by side; a panic of `second` goes on here.
pub(super) fn side_by_side<A, B: Send>(
    first: impl FnOnce() -> A,
    second: impl FnOnce() -> B + Send,
) -> (A, B) {
    std::thread::scope(|scope| {
        let second = scope.spawn(second);
        let first = first();
        let second = second
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (first, second)
    })
}
