//! The search and related-files parts of `cargo xtask bench outline PATH`: `merkle search`'s
//! recall of names that ctags finds defined exactly once, and `merkle related`'s recall of the
//! relative imports of TypeScript and JavaScript files.
//!
//! - **Search.** Names ctags tags exactly once in the checkout (in the outline's languages),
//!   whose one tag is a definition the outline claims to show: at top level (not indented:
//!   ctags tags some locals of functions without a scope) or a member of a type, not inside
//!   a function at any depth; identifiers of at least 4 characters, not ctags' `AnonymousFunction`
//!   names. Sorted, and 200 taken at a fixed stride;
//!   `merkle --json search NAME --limit 5` for each. Recall@k is the share whose defining file
//!   is among the first k hits.
//! - **Related.** TypeScript and JavaScript files with relative import specifiers (`from
//!   './x'`, `import './x'`, `require('./x')`, `import('./x')`, read here by a plain text scan
//!   rather than a parser) that resolve the obvious way (the path, then with each extension,
//!   then a `.js` written for a `.ts`, then `index.*`) to a scanned file; 100 taken at a fixed
//!   stride. Recall is the share of those files that `merkle --json related FILE` lists as
//!   imports.
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::bench_proc::timed;
use crate::ctags::Tag;
use serde_json::Value as Json;

/// How many names the search recall samples.
pub const SEARCH_SAMPLE: usize = 200;
/// How many files the related recall samples.
pub const RELATED_SAMPLE: usize = 100;

/// What the search sample found.
#[derive(Debug, Default)]
pub(crate) struct SearchRecall {
    pub names: usize,
    pub at1: usize,
    pub at5: usize,
    pub time: Duration,
    pub misses: Vec<String>,
}

/// What the related sample found.
#[derive(Debug, Default)]
pub(crate) struct RelatedRecall {
    pub files: usize,
    pub imports: usize,
    pub found: usize,
    pub time: Duration,
    pub misses: Vec<String>,
}

/// `n` of `items` at a fixed stride (all of them when there are no more).
fn sample<T: Clone>(items: &[T], n: usize) -> Vec<T> {
    if items.len() <= n {
        return items.to_vec();
    }
    (0..n).map(|i| items[i * items.len() / n].clone()).collect()
}

/// `merkle search`'s recall over names ctags finds defined once.
pub(crate) fn search_recall(
    tags: &BTreeMap<String, Vec<Tag>>,
    languages: &[&str],
    merkle: impl Fn(&[&str]) -> Command,
) -> Result<SearchRecall> {
    let function_like = |kind: &str| {
        matches!(
            kind,
            "function" | "method" | "member" | "subroutine" | "func" | "getter" | "setter"
        )
    };
    // Functions by (path, qualified name), to tell a definition inside one at any depth.
    let mut functions: BTreeSet<(&str, String)> = BTreeSet::new();
    for (path, file_tags) in tags {
        for t in file_tags.iter().filter(|t| function_like(&t.kind)) {
            let q = if t.scope.is_empty() {
                t.name.clone()
            } else {
                format!("{}.{}", t.scope, t.name)
            };
            functions.insert((path.as_str(), q));
        }
    }
    let in_function = |path: &str, scope: &str| {
        let mut q = String::new();
        scope.split('.').any(|seg| {
            if !q.is_empty() {
                q.push('.');
            }
            q.push_str(seg);
            functions.contains(&(path, q.clone()))
        })
    };
    let mut count: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
    for (path, file_tags) in tags {
        for t in file_tags {
            let e = count.entry(t.name.as_str()).or_insert((0, path.as_str()));
            e.0 += 1;
            let local = function_like(&t.scope_kind)
                || (t.scope_kind.is_empty() && t.indented)
                || (!t.scope.is_empty() && in_function(path, &t.scope));
            if !languages.contains(&t.language.as_str()) || local {
                // Counted, so that a name also defined elsewhere is not "once", and never
                // chosen.
                e.0 += 1;
            }
        }
    }
    let ident = |s: &str| {
        s.len() >= 4
            && !s.starts_with("__anon")
            && !s.starts_with("AnonymousFunction")
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    let once: Vec<(&str, &str)> = count
        .iter()
        .filter(|(name, (n, _))| *n == 1 && ident(name))
        .map(|(name, (_, path))| (*name, *path))
        .collect();
    let mut r = SearchRecall::default();
    let start = Instant::now();
    for (name, path) in sample(&once, SEARCH_SAMPLE) {
        let (_, out) = timed(&mut merkle(&["--json", "search", name, "--limit", "5"]))?;
        let hits = serde_json::from_str::<Json>(&out).context("reading search's JSON")?;
        let paths: Vec<&str> = hits
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|h| h.get("path").and_then(Json::as_str))
            .collect();
        r.names += 1;
        let pos = paths.iter().position(|p| *p == path);
        if pos == Some(0) {
            r.at1 += 1;
        }
        if pos.is_some_and(|p| p < 5) {
            r.at5 += 1;
        }
        if pos != Some(0) && r.misses.len() < 12 {
            r.misses.push(format!(
                "{name} ({path}): {}",
                match pos {
                    Some(p) => format!("hit {}", p + 1),
                    None => format!("first hits {:?}", &paths[..paths.len().min(2)]),
                }
            ));
        }
    }
    r.time = start.elapsed();
    Ok(r)
}

/// The relative specifiers of a script's text: a plain scan for quotes after `from`, `import`,
/// `require(` and `import(`.
fn relative_specifiers(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices(['\'', '"']) {
        let before = text[..i].trim_end();
        let opens = before.ends_with("from")
            || before.ends_with("import")
            || before.ends_with("require(")
            || before.ends_with("import(");
        let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
        let line = text[line_start..i].trim_start();
        if !opens || line.starts_with("//") || line.starts_with('*') || line.starts_with("/*") {
            continue;
        }
        let quote = &text[i..i + 1];
        let rest = &text[i + 1..];
        let Some(end) = rest.find(quote) else {
            continue;
        };
        let spec = &rest[..end];
        if (spec.starts_with("./") || spec.starts_with("../")) && !spec.contains('\n') {
            out.insert(spec.to_owned());
        }
    }
    out
}

/// `spec`, written in `from`, resolved the obvious way among `files`.
fn resolve(files: &BTreeSet<&str>, from: &str, spec: &str) -> Option<String> {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for seg in spec.split('/') {
        match seg {
            "." | "" => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    let base = parts.join("/");
    let exts = [
        "", ".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".json",
    ];
    let mut candidates: Vec<String> = exts.iter().map(|e| format!("{base}{e}")).collect();
    for (js, ts) in [
        (".js", [".ts", ".tsx", ".d.ts"]),
        (".jsx", [".tsx", ".ts", ".d.ts"]),
        (".mjs", [".mts", ".d.mts", ".ts"]),
        (".cjs", [".cts", ".d.cts", ".ts"]),
    ] {
        if let Some(stem) = base.strip_suffix(js) {
            candidates.extend(ts.iter().map(|e| format!("{stem}{e}")));
        }
    }
    candidates.extend(exts[1..].iter().map(|e| format!("{base}/index{e}")));
    candidates.into_iter().find(|c| files.contains(c.as_str()))
}

/// `merkle related`'s recall over the relative imports of TypeScript and JavaScript files.
pub(crate) fn related_recall(
    repo: &Path,
    files: &[String],
    merkle: impl Fn(&[&str]) -> Command,
) -> Result<RelatedRecall> {
    let set: BTreeSet<&str> = files.iter().map(String::as_str).collect();
    let script = |f: &str| {
        [".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"]
            .iter()
            .any(|e| f.ends_with(e))
    };
    let mut candidates: Vec<(String, BTreeSet<String>)> = Vec::new();
    for f in files.iter().filter(|f| script(f)) {
        let Ok(text) = std::fs::read_to_string(repo.join(f)) else {
            continue;
        };
        let targets: BTreeSet<String> = relative_specifiers(&text)
            .iter()
            .filter_map(|s| resolve(&set, f, s))
            .filter(|t| t != f)
            .collect();
        if !targets.is_empty() {
            candidates.push((f.clone(), targets));
        }
    }
    let mut r = RelatedRecall::default();
    let start = Instant::now();
    for (file, targets) in sample(&candidates, RELATED_SAMPLE) {
        let (_, out) = timed(&mut merkle(&["--json", "related", &file]))?;
        let doc = serde_json::from_str::<Json>(&out).context("reading related's JSON")?;
        let listed: BTreeSet<&str> = doc
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e.get("relation").and_then(Json::as_str) == Some("imports"))
            .filter_map(|e| e.get("path").and_then(Json::as_str))
            .collect();
        r.files += 1;
        for t in &targets {
            r.imports += 1;
            if listed.contains(t.as_str()) {
                r.found += 1;
            } else if r.misses.len() < 8 {
                r.misses.push(format!("{file} -> {t}"));
            }
        }
    }
    r.time = start.elapsed();
    Ok(r)
}

/// Runs both samples and appends their figures to the report `t`.
pub(crate) fn report(
    t: &mut String,
    repo: &Path,
    files: &[String],
    tags: &BTreeMap<String, Vec<Tag>>,
    languages: &[&str],
    merkle: &dyn Fn(&[&str]) -> Command,
) -> Result<()> {
    use std::fmt::Write as _;
    crate::bench_proc::progress("merkle search over names ctags finds once");
    let s = search_recall(tags, languages, merkle)?;
    crate::bench_proc::progress("merkle related over relative script imports");
    let r = related_recall(repo, files, merkle)?;
    let pass = |ok: bool| if ok { "PASS" } else { "MISS" };
    let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    let (at1, at5) = (ratio(s.at1, s.names), ratio(s.at5, s.names));
    let _ = writeln!(t);
    let _ = writeln!(
        t,
        "merkle search NAME --limit 5, {} names ctags defines once: recall@1 {at1:.3} (target >= 0.9: {}), recall@5 {at5:.3} (target >= 0.97: {}), {:.0} ms per search (rescan included)",
        s.names,
        pass(at1 >= 0.9),
        pass(at5 >= 0.97),
        s.time.as_secs_f64() * 1000.0 / s.names.max(1) as f64
    );
    for m in &s.misses {
        let _ = writeln!(t, "  not first: {m}");
    }
    let rr = ratio(r.found, r.imports);
    let _ = writeln!(
        t,
        "merkle related FILE, {} TS/JS files with {} relative imports: recall {rr:.3} (target >= 0.9: {}), {:.0} ms per call (rescan included)",
        r.files,
        r.imports,
        pass(rr >= 0.9),
        r.time.as_secs_f64() * 1000.0 / r.files.max(1) as f64
    );
    for m in &r.misses {
        let _ = writeln!(t, "  missed: {m}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_specifiers_are_read_and_resolved_the_obvious_way() {
        let text = "import a from './a';\n// import b from './commented';\nimport './side';\nexport * from \"../b/index.js\";\n\
                    const c = require('./c');\nimport x from 'react';\nawait import('./d');\n";
        let specs: Vec<String> = relative_specifiers(text).into_iter().collect();
        assert_eq!(specs, ["../b/index.js", "./a", "./c", "./d", "./side"]);
        let files: BTreeSet<&str> = ["src/a.ts", "b/index.ts", "src/c/index.js", "src/d.mjs"]
            .into_iter()
            .collect();
        let got: Vec<Option<String>> = specs
            .iter()
            .map(|s| resolve(&files, "src/main.ts", s))
            .collect();
        assert_eq!(
            got,
            [
                Some("b/index.ts".to_owned()),
                Some("src/a.ts".to_owned()),
                Some("src/c/index.js".to_owned()),
                Some("src/d.mjs".to_owned()),
                None,
            ]
        );
    }
}
