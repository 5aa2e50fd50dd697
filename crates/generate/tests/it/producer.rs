//! `generate` with the LLM producer and synthesis policy, counting the model calls through the
//! simulated client's call history: a no-op, a touch, a rename and a revert cost nothing; an
//! edit costs one file call and one call per ancestor whose input changed.
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use ::generate::producer::{
    DIR_TEMPLATE, FILE_TEMPLATE, LlmProducer, LlmSettings, LlmStats, LlmSynthesis,
};
use context::{GenerateRequest, Generated, generate};
use llm_core::{ContentBlock, LlmClient, Request, Response};
use llm_sim::{Answer, Reply, SimulatedClient, Strategy};
use merkle_store::{OpenOptions, Role, ScanOptions, Store};
use pretty_assertions::assert_eq;

/// Answers every prompt with text derived from it: a different file gives a different frame, an
/// unchanged one the same.
#[derive(Debug)]
struct Digest;

impl Strategy for Digest {
    fn reply(&mut self, _call: u64, request: &Request) -> llm_sim::Result<Reply> {
        let prompt = serde_json::to_string(&request.messages).expect("messages serialize");
        let digest = blake3::hash(prompt.as_bytes()).to_hex();
        Ok(Reply::Answer(Answer {
            response: Response {
                content: vec![ContentBlock::text(format!("summary {}", &digest[..12]))],
                ..Response::default()
            },
            ..Answer::default()
        }))
    }
}

const FILES: &[(&str, &str)] = &[
    ("README.md", "# Demo\n"),
    ("src/lib.rs", "pub mod util;\n"),
    ("src/util/mod.rs", "pub fn one() -> u32 { 1 }\n"),
    ("src/util/two.rs", "pub fn two() -> u32 { 2 }\n"),
    ("docs/guide.md", "Read src first.\n"),
];

struct Bench {
    dir: tempfile::TempDir,
    store: Store,
    client: Arc<SimulatedClient>,
    runtime: tokio::runtime::Runtime,
}

fn write(root: &Path, path: &str, content: &str, secs: u64) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
    std::fs::write(&p, content).expect("write");
    // Old, distinct mtimes: no entry is racy, and an edit is seen by its stat.
    std::fs::File::options()
        .write(true)
        .open(&p)
        .and_then(|f| f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs)))
        .expect("mtime");
}

impl Bench {
    fn new() -> Bench {
        let dir = tempfile::tempdir().expect("tempdir");
        for (path, content) in FILES {
            write(dir.path(), path, content, 1_600_000_000);
        }
        let store = Store::open(dir.path(), &OpenOptions::default()).expect("store");
        store.add_agent("gen", Role::Synthesis).expect("agent");
        Bench {
            dir,
            store,
            client: Arc::new(SimulatedClient::new(Digest)),
            runtime: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("runtime"),
        }
    }

    /// Rescans, generates `summary` over the whole tree, and returns the report and the model
    /// calls it made.
    fn generate(&self) -> (Generated, u64) {
        self.generate_with(DIR_TEMPLATE)
    }

    /// The content of the latest `summary` frame at `path`.
    fn head(&self, path: &str) -> String {
        let node = self.store.node_at(path).expect("lookup").expect("a node");
        let frame = context::current::current_frame(&self.store, &node.node_id, path, "summary")
            .expect("lookup")
            .expect("a summary");
        String::from_utf8(frame.content).expect("text")
    }

    /// As [`Bench::generate`], with `dir_template` for directories.
    fn generate_with(&self, dir_template: &str) -> (Generated, u64) {
        self.store.scan(&ScanOptions::default()).expect("scan");
        let before = self.client.call_count();
        let client: Arc<dyn LlmClient> = self.client.clone();
        let settings = LlmSettings {
            client,
            runtime: self.runtime.handle().clone(),
            model: "sim".to_owned(),
            provider: "sim".to_owned(),
            max_input_tokens: 1_000,
            max_tokens: 100,
            stats: Arc::new(LlmStats::default()),
            interrupt: Arc::new(AtomicBool::new(false)),
            batch: None,
            prefix: Default::default(),
            prompt_cache: true,
            service_tier: None,
        };
        let producer = LlmProducer {
            settings: settings.clone(),
            frame_type: "summary".to_owned(),
            template: FILE_TEMPLATE.to_owned(),
        };
        let policy = LlmSynthesis {
            settings,
            template: dir_template.to_owned(),
        };
        let root = self.store.node_at("").expect("root").expect("scanned");
        let report = generate(
            &self.store,
            &root,
            &GenerateRequest {
                frame_type: "summary",
                agent: "gen",
                producer: &producer,
                policy: &policy,
                recursive: true,
                now_ms: 1_700_000_000_000,
                progress: None,
                replace_other_producers: false,
                threads: Some(4),
            },
        )
        .expect("generate");
        assert!(report.failed.is_empty(), "{:?}", report.failed);
        (report, self.client.call_count() - before)
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }
}

#[test]
fn model_calls_follow_what_changed() {
    let b = Bench::new();
    // 5 files and 4 directories (the root, docs, src, src/util).
    let (first, calls) = b.generate();
    assert_eq!((first.produced, first.synthesized, calls), (5, 4, 9));

    assert_eq!(b.generate().1, 0, "a no-op");

    // A touch: new mtime, same content.
    write(
        b.dir.path(),
        "src/util/two.rs",
        "pub fn two() -> u32 { 2 }\n",
        1_600_000_500,
    );
    assert_eq!(b.generate().1, 0, "a touch");

    // An edit: the file, then src/util, src and the root.
    let original = std::fs::read_to_string(b.path("src/util/mod.rs")).expect("read");
    write(
        b.dir.path(),
        "src/util/mod.rs",
        "pub fn one() -> u32 { 11 }\n",
        1_600_001_000,
    );
    let (edited, calls) = b.generate();
    assert_eq!((edited.produced, edited.synthesized, calls), (1, 3, 4));

    // The revert: every node is its old self again, with its old frames.
    write(b.dir.path(), "src/util/mod.rs", &original, 1_600_002_000);
    assert_eq!(b.generate().1, 0, "a revert");

    // A rename of an unchanged file: its frame is reused, and so are the model's overviews of
    // the directories above it, which read no names; only their contents lists change.
    let docs_before = b.head("docs");
    std::fs::rename(b.path("docs/guide.md"), b.path("docs/howto.md")).expect("rename");
    let (renamed, calls) = b.generate();
    assert_eq!(
        (renamed.produced, renamed.reused, renamed.synthesized, calls),
        (0, 1, 0, 0)
    );
    assert_eq!(renamed.synthesis_reused, 2, "docs and the root");
    let docs = b.head("docs");
    let (overview, list) = docs.split_once("\n\nContents:\n").expect("a contents list");
    assert_eq!(
        overview,
        docs_before.split_once("\n\nContents:\n").expect("a list").0
    );
    let howto = b.head("docs/howto.md");
    assert_eq!(list, format!("- `howto.md`: {howto}\n"));
    let root = b.head("");
    assert!(root.contains("\n- `docs/`: summary "), "{root}");

    // A move to another directory: again no call, though both directories' lists change.
    std::fs::rename(b.path("docs/howto.md"), b.path("src/howto.md")).expect("move");
    let (moved, calls) = b.generate();
    assert_eq!((moved.produced, moved.reused), (0, 1));
    // docs is now empty (which needs no call) and src has one more child: their overviews,
    // and so the root's, have new inputs.
    assert_eq!((moved.synthesized, calls), (3, 2), "src and the root call");
    assert!(b.head("src").contains("- `howto.md`: summary "));
}

#[test]
fn a_template_that_names_the_path_pays_for_renames() {
    let b = Bench::new();
    let template = format!("{DIR_TEMPLATE}\nThe directory is `{{path}}`.");
    assert_eq!(b.generate_with(&template).1, 9);
    std::fs::rename(b.path("docs/guide.md"), b.path("docs/howto.md")).expect("rename");
    let (renamed, calls) = b.generate_with(&template);
    assert_eq!((renamed.produced, renamed.reused), (0, 1));
    assert_eq!(calls, 2, "docs and the root");
    assert!(
        !b.head("docs").contains("Contents:"),
        "the model's own list"
    );
}
