//! A search's answer: the files found, each with its best definitions and why it matched, as
//! every front end renders it ([`Hit::json`]); or the definitions themselves across files
//! ([`search_functions`], [`FunctionHit::json`]).
use merkle_store::Store;
use outline::Kind;

use super::{SearchRequest, TextIndex, index_dir, search, sync_index};
use crate::Result;
use crate::facts::TreeFacts;

/// A definition in a hit, with its lines.
#[derive(Clone, Debug, PartialEq)]
pub struct SymbolHit {
    pub name: String,
    pub kind: Kind,
    pub line_start: usize,
    pub line_end: usize,
    pub signature: String,
    /// How well it matches against the file's best definition (1 for that one): a function
    /// search weighs the file's score by it.
    pub score: f64,
    /// The line of it holding the most of the query's words (the first such), if any: where a
    /// bundle cuts a long definition around.
    pub focus: Option<usize>,
}

/// A file and why it matched.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub path: String,
    /// Its fused score (higher is better; comparable within one search only).
    pub score: f64,
    /// Its best-matching definitions, best first (at most [`super::MAX_SYMBOLS`]).
    pub symbols: Vec<SymbolHit>,
    /// What matched: `path: ...`, `defines: ...`, `says: ...`, `words: ...`, `fixed before:
    /// ...`, `together in: ...`, `near: ...`.
    pub why: Vec<String>,
    /// Why the history signal is missing from this search's ranking: the workspace's git
    /// history could not be read ([`super::history::Unread`]). `None` when it was read or not
    /// asked for (a lookup, [`super::Ranking::Plain`], a workspace that is not a git checkout).
    /// Every hit of a search says the same, as a search's answer is its list of hits.
    pub history_missing: Option<String>,
}

impl Hit {
    /// The hit as every front end answers it: `{path, score, symbols: [{name, kind,
    /// line_start, line_end, signature}], why}`, and `history_missing` when the history signal
    /// is.
    pub fn json(&self) -> serde_json::Value {
        let mut json = serde_json::json!({
            "path": self.path,
            "score": self.score,
            "symbols": self.symbols.iter().map(|s| serde_json::json!({
                "name": s.name,
                "kind": s.kind.noun(),
                "line_start": s.line_start,
                "line_end": s.line_end,
                "signature": s.signature,
            })).collect::<Vec<_>>(),
            "why": self.why,
        });
        if let Some(why) = &self.history_missing {
            json["history_missing"] = why.as_str().into();
        }
        json
    }
}

/// A definition found by a function search, across files.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionHit {
    pub path: String,
    pub symbol: SymbolHit,
    /// Its file's score times its own against the file's best definition (comparable within
    /// one search only).
    pub score: f64,
    /// What matched in its file.
    pub why: Vec<String>,
}

impl FunctionHit {
    /// `{path, name, kind, line_start, line_end, signature, score, why}`.
    pub fn json(&self) -> serde_json::Value {
        let s = &self.symbol;
        serde_json::json!({
            "path": self.path,
            "name": s.name,
            "kind": s.kind.noun(),
            "line_start": s.line_start,
            "line_end": s.line_end,
            "signature": s.signature,
            "score": self.score,
            "why": self.why,
        })
    }
}

/// The definitions `hits` list, best first across files, at most `limit`: each scored by its
/// file's score times its own against its file's best to the power [`FUNCTION_DEPTH`] (ties:
/// path, line). The best definition of each of the first [`FUNCTION_BREADTH`] files leads, by
/// that score, ahead of every file's second: a fix is as often in the second or third file's
/// best function as in the first file's second, and a top ten that holds three files finds it
/// (as a bundle reads [`crate::bundle::BUNDLE_BREADTH`] files' best before any file's next).
pub fn functions(hits: &[Hit], limit: usize) -> Vec<FunctionHit> {
    let mut found = functions_at_depth(hits, usize::MAX, FUNCTION_DEPTH);
    let mut firsts: Vec<usize> = hits
        .iter()
        .take(FUNCTION_BREADTH)
        .filter_map(|h| found.iter().position(|f| f.path == h.path))
        .collect();
    firsts.sort_unstable_by(|a, b| b.cmp(a));
    let mut lead: Vec<FunctionHit> = firsts.into_iter().map(|i| found.remove(i)).collect();
    lead.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
    });
    lead.extend(found);
    lead.truncate(limit);
    lead
}

/// How many of the best files' best definitions lead a function list.
pub const FUNCTION_BREADTH: usize = 3;

/// [`functions`] with each definition's share of its file's best to the power `depth`: the
/// lower, the more a file's other definitions keep its place (a bundle reads deeper into its
/// best files than a function list ranks: [`crate::bundle::BUNDLE_DEPTH`]).
pub fn functions_at_depth(hits: &[Hit], limit: usize, depth: f64) -> Vec<FunctionHit> {
    let mut found: Vec<FunctionHit> = hits
        .iter()
        .flat_map(|h| {
            h.symbols.iter().map(|s| FunctionHit {
                path: h.path.clone(),
                symbol: s.clone(),
                score: (h.score * s.score.powf(depth) * 1e4).round() / 1e4,
                why: h.why.clone(),
            })
        })
        .collect();
    found.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.symbol.line_start.cmp(&b.symbol.line_start))
    });
    found.truncate(limit);
    found
}

/// How a definition's score against its file's best weighs in a function search: its file's
/// score times that share to this power. Under 1, a file's second and third definitions stay
/// near its best, ahead of weaker files' best ones (the fix is most often in the first file).
/// Dev `--functions` acc@5 55.2% at 0.5, 57.3% at 0.4 (acc@10 and any@10 the same), 56.2% at
/// 0.3; Multi-SWE-bench and the held-out sets' acc@5 and acc@10 the same at 0.4.
pub const FUNCTION_DEPTH: f64 = 0.4;

/// How many files a function search ranks the definitions of, at least.
pub const FUNCTION_FILES: usize = 20;
/// How many definitions of each file a function search weighs.
pub const FUNCTION_SYMBOLS: usize = 20;

/// The definitions `req.query` is about across files, best first, at most `req.limit`
/// ([`functions`] over a search of at least [`FUNCTION_FILES`] files, each with up to
/// [`FUNCTION_SYMBOLS`] definitions): what `search --functions` answers on every front end.
pub fn search_functions(
    store: &Store,
    facts: &TreeFacts,
    index: &TextIndex,
    req: &SearchRequest<'_>,
) -> Result<Vec<FunctionHit>> {
    let files = SearchRequest {
        limit: req.limit.max(FUNCTION_FILES),
        symbols: req.symbols.max(FUNCTION_SYMBOLS),
        ..*req
    };
    let mut hits = search(store, facts, index, &files)?;
    if !matches!(req.filter, Some(super::Filter::Kind(_))) {
        for h in &mut hits {
            h.symbols.retain(|s| holds_code(s.kind));
        }
    }
    Ok(functions(&hits, req.limit))
}

/// Whether a definition of `kind` holds code a fix changes: a function, a method, or a type
/// holding them. A function search lists only these unless asked for a kind (`--type
/// constant`); a file's list and a bundle show the constants, fields and variables a task
/// names as well.
fn holds_code(kind: Kind) -> bool {
    matches!(kind, Kind::Function | Kind::Method | Kind::Type) || super::lines::is_type(kind)
}

/// [`search_functions`] with the index beside the store brought in step first.
pub fn search_functions_tree(
    store: &Store,
    facts: &TreeFacts,
    req: &SearchRequest<'_>,
) -> Result<Vec<FunctionHit>> {
    let (index, _) = sync_index(store, facts, &index_dir(store))?;
    search_functions(store, facts, &index, req)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, score: f64, shares: &[(&str, f64)]) -> Hit {
        let symbols = shares
            .iter()
            .enumerate()
            .map(|(i, (name, share))| SymbolHit {
                name: (*name).to_owned(),
                kind: Kind::Function,
                line_start: 10 * i + 1,
                line_end: 10 * i + 9,
                signature: format!("def {name}():"),
                score: *share,
                focus: None,
            })
            .collect();
        Hit {
            path: path.to_owned(),
            score,
            symbols,
            why: vec![],
            history_missing: None,
        }
    }

    fn names(found: &[FunctionHit]) -> Vec<&str> {
        found.iter().map(|f| f.symbol.name.as_str()).collect()
    }

    #[test]
    fn the_best_files_best_definitions_lead_their_seconds() {
        let hits = [
            hit("a.py", 1.0, &[("a1", 1.0), ("a2", 0.9), ("a3", 0.8)]),
            hit("b.py", 0.5, &[("b1", 1.0), ("b2", 0.9)]),
            hit("c.py", 0.4, &[("c1", 1.0)]),
        ];
        // By score alone a.py's second and third come before b.py's and c.py's best.
        let by_score = functions_at_depth(&hits, 10, FUNCTION_DEPTH);
        assert_eq!(names(&by_score), ["a1", "a2", "a3", "b1", "b2", "c1"]);
        let found = functions(&hits, 10);
        assert_eq!(names(&found), ["a1", "b1", "c1", "a2", "a3", "b2"]);
        assert_eq!(names(&functions(&hits, 2)), ["a1", "b1"]);
    }

    #[test]
    fn a_first_files_weak_definition_stays_ahead_of_a_weaker_files_best() {
        let hits = [
            hit("a.py", 1.0, &[("a1", 1.0), ("a2", 0.25)]),
            hit("b.py", 0.9, &[("b1", 1.0)]),
            hit("c.py", 0.8, &[("c1", 1.0)]),
            hit("d.py", 0.55, &[("d1", 1.0)]),
        ];
        // a2 weighs 1.0 * 0.25^0.4 = 0.57 against d1's 0.55 (at a depth of 0.5: 0.5).
        assert_eq!(names(&functions(&hits, 10)), ["a1", "b1", "c1", "a2", "d1"]);
    }

    #[test]
    fn a_file_past_the_breadth_keeps_its_place_by_score() {
        let mut hits: Vec<Hit> = (0..FUNCTION_BREADTH)
            .map(|i| hit(&format!("f{i}.py"), 1.0 - 0.1 * i as f64, &[("best", 1.0)]))
            .collect();
        hits[0]
            .symbols
            .push(hit("x", 0.0, &[("second", 0.99)]).symbols.remove(0));
        hits.push(hit("late.py", 0.05, &[("late", 1.0)]));
        let found = functions(&hits, 20);
        let paths: Vec<&str> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths[FUNCTION_BREADTH], "f0.py", "{paths:?}");
        assert_eq!(paths.last(), Some(&"late.py"));
    }
}
