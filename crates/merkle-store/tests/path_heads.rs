//! Path heads (`store/path_heads.rs`): the latest frame of a type on any version of a path,
//! implied where it is the head of the node at the path now and recorded only where not: a
//! scan (full or of known paths) records the heads of the nodes that leave their paths, a put
//! on the node at its path removes the record, a put on another version records it, and `gc`
//! removes records the tree implies (a store written before holds one for every path).
use merkle_store::{FrameId, Hash, NewFrame, NodeId, OpenOptions, Role, ScanOptions, Store};
use pretty_assertions::assert_eq;

fn write(root: &std::path::Path, path: &str, text: &str) {
    let at = root.join(path);
    std::fs::create_dir_all(at.parent().expect("a parent")).expect("mkdir");
    std::fs::write(&at, text).expect("write");
    // A rewrite within the file system's timestamp granularity must still read as a change.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3);
    std::fs::File::options()
        .write(true)
        .open(&at)
        .and_then(|f| f.set_modified(later))
        .expect("touch");
}

fn recorded(store: &Store) -> u64 {
    let space = store.space().expect("space");
    space
        .iter()
        .find(|s| s.kind == "path_heads")
        .map_or(0, |s| s.entries)
}

struct Ws {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    store: Store,
}

impl Ws {
    fn new() -> Ws {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_path_buf();
        write(&root, "src/a.txt", "one\n");
        write(&root, "b.txt", "b\n");
        let store = Store::open(&root, &OpenOptions::default()).expect("open");
        store.scan(&ScanOptions::default()).expect("scan");
        store.add_agent("w", Role::Writer).expect("agent");
        Ws {
            _dir: dir,
            root,
            store,
        }
    }

    fn node(&self, path: &str) -> NodeId {
        self.store
            .node_at(path)
            .expect("read")
            .expect("a node")
            .node_id
    }

    fn put(&self, node: NodeId, text: &str) -> FrameId {
        self.store
            .put_frame(NewFrame::new(node, "note", "w", text.as_bytes().to_vec()))
            .expect("put")
            .frame_id
    }

    fn path_head(&self, path: &str) -> Option<FrameId> {
        let head = self.store.path_head(path, "note").expect("path head");
        head.map(|f| f.frame_id)
    }

    fn scan(&self) {
        self.store.scan(&ScanOptions::default()).expect("scan");
    }

    fn clean(&self) {
        assert_eq!(self.store.validate().expect("validate"), vec![]);
    }
}

#[test]
fn a_path_head_is_recorded_only_once_its_node_leaves_the_path() {
    let ws = Ws::new();
    let first = ws.node("src/a.txt");
    let v1 = ws.put(first, "v1");
    let on_dir = ws.put(ws.node("src"), "the folder");
    // Both are the heads of the nodes at their paths: nothing recorded.
    assert_eq!(recorded(&ws.store), 0);
    assert_eq!(
        (ws.path_head("src/a.txt"), ws.path_head("src")),
        (Some(v1), Some(on_dir))
    );
    ws.clean();

    // An edit: the file's node and its folder's leave their paths, their heads recorded.
    write(&ws.root, "src/a.txt", "two\n");
    ws.scan();
    let second = ws.node("src/a.txt");
    assert_ne!(first, second);
    assert_eq!(recorded(&ws.store), 2);
    assert_eq!(
        (ws.path_head("src/a.txt"), ws.path_head("src")),
        (Some(v1), Some(on_dir))
    );
    ws.clean();

    // A frame on the node at its path is the latest: the record goes.
    let v2 = ws.put(second, "v2");
    assert_eq!(
        (ws.path_head("src/a.txt"), recorded(&ws.store)),
        (Some(v2), 1)
    );
    ws.clean();

    // Reverted: the first node is back with its own head; the path's latest is v2's.
    write(&ws.root, "src/a.txt", "one\n");
    ws.scan();
    assert_eq!(ws.node("src/a.txt"), first);
    assert_eq!(ws.path_head("src/a.txt"), Some(v2));
    let own = ws
        .store
        .head(&first, "note")
        .expect("head")
        .map(|f| f.frame_id);
    assert_eq!(own, Some(v1));
    ws.clean();

    // A frame on a version not at the path now is recorded; one on the node at it is not.
    let v3 = ws.put(second, "v3");
    assert_eq!(ws.path_head("src/a.txt"), Some(v3));
    ws.clean();
    let v4 = ws.put(first, "v4");
    assert_eq!(ws.path_head("src/a.txt"), Some(v4));
    let types: Vec<FrameId> = ws
        .store
        .path_heads("src/a.txt")
        .expect("path heads")
        .iter()
        .map(|f| f.frame_id)
        .collect();
    assert_eq!(types, [v4]);
    ws.clean();

    // Removed: its path still knows its latest frame.
    std::fs::remove_file(ws.root.join("src/a.txt")).expect("remove");
    ws.scan();
    assert_eq!(ws.path_head("src/a.txt"), Some(v4));
    assert_eq!(
        ws.store.paths_with_frames().expect("paths"),
        ["src", "src/a.txt"]
    );
    ws.clean();
}

#[test]
fn a_scan_of_known_paths_records_what_a_full_scan_does() {
    let ws = Ws::new();
    let v1 = ws.put(ws.node("src/a.txt"), "v1");
    write(&ws.root, "src/a.txt", "two\n");
    let report = ws
        .store
        .scan_paths(&["src/a.txt".to_owned()], &ScanOptions::default())
        .expect("scan paths");
    assert!(report.changed_paths.contains(&"src/a.txt".to_owned()));
    assert_eq!(
        (ws.path_head("src/a.txt"), recorded(&ws.store)),
        (Some(v1), 1)
    );
    assert_eq!(ws.store.paths_with_frames().expect("paths"), ["src/a.txt"]);
    ws.clean();
}

/// A store written before path heads were implied records one for every path with frames: it
/// reads the same, and `gc` removes those the tree implies and keeps the others.
#[test]
fn gc_removes_the_path_heads_the_tree_implies() {
    let ws = Ws::new();
    let (a, b) = (ws.node("src/a.txt"), ws.node("b.txt"));
    let (a1, b1) = (ws.put(a, "a1"), ws.put(b, "b1"));
    write(&ws.root, "b.txt", "b two\n");
    ws.scan();
    assert_eq!(recorded(&ws.store), 1);
    let Ws { _dir, root, store } = ws;
    drop(store);
    let db = redb::Database::create(root.join(".merkle/store.redb")).expect("open redb");
    let txn = db.begin_write().expect("begin");
    {
        let def: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("path_heads");
        let mut t = txn.open_table(def).expect("path heads table");
        t.insert(&b"src/a.txt\0note"[..], a1.0.as_slice())
            .expect("insert");
    }
    txn.commit().expect("commit");
    drop(db);
    let store = Store::open(&root, &OpenOptions::default()).expect("open");
    let ws = Ws { _dir, root, store };
    assert_eq!(recorded(&ws.store), 2);
    assert_eq!(
        (ws.path_head("src/a.txt"), ws.path_head("b.txt")),
        (Some(a1), Some(b1))
    );
    ws.clean();
    let Ws {
        _dir,
        root,
        mut store,
    } = ws;
    let keep = |_: &str, _: &Hash| true;
    let dry = store.collect_garbage(&keep, true).expect("dry run");
    assert_eq!((dry.path_heads_implied, recorded(&store)), (1, 2));
    let done = store.collect_garbage(&keep, false).expect("gc");
    assert_eq!((done.path_heads_implied, recorded(&store)), (1, 1));
    let ws = Ws { _dir, root, store };
    assert_eq!(
        (ws.path_head("src/a.txt"), ws.path_head("b.txt")),
        (Some(a1), Some(b1))
    );
    ws.clean();
}
