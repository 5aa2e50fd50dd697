//! The checks every front end makes around search and related files, with the errors they
//! answer: a search's filter read from its text, and the imports of a path that must be a file
//! of the tree.
use merkle_store::{NodeKind, Store};

use crate::error::{Error, Result};
use crate::facts::TreeFacts;
use crate::graph::{Graph, Related};
use crate::search::Filter;

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
