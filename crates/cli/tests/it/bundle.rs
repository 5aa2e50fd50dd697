//! `merkle context` fills its budget by function score across files: the definitions a task is
//! about (a long one cut around the lines that match, its rest once there is room), the
//! module-level lines of their file, sections of a file in line order, the same bytes for the
//! same tree and task.
use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::Workspace;

/// `app/limits.py`: imports and a constant, a long `check_limit` whose error lies deep inside,
/// and a function the task is not about; `app/report.py` calls it.
fn workspace() -> Workspace {
    let ws = Workspace::empty();
    let mut limits = String::from(
        "\"\"\"Limits on widgets.\"\"\"\nimport os\nfrom app.report import render\n\nLIMIT = 10\n\n\ndef check_limit(widgets):\n    \"\"\"Checks the widgets against LIMIT.\"\"\"\n",
    );
    for i in 0..200 {
        limits.push_str(&format!("    step_{i} = len(widgets) + {i}\n"));
    }
    limits.push_str("    if len(widgets) > LIMIT:\n        raise ValueError(\"limit exceeded for widget batch\")\n    return True\n\n\ndef unrelated():\n    return os.getcwd()\n");
    ws.write("app/__init__.py", "");
    ws.write("app/limits.py", &limits);
    ws.write(
        "app/report.py",
        "def render(rows):\n    return '\\n'.join(rows)\n",
    );
    ws.ok(&["scan"]);
    ws
}

const TASK: &str = "check_limit raises \"limit exceeded for widget batch\" too early\n\nWith eleven widgets the LIMIT check fails in check_limit.\n";

/// The lines of `path` in the workspace, 1-based `from..=to`, joined.
fn lines_of(ws: &Workspace, path: &str, from: u64, to: u64) -> String {
    let text = std::fs::read_to_string(ws.path(path)).expect("reading a file of the workspace");
    text.lines()
        .skip(from as usize - 1)
        .take((to - from + 1) as usize)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` run past [`context::bundle::SMALL_FILE_LINES`] lines by comment lines at its end
/// (each starting `comment`), so that a bundle shows its pieces one by one, not the whole file.
fn not_small(text: &str, comment: &str) -> String {
    let mut out = text.to_owned();
    for _ in 0..context::bundle::SMALL_FILE_LINES {
        out.push_str(comment);
        out.push_str(" padding\n");
    }
    out
}

#[test]
fn context_shows_the_function_around_the_lines_that_match_and_its_module_lines() {
    let ws = workspace();
    let doc = ws.json(&["context", TASK, "--budget", "3000"]);
    let first = &doc["files"][0];
    assert_eq!(first["path"], "app/limits.py", "{doc:#}");
    let sections = first["sections"].as_array().expect("sections");
    // Every section is exactly its lines of the file.
    for s in sections {
        let (a, b) = (
            s["line_start"].as_u64().expect("a number"),
            s["line_end"].as_u64().expect("a number"),
        );
        assert_eq!(s["text"], lines_of(&ws, "app/limits.py", a, b), "{s:#}");
    }
    let kinds: Vec<(&str, Value)> = sections
        .iter()
        .map(|s| (s["kind"].as_str().expect("a string"), s["name"].clone()))
        .collect();
    // In line order: the module level (imports), the constant the task names, then
    // check_limit (longer than 150 lines) whole: its head, the window around its raise, and
    // the rest, weighed apart, since the budget has room; `unrelated` holds none of the task.
    assert_eq!(
        kinds,
        [
            ("module", Value::Null),
            ("definition", "LIMIT".into()),
            ("definition", "check_limit".into()),
        ],
        "{doc:#}"
    );
    assert!(
        sections[0]["text"]
            .as_str()
            .expect("a string")
            .contains("import os")
    );
    assert_eq!(
        (&sections[2]["line_start"], &sections[2]["line_end"]),
        (&8.into(), &214.into()),
        "from its def line through the two blank lines after it"
    );
    let whole = sections[2]["text"].as_str().expect("a string");
    assert!(
        whole.contains("raise ValueError(\"limit exceeded for widget batch\")")
            && whole.contains("step_30 = len(widgets) + 30"),
        "{whole}"
    );

    // With less room, the head and the window come before the rest, which is cut to fit
    // after the module lines: the head shows with the first of the rest, the window whole.
    let less = ws.json(&["context", TASK, "--budget", "1600"]);
    let spans: Vec<(u64, u64)> = less["files"][0]["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .filter(|s| s["name"] == "check_limit")
        .map(|s| {
            let n = |k: &str| s[k].as_u64().expect("a number");
            (n("line_start"), n("line_end"))
        })
        .collect();
    assert_eq!(spans.len(), 2, "{less:#}");
    assert_eq!(spans[1], (75, 214), "the window, whole: {less:#}");
    assert!(
        spans[0].0 == 8 && spans[0].1 > 19 && spans[0].1 < 74,
        "the head and part of the rest: {less:#}"
    );

    // The same tree and task give the same bytes.
    let again = ws.ok(&["context", TASK, "--budget", "3000"]);
    assert_eq!(ws.ok(&["context", TASK, "--budget", "3000"]), again);
    // Its docstring (line 1) is prose a fix rarely touches: the module level is its imports.
    assert!(again.contains("module level, lines 2-4:"), "{again}");
    assert!(again.contains("check_limit, lines 8-214:"), "{again}");
}

#[test]
fn a_java_file_s_module_level_is_its_package_and_imports_not_its_licence() {
    let ws = Workspace::empty();
    ws.write(
        "src/main/java/org/acme/Ledger.java",
        &not_small(
            "/*\n * Copyright 2024 Acme\n * Licensed under the Apache License, Version 2.0\n */\n\
         package org.acme;\n\nimport java.util.List;\nimport java.util.Map;\n\n\
         public class Ledger {\n    public int reconcileBalance(List<Integer> entries) {\n        \
         return entries.size();\n    }\n}\n",
            "//",
        ),
    );
    ws.ok(&["scan"]);
    let doc = ws.json(&[
        "context",
        "reconcileBalance miscounts the ledger entries",
        "--budget",
        "2000",
    ]);
    let sections = doc["files"][0]["sections"].as_array().expect("sections");
    let module = sections
        .iter()
        .find(|s| s["kind"] == "module")
        .unwrap_or_else(|| panic!("a module section: {doc:#}"));
    let text = module["text"].as_str().expect("a string");
    assert!(
        text.contains("package org.acme;") && text.contains("import java.util.Map;"),
        "{doc:#}"
    );
    assert!(!text.contains("Copyright"), "{doc:#}");
    assert_eq!(module["line_start"], 5, "{doc:#}");
}

#[test]
fn a_small_file_is_shown_whole_past_its_preamble() {
    let ws = Workspace::empty();
    ws.write(
        "tables/rst.py",
        "\"\"\"Restructured text tables.\"\"\"\nfrom tables.fixed import FixedWidth\n\n\n\
         class SimpleData(FixedWidth):\n    start_line = 3\n\n\n\
         class RST(FixedWidth):\n    def __init__(self):\n        super().__init__(pad=None)\n\n\
         \x20   def write(self, lines):\n        return [lines[1]] + lines\n",
    );
    ws.ok(&["scan"]);
    let task = "RST tables: __init__ takes no header_rows";
    let doc = ws.json(&["context", task, "--budget", "2000"]);
    let sections = doc["files"][0]["sections"].as_array().expect("sections");
    // Every line past the docstring, the rest of the file as `file` sections after the
    // definitions the task is about.
    let shown: Vec<u64> = sections
        .iter()
        .flat_map(|s| {
            s["line_start"].as_u64().expect("a line")..=s["line_end"].as_u64().expect("a line")
        })
        .collect();
    for line in 2..=14 {
        assert!(shown.contains(&line), "line {line} in {doc:#}");
    }
    assert!(!shown.contains(&1), "{doc:#}");
    assert!(sections.iter().any(|s| s["kind"] == "file"), "{doc:#}");
    let markdown = ws.ok(&["context", task, "--budget", "2000"]);
    assert!(markdown.contains("\nlines "), "{markdown}");
}

#[test]
fn a_small_budget_takes_the_best_function_first() {
    let ws = workspace();
    let doc = ws.json(&["context", TASK, "--budget", "1200"]);
    let sections = doc["files"][0]["sections"].as_array().expect("sections");
    // What fits first is check_limit, its head and as much of the lines around its raise as
    // fits (the window cut to the budget), before the module lines.
    let names: Vec<&Value> = sections.iter().map(|s| &s["name"]).collect();
    assert_eq!(names, ["check_limit", "check_limit"], "{doc:#}");
    let cut = sections[1]["text"].as_str().expect("a string");
    assert!(cut.contains("limit exceeded for widget batch"), "{cut}");
    assert!(doc["tokens"].as_u64().expect("a number") <= 1200, "{doc:#}");
}

#[test]
fn a_method_comes_with_the_head_of_its_class() {
    let ws = Workspace::empty();
    ws.write(
        "shop/cart.py",
        &not_small(
            "class Cart:\n    \"\"\"A cart.\"\"\"\n    currency = \"EUR\"\n    max_items = 3\n\n    def other(self):\n        return 1\n\n    def add_item(self, item):\n        if len(self.items) >= self.max_items:\n            raise OverflowError(\"cart is full\")\n        self.items.append(item)\n",
            "#",
        ),
    );
    ws.ok(&["scan"]);
    let doc = ws.json(&[
        "context",
        "add_item raises \"cart is full\" below max_items\n\nfix it",
        "--budget",
        "2000",
    ]);
    let sections = doc["files"][0]["sections"].as_array().expect("sections");
    let spans: Vec<(&str, u64, u64)> = sections
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or("-"),
                s["line_start"].as_u64().expect("a number"),
                s["line_end"].as_u64().expect("a number"),
            )
        })
        .collect();
    // The class's head (its name and attributes, up to its first method, less the attribute
    // the task names, shown as it ranks, with the blank line after it: a new attribute or
    // method would go there), then the method; `other` holds nothing of the task.
    assert_eq!(
        spans,
        [("Cart", 1, 3), ("max_items", 4, 5), ("add_item", 9, 12)],
        "{doc:#}"
    );
}

/// The names `search --functions` lists for `query`, best first.
fn function_names(ws: &Workspace, query: &str) -> Vec<String> {
    ws.names(&["search", "--functions", query, "--limit", "5"])
}

/// A task that names a Rust trait implementation by its head ("Drop for Drain") names its
/// methods, though not by their own names: `drop` comes first, ahead of the functions that
/// hold the task's words.
#[test]
fn a_rust_implementation_named_by_its_head_names_its_methods() {
    let ws = Workspace::empty();
    ws.write(
        "src/vec.rs",
        "pub struct Drain<'a, T> {\n    vec: &'a mut Vec<T>,\n    start: usize,\n}\n\nimpl<'a, T> Drain<'a, T> {\n    pub fn drain_range(&mut self, start: usize) -> usize {\n        self.start = start;\n        self.vec.len() - start\n    }\n}\n\nimpl<'a, T: Send> Drop for Drain<'a, T> {\n    fn drop(&mut self) {\n        self.vec.truncate(self.start);\n    }\n}\n\npub fn par_drain<T>(vec: &mut Vec<T>, start: usize) -> usize {\n    vec.len() - start\n}\n",
    );
    ws.ok(&["scan"]);
    let found = function_names(
        &ws,
        "Bug in Drop for Drain<'a, T>\n\nthe vec's length is wrong",
    );
    assert_eq!(found.first().map(String::as_str), Some("drop"), "{found:?}");
    // The same words not written as a head: the functions holding the task's words first.
    let plain = function_names(
        &ws,
        "Bug in Drop, for Drain<'a, T>\n\nthe vec's length is wrong",
    );
    assert!(plain.first().is_none_or(|f| f != "drop"), "{plain:?}");
}

/// What weighs a definition in `search --functions`: a message it prints that the task quotes,
/// a line of it a traceback points at, a call from the function the task names, the words of
/// its name; a class by its attributes, and as the class of the file's best method.
#[test]
fn functions_are_weighed_by_what_points_at_them() {
    let ws = Workspace::empty();
    ws.write(
        "pay/ledger.py",
        "class Ledger:\n    rounding = 'bankers'\n    currency_code = 'EUR'\n\n    def balance(self, entries):\n        total = sum(e.amount for e in entries)\n        return self._round(total)\n\n    def _round(self, total):\n        return int(total)\n\n    def audit(self, entries):\n        for e in entries:\n            if e.amount < 0:\n                raise ValueError('negative amount in ledger entry')\n        return True\n\n    def report(self, entries):\n        lines = [str(e.amount) for e in entries]\n        return '\\n'.join(lines)\n",
    );
    ws.ok(&["scan"]);
    // The quoted message: the function that raises it first, though `balance` and `report`
    // hold the other words.
    let quoted = function_names(
        &ws,
        "Ledger fails on refunds\n\nEntries: ValueError: \"negative amount in ledger entry\" when a refund amount is in the entries.",
    );
    assert_eq!(quoted[0], "audit", "{quoted:?}");
    // A traceback line points into `report`.
    let traced = function_names(
        &ws,
        "report crashes\n\nTraceback (most recent call last):\n  File \"pay/ledger.py\", line 19, in report\nTypeError: amount",
    );
    assert_eq!(traced[0], "report", "{traced:?}");
    // `balance` is named; its class comes next (a fix about a method often adds to its
    // class, between the methods); then `_round`, which it calls and which holds none of the
    // task's words, before `report` and `audit`, which hold one each.
    let called = function_names(
        &ws,
        "balance of entries is wrong\n\nLedger.balance() gives 3 for the entries 1.5 and 1.5",
    );
    assert_eq!(&called[..3], ["balance", "Ledger", "_round"], "{called:?}");
    // The class's own lines hold `currency_code`: the class is listed for it. Named as code,
    // the attribute is in the file's symbols, but a function list lists the class holding it.
    let attribute = function_names(&ws, "which currency code\n\nthe currency is fixed");
    assert_eq!(attribute[0], "Ledger", "{attribute:?}");
    let named = function_names(&ws, "which `currency_code`\n\nthe currency is fixed");
    assert_eq!(named[0], "Ledger", "{named:?}");
    assert!(!named.contains(&"currency_code".to_owned()), "{named:?}");
    let files = ws.json(&["search", "which `currency_code`\n\nthe currency is fixed"]);
    assert_eq!(files[0]["symbols"][0]["name"], "currency_code", "{files}");
}

/// The text of every section of a bundle, for comparing how much two bundles hold.
fn shown_bytes(doc: &Value) -> usize {
    doc["files"]
        .as_array()
        .expect("files")
        .iter()
        .flat_map(|f| f["sections"].as_array().expect("sections"))
        .map(|s| s["text"].as_str().expect("a string").len())
        .sum()
}

#[test]
fn with_a_model_the_budget_is_counted_in_its_tokens_and_says_how() {
    let ws = workspace();
    let plain = ws.json(&["context", TASK, "--budget", "1200"]);
    assert_eq!(
        plain["counted"],
        serde_json::json!({"model": null, "source": "bytes"})
    );
    let gpt = ws.json(&["context", TASK, "--budget", "1200", "--model", "gpt-5.4"]);
    assert_eq!(
        gpt["counted"],
        serde_json::json!({"model": "gpt-5.4", "source": "tokenizer"})
    );
    assert!(gpt["tokens"].as_u64().expect("a number") <= 1200, "{gpt:#}");
    // A Claude model: the estimate until an answer has calibrated it, then calibrated by
    // what the workspace keeps (here: the provider counted twice the estimate).
    let claude = [
        "context",
        TASK,
        "--budget",
        "1200",
        "--model",
        "claude-sonnet-4-6",
    ];
    let estimated = ws.json(&claude);
    assert_eq!(estimated["counted"]["source"], "estimate", "{estimated:#}");
    std::fs::write(
        ws.path(".merkle/llm-calibration.json"),
        r#"{"models": {"claude-sonnet-4-6": {"estimated": 1000, "counted": 2000, "calls": 5}}}"#,
    )
    .expect("writing the calibration");
    let calibrated = ws.json(&claude);
    assert_eq!(
        calibrated["counted"]["source"], "calibrated",
        "{calibrated:#}"
    );
    assert!(calibrated["tokens"].as_u64().expect("a number") <= 1200);
    assert!(
        shown_bytes(&calibrated) < shown_bytes(&estimated) * 3 / 4,
        "twice the tokens a byte, about half the text: {} against {}",
        shown_bytes(&calibrated),
        shown_bytes(&estimated)
    );
    let text = ws.ok(&claude);
    assert!(
        text.contains("calibrated by its earlier answers in this workspace"),
        "{text}"
    );
}

/// Before it reads deeper into the best file, a bundle shows the best definition of each of
/// the next files (the fixed file is often second or third).
#[test]
fn the_next_files_best_definitions_come_before_the_first_file_s_others() {
    let ws = Workspace::empty();
    let mut cart = String::from(
        "def add_item(cart, item):\n    if len(cart.items) >= cart.limit:\n        raise OverflowError(\"cart is full\")\n    cart.items.append(item)\n\n\n",
    );
    for name in ["remove_item", "count_items", "clear_items", "total_items"] {
        cart.push_str(&format!(
            "def {name}(cart, item):\n    \"\"\"The cart's items and limit.\"\"\"\n    return [i for i in cart.items if i != item][: cart.limit]\n\n\n"
        ));
    }
    ws.write("shop/cart.py", &cart);
    ws.write(
        "shop/stock.py",
        "def reserve(item, stock):\n    \"\"\"Holds an item of the stock for a cart.\"\"\"\n    stock[item] -= 1\n",
    );
    ws.ok(&["scan"]);
    let task = "add_item raises \"cart is full\" below the cart limit\n\nThe cart items are counted \
                before the stock reserve of the item.";
    let doc = ws.json(&["context", task, "--budget", "150"]);
    let files: Vec<&str> = doc["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["path"].as_str().expect("a path"))
        .collect();
    assert_eq!(files, ["shop/cart.py", "shop/stock.py"], "{doc:#}");
    let names: Vec<&str> = doc["files"][0]["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .map(|s| s["name"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(names, ["add_item"], "{doc:#}");
}

/// A file whose imports run past [`context::bundle::MODULE_LINES`] shows their first and last
/// lines: a fix adds an import at the top as often as beside the definitions.
#[test]
fn a_long_import_block_shows_its_top_and_its_end() {
    let ws = Workspace::empty();
    let mut text = String::from("\"\"\"Shapes.\"\"\"\nfrom functools import wraps\n");
    for i in 0..60 {
        text.push_str(&format!("from shapes.part_{i} import piece_{i}\n"));
    }
    text.push_str("\n\ndef polygon_area(points):\n    return sum(points)\n");
    ws.write("shapes/area.py", &not_small(&text, "#"));
    ws.ok(&["scan"]);
    let doc = ws.json(&[
        "context",
        "polygon_area returns a wrong area",
        "--budget",
        "3000",
    ]);
    let spans: Vec<(&str, u64, u64)> = doc["files"][0]["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .map(|s| {
            (
                s["kind"].as_str().expect("a kind"),
                s["line_start"].as_u64().expect("a line"),
                s["line_end"].as_u64().expect("a line"),
            )
        })
        .collect();
    assert_eq!(
        spans,
        [
            // From past the docstring (line 1).
            ("module", 2, 21),
            ("module", 45, 64),
            ("definition", 65, 66)
        ],
        "{doc:#}"
    );
}

/// Where the budget has room left, a bundle shows the first line of what its first definitions
/// call and of what calls them (as `merkle refs` resolves them), once each: `_limit_of`, which
/// holds none of the task's words, comes as a callee of `check_quota`.
#[test]
fn room_left_shows_the_callers_and_callees_of_the_first_definitions() {
    let ws = Workspace::empty();
    ws.write("app/__init__.py", "");
    ws.write(
        "app/check.py",
        "from app.limits_impl import _limit_of\n\n\ndef check_quota(user):\n    \"\"\"Refuses a user over the quota.\"\"\"\n    limit = _limit_of(user)\n    return user.items > limit\n",
    );
    ws.write(
        "app/limits_impl.py",
        "def _limit_of(user):\n    return 10 * user.level\n",
    );
    ws.write(
        "app/main.py",
        "from app.check import check_quota\n\n\ndef serve(request):\n    if check_quota(request.user):\n        return 'no'\n    return 'ok'\n",
    );
    ws.ok(&["scan"]);
    let task = "check_quota refuses people under their quota\n\nSomeone with 3 items is refused.\n";
    let doc = ws.json(&["context", task, "--budget", "4000"]);
    let files = doc["files"].as_array().expect("files");
    let shown = |path: &str, line: u64| -> Vec<String> {
        files
            .iter()
            .filter(|f| f["path"] == path)
            .flat_map(|f| f["sections"].as_array().expect("sections"))
            .filter(|s| {
                s["line_start"].as_u64() <= Some(line) && s["line_end"].as_u64() >= Some(line)
            })
            .map(|s| s["kind"].as_str().expect("a kind").to_owned())
            .collect()
    };
    assert_eq!(shown("app/check.py", 4), ["definition"], "{doc:#}");
    // Its file is near (imported): outlined, and the callee's line says whom it serves.
    assert_eq!(
        shown("app/limits_impl.py", 1),
        ["outline", "callee"],
        "{doc:#}"
    );
    let callee = files
        .iter()
        .find(|f| f["path"] == "app/limits_impl.py")
        .expect("the callee's file");
    assert_eq!(
        callee["why"],
        serde_json::json!(["near: app/check.py", "called by check_quota"])
    );
    assert_eq!(callee["sections"][1]["text"], "def _limit_of(user):");
    // The caller is shown once, as a definition the search found or as a caller.
    assert_eq!(shown("app/main.py", 4).len(), 1, "{doc:#}");
    // A budget with no room left shows none of them.
    let small = ws.json(&["context", task, "--budget", "60"]);
    assert!(!small.to_string().contains("_limit_of(user):"), "{small:#}");
}

#[test]
fn a_definition_comes_with_its_doc_comment_and_attributes() {
    let ws = Workspace::empty();
    ws.write(
        "src/lib.rs",
        "use std::fmt;\n\npub fn other() -> u8 {\n    1\n}\n\n/// Parses a widget count.\n/// Fails on too many widgets.\n#[inline]\n#[must_use]\npub fn parse_count(s: &str) -> Option<u8> {\n    let n: u8 = s.parse().ok()?;\n    (n < 10).then_some(n)\n}\n\n/// How many widgets\n/// there are,\n/// counted\n/// once\n/// a day.\npub fn widgets() -> u8 { 9 }\n",
    );
    ws.write(
        "app/views.py",
        "import functools\n\n\n# Cached: the widget count changes once a day.\n@functools.cache\ndef widget_count():\n    return 3\n",
    );
    ws.ok(&["scan"]);
    let task = "parse_count rejects too many widgets, widgets() is wrong, widget_count is stale";
    let doc = ws.json(&["context", task, "--budget", "2000"]);
    let section = |path: &str, name: &str| {
        let file = doc["files"]
            .as_array()
            .expect("files")
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path} in {doc:#}"));
        file["sections"]
            .as_array()
            .expect("sections")
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {doc:#}"))
            .clone()
    };
    // From the first line of its doc comment, attributes and all; the blank line above ends it.
    let parse = section("src/lib.rs", "parse_count");
    assert_eq!(parse["line_start"], 7, "{parse:#}");
    assert_eq!(parse["text"], lines_of(&ws, "src/lib.rs", 7, 15));
    // A one-line definition shows two lines of its doc comment, not five.
    let one = section("src/lib.rs", "widgets");
    assert_eq!(one["line_start"], 19, "{one:#}");
    assert_eq!(one["text"], lines_of(&ws, "src/lib.rs", 19, 21));
    // A decorator and the comment above it: no more lines than the definition has.
    let cached = section("app/views.py", "widget_count");
    assert_eq!(cached["line_start"], 4, "{cached:#}");
    assert!(
        cached["text"]
            .as_str()
            .expect("a string")
            .contains("@functools.cache"),
        "{cached:#}"
    );
    let lines =
        |s: &Value| s["line_end"].as_u64().unwrap_or(0) - s["line_start"].as_u64().unwrap_or(0);
    assert_eq!(lines(&cached), 3, "{cached:#}");
}

#[test]
fn a_class_head_comes_with_its_decorator() {
    let ws = Workspace::empty();
    ws.write(
        "shop/widget.py",
        &not_small(
            "import dataclasses\n\n\ndef helper():\n    return 1\n\n\n@dataclasses.dataclass\nclass Widget:\n    size: int = 0\n\n    def grow(self):\n        self.size += 1\n        return self.size\n",
            "#",
        ),
    );
    ws.ok(&["scan"]);
    let doc = ws.json(&[
        "context",
        "Widget.grow adds one to size",
        "--budget",
        "2000",
    ]);
    let sections = doc["files"][0]["sections"].as_array().expect("sections");
    let head = sections
        .iter()
        .find(|s| s["name"] == "Widget")
        .unwrap_or_else(|| panic!("the head of Widget in {doc:#}"));
    assert_eq!(head["line_start"], 8, "{doc:#}");
    assert!(
        head["text"]
            .as_str()
            .expect("a string")
            .starts_with("@dataclasses.dataclass\nclass Widget:"),
        "{doc:#}"
    );
}

/// `app/prices.py`: `total`, whose docstring runs to 30 lines of examples before its code.
fn docstring_workspace() -> Workspace {
    let ws = Workspace::empty();
    let mut prices = String::from(
        "def total(items):\n    \"\"\"Sums the prices of the items.\n\n    Examples\n    ========\n",
    );
    for i in 0..30 {
        prices.push_str(&format!("    >>> total([Item({i})])\n    {i}\n"));
    }
    prices.push_str("    \"\"\"\n    result = 0\n    for item in items:\n        result += item.price\n    return result\n");
    ws.write("app/prices.py", &not_small(&prices, "#"));
    ws.ok(&["scan"]);
    ws
}

#[test]
fn a_python_docstring_past_its_first_paragraph_comes_after_the_code() {
    let ws = docstring_workspace();
    let task = "total adds up the price of the items wrongly";
    let sections = |budget: &str| {
        let doc = ws.json(&["context", task, "--budget", budget]);
        assert_eq!(doc["files"][0]["path"], "app/prices.py", "{doc:#}");
        doc["files"][0]["sections"]
            .as_array()
            .expect("sections")
            .clone()
    };
    let code = "        result += item.price";
    let example = ">>> total([Item(29)])";
    // Tight: the signature, the docstring's first paragraph and the code, then what room is
    // left of the docstring (its first lines), not all its examples.
    let tight = sections("120");
    let text: Vec<&str> = tight.iter().filter_map(|s| s["text"].as_str()).collect();
    assert!(text.iter().any(|t| t.contains(code)), "{tight:#?}");
    assert!(
        text.iter().any(|t| t.contains("Sums the prices")),
        "{tight:#?}"
    );
    assert!(!text.iter().any(|t| t.contains(example)), "{tight:#?}");
    assert_eq!(tight.len(), 2, "{tight:#?}");
    assert_eq!(tight[0]["line_start"], 1, "{tight:#?}");
    // With room, the rest of the docstring too, and the definition is one section again.
    let roomy = sections("4000");
    assert_eq!(roomy.len(), 1, "{roomy:#?}");
    assert_eq!(roomy[0]["line_start"], 1);
    assert_eq!(roomy[0]["text"], lines_of(&ws, "app/prices.py", 1, 70));
}

#[test]
fn a_task_about_a_docstring_reads_it_before_the_code_ranked_next() {
    // `total`'s 30 lines of examples, then `cheapest`, 24 lines of code ranked after it.
    let ws = docstring_workspace();
    let mut prices = std::fs::read_to_string(ws.path("app/prices.py")).expect("the fixture");
    prices.push_str("\n\ndef cheapest(items):\n    \"\"\"The item of the lowest price.\"\"\"\n    best = None\n");
    for i in 0..20 {
        prices.push_str(&format!("    step_{i} = best\n"));
    }
    prices.push_str("    return min(items, key=lambda item: item.price)\n");
    ws.write("app/prices.py", &prices);
    let shown = |task: &str| {
        let doc = ws.json(&["context", task, "--budget", "300"]);
        let text: Vec<String> = doc["files"][0]["sections"]
            .as_array()
            .expect("sections")
            .iter()
            .filter_map(|s| s["text"].as_str().map(str::to_owned))
            .collect();
        text.join("\n")
    };
    let (example, code) = (">>> total([Item(20)])", "def cheapest(items):");
    // A task about the function's behaviour: its code, then the next function's, then what
    // room is left of the examples.
    let behaviour = shown("total adds up the price of the items wrongly");
    assert!(behaviour.contains(code), "{behaviour}");
    assert!(!behaviour.contains(example), "{behaviour}");
    // A task about its docstring: the examples before the next function.
    let docs = shown("total's docstring shows the price of the items wrongly");
    assert!(docs.contains(example), "{docs}");
    assert!(!docs.contains(code), "{docs}");
}
