//! How the store lays out its records: the keys of the frame indexes (heads, path heads,
//! history, basis) and the singleton values of the meta table with their decoders. The store's
//! rooms write them and `validate` checks them; neither needs the other for it.
use crate::codec::{self, Reader};
use crate::error::Result;
use crate::frame::Frame;
use crate::hash::{FrameId, Hash, NodeId};
use crate::node::PathSet;

pub(crate) const META_ROOT: &[u8] = b"root";
pub(crate) const META_STAMP: &[u8] = b"stamp";
pub(crate) const META_FRAME_SEQ: &[u8] = b"frame_seq";
/// The last scan's leaf and directory counts (two u64, little-endian), so that a targeted scan
/// can report the whole tree's without counting it.
pub(crate) const META_COUNTS: &[u8] = b"counts";
/// The fingerprint (blake3) of the ignore rules from outside the tree that the directory stats
/// of the tree were recorded under: a walk reuses no listing under other rules.
pub(crate) const META_IGNORES: &[u8] = b"ignores";
/// A path near the middle of the tree, at which a load of the whole tree splits its reading in
/// two; any path will do, the middle does it fastest. Written when a scan writes most paths.
pub(crate) const META_TREE_SPLIT: &[u8] = b"tree_split";
/// What a store of an earlier version kept beside its tree table to read the whole tree fast,
/// before the table was kept in blocks (`engine/blocked.rs`): the count of commits that wrote
/// the table, the state its copy (in [`Table::Kept`]) was of, and where a still earlier one
/// kept the copy and its state. `merkle gc` removes them.
pub(crate) const META_TREE_KEPT_BEFORE: [&[u8]; 4] = [
    b"tree_gen",
    b"tree_kept_of",
    b"tree_snapshot",
    b"tree_snapshot_of",
];
/// Trees with fewer entries are loaded in one piece.
pub(crate) const TREE_SPLIT_MIN: usize = 4096;

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

/// A [`path_head_key`]'s path and frame type, as bytes; `None` without the 0 byte between.
pub(crate) fn path_head_parts(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = key.iter().position(|&b| b == 0)?;
    Some((&key[..at], &key[at + 1..]))
}

/// A history entry's value: the frame id, then what views order and filter by.
pub(crate) fn history_value(f: &Frame) -> Vec<u8> {
    history_value_of(&f.frame_id, f.metadata.created_at_ms, &f.agent_id)
}

/// [`history_value`] of a frame's id, `created_at` and agent.
pub(crate) fn history_value_of(id: &FrameId, created_at_ms: u64, agent: &str) -> Vec<u8> {
    let mut v = id.0.to_vec();
    v.extend_from_slice(&created_at_ms.to_le_bytes());
    v.extend_from_slice(agent.as_bytes());
    v
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

/// A derived record's first eight bytes where its bytes are held apart: one written in place
/// starts with their length, which never reaches this.
const DERIVED_APART: u64 = u64::MAX;

/// A derived record naming the body that holds its bytes.
pub(crate) fn derived_apart(body: &Hash) -> Vec<u8> {
    let mut w = crate::codec::Writer::with_capacity(40);
    w.u64(DERIVED_APART).hash(body);
    w.0
}

/// The body a derived record names, if it names one.
pub(crate) fn derived_body(record: &[u8]) -> Option<Hash> {
    let mut r = Reader::new(record);
    if r.u64()? != DERIVED_APART {
        return None;
    }
    let body = r.hash()?;
    r.is_empty().then_some(body)
}
