//! The tree's facts (symbols and imports, cached by content) and the related-files graph
//! built from them.
use context::{Graph, Kept, Related, Relation, TreeFacts};
use pretty_assertions::assert_eq;

use crate::fixture::Fixture;

fn related(fx: &Fixture, path: &str) -> Vec<(String, &'static str)> {
    let facts = TreeFacts::load(&fx.store).expect("facts");
    let graph = Graph::build(&fx.store, &facts).expect("graph");
    graph
        .related(path)
        .into_iter()
        .map(|Related { path, relation, .. }| (path, relation.as_str()))
        .collect()
}

#[test]
fn facts_are_derived_once_per_content_and_a_one_file_edit_derives_one() {
    let fx = Fixture::new();
    let first = TreeFacts::load(&fx.store).expect("facts");
    // Every Rust and Markdown file of the fixture is parsed once.
    assert_eq!(first.derived, 6);
    let lib = first.file("src/lib.rs").expect("lib.rs");
    let names: Vec<&str> = lib.facts.symbols.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["util", "answer"]);
    assert_eq!(TreeFacts::load(&fx.store).expect("facts").derived, 0);
    fx.edit("src/util/strings.rs", "pub fn whisper() {}\n");
    let after = TreeFacts::load(&fx.store).expect("facts");
    assert_eq!(after.derived, 1);
    let strings = after.file("src/util/strings.rs").expect("strings.rs");
    assert_eq!(strings.facts.symbols[0].name, "whisper");
    // A read-only pass over a changed file derives it without keeping it.
    fx.edit("src/main.rs", "fn main() {}\n");
    assert_eq!(TreeFacts::read(&fx.store).expect("facts").derived, 1);
    assert_eq!(TreeFacts::read(&fx.store).expect("facts").derived, 1);
}

#[test]
fn a_path_is_found_as_itself_and_nothing_else_is() {
    let fx = Fixture::new();
    let mut facts = TreeFacts::listing(&fx.store).expect("listing");
    let paths: Vec<String> = facts.files.iter().map(|f| f.path.clone()).collect();
    assert!(paths.len() > 3, "{paths:?}");
    for p in &paths {
        assert_eq!(facts.file(p).map(|f| f.path.as_str()), Some(p.as_str()));
    }
    for absent in ["", "src", "src/lib.r", "src/lib.rs/", "nowhere.rs"] {
        assert!(facts.file(absent).is_none(), "{absent}");
    }
    // `files` is public: a caller that drops an entry finds the rest where they now are.
    facts.files.remove(0);
    assert!(facts.file(&paths[0]).is_none());
    for p in &paths[1..] {
        assert_eq!(facts.file(p).map(|f| f.path.as_str()), Some(p.as_str()));
    }
}

#[test]
fn related_lists_imports_then_importers_and_follows_edits() {
    let fx = Fixture::new();
    assert_eq!(
        related(&fx, "src/util/mod.rs"),
        [
            ("src/util/strings.rs".to_owned(), "imports"),
            ("src/lib.rs".to_owned(), "imported_by"),
        ]
    );
    fx.edit(
        "src/main.rs",
        "use crate::util::strings::shout;\nfn main() {}\n",
    );
    std::fs::write(fx.dir.path().join("Cargo.toml"), "[package]\n").expect("write");
    fx.rescan();
    assert_eq!(
        related(&fx, "src/util/strings.rs"),
        [
            ("src/main.rs".to_owned(), "imported_by"),
            ("src/util/mod.rs".to_owned(), "imported_by"),
        ]
    );
    let facts = TreeFacts::load(&fx.store).expect("facts");
    let graph = Graph::build(&fx.store, &facts).expect("graph");
    let first = &graph.related("src/main.rs")[0];
    assert_eq!(
        (first.relation, first.line, first.specifier.as_str()),
        (Relation::Imports, 1, "crate::util::strings::shout")
    );
}

/// The outline producer hands over the facts of each file it parses (from its outline's own
/// parse), and they are the facts `TreeFacts` derives itself: after the outlines, nothing is
/// parsed again.
#[test]
fn the_outline_producer_caches_the_facts_tree_facts_would_derive() {
    let facts = |t: &TreeFacts| {
        t.files
            .iter()
            .map(|f| (f.path.clone(), f.facts.clone()))
            .collect::<Vec<_>>()
    };
    let outlined = Fixture::new();
    outlined.outline_files();
    let cached = TreeFacts::load(&outlined.store).expect("facts");
    assert_eq!(cached.derived, 0);
    let derived = TreeFacts::load(&Fixture::new().store).expect("facts");
    assert_eq!(derived.derived, 6);
    assert_eq!(facts(&cached), facts(&derived));
    let lib = cached.file("src/lib.rs").expect("lib.rs");
    assert_eq!(lib.facts.imports[0].spec, "util");
}

/// The graph of a tree is kept beside its root: read back, it is the graph built, and an edit
/// (a new root) builds it again.
#[test]
fn the_graph_is_kept_for_its_tree_and_built_again_after_an_edit() {
    let fx = Fixture::new();
    let all = |g: &Graph, facts: &TreeFacts| -> Vec<Related> {
        facts
            .files
            .iter()
            .flat_map(|f| g.related(&f.path))
            .collect()
    };
    let facts = TreeFacts::load(&fx.store).expect("facts");
    let built = Graph::build(&fx.store, &facts).expect("graph");
    // From a listing, its imports read a run of files at a time, it is the same graph.
    let listing = TreeFacts::listing(&fx.store).expect("listing");
    let from_listing = Graph::build(&fx.store, &listing).expect("graph");
    assert_eq!(all(&from_listing, &facts), all(&built, &facts));
    let first = Graph::of_tree(&fx.store, &facts).expect("graph");
    let kept = Graph::of_tree(&fx.store, &facts).expect("graph");
    assert_eq!(all(&first, &facts), all(&built, &facts));
    assert_eq!(all(&kept, &facts), all(&built, &facts));
    assert!(!all(&kept, &facts).is_empty());
    // It was kept, for this tree.
    assert!(facts.root.is_some());
    assert_eq!(Graph::kept_for(&fx.store), facts.root);
    // The kept record gives each file's neighbours as the graph does, read from it in one
    // pass; a path the tree lacks has none.
    let paths: Vec<&str> = facts
        .files
        .iter()
        .map(|f| f.path.as_str())
        .chain(["no/such/file.rs"])
        .collect();
    let sorted = |mut near: Vec<Vec<String>>| {
        near.iter_mut().for_each(|n| n.sort());
        near
    };
    let from_record = Graph::kept_edges(&fx.store, &facts)
        .expect("kept for this tree")
        .neighbours(&paths)
        .expect("the record reads");
    assert_eq!(sorted(from_record), sorted(built.neighbours(&paths)));
    assert!(built.neighbours(&paths).iter().any(|n| !n.is_empty()));

    fx.edit(
        "src/main.rs",
        "use crate::util::strings::shout;\nfn main() {}\n",
    );
    std::fs::write(fx.dir.path().join("Cargo.toml"), "[package]\n").expect("write");
    fx.rescan();
    let facts = TreeFacts::load(&fx.store).expect("facts");
    assert!(
        Graph::kept_edges(&fx.store, &facts).is_none(),
        "the record kept is of the tree before the edit"
    );
    // Kept without the graph in hand (what a read brings in step), it reads back as the
    // graph built; a path added, it is built from every file.
    assert_eq!(
        Graph::keep_for_tree(&fx.store, &facts).expect("kept"),
        Kept::Built
    );
    assert_eq!(Graph::kept_for(&fx.store), facts.root);
    let from_record = Graph::kept_edges(&fx.store, &facts)
        .expect("kept for this tree")
        .neighbours(&paths)
        .expect("the record reads");
    let rebuilt = Graph::build(&fx.store, &facts).expect("graph");
    assert_eq!(sorted(from_record), sorted(rebuilt.neighbours(&paths)));
    assert_eq!(
        all(&Graph::of_tree(&fx.store, &facts).expect("graph"), &facts),
        all(&rebuilt, &facts)
    );
    let after = Graph::of_tree(&fx.store, &facts).expect("graph");
    assert_eq!(Graph::kept_for(&fx.store), facts.root);
    assert_eq!(
        all(&after, &facts),
        all(&Graph::build(&fx.store, &facts).expect("graph"), &facts)
    );
    assert!(
        after
            .related("src/main.rs")
            .iter()
            .any(|r| r.path == "src/util/strings.rs"),
        "{:?}",
        after.related("src/main.rs")
    );
}

/// A tree after an edit of contents alone keeps the graph of the tree before with the edited
/// files resolved again, and it reads back as the graph built from every file; a path added or
/// a manifest edited (it says how other files resolve) builds it from every file.
#[test]
fn an_edit_s_graph_is_the_last_one_with_the_edited_files_resolved_again() {
    let fx = Fixture::new();
    let kept = |expect: Kept| -> Graph {
        let facts = TreeFacts::listing(&fx.store).expect("listing");
        assert_eq!(
            Graph::keep_for_tree(&fx.store, &facts).expect("kept"),
            expect
        );
        let paths: Vec<&str> = facts.files.iter().map(|f| f.path.as_str()).collect();
        let sorted = |mut near: Vec<Vec<String>>| {
            near.iter_mut().for_each(|n| n.sort());
            near
        };
        let built = Graph::build(&fx.store, &facts).expect("graph");
        let from_record = Graph::kept_edges(&fx.store, &facts)
            .expect("kept for this tree")
            .neighbours(&paths)
            .expect("the record reads");
        assert_eq!(sorted(from_record), sorted(built.neighbours(&paths)));
        // Decoded, with every import's line and specifier, it is the graph built.
        let edges =
            |g: &Graph| -> Vec<Related> { paths.iter().flat_map(|p| g.related(p)).collect() };
        let loaded = TreeFacts::load(&fx.store).expect("facts");
        assert_eq!(
            edges(&Graph::of_tree(&fx.store, &loaded).expect("graph")),
            edges(&built)
        );
        built
    };
    let imports = |g: &Graph, path: &str| -> Vec<String> {
        g.related(path)
            .into_iter()
            .filter(|r| r.relation == Relation::Imports)
            .map(|r| r.path)
            .collect()
    };
    kept(Kept::Built);
    fx.edit("src/main.rs", "mod util;\nfn main() {}\n");
    let g = kept(Kept::Updated { files: 1 });
    assert_eq!(imports(&g, "src/main.rs"), ["src/util/mod.rs"]);
    fx.edit("src/main.rs", "fn main() {}\n");
    fx.edit("src/util/strings.rs", "pub fn shout() {}\n");
    let g = kept(Kept::Updated { files: 2 });
    assert!(imports(&g, "src/main.rs").is_empty());
    assert_eq!(
        kept(Kept::Already).neighbours(&["src/lib.rs"]),
        g.neighbours(&["src/lib.rs"])
    );
    std::fs::write(
        fx.dir.path().join("Cargo.toml"),
        "[package]\nname = \"a\"\n",
    )
    .expect("write");
    fx.rescan();
    kept(Kept::Built);
    fx.edit("Cargo.toml", "[package]\nname = \"fixture\"\n");
    kept(Kept::Built);
    fx.edit(
        "src/main.rs",
        "use crate::util::strings::shout;\nfn main() {}\n",
    );
    let g = kept(Kept::Updated { files: 1 });
    assert_eq!(imports(&g, "src/main.rs"), ["src/util/strings.rs"]);
}
