//! Search over the current tree: files ranked for a query by their symbol names, their paths
//! and the text of their head frames, from the cached facts ([`TreeFacts`]).
//!
//! The index is the facts themselves, held in memory for the query: facts are cached per file
//! content, so a rescan after a one-file edit derives one file's entries and the next query
//! sees them. A per-query scan of the symbols is a few milliseconds for tens of thousands of
//! files (see docs/benchmarks.md), which is why no inverted index (tantivy) is kept.
//!
//! # Ranking
//!
//! Each whitespace-separated term of the query scores a file by its best match, and a file's
//! score is the sum over terms. Best first:
//!
//! | match                                                   | score        |
//! |---------------------------------------------------------|--------------|
//! | a definition's name equals the term, case-sensitively   | 100 + kind   |
//! | ... case-insensitively                                  | 80 + kind    |
//! | an `impl` block for a type of that name                 | 60           |
//! | a definition's name starts with the term (any case)     | 50 + kind    |
//! | a definition's name contains the term                   | 40 + kind    |
//! | the file's name without extension equals the term      | 30           |
//! | a folder of its path is named the term                  | 25           |
//! | its path contains the term                              | 20           |
//! | a Markdown heading contains the term                    | 15           |
//! | its head frame of the searched type contains the term   | 10           |
//!
//! `kind` is 3 for types and functions, 2 for methods, 1 for modules and constants, 0 for
//! variables and fields. Ties are broken by path. Frame text is read only for files nothing
//! else matched, and only while fewer than `limit` files have matched: frames are the one part
//! not held in the facts.
use merkle_store::Store;
use outline::{Kind, Language};

use crate::error::Result;
use crate::facts::{FileEntry, TreeFacts};

/// What a search keeps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// Only definitions of this kind (`function`, `struct`, ...); paths and frames do not match.
    Kind(Kind),
    /// Only files of this language.
    Language(Language),
}

impl Filter {
    /// A kind's noun (`function`, `class`, ...) or a language's name (`rust`, `typescript`,
    /// `c++` or `cpp`, ...), in any case.
    pub fn parse(s: &str) -> Option<Filter> {
        let lower = s.to_ascii_lowercase();
        if let Some(k) = Kind::from_noun(lower.trim_end_matches('s'))
            .or_else(|| Kind::from_noun(&lower))
            .or_else(|| (lower == "classes").then_some(Kind::Class))
        {
            return Some(Filter::Kind(k));
        }
        let lang = match lower.as_str() {
            "rust" => Language::Rust,
            "python" => Language::Python,
            "javascript" | "js" => Language::JavaScript,
            "typescript" | "ts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            "c" => Language::C,
            "c++" | "cpp" => Language::Cpp,
            "markdown" | "md" => Language::Markdown,
            _ => return None,
        };
        Some(Filter::Language(lang))
    }
}

/// A search.
#[derive(Clone, Debug)]
pub struct SearchRequest<'a> {
    pub query: &'a str,
    /// At most this many files.
    pub limit: usize,
    pub filter: Option<Filter>,
    /// The frame type whose head frames are searched (`summary`).
    pub frame_type: &'a str,
}

/// One place a file matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    /// The 1-based line in the file (for a symbol) or in the frame; none for the path.
    pub line: Option<usize>,
    /// The matching symbol's signature, the path, or the frame's line.
    pub text: String,
    /// The matching symbol's name.
    pub symbol: Option<String>,
}

/// A file and why it matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    pub path: String,
    pub score: u32,
    /// Its best matches, best first (at most [`MAX_MATCHES`]).
    pub matches: Vec<Match>,
}

/// The most matches a hit lists.
pub const MAX_MATCHES: usize = 5;

fn kind_bonus(kind: Kind) -> u32 {
    match kind {
        Kind::Struct
        | Kind::Enum
        | Kind::Union
        | Kind::Type
        | Kind::Trait
        | Kind::Interface
        | Kind::Class
        | Kind::Function
        | Kind::Macro => 3,
        Kind::Method => 2,
        Kind::Module | Kind::Namespace | Kind::Package | Kind::Constant => 1,
        _ => 0,
    }
}

/// Whether `hay` contains `needle` (already lowercase ASCII), ignoring ASCII case.
fn contains_ci(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    n.is_empty()
        || h.windows(n.len())
            .any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_lowercase() == *b))
}

/// A symbol's score for one term, if it matches.
fn symbol_score(name: &str, kind: Kind, term: &str, lower: &str) -> Option<u32> {
    if matches!(kind, Kind::Heading | Kind::Key) {
        return contains_ci(name, lower).then_some(15);
    }
    let bonus = kind_bonus(kind);
    if name == term {
        return Some(if kind == Kind::Impl { 60 } else { 100 + bonus });
    }
    if name.eq_ignore_ascii_case(term) {
        return Some(if kind == Kind::Impl { 60 } else { 80 + bonus });
    }
    if kind == Kind::Impl {
        return None;
    }
    if name.len() > term.len()
        && name.as_bytes()[..term.len()].eq_ignore_ascii_case(term.as_bytes())
    {
        return Some(50 + bonus);
    }
    contains_ci(name, lower).then_some(40 + bonus)
}

fn path_score(path: &str, lower: &str) -> Option<u32> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    if stem.eq_ignore_ascii_case(lower) {
        return Some(30);
    }
    if path
        .split('/')
        .rev()
        .skip(1)
        .any(|d| d.eq_ignore_ascii_case(lower))
    {
        return Some(25);
    }
    contains_ci(path, lower).then_some(20)
}

/// Matches with their scores.
type Scored = Vec<(u32, Match)>;

/// A file's score and matches over `terms` from its facts and path; (0, []) when none match.
fn score_file(
    f: &FileEntry,
    terms: &[(&str, String)],
    filter: Option<Filter>,
) -> (u32, Vec<(u32, Match)>) {
    let mut total = 0;
    let mut matches = Vec::new();
    for (term, lower) in terms {
        let mut best = 0;
        for s in &f.facts.symbols {
            if let Some(Filter::Kind(k)) = filter
                && s.kind != k
            {
                continue;
            }
            if let Some(score) = symbol_score(&s.name, s.kind, term, lower) {
                best = best.max(score);
                matches.push((
                    score,
                    Match {
                        line: Some(s.line),
                        text: s.signature.clone(),
                        symbol: Some(s.name.clone()),
                    },
                ));
            }
        }
        if !matches!(filter, Some(Filter::Kind(_)))
            && let Some(score) = path_score(&f.path, lower)
        {
            if score > best {
                matches.push((
                    score,
                    Match {
                        line: None,
                        text: f.path.clone(),
                        symbol: None,
                    },
                ));
            }
            best = best.max(score);
        }
        total += best;
    }
    (total, matches)
}

/// The files of `facts` that match `req.query`, best first, at most `req.limit`.
pub fn search(store: &Store, facts: &TreeFacts, req: &SearchRequest<'_>) -> Result<Vec<Hit>> {
    let terms: Vec<(&str, String)> = req
        .query
        .split_whitespace()
        .map(|t| (t, t.to_ascii_lowercase()))
        .collect();
    if terms.is_empty() || req.limit == 0 {
        return Ok(Vec::new());
    }
    let in_scope = |f: &FileEntry| match req.filter {
        Some(Filter::Language(l)) => f.language == Some(l),
        _ => true,
    };
    let mut hits: Vec<(u32, &FileEntry, Scored)> = Vec::new();
    let mut unmatched = Vec::new();
    for f in facts.files.iter().filter(|f| in_scope(f)) {
        let (score, matches) = score_file(f, &terms, req.filter);
        if score > 0 {
            hits.push((score, f, matches));
        } else {
            unmatched.push(f);
        }
    }
    if hits.len() < req.limit && !matches!(req.filter, Some(Filter::Kind(_))) {
        for f in unmatched {
            if hits.len() >= req.limit {
                break;
            }
            let Some(frame) = store.path_head(&f.path, req.frame_type)? else {
                continue;
            };
            let text = String::from_utf8_lossy(&frame.content);
            let mut matches = Vec::new();
            let mut score = 0;
            for (_, lower) in &terms {
                let mut found = false;
                for (i, line) in text.lines().enumerate() {
                    if contains_ci(line, lower) {
                        found = true;
                        matches.push((
                            10,
                            Match {
                                line: Some(i + 1),
                                text: line.trim().to_owned(),
                                symbol: None,
                            },
                        ));
                    }
                }
                if found {
                    score += 10;
                }
            }
            if score > 0 {
                hits.push((score, f, matches));
            }
        }
    }
    hits.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    hits.truncate(req.limit);
    Ok(hits
        .into_iter()
        .map(|(score, f, mut matches)| {
            matches.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.line.cmp(&b.1.line)));
            matches.dedup_by(|b, a| a.1 == b.1);
            Hit {
                path: f.path.clone(),
                score,
                matches: matches.into_iter().take(MAX_MATCHES).map(|m| m.1).collect(),
            }
        })
        .collect())
}
