//! `generate::generate` through its public interface, with the offline outline producer on a
//! temporary tree: what it counts, the one JSON shape `merkle --json generate` prints, and what
//! it tells its [`Progress`].
use std::sync::Mutex;

use generate::{
    Answer, Batching, GenerateConfig, Generation, Generator, Progress, Quiet, Request, generate,
};
use merkle_store::{NodeKind, NodeRecord, OpenOptions, Store};
use pretty_assertions::assert_eq;
use serde_json::json;

/// A store over `README.md`, `src/lib.rs` and `src/util.rs`, never scanned: `generate`
/// rescans first.
fn workspace() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, content) in [
        ("README.md", "# Demo\n\nA demo workspace.\n"),
        ("src/lib.rs", "//! The library.\npub mod util;\n"),
        ("src/util.rs", "pub fn one() -> u32 {\n    1\n}\n"),
    ] {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&p, content).expect("write");
    }
    let store = Store::open(dir.path(), &OpenOptions::default()).expect("store");
    (dir, store)
}

fn offline(batching: Batching) -> Generator {
    Generator::new(GenerateConfig {
        frame_type: "summary".to_owned(),
        agent: None,
        model: None,
        policy: None,
        replace: false,
        max_input_tokens: 8_000,
        max_tokens: 400,
        price: None,
        batching,
    })
    .expect("an offline generator")
}

/// Generates over `path` with `generator`.
fn run(
    store: &Store,
    generator: &Generator,
    path: &str,
    recursive: bool,
    progress: &dyn Progress,
) -> Result<Answer, generate::Error> {
    let target =
        |store: &Store| -> Result<NodeRecord, generate::Error> { Ok(store.resolve(path)?) };
    generate(
        store,
        generator,
        &Request {
            target: &target,
            recursive,
            progress,
        },
    )
}

fn generated(answer: Answer) -> Generation {
    match answer {
        Answer::Generated(generation) => generation,
        Answer::DryRun(estimate) => panic!("a generation, not {estimate:?}"),
    }
}

#[test]
fn offline_generation_counts_its_frames_and_answers_in_one_shape() {
    let (_dir, store) = workspace();
    let generator = offline(Batching::Off);
    let producer = generator.producer_id();
    assert!(producer.starts_with("outline:"), "{producer}");

    let first = generated(run(&store, &generator, "", true, &Quiet).expect("generate"));
    assert_eq!(first.kind, NodeKind::Dir);
    assert_eq!(
        first.json(),
        json!({
            "produced": 3,
            "reused": 0,
            "synthesized": 2,
            "synthesis_reused": 0,
            "up_to_date": 0,
            "visited": 5,
            "failed": [],
            "producer": producer,
            "path": "",
            "recursive": true,
        })
    );
    // The default agent was registered with the synthesis role and wrote the frames.
    let lib = store
        .node_at("src/lib.rs")
        .expect("lookup")
        .expect("scanned");
    let heads = store.heads(&lib.node_id).expect("heads");
    assert_eq!(
        heads
            .iter()
            .map(|f| (f.frame_type.as_str(), f.agent_id.as_str()))
            .collect::<Vec<_>>(),
        vec![("summary", generate::DEFAULT_AGENT)]
    );

    // A file written since is scanned in and gets its frame; nothing else is made again.
    std::fs::write(store.workspace().join("src/two.rs"), "pub fn two() {}\n").expect("write");
    let again = generated(run(&store, &generator, "src", false, &Quiet).expect("generate"));
    assert_eq!(
        (
            again.counts.produced,
            again.counts.reused,
            again.counts.synthesized,
            again.path.as_str(),
            again.recursive,
        ),
        (1, 0, 1, "src", false),
        "{}",
        again.json()
    );
    assert_eq!((again.batch, again.llm), (None, None));
}

/// Counts what a generation reports.
#[derive(Default)]
struct Counting(Mutex<Vec<&'static str>>);

impl Progress for Counting {
    fn starting(&self) {
        self.0.lock().expect("lock").push("starting");
    }

    fn pass_started(&self) {
        self.0.lock().expect("lock").push("pass");
    }

    fn pass_ended(&self) {
        self.0.lock().expect("lock").push("end");
    }
}

#[test]
fn a_generation_reports_its_start_and_its_pass() {
    let (_dir, store) = workspace();
    let progress = Counting::default();
    run(&store, &offline(Batching::Off), "", true, &progress).expect("generate");
    assert_eq!(
        *progress.0.lock().expect("lock"),
        vec!["starting", "pass", "end"]
    );
}

#[test]
fn batching_without_a_model_is_refused_before_any_frame_is_made() {
    let (_dir, store) = workspace();
    for batching in [
        Batching::DryRun,
        Batching::Batches {
            poll: std::time::Duration::from_secs(1),
        },
    ] {
        let err = run(&store, &offline(batching), "", true, &Quiet).expect_err("no batch api");
        assert!(
            matches!(&err, generate::Error::NoBatchApi { provider: None }),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "a batched generation needs a provider with a batch API; the offline producer has \
             none"
        );
    }
    let (_, frames) = store.counts().expect("counts");
    assert_eq!(frames, 0);
}
