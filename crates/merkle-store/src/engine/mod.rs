//! The small storage trait every engine implements, and the engines behind it.
//!
//! The store needs only ordered byte maps in a few named tables, point reads, ordered scans and
//! one atomic, durable batch write; keeping the trait that small is what lets one conformance
//! suite run unchanged against every engine. redb is the default: it commits with one fsync and
//! checksums, its file format is stable, and it lets readers in other processes follow a single
//! writer. sled stays selectable behind the `sled` cargo feature.
use std::path::Path;

use crate::error::Result;

mod blocked;
mod packed;
mod redb;
#[cfg(feature = "sled")]
mod sled;

thread_local! {
    /// Whether this thread is inside an engine call that catches panics (see
    /// [`silence_caught_panics`]).
    static CATCHING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with [`CATCHING`] set, for an engine that turns a panic inside `f` into an error.
pub(crate) fn catching<T>(f: impl FnOnce() -> T) -> T {
    let outer = CATCHING.with(|c| c.replace(true));
    let r = f();
    CATCHING.with(|c| c.set(outer));
    r
}

/// Installs a panic hook that stays silent for a panic inside an engine call, which the engine
/// catches and returns as [`crate::Error::Damaged`], and hands every other panic to the hook
/// installed before. For a binary, whose user should read the error rather than a panic
/// message above it; the library never installs a hook itself.
pub fn silence_caught_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !CATCHING.with(std::cell::Cell::get) {
            previous(info);
        }
    }));
}

/// The tables of the store. Each is an ordered map from bytes to bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// Singleton values: the root, the scan stamp, the frame sequence counter.
    Meta,
    /// NodeID -> node record, for every node any scan has seen (frames may point at old nodes).
    Nodes,
    /// Workspace path -> the last scan's entry at that path (node id, stat fields), kept in
    /// blocks of entries (see `blocked.rs`).
    Tree,
    /// FrameID -> frame record.
    Frames,
    /// NodeID ++ frame type ++ 0 ++ sequence (u64 big-endian) -> FrameID ++ created_at (u64
    /// little-endian) ++ agent id: history in append order, with what views order and filter
    /// by, so that they read only the frames they select.
    NodeFrames,
    /// NodeID ++ frame type -> FrameID of the head, only where it is not the latest entry of
    /// its history (an imported frame appended after a head it did not outrank; every head of
    /// a store written before heads were derived, until `merkle gc`).
    Heads,
    /// Basis ++ FrameID -> empty: which frames were derived from a basis other than their own
    /// node (those of their node are found through its history).
    Basis,
    /// Agent id -> role.
    Agents,
    /// Path ++ 0 ++ frame type -> FrameID of the latest frame of that type on any node that has
    /// been at that path (context that follows a file or directory across its versions), only
    /// where it is not the head of the node at the path now (see `store/path_heads.rs`).
    PathHeads,
    /// Memo key -> FrameID: a frame whose content was derived from the inputs the key hashes,
    /// so that a derivation with the same inputs reuses it (a cache: see `Store::memo`).
    Memo,
    /// Namespace ++ 0 ++ key hash -> bytes, or the body holding them: data derived from
    /// content by a caller (a parse's symbols and imports), whose meaning the store does not
    /// know (see `Store::derived`).
    Derived,
    /// What a store of an earlier version kept: a copy of the tree table in large pieces, for
    /// whole-tree reads, before the table was kept in blocks. Nothing writes it; `merkle gc`
    /// empties it.
    Kept,
    /// Content hash (blake3) -> content: a frame's content or a derived record's bytes of at
    /// least [`crate::store::BODY_MIN`] bytes, kept once however many records hold it (see
    /// `store/bodies.rs`).
    Bodies,
}

impl Table {
    /// Every table, in a fixed order.
    pub const ALL: [Table; 13] = [
        Table::Meta,
        Table::Nodes,
        Table::Tree,
        Table::Frames,
        Table::NodeFrames,
        Table::Heads,
        Table::Basis,
        Table::Agents,
        Table::PathHeads,
        Table::Memo,
        Table::Derived,
        Table::Kept,
        Table::Bodies,
    ];

    /// The table's name on disk.
    pub fn name(self) -> &'static str {
        match self {
            Table::Meta => "meta",
            Table::Nodes => "nodes",
            Table::Tree => "tree",
            Table::Frames => "frames",
            Table::NodeFrames => "node_frames",
            Table::Heads => "heads",
            Table::Basis => "basis",
            Table::Agents => "agents",
            Table::PathHeads => "path_heads",
            Table::Memo => "memo",
            Table::Derived => "derived",
            Table::Kept => "kept",
            Table::Bodies => "bodies",
        }
    }
}

/// A set of writes applied all at once or not at all.
#[derive(Default, Debug)]
pub struct Batch {
    pub(crate) ops: Vec<(Table, Vec<u8>, Option<Vec<u8>>)>,
}

impl Batch {
    /// An empty batch with room for `n` writes.
    pub fn with_capacity(n: usize) -> Batch {
        Batch {
            ops: Vec::with_capacity(n),
        }
    }

    /// Sets `key` to `value` in `table`.
    pub fn put(&mut self, table: Table, key: Vec<u8>, value: Vec<u8>) {
        self.ops.push((table, key, Some(value)));
    }

    /// Removes `key` from `table`.
    pub fn delete(&mut self, table: Table, key: Vec<u8>) {
        self.ops.push((table, key, None));
    }

    /// Whether the batch writes nothing.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// How many writes the batch holds.
    pub fn len(&self) -> usize {
        self.ops.len()
    }
}

/// The first key after every key that starts with `prefix`; `None` where there is none (the
/// prefix is all 0xff bytes, or empty).
pub(crate) fn after_prefix(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// [`Engine::last_under`] by a scan of every entry under `prefix`, for an engine that cannot
/// read the last one alone.
pub(crate) fn last_under_by_scan(
    engine: &(impl Engine + ?Sized),
    table: Table,
    prefix: &[u8],
) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    let mut last = None;
    engine.scan(table, prefix, &mut |k, v| {
        if !k.starts_with(prefix) {
            return false;
        }
        last = Some((k.to_vec(), v.to_vec()));
        true
    })?;
    Ok(last)
}

/// Whether a store holds `mark` in its meta table, and whether, opened for writing without
/// it, it holds nothing at all (a new store, which a wrapper that marks its format marks with
/// its first commit): (marked, empty).
pub(crate) fn marked_or_empty(
    inner: &dyn Engine,
    mark: &[u8],
    writable: bool,
) -> Result<(bool, bool)> {
    let marked = inner.get(Table::Meta, mark)?.is_some();
    let mut empty = !marked && writable;
    for table in Table::ALL {
        if !empty {
            break;
        }
        empty = inner.count(table)? == 0;
    }
    Ok((marked, empty))
}

/// An embedded ordered key-value engine.
pub trait Engine: Send + Sync {
    /// The engine's name, as `--engine` spells it.
    fn name(&self) -> &'static str;
    /// Reads one value where the engine holds it, without a copy: `visit` is given it, or
    /// `None` where there is none.
    fn visit_value(
        &self,
        table: Table,
        key: &[u8],
        visit: &mut dyn FnMut(Option<&[u8]>),
    ) -> Result<()>;
    /// Whether `table` holds `key`, without reading its value out (or unpacking it).
    fn contains(&self, table: Table, key: &[u8]) -> Result<bool> {
        let mut found = false;
        self.visit_value(table, key, &mut |v| found = v.is_some())?;
        Ok(found)
    }
    /// Reads one value, copied out.
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut value = None;
        self.visit_value(table, key, &mut |v| value = v.map(<[u8]>::to_vec))?;
        Ok(value)
    }
    /// Visits entries whose key is `>= start`, in key order, until `visit` returns false.
    fn scan(
        &self,
        table: Table,
        start: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()>;
    /// The last entry whose key starts with `prefix` (a head's history: see
    /// `store/frames.rs`), without reading the ones before it where the engine can.
    fn last_under(&self, table: Table, prefix: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        last_under_by_scan(self, table, prefix)
    }
    /// The last entry whose key is `<= key` (the block a key falls in: see `blocked.rs`).
    fn floor(&self, table: Table, key: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>>;
    /// [`Engine::scan`] of the values as the engine stores them (packed: see `packed.rs`),
    /// for what takes the space.
    fn scan_stored(
        &self,
        table: Table,
        start: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.scan(table, start, visit)
    }
    /// Gives the space of deleted and rewritten records back to the file system, where the
    /// engine can; whether it did (not while another process reads the store).
    fn compact(&mut self) -> Result<bool> {
        Ok(false)
    }
    /// Packs the values of a store written before packing, in place (see `packed.rs`); the
    /// values rewritten.
    fn pack_all(&self) -> Result<u64> {
        Ok(0)
    }
    /// Rewrites the tree table of a store written before blocks in blocks, in place (see
    /// `blocked.rs`); the entries rewritten.
    fn block_all(&self) -> Result<u64> {
        Ok(0)
    }
    /// Applies every write of `batch` atomically; returns only once the writes are durable.
    fn commit(&self, batch: Batch) -> Result<()>;
    /// The number of entries in a table.
    fn count(&self, table: Table) -> Result<u64>;
    /// Forgets any cached read snapshot, so that the next read sees every commit so far,
    /// including other processes'.
    fn refresh(&self) {}
}

/// Which engine a store uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EngineKind {
    /// redb (the default).
    #[default]
    Redb,
    /// sled, when built with the `sled` feature.
    Sled,
}

impl EngineKind {
    /// Every engine built into this binary.
    pub fn available() -> Vec<EngineKind> {
        let mut v = vec![EngineKind::Redb];
        if cfg!(feature = "sled") {
            v.push(EngineKind::Sled);
        }
        v
    }

    /// The engine's name.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Redb => "redb",
            EngineKind::Sled => "sled",
        }
    }

    /// Parses an engine name.
    pub fn parse(s: &str) -> Option<EngineKind> {
        match s {
            "redb" => Some(EngineKind::Redb),
            "sled" => Some(EngineKind::Sled),
            _ => None,
        }
    }

    /// The engine's data path inside a store folder.
    pub(crate) fn data_path(self, store_dir: &Path) -> std::path::PathBuf {
        match self {
            EngineKind::Redb => store_dir.join("store.redb"),
            EngineKind::Sled => store_dir.join("sled"),
        }
    }

    /// Opens the engine's data in `store_dir`; `writable` false opens for reading beside a writer
    /// in another process, and fails if there is no data yet.
    pub(crate) fn open(self, store_dir: &Path, writable: bool) -> Result<Box<dyn Engine>> {
        let path = self.data_path(store_dir);
        let inner: Box<dyn Engine> = match self {
            EngineKind::Redb => Box::new(redb::RedbEngine::open(store_dir, &path, writable)?),
            #[cfg(feature = "sled")]
            EngineKind::Sled => Box::new(sled::SledEngine::open(store_dir, &path)?),
            #[cfg(not(feature = "sled"))]
            EngineKind::Sled => {
                return Err(crate::Error::EngineUnavailable {
                    engine: "sled".to_owned(),
                });
            }
        };
        let blocked = Box::new(blocked::Blocked::open(inner, writable)?);
        Ok(Box::new(packed::Packed::open(blocked, writable)?))
    }
}
