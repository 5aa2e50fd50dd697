//! The benchmark tree generator: deterministic, the requested size, and the intended shape.

use std::fs;

use pretty_assertions::assert_eq;
use xtask::tree::{Tree, TreeSpec};

#[test]
fn same_seed_same_tree_other_seed_other_tree() {
    let spec = TreeSpec {
        files: 2000,
        seed: 7,
    };
    assert_eq!(Tree::plan(spec), Tree::plan(spec));
    assert_ne!(Tree::plan(spec), Tree::plan(TreeSpec { seed: 8, ..spec }));
}

#[test]
fn shape_matches_the_spec() {
    let tree = Tree::plan(TreeSpec {
        files: 20_000,
        seed: 1,
    });
    assert_eq!(tree.files.len(), 20_000);

    let depths: Vec<usize> = tree
        .files
        .iter()
        .map(|f| f.path.matches('/').count())
        .collect();
    assert!(
        depths.iter().all(|d| (3..=5).contains(d)),
        "folders are 3 to 5 deep"
    );

    let mut per_dir = std::collections::BTreeMap::<&str, usize>::new();
    for f in &tree.files {
        let (dir, _) = f.path.rsplit_once('/').expect("files sit in folders");
        *per_dir.entry(dir).or_default() += 1;
    }
    let typical = per_dir
        .values()
        .filter(|&&n| (20..=200).contains(&n))
        .count();
    assert!(
        typical * 10 >= per_dir.len() * 9,
        "most folders hold 20 to 100 files per visit"
    );

    let small = tree
        .files
        .iter()
        .filter(|f| (1024..=16 * 1024).contains(&f.size))
        .count();
    let large = tree.files.iter().filter(|f| f.size >= 1024 * 1024).count();
    assert!(
        small * 100 >= tree.files.len() * 95,
        "mostly 1-16 KiB, got {small}"
    );
    assert!((1..=40).contains(&large), "a few large files, got {large}");
    assert!(tree.files.iter().all(|f| f.size <= 4 * 1024 * 1024));
}

#[test]
fn written_tree_has_planned_paths_and_sizes() {
    let tree = Tree::plan(TreeSpec {
        files: 300,
        seed: 3,
    });
    let dir = tempfile::tempdir().expect("temp dir");
    tree.write(dir.path()).expect("tree is written");
    for f in &tree.files {
        let meta = fs::metadata(dir.path().join(&f.path)).expect("planned file exists");
        assert_eq!(meta.len(), f.size, "{}", f.path);
    }
    let again = tempfile::tempdir().expect("temp dir");
    tree.write(again.path()).expect("tree is written");
    let f = &tree.files[tree.files.len() / 2];
    assert_eq!(
        fs::read(dir.path().join(&f.path)).expect("read"),
        fs::read(again.path().join(&f.path)).expect("read"),
        "content is deterministic"
    );
}
