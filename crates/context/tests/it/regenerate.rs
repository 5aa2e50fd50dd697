//! Incremental regeneration: exactly the stale frames in scope, bottom-up, with early cutoff.
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use context::{
    Concat, FrameProducer, Outline, Producers, RegenerateRequest, RegenerateScope, Regenerated,
    SynthesisInput, SynthesisPolicy, invalidate, regenerate, stale_frames,
};
use merkle_store::{FrameId, NodeRecord};
use pretty_assertions::assert_eq;

use crate::fixture::{Fixture, MOD_RS, OUTLINE, READER, T0, WRITER};

const MOD: &str = "src/util/mod.rs";

/// The outline producer, counting its runs.
#[derive(Default)]
struct CountingOutline(AtomicUsize);

impl FrameProducer for CountingOutline {
    fn id(&self) -> String {
        Outline::default().id()
    }

    fn produce(&self, node: &NodeRecord, content: &[u8]) -> Result<Vec<u8>, String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Outline::default().produce(node, content)
    }
}

/// Concatenation under its built-in id, counting its runs.
#[derive(Default)]
struct CountingConcat(AtomicUsize);

impl SynthesisPolicy for CountingConcat {
    fn id(&self) -> String {
        Concat.id()
    }

    fn synthesize(&self, input: &SynthesisInput<'_>) -> Result<Vec<u8>, String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Concat.synthesize(input)
    }
}

/// Regenerates with counting producer and policy.
struct Regen {
    producer: Arc<CountingOutline>,
    policy: Arc<CountingConcat>,
    producers: Producers,
    policies: BTreeMap<String, Arc<dyn SynthesisPolicy>>,
}

impl Regen {
    fn new() -> Regen {
        let producer = Arc::new(CountingOutline::default());
        let policy = Arc::new(CountingConcat::default());
        Regen {
            producers: Producers::default().with(OUTLINE, producer.clone()),
            policies: BTreeMap::from([(Concat.id(), policy.clone() as Arc<dyn SynthesisPolicy>)]),
            producer,
            policy,
        }
    }

    fn run(&self, fx: &Fixture, path: &str, recursive: bool, up: Option<usize>) -> Regenerated {
        regenerate(
            &fx.store,
            &fx.node(path),
            &RegenerateRequest {
                scope: RegenerateScope { recursive, up },
                producers: &self.producers,
                policies: &self.policies,
                now_ms: T0 + 1_000,
            },
        )
        .expect("regenerate")
    }

    /// (producer runs, policy runs) so far.
    fn runs(&self) -> (usize, usize) {
        (
            self.producer.0.load(Ordering::SeqCst),
            self.policy.0.load(Ordering::SeqCst),
        )
    }
}

fn label(path: &str, frame_type: &str) -> String {
    let path = if path.is_empty() { "." } else { path };
    format!("{path} {frame_type}")
}

/// A regeneration as a test checks it.
#[derive(Debug, PartialEq)]
struct Report {
    regenerated: Vec<String>,
    reused: Vec<String>,
    unchanged: usize,
    skipped: Vec<String>,
}

fn report(r: &Regenerated) -> Report {
    let labels = |v: &[(String, String, FrameId)]| v.iter().map(|(p, t, _)| label(p, t)).collect();
    Report {
        regenerated: labels(&r.regenerated),
        reused: labels(&r.reused),
        unchanged: r.unchanged,
        skipped: r.skipped.clone(),
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// Regenerates and checks the report and the producer and policy runs it cost; every frame it
/// reports is now the head at its path.
fn check(
    fx: &Fixture,
    regen: &Regen,
    (path, recursive, up): (&str, bool, Option<usize>),
    (regenerated, reused, unchanged): (&[&str], &[&str], usize),
    runs: (usize, usize),
) -> Regenerated {
    let before = regen.runs();
    let r = regen.run(fx, path, recursive, up);
    assert_eq!(
        (
            report(&r),
            (regen.runs().0 - before.0, regen.runs().1 - before.1)
        ),
        (
            Report {
                regenerated: strings(regenerated),
                reused: strings(reused),
                unchanged,
                skipped: Vec::new(),
            },
            runs
        )
    );
    for (p, t, id) in r.regenerated.iter().chain(&r.reused) {
        let head = fx
            .store
            .path_head(p, t)
            .expect("path head")
            .expect("a head");
        assert_eq!(head.frame_id, *id, "{}", label(p, t));
    }
    r
}

/// The stale frames, one `path type: reason` line each.
fn stale(fx: &Fixture) -> Vec<String> {
    stale_frames(&fx.store)
        .expect("stale frames")
        .into_iter()
        .map(|s| format!("{}: {}", label(&s.path, &s.frame_type), s.reason))
        .collect()
}

/// `src/util/mod.rs` with its first line changed: its outline changes.
fn edit_mod_outline(fx: &Fixture) {
    fx.edit(MOD, &MOD_RS.replace("Utilities", "Helpers"));
}

/// `src/util/mod.rs` with a change in its last line, which the outline does not show, and the
/// same size and line count.
fn edit_mod_tail(fx: &Fixture) {
    let edited = MOD_RS.replace("{ 9 }", "{ 0 }");
    assert_eq!(edited.len(), MOD_RS.len());
    fx.edit(MOD, &edited);
}

/// The fixture's every path has one outline frame, so a full regeneration covers this many.
fn frames_in_tree(fx: &Fixture) -> usize {
    let n = fx.paths().len();
    assert_eq!(
        fx.path_heads().values().map(Vec::len).sum::<usize>(),
        n,
        "one frame per path"
    );
    n
}

#[test]
fn nothing_is_stale_after_synthesis() {
    let fx = Fixture::with_outlines();
    assert_eq!(stale(&fx), Vec::<String>::new());
    let n = frames_in_tree(&fx);
    check(&fx, &Regen::new(), ("", true, None), (&[], &[], n), (0, 0));
}

/// One edit: exactly that file's frame and its ancestors' synthesized frames, counted; every
/// other head stays; the replaced frames stay readable.
#[test]
fn one_edit_regenerates_the_file_and_its_ancestors() {
    let fx = Fixture::with_outlines();
    let n = frames_in_tree(&fx);
    let before = fx.path_heads();
    let old_frames = fx.frames_by_path();
    edit_mod_outline(&fx);
    assert_eq!(
        stale(&fx),
        [
            ". outline: children changed",
            "src outline: children changed",
            "src/util outline: children changed",
            "src/util/mod.rs outline: node changed",
        ]
    );

    let regen = Regen::new();
    check(
        &fx,
        &regen,
        ("", true, None),
        (
            &[
                "src/util/mod.rs outline",
                "src/util outline",
                "src outline",
                ". outline",
            ],
            &[],
            n - 4,
        ),
        (1, 3),
    );
    assert_eq!(stale(&fx), Vec::<String>::new());
    assert_eq!(fx.store.validate().expect("validate"), Vec::new());

    let after = fx.path_heads();
    let touched = ["", "src", "src/util", MOD];
    for (path, heads) in &before {
        if touched.contains(&path.as_str()) {
            assert_ne!(&after[path], heads, "{path:?} has a new head");
        } else {
            assert_eq!(&after[path], heads, "{path:?} is untouched");
        }
    }
    // The replaced frames stay readable, by id and in their node's history.
    for path in touched {
        for old in &old_frames[path] {
            assert_eq!(
                fx.store.frame(&old.frame_id).expect("frame"),
                Some(old.clone())
            );
            assert!(
                fx.store
                    .frames_of(&old.node_id, None)
                    .expect("frames of")
                    .contains(old)
            );
        }
    }
}

/// Re-running with nothing changed writes nothing and says so.
#[test]
fn rerunning_is_idempotent() {
    let fx = Fixture::with_outlines();
    let n = frames_in_tree(&fx);
    edit_mod_outline(&fx);
    let regen = Regen::new();
    regen.run(&fx, "", true, None);
    let heads = fx.path_heads();
    let digest = fx.store_digest();
    for _ in 0..2 {
        check(&fx, &regen, ("", true, None), (&[], &[], n), (0, 0));
    }
    assert_eq!((fx.path_heads(), fx.store_digest()), (heads, digest));
}

/// The same edit gives the same new frames in another workspace; they differ from the old ones.
#[test]
fn regenerated_frame_ids_are_deterministic_and_new() {
    let run = || {
        let fx = Fixture::with_outlines();
        let old = fx.path_heads();
        edit_mod_outline(&fx);
        (old, Regen::new().run(&fx, "", true, None))
    };
    let (old, first) = run();
    let (_, second) = run();
    assert_eq!(second, first);
    for (path, frame_type, id) in &first.regenerated {
        assert!(
            !old[path].contains(&(frame_type.clone(), *id)),
            "{}",
            label(path, frame_type)
        );
    }
}

/// `up` bounds how far a change propagates: ancestors past it stay stale until asked for.
#[test]
fn propagation_stops_at_the_declared_boundary() {
    let fx = Fixture::with_outlines();
    edit_mod_outline(&fx);
    let regen = Regen::new();
    check(
        &fx,
        &regen,
        (MOD, false, Some(1)),
        (&["src/util/mod.rs outline", "src/util outline"], &[], 0),
        (1, 1),
    );
    assert_eq!(
        stale(&fx),
        [
            ". outline: children changed",
            "src outline: children changed"
        ]
    );
    // No `up`: the node alone, which is no longer stale.
    check(&fx, &regen, (MOD, false, None), (&[], &[], 1), (0, 0));
    // A subtree without its ancestors.
    check(&fx, &regen, ("src/util", true, None), (&[], &[], 3), (0, 0));
    assert_eq!(stale(&fx).len(), 2);
    // A boundary past the root stops at the root.
    check(
        &fx,
        &regen,
        (MOD, false, Some(10)),
        (&["src outline", ". outline"], &[], 2),
        (0, 2),
    );
    assert_eq!(stale(&fx), Vec::<String>::new());
}

/// An edit the outline does not show: the producer runs (the file changed) and gives the same
/// content, so the ancestors' inputs are unchanged and their policy does not run.
#[test]
fn early_cutoff_when_the_outline_is_unchanged() {
    let fx = Fixture::with_outlines();
    let n = frames_in_tree(&fx);
    let content = |fx: &Fixture, path: &str| {
        fx.store
            .path_head(path, OUTLINE)
            .expect("path head")
            .expect("a frame")
            .content
    };
    let touched = ["", "src", "src/util", MOD];
    let old: Vec<_> = touched.iter().map(|p| content(&fx, p)).collect();
    let old_heads = fx.path_heads();
    edit_mod_tail(&fx);
    assert_eq!(stale(&fx).len(), 4);

    check(
        &fx,
        &Regen::new(),
        ("", true, None),
        (
            &["src/util/mod.rs outline"],
            &["src/util outline", "src outline", ". outline"],
            n - 4,
        ),
        (1, 0),
    );
    assert_eq!(
        touched.iter().map(|p| content(&fx, p)).collect::<Vec<_>>(),
        old
    );
    // The frames are new all the same: their nodes changed.
    for path in touched {
        assert_ne!(fx.path_heads()[path], old_heads[path], "{path:?}");
    }
    assert_eq!(stale(&fx), Vec::<String>::new());
}

/// `invalidate` is recorded, append-only, and makes the frame stale; the next regenerate
/// recomputes it (the producer or policy runs even though its input is unchanged) and then
/// nothing is stale.
#[test]
fn invalidate_marks_frames_stale() {
    let fx = Fixture::with_outlines();
    let lib = fx.node("src/lib.rs");
    let frames = fx.store.frames_of(&lib.node_id, None).expect("frames of");
    let ids = invalidate(&fx.store, &lib, &[], WRITER, T0 + 5).expect("invalidate");
    assert_eq!(stale(&fx), ["src/lib.rs outline: invalidated"]);
    let after = fx.store.frames_of(&lib.node_id, None).expect("frames of");
    assert_eq!(&after[..frames.len()], &frames[..], "nothing is removed");
    let record = fx.store.frame(&ids[0]).expect("frame").expect("stored");
    assert_eq!(
        (ids.len(), record.frame_type.as_str()),
        (1, context::invalidation::INVALIDATION_TYPE)
    );
    // Invalidating twice in a row records one invalidation.
    assert_eq!(
        invalidate(&fx.store, &lib, &[], WRITER, T0 + 6).expect("invalidate"),
        ids
    );

    // Only the listed types.
    let src = fx.node("src");
    invalidate(&fx.store, &src, &["notes".to_owned()], WRITER, T0 + 5).expect("invalidate");
    assert_eq!(stale(&fx), ["src/lib.rs outline: invalidated"]);
    invalidate(&fx.store, &src, &[OUTLINE.to_owned()], WRITER, T0 + 6).expect("invalidate");
    assert_eq!(
        stale(&fx),
        [
            "src outline: invalidated",
            "src/lib.rs outline: invalidated"
        ]
    );

    // Regeneration recomputes both (the producer and the policy run although their inputs are
    // unchanged) and writes new frames; the root's inputs are unchanged, so its content is
    // reused; nothing is stale after, and a second run does nothing.
    let regen = Regen::new();
    let lib_before = fx.store.path_head("src/lib.rs", OUTLINE).expect("head");
    let r = regen.run(&fx, "src", true, Some(1));
    assert_eq!(
        (report(&r).regenerated, report(&r).reused, regen.runs()),
        (
            strings(&["src/lib.rs outline", "src outline"]),
            strings(&[". outline"]),
            (1, 1)
        )
    );
    let lib_after = fx.store.path_head("src/lib.rs", OUTLINE).expect("head");
    assert_ne!(
        lib_before.map(|f| f.frame_id),
        lib_after.map(|f| f.frame_id)
    );
    assert_eq!(stale(&fx), Vec::<String>::new());
    let again = regen.run(&fx, "src", true, Some(1));
    assert_eq!((again.regenerated.len(), again.reused.len()), (0, 0));
    // Invalidating after a regeneration is a new record.
    let next = invalidate(&fx.store, &lib, &[], WRITER, T0 + 7).expect("invalidate");
    assert_ne!(next, ids);
    assert_eq!(stale(&fx), ["src/lib.rs outline: invalidated"]);
}

/// A reader can neither produce a frame nor record an invalidation, and trying writes nothing.
#[test]
fn readers_write_nothing() {
    let fx = Fixture::with_outlines();
    let before = (fx.store_digest(), fx.store.counts().expect("counts"));
    let lib = fx.node("src/lib.rs");
    let refused = "agent \"reader\" has role reader and may not put frames";
    let err = context::produce(&fx.store, &lib, "notes", READER, &Outline::default(), T0)
        .expect_err("reader");
    assert_eq!(err.to_string(), refused);
    let err = invalidate(&fx.store, &lib, &[], READER, T0).expect_err("reader");
    assert_eq!(err.to_string(), refused);
    assert_eq!(
        (fx.store_digest(), fx.store.counts().expect("counts")),
        before
    );
}

/// A stale file frame with no producer for its type is skipped and reported, and stays stale.
#[test]
fn a_missing_producer_is_reported_not_fatal() {
    let fx = Fixture::with_outlines();
    edit_mod_outline(&fx);
    let r = regenerate(
        &fx.store,
        &fx.node(MOD),
        &RegenerateRequest {
            scope: RegenerateScope::default(),
            producers: &Producers::default(),
            policies: &BTreeMap::new(),
            now_ms: T0,
        },
    )
    .expect("regenerate");
    assert_eq!(
        report(&r),
        Report {
            regenerated: Vec::new(),
            reused: Vec::new(),
            unchanged: 0,
            skipped: strings(&[
                "\"src/util/mod.rs\" outline: no producer for frame type \"outline\" on \"src/util/mod.rs\""
            ]),
        }
    );
    assert!(stale(&fx).contains(&"src/util/mod.rs outline: node changed".to_owned()));
}

/// Threads regenerating overlapping subtrees leave the store valid, nothing stale, and the same
/// heads as one thread doing it alone. The scopes are whole subtrees: a scope bounded by `up`
/// synthesizes an ancestor from siblings it does not cover; that race has its own test below.
#[test]
fn concurrent_regeneration_is_safe() {
    let concurrent = Fixture::with_outlines();
    let sequential = Fixture::with_outlines();
    let edits = [
        (MOD, MOD_RS.replace("Utilities", "Helpers")),
        ("docs/guide.md", "# Guide\n\nStart anywhere.\n".to_owned()),
        ("src/lib.rs", "pub mod util;\n".to_owned()),
        (MOD, MOD_RS.replace("{ 9 }", "{ 0 }")),
    ];
    let regen = Regen::new();
    for (path, content) in &edits {
        for fx in [&concurrent, &sequential] {
            fx.edit(path, content);
        }
        std::thread::scope(|s| {
            for from in ["", "src", "src/util", "", "docs"] {
                let (fx, regen) = (&concurrent, &regen);
                s.spawn(move || {
                    let r = regen.run(fx, from, true, None);
                    assert_eq!(r.skipped, Vec::<String>::new());
                });
            }
        });
        regen.run(&sequential, "", true, None);

        assert_eq!(
            concurrent.store.validate().expect("validate"),
            Vec::new(),
            "after editing {path}"
        );
        assert_eq!(
            stale(&concurrent),
            Vec::<String>::new(),
            "after editing {path}"
        );
        assert_eq!(
            concurrent.path_heads(),
            sequential.path_heads(),
            "after editing {path}"
        );
    }
}

/// Concatenation under its built-in id that, for the root only, waits until released: it lets
/// a test hold one regeneration in the middle of its root synthesis.
struct GatedConcat {
    entered: std::sync::mpsc::SyncSender<()>,
    release: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

impl SynthesisPolicy for GatedConcat {
    fn id(&self) -> String {
        Concat.id()
    }

    fn synthesize(&self, input: &SynthesisInput<'_>) -> Result<Vec<u8>, String> {
        if input.dir.path.is_empty() {
            // Only the first root synthesis waits; a redo under the lock goes straight through.
            if self.entered.try_send(()).is_ok() {
                let rx = self.release.lock().expect("release lock");
                rx.recv().map_err(|e| e.to_string())?;
            }
        }
        Concat.synthesize(input)
    }
}

/// A regeneration that read the children's heads before another one replaced them must not
/// make its synthesis from the superseded heads the head: here thread A is held inside its
/// root synthesis while thread B regenerates everything, then A finishes.
#[test]
fn a_synthesis_from_superseded_children_never_becomes_the_head() {
    let fx = Fixture::with_outlines();
    fx.edit("docs/guide.md", "# Guide, edited\n\nNew words.\n");
    fx.edit(MOD, &MOD_RS.replace("Utilities", "Helpers"));
    fx.rescan();
    let (entered_tx, entered_rx) = std::sync::mpsc::sync_channel(1);
    let (release_tx, release_rx) = std::sync::mpsc::channel();
    let gated = Arc::new(GatedConcat {
        entered: entered_tx,
        release: std::sync::Mutex::new(release_rx),
    });
    let producers = Producers::default().with(OUTLINE, Arc::new(Outline::default()));
    let gated_policies: BTreeMap<String, Arc<dyn SynthesisPolicy>> =
        BTreeMap::from([(Concat.id(), gated.clone() as Arc<dyn SynthesisPolicy>)]);
    let plain: BTreeMap<String, Arc<dyn SynthesisPolicy>> = BTreeMap::new();
    let run = |path: &str,
               scope: RegenerateScope,
               policies: &BTreeMap<String, Arc<dyn SynthesisPolicy>>| {
        regenerate(
            &fx.store,
            &fx.node(path),
            &RegenerateRequest {
                scope,
                producers: &producers,
                policies,
                now_ms: T0 + 2_000,
            },
        )
        .expect("regenerate")
    };
    std::thread::scope(|s| {
        let a = s.spawn(|| {
            run(
                MOD,
                RegenerateScope {
                    recursive: false,
                    up: Some(3),
                },
                &gated_policies,
            )
        });
        entered_rx.recv().expect("A reached the root synthesis");
        run(
            "",
            RegenerateScope {
                recursive: true,
                up: None,
            },
            &plain,
        );
        release_tx.send(()).expect("release A");
        a.join().expect("thread A");
    });
    assert_eq!(stale(&fx), Vec::<String>::new());
    assert_eq!(fx.store.validate().expect("validate"), vec![]);
}

/// The stale-frame list is kept for the tree and the heads it was worked out for, read back
/// while neither moves, and worked out again after an edit (the tree moves) or a new frame (the
/// heads move).
#[test]
fn a_stale_frame_list_is_kept_for_its_tree_and_heads() {
    let fx = Fixture::with_outlines();
    let keyed = || context::stale_frames_keyed(&fx.store).expect("stale frames");
    let (first, key) = keyed();
    let key = key.expect("worked out, nothing kept yet");
    assert_eq!(first, vec![]);
    // A list kept under that key is what the next read answers, read rather than worked out.
    let planted = vec![context::Stale {
        path: "src".into(),
        frame_type: OUTLINE.into(),
        frame_id: fx.node("src").node_id,
        reason: "invalidated",
    }];
    context::keep_stale_frames(&fx.store, &key, &planted).expect("keep");
    assert_eq!(keyed(), (planted, None));
    // An edit moves the tree: worked out again, and `stale_frames` keeps it.
    edit_mod_outline(&fx);
    assert!(keyed().1.is_some());
    let after_edit = stale(&fx);
    assert!(
        after_edit.contains(&format!("{}: node changed", label(MOD, OUTLINE))),
        "{after_edit:?}"
    );
    assert_eq!(keyed().1, None);
    assert_eq!(stale(&fx), after_edit);
    // A new frame moves the heads: the file's frame is current again.
    context::produce(
        &fx.store,
        &fx.node(MOD),
        OUTLINE,
        WRITER,
        &Outline::default(),
        T0,
    )
    .expect("produce");
    assert!(keyed().1.is_some());
    assert!(
        !stale(&fx)
            .iter()
            .any(|s| s.starts_with(&label(MOD, OUTLINE))),
        "{:?}",
        stale(&fx)
    );
}

/// The stale frames worked out whole, frame by frame, as the test's own oracle.
fn stale_worked_out(fx: &Fixture) -> Vec<context::Stale> {
    let mut out = Vec::new();
    for path in fx.store.paths_with_frames().expect("paths with frames") {
        let Some(rec) = fx.store.node_at(&path).expect("node_at") else {
            continue;
        };
        let frames = context::current::current_frames(&fx.store, &rec.node_id, &path)
            .expect("current frames");
        for f in frames {
            if let Some(reason) = context::staleness(&fx.store, &rec, &f).expect("staleness") {
                out.push(context::Stale {
                    path: path.clone(),
                    frame_type: f.frame_type.clone(),
                    frame_id: f.frame_id,
                    reason,
                });
            }
        }
    }
    out.sort_by(|a, b| (&a.path, &a.frame_type).cmp(&(&b.path, &b.frame_type)));
    out
}

/// A list kept for one tree is brought up to the next by the paths that changed between them
/// (an edit, a folder removed, a file added) and is the list worked out whole each time.
#[test]
fn a_kept_stale_list_follows_the_tree_by_what_changed() {
    let fx = Fixture::with_outlines();
    assert_eq!(
        stale_frames(&fx.store).expect("kept for the first tree"),
        vec![]
    );

    edit_mod_outline(&fx);
    let (after_edit, unkept) = context::stale_frames_keyed(&fx.store).expect("stale frames");
    assert_eq!(after_edit, stale_worked_out(&fx));
    let paths: Vec<&str> = after_edit.iter().map(|s| s.path.as_str()).collect();
    assert!(
        paths.contains(&MOD) && paths.contains(&"src/util"),
        "{paths:?}"
    );
    context::keep_stale_frames(&fx.store, &unkept.expect("a new tree"), &after_edit).expect("keep");

    // The folder that held the stale file goes: its entries leave the list.
    std::fs::remove_dir_all(fx.dir.path().join("src/util")).expect("remove src/util");
    fx.rescan();
    let (after_removal, unkept) = context::stale_frames_keyed(&fx.store).expect("stale frames");
    assert_eq!(after_removal, stale_worked_out(&fx));
    assert!(
        !after_removal.iter().any(|s| s.path.starts_with("src/util")),
        "{after_removal:?}"
    );
    context::keep_stale_frames(&fx.store, &unkept.expect("a new tree"), &after_removal)
        .expect("keep");

    // A new file, with no frame of its own, changes the folders above it.
    fx.edit("docs/new.md", "# New\n");
    let (after_add, _) = context::stale_frames_keyed(&fx.store).expect("stale frames");
    assert_eq!(after_add, stale_worked_out(&fx));
    assert!(after_add.iter().any(|s| s.path == "docs"), "{after_add:?}");
}
