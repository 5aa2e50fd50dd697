//! The store: one workspace's Merkle tree, frames, heads, basis index and agents in one engine,
//! behind the thin [`Store`] handle (opening, node addressing, agents, validation) and three
//! rooms: the tree (`tree.rs`: scan, plan, apply; `build.rs`: the one tree builder;
//! `rescan.rs`: paths; `status.rs`), frames (`frames.rs`: put, heads, history, memos, basis;
//! `path_heads.rs`: recorded only where not implied; `exchange.rs`: import and export) and
//! caches (`derived.rs`, `caches.rs`: checkpoints and notes; remote markers in `exchange.rs`).
//!
//! Writers are serialized in this process by a write lock (concurrent `put_frame`s share one
//! group commit) and across processes by redb's single-writer lock (a second writer gets
//! [`Error::StoreInUse`]; readers in other processes follow). Reads share one snapshot per
//! handle until it commits ([`Store::refresh`]). Writers of derived frames hold
//! [`Store::derivation_lock`] from re-reading their inputs to the put, so a derivation from
//! superseded inputs never becomes the head.
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};

use merkle_hash::lexical_path;
use rayon::prelude::*;

use crate::agent::{self, Agent, Role};
use crate::codec::{self, Writer};

use crate::engine::{Batch, Engine, EngineKind, Table};
use crate::error::{Error, Result};
use crate::frame::{self, Frame, NewFrame, PutOutcome};
use crate::hash::{self, FrameId, Hash, NodeId};
use crate::keys::*;
use crate::node::{self, NodeKind, NodeRecord, PathMap, PathSet, TreeEntry};
use crate::scan::{self, HashConfig, Progress};
pub use crate::validate::Problem;

mod bodies;
mod build;
mod caches;
mod derived;
mod exchange;
mod frames;
mod gc;
mod path_heads;
mod rescan;
mod scan_writes;
mod space;
mod status;
mod tree;

pub use bodies::BODY_MIN;
pub use derived::TreeFile;
pub use exchange::{Import, ImportOptions, ImportReport, Refusal, pushed_marker};
pub use frames::FrameSummary;
pub use gc::Collected;
pub use space::Space;
pub use status::StatusReport;
pub use tree::{Change, ScanOptions, ScanPlan, ScanReport};

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
    /// Opened with [`OpenOptions::read_only`]: every write fails.
    read_only: bool,
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

/// The store folder that [`Store::open`] opens for `workspace` with `opts`: `opts.store_dir`
/// (a relative one from the current folder), else `<workspace>/.merkle`. Nothing is created;
/// for a caller that must know the folder without opening it (a file watcher ignoring the
/// store's own writes).
pub fn store_dir(workspace: &Path, opts: &OpenOptions) -> Result<PathBuf> {
    let workspace = workspace
        .canonicalize()
        .map_err(|e| Error::io(workspace, e))?;
    dir_in(&workspace, opts)
}

/// [`store_dir`] of a canonical workspace path.
fn dir_in(workspace: &Path, opts: &OpenOptions) -> Result<PathBuf> {
    Ok(match &opts.store_dir {
        Some(d) if d.is_absolute() => d.clone(),
        Some(d) => std::env::current_dir()
            .map_err(|e| Error::io(d, e))?
            .join(d),
        None => workspace.join(".merkle"),
    })
}

impl Store {
    /// Opens (creating if needed, unless read-only or [`OpenOptions::existing`]) the store of
    /// `workspace`.
    pub fn open(workspace: &Path, opts: &OpenOptions) -> Result<Store> {
        let workspace = workspace
            .canonicalize()
            .map_err(|e| Error::io(workspace, e))?;
        let dir = dir_in(&workspace, opts)?;
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
            read_only: opts.read_only,
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

    /// Whether this handle was opened read-only ([`OpenOptions::read_only`]): a cache that a
    /// reader would fill is then left as it is.
    pub fn is_read_only(&self) -> bool {
        self.read_only
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

    /// The root hash of the last scan.
    pub fn root(&self) -> Result<Option<NodeId>> {
        self.engine
            .get(Table::Meta, META_ROOT)?
            .map(|v| decode_root(&v))
            .transpose()
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

    /// The node at a workspace-relative path in the current tree. A leaf's record is its tree
    /// entry's fields (kind, NodeID, content hash, size), read without a second lookup: the
    /// nodes table is keyed by hash, so on a large tree that lookup is a page read from disk
    /// for each file (generate reads every file's node).
    pub fn node_at(&self, path: &str) -> Result<Option<NodeRecord>> {
        let path = normalize_path(path);
        let Some(v) = self.engine.get(Table::Tree, path.as_bytes())? else {
            return Ok(None);
        };
        let entry = TreeEntry::decode(path.as_bytes(), &v)?;
        if entry.kind != NodeKind::Dir {
            return Ok(Some(NodeRecord {
                node_id: entry.node_id,
                path,
                kind: entry.kind,
                content_hash: entry.content_hash,
                size: entry.stat.size,
                children: Vec::new(),
            }));
        }
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

/// Normalizes a user's workspace-relative path: `/` separators (on Windows a `\\` is one too;
/// elsewhere it is a character a file name may hold, as the scan records it), no `./`, no
/// trailing or leading `/`, `..` applied lexically ([`lexical_path`]); `.` and the empty string
/// are the root. A path that climbs above the root keeps its leading `..`, and so names no node.
pub fn normalize_path(path: &str) -> String {
    let path = if cfg!(windows) {
        std::borrow::Cow::Owned(path.replace('\\', "/"))
    } else {
        std::borrow::Cow::Borrowed(path)
    };
    lexical_path(&path).trim_start_matches('/').to_owned()
}

/// A node record as the nodes table keeps it: keyed by its NodeID, encoded as
/// `node::encode_record` encodes it, made straight from the scan's parts.
pub(crate) struct StoredNode {
    pub(crate) id: NodeId,
    pub(crate) dir: bool,
    pub(crate) bytes: Vec<u8>,
}
