//! `generate`'s memoization: a producer or policy runs only for inputs no frame in the store was
//! derived from, wherever that frame is attached.
use std::sync::atomic::{AtomicUsize, Ordering};

use context::{
    Concat, FrameProducer, GenerateRequest, Generated, Outline, SynthesisInput, SynthesisPolicy,
    generate,
};
use merkle_store::NodeRecord;
use pretty_assertions::assert_eq;

use crate::fixture::{Fixture, SYNTH, T0};

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

/// Generates `summary` frames over the whole tree; returns the report and the (file, directory)
/// runs it cost.
fn run(fx: &Fixture, counting: &Counting) -> (Generated, (usize, usize)) {
    let before = (
        counting.files.load(Ordering::SeqCst),
        counting.dirs.load(Ordering::SeqCst),
    );
    let report = generate(
        &fx.store,
        &fx.node(""),
        &GenerateRequest {
            frame_type: "summary",
            agent: SYNTH,
            producer: counting,
            policy: counting,
            recursive: true,
            now_ms: T0,
            progress: None,
            replace_other_producers: false,
            threads: None,
        },
    )
    .expect("generate");
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let after = (
        counting.files.load(Ordering::SeqCst),
        counting.dirs.load(Ordering::SeqCst),
    );
    (report, (after.0 - before.0, after.1 - before.1))
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
    let content = |path: &str| {
        fx.store
            .path_head(path, "summary")
            .expect("path head")
            .map(|f| f.content)
    };
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
