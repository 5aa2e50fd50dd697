//! A scan with more new nodes than one commit is to hold (issue #46: a cold scan of a million
//! files in bounded memory): their records are committed ahead of the tree that names them, a
//! chunk at a time, in key order. The store must come out as one commit would leave it: every
//! path's node readable, nothing for `gc` to collect, `validate` clean; and so again when a
//! second such scan's records fall between the first's; and such a tree is kept for whole-tree
//! reads in parts of bounded size.
use std::path::Path;

use merkle_store::{OpenOptions, ScanOptions, Store};
use pretty_assertions::assert_eq;

/// More than the 65,536 records a scan commits in one chunk, in 70 folders.
const FILES: usize = 70_000;

fn write_files(root: &Path, folder: &str, n: usize) -> Vec<String> {
    let mut paths = Vec::with_capacity(n);
    for i in 0..n {
        let path = format!("{folder}/d{:02}/f{i:05}.txt", i % 70);
        let at = root.join(&path);
        if i < 70 {
            std::fs::create_dir_all(at.parent().expect("a parent")).expect("mkdir");
        }
        std::fs::write(&at, format!("{folder} file {i}\n")).expect("write");
        paths.push(path);
    }
    paths
}

/// How many entries the store's table `kind` holds.
fn table_entries(store: &Store, kind: &str) -> u64 {
    let space = store.space().expect("space");
    space
        .iter()
        .find(|s| s.kind == kind)
        .map_or(0, |s| s.entries)
}

fn nodes(store: &Store) -> u64 {
    table_entries(store, "nodes")
}

/// Every path's node is in the store, with its path.
fn every_node_readable(store: &Store, paths: &[String]) {
    for path in paths {
        let node = store
            .node_at(path)
            .expect("read")
            .unwrap_or_else(|| panic!("{path}"));
        assert_eq!(node.path, *path);
    }
}

#[test]
fn a_scan_with_more_records_than_a_commit_holds_writes_them_all() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let first = write_files(root, "a", FILES);
    let mut store = Store::open(root, &OpenOptions::default()).expect("open");
    let scan = store.scan(&ScanOptions::default()).expect("scan");
    // The files, their 70 folders, `a` and the root.
    let entries = FILES as u64 + 72;
    assert_eq!((scan.files, scan.dirs), (FILES as u64, 72));
    assert_eq!(nodes(&store), entries);
    // The tree's entries and the node records, each once, and the scan's bookkeeping.
    assert!(scan.writes >= 2 * entries, "{} writes", scan.writes);
    // A first tree's changed paths are every path, in order.
    let mut every: Vec<String> = first.clone();
    every.extend((0..70).map(|d| format!("a/d{d:02}")));
    every.extend(["a".to_owned(), String::new()]);
    every.sort();
    assert_eq!(scan.changed_paths, every);
    every_node_readable(&store, &first);
    assert_eq!(store.validate().expect("validate"), vec![]);

    // A second folder as large: its records' keys fall between the first's.
    let second = write_files(root, "b", FILES);
    let rescan = store.scan(&ScanOptions::default()).expect("rescan");
    assert_eq!(rescan.files, 2 * FILES as u64);
    // As many again: the new files and folders, and the root's new node.
    assert_eq!(nodes(&store), 2 * entries);
    every_node_readable(&store, &second);
    every_node_readable(&store, &first);
    assert_eq!(store.validate().expect("validate"), vec![]);
    // The tree table's entries are kept in blocks of a few kilobytes: records by the hundred
    // for entries by the ten thousand, read back whole and in order.
    let walked = store.tree_files().expect("tree files");
    let space = store.space().expect("space");
    let tree = space
        .iter()
        .find(|s| s.kind == "tree")
        .expect("the tree's space");
    assert_eq!(tree.entries, 2 * entries - 1);
    // A block's key is its first path: a few hundred paths' bytes, where each path's own
    // record took its whole path.
    let paths: u64 = walked.iter().map(|t| t.path.len() as u64).sum();
    assert!(
        tree.key_bytes * 20 < paths,
        "{} of {paths} bytes",
        tree.key_bytes
    );
    assert_eq!(walked.len(), 2 * FILES);
    let mut paths: Vec<&str> = walked.iter().map(|t| t.path.as_str()).collect();
    paths.dedup();
    assert!(paths.is_sorted() && paths.len() == 2 * FILES);

    let collected = store
        .collect_garbage(&|_, _| true, true)
        .expect("a dry run");
    // Only the first tree's root is no longer held.
    assert_eq!(collected.nodes_removed, 1);
}
