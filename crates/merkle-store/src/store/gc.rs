//! Collecting what nothing needs (issue #46, `merkle gc`): node records that neither the
//! current tree, nor a frame's history, nor a directory kept for one holds (the versions of
//! files a rescan replaced), and derived records the caller no longer reads (a cache of an
//! older format, or of content no file has now), and the bodies no record names now; then the
//! values of a store written before packing packed, the tree of one written before blocks in
//! blocks, and the engine's file compacted (redb:
//! its fragmented tables rewritten in key order first, see `engine/redb.rs`). Frames, their
//! history, heads, memos and the basis index are never collected: they are what the store is
//! for (a heads-table entry that names its history's latest entry goes: the history implies
//! it; so does a recorded path head that is the head of the node at its path: the tree implies
//! it).
use std::collections::HashSet;

use super::*;
use crate::node::NodeRecord;

/// Removals are committed this many at a time, so that collecting a large store's garbage
/// holds a bounded batch.
pub(super) const REMOVE_BATCH: usize = 65_536;

/// What a collection kept and removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Collected {
    /// Node records kept (the current tree's, those with frames, what their directories
    /// hold) and removed (or that would be, in a dry run).
    pub nodes_kept: u64,
    pub nodes_removed: u64,
    /// Per derived namespace: records kept and removed.
    pub derived: Vec<(String, u64, u64)>,
    /// Bodies kept (some frame or derived record names them) and removed.
    pub bodies_kept: u64,
    pub bodies_removed: u64,
    /// Heads-table entries naming their history's latest entry, which the history implies
    /// (every head of a store written before heads were derived), removed.
    pub heads_implied: u64,
    /// Recorded path heads that are the head of the node at their path, which the tree
    /// implies (most path heads of a store written before they were implied), removed.
    pub path_heads_implied: u64,
    /// Records of the copy of the tree table a store of an earlier version kept (see
    /// [`Table::Kept`]), removed.
    pub tree_copy_removed: u64,
    /// Values of a store written before packing that were packed.
    pub packed: u64,
    /// Tree entries written in blocks anew: a store's written before the tree was kept in
    /// blocks, or one's whose blocks were half empty (see `engine/blocked.rs`).
    pub tree_blocked: u64,
    /// Whether the engine gave freed space back to the file system.
    pub compacted: bool,
}

impl Store {
    /// Removes what nothing needs (see the module documentation); `keep_derived(namespace,
    /// key)` says which derived records the caller still reads. A dry run counts, packs and
    /// compacts nothing.
    pub fn collect_garbage(
        &mut self,
        keep_derived: &dyn Fn(&str, &Hash) -> bool,
        dry_run: bool,
    ) -> Result<Collected> {
        let _guard = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Collected::default();
        let kept = self.needed_nodes()?;
        let mut gone = Vec::new();
        self.engine.scan(Table::Nodes, b"", &mut |k, _| {
            if Hash::from_slice(k).is_some_and(|id| kept.contains(&id)) {
                out.nodes_kept += 1;
            } else {
                gone.push((Table::Nodes, k.to_vec()));
            }
            true
        })?;
        out.nodes_removed = gone.len() as u64;
        let mut namespaces: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        self.engine.scan_stored(Table::Derived, b"", &mut |k, _| {
            let at = k.iter().position(|b| *b == 0).unwrap_or(k.len());
            let namespace = String::from_utf8_lossy(&k[..at]).into_owned();
            let keep = k
                .get(at + 1..)
                .and_then(Hash::from_slice)
                .is_some_and(|key| keep_derived(&namespace, &key));
            let counts = namespaces.entry(namespace).or_default();
            if keep {
                counts.0 += 1;
            } else {
                counts.1 += 1;
                gone.push((Table::Derived, k.to_vec()));
            }
            true
        })?;
        out.derived = namespaces
            .into_iter()
            .map(|(n, (kept, removed))| (n, kept, removed))
            .collect();
        let implied = self.implied_heads()?;
        out.heads_implied = implied.len() as u64;
        gone.extend(implied.into_iter().map(|k| (Table::Heads, k)));
        let implied = self.implied_path_heads()?;
        out.path_heads_implied = implied.len() as u64;
        gone.extend(implied.into_iter().map(|k| (Table::PathHeads, k)));
        if !dry_run {
            for chunk in gone.chunks(REMOVE_BATCH) {
                let mut batch = Batch::with_capacity(chunk.len());
                for (table, key) in chunk {
                    batch.delete(*table, key.clone());
                }
                self.engine.commit(batch)?;
            }
        }
        // A dry run counts the bodies that the derived records it would remove name as gone.
        let derived_gone: HashSet<&[u8]> = gone
            .iter()
            .filter(|(t, _)| dry_run && *t == Table::Derived)
            .map(|(_, k)| k.as_slice())
            .collect();
        (out.bodies_kept, out.bodies_removed) = self.collect_bodies(dry_run, &derived_gone)?;
        out.tree_copy_removed = self.remove_tree_copy(dry_run)?;
        if dry_run {
            return Ok(out);
        }
        out.packed = self.engine.pack_all()?;
        out.tree_blocked = self.engine.block_all()?;
        out.compacted = self.engine.compact()?;
        Ok(out)
    }

    /// Removes the copy of the tree table a store of an earlier version kept, and its records
    /// in the meta table (counted only, in a dry run); the copy's records.
    fn remove_tree_copy(&self, dry_run: bool) -> Result<u64> {
        let mut batch = Batch::default();
        self.engine.scan_stored(Table::Kept, b"", &mut |k, _| {
            batch.delete(Table::Kept, k.to_vec());
            true
        })?;
        let copy = batch.len() as u64;
        for key in META_TREE_KEPT_BEFORE {
            if self.engine.contains(Table::Meta, key)? {
                batch.delete(Table::Meta, key.to_vec());
            }
        }
        if !dry_run && !batch.is_empty() {
            self.engine.commit(batch)?;
        }
        Ok(copy)
    }

    /// The keys of the heads-table entries that name their history's latest entry.
    fn implied_heads(&self) -> Result<Vec<Vec<u8>>> {
        let mut named = Vec::new();
        self.engine.scan(Table::Heads, b"", &mut |k, v| {
            named.push((k.to_vec(), v.to_vec()));
            true
        })?;
        let mut out = Vec::new();
        for (k, v) in named {
            let node = k.get(..32).and_then(Hash::from_slice);
            let ty = k.get(32..).and_then(|t| std::str::from_utf8(t).ok());
            let (Some(node), Some(ty)) = (node, ty) else {
                continue;
            };
            if self
                .latest_entry(&node, ty)?
                .is_some_and(|s| s.frame_id.0[..] == v[..])
            {
                out.push(k);
            }
        }
        Ok(out)
    }

    /// The nodes something needs: the current tree's, those a frame's history or a head is
    /// kept for, and, for each such directory outside the current tree, what it holds.
    fn needed_nodes(&self) -> Result<HashSet<NodeId>> {
        let mut kept: HashSet<NodeId> = HashSet::new();
        self.tree_entries("", |_, e| {
            kept.insert(e.node_id);
        })?;
        kept.extend(self.root()?);
        let mut framed: Vec<NodeId> = Vec::new();
        for table in [Table::NodeFrames, Table::Heads] {
            self.engine.scan(table, b"", &mut |k, _| {
                if let Some(id) = k.get(..32).and_then(Hash::from_slice)
                    && framed.last() != Some(&id)
                {
                    framed.push(id);
                }
                true
            })?;
        }
        // A directory kept for its frames names its children by id: they stay too.
        let mut todo: Vec<NodeId> = framed.into_iter().filter(|id| kept.insert(*id)).collect();
        while let Some(id) = todo.pop() {
            let Some(bytes) = self.engine.get(Table::Nodes, &id.0)? else {
                continue;
            };
            let record = NodeRecord::decode(id, &bytes)?;
            todo.extend(
                record
                    .children
                    .iter()
                    .map(|c| c.node_id)
                    .filter(|c| kept.insert(*c)),
            );
        }
        Ok(kept)
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{Batch, Table};
    use crate::keys::META_TREE_KEPT_BEFORE;
    use crate::{OpenOptions, ScanOptions, Store};

    /// The copy of the tree an earlier version kept is counted by a dry run and removed by a
    /// collection, its meta records with it; the tree reads the same after.
    #[test]
    fn the_tree_copy_an_earlier_version_kept_is_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.txt"), "a\n").expect("write");
        let mut store = Store::open(dir.path(), &OpenOptions::default()).expect("open");
        store.scan(&ScanOptions::default()).expect("scan");
        let files = store.tree_files().expect("tree files");
        let mut batch = Batch::default();
        for part in [&b"tree:0:\0\0\0\0"[..], b"tree:1:\0\0\0\0", b"tree:0"] {
            batch.put(Table::Kept, part.to_vec(), vec![5; 300]);
        }
        for key in META_TREE_KEPT_BEFORE {
            batch.put(Table::Meta, key.to_vec(), vec![1; 8]);
        }
        store.engine.commit(batch).expect("commit");
        let keep = |_: &str, _: &crate::Hash| true;
        let dry = store.collect_garbage(&keep, true).expect("dry run");
        assert_eq!(dry.tree_copy_removed, 3);
        assert_eq!(
            store.engine.count(Table::Kept).expect("count"),
            3,
            "a dry run removes nothing"
        );
        let done = store.collect_garbage(&keep, false).expect("collect");
        assert_eq!(done.tree_copy_removed, 3);
        assert_eq!(store.engine.count(Table::Kept).expect("count"), 0);
        for key in META_TREE_KEPT_BEFORE {
            assert!(!store.engine.contains(Table::Meta, key).expect("read"));
        }
        assert_eq!(
            store
                .collect_garbage(&keep, false)
                .expect("again")
                .tree_copy_removed,
            0
        );
        assert_eq!(store.tree_files().expect("tree files"), files);
        assert!(store.validate().expect("validate").is_empty());
    }

    /// validate compares the count the tree's blocks keep with the entries it reads.
    #[test]
    fn validate_names_a_tree_count_that_is_not_the_entries() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.txt"), "a\n").expect("write");
        let store = Store::open(dir.path(), &OpenOptions::default()).expect("open");
        store.scan(&ScanOptions::default()).expect("scan");
        assert!(store.validate().expect("validate").is_empty());
        let mut batch = Batch::default();
        batch.put(
            Table::Meta,
            b"tree-blocks".to_vec(),
            7u64.to_le_bytes().to_vec(),
        );
        store.engine.commit(batch).expect("commit");
        let problems = store.validate().expect("validate");
        assert!(
            problems
                .iter()
                .any(|p| p.message == "tree: 7 entries counted, 2 read"),
            "{problems:?}"
        );
    }
}
