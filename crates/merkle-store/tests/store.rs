//! The store's conformance suite: every test runs against every engine built in, through the
//! public API only.
use std::path::Path;
use std::sync::Arc;

use merkle_store::{
    EngineKind, Error, NewFrame, NodeKind, OpenOptions, Role, ScanOptions, Store, hash,
};
use pretty_assertions::assert_eq;

mod common;

/// A workspace on disk and a store in it.
struct Fixture {
    dir: tempfile::TempDir,
    store: Store,
}

impl Fixture {
    fn new(engine: EngineKind) -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        write_tree(dir.path());
        let store = open(dir.path(), engine);
        // After the store's folder is made in it: the first scan can then trust every
        // folder's stat, and what later scans write does not depend on the clock.
        common::settle(dir.path());
        Fixture { dir, store }
    }

    fn scan(&self) -> merkle_store::ScanReport {
        self.store.scan(&ScanOptions::default()).expect("scan")
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }

    fn node(&self, path: &str) -> merkle_store::NodeRecord {
        self.store
            .node_at(path)
            .expect("node_at")
            .unwrap_or_else(|| panic!("no node at {path}"))
    }
}

/// Opens the store, waiting up to 2 s while another handle still holds it, as the CLI does:
/// sled's background flusher keeps its file lock for a moment after the `Db` is dropped, so a
/// reopen right after a drop may find it taken.
fn open(root: &Path, engine: EngineKind) -> Store {
    open_with(
        root,
        &OpenOptions {
            engine: Some(engine),
            ..OpenOptions::default()
        },
    )
}

/// [`open`] with any options.
fn open_with(root: &Path, opts: &OpenOptions) -> Store {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        match Store::open(root, opts) {
            Err(Error::StoreInUse { .. }) if std::time::Instant::now() < give_up => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            opened => return opened.expect("open store"),
        }
    }
}

/// The fixture tree: nested directories, an ignored file, and on unix symlinks.
fn write_tree(root: &Path) {
    let files: &[(&str, &str)] = &[
        ("README.md", "# fixture\n"),
        (".gitignore", "*.log\n/build/\n"),
        ("src/lib.rs", "pub fn answer() -> u32 { 42 }\n"),
        ("src/util/mod.rs", "//! utilities\n"),
        ("src/util/deep/leaf.txt", "leaf\n"),
        ("docs/guide.md", "guide\n"),
        ("debug.log", "ignored\n"),
        ("build/out.bin", "ignored\n"),
        ("docs/.gitignore", "draft.md\n"),
        ("docs/draft.md", "ignored by a nested .gitignore\n"),
    ];
    // Files older than any scan, so that no entry is racy (see the scan's racy-timestamp rule)
    // and the counts of hashed files below are exact.
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
    for (path, content) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().expect("has parent")).expect("mkdir");
        std::fs::write(&p, content).expect("write");
        std::fs::File::options()
            .write(true)
            .open(&p)
            .and_then(|f| f.set_modified(old))
            .expect("set mtime");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("src/lib.rs", root.join("link-to-lib")).expect("symlink");
        std::os::unix::fs::symlink("src", root.join("link-to-dir")).expect("symlink");
        std::os::unix::fs::symlink("nowhere", root.join("dangling")).expect("symlink");
    }
}

macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod redb_engine {
            $(#[test] fn $name() { super::$name(merkle_store::EngineKind::Redb) })*
        }
        #[cfg(feature = "sled")]
        mod sled_engine {
            $(#[test] fn $name() { super::$name(merkle_store::EngineKind::Sled) })*
        }
    };
}

conformance!(
    scan_records_the_tree_and_honours_gitignore,
    symlinks_are_recorded_not_followed,
    root_hash_is_independent_of_engine_and_location,
    rescan_of_one_edit_touches_only_its_ancestors,
    noop_rescan_hashes_and_writes_nothing,
    racy_entries_are_hashed_again,
    put_is_idempotent_and_keeps_history,
    frame_id_depends_on_agent_and_basis,
    readers_and_unknown_agents_are_refused,
    heads_follow_the_latest_frame,
    basis_index_finds_derived_frames,
    frame_on_another_node_with_the_same_id_is_a_conflict,
    node_addressing_by_path_and_prefix,
    concurrent_writers_keep_the_store_consistent,
    store_folder_is_gitignored_and_never_scanned,
    reopened_store_keeps_everything,
    path_heads_follow_a_file_across_versions,
    memos_find_frames_by_their_inputs_and_survive_a_reopen,
    agents_keep_their_settings_across_role_changes_and_a_reopen,
    derived_data_is_kept_by_namespace_and_key_and_survives_a_reopen,
    tree_files_lists_the_leaves_with_their_content_hashes,
    a_leaf_at_its_path_is_its_stored_node,
    a_large_tree_is_listed_whole_and_in_order_when_read_in_halves,
    the_disk_is_vouched_for_only_while_it_holds_the_scanned_tree,
    a_tree_built_from_its_leaves_is_the_scanned_tree,
    status_names_the_folders_no_file_change_implies,
    notes_are_kept_replaced_and_removed_by_name_across_a_reopen,
);

fn notes_are_kept_replaced_and_removed_by_name_across_a_reopen(engine: EngineKind) {
    let f = Fixture::new(engine);
    assert_eq!(f.store.note("batch").expect("note"), None);
    f.store.set_note("batch", Some(b"one")).expect("set");
    f.store.set_note("other", Some(b"two")).expect("set");
    f.store.set_note("batch", Some(b"three")).expect("replace");
    let Fixture { dir, store } = f;
    drop(store);
    let reopened = open(dir.path(), engine);
    assert_eq!(
        reopened.note("batch").expect("note"),
        Some(b"three".to_vec())
    );
    reopened.set_note("batch", None).expect("remove");
    assert_eq!(reopened.note("batch").expect("note"), None);
    assert_eq!(reopened.note("other").expect("note"), Some(b"two".to_vec()));
    // Notes live beside the tree's own records and disturb none of them.
    assert!(reopened.validate().expect("validate").is_empty());
}

fn derived_data_is_kept_by_namespace_and_key_and_survives_a_reopen(engine: EngineKind) {
    let f = Fixture::new(engine);
    let key = hash::content_hash(b"some content");
    assert_eq!(f.store.derived("facts:v1", &key).expect("derived"), None);
    f.store
        .put_derived("facts:v1", &[(key, b"one".to_vec())])
        .expect("put derived");
    assert_eq!(
        f.store.derived("facts:v1", &key).expect("derived"),
        Some(b"one".to_vec())
    );
    // Namespaces are apart, and a later record of a key replaces the earlier one.
    assert_eq!(f.store.derived("facts:v2", &key).expect("derived"), None);
    f.store
        .put_derived("facts:v1", &[(key, Vec::new())])
        .expect("put derived");
    assert_eq!(
        f.store.derived("facts:v1", &key).expect("derived"),
        Some(Vec::new())
    );
    let err = f.store.derived("", &key).expect_err("an empty namespace");
    assert!(err.to_string().contains("namespace"), "{err}");
    let Fixture { dir, store } = f;
    drop(store);
    let reopened = open(dir.path(), engine);
    assert_eq!(
        reopened.derived("facts:v1", &key).expect("derived"),
        Some(Vec::new())
    );
}

/// `node_at` answers a leaf from its tree entry alone: the same record as the node stored under
/// its NodeID, for files and links, after a first scan and after a rescan that keeps the
/// unchanged files' nodes and makes a new one for an edited file.
fn a_leaf_at_its_path_is_its_stored_node(engine: EngineKind) {
    let f = Fixture::new(engine);
    let same = |f: &Fixture| {
        let files = f.store.tree_files().expect("tree files");
        assert!(files.len() >= 3, "{files:?}");
        for t in &files {
            let at = f.store.node_at(&t.path).expect("node_at").expect("listed");
            let stored = f.store.node(&t.node_id).expect("node").expect("stored");
            assert_eq!(at, stored, "{}", t.path);
        }
    };
    f.scan();
    same(&f);
    std::fs::write(f.path("src/lib.rs"), "pub fn answer() -> u64 { 4242 }\n").expect("edit");
    f.scan();
    same(&f);
    assert_eq!(f.node("src/lib.rs").size, 32);
}

fn tree_files_lists_the_leaves_with_their_content_hashes(engine: EngineKind) {
    let f = Fixture::new(engine);
    assert!(matches!(
        f.store.tree_files(),
        Err(merkle_store::Error::NotScanned)
    ));
    f.scan();
    let files = f.store.tree_files().expect("tree files");
    let paths: Vec<&str> = files.iter().map(|t| t.path.as_str()).collect();
    assert!(paths.contains(&"src/lib.rs") && paths.contains(&"docs/guide.md"));
    assert!(!paths.contains(&"src") && !paths.contains(&"debug.log"));
    assert!(paths.windows(2).all(|w| w[0] < w[1]), "{paths:?}");
    let lib = files.iter().find(|t| t.path == "src/lib.rs").expect("lib");
    assert_eq!(
        lib.content_hash,
        hash::content_hash(b"pub fn answer() -> u32 { 42 }\n")
    );
    assert_eq!(lib.node_id, f.node("src/lib.rs").node_id);
}

/// A scan that writes a large tree keeps a middle path, and the listing is read in two halves
/// side by side: every file, once, in path order; and again after most of the tree is
/// removed, the middle path then stale. The stat check reads the same entries.
fn a_large_tree_is_listed_whole_and_in_order_when_read_in_halves(engine: EngineKind) {
    let f = Fixture::new(engine);
    f.scan();
    let listed = |f: &Fixture| -> Vec<String> {
        let files = f.store.tree_files().expect("tree files");
        files.into_iter().map(|t| t.path).collect()
    };
    let small = listed(&f);
    let with = |dirs: std::ops::Range<usize>| -> Vec<String> {
        let mut all = small.clone();
        for d in dirs {
            all.extend((0..100).map(|i| format!("big/d{d:02}/f{i:03}.txt")));
        }
        all.sort();
        all
    };
    for d in 0..50 {
        let dir = f.path(&format!("big/d{d:02}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for i in 0..100 {
            std::fs::write(dir.join(format!("f{i:03}.txt")), format!("{d} {i}\n")).expect("write");
        }
    }
    common::settle(f.dir.path());
    let root = f.scan().root;
    assert_eq!(listed(&f), with(0..50));
    // The stat check reads the table's two halves side by side: an edit in either is seen.
    assert_eq!(f.store.unchanged_on_disk().expect("check"), Some(root));
    for path in ["big/d00/f000.txt", "big/d49/f099.txt"] {
        assert_eq!(listed(&f).len(), with(0..50).len());
        std::fs::write(f.path(path), "edited\n").expect("edit");
        assert_eq!(f.store.unchanged_on_disk().expect("check"), None, "{path}");
        common::settle(f.dir.path());
        let root = f.scan().root;
        assert_eq!(
            f.store.unchanged_on_disk().expect("check"),
            Some(root),
            "{path}"
        );
    }
    for d in 5..50 {
        std::fs::remove_dir_all(f.path(&format!("big/d{d:02}"))).expect("rm");
    }
    f.scan();
    assert_eq!(listed(&f), with(0..5));
}

/// `unchanged_on_disk` vouches for the last scan's tree exactly while a scan would find
/// nothing changed: after an edit, a new file (at the root or below), a removed file, a new
/// folder or a touch it says no until a scan records the disk again; a file racy in the scan
/// that recorded it, and a tree never scanned, are never vouched for.
fn the_disk_is_vouched_for_only_while_it_holds_the_scanned_tree(engine: EngineKind) {
    let f = Fixture::new(engine);
    let vouched = |f: &Fixture| f.store.unchanged_on_disk().expect("check");
    assert_eq!(vouched(&f), None);
    let scanned = |f: &Fixture| {
        common::settle(f.dir.path());
        f.scan().root
    };
    let root = scanned(&f);
    assert_eq!(vouched(&f), Some(root));
    let set_mtime = |f: &Fixture, path: &str, secs: u64| {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
        std::fs::File::options()
            .write(true)
            .open(f.path(path))
            .and_then(|file| file.set_modified(t))
            .expect("set mtime");
    };
    type Change<'a> = (&'a str, &'a dyn Fn(&Fixture));
    let changes: [Change; 6] = [
        ("a new file at the root", &|f| {
            std::fs::write(f.path("NEW.md"), "new\n").expect("write")
        }),
        ("an edit", &|f| {
            std::fs::write(f.path("src/lib.rs"), "pub fn answer() -> u32 { 43 }\n").expect("edit")
        }),
        ("a new file", &|f| {
            std::fs::write(f.path("src/util/deep/new.txt"), "new\n").expect("write")
        }),
        ("a removed file", &|f| {
            std::fs::remove_file(f.path("docs/guide.md")).expect("remove")
        }),
        ("a new folder", &|f| {
            std::fs::create_dir(f.path("src/util/empty")).expect("mkdir")
        }),
        ("a touch", &|f| set_mtime(f, "README.md", 1_700_000_000)),
    ];
    for (what, change) in changes {
        change(&f);
        assert_eq!(vouched(&f), None, "after {what}");
        let root = scanned(&f);
        assert_eq!(vouched(&f), Some(root), "after a scan of {what}");
    }
    // An mtime not older than the scan that recorded it could hide a same-size edit.
    let hour_ahead = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    let secs = hour_ahead
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs();
    set_mtime(&f, "README.md", secs);
    scanned(&f);
    assert_eq!(vouched(&f), None);
}

/// `tree_of_leaves` (what `report` builds a git revision's tree with) gives every node the
/// NodeID a scan of the same files gave, the root's included.
fn a_tree_built_from_its_leaves_is_the_scanned_tree(engine: EngineKind) {
    let f = Fixture::new(engine);
    let root = f.scan().root;
    let leaves = f
        .store
        .tree_files()
        .expect("tree files")
        .into_iter()
        .map(|t| (t.path, t.kind, t.content_hash))
        .collect();
    let built = merkle_store::tree_of_leaves(leaves);
    let scanned = f.store.tree_at(&root).expect("tree");
    // A scan also records empty directories, which no leaf implies.
    let scanned: merkle_store::PathTree = scanned
        .into_iter()
        .filter(|(path, _)| built.contains_key(path))
        .collect();
    assert_eq!(built, scanned);
    assert_eq!(built[""].node_id, root);
}

/// A scan records folders, empty or not; `status` names the ones that came or went with no
/// file change beneath them to say so (an empty one, one whose files are all ignored), so that
/// it is clean exactly when a scan would keep the root.
fn status_names_the_folders_no_file_change_implies(engine: EngineKind) {
    use merkle_store::Change;
    let f = Fixture::new(engine);
    f.scan();
    std::fs::create_dir_all(f.path("empty/deeper")).expect("mkdir");
    std::fs::create_dir_all(f.path("hidden")).expect("mkdir");
    std::fs::write(f.path("hidden/.gitignore"), "*\n").expect("write");
    std::fs::write(f.path("hidden/data.bin"), "x").expect("write");
    std::fs::create_dir_all(f.path("fresh")).expect("mkdir");
    std::fs::write(f.path("fresh/new.txt"), "new\n").expect("write");
    let status = f.store.status().expect("status");
    assert_eq!(
        status.changed_on_disk,
        [
            ("empty".to_owned(), Change::Added),
            ("empty/deeper".to_owned(), Change::Added),
            ("fresh/new.txt".to_owned(), Change::Added),
            ("hidden".to_owned(), Change::Added),
        ]
    );
    assert!(f.scan().changed() > 0);
    assert_eq!(f.store.status().expect("status").changed_on_disk, []);
    std::fs::remove_dir_all(f.path("empty")).expect("rmdir");
    assert_eq!(
        f.store.status().expect("status").changed_on_disk,
        [
            ("empty".to_owned(), Change::Deleted),
            ("empty/deeper".to_owned(), Change::Deleted),
        ]
    );
}

fn scan_records_the_tree_and_honours_gitignore(engine: EngineKind) {
    let f = Fixture::new(engine);
    let r = f.scan();
    let mut paths: Vec<String> = f
        .store
        .list_nodes("", true)
        .expect("list")
        .into_iter()
        .map(|n| format!("{} {}", n.kind.as_str(), n.path))
        .collect();
    paths.sort();
    let mut want = vec![
        "file .gitignore",
        "file README.md",
        "dir docs",
        "file docs/.gitignore",
        "file docs/guide.md",
        "dir src",
        "file src/lib.rs",
        "dir src/util",
        "dir src/util/deep",
        "file src/util/deep/leaf.txt",
        "file src/util/mod.rs",
    ];
    if cfg!(unix) {
        want.extend([
            "symlink dangling",
            "symlink link-to-dir",
            "symlink link-to-lib",
        ]);
    }
    want.sort();
    assert_eq!(paths, want);
    let leaves = want.iter().filter(|w| !w.starts_with("dir ")).count() as u64;
    assert_eq!((r.files, r.dirs), (leaves, 5));
    assert_eq!(r.changed(), leaves + 5);
    assert_eq!(f.store.root().expect("root"), Some(r.root));
    assert_eq!(f.store.validate().expect("validate"), vec![]);
}

fn symlinks_are_recorded_not_followed(engine: EngineKind) {
    if !cfg!(unix) {
        return;
    }
    let f = Fixture::new(engine);
    f.scan();
    let link = f.node("link-to-dir");
    assert_eq!(link.kind, NodeKind::Symlink);
    assert_eq!(link.content_hash, hash::content_hash(b"src"));
    assert!(link.children.is_empty());
    assert_eq!(
        link.node_id,
        hash::leaf_node_id(
            NodeKind::Symlink,
            "link-to-dir",
            &hash::content_hash(b"src")
        )
    );
    let dangling = f.node("dangling");
    assert_eq!(dangling.content_hash, hash::content_hash(b"nowhere"));
    // Nothing below a link to a directory is in the tree.
    assert!(
        f.store
            .node_at("link-to-dir/lib.rs")
            .expect("lookup")
            .is_none()
    );
}

fn root_hash_is_independent_of_engine_and_location(engine: EngineKind) {
    let a = Fixture::new(engine);
    let b = Fixture::new(EngineKind::Redb);
    assert_ne!(a.dir.path(), b.dir.path());
    assert_eq!(a.scan().root, b.scan().root);
}

fn rescan_of_one_edit_touches_only_its_ancestors(engine: EngineKind) {
    let f = Fixture::new(engine);
    f.scan();
    let before = f.store.list_nodes("", true).expect("list");
    std::fs::write(f.path("src/util/deep/leaf.txt"), "changed leaf\n").expect("edit");
    let r = f.scan();
    let after = f.store.list_nodes("", true).expect("list");
    let mut changed: Vec<&str> = after
        .iter()
        .filter(|n| !before.contains(n))
        .map(|n| n.path.as_str())
        .collect();
    changed.sort();
    assert_eq!(
        changed,
        ["src", "src/util", "src/util/deep", "src/util/deep/leaf.txt"]
    );
    // The file, its three ancestors and the root; one file hashed; the root plus three
    // directories recomputed; a tree entry and a node record for each of the five, plus the
    // root pointer and the scan stamp.
    assert_eq!(
        (r.changed(), r.hashed, r.dirs_recomputed, r.writes),
        (5, 1, 4, 12)
    );
    assert_eq!(
        r.changed_paths,
        [
            "",
            "src",
            "src/util",
            "src/util/deep",
            "src/util/deep/leaf.txt"
        ]
    );
    // A removal is a change too, of the removed path and what holds it.
    std::fs::remove_file(f.path("src/util/deep/leaf.txt")).expect("remove");
    assert_eq!(
        f.scan().changed_paths,
        [
            "",
            "src",
            "src/util",
            "src/util/deep",
            "src/util/deep/leaf.txt"
        ]
    );
    assert_eq!(f.store.validate().expect("validate"), vec![]);
}

fn noop_rescan_hashes_and_writes_nothing(engine: EngineKind) {
    let f = Fixture::new(engine);
    let first = f.scan();
    let third = f.scan();
    assert_eq!(third.root, first.root);
    assert_eq!((third.changed(), third.hashed, third.writes), (0, 0, 0));
    // --force hashes everything but still changes nothing.
    let forced = f
        .store
        .scan(&ScanOptions {
            force: true,
            ..ScanOptions::default()
        })
        .expect("scan");
    assert_eq!((forced.root, forced.changed()), (first.root, 0));
    assert_eq!(forced.hashed, first.files);
}

fn racy_entries_are_hashed_again(engine: EngineKind) {
    let f = Fixture::new(engine);
    // An mtime not older than the scan that recorded it could hide a later same-size edit
    // within the same timestamp tick, so such an entry is never trusted from the stat cache.
    let future = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(f.path("README.md"))
        .and_then(|file| file.set_modified(future))
        .expect("set mtime");
    f.scan();
    let again = f.scan();
    assert_eq!((again.hashed, again.changed()), (1, 0));
}

fn writer(f: &Fixture, agent: &str) {
    f.store.add_agent(agent, Role::Writer).expect("add agent");
}

fn put(f: &Fixture, path: &str, ty: &str, agent: &str, content: &str) -> merkle_store::PutOutcome {
    let node = f.node(path);
    f.store
        .put_frame(NewFrame::new(
            node.node_id,
            ty,
            agent,
            content.as_bytes().to_vec(),
        ))
        .expect("put")
}

fn put_is_idempotent_and_keeps_history(engine: EngineKind) {
    let f = Fixture::new(engine);
    f.scan();
    writer(&f, "alice");
    let a = put(&f, "src/lib.rs", "summary", "alice", "first");
    let again = put(&f, "src/lib.rs", "summary", "alice", "first");
    assert!(a.created);
    assert!(!again.created);
    assert_eq!(a.frame_id, again.frame_id);
    let b = put(&f, "src/lib.rs", "summary", "alice", "second");
    let node = f.node("src/lib.rs");
    let history: Vec<_> = f
        .store
        .frames_of(&node.node_id, Some("summary"))
        .expect("frames")
        .iter()
        .map(|fr| fr.frame_id)
        .collect();
    assert_eq!(history, vec![a.frame_id, b.frame_id]);
    let frame = f.store.frame(&a.frame_id).expect("frame").expect("present");
    assert_eq!(frame.derive_id(), a.frame_id);
    assert_eq!((frame.text(), frame.basis), (Some("first"), node.node_id));
    assert_eq!(f.store.counts().expect("counts").1, 2);
}

fn frame_id_depends_on_agent_and_basis(engine: EngineKind) {
    let f = Fixture::new(engine);
    f.scan();
    writer(&f, "alice");
    writer(&f, "bob");
    let a = put(&f, "README.md", "notes", "alice", "same");
    let b = put(&f, "README.md", "notes", "bob", "same");
    assert_ne!(a.frame_id, b.frame_id);
    let node = f.node("README.md");
    let mut other_basis = NewFrame::new(node.node_id, "notes", "alice", b"same".to_vec());
    other_basis.basis = Some(hash::content_hash(b"something else"));
    let c = f.store.put_frame(other_basis).expect("put");
    assert_ne!(a.frame_id, c.frame_id);
    // Metadata is not part of the id.
    let mut with_meta = NewFrame::new(node.node_id, "notes", "alice", b"same".to_vec());
    with_meta.metadata.model = Some("m".into());
    with_meta.metadata.created_at_ms = 1;
    assert_eq!(
        f.store.put_frame(with_meta).expect("put").frame_id,
        a.frame_id
    );
}

fn readers_and_unknown_agents_are_refused(engine: EngineKind) {
    let f = Fixture::new(engine);
    f.scan();
    f.store.add_agent("ro", Role::Reader).expect("add");
    let node = f.node("README.md");
    let err = f
        .store
        .put_frame(NewFrame::new(node.node_id, "notes", "ro", b"x".to_vec()))
        .expect_err("reader must be refused");
    assert!(
        matches!(&err, Error::Forbidden { agent, role: Role::Reader, .. } if agent == "ro"),
        "{err}"
    );
    let err = f
        .store
        .put_frame(NewFrame::new(node.node_id, "notes", "ghost", b"x".to_vec()))
        .expect_err("unknown agent must be refused");
    assert!(
        matches!(&err, Error::UnknownAgent { agent } if agent == "ghost"),
        "{err}"
    );
    let err = f
        .store
        .put_frame(NewFrame::new(
            node.node_id,
            "bad type!",
            "ro",
            b"x".to_vec(),
        ))
        .expect_err("invalid type");
    assert!(
        matches!(
            err,
            Error::Invalid {
                what: "frame type",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(f.store.counts().expect("counts").1, 0);
    assert!(f.store.heads(&node.node_id).expect("heads").is_empty());
}

fn heads_follow_the_latest_frame(engine: EngineKind) {
    let f = Fixture::new(engine);
    f.scan();
    f.store.add_agent("syn", Role::Synthesis).expect("add");
    let s1 = put(&f, "src", "summary", "syn", "v1");
    let n1 = put(&f, "src", "notes", "syn", "n1");
    let s2 = put(&f, "src", "summary", "syn", "v2");
    let node = f.node("src");
    let head = f
        .store
        .head(&node.node_id, "summary")
        .expect("head")
        .expect("some");
    assert_eq!(head.frame_id, s2.frame_id);
    let mut heads: Vec<_> = f
        .store
        .heads(&node.node_id)
        .expect("heads")
        .into_iter()
        .map(|h| (h.frame_type, h.frame_id))
        .collect();
    heads.sort();
    assert_eq!(
        heads,
        vec![
            ("notes".to_owned(), n1.frame_id),
            ("summary".to_owned(), s2.frame_id)
        ]
    );
    // Re-putting an older frame is a no-op: the head stays on the newest.
    put(&f, "src", "summary", "syn", "v1");
    let head = f
        .store
        .head(&node.node_id, "summary")
        .expect("head")
        .expect("some");
    assert_eq!((head.frame_id, s1.created), (s2.frame_id, true));
    assert!(
        f.store
            .head(&node.node_id, "missing")
            .expect("head")
            .is_none()
    );
}

fn basis_index_finds_derived_frames(engine: EngineKind) {
    let f = Fixture::new(engine);
    f.scan();
    writer(&f, "alice");
    let node = f.node("docs/guide.md");
    let a = put(&f, "docs/guide.md", "summary", "alice", "one");
    let b = put(&f, "docs/guide.md", "outline", "alice", "two");
    let mut found = f.store.frames_with_basis(&node.node_id).expect("basis");
    found.sort();
    let mut want = vec![a.frame_id, b.frame_id];
    want.sort();
    assert_eq!(found, want);
    // A frame on the node derived from something else is found by that, not by the node.
    let other = hash::content_hash(b"the guide's sources");
    let c = f
        .store
        .put_frame(NewFrame {
            basis: Some(other),
            ..NewFrame::new(node.node_id, "summary", "alice", b"three".to_vec())
        })
        .expect("put");
    let mut found = f.store.frames_with_basis(&node.node_id).expect("basis");
    found.sort();
    assert_eq!(found, want);
    assert_eq!(
        f.store.frames_with_basis(&other).expect("basis"),
        vec![c.frame_id]
    );
    assert_eq!(f.store.validate().expect("validate"), vec![]);
    assert!(
        f.store
            .frames_with_basis(&hash::content_hash(b"unrelated"))
            .expect("basis")
            .is_empty()
    );
}

fn memos_find_frames_by_their_inputs_and_survive_a_reopen(engine: EngineKind) {
    let f = Fixture::new(engine);
    f.scan();
    writer(&f, "alice");
    let a = put(&f, "docs/guide.md", "summary", "alice", "one");
    let b = put(&f, "src/lib.rs", "summary", "alice", "two");
    let key = hash::content_hash(b"inputs");
    assert_eq!(f.store.memo(&key).expect("memo"), None);
    f.store.put_memos(&[(key, a.frame_id)]).expect("put memo");
    assert_eq!(f.store.memo(&key).expect("memo"), Some(a.frame_id));
    // A later record of the same inputs replaces the earlier one.
    f.store.put_memos(&[(key, b.frame_id)]).expect("put memo");
    assert_eq!(f.store.memo(&key).expect("memo"), Some(b.frame_id));
    // A memo must point at a stored frame.
    let missing = hash::content_hash(b"no such frame");
    assert!(f.store.put_memos(&[(key, missing)]).is_err());
    assert_eq!(f.store.memo(&key).expect("memo"), Some(b.frame_id));
    assert!(f.store.validate().expect("validate").is_empty());
    let Fixture { dir, store } = f;
    drop(store);
    let reopened = open(dir.path(), engine);
    assert_eq!(reopened.memo(&key).expect("memo"), Some(b.frame_id));
}

fn frame_on_another_node_with_the_same_id_is_a_conflict(engine: EngineKind) {
    let f = Fixture::new(engine);
    f.scan();
    writer(&f, "alice");
    let basis = hash::content_hash(b"shared basis");
    let mut first = NewFrame::new(f.node("src").node_id, "summary", "alice", b"x".to_vec());
    first.basis = Some(basis);
    f.store.put_frame(first).expect("put");
    let mut second = NewFrame::new(f.node("docs").node_id, "summary", "alice", b"x".to_vec());
    second.basis = Some(basis);
    let err = f.store.put_frame(second).expect_err("conflict");
    assert!(matches!(err, Error::FrameConflict { .. }), "{err}");
}

fn node_addressing_by_path_and_prefix(engine: EngineKind) {
    let f = Fixture::new(engine);
    f.scan();
    let node = f.node("src/util/mod.rs");
    for spec in ["src/util/mod.rs", "./src/util/mod.rs", "src//util/mod.rs"] {
        assert_eq!(f.store.resolve(spec).expect(spec).node_id, node.node_id);
    }
    let hex = node.node_id.to_hex();
    for len in [8, 9, 64] {
        assert_eq!(
            f.store.resolve(&hex[..len]).expect("prefix").node_id,
            node.node_id
        );
    }
    assert!(matches!(
        f.store.resolve("src/nope.rs").expect_err("missing"),
        Error::NoSuchPath { path } if path == "src/nope.rs"
    ));
    assert!(matches!(
        f.store.resolve("0000000000").expect_err("missing"),
        Error::NoSuchNode { .. } | Error::NoSuchPath { .. }
    ));
    let root = f.store.resolve(".").expect("root");
    assert_eq!((root.path.as_str(), root.kind), ("", NodeKind::Dir));
}

fn concurrent_writers_keep_the_store_consistent(engine: EngineKind) {
    const WRITERS: usize = 16;
    const FRAMES: usize = 1000;
    let f = Arc::new(Fixture::new(engine));
    f.scan();
    writer(&f, "w");
    let nodes: Vec<_> = ["README.md", "src/lib.rs", "docs/guide.md", "src", "docs"]
        .iter()
        .map(|p| f.node(p).node_id)
        .collect();
    let threads: Vec<_> = (0..WRITERS)
        .map(|t| {
            let f = Arc::clone(&f);
            let nodes = nodes.clone();
            std::thread::spawn(move || {
                (0..FRAMES)
                    .map(|i| {
                        let node = nodes[(t + i) % nodes.len()];
                        let ty = ["summary", "notes"][i % 2];
                        let content = format!("writer {t} frame {i}").into_bytes();
                        f.store
                            .put_frame(NewFrame::new(node, ty, "w", content))
                            .expect("put")
                            .frame_id
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let ids: Vec<_> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("writer thread"))
        .collect();
    assert_eq!(ids.len(), WRITERS * FRAMES);
    for id in &ids {
        assert!(
            f.store.frame(id).expect("frame").is_some(),
            "frame {id} missing"
        );
    }
    assert_eq!(
        f.store.counts().expect("counts").1,
        (WRITERS * FRAMES) as u64
    );
    for node in &nodes {
        for ty in ["summary", "notes"] {
            let history = f.store.frames_of(node, Some(ty)).expect("history");
            let head = f.store.head(node, ty).expect("head").expect("some");
            assert_eq!(Some(&head), history.last());
        }
    }
    assert_eq!(f.store.validate().expect("validate"), vec![]);
}

fn store_folder_is_gitignored_and_never_scanned(engine: EngineKind) {
    let f = Fixture::new(engine);
    let r = f.scan();
    assert_eq!(
        std::fs::read_to_string(f.path(".merkle/.gitignore")).expect("gitignore"),
        "*\n"
    );
    assert!(f.store.node_at(".merkle").expect("lookup").is_none());
    // A store elsewhere does not change the tree, and neither does a .git folder.
    std::fs::create_dir_all(f.path(".git/objects")).expect("mkdir");
    std::fs::write(f.path(".git/HEAD"), "ref: refs/heads/main\n").expect("write");
    let other = tempfile::tempdir().expect("tempdir");
    let elsewhere = Store::open(
        f.dir.path(),
        &OpenOptions {
            store_dir: Some(other.path().join("store")),
            engine: Some(engine),
            ..OpenOptions::default()
        },
    )
    .expect("open");
    let r2 = elsewhere.scan(&ScanOptions::default()).expect("scan");
    assert_eq!(r2.root, r.root);
}

fn reopened_store_keeps_everything(engine: EngineKind) {
    let dir = tempfile::tempdir().expect("tempdir");
    write_tree(dir.path());
    let (root, frame) = {
        let store = open(dir.path(), engine);
        let r = store.scan(&ScanOptions::default()).expect("scan");
        store.add_agent("a", Role::Writer).expect("agent");
        let node = store.node_at("README.md").expect("lookup").expect("node");
        let put = store
            .put_frame(NewFrame::new(
                node.node_id,
                "summary",
                "a",
                b"kept".to_vec(),
            ))
            .expect("put");
        (r.root, put.frame_id)
    };
    // Read-only, the engine detected from the files.
    let store = open_with(
        dir.path(),
        &OpenOptions {
            read_only: true,
            ..OpenOptions::default()
        },
    );
    assert_eq!(store.engine_name(), engine.name());
    assert_eq!(store.root().expect("root"), Some(root));
    assert_eq!(
        store.frame(&frame).expect("frame").expect("some").text(),
        Some("kept")
    );
    assert_eq!(store.validate().expect("validate"), vec![]);
    let status = store.status().expect("status");
    assert_eq!(status.changed_on_disk, vec![]);
}

fn path_heads_follow_a_file_across_versions(engine: EngineKind) {
    let f = Fixture::new(engine);
    f.scan();
    writer(&f, "alice");
    let v1 = put(&f, "src/lib.rs", "summary", "alice", "about v1");
    let old_node = f.node("src/lib.rs").node_id;
    std::fs::write(f.path("src/lib.rs"), "pub fn answer() -> u32 { 43 }\n").expect("edit");
    f.scan();
    let new_node = f.node("src/lib.rs").node_id;
    assert_ne!(old_node, new_node);
    // The new version has no frames of its own yet; the path still knows the latest one.
    assert!(f.store.heads(&new_node).expect("heads").is_empty());
    let at_path = f
        .store
        .path_head("src/lib.rs", "summary")
        .expect("path head");
    assert_eq!(at_path.map(|h| h.frame_id), Some(v1.frame_id));
    let v2 = put(&f, "src/lib.rs", "summary", "alice", "about v2");
    let heads: Vec<_> = f
        .store
        .path_heads("./src/lib.rs")
        .expect("path heads")
        .into_iter()
        .map(|h| h.frame_id)
        .collect();
    assert_eq!(heads, vec![v2.frame_id]);
    // The old version's own head is untouched: history stays readable.
    let old_head = f
        .store
        .head(&old_node, "summary")
        .expect("head")
        .expect("some");
    assert_eq!(old_head.frame_id, v1.frame_id);
    assert_eq!(f.store.validate().expect("validate"), vec![]);
}

fn agents_keep_their_settings_across_role_changes_and_a_reopen(engine: EngineKind) {
    let dir = tempfile::tempdir().expect("tempdir");
    let settings: std::collections::BTreeMap<String, String> = [
        ("provider", "openai-compatible"),
        ("base_url", "http://127.0.0.1:11434/v1"),
        ("model", ""),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    {
        let store = open(dir.path(), engine);
        store.add_agent("gen", Role::Writer).expect("agent");
        store.add_agent("plain", Role::Reader).expect("agent");
        store
            .set_agent_settings("gen", &settings)
            .expect("settings");
        // A role change keeps the settings.
        store.add_agent("gen", Role::Synthesis).expect("role");
        let err = store
            .set_agent_settings("ghost", &settings)
            .expect_err("an unknown agent has no settings");
        assert!(
            matches!(&err, Error::UnknownAgent { agent } if agent == "ghost"),
            "{err}"
        );
    }
    let store = open(dir.path(), engine);
    let agents = store.agents().expect("agents");
    assert_eq!(
        agents
            .iter()
            .map(|a| (a.id.as_str(), a.role, a.settings.clone()))
            .collect::<Vec<_>>(),
        [
            ("gen", Role::Synthesis, settings.clone()),
            ("plain", Role::Reader, Default::default()),
        ]
    );
    assert_eq!(
        store.agent("gen").expect("agent").expect("some").settings,
        settings
    );
    assert!(store.validate().expect("validate").is_empty());
    store
        .set_agent_settings("gen", &Default::default())
        .expect("cleared");
    assert!(
        store
            .agent("gen")
            .expect("agent")
            .expect("some")
            .settings
            .is_empty()
    );
}

fn read_only(root: &Path) -> Store {
    open_with(
        root,
        &OpenOptions {
            read_only: true,
            ..OpenOptions::default()
        },
    )
}

/// A scan that finds nothing changed is planned on a read-only handle, and its plan is the
/// scan's whole report: the store file is not written.
#[test]
fn a_noop_scan_plan_on_a_read_only_handle_leaves_the_redb_file_as_it_was() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_tree(dir.path());
    let first = open(dir.path(), EngineKind::Redb)
        .scan(&ScanOptions::default())
        .expect("scan");
    let file = dir.path().join(".merkle/store.redb");
    let before = std::fs::read(&file).expect("read the store file");

    let plan = read_only(dir.path())
        .plan_scan(&ScanOptions::default())
        .expect("plan");
    let report = plan.unchanged().expect("nothing changed on disk");
    assert_eq!(
        (report.root, report.changed(), report.writes, report.hashed),
        (first.root, 0, 0, 0)
    );
    assert_eq!((report.files, report.dirs), (first.files, first.dirs));
    assert!(
        std::fs::read(&file).expect("read the store file") == before,
        "a no-op scan plan wrote to the store"
    );
}

/// A file written in the clock tick of the last scan (an mtime not before its start) is hashed
/// again by every plan, which then has its bookkeeping to write; the plan says whether the tree
/// is the same, so a reader need not wait for a writer to know the files are the last scan's.
#[test]
fn a_plan_that_hashes_a_racy_file_again_says_whether_the_tree_is_the_same() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_tree(dir.path());
    let readme = dir.path().join("README.md");
    let ahead = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    let set_ahead = || {
        std::fs::File::options()
            .write(true)
            .open(&readme)
            .and_then(|file| file.set_modified(ahead))
            .expect("set mtime");
    };
    set_ahead();
    open(dir.path(), EngineKind::Redb)
        .scan(&ScanOptions::default())
        .expect("scan");
    let plan = || {
        read_only(dir.path())
            .plan_scan(&ScanOptions::default())
            .expect("plan")
    };
    let same = plan();
    assert!(same.unchanged().is_none(), "a racy file is hashed again");
    assert!(same.same_tree());
    // The same size, stat and tick, another content: a different tree.
    let before = std::fs::read(&readme).expect("read");
    let mut edited = before.clone();
    edited[2] ^= 0x20;
    std::fs::write(&readme, &edited).expect("edit");
    set_ahead();
    assert!(!plan().same_tree());
    std::fs::write(&readme, &before).expect("restore");
    set_ahead();
    assert!(plan().same_tree());
    // A new file, or one gone, is another tree.
    std::fs::write(dir.path().join("new.txt"), "new\n").expect("write");
    assert!(!plan().same_tree());
    std::fs::remove_file(dir.path().join("new.txt")).expect("remove");
    std::fs::remove_file(dir.path().join("docs/guide.md")).expect("remove");
    assert!(!plan().same_tree());
}

/// A first scan's changed paths are every path of the tree, the root's "" first, in byte order
/// as every scan's are.
#[test]
fn a_first_scan_lists_every_path_in_order_as_changed() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_tree(dir.path());
    let store = open(dir.path(), EngineKind::Redb);
    let first = store.scan(&ScanOptions::default()).expect("scan");
    let mut every: Vec<String> = store
        .list_nodes("", true)
        .expect("list")
        .into_iter()
        .map(|n| n.path)
        .collect();
    every.push(String::new());
    every.sort();
    assert_eq!(first.changed_paths, every);
    assert_eq!(first.changed() as usize, every.len());
}

/// A plan made on a read-only handle is applied through a writable one; when the tree moved
/// in between (another scan committed), applying it scans again rather than committing a diff
/// against a tree that is gone.
#[test]
fn a_plan_applied_after_the_store_moved_scans_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_tree(dir.path());
    open(dir.path(), EngineKind::Redb)
        .scan(&ScanOptions::default())
        .expect("scan");
    std::fs::write(
        dir.path().join("src/lib.rs"),
        "pub fn answer() -> u32 { 7 }\n",
    )
    .expect("edit");
    let plan = read_only(dir.path())
        .plan_scan(&ScanOptions::default())
        .expect("plan");
    assert!(plan.unchanged().is_none(), "an edit is something to write");

    let writer = open(dir.path(), EngineKind::Redb);
    // Another scan commits the edit, then a file goes that the plan still holds.
    writer.scan(&ScanOptions::default()).expect("scan");
    std::fs::remove_file(dir.path().join("docs/guide.md")).expect("remove");
    let applied = writer
        .apply_scan(plan, &ScanOptions::default())
        .expect("apply");
    assert_eq!(applied.changed_paths, ["", "docs", "docs/guide.md"]);
    let again = writer.scan(&ScanOptions::default()).expect("scan");
    assert_eq!((again.root, again.changed()), (applied.root, 0));
    assert_eq!(writer.validate().expect("validate"), vec![]);
}

/// Each ignore file matches paths relative to its own folder, as git reads it: a nested
/// .gitignore's anchored patterns and patterns with a slash, a whitelist below a parent's
/// pattern, and, for a workspace below its repository's top, the .gitignore above it and
/// .git/info/exclude, whose patterns name paths from the top. The expected lists are what
/// `git ls-files --others --exclude-standard` printed for this tree. A targeted rescan, which
/// starts its walk below the root, must agree.
#[test]
fn ignore_files_match_paths_relative_to_their_own_folder() {
    let top = tempfile::tempdir().expect("tempdir");
    let files: &[(&str, &str)] = &[
        (".git/info/exclude", "/ws/excluded.txt\n"),
        (".gitignore", "ws/anchored-from-top.txt\n"),
        ("ws/.gitignore", "*.log\n"),
        ("ws/keep.txt", "x\n"),
        ("ws/excluded.txt", "x\n"),
        ("ws/anchored-from-top.txt", "x\n"),
        ("ws/a.log", "x\n"),
        ("ws/sub/.gitignore", "/build\nout/gen.txt\n!kept.log\n"),
        ("ws/sub/anchored-from-top.txt", "x\n"),
        ("ws/sub/build/x.txt", "x\n"),
        ("ws/sub/deep/build/y.txt", "x\n"),
        ("ws/sub/out/gen.txt", "x\n"),
        ("ws/sub/deep/out/gen.txt", "x\n"),
        ("ws/sub/kept.log", "x\n"),
        ("ws/sub/other.log", "x\n"),
    ];
    for (path, content) in files {
        let p = top.path().join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, content).expect("write");
    }
    let ws = top.path().join("ws");
    let store = open(&ws, EngineKind::Redb);
    let leaves = |store: &Store| -> Vec<String> {
        store
            .tree_files()
            .expect("tree files")
            .into_iter()
            .map(|t| t.path)
            .collect()
    };
    store.scan(&ScanOptions::default()).expect("scan");
    assert_eq!(
        leaves(&store),
        [
            ".gitignore",
            "keep.txt",
            "sub/.gitignore",
            "sub/anchored-from-top.txt",
            "sub/deep/build/y.txt",
            "sub/deep/out/gen.txt",
            "sub/kept.log",
        ]
    );

    let added = [
        "sub/build/z.txt",
        "sub/deep/build/w.txt",
        "sub/deep/out/gen.txt.new",
        "sub/out/more.txt",
        "sub/deep/w.log",
    ];
    for path in added {
        std::fs::write(ws.join(path), "new\n").expect("write");
    }
    let added: Vec<String> = added.iter().map(|p| (*p).to_owned()).collect();
    store
        .scan_paths(&added, &ScanOptions::default())
        .expect("targeted rescan");
    assert_eq!(
        leaves(&store),
        [
            ".gitignore",
            "keep.txt",
            "sub/.gitignore",
            "sub/anchored-from-top.txt",
            "sub/deep/build/w.txt",
            "sub/deep/build/y.txt",
            "sub/deep/out/gen.txt",
            "sub/deep/out/gen.txt.new",
            "sub/kept.log",
            "sub/out/more.txt",
        ]
    );
}

/// Two .gitignore files with the same content share one matcher, each still anchored at its
/// own folder; a byte-order mark and CRLF line ends are read as git reads them. The expected
/// list is what `git ls-files --others --exclude-standard` printed for this tree.
#[test]
fn ignore_files_with_the_same_content_keep_their_own_folder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let files: &[(&str, &[u8])] = &[
        ("a/.gitignore", b"/gen\n"),
        ("b/.gitignore", b"/gen\n"),
        ("c/.gitignore", b"\xef\xbb\xbf*.tmp\r\nbuild\r\n"),
        ("a/gen/1", b"x\n"),
        ("b/gen/2", b"x\n"),
        ("b/x/gen/3", b"x\n"),
        ("c/t.tmp", b"x\n"),
        ("c/build/4", b"x\n"),
        ("c/keep", b"x\n"),
    ];
    for (path, content) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, content).expect("write");
    }
    let store = open(dir.path(), EngineKind::Redb);
    store.scan(&ScanOptions::default()).expect("scan");
    let leaves: Vec<String> = store
        .tree_files()
        .expect("tree files")
        .into_iter()
        .map(|t| t.path)
        .collect();
    assert_eq!(
        leaves,
        [
            "a/.gitignore",
            "b/.gitignore",
            "b/x/gen/3",
            "c/.gitignore",
            "c/keep"
        ]
    );
}

#[test]
fn a_users_path_is_normalised_lexically_one_way_for_every_front_end() {
    use merkle_store::{lexical_path, normalize_path};
    for (given, normal) in [
        ("", ""),
        (".", ""),
        ("./src//lib.rs/", "src/lib.rs"),
        ("src/../README.md", "README.md"),
        // A separator on Windows; elsewhere a character of a file's name, as the scan records it.
        (
            "src\\util\\mod.rs",
            if cfg!(windows) {
                "src/util/mod.rs"
            } else {
                "src\\util\\mod.rs"
            },
        ),
        ("/src/lib.rs", "src/lib.rs"),
        ("../outside", "../outside"),
        ("a/b/../../..", ".."),
    ] {
        assert_eq!(normalize_path(given), normal, "{given:?}");
    }
    // The lexical form keeps an absolute path absolute, and `..` stops at its root.
    assert_eq!(lexical_path("/a/../../b"), "/b");
    assert_eq!(lexical_path("./.merkle/x"), ".merkle/x");
    assert_eq!(lexical_path("src/../.merkle/x"), ".merkle/x");
}
