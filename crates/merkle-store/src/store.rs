//! The store: one workspace's Merkle tree, frames, heads, basis index and agents in one engine.
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};

use rayon::prelude::*;

use crate::agent::{self, Agent, Role};
use crate::codec::{self, Reader, Writer};

use crate::engine::{Batch, Engine, EngineKind, Table};
use crate::error::{Error, Result};
use crate::frame::{self, Frame, NewFrame, PutOutcome};
use crate::hash::{self, FrameId, Hash, NodeId};
use crate::node::{self, NodeKind, NodeRecord, PathMap, PathSet, TreeEntry};
use crate::scan::{self, HashConfig, Progress};

const META_ROOT: &[u8] = b"root";
const META_STAMP: &[u8] = b"stamp";
const META_FRAME_SEQ: &[u8] = b"frame_seq";
/// The last scan's leaf and directory counts (two u64, little-endian), so that a targeted scan
/// can report the whole tree's without counting it.
const META_COUNTS: &[u8] = b"counts";
/// The fingerprint (blake3) of the ignore rules from outside the tree that the directory stats
/// of the tree were recorded under: a walk reuses no listing under other rules.
const META_IGNORES: &[u8] = b"ignores";
/// A path near the middle of the tree, at which a load of the whole tree splits its reading in
/// two; any path will do, the middle does it fastest. Written when a scan writes most paths.
const META_TREE_SPLIT: &[u8] = b"tree_split";
/// Trees with fewer entries are loaded in one piece.
const TREE_SPLIT_MIN: usize = 4096;

mod derived;
mod exchange;
mod notes;
mod rescan;

pub use derived::TreeFile;
pub use exchange::{Import, ImportOptions, ImportReport, Refusal};

fn checkpoint_key(name: &str) -> Vec<u8> {
    let mut key = b"checkpoint:".to_vec();
    key.extend_from_slice(name.as_bytes());
    key
}

/// The rule [`scan::hash_leaves`] trusts stats by: the racy paths when the store has them.
fn racy_rule(stamp: Option<i64>, paths: Option<&PathSet>) -> scan::Racy<'_> {
    match paths {
        Some(paths) => scan::Racy::Paths(paths),
        None => scan::Racy::Since(stamp),
    }
}

/// Reads what [`encode_racy`] wrote (or a stamp alone); `None` if it is malformed.
pub(crate) fn decode_racy(v: &[u8]) -> Option<(Option<i64>, Option<PathSet>)> {
    let mut r = Reader::new(v);
    let stamp = r.i64()?;
    if r.is_empty() {
        return Some((Some(stamp), None));
    }
    let n = r.u64()?;
    let mut paths = PathSet::default();
    for _ in 0..n {
        paths.insert(r.str()?.to_owned());
    }
    r.is_empty().then_some((Some(stamp), Some(paths)))
}

/// The scan stamp record: the stamp, then the racy paths in path order.
fn encode_racy(stamp: i64, racy: &PathSet) -> Vec<u8> {
    let mut paths: Vec<&String> = racy.iter().collect();
    paths.sort_unstable();
    let mut w = Writer::default();
    w.i64(stamp).u64(paths.len() as u64);
    for p in paths {
        w.str(p);
    }
    w.0
}

/// The meta record of [`Store::frame_seq`].
pub(crate) fn decode_frame_seq(v: &[u8]) -> Result<u64> {
    codec::decode(
        "meta",
        META_FRAME_SEQ,
        v,
        "a frame sequence (8 bytes)",
        |r| r.u64(),
    )
}

/// The meta record of [`Store::root`].
pub(crate) fn decode_root(v: &[u8]) -> Result<NodeId> {
    codec::decode("meta", META_ROOT, v, "a root hash (32 bytes)", |r| r.hash())
}

/// The meta record of the last scan's counts, as [`encode_counts`] wrote it.
pub(crate) fn decode_counts(v: &[u8]) -> Result<(u64, u64)> {
    codec::decode("meta", META_COUNTS, v, "two counts (16 bytes)", |r| {
        Some((r.u64()?, r.u64()?))
    })
}

fn encode_counts(files: u64, dirs: u64) -> Vec<u8> {
    let mut v = files.to_le_bytes().to_vec();
    v.extend_from_slice(&dirs.to_le_bytes());
    v
}

/// How to open a store.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// The store folder; default `<workspace>/.merkle`.
    pub store_dir: Option<PathBuf>,
    /// The engine; default: the one the folder already holds, else redb.
    pub engine: Option<EngineKind>,
    /// Open for reading only: nothing is created or written, and other processes may read too.
    pub read_only: bool,
    /// Open only a store that exists, for writing too: a missing one is [`Error::NoStore`]
    /// (for a command that keeps caches in a store but must never start one).
    pub existing: bool,
}

/// A workspace's store.
pub struct Store {
    workspace: PathBuf,
    dir: PathBuf,
    engine: Box<dyn Engine>,
    /// Serializes read-check-write sequences of writers in this process; other processes are
    /// kept out by the engine's own lock.
    write_lock: Mutex<()>,
    /// Frames waiting for the next group commit, and the results of finished ones.
    group: Mutex<Group>,
    group_done: Condvar,
    /// See [`Store::derivation_lock`].
    derive: Mutex<()>,
}

#[derive(Default)]
struct Group {
    next_ticket: u64,
    queue: Vec<(u64, NewFrame)>,
    done: HashMap<u64, Result<PutOutcome>>,
    /// Whether a caller is committing a group now.
    leading: bool,
}

/// The error every frame of a failed group commit gets (the engine's error is not `Clone`).
fn shared_error(e: &Error) -> Error {
    match e {
        Error::Engine { store, message } => Error::Engine {
            store: store.clone(),
            message: message.clone(),
        },
        e => Error::Engine {
            store: PathBuf::new(),
            message: e.to_string(),
        },
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("workspace", &self.workspace)
            .field("dir", &self.dir)
            .field("engine", &self.engine.name())
            .finish()
    }
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

/// The store against the disk, without writing anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusReport {
    /// The root hash of the last scan.
    pub root: NodeId,
    /// Nodes in the last scan's tree.
    pub nodes: u64,
    /// Frames in the store.
    pub frames: u64,
    /// Leaves that differ on disk from the last scan, sorted by path.
    pub changed_on_disk: Vec<(String, Change)>,
    /// Entries skipped, with why.
    pub warnings: Vec<String>,
    /// Directories read from the disk; the others' entries were those of the last scan, whose
    /// stat vouched for them (see the scan module's documentation).
    pub dirs_read: u64,
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
}

impl ScanPlan {
    /// The scan's report when the disk matches the last scan: there is nothing to write.
    pub fn unchanged(&self) -> Option<&ScanReport> {
        self.unchanged.as_ref()
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

/// One node of the current tree, as listings show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeNode {
    /// Workspace-relative path.
    pub path: String,
    /// Its kind.
    pub kind: NodeKind,
    /// Its NodeID.
    pub node_id: NodeId,
}

/// One inconsistency `validate` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The path of the node concerned, when known.
    pub path: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl Store {
    /// Opens (creating if needed, unless read-only or [`OpenOptions::existing`]) the store of
    /// `workspace`.
    pub fn open(workspace: &Path, opts: &OpenOptions) -> Result<Store> {
        let workspace = workspace
            .canonicalize()
            .map_err(|e| Error::io(workspace, e))?;
        let dir = match &opts.store_dir {
            Some(d) if d.is_absolute() => d.clone(),
            Some(d) => std::env::current_dir()
                .map_err(|e| Error::io(d, e))?
                .join(d),
            None => workspace.join(".merkle"),
        };
        let holds = |e: EngineKind| e.data_path(&dir).exists();
        let engine = match opts.engine {
            // Opening a folder that holds the other engine's data would create a second,
            // empty store beside it, and the user's frames would look lost.
            Some(asked) => {
                let other = match asked {
                    EngineKind::Redb => EngineKind::Sled,
                    EngineKind::Sled => EngineKind::Redb,
                };
                if !holds(asked) && holds(other) {
                    return Err(Error::EngineMismatch {
                        store: dir,
                        requested: asked.name(),
                        holds: other.name(),
                    });
                }
                asked
            }
            None if holds(EngineKind::Sled) && !holds(EngineKind::Redb) => EngineKind::Sled,
            None => EngineKind::Redb,
        };
        if (opts.read_only || opts.existing) && !engine.data_path(&dir).exists() {
            return Err(Error::NoStore { store: dir });
        }
        if !opts.read_only {
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            let ignore = dir.join(".gitignore");
            if !ignore.exists() {
                std::fs::write(&ignore, "*\n").map_err(|e| Error::io(&ignore, e))?;
            }
        }
        let engine = engine.open(&dir, !opts.read_only)?;
        Ok(Store {
            workspace,
            dir,
            engine,
            write_lock: Mutex::new(()),
            group: Mutex::new(Group::default()),
            group_done: Condvar::new(),
            derive: Mutex::new(()),
        })
    }

    /// The workspace root (canonical).
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The store folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Makes the next read see every commit so far. Reads share one snapshot until this handle
    /// commits; a long-lived read-only handle that must follow a writer in another process calls
    /// this between reads.
    pub fn refresh(&self) {
        self.engine.refresh();
    }

    /// The engine's name.
    pub fn engine_name(&self) -> &'static str {
        self.engine.name()
    }

    /// A lock for writers of derived frames in this process: hold it from re-reading the
    /// inputs of a derived frame (children's heads) to putting it, so that a derivation from
    /// inputs that another writer has just replaced never becomes the head. Work that is slow
    /// (a model call) is done before taking it; see `context::synthesize`.
    pub fn derivation_lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.derive.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.write_lock.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn skip_dirs(&self) -> Vec<PathBuf> {
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
    fn walk_and_load(
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
    fn ignore_record(&self) -> Result<Option<Hash>> {
        Ok(self
            .engine
            .get(Table::Meta, META_IGNORES)?
            .and_then(|v| <[u8; 32]>::try_from(v.as_slice()).ok())
            .map(Hash))
    }

    fn load_tree(&self) -> Result<PathMap<TreeEntry>> {
        // Sized up front: growing a map of every path rehashes it a dozen times.
        let n = usize::try_from(self.engine.count(Table::Tree)?).unwrap_or(0);
        let mut map = PathMap::with_capacity_and_hasher(n, Default::default());
        let split = match n {
            0..TREE_SPLIT_MIN => None,
            _ => self.engine.get(Table::Meta, META_TREE_SPLIT)?,
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
    fn tree_entries(&self, prefix: &str, visit: impl FnMut(&str, TreeEntry)) -> Result<()> {
        self.tree_range(
            prefix.as_bytes(),
            |k| k.starts_with(prefix.as_bytes()),
            visit,
        )
    }

    /// Visits the last scan's entries from path `start` on, in path order, while `within`
    /// holds for their path.
    fn tree_range(
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
    fn tree_counts(&self) -> Result<Option<(u64, u64)>> {
        self.engine
            .get(Table::Meta, META_COUNTS)?
            .map(|v| decode_counts(&v))
            .transpose()
    }

    /// The root hash of the last scan.
    pub fn root(&self) -> Result<Option<NodeId>> {
        self.engine
            .get(Table::Meta, META_ROOT)?
            .map(|v| decode_root(&v))
            .transpose()
    }

    /// Scans the workspace and commits the new tree in one transaction: a crash mid-scan leaves
    /// the previous tree intact. Only paths whose node changed are written.
    pub fn scan(&self, opts: &ScanOptions<'_>) -> Result<ScanReport> {
        let plan = self.plan_scan(opts)?;
        self.apply_scan(plan, opts)
    }

    /// The meta records a scan's plan depends on: the root, the stamp record and the counts.
    /// Every commit that changes the tree changes the stamp record or the root.
    fn scan_basis(&self) -> Result<[Option<Vec<u8>>; 3]> {
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
        }
        Ok(plan)
    }

    /// The report of a scan that has nothing to write, or `None`: every leaf's content came
    /// from the stat cache, the walk met exactly the last scan's paths, nothing is racy, every
    /// folder's stat that can vouch for its listing is the one recorded and the root and counts
    /// are recorded. Then the tree [`build_tree`] would build is the last one,
    /// entry for entry, and building it (a map of every path) is skipped.
    fn nothing_to_write(&self, plan: &ScanPlan) -> Result<Option<ScanReport>> {
        let ScanPlan {
            walked,
            prev,
            stamp,
            stamp_prev,
            racy_prev,
            ignores_prev,
            ..
        } = plan;
        let same_paths = walked.leaves.len() + walked.dirs.len() + 1 == prev.len()
            && walked.leaves.iter().all(|l| l.reused)
            && walked
                .dirs
                .iter()
                .map(|d| d.path.as_str())
                .chain(std::iter::once(""))
                .all(|d| prev.get(d).is_some_and(|e| e.kind == NodeKind::Dir));
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
        let records = std::mem::take(&mut built.records);
        // Into a first tree every path is new: the sorted tree writes list the changed paths.
        let first_tree = prev.is_empty();

        // The writes of each table in key order (as the engine takes them fastest), made side
        // by side: after a cold scan, every path and every node.
        let ((tree_ops, node_ops), mut changed) = rayon::join(
            || {
                rayon::join(
                    || {
                        let mut ops: Vec<(Vec<u8>, Vec<u8>)> = built
                            .entries
                            .par_iter()
                            .filter(|(path, entry)| prev.get(*path) != Some(entry))
                            .map(|(path, entry)| (path.as_bytes().to_vec(), entry.encode()))
                            .collect();
                        ops.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
                        ops
                    },
                    || {
                        let mut ops: Vec<(Vec<u8>, Vec<u8>)> = records
                            .into_par_iter()
                            .map(|rec| (rec.id.0.to_vec(), rec.bytes))
                            .collect();
                        ops.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
                        ops
                    },
                )
            },
            || {
                if first_tree {
                    return Vec::new();
                }
                built
                    .entries
                    .par_iter()
                    .filter(|(path, entry)| {
                        prev.get(*path).map(|o| o.node_id) != Some(entry.node_id)
                    })
                    .map(|(path, _)| (*path).to_owned())
                    .collect::<Vec<String>>()
            },
        );
        if first_tree {
            changed = tree_ops
                .par_iter()
                .map(|(path, _)| String::from_utf8_lossy(path).into_owned())
                .collect();
        }
        let mut batch = Batch::with_capacity(tree_ops.len() + node_ops.len() + 8);
        if built.complete
            && tree_ops.len() >= TREE_SPLIT_MIN
            && 2 * tree_ops.len() >= built.entries.len()
        {
            let middle = tree_ops[tree_ops.len() / 2].0.clone();
            batch.put(Table::Meta, META_TREE_SPLIT.to_vec(), middle);
        }
        for (key, value) in tree_ops {
            batch.put(Table::Tree, key, value);
        }
        for (key, value) in node_ops {
            batch.put(Table::Nodes, key, value);
        }
        if built.complete && !prev.is_empty() {
            let now: std::collections::HashSet<&str, rustc_hash::FxBuildHasher> =
                built.entries.iter().map(|(path, _)| *path).collect();
            for path in prev.keys() {
                if !now.contains(path.as_str()) {
                    changed.push(path.clone());
                    batch.delete(Table::Tree, path.clone().into_bytes());
                }
            }
        }
        let root_changed = self.root()? != Some(built.root);
        if root_changed {
            batch.put(Table::Meta, META_ROOT.to_vec(), built.root.0.to_vec());
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
        // The racy record only changes with entries hashed in this scan; with none written and
        // none racy there is nothing to record, and a no-op scan writes nothing at all.
        if !batch.is_empty()
            || walked.hashed > 0
            || stamp_prev.is_none()
            || racy_prev.as_ref() != Some(&racy)
        {
            batch.put(Table::Meta, META_STAMP.to_vec(), encode_racy(stamp, &racy));
        }
        let writes = batch.len() as u64;
        if !batch.is_empty() {
            self.engine.commit(batch)?;
        }
        let root = built.root;
        let report = ScanReport {
            root,
            files: walked.leaves.len() as u64,
            dirs: walked.dirs.len() as u64 + 1,
            changed_paths: {
                // A first tree's are in order already.
                if !first_tree {
                    changed.par_sort_unstable();
                }
                changed
            },
            hashed: walked.hashed,
            hashed_bytes: walked.hashed_bytes,
            dirs_recomputed,
            writes,
            warnings,
            dirs_read: walked.dirs_read,
        };
        // As in `status`: free the maps of every path off the caller's path.
        drop(built);
        rayon::spawn(move || drop((prev, walked)));
        Ok(report)
    }

    /// The new tree's changed entries when the walk met exactly the last scan's paths (nothing
    /// added or removed, no leaf turned folder or back): only the leaves hashed again and the
    /// folders above one whose node changed need new entries, and a folder's children are its
    /// node record's, so the tree is not rebuilt path by path. `None` when the paths differ, or
    /// a record does not match its entry; [`build_tree`] then builds the whole tree.
    fn build_changes<'w>(
        &self,
        walked: &'w scan::Walked,
        prev: &PathMap<TreeEntry>,
    ) -> Result<Option<Built<'w>>> {
        let same_paths = walked.leaves.len() + walked.dirs.len() + 1 == prev.len()
            && walked
                .leaves
                .iter()
                .all(|l| l.reused || prev.get(&l.path).is_some_and(|e| e.kind.is_leaf()))
            && walked
                .dirs
                .iter()
                .map(|d| d.path.as_str())
                .chain(std::iter::once(""))
                .all(|d| prev.get(d).is_some_and(|e| e.kind == NodeKind::Dir));
        if !same_paths {
            return Ok(None);
        }
        // Each folder's stat as the walk saw it, to record beside its entry.
        let dir_stats: std::collections::HashMap<&str, node::Stat, rustc_hash::FxBuildHasher> =
            walked
                .dirs
                .iter()
                .map(|d| (d.path.as_str(), d.stat))
                .chain(std::iter::once(("", walked.top)))
                .collect();
        let mut entries: std::collections::HashMap<&str, TreeEntry, rustc_hash::FxBuildHasher> =
            Default::default();
        let mut records = Vec::new();
        let mut dirty: Vec<&str> = Vec::new();
        for leaf in walked.leaves.iter().filter(|l| !l.reused) {
            let old = prev.get(&leaf.path);
            let (entry, record) = leaf_entry(leaf, old);
            records.extend(record);
            if old.map(|o| o.node_id) != Some(entry.node_id) {
                let mut path = leaf.path.as_str();
                while !path.is_empty() {
                    path = node::split(path).0;
                    dirty.push(path);
                }
            }
            if old != Some(&entry) {
                entries.insert(&leaf.path, entry);
            }
        }
        // Deepest first, so every child is done before its parent; the root last.
        dirty.sort_unstable_by(|a, b| {
            let depth = |p: &str| {
                if p.is_empty() {
                    0
                } else {
                    1 + p.matches('/').count()
                }
            };
            depth(b).cmp(&depth(a)).then(a.cmp(b))
        });
        dirty.dedup();
        for dir in dirty {
            let old = prev.get(dir).expect("every folder was checked above");
            let Some(record) = self.node(&old.node_id)? else {
                return Ok(None);
            };
            if record.children.len() as u64 != old.stat.size {
                return Ok(None);
            }
            let mut kids = Vec::with_capacity(record.children.len());
            for child in &record.children {
                let path = node::join(dir, &child.name);
                match entries.get(path.as_str()).or_else(|| prev.get(&path)) {
                    Some(e) => kids.push((child.name.as_str(), *e)),
                    None => return Ok(None),
                }
            }
            let stat = dir_stats.get(dir).copied().unwrap_or_default();
            let (entry, record) = dir_entry(dir, stat, &mut kids);
            records.push(record);
            entries.insert(dir, entry);
        }
        // Folders whose stat alone changed: a new stat in the same entry.
        for (dir, stat) in &dir_stats {
            if entries.contains_key(dir) {
                continue;
            }
            let old = prev.get(*dir).expect("every folder was checked above");
            let stat = stat.dir_record(old.stat.size);
            if stat != old.stat {
                entries.insert(dir, TreeEntry { stat, ..*old });
            }
        }
        let root = match entries.get("") {
            Some(e) => e.node_id,
            None => prev.get("").expect("checked above").node_id,
        };
        Ok(Some(Built {
            root,
            entries: entries.into_iter().collect(),
            records,
            complete: false,
        }))
    }

    /// The last scan's start stamp and racy paths (see [`scan::Racy`]); a store written before
    /// racy paths were recorded has the stamp alone. A damaged record is as none at all: every
    /// file is hashed again, and the next scan writes a good record.
    fn racy_record(&self) -> Result<(Option<i64>, Option<PathSet>)> {
        Ok(self
            .engine
            .get(Table::Meta, META_STAMP)?
            .and_then(|v| decode_racy(&v))
            .unwrap_or((None, None)))
    }

    /// Touches the stamp file and returns its mtime: the filesystem's own clock, which is the
    /// clock file mtimes are compared with.
    fn take_stamp(&self) -> Result<i64> {
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

    /// How many frames the store has appended, ever: it grows with every frame created, by
    /// anyone, and with nothing else.
    pub fn frame_seq(&self) -> Result<u64> {
        self.engine
            .get(Table::Meta, META_FRAME_SEQ)?
            .map_or(Ok(0), |v| decode_frame_seq(&v))
    }

    /// The checkpoint `name` last recorded: a root, and [`Store::frame_seq`] when it was
    /// recorded. A caller that derives frames over a whole tree records one when it is done;
    /// while the frame sequence is unchanged no frame has been created since, so only the nodes
    /// that differ between that root and the current one ([`Store::changed_since`]) can need its
    /// work again. The store keeps checkpoints and never reads them.
    pub fn checkpoint(&self, name: &str) -> Result<Option<(NodeId, u64)>> {
        let key = checkpoint_key(name);
        self.engine
            .get(Table::Meta, &key)?
            .map(|v| {
                codec::decode("meta", &key, &v, "a root hash and a frame sequence", |r| {
                    Some((r.hash()?, r.u64()?))
                })
            })
            .transpose()
    }

    /// Records the checkpoint `name` (see [`Store::checkpoint`]).
    pub fn set_checkpoint(&self, name: &str, root: &NodeId, frame_seq: u64) -> Result<()> {
        let _guard = self.lock();
        let mut value = root.0.to_vec();
        value.extend_from_slice(&frame_seq.to_le_bytes());
        let mut batch = Batch::default();
        batch.put(Table::Meta, checkpoint_key(name), value);
        self.engine.commit(batch)
    }

    /// The number of nodes in the current tree and of frames in the store.
    pub fn counts(&self) -> Result<(u64, u64)> {
        Ok((
            self.engine.count(Table::Tree)?,
            self.engine.count(Table::Frames)?,
        ))
    }

    /// A node by id.
    pub fn node(&self, id: &NodeId) -> Result<Option<NodeRecord>> {
        self.engine
            .get(Table::Nodes, &id.0)?
            .map(|v| NodeRecord::decode(*id, &v))
            .transpose()
    }

    /// The node at a workspace-relative path in the current tree.
    pub fn node_at(&self, path: &str) -> Result<Option<NodeRecord>> {
        let path = normalize_path(path);
        let Some(v) = self.engine.get(Table::Tree, path.as_bytes())? else {
            return Ok(None);
        };
        let entry = TreeEntry::decode(path.as_bytes(), &v)?;
        match self.node(&entry.node_id)? {
            Some(n) => Ok(Some(n)),
            None => Err(Error::corrupt(
                "tree",
                path.as_bytes(),
                format!("node {} is missing", entry.node_id),
            )),
        }
    }

    /// Resolves a workspace-relative path, or a NodeID in hex (any unique prefix of at least 8
    /// digits). A path wins over a prefix that spells the same.
    pub fn resolve(&self, spec: &str) -> Result<NodeRecord> {
        if self.root()?.is_none() {
            return Err(Error::NotScanned);
        }
        if let Some(n) = self.node_at(spec)? {
            return Ok(n);
        }
        if !is_id_prefix(spec) {
            return Err(Error::NoSuchPath {
                path: normalize_path(spec),
            });
        }
        self.resolve_prefix(spec)
    }

    /// Resolves a NodeID given in hex: any unique prefix of at least 8 digits, like git.
    pub fn resolve_prefix(&self, prefix: &str) -> Result<NodeRecord> {
        if !is_id_prefix(prefix) {
            return Err(Error::Invalid {
                what: "node id",
                value: prefix.to_owned(),
                reason: "must be 8 to 64 hex digits",
            });
        }
        let prefix = prefix.to_ascii_lowercase();
        // Keys with this hex prefix are contiguous from the prefix padded with zeros.
        let padded = format!("{prefix}0");
        let start: Vec<u8> = padded
            .as_bytes()
            .chunks_exact(2)
            .map(|p| (hash::hex_val(p[0]).unwrap_or(0) << 4) | hash::hex_val(p[1]).unwrap_or(0))
            .collect();
        let mut found = Vec::new();
        self.engine.scan(Table::Nodes, &start, &mut |k, _| {
            if !hash::to_hex(k).starts_with(&prefix) {
                return false;
            }
            found.push(k.to_vec());
            found.len() < 2
        })?;
        match found.as_slice() {
            [one] => {
                let id = Hash::from_slice(one)
                    .ok_or_else(|| Error::corrupt("nodes", one, "key is not 32 bytes"))?;
                self.node(&id)?.ok_or(Error::NoSuchNode { id: id.to_hex() })
            }
            [] => Err(Error::NoSuchNode { id: prefix }),
            _ => Err(Error::AmbiguousPrefix {
                count: found.len(),
                prefix,
            }),
        }
    }

    /// The current tree below `path` (the root when empty): its children, or with `recursive`
    /// every descendant, in path order.
    pub fn list_nodes(&self, path: &str, recursive: bool) -> Result<Vec<TreeNode>> {
        let base = self.resolve_path_in_tree(path)?;
        if base.kind.is_leaf() {
            return Ok(vec![TreeNode {
                path: base.path,
                kind: base.kind,
                node_id: base.node_id,
            }]);
        }
        if !recursive {
            return Ok(base
                .children
                .iter()
                .map(|c| TreeNode {
                    path: base.child_path(&c.name),
                    kind: c.kind,
                    node_id: c.node_id,
                })
                .collect());
        }
        let prefix = if base.path.is_empty() {
            String::new()
        } else {
            format!("{}/", base.path)
        };
        let mut out = Vec::new();
        let mut err = None;
        self.engine
            .scan(Table::Tree, prefix.as_bytes(), &mut |k, v| {
                if !k.starts_with(prefix.as_bytes()) {
                    return false;
                }
                if k.is_empty() {
                    return true;
                }
                match (std::str::from_utf8(k), TreeEntry::decode(k, v)) {
                    (Ok(p), Ok(e)) => {
                        out.push(TreeNode {
                            path: p.to_owned(),
                            kind: e.kind,
                            node_id: e.node_id,
                        });
                        true
                    }
                    (_, Err(e)) => {
                        err = Some(e);
                        false
                    }
                    (Err(_), _) => {
                        err = Some(Error::corrupt("tree", k, "path is not UTF-8"));
                        false
                    }
                }
            })?;
        match err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    fn resolve_path_in_tree(&self, path: &str) -> Result<NodeRecord> {
        if self.root()?.is_none() {
            return Err(Error::NotScanned);
        }
        self.node_at(path)?.ok_or_else(|| Error::NoSuchPath {
            path: normalize_path(path),
        })
    }

    /// Registers an agent, or changes the role of a registered one (keeping its settings).
    pub fn add_agent(&self, id: &str, role: Role) -> Result<()> {
        frame::check_name("agent id", id)?;
        let _guard = self.lock();
        let settings = self.agent(id)?.map(|a| a.settings).unwrap_or_default();
        let mut batch = Batch::default();
        batch.put(
            Table::Agents,
            id.as_bytes().to_vec(),
            agent::encode(role, &settings),
        );
        self.engine.commit(batch)
    }

    /// Replaces a registered agent's settings (see [`Agent::settings`]).
    pub fn set_agent_settings(&self, id: &str, settings: &BTreeMap<String, String>) -> Result<()> {
        let _guard = self.lock();
        let a = self.agent(id)?.ok_or_else(|| Error::UnknownAgent {
            agent: id.to_owned(),
        })?;
        let mut batch = Batch::default();
        batch.put(
            Table::Agents,
            id.as_bytes().to_vec(),
            agent::encode(a.role, settings),
        );
        self.engine.commit(batch)
    }

    /// A registered agent.
    pub fn agent(&self, id: &str) -> Result<Option<Agent>> {
        let Some(v) = self.engine.get(Table::Agents, id.as_bytes())? else {
            return Ok(None);
        };
        agent::decode(id, &v)
            .map(Some)
            .ok_or_else(|| Error::corrupt("agents", id.as_bytes(), "malformed agent record"))
    }

    /// Every registered agent, by id.
    pub fn agents(&self) -> Result<Vec<Agent>> {
        let mut out = Vec::new();
        let mut err = None;
        self.engine
            .scan(Table::Agents, b"", &mut |k, v| match std::str::from_utf8(k)
                .ok()
                .and_then(|id| agent::decode(id, v))
            {
                Some(a) => {
                    out.push(a);
                    true
                }
                None => {
                    err = Some(Error::corrupt("agents", k, "malformed agent record"));
                    false
                }
            })?;
        match err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// Checks that `agent` is registered with a role that may do `action`.
    pub fn authorize(
        &self,
        agent: &str,
        action: &'static str,
        allowed: fn(Role) -> bool,
    ) -> Result<Agent> {
        let a = self.agent(agent)?.ok_or_else(|| Error::UnknownAgent {
            agent: agent.to_owned(),
        })?;
        if !allowed(a.role) {
            return Err(Error::Forbidden {
                agent: agent.to_owned(),
                role: a.role,
                action,
            });
        }
        Ok(a)
    }

    /// Appends a frame and moves its (node, type) head, in one durable transaction with the
    /// basis index. Putting an identical frame again changes nothing and returns the same id.
    ///
    /// Concurrent callers are group-committed: while one transaction commits, the frames that
    /// arrive queue up and go into the next one together, in arrival order. Each call still
    /// returns only once its own frame is durable, and each gets its own error.
    pub fn put_frame(&self, new: NewFrame) -> Result<PutOutcome> {
        frame::check_name("frame type", &new.frame_type)?;
        frame::check_name("agent id", &new.agent_id)?;
        let mut g = self.group.lock().unwrap_or_else(|e| e.into_inner());
        let ticket = g.next_ticket;
        g.next_ticket += 1;
        g.queue.push((ticket, new));
        loop {
            if let Some(r) = g.done.remove(&ticket) {
                return r;
            }
            if g.leading {
                g = self.group_done.wait(g).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            g.leading = true;
            let queue = std::mem::take(&mut g.queue);
            drop(g);
            let results = self.commit_frames(queue);
            g = self.group.lock().unwrap_or_else(|e| e.into_inner());
            g.done.extend(results);
            g.leading = false;
            self.group_done.notify_all();
        }
    }

    /// Puts many frames in one durable transaction, in order; each gets its own result, and a
    /// refused frame does not stop the others. For bulk work (generating a whole tree), where one
    /// commit per frame would cost one sync per frame.
    pub fn put_frames(&self, frames: Vec<NewFrame>) -> Vec<Result<PutOutcome>> {
        let mut checked = Vec::with_capacity(frames.len());
        let mut results: Vec<Option<Result<PutOutcome>>> = Vec::with_capacity(frames.len());
        for (i, f) in frames.into_iter().enumerate() {
            match frame::check_name("frame type", &f.frame_type)
                .and_then(|()| frame::check_name("agent id", &f.agent_id))
            {
                Ok(()) => {
                    checked.push((i as u64, f));
                    results.push(None);
                }
                Err(e) => results.push(Some(Err(e))),
            }
        }
        for (i, r) in self.commit_frames(checked) {
            results[i as usize] = Some(r);
        }
        results
            .into_iter()
            .map(|r| r.expect("every frame got a result"))
            .collect()
    }

    /// Writes a group of frames in one transaction; a frame that is refused does not stop the
    /// others.
    fn commit_frames(&self, queue: Vec<(u64, NewFrame)>) -> Vec<(u64, Result<PutOutcome>)> {
        let _guard = self.lock();
        let mut results: Vec<(u64, Result<PutOutcome>)> = Vec::with_capacity(queue.len());
        let mut batch = Batch::default();
        // A damaged counter must stop every put: read as 0, it would hand out sequence numbers
        // that are already history keys, and the new entries would overwrite the old.
        let seq = self
            .engine
            .get(Table::Meta, META_FRAME_SEQ)
            .and_then(|v| v.map_or(Ok(0), |v| decode_frame_seq(&v)));
        let mut seq = match seq {
            Ok(seq) => seq,
            Err(e) => {
                return queue
                    .into_iter()
                    .map(|(t, _)| (t, Err(shared_error(&e))))
                    .collect();
            }
        };
        // Frames written earlier in this group, by id, with their node.
        let mut written: HashMap<FrameId, NodeId> = HashMap::new();
        let mut created = Vec::new();
        for (ticket, new) in queue {
            let r = self.stage_frame(new, &mut seq, &mut written, &mut batch);
            if matches!(r, Ok(PutOutcome { created: true, .. })) {
                created.push(results.len());
            }
            results.push((ticket, r));
        }
        if !batch.is_empty() {
            batch.put(
                Table::Meta,
                META_FRAME_SEQ.to_vec(),
                seq.to_le_bytes().to_vec(),
            );
            if let Err(e) = self.engine.commit(batch) {
                for i in created {
                    results[i].1 = Err(shared_error(&e));
                }
            }
        }
        results
    }

    fn stage_frame(
        &self,
        new: NewFrame,
        seq: &mut u64,
        written: &mut HashMap<FrameId, NodeId>,
        batch: &mut Batch,
    ) -> Result<PutOutcome> {
        self.authorize(&new.agent_id, "put frames", Role::can_write)?;
        let basis = new.basis.unwrap_or(new.node_id);
        let frame_id = hash::frame_id(&basis, &new.content, &new.frame_type, &new.agent_id);
        let Some(node_bytes) = self.engine.get(Table::Nodes, &new.node_id.0)? else {
            return Err(Error::NoSuchNode {
                id: new.node_id.to_hex(),
            });
        };
        let node_path = NodeRecord::decode(new.node_id, &node_bytes)?.path;
        // A FrameID does not cover the node, so the basis must: a basis that is a node's id
        // names the node the frame is on (import and validate hold every frame to this).
        if basis != new.node_id
            && let Some(other) = self.engine.get(Table::Nodes, &basis.0)?
        {
            return Err(Error::BasisOfAnotherNode {
                basis,
                path: NodeRecord::decode(basis, &other)?.path,
            });
        }
        let existing = match written.get(&frame_id) {
            Some(node) => Some(*node),
            None => self
                .engine
                .get(Table::Frames, &frame_id.0)?
                .map(|v| Frame::decode(frame_id, &v))
                .transpose()?
                .map(|f| f.node_id),
        };
        if let Some(node) = existing {
            if node != new.node_id {
                return Err(Error::FrameConflict {
                    frame_id,
                    existing: node,
                    requested: new.node_id,
                });
            }
            return Ok(PutOutcome {
                frame_id,
                created: false,
            });
        }
        *seq += 1;
        let frame = Frame {
            frame_id,
            node_id: new.node_id,
            frame_type: new.frame_type,
            agent_id: new.agent_id,
            basis,
            content: new.content,
            metadata: new.metadata,
            seq: *seq,
        };
        batch.put(Table::Frames, frame_id.0.to_vec(), frame.encode());
        batch.put(
            Table::NodeFrames,
            history_key(&frame.node_id, &frame.frame_type, frame.seq),
            history_value(&frame),
        );
        batch.put(
            Table::Heads,
            head_key(&frame.node_id, &frame.frame_type),
            frame_id.0.to_vec(),
        );
        batch.put(
            Table::PathHeads,
            path_head_key(&node_path, &frame.frame_type),
            frame_id.0.to_vec(),
        );
        batch.put(Table::Basis, basis_key(&basis, &frame_id), Vec::new());
        written.insert(frame_id, frame.node_id);
        Ok(PutOutcome {
            frame_id,
            created: true,
        })
    }

    /// A frame by id.
    pub fn frame(&self, id: &FrameId) -> Result<Option<Frame>> {
        self.engine
            .get(Table::Frames, &id.0)?
            .map(|v| Frame::decode(*id, &v))
            .transpose()
    }

    fn frame_required(&self, id: &FrameId, table: &'static str, key: &[u8]) -> Result<Frame> {
        self.frame(id)?
            .ok_or_else(|| Error::corrupt(table, key, format!("frame {id} is missing")))
    }

    /// Every frame on a node (of one type, if given), oldest first.
    pub fn frames_of(&self, node: &NodeId, frame_type: Option<&str>) -> Result<Vec<Frame>> {
        self.frame_summaries(node, frame_type)?
            .iter()
            .map(|s| {
                self.frame_required(
                    &s.frame_id,
                    "node_frames",
                    &history_key(node, &s.frame_type, s.seq),
                )
            })
            .collect()
    }

    /// What ordering and filtering need of every frame on a node (of one type, if given),
    /// oldest first, read from the node's history index alone: no frame record is read, so a
    /// view over a long history loads only the frames it selects.
    pub fn frame_summaries(
        &self,
        node: &NodeId,
        frame_type: Option<&str>,
    ) -> Result<Vec<FrameSummary>> {
        let mut prefix = node.0.to_vec();
        if let Some(t) = frame_type {
            prefix.extend_from_slice(t.as_bytes());
            prefix.push(0);
        }
        let mut out = Vec::new();
        let mut err = None;
        self.engine.scan(Table::NodeFrames, &prefix, &mut |k, v| {
            if !k.starts_with(&prefix) {
                return false;
            }
            match FrameSummary::decode(k, v) {
                Some(s) => {
                    out.push(s);
                    true
                }
                None => {
                    err = Some(Error::corrupt("node_frames", k, "malformed history entry"));
                    false
                }
            }
        })?;
        if let Some(e) = err {
            return Err(e);
        }
        out.sort_by_key(|s| s.seq);
        Ok(out)
    }

    /// The head frame of (node, type).
    pub fn head(&self, node: &NodeId, frame_type: &str) -> Result<Option<Frame>> {
        self.indexed_frame(Table::Heads, &head_key(node, frame_type))
    }

    /// The head frame of every type on a node, by type.
    pub fn heads(&self, node: &NodeId) -> Result<Vec<Frame>> {
        self.indexed_frames(Table::Heads, &node.0)
    }

    /// The frame an index entry (a frame id as its value) points at.
    fn indexed_frame(&self, table: Table, key: &[u8]) -> Result<Option<Frame>> {
        match self.engine.get(table, key)? {
            None => Ok(None),
            Some(v) => {
                let id = Hash::from_slice(&v)
                    .ok_or_else(|| Error::corrupt(table.name(), key, "value is not a frame id"))?;
                self.frame_required(&id, table.name(), key).map(Some)
            }
        }
    }

    /// The frames the index entries under `prefix` point at, in key order.
    fn indexed_frames(&self, table: Table, prefix: &[u8]) -> Result<Vec<Frame>> {
        let mut ids = Vec::new();
        self.engine.scan(table, prefix, &mut |k, v| {
            if !k.starts_with(prefix) {
                return false;
            }
            ids.push((k.to_vec(), v.to_vec()));
            true
        })?;
        ids.iter()
            .map(|(k, v)| {
                let id = Hash::from_slice(v)
                    .ok_or_else(|| Error::corrupt(table.name(), k, "value is not a frame id"))?;
                self.frame_required(&id, table.name(), k)
            })
            .collect()
    }

    /// The latest frame of a type on any node that has been at `path` (any version of it).
    pub fn path_head(&self, path: &str, frame_type: &str) -> Result<Option<Frame>> {
        self.indexed_frame(
            Table::PathHeads,
            &path_head_key(&normalize_path(path), frame_type),
        )
    }

    /// Every path that has had a frame on some version of its node, in path order.
    pub fn paths_with_frames(&self) -> Result<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        let mut err = None;
        self.engine.scan(Table::PathHeads, b"", &mut |k, _| {
            let path = k
                .iter()
                .position(|&b| b == 0)
                .and_then(|at| std::str::from_utf8(&k[..at]).ok());
            let Some(path) = path else {
                err = Some(Error::corrupt(
                    "path_heads",
                    k,
                    "key is not a UTF-8 path, a 0 byte and a frame type",
                ));
                return false;
            };
            if out.last().map(String::as_str) != Some(path) {
                out.push(path.to_owned());
            }
            true
        })?;
        err.map_or(Ok(out), Err)
    }

    /// The latest frame of every type on any version of the node at `path`, by type.
    pub fn path_heads(&self, path: &str) -> Result<Vec<Frame>> {
        let mut prefix = normalize_path(path).into_bytes();
        prefix.push(0);
        self.indexed_frames(Table::PathHeads, &prefix)
    }

    /// A leaf's content as the node recorded it: a file's bytes or a symlink's target. Fails
    /// with `ContentChanged` if the disk no longer holds that content.
    pub fn read_content(&self, node: &NodeRecord) -> Result<Vec<u8>> {
        if node.kind == NodeKind::Dir {
            return Err(Error::Invalid {
                what: "node",
                value: node.path.clone(),
                reason: "is a directory, which has no content of its own",
            });
        }
        let path = self.workspace.join(&node.path);
        let bytes = match node.kind {
            NodeKind::Symlink => scan::symlink_target(&path),
            _ => std::fs::read(&path),
        }
        .map_err(|e| Error::io(&path, e))?;
        if hash::content_hash(&bytes) != node.content_hash {
            return Err(Error::ContentChanged {
                path: node.path.clone(),
            });
        }
        Ok(bytes)
    }

    /// The frame recorded under memo `key` by [`Store::put_memos`], if any.
    ///
    /// Memos let a derivation find earlier work by what it was derived from, wherever that work
    /// is attached: a file renamed, reverted or duplicated has the same inputs as before, so its
    /// frame's content can be reused without running the producer again. The key is the
    /// caller's hash of those inputs. A memo is a cache beside the frames, not part of them: it
    /// is written after the frame, and a memo lost to a crash costs only a recomputation (frames
    /// are never deleted, so a memo never dangles).
    pub fn memo(&self, key: &Hash) -> Result<Option<FrameId>> {
        self.engine
            .get(Table::Memo, &key.0)?
            .map(|v| codec::decode("memo", &key.0, &v, "a frame id", |r| r.hash()))
            .transpose()
    }

    /// Records each (memo key, frame) in one commit; a later record of a key replaces it. Every
    /// frame must exist.
    pub fn put_memos(&self, memos: &[(Hash, FrameId)]) -> Result<()> {
        if memos.is_empty() {
            return Ok(());
        }
        let _guard = self.lock();
        let mut batch = Batch::default();
        for (key, frame) in memos {
            if self.engine.get(Table::Frames, &frame.0)?.is_none() {
                return Err(Error::NoSuchFrame { id: frame.to_hex() });
            }
            batch.put(Table::Memo, key.0.to_vec(), frame.0.to_vec());
        }
        self.engine.commit(batch)
    }

    /// The frames derived from a basis, by FrameID.
    pub fn frames_with_basis(&self, basis: &Hash) -> Result<Vec<FrameId>> {
        let mut out = Vec::new();
        let mut err = None;
        self.engine.scan(Table::Basis, &basis.0, &mut |k, _| {
            if !k.starts_with(&basis.0) {
                return false;
            }
            match Hash::from_slice(&k[32..]) {
                Some(id) => {
                    out.push(id);
                    true
                }
                None => {
                    err = Some(Error::corrupt(
                        "basis",
                        k,
                        "key is not a basis and a frame id",
                    ));
                    false
                }
            }
        })?;
        err.map_or(Ok(out), Err)
    }

    /// Checks the store against itself: re-derives every NodeID and FrameID from its fields and
    /// checks the tree, heads, history and basis index. Returns every inconsistency found.
    pub fn validate(&self) -> Result<Vec<Problem>> {
        let _guard = self.lock();
        crate::validate::run(self.engine.as_ref())
    }
}

/// Whether a string can be a NodeID prefix: 8 to 64 hex digits.
pub fn is_id_prefix(s: &str) -> bool {
    (8..=64).contains(&s.len()) && s.bytes().all(|c| c.is_ascii_hexdigit())
}

pub(crate) fn head_key(node: &NodeId, frame_type: &str) -> Vec<u8> {
    let mut k = node.0.to_vec();
    k.extend_from_slice(frame_type.as_bytes());
    k
}

pub(crate) fn path_head_key(path: &str, frame_type: &str) -> Vec<u8> {
    let mut k = path.as_bytes().to_vec();
    k.push(0);
    k.extend_from_slice(frame_type.as_bytes());
    k
}

/// A history entry's value: the frame id, then what views order and filter by.
pub(crate) fn history_value(f: &Frame) -> Vec<u8> {
    let mut v = f.frame_id.0.to_vec();
    v.extend_from_slice(&f.metadata.created_at_ms.to_le_bytes());
    v.extend_from_slice(f.agent_id.as_bytes());
    v
}

/// One frame as the node's history index describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameSummary {
    /// The frame.
    pub frame_id: FrameId,
    /// The node it is on.
    pub node_id: NodeId,
    /// Its type.
    pub frame_type: String,
    /// Its agent.
    pub agent_id: String,
    /// Its `created_at`, ms since the epoch.
    pub created_at_ms: u64,
    /// Its position in the store's append order.
    pub seq: u64,
}

impl FrameSummary {
    /// Decodes a history entry (key: node ++ type ++ 0 ++ seq; value: [`history_value`]).
    pub(crate) fn decode(key: &[u8], value: &[u8]) -> Option<FrameSummary> {
        let node_id = Hash::from_slice(key.get(..32)?)?;
        let rest = key.get(32..)?;
        let (ty, seq) = rest.split_at(rest.len().checked_sub(9)?);
        if seq.first() != Some(&0) {
            return None;
        }
        let seq = u64::from_be_bytes(seq.get(1..)?.try_into().ok()?);
        Some(FrameSummary {
            frame_id: Hash::from_slice(value.get(..32)?)?,
            node_id,
            frame_type: std::str::from_utf8(ty).ok()?.to_owned(),
            created_at_ms: u64::from_le_bytes(value.get(32..40)?.try_into().ok()?),
            agent_id: std::str::from_utf8(value.get(40..)?).ok()?.to_owned(),
            seq,
        })
    }
}

pub(crate) fn history_key(node: &NodeId, frame_type: &str, seq: u64) -> Vec<u8> {
    let mut k = head_key(node, frame_type);
    k.push(0);
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

pub(crate) fn basis_key(basis: &Hash, frame: &FrameId) -> Vec<u8> {
    let mut k = basis.0.to_vec();
    k.extend_from_slice(&frame.0);
    k
}

/// Normalizes a user's workspace-relative path: `/` separators (a `\\` is one too), no `./`,
/// no trailing or leading `/`, `..` applied lexically ([`lexical_path`]); `.` and the empty
/// string are the root. A path that climbs above the root keeps its leading `..`, and so names
/// no node.
pub fn normalize_path(path: &str) -> String {
    lexical_path(&path.replace('\\', "/"))
        .trim_start_matches('/')
        .to_owned()
}

/// `path` with `.` and empty components dropped and `..` applied lexically (the path may name
/// something no longer on disk, so nothing is resolved through the file system): the one
/// lexical normalisation the store, governance's rules and import resolution share. A leading
/// `/` is kept (and `..` stops there); leading `..` components of a relative path are kept.
pub fn lexical_path(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// The tree a walk describes: an entry per path (or, not `complete`, only the entries that
/// differ from the last scan's), and records for the nodes that changed. Paths are the walk's
/// own, borrowed.
struct Built<'w> {
    root: NodeId,
    entries: Vec<(&'w str, TreeEntry)>,
    records: Vec<StoredNode>,
    complete: bool,
}

/// A node record as the nodes table keeps it: keyed by its NodeID, encoded as
/// [`NodeRecord::encode`] encodes it, made straight from the scan's parts.
pub(crate) struct StoredNode {
    pub(crate) id: NodeId,
    pub(crate) dir: bool,
    pub(crate) bytes: Vec<u8>,
}

/// A child of a directory being built: a leaf or a directory, by its index in the walk.
#[derive(Clone, Copy)]
enum Kid {
    Leaf(usize),
    Dir(usize),
}

/// Computes leaf and directory NodeIDs bottom-up. A directory is recomputed only if it is new,
/// its number of children changed, or one of its children's NodeIDs changed; otherwise its
/// previous entry is reused, so a one-file edit recomputes just that file's ancestors.
///
/// Leaves are done on the pool, then directories a depth at a time, each depth on the pool;
/// every path is the walk's, found by index rather than looked up by name.
fn build_tree<'w>(walked: &'w scan::Walked, prev: &PathMap<TreeEntry>) -> Built<'w> {
    let leaves: Vec<(TreeEntry, Option<StoredNode>)> = walked
        .leaves
        .par_iter()
        .map(|leaf| leaf_entry(leaf, prev.get(&leaf.path)))
        .collect();
    // Directories by index: the walk's, then the root.
    let dir_paths: Vec<&str> = walked
        .dirs
        .iter()
        .map(|d| d.path.as_str())
        .chain(std::iter::once(""))
        .collect();
    let dir_stats: Vec<node::Stat> = walked
        .dirs
        .iter()
        .map(|d| d.stat)
        .chain(std::iter::once(walked.top))
        .collect();
    let root_idx = dir_paths.len() - 1;
    let index: std::collections::HashMap<&str, usize, rustc_hash::FxBuildHasher> =
        dir_paths.iter().enumerate().map(|(i, d)| (*d, i)).collect();
    let mut kids: Vec<Vec<Kid>> = vec![Vec::new(); dir_paths.len()];
    let parent = |path: &str| index.get(node::split(path).0).copied();
    // Each path's parent (and a folder's depth) looked up on every core, each a read of its
    // path; the lists are then filled in order.
    let (leaf_parents, dir_parents) = rayon::join(
        || {
            let parents: Vec<Option<usize>> =
                walked.leaves.par_iter().map(|l| parent(&l.path)).collect();
            parents
        },
        || {
            let parents_and_depths: Vec<(Option<usize>, usize)> = dir_paths[..root_idx]
                .par_iter()
                .map(|d| (parent(d), 1 + d.bytes().filter(|&b| b == b'/').count()))
                .collect();
            parents_and_depths
        },
    );
    for (i, p) in leaf_parents.into_iter().enumerate() {
        if let Some(p) = p {
            kids[p].push(Kid::Leaf(i));
        }
    }
    let mut depths: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, (p, depth)) in dir_parents.into_iter().enumerate() {
        if let Some(p) = p {
            kids[p].push(Kid::Dir(i));
        }
        depths.entry(depth).or_default().push(i);
    }
    depths.insert(0, vec![root_idx]);
    // Deepest first, so every child is done before its parent; the root last.
    let mut dir_entries: Vec<Option<TreeEntry>> = vec![None; dir_paths.len()];
    let mut records: Vec<StoredNode> = Vec::with_capacity(leaves.len() + dir_paths.len());
    for level in depths.values().rev() {
        let done: Vec<(usize, TreeEntry, Option<StoredNode>)> = level
            .par_iter()
            .map(|&d| {
                let dir = dir_paths[d];
                let mut named: Vec<(&str, TreeEntry)> = kids[d]
                    .iter()
                    .map(|kid| match *kid {
                        Kid::Leaf(i) => (node::split(&walked.leaves[i].path).1, leaves[i].0),
                        Kid::Dir(i) => (
                            node::split(dir_paths[i]).1,
                            dir_entries[i].expect("deeper directories are built first"),
                        ),
                    })
                    .collect();
                let unchanged = prev.get(dir).filter(|o| {
                    o.kind == NodeKind::Dir
                        && o.stat.size == named.len() as u64
                        && named.iter().all(|(name, e)| {
                            prev.get(&node::join(dir, name))
                                .is_some_and(|p| p.node_id == e.node_id)
                        })
                });
                match unchanged {
                    Some(old) => {
                        let stat = dir_stats[d].dir_record(old.stat.size);
                        (d, TreeEntry { stat, ..*old }, None)
                    }
                    None => {
                        let (entry, record) = dir_entry(dir, dir_stats[d], &mut named);
                        (d, entry, Some(record))
                    }
                }
            })
            .collect();
        for (d, entry, record) in done {
            dir_entries[d] = Some(entry);
            records.extend(record);
        }
    }
    let root = dir_entries[root_idx]
        .expect("the root is always built")
        .node_id;
    let mut entries: Vec<(&str, TreeEntry)> = Vec::with_capacity(leaves.len() + dir_paths.len());
    for (leaf, (entry, record)) in walked.leaves.iter().zip(leaves) {
        entries.push((&leaf.path, entry));
        records.extend(record);
    }
    entries.extend(
        dir_paths
            .iter()
            .zip(dir_entries)
            .map(|(d, e)| (*d, e.expect("every directory is built"))),
    );
    Built {
        root,
        entries,
        records,
        complete: true,
    }
}

/// A leaf's entry: its last node when its kind and content are unchanged, else a new node,
/// with its record.
fn leaf_entry(leaf: &scan::Leaf, prev: Option<&TreeEntry>) -> (TreeEntry, Option<StoredNode>) {
    let (node_id, record) = match prev {
        Some(o) if o.kind == leaf.kind && o.content_hash == leaf.content_hash => (o.node_id, None),
        _ => {
            let id = hash::leaf_node_id(leaf.kind, &leaf.path, &leaf.content_hash);
            let bytes = node::encode_record(
                leaf.kind,
                &leaf.path,
                &leaf.content_hash,
                leaf.stat.size,
                std::iter::empty(),
            );
            let record = StoredNode {
                id,
                dir: false,
                bytes,
            };
            (id, Some(record))
        }
    };
    let entry = TreeEntry {
        kind: leaf.kind,
        node_id,
        content_hash: leaf.content_hash,
        stat: leaf.stat,
    };
    (entry, record)
}

/// A directory's entry and node record from its stat (see [`scan::WalkedDir::stat`]) and its
/// children's (name, entry), which it sorts.
fn dir_entry<S: AsRef<str>>(
    dir: &str,
    stat: node::Stat,
    kids: &mut [(S, TreeEntry)],
) -> (TreeEntry, StoredNode) {
    kids.sort_unstable_by(|a, b| a.0.as_ref().as_bytes().cmp(b.0.as_ref().as_bytes()));
    let node_id = hash::dir_node_id(dir, kids.iter().map(|(n, e)| (n.as_ref(), &e.node_id)));
    let content_hash = hash::dir_content_hash(
        kids.iter()
            .map(|(n, e)| (n.as_ref(), e.kind, &e.content_hash)),
    );
    let bytes = node::encode_record(
        NodeKind::Dir,
        dir,
        &content_hash,
        kids.len() as u64,
        kids.iter().map(|(n, e)| (n.as_ref(), e.kind, &e.node_id)),
    );
    let record = StoredNode {
        id: node_id,
        dir: true,
        bytes,
    };
    let entry = TreeEntry {
        kind: NodeKind::Dir,
        node_id,
        content_hash,
        stat: stat.dir_record(kids.len() as u64),
    };
    (entry, record)
}
