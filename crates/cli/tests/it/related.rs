//! `merkle related`: a file's imports and importers, resolved in the workspace, after a
//! rescan; the text and the JSON, and errors naming the path.
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::Workspace;

/// A small multi-language workspace with imports between its files.
fn workspace() -> Workspace {
    let ws = Workspace::empty();
    ws.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    ws.write("src/lib.rs", "pub mod store;\nmod util;\n");
    ws.write(
        "src/store.rs",
        "use crate::util::shout;\npub struct Store;\n",
    );
    ws.write("src/util.rs", "pub fn shout() {}\n");
    ws.write(
        "web/index.ts",
        "import { api } from './api';\nexport * from './lib/util.js';\n",
    );
    ws.write("web/api.ts", "export const api = 1;\n");
    ws.write(
        "web/lib/util.ts",
        "import x from 'react';\nexport const u = 2;\n",
    );
    ws.write("web/main.js", "const api = require('./api');\n");
    ws.write("py/pkg/__init__.py", "");
    ws.write("py/pkg/a.py", "from . import b\nimport os\n");
    ws.write("py/pkg/b.py", "X = 1\n");
    ws.write("c/main.c", "#include <stdio.h>\n#include \"util.h\"\n");
    ws.write("c/util.h", "int f(void);\n");
    ws.ok(&["scan"]);
    ws
}

#[test]
fn related_lists_imports_then_importers() {
    let ws = workspace();
    // No scan first: related rescans.
    insta::assert_snapshot!("related_util_rs", ws.ok(&["related", "src/util.rs"]));
    insta::assert_snapshot!("related_web_index", ws.ok(&["related", "web/index.ts"]));
    assert_eq!(
        ws.json(&["related", "web/api.ts"]),
        json!([
            {"path": "web/index.ts", "relation": "imported_by", "line": 1, "specifier": "./api"},
            {"path": "web/main.js", "relation": "imported_by", "line": 1, "specifier": "./api"},
        ])
    );
    assert_eq!(
        ws.json(&["related", "py/pkg/a.py"]),
        json!([{"path": "py/pkg/b.py", "relation": "imports", "line": 1, "specifier": ". import b"}])
    );
    assert_eq!(
        ws.json(&["related", "c/util.h"]),
        json!([{"path": "c/main.c", "relation": "imported_by", "line": 2, "specifier": "util.h"}])
    );
}

#[test]
fn related_follows_an_edit_without_an_explicit_scan() {
    let ws = workspace();
    ws.ok(&["scan"]);
    assert_eq!(
        ws.json(&["related", "py/pkg/b.py"])
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    ws.write("py/pkg/a.py", "import os\n");
    assert_eq!(ws.json(&["related", "py/pkg/b.py"]), json!([]));
    assert_eq!(
        ws.ok(&["related", "py/pkg/b.py"]),
        "py/pkg/b.py: no imports and no importers in the workspace\n"
    );
}

#[test]
fn related_names_a_missing_path_and_refuses_a_directory() {
    let ws = workspace();
    let missing = ws.run(&["related", "src/nope.rs"]);
    assert_eq!(missing.code, 1, "{missing}");
    assert!(missing.stderr.contains("src/nope.rs"), "{missing}");
    let dir = ws.run(&["related", "src"]);
    assert_eq!(dir.code, 2, "{dir}");
    assert!(dir.stderr.contains("\"src\" is a directory"), "{dir}");
}

/// A view's `related` source, without `--related`, brings the frames of the file's imports and
/// importers; `--related` lists nodes instead.
#[test]
fn the_related_source_of_a_view_follows_the_graph_unless_nodes_are_listed() {
    let ws = workspace();
    ws.ok(&["scan"]);
    ws.ok(&["agent", "add", "w", "--role", "writer"]);
    let note = ws.tmp.path().join("note.txt");
    for (path, content) in [
        ("src/store.rs", "store notes"),
        ("src/util.rs", "util notes"),
        ("src/lib.rs", "lib notes"),
        ("web/api.ts", "api notes"),
    ] {
        std::fs::write(&note, content).expect("write a note");
        let note = note.to_str().expect("a UTF-8 path");
        ws.ok(&["put-frame", path, note, "--type", "notes", "--agent", "w"]);
    }
    let frames = |args: &[&str]| -> Vec<(String, String)> {
        let mut all = vec!["get-node"];
        all.extend_from_slice(args);
        ws.json(&all)["frames"]
            .as_array()
            .expect("frames")
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().expect("a path").to_owned(),
                    f["source"].as_str().expect("a source").to_owned(),
                )
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    assert_eq!(
        frames(&["src/store.rs", "--source", "node,related"]),
        [
            ("src/lib.rs".to_owned(), "related".to_owned()),
            ("src/store.rs".to_owned(), "node".to_owned()),
            ("src/util.rs".to_owned(), "related".to_owned()),
        ]
    );
    assert_eq!(
        frames(&[
            "src/store.rs",
            "--source",
            "related",
            "--related",
            "web/api.ts"
        ]),
        [("web/api.ts".to_owned(), "related".to_owned())]
    );
    let bad = ws.run(&["get-node", "src/store.rs", "--source", "cousins"]);
    assert_eq!(bad.code, 2, "{bad}");
    assert!(bad.stderr.contains("'cousins'"), "{bad}");
}

/// A Rust workspace laid out as deno's: crates keep `lib.rs` at their root (named by `[lib]
/// path`, or found there), use each other by crate name, and test modules use `super::*`.
/// Every workspace-internal import resolves, and none resolves to a wrong file.
#[test]
fn rust_crates_with_lib_rs_at_the_root_resolve_every_internal_import() {
    let ws = Workspace::empty();
    ws.write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"core\", \"ext/fs\", \"cli\"]\n",
    );
    ws.write(
        "core/Cargo.toml",
        "[package]\nname = \"deno_core\"\nversion = \"0.1.0\"\n\n[lib]\npath = \"lib.rs\"\n",
    );
    ws.write(
        "core/lib.rs",
        "mod ops;\npub mod runtime;\npub use crate::ops::op;\n",
    );
    ws.write(
        "core/ops.rs",
        "use crate::runtime::JsRuntime;\npub fn op() {}\n",
    );
    ws.write(
        "core/runtime/mod.rs",
        "mod jsruntime;\npub use self::jsruntime::JsRuntime;\n",
    );
    ws.write(
        "core/runtime/jsruntime.rs",
        "use super::super::ops;\npub struct JsRuntime;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    );
    // No [lib] path: lib.rs at the root is found all the same; a dash in the name is `_`.
    ws.write("ext/fs/Cargo.toml", "[package]\nname = \"deno-fs\"\n");
    ws.write(
        "ext/fs/lib.rs",
        "mod std_fs;\nuse deno_core::runtime::JsRuntime;\nuse deno_core::op;\n",
    );
    ws.write(
        "ext/fs/std_fs.rs",
        "use crate::std_fs as me;\nuse std::fs;\n",
    );
    ws.write("cli/Cargo.toml", "[package]\nname = \"deno\"\n");
    ws.write(
        "cli/main.rs",
        "mod tools;\nuse deno_fs::std_fs;\nuse serde::Serialize;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    );
    ws.write("cli/tools/mod.rs", "pub mod fmt;\n");
    ws.write(
        "cli/tools/fmt.rs",
        "use crate::tools;\nuse deno_core::runtime;\n",
    );
    ws.ok(&["scan"]);
    let imports = |path: &str| -> Vec<String> {
        ws.json(&["related", path])
            .as_array()
            .expect("a list")
            .iter()
            .filter(|r| r["relation"] == "imports")
            .map(|r| r["path"].as_str().expect("a path").to_owned())
            .collect()
    };
    let expected: &[(&str, &[&str])] = &[
        ("core/lib.rs", &["core/ops.rs", "core/runtime/mod.rs"]),
        ("core/ops.rs", &["core/runtime/mod.rs"]),
        ("core/runtime/mod.rs", &["core/runtime/jsruntime.rs"]),
        // `use super::*` in the inline tests module is the file itself: no edge.
        ("core/runtime/jsruntime.rs", &["core/ops.rs"]),
        (
            "ext/fs/lib.rs",
            &["core/lib.rs", "core/runtime/mod.rs", "ext/fs/std_fs.rs"],
        ),
        ("ext/fs/std_fs.rs", &[]),
        ("cli/main.rs", &["cli/tools/mod.rs", "ext/fs/std_fs.rs"]),
        ("cli/tools/mod.rs", &["cli/tools/fmt.rs"]),
        (
            "cli/tools/fmt.rs",
            &["cli/tools/mod.rs", "core/runtime/mod.rs"],
        ),
    ];
    let (mut found, mut wanted) = (0, 0);
    for (path, want) in expected {
        let got = imports(path);
        for w in *want {
            wanted += 1;
            found += usize::from(got.iter().any(|g| g == w));
        }
        assert!(
            got.iter().all(|g| want.contains(&g.as_str())),
            "{path} imports {got:?}, expected only {want:?}"
        );
    }
    // The bar is 0.9 of the internal imports; this layout resolves all of them.
    assert_eq!((found, wanted), (13, 13));
}
