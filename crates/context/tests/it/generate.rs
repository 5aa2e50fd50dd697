//! `generate`'s memoization: a producer or policy runs only for inputs no frame in the store was
//! derived from, wherever that frame is attached.
use std::sync::atomic::{AtomicUsize, Ordering};

use context::{
    ChildFrame, Concat, FrameProducer, GenerateRequest, Generated, Outline, SynthesisInput,
    SynthesisPolicy, generate, generate_paths,
};
use merkle_store::NodeRecord;
use pretty_assertions::assert_eq;

use crate::fixture::{Fixture, SYNTH, T0, WRITER};

/// Counts the runs of the outline producer and the concatenation policy.
#[derive(Default)]
struct Counting {
    files: AtomicUsize,
    dirs: AtomicUsize,
}

impl FrameProducer for Counting {
    fn id(&self) -> String {
        Outline::default().id()
    }

    fn produce(&self, node: &NodeRecord, content: &[u8]) -> Result<Vec<u8>, String> {
        self.files.fetch_add(1, Ordering::SeqCst);
        Outline::default().produce(node, content)
    }
}

impl SynthesisPolicy for Counting {
    fn id(&self) -> String {
        Concat.id()
    }

    fn synthesize(&self, input: &SynthesisInput<'_>) -> Result<Vec<u8>, String> {
        self.dirs.fetch_add(1, Ordering::SeqCst);
        Concat.synthesize(input)
    }
}

/// A name-blind policy: it counts its runs, checks it is shown no names, and writes how many
/// children it saw and their bodies' sizes.
#[derive(Default)]
struct Unnamed {
    runs: AtomicUsize,
}

impl SynthesisPolicy for Unnamed {
    fn id(&self) -> String {
        "unnamed".to_owned()
    }

    fn reads_names(&self) -> bool {
        false
    }

    fn synthesize(&self, input: &SynthesisInput<'_>) -> Result<Vec<u8>, String> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        assert!(input.children.iter().all(|c| c.path.is_empty()), "no names");
        let sizes: Vec<String> = input
            .children
            .iter()
            .map(|c| c.body().len().to_string())
            .collect();
        Ok(format!("{} children of {} bytes", sizes.len(), sizes.join("+")).into_bytes())
    }
}

fn request<'a>(
    producer: &'a dyn FrameProducer,
    policy: &'a dyn SynthesisPolicy,
) -> GenerateRequest<'a> {
    GenerateRequest {
        frame_type: "summary",
        agent: SYNTH,
        producer,
        policy,
        recursive: true,
        now_ms: T0,
        progress: None,
        replace_other_producers: false,
        threads: None,
    }
}

/// Generates `summary` frames over the whole tree; returns the report and the (file, directory)
/// runs it cost.
fn run(fx: &Fixture, counting: &Counting) -> (Generated, (usize, usize)) {
    let before = (
        counting.files.load(Ordering::SeqCst),
        counting.dirs.load(Ordering::SeqCst),
    );
    let report = generate(&fx.store, &fx.node(""), &request(counting, counting)).expect("generate");
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let after = (
        counting.files.load(Ordering::SeqCst),
        counting.dirs.load(Ordering::SeqCst),
    );
    (report, (after.0 - before.0, after.1 - before.1))
}

/// The content of the latest `summary` frame at `path`.
fn summary_at(fx: &Fixture, path: &str) -> Option<Vec<u8>> {
    fx.store
        .path_head(path, "summary")
        .expect("path head")
        .map(|f| f.content)
}

#[test]
fn a_renamed_or_duplicated_file_reuses_its_frame() {
    let fx = Fixture::new();
    let counting = Counting::default();
    let (_, (files, _)) = run(&fx, &counting);
    assert_eq!(files, 6);

    let root = fx.dir.path();
    std::fs::rename(root.join("src/main.rs"), root.join("src/bin.rs")).expect("rename");
    std::fs::copy(root.join("README.md"), root.join("docs/README-copy.md")).expect("copy");
    fx.rescan();
    let (report, (files, dirs)) = run(&fx, &counting);
    assert_eq!((report.produced, report.reused, files), (0, 2, 0));
    // The directories above them list other children now, so they are synthesized again.
    assert_eq!(dirs, 3);
    let content = |path: &str| summary_at(&fx, path);
    assert!(content("src/bin.rs").is_some());
    assert_eq!(content("src/bin.rs"), content("src/main.rs"));
    assert_eq!(content("docs/README-copy.md"), content("README.md"));
}

#[test]
fn a_reverted_edit_reuses_every_earlier_frame() {
    let fx = Fixture::new();
    let counting = Counting::default();
    run(&fx, &counting);
    let original = std::fs::read_to_string(fx.dir.path().join("src/lib.rs")).expect("read");

    fx.edit("src/lib.rs", "//! Edited.\npub mod util;\n");
    let (_, edited) = run(&fx, &counting);
    // The file, then src and the root: each directory's input changed.
    assert_eq!(edited, (1, 2));

    fx.edit("src/lib.rs", &original);
    let (report, reverted) = run(&fx, &counting);
    assert_eq!(reverted, (0, 0), "{report:?}");
    // The reverted file and its directories are their old nodes again, whose frames are current.
    assert_eq!((report.produced, report.synthesized), (0, 0));
}

#[test]
fn a_file_copied_into_another_directory_and_back_costs_nothing() {
    let fx = Fixture::new();
    let counting = Counting::default();
    run(&fx, &counting);
    let root = fx.dir.path();
    // src/util gains a copy of docs/guide.md: the file is memoized, src/util and its
    // ancestors are synthesized once.
    std::fs::copy(root.join("docs/guide.md"), root.join("src/util/guide.md")).expect("copy");
    fx.rescan();
    assert_eq!(run(&fx, &counting).1, (0, 3));
    // Removing it brings back inputs every directory had before: nothing runs.
    std::fs::remove_file(root.join("src/util/guide.md")).expect("remove");
    fx.rescan();
    assert_eq!(run(&fx, &counting).1, (0, 0));
}

#[test]
fn an_invalidated_file_is_produced_again_once_and_not_reused_elsewhere() {
    let fx = Fixture::new();
    let counting = Counting::default();
    run(&fx, &counting);
    context::invalidate(
        &fx.store,
        &fx.node("src/lib.rs"),
        &["summary".to_owned()],
        SYNTH,
        T0 + 1,
    )
    .expect("invalidate");
    // A copy of the invalidated file: its memoized content was rejected, so it is produced.
    let root = fx.dir.path();
    std::fs::copy(root.join("src/lib.rs"), root.join("docs/lib-copy.rs")).expect("copy");
    fx.rescan();
    let (report, (files, _)) = run(&fx, &counting);
    assert_eq!((report.produced, files), (2, 2), "{report:?}");
    // The same content again, but a new frame answering the invalidation: nothing is stale.
    let (report, (files, dirs)) = run(&fx, &counting);
    assert_eq!((report.produced, files, dirs), (0, 0, 0), "{report:?}");
    assert!(context::stale_frames(&fx.store).expect("stale").is_empty());
}

/// A policy that computes (the concatenation) has a level's directories prepared in parallel;
/// one that may not (counting its runs, as a model's would) has them one at a time, in order.
/// Both make the same frames and the same report.
#[test]
fn a_policy_that_computes_makes_what_one_at_a_time_makes() {
    let counting = Counting::default();
    assert!(Concat.computes() && !counting.computes());
    let (parallel, in_turn) = (Fixture::new(), Fixture::new());
    let at_once = generate(
        &parallel.store,
        &parallel.node(""),
        &request(&counting, &Concat),
    )
    .expect("generate in parallel");
    let (one_by_one, (_, dirs)) = run(&in_turn, &counting);
    assert_eq!(at_once, one_by_one);
    assert_eq!(dirs, at_once.synthesized);
    assert!(at_once.synthesized > 1, "{at_once:?}");
    assert_eq!(parallel.path_heads(), in_turn.path_heads());
}

#[test]
fn generating_what_a_rescan_changed_equals_generating_the_whole_tree() {
    let whole = Fixture::new();
    let changed = Fixture::new();
    let counting = Counting::default();
    run(&whole, &counting);
    run(&changed, &counting);
    let content = "//! Edited.\npub mod util;\n";
    whole.edit("src/lib.rs", content);
    let paths = changed.edit("src/lib.rs", content);
    assert_eq!(paths, ["", "src", "src/lib.rs"]);

    let before = counting.dirs.load(Ordering::SeqCst);
    let report = generate_paths(&changed.store, &paths, &request(&counting, &counting))
        .expect("generate the changed paths");
    assert_eq!(
        (report.produced, report.synthesized, report.up_to_date),
        (1, 2, 0),
        "the file, then src and the root; nothing else visited"
    );
    assert_eq!(counting.dirs.load(Ordering::SeqCst) - before, 2);
    run(&whole, &counting);
    assert_eq!(changed.path_heads(), whole.path_heads());
    assert_eq!(
        context::stale_frames(&changed.store).expect("stale"),
        vec![]
    );
    // Paths the tree no longer holds are skipped.
    let gone = generate_paths(
        &changed.store,
        &["no/such.rs".to_owned()],
        &request(&counting, &counting),
    )
    .expect("nothing to do");
    assert_eq!(gone, Generated::default());
}

#[test]
fn a_policy_that_reads_no_names_runs_for_no_rename_and_lists_the_new_names() {
    let fx = Fixture::new();
    let policy = Unnamed::default();
    let producer = Outline::default();
    let root = fx.node("");
    generate(&fx.store, &root, &request(&producer, &policy)).expect("generate");
    let first = policy.runs.load(Ordering::SeqCst);
    let src = |fx: &Fixture| {
        let frame = fx
            .store
            .path_head("src", "summary")
            .expect("head")
            .expect("a frame");
        String::from_utf8(frame.content).expect("text")
    };
    let before = src(&fx);
    assert!(before.contains("\n- `main.rs`: "), "{before}");

    std::fs::rename(
        fx.dir.path().join("src/main.rs"),
        fx.dir.path().join("src/bin.rs"),
    )
    .expect("rename");
    fx.rescan();
    let report = generate(&fx.store, &fx.node(""), &request(&producer, &policy)).expect("generate");
    assert_eq!(
        (
            policy.runs.load(Ordering::SeqCst) - first,
            report.synthesis_reused
        ),
        (0, 2),
        "src and the root are written again without a run"
    );
    let after = src(&fx);
    let own = |text: &str| text.split("\n\nContents:\n").next().map(str::to_owned);
    assert_eq!(own(&after), own(&before));
    assert!(
        after.contains("\n- `bin.rs`: ") && !after.contains("main.rs"),
        "{after}"
    );
    // A parent reads its child's own output, not its list: the root's input is unchanged.
    let child = ChildFrame {
        path: "src".to_owned(),
        kind: merkle_store::NodeKind::Dir,
        frame: fx
            .store
            .path_head("src", "summary")
            .expect("head")
            .expect("a frame"),
        size: None,
    };
    assert_eq!(
        String::from_utf8_lossy(child.body()),
        own(&after).expect("an overview")
    );

    // The outline reads the language a name suggests: a rename that changes it is new work.
    std::fs::rename(
        fx.dir.path().join("src/bin.rs"),
        fx.dir.path().join("src/bin.py"),
    )
    .expect("rename");
    fx.rescan();
    let report = generate(&fx.store, &fx.node(""), &request(&producer, &policy)).expect("generate");
    assert_eq!((report.produced, report.reused), (1, 0));
    let outline = fx
        .store
        .path_head("src/bin.py", "summary")
        .expect("head")
        .expect("a frame");
    assert!(
        outline.text().is_some_and(|t| t.starts_with("Python, ")),
        "{outline:?}"
    );
}

#[test]
fn a_whole_tree_generation_starts_from_its_checkpoint_while_no_frame_was_created() {
    let fx = Fixture::new();
    let counting = Counting::default();
    let nodes = fx.paths().len();
    let (first, _) = run(&fx, &counting);
    assert_eq!(first.visited, nodes);

    // Nothing changed, no frame created: nothing to look at, everything up to date.
    let (again, runs) = run(&fx, &counting);
    assert_eq!((again.visited, again.up_to_date, runs), (0, nodes, (0, 0)));

    // An edit: the file and the directories above it, nothing else.
    fx.edit("src/util/mod.rs", "pub mod edited;\n");
    let (edited, runs) = run(&fx, &counting);
    assert_eq!((edited.visited, runs), (4, (1, 3)), "{edited:?}");
    assert_eq!(edited.up_to_date, nodes - 4);
    assert_eq!(context::stale_frames(&fx.store).expect("stale"), vec![]);

    // A frame put by anyone else: the checkpoint no longer vouches for the frames, so every
    // node is looked at again (and found up to date).
    fx.put("README.md", "notes", WRITER, "hand-written notes", T0);
    let (after_put, runs) = run(&fx, &counting);
    assert_eq!((after_put.visited, runs), (nodes, (0, 0)));

    // An invalidation is a frame too: the next generation looks everywhere and redoes it.
    context::invalidate(
        &fx.store,
        &fx.node("src/lib.rs"),
        &["summary".to_owned()],
        SYNTH,
        T0,
    )
    .expect("invalidate");
    let (after_invalidation, runs) = run(&fx, &counting);
    assert_eq!(after_invalidation.visited, nodes);
    assert_eq!(runs.0, 1, "the invalidated file is produced again");
    assert_eq!(run(&fx, &counting).0.visited, 0);
}

/// The request of `request` on one thread of its own: 16 files, and 16 directories of a level,
/// a commit; each chunk is produced before the one before it is put.
fn one_thread<'a>(
    producer: &'a dyn FrameProducer,
    policy: &'a dyn SynthesisPolicy,
) -> GenerateRequest<'a> {
    GenerateRequest {
        threads: Some(1),
        ..request(producer, policy)
    }
}

#[test]
fn a_file_like_one_in_the_chunk_being_put_reuses_its_content() {
    let fx = Fixture::new();
    let many = fx.dir.path().join("many");
    std::fs::create_dir(&many).expect("mkdir");
    // f16 to f47 repeat the 16 files before them: each is produced in the chunk after its
    // twin's, before that chunk is put.
    for i in 0..48 {
        let content = format!("pub fn f{}() {{}}\n", i % 16);
        std::fs::write(many.join(format!("f{i:02}.rs")), content).expect("write");
    }
    fx.rescan();
    let counting = Counting::default();
    let report =
        generate(&fx.store, &fx.node(""), &one_thread(&counting, &counting)).expect("generate");
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!((report.produced, report.reused), (6 + 16, 32));
    assert_eq!(counting.files.load(Ordering::SeqCst), 6 + 16);
    let head = |p: &str| summary_at(&fx, p);
    assert!(head("many/f40.rs").is_some());
    assert_eq!(head("many/f40.rs"), head("many/f08.rs"));
    // Each frame's memo went in with it: a copy made now reuses without a run.
    std::fs::copy(many.join("f47.rs"), fx.dir.path().join("copy.rs")).expect("copy");
    fx.rescan();
    let again = generate(&fx.store, &fx.node(""), &request(&counting, &counting)).expect("again");
    assert_eq!((again.produced, again.reused), (0, 1));
}

#[test]
fn directories_of_a_level_put_a_chunk_at_a_time_make_what_one_commit_makes() {
    let (chunked, at_once) = (Fixture::new(), Fixture::new());
    for fx in [&chunked, &at_once] {
        // 40 folders at one level, d20 to d39 the same as d00 to d19 but for their names.
        for i in 0..40 {
            let dir = fx.dir.path().join(format!("many/d{i:02}"));
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(dir.join("x.rs"), format!("pub fn x{}() {{}}\n", i % 20))
                .expect("write");
        }
        fx.rescan();
    }
    let (policy, producer) = (Unnamed::default(), Outline::default());
    let report = generate(
        &chunked.store,
        &chunked.node(""),
        &one_thread(&producer, &policy),
    )
    .expect("generate a chunk at a time");
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let whole = generate(
        &at_once.store,
        &at_once.node(""),
        &request(&producer, &Unnamed::default()),
    )
    .expect("generate at once");
    // The folders of the later chunks find their twins' content in flight or in the store,
    // where one commit for the level runs the policy for both twins.
    assert_eq!(
        (
            report.synthesis_reused - whole.synthesis_reused,
            report.synthesized + 20
        ),
        (20, whole.synthesized),
        "{report:?} {whole:?}"
    );
    assert_eq!(chunked.path_heads(), at_once.path_heads());
}
