//! A scan's writes: the tree table's and the nodes table's in key order, a large scan's node
//! records in chunks ahead of its tree, and a first tree's changed paths (see `tree.rs`).
use super::build::Built;
use super::*;

/// One table's writes, in key order, as the batch holds them.
pub(super) type Writes = Vec<(Table, Vec<u8>, Option<Vec<u8>>)>;

/// At least this many new node records (a cold scan's, or many paths added) are committed on
/// their own before the tree that names them, as git writes its objects before it moves a
/// ref: the files' a chunk at a time ([`RECORDS_CHUNK`]), each file's record made only for its
/// chunk, then the folders' (so a stored folder's children are always stored); a million-file
/// scan never holds every record, nor them beside the tree's writes. A crash between the
/// commits leaves records that no tree names, which `merkle gc` collects. Fewer go in the
/// scan's one commit.
pub(super) const RECORDS_APART: usize = 65_536;

/// Room a batch's list of writes keeps beyond its tree or node writes, for the scan's few
/// bookkeeping writes (the stamp, the tree's middle key, the store's mark): a list collected
/// to its exact length would double on the first of them (at a million files, 60 MB more).
pub(super) const BOOKKEEPING_ROOM: usize = 16;

/// Every path of a walk, the root's (`""`) included, moved out of it rather than copied: a
/// first tree's changed paths (at a million files, 90 MB not held twice).
pub(super) fn walked_paths(walked: &mut scan::Walked) -> Vec<String> {
    let mut paths = Vec::with_capacity(walked.leaves.len() + walked.dirs.len() + 1);
    paths.extend(
        walked
            .leaves
            .iter_mut()
            .map(|l| std::mem::take(&mut l.path)),
    );
    paths.extend(walked.dirs.iter_mut().map(|d| std::mem::take(&mut d.path)));
    paths.push(String::new());
    paths
}

/// How many node records one of the commits ahead of a large scan's tree holds: their
/// records are made for it and freed after it.
pub(super) const RECORDS_CHUNK: usize = 65_536;

/// The node records' writes in key order.
pub(super) fn node_writes(records: Vec<StoredNode>) -> Writes {
    let mut ops: Writes = Vec::with_capacity(records.len() + BOOKKEEPING_ROOM);
    ops.par_extend(
        records
            .into_par_iter()
            .map(|rec| (Table::Nodes, rec.id.0.to_vec(), Some(rec.bytes))),
    );
    ops.par_sort_unstable_by(|a, b| a.1.cmp(&b.1));
    ops
}

/// The writes of the tree table and of the nodes table in key order (as the engine takes them
/// fastest), made side by side (after a cold scan, every path and every node), and the paths
/// whose node changed, but for a first tree's (every path: see [`walked_paths`]).
pub(super) fn sorted_writes(
    built: &Built<'_>,
    records: Vec<StoredNode>,
    prev: &PathMap<TreeEntry>,
    first_tree: bool,
) -> (Writes, Writes, Vec<String>) {
    let records_len = records.len();
    let ((tree_ops, node_ops), changed) = rayon::join(
        || {
            rayon::join(
                || {
                    let tree_op = |(path, entry): &(&str, TreeEntry)| {
                        (Table::Tree, path.as_bytes().to_vec(), Some(entry.encode()))
                    };
                    // Every entry of a first tree is written: mapped in place, with no
                    // filter's intermediate lists.
                    let mut ops: Writes = if first_tree {
                        let room = built.entries.len() + records_len + BOOKKEEPING_ROOM;
                        let mut ops = Vec::with_capacity(room);
                        ops.par_extend(built.entries.par_iter().map(tree_op));
                        ops
                    } else {
                        built
                            .entries
                            .par_iter()
                            .filter(|(path, entry)| prev.get(*path) != Some(entry))
                            .map(tree_op)
                            .collect()
                    };
                    ops.par_sort_unstable_by(|a, b| a.1.cmp(&b.1));
                    ops
                },
                || node_writes(records),
            )
        },
        || {
            if first_tree {
                return Vec::new();
            }
            built
                .entries
                .par_iter()
                .filter(|(path, entry)| prev.get(*path).map(|o| o.node_id) != Some(entry.node_id))
                .map(|(path, _)| (*path).to_owned())
                .collect::<Vec<String>>()
        },
    );
    (tree_ops, node_ops, changed)
}

/// A batch of the tree and node writes (the tree's taken as the batch's own list), with the
/// tree's middle key when the whole tree is written, and the removal of every path of `prev`
/// that a `complete` build lacks (each added to `changed`).
pub(super) fn tree_batch(
    built: &Built<'_>,
    prev: &PathMap<TreeEntry>,
    tree_ops: Writes,
    node_ops: Writes,
    changed: &mut Vec<String>,
) -> Batch {
    let split = (built.complete
        && tree_ops.len() >= TREE_SPLIT_MIN
        && 2 * tree_ops.len() >= built.entries.len())
    .then(|| tree_ops[tree_ops.len() / 2].1.clone());
    let mut batch = Batch { ops: tree_ops };
    batch.ops.extend(node_ops);
    if let Some(middle) = split {
        batch.put(Table::Meta, META_TREE_SPLIT.to_vec(), middle);
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
    batch
}
