//! `validate`: the store checked against itself. Every stored identity is re-derived from its
//! fields and every index is checked against the records it indexes. Drift from the disk is
//! `status`'s job, not this one's.
mod frames;

use crate::engine::{Engine, Table};
use crate::error::Result;
use crate::hash::{self, FrameId, Hash, NodeId};
use crate::keys::{decode_counts, decode_frame_seq, decode_racy, decode_root};
use crate::node::{NodeKind, NodeRecord, TreeEntry};
use frames::{
    check_basis, check_history, check_indexed, check_memos, check_path_heads, check_stray_heads,
    read_frames,
};

/// One inconsistency `validate` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The path of the node concerned, when known.
    pub path: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// A table's records as read, in key order, looked up by binary search: a million entries of
/// a large tree's nodes or paths take half what a hash map of them takes.
struct Sorted<K, V>(Vec<(K, V)>);

impl<K: Ord, V> Sorted<K, V> {
    /// `entries`, sorted where they are not (a key read lossily may be out of order), the last
    /// of equal keys kept, as a map's insert keeps it (two keys may read as one lossily).
    fn new(mut entries: Vec<(K, V)>) -> Self {
        if !entries.is_sorted_by(|a, b| a.0 <= b.0) {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
        }
        if entries.windows(2).any(|w| w[0].0 == w[1].0) {
            entries.reverse();
            entries.dedup_by(|later, kept| later.0 == kept.0);
            entries.reverse();
        }
        Sorted(entries)
    }

    fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: std::borrow::Borrow<Q>,
    {
        let at = self.0.binary_search_by(|(k, _)| k.borrow().cmp(key));
        at.ok().map(|i| &self.0[i].1)
    }

    fn contains_key(&self, key: &K) -> bool {
        self.get(key).is_some()
    }

    fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, v)| v)
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

struct Checker {
    problems: Vec<Problem>,
}

impl Checker {
    fn at(&mut self, path: Option<&str>, message: String) {
        self.problems.push(Problem {
            path: path.map(str::to_owned),
            message,
        });
    }

    /// A problem of `node`, named by its path where the node is known.
    fn at_node(&mut self, nodes: &Nodes, node: &NodeId, message: String) {
        let path = nodes.get(node).map(|r| r.path.clone());
        self.problems.push(Problem { path, message });
    }
}

type Nodes = Sorted<NodeId, NodeRecord>;

/// Visits every entry of a table, in key order, as the engine holds it: the largest tables
/// (nodes, tree, frames) are decoded as they are read, never held raw beside their records (at
/// a million files, 200 MB more).
fn each(engine: &dyn Engine, table: Table, mut visit: impl FnMut(&[u8], &[u8])) -> Result<()> {
    engine.scan(table, b"", &mut |k, v| {
        visit(k, v);
        true
    })
}

/// [`each`] of a table keyed by a 32-byte id (nodes, frames), with the id read; a key of
/// another length is a problem named by the table.
fn each_by_id(
    engine: &dyn Engine,
    table: Table,
    c: &mut Checker,
    mut visit: impl FnMut(&mut Checker, Hash, &[u8]),
) -> Result<()> {
    each(engine, table, |k, v| match Hash::from_slice(k) {
        Some(id) => visit(c, id, v),
        None => c.at(
            None,
            format!("{}: key {} is not 32 bytes", table.name(), hash::to_hex(k)),
        ),
    })
}

/// Every entry of a table, copied out.
fn all(engine: &dyn Engine, table: Table) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut out = Vec::new();
    engine.scan(table, b"", &mut |k, v| {
        out.push((k.to_vec(), v.to_vec()));
        true
    })?;
    Ok(out)
}

fn split_path_head_key(k: &[u8]) -> (String, String) {
    let (path, ty) = crate::keys::path_head_parts(k).unwrap_or((k, b""));
    (
        String::from_utf8_lossy(path).into_owned(),
        String::from_utf8_lossy(ty).into_owned(),
    )
}

/// Every check, table by table, in the order their problems are reported.
pub(crate) fn run(engine: &dyn Engine) -> Result<Vec<Problem>> {
    let mut c = Checker {
        problems: Vec::new(),
    };
    let mut nodes = read_nodes(engine, &mut c)?;
    for (id, rec) in nodes.iter() {
        check_node(&mut c, &nodes, id, rec);
    }
    let tree = read_tree(engine, &mut c, &nodes)?;
    check_root(engine, &mut c, &tree)?;
    check_tree_children(&mut c, &nodes, &tree);
    check_tree_parents(&mut c, &nodes, &tree);
    check_meta(engine, &mut c, &tree)?;
    // The frames' checks read each node's path alone.
    drop(tree);
    for (_, rec) in nodes.0.iter_mut() {
        rec.children = Vec::new();
    }

    let seq_max = read_frame_seq(engine, &mut c)?;
    let mut frames = read_frames(engine, &mut c, &nodes, seq_max)?;
    let with_history = check_history(engine, &mut c, &nodes, &mut frames)?;
    check_path_heads(engine, &mut c, &nodes, &frames)?;
    check_stray_heads(engine, &mut c, &with_history)?;
    check_memos(engine, &mut c, &frames)?;
    check_basis(engine, &mut c, &mut frames)?;
    check_indexed(&mut c, &nodes, &frames);
    check_agents(engine, &mut c)?;
    check_bodies(engine, &mut c)?;
    Ok(c.problems)
}

/// Decodes every node record.
fn read_nodes(engine: &dyn Engine, c: &mut Checker) -> Result<Sorted<NodeId, NodeRecord>> {
    let mut nodes = Vec::new();
    each_by_id(
        engine,
        Table::Nodes,
        c,
        |c, id, v| match NodeRecord::decode(id, v) {
            Ok(rec) => {
                nodes.push((id, rec));
            }
            Err(e) => c.at(None, e.to_string()),
        },
    )?;
    Ok(Sorted::new(nodes))
}

/// Checks one node: its id re-derived and, for a directory, its children present, named,
/// ordered and hashed into its content hash.
fn check_node(c: &mut Checker, nodes: &Sorted<NodeId, NodeRecord>, id: &NodeId, rec: &NodeRecord) {
    if rec.derive_id() != *id {
        c.at(
            Some(&rec.path),
            format!("node {id}: stored id does not match the id derived from its fields"),
        );
    }
    if rec.kind != NodeKind::Dir {
        return;
    }
    if rec
        .children
        .windows(2)
        .any(|w| w[0].name.as_bytes() >= w[1].name.as_bytes())
    {
        c.at(
            Some(&rec.path),
            format!("node {id}: children are not sorted by name"),
        );
    }
    let mut content = Vec::with_capacity(rec.children.len());
    for child in &rec.children {
        match nodes.get(&child.node_id) {
            None => c.at(
                Some(&rec.path),
                format!(
                    "node {id}: child {:?} ({}) is missing",
                    child.name, child.node_id
                ),
            ),
            Some(ch) => {
                if ch.path != rec.child_path(&child.name) || ch.kind != child.kind {
                    c.at(
                        Some(&rec.path),
                        format!(
                            "node {id}: child {:?} is recorded as {} {:?}",
                            child.name,
                            ch.kind.as_str(),
                            ch.path
                        ),
                    );
                }
                content.push((child.name.as_str(), ch.kind, ch.content_hash));
            }
        }
    }
    if content.len() == rec.children.len() {
        let derived = hash::dir_content_hash(content.iter().map(|(n, k, h)| (*n, *k, h)));
        if derived != rec.content_hash {
            c.at(
                Some(&rec.path),
                format!("node {id}: content hash does not match its children"),
            );
        }
    }
}

/// Decodes the current tree, checking that every entry's node exists at that path.
fn read_tree(
    engine: &dyn Engine,
    c: &mut Checker,
    nodes: &Sorted<NodeId, NodeRecord>,
) -> Result<Sorted<String, TreeEntry>> {
    let mut tree = Vec::new();
    each(engine, Table::Tree, |k, v| {
        let path = String::from_utf8_lossy(k).into_owned();
        match TreeEntry::decode(k, v) {
            Ok(e) => {
                match nodes.get(&e.node_id) {
                    None => c.at(Some(&path), format!("tree: node {} is missing", e.node_id)),
                    Some(rec) if rec.path != path || rec.kind != e.kind => c.at(
                        Some(&path),
                        format!(
                            "tree: node {} is recorded as {} {:?}",
                            e.node_id,
                            rec.kind.as_str(),
                            rec.path
                        ),
                    ),
                    Some(_) => {}
                }
                tree.push((path, e));
            }
            Err(e) => c.at(Some(&path), e.to_string()),
        }
    })?;
    // The engine's count of the table (the tree's blocks keep one of their own).
    let counted = engine.count(Table::Tree)?;
    if counted != tree.len() as u64 {
        c.at(
            None,
            format!("tree: {counted} entries counted, {} read", tree.len()),
        );
    }
    Ok(Sorted::new(tree))
}

/// Checks that the recorded root is the tree's root.
fn check_root(
    engine: &dyn Engine,
    c: &mut Checker,
    tree: &Sorted<String, TreeEntry>,
) -> Result<()> {
    let root = match engine.get(Table::Meta, b"root")? {
        None => Ok(None),
        Some(v) => decode_root(&v).map(Some),
    };
    match (root, tree.get("")) {
        (Err(e), _) => c.at(Some(""), e.to_string()),
        (Ok(Some(r)), Some(e)) if r == e.node_id => {}
        (Ok(None), None) => {}
        (Ok(r), e) => c.at(
            Some(""),
            format!(
                "meta: root {} does not match the tree's root {}",
                r.map_or("(none)".to_owned(), |h| h.to_hex()),
                e.map_or("(none)".to_owned(), |e| e.node_id.to_hex())
            ),
        ),
    }
    Ok(())
}

/// Checks that each directory's children in the tree are the ones its record names.
fn check_tree_children(
    c: &mut Checker,
    nodes: &Sorted<NodeId, NodeRecord>,
    tree: &Sorted<String, TreeEntry>,
) {
    for (path, e) in tree.iter() {
        if e.kind != NodeKind::Dir {
            continue;
        }
        let Some(rec) = nodes.get(&e.node_id) else {
            continue;
        };
        for child in &rec.children {
            let cp = rec.child_path(&child.name);
            if tree.get(&cp).map(|t| t.node_id) != Some(child.node_id) {
                c.at(
                    Some(path),
                    format!("tree: child {cp:?} does not match the directory's record"),
                );
            }
        }
    }
}

/// Checks that no entry is outside the tree: each one's parent lists it (a removal must take
/// it away).
fn check_tree_parents(
    c: &mut Checker,
    nodes: &Sorted<NodeId, NodeRecord>,
    tree: &Sorted<String, TreeEntry>,
) {
    for (path, e) in tree.iter() {
        if path.is_empty() {
            continue;
        }
        let (parent, name) = crate::node::split(path);
        let listed = tree
            .get(parent)
            .and_then(|p| nodes.get(&p.node_id))
            .is_some_and(|rec| {
                rec.children
                    .iter()
                    .any(|c| c.name == name && c.node_id == e.node_id)
            });
        if !listed {
            c.at(
                Some(path),
                "tree: the entry is not a child of its directory".to_owned(),
            );
        }
    }
}

/// Checks the scan's meta records: the stamp and racy paths read back, and the counts the
/// last scan recorded are the tree's.
fn check_meta(
    engine: &dyn Engine,
    c: &mut Checker,
    tree: &Sorted<String, TreeEntry>,
) -> Result<()> {
    if let Some(v) = engine.get(Table::Meta, b"stamp")?
        && decode_racy(&v).is_none()
    {
        c.at(
            None,
            "meta: the scan stamp record is malformed (the next scan rewrites it)".to_owned(),
        );
    }
    if let Some(v) = engine.get(Table::Meta, b"counts")? {
        let dirs = tree.values().filter(|e| e.kind == NodeKind::Dir).count() as u64;
        let leaves = tree.len() as u64 - dirs;
        match decode_counts(&v) {
            Ok(recorded) if recorded == (leaves, dirs) => {}
            Ok((l, d)) => c.at(
                None,
                format!(
                    "meta: counts ({l} leaves, {d} directories) do not match the tree's {leaves} leaves and {dirs} directories"
                ),
            ),
            Err(e) => c.at(None, e.to_string()),
        }
    }
    Ok(())
}

/// The last frame sequence number handed out; `u64::MAX` when its record is damaged.
fn read_frame_seq(engine: &dyn Engine, c: &mut Checker) -> Result<u64> {
    Ok(match engine.get(Table::Meta, b"frame_seq")? {
        None => 0,
        Some(v) => match decode_frame_seq(&v) {
            Ok(seq) => seq,
            Err(e) => {
                // Every frame would then be reported out of range; the damaged counter is the
                // one problem.
                c.at(None, e.to_string());
                u64::MAX
            }
        },
    })
}

/// Checks that every agent record decodes.
fn check_agents(engine: &dyn Engine, c: &mut Checker) -> Result<()> {
    for (k, v) in all(engine, Table::Agents)? {
        if std::str::from_utf8(&k)
            .ok()
            .and_then(|id| crate::agent::decode(id, &v))
            .is_none()
        {
            c.at(
                None,
                format!("agents: entry {} is malformed", hash::to_hex(&k)),
            );
        }
    }
    Ok(())
}

/// Every body is the content its key hashes, and every derived record that names a body finds
/// it (the frames' bodies are checked with the frames).
fn check_bodies(engine: &dyn Engine, c: &mut Checker) -> Result<()> {
    each(engine, Table::Bodies, |k, v| {
        if Hash::from_slice(k) != Some(hash::content_hash(v)) {
            c.at(
                None,
                format!(
                    "bodies: body {} is not the content its key hashes",
                    hash::to_hex(k)
                ),
            );
        }
    })?;
    each(engine, Table::Derived, |k, v| {
        let Some(body) = crate::keys::derived_body(v) else {
            return;
        };
        let problem = match engine.contains(Table::Bodies, &body.0) {
            Ok(true) => return,
            Ok(false) => "which is missing".to_owned(),
            Err(e) => e.to_string(),
        };
        c.at(
            None,
            format!(
                "derived: record {} names body {body}, {problem}",
                crate::error::key_text(k)
            ),
        );
    })?;
    Ok(())
}

/// A frame's rank for heads: `created_at`, then FrameID.
type Rank = (u64, FrameId);

/// The last-appended frame of `entries` (sorted here by sequence number).
fn latest_id(entries: &mut [(u64, Rank)]) -> FrameId {
    entries.sort_unstable();
    entries.last().map_or(Hash([0; 32]), |e| e.1.1)
}

/// Whether `head` may be the head of `entries` (sorted by sequence number): it is among them
/// and no frame appended after it ranks above it. The last frame always may; an earlier one
/// only when every later one was an imported frame that it outranked.
fn may_be_head(entries: &mut [(u64, Rank)], head: &FrameId) -> bool {
    entries.sort_unstable();
    let Some(i) = entries.iter().position(|e| e.1.1 == *head) else {
        return false;
    };
    let rank = entries[i].1;
    entries[i + 1..].iter().all(|e| e.1 < rank)
}

#[cfg(test)]
mod tests {
    use super::Sorted;

    #[test]
    fn sorted_records_find_by_key_and_keep_the_last_of_equal_keys_as_a_map_would() {
        // Two raw keys that read as one lossily come in raw order; the later one wins.
        let read = vec![
            ("b".to_owned(), 2),
            ("a".to_owned(), 1),
            ("c\u{fffd}".to_owned(), 3),
            ("c\u{fffd}".to_owned(), 4),
        ];
        let sorted = Sorted::new(read);
        assert_eq!(sorted.len(), 3);
        assert_eq!(sorted.get("a"), Some(&1));
        assert_eq!(sorted.get("c\u{fffd}"), Some(&4));
        assert_eq!(sorted.get("d"), None);
        let keys: Vec<&String> = sorted.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["a", "b", "c\u{fffd}"]);
    }
}
