//! Search, the task bundle and related files as every front end asks for them (the CLI, the
//! MCP server, the agent's tools): the defaults, the checks with the errors they answer, and
//! one answer each, so that a front end only parses, calls and renders.
use merkle_store::{NodeKind, Store};
use serde_json::Value;

use crate::bundle::{Bundle, BundleRequest, TokenCounter};
use crate::error::{Error, Result};
use crate::facts::TreeFacts;
use crate::graph::{Graph, Related};
use crate::ops::Snapshot;
use crate::search::{Filter, FunctionHit, Hit, MAX_SYMBOLS, Ranking, SearchRequest, history};

/// How many files a search lists unless asked for another number.
pub const SEARCH_LIMIT: usize = 20;
/// The tokens a task's bundle may hold unless asked for another number.
pub const BUNDLE_BUDGET: usize = 8_000;
/// How many files a task's bundle reads unless asked for another number.
pub const BUNDLE_FILES: usize = 10;

/// A search as a front end passes it on, before it is checked.
#[derive(Clone, Copy, Debug, Default)]
pub struct Search<'a> {
    pub query: &'a str,
    /// At most this many answers; `None`: [`SEARCH_LIMIT`].
    pub limit: Option<usize>,
    /// A kind of definition or a language ([`Filter::parse`]).
    pub kind: Option<&'a str>,
    pub ranking: Ranking,
    /// The definitions themselves, best first across files, rather than files.
    pub functions: bool,
}

impl<'a> Search<'a> {
    /// The search request, checked: a query that is not blank, a known `kind`, a limit of at
    /// least one ([`Error::Request`], [`Error::UnknownFilter`]).
    pub fn request(&self) -> Result<SearchRequest<'a>> {
        if self.query.trim().is_empty() {
            return Err(Error::Request("the search query is empty".to_owned()));
        }
        let limit = self.limit.unwrap_or(SEARCH_LIMIT);
        if limit == 0 {
            return Err(Error::Request(
                "a search's limit must be at least 1".to_owned(),
            ));
        }
        Ok(SearchRequest {
            query: self.query,
            limit,
            filter: search_filter(self.kind)?,
            ranking: self.ranking,
            symbols: MAX_SYMBOLS,
        })
    }
}

/// A search's answer: the files found, or (asked for `functions`) the definitions.
#[derive(Clone, Debug)]
pub enum Found {
    Files(Vec<Hit>),
    Functions(Vec<FunctionHit>),
}

impl Found {
    /// The one JSON every front end answers: a list of [`Hit::json`] or
    /// [`FunctionHit::json`].
    pub fn json(&self) -> Value {
        Value::Array(match self {
            Found::Files(hits) => hits.iter().map(Hit::json).collect(),
            Found::Functions(found) => found.iter().map(FunctionHit::json).collect(),
        })
    }
}

/// `search` over `tree`, with its search index; the request checked ([`Search::request`]).
pub fn search_in(store: &Store, tree: &Snapshot, search: &Search<'_>) -> Result<Found> {
    let req = search.request()?;
    let (facts, index) = (&tree.facts, &*tree.index(store)?);
    Ok(if search.functions {
        Found::Functions(crate::search::search_functions(store, facts, index, &req)?)
    } else {
        Found::Files(crate::search::search(store, facts, index, &req)?)
    })
}

/// Before a search of `query` ranked by `ranking`, so that a front end can show a first read
/// of a long history: the workspace's git history brought in step with HEAD
/// ([`history::bring_in_step`], `progress` given the commits read so far) where that search
/// reads it (a task, ranked fused) and the store's copy is not in step. `None` where nothing
/// was read; else how many commits the history file holds (`None` within: no history), or why
/// git could not read it (which the search says too).
pub fn history_before_search(
    store: &Store,
    query: &str,
    ranking: Ranking,
    progress: &dyn Fn(usize),
) -> Option<std::result::Result<Option<usize>, history::Unread>> {
    search_reads_history(store, query, ranking).then(|| history::bring_in_step(store, progress))
}

/// Whether a search of `query` ranked by `ranking` first reads the workspace's git history,
/// not yet in step with HEAD ([`history_before_search`]): a process that asks another for its
/// searches reads that itself, with its progress shown.
pub fn search_reads_history(store: &Store, query: &str, ranking: Ranking) -> bool {
    ranking == Ranking::Fused
        && crate::search::TaskQuery::parse(query).kind == crate::search::QueryKind::Task
        && !history::in_step(store)
}

/// A task's bundle as a front end passes it on, before it is checked.
#[derive(Clone, Copy, Debug, Default)]
pub struct TaskBundle<'a> {
    pub task: &'a str,
    /// `None`: [`BUNDLE_BUDGET`].
    pub budget: Option<usize>,
    /// `None`: [`BUNDLE_FILES`].
    pub files: Option<usize>,
    /// How the budget counts tokens; by default four bytes a token.
    pub tokens: TokenCounter<'a>,
}

impl<'a> TaskBundle<'a> {
    /// The bundle request, checked: a task that is not blank, a budget and a number of files
    /// of at least one ([`Error::Request`]).
    pub fn request(&self) -> Result<BundleRequest<'a>> {
        if self.task.trim().is_empty() {
            return Err(Error::Request("the task is empty".to_owned()));
        }
        let budget = self.budget.unwrap_or(BUNDLE_BUDGET);
        let files = self.files.unwrap_or(BUNDLE_FILES);
        if budget == 0 || files == 0 {
            return Err(Error::Request(
                "a bundle's budget and files must be at least 1".to_owned(),
            ));
        }
        Ok(BundleRequest {
            task: self.task,
            budget,
            files,
            tokens: self.tokens,
        })
    }
}

/// The bundle of `bundle`'s task over `tree`, with its search index; the request checked
/// ([`TaskBundle::request`]).
pub fn bundle_in(store: &Store, tree: &Snapshot, bundle: &TaskBundle<'_>) -> Result<Bundle> {
    let req = bundle.request()?;
    crate::bundle::bundle_in(store, &tree.facts, &*tree.index(store)?, &req)
}

/// A search's `type`, checked: a kind of definition or a language ([`Filter::parse`]).
pub fn search_filter(kind: Option<&str>) -> Result<Option<Filter>> {
    match kind {
        None => Ok(None),
        Some(t) => Filter::parse(t)
            .map(Some)
            .ok_or_else(|| Error::UnknownFilter { kind: t.to_owned() }),
    }
}

/// The imports and importers of the file at workspace path `path` in the tree `facts`
/// describes; an error saying what `path` is when it is no file of that tree.
pub fn related_in(store: &Store, facts: &TreeFacts, path: &str) -> Result<Vec<Related>> {
    file_related(store, facts, path)?.map_or_else(|| Err(not_a_file(store, path)), Ok)
}

/// [`related_in`], `None` when `path` is no file of the tree (for a first try whose failure
/// is not yet an answer).
pub fn file_related(store: &Store, facts: &TreeFacts, path: &str) -> Result<Option<Vec<Related>>> {
    facts
        .contains(path)
        .then(|| Graph::of_tree(store, facts).map(|g| g.related(path)))
        .transpose()
}

/// The error for a path that names no file of the tree: a directory ([`Error::NotAFile`]), or
/// nothing (the store's `NoSuchPath`).
pub fn not_a_file(store: &Store, path: &str) -> Error {
    match store.node_at(path) {
        Err(e) => e.into(),
        Ok(Some(n)) if n.kind == NodeKind::Dir => Error::NotAFile {
            path: display_path(path).to_owned(),
        },
        Ok(_) => merkle_store::Error::NoSuchPath {
            path: path.to_owned(),
        }
        .into(),
    }
}

/// A node path for messages: the root shows as `.`.
pub fn display_path(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}
