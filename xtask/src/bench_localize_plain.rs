//! The plain function baseline of the localisation bench: BM25 over every definition of a
//! tree's tracked source files (each definition's lines a document, as
//! [`crate::bench_localize_defs`] reads them; the files of its HEAD commit), the issue's text the query. What SweRank's
//! BM25 row measures, computed here so that it owes nothing to merkle.
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use crate::bench_localize_defs::definitions;
use crate::bench_localize_gold::FileDefinition;

/// BM25's term-frequency saturation and length normalisation, the usual values.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The lowercase alphanumeric runs of `text` (`_` and every other character separate them),
/// each at least two characters long.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_lowercase)
}

/// A definition as a document: where it is, its length in words and its words' counts.
struct Doc {
    def: FileDefinition,
    len: usize,
    /// In word order, so that its score sums in the same order in every run (identical
    /// definitions, a header and its amalgamated copy, tie exactly and keep their order).
    counts: BTreeMap<String, u32>,
}

/// The first `limit` definitions of the files of `tree`'s HEAD commit by BM25 against `query`
/// (ties: path, then line).
pub fn plain_functions(tree: &Path, query: &str, limit: usize) -> Result<Vec<FileDefinition>> {
    let listed = Command::new("git")
        .arg("-C")
        .arg(tree)
        .args(["ls-tree", "-r", "-z", "--name-only", "HEAD"])
        .output()
        .context("running git ls-tree")?;
    let wanted: HashMap<String, ()> = words(query).map(|w| (w, ())).collect();
    let mut docs = Vec::new();
    for path in listed.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        let path = String::from_utf8_lossy(path).into_owned();
        let Ok(bytes) = std::fs::read(tree.join(&path)) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let defs = definitions(&path, &text);
        if defs.is_empty() {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        for d in defs {
            let body = lines
                .get(d.line.saturating_sub(1)..d.end.min(lines.len()))
                .unwrap_or_default();
            let mut len = 0;
            let mut counts = BTreeMap::new();
            for w in body.iter().flat_map(|l| words(l)) {
                len += 1;
                if wanted.contains_key(&w) {
                    *counts.entry(w).or_insert(0) += 1;
                }
            }
            docs.push(Doc {
                def: FileDefinition {
                    path: path.clone(),
                    name: d.name,
                    line: d.line,
                    end: d.end,
                },
                len,
                counts,
            });
        }
    }
    Ok(rank(docs, query, limit))
}

/// `docs` by BM25 against the words of `query` (each occurrence counted), best first.
fn rank(docs: Vec<Doc>, query: &str, limit: usize) -> Vec<FileDefinition> {
    let n = docs.len() as f64;
    let avg = docs.iter().map(|d| d.len).sum::<usize>() as f64 / n.max(1.0);
    let mut df: HashMap<&str, f64> = HashMap::new();
    for d in &docs {
        for w in d.counts.keys() {
            *df.entry(w.as_str()).or_insert(0.0) += 1.0;
        }
    }
    let mut asked: HashMap<String, f64> = HashMap::new();
    for w in words(query) {
        *asked.entry(w).or_insert(0.0) += 1.0;
    }
    let mut scored: Vec<(f64, &Doc)> = docs
        .iter()
        .map(|d| {
            let norm = K1 * (1.0 - B + B * d.len as f64 / avg.max(1.0));
            let score = d
                .counts
                .iter()
                .filter_map(|(w, &tf)| {
                    let df = df[w.as_str()];
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    let tf = f64::from(tf);
                    Some(asked.get(w)? * idf * tf * (K1 + 1.0) / (tf + norm))
                })
                .sum::<f64>();
            (score, d)
        })
        .filter(|(s, _)| *s > 0.0)
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.def.path.cmp(&b.1.def.path))
            .then_with(|| a.1.def.line.cmp(&b.1.def.line))
    });
    scored
        .into_iter()
        .take(limit)
        .map(|(_, d)| d.def.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, text: &str) -> Doc {
        let mut counts = BTreeMap::new();
        let mut len = 0;
        for w in words(text) {
            len += 1;
            *counts.entry(w).or_insert(0) += 1;
        }
        Doc {
            def: FileDefinition {
                path: "a.py".to_owned(),
                name: name.to_owned(),
                line: 1,
                end: 1,
            },
            len,
            counts,
        }
    }

    #[test]
    fn the_definition_holding_the_rare_words_ranks_first() {
        let docs = vec![
            doc("common", "def common(): return value value value"),
            doc("parse", "def parse_header(value): raise HeaderError(value)"),
            doc("other", "def other(): pass"),
        ];
        let ranked = rank(docs, "HeaderError raised while parsing a header value", 10);
        let names: Vec<&str> = ranked.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["parse", "common"], "other holds no query word");
    }
}
