//! Moving frames between stores through the public API: what a push reads (`frames_after`,
//! `memos`) and what a pull writes (`import`), with its checks and its rule for heads.
use merkle_store::{
    Error, Frame, FrameId, Import, ImportOptions, ImportReport, NewFrame, OpenOptions, Role,
    ScanOptions, Store,
};
use pretty_assertions::assert_eq;

/// A scanned workspace with one file and an agent that may write.
struct Side {
    _dir: tempfile::TempDir,
    store: Store,
}

impl Side {
    fn new() -> Side {
        Side::on(merkle_store::EngineKind::Redb)
    }

    fn on(engine: merkle_store::EngineKind) -> Side {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").expect("write");
        let options = OpenOptions {
            engine: Some(engine),
            ..OpenOptions::default()
        };
        let store = Store::open(dir.path(), &options).expect("open");
        store.scan(&ScanOptions::default()).expect("scan");
        store.add_agent("alice", Role::Writer).expect("agent");
        Side { _dir: dir, store }
    }

    /// Puts a frame on `a.rs` created at `at` ms.
    fn put(&self, content: &str, at: u64) -> Frame {
        let node = self.store.node_at("a.rs").expect("read").expect("a.rs");
        let mut f = NewFrame::new(node.node_id, "notes", "alice", content.as_bytes().to_vec());
        f.metadata.created_at_ms = at;
        let id = self.store.put_frame(f).expect("put").frame_id;
        self.store.frame(&id).expect("read").expect("stored")
    }

    fn import(&self, frames: &[&Frame]) -> ImportReport {
        self.store
            .import(Import {
                frames: frames.iter().map(|f| (*f).clone()).collect(),
                ..Import::default()
            })
            .expect("import")
    }

    fn head(&self) -> FrameId {
        let node = self.store.node_at("a.rs").expect("read").expect("a.rs");
        self.store
            .head(&node.node_id, "notes")
            .expect("read")
            .expect("a head")
            .frame_id
    }

    fn path_head(&self) -> FrameId {
        self.store
            .path_head("a.rs", "notes")
            .expect("read")
            .expect("a path head")
            .frame_id
    }

    fn assert_valid(&self) {
        assert_eq!(self.store.validate().expect("validate"), vec![]);
    }
}

#[test]
fn stores_holding_the_same_frames_show_the_same_heads_whatever_the_order() {
    let a = Side::new();
    let b = Side::new();
    // A writes at t=5 and t=20, B at t=10: three frames on one (node, type).
    let a5 = a.put("a early", 5);
    let a20 = a.put("a late", 20);
    let b10 = b.put("b", 10);
    // Each pulls the other's, one frame at a time, in opposite orders.
    assert_eq!(a.import(&[&b10]).frames, 1);
    b.import(&[&a20]);
    b.import(&[&a5]);
    assert_eq!((a.head(), b.head()), (a20.frame_id, a20.frame_id));
    assert_eq!((a.path_head(), b.path_head()), (a20.frame_id, a20.frame_id));
    // Each appended last a frame that did not outrank the head: the heads table names it.
    let named = |side: &Side| {
        let space = side.store.space().expect("space");
        space
            .iter()
            .find(|s| s.kind == "heads")
            .map_or(0, |s| s.entries)
    };
    assert_eq!((named(&a), named(&b)), (1, 1));
    a.assert_valid();
    b.assert_valid();
    // Importing what is already there changes nothing.
    assert_eq!(
        a.import(&[&a5, &b10]),
        ImportReport {
            skipped: 2,
            seq_before: 3,
            seq_after: 3,
            ..ImportReport::default()
        }
    );
    // A frame put locally becomes the head even when stamped earlier; validate accepts both
    // rules in one history.
    let late_local = b.put("b again", 1);
    assert_eq!(b.head(), late_local.frame_id);
    assert_eq!(named(&b), 0, "the latest entry is the head again");
    b.assert_valid();
}

/// One import holding frames below and above the head of one (node, type): the head table
/// names the head while a frame below it is the latest entry, and no longer once one above
/// it is; on every engine.
#[test]
fn one_import_of_frames_below_and_above_the_head_moves_it_once() {
    for engine in merkle_store::EngineKind::available() {
        let a = Side::on(engine);
        let b = Side::on(engine);
        let below = [a.put("a 5", 5), a.put("a 7", 7)];
        let above = a.put("a 20", 20);
        let head = b.put("b 10", 10);
        b.import(&[&below[0], &below[1]]);
        assert_eq!(b.head(), head.frame_id, "{engine:?}");
        b.assert_valid();
        b.import(&[&below[0], &above, &below[1]]);
        assert_eq!(b.head(), above.frame_id, "{engine:?}");
        let space = b.store.space().expect("space");
        let named = space
            .iter()
            .find(|s| s.kind == "heads")
            .map_or(0, |s| s.entries);
        assert_eq!(named, 0, "{engine:?}: the latest entry is the head");
        b.assert_valid();
        let c = Side::on(engine);
        let only = c.put("c 10", 10);
        c.import(&[&below[1], &above, &below[0]]);
        assert_eq!(c.head(), above.frame_id, "{engine:?}");
        assert_ne!(c.head(), only.frame_id);
        c.assert_valid();
    }
}

#[test]
fn push_reads_frames_after_a_sequence_number_and_memos() {
    let a = Side::new();
    let f1 = a.put("one", 1);
    let f2 = a.put("two", 2);
    let all = a.store.frames_after(0).expect("read");
    assert_eq!(all, vec![(f1.seq, f1.frame_id), (f2.seq, f2.frame_id)]);
    assert_eq!(
        a.store.frames_after(f1.seq).expect("read"),
        vec![(f2.seq, f2.frame_id)]
    );
    let key = merkle_store::hash::content_hash(b"inputs");
    a.store.put_memos(&[(key, f2.frame_id)]).expect("memo");
    assert_eq!(a.store.memos().expect("read"), vec![(key, f2.frame_id)]);
    assert_eq!(a.store.marker("remote:x").expect("read"), None);
    a.store.set_marker("remote:x", 7).expect("write");
    assert_eq!(a.store.marker("remote:x").expect("read"), Some(7));
}

#[test]
fn an_import_with_any_bad_item_is_refused_by_name_and_writes_nothing() {
    let a = Side::new();
    let b = Side::new();
    let good = a.put("good", 1);
    let mut forged = a.put("original", 2);
    forged.content = b"forged".to_vec();
    let before = b.store.frame_seq().expect("read");
    let err = b
        .store
        .import(Import {
            frames: vec![good.clone(), forged.clone()],
            ..Import::default()
        })
        .expect_err("a forged frame is refused");
    assert!(
        matches!(&err, Error::Refused { item, .. } if *item == format!("frame {}", forged.frame_id)),
        "{err}"
    );
    assert_eq!(b.store.frame_seq().expect("read"), before);
    assert!(!b.store.has_frame(&good.frame_id).expect("read"));

    // A node record that does not hash to its id, and a memo pointing at no frame.
    let mut node = a.store.node_at("a.rs").expect("read").expect("a.rs");
    node.path = "b.rs".to_owned();
    let err = b
        .store
        .import(Import {
            nodes: vec![node.clone()],
            ..Import::default()
        })
        .expect_err("a node under another path is refused");
    assert!(
        err.to_string()
            .starts_with(&format!("refused node {}", node.node_id)),
        "{err}"
    );
    let key = merkle_store::hash::content_hash(b"k");
    let err = b
        .store
        .import(Import {
            memos: vec![(key, forged.frame_id)],
            ..Import::default()
        })
        .expect_err("a dangling memo is refused");
    assert!(
        err.to_string().starts_with(&format!("refused memo {key}")),
        "{err}"
    );
    // A frame of an agent the store does not know, imported without it.
    let c = Side::new();
    c.store.add_agent("carol", Role::Writer).expect("agent");
    let node_c = c.store.node_at("a.rs").expect("read").expect("a.rs");
    let id = c
        .store
        .put_frame(NewFrame::new(
            node_c.node_id,
            "notes",
            "carol",
            b"c".to_vec(),
        ))
        .expect("put")
        .frame_id;
    let carols = c.store.frame(&id).expect("read").expect("stored");
    let err = b
        .store
        .import(Import {
            frames: vec![carols.clone()],
            ..Import::default()
        })
        .expect_err("an unknown agent is refused");
    assert!(err.to_string().contains("agent \"carol\""), "{err}");
    // With the agent it lands, and the agent is registered with its role.
    let report = b
        .store
        .import(Import {
            frames: vec![carols],
            agents: vec![("carol".to_owned(), Role::Writer)],
            ..Import::default()
        })
        .expect("import");
    assert_eq!((report.frames, report.agents), (1, 1));
    b.assert_valid();
}

/// A scanned workspace with two files, `a.rs` and `b.rs`, and a writer `alice`.
fn two_files() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").expect("write");
    std::fs::write(dir.path().join("b.rs"), "fn b() {}\n").expect("write");
    let store = Store::open(dir.path(), &OpenOptions::default()).expect("open");
    store.scan(&ScanOptions::default()).expect("scan");
    store.add_agent("alice", Role::Writer).expect("agent");
    (dir, store)
}

fn node_of(store: &Store, path: &str) -> merkle_store::NodeRecord {
    store.node_at(path).expect("read").expect("a node")
}

#[test]
fn a_frame_moved_onto_another_node_is_refused_by_name_skipped_on_request_and_never_put() {
    let (_a_dir, a) = two_files();
    let (_b_dir, b) = two_files();
    let (node_a, node_b) = (node_of(&a, "a.rs"), node_of(&a, "b.rs"));
    let put = |content: &str| {
        let id = a
            .put_frame(NewFrame::new(
                node_a.node_id,
                "summary",
                "alice",
                content.as_bytes().to_vec(),
            ))
            .expect("put")
            .frame_id;
        a.frame(&id).expect("read").expect("stored")
    };
    let honest = put("what a.rs does");
    let mut moved = put("a.rs's summary, shown on b.rs");
    moved.node_id = node_b.node_id;
    // Its id still re-derives: the FrameID does not cover the node, the basis does.
    assert_eq!(moved.derive_id(), moved.frame_id);
    let import = || Import {
        frames: vec![honest.clone(), moved.clone()],
        ..Import::default()
    };

    let err = b.import(import()).expect_err("a moved frame is refused");
    let reason = format!(
        "refused frame {}: it is on node {} (\"b.rs\"), but its basis is node {} (\"a.rs\"): \
         a frame made for one node, moved onto another",
        moved.frame_id, node_b.node_id, node_a.node_id
    );
    assert_eq!(err.to_string(), reason);
    assert_eq!(b.frames_after(0).expect("read"), vec![]);

    // A dry run checks and counts, and writes nothing.
    let skip = ImportOptions {
        skip_invalid: true,
        dry_run: true,
    };
    let report = b.import_with(import(), &skip).expect("a dry run");
    assert_eq!(report.frames, 1);
    assert_eq!(
        report.refused.iter().map(|r| &r.item).collect::<Vec<_>>(),
        vec![&format!("frame {}", moved.frame_id)]
    );
    assert_eq!(b.frames_after(0).expect("read"), vec![]);

    // Skipping stores the verified rest and names what it left out.
    let skip = ImportOptions {
        skip_invalid: true,
        dry_run: false,
    };
    let report = b.import_with(import(), &skip).expect("import the rest");
    assert_eq!((report.frames, report.refused.len()), (1, 1));
    assert_eq!(
        b.frames_after(0)
            .expect("read")
            .into_iter()
            .map(|(_, id)| id)
            .collect::<Vec<_>>(),
        vec![honest.frame_id]
    );
    assert_eq!(b.validate().expect("validate"), vec![]);

    // Nor can a frame be put with another node's id as its basis.
    let mut new = NewFrame::new(node_b.node_id, "summary", "alice", b"x".to_vec());
    new.basis = Some(node_a.node_id);
    let err = b.put_frame(new).expect_err("another node's id is no basis");
    assert!(
        matches!(err, Error::BasisOfAnotherNode { ref path, .. } if path == "a.rs"),
        "{err}"
    );
}
