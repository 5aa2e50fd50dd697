//! `merkle refs`: a definition's callers and callees from tree-sitter's identifiers. On this
//! repository's own checkout, the callers of functions with unique names are exactly the uses
//! `git grep -w` finds; on a small workspace, callees, `PATH:LINE`, names defined twice and the
//! errors.
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::{Workspace, ok, parse};

/// Functions of this repository whose names nothing else defines, with callers in one file or
/// several, in sources, tests and macros; none named in a string or by a local of its own.
const UNIQUE: [&str; 20] = [
    "db_err",
    "rfc3339",
    "builtin_policy",
    "store_digest",
    "synthesize_each",
    "head_key",
    "strip_attributes",
    "read_layering",
    "cap_output",
    "of_bundle",
    "put_memos",
    "write_renamed",
    "would_push",
    "search_symbols_tool",
    "skip_literal",
    "parse_arguments",
    "first_paragraph",
    "resolve_prefix",
    "password_for",
    "tantivy_err",
];

/// The lines of Rust files `git grep -w NAME` finds in `root`, less comment lines, the
/// definition's own (`fn NAME`) and this file: (path, line).
fn grep_uses(root: &Path, name: &str) -> BTreeSet<(String, u64)> {
    let out = Command::new("git")
        // This file names them in strings: no use of them.
        .args([
            "grep",
            "-n",
            "-w",
            name,
            "--",
            "*.rs",
            ":!crates/cli/tests/it/refs.rs",
        ])
        .current_dir(root)
        .output()
        .expect("this test compares with git grep: it needs git installed");
    let text = String::from_utf8(out.stdout).expect("git grep prints UTF-8 here");
    let definition = format!("fn {name}");
    text.lines()
        .filter_map(|l| {
            let (path, rest) = l.split_once(':')?;
            let (line, code) = rest.split_once(':')?;
            let code = code.trim_start();
            let comment = code.starts_with("//") || code.starts_with('*');
            (!comment && !code.contains(&definition))
                .then(|| (path.to_owned(), line.parse().expect("a line number")))
        })
        .collect()
}

/// The lines `refs --json` names as uses by its callers: (path, line).
fn caller_lines(refs: &Value) -> BTreeSet<(String, u64)> {
    refs["callers"]
        .as_array()
        .expect("callers")
        .iter()
        .flat_map(|c| {
            let path = c["path"].as_str().expect("a path").to_owned();
            c["lines"]
                .as_array()
                .expect("lines")
                .iter()
                .map(move |l| (path.clone(), l.as_u64().expect("a line")))
        })
        .collect()
}

#[test]
fn the_callers_of_unique_functions_are_the_uses_git_grep_finds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root exists");
    let store = tempfile::tempdir().expect("creating a temporary store folder");
    let merkle = |args: &[&str]| {
        let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("merkle");
        cmd.arg("--root")
            .arg(&root)
            .arg("--store")
            .arg(store.path())
            .args(args)
            .current_dir(&root);
        ok(&mut cmd)
    };
    merkle(&["scan"]);
    for name in UNIQUE {
        let refs = parse(&merkle(&["--json", "refs", name]));
        let defs = refs["definitions"].as_array().expect("definitions");
        assert_eq!(defs.len(), 1, "{name} is defined once: {refs:#}");
        let grep = grep_uses(&root, name);
        assert!(!grep.is_empty(), "{name} has callers");
        assert_eq!(caller_lines(&refs), grep, "the callers of {name}");
    }
}

/// The names of a list of sites (`callers`, `callees`).
fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list of sites")
        .iter()
        .map(|c| c["name"].as_str().expect("a name"))
        .collect()
}

/// A workspace where `helper` is defined twice and `run` calls the one its file imports.
fn workspace() -> Workspace {
    let ws = Workspace::empty();
    ws.write(
        "app/main.py",
        "from app.util import helper\n\n\ndef run(x):\n    # helper in a comment is no use\n    return helper(x) + len('helper')\n\n\ndef other():\n    run(1)\n",
    );
    ws.write("app/__init__.py", "");
    ws.write("app/util.py", "def helper(x):\n    return x\n");
    ws.write(
        "lib/util.py",
        "def helper(y):\n    return y\n\n\ndef use():\n    return helper(2)\n",
    );
    ws.ok(&["scan"]);
    ws
}

#[test]
fn refs_resolves_a_name_through_imports_and_lists_callees() {
    let ws = workspace();
    let refs = ws.json(&["refs", "helper"]);
    let defs: Vec<&str> = refs["definitions"]
        .as_array()
        .expect("definitions")
        .iter()
        .map(|d| d["path"].as_str().expect("a path"))
        .collect();
    assert_eq!(defs, ["app/util.py", "lib/util.py"]);
    let callers: Vec<(String, Value, Value)> = refs["callers"]
        .as_array()
        .expect("callers")
        .iter()
        .map(|c| {
            (
                c["path"].as_str().expect("path").to_owned(),
                c["name"].clone(),
                c["lines"].clone(),
            )
        })
        .collect();
    assert_eq!(
        callers,
        [
            (
                "app/main.py".to_owned(),
                Value::Null,
                serde_json::json!([1])
            ),
            (
                "app/main.py".to_owned(),
                "run".into(),
                serde_json::json!([6])
            ),
            (
                "lib/util.py".to_owned(),
                "use".into(),
                serde_json::json!([6])
            ),
        ],
        "{refs:#}"
    );

    // PATH:LINE names one definition: only the uses resolved to it are its callers.
    let one = ws.json(&["refs", "lib/util.py:2"]);
    assert_eq!(
        one["definitions"].as_array().map(Vec::len),
        Some(1),
        "{one:#}"
    );
    let callers: Vec<&str> = one["callers"]
        .as_array()
        .expect("callers")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or("(module)"))
        .collect();
    assert_eq!(callers, ["use"], "{one:#}");

    // `run` calls `helper` of app/util.py, the one its file imports, for certain.
    let run = ws.json(&["refs", "run"]);
    let callees = run["callees"].as_array().expect("callees");
    assert_eq!(callees.len(), 1, "{run:#}");
    assert_eq!(callees[0]["path"], "app/util.py");
    assert_eq!(callees[0]["candidates"], 1);
    assert_eq!(run["callers"][0]["name"], "other", "{run:#}");

    let text = ws.ok(&["refs", "helper"]);
    assert!(text.starts_with("definitions of helper (2):\n"), "{text}");
    assert!(text.contains("app/main.py:4-6 run (line 6)"), "{text}");
}

#[test]
fn refs_names_what_it_cannot_read() {
    let ws = workspace();
    let r = ws.run(&["refs", "app/main.py:2"]);
    assert_eq!(r.code, 2, "{r}");
    assert!(
        r.stderr
            .contains("app/main.py:2: no definition spans that line"),
        "{r}"
    );
    let r = ws.run(&["refs", "not a name"]);
    assert_eq!(r.code, 2, "{r}");
    assert!(r.stderr.contains("is no symbol name"), "{r}");
    let help = ws.ok(&["refs", "--help"]);
    assert!(help.contains("PATH:LINE"), "{help}");
}

/// In Rust a call through `.` calls a method: `items.first()` is no call of a free function
/// `first`, while `first(&items)` is.
#[test]
fn a_method_call_is_not_resolved_to_a_free_function() {
    let ws = Workspace::empty();
    ws.write(
        "src/lib.rs",
        "pub fn first(items: &[u32]) -> u32 {\n    items[0]\n}\n\npub fn head(items: &[u32]) -> Option<&u32> {\n    items.first()\n}\n\npub fn lead(items: &[u32]) -> u32 {\n    first(items)\n}\n",
    );
    ws.ok(&["scan"]);
    let head = ws.json(&["refs", "head"]);
    assert_eq!(head["callees"], serde_json::json!([]), "{head:#}");
    let lead = ws.json(&["refs", "lead"]);
    assert_eq!(lead["callees"][0]["name"], "first", "{lead:#}");
    assert_eq!(lead["callees"][0]["candidates"], 1, "{lead:#}");
}

/// In Python a bare call never calls a method (that needs `self.`): `str(x)` is the builtin,
/// not a class's `str` method, while `self.render()` may be any `render`.
#[test]
fn a_bare_python_call_is_not_resolved_to_a_method() {
    let ws = Workspace::empty();
    ws.write(
        "pkg/ring.py",
        "class Ring:\n    def str(self):\n        return 'ring'\n\n    def render(self):\n        return self.str()\n",
    );
    ws.write(
        "pkg/show.py",
        "def label(x):\n    return str(x) + helper(x)\n\n\ndef helper(x):\n    return '!'\n",
    );
    ws.ok(&["scan"]);
    let label = ws.json(&["refs", "label"]);
    let callees = names(&label["callees"]);
    assert_eq!(callees, ["helper"], "{label:#}");
    let render = ws.json(&["refs", "render"]);
    assert_eq!(render["callees"][0]["name"], "str", "{render:#}");
}

/// A Python module's bare names are its own, its imports' and the builtins': `load(f)` in a
/// file that neither defines nor imports a `load` (here a parameter) calls no module's
/// `load`, while `codec.load(f)` may.
#[test]
fn a_bare_python_name_reaches_only_its_module_and_its_imports() {
    let ws = Workspace::empty();
    ws.write("pkg/codec.py", "def load(fp):\n    return fp.read()\n");
    ws.write(
        "pkg/config.py",
        "def from_file(path, load):\n    with open(path) as f:\n        return load(f)\n",
    );
    ws.write(
        "pkg/main.py",
        "import pkg.codec as codec\n\n\ndef run(f):\n    return codec.load(f)\n",
    );
    ws.write("pkg/__init__.py", "");
    ws.ok(&["scan"]);
    let from_file = ws.json(&["refs", "from_file"]);
    assert_eq!(from_file["callees"], serde_json::json!([]), "{from_file:#}");
    let load = ws.json(&["refs", "load"]);
    let callers: Vec<(&str, &str)> = load["callers"]
        .as_array()
        .expect("callers")
        .iter()
        .map(|c| {
            let path = c["path"].as_str().expect("a path");
            (path, c["name"].as_str().unwrap_or("(module)"))
        })
        .collect();
    assert_eq!(callers, [("pkg/main.py", "run")], "{load:#}");
}

/// A Rust method implementing a library's trait (`clone` of `impl Clone for Tag`) is no
/// certain callee of `.clone()`, which every library type's `clone` answers as well; one
/// implementing the workspace's own trait (`area` of `impl Shape for Square`) is.
#[test]
fn a_method_of_a_library_trait_is_no_callee_of_a_call_through_a_dot() {
    let ws = Workspace::empty();
    ws.write(
        "src/lib.rs",
        "pub trait Shape {\n    fn area(&self) -> u32;\n}\n\npub struct Square(u32);\n\n\
         impl Shape for Square {\n    fn area(&self) -> u32 {\n        self.0 * self.0\n    }\n}\n\n\
         pub struct Tag(String);\n\nimpl Clone for Tag {\n    fn clone(&self) -> Tag {\n        \
         Tag(self.0.clone())\n    }\n}\n\n\
         pub fn total(names: &[String], s: &Square) -> u32 {\n    let copy = names.to_vec().clone();\n    \
         copy.len() as u32 + s.area()\n}\n",
    );
    ws.ok(&["scan"]);
    let total = ws.json(&["refs", "total"]);
    let callees = names(&total["callees"]);
    // The trait's declaration of `area` and its implementation, one of two each.
    assert_eq!(callees, ["area", "area"], "{total:#}");
}

/// A Go package is its folder's files: a bare call reaches a function of another file of the
/// folder, never one of another package (written `pkg.Name`), here shadowed by a local.
#[test]
fn a_bare_go_name_reaches_only_its_package() {
    let ws = Workspace::empty();
    ws.write(
        "codec/codec.go",
        "package codec\n\nfunc Load(s string) int {\n\treturn len(s)\n}\n",
    );
    ws.write(
        "app/run.go",
        "package app\n\nfunc Start() int {\n\treturn 1\n}\n",
    );
    ws.write(
        "app/main.go",
        "package app\n\nfunc Main() int {\n\tLoad := func(s string) int { return 0 }\n\treturn Load(\"x\") + Start()\n}\n",
    );
    ws.ok(&["scan"]);
    let main = ws.json(&["refs", "Main"]);
    let callees: Vec<(&str, &str)> = main["callees"]
        .as_array()
        .expect("callees")
        .iter()
        .map(|c| {
            (
                c["path"].as_str().expect("a path"),
                c["name"].as_str().expect("a name"),
            )
        })
        .collect();
    assert_eq!(callees, [("app/run.go", "Start")], "{main:#}");
    assert_eq!(main["callees"][0]["candidates"], 1, "{main:#}");
}

/// A Java method every definition of which in the workspace overrides (`toString` of
/// `Object`) is no callee of a call through `.`, which a library type's answers as well; a
/// private overload is its class's own; a method the workspace declares is a callee.
#[test]
fn a_java_override_of_a_library_method_is_no_callee_of_a_call_through_a_dot() {
    let ws = Workspace::empty();
    ws.write(
        "src/Tag.java",
        "class Tag {\n  @Override\n  public String toString() {\n    return \"t\";\n  }\n\n  \
         private String toString(boolean full) {\n    return \"tag\";\n  }\n\n  \
         public int size() {\n    return 1;\n  }\n}\n",
    );
    ws.write(
        "src/Use.java",
        "class Use {\n  String show(StringBuilder b, Tag t) {\n    return b.toString() + t.size();\n  }\n}\n",
    );
    ws.ok(&["scan"]);
    let show = ws.json(&["refs", "show"]);
    let callees = names(&show["callees"]);
    assert_eq!(callees, ["size"], "{show:#}");
}
