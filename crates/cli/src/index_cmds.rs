//! `merkle related` and `merkle search`: the related-files graph and symbol search over the
//! tree's facts (context's `facts`, `graph` and `search`), after an incremental rescan so that
//! they answer for the files as they are now.
use std::path::Path;

use anyhow::{Context, Result};
use clap::Args;
use context::search::{Filter, SearchRequest};
use context::{Graph, Hit, Related, TreeFacts};
use merkle_store::{NodeKind, ScanOptions, Store};
use serde_json::{Value, json};

use crate::output::Out;
use crate::{usage, workspace_path};

#[derive(Args, Debug)]
pub(crate) struct RelatedArgs {
    /// The file: a workspace path
    path: String,
}

#[derive(Args, Debug)]
pub(crate) struct SearchArgs {
    /// What to look for: a symbol name, part of one, a file or folder name, or words of a
    /// frame; several words add up
    query: String,
    /// At most this many files
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Only definitions of this kind (function, method, struct, class, interface, trait, enum,
    /// type, constant, variable, module, macro, ...), or only files of this language (rust,
    /// python, javascript, typescript, tsx, go, java, c, cpp, markdown)
    #[arg(long = "type", value_name = "T")]
    kind: Option<String>,
    /// The frame type whose head frames are searched
    #[arg(long = "frame-type", value_name = "TYPE", default_value = "summary")]
    frame_type: String,
}

/// The store's facts for the tree as it is on disk now.
pub(crate) fn current_facts(store: &Store) -> Result<TreeFacts> {
    store
        .scan(&ScanOptions::default())
        .context("rescanning the workspace")?;
    Ok(TreeFacts::load(store)?)
}

/// A related file as JSON: `{path, relation, line, specifier}`.
pub(crate) fn related_json(r: &Related) -> Value {
    json!({
        "path": r.path,
        "relation": r.relation.as_str(),
        "line": r.line,
        "specifier": r.specifier,
    })
}

/// A search hit as JSON: `{path, score, matches: [{line, text, symbol}]}`.
pub(crate) fn hit_json(h: &Hit) -> Value {
    json!({
        "path": h.path,
        "score": h.score,
        "matches": h.matches.iter().map(|m| json!({
            "line": m.line,
            "text": m.text,
            "symbol": m.symbol,
        })).collect::<Vec<_>>(),
    })
}

pub(crate) fn related(out: &mut Out, store: &Store, root: &Path, args: &RelatedArgs) -> Result<()> {
    let path = workspace_path(root, &args.path)?;
    let related = related_of(store, &path)?;
    let text = if related.is_empty() {
        format!("{path}: no imports and no importers in the workspace")
    } else {
        related
            .iter()
            .map(|r| {
                format!(
                    "{:<11} {} (line {}: {})",
                    r.relation.as_str(),
                    r.path,
                    r.line,
                    r.specifier
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    out.value(
        Value::Array(related.iter().map(related_json).collect()),
        text,
    );
    Ok(())
}

/// The files related to the file at workspace path `path`, after a rescan.
pub(crate) fn related_of(store: &Store, path: &str) -> Result<Vec<Related>> {
    let facts = current_facts(store)?;
    if !facts.contains(path) {
        match store.node_at(path)? {
            Some(n) if n.kind == NodeKind::Dir => usage!(
                "{:?} is a directory: related lists the imports of a file",
                crate::display_path(path)
            ),
            _ => {
                return Err(merkle_store::Error::NoSuchPath {
                    path: path.to_owned(),
                }
                .into());
            }
        }
    }
    let graph = Graph::build(store, &facts)?;
    Ok(graph.related(path))
}

/// The `--type` of a search, checked.
pub(crate) fn search_filter(kind: Option<&str>) -> Result<Option<Filter>> {
    match kind {
        None => Ok(None),
        Some(t) => match Filter::parse(t) {
            Some(f) => Ok(Some(f)),
            None => usage!(
                "--type {t:?} is neither a kind of definition (function, method, struct, class, \
                 ...) nor a language (rust, python, typescript, ...)"
            ),
        },
    }
}

/// The hits of a search over the current tree.
pub(crate) fn run_search(
    store: &Store,
    query: &str,
    limit: usize,
    filter: Option<Filter>,
    frame_type: &str,
) -> Result<Vec<Hit>> {
    let facts = current_facts(store)?;
    Ok(context::search(
        store,
        &facts,
        &SearchRequest {
            query,
            limit,
            filter,
            frame_type,
        },
    )?)
}

pub(crate) fn search(out: &mut Out, store: &Store, args: &SearchArgs) -> Result<()> {
    if args.query.trim().is_empty() {
        usage!("the search query is empty");
    }
    let filter = search_filter(args.kind.as_deref())?;
    let hits = run_search(store, &args.query, args.limit, filter, &args.frame_type)?;
    let text = if hits.is_empty() {
        format!("no file matches {:?}", args.query)
    } else {
        let mut lines = Vec::new();
        for h in &hits {
            lines.push(format!("{} ({})", h.path, h.score));
            for m in &h.matches {
                match m.line {
                    Some(line) => lines.push(format!("  {line}: {}", m.text)),
                    None => lines.push(format!("  {}", m.text)),
                }
            }
        }
        lines.join("\n")
    };
    out.value(Value::Array(hits.iter().map(hit_json).collect()), text);
    Ok(())
}
