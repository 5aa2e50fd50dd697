//! Collecting garbage (`Store::collect_garbage`, issue #46): the versions of files a rescan
//! replaced go, unless a frame is kept for them; history, heads and the current tree stay;
//! the store validates clean after; a dry run changes nothing.
use merkle_store::{Hash, NewFrame, OpenOptions, Role, ScanOptions, Store};
use pretty_assertions::assert_eq;

fn write(root: &std::path::Path, path: &str, text: &str) {
    let at = root.join(path);
    std::fs::create_dir_all(at.parent().expect("a parent")).expect("mkdir");
    std::fs::write(at, text).expect("write");
    // A rewrite within the file system's timestamp granularity must still read as a change.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3);
    std::fs::File::options()
        .write(true)
        .open(root.join(path))
        .and_then(|f| f.set_modified(later))
        .expect("touch");
}

fn count(store: &Store, table: &str) -> u64 {
    let space = store.space().expect("space");
    space
        .iter()
        .find(|s| s.kind == table)
        .map_or(0, |s| s.entries)
}

#[test]
fn gc_removes_replaced_versions_and_keeps_history() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "a.txt", "a 1\n");
    write(root, "b.txt", "b 1\n");
    write(root, "src/c.txt", "c\n");
    let mut store = Store::open(root, &OpenOptions::default()).expect("open");
    store.scan(&ScanOptions::default()).expect("scan");
    store.add_agent("a", Role::Writer).expect("agent");
    let old_b = store.node_at("b.txt").expect("read").expect("b.txt");
    store
        .put_frame(NewFrame::new(old_b.node_id, "note", "a", b"kept".to_vec()))
        .expect("put");
    // Two edits of a.txt (no frames) and one of b.txt (whose old version has a frame).
    write(root, "a.txt", "a 2\n");
    write(root, "b.txt", "b 2\n");
    store.scan(&ScanOptions::default()).expect("scan");
    write(root, "a.txt", "a 3\n");
    store.scan(&ScanOptions::default()).expect("scan");
    let keys = [1u8, 2].map(|b| Hash::from_slice(&[b; 32]).expect("a hash"));
    store
        .put_derived(
            "cache",
            &[(keys[0], b"read".to_vec()), (keys[1], b"not".to_vec())],
        )
        .expect("derived");
    let nodes = count(&store, "nodes");
    let keep = |namespace: &str, key: &Hash| namespace == "cache" && *key == keys[0];

    let dry = store.collect_garbage(&keep, true).expect("dry run");
    // a.txt's two old versions and the two old roots; b.txt's old version has a frame.
    assert_eq!(dry.nodes_removed, 4, "{dry:?}");
    assert_eq!(dry.nodes_kept, nodes - 4);
    assert_eq!(dry.derived, vec![("cache".to_owned(), 1, 1)]);
    assert_eq!(count(&store, "nodes"), nodes, "a dry run removes nothing");

    let done = store.collect_garbage(&keep, false).expect("gc");
    assert_eq!(done.nodes_removed, dry.nodes_removed);
    assert_eq!(count(&store, "nodes"), nodes - 4);
    assert_eq!(store.validate().expect("validate"), vec![]);
    let history = store.frames_of(&old_b.node_id, None).expect("frames");
    assert_eq!(history.len(), 1, "the frame and its node stay");
    assert_eq!(history[0].content, b"kept");
    assert_eq!(
        store.derived("cache", &keys[0]).expect("read").as_deref(),
        Some(&b"read"[..])
    );
    assert_eq!(store.derived("cache", &keys[1]).expect("read"), None);
    // The current tree is whole: a rescan finds nothing to do, and a second collection nothing
    // to remove.
    let report = store.scan(&ScanOptions::default()).expect("rescan");
    assert_eq!(report.changed(), 0, "{report:?}");
    let again = store.collect_garbage(&keep, false).expect("gc again");
    assert_eq!((again.nodes_removed, again.packed), (0, 0));
    assert_eq!(store.validate().expect("validate"), vec![]);
}

/// A reader in another handle (another process's, as a server's) holds pages compaction would
/// move: the collection still removes what it can and says it did not compact.
#[test]
fn gc_beside_a_reader_collects_but_does_not_compact() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.txt", "a 1\n");
    let mut store = Store::open(dir.path(), &OpenOptions::default()).expect("open");
    store.scan(&ScanOptions::default()).expect("scan");
    write(dir.path(), "a.txt", "a 2\n");
    store.scan(&ScanOptions::default()).expect("scan");
    let reader = Store::open(
        dir.path(),
        &OpenOptions {
            read_only: true,
            ..OpenOptions::default()
        },
    )
    .expect("a reader");
    let root = reader.root().expect("a read").expect("a root");
    let done = store.collect_garbage(&|_, _| false, false).expect("gc");
    assert_eq!((done.nodes_removed, done.compacted), (2, false), "{done:?}");
    assert_eq!(reader.root().expect("the reader's snapshot"), Some(root));
    drop(reader);
    let again = store.collect_garbage(&|_, _| false, false).expect("gc");
    assert!(again.compacted, "{again:?}");
    assert_eq!(store.validate().expect("validate"), vec![]);
}
