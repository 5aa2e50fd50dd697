//! `ops::Workspace`: how every front end opens a workspace's store, and the freshness rule of
//! its reads, over a real store in a temporary workspace (no fixture store held open, since a
//! writable handle would keep the workspace's own writers out).
use std::path::Path;

use context::ops::{self, Workspace};
use context::{Related, Relation};
use merkle_store::{OpenOptions, ScanOptions, Store};
use pretty_assertions::assert_eq;

/// A workspace with two Rust files, one importing the other, not yet scanned.
fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "src/lib.rs", "pub mod util;\n");
    write(dir.path(), "src/util.rs", "pub fn one() -> u32 { 1 }\n");
    let root = dir.path().canonicalize().expect("canonical root");
    (dir, Workspace::new(root, OpenOptions::default()))
}

fn write(root: &Path, path: &str, content: &str) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().expect("a file has a parent")).expect("mkdir");
    std::fs::write(p, content).expect("write");
}

fn has_node(store: &Store, path: &str) -> bool {
    store.node_at(path).expect("node_at").is_some()
}

#[test]
fn a_workspace_without_a_store_is_not_given_one_by_a_read() {
    let (_dir, ws) = workspace();
    let scanned = ws.scan_existing(&ScanOptions::default()).expect("scan");
    assert!(scanned.is_none());
    assert!(matches!(
        ws.reader(),
        Err(merkle_store::Error::NoStore { .. })
    ));
    let found = ws.on_current_tree(|_, facts| Ok(facts.contains("src/lib.rs")));
    assert!(matches!(
        found,
        Err(context::Error::Store(merkle_store::Error::NoStore { .. }))
    ));
    assert!(!ws.store_dir().expect("store dir").exists());
    // A scan makes one, where the store is found.
    ws.scan(&ScanOptions::default()).expect("scan");
    assert_eq!(
        ws.reader().expect("reader").dir(),
        ws.store_dir().expect("dir")
    );
}

#[test]
fn the_store_dir_is_the_one_the_store_opens() {
    let (dir, _) = workspace();
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let absolute = OpenOptions {
        store_dir: Some(elsewhere.path().join("store")),
        ..OpenOptions::default()
    };
    for opts in [OpenOptions::default(), absolute] {
        let named = merkle_store::store_dir(dir.path(), &opts).expect("store dir");
        let store = Store::open(dir.path(), &opts).expect("open");
        assert_eq!(store.dir(), named);
    }
}

#[test]
fn a_current_read_scans_in_what_changed_unless_another_writer_holds_the_store() {
    let (dir, ws) = workspace();
    ws.scan(&ScanOptions::default()).expect("scan");
    write(dir.path(), "src/new.rs", "pub fn two() -> u32 { 2 }\n");
    let current = ws.current().expect("current");
    assert!(!current.stale);
    assert!(current.store.is_read_only());
    assert!(has_node(&current.store, "src/new.rs"));
    drop(current);

    // Another writer holds the store: the read answers for the last scan, and says so.
    let writer = ws.writer().expect("writer");
    write(dir.path(), "src/newer.rs", "pub fn three() -> u32 { 3 }\n");
    let current = ws.current().expect("current");
    assert!(current.stale);
    assert!(!has_node(&current.store, "src/newer.rs"));
    drop((current, writer));
    let current = ws.current().expect("current");
    assert!(!current.stale);
    assert!(has_node(&current.store, "src/newer.rs"));
}

#[test]
fn work_on_the_current_tree_sees_files_not_yet_scanned_and_reads_without_a_writer() {
    let (dir, ws) = workspace();
    ws.scan(&ScanOptions::default()).expect("scan");
    write(
        dir.path(),
        "src/main.rs",
        "mod util;\nfn main() { util::one(); }\n",
    );
    // Written in the clock tick of the scan that takes it in (made certain here by an mtime
    // ahead of every scan), it is hashed again by each scan: a read that finds it the same
    // answers without a writer all the same.
    set_mtime_ahead(dir.path(), "src/main.rs");
    // The file written since the scan is in the answer (through a writer: the graph is not
    // kept yet), and the import graph is kept for the new tree.
    let importers = |ws: &Workspace| {
        ws.on_current_tree(|store, facts| ops::related_in(store, facts, "src/util.rs"))
            .expect("related")
            .into_iter()
            .filter(|r| r.relation == Relation::ImportedBy)
            .map(|r| r.path)
            .collect::<Vec<_>>()
    };
    assert_eq!(importers(&ws), ["src/lib.rs", "src/main.rs"]);
    // Nothing changed since and the graph is kept: the answer comes from a read-only handle,
    // which a writer elsewhere does not keep out (the writable path would wait for it and
    // fail).
    let writer = ws.writer().expect("writer");
    assert_eq!(importers(&ws), ["src/lib.rs", "src/main.rs"]);
    let current = ws.current().expect("current");
    assert!(!current.stale, "no file changed since the last scan");
    drop((current, writer));
}

fn set_mtime_ahead(root: &Path, path: &str) {
    let ahead = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(root.join(path))
        .and_then(|f| f.set_modified(ahead))
        .expect("set mtime");
}

#[test]
fn related_names_what_a_path_is_when_it_is_no_file() {
    let (_dir, ws) = workspace();
    ws.scan(&ScanOptions::default()).expect("scan");
    let answer = |path: &str| {
        ws.on_current_tree(|store, facts| ops::related_in(store, facts, path))
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        answer("src/lib.rs"),
        Ok(vec![Related {
            path: "src/util.rs".to_owned(),
            relation: Relation::Imports,
            line: 1,
            specifier: "util".to_owned(),
        }])
    );
    assert_eq!(
        answer("src"),
        Err("\"src\" is a directory: related lists the imports of a file".to_owned())
    );
    assert_eq!(
        answer(""),
        Err("\".\" is a directory: related lists the imports of a file".to_owned())
    );
    let missing = answer("src/gone.rs").expect_err("no such file");
    assert!(missing.contains("src/gone.rs"), "{missing}");
}

#[test]
fn a_search_filter_is_a_kind_or_a_language() {
    assert_eq!(ops::search_filter(None).expect("none"), None);
    assert!(
        ops::search_filter(Some("function"))
            .expect("a kind")
            .is_some()
    );
    assert!(
        ops::search_filter(Some("rust"))
            .expect("a language")
            .is_some()
    );
    assert_eq!(
        ops::search_filter(Some("colour"))
            .expect_err("neither")
            .to_string(),
        "--type \"colour\" is neither a kind of definition (function, method, struct, class, \
         ...) nor a language (rust, python, typescript, ...)"
    );
}
