//! `validate`'s checks of frames and of the indexes they are in (history, heads, path heads,
//! basis, memos). A frame is checked as it is read and then held slim ([`Slim`]); each index
//! is read as a stream, in key order, and checked against the slim frames.
use std::collections::HashMap;
use std::sync::Arc;

use super::{Checker, Nodes, Rank, each, each_by_id, latest_id, may_be_head, split_path_head_key};
use crate::engine::{Engine, Table};
use crate::error::Result;
use crate::frame::Frame;
use crate::hash::{self, FrameId, Hash};
use crate::keys::{head_key, history_key, history_value_of, path_head_key};

/// A frame as the checks after its own need it. Its content and metadata are checked as it is
/// read and not held: at a million files, every frame's content at once was gigabytes.
struct Slim {
    id: FrameId,
    node: Hash,
    basis: Hash,
    seq: u64,
    created_at_ms: u64,
    frame_type: Arc<str>,
    agent: Arc<str>,
    /// Whether its history entry, and its basis index entry, were found.
    in_history: bool,
    in_basis: bool,
}

impl Slim {
    fn rank(&self) -> Rank {
        (self.created_at_ms, self.id)
    }
}

/// The frames, by id (the frames table's order).
pub(super) struct Frames(Vec<Slim>);

impl Frames {
    fn find(&self, id: &FrameId) -> Option<usize> {
        self.0.binary_search_by(|f| f.id.cmp(id)).ok()
    }
}

/// A key's stand-in where keys of a million entries are grouped or looked up: its hash.
fn key_hash(key: &[u8]) -> Hash {
    let mut e = crate::hash::Encoder::new("validate key");
    e.bytes(key);
    e.finish()
}

/// One (node, type)'s history as read: its head's key and its entries.
type Group = (Vec<u8>, Vec<(u64, Rank)>);

/// Decodes every frame and checks its own fields ([`check_frame`]) as it is read, keeping
/// what the index checks need.
pub(super) fn read_frames(
    engine: &dyn Engine,
    c: &mut Checker,
    nodes: &Nodes,
    seq_max: u64,
) -> Result<Frames> {
    let mut frames = Vec::new();
    // Types and agents are few: each name once.
    let mut names: HashMap<String, Arc<str>> = HashMap::new();
    let mut name = |s: &str| -> Arc<str> {
        if let Some(n) = names.get(s) {
            return n.clone();
        }
        let n: Arc<str> = Arc::from(s);
        names.insert(s.to_owned(), n.clone());
        n
    };
    each_by_id(engine, Table::Frames, c, |c, id, v| {
        match Frame::decode(id, v) {
            Ok((mut f, body)) => {
                // Its id is re-derived only with its content: a body missing or unreadable is
                // the problem then, and its other fields are checked all the same.
                let content = body.map(|b| (b, engine.get(Table::Bodies, &b.0)));
                let whole = match content {
                    None => true,
                    Some((_, Ok(Some(content)))) => {
                        f.content = content;
                        true
                    }
                    Some((b, Ok(None))) => {
                        let message = format!("frame {id}: its body {b} is missing");
                        c.at_node(nodes, &f.node_id, message);
                        false
                    }
                    Some((b, Err(e))) => {
                        c.at_node(nodes, &f.node_id, format!("frame {id}: body {b}: {e}"));
                        false
                    }
                };
                check_frame(c, nodes, &f, seq_max, whole);
                frames.push(Slim {
                    id,
                    node: f.node_id,
                    basis: f.basis,
                    seq: f.seq,
                    created_at_ms: f.metadata.created_at_ms,
                    frame_type: name(&f.frame_type),
                    agent: name(&f.agent_id),
                    in_history: false,
                    // A frame whose basis is its node needs no basis entry (its history is
                    // one); a store written before has one all the same.
                    in_basis: f.basis == f.node_id,
                });
            }
            Err(e) => c.at(None, e.to_string()),
        }
    })?;
    if !frames.is_sorted_by(|a, b| a.id < b.id) {
        frames.sort_by_key(|f| f.id);
    }
    Ok(Frames(frames))
}

/// Checks one frame's own fields: its id re-derived (where its content was read: `whole`), its
/// node known, its basis no other node, its sequence in range. Its index entries are checked
/// table by table.
fn check_frame(c: &mut Checker, nodes: &Nodes, f: &Frame, seq_max: u64, whole: bool) {
    let id = f.frame_id;
    if whole && f.derive_id() != id {
        c.at_node(
            nodes,
            &f.node_id,
            format!("frame {id}: stored id does not match the id derived from its fields"),
        );
    }
    if !nodes.contains_key(&f.node_id) {
        c.at(
            None,
            format!("frame {id}: its node {} is missing", f.node_id),
        );
    }
    if f.basis != f.node_id
        && let Some(other) = nodes.get(&f.basis)
    {
        c.at_node(
            nodes,
            &f.node_id,
            format!(
                "frame {id}: its basis is node {} ({:?}), another node: a frame made for \
                 one node, moved onto another",
                f.basis, other.path
            ),
        );
    }
    if f.seq == 0 || f.seq > seq_max {
        c.at_node(
            nodes,
            &f.node_id,
            format!("frame {id}: sequence {} is outside 1..={seq_max}", f.seq),
        );
    }
}

/// Checks that history entries point at frames of that node and type, marks each frame whose
/// own entry is there, and checks each (node, type)'s head against its entries. The table is
/// in key order, so one (node, type)'s entries come together (a key is the head's key, 0,
/// then the sequence). Returns the key hashes of the heads that have entries, sorted.
pub(super) fn check_history(
    engine: &dyn Engine,
    c: &mut Checker,
    nodes: &Nodes,
    frames: &mut Frames,
) -> Result<Vec<Hash>> {
    let mut with_history = Vec::new();
    let mut group: Option<Group> = None;
    let mut failed = Ok(());
    let mut heads = |c: &mut Checker, group: Option<Group>| {
        if let Some((key, mut entries)) = group {
            with_history.push(key_hash(&key));
            if let Err(e) = check_head(engine, c, nodes, &key, &mut entries) {
                failed = Err(e);
            }
        }
    };
    each(engine, Table::NodeFrames, |k, v| {
        let at = v
            .get(..32)
            .and_then(Hash::from_slice)
            .and_then(|id| frames.find(&id));
        let Some(at) = at else {
            c.at(
                None,
                format!(
                    "history: entry {} points at a missing frame",
                    hash::to_hex(k)
                ),
            );
            return;
        };
        let f = &mut frames.0[at];
        if *k != history_key(&f.node, &f.frame_type, f.seq) {
            c.at_node(
                nodes,
                &f.node,
                format!("history: entry for frame {} has the wrong key", f.id),
            );
            return;
        }
        f.in_history |= *v == history_value_of(&f.id, f.created_at_ms, &f.agent)[..];
        let key = head_key(&f.node, &f.frame_type);
        let entry = (f.seq, f.rank());
        match &mut group {
            Some((k, entries)) if *k == key => entries.push(entry),
            _ => heads(c, group.replace((key, vec![entry]))),
        }
    })?;
    heads(c, group.take());
    failed?;
    with_history.sort_unstable();
    Ok(with_history)
}

/// Checks a (node, type)'s head: the latest entry of its history where the heads table names
/// none, else the one it names, which an imported frame appended after it did not outrank
/// (see `store::exchange`).
fn check_head(
    engine: &dyn Engine,
    c: &mut Checker,
    nodes: &Nodes,
    key: &[u8],
    entries: &mut [(u64, Rank)],
) -> Result<()> {
    let node = Hash::from_slice(&key[..32]).unwrap_or(Hash([0; 32]));
    let frame_type = String::from_utf8_lossy(&key[32..]);
    let Some(value) = engine.get(Table::Heads, key)? else {
        return Ok(());
    };
    let want = latest_id(entries);
    match Hash::from_slice(&value) {
        Some(h) if may_be_head(entries, &h) => {}
        Some(h) => c.at_node(
            nodes,
            &node,
            format!("head of type {frame_type:?} is {h}, but the latest frame is {want}"),
        ),
        None => c.at_node(
            nodes,
            &node,
            format!("head of type {frame_type:?} names no frame (latest frame {want})"),
        ),
    }
    Ok(())
}

/// Checks path heads: the latest frame of each type over every node version at a path, by the
/// same rule as heads, recorded or the head of the node at the path now, and none recorded at
/// a path without frames. Frames are grouped by the hash of
/// their path head's key, not by the key.
pub(super) fn check_path_heads(
    engine: &dyn Engine,
    c: &mut Checker,
    nodes: &Nodes,
    frames: &Frames,
) -> Result<()> {
    // (key hash, sequence, the frame's position), sorted: a path's frames of a type together.
    let mut at_path: Vec<(Hash, u64, u32)> = Vec::with_capacity(frames.0.len());
    for (i, f) in frames.0.iter().enumerate() {
        if let Some(rec) = nodes.get(&f.node) {
            let key = path_head_key(&rec.path, &f.frame_type);
            let Ok(i) = u32::try_from(i) else { break };
            at_path.push((key_hash(&key), f.seq, i));
        }
    }
    at_path.sort_unstable();
    let entries = |group: &[(Hash, u64, u32)]| -> Vec<(u64, Rank)> {
        group
            .iter()
            .map(|&(_, seq, i)| (seq, frames.0[i as usize].rank()))
            .collect()
    };
    let mut headed = vec![false; at_path.len()];
    each(engine, Table::PathHeads, |k, v| {
        let (path, frame_type) = split_path_head_key(k);
        let h = key_hash(k);
        let start = at_path.partition_point(|e| e.0 < h);
        let end = at_path.partition_point(|e| e.0 <= h);
        if start == end {
            c.at(
                Some(&path),
                format!("path head of type {frame_type:?} has no frame at that path"),
            );
            return;
        }
        headed[start] = true;
        let mut group = entries(&at_path[start..end]);
        if !Hash::from_slice(v).is_some_and(|h| may_be_head(&mut group, &h)) {
            let want = latest_id(&mut group);
            c.at(
                Some(&path),
                format!("path head of type {frame_type:?} is not the latest frame {want}"),
            );
        }
    })?;
    // The paths with frames and no path head recorded: the head of the node the tree holds at
    // the path now must be the latest frame there (`store/path_heads.rs`).
    let mut end = 0;
    for group in at_path.chunk_by(|a, b| a.0 == b.0) {
        end += group.len();
        if headed[end - group.len()] {
            continue;
        }
        let f = &frames.0[group[0].2 as usize];
        let path = nodes.get(&f.node).map(|r| r.path.as_str());
        let at = match path {
            Some(p) => current_node(engine, p)?,
            None => At::None,
        };
        let head = match at {
            // Its entry does not read, which the tree's check names.
            At::Unread => continue,
            At::None => None,
            At::Node(node) => node_head(engine, frames, group, &node, &f.frame_type)?,
        };
        let mut ranked = entries(group);
        if !head.is_some_and(|h| may_be_head(&mut ranked, &h)) {
            let want = latest_id(&mut ranked);
            c.at(
                path,
                format!(
                    "path head of type {:?} is not the latest frame {want}",
                    &*f.frame_type
                ),
            );
        }
    }
    Ok(())
}

/// What the tree holds at a path.
enum At {
    None,
    Node(Hash),
    /// An entry that does not read.
    Unread,
}

/// The node the tree holds at `path` now.
fn current_node(engine: &dyn Engine, path: &str) -> Result<At> {
    Ok(match engine.get(Table::Tree, path.as_bytes())? {
        None => At::None,
        Some(v) => match crate::node::TreeEntry::decode(path.as_bytes(), &v) {
            Ok(e) => At::Node(e.node_id),
            Err(_) => At::Unread,
        },
    })
}

/// The head of type `frame_type` of `node` among a path's frames (`group`), as the store
/// finds it: the one the heads table names, else the node's latest.
fn node_head(
    engine: &dyn Engine,
    frames: &Frames,
    group: &[(Hash, u64, u32)],
    node: &Hash,
    frame_type: &str,
) -> Result<Option<FrameId>> {
    if let Some(v) = engine.get(Table::Heads, &head_key(node, frame_type))? {
        return Ok(Hash::from_slice(&v));
    }
    Ok(group
        .iter()
        .map(|&(_, seq, i)| (seq, &frames.0[i as usize]))
        .filter(|(_, g)| g.node == *node)
        .max_by_key(|(seq, _)| *seq)
        .map(|(_, g)| g.id))
}

/// Checks that every head has frames in history (`with_history`: their keys' hashes, sorted).
pub(super) fn check_stray_heads(
    engine: &dyn Engine,
    c: &mut Checker,
    with_history: &[Hash],
) -> Result<()> {
    each(engine, Table::Heads, |k, _| {
        if with_history.binary_search(&key_hash(k)).is_err() {
            c.at(
                None,
                format!("heads: entry {} has no frames in history", hash::to_hex(k)),
            );
        }
    })
}

/// Checks that every memo points at a stored frame.
pub(super) fn check_memos(engine: &dyn Engine, c: &mut Checker, frames: &Frames) -> Result<()> {
    each(engine, Table::Memo, |k, v| {
        if Hash::from_slice(v).is_none_or(|id| frames.find(&id).is_none()) {
            c.at(
                None,
                format!(
                    "memo {}: points at {}, which is not a stored frame",
                    hash::to_hex(k),
                    hash::to_hex(v)
                ),
            );
        }
    })
}

/// Checks that every basis index entry names a frame on that basis, and marks each frame whose
/// own entry is there.
pub(super) fn check_basis(engine: &dyn Engine, c: &mut Checker, frames: &mut Frames) -> Result<()> {
    each(engine, Table::Basis, |k, _| {
        let at = k
            .get(32..)
            .and_then(Hash::from_slice)
            .and_then(|id| frames.find(&id));
        match at {
            Some(i) if frames.0[i].basis.0[..] == k[..32] => frames.0[i].in_basis = true,
            _ => c.at(
                None,
                format!("basis: entry {} does not match a frame", hash::to_hex(k)),
            ),
        }
    })
}

/// Names each frame missing from the node's history or from the basis index, in the order
/// the frames were put.
pub(super) fn check_indexed(c: &mut Checker, nodes: &Nodes, frames: &Frames) {
    let mut order: Vec<&Slim> = frames
        .0
        .iter()
        .filter(|f| !(f.in_history && f.in_basis))
        .collect();
    order.sort_by_key(|f| f.seq);
    for f in order {
        if !f.in_history {
            c.at_node(
                nodes,
                &f.node,
                format!("frame {}: missing from the node's history", f.id),
            );
        }
        if !f.in_basis {
            c.at_node(
                nodes,
                &f.node,
                format!("frame {}: missing from the basis index", f.id),
            );
        }
    }
}
