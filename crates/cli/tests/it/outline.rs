//! The offline outline through `merkle generate`: a source file's frame is its structure, an
//! edit re-parses only the edited file, and frames of the first outline version are replaced
//! while a model's are kept.
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::{Workspace, parse, run};

const STORE_RS: &str = "\
//! A tiny store.
use std::collections::BTreeMap;

/// How many keys fit.
pub const MAX_KEYS: usize = 1024;

/// A store of keys.
pub struct Store {
    entries: BTreeMap<String, u32>,
}

impl Store {
    /// Opens an empty store.
    pub fn open() -> Store {
        Store { entries: BTreeMap::new() }
    }

    pub fn put(&mut self, key: &str, value: u32) {
        self.entries.insert(key.to_owned(), value);
    }
}
";

fn offline_generate(ws: &Workspace) -> serde_json::Value {
    let mut cmd = ws.cmd(&["--json", "generate", "--recursive", "--offline"]);
    for name in ["MERKLE_LLM_MODE", "MERKLE_LLM_PROVIDER", "MERKLE_AGENT"] {
        cmd.env_remove(name);
    }
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    parse(&r.stdout)
}

/// A README, a crate root and its store module.
fn store_workspace() -> Workspace {
    let ws = Workspace::empty();
    ws.write(
        "README.md",
        "# Store\n\nA tiny store with a command line.\n",
    );
    ws.write("src/lib.rs", "//! The store library.\npub mod store;\n");
    ws.write("src/store.rs", STORE_RS);
    ws
}

fn head(ws: &Workspace, path: &str) -> String {
    let frame = ws.json(&["get-head", path, "--type", "summary"]);
    frame["content"]
        .as_str()
        .expect("an outline is text")
        .to_owned()
}

#[test]
fn a_source_files_frame_is_its_outline_and_an_edit_reparses_one_file() {
    let ws = Workspace::empty();
    ws.write("src/store.rs", STORE_RS);
    ws.write("src/other.rs", "pub fn other() {}\n");
    ws.write("README.md", "# Store\n\nA tiny store.\n\n## Use\n");
    let first = offline_generate(&ws);
    assert_eq!(
        (&first["producer"], &first["produced"]),
        (&json!("outline:v17:8:2048"), &json!(3)),
        "{first}"
    );
    insta::assert_snapshot!("outline_store_rs", head(&ws, "src/store.rs"));
    insta::assert_snapshot!("outline_readme", head(&ws, "README.md"));

    // Nothing changed: no producer runs.
    let noop = offline_generate(&ws);
    assert_eq!(noop["produced"], json!(0), "{noop}");

    // One file edited: one file produced again, the rest untouched.
    ws.write("src/other.rs", "pub fn other() {}\npub fn added() {}\n");
    let edit = offline_generate(&ws);
    assert_eq!(edit["produced"], json!(1), "{edit}");
    assert!(head(&ws, "src/other.rs").contains("2: pub fn added()"));
}

#[test]
fn frames_of_the_first_outline_are_replaced_and_a_models_are_kept() {
    let ws = Workspace::empty();
    ws.write("old.rs", "pub fn old_outline() {}\n");
    ws.write("model.rs", "pub fn model_written() {}\n");
    ws.write("frame.txt", "written by hand\n");
    ws.ok(&["scan"]);
    ws.ok(&["agent", "add", "merkle", "--role", "synthesis"]);
    for (path, producer) in [("old.rs", "outline:8"), ("model.rs", "llm:default:abc")] {
        ws.ok(&[
            "put-frame",
            path,
            "frame.txt",
            "--type",
            "summary",
            "--agent",
            "merkle",
            "--meta",
            &format!("producer={producer}"),
        ]);
    }
    offline_generate(&ws);
    assert_eq!(
        head(&ws, "old.rs"),
        "Rust, 24 bytes, 1 lines\n1: pub fn old_outline()\n"
    );
    assert_eq!(head(&ws, "model.rs"), "written by hand\n");
}

/// A directory's offline frame is a map of its children: the root names the project (its
/// README's doc) and its components with their first lines; a folder its files' definitions.
/// Directory frames of the old offline default (`summary:3:4096`) are replaced, not kept until
/// something below them changes.
#[test]
fn a_directorys_offline_frame_maps_its_children_and_replaces_the_old_default() {
    let ws = store_workspace();
    let mut cmd = ws.cmd(&[
        "--json",
        "generate",
        "--recursive",
        "--offline",
        "--policy",
        "summary",
    ]);
    for name in ["MERKLE_LLM_MODE", "MERKLE_LLM_PROVIDER", "MERKLE_AGENT"] {
        cmd.env_remove(name);
    }
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        head(&ws, ".").starts_with("## README.md"),
        "{}",
        head(&ws, ".")
    );

    let report = offline_generate(&ws);
    assert_eq!(report["synthesized"], json!(2), "{report}");
    assert_eq!(
        head(&ws, "."),
        "A tiny store with a command line.\n\
         1 directory, 3 files, 502 bytes\n\
         - README.md: A tiny store with a command line.\n\
         \x20 # Store\n\
         - src/: The store library.\n\
         \x20 lib.rs: The store library.\n\
         \x20 store.rs: A tiny store.\n"
    );
    assert!(
        head(&ws, "src")
            .contains("- store.rs: A tiny store.\n  pub struct Store, pub const MAX_KEYS\n"),
        "{}",
        head(&ws, "src")
    );
}

#[test]
fn a_directory_map_ranks_what_the_workspace_imports_before_what_is_bigger() {
    let ws = Workspace::empty();
    let big: String = (0..40)
        .map(|i| format!("export function step{i}(x) {{\n  return x + {i};\n}}\n"))
        .collect();
    ws.write("src/big.js", &big);
    ws.write("src/tiny.js", "export function tiny() {\n  return 1;\n}\n");
    ws.write(
        "app/a.js",
        "import { tiny } from '../src/tiny.js';\nimport { step0 } from '../src/big.js';\n\
         export const a = tiny() + step0(1);\n",
    );
    // Imported inside a function body, which the outline's parse skips: it makes the two
    // imported files' counts differ.
    ws.write(
        "app/b.js",
        "export function b() {\n  const { tiny } = require('../src/tiny.js');\n  return tiny() + 1;\n}\n",
    );
    let position = |ws: &Workspace, name: &str| {
        let map = head(ws, "src");
        map.find(&format!("- {name}"))
            .unwrap_or_else(|| panic!("{name} is not in the map:\n{map}"))
    };
    offline_generate(&ws);
    assert!(
        position(&ws, "tiny.js") < position(&ws, "big.js"),
        "{}",
        head(&ws, "src")
    );
    // Without importers, size ranks: the map is made again because the counts changed, though
    // nothing in src/ did.
    ws.write("app/a.js", "export const a = 1;\n");
    ws.write("app/b.js", "export const b = 2;\n");
    let edit = offline_generate(&ws);
    assert_eq!(edit["produced"], json!(2), "{edit}");
    assert!(
        position(&ws, "big.js") < position(&ws, "tiny.js"),
        "{}",
        head(&ws, "src")
    );
    // Nothing changed: no producer runs, no directory is made again.
    let noop = offline_generate(&ws);
    assert_eq!(
        (&noop["produced"], &noop["synthesized"], &noop["visited"]),
        (&json!(0), &json!(0), &json!(0)),
        "{noop}"
    );
}

#[test]
fn synthesize_policy_map_writes_the_map_generate_writes() {
    let ws = store_workspace();
    offline_generate(&ws);
    let (root, src) = (head(&ws, "."), head(&ws, "src"));
    ws.ok(&["agent", "add", "syn", "--role", "synthesis"]);
    let done = ws.json(&[
        "synthesize",
        ".",
        "--agent",
        "syn",
        "--recursive",
        "--policy",
        "map",
    ]);
    assert_eq!(done["written"], json!(2), "{done}");
    // The same maps, written again by another agent.
    assert_eq!((head(&ws, "."), head(&ws, "src")), (root, src));
    let frame = ws.json(&["get-head", ".", "--type", "summary"]);
    assert_eq!(frame["agent_id"], json!("syn"), "{frame}");
    assert!(
        frame["metadata"]["extra"]["synthesis.policy"]
            .as_str()
            .is_some_and(|p| p.starts_with("map:v3:4096:imports:")),
        "{frame}"
    );
}
