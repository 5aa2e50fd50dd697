//! `get_node`: bounded, deterministic, read-only composition of the frames around a node.
use std::sync::Arc;

use context::{
    Candidate, ContextView, Filters, FrameScorer, NodeContext, Ordering, Source, get_node,
};
use merkle_store::{Hash, OpenOptions, Role, Store};
use pretty_assertions::assert_eq;

use crate::fixture::{Fixture, READER, SYNTH, T0, WRITER};

/// A second writer, so that agent priority has something to rank.
const CRITIC: &str = "critic";

/// The frames around `src/lib.rs`, in the order they are put: (path, type, agent, content,
/// `created_at` after `T0`). `created_at` is deliberately not the append order.
const FRAMES: &[(&str, &str, &str, &str, u64)] = &[
    ("src/lib.rs", "notes", WRITER, "lib notes v1", 10),
    ("src/lib.rs", "review", CRITIC, "lib review", 15),
    ("src/lib.rs", "summary", SYNTH, "lib summary", 20),
    ("src", "summary", SYNTH, "src summary", 30),
    ("src/lib.rs", "notes", WRITER, "lib notes v2", 40),
    ("src/main.rs", "notes", WRITER, "main notes", 50),
    ("src/util", "summary", SYNTH, "util summary", 5),
    ("docs/guide.md", "notes", WRITER, "guide notes", 60),
];

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.store
        .add_agent(CRITIC, Role::Writer)
        .expect("add critic");
    for (path, frame_type, agent, content, dt) in FRAMES {
        fx.put(path, frame_type, agent, content, T0 + dt);
    }
    fx
}

/// Every source: the node, its parent, its siblings and `docs/guide.md` as related.
fn all_sources(fx: &Fixture) -> Vec<Source> {
    vec![
        Source::Node,
        Source::Parent,
        Source::Siblings,
        Source::Related(vec![fx.node("docs/guide.md").node_id]),
    ]
}

fn view(sources: Vec<Source>, ordering: Ordering) -> ContextView {
    ContextView {
        max_frames: 100,
        sources,
        filters: Filters::default(),
        ordering,
    }
}

/// A composed view as a reader checks it: one line per frame, then the counts.
#[derive(Debug, PartialEq)]
struct Composed {
    frames: Vec<String>,
    frame_count: usize,
    skipped: Vec<String>,
}

fn compose(fx: &Fixture, path: &str, view: &ContextView) -> Composed {
    let ctx = get_node(&fx.store, &fx.node(path), view).expect("get_node");
    assert_eq!(ctx.node, fx.node(path), "the node record comes back as is");
    Composed {
        frames: ctx
            .frames
            .iter()
            .map(|f| {
                format!(
                    "{} {} {}@{}: {}",
                    f.source.as_str(),
                    f.path,
                    f.frame.frame_type,
                    f.frame.agent_id,
                    f.frame.text().expect("text frame")
                )
            })
            .collect(),
        frame_count: ctx.frame_count,
        skipped: ctx.skipped,
    }
}

fn check(fx: &Fixture, path: &str, view: &ContextView, frames: &[&str], frame_count: usize) {
    assert_eq!(
        compose(fx, path, view),
        Composed {
            frames: frames.iter().map(|s| (*s).to_owned()).collect(),
            frame_count,
            skipped: Vec::new(),
        }
    );
}

/// Scores summaries above everything else and leaves every other tie to the total order.
#[derive(Debug)]
struct SummariesFirst;

impl FrameScorer for SummariesFirst {
    fn score(&self, c: &Candidate) -> i64 {
        i64::from(c.frame.frame_type == "summary")
    }
}

/// Gives every frame the same score, so the order is the tie-break alone.
#[derive(Debug)]
struct Flat;

impl FrameScorer for Flat {
    fn score(&self, _: &Candidate) -> i64 {
        0
    }
}

#[test]
fn orders_by_each_policy() {
    let fx = fixture();
    let cases: &[(Ordering, &[&str])] = &[
        (
            Ordering::Recency,
            &[
                "node src/lib.rs notes@writer: lib notes v2",
                "node src/lib.rs summary@synth: lib summary",
                "node src/lib.rs review@critic: lib review",
                "node src/lib.rs notes@writer: lib notes v1",
                "related docs/guide.md notes@writer: guide notes",
                "sibling src/main.rs notes@writer: main notes",
                "parent src summary@synth: src summary",
                "sibling src/util summary@synth: util summary",
            ],
        ),
        (
            Ordering::TypePriority(vec!["summary".to_owned(), "notes".to_owned()]),
            &[
                "node src/lib.rs summary@synth: lib summary",
                "node src/lib.rs notes@writer: lib notes v2",
                "node src/lib.rs notes@writer: lib notes v1",
                "node src/lib.rs review@critic: lib review",
                "parent src summary@synth: src summary",
                "sibling src/util summary@synth: util summary",
                "related docs/guide.md notes@writer: guide notes",
                "sibling src/main.rs notes@writer: main notes",
            ],
        ),
        (
            Ordering::AgentPriority(vec![CRITIC.to_owned(), SYNTH.to_owned()]),
            &[
                "node src/lib.rs review@critic: lib review",
                "node src/lib.rs summary@synth: lib summary",
                "node src/lib.rs notes@writer: lib notes v2",
                "node src/lib.rs notes@writer: lib notes v1",
                "parent src summary@synth: src summary",
                "sibling src/util summary@synth: util summary",
                "related docs/guide.md notes@writer: guide notes",
                "sibling src/main.rs notes@writer: main notes",
            ],
        ),
        // Source weight (node, related, parent, sibling), then heads before superseded
        // frames, then newest first.
        (
            Ordering::Relevance,
            &[
                "node src/lib.rs notes@writer: lib notes v2",
                "node src/lib.rs summary@synth: lib summary",
                "node src/lib.rs review@critic: lib review",
                "node src/lib.rs notes@writer: lib notes v1",
                "related docs/guide.md notes@writer: guide notes",
                "parent src summary@synth: src summary",
                "sibling src/main.rs notes@writer: main notes",
                "sibling src/util summary@synth: util summary",
            ],
        ),
    ];
    for (ordering, expected) in cases {
        check(
            &fx,
            "src/lib.rs",
            &view(all_sources(&fx), ordering.clone()),
            expected,
            8,
        );
    }
}

/// A custom scorer decides first; equal scores fall back to (NodeID, FrameID), ascending.
#[test]
fn custom_scorer_ties_break_on_node_then_frame_id() {
    let fx = fixture();
    let sources = all_sources(&fx);
    let unbounded = |ordering: Ordering| {
        get_node(
            &fx.store,
            &fx.node("src/lib.rs"),
            &view(sources.clone(), ordering),
        )
        .expect("get_node")
        .frames
        .into_iter()
        .map(|f| (f.frame.frame_type, f.frame.node_id, f.frame.frame_id))
        .collect::<Vec<_>>()
    };
    let mut by_id = unbounded(Ordering::Recency);
    by_id.sort_by_key(|(_, node, frame)| (*node, *frame));
    assert_eq!(unbounded(Ordering::Custom(Arc::new(Flat))), by_id);

    let mut summaries_first = by_id.clone();
    summaries_first.sort_by_key(|(t, node, frame)| (t != "summary", *node, *frame));
    assert_eq!(
        unbounded(Ordering::Custom(Arc::new(SummariesFirst))),
        summaries_first
    );
}

/// Frames created in the same millisecond are ordered newest-appended first, whatever their
/// nodes: the store's append order is the recency tie-break (see `Ordering::Recency`), after
/// the node's own frames, which come first in every ordering.
#[test]
fn recency_ties_break_on_append_order() {
    let fx = fixture();
    fx.put("src/main.rs", "notes", WRITER, "same time, first", T0 + 99);
    fx.put(
        "docs/guide.md",
        "notes",
        WRITER,
        "same time, second",
        T0 + 99,
    );
    let mut v = view(all_sources(&fx), Ordering::Recency);
    v.max_frames = 6;
    check(
        &fx,
        "src/lib.rs",
        &v,
        &[
            "node src/lib.rs notes@writer: lib notes v2",
            "node src/lib.rs summary@synth: lib summary",
            "node src/lib.rs review@critic: lib review",
            "node src/lib.rs notes@writer: lib notes v1",
            "related docs/guide.md notes@writer: same time, second",
            "sibling src/main.rs notes@writer: same time, first",
        ],
        10,
    );
}

/// Never more than `max_frames`, cut after ordering, with `frame_count` the total before the cut.
#[test]
fn max_frames_is_a_hard_bound() {
    let fx = fixture();
    let full = compose(
        &fx,
        "src/lib.rs",
        &view(all_sources(&fx), Ordering::Recency),
    );
    assert_eq!(full.frames.len(), 8);
    for max_frames in 0..=10 {
        let mut v = view(all_sources(&fx), Ordering::Recency);
        v.max_frames = max_frames;
        assert_eq!(
            compose(&fx, "src/lib.rs", &v),
            Composed {
                frames: full.frames[..max_frames.min(8)].to_vec(),
                frame_count: 8,
                skipped: Vec::new(),
            },
            "max_frames {max_frames}"
        );
    }
}

#[test]
fn collects_from_each_source() {
    let fx = fixture();
    let guide = fx.node("docs/guide.md").node_id;
    let src = fx.node("src").node_id;
    let lib = fx.node("src/lib.rs").node_id;
    let cases: Vec<(&str, Vec<Source>, &[&str])> = vec![
        (
            "src/lib.rs",
            vec![Source::Node],
            &[
                "node src/lib.rs notes@writer: lib notes v2",
                "node src/lib.rs summary@synth: lib summary",
                "node src/lib.rs review@critic: lib review",
                "node src/lib.rs notes@writer: lib notes v1",
            ],
        ),
        (
            "src/lib.rs",
            vec![Source::Parent],
            &["parent src summary@synth: src summary"],
        ),
        // A sibling directory's frames count as much as a sibling file's.
        (
            "src/lib.rs",
            vec![Source::Siblings],
            &[
                "sibling src/main.rs notes@writer: main notes",
                "sibling src/util summary@synth: util summary",
            ],
        ),
        (
            "src/lib.rs",
            vec![Source::Related(vec![guide, src])],
            &[
                "related docs/guide.md notes@writer: guide notes",
                "related src summary@synth: src summary",
            ],
        ),
        // A node reached twice counts once, under its strongest source.
        (
            "src/lib.rs",
            vec![
                Source::Parent,
                Source::Node,
                Source::Related(vec![lib, src]),
            ],
            &[
                "node src/lib.rs notes@writer: lib notes v2",
                "node src/lib.rs summary@synth: lib summary",
                "node src/lib.rs review@critic: lib review",
                "node src/lib.rs notes@writer: lib notes v1",
                "related src summary@synth: src summary",
            ],
        ),
        // The root has no parent and no siblings; that is not a missing source.
        ("", vec![Source::Parent, Source::Siblings], &[]),
        (
            "README.md",
            vec![Source::Parent, Source::Siblings],
            &["sibling src summary@synth: src summary"],
        ),
    ];
    for (path, sources, expected) in cases {
        check(
            &fx,
            path,
            &view(sources, Ordering::Recency),
            expected,
            expected.len(),
        );
    }
}

#[test]
fn filters_select_candidates_before_the_bound() {
    let fx = fixture();
    let cases: &[(Filters, &[&str])] = &[
        (
            Filters {
                frame_types: vec!["summary".to_owned()],
                ..Filters::default()
            },
            &[
                "node src/lib.rs summary@synth: lib summary",
                "parent src summary@synth: src summary",
                "sibling src/util summary@synth: util summary",
            ],
        ),
        (
            Filters {
                agents: vec![CRITIC.to_owned()],
                ..Filters::default()
            },
            &["node src/lib.rs review@critic: lib review"],
        ),
        // From is inclusive, until exclusive.
        (
            Filters {
                created_from_ms: Some(T0 + 20),
                created_until_ms: Some(T0 + 50),
                ..Filters::default()
            },
            &[
                "node src/lib.rs notes@writer: lib notes v2",
                "node src/lib.rs summary@synth: lib summary",
                "parent src summary@synth: src summary",
            ],
        ),
        (
            Filters {
                heads_only: true,
                ..Filters::default()
            },
            &[
                "node src/lib.rs notes@writer: lib notes v2",
                "node src/lib.rs summary@synth: lib summary",
                "node src/lib.rs review@critic: lib review",
                "related docs/guide.md notes@writer: guide notes",
                "sibling src/main.rs notes@writer: main notes",
                "parent src summary@synth: src summary",
                "sibling src/util summary@synth: util summary",
            ],
        ),
        (
            Filters {
                frame_types: vec!["notes".to_owned()],
                agents: vec![WRITER.to_owned()],
                heads_only: true,
                ..Filters::default()
            },
            &[
                "node src/lib.rs notes@writer: lib notes v2",
                "related docs/guide.md notes@writer: guide notes",
                "sibling src/main.rs notes@writer: main notes",
            ],
        ),
    ];
    for (filters, expected) in cases {
        let mut v = view(all_sources(&fx), Ordering::Recency);
        v.filters = filters.clone();
        check(&fx, "src/lib.rs", &v, expected, expected.len());
    }
    // The bound applies to what the filters kept: `frame_count` counts those only (and the
    // node's own frame comes first).
    let mut v = view(all_sources(&fx), Ordering::Recency);
    v.filters.frame_types = vec!["summary".to_owned()];
    v.max_frames = 1;
    check(
        &fx,
        "src/lib.rs",
        &v,
        &["node src/lib.rs summary@synth: lib summary"],
        3,
    );
}

/// Every view the determinism and read-only tests exercise.
fn many_views(store: &Store) -> Vec<ContextView> {
    let guide = store
        .node_at("docs/guide.md")
        .expect("node_at")
        .expect("in the tree")
        .node_id;
    let orderings = [
        Ordering::Recency,
        Ordering::TypePriority(vec!["notes".to_owned()]),
        Ordering::AgentPriority(vec![SYNTH.to_owned()]),
        Ordering::Relevance,
        Ordering::Custom(Arc::new(SummariesFirst)),
    ];
    let mut out = Vec::new();
    for ordering in orderings {
        for max_frames in [0, 1, 3, 100] {
            for heads_only in [false, true] {
                out.push(ContextView {
                    max_frames,
                    sources: vec![
                        Source::Node,
                        Source::Parent,
                        Source::Siblings,
                        Source::Related(vec![guide]),
                    ],
                    filters: Filters {
                        heads_only,
                        ..Filters::default()
                    },
                    ordering: ordering.clone(),
                });
            }
        }
    }
    out
}

fn compose_all(store: &Store) -> Vec<NodeContext> {
    let mut out = Vec::new();
    for v in many_views(store) {
        for path in ["", "src", "src/lib.rs", "docs/guide.md", "empty"] {
            let node = store.node_at(path).expect("node_at").expect("in the tree");
            out.push(get_node(store, &node, &v).expect("get_node"));
        }
    }
    out
}

/// The same store state and view give the same `NodeContext`: twice in a row, from a store
/// opened again, and from another workspace built the same way.
#[test]
fn same_request_gives_the_same_context() {
    let Fixture { dir, store } = fixture();
    let first = compose_all(&store);
    assert_eq!(compose_all(&store), first);

    drop(store);
    let reopened = Store::open(
        dir.path(),
        &OpenOptions {
            read_only: true,
            ..OpenOptions::default()
        },
    )
    .expect("reopen read-only");
    assert_eq!(compose_all(&reopened), first);

    let other = fixture();
    assert_eq!(compose_all(&other.store), first);
}

#[test]
fn policies_order_differently_and_each_the_same_every_time() {
    let fx = fixture();
    let orderings = [
        Ordering::Recency,
        Ordering::TypePriority(vec!["summary".to_owned()]),
        Ordering::AgentPriority(vec![CRITIC.to_owned()]),
        Ordering::Relevance,
        Ordering::Custom(Arc::new(Flat)),
    ];
    let orders: Vec<Vec<String>> = orderings
        .iter()
        .map(|o| compose(&fx, "src/lib.rs", &view(all_sources(&fx), o.clone())).frames)
        .collect();
    for (i, o) in orderings.iter().enumerate() {
        assert_eq!(
            compose(&fx, "src/lib.rs", &view(all_sources(&fx), o.clone())).frames,
            orders[i],
            "{} is deterministic",
            o.name()
        );
        for j in 0..i {
            assert_ne!(
                orders[i],
                orders[j],
                "{} and {} order alike",
                o.name(),
                orderings[j].name()
            );
        }
        let mut sorted = orders[i].clone();
        sorted.sort();
        let mut first = orders[0].clone();
        first.sort();
        assert_eq!(sorted, first, "{} selects the same frames", o.name());
    }
}

/// Missing nodes are skipped and reported; what can be read still comes back.
#[test]
fn missing_sources_are_skipped_and_reported() {
    let fx = fixture();
    let ghost = Hash([7; 32]);
    let v = view(
        vec![
            Source::Node,
            Source::Related(vec![ghost, fx.node("docs/guide.md").node_id]),
        ],
        Ordering::Recency,
    );
    assert_eq!(
        compose(&fx, "src/main.rs", &v),
        Composed {
            frames: vec![
                "node src/main.rs notes@writer: main notes".to_owned(),
                "related docs/guide.md notes@writer: guide notes".to_owned(),
            ],
            frame_count: 2,
            skipped: vec![format!("related node {ghost}: not in the store")],
        }
    );

    // A node of an older scan whose directory is gone: its own frames are still there, its
    // parent is reported missing.
    fx.put("src/util/strings.rs", "notes", WRITER, "strings notes", T0);
    let old = fx.node("src/util/strings.rs");
    std::fs::remove_dir_all(fx.dir.path().join("src/util")).expect("remove src/util");
    fx.rescan();
    let ctx = get_node(
        &fx.store,
        &old,
        &view(
            vec![Source::Node, Source::Parent, Source::Siblings],
            Ordering::Recency,
        ),
    )
    .expect("a missing parent is not an error");
    assert_eq!(
        (
            ctx.frames
                .iter()
                .map(|f| f.frame.text().expect("text").to_owned())
                .collect::<Vec<_>>(),
            ctx.frame_count,
            ctx.skipped,
        ),
        (
            vec!["strings notes".to_owned()],
            1,
            vec!["parent \"src/util\": not in the last scan".to_owned()],
        )
    );
}

#[test]
fn an_empty_composition_is_a_result() {
    let fx = fixture();
    // A node without frames.
    check(
        &fx,
        "README.md",
        &view(vec![Source::Node], Ordering::Relevance),
        &[],
        0,
    );
    // Filters that keep nothing.
    let mut v = view(all_sources(&fx), Ordering::Recency);
    v.filters.agents = vec![READER.to_owned()];
    check(&fx, "src/lib.rs", &v, &[], 0);
    // No sources at all.
    check(
        &fx,
        "src/lib.rs",
        &view(Vec::new(), Ordering::Recency),
        &[],
        0,
    );
}

/// Composition is read-only: every file of the store is byte-identical after many views.
#[test]
fn composition_writes_nothing() {
    let fx = fixture();
    let before = (fx.store_digest(), fx.store.counts().expect("counts"));
    for _ in 0..3 {
        compose_all(&fx.store);
    }
    let mut missing = view(
        vec![Source::Related(vec![Hash([1; 32])])],
        Ordering::Recency,
    );
    missing.max_frames = 1;
    get_node(&fx.store, &fx.node("src"), &missing).expect("get_node");
    assert_eq!(
        (fx.store_digest(), fx.store.counts().expect("counts")),
        before
    );
}

/// What `get-node` shows a reader, for the fixture's `src/lib.rs` with every source.
#[test]
fn snapshot_get_node() {
    let fx = fixture();
    let mut v = view(all_sources(&fx), Ordering::Relevance);
    v.max_frames = 6;
    let ctx = get_node(&fx.store, &fx.node("src/lib.rs"), &v).expect("get_node");
    let mut out = format!(
        "node {} ({}, {} bytes)\nframes {} of {}\n",
        ctx.node.path,
        ctx.node.kind.as_str(),
        ctx.node.size,
        ctx.frames.len(),
        ctx.frame_count
    );
    for f in &ctx.frames {
        out.push_str(&format!(
            "\n[{}] {} {} by {}\n{}\n",
            f.source.as_str(),
            f.path,
            f.frame.frame_type,
            f.frame.agent_id,
            f.frame.text().expect("text")
        ));
    }
    crate::fixture::snapshot_settings().bind(|| insta::assert_snapshot!("get_node", out));
}
