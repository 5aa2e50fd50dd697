//! The fixture workspace every area's tests start from: a small tree on disk, scanned into a
//! store, with a writer, a synthesis and a reader agent registered.
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use context::{Concat, Outline, SynthesisPolicy, SynthesisRequest, Synthesized};
use merkle_store::{
    FrameId, NewFrame, NodeKind, NodeRecord, OpenOptions, Role, ScanOptions, Store,
};

/// May put frames.
pub const WRITER: &str = "writer";
/// May also synthesize.
pub const SYNTH: &str = "synth";
/// May only read.
pub const READER: &str = "reader";
/// The `created_at` of the fixture's frames; tests pass it (or later times) as `now_ms`.
pub const T0: u64 = 1_700_000_000_000;
/// The frame type the built-in producer and the synthesized directories use.
pub const OUTLINE: &str = "outline";

/// `src/util/mod.rs`: more than the eight non-empty lines an [`Outline`] keeps, so that an edit
/// of its last line leaves the outline unchanged.
pub const MOD_RS: &str = "//! Utilities for the fixture.
pub mod strings;

pub fn one() -> u32 { 1 }
pub fn two() -> u32 { 2 }
pub fn three() -> u32 { 3 }
pub fn four() -> u32 { 4 }
pub fn five() -> u32 { 5 }
pub fn six() -> u32 { 6 }
pub fn seven() -> u32 { 7 }
pub fn nine() -> u32 { 9 }
";

const FILES: &[(&str, &str)] = &[
    (
        "README.md",
        "# Fixture\n\nA small workspace for the context tests.\n",
    ),
    (
        "docs/guide.md",
        "# Guide\n\nStart with src/lib.rs.\nThen read src/util.\n",
    ),
    (
        "src/lib.rs",
        "//! The fixture library.\npub mod util;\n\npub fn answer() -> u32 {\n    42\n}\n",
    ),
    (
        "src/main.rs",
        "fn main() {\n    println!(\"{}\", fixture::answer());\n}\n",
    ),
    ("src/util/mod.rs", MOD_RS),
    (
        "src/util/strings.rs",
        "pub fn shout(s: &str) -> String {\n    s.to_uppercase()\n}\n",
    ),
];

/// Two empty directories, so that their stable empty frames can be told apart.
const EMPTY_DIRS: &[&str] = &["docs/drafts", "empty"];

/// A workspace on disk and its store.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub store: Store,
}

/// Files older than any scan, so that no entry is racy and a rescan hashes only what an edit
/// touched; an edit gets a different old time.
fn set_old_mtime(path: &Path, secs: u64) {
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(old))
        .expect("set mtime");
}

impl Fixture {
    /// The fixture tree, scanned, with the three agents and no frames.
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        for (path, content) in FILES {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().expect("a file has a parent")).expect("mkdir");
            std::fs::write(&p, content).expect("write");
            set_old_mtime(&p, 1_600_000_000);
        }
        for d in EMPTY_DIRS {
            std::fs::create_dir_all(dir.path().join(d)).expect("mkdir");
        }
        let store = Store::open(dir.path(), &OpenOptions::default()).expect("open store");
        store.scan(&ScanOptions::default()).expect("scan");
        store.add_agent(WRITER, Role::Writer).expect("add writer");
        store.add_agent(SYNTH, Role::Synthesis).expect("add synth");
        store.add_agent(READER, Role::Reader).expect("add reader");
        Fixture { dir, store }
    }

    /// The fixture with an outline frame on every file (by the writer) and a concatenation of
    /// them on every directory (by the synthesis agent), all at `T0`.
    pub fn with_outlines() -> Fixture {
        let fx = Fixture::new();
        fx.outline_files();
        fx.synthesize_all(&Concat);
        fx
    }

    /// The node at `path` in the last scan.
    pub fn node(&self, path: &str) -> NodeRecord {
        self.store
            .node_at(path)
            .expect("node_at")
            .unwrap_or_else(|| panic!("no node at {path:?}"))
    }

    /// Puts a frame whose basis is the node, created at `created_at_ms`.
    pub fn put(
        &self,
        path: &str,
        frame_type: &str,
        agent: &str,
        content: &str,
        created_at_ms: u64,
    ) -> FrameId {
        let mut frame = NewFrame::new(
            self.node(path).node_id,
            frame_type,
            agent,
            content.as_bytes().to_vec(),
        );
        frame.metadata.created_at_ms = created_at_ms;
        self.store.put_frame(frame).expect("put frame").frame_id
    }

    /// Writes `content` to `path` (its folders made where missing, the file given an old
    /// mtime of its own) and rescans; returns what the rescan changed.
    pub fn edit(&self, path: &str, content: &str) -> Vec<String> {
        let p = self.dir.path().join(path);
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).expect("folders");
        }
        std::fs::write(&p, content).expect("write");
        set_old_mtime(&p, 1_600_003_600);
        self.rescan()
    }

    /// Rescans; returns the paths the rescan changed.
    pub fn rescan(&self) -> Vec<String> {
        self.store
            .scan(&ScanOptions::default())
            .expect("rescan")
            .changed_paths
    }

    /// Every path of the current tree, the root (`""`) first, then in path order.
    pub fn paths(&self) -> Vec<String> {
        let mut out = vec![String::new()];
        out.extend(
            self.store
                .list_nodes("", true)
                .expect("list nodes")
                .into_iter()
                .map(|n| n.path),
        );
        out
    }

    fn paths_of(&self, kind: NodeKind) -> Vec<String> {
        self.paths()
            .into_iter()
            .filter(|p| self.node(p).kind == kind)
            .collect()
    }

    pub fn files(&self) -> Vec<String> {
        self.paths_of(NodeKind::File)
    }

    pub fn dirs(&self) -> Vec<String> {
        self.paths_of(NodeKind::Dir)
    }

    /// The latest frame of every type at every current path, as (type, id) pairs.
    pub fn path_heads(&self) -> BTreeMap<String, Vec<(String, FrameId)>> {
        self.paths()
            .into_iter()
            .map(|p| {
                let heads = self
                    .store
                    .path_heads(&p)
                    .expect("path heads")
                    .into_iter()
                    .map(|f| (f.frame_type, f.frame_id))
                    .collect();
                (p, heads)
            })
            .collect()
    }

    /// Every frame on every node of the current tree, by path.
    pub fn frames_by_path(&self) -> BTreeMap<String, Vec<merkle_store::Frame>> {
        self.paths()
            .into_iter()
            .map(|p| {
                let frames = self
                    .store
                    .frames_of(&self.node(&p).node_id, None)
                    .expect("frames of");
                (p, frames)
            })
            .collect()
    }

    /// A digest of every file under the store folder, by relative path.
    pub fn store_digest(&self) -> BTreeMap<String, String> {
        fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
            for entry in std::fs::read_dir(dir).expect("read store dir") {
                let path = entry.expect("dir entry").path();
                if path.is_dir() {
                    walk(root, &path, out);
                } else {
                    let bytes = std::fs::read(&path).expect("read store file");
                    let rel = path.strip_prefix(root).expect("under the store");
                    out.insert(
                        rel.display().to_string(),
                        blake3::hash(&bytes).to_hex().to_string(),
                    );
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(self.store.dir(), self.store.dir(), &mut out);
        out
    }

    /// Produces an outline frame on every file, by the writer, at `T0`.
    pub fn outline_files(&self) {
        for path in self.files() {
            context::produce(
                &self.store,
                &self.node(&path),
                OUTLINE,
                WRITER,
                &Outline::default(),
                T0,
            )
            .expect("produce outline");
        }
    }

    /// Synthesizes every directory's outline frame bottom-up with `policy`, at `T0`.
    pub fn synthesize_all(&self, policy: &dyn SynthesisPolicy) -> Vec<Synthesized> {
        context::synthesize_recursive(
            &self.store,
            &self.node(""),
            &SynthesisRequest {
                frame_type: OUTLINE,
                agent: SYNTH,
                policy,
                now_ms: T0,
            },
        )
        .expect("synthesize recursively")
    }
}

/// Where the snapshots live: `tests/snapshots/`, beside the test sources' folder.
pub fn snapshot_settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../snapshots");
    s.set_prepend_module_to_snapshot(false);
    s
}
