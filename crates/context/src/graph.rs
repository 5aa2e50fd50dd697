//! The related-files graph: every file's resolved imports and, inverted, its importers, built
//! from the tree's cached facts ([`TreeFacts`]) by [`crate::resolve`].
//!
//! It is rebuilt per call from the cache (resolution is a few hash lookups per specifier), so
//! it is always the current tree's and is never stored.
use std::collections::BTreeMap;

use merkle_store::Store;
use rayon::prelude::*;

use crate::error::Result;
use crate::facts::TreeFacts;
use crate::resolve::{self, PathSet};

/// How a related file is related.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Relation {
    /// The file imports it.
    Imports,
    /// It imports the file.
    ImportedBy,
}

impl Relation {
    /// Its name in JSON and text output.
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Imports => "imports",
            Relation::ImportedBy => "imported_by",
        }
    }
}

/// A file related to another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    pub path: String,
    pub relation: Relation,
    /// The line of the import, in the importing file.
    pub line: usize,
    /// The specifier as written there.
    pub specifier: String,
}

/// One resolved import: the importer's line and specifier.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    path: String,
    line: usize,
    specifier: String,
}

/// Imports and importers of every file of a tree.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    imports: BTreeMap<String, Vec<Edge>>,
    imported_by: BTreeMap<String, Vec<Edge>>,
}

impl Graph {
    /// The graph of the tree `facts` describes; `go.mod` files are read from `store` for
    /// their module paths, `Cargo.toml` files for their crates' names and roots.
    pub fn build(store: &Store, facts: &TreeFacts) -> Result<Graph> {
        let mut set = PathSet::new(facts.files.iter().map(|f| f.path.as_str()));
        for f in &facts.files {
            if f.path == "Cargo.toml" || f.path.ends_with("/Cargo.toml") {
                let Some(node) = store.node_at(&f.path)? else {
                    continue;
                };
                if let Ok(bytes) = store.read_content(&node) {
                    set.add_rust_crate(&f.path, &String::from_utf8_lossy(&bytes));
                }
                continue;
            }
            if f.path == "go.mod" || f.path.ends_with("/go.mod") {
                let Some(node) = store.node_at(&f.path)? else {
                    continue;
                };
                // A go.mod that changed since the scan is read at the next rescan.
                if let Ok(bytes) = store.read_content(&node)
                    && let Some(module) = resolve::go_module_path(&String::from_utf8_lossy(&bytes))
                {
                    let folder = f.path.strip_suffix("go.mod").unwrap_or("");
                    set.add_go_module(folder.trim_end_matches('/'), module);
                }
            }
        }
        // Resolution is a few lookups per specifier, but a tree has many: files in parallel.
        // Per importing file, its edges to what it imports.
        let resolved: Vec<(&str, Vec<Edge>)> = facts
            .files
            .par_iter()
            .filter(|f| !f.facts.imports.is_empty())
            .map(|f| {
                let mut out = Vec::new();
                for import in &f.facts.imports {
                    let targets = resolve::resolve(&set, &f.path, import);
                    if targets.is_empty() {
                        continue;
                    }
                    let spec = match &import.name {
                        Some(n) => format!("{} import {n}", import.spec),
                        None => import.spec.clone(),
                    };
                    for target in targets {
                        out.push(Edge {
                            path: target,
                            line: import.line,
                            specifier: spec.clone(),
                        });
                    }
                }
                (f.path.as_str(), out)
            })
            .collect();
        let mut graph = Graph::default();
        for (path, edges) in resolved.into_iter().filter(|(_, e)| !e.is_empty()) {
            for e in &edges {
                graph
                    .imported_by
                    .entry(e.path.clone())
                    .or_default()
                    .push(Edge {
                        path: path.to_owned(),
                        line: e.line,
                        specifier: e.specifier.clone(),
                    });
            }
            graph
                .imports
                .entry(path.to_owned())
                .or_default()
                .extend(edges);
        }
        for edges in graph
            .imports
            .values_mut()
            .chain(graph.imported_by.values_mut())
        {
            edges.sort();
            // One entry per file: its first import line.
            edges.dedup_by(|b, a| a.path == b.path);
        }
        Ok(graph)
    }

    /// The files `path` imports, then the files that import it, each by path.
    pub fn related(&self, path: &str) -> Vec<Related> {
        let out = |relation, edges: Option<&Vec<Edge>>| {
            edges
                .into_iter()
                .flatten()
                .map(move |e| Related {
                    path: e.path.clone(),
                    relation,
                    line: e.line,
                    specifier: e.specifier.clone(),
                })
                .collect::<Vec<_>>()
        };
        let mut r = out(Relation::Imports, self.imports.get(path));
        r.extend(out(Relation::ImportedBy, self.imported_by.get(path)));
        r
    }

    /// How many files import each file that any file imports.
    pub fn importer_counts(&self) -> BTreeMap<&str, usize> {
        self.imported_by
            .iter()
            .map(|(p, e)| (p.as_str(), e.len()))
            .collect()
    }
}
