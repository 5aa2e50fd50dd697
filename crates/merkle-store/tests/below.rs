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
    assert_eq!(below(&["a", "ab"]), Some(second));
    // A folder removed.
    scan(&store);
    std::fs::remove_dir_all(root.join("a/deep")).expect("rm");
    assert_eq!(below(&["a"]), None);
}
