//! Tidy's rules, run on this repository (which must pass) and on small fake workspaces.

use std::fs;
use std::path::Path;

use pretty_assertions::assert_eq;
use xtask::tidy;

/// This repository obeys its own rules: `cargo test -p xtask` is the tidy gate.
#[test]
fn this_repository_is_tidy() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one folder below the workspace root");
    let problems: Vec<String> = tidy::check(root)
        .expect("tidy runs on the repository")
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(problems, Vec::<String>::new());
}

const ROOT_MANIFEST: &str = r#"[workspace]
members = ["crates/*"]

[workspace.dependencies]
merkle-store = { path = "crates/merkle-store" }
context = { path = "crates/context" }
store-renamed = { package = "merkle-store", path = "crates/merkle-store" }
tokio = { version = "1", default-features = false }
tokio-mt = { package = "tokio", version = "1", features = ["rt-multi-thread"] }
reqwest = { version = "0.12" }
"#;

const ARCHITECTURE: &str = "# Architecture

```layering
context -> merkle-store   # context reads the tree
cli -> merkle-store
cli -> context
```
";

fn manifest(name: &str, deps: &str) -> String {
    format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n\n{deps}")
}

/// Writes a fake workspace of merkle-store, context and cli, replaces or adds `files`, runs
/// tidy on it and compares the rendered problems with `expected`.
fn check(files: &[(&str, &str)], expected: &[&str]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let mut all: Vec<(String, String)> = vec![
        ("Cargo.toml".into(), ROOT_MANIFEST.into()),
        ("ARCHITECTURE.md".into(), ARCHITECTURE.into()),
    ];
    for (name, deps) in [
        ("merkle-store", ""),
        ("context", "[dependencies]\nmerkle-store.workspace = true\n"),
        (
            "cli",
            "[dependencies]\nmerkle-store = { workspace = true }\ncontext.workspace = true\n",
        ),
    ] {
        all.push((format!("crates/{name}/Cargo.toml"), manifest(name, deps)));
        all.push((format!("crates/{name}/src/lib.rs"), "//! A crate.\n".into()));
    }
    all.push((
        "xtask/src/main.rs".into(),
        "//! Automation.\nfn main() {}\n".into(),
    ));
    for (path, text) in files {
        match all.iter_mut().find(|(p, _)| p == path) {
            Some(slot) => slot.1 = (*text).to_owned(),
            None => all.push(((*path).to_owned(), (*text).to_owned())),
        }
    }
    for (path, text) in &all {
        let path = root.join(path);
        fs::create_dir_all(path.parent().expect("a file has a parent")).expect("mkdir");
        fs::write(&path, text).expect("write");
    }
    let problems: Vec<String> = tidy::check(root)
        .expect("tidy runs")
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(problems, expected);
}

#[test]
fn allowed_edges_pass() {
    check(&[], &[]);
}

#[test]
fn upward_edge_is_named_with_its_file_and_line() {
    check(
        &[(
            "crates/merkle-store/Cargo.toml",
            &manifest("merkle-store", "[dependencies]\ncontext.workspace = true\n"),
        )],
        &[
            "crates/merkle-store/Cargo.toml:6: dependency edge `merkle-store -> context` in \
           [dependencies] is not allowed by the `layering` block in ARCHITECTURE.md",
        ],
    );
}

#[test]
fn every_dependency_table_and_spelling_counts() {
    let deps = "[dev-dependencies]\ncli = { path = \"../cli\" }\n\n\
                [build-dependencies.context]\npath = \"../context\"\n\n\
                [target.'cfg(unix)'.dependencies]\nrenamed = { package = \"cli\", path = \"../cli\" }\n";
    check(
        &[(
            "crates/merkle-store/Cargo.toml",
            &manifest("merkle-store", deps),
        )],
        &[
            "crates/merkle-store/Cargo.toml:6: dependency edge `merkle-store -> cli` in \
             [dev-dependencies] is not allowed by the `layering` block in ARCHITECTURE.md",
            "crates/merkle-store/Cargo.toml:8: dependency edge `merkle-store -> context` in \
             [build-dependencies] is not allowed by the `layering` block in ARCHITECTURE.md",
            "crates/merkle-store/Cargo.toml:12: dependency edge `merkle-store -> cli` in \
             [dependencies] is not allowed by the `layering` block in ARCHITECTURE.md",
        ],
    );
}

#[test]
fn workspace_renames_are_followed() {
    check(
        &[
            (
                "crates/cli/Cargo.toml",
                &manifest("cli", "[dependencies]\nstore-renamed.workspace = true\n"),
            ),
            (
                "ARCHITECTURE.md",
                "```layering\ncontext -> merkle-store\n```\n",
            ),
        ],
        &[
            "crates/cli/Cargo.toml:6: dependency edge `cli -> merkle-store` in [dependencies] is \
           not allowed by the `layering` block in ARCHITECTURE.md",
        ],
    );
}

/// The binary's package is `merkle` (what `cargo install` names it) in `crates/cli`: rules and
/// the layering block name crates by folder, and edges to a package are edges to its folder.
#[test]
fn crates_are_named_by_their_folder() {
    let cli = "[dependencies]\nmerkle-store.workspace = true\ncontext.workspace = true\n\
               clap = \"4\"\n";
    check(
        &[
            ("crates/cli/Cargo.toml", &manifest("merkle", cli)),
            (
                "crates/context/Cargo.toml",
                &manifest(
                    "context",
                    "[dev-dependencies]\nmerkle = { path = \"../cli\" }\n",
                ),
            ),
        ],
        &[
            "crates/context/Cargo.toml:6: dependency edge `context -> cli` in \
             [dev-dependencies] is not allowed by the `layering` block in ARCHITECTURE.md",
        ],
    );
}

/// `from -> to (dev)` allows the edge for tests only, as agent-loop's on llm-sim.
#[test]
fn dev_only_edges_are_refused_elsewhere() {
    let architecture = "```layering\ncontext -> merkle-store (dev)  # tests only\n\
                        cli -> merkle-store\ncli -> context (dev)\n```\n";
    let cli = "[dependencies]\nmerkle-store.workspace = true\n\n\
               [dev-dependencies]\ncontext.workspace = true\n";
    check(
        &[
            ("ARCHITECTURE.md", architecture),
            ("crates/cli/Cargo.toml", &manifest("cli", cli)),
        ],
        &[
            "crates/context/Cargo.toml:6: dependency edge `context -> merkle-store` in \
             [dependencies] is allowed only in [dev-dependencies] by the `layering` block in \
             ARCHITECTURE.md",
        ],
    );
}

#[test]
fn heavy_dependencies_have_one_owner() {
    let deps = "[dependencies]\nmerkle-store.workspace = true\nreqwest.workspace = true\n\
                tokio = { workspace = true, features = [\n  \"rt-multi-thread\",\n] }\n\n\
                [dev-dependencies]\nclap = \"4\"\ntokio-mt.workspace = true\n";
    check(
        &[("crates/context/Cargo.toml", &manifest("context", deps))],
        &[
            "crates/context/Cargo.toml:7: `context` depends on `reqwest` in [dependencies]; only \
             llm-core may (one owner per heavy dependency)",
            "crates/context/Cargo.toml:8: `context` enables tokio's `rt-multi-thread` feature in \
             [dependencies]; only cli builds the runtime",
        ],
    );
}

#[test]
fn the_simulator_reaches_no_store_even_through_another_crate() {
    // Through context it reaches the store; its tests may use the store directly.
    let architecture = ARCHITECTURE.replace(
        "cli -> merkle-store\n",
        "cli -> merkle-store\nllm-sim -> context\nllm-sim -> merkle-store (dev)\n",
    );
    check(
        &[
            ("ARCHITECTURE.md", &architecture),
            (
                "crates/llm-sim/Cargo.toml",
                &manifest(
                    "llm-sim",
                    "[dependencies]\ncontext.workspace = true\n\n[dev-dependencies]\n\
                     merkle-store.workspace = true\n",
                ),
            ),
            ("crates/llm-sim/src/lib.rs", "//! The simulator.\n"),
        ],
        &[
            "crates/llm-sim/Cargo.toml: `llm-sim` reaches `merkle-store` through its \
             dependencies; it must build without the store (what it needs of it belongs in \
             merkle-hash)",
        ],
    );
}

#[test]
fn the_mcp_server_reaches_no_http_client_even_through_another_crate() {
    // Through agent-loop it reaches llm-core; its tests may use llm-core directly.
    let architecture = ARCHITECTURE.replace(
        "cli -> merkle-store\n",
        "cli -> merkle-store\nmcp -> agent-loop\nagent-loop -> llm-core\nmcp -> llm-core (dev)\n",
    );
    check(
        &[
            ("ARCHITECTURE.md", &architecture),
            (
                "crates/mcp/Cargo.toml",
                &manifest(
                    "mcp",
                    "[dependencies]\nagent-loop.workspace = true\n\n[dev-dependencies]\n\
                     llm-core.workspace = true\n",
                ),
            ),
            ("crates/mcp/src/lib.rs", "//! The server.\n"),
            (
                "crates/agent-loop/Cargo.toml",
                &manifest("agent-loop", "[dependencies]\nllm-core.workspace = true\n"),
            ),
            ("crates/agent-loop/src/lib.rs", "//! The agent.\n"),
            ("crates/llm-core/Cargo.toml", &manifest("llm-core", "")),
            ("crates/llm-core/src/lib.rs", "//! The client.\n"),
        ],
        &[
            "crates/mcp/Cargo.toml: `mcp` reaches `llm-core` through its dependencies; it must \
           build without an HTTP client (its caller passes in what it fetches with)",
        ],
    );
}

#[test]
fn runtime_features_through_workspace_and_features_table() {
    let context = "[features]\nfast = [\"tokio?/full\"]\n\n\
                   [dependencies]\nmerkle-store.workspace = true\n\
                   tokio = { workspace = true, optional = true }\n";
    let cli = "[dependencies]\nmerkle-store.workspace = true\ncontext.workspace = true\n\
               tokio-mt.workspace = true\n";
    check(
        &[
            ("crates/context/Cargo.toml", &manifest("context", context)),
            ("crates/cli/Cargo.toml", &manifest("cli", cli)),
        ],
        &[
            "crates/context/Cargo.toml:6: feature `fast` of `context` enables tokio's `full`; only \
           cli builds the runtime",
        ],
    );
}

#[test]
fn storage_has_no_async() {
    check(
        &[(
            "crates/merkle-store/Cargo.toml",
            &manifest("merkle-store", "[dependencies]\ntokio.workspace = true\n"),
        )],
        &[
            "crates/merkle-store/Cargo.toml:6: `merkle-store` depends on `tokio` in [dependencies]; \
           it must stay free of async",
        ],
    );
}

#[test]
fn rust_files_start_with_a_doc_line() {
    check(
        &[
            ("crates/context/src/view.rs", "// not a doc line\n"),
            ("crates/context/tests/fixtures/input.rs", "fn data() {}\n"),
            ("crates/context/target/debug/build.rs", ""),
            ("xtask/src/empty.rs", ""),
        ],
        &[
            "crates/context/src/view.rs:1: a Rust file must start with a `//!` line saying what \
             it is for",
            "xtask/src/empty.rs:1: a Rust file must start with a `//!` line saying what it is for",
        ],
    );
}

#[test]
fn a_rust_file_outside_the_tests_has_at_most_800_lines() {
    let long = format!("//! Long.\n{}", "fn f() {}\n".repeat(800));
    let limit = format!("//! At the limit.\n{}", "fn f() {}\n".repeat(799));
    check(
        &[
            ("crates/cli/src/main.rs", &long),
            ("crates/context/src/view.rs", &limit),
            ("crates/context/src/search/rank.rs", &long),
            ("crates/context/tests/it/long.rs", &long),
            ("xtask/src/bench.rs", &long),
        ],
        &[
            "crates/cli/src/main.rs:801: 801 lines, over the limit of 800: split the file by job",
            "crates/context/src/search/rank.rs:801: 801 lines, over the limit of 800: split the \
             file by job",
            "xtask/src/bench.rs:801: 801 lines, over the limit of 800: split the file by job",
        ],
    );
}

#[test]
fn a_function_outside_the_tests_has_at_most_120_lines() {
    let body = |n: usize| format!("fn long() {{\n{}}}\n", "    step();\n".repeat(n - 2));
    let long = format!("//! Long.\n\n{}", body(121));
    let limit = format!("//! At the limit.\n{}", body(120));
    let tested = format!("//! Tested.\n#[cfg(test)]\nmod tests {{\n{}}}\n", body(200));
    check(
        &[
            ("crates/context/src/view.rs", &long),
            ("crates/context/src/bundle.rs", &limit),
            ("crates/context/src/unit.rs", &tested),
            ("crates/context/tests/it/long.rs", &long),
            ("xtask/src/bench.rs", &long),
        ],
        &[
            "crates/context/src/view.rs:3: function `long` has 121 lines, over the limit of 120: \
             split it into named phases",
            "xtask/src/bench.rs:3: function `long` has 121 lines, over the limit of 120: split \
             it into named phases",
        ],
    );
}

#[test]
fn xtask_modules_in_a_circle_are_named() {
    check(
        &[
            ("xtask/src/lib.rs", "//! Tasks.\nmod a;\nmod b;\n"),
            ("xtask/src/a.rs", "//! A.\nfn f() { crate::b::g() }\n"),
            ("xtask/src/b.rs", "//! B.\npub fn g() { crate::a::f() }\n"),
        ],
        &[
            "xtask/src/b.rs:2: the modules of `xtask` import each other in a circle: a -> b -> \
           a; move what they share into a module below both",
        ],
    );
}

#[test]
fn layering_block_is_checked_itself() {
    check(
        &[(
            "ARCHITECTURE.md",
            "# Architecture\n\n```layering\ncontext -> merkle-store\ncli -> contxt\n\
             merkle-store -> context\ncli: everything\n```\n",
        )],
        &[
            "ARCHITECTURE.md:5: `contxt` is not a crate under crates/",
            "ARCHITECTURE.md:6: the allowed edges form a cycle: context -> merkle-store -> \
             context; layering must point down",
            "ARCHITECTURE.md:7: expected one edge `from -> to` per line, found `cli: everything`",
            "crates/cli/Cargo.toml:6: dependency edge `cli -> merkle-store` in [dependencies] is \
             not allowed by the `layering` block in ARCHITECTURE.md",
            "crates/cli/Cargo.toml:7: dependency edge `cli -> context` in [dependencies] is not \
             allowed by the `layering` block in ARCHITECTURE.md",
        ],
    );
}

#[test]
fn missing_layering_block_is_a_problem() {
    check(
        &[(
            "ARCHITECTURE.md",
            "# Architecture\n\n```text\ncontext -> merkle-store\n```\n",
        )],
        &[
            "ARCHITECTURE.md: no ```layering block: list the allowed dependency edges there, one \
             `from -> to` per line",
            "crates/cli/Cargo.toml:6: dependency edge `cli -> merkle-store` in [dependencies] is \
             not allowed by the `layering` block in ARCHITECTURE.md",
            "crates/cli/Cargo.toml:7: dependency edge `cli -> context` in [dependencies] is not \
             allowed by the `layering` block in ARCHITECTURE.md",
            "crates/context/Cargo.toml:6: dependency edge `context -> merkle-store` in \
             [dependencies] is not allowed by the `layering` block in ARCHITECTURE.md",
        ],
    );
}

#[test]
fn a_manifest_that_is_not_toml_is_an_error_naming_the_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    fs::create_dir_all(root.join("crates/a")).expect("mkdir");
    fs::write(root.join("Cargo.toml"), "[workspace]\n").expect("write");
    fs::write(
        root.join("crates/a/Cargo.toml"),
        "[package]\nname = \"a\nversion = 1\n",
    )
    .expect("write");
    let err = tidy::check(root).expect_err("a broken manifest stops the check");
    assert_eq!(
        format!("{err:#}"),
        format!(
            "parsing {}: line 2: invalid basic string, expected `\"`",
            root.join("crates/a/Cargo.toml").display()
        )
    );
}

#[test]
fn modules_that_import_each_other_in_a_circle_are_named() {
    let lib = "//! A crate.\nmod a;\nmod b;\nmod c;\npub use c::Shared;\n";
    // a -> b by path, b -> c by a `crate::{...}` group, c -> a through the root's re-export of
    // a's item; comments and tests import nothing.
    let a = "//! A.\npub struct Thing;\nfn f() { crate::b::g() }\n// crate::c::never\n";
    let b = "//! B.\nuse crate::{c, Shared as _};\npub fn g() {}\n";
    let c = "//! C.\npub struct Shared;\nfn h(_: crate::Thing) {}\n#[cfg(test)]\nmod tests { use crate::b; }\n";
    let lib_with_thing = format!("{lib}pub use a::Thing;\n");
    check(
        &[
            ("crates/context/src/lib.rs", &lib_with_thing),
            ("crates/context/src/a.rs", a),
            ("crates/context/src/b.rs", b),
            ("crates/context/src/c.rs", c),
        ],
        &[
            "crates/context/src/c.rs:3: the modules of `context` import each other in a circle: \
           a -> b -> c -> a; move what they share into a module below both",
        ],
    );
}
