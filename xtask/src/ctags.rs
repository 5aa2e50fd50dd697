//! universal-ctags' JSON output (`--output-format=json`) read into tags by path: the
//! baseline of `cargo xtask bench outline` and of its search recall ([`crate::bench_index`]).
use std::collections::BTreeMap;

use anyhow::{Context, Result};
use serde_json::Value as Json;

/// ctags kinds that name what a file imports, not what it defines: left out of the baseline.
const IMPORT_KINDS: &[(&str, &str)] = &[
    ("Python", "namespace"),
    ("Python", "unknown"),
    ("Go", "packageName"),
    ("Go", "unknown"),
];

/// One ctags tag.
pub(crate) struct Tag {
    pub(crate) name: String,
    pub(crate) kind: String,
    pub(crate) language: String,
    pub(crate) top_level: bool,
    /// Its scope (`Outer.inner`), empty at top level.
    pub(crate) scope: String,
    /// The kind of its scope (`class`, `function`, ...), empty at top level.
    pub(crate) scope_kind: String,
    /// Whether its line is indented: ctags tags some locals of functions without a scope.
    pub(crate) indented: bool,
}

/// ctags' JSON lines, tags grouped by path.
pub(crate) fn read_tags(out: &str) -> Result<BTreeMap<String, Vec<Tag>>> {
    let mut tags: BTreeMap<String, Vec<Tag>> = BTreeMap::new();
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        let tag = serde_json::from_str::<Json>(line)
            .with_context(|| format!("reading ctags' line {line}"))?;
        if tag.get("_type").and_then(Json::as_str) != Some("tag") {
            continue;
        }
        let field = |k: &str| tag.get(k).and_then(Json::as_str).unwrap_or("").to_owned();
        let (language, kind) = (field("language"), field("kind"));
        if IMPORT_KINDS.contains(&(language.as_str(), kind.as_str())) {
            continue;
        }
        let path = field("path");
        tags.entry(path).or_default().push(Tag {
            name: field("name"),
            kind,
            language,
            top_level: tag.get("scope").is_none(),
            scope: field("scope"),
            scope_kind: field("scopeKind"),
            indented: field("pattern").starts_with("/^ ") || field("pattern").starts_with("/^\t"),
        });
    }
    Ok(tags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctags_lines_group_by_path_and_mark_scoped_tags() {
        let out = r#"{"_type": "tag", "name": "Store", "path": "a.rs", "language": "Rust", "line": 3, "kind": "struct"}
{"_type": "tag", "name": "open", "path": "a.rs", "language": "Rust", "line": 5, "kind": "method", "scope": "Store", "scopeKind": "implementation"}
{"_type": "ptag", "name": "JSON_OUTPUT_VERSION", "path": "0.0"}
"#;
        let tags = read_tags(out).expect("valid lines");
        let a = &tags["a.rs"];
        assert_eq!(a.len(), 2);
        assert!(a[0].top_level && !a[1].top_level);
    }
}
