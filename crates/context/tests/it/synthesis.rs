//! Branch synthesis: explicit, bottom-up, deterministic directory frames from children's heads.
use context::synthesis::{child_frames, synthesis_basis};
use context::{
    Concat, Error, Filter, Summary, SynthesisInput, SynthesisPolicy, SynthesisRequest, Synthesized,
    synthesize, synthesize_recursive,
};
use merkle_store::{NodeKind, Role};
use pretty_assertions::assert_eq;

use crate::fixture::{Fixture, OUTLINE, READER, SYNTH, T0, WRITER};

fn request<'a>(policy: &'a dyn SynthesisPolicy, agent: &'a str) -> SynthesisRequest<'a> {
    SynthesisRequest {
        frame_type: OUTLINE,
        agent,
        policy,
        now_ms: T0,
    }
}

/// A synthesis as a test checks it: (path, children, created, policy ran).
fn outcomes(done: &[Synthesized]) -> Vec<(String, usize, bool, bool)> {
    done.iter()
        .map(|s| (s.path.clone(), s.children, s.created, s.policy_ran))
        .collect()
}

fn check(done: &[Synthesized], expected: &[(&str, usize, bool, bool)]) {
    assert_eq!(
        outcomes(done),
        expected
            .iter()
            .map(|(p, n, c, r)| ((*p).to_owned(), *n, *c, *r))
            .collect::<Vec<_>>()
    );
}

/// The fixture with outline frames on its files and none on its directories.
fn outlined() -> Fixture {
    let fx = Fixture::new();
    fx.outline_files();
    fx
}

/// Lists the children it is given, in the order given: what a policy sees.
struct Listing;

impl SynthesisPolicy for Listing {
    fn id(&self) -> String {
        "listing".to_owned()
    }

    fn synthesize(&self, input: &SynthesisInput<'_>) -> Result<Vec<u8>, String> {
        Ok(input
            .children
            .iter()
            .map(|c| format!("{} {}@{}\n", c.path, c.frame.frame_type, c.frame.agent_id))
            .collect::<String>()
            .into_bytes())
    }
}

struct Failing;

impl SynthesisPolicy for Failing {
    fn id(&self) -> String {
        "failing".to_owned()
    }

    fn synthesize(&self, _: &SynthesisInput<'_>) -> Result<Vec<u8>, String> {
        Err("no summary today".to_owned())
    }
}

/// Bottom-up, every directory once, children before parents.
#[test]
fn recursive_synthesis_is_bottom_up() {
    let fx = outlined();
    check(
        &fx.synthesize_all(&Concat),
        &[
            ("docs/drafts", 0, true, true),
            ("docs", 2, true, true),
            ("empty", 0, true, true),
            ("src/util", 2, true, true),
            ("src", 3, true, true),
            ("", 4, true, true),
        ],
    );
}

/// The same child frames give the same frame: again in the same store (nothing new, the policy
/// does not even run), and in another workspace built the same way.
#[test]
fn same_child_frames_give_the_same_branch_frame() {
    let fx = outlined();
    let first = fx.synthesize_all(&Concat);
    let again = fx.synthesize_all(&Concat);
    check(
        &again,
        &[
            ("docs/drafts", 0, false, false),
            ("docs", 2, false, false),
            ("empty", 0, false, false),
            ("src/util", 2, false, false),
            ("src", 3, false, false),
            ("", 4, false, false),
        ],
    );
    let ids = |done: &[Synthesized]| done.iter().map(|s| s.frame_id).collect::<Vec<_>>();
    assert_eq!(ids(&again), ids(&first));
    assert_eq!(ids(&outlined().synthesize_all(&Concat)), ids(&first));

    for s in &first {
        let dir = fx.node(&s.path);
        let head = fx
            .store
            .head(&dir.node_id, OUTLINE)
            .expect("head")
            .expect("the synthesis moved the head");
        let children = child_frames(&fx.store, &dir, OUTLINE).expect("child frames");
        assert_eq!(
            (head.frame_id, head.basis, head.agent_id.as_str()),
            (
                s.frame_id,
                synthesis_basis(&dir, OUTLINE, "concat", &children, None),
                SYNTH
            ),
            "{:?}",
            s.path
        );
    }
}

#[test]
fn a_child_change_changes_the_parent_basis() {
    let fx = outlined();
    fx.synthesize_all(&Concat);
    let util = fx.node("src/util");
    let old = fx
        .store
        .head(&util.node_id, OUTLINE)
        .expect("head")
        .expect("synthesized");
    assert_eq!(
        context::staleness(&fx.store, &util, &old).expect("staleness"),
        None
    );

    fx.put(
        "src/util/strings.rs",
        OUTLINE,
        WRITER,
        "rewritten\n",
        T0 + 1,
    );
    assert_eq!(
        context::staleness(&fx.store, &util, &old).expect("staleness"),
        Some("children changed")
    );
    let new = synthesize(&fx.store, &util, &request(&Concat, SYNTH)).expect("synthesize");
    check(std::slice::from_ref(&new), &[("src/util", 2, true, true)]);
    let new = fx
        .store
        .frame(&new.frame_id)
        .expect("frame")
        .expect("stored");
    assert_ne!(new.basis, old.basis);
    assert_ne!(new.frame_id, old.frame_id);
    assert_eq!(
        fx.store.head(&util.node_id, OUTLINE).expect("head"),
        Some(new.clone())
    );
    assert!(new.text().expect("text").contains("rewritten"));
    // The old frame stays readable.
    assert_eq!(fx.store.frame(&old.frame_id).expect("frame"), Some(old));
}

/// Synthesizing a subtree writes frames in it and nowhere else, and reads only its children.
#[test]
fn recursive_synthesis_stays_in_its_subtree() {
    let fx = outlined();
    fx.synthesize_all(&Concat);
    fx.put(
        "src/util/strings.rs",
        OUTLINE,
        WRITER,
        "rewritten\n",
        T0 + 1,
    );
    let before = fx.frames_by_path();

    let done = synthesize_recursive(&fx.store, &fx.node("src"), &request(&Concat, SYNTH))
        .expect("synthesize");
    check(
        &done,
        &[("src/util", 2, true, true), ("src", 3, true, true)],
    );

    let after = fx.frames_by_path();
    for (path, frames) in &before {
        let in_scope = path == "src" || path.starts_with("src/");
        let grew = after[path].len() - frames.len();
        assert_eq!(
            (&after[path][..frames.len()], grew),
            (
                &frames[..],
                usize::from(in_scope && (path == "src" || path == "src/util"))
            ),
            "{path:?}"
        );
    }
    let src = fx
        .store
        .frame(&done[1].frame_id)
        .expect("frame")
        .expect("stored");
    let headers: Vec<&str> = src
        .text()
        .expect("text")
        .lines()
        .filter(|l| l.starts_with("## "))
        .collect();
    // Concatenation nests: `src/util`'s frame brings its own children's headers.
    let mut expected: Vec<String> = [
        "src/lib.rs",
        "src/main.rs",
        "src/util/",
        "src/util/mod.rs",
        "src/util/strings.rs",
    ]
    .iter()
    .map(|p| format!("## {p} ({OUTLINE})"))
    .collect();
    let mut got: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
}

/// Puts, scans, views and regeneration never write a directory frame.
#[test]
fn nothing_synthesizes_implicitly() {
    let fx = outlined();
    fx.put("src/lib.rs", "notes", WRITER, "notes", T0);
    fx.edit("src/main.rs", "fn main() {}\n");
    context::get_node(
        &fx.store,
        &fx.node("src"),
        &context::ContextView {
            sources: vec![context::Source::Node, context::Source::Siblings],
            ..context::ContextView::default()
        },
    )
    .expect("get_node");
    context::stale_frames(&fx.store).expect("stale frames");
    let producers = context::Producers::default()
        .with(OUTLINE, std::sync::Arc::new(context::Outline::default()));
    let report = context::regenerate(
        &fx.store,
        &fx.node(""),
        &context::RegenerateRequest {
            scope: context::RegenerateScope {
                recursive: true,
                up: None,
            },
            producers: &producers,
            policies: &Default::default(),
            now_ms: T0,
        },
    )
    .expect("regenerate");
    assert_eq!(report.regenerated.len(), 1, "{report:?}");

    let dirs = fx.dirs();
    assert_eq!(
        dirs,
        ["", "docs", "docs/drafts", "empty", "src", "src/util"]
    );
    for dir in dirs {
        assert_eq!(
            (
                fx.store.path_heads(&dir).expect("path heads"),
                fx.store
                    .frames_of(&fx.node(&dir).node_id, None)
                    .expect("frames")
            ),
            (Vec::new(), Vec::new()),
            "{dir:?}"
        );
    }
}

/// An empty directory gets an empty frame, the same every time; two empty directories get
/// two frames.
#[test]
fn empty_directories_give_stable_empty_frames() {
    let fx = Fixture::new();
    let empty = fx.node("empty");
    let drafts = fx.node("docs/drafts");
    let once = |dir, policy: &dyn SynthesisPolicy| {
        synthesize(&fx.store, dir, &request(policy, SYNTH)).expect("synthesize")
    };
    let first = once(&empty, &Concat);
    let second = once(&empty, &Concat);
    let other = once(&drafts, &Concat);
    let summary = once(&empty, &Summary::default());
    check(
        &[
            first.clone(),
            second.clone(),
            other.clone(),
            summary.clone(),
        ],
        &[
            ("empty", 0, true, true),
            ("empty", 0, false, false),
            ("docs/drafts", 0, true, true),
            ("empty", 0, true, true),
        ],
    );
    assert_eq!(second.frame_id, first.frame_id);
    assert_ne!(other.frame_id, first.frame_id);
    assert_ne!(
        summary.frame_id, first.frame_id,
        "the policy is part of the basis"
    );
    for s in [&first, &other, &summary] {
        let f = fx.store.frame(&s.frame_id).expect("frame").expect("stored");
        assert_eq!(f.content, b"");
    }
    // Stable across workspaces too.
    let fx2 = Fixture::new();
    let again =
        synthesize(&fx2.store, &fx2.node("empty"), &request(&Concat, SYNTH)).expect("synthesize");
    assert_eq!(again.frame_id, first.frame_id);
}

/// Children's frames reach the policy in (NodeID, FrameID) order, whatever order they were put
/// in, and only the directory's own children.
#[test]
fn children_reach_the_policy_in_node_id_order() {
    let listing = |fx: &Fixture| {
        let s =
            synthesize(&fx.store, &fx.node("src"), &request(&Listing, SYNTH)).expect("synthesize");
        fx.store.frame(&s.frame_id).expect("frame").expect("stored")
    };
    let fx = Fixture::new();
    for path in ["src/lib.rs", "src/main.rs"] {
        fx.put(path, OUTLINE, WRITER, path, T0);
    }
    fx.put("src/util", OUTLINE, SYNTH, "util", T0);
    let frame = listing(&fx);

    let src = fx.node("src");
    let mut children = src.children.clone();
    children.sort_by_key(|c| c.node_id);
    let expected: String = children
        .iter()
        .map(|c| {
            let agent = if c.kind == NodeKind::Dir {
                SYNTH
            } else {
                WRITER
            };
            format!("{} {OUTLINE}@{agent}\n", src.child_path(&c.name))
        })
        .collect();
    assert_eq!(frame.text().expect("text"), expected);

    let reversed = Fixture::new();
    reversed.put("src/util", OUTLINE, SYNTH, "util", T0 + 5);
    for path in ["src/main.rs", "src/lib.rs"] {
        reversed.put(path, OUTLINE, WRITER, path, T0 + 9);
    }
    let other = listing(&reversed);
    assert_eq!(
        (other.frame_id, other.text()),
        (frame.frame_id, frame.text())
    );
}

#[test]
fn synthesis_needs_the_synthesis_role() {
    let fx = outlined();
    let before = (fx.store_digest(), fx.store.counts().expect("counts"));
    for (agent, message) in [
        (
            READER,
            "agent \"reader\" has role reader and may not synthesize",
        ),
        (
            WRITER,
            "agent \"writer\" has role writer and may not synthesize",
        ),
        (
            "stranger",
            "unknown agent \"stranger\": register it with `merkle agent add stranger --role writer`",
        ),
    ] {
        for _ in 0..2 {
            let err = synthesize(&fx.store, &fx.node("src"), &request(&Concat, agent))
                .expect_err("refused");
            assert!(
                matches!(
                    err,
                    Error::Store(
                        merkle_store::Error::Forbidden { .. }
                            | merkle_store::Error::UnknownAgent { .. }
                    )
                ),
                "{err:?}"
            );
            assert_eq!(err.to_string(), message);
            let err = synthesize_recursive(&fx.store, &fx.node(""), &request(&Concat, agent))
                .expect_err("refused");
            assert_eq!(err.to_string(), message);
        }
    }
    assert!(matches!(
        synthesize(&fx.store, &fx.node("src"), &request(&Concat, READER)),
        Err(Error::Store(merkle_store::Error::Forbidden {
            role: Role::Reader,
            ..
        }))
    ));
    assert_eq!(
        (fx.store_digest(), fx.store.counts().expect("counts")),
        before,
        "a refused synthesis writes nothing"
    );
}

/// The synthesizing agent is part of the frame's identity: two agents, two frames.
#[test]
fn the_agent_is_part_of_the_frame() {
    let fx = outlined();
    fx.store
        .add_agent("synth2", Role::Synthesis)
        .expect("add agent");
    let src = fx.node("src");
    let one = synthesize(&fx.store, &src, &request(&Concat, SYNTH)).expect("synthesize");
    let two = synthesize(&fx.store, &src, &request(&Concat, "synth2")).expect("synthesize");
    assert_ne!(one.frame_id, two.frame_id);
    let frame = |s: &Synthesized| fx.store.frame(&s.frame_id).expect("frame").expect("stored");
    assert_eq!(
        (frame(&one).agent_id, frame(&two).agent_id),
        (SYNTH.to_owned(), "synth2".to_owned())
    );
    assert_eq!(frame(&one).content, frame(&two).content);
}

#[test]
fn only_directories_are_synthesized() {
    let fx = outlined();
    let file = fx.node("src/lib.rs");
    let err = synthesize(&fx.store, &file, &request(&Concat, SYNTH)).expect_err("a file");
    assert!(matches!(&err, Error::NotADirectory { path } if path == "src/lib.rs"));
    assert_eq!(
        err.to_string(),
        "\"src/lib.rs\" is not a directory: only directories are synthesized"
    );
    let err = synthesize_recursive(&fx.store, &file, &request(&Concat, SYNTH)).expect_err("a file");
    assert!(matches!(&err, Error::NotADirectory { path } if path == "src/lib.rs"));
}

#[test]
fn a_failing_policy_names_itself_and_the_directory() {
    let fx = outlined();
    let (frames_before, counts_before) = (fx.frames_by_path(), fx.store.counts().expect("counts"));
    let err =
        synthesize(&fx.store, &fx.node("src/util"), &request(&Failing, SYNTH)).expect_err("fails");
    assert_eq!(
        err.to_string(),
        "synthesis policy failing failed on \"src/util\": no summary today"
    );
    assert_eq!(
        (fx.frames_by_path(), fx.store.counts().expect("counts")),
        (frames_before, counts_before)
    );
}

/// What each built-in policy writes for the fixture tree, directory by directory.
fn render(fx: &Fixture, done: &[Synthesized]) -> String {
    let mut out = String::new();
    for s in done {
        let frame = fx.store.frame(&s.frame_id).expect("frame").expect("stored");
        let path = if s.path.is_empty() { "." } else { &s.path };
        out.push_str(&format!(
            "=== {path} ({} children)\n{}",
            s.children,
            frame.text().expect("text")
        ));
    }
    out
}

#[test]
fn snapshot_concat() {
    let fx = outlined();
    let done = fx.synthesize_all(&Concat);
    crate::fixture::snapshot_settings()
        .bind(|| insta::assert_snapshot!("synthesize_concat", render(&fx, &done)));
}

#[test]
fn snapshot_summary() {
    let fx = outlined();
    let done = fx.synthesize_all(&Summary {
        lines_per_child: 2,
        max_bytes: 200,
    });
    for d in &done {
        let frame = fx.store.frame(&d.frame_id).expect("frame").expect("stored");
        assert!(
            frame.content.len() <= 200,
            "{}: {} bytes",
            d.path,
            frame.content.len()
        );
    }
    crate::fixture::snapshot_settings()
        .bind(|| insta::assert_snapshot!("synthesize_summary", render(&fx, &done)));
}

#[test]
fn snapshot_filter() {
    let fx = outlined();
    let done = fx.synthesize_all(&Filter::containing("Rust"));
    crate::fixture::snapshot_settings()
        .bind(|| insta::assert_snapshot!("synthesize_filter", render(&fx, &done)));
}

/// `*` collects every type from the children and is written under `all`; regenerating it
/// collects every type again.
#[test]
fn every_type_is_collected_with_a_star() {
    let fx = outlined();
    fx.put("src/lib.rs", "notes", WRITER, "a note on lib", T0);
    let src = fx.node("src");
    let done = synthesize(
        &fx.store,
        &src,
        &SynthesisRequest {
            frame_type: "*",
            ..request(&Concat, SYNTH)
        },
    )
    .expect("synthesize *");
    assert_eq!(done.frame_type, context::synthesis::ALL_TYPES);
    let frame = fx
        .store
        .frame(&done.frame_id)
        .expect("frame")
        .expect("stored");
    let text = frame.text().expect("text");
    assert!(
        text.contains("## src/lib.rs (notes)\na note on lib"),
        "{text}"
    );
    assert!(text.contains("## src/lib.rs (outline)"), "{text}");
    assert_eq!(context::synthesis::collected_type(&frame), "*");
    // The same children give the same frame; nothing is stale.
    let again = synthesize(
        &fx.store,
        &src,
        &SynthesisRequest {
            frame_type: "*",
            ..request(&Concat, SYNTH)
        },
    )
    .expect("synthesize * again");
    assert_eq!((again.frame_id, again.created), (done.frame_id, false));
    assert!(
        context::stale_frames(&fx.store)
            .expect("stale")
            .iter()
            .all(|s| s.frame_type != context::synthesis::ALL_TYPES)
    );
}

/// The built-in policies write children in reading order: a README first, then entry points,
/// then the rest by name, whatever their NodeIDs (which order the basis, not the text).
#[test]
fn policies_write_readme_and_entry_points_first_then_by_name() {
    let fx = outlined();
    for (path, content) in [
        ("src/util/aaa.rs", "pub fn a() {}\n"),
        ("src/util/zeta.rs", "pub fn z() {}\n"),
        ("src/util/readme.md", "How util is laid out.\n"),
    ] {
        std::fs::write(fx.dir.path().join(path), content).expect("write");
    }
    fx.rescan();
    for path in ["src/util/aaa.rs", "src/util/zeta.rs", "src/util/readme.md"] {
        fx.put(path, OUTLINE, WRITER, &format!("outline of {path}"), T0);
    }
    let expected: Vec<String> = ["readme.md", "mod.rs", "aaa.rs", "strings.rs", "zeta.rs"]
        .iter()
        .map(|name| format!("## src/util/{name} ({OUTLINE})"))
        .collect();
    let summary = Summary::default();
    for policy in [&Concat as &dyn SynthesisPolicy, &summary] {
        let done = synthesize(&fx.store, &fx.node("src/util"), &request(policy, SYNTH))
            .expect("synthesize");
        let frame = fx
            .store
            .frame(&done.frame_id)
            .expect("frame")
            .expect("stored");
        let headers: Vec<String> = frame
            .text()
            .expect("text")
            .lines()
            .filter(|l| l.starts_with("## "))
            .map(str::to_owned)
            .collect();
        assert_eq!(headers, expected, "{}", policy.id());
    }
}

/// The shared operation: a policy by name, one directory or its subtree, one JSON shape.
#[test]
fn the_synthesize_operation_takes_a_policy_by_name() {
    let fx = outlined();
    let src = fx.node("src");
    let op = |policy: &'static str, recursive: bool| context::ops::Synthesize {
        frame_type: OUTLINE,
        agent: SYNTH,
        policy,
        contains: None,
        recursive,
    };
    let one = context::ops::synthesize_dir(&fx.store, &src, &op("concat", false)).expect("one");
    assert_eq!(one.len(), 1);
    let json = context::ops::synthesized_json(&one, false);
    assert_eq!(json["path"], "src");
    assert_eq!(json["created"], true);
    let all = context::ops::synthesize_dir(&fx.store, &src, &op("concat", true)).expect("all");
    let json = context::ops::synthesized_json(&all, true);
    assert_eq!(json["frames"].as_array().map(Vec::len), Some(all.len()));
    // src/util first, then src again (its child's frame is new).
    assert_eq!(
        (&json["written"], &json["unchanged"]),
        (&2.into(), &0.into()),
        "{json}"
    );
    let again = context::ops::synthesize_dir(&fx.store, &src, &op("concat", true)).expect("again");
    let json = context::ops::synthesized_json(&again, true);
    assert_eq!(
        (&json["written"], &json["unchanged"]),
        (&0.into(), &2.into()),
        "{json}"
    );
    let err = context::ops::synthesize_dir(&fx.store, &src, &op("poetry", false))
        .expect_err("no such policy");
    assert!(err.to_string().contains("poetry"), "{err}");
}
