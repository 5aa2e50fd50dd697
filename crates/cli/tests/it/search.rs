//! `merkle search`: files ranked for a query (a name, a question, an issue with a traceback)
//! from the full-text index and the tree's definitions, `--limit`, `--type`, `--ranking`, the
//! JSON, an edit seen without a scan, bad input answered, never a panic or a hang, and past
//! fixes read from a partial clone's history without fetching.
use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::{Workspace, run};

fn workspace() -> Workspace {
    let ws = Workspace::empty();
    ws.write(
        "src/store.rs",
        "/// A store.\npub struct Store;\n\nimpl Store {\n    pub fn open() -> Store {\n        Store\n    }\n}\n",
    );
    ws.write("src/store_ext.rs", "pub trait StoreExt {}\nfn store() {}\n");
    ws.write(
        "src/cli.rs",
        "use crate::store::Store;\nfn run(s: Store) {\n    // formats with dprint_plugin_markdown\n}\n",
    );
    ws.write(
        "web/store.ts",
        "export class Cache {}\nexport function openStore() {}\n",
    );
    ws.write("notes/design.md", "# Design\n\n## The store\n");
    ws.write(
        "tests/store_test.rs",
        "use crate::store::Store;\n#[test]\nfn opens() { Store::open(); }\n",
    );
    ws.ok(&["scan"]);
    ws
}

fn paths(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|h| h["path"].as_str().expect("a path").to_owned())
        .collect()
}

#[test]
fn a_definition_comes_first_with_its_lines_and_why() {
    let ws = workspace();
    let mut settings = ws.settings();
    settings.add_filter(r"(?m) \(\d+(\.\d+)?\)$", " (SCORE)");
    settings.bind(|| insta::assert_snapshot!("search_store_text", ws.ok(&["search", "Store"])));
    let hits = ws.json(&["search", "Store", "--limit", "2"]);
    let first = &hits[0];
    assert_eq!(first["path"], "src/store.rs");
    assert!(
        first["score"].as_f64().expect("a number") > hits[1]["score"].as_f64().expect("a number")
    );
    assert_eq!(
        first["symbols"][0],
        serde_json::json!({
            "name": "Store", "kind": "struct", "line_start": 2, "line_end": 2,
            "signature": "pub struct Store",
        })
    );
    assert_eq!(first["symbols"][1]["name"], "open");
    assert_eq!(first["symbols"][1]["line_end"], 7);
    let why: Vec<&str> = first["why"]
        .as_array()
        .expect("why")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(why.contains(&"defines: Store"), "{why:?}");
    // The test that uses it comes after the code.
    let all = paths(&ws.json(&["search", "Store"]));
    let pos = |p: &str| all.iter().position(|x| x == p).unwrap_or(usize::MAX);
    assert!(pos("src/store.rs") < pos("tests/store_test.rs"), "{all:?}");
}

#[test]
fn file_text_is_searched_and_an_issue_is_a_query() {
    let ws = workspace();
    assert_eq!(
        paths(&ws.json(&["search", "dprint_plugin_markdown"])),
        ["src/cli.rs"]
    );
    let issue = "Opening a store panics\n\nTraceback (most recent call last):\n  \
                 File \"/home/me/project/src/store_ext.rs\", line 2, in store\n\
                 RuntimeError: the store is gone";
    let hits = ws.json(&["search", issue]);
    assert_eq!(hits[0]["path"], "src/store_ext.rs");
    // Standard input, for a long issue.
    let out = ws
        .cmd(&["--json", "search", "-"])
        .write_stdin(issue)
        .output()
        .expect("runs");
    assert!(out.status.success());
    let from_stdin: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(from_stdin, hits);
}

#[test]
fn the_limit_only_cuts_the_order_and_plain_ranks_by_text() {
    let ws = workspace();
    let all = paths(&ws.json(&["search", "open the store", "--limit", "100"]));
    for limit in 1..all.len() {
        let cut = paths(&ws.json(&["search", "open the store", "--limit", &limit.to_string()]));
        assert_eq!(cut, all[..limit]);
    }
    let plain = ws.json(&["search", "dprint_plugin_markdown", "--ranking", "plain"]);
    assert_eq!(paths(&plain), ["src/cli.rs"]);
    assert_eq!(plain[0]["why"], serde_json::json!(["bm25"]));
}

#[test]
fn type_filters_by_kind_or_language_and_bad_input_is_a_usage_error() {
    let ws = workspace();
    assert_eq!(
        paths(&ws.json(&["search", "store", "--type", "function"])),
        ["src/store_ext.rs", "web/store.ts"]
    );
    assert_eq!(
        paths(&ws.json(&["search", "store", "--type", "typescript"])),
        ["web/store.ts"]
    );
    let bad = ws.run(&["search", "store", "--type", "gadget"]);
    assert_eq!(bad.code, 2, "{bad}");
    assert!(bad.stderr.contains("\"gadget\""), "{bad}");
    for args in [&["search", " "][..], &["search", "x", "--limit", "0"]] {
        let r = ws.run(args);
        assert_eq!(r.code, 2, "{args:?}: {r}");
    }
}

/// `--type class` keeps a file only where it shows a class: a class holding methods is what
/// was asked for (flask's `testing.py` was kept with an empty symbol list).
#[test]
fn a_filter_by_kind_keeps_only_files_showing_a_definition_of_that_kind() {
    let ws = Workspace::empty();
    ws.write(
        "src/testing.py",
        "from .sessions import Client\n\n\nclass FlaskClient(Client):\n    \
         \"\"\"Works like a regular client.\"\"\"\n\n    def open(self, path):\n        \
         return self.request(path)\n\n    def session_transaction(self):\n        \
         return self.session\n",
    );
    ws.write(
        "src/helpers.py",
        "def get_client(app):\n    \"\"\"The client of an app.\"\"\"\n    return app.client\n",
    );
    ws.ok(&["scan"]);
    let hits = ws.json(&["search", "client", "--type", "class"]);
    assert_eq!(paths(&hits), ["src/testing.py"], "{hits}");
    assert_eq!(hits[0]["symbols"][0]["name"], "FlaskClient", "{hits}");
    for hit in hits.as_array().expect("hits") {
        let kinds: Vec<&Value> = hit["symbols"]
            .as_array()
            .expect("symbols")
            .iter()
            .map(|s| &s["kind"])
            .collect();
        assert!(
            !kinds.is_empty() && kinds.iter().all(|k| *k == "class"),
            "{hit}"
        );
    }
}

/// `search --functions` lists definitions best first across files: the best of each of the
/// first files leads, a file's weaker ones follow by score, and a file's definitions are not cut
/// at the five a file hit lists.
#[test]
fn functions_are_ranked_across_files_past_the_five_a_file_lists() {
    let ws = Workspace::empty();
    let mut many = String::new();
    for i in 0..8 {
        many.push_str(&format!(
            "pub fn retry_{i}(n: u32) -> u32 {{\n    // retry the request\n    n + {i}\n}}\n\n"
        ));
    }
    ws.write("src/retry.rs", &many);
    ws.write(
        "src/backoff.rs",
        "/// Waits before a retry.\npub fn backoff_retry(n: u32) -> u32 {\n    n * 2\n}\n",
    );
    ws.ok(&["scan"]);
    let found = ws.json(&[
        "search",
        "retry the request",
        "--functions",
        "--limit",
        "50",
    ]);
    let listed = found.as_array().expect("a list");
    let names: Vec<&str> = listed
        .iter()
        .map(|f| f["name"].as_str().expect("a name"))
        .collect();
    for i in 0..8 {
        assert!(names.contains(&format!("retry_{i}").as_str()), "{found}");
    }
    assert!(names.contains(&"backoff_retry"), "{found}");
    let scores: Vec<f64> = listed
        .iter()
        .map(|f| f["score"].as_f64().expect("a score"))
        .collect();
    // Each of the first files' best leads, then every other definition, each part best first.
    let files: Vec<&str> = listed
        .iter()
        .map(|f| f["path"].as_str().expect("a path"))
        .collect();
    assert_eq!(&files[..2], ["src/retry.rs", "src/backoff.rs"], "{found}");
    assert!(scores[0] >= scores[1], "{scores:?}");
    assert!(
        scores[2..].windows(2).all(|w| w[0] >= w[1]),
        "best first: {scores:?}"
    );
    let first = &listed[0];
    for field in [
        "path",
        "name",
        "kind",
        "line_start",
        "line_end",
        "signature",
        "score",
        "why",
    ] {
        assert!(first.get(field).is_some(), "{field}: {first}");
    }
    let cut = ws.json(&["search", "retry the request", "--functions", "--limit", "3"]);
    assert_eq!(cut.as_array().map(Vec::len), Some(3));
    assert_eq!(cut[0], found[0]);
    let text = ws.ok(&["search", "retry the request", "--functions", "--limit", "1"]);
    assert!(text.starts_with("src/retry.rs:"), "{text}");
    // The file list still lists at most five of a file's definitions.
    let files = ws.json(&["search", "retry the request"]);
    assert!(
        files[0]["symbols"].as_array().is_some_and(|s| s.len() <= 5),
        "{files}"
    );
}

/// `search --functions` lists what holds code a fix changes (functions, methods, the types
/// holding them), not the constants and fields a task names, which a file's list shows; asked
/// for by kind, those too.
#[test]
fn a_function_search_lists_no_constants_unless_asked() {
    let ws = Workspace::empty();
    ws.write(
        "src/retry.rs",
        "pub const MAX_RETRIES: u32 = 3;\n\npub struct Policy {\n    pub max_retries: u32,\n}\n\n\
         pub fn retry(policy: &Policy, n: u32) -> bool {\n    n < policy.max_retries\n}\n",
    );
    ws.ok(&["scan"]);
    let query = "`MAX_RETRIES` and `max_retries` are ignored when we retry";
    let names = |args: &[&str]| ws.names(args);
    let listed = names(&["search", query, "--functions"]);
    assert!(listed.contains(&"retry".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"MAX_RETRIES".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"max_retries".to_owned()), "{listed:?}");
    let files = ws.json(&["search", query]);
    let symbols: Vec<&str> = files[0]["symbols"]
        .as_array()
        .expect("symbols")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(symbols.contains(&"MAX_RETRIES"), "{files}");
    let constants = names(&["search", query, "--functions", "--type", "constant"]);
    assert_eq!(constants, ["MAX_RETRIES"]);
}

/// A task naming a class names the class, not its constructor (a function named as the type):
/// the method holding the task's words comes before the constructor.
#[test]
fn a_named_class_does_not_name_its_constructor() {
    let ws = Workspace::empty();
    ws.write(
        "src/Ledger.java",
        "public class Ledger {\n    private long balance;\n\n    public Ledger() {\n    }\n\n    \
         public long settle(long payment) {\n        // A payment over the balance is an \
         overdraft.\n        if (payment >= balance) {\n            throw new \
         IllegalStateException(\"overdraft\");\n        }\n        return balance - payment;\n    \
         }\n}\n",
    );
    ws.ok(&["scan"]);
    let query = "`Ledger` refuses a payment equal to its balance\n\nSettling a payment of the \
                 whole balance throws an overdraft.";
    let found = ws.json(&["search", query, "--functions"]);
    let names: Vec<(&str, u64)> = found
        .as_array()
        .expect("a list")
        .iter()
        .map(|f| {
            (
                f["name"].as_str().expect("a name"),
                f["line_start"].as_u64().expect("a line"),
            )
        })
        .collect();
    // The class, then the method holding the words, then the constructor.
    assert_eq!(names, [("Ledger", 1), ("settle", 7), ("Ledger", 4)]);
}

/// A C++ method defined outside its class is named qualified (`Parser::parse_string`), a
/// specialization with its arguments: a task writes the bare name, and the file defining it
/// is found by it and the definition is the one named; a constructor (`Parser::Parser`) is not
/// named by a task naming its class.
#[test]
fn a_qualified_cpp_definition_is_named_by_its_bare_name() {
    let ws = Workspace::empty();
    ws.write(
        "include/parser.h",
        "class Parser {\n public:\n  Parser();\n  bool parse_string(const char* s);\n  \
         int depth() const;\n};\n",
    );
    ws.write(
        "src/parser.cc",
        "#include \"parser.h\"\n\nParser::Parser() {}\n\n\
         int Parser::depth() const { return 0; }\n\n\
         bool Parser::parse_string(const char* s) {\n  // stops at the first quote\n  \
         return s != nullptr;\n}\n",
    );
    ws.ok(&["scan"]);
    let query = "`Parser` stops at an escaped quote\n\nCalling `parse_string(\"a\\\\\"b\")` \
                 returns after the first character.";
    let hits = ws.json(&["search", query]);
    let source = hits
        .as_array()
        .expect("a list")
        .iter()
        .find(|h| h["path"] == "src/parser.cc")
        .expect("the definitions' file is found");
    let why: Vec<&str> = source["why"]
        .as_array()
        .expect("why")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        why.iter()
            .any(|w| w.starts_with("defines:") && w.contains("parse_string")),
        "{why:?}"
    );
    let found = ws.json(&["search", query, "--functions"]);
    let first: Vec<(&str, &str)> = found
        .as_array()
        .expect("a list")
        .iter()
        .take(2)
        .map(|f| {
            (
                f["path"].as_str().expect("a path"),
                f["name"].as_str().expect("a name"),
            )
        })
        .collect();
    assert_eq!(
        first,
        [
            ("src/parser.cc", "Parser::parse_string"),
            ("include/parser.h", "parse_string")
        ]
    );
    let structor = found
        .as_array()
        .expect("a list")
        .iter()
        .position(|f| f["name"] == "Parser::Parser");
    assert!(structor.is_none_or(|k| k >= 2), "{found}");
}

/// A file whose first lines say it is generated (an amalgamated header) counts for less than
/// the source it is made from, which a fix changes; named by its path, it is what was asked.
#[test]
fn a_generated_file_counts_for_less_than_its_source() {
    let ws = Workspace::empty();
    let number = "bool is_number(const char* s) {\n  // a leading minus sign is a number\n  \
                  return s[0] == '-' || leading_sign(s);\n}\n";
    let sign = "bool leading_sign(const char* s) {\n  // a plus sign is a sign too\n  \
                return s[0] == '+';\n}\n";
    ws.write("include/number.h", number);
    ws.write("include/sign.h", sign);
    // It holds both sources, so every word and name of the task.
    ws.write(
        "single/all.h",
        &format!("/* auto-generated on 2020-06-21. Do not edit! */\n{sign}{number}"),
    );
    ws.ok(&["scan"]);
    let query = "`is_number` rejects a leading plus sign\n\nA number with a leading plus sign \
                 is not a number: `leading_sign` is never asked.";
    assert_eq!(
        paths(&ws.json(&["search", query])),
        ["include/number.h", "include/sign.h", "single/all.h"]
    );
    let asked = paths(&ws.json(&["search", "single/all.h is_number"]));
    assert_eq!(asked.first().map(String::as_str), Some("single/all.h"));
}

/// A method named as a dispatch on a type the task writes (`_print_Poly` for a `Poly`) is how
/// the task's call reached the bug: it comes right after the function called, before the
/// printer's other methods.
#[test]
fn a_dispatch_on_a_type_the_task_writes_comes_early() {
    let ws = Workspace::empty();
    ws.write(
        "printer.py",
        "class LatexPrinter:\n    def doprint(self, expr):\n        return self._print(expr)\n\n    \
         def _print_Add(self, expr):\n        terms = sorted(expr.args)\n        return \" + \
         \".join(terms)\n\n    def _print_Poly(self, poly):\n        return poly.as_expr()\n\n\n\
         def latex(expr):\n    return LatexPrinter().doprint(expr)\n",
    );
    ws.ok(&["scan"]);
    let query =
        "The LaTeX printer orders the terms of a Poly\n\n```\n>>> latex(Poly(x**2 + 1))\n```";
    let names = ws.names(&["search", query, "--functions"]);
    assert_eq!(names[..2], ["latex", "_print_Poly"], "{names:?}");
}

/// A variant of the function a task is about (`get_int_le` of `get_int`) comes right after it,
/// before a function holding more of the task's words: a fix to one is often a fix to both.
#[test]
fn a_variant_of_the_best_function_follows_it() {
    let ws = Workspace::empty();
    ws.write(
        "src/buf.rs",
        "pub fn get_int(buf: &[u8], nbytes: usize) -> i64 {\n    // Reads nbytes as a big-endian \
         value.\n    let value = read_be(buf, nbytes);\n    value as i64\n}\n\npub fn len_of(buf: \
         &[u8]) -> usize {\n    // How many bytes a value reads: a negative number sign \
         extends.\n    buf.len()\n}\n\npub fn get_int_le(buf: &[u8], nbytes: usize) -> i64 {\n    \
         let v = read_le(buf, nbytes);\n    v as i64\n}\n",
    );
    ws.ok(&["scan"]);
    let query = "`get_int` does not sign extend the value it reads\n\nReading a negative number \
                 of 3 bytes gives a positive value.";
    let names = ws.names(&["search", query, "--functions"]);
    assert_eq!(names, ["get_int", "get_int_le", "len_of"]);
}

#[test]
fn odd_queries_get_an_answer_not_a_panic() {
    let ws = workspace();
    let stop = ws.run(&["search", "and so it was that the one which"]);
    assert_eq!(stop.code, 0, "{stop}");
    assert!(stop.stdout.contains("only common words"), "{stop}");
    assert_eq!(
        ws.json(&["search", "and so it was that the one which"]),
        serde_json::json!([])
    );
    // Odd input on standard input gets an answer: a megabyte of query; twenty thousand
    // distinct words (each with its other forms, `-s`, `-ed`, `-ing`: a pass over the words for
    // each word would take minutes); bytes that are not UTF-8.
    let answers = |input: Vec<u8>| {
        let r = run(ws.cmd(&["--json", "search", "-"]).write_stdin(input));
        assert_eq!(r.code, 0, "{r}");
    };
    answers("store the open cache ".repeat(50_000).into_bytes());
    let letters = |mut i: usize| {
        let mut w = String::from("q");
        while i > 0 {
            w.push(char::from(b'a' + (i % 26) as u8));
            i /= 26;
        }
        w
    };
    let distinct: String = (0..20_000)
        .map(|i| format!("{}{} ", letters(i), ["", "s", "ed", "ing"][i % 4]))
        .collect();
    answers(distinct.into_bytes());
    answers(vec![0xff, 0xfe, 0x00, 0x80, b'S', b't', b'o', b'r', b'e']);
}

#[test]
fn an_edit_or_a_removal_is_seen_without_an_explicit_scan() {
    let ws = workspace();
    assert_eq!(ws.json(&["search", "Ledger"]), serde_json::json!([]));
    ws.write("src/cli.rs", "pub struct Ledger;\n");
    assert_eq!(paths(&ws.json(&["search", "Ledger"]))[0], "src/cli.rs");
    std::fs::remove_file(ws.path("src/cli.rs")).expect("remove");
    assert_eq!(ws.json(&["search", "Ledger"]), serde_json::json!([]));
}

#[test]
fn read_commands_never_create_a_store() {
    let ws = Workspace::empty();
    ws.write("a.py", "def f():\n    return 1\n");
    for args in [&["search", "f"][..], &["related", "a.py"]] {
        let r = ws.run(args);
        assert_eq!(r.code, 1, "{args:?}: {r}");
        assert!(
            r.stderr.contains("no store at") && r.stderr.contains("run `merkle scan` first"),
            "{args:?}: {r}"
        );
        assert!(
            !ws.root.join(".merkle").exists(),
            "{args:?} created a store"
        );
    }
}

#[test]
fn context_bundles_the_matched_definitions_within_the_budget() {
    let ws = workspace();
    let doc = ws.json(&["context", "how does Store open", "--budget", "1000"]);
    let first = &doc["files"][0];
    assert_eq!(first["path"], "src/store.rs", "{doc}");
    // The definitions' source as it is, lines and all; `open` lies inside `impl Store`, so it
    // comes once.
    let sections = first["sections"].as_array().expect("sections");
    assert!(
        sections.iter().any(|s| s["kind"] == "definition"
            && s["text"]
                .as_str()
                .is_some_and(|t| t.contains("pub fn open() -> Store {"))),
        "{doc}"
    );
    let texts: Vec<&str> = sections.iter().filter_map(|s| s["text"].as_str()).collect();
    assert_eq!(
        texts.iter().filter(|t| t.contains("pub fn open")).count(),
        1,
        "{doc}"
    );
    let tokens = doc["tokens"].as_u64().expect("tokens");
    assert!(tokens > 0 && tokens <= 1000, "{doc}");

    // A small budget holds less, never more than it says; what does not fit is named.
    let small = ws.json(&["context", "how does Store open", "--budget", "40"]);
    assert!(small["tokens"].as_u64().expect("tokens") <= 40, "{small}");
    assert!(
        !small["omitted"].as_array().expect("omitted").is_empty(),
        "{small}"
    );
    // What it prints holds to it too: headings and fences are counted (the first line and the
    // list of files left out are not).
    let printed = ws.ok(&["context", "how does Store open", "--budget", "40"]);
    let counted: usize = printed
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("also found, over the budget"))
        .map(|l| l.len() + 1)
        .sum();
    assert!(counted <= 4 * 40, "{counted} bytes:\n{printed}");

    // The text is Markdown to paste into a prompt.
    let text = ws.ok(&["context", "how does Store open", "--budget", "1000"]);
    assert!(text.starts_with("# Context: "), "{text}");
    assert!(
        text.contains("\n## src/store.rs\n") && text.contains("```rust\n"),
        "{text}"
    );

    // Bad input is answered.
    let r = ws.run(&["context", " "]);
    assert_eq!(r.code, 2, "{r}");
    let r = ws.run(&["context", "x", "--budget", "0"]);
    assert_eq!(r.code, 2, "{r}");
}

/// Two or three plain lowercase words are a topic, not names: the file about them comes first,
/// not one that happens to define one of the words (`namespace deno` in a declaration bundle).
/// A word written as code keeps the query a lookup.
#[test]
fn a_few_plain_words_are_a_topic_and_a_code_word_a_lookup() {
    let ws = Workspace::empty();
    let mut bundle = String::from("declare namespace deno {\n  export const version: string;\n}\n");
    for i in 0..200 {
        bundle.push_str(&format!("declare function helper{i}(x: number): number;\n"));
    }
    ws.write("cli/dts/lib.deno.d.ts", &bundle);
    ws.write(
        "cli/tools/fmt.rs",
        "//! `deno fmt`: formats code and markdown.\n\n/// Formats a markdown file.\npub fn format_markdown(text: &str) -> String {\n    // markdown in, markdown out, as deno fmt does\n    text.to_owned()\n}\n",
    );
    ws.write("cli/tools/lint.rs", "pub fn lint() {}\n");
    ws.ok(&["scan"]);
    assert_eq!(
        paths(&ws.json(&["search", "deno fmt markdown"]))[0],
        "cli/tools/fmt.rs"
    );
    // Written as code, a name is looked up: its definition first.
    assert_eq!(
        paths(&ws.json(&["search", "format_markdown"]))[0],
        "cli/tools/fmt.rs"
    );
}

/// Runs git in `dir` with a fixed author and the workspace's own home, and answers its output.
fn git(ws: &Workspace, dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .env("HOME", ws.tmp.path().join("home"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("running git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A task like the last commit of [`cloned`]'s origin.
const TASK: &str = "Accented greeting comes out garbled\nThe loud greeting prints accented \
                    letters garbled when it runs.";

/// The workspace as a partial clone (`git clone --filter=FILTER`) of a repository beside it,
/// scanned, and that repository. Its history moves a file and rewrites it (a rename git finds
/// only by reading both blobs), then fixes the greeting; the clone holds no object of the
/// past that its checkout does not need, and its remote can still be reached.
fn cloned(filter: &str) -> (Workspace, PathBuf) {
    let ws = Workspace::empty();
    let origin = ws.tmp.path().join("origin");
    let write = |rel: &str, content: &str| {
        let p = origin.join(rel);
        std::fs::create_dir_all(p.parent().expect("a folder")).expect("mkdir");
        std::fs::write(p, content).expect("write");
    };
    write(
        "src/greeting.py",
        "def greet(name):\n    return 'hello ' + name\n",
    );
    write(
        "src/farewell.py",
        "def farewell(name):\n    return 'bye ' + name\n",
    );
    write("docs/notes.md", "Notes on how the project is laid out.\n");
    git(&ws, ws.tmp.path(), &["init", "-q", "origin"]);
    git(&ws, &origin, &["config", "uploadpack.allowFilter", "true"]);
    git(&ws, &origin, &["add", "."]);
    git(&ws, &origin, &["commit", "-q", "-m", "Start"]);
    std::fs::remove_file(origin.join("docs/notes.md")).expect("remove");
    write(
        "docs/layout.md",
        "The layout: one module a feature, tests beside.\n",
    );
    git(&ws, &origin, &["add", "-A", "."]);
    git(
        &ws,
        &origin,
        &["commit", "-q", "-m", "Move the notes to a layout page"],
    );
    write(
        "src/greeting.py",
        "def greet(name):\n    return ('hello ' + name).upper()\n",
    );
    git(
        &ws,
        &origin,
        &[
            "commit",
            "-q",
            "-am",
            "Fix garbled accented letters in the loud greeting",
        ],
    );
    let url = format!("file://{}", origin.display());
    let into = ws.root.to_string_lossy().into_owned();
    let filter = format!("--filter={filter}");
    git(
        &ws,
        ws.tmp.path(),
        &["clone", "-q", "--no-local", &filter, &url, &into],
    );
    ws.ok(&["scan"]);
    (ws, origin)
}

/// Whether the workspace's git holds object `id`, asked without fetching it.
fn holds(ws: &Workspace, id: &str) -> bool {
    Command::new("git")
        .args(["cat-file", "-e", id])
        .current_dir(&ws.root)
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .expect("running git")
        .success()
}

/// A clone without the blobs of the past (`--filter=blob:none`, or a mirror without its large
/// files) keeps its past fixes: the history is read from commits and trees alone, and a
/// search fetches nothing from the remote (issue #44).
#[test]
fn a_blobless_clone_keeps_its_past_fixes_and_fetches_nothing() {
    let (ws, origin) = cloned("blob:none");
    let moved = git(&ws, &origin, &["rev-parse", "HEAD~2:docs/notes.md"]);
    assert!(!holds(&ws, &moved), "the clone holds no blob of the past");
    let hits = ws.json(&["search", TASK]);
    let first = hits[0].as_object().expect("a hit");
    assert_eq!(first["path"], "src/greeting.py");
    assert!(
        first["why"]
            .as_array()
            .expect("why")
            .contains(&"fixed before: Fix garbled accented letters in the loud greeting".into()),
        "{hits:#}"
    );
    assert!(
        hits.as_array()
            .expect("hits")
            .iter()
            .all(|h| h.get("history_missing").is_none()),
        "{hits:#}"
    );
    assert!(!holds(&ws, &moved), "the search fetched a blob");
}

/// A history git cannot read without the remote (a clone without the trees of the past,
/// `--filter=tree:0`) is not fetched: the search goes on without it, and says why in every
/// hit's `history_missing` and, under `-v`, once on stderr.
#[test]
fn a_history_git_cannot_read_is_named_and_never_fetched() {
    let (ws, origin) = cloned("tree:0");
    let old_tree = git(&ws, &origin, &["rev-parse", "HEAD~1^{tree}"]);
    assert!(
        !holds(&ws, &old_tree),
        "the clone holds no tree of the past"
    );
    let hits = ws.json(&["search", TASK]);
    let hits = hits.as_array().expect("hits");
    assert_eq!(hits[0]["path"], "src/greeting.py");
    let why = hits[0]["history_missing"]
        .as_str()
        .unwrap_or_else(|| panic!("no history_missing in {hits:#?}"))
        .to_owned();
    assert!(why.starts_with("git log failed: fatal: "), "{why}");
    for h in hits {
        assert_eq!(h["history_missing"], why.as_str());
        assert!(!h["why"].to_string().contains("fixed before"), "{h:#}");
    }
    assert!(!holds(&ws, &old_tree), "the search fetched a tree");
    let verbose = ws.run(&["-v", "search", TASK]);
    assert_eq!(
        (verbose.code, verbose.stderr),
        (
            0,
            format!("warning: past fixes left out of the ranking: {why}\n")
        )
    );
    // A lookup never reads the history, and so has nothing to say of it.
    let lookup = ws.json(&["search", "greet"]);
    assert_eq!(lookup[0].get("history_missing"), None);
}

/// A search of a task reads the workspace's git history first, once per HEAD: with `-v` it
/// says how many commits it kept and how long the read took, and a search with the history in
/// step reads none. A lookup (a name) never reads it.
#[test]
fn a_first_history_read_is_reported_once_per_head() {
    let (ws, _origin) = cloned("blob:none");
    let lookup = ws.run(&["-v", "search", "greet"]);
    assert!(!lookup.stderr.contains("git history"), "{lookup}");
    let first = ws.run(&["-v", "search", TASK]);
    assert_eq!(first.code, 0, "{first}");
    let said: Vec<&str> = first
        .stderr
        .lines()
        .filter(|l| l.starts_with("git history: "))
        .collect();
    assert_eq!(said.len(), 1, "{first}");
    assert!(said[0].contains(" commits kept, read in "), "{}", said[0]);
    let again = ws.run(&["-v", "search", TASK]);
    assert!(!again.stderr.contains("git history"), "{again}");
    assert_eq!(again.stdout, first.stdout);
    let bundle = ws.run(&["-v", "context", TASK]);
    assert!(!bundle.stderr.contains("git history"), "{bundle}");
}

/// Two files for the tests of what a task's text is read for: one that talks of versions and
/// installing, as an issue template's prompts do, and one of what the issue is about.
fn install_and_table(ws: &Workspace) {
    ws.write(
        "src/setup.rs",
        "/// Which version to install, and how: the package is installed using pip.\n\
         /// Describe a bug encountered while installing.\n\
         pub fn install_package(version: &str) {\n    // install the package version\n}\n",
    );
    ws.write(
        "src/table.rs",
        "/// Draws a table's borders.\npub fn draw_borders() {\n    // each border once\n}\n",
    );
}

#[test]
fn an_issue_s_template_prompts_are_not_read_as_its_words() {
    let tree = install_and_table;
    let issue = "Drawn twice\n\n**Which version are you using?**\n1.2\n\n\
                 **How did you install the package?**\npip\n\n\
                 **Describe the bug you encountered:**\nEach border is drawn twice.\n";
    let bare = Workspace::empty();
    tree(&bare);
    bare.ok(&["scan"]);
    assert_eq!(bare.json(&["search", issue])[0]["path"], "src/setup.rs");
    let templated = Workspace::empty();
    tree(&templated);
    templated.write(
        ".github/ISSUE_TEMPLATE/bug_report.md",
        "---\nname: Bug report\n---\n\n**Which version are you using?**\n...\n\n\
         **How did you install the package?**\n<!-- pip, conda -->\n\n\
         **Describe the bug you encountered:**\n...\n",
    );
    templated.ok(&["scan"]);
    let found = paths(&templated.json(&["search", issue]));
    assert_eq!(found[0], "src/table.rs");
    assert!(found.contains(&"src/setup.rs".to_owned()));
}

/// A command-line option a task writes (`--dry-run`) is found as written where it is declared,
/// as a message the task quotes is (`says:`), and named as code names it (`dry_run`).
#[test]
fn an_option_a_task_writes_is_found_where_it_is_declared() {
    let ws = Workspace::empty();
    ws.write(
        "src/options.py",
        "def add_options(parser):\n    parser.add_argument(\"--dry-run\", action=\"store_true\")\n",
    );
    ws.write(
        "src/plan.py",
        "class Plan:\n    def __init__(self, dry_run):\n        self.dry_run = dry_run\n\n\
         def dry_run(plan):\n    return [step for step in plan]\n",
    );
    ws.write("src/other.py", "def unrelated():\n    return 1\n");
    ws.ok(&["scan"]);
    let task = "A short flag for --dry-run\n\nI pass `--dry-run` every time; it is long to type.\n";
    let hits = ws.json(&["search", task]);
    let of = |path: &str| {
        hits.as_array()
            .expect("hits")
            .iter()
            .find(|h| h["path"] == path)
            .unwrap_or_else(|| panic!("{path} in {hits}"))
            .clone()
    };
    assert!(
        of("src/options.py")["why"]
            .as_array()
            .expect("why")
            .contains(&serde_json::json!("says: dry-run")),
        "{hits}"
    );
    let plan_why = of("src/plan.py")["why"].to_string();
    assert!(plan_why.contains("defines: dry_run"), "{plan_why}");
}

/// An issue's HTML comments are the template's instructions, which GitHub does not show: not
/// read, wherever the template lives (here the tree has none); those in a code fence are code.
#[test]
fn an_issue_s_hidden_comments_are_not_read_as_its_words() {
    let ws = Workspace::empty();
    install_and_table(&ws);
    ws.ok(&["scan"]);
    let hint = "Which version are you using, and how did you install the package? Describe \
                the bug you encountered while installing.";
    let shown = format!("Drawn twice\n\n{hint}\n\nEach border is drawn twice.\n");
    assert_eq!(ws.json(&["search", &shown])[0]["path"], "src/setup.rs");
    let hidden = format!(
        "Drawn twice\n\n<!--\n{hint}\n-->\n\nEach border is drawn twice.\n\n\
         ```html\n<!-- a table's border -->\n```\n"
    );
    let found = paths(&ws.json(&["search", &hidden]));
    assert_eq!(found[0], "src/table.rs");
    // In a code fence, a comment is the reporter's code: read.
    let fenced =
        format!("Drawn twice\n\n```html\n<!-- {hint} -->\n```\n\nEach border is drawn twice.\n");
    assert_eq!(ws.json(&["search", &fenced])[0]["path"], "src/setup.rs");
}
