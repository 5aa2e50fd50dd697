//! The one tree builder: a walk and the last scan's entries into a tree of entries and node
//! records, the unchanged directories kept. (A tree known only by its leaves and their content
//! hashes, a git revision's for `report`, is built by [`crate::diff::tree_of_leaves`].)
use super::*;

/// Whether `walked` met exactly the paths of `prev` (the last scan's tree), each leaf where
/// `same_leaf` holds for it. With a leaf the same where its kind and content are, the tree
/// [`build_tree`] would build is `prev` (a leaf's node is its kind, path and content; a
/// folder's, its children's).
pub(super) fn same_paths(
    walked: &scan::Walked,
    prev: &PathMap<TreeEntry>,
    same_leaf: impl Fn(&scan::Leaf) -> bool,
) -> bool {
    walked.leaves.len() + walked.dirs.len() + 1 == prev.len()
        && walked.leaves.iter().all(same_leaf)
        && walked
            .dirs
            .iter()
            .map(|d| d.path.as_str())
            .chain(std::iter::once(""))
            .all(|d| prev.get(d).is_some_and(|e| e.kind == NodeKind::Dir))
}

/// The tree a walk describes: an entry per path (or, not `complete`, only the entries that
/// differ from the last scan's), and records for the nodes that changed. Paths are the walk's
/// own, borrowed.
pub(super) struct Built<'w> {
    pub(super) root: NodeId,
    pub(super) entries: Vec<(&'w str, TreeEntry)>,
    pub(super) records: Vec<StoredNode>,
    /// The leaves (by index in the walk, and in `entries`) whose node is new, their records
    /// not yet made: a whole-tree build leaves them to the writer ([`leaf_record`]), which
    /// makes them a batch at a time rather than holding a million at once.
    pub(super) fresh_leaves: Vec<usize>,
    pub(super) complete: bool,
}

/// A child of a directory being built: a leaf or a directory, by its index in the walk.
#[derive(Clone, Copy)]
pub(super) enum Kid {
    Leaf(usize),
    Dir(usize),
}

/// Computes leaf and directory NodeIDs bottom-up. A directory is recomputed only if it is new,
/// its number of children changed, or one of its children's NodeIDs changed; otherwise its
/// previous entry is reused, so a one-file edit recomputes just that file's ancestors.
///
/// Leaves are done on the pool, then directories a depth at a time, each depth on the pool;
/// every path is the walk's, found by index rather than looked up by name.
pub(super) fn build_tree<'w>(walked: &'w scan::Walked, prev: &PathMap<TreeEntry>) -> Built<'w> {
    // The leaves' entries, in walk order, become the first of the tree's entries (no copy of
    // each is held beside them: at a million files, a list of 180 MB), the directories' are
    // added after them.
    let (mut entries, fresh): (Vec<(&str, TreeEntry)>, Vec<bool>) = walked
        .leaves
        .par_iter()
        .map(|leaf| {
            let (entry, fresh) = leaf_node(leaf, prev.get(&leaf.path));
            ((leaf.path.as_str(), entry), fresh)
        })
        .unzip();
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
    let mut records: Vec<StoredNode> = Vec::new();
    for level in depths.values().rev() {
        let done: Vec<(usize, TreeEntry, Option<StoredNode>)> = level
            .par_iter()
            .map(|&d| {
                let dir = dir_paths[d];
                let mut named: Vec<(&str, TreeEntry)> = kids[d]
                    .iter()
                    .map(|kid| match *kid {
                        Kid::Leaf(i) => (node::split(entries[i].0).1, entries[i].1),
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
        fresh_leaves: (0..fresh.len()).filter(|&i| fresh[i]).collect(),
        complete: true,
    }
}

/// A leaf's entry: its last node when its kind and content are unchanged, else a new node,
/// with its record.
pub(super) fn leaf_entry(
    leaf: &scan::Leaf,
    prev: Option<&TreeEntry>,
) -> (TreeEntry, Option<StoredNode>) {
    let (entry, fresh) = leaf_node(leaf, prev);
    (entry, fresh.then(|| leaf_record(leaf, entry.node_id)))
}

/// A leaf's entry, and whether its node is new (its last one unless its kind or content
/// changed).
fn leaf_node(leaf: &scan::Leaf, prev: Option<&TreeEntry>) -> (TreeEntry, bool) {
    let (node_id, fresh) = match prev {
        Some(o) if o.kind == leaf.kind && o.content_hash == leaf.content_hash => (o.node_id, false),
        _ => (
            hash::leaf_node_id(leaf.kind, &leaf.path, &leaf.content_hash),
            true,
        ),
    };
    let entry = TreeEntry {
        kind: leaf.kind,
        node_id,
        content_hash: leaf.content_hash,
        stat: leaf.stat,
    };
    (entry, fresh)
}

/// The node record of a leaf whose node is `id`.
pub(super) fn leaf_record(leaf: &scan::Leaf, id: NodeId) -> StoredNode {
    let bytes = node::encode_record(
        leaf.kind,
        &leaf.path,
        &leaf.content_hash,
        leaf.stat.size,
        std::iter::empty(),
    );
    StoredNode {
        id,
        dir: false,
        bytes,
    }
}

/// A directory's entry and node record from its stat (see [`scan::WalkedDir::stat`]) and its
/// children's (name, entry), which it sorts.
pub(super) fn dir_entry<S: AsRef<str>>(
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

/// The entries of a changed tree that differ from the last, by path.
type ChangedEntries<'w> = std::collections::HashMap<&'w str, TreeEntry, rustc_hash::FxBuildHasher>;

impl Store {
    /// The new tree's changed entries when the walk met exactly the last scan's paths (nothing
    /// added or removed, no leaf turned folder or back): only the leaves hashed again and the
    /// folders above one whose node changed need new entries, and a folder's children are its
    /// node record's, so the tree is not rebuilt path by path. `None` when the paths differ, or
    /// a record does not match its entry; [`build_tree`] then builds the whole tree.
    pub(super) fn build_changes<'w>(
        &self,
        walked: &'w scan::Walked,
        prev: &PathMap<TreeEntry>,
    ) -> Result<Option<Built<'w>>> {
        let same = same_paths(walked, prev, |l| {
            l.reused || prev.get(&l.path).is_some_and(|e| e.kind.is_leaf())
        });
        if !same {
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
        let (mut entries, mut records, dirty) = changed_leaves(walked, prev);
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
            fresh_leaves: Vec::new(),
            complete: false,
        }))
    }
}

/// The entries and records of the leaves hashed again whose entry changed, and the folders
/// above one whose node changed, deepest first (every child before its parent, the root last).
fn changed_leaves<'w>(
    walked: &'w scan::Walked,
    prev: &PathMap<TreeEntry>,
) -> (ChangedEntries<'w>, Vec<StoredNode>, Vec<&'w str>) {
    let mut entries: ChangedEntries<'w> = Default::default();
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
    (entries, records, dirty)
}
