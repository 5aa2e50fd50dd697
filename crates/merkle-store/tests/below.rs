//! `Store::unchanged_below`: the stat check of the part of the tree below some folders (those
//! a file watcher under the kernel's limit could not watch), by the rules of
//! `Store::unchanged_on_disk`, and blind to the rest of the tree.
use merkle_store::{OpenOptions, ScanOptions, Store};
use pretty_assertions::assert_eq;

mod common;

fn write(root: &std::path::Path, rel: &str, content: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
}

#[test]
fn only_the_folders_named_are_checked_each_with_everything_below_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for rel in [
        "a/x.rs",
        "a/deep/y.rs",
        "a.rs",
        "ab/z.rs",
        "b/w.rs",
        "target/out.bin",
    ] {
        write(root, rel, rel);
    }
    write(root, ".gitignore", "target/\n");
    let store = Store::open(root, &OpenOptions::default()).expect("store");
    let scan = |store: &Store| {
        common::settle(root);
        store.scan(&ScanOptions::default()).expect("scan").root
    };
    let first = scan(&store);
    let below = |folders: &[&str]| {
        let folders: Vec<String> = folders.iter().map(|f| (*f).to_owned()).collect();
        store.unchanged_below(&folders).expect("check")
    };
    // An ignored folder (the tree does not hold it) holds.
    assert_eq!(below(&["a", "target"]), Some(first));

    // An edit deep below `a`: seen from `a` and from the whole tree, not from `b`; nor from
    // `ab` or by `a.rs`, which sort beside `a/` but are not below it.
    write(root, "a/deep/y.rs", "edited");
    assert_eq!(below(&["a"]), None);
    assert_eq!(below(&[""]), None);
    assert_eq!(below(&["b", "ab"]), Some(first));
    let second = scan(&store);
    assert_eq!(below(&["a"]), Some(second));
    // A file made in `b` changes `b`'s own stat; one outside the folders named is not seen.
    write(root, "b/new.rs", "new");
    write(root, "a.rs", "edited too");
    assert_eq!(below(&["b"]), None);
    // Two folders or more are checked on two threads, each taking the next: the change is
    // seen wherever it lies among them.
    assert_eq!(below(&["a", "ab", "b"]), None);
    assert_eq!(below(&["b", "a", "ab"]), None);
    assert_eq!(below(&["a", "ab"]), Some(second));
    // A folder removed.
    scan(&store);
    std::fs::remove_dir_all(root.join("a/deep")).expect("rm");
    assert_eq!(below(&["a"]), None);
}

/// A folder of few entries is stat'ed by its name rather than opened, and its entries looked
/// up through it from the nearest open folder above (`scan/verify.rs`, `OPEN_MIN_ENTRIES`):
/// a change in it, below it, or in a folder of many entries under folders of few, is seen as
/// from an open folder, by the whole tree's check and by a check below one folder.
#[test]
fn changes_below_folders_of_few_entries_are_seen_as_below_open_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "few/a.rs", "a");
    write(root, "few/mid/b.rs", "b");
    // Sorts between `few/mid` and its entries: the check looks `few/mid` up again for them.
    write(root, "few/mid.txt", "beside");
    write(root, "few/other/c.rs", "c");
    for i in 0..20 {
        write(root, &format!("few/mid/many/f{i:02}.rs"), "many");
        write(root, &format!("top/g{i:02}.rs"), "top");
    }
    write(root, "top/few/c.rs", "c");
    let store = Store::open(root, &OpenOptions::default()).expect("store");
    let scan = |store: &Store| {
        common::settle(root);
        store.scan(&ScanOptions::default()).expect("scan").root
    };
    let below = |folders: &[&str]| {
        let folders: Vec<String> = folders.iter().map(|f| (*f).to_owned()).collect();
        store.unchanged_below(&folders).expect("check")
    };
    type Change<'a> = (&'a str, &'a str, &'a dyn Fn());
    let changes: [Change; 6] = [
        (
            "an edit in a folder of many under folders of few",
            "few/mid/many",
            &|| write(root, "few/mid/many/f07.rs", "edited"),
        ),
        (
            "an edit in a folder of few under another",
            "few/other",
            &|| write(root, "few/other/c.rs", "edited"),
        ),
        (
            "a new file in a folder of few under another",
            "few/mid",
            &|| write(root, "few/mid/new.rs", "new"),
        ),
        (
            "an edit in a folder of few under one of many",
            "top/few",
            &|| write(root, "top/few/c.rs", "edited"),
        ),
        ("a folder of few removed", "few", &|| {
            std::fs::remove_dir_all(root.join("top/few")).expect("rm");
            std::fs::remove_file(root.join("few/mid/b.rs")).expect("rm");
        }),
        ("a folder of few become a file", "few/mid", &|| {
            std::fs::remove_dir_all(root.join("few/mid/many")).expect("rm");
            write(root, "few/mid/many", "a file now");
        }),
    ];
    for (what, folder, change) in changes {
        let before = scan(&store);
        assert_eq!(
            store.unchanged_on_disk().expect("check"),
            Some(before),
            "{what}"
        );
        assert_eq!(below(&[folder]), Some(before), "{what}");
        change();
        assert_eq!(store.unchanged_on_disk().expect("check"), None, "{what}");
        assert_eq!(below(&[folder]), None, "{what}");
    }
}

/// `Store::unchanged_along`: what a read of one node answers from is checked, its entries and
/// the folders on the way to it (an entry come or gone there, a `.gitignore`), and nothing
/// else; a path the tree does not hold is never vouched for.
#[test]
fn a_read_of_one_path_checks_its_entries_and_the_folders_above_it_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for rel in [
        "a/b/x.rs",
        "a/b/y.rs",
        "a/c/z.rs",
        "d/w.rs",
        "a/b/deep/v.rs",
    ] {
        write(root, rel, rel);
    }
    let store = Store::open(root, &OpenOptions::default()).expect("store");
    let scan = |store: &Store| {
        common::settle(root);
        store.scan(&ScanOptions::default()).expect("scan").root
    };
    let along = |path: &str| store.unchanged_along(path).expect("check");
    let first = scan(&store);
    for path in ["a/b/x.rs", "a/b", "a", "d/w.rs"] {
        assert_eq!(along(path), Some(first), "{path}");
    }
    assert_eq!(
        along("a/b/nothing.rs"),
        None,
        "a path the tree does not hold"
    );

    // Edits beside the path, not on its way: not seen from it.
    write(root, "a/b/y.rs", "edited");
    write(root, "a/c/z.rs", "edited");
    write(root, "d/w.rs", "edited");
    assert_eq!(along("a/b/x.rs"), Some(first));
    assert_eq!(along("a/b/deep"), Some(first));
    // Seen from a folder holding them, and from the whole tree.
    assert_eq!(along("a/b"), None);
    assert_eq!(along("a"), None);
    assert_eq!(along(""), None);
    let second = scan(&store);

    // Each change, and the path a read of which sees it.
    type Change<'a> = (&'a str, &'a str, &'a dyn Fn());
    let changes: [Change; 6] = [
        ("the file edited", "a/b/x.rs", &|| {
            write(root, "a/b/x.rs", "edited")
        }),
        ("an entry below the folder", "a/b", &|| {
            write(root, "a/b/deep/new.rs", "new")
        }),
        ("the file removed", "a/b/x.rs", &|| {
            std::fs::remove_file(root.join("a/b/x.rs")).expect("rm");
        }),
        ("the file made again", "a/b", &|| {
            write(root, "a/b/x.rs", "again")
        }),
        ("a .gitignore made at the top", "a/b/x.rs", &|| {
            write(root, ".gitignore", "*.txt\n")
        }),
        // Which ignores the path: the folder's stat says an entry came.
        ("a .gitignore made above it", "a/b/x.rs", &|| {
            write(root, "a/.gitignore", "b/\n")
        }),
    ];
    let mut before = second;
    for (what, path, change) in changes {
        assert_eq!(along(path), Some(before), "{what}");
        change();
        assert_eq!(along(path), None, "{what}");
        before = scan(&store);
    }
    assert_eq!(along("a/b/x.rs"), None, "ignored now");
    // A .gitignore the tree holds is checked by its own stat: edited, it may ignore anything.
    std::fs::remove_file(root.join("a/.gitignore")).expect("rm");
    before = scan(&store);
    assert_eq!(along("a/b/x.rs"), Some(before));
    write(root, ".gitignore", "*.md\n");
    assert_eq!(along("a/b/x.rs"), None);
    assert_eq!(along("d"), None);
    // So is one on the way below the top.
    write(root, "a/.gitignore", "*.txt\n");
    before = scan(&store);
    assert_eq!(along("a/b/x.rs"), Some(before));
    write(root, "a/.gitignore", "b/\n");
    assert_eq!(along("a/b/x.rs"), None);
    assert_eq!(along("d"), Some(before));
}

/// Many folders are checked on two threads, each taking the next: a change in any one of them,
/// first, in the middle or last, is seen, whichever thread takes it.
#[test]
fn a_change_in_any_of_many_folders_is_seen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let folders: Vec<String> = (0..64).map(|i| format!("f{i:02}")).collect();
    for f in &folders {
        write(root, &format!("{f}/a.rs"), f);
        write(root, &format!("{f}/deep/b.rs"), f);
    }
    let store = Store::open(root, &OpenOptions::default()).expect("store");
    let scan = |store: &Store| {
        common::settle(root);
        store.scan(&ScanOptions::default()).expect("scan").root
    };
    let root_id = scan(&store);
    assert_eq!(
        store.unchanged_below(&folders).expect("check"),
        Some(root_id)
    );
    for at in [0, 31, 63] {
        write(root, &format!("{}/deep/b.rs", folders[at]), "edited");
        assert_eq!(
            store.unchanged_below(&folders).expect("check"),
            None,
            "{at}"
        );
        let now = scan(&store);
        assert_eq!(
            store.unchanged_below(&folders).expect("check"),
            Some(now),
            "{at}"
        );
    }
}
