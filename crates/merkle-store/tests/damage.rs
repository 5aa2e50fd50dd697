//! Damaged stores: a record whose bytes are wrong, a file whose pages are garbage, a store
//! opened with the other engine. Each must be an error (or a `validate` problem) that names
//! what is at fault, never a panic, a default or a second store.
use std::path::Path;

use merkle_store::{EngineKind, Error, NewFrame, OpenOptions, Role, ScanOptions, Store};
use pretty_assertions::assert_eq;
use redb::ReadableTable;

fn open(root: &Path, opts: &OpenOptions) -> merkle_store::Result<Store> {
    Store::open(root, opts)
}

/// A scanned workspace with an agent and two frames on its README.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("README.md"), "# readme\n").expect("write");
    std::fs::create_dir_all(dir.path().join("src")).expect("mkdir");
    std::fs::write(dir.path().join("src/lib.rs"), "pub fn f() {}\n").expect("write");
    let store = open(dir.path(), &OpenOptions::default()).expect("open");
    store.scan(&ScanOptions::default()).expect("scan");
    store.add_agent("a", Role::Writer).expect("add agent");
    let node = store
        .node_at("README.md")
        .expect("node_at")
        .expect("README");
    for text in ["one", "two"] {
        // The first derived from README's sources (in the basis index), the second from
        // README itself (found through its history).
        let basis = (text == "one").then(|| merkle_store::hash::content_hash(ONE_BASIS));
        let new = NewFrame::new(node.node_id, "note", "a", text.as_bytes().to_vec());
        store.put_frame(NewFrame { basis, ..new }).expect("put");
        // The latest frame is the one created last, by the millisecond, then by id: two in
        // one millisecond would make either the head as their ids fell.
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
    dir
}

/// What the first note frame of [`workspace`] was derived from.
const ONE_BASIS: &[u8] = b"README's sources";

/// Writes `value` under `key` in the redb store's meta table, as damage on disk would.
fn damage_meta(root: &Path, key: &[u8], value: &[u8]) {
    let db = redb::Database::create(root.join(".merkle/store.redb")).expect("open redb");
    let txn = db.begin_write().expect("begin");
    {
        let def: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("meta");
        let mut t = txn.open_table(def).expect("meta table");
        t.insert(key, value).expect("insert");
    }
    txn.commit().expect("commit");
}

#[test]
fn a_damaged_frame_sequence_stops_puts_instead_of_restarting_at_zero() {
    let dir = workspace();
    damage_meta(dir.path(), b"frame_seq", &[1, 2, 3]);
    let store = open(dir.path(), &OpenOptions::default()).expect("open");
    let node = store
        .node_at("README.md")
        .expect("node_at")
        .expect("README");
    let history_before = store.frames_of(&node.node_id, None).expect("frames");

    let expected = "corrupt record in table meta at key \"frame_seq\": expected a frame \
                    sequence (8 bytes), found 3 bytes that are not one";
    let err = store
        .put_frame(NewFrame::new(node.node_id, "note", "a", b"three".to_vec()))
        .expect_err("a put over a damaged counter must fail");
    assert!(err.to_string().ends_with(expected), "{err}");
    let err = store.frame_seq().expect_err("frame_seq must fail");
    assert_eq!(err.to_string(), expected);
    // Nothing was overwritten.
    assert_eq!(
        store.frames_of(&node.node_id, None).expect("frames"),
        history_before
    );
    let problems = store.validate().expect("validate");
    assert_eq!(
        problems
            .iter()
            .map(|p| p.message.as_str())
            .collect::<Vec<_>>(),
        vec![expected]
    );
}

#[test]
fn damaged_root_and_counts_records_are_errors_and_problems() {
    let dir = workspace();
    damage_meta(dir.path(), b"root", b"short");
    damage_meta(dir.path(), b"counts", &[0; 17]);
    let store = open(dir.path(), &OpenOptions::default()).expect("open");
    let err = store.root().expect_err("root must fail");
    assert!(
        matches!(&err, Error::Corrupt { table: "meta", key, .. } if key == "\"root\""),
        "{err}"
    );
    let problems: Vec<String> = store
        .validate()
        .expect("validate")
        .into_iter()
        .map(|p| p.message)
        .collect();
    assert_eq!(
        problems,
        vec![
            "corrupt record in table meta at key \"root\": expected a root hash (32 bytes), \
             found 5 bytes that are not one"
                .to_owned(),
            "corrupt record in table meta at key \"counts\": expected two counts (16 bytes), \
             found 17 bytes that are not one"
                .to_owned(),
        ]
    );
}

/// Overwrites the store file after its first 4 KiB (redb's header page) with garbage, keeping
/// its length.
fn garble_after_header(root: &Path) -> std::path::PathBuf {
    let path = root.join(".merkle/store.redb");
    let mut bytes = std::fs::read(&path).expect("read store file");
    let mut x: u32 = 0x9e37_79b9;
    for b in bytes.iter_mut().skip(4096) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *b = x as u8;
    }
    std::fs::write(&path, &bytes).expect("write store file");
    path
}

#[test]
fn a_store_file_with_garbage_after_its_header_is_reported_damaged_by_every_call() {
    let dir = workspace();
    let file = garble_after_header(dir.path());
    for read_only in [true, false] {
        let opts = OpenOptions {
            read_only,
            ..OpenOptions::default()
        };
        let store = match open(dir.path(), &opts) {
            Ok(store) => store,
            Err(e) => {
                assert_damaged(&e, &file);
                continue;
            }
        };
        let calls: Vec<(&str, Result<(), Error>)> = vec![
            ("validate", store.validate().map(drop)),
            ("status", store.status().map(drop)),
            ("node_at", store.node_at("README.md").map(drop)),
            ("root", store.root().map(drop)),
            ("counts", store.counts().map(drop)),
            ("agents", store.agents().map(drop)),
        ];
        for (name, r) in calls {
            match r {
                Err(e) => assert_damaged(&e, &file),
                Ok(()) => panic!("{name} read a garbled store without an error"),
            }
        }
    }
}

fn assert_damaged(e: &Error, file: &Path) {
    let text = e.to_string();
    assert!(
        matches!(e, Error::Damaged { .. }) && text.contains(&file.display().to_string()),
        "{text}"
    );
}

#[test]
fn opening_a_store_with_the_other_engine_is_refused_and_creates_nothing() {
    let dir = workspace();
    let before: Vec<_> = std::fs::read_dir(dir.path().join(".merkle"))
        .expect("store folder")
        .map(|e| e.expect("entry").file_name())
        .collect();
    for read_only in [false, true] {
        let err = open(
            dir.path(),
            &OpenOptions {
                engine: Some(EngineKind::Sled),
                read_only,
                ..OpenOptions::default()
            },
        )
        .expect_err("sled on a redb store must be refused");
        assert!(
            matches!(
                err,
                Error::EngineMismatch {
                    requested: "sled",
                    holds: "redb",
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string().contains("holds a redb store, not sled"),
            "{err}"
        );
    }
    let after: Vec<_> = std::fs::read_dir(dir.path().join(".merkle"))
        .expect("store folder")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(after, before);
}

#[cfg(feature = "sled")]
#[test]
fn opening_a_sled_store_with_redb_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "a\n").expect("write");
    let sled = OpenOptions {
        engine: Some(EngineKind::Sled),
        ..OpenOptions::default()
    };
    open(dir.path(), &sled)
        .expect("open sled")
        .scan(&ScanOptions::default())
        .expect("scan");
    let err = open(
        dir.path(),
        &OpenOptions {
            engine: Some(EngineKind::Redb),
            ..OpenOptions::default()
        },
    )
    .expect_err("redb on a sled store must be refused");
    assert!(
        err.to_string().contains("holds a sled store, not redb"),
        "{err}"
    );
    assert!(!dir.path().join(".merkle/store.redb").exists());
}

/// The workspace's README and `src/lib.rs` nodes and the README's head note, the store
/// closed after, for a test to damage.
fn readme_lib_and_head(
    root: &Path,
) -> (
    merkle_store::NodeRecord,
    merkle_store::NodeRecord,
    merkle_store::Frame,
) {
    let store = open(root, &OpenOptions::default()).expect("open");
    let readme = store.node_at("README.md").expect("read").expect("README");
    let lib = store.node_at("src/lib.rs").expect("read").expect("lib.rs");
    let head = store
        .head(&readme.node_id, "note")
        .expect("read")
        .expect("a head");
    (readme, lib, head)
}

#[test]
fn validate_finds_a_frame_moved_onto_another_node() {
    let dir = workspace();
    let (readme, lib, frame) = readme_lib_and_head(dir.path());
    // The frame's record names README's node; rewrite it to name lib.rs's, as an edit of the
    // record (or an import that did not check) would.
    let db = redb::Database::create(dir.path().join(".merkle/store.redb")).expect("open redb");
    let txn = db.begin_write().expect("begin");
    {
        let def: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("frames");
        let mut t = txn.open_table(def).expect("frames table");
        let record = t
            .get(frame.frame_id.0.as_slice())
            .expect("get")
            .expect("the frame's record")
            .value()
            .to_vec();
        // A record is stored behind a packing tag: 0 and the bytes, or 1 and an lz4 block.
        let record = match record.split_first() {
            Some((0, raw)) => raw.to_vec(),
            Some((1, block)) => lz4_flex::block::decompress_size_prepended(block).expect("unpack"),
            _ => panic!("a frame record without a packing tag"),
        };
        let at = record
            .windows(32)
            .position(|w| w == readme.node_id.0)
            .expect("the record names its node");
        let mut moved = record.clone();
        moved[at..at + 32].copy_from_slice(&lib.node_id.0);
        moved.insert(0, 0);
        t.insert(frame.frame_id.0.as_slice(), moved.as_slice())
            .expect("insert");
    }
    txn.commit().expect("commit");
    drop(db);

    let store = open(dir.path(), &OpenOptions::default()).expect("open");
    let problems = store.validate().expect("validate");
    // A record whose basis is its own node names it once: moved, the frame's basis moved with
    // it, and its id no longer derives from its fields.
    let expected = format!(
        "frame {}: stored id does not match the id derived from its fields",
        frame.frame_id
    );
    assert!(
        problems
            .iter()
            .any(|p| p.message == expected && p.path.as_deref() == Some("src/lib.rs")),
        "{problems:#?}"
    );
}

/// What [`damage_every_index`] did: the first frame's id, and the keys it wrote.
struct Damage {
    one: Vec<u8>,
    nowhere: [u8; 32],
    dangling_history: Vec<u8>,
    stray_head: Vec<u8>,
    dangling_basis: Vec<u8>,
}

/// Damages every index README's two note frames are in, one way each (see the test below).
fn damage_every_index(
    root: &Path,
    readme: &merkle_store::NodeRecord,
    lib: &merkle_store::NodeRecord,
    two: &merkle_store::Frame,
) -> Damage {
    let nowhere = [7u8; 32];
    let db = redb::Database::create(root.join(".merkle/store.redb")).expect("open redb");
    let txn = db.begin_write().expect("begin");
    let table =
        |name: &'static str| -> redb::TableDefinition<'static, &'static [u8], &'static [u8]> {
            redb::TableDefinition::new(name)
        };
    let mut head_key = readme.node_id.0.to_vec();
    head_key.extend_from_slice(b"note");
    let mut stray_head = lib.node_id.0.to_vec();
    stray_head.extend_from_slice(b"note");
    let mut dangling_history = head_key.clone();
    dangling_history.push(0);
    dangling_history.extend_from_slice(&99u64.to_be_bytes());
    let mut dangling_basis = nowhere.to_vec();
    dangling_basis.extend_from_slice(&[8u8; 32]);
    let one = {
        let mut t = txn.open_table(table("node_frames")).expect("history");
        // The first frame's entry goes; one naming no frame comes.
        let (key, value) = t
            .iter()
            .expect("iter")
            .map(|e| e.expect("entry"))
            .map(|(k, v)| (k.value().to_vec(), v.value().to_vec()))
            .find(|(_, v)| v[..32] != two.frame_id.0)
            .expect("the first frame's entry");
        t.remove(key.as_slice()).expect("remove");
        let mut value_of_nothing = nowhere.to_vec();
        value_of_nothing.extend_from_slice(&value[32..]);
        t.insert(dangling_history.as_slice(), value_of_nothing.as_slice())
            .expect("insert");
        value[..32].to_vec()
    };
    {
        let mut t = txn.open_table(table("basis")).expect("basis");
        let mut key = merkle_store::hash::content_hash(ONE_BASIS).0.to_vec();
        key.extend_from_slice(&one);
        assert!(t.remove(key.as_slice()).expect("remove").is_some());
        t.insert(dangling_basis.as_slice(), &[][..])
            .expect("insert");
    }
    {
        // The head is the latest entry, named nowhere: an entry naming the first frame, whose
        // history entry went, may not be it.
        let mut t = txn.open_table(table("heads")).expect("heads");
        assert!(t.get(head_key.as_slice()).expect("get").is_none());
        t.insert(head_key.as_slice(), one.as_slice())
            .expect("insert");
        t.insert(stray_head.as_slice(), &two.frame_id.0[..])
            .expect("insert");
    }
    {
        // README's path head is its node's head, implied: one recorded names the first frame.
        let mut t = txn.open_table(table("path_heads")).expect("path heads");
        assert!(t.get(&b"README.md\0note"[..]).expect("get").is_none());
        t.insert(&b"README.md\0note"[..], one.as_slice())
            .expect("insert");
        t.insert(&b"src/lib.rs\0note"[..], &two.frame_id.0[..])
            .expect("insert");
    }
    {
        let mut t = txn.open_table(table("memo")).expect("memo");
        t.insert(&[9u8; 32][..], &nowhere[..]).expect("insert");
    }
    txn.commit().expect("commit");
    drop(db);

    Damage {
        one,
        nowhere,
        dangling_history,
        stray_head,
        dangling_basis,
    }
}

/// Every index a frame is in, damaged in each way it can be: an entry gone, an entry naming
/// no frame, an entry where none belongs. `validate` names each one, and nothing else.
#[test]
fn validate_names_each_missing_stray_or_dangling_index_entry() {
    let dir = workspace();
    let (readme, lib, two) = readme_lib_and_head(dir.path());
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let Damage {
        one,
        nowhere,
        dangling_history,
        stray_head,
        dangling_basis,
    } = damage_every_index(dir.path(), &readme, &lib, &two);
    let store = open(dir.path(), &OpenOptions::default()).expect("open");
    let mut problems: Vec<(Option<String>, String)> = store
        .validate()
        .expect("validate")
        .into_iter()
        .map(|p| (p.path, p.message))
        .collect();
    problems.sort();
    let readme_at = Some("README.md".to_owned());
    let mut expected = vec![
        (
            readme_at.clone(),
            format!("frame {}: missing from the node's history", hex(&one)),
        ),
        (
            readme_at.clone(),
            format!("frame {}: missing from the basis index", hex(&one)),
        ),
        (
            None,
            format!(
                "history: entry {} points at a missing frame",
                hex(&dangling_history)
            ),
        ),
        (
            readme_at.clone(),
            format!(
                "head of type \"note\" is {}, but the latest frame is {}",
                hex(&one),
                two.frame_id
            ),
        ),
        (
            None,
            format!("heads: entry {} has no frames in history", hex(&stray_head)),
        ),
        (
            readme_at.clone(),
            format!(
                "path head of type \"note\" is not the latest frame {}",
                two.frame_id
            ),
        ),
        (
            Some("src/lib.rs".to_owned()),
            "path head of type \"note\" has no frame at that path".to_owned(),
        ),
        (
            None,
            format!(
                "memo {}: points at {}, which is not a stored frame",
                hex(&[9u8; 32]),
                hex(&nowhere)
            ),
        ),
        (
            None,
            format!(
                "basis: entry {} does not match a frame",
                hex(&dangling_basis)
            ),
        ),
    ];
    expected.sort();
    assert_eq!(problems, expected);
}

/// A record as a store written before bodies held it (its sequence first, fixed-width
/// lengths, its basis and content in place), behind the packing tag of raw bytes.
fn record_before_bodies(f: &merkle_store::Frame, node: &merkle_store::NodeId) -> Vec<u8> {
    let mut out = vec![0u8];
    let str8 = |out: &mut Vec<u8>, s: &[u8]| {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s);
    };
    out.extend_from_slice(&f.seq.to_le_bytes());
    out.extend_from_slice(&node.0);
    str8(&mut out, f.frame_type.as_bytes());
    str8(&mut out, f.agent_id.as_bytes());
    out.extend_from_slice(&f.basis.0);
    str8(&mut out, &f.content);
    out.extend_from_slice(&f.metadata.created_at_ms.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&0u64.to_le_bytes());
    out
}

/// A frame record written before bodies is read as it is; moved onto another node, it keeps
/// its basis, which `validate` finds is the node it was made for.
#[test]
fn validate_reads_a_record_written_before_bodies_and_finds_it_moved() {
    let dir = workspace();
    let (readme, lib, frame) = readme_lib_and_head(dir.path());
    let write = |node: &merkle_store::NodeId| {
        let db = redb::Database::create(dir.path().join(".merkle/store.redb")).expect("redb");
        let txn = db.begin_write().expect("begin");
        {
            let def: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("frames");
            let mut t = txn.open_table(def).expect("frames table");
            let record = record_before_bodies(&frame, node);
            t.insert(frame.frame_id.0.as_slice(), record.as_slice())
                .expect("insert");
        }
        txn.commit().expect("commit");
    };
    write(&readme.node_id);
    let store = open(dir.path(), &OpenOptions::default()).expect("open");
    assert_eq!(
        store.frame(&frame.frame_id).expect("read"),
        Some(frame.clone())
    );
    assert_eq!(store.validate().expect("validate"), vec![]);
    drop(store);

    write(&lib.node_id);
    let store = open(dir.path(), &OpenOptions::default()).expect("open");
    let problems = store.validate().expect("validate");
    let expected = format!(
        "frame {}: its basis is node {} (\"README.md\"), another node: a frame made for one \
         node, moved onto another",
        frame.frame_id, readme.node_id
    );
    assert!(
        problems
            .iter()
            .any(|p| p.message == expected && p.path.as_deref() == Some("src/lib.rs")),
        "{problems:#?}"
    );
}

/// A store written before own-basis frames left the basis index has an entry for each: it
/// stays valid, and a frame found both ways is listed once.
#[test]
fn an_own_basis_entry_of_an_earlier_store_stays_valid() {
    let dir = workspace();
    let (readme, _, two) = readme_lib_and_head(dir.path());
    let store = open(dir.path(), &OpenOptions::default()).expect("open");
    let before = store.frames_with_basis(&readme.node_id).expect("basis");
    assert_eq!(
        before,
        vec![two.frame_id],
        "the own-basis frame, through its history"
    );
    drop(store);
    let db = redb::Database::create(dir.path().join(".merkle/store.redb")).expect("redb");
    let txn = db.begin_write().expect("begin");
    {
        let def: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("basis");
        let mut t = txn.open_table(def).expect("basis table");
        let mut key = readme.node_id.0.to_vec();
        key.extend_from_slice(&two.frame_id.0);
        t.insert(key.as_slice(), &[][..]).expect("insert");
    }
    txn.commit().expect("commit");
    drop(db);
    let store = open(dir.path(), &OpenOptions::default()).expect("open");
    assert_eq!(
        store.frames_with_basis(&readme.node_id).expect("basis"),
        before
    );
    assert_eq!(store.validate().expect("validate"), vec![]);
}
