//! The offline directory map (`Map`): what a directory's frame says of its children, in what
//! order, within what bound; driven through `generate` with the offline outline, as `merkle
//! generate --offline` runs it.
use std::sync::Arc;

use context::{ChildWeights, GenerateRequest, Map, Outline, Ranking, SynthesisPolicy, generate};
use merkle_store::{OpenOptions, Role, ScanOptions, Store};
use pretty_assertions::assert_eq;

use crate::fixture::T0;

const AGENT: &str = "mapper";

/// A small crate: a README, a library with an entry point and two modules, a binary, tests,
/// a manifest and a data file.
const PROJECT: &[(&str, &str)] = &[
    (
        "README.md",
        "# kvstore\n\nA tiny key-value store with a command line.\n\n## Use\n\nRun `kv put`.\n",
    ),
    (
        "Cargo.toml",
        "[package]\nname = \"kvstore\"\nversion = \"0.1.0\"\n\n[dependencies]\n",
    ),
    (
        "src/lib.rs",
        "//! The kvstore library: a store and its codec.\npub mod codec;\npub mod store;\n\npub use store::Store;\n",
    ),
    (
        "src/store.rs",
        "//! Where values live: an in-memory map, saved through the codec.
use std::collections::BTreeMap;

/// A store of keys.
pub struct Store {
    map: BTreeMap<String, Vec<u8>>,
}

/// What can go wrong.
pub enum Error {
    Missing,
}

impl Store {
    /// Opens an empty store.
    pub fn open() -> Store {
        Store { map: BTreeMap::new() }
    }

    /// Puts a value.
    pub fn put(&mut self, key: &str, value: &[u8]) {
        self.map.insert(key.to_owned(), value.to_vec());
    }

    /// Gets a value.
    pub fn get(&self, key: &str) -> Result<&[u8], Error> {
        self.map.get(key).map(Vec::as_slice).ok_or(Error::Missing)
    }
}

fn helper() -> usize {
    0
}
",
    ),
    (
        "src/codec.rs",
        "//! Length-prefixed encoding of values.
const MAGIC: u8 = 7;

/// Encodes a value.
pub fn encode(value: &[u8]) -> Vec<u8> {
    let mut out = vec![MAGIC];
    out.extend_from_slice(value);
    out
}

/// Decodes a value.
pub fn decode(bytes: &[u8]) -> &[u8] {
    &bytes[1..]
}
",
    ),
    (
        "src/main.rs",
        "//! The `kv` command line.\nfn main() {\n    println!(\"kv\");\n}\n",
    ),
    (
        "tests/roundtrip.rs",
        "//! A value put is the value got.\n#[test]\nfn put_then_get() {}\n",
    ),
    ("data/words.txt", "apple\nbanana\ncherry\n"),
];

/// A scanned workspace holding `files`, with the mapping agent registered.
fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, content) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().expect("a file has a parent")).expect("mkdir");
        std::fs::write(&p, content).expect("write");
    }
    let store = Store::open(dir.path(), &OpenOptions::default()).expect("open store");
    store.scan(&ScanOptions::default()).expect("scan");
    store.add_agent(AGENT, Role::Synthesis).expect("add agent");
    (dir, store)
}

/// Generates outlines and maps over the whole tree; returns each directory's frame by path.
fn maps(store: &Store, policy: &dyn SynthesisPolicy, dirs: &[&str]) -> Vec<String> {
    let root = store.node_at("").expect("node_at").expect("a root");
    let outline = Outline::default();
    let report = generate(
        store,
        &root,
        &GenerateRequest {
            frame_type: "summary",
            agent: AGENT,
            producer: &outline,
            policy,
            recursive: true,
            now_ms: T0,
            progress: None,
            replace_other_producers: false,
            threads: None,
        },
    )
    .expect("generate");
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    dirs.iter()
        .map(|d| {
            let node = store.node_at(d).expect("node_at").expect("a directory");
            let frame = context::current::current_frame(store, &node.node_id, d, "summary")
                .expect("read")
                .unwrap_or_else(|| panic!("no frame on {d:?}"));
            String::from_utf8(frame.content).expect("a map is text")
        })
        .collect()
}

/// The root names what the project is (its README's first paragraph), then its children
/// ranked: README, then code and folders by size, then the rest; each with its first doc line
/// and its top definitions (public types first), a folder with its own first line (its entry
/// point's doc) and its components.
#[test]
fn a_map_ranks_children_and_names_what_each_holds() {
    let (_dir, store) = workspace(PROJECT);
    let frames = maps(&store, &Map::default(), &["", "src"]);
    insta::assert_snapshot!("map_root", frames[0]);
    insta::assert_snapshot!("map_src", frames[1]);
}

/// Weights (a reference graph's counts, say) rank a child above bigger siblings, and name
/// themselves in the policy id.
#[test]
fn weights_rank_before_size() {
    struct Codec;
    impl ChildWeights for Codec {
        fn id(&self) -> String {
            "refs-test".to_owned()
        }
        fn weight(&self, path: &str) -> Option<u64> {
            (path == "src/codec.rs").then_some(10)
        }
    }
    let (_dir, store) = workspace(PROJECT);
    let weighted = Map {
        ranking: Ranking::Weights(Arc::new(Codec)),
        ..Map::default()
    };
    assert_eq!(weighted.id(), "map:v3:4096:refs-test");
    let src = &maps(&store, &weighted, &["src"])[0];
    let order: Vec<&str> = src
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| l.split(':').next().unwrap_or_default())
        .collect();
    // Entry points first, then codec.rs (weighted) before the bigger store.rs.
    assert_eq!(order, ["lib.rs", "main.rs", "codec.rs", "store.rs"]);
}

/// Ranked by imports (as `merkle generate` runs it), a map weighs each child by how many files
/// import it, from the facts the outline producer cached as it parsed them (building the graph
/// parses nothing), and names the counts in its id.
#[test]
fn a_map_ranked_by_imports_puts_what_is_imported_before_what_is_bigger() {
    let big: String = (0..30)
        .map(|i| format!("pub fn step{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n"))
        .collect();
    let (_dir, store) = workspace(&[
        ("Cargo.toml", "[package]\nname = \"ranked\"\n"),
        (
            "src/lib.rs",
            "pub mod a;\npub mod b;\npub mod big;\npub mod small;\n",
        ),
        ("src/big.rs", &big),
        ("src/small.rs", "pub fn small() {}\n"),
        (
            "src/a.rs",
            "use crate::small::small;\npub fn a() { small() }\n",
        ),
        (
            "src/b.rs",
            "use crate::small;\npub fn b() { small::small() }\n",
        ),
    ]);
    let src = &maps(&store, &Map::by_imports(), &["src"])[0];
    let order: Vec<&str> = src
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| l.split(':').next().unwrap_or_default())
        .collect();
    // The entry point, then small.rs (imported by three files), then by size.
    assert_eq!(order, ["lib.rs", "small.rs", "big.rs", "a.rs", "b.rs"]);
    assert_eq!(context::TreeFacts::load(&store).expect("facts").derived, 0);
    let node = store.node_at("src").expect("node_at").expect("src");
    let frame = context::current::current_frame(&store, &node.node_id, "src", "summary")
        .expect("read")
        .expect("a map");
    let policy = &frame.metadata.extra[context::synthesis::META_POLICY];
    assert!(policy.starts_with("map:v3:4096:imports:"), "{policy}");
    assert_eq!(
        Map::by_imports().id(),
        "map:v3:4096:imports",
        "before it reads a tree"
    );
    // `regenerate` makes it again from the id its frames record, with the weights of then.
    let again = context::regenerate::builtin_policy(policy).expect("a built-in policy");
    assert_eq!(again.id(), "map:v3:4096:imports");
    // A map of an earlier version is made again as the current one.
    let older = context::regenerate::builtin_policy("map:v1:4096:imports:0123456789abcdef");
    assert_eq!(
        older.map(|p| p.id()).as_deref(),
        Some("map:v3:4096:imports")
    );
}

/// A directory with more children than fit keeps within its bound and names the children it
/// left out.
#[test]
fn a_map_is_bounded_and_names_what_it_leaves_out() {
    let files: Vec<(String, String)> = (0..60)
        .map(|i| {
            (
                format!("m{i:02}.rs"),
                format!("//! Module {i}.\npub fn f{i}() {{}}\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let (_dir, store) = workspace(&refs);
    let map = Map {
        max_bytes: 700,
        ranking: Ranking::Size,
    };
    let root = &maps(&store, &map, &[""])[0];
    assert!(root.len() <= 700, "{} bytes:\n{root}", root.len());
    let last = root.lines().last().expect("lines");
    assert!(last.starts_with("+ "), "{root}");
    let shown = root.lines().filter(|l| l.starts_with("- ")).count();
    let more: usize = last[2..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a count");
    assert_eq!(shown + more, 60, "{root}");
}

/// Folders of tests, fixtures and docs rank after the source folders, however much bigger
/// they are or however often their files are imported.
#[test]
fn source_folders_rank_before_tests_fixtures_and_docs() {
    let big = "pub fn helper() -> usize {\n    1\n}\n".repeat(40);
    let (_dir, store) = workspace(&[
        ("src/lib.rs", "//! The library.\npub fn run() {}\n"),
        ("tests/it.rs", big.as_str()),
        ("tests/more.rs", big.as_str()),
        ("docs/guide.md", "# Guide\n\nHow to use it, at length.\n"),
        ("fixtures/data.rs", big.as_str()),
        ("tools/gen.rs", "pub fn gen() {}\n"),
    ]);
    let root = &maps(&store, &Map::by_imports(), &[""])[0];
    let order: Vec<&str> = root
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| l.split(':').next().unwrap_or_default())
        .collect();
    assert_eq!(
        order,
        ["src/", "tools/", "tests/", "fixtures/", "docs/"],
        "{root}"
    );
}

/// A description is a sentence from a docstring, a comment or a README, else nothing: never
/// an import, a directive, markup or a shebang (a flask-shaped tree, whose package entry point
/// only imports and whose docs start with an rst directive).
#[test]
fn descriptions_are_prose_or_nothing() {
    let (_dir, store) = workspace(&[
        (
            "README.rst",
            "Flask\n=====\n\n.. image:: logo.png\n\nFlask is a lightweight web application framework.\n",
        ),
        (
            "src/flask/__init__.py",
            "from __future__ import annotations\n\nfrom . import json as json\nfrom .app import Flask as Flask\n",
        ),
        (
            "src/flask/app.py",
            "\"\"\"The application object.\"\"\"\n\n\nclass Flask:\n    pass\n",
        ),
        (
            "docs/index.rst",
            ".. rst-class:: hide-header\n\nWelcome to Flask\n================\n",
        ),
        (
            "scripts/release.sh",
            "#!/bin/bash\n# Builds the release archives and signs them.\nset -e\n",
        ),
        ("scripts/clean.sh", "#!/bin/sh\nrm -rf build\n"),
    ]);
    let frames = maps(
        &store,
        &Map::default(),
        &["", "src/flask", "docs", "scripts"],
    );
    let all = frames.join("\n");
    for wrong in [
        "import",
        "rst-class",
        "#!",
        "rm -rf",
        "=====",
        "Welcome to Flask",
    ] {
        assert!(!all.contains(wrong), "{wrong:?} in a description:\n{all}");
    }
    assert!(
        frames[0].starts_with("Flask is a lightweight web application framework.\n"),
        "{}",
        frames[0]
    );
    assert!(
        frames[3].contains("release.sh: Builds the release archives and signs them."),
        "{}",
        frames[3]
    );
}
