//! A search asked of another process that holds the workspace (a running `merkle watch`), as
//! one JSON object each way: the asking process sends [`Search::json`], the holding one runs
//! [`served_search`] on its [`Workspace`], whose tree's listing, path table and opened index it
//! keeps from one search to the next, and answers [`Found::json`]. At a million files, making
//! those is most of a search's time in a process of its own.
use serde_json::{Value, json};

use crate::error::Result;
use crate::ops::{Reads, Search, Workspace, find::search_in, history_before_search};
use crate::search::Ranking;

impl Search<'_> {
    /// The search as one JSON object: `{query, limit, kind, ranking, functions}`.
    pub fn json(&self) -> Value {
        json!({
            "query": self.query,
            "limit": self.limit,
            "kind": self.kind,
            "ranking": match self.ranking {
                Ranking::Fused => "fused",
                Ranking::Plain => "plain",
            },
            "functions": self.functions,
        })
    }
}

/// The answer to the search `asked` ([`Search::json`]) over `ws` as the files are now, as
/// [`crate::ops::Found::json`]: what the asking process would have answered itself. `None`
/// for an object that is no search.
pub fn served_search(ws: &Workspace, asked: &Value) -> Option<Result<Value>> {
    let limit = match &asked["limit"] {
        Value::Null => None,
        n => Some(usize::try_from(n.as_u64()?).ok()?),
    };
    let kind = match &asked["kind"] {
        Value::Null => None,
        k => Some(k.as_str()?),
    };
    let search = Search {
        query: asked["query"].as_str()?,
        limit,
        kind,
        ranking: match asked["ranking"].as_str()? {
            "fused" => Ranking::Fused,
            "plain" => Ranking::Plain,
            _ => return None,
        },
        functions: asked["functions"].as_bool()?,
    };
    Some(
        ws.read_facts_as(Reads::Index, |store, tree, _| {
            // The asker reads a history not yet in step itself, with its progress shown.
            let _ = history_before_search(store, search.query, search.ranking, &|_| {});
            search_in(store, tree, &search)
        })
        .map(|found| found.json()),
    )
}

/// Makes ready what a search of `ws` reads (the tree's listing with its table of paths, and
/// its search index brought in step), where the workspace has an index: a process that
/// answers searches does it after each rescan, so that the first search after an edit finds
/// them made. Nothing where no search was ever made (no index is built for no one).
pub fn prepare_searches(ws: &Workspace) -> Result<()> {
    let (root, indexed) = ws.read_stored(|store| {
        let indexed = retrieve::TextIndex::segments_in(&crate::search::index_dir(store));
        Ok::<_, crate::Error>((store.root()?, indexed.is_some()))
    })?;
    if !indexed {
        return Ok(());
    }
    // The last tree's listing and index, kept for searches, freed before the next are made
    // (a rescan just moved the root): at a million files, not held through the import graph's
    // rebuild.
    ws.forget_snapshot_unless(root);
    ws.read_facts_as(Reads::Index, |store, tree, _| {
        tree.facts.path_table();
        tree.index(store).map(drop)
    })
}
