//! Trees as path maps, and what changed between two of them: the core of `merkle report`.
//!
//! A tree here is every node below a root by workspace path. Two trees are compared path by
//! path: a path in only one is added or removed, a path in both with different NodeIDs changed
//! (for a directory: something below it changed, or its set of children did). Because NodeIDs
//! are content addresses, a tree can come from the store (any root a scan ever recorded: node
//! records are never deleted) or be computed elsewhere (from a git revision) and still compare.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::hash::{Hash, NodeId, dir_node_id, leaf_node_id};
use crate::node::NodeKind;
use crate::store::{Store, TreeNode};

/// A tree: every node by path, the root (`""`) included.
pub type PathTree = BTreeMap<String, TreeNode>;

/// What changed from one tree to another, each list in path order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeDiff {
    pub added: Vec<TreeNode>,
    pub removed: Vec<TreeNode>,
    /// (the old node, the new node) at the same path.
    pub changed: Vec<(TreeNode, TreeNode)>,
}

/// Compares `old` with `new`.
pub fn diff_trees(old: &PathTree, new: &PathTree) -> TreeDiff {
    let mut diff = TreeDiff::default();
    for (path, n) in new {
        match old.get(path) {
            None => diff.added.push(n.clone()),
            Some(o) if o.node_id != n.node_id || o.kind != n.kind => {
                diff.changed.push((o.clone(), n.clone()));
            }
            Some(_) => {}
        }
    }
    diff.removed = old
        .iter()
        .filter(|(path, _)| !new.contains_key(*path))
        .map(|(_, o)| o.clone())
        .collect();
    diff
}

impl Store {
    /// The paths of the tree at `new` whose node is not the one at the same path under `old`:
    /// new and changed nodes, every directory above a change included (its NodeID changes with
    /// anything below it), in path order. Equal subtrees are skipped whole, so the cost follows
    /// the change, not the size of the tree. Both must be roots a scan recorded.
    pub fn changed_since(&self, old: &NodeId, new: &NodeId) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let mut stack = vec![(Some(*old), *new)];
        while let Some((before, id)) = stack.pop() {
            if before == Some(id) {
                continue;
            }
            let rec = self
                .node(&id)?
                .ok_or_else(|| Error::NoSuchNode { id: id.to_hex() })?;
            if rec.kind == NodeKind::Dir {
                let mut was: BTreeMap<String, NodeId> = BTreeMap::new();
                if let Some(before) = before
                    && let Some(old_rec) = self.node(&before)?
                    && old_rec.kind == NodeKind::Dir
                {
                    was = old_rec
                        .children
                        .into_iter()
                        .map(|c| (c.name, c.node_id))
                        .collect();
                }
                for c in &rec.children {
                    stack.push((was.get(&c.name).copied(), c.node_id));
                }
            }
            out.push(rec.path);
        }
        out.sort_unstable();
        Ok(out)
    }

    /// The files of the tree at `new` whose content is not that of the same path under
    /// `old`, in path order, where both trees hold the same paths, each of the same kind and
    /// at most `limit` files changed; `None` where a path was added or removed or changed
    /// kind, or more changed (the walk stops there). Equal subtrees are skipped whole, as
    /// [`Store::changed_since`] skips them: what a cache of every file that holds for `old`
    /// needs looked at again for `new`, when only a few contents changed.
    pub fn modified_since(
        &self,
        old: &NodeId,
        new: &NodeId,
        limit: usize,
    ) -> Result<Option<Vec<String>>> {
        let mut out = Vec::new();
        let mut stack = vec![(*old, *new)];
        while let Some((before, id)) = stack.pop() {
            if before == id {
                continue;
            }
            let node = |id: &NodeId| {
                self.node(id)?
                    .ok_or_else(|| Error::NoSuchNode { id: id.to_hex() })
            };
            let (was, rec) = (node(&before)?, node(&id)?);
            if was.kind != rec.kind {
                return Ok(None);
            }
            if rec.kind != NodeKind::Dir {
                if out.len() == limit {
                    return Ok(None);
                }
                out.push(rec.path);
                continue;
            }
            let was: BTreeMap<&str, (NodeKind, NodeId)> = was
                .children
                .iter()
                .map(|c| (c.name.as_str(), (c.kind, c.node_id)))
                .collect();
            if was.len() != rec.children.len() {
                return Ok(None);
            }
            for c in &rec.children {
                match was.get(c.name.as_str()) {
                    Some(&(kind, before)) if kind == c.kind => stack.push((before, c.node_id)),
                    _ => return Ok(None),
                }
            }
        }
        out.sort_unstable();
        Ok(Some(out))
    }

    /// The tree below `root`, any root a scan recorded, read from the node records.
    pub fn tree_at(&self, root: &NodeId) -> Result<PathTree> {
        let mut tree = PathTree::new();
        let mut stack = vec![*root];
        while let Some(id) = stack.pop() {
            let rec = self
                .node(&id)?
                .ok_or_else(|| Error::NoSuchNode { id: id.to_hex() })?;
            if rec.kind == NodeKind::Dir {
                stack.extend(rec.children.iter().map(|c| c.node_id));
            }
            tree.insert(
                rec.path.clone(),
                TreeNode {
                    path: rec.path,
                    kind: rec.kind,
                    node_id: id,
                },
            );
        }
        Ok(tree)
    }
}

/// The tree whose leaves (files and symlinks) are `leaves`, each with its content hash: every
/// directory above them, the root (`""`) included, with the NodeIDs a scan of the same files
/// gives. A directory exists only as the parent of a leaf, so an empty one is not there.
pub fn tree_of_leaves(leaves: Vec<(String, NodeKind, Hash)>) -> PathTree {
    let mut tree = PathTree::new();
    let mut children: BTreeMap<String, Vec<(String, NodeId)>> = BTreeMap::new();
    children.insert(String::new(), Vec::new());
    for (path, kind, hash) in leaves {
        let id = leaf_node_id(kind, &path, &hash);
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", &path));
        children
            .entry(parent.to_owned())
            .or_default()
            .push((name.to_owned(), id));
        // Every ancestor directory exists, even one holding only directories.
        let mut dir = parent;
        while !dir.is_empty() {
            children.entry(dir.to_owned()).or_default();
            dir = dir.rsplit_once('/').map_or("", |(p, _)| p);
        }
        tree.insert(
            path.clone(),
            TreeNode {
                path,
                kind,
                node_id: id,
            },
        );
    }
    // Deepest directories first, so each one's children are known when it is hashed.
    let mut dirs: Vec<String> = children.keys().cloned().collect();
    dirs.sort_by_key(|d| {
        std::cmp::Reverse(if d.is_empty() {
            0
        } else {
            d.matches('/').count() + 1
        })
    });
    for dir in dirs {
        let mut kids = children.remove(&dir).unwrap_or_default();
        kids.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let id = dir_node_id(&dir, kids.iter().map(|(n, id)| (n.as_str(), id)));
        if !dir.is_empty() {
            let (parent, name) = dir.rsplit_once('/').unwrap_or(("", &dir));
            children
                .entry(parent.to_owned())
                .or_default()
                .push((name.to_owned(), id));
        }
        tree.insert(
            dir.clone(),
            TreeNode {
                path: dir,
                kind: NodeKind::Dir,
                node_id: id,
            },
        );
    }
    tree
}
