//! How a walk gets at the disk. It reuses the last scan's listing of a folder whose stat has
//! not changed (git's untracked cache): these tests make sure it does, and that every change
//! that can alter a folder's entries without touching the folder's own stat still reads it: a
//! .gitignore above it, `.git/info/exclude`, a .gitignore that ignores itself, and a targeted
//! rescan that meets a changed .gitignore. And a cold or forced scan hashes files as the walk
//! opens them: every kind of entry it can meet comes out as a warm scan's would. Unix only:
//! they compare ctimes, which Windows does not have, and make a FIFO.
#![cfg(unix)]

use std::path::Path;

use merkle_store::{Change, NodeKind, OpenOptions, ScanOptions, Store};
use pretty_assertions::assert_eq;

mod common;
use common::settle;

fn write(root: &Path, files: &[(impl AsRef<str>, impl AsRef<str>)]) {
    for (path, content) in files {
        let p = root.join(path.as_ref());
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, content.as_ref()).expect("write");
    }
}

/// A workspace in its own folder (so that `settle`'s probe stays outside it), with a store.
struct Ws {
    _top: tempfile::TempDir,
    root: std::path::PathBuf,
    store: Store,
}

impl Ws {
    fn new(files: &[(impl AsRef<str>, impl AsRef<str>)]) -> Ws {
        let top = tempfile::tempdir().expect("tempdir");
        let root = top.path().join("ws");
        write(&root, files);
        // Opening creates the store folder, which changes the root's stat: before settling.
        let store = Store::open(&root, &OpenOptions::default()).expect("open");
        settle(&root);
        store.scan(&ScanOptions::default()).expect("scan");
        Ws {
            _top: top,
            root,
            store,
        }
    }

    fn leaves(&self) -> Vec<String> {
        let files = self.store.tree_files().expect("tree files");
        files.into_iter().map(|t| t.path).collect()
    }

    /// Status's changes and how many folders it read.
    fn status(&self) -> (Vec<(String, Change)>, u64) {
        let s = self.store.status().expect("status");
        (s.changed_on_disk, s.dirs_read)
    }
}

fn added(paths: &[&str]) -> Vec<(String, Change)> {
    paths
        .iter()
        .map(|p| ((*p).to_owned(), Change::Added))
        .collect()
}

#[test]
fn unchanged_folders_are_not_read_and_changed_ones_are() {
    let ws = Ws::new(&[
        ("a/x.txt", "x\n"),
        ("a/b/y.txt", "y\n"),
        ("c/z.txt", "z\n"),
        ("c/d/w.txt", "w\n"),
    ]);
    assert_eq!(ws.status(), (Vec::new(), 0));

    // A new file changes its folder's stat, and only that folder is read; an edit changes no
    // folder, and the file's own stat tells.
    write(&ws.root, &[("a/b/new.txt", "n\n"), ("c/z.txt", "z2\n")]);
    let mut want = added(&["a/b/new.txt"]);
    want.push(("c/z.txt".to_owned(), Change::Modified));
    assert_eq!(ws.status(), (want, 1));

    // Settled first, so that the scan records a/b's new stat rather than read it every time.
    settle(&ws.root);
    let scan = ws.store.scan(&ScanOptions::default()).expect("scan");
    assert_eq!(
        (
            scan.dirs_read,
            scan.changed_paths.contains(&"a/b/new.txt".to_owned())
        ),
        (1, true)
    );
    std::fs::remove_file(ws.root.join("c/d/w.txt")).expect("remove");
    assert_eq!(
        ws.status(),
        (vec![("c/d/w.txt".to_owned(), Change::Deleted)], 1)
    );
}

#[test]
fn a_changed_gitignore_has_every_folder_below_it_read_again() {
    let ws = Ws::new(&[
        ("sub/.gitignore", "*.log\n"),
        ("sub/deep/keep.txt", "k\n"),
        ("sub/deep/x.log", "x\n"),
        ("sub/deep/deeper/y.log", "y\n"),
        ("sub/deep/deeper/keep.txt", "k\n"),
    ]);
    assert_eq!(ws.status(), (Vec::new(), 0));
    // Rewritten in place: no folder's stat changes, only the file's.
    std::fs::write(ws.root.join("sub/.gitignore"), "# nothing\n").expect("write");
    let (changes, dirs_read) = ws.status();
    let mut want = added(&["sub/deep/deeper/y.log", "sub/deep/x.log"]);
    want.push(("sub/.gitignore".to_owned(), Change::Modified));
    want.sort();
    assert_eq!((changes, dirs_read), (want, 3));

    ws.store.scan(&ScanOptions::default()).expect("scan");
    assert!(ws.leaves().contains(&"sub/deep/deeper/y.log".to_owned()));
    assert_eq!(ws.status().0, Vec::new());
}

#[test]
fn a_changed_exclude_file_has_every_folder_read_again() {
    let ws = Ws::new(&[
        (".git/info/exclude", "*.tmp\n"),
        ("a/b/t.tmp", "t\n"),
        ("a/b/k.txt", "k\n"),
    ]);
    assert_eq!(ws.status(), (Vec::new(), 0));
    std::fs::write(ws.root.join(".git/info/exclude"), "\n").expect("write");
    assert_eq!(ws.status(), (added(&["a/b/t.tmp"]), 3));
    // The scan records the new rules, and the folders are reused under them from then on.
    ws.store.scan(&ScanOptions::default()).expect("scan");
    assert_eq!(ws.status(), (Vec::new(), 0));
}

#[test]
fn a_gitignore_that_ignores_itself_has_its_folders_read_every_time() {
    // Not a file of the tree, so no stat of the tree tells when it changes.
    let ws = Ws::new(&[
        ("sub/.gitignore", ".gitignore\n*.log\n"),
        ("sub/d/x.log", "x\n"),
        ("sub/d/k.txt", "k\n"),
    ]);
    assert_eq!(ws.leaves(), ["sub/d/k.txt"]);
    std::fs::write(ws.root.join("sub/.gitignore"), ".gitignore\n").expect("write");
    assert_eq!(ws.status().0, added(&["sub/d/x.log"]));
}

#[test]
fn a_targeted_rescan_that_meets_a_changed_gitignore_walks_its_folder_whole() {
    let ws = Ws::new(&[
        ("sub/.gitignore", "*.log\n"),
        ("sub/f.txt", "f\n"),
        ("sub/d/x.log", "x\n"),
        ("sub/d/k.txt", "k\n"),
    ]);
    // Told only of f.txt: the listing of `sub` meets the new .gitignore all the same.
    std::fs::write(ws.root.join("sub/.gitignore"), "\n").expect("write");
    std::fs::write(ws.root.join("sub/f.txt"), "f2\n").expect("write");
    ws.store
        .scan_paths(&["sub/f.txt".to_owned()], &ScanOptions::default())
        .expect("rescan");
    assert_eq!(
        ws.leaves(),
        ["sub/.gitignore", "sub/d/k.txt", "sub/d/x.log", "sub/f.txt"]
    );
    assert_eq!(ws.status().0, Vec::new());
}

#[test]
fn a_targeted_rescan_under_a_changed_exclude_file_scans_everything() {
    let ws = Ws::new(&[
        (".git/info/exclude", "*.tmp\n"),
        ("a/t.tmp", "t\n"),
        ("a/k.txt", "k\n"),
        ("b/u.tmp", "u\n"),
    ]);
    assert_eq!(ws.leaves(), ["a/k.txt"]);
    // Told only of a/k.txt, but the new rules change b as well.
    std::fs::write(ws.root.join(".git/info/exclude"), "\n").expect("write");
    ws.store
        .scan_paths(&["a/k.txt".to_owned()], &ScanOptions::default())
        .expect("rescan");
    assert_eq!(ws.leaves(), ["a/k.txt", "a/t.tmp", "b/u.tmp"]);
    assert_eq!(ws.status(), (Vec::new(), 0));
}

#[test]
fn a_cold_scan_hashes_every_kind_of_entry_as_it_walks() {
    let big: String = (0..300_000).map(|i| format!("{i:x}\n")).collect();
    assert!(big.len() > 1 << 20, "big enough for the memory-mapped hash");
    // Enough that the empty tables are loaded in bulk (through a cursor, in redb), and that
    // listing the folder takes several reads of the directory.
    let mut files: Vec<(String, String)> = (0..1000)
        .map(|i| {
            (
                format!("many/a-rather-long-name-{i:04}.txt"),
                format!("file {i}\n"),
            )
        })
        .collect();
    files.extend([
        ("small.txt".to_owned(), "small\n".to_owned()),
        ("empty".to_owned(), String::new()),
        ("big.txt".to_owned(), big),
        // An ignored FIFO is no warning.
        (".gitignore".to_owned(), "*.fifo\n".to_owned()),
    ]);
    let top = tempfile::tempdir().expect("tempdir");
    let root = top.path().join("ws");
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    write(&root, &borrowed);
    std::os::unix::fs::symlink("small.txt", root.join("link")).expect("symlink");
    for fifo in ["pipe", "ignored.fifo"] {
        let status = std::process::Command::new("mkfifo")
            .arg(root.join(fifo))
            .status()
            .expect("mkfifo");
        assert!(status.success());
    }

    let store = Store::open(&root, &OpenOptions::default()).expect("open");
    let cold = store.scan(&ScanOptions::default()).expect("scan");
    let bytes: u64 =
        files.iter().map(|(_, c)| c.len() as u64).sum::<u64>() + "small.txt".len() as u64;
    assert_eq!(
        (
            cold.files,
            cold.hashed,
            cold.hashed_bytes,
            cold.warnings.clone()
        ),
        (
            1005,
            1005,
            bytes,
            vec!["pipe: skipped: not a file, directory or symlink".to_owned()]
        )
    );
    for (path, content) in &files {
        let node = store.node_at(path).expect("node_at").expect("a node");
        assert_eq!(
            node.content_hash.0,
            *blake3::hash(content.as_bytes()).as_bytes(),
            "{path}"
        );
    }
    let link = store.node_at("link").expect("node_at").expect("a node");
    assert_eq!(
        (link.kind, link.content_hash.0),
        (NodeKind::Symlink, *blake3::hash(b"small.txt").as_bytes())
    );

    // A forced scan hashes it all again the same way; a warm one hashes nothing.
    let forced = store
        .scan(&ScanOptions {
            force: true,
            ..ScanOptions::default()
        })
        .expect("forced scan");
    assert_eq!(
        (forced.root, forced.hashed, forced.changed()),
        (cold.root, 1005, 0)
    );
    let warm = store.scan(&ScanOptions::default()).expect("scan");
    assert_eq!((warm.root, warm.changed()), (cold.root, 0));
    // The tables loaded in bulk take ordinary writes after it.
    let edit = "many/a-rather-long-name-0150.txt";
    std::fs::write(root.join(edit), "edited\n").expect("edit");
    let edited = store.scan(&ScanOptions::default()).expect("scan");
    assert_eq!(edited.changed_paths, ["", "many", edit]);
    let node = store.node_at(edit).expect("node_at").expect("a node");
    assert_eq!(node.content_hash.0, *blake3::hash(b"edited\n").as_bytes());
    assert_eq!(store.validate().expect("validate"), Vec::new());
}

#[test]
fn a_folder_changed_only_by_an_ignored_file_is_recorded_by_the_next_scan() {
    let ws = Ws::new(&[("a/.gitignore", "*.log\n"), ("a/k.txt", "k\n")]);
    assert_eq!(ws.status(), (Vec::new(), 0));
    write(&ws.root, &[("a/x.log", "ignored\n")]);
    // Nothing of the tree changed, but `a` must be read to know it.
    assert_eq!(ws.status(), (Vec::new(), 1));
    settle(&ws.root);
    let scan = ws.store.scan(&ScanOptions::default()).expect("scan");
    assert_eq!((scan.changed(), scan.dirs_read), (0, 1));
    assert!(scan.writes > 0, "the folder's new stat is recorded");
    assert_eq!(ws.status(), (Vec::new(), 0));
    let again = ws.store.scan(&ScanOptions::default()).expect("scan");
    assert_eq!((again.writes, again.dirs_read), (0, 0));
}

/// A folder is listed in reads of a 16 KiB buffer, and on a local file system a read that
/// leaves room for the longest entry is taken as the last. Folders of names of the longest
/// length (280-byte records) whose listings end just short of, at and just past a buffer's
/// end, and a folder of short names: every entry is listed, cold and after a change.
#[test]
fn folders_whose_listings_end_near_a_buffers_end_are_listed_whole() {
    let counts = [1usize, 56, 57, 58, 59, 60, 115, 116, 117, 118, 175];
    let mut files: Vec<(String, String)> = Vec::new();
    for n in counts {
        for i in 0..n {
            let name = format!("{i:04}{}", "x".repeat(251));
            assert_eq!(name.len(), 255);
            files.push((format!("d{n}/{name}"), format!("{n} {i}\n")));
        }
    }
    for i in 0..700 {
        files.push((format!("short/{i}"), String::new()));
    }
    let ws = Ws::new(&files);
    let mut expected: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
    expected.sort();
    assert_eq!(ws.leaves(), expected);

    // Read again after an entry is added to each folder.
    for n in counts {
        let name = format!("zzzz{}", "y".repeat(251));
        std::fs::write(ws.root.join(format!("d{n}/{name}")), "new\n").expect("write");
        expected.push(format!("d{n}/{name}"));
    }
    expected.sort();
    let rescan = ws.store.scan(&ScanOptions::default()).expect("scan");
    assert_eq!(rescan.changed_paths.len(), 1 + 2 * counts.len());
    assert_eq!(ws.leaves(), expected);
}

/// The last tree's entries are grouped by folder in chunks side by side; a tree of more entries
/// than one chunk takes, its folders' children spread over several, still has every folder's
/// listing reused whole.
#[test]
fn a_tree_larger_than_a_grouping_chunk_reuses_every_listing_whole() {
    let files: Vec<(String, String)> = (0..6000)
        .map(|i| (format!("d{}/f{i}", i % 12), format!("{i}\n")))
        .collect();
    let ws = Ws::new(&files);
    assert_eq!(ws.status(), (Vec::new(), 0));
    std::fs::write(ws.root.join("d5/f5"), "edited\n").expect("edit");
    assert_eq!(
        ws.status(),
        (vec![("d5/f5".to_owned(), Change::Modified)], 0)
    );
    let scan = ws.store.scan(&ScanOptions::default()).expect("scan");
    assert_eq!((scan.files, scan.changed_paths.len()), (6000, 3));
}

/// Each folder is opened from the folder that holds it, by name: a tree fifty folders deep,
/// with a file and a side folder at every level, is walked whole cold, reused whole by a
/// status, and a folder swapped for another halfway down is read again with all below it.
#[test]
fn a_deep_tree_is_walked_folder_by_folder_from_each_parent() {
    let mut files: Vec<(String, String)> = Vec::new();
    let mut dir = String::new();
    for level in 0..50 {
        dir.push_str(&format!("l{level}/"));
        files.push((format!("{dir}f{level}"), format!("{level}\n")));
        files.push((format!("{dir}side/s{level}"), format!("side {level}\n")));
    }
    let ws = Ws::new(&files);
    let mut expected: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
    expected.sort();
    assert_eq!(ws.leaves(), expected);
    assert_eq!(ws.status(), (Vec::new(), 0));

    // Level 25 and everything below it replaced by a folder of the same name with one file.
    let mid: String = (0..=25).map(|l| format!("l{l}/")).collect();
    let mid = mid.trim_end_matches('/');
    std::fs::rename(ws.root.join(mid), ws.root.join("moved")).expect("move away");
    write(&ws.root, &[(&format!("{mid}/new"), "new\n")]);
    // Folders changed in the scan's clock tick could not vouch for their listings.
    settle(&ws.root);
    let scan = ws.store.scan(&ScanOptions::default()).expect("scan");
    let leaves = ws.leaves();
    assert!(leaves.contains(&format!("{mid}/new")), "{leaves:?}");
    assert!(!leaves.iter().any(|p| p.starts_with(&format!("{mid}/l26"))));
    // Everything moved is found again under its new name, below the root.
    assert_eq!(
        leaves.iter().filter(|p| p.starts_with("moved/")).count(),
        2 + 2 * 24
    );
    assert_eq!(scan.files, leaves.len() as u64);
    assert_eq!(ws.status(), (Vec::new(), 0));
}

/// A folder whose listing held fewer than 16 entries is stat'ed, with its entries, from the
/// nearest open folder above rather than opened (`fsdir::OPEN_MIN_ENTRIES`): a change in it,
/// in a folder of many below it, or of its kind, is found as below an open folder; one made a
/// symlink to a copy of itself is recorded as the symlink, not read through (the rename
/// changed its parent's stat, so the parent is read again).
#[test]
fn folders_of_few_entries_are_looked_up_from_the_open_folder_above() {
    let mut files: Vec<(String, String)> = vec![
        ("few/a.txt".into(), "a\n".into()),
        ("few/mid/b.txt".into(), "b\n".into()),
    ];
    files.extend((0..20).map(|i| (format!("few/mid/many/f{i:02}.txt"), format!("{i}\n"))));
    let ws = Ws::new(&files);
    assert_eq!(ws.status(), (Vec::new(), 0));
    write(
        &ws.root,
        &[
            ("few/mid/b.txt", "edited\n"),
            ("few/mid/many/f07.txt", "7 edited\n"),
        ],
    );
    let modified = |paths: &[&str]| -> Vec<(String, Change)> {
        paths
            .iter()
            .map(|p| ((*p).to_owned(), Change::Modified))
            .collect()
    };
    assert_eq!(
        ws.status(),
        (modified(&["few/mid/b.txt", "few/mid/many/f07.txt"]), 0)
    );
    write(&ws.root, &[("few/mid/many/new.txt", "n\n")]);
    let (changes, dirs_read) = ws.status();
    assert!(changes.contains(&("few/mid/many/new.txt".to_owned(), Change::Added)));
    assert_eq!(dirs_read, 1);
    settle(&ws.root);
    ws.store.scan(&ScanOptions::default()).expect("scan");
    assert_eq!(ws.status(), (Vec::new(), 0));
    // `few/mid` a symlink to a copy of itself: its files are gone from the tree.
    std::fs::rename(ws.root.join("few/mid"), ws.root.join("copy")).expect("rename");
    std::os::unix::fs::symlink("../copy", ws.root.join("few/mid")).expect("symlink");
    settle(&ws.root);
    ws.store.scan(&ScanOptions::default()).expect("scan");
    let leaves = ws.leaves();
    assert!(leaves.contains(&"few/mid".to_owned()), "{leaves:?}");
    assert!(
        leaves.contains(&"copy/many/f07.txt".to_owned()),
        "{leaves:?}"
    );
    assert!(
        !leaves.iter().any(|p| p.starts_with("few/mid/")),
        "{leaves:?}"
    );
    assert!(ws.store.validate().expect("validate").is_empty());
}

/// A chain of folders of few entries, its paths longer than the kernel's limit for one path
/// (4,096 bytes): no folder is looked up by more than a few names below an open one, so the
/// walk, a status and the stat check reach its deepest file as they reach any (the hash of a
/// changed file is read by its whole path, which cannot name this one: not tested here).
#[test]
fn a_chain_of_small_folders_deeper_than_a_path_can_be_is_walked_whole() {
    use rustix::fs::{Mode, OFlags};
    let top = tempfile::tempdir().expect("tempdir");
    let root = top.path().join("ws");
    std::fs::create_dir(&root).expect("mkdir");
    let name = "n".repeat(200);
    // Made one folder at a time from the last: no path from the root may name the deepest.
    let write_in = |dir: &rustix::fd::OwnedFd, content: &str| {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC;
        let fd = rustix::fs::openat(dir, "f.txt", flags, Mode::from_raw_mode(0o644)).expect("open");
        std::io::Write::write_all(&mut std::fs::File::from(fd), content.as_bytes()).expect("write");
    };
    let mut dir = rustix::fs::open(&root, OFlags::DIRECTORY, Mode::empty()).expect("open root");
    for i in 1..=24 {
        let sub = format!("{name}{i}");
        rustix::fs::mkdirat(&dir, sub.as_str(), Mode::from_raw_mode(0o755)).expect("mkdir");
        dir =
            rustix::fs::openat(&dir, sub.as_str(), OFlags::DIRECTORY, Mode::empty()).expect("open");
        write_in(&dir, &format!("{i}\n"));
    }
    let store = Store::open(&root, &OpenOptions::default()).expect("open");
    // `settle` walks by whole paths: the file system's clock past every change made so far,
    // told by a probe outside the workspace.
    let probe = top.path().join("probe");
    let mtime = || {
        std::fs::metadata(&probe)
            .and_then(|m| m.modified())
            .expect("probe")
    };
    std::fs::write(&probe, "0").expect("probe");
    let first = mtime();
    while mtime() <= first {
        std::fs::write(&probe, "1").expect("probe");
    }
    let scanned = store.scan(&ScanOptions::default()).expect("scan");
    assert!(scanned.warnings.is_empty(), "{:?}", scanned.warnings);
    let ws = Ws {
        _top: top,
        root,
        store,
    };
    let deepest: String = (1..=24).map(|i| format!("{name}{i}/")).collect::<String>() + "f.txt";
    assert!(deepest.len() > 4096);
    let leaves = ws.leaves();
    assert_eq!(leaves.len(), 24);
    assert!(leaves.contains(&deepest));
    assert_eq!(ws.status(), (Vec::new(), 0));
    assert_eq!(
        ws.store.unchanged_on_disk().expect("check"),
        Some(scanned.root)
    );
    // The deepest file edited, from its own folder: its stat differs.
    write_in(&dir, "edited\n");
    assert_eq!(ws.store.unchanged_on_disk().expect("check"), None);
}
