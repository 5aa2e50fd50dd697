//! The index's own tests: marks, chunked updates, and rankings of an updated index.
use super::*;

fn key(b: u8) -> Key {
    [b; 32]
}

/// `a.rs` holding `fn main() {}`.
fn main_rs() -> Doc {
    Doc {
        path: "a.rs".to_owned(),
        key: key(1),
        names: String::new(),
        text: "fn main() {}".to_owned(),
        defs: Vec::new(),
    }
}

#[test]
fn an_index_is_in_step_only_with_the_tree_marked_for_its_manifest() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut index = TextIndex::open(dir.path()).expect("opens");
    let (t1, t2) = (key(7), key(8));
    assert!(!index.in_step_with(&t1));
    index.mark_in_step(&t1).expect("marks");
    assert!(index.in_step_with(&t1));
    assert!(!index.in_step_with(&t2));
    // A commit names another manifest: the mark no longer holds.
    let doc = main_rs();
    index.update(&[], vec![doc]).expect("updates");
    assert!(!index.in_step_with(&t1));
    index.mark_in_step(&t2).expect("marks");
    let reopened = TextIndex::open(dir.path()).expect("opens");
    assert!(reopened.in_step_with(&t2));
    assert_eq!(reopened.len(), 1);
    // A damaged mark is no mark.
    std::fs::write(dir.path().join(IN_STEP), b"garbage").expect("writes");
    assert!(!reopened.in_step_with(&t2));
}

#[test]
fn documents_given_a_chunk_at_a_time_are_one_commit_and_a_failed_chunk_changes_nothing() {
    let doc = |path: &str| Doc {
        path: path.to_owned(),
        key: key(path.len() as u8),
        names: String::new(),
        text: format!("fn {}() {{}}", path.trim_end_matches(".rs")),
        defs: Vec::new(),
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut index = TextIndex::open(dir.path()).expect("opens");
    let chunks = vec![Ok(vec![doc("a.rs"), doc("bb.rs")]), Ok(vec![doc("ccc.rs")])];
    index
        .update_chunks::<Error>(&[], chunks.into_iter())
        .expect("updates");
    assert_eq!(index.len(), 3);
    let failing = vec![
        Ok(vec![doc("dddd.rs")]),
        Err(Error::Busy {
            dir: dir.path().to_path_buf(),
        }),
    ];
    assert!(
        index
            .update_chunks::<Error>(&["a.rs".to_owned()], failing.into_iter())
            .is_err()
    );
    let reopened = TextIndex::open(dir.path()).expect("opens");
    assert_eq!(reopened.len(), 3);
}

#[test]
fn an_updated_index_ranks_as_one_built_at_once_and_so_does_it_merged() {
    let doc = |path: &str, text: &str| Doc {
        path: path.to_owned(),
        key: key(path.len() as u8),
        names: path.to_owned(),
        text: text.to_owned(),
        defs: Vec::new(),
    };
    let terms: Vec<WeightedTerm> = ["parser", "widget", "overflow"]
        .iter()
        .flat_map(|t| {
            [Field3::Text, Field3::Names].map(|field| WeightedTerm {
                field,
                token: (*t).to_owned(),
                weight: 1.0,
            })
        })
        .collect();
    let scores = |index: &TextIndex| {
        let mut found = index.search_scaled(&terms, 3.0).expect("searches");
        found.sort_by(|a, b| a.path.cmp(&b.path));
        found
    };
    let edited = tempfile::tempdir().expect("a temporary folder");
    let mut index = TextIndex::open(edited.path()).expect("opens");
    let long = "widget parser widget overflow ".repeat(50);
    index
        .update(
            &[],
            vec![
                doc("a.rs", "fn parser() { widget }"),
                doc("b.rs", &long),
                doc("c.rs", "overflow overflow"),
            ],
        )
        .expect("updates");
    // b.rs replaced, c.rs removed: their old documents stay in the segment, deleted.
    index
        .update(&["c.rs".to_owned()], vec![doc("b.rs", "a widget")])
        .expect("updates");
    let fresh = tempfile::tempdir().expect("a temporary folder");
    let mut at_once = TextIndex::open(fresh.path()).expect("opens");
    at_once
        .update(
            &[],
            vec![
                doc("a.rs", "fn parser() { widget }"),
                doc("b.rs", "a widget"),
            ],
        )
        .expect("updates");
    assert_eq!(scores(&index), scores(&at_once));
    assert_eq!(index.doc_freq(Field3::Text, "widget").expect("df"), (2, 2));
    assert_eq!(
        index.doc_freq(Field3::Text, "overflow").expect("df"),
        (0, 2)
    );

    // Merged into one segment (`merkle gc`), the deleted documents gone: the same ranking,
    // the same commit, so a handle opened before is still current and reads the same.
    let other = TextIndex::open(edited.path()).expect("opens");
    assert!(index.segments() >= 2, "{}", index.segments());
    let before = index.segments();
    assert_eq!(index.merge_segments().expect("merges"), (before, 1));
    assert_eq!(scores(&index), scores(&at_once));
    assert!(other.is_current());
    assert_eq!(scores(&other), scores(&at_once));
    // The merged segments' files are gone, though a handle opened before still reads them.
    let postings = std::fs::read_dir(edited.path())
        .expect("lists")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "idx"))
        })
        .count();
    assert_eq!(postings, 1);
    let reopened = TextIndex::open(edited.path()).expect("opens");
    assert_eq!((reopened.segments(), reopened.len()), (1, 2));
    assert_eq!(scores(&reopened), scores(&at_once));
    assert_eq!(index.merge_segments().expect("merges"), (1, 1));
}

#[test]
fn an_index_is_current_until_a_commit_through_another_handle() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut first = TextIndex::open(dir.path()).expect("opens");
    let mut second = TextIndex::open(dir.path()).expect("opens");
    assert!(first.is_current() && second.is_current());
    let doc = main_rs();
    first.update(&[], vec![doc]).expect("updates");
    // The handle that committed knows its commit; the other opened before it, and merges
    // nothing against a manifest that is no longer the commit's.
    assert!(first.is_current());
    assert!(!second.is_current());
    let err = second.merge_segments().expect_err("an out-of-date handle");
    assert!(err.to_string().contains("open it again"), "{err}");
    assert!(TextIndex::open(dir.path()).expect("opens").is_current());
}

#[test]
fn an_index_with_no_document_left_merges_nothing_and_stays_current() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut index = TextIndex::open(dir.path()).expect("opens");
    assert_eq!(index.merge_segments().expect("merges"), (0, 0));
    index.update(&[], vec![main_rs()]).expect("updates");
    index
        .update(&["a.rs".to_owned()], Vec::new())
        .expect("removes");
    // A segment whose every document is deleted goes with the commit that deletes the last.
    assert_eq!(TextIndex::segments_in(dir.path()), Some(0));
    let other = TextIndex::open(dir.path()).expect("opens");
    assert_eq!(index.merge_segments().expect("merges"), (0, 0));
    assert!(other.is_current() && index.is_empty());
    let reopened = TextIndex::open(dir.path()).expect("opens");
    assert!(reopened.is_empty() && reopened.is_current());
    assert_eq!(TextIndex::segments_in(&dir.path().join("none")), None);
}
