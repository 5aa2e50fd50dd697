//! `ops::Workspace`: how every front end opens a workspace's store, and the freshness rule of
//! its reads, over a real store in a temporary workspace (no fixture store held open, since a
//! writable handle would keep the workspace's own writers out).
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use context::ops::{self, Settled, Watcher, Workspace};
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
    let found =
        ws.read_facts(|_, tree, _| Ok::<_, context::Error>(tree.facts.contains("src/lib.rs")));
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
    let read = |path: &str| {
        ws.read(|store, stale| {
            assert!(store.is_read_only());
            Ok::<_, context::Error>((stale, has_node(store, path)))
        })
        .expect("read")
    };
    assert_eq!(read("src/new.rs"), (false, true));

    // Another writer holds the store: the read answers for the last scan, and says so.
    let writer = ws.writer().expect("writer");
    write(dir.path(), "src/newer.rs", "pub fn three() -> u32 { 3 }\n");
    assert_eq!(read("src/newer.rs"), (true, false));
    drop(writer);
    assert_eq!(read("src/newer.rs"), (false, true));
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
        ws.read_facts(|store, tree, _| ops::related_in(store, &tree.facts, "src/util.rs"))
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
    let stale = ws
        .read(|_, stale| Ok::<_, context::Error>(stale))
        .expect("read");
    assert!(!stale, "no file changed since the last scan");
    drop(writer);
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
        ws.read_facts(|store, tree, _| ops::related_in(store, &tree.facts, path))
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

/// A watcher that says what the test tells it, and counts what it was asked.
#[derive(Default)]
struct Told {
    settled: std::sync::Mutex<Option<Settled>>,
    touched: std::sync::Mutex<Option<Option<BTreeSet<String>>>>,
    put_back: std::sync::atomic::AtomicUsize,
    /// The folders it does not watch, where it settles `Partly`.
    unwatched: Vec<String>,
}

impl Told {
    fn tell(&self, settled: Settled, touched: Option<Option<BTreeSet<String>>>) {
        *self.settled.lock().expect("lock") = Some(settled);
        *self.touched.lock().expect("lock") = touched;
    }
}

impl Watcher for Told {
    fn settle(&self, _root: merkle_store::NodeId) -> Settled {
        self.settled
            .lock()
            .expect("lock")
            .unwrap_or(Settled::Unknown)
    }

    fn take(&self) -> Option<Option<BTreeSet<String>>> {
        self.touched.lock().expect("lock").take()
    }

    fn put_back(&self) {
        self.put_back
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    fn unwatched(&self) -> Vec<String> {
        self.unwatched.clone()
    }
}

/// Waits until a file written now gets a later mtime than anything written so far below
/// `root`: a scan then trusts the stats of the files already there.
fn settle(root: &Path) {
    use std::os::unix::fs::MetadataExt;
    // Beside the workspace, not in it.
    let probe = root.with_extension("probe");
    std::fs::write(&probe, "tick").expect("write probe");
    let first = std::fs::metadata(&probe).expect("stat probe");
    let stamp = |m: &std::fs::Metadata| (m.mtime(), m.mtime_nsec());
    let start = stamp(&first);
    while stamp(&std::fs::metadata(&probe).expect("stat probe")) == start {
        std::thread::yield_now();
        std::fs::write(&probe, "tick").expect("write probe");
    }
    std::fs::remove_file(&probe).expect("remove probe");
}

/// The root a read of the node at `scope` answers from, and whether the store holds `path`.
fn read_at(ws: &Workspace, scope: &str, path: &str) -> (merkle_store::NodeId, bool) {
    ws.read_at(Some(scope), |store, stale| {
        assert!(!stale);
        let root = store.root()?.expect("scanned");
        Ok::<_, context::Error>((root, has_node(store, path)))
    })
    .expect("read")
}

/// A read of one node checks on disk what it answers from, the node's entries and the folders
/// on the way to it, and nothing else: an edit beside it is scanned in by the next read that
/// reaches it. With no watcher, and with one that does not watch some folders.
#[test]
fn a_read_of_one_node_checks_that_node_and_the_way_to_it() {
    let (dir, ws) = workspace();
    write(dir.path(), "docs/a.md", "# a\n");
    write(dir.path(), "docs/b.md", "# b\n");
    // Scanned, then again past the clock tick of every change (the store's folder made in the
    // root included), so that the scan trusts every stat.
    ws.scan(&ScanOptions::default()).expect("scan");
    settle(dir.path());
    let first = ws.scan(&ScanOptions::default()).expect("scan").root;
    // An edit beside the node, not on its way: not looked at.
    write(dir.path(), "src/lib.rs", "pub mod util;\npub fn two() {}\n");
    assert_eq!(read_at(&ws, "src/util.rs", "src/util.rs"), (first, true));
    // Where it reaches: scanned in.
    let (second, _) = read_at(&ws, "src/lib.rs", "src/lib.rs");
    assert_ne!(second, first);
    // A file made in a folder on the way: seen.
    write(dir.path(), "src/new.rs", "pub fn three() {}\n");
    let (third, made) = read_at(&ws, "src/util.rs", "src/new.rs");
    assert!(made);
    assert_ne!(third, second);
    // A path the tree does not hold (a NodeID given) reads what the whole tree says.
    write(dir.path(), "docs/a.md", "# a, edited\n");
    let (fourth, _) = read_at(&ws, "no/such.rs", "docs/a.md");
    assert!(![first, second, third].contains(&fourth));

    // A watcher that does not watch `docs`: the folders it does not watch on the way to the
    // node or below it are checked, and no others.
    let told = Arc::new(Told {
        unwatched: vec!["docs".to_owned()],
        ..Told::default()
    });
    told.tell(Settled::Partly, None);
    let watched = ws.clone().watched_by(told);
    write(dir.path(), "docs/a.md", "# a, edited again\n");
    assert_eq!(read_at(&watched, "src", "src/new.rs"), (fourth, true));
    assert_eq!(read_at(&watched, "docs/b.md", "docs/b.md"), (fourth, true));
    let (fifth, _) = read_at(&watched, "docs/a.md", "docs/a.md");
    assert_ne!(fifth, fourth);
    write(dir.path(), "docs/b.md", "# b, edited\n");
    let (sixth, _) = read_at(&watched, "", "docs/b.md");
    assert_ne!(sixth, fifth);
}

#[test]
fn a_read_goes_by_what_the_watcher_says_and_checks_the_disk_when_it_cannot_say() {
    let (dir, plain) = workspace();
    plain.scan(&ScanOptions::default()).expect("scan");
    let told = Arc::new(Told::default());
    let ws = plain.clone().watched_by(told.clone());
    let sees = |path: &str| {
        ws.read(|store, stale| Ok::<_, context::Error>((stale, has_node(store, path))))
            .expect("read")
    };
    // Clean: the watcher vouches, so no walk (a file it has not told of is not seen).
    write(dir.path(), "docs/a.rs", "pub fn a() {}\n");
    told.tell(Settled::Clean, None);
    assert_eq!(sees("docs/a.rs"), (false, false));
    // Pending with the paths named: those are scanned in (their folders listed again), and
    // nothing elsewhere.
    write(dir.path(), "src/b.rs", "pub fn b() {}\n");
    let named = BTreeSet::from(["src/b.rs".to_owned()]);
    told.tell(Settled::Pending, Some(Some(named.clone())));
    assert_eq!(sees("src/b.rs"), (false, true));
    assert_eq!(sees("docs/a.rs"), (false, false));
    // Pending, with another process holding the store: stale, and the changes put back.
    let writer = plain.writer().expect("writer");
    write(dir.path(), "src/c.rs", "pub fn c() {}\n");
    told.tell(
        Settled::Pending,
        Some(Some(BTreeSet::from(["src/c.rs".to_owned()]))),
    );
    assert_eq!(sees("src/c.rs"), (true, false));
    assert_eq!(told.put_back.load(std::sync::atomic::Ordering::SeqCst), 1);
    drop(writer);
    // Unknown: the disk is checked, and everything that changed is seen.
    told.tell(Settled::Unknown, None);
    assert_eq!(sees("docs/a.rs"), (false, true));
    assert_eq!(sees("src/c.rs"), (false, true));
    // The same for a read of facts.
    write(dir.path(), "src/d.rs", "pub fn d() {}\n");
    told.tell(
        Settled::Pending,
        Some(Some(BTreeSet::from(["src/d.rs".to_owned()]))),
    );
    let listed = ws
        .read_facts(|_, tree, _| Ok::<_, context::Error>(tree.facts.contains("src/d.rs")))
        .expect("read facts");
    assert!(listed);
}

#[test]
fn a_held_store_is_rescanned_before_each_read_and_write() {
    let (dir, plain) = workspace();
    let store = Arc::new(plain.writer().expect("writer"));
    let ws = plain.clone().holding(Arc::clone(&store));
    // Never scanned: the first read scans it.
    let listed = |path: &'static str| {
        ws.read_facts(move |_, tree, _| Ok::<_, context::Error>(tree.facts.contains(path)))
            .expect("read facts")
    };
    assert!(listed("src/util.rs"));
    write(dir.path(), "src/late.rs", "pub fn late() -> u32 { 4 }\n");
    assert!(listed("src/late.rs"));
    write(dir.path(), "src/later.rs", "pub fn later() {}\n");
    let seen = ws
        .read(|store, stale| Ok::<_, context::Error>((stale, has_node(store, "src/later.rs"))))
        .expect("read");
    assert_eq!(seen, (false, true));
    write(dir.path(), "src/last.rs", "pub fn last() {}\n");
    let written = ws
        .write(|store| Ok::<_, context::Error>(has_node(store, "src/last.rs")))
        .expect("write");
    assert!(written);
}

/// The paths a search of `query` finds through an indexed read of `ws` (the index opened
/// beside the listing).
fn indexed_search(ws: &Workspace, query: &str) -> Vec<String> {
    let search = ops::Search {
        query,
        limit: None,
        kind: None,
        ranking: context::search::Ranking::Plain,
        functions: false,
    };
    let found = ws
        .read_facts_as(ops::Reads::Index, |store, tree, _| {
            ops::search_in(store, tree, &search)
        })
        .expect("search");
    match found {
        ops::Found::Files(hits) => hits.into_iter().map(|h| h.path).collect(),
        ops::Found::Functions(_) => panic!("a file search answers files"),
    }
}

/// An indexed read opens the index beside a new listing: the index is brought in step where
/// it is behind (a file edited since it was built), and taken as it is where it holds the
/// tree, by the same workspace and by a new one.
#[test]
fn an_indexed_read_searches_the_files_as_they_are() {
    let (dir, ws) = workspace();
    ws.scan(&ScanOptions::default()).expect("scan");
    assert_eq!(indexed_search(&ws, "one"), ["src/util.rs"]);
    assert!(indexed_search(&ws, "zebrafish").is_empty());
    write(
        dir.path(),
        "src/lib.rs",
        "pub mod util;\npub fn zebrafish() {}\n",
    );
    assert_eq!(indexed_search(&ws, "zebrafish"), ["src/lib.rs"]);
    let again = Workspace::new(
        dir.path().canonicalize().expect("canonical root"),
        OpenOptions::default(),
    );
    assert_eq!(indexed_search(&again, "zebrafish"), ["src/lib.rs"]);
    assert_eq!(indexed_search(&again, "one"), ["src/util.rs"]);
}
