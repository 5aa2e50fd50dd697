//! `merkle search`: files ranked for a query (exact definitions first, then parts of names,
//! paths and frame text), `--limit`, `--type`, the JSON, and an edit seen without a scan.
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::Workspace;

fn workspace() -> Workspace {
    let ws = Workspace::empty();
    ws.write(
        "src/store.rs",
        "/// A store.\npub struct Store;\n\nimpl Store {\n    pub fn open() -> Store { Store }\n}\n",
    );
    ws.write("src/store_ext.rs", "pub trait StoreExt {}\nfn store() {}\n");
    ws.write(
        "src/cli.rs",
        "use crate::store::Store;\nfn run(s: Store) {}\n",
    );
    ws.write(
        "web/store.ts",
        "export class Cache {}\nexport function openStore() {}\n",
    );
    ws.write("notes/design.md", "# Design\n\n## The store\n");
    ws
}

fn paths(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|h| h["path"].as_str().expect("a path").to_owned())
        .collect()
}

#[test]
fn exact_definitions_come_first_then_names_then_paths() {
    let ws = workspace();
    insta::assert_snapshot!("search_store_text", ws.ok(&["search", "Store"]));
    let hits = ws.json(&["search", "Store", "--limit", "2"]);
    assert_eq!(
        hits[0],
        json!({
            "path": "src/store.rs",
            "score": 103,
            "matches": [
                {"line": 2, "text": "pub struct Store", "symbol": "Store"},
                {"line": 4, "text": "impl Store", "symbol": "Store"},
            ],
        })
    );
    assert_eq!(paths(&hits), ["src/store.rs", "src/store_ext.rs"]);
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
    let empty = ws.run(&["search", " "]);
    assert_eq!(empty.code, 2, "{empty}");
}

#[test]
fn an_edit_is_searchable_without_an_explicit_scan() {
    let ws = workspace();
    assert_eq!(ws.json(&["search", "Ledger"]), json!([]));
    ws.write("src/cli.rs", "pub struct Ledger;\n");
    assert_eq!(paths(&ws.json(&["search", "Ledger"])), ["src/cli.rs"]);
}
