//! Search over the current tree: the files (and, in each, the definitions) a query is about,
//! whether the query is a symbol name, a question, an issue body or a traceback.
//!
//! The full-text index ([`retrieve::TextIndex`], kept beside the store) is brought in step with
//! the tree first ([`sync_index`]: a file is indexed again only when its content changed), then
//! one ranking fuses, per file:
//!
//! | signal | what it is | weight |
//! |---|---|---|
//! | text | BM25 over the path ([`W_PATH_WORDS`]), definition names ([`W_NAMES`]) and text, of the query's [`MAX_TERMS`] most telling words, with lengths softened ([`LENGTH_SCALE`]), divided by the best file's | [`W_TEXT`] |
//! | title | the text signal of the query's first line alone, when more lines follow (an issue's title, a commit's subject) | [`W_TITLE`] |
//! | definitions | the query's code identifiers that the file defines, each by how rare a definition of that name is (idf) and by its kind (a class over a method), divided by the best file's | [`W_DEFS`] |
//! | path | the file is one the query points at: a path or a traceback frame ([`W_PATH`], the deepest frames most), a bare file name (half that), a dotted module ([`W_MODULE`]), a code identifier ([`W_STEM`]) or a word ([`W_WORD_STEM`]) naming its file | |
//! | message | an error message the query quotes (an exception's, a panic's, an `error:` line, a text in double quotes), cut to its longest run of plain words and found as written in a file's text: the file that prints it ([`retrieve::phrases`]) | [`W_MESSAGE`], shared by the files that hold it |
//! | history | the files changed by the past commits (of the workspace's git history) whose messages are most like the task, each by those commits' BM25, divided by the best file's (tasks only: a title and more lines) | [`W_HISTORY`] |
//! | graph | a share of the evidence of the best [`GRAPH_SEEDS`] files, given to the files they import and that import them | [`W_GRAPH`] |
//! | proximity | of the [`PROXIMITY_FILES`] best files so far, the most of the query that one function or method holds: its distinct words, each by idf times its weight in the query, over the definition's length in lines to the power [`PROXIMITY_LENGTH`], divided by the best file's (task queries only) | [`W_PROXIMITY`] |
//!
//! and multiplies the sum by a prior ([`prior`]): tests, fixtures, docs and examples, vendored
//! and generated files (by their paths, or by their first lines: `auto-generated`, `DO NOT
//! EDIT`), files that are not code, huge files and, a little, small ones count for less,
//! unless the query points at them by path. Ties go by path. The order is a function
//! of the query and the tree alone: `limit` only cuts it. A task's lines that the tree's issue
//! templates hold, a reporter's prompts, are not read (`template.rs`).
//!
//! In each file, the definitions listed are those the query names, then those whose lines
//! hold the most of the query's words (function-level localisation; a class or a function
//! that holds functions is left to them), each with its line span; `why` says which signals
//! and words matched.
//!
//! [`Ranking::Plain`] is the baseline a benchmark compares against: BM25 over the text field
//! alone, the query cut into plain lowercase words, no priors, no graph, no definitions.
use std::collections::HashMap;
use std::path::Path;

use merkle_store::{NodeKind, Store};
use outline::{Kind, Language};
use rayon::prelude::*;
use retrieve::{Doc, Field3, Key, TextIndex, WeightedTerm};
pub use retrieve::{QueryKind, TaskQuery};

use crate::error::Result;
use crate::facts::{FACTS_VERSION, FileEntry, FileFacts, TreeFacts};
use crate::graph::Graph;

mod prior;
pub use self::prior::prior;
pub(crate) use self::prior::read_text;
use self::prior::{KIND_WEIGHTS, generated_prior, kind_class, prior_asked, size_of};

pub mod history;
mod hit;
pub use self::hit::{
    FUNCTION_FILES, FUNCTION_SYMBOLS, FunctionHit, Hit, SymbolHit, functions, functions_at_depth,
    search_functions, search_functions_tree,
};
mod index;
pub(crate) use self::index::sync_opened;
pub use self::index::{index_dir, sync_index};
mod fuse;
mod impls;
pub(crate) use impls::impl_trait;
mod template;
use self::fuse::{Asking, gather, give_history, hits_of, rank, spread_graph};
mod lines;
use self::lines::{Asked, ReadFiles, best_symbols, proximity};
mod paths;
use self::paths::path_signals;
mod signals;
use self::signals::{Scores, Signals};

/// What a search keeps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// Only files with a definition of this kind whose name holds a word of the query, and
    /// only definitions of that kind listed.
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

/// How files are ranked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ranking {
    /// Every signal, fused (the module's table).
    #[default]
    Fused,
    /// BM25 over file text alone with plain words: the baseline.
    Plain,
}

/// A search.
#[derive(Clone, Debug)]
pub struct SearchRequest<'a> {
    pub query: &'a str,
    /// At most this many files.
    pub limit: usize,
    pub filter: Option<Filter>,
    pub ranking: Ranking,
    /// At most this many definitions a hit lists ([`MAX_SYMBOLS`] for a list of files).
    pub symbols: usize,
}

/// The most definitions a hit lists.
pub const MAX_SYMBOLS: usize = 5;
/// The most query words sent to BM25, the rarest (by weight times idf) first.
pub const MAX_TERMS: usize = 64;

/// Weight of the text signal. Above the others' scale: measured on the dev set and on six
/// held-out sets of fix commits (Python, Rust, Go, TypeScript, Java, C++), weighting it 1.5
/// rather than 1 moved acc@5 up or left it on each (`docs/benchmarks.md`).
pub const W_TEXT: f64 = 1.5;
/// Weight of the title signal: the text signal of a task's first line alone, when more lines
/// follow (an issue's title, a commit's subject). Measured on the dev set and the six held-out
/// sets, 0.3 of the text signal's weight moved acc@5, acc@10 and MRR up on both
/// (`docs/benchmarks.md`).
pub const W_TITLE: f64 = 0.45;
/// A word's other forms ([`retrieve::query::word_forms`]) are looked for with this share of
/// its weight. Measured on the dev set and the six held-out sets, 0.5 moved acc@5, acc@10 and
/// MRR up or left them on both (`docs/benchmarks.md`).
pub const W_FORMS: f32 = 0.5;
/// Weight of the definitions signal.
pub const W_DEFS: f64 = 0.5;
/// Weight of the definitions signal when the query is a lookup (a name, or two or three words
/// one of which is written as code: [`retrieve::QueryKind::Lookup`]), where
/// the prior does not apply to it.
pub const W_LOOKUP_DEFS: f64 = 2.0;
/// The most words of a question ([`retrieve::QueryKind::Question`]): a folder a question
/// names by one of its words (`test runner reporter` and `cli/tools/test/`) is what it asks
/// about, and the prior does not hold that folder against a file ([`prior_asked`]).
pub use retrieve::query::QUESTION_WORDS;
/// Weight of a path the query names (a traceback frame, `src/x.py`, `x.py:12`).
pub const W_PATH: f64 = 1.5;
/// Weight of a dotted module name that names the file (`sympy.printing.latex`).
pub const W_MODULE: f64 = 0.8;
/// Weight of a code identifier of the query that is the file's name without extension.
pub const W_STEM: f64 = 0.3;
/// Weight of a word of the query that names a file (`pretty` for `pretty.py`).
pub const W_WORD_STEM: f64 = 0.2;
/// Weight of a message the query quotes found as written in a file (shared by the files that
/// hold it): the file that prints the error.
pub const W_MESSAGE: f64 = 0.5;
/// Weight of the files that the task's most similar past commits changed ([`history`]).
pub const W_HISTORY: f64 = 0.2;
/// How many files holding every word of a quoted message are read to find it as written.
pub const MESSAGE_CANDIDATES: usize = 32;
/// Weight of the graph signal.
pub const W_GRAPH: f64 = 0.25;
/// How many of the best files share their evidence with the files they import and that
/// import them.
pub const GRAPH_SEEDS: usize = 32;
/// Weight of the proximity signal: the query's words met together in one function say more
/// than the same words spread over a file.
pub const W_PROXIMITY: f64 = 0.7;
/// How many of the best files (by every other signal) the proximity signal reads.
pub const PROXIMITY_FILES: usize = 16;
/// A definition's share of the query is divided by its length in lines to this power: a
/// longer function holds more words by chance.
pub const PROXIMITY_LENGTH: f64 = 0.3;
/// BM25's average field lengths are taken as this many times what they are: a fix lands in
/// big files more often than BM25's length normalisation assumes.
pub const LENGTH_SCALE: f64 = 3.0;
/// Field weights of BM25 in the fused ranking: a word in a definition's name or in the path
/// says more about a file than one in its text.
pub const W_NAMES: f32 = 2.0;
pub const W_PATH_WORDS: f32 = 1.5;
/// Files larger than this are indexed by path and names only.
pub const MAX_TEXT_BYTES: u64 = 1 << 20;

/// A definition's token in the index (its `defs`): the class of its kind and its name as
/// written, so that which files define a name, and as what, is read from the index.
fn def_token(class: usize, name: &str) -> String {
    format!("{class}:{name}")
}

/// A definition's name as a task writes it: a C++ definition outside its class or namespace
/// is named qualified (`element::at_pointer`, `simdjson_result<dom::element>::at_pointer`),
/// a specialization with its arguments (`formatter<std::tm, Char>`); its bare name is the
/// last part (`at_pointer`, `formatter`; an operator's whole: `operator bool`, `operator<<`).
/// Other names are their own.
pub(crate) fn bare_name(name: &str) -> &str {
    let (cut, operator) = qualifier_end(name);
    let last = &name[cut..];
    if operator {
        return last;
    }
    last.find('<').map_or(last, |lt| last[..lt].trim_end())
}

/// Where the qualifier of `name` ends (past its last `::` outside template brackets; 0
/// where it has none), and whether the name is an operator's (read up to `operator` only).
fn qualifier_end(name: &str) -> (usize, bool) {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    // `operator` as a word of its own (`operator_traits::get` names no operator).
    let op = name
        .match_indices("operator")
        .map(|(i, _)| i)
        .find(|&i| !name[..i].ends_with(word) && !name[i + "operator".len()..].starts_with(word));
    let head = &name.as_bytes()[..op.unwrap_or(name.len())];
    let (mut depth, mut cut) = (0i32, 0);
    let mut i = 0;
    while i < head.len() {
        match head[i] {
            b'<' => depth += 1,
            b'>' => depth -= 1,
            b':' if depth == 0 && head.get(i + 1) == Some(&b':') => {
                cut = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    (cut, op.is_some())
}

/// Whether a C++ definition named qualified is its class's constructor or destructor
/// (`json::json`, `basic_json<T>::~basic_json`): a task naming the class does not name it.
pub(crate) fn is_structor(name: &str) -> bool {
    let (cut, _) = qualifier_end(name);
    let Some(qualifier) = name[..cut].strip_suffix("::") else {
        return false;
    };
    let class = bare_name(qualifier);
    !class.is_empty() && bare_name(name).trim_start_matches('~') == class
}

/// The files defining `name` (as written), as any kind, read from the index's `defs`; in
/// path order.
pub(crate) fn files_defining(index: &TextIndex, name: &str) -> Result<Vec<String>> {
    let tokens: Vec<String> = (0..KIND_WEIGHTS.len())
        .map(|class| def_token(class, name))
        .collect();
    let mut files: Vec<String> = index.holding(&tokens)?.into_iter().flatten().collect();
    files.sort_unstable();
    files.dedup();
    Ok(files)
}

/// BM25 of `terms` (lengths softened by [`LENGTH_SCALE`]) for each file of `facts` that holds
/// one, divided by the best file's: the file's position in the listing, and its score.
fn text_signal(
    index: &TextIndex,
    facts: &TreeFacts,
    terms: &[WeightedTerm],
) -> Result<Vec<(usize, f64)>> {
    let bm25 = index.search_scaled(terms, LENGTH_SCALE)?;
    let top = bm25.iter().map(|s| f64::from(s.score)).fold(0.0, f64::max);
    Ok(bm25
        .into_iter()
        .filter_map(|s| {
            let at = facts.position(&s.path)?;
            Some((at, f64::from(s.score) / top.max(f64::MIN_POSITIVE)))
        })
        .collect())
}

/// Adds the other forms of each of `words` (`started`: `start`; `reporter`: `reporters`) that
/// it does not hold, at [`W_FORMS`] of the word's weight: the index holds words as written.
fn add_word_forms(words: &mut Vec<(String, f32)>) {
    let mut seen: std::collections::HashSet<String> =
        words.iter().map(|(w, _)| w.clone()).collect();
    let mut forms: Vec<(String, f32)> = Vec::new();
    for (w, weight) in words.iter() {
        for form in retrieve::query::word_forms(w) {
            if seen.insert(form.clone()) {
                forms.push((form, weight * W_FORMS));
            }
        }
    }
    words.extend(forms);
}

/// The definitions signal: each identifier of the query by how rare a definition of that name
/// is (idf) and how often the query names it, the files defining it read from the index (its
/// `defs`), by the weight of the kind; divided by the best file's.
fn definition_signals<'f>(
    index: &TextIndex,
    facts: &'f TreeFacts,
    idents: &[(String, usize)],
    in_scope: &impl Fn(&FileEntry) -> bool,
    scores: &mut Scores<'f>,
) -> Result<()> {
    let mut tokens = Vec::with_capacity(idents.len() * KIND_WEIGHTS.len());
    for (name, _) in idents {
        for class in 0..KIND_WEIGHTS.len() {
            tokens.push(def_token(class, name));
        }
    }
    let holding = index.holding(&tokens)?;
    // Each name's count in the query, and the files defining it with the weight of the kind.
    type Defining<'f> = (usize, Vec<(&'f FileEntry, f64)>);
    let mut defined_in: HashMap<&str, Defining> = HashMap::new();
    for (i, (name, times)) in idents.iter().enumerate() {
        let mut seen: HashMap<&str, (&FileEntry, f64)> = HashMap::new();
        for (class, w) in KIND_WEIGHTS.iter().enumerate() {
            for path in &holding[i * KIND_WEIGHTS.len() + class] {
                if let Some(f) = facts.file(path).filter(|f| in_scope(f)) {
                    let e = seen.entry(f.path.as_str()).or_insert((f, 0.0));
                    e.1 = e.1.max(*w);
                }
            }
        }
        if !seen.is_empty() {
            let mut files: Vec<(&FileEntry, f64)> = seen.into_values().collect();
            files.sort_by(|a, b| a.0.path.cmp(&b.0.path));
            defined_in.insert(name.as_str(), (*times, files));
        }
    }
    let n_files = facts.files.len().max(1) as f64;
    let mut defs_raw: HashMap<&str, (f64, Vec<&str>)> = HashMap::new();
    for (name, (times, files)) in &defined_in {
        let idf = (1.0 + n_files / files.len() as f64).ln();
        let w = idf * (1.0 + (*times as f64).ln());
        for (f, kw) in files {
            let e = defs_raw.entry(f.path.as_str()).or_default();
            e.0 += w * kw;
            e.1.push(name);
        }
    }
    let top_defs = defs_raw.values().map(|d| d.0).fold(0.0, f64::max);
    for (path, (w, names)) in defs_raw {
        let Some(s) = scores.of(path) else { continue };
        s.defs = w / top_defs.max(f64::MIN_POSITIVE);
        let mut names: Vec<String> = names.into_iter().map(str::to_owned).collect();
        names.sort_unstable();
        s.defined = names;
    }
    Ok(())
}

/// Each of the error messages a query quotes, and options it writes ([`TaskQuery::messages`]),
/// with the files of `facts` whose text holds it as written: of the [`MESSAGE_CANDIDATES`] best
/// holding all its words.
fn quoted_messages<'f>(
    store: &Store,
    facts: &'f TreeFacts,
    index: &TextIndex,
    messages: &[String],
    in_scope: &impl Fn(&FileEntry) -> bool,
) -> Result<Vec<(String, Vec<&'f str>)>> {
    let mut out = Vec::new();
    for message in messages.iter().cloned() {
        let mut tokens = retrieve::tokenize::token_strings(&message);
        tokens.sort_unstable();
        tokens.dedup();
        let mut found: Vec<&str> = Vec::new();
        for path in index.holding_all(&tokens, MESSAGE_CANDIDATES)? {
            if let Some(f) = facts.file(&path).filter(|f| in_scope(f))
                && let Some(text) = read_text(store, f)?
                && memchr::memmem::find(text.as_bytes(), message.as_bytes()).is_some()
            {
                found.push(f.path.as_str());
            }
        }
        out.push((message, found));
    }
    Ok(out)
}

/// Whether a query gives a search anything to look for: a lookup always does; a longer one
/// when it holds a word that is not a stop word, an identifier or a path. A query without
/// matches that has none of them says so.
pub fn has_terms(query: &str) -> bool {
    read_has_terms(&TaskQuery::parse(query))
}

/// [`has_terms`] of a query already read.
fn read_has_terms(q: &TaskQuery) -> bool {
    q.kind == QueryKind::Lookup
        || !q.words.is_empty()
        || !q.idents.is_empty()
        || !q.paths.is_empty()
}

/// [`search`] over the tree `facts` describes, with the index beside the store brought in
/// step first: what the CLI, the MCP server and the agent's tool call.
pub fn search_tree(store: &Store, facts: &TreeFacts, req: &SearchRequest<'_>) -> Result<Vec<Hit>> {
    let (index, _) = sync_index(store, facts, &index_dir(store))?;
    search(store, facts, &index, req)
}

/// The files of `facts` that match `req.query`, best first, at most `req.limit`. An empty
/// list when the query has nothing to look for (only stop words, no identifier).
pub fn search(
    store: &Store,
    facts: &TreeFacts,
    index: &TextIndex,
    req: &SearchRequest<'_>,
) -> Result<Vec<Hit>> {
    if req.limit == 0 {
        return Ok(Vec::new());
    }
    let in_scope = |f: &FileEntry| match req.filter {
        Some(Filter::Language(l)) => f.language == Some(l),
        _ => true,
    };
    if req.ranking == Ranking::Plain {
        return plain(facts, index, req, in_scope);
    }

    let mut asking = Asking::read(req.query);
    // A task filed through the repository's issue template: its prompts and hidden comments
    // said nothing. Read without them where what is left is still a task with something to
    // look for.
    if asking.q.kind == QueryKind::Task
        && let Some(written) = template::as_written(store, facts, req.query)?
    {
        let read = Asking::read(&written);
        if read.q.kind == QueryKind::Task && read_has_terms(&read.q) {
            asking = read;
        }
    }
    let (terms, telling) = select_terms(index, &asking.words)?;
    let (mut scores, kept, past) = gather(store, facts, index, &asking, &terms, &in_scope)?;
    let history_missing = give_history(facts, &mut scores, past, &in_scope);
    spread_graph(store, facts, &mut scores, kept)?;
    let read = if asking.short() {
        ReadFiles::new()
    } else {
        proximity(store, facts, &mut scores, &telling, &in_scope)?
    };
    let ranked = rank(store, facts, &scores, req, &asking, &in_scope)?;
    hits_of(
        store,
        facts,
        ranked,
        read,
        req,
        &asking,
        &terms,
        history_missing,
    )
}

/// The first `n` of `items` in the order `cmp` gives, in that order (the rest dropped unsorted).
fn first_of<T>(items: &mut Vec<T>, n: usize, cmp: impl Fn(&T, &T) -> std::cmp::Ordering) {
    if n == 0 {
        items.clear();
        return;
    }
    if items.len() > n {
        items.select_nth_unstable_by(n - 1, &cmp);
        items.truncate(n);
    }
    items.sort_by(cmp);
}

/// A file to rank with its score before the prior, the most it can score: the greatest is the
/// highest score, ties going to the first path.
struct Candidate<'f>((f64, &'f FileEntry, &'f Signals));

impl Ord for Candidate<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let (a, b) = (&self.0, &other.0);
        a.0.total_cmp(&b.0).then_with(|| b.1.path.cmp(&a.1.path))
    }
}

impl PartialOrd for Candidate<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Candidate<'_> {}

/// `work` of each of `items`, in order, the odd ones on a second thread (a thread of its own,
/// not the pool's: the pool may be busy with the rescan that runs beside a search).
fn on_two_threads<I: Sync, T: Send>(items: &[I], work: impl Fn(&I) -> T + Sync) -> Vec<T> {
    if items.len() < 4 {
        return items.iter().map(&work).collect();
    }
    let (even, odd) = std::thread::scope(|scope| {
        let odd = scope.spawn(|| {
            items
                .iter()
                .skip(1)
                .step_by(2)
                .map(&work)
                .collect::<Vec<T>>()
        });
        let even: Vec<T> = items.iter().step_by(2).map(&work).collect();
        (even, crate::joined(odd))
    });
    let mut out = Vec::with_capacity(items.len());
    let mut odd = odd.into_iter();
    for e in even {
        out.push(e);
        out.extend(odd.next());
    }
    out
}

/// [`Ranking::Plain`]: BM25 over the text field of the query's plain words, nothing else.
fn plain(
    facts: &TreeFacts,
    index: &TextIndex,
    req: &SearchRequest<'_>,
    in_scope: impl Fn(&FileEntry) -> bool,
) -> Result<Vec<Hit>> {
    let mut counts: HashMap<String, f32> = HashMap::new();
    for t in retrieve::query::plain_tokens(req.query) {
        *counts.entry(t).or_default() += 1.0;
    }
    let mut terms: Vec<WeightedTerm> = counts
        .into_iter()
        .map(|(token, weight)| WeightedTerm {
            field: Field3::Text,
            token,
            weight,
        })
        .collect();
    terms.sort_by(|a, b| a.token.cmp(&b.token));
    let mut hits: Vec<(f64, &FileEntry)> = index
        .search(&terms)?
        .into_iter()
        .filter_map(|s| facts.file(&s.path).map(|f| (f64::from(s.score), f)))
        .filter(|(_, f)| in_scope(f))
        .collect();
    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    hits.truncate(req.limit);
    Ok(hits
        .into_iter()
        .map(|(score, f)| Hit {
            path: f.path.clone(),
            score: round(score),
            symbols: Vec::new(),
            why: vec!["bm25".to_owned()],
            history_missing: None,
        })
        .collect())
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Query words, each with its weight in the query times its idf.
type Telling = Vec<(String, f64)>;

/// The query's words worth sending to BM25, each in the three fields: the [`MAX_TERMS`] with
/// the largest weight times idf over the text field; words no file holds are dropped. With
/// them, each such word with its weight times idf.
fn select_terms(
    index: &TextIndex,
    words: &[(String, f32)],
) -> Result<(Vec<WeightedTerm>, Telling)> {
    let mut scored: Vec<(f64, &str, f32)> = Vec::new();
    for (w, weight) in words {
        let mut df = 0;
        let mut n = 0;
        for field in [Field3::Text, Field3::Names, Field3::Path] {
            let (d, total) = index.doc_freq(field, w)?;
            df = df.max(d);
            n = total;
        }
        if df == 0 {
            continue;
        }
        let idf = (1.0 + (n as f64 - df as f64 + 0.5) / (df as f64 + 0.5)).ln();
        scored.push((idf * f64::from(*weight), w, *weight));
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.truncate(MAX_TERMS);
    let mut terms = Vec::with_capacity(scored.len() * 3);
    let telling = scored
        .iter()
        .map(|(x, t, _)| ((*t).to_owned(), *x))
        .collect();
    for (_, token, weight) in scored {
        for (field, w) in [
            (Field3::Text, 1.0),
            (Field3::Names, W_NAMES),
            (Field3::Path, W_PATH_WORDS),
        ] {
            terms.push(WeightedTerm {
                field,
                token: token.to_owned(),
                weight: weight * w,
            });
        }
    }
    Ok((terms, telling))
}

/// Whether `f` has a definition of kind `k` whose name holds a word of the query.
fn has_kind_match(f: &FileFacts, k: Kind, words: &[(String, f32)]) -> bool {
    f.symbols.iter().any(|s| {
        s.kind == k && {
            let name = s.name.to_lowercase();
            words.iter().any(|(w, _)| name.contains(w.as_str()))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{bare_name, is_structor};

    #[test]
    fn a_qualified_or_specialized_name_is_found_by_its_last_part() {
        let cases = [
            ("element::at_pointer", "at_pointer"),
            ("simdjson_result<dom::element>::at_pointer", "at_pointer"),
            ("formatter<std::tm, Char>", "formatter"),
            ("element::get<uint64_t>", "get"),
            ("Value::operator bool", "operator bool"),
            ("operator<<", "operator<<"),
            ("basic_json<T>::operator<", "operator<"),
            ("json_pointer operator/", "json_pointer operator/"),
            ("get_operator", "get_operator"),
            ("detail::operator_traits::get", "get"),
            ("operators::apply", "apply"),
            ("~Test", "~Test"),
            ("render", "render"),
        ];
        for (name, bare) in cases {
            assert_eq!(bare_name(name), bare, "{name}");
        }
        assert!(is_structor("json::json"));
        assert!(is_structor("basic_json<T>::~basic_json"));
        assert!(!is_structor("json::parse"));
        assert!(!is_structor("json"));
        // Identifiers beyond ASCII are cut at `::` alone.
        assert!(is_structor("Größe::Größe"));
        assert_eq!(bare_name("Größe::f<é>"), "f");
        assert!(!is_structor("Größe::f<é>"));
    }
}
