//! Named views from a YAML file: parsing, rejection of what it does not know, resolution.
use std::collections::BTreeMap;

use context::views_file::ViewSpec;
use context::{ContextView, Error, Filters, Ordering, Source, ViewsFile};
use merkle_store::NodeId;
use pretty_assertions::assert_eq;

use crate::fixture::Fixture;

const FILE: &str = ".merkle/views.yaml";

const VIEWS: &str = "\
views:
  brief:
    max_frames: 5
    sources: [node, parent, siblings]
    related: [docs/guide.md, src/main.rs]
    types: [summary]
    agents: [synth]
    created_from_ms: 10
    created_until_ms: 20
    heads_only: true
    ordering: type_priority
    priority: [summary, notes]
  plain: {}
";

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// A view as a test compares it (`Ordering` holds trait objects, so it compares by its debug
/// form).
fn comparable(v: &ContextView) -> (usize, Vec<Source>, Filters, String) {
    (
        v.max_frames,
        v.sources.clone(),
        v.filters.clone(),
        format!("{:?}", v.ordering),
    )
}

/// Parses `text` and checks the error it gives, by its message.
fn check_error(text: &str, expected: &str) {
    let err = ViewsFile::parse(FILE, text).expect_err("rejected");
    assert!(
        matches!(err, Error::ViewsFile { .. } | Error::InvalidView { .. }),
        "{err:?}"
    );
    assert_eq!(err.to_string(), expected);
}

#[test]
fn parses_a_views_file() {
    let parsed = ViewsFile::parse(FILE, VIEWS).expect("parse");
    assert_eq!(
        parsed,
        ViewsFile {
            views: BTreeMap::from([
                (
                    "brief".to_owned(),
                    ViewSpec {
                        max_frames: Some(5),
                        sources: strings(&["node", "parent", "siblings"]),
                        related: strings(&["docs/guide.md", "src/main.rs"]),
                        types: strings(&["summary"]),
                        agents: strings(&["synth"]),
                        created_from_ms: Some(10),
                        created_until_ms: Some(20),
                        heads_only: true,
                        ordering: Some("type_priority".to_owned()),
                        priority: strings(&["summary", "notes"]),
                    }
                ),
                ("plain".to_owned(), ViewSpec::default()),
            ]),
        }
    );
    assert_eq!(
        ViewsFile::parse(FILE, "views: {}\n").expect("parse"),
        ViewsFile::default()
    );
}

#[test]
fn rejects_what_it_does_not_know() {
    check_error(
        "views:\n  brief:\n    max_frames: 5\n    colour: red\n",
        "invalid views file .merkle/views.yaml: views.brief: unknown field `colour`, expected one of `max_frames`, `sources`, `related`, `types`, `agents`, `created_from_ms`, `created_until_ms`, `heads_only`, `ordering`, `priority` at line 4 column 5",
    );
    // The YAML parser gives no position for an unknown field of the top-level mapping.
    check_error(
        "view:\n  brief: {}\n",
        "invalid views file .merkle/views.yaml: unknown field `view`, expected `views`",
    );
    check_error(
        "views:\n  brief:\n    max_frames: many\n",
        "invalid views file .merkle/views.yaml: views.brief.max_frames: invalid type: string \"many\", expected usize at line 3 column 17",
    );
    check_error(
        "views:\n  brief:\n    sources: [node, cousins]\n",
        "invalid view \"brief\": unknown source \"cousins\" (expected node, parent, siblings or related)",
    );
    check_error(
        "views:\n  brief:\n    ordering: alphabetical\n",
        "invalid view \"brief\": unknown ordering \"alphabetical\" (expected recency, relevance, type_priority or agent_priority)",
    );
}

#[test]
fn an_unknown_view_lists_the_known_ones() {
    let parsed = ViewsFile::parse(FILE, VIEWS).expect("parse");
    let err = parsed.get("nope").expect_err("no such view");
    assert!(matches!(&err, Error::NoSuchView { name, .. } if name == "nope"));
    assert_eq!(
        err.to_string(),
        "no view named \"nope\" (known: brief, plain)"
    );
    assert_eq!(
        ViewsFile::default()
            .get("brief")
            .expect_err("none")
            .to_string(),
        "no view named \"brief\" (known: none)"
    );
    assert_eq!(parsed.get("plain").expect("known"), &ViewSpec::default());
}

#[test]
fn to_view_resolves_related_paths_through_the_closure() {
    let fx = Fixture::new();
    let parsed = ViewsFile::parse(FILE, VIEWS).expect("parse");
    let mut asked = Vec::new();
    let mut resolve = |spec: &str| -> context::Result<NodeId> {
        asked.push(spec.to_owned());
        Ok(fx.store.resolve(spec)?.node_id)
    };
    let view = parsed
        .get("brief")
        .expect("known")
        .to_view("brief", &mut resolve)
        .expect("to_view");
    assert_eq!(asked, ["docs/guide.md", "src/main.rs"]);
    assert_eq!(
        comparable(&view),
        comparable(&ContextView {
            max_frames: 5,
            sources: vec![
                Source::Node,
                Source::Parent,
                Source::Siblings,
                Source::Related(vec![
                    fx.node("docs/guide.md").node_id,
                    fx.node("src/main.rs").node_id,
                ]),
            ],
            filters: Filters {
                frame_types: strings(&["summary"]),
                agents: strings(&["synth"]),
                created_from_ms: Some(10),
                created_until_ms: Some(20),
                heads_only: true,
            },
            ordering: Ordering::TypePriority(strings(&["summary", "notes"])),
        })
    );

    // The defaults: the node alone, newest first, at most 20.
    let plain = parsed
        .get("plain")
        .expect("known")
        .to_view("plain", &mut |_| panic!("nothing to resolve"))
        .expect("to_view");
    assert_eq!(comparable(&plain), comparable(&ContextView::default()));

    // A path that does not resolve fails the view, with the store's error.
    let spec = ViewSpec {
        related: strings(&["nowhere.md"]),
        ..ViewSpec::default()
    };
    let err = spec
        .to_view("broken", &mut |p| Ok(fx.store.resolve(p)?.node_id))
        .expect_err("unresolved");
    assert_eq!(
        err.to_string(),
        "no node at path \"nowhere.md\" in the last scan"
    );
}

#[test]
fn a_view_request_is_the_named_view_else_default_else_heads_with_fields_over_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let none =
        |_: &str| -> context::Result<NodeId> { Ok(NodeId::from_slice(&[0; 32]).expect("id")) };
    // No views file: the node's head frames.
    let bare = context::views_file::ViewRequest::default()
        .compose(dir.path(), &mut none.clone())
        .expect("view");
    assert!(bare.filters.heads_only);
    // A `default` view is what a request without a name gets, from any front end.
    std::fs::create_dir_all(dir.path().join(".merkle")).expect("mkdir");
    std::fs::write(
        dir.path().join(FILE),
        "views:\n  default:\n    max_frames: 3\n    types: [summary]\n  wide:\n    max_frames: 50\n",
    )
    .expect("write");
    let default = context::views_file::ViewRequest::default()
        .compose(dir.path(), &mut none.clone())
        .expect("view");
    assert_eq!(
        (default.max_frames, default.filters.frame_types.clone()),
        (3, strings(&["summary"]))
    );
    // A named one, with fields over it.
    let wide = context::views_file::ViewRequest {
        view: Some("wide".into()),
        types: strings(&["notes"]),
        all: true,
        ..Default::default()
    }
    .compose(dir.path(), &mut none.clone())
    .expect("view");
    assert_eq!(
        (wide.max_frames, wide.filters.frame_types.clone()),
        (50, strings(&["notes"]))
    );
    assert!(!wide.filters.heads_only);
    // What is no such thing is an error naming it.
    let bad = context::views_file::ViewRequest {
        sources: strings(&["cousins"]),
        ..Default::default()
    }
    .compose(dir.path(), &mut none.clone())
    .expect_err("an unknown source");
    assert!(
        matches!(bad, Error::InvalidView { .. }) && bad.to_string().contains("cousins"),
        "{bad}"
    );
    let missing = context::views_file::ViewRequest {
        view: Some("nope".into()),
        ..Default::default()
    }
    .compose(dir.path(), &mut none.clone())
    .expect_err("no such view");
    assert!(missing.to_string().contains("nope"), "{missing}");
}
