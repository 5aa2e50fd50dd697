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
/// file's score times its own against its file's best to the power [`FUNCTION_DEPTH`], so a
/// file's best definition keeps the file's place and a second-rate one falls behind the next
/// files' best (ties: path, line).
pub fn functions(hits: &[Hit], limit: usize) -> Vec<FunctionHit> {
    functions_at_depth(hits, limit, FUNCTION_DEPTH)
}

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
pub const FUNCTION_DEPTH: f64 = 0.5;

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
