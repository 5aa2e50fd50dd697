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

/// A read-only handle beside the writer, as another process's (a server's) would be.
fn reader(root: &std::path::Path) -> Store {
    let read_only = OpenOptions {
        read_only: true,
        ..OpenOptions::default()
    };
    Store::open(root, &read_only).expect("a reader")
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
    let reader = reader(dir.path());
    let root = reader.root().expect("a read").expect("a root");
    let done = store.collect_garbage(&|_, _| false, false).expect("gc");
    assert_eq!((done.nodes_removed, done.compacted), (2, false), "{done:?}");
    assert_eq!(reader.root().expect("the reader's snapshot"), Some(root));
    drop(reader);
    let again = store.collect_garbage(&|_, _| false, false).expect("gc");
    assert!(again.compacted, "{again:?}");
    assert_eq!(store.validate().expect("validate"), vec![]);
}

/// Long contents are kept once (issue #46, a compact store): the same outline on two copies of
/// a file and the same derived bytes under two keys are one body each; a body goes with the
/// last record that names it, at the next collection; a body that is missing is damage that
/// `validate` names.
#[test]
fn a_long_content_is_one_body_however_many_records_hold_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "one/lib.rs", "pub fn a() {}\n// one\n");
    write(root, "two/lib.rs", "pub fn a() {}\n// two\n");
    let mut store = Store::open(root, &OpenOptions::default()).expect("open");
    store.scan(&ScanOptions::default()).expect("scan");
    store.add_agent("a", Role::Writer).expect("agent");
    let outline = "pub fn a()\n".repeat(30).into_bytes();
    assert!(outline.len() >= merkle_store::store::BODY_MIN);
    let mut frames = Vec::new();
    for path in ["one/lib.rs", "two/lib.rs"] {
        let node = store.node_at(path).expect("read").expect("a file").node_id;
        frames.push(NewFrame::new(node, "outline", "a", outline.clone()));
    }
    frames.push(frames[0].clone());
    let puts = store.put_frames(frames);
    assert_eq!(
        puts.iter()
            .filter(|p| p.as_ref().expect("put").created)
            .count(),
        2
    );
    assert_eq!((count(&store, "frames"), count(&store, "bodies")), (2, 1));
    let symbols = b"fn a: 1-1; ".repeat(20);
    let keys = [1u8, 2].map(|b| Hash::from_slice(&[b; 32]).expect("a hash"));
    let records: Vec<_> = keys.iter().map(|k| (*k, symbols.clone())).collect();
    store
        .put_derived_shared("facts", &records)
        .expect("derived");
    assert_eq!(count(&store, "bodies"), 2, "one more: the derived bytes");
    // A record rewritten under one key (a kept graph) stays in place: no body per rewrite.
    for round in 0..3u8 {
        let graph = vec![round; 4096];
        store
            .put_derived("graph", &[(keys[0], graph.clone())])
            .expect("derived");
        assert_eq!(store.derived("graph", &keys[0]).expect("read"), Some(graph));
    }
    assert_eq!(count(&store, "bodies"), 2, "the graph's bytes are no body");
    for key in &keys {
        assert_eq!(
            store.derived("facts", key).expect("read"),
            Some(symbols.clone())
        );
    }
    let node = store
        .node_at("two/lib.rs")
        .expect("read")
        .expect("a file")
        .node_id;
    let history = store.frames_of(&node, None).expect("frames");
    assert_eq!(history[0].content, outline);
    assert_eq!(store.validate().expect("validate"), vec![]);

    // One derived record stays: its body stays; with none, it goes.
    let keep = |namespace: &str, key: &Hash| namespace == "facts" && *key == keys[0];
    let done = store.collect_garbage(&keep, false).expect("gc");
    assert_eq!((done.bodies_kept, done.bodies_removed), (2, 0), "{done:?}");
    let dry = store.collect_garbage(&|_, _| false, true).expect("dry run");
    assert_eq!((dry.bodies_kept, dry.bodies_removed), (1, 1), "{dry:?}");
    assert_eq!(count(&store, "bodies"), 2, "a dry run removes nothing");
    let done = store.collect_garbage(&|_, _| false, false).expect("gc");
    assert_eq!((done.bodies_kept, done.bodies_removed), (1, 1), "{done:?}");
    assert_eq!(store.validate().expect("validate"), vec![]);
    assert_eq!(
        store.frames_of(&node, None).expect("frames")[0].content,
        outline
    );
    drop(store);

    // The outline's body removed by hand: both frames name what is missing.
    let db = redb::Database::create(root.join(".merkle/store.redb")).expect("open redb");
    let txn = db.begin_write().expect("begin");
    {
        let def: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("bodies");
        let mut t = txn.open_table(def).expect("bodies table");
        let body = merkle_store::hash::content_hash(&outline);
        t.remove(body.0.as_slice())
            .expect("remove")
            .expect("the body");
    }
    txn.commit().expect("commit");
    drop(db);
    let store = Store::open(root, &OpenOptions::default()).expect("open");
    let problems = store.validate().expect("validate");
    let missing = problems
        .iter()
        .filter(|p| p.message.contains("its body"))
        .count();
    assert_eq!(missing, 2, "{problems:#?}");
    let err = store
        .frames_of(&node, None)
        .expect_err("a frame without its body");
    assert!(err.to_string().contains("is missing"), "{err}");
}

/// Records written in hash order leave a B-tree's leaves about two thirds full, and a large
/// value near the file's end kept compaction from moving anything (issue #46): after `gc`, the
/// file holds little more than its records.
#[test]
fn gc_leaves_the_file_little_larger_than_its_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.txt", "a\n");
    let mut store = Store::open(dir.path(), &OpenOptions::default()).expect("open");
    store.scan(&ScanOptions::default()).expect("scan");
    let mut n = 0u32;
    for round in 0..40u32 {
        let records: Vec<(Hash, Vec<u8>)> = (0..1000u32)
            .map(|i| {
                n += 1;
                let key = merkle_store::hash::content_hash(&n.to_le_bytes());
                (key, format!("{round} {i} {key}").into_bytes())
            })
            .collect();
        store.put_derived("cache", &records).expect("derived");
        // A large value (a body of its own) written among them, as a long body is.
        // 120,000 bytes: redb gives a large value a power of two of pages (here 32).
        let large: Vec<u8> = (0..30_000u32)
            .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
            .collect();
        let key = Hash::from_slice(&[round as u8; 32]).expect("a hash");
        store
            .put_derived("large", &[(key, large)])
            .expect("derived");
    }
    let file = || {
        std::fs::metadata(dir.path().join(".merkle/store.redb"))
            .expect("the file")
            .len()
    };
    let before = file();
    // Beside a reader nothing is rewritten: the pages a rewrite frees could not be given back.
    let reader = reader(dir.path());
    assert!(reader.root().expect("a read").is_some());
    let done = store.collect_garbage(&|_, _| true, false).expect("gc");
    assert!(!done.compacted, "{done:?}");
    assert_eq!(
        file(),
        before,
        "beside a reader the file neither grows nor shrinks"
    );
    drop(reader);
    let done = store.collect_garbage(&|_, _| true, false).expect("gc");
    assert!(done.compacted, "{done:?}");
    let records: u64 = store
        .space()
        .expect("space")
        .iter()
        .filter(|s| !s.kind.contains(':'))
        .map(|s| s.key_bytes + s.value_bytes)
        .sum();
    let after = file();
    assert!(
        after * 4 <= records * 5,
        "{after} bytes of file for {records} bytes of records (before gc: {before})"
    );
    assert_eq!(store.validate().expect("validate"), vec![]);
}

/// A head is its history's latest entry, which no table repeats; a store written before
/// heads were derived has every head in the heads table too. It reads the same heads, a new
/// frame moves its head as before, and `gc` removes the entries the history implies.
#[test]
fn heads_the_history_implies_read_the_same_and_gc_removes_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "a.txt", "a\n");
    write(root, "b.txt", "b\n");
    let store = Store::open(root, &OpenOptions::default()).expect("open");
    store.scan(&ScanOptions::default()).expect("scan");
    store.add_agent("w", Role::Writer).expect("agent");
    let node = |path: &str, store: &Store| store.node_at(path).expect("read").expect("node");
    let (a, b) = (node("a.txt", &store).node_id, node("b.txt", &store).node_id);
    let put = |store: &Store, n, text: &str| {
        store
            .put_frame(NewFrame::new(n, "note", "w", text.as_bytes().to_vec()))
            .expect("put")
            .frame_id
    };
    put(&store, a, "a one");
    let a2 = put(&store, a, "a two");
    let b1 = put(&store, b, "b one");
    assert_eq!(count(&store, "heads"), 0, "no head is named");
    let head = |store: &Store, n| store.head(&n, "note").expect("head").expect("a head");
    assert_eq!(
        (head(&store, a).frame_id, head(&store, b).frame_id),
        (a2, b1)
    );
    drop(store);

    // As a store of the earlier format holds them: every head named.
    let db = redb::Database::create(root.join(".merkle/store.redb")).expect("open redb");
    let txn = db.begin_write().expect("begin");
    {
        let def: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("heads");
        let mut t = txn.open_table(def).expect("heads table");
        for (n, f) in [(a, a2), (b, b1)] {
            let mut key = n.0.to_vec();
            key.extend_from_slice(b"note");
            t.insert(key.as_slice(), f.0.as_slice()).expect("insert");
        }
    }
    txn.commit().expect("commit");
    drop(db);
    let mut store = Store::open(root, &OpenOptions::default()).expect("open");
    assert_eq!(count(&store, "heads"), 2);
    assert_eq!(
        (head(&store, a).frame_id, head(&store, b).frame_id),
        (a2, b1)
    );
    assert_eq!(store.validate().expect("validate"), vec![]);
    // A new frame is the head; the entry naming the one before goes.
    let b2 = put(&store, b, "b two");
    assert_eq!(head(&store, b).frame_id, b2);
    assert_eq!(count(&store, "heads"), 1);
    let heads = store.heads(&a).expect("heads");
    assert_eq!(heads.iter().map(|f| f.frame_id).collect::<Vec<_>>(), [a2]);

    let keep = |_: &str, _: &Hash| true;
    let dry = store.collect_garbage(&keep, true).expect("dry run");
    assert_eq!((dry.heads_implied, count(&store, "heads")), (1, 1));
    let done = store.collect_garbage(&keep, false).expect("gc");
    assert_eq!((done.heads_implied, count(&store, "heads")), (1, 0));
    assert_eq!(
        (head(&store, a).frame_id, head(&store, b).frame_id),
        (a2, b2)
    );
    assert_eq!(store.validate().expect("validate"), vec![]);
}
