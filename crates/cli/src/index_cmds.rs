//! `merkle related`, `merkle search` and `merkle context`: the related-files graph, search and
//! a task's bundle over the tree's facts (context's `facts`, `graph`, `search` and `bundle`),
//! each answering for the tree as it is on disk ([`TreeFacts::on_current_tree`]: the rescan
//! beside a first try on the last scan).
use std::path::Path;

use anyhow::{Context, Result};
use clap::Args;
use context::search::{Filter, Ranking, SearchRequest};
use context::{Graph, Hit, Related, TreeFacts};
use merkle_store::{NodeKind, ScanOptions, Store};
use serde_json::Value;

use crate::output::Out;
use crate::{Global, usage, workspace_path};

#[derive(Args, Debug)]
pub(crate) struct RelatedArgs {
    /// The file: a workspace path
    path: String,
}

#[derive(Args, Debug)]
pub(crate) struct SearchArgs {
    /// What to look for: a symbol name, a question, an issue's text, a traceback or an error
    /// message (`-` reads it from standard input)
    query: String,
    /// At most this many files
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    limit: u64,
    /// Only definitions of this kind (function, method, struct, class, interface, trait, enum,
    /// type, constant, variable, module, macro, ...), or only files of this language (rust,
    /// python, javascript, typescript, tsx, go, java, c, cpp, markdown)
    #[arg(long = "type", value_name = "T")]
    kind: Option<String>,
    /// How files are ranked: `fused` (text, definitions, paths, imports and priors) or
    /// `plain` (BM25 over file text alone: the baseline the fused ranking is measured against)
    #[arg(long, value_enum, default_value = "fused")]
    ranking: RankingArg,
}

#[derive(Args, Debug)]
pub(crate) struct ContextArgs {
    /// The task: an issue's text, a traceback, a question or a symbol name (`-` reads it from
    /// standard input)
    task: String,
    /// The most tokens the bundle may hold (estimated at 4 bytes a token)
    #[arg(long, default_value_t = 8_000, value_parser = clap::value_parser!(u64).range(1..))]
    budget: u64,
    /// At most this many files, best first
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    files: u64,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum RankingArg {
    Fused,
    Plain,
}

pub(crate) fn related(out: &mut Out, g: &Global, root: &Path, args: &RelatedArgs) -> Result<()> {
    let path = workspace_path(root, &args.path)?;
    let related = on_tree_as_it_is(g, root, |store, facts| file_related(store, facts, &path))?
        .map_or_else(|| not_a_file(&crate::open(g, root, true)?, &path), Ok)?;
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
        Value::Array(related.iter().map(Related::json).collect()),
        text,
    );
    Ok(())
}

/// The files related to the file at workspace path `path`, in the tree as it is on disk.
/// The imports and importers of the file at `path` in the tree `facts` describes; an error
/// saying what `path` is when it is no file of that tree.
pub(crate) fn related_in(store: &Store, facts: &TreeFacts, path: &str) -> Result<Vec<Related>> {
    file_related(store, facts, path)?.map_or_else(|| not_a_file(store, path), Ok)
}

fn file_related(
    store: &Store,
    facts: &TreeFacts,
    path: &str,
) -> context::Result<Option<Vec<Related>>> {
    facts
        .contains(path)
        .then(|| Graph::of_tree(store, facts).map(|g| g.related(path)))
        .transpose()
}

/// The error for a path that names no file of the tree: a directory, or nothing.
fn not_a_file(store: &Store, path: &str) -> Result<Vec<Related>> {
    match store.node_at(path)? {
        Some(n) if n.kind == NodeKind::Dir => usage!(
            "{:?} is a directory: related lists the imports of a file",
            crate::display_path(path)
        ),
        _ => Err(merkle_store::Error::NoSuchPath {
            path: path.to_owned(),
        }
        .into()),
    }
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

/// What a query shows of itself in a message: its first line, at most 60 characters.
fn query_label(query: &str) -> String {
    let first = query.trim().lines().next().unwrap_or("");
    let mut label: String = first.chars().take(60).collect();
    if label.len() < query.trim().len() {
        label.push('…');
    }
    format!("{label:?}")
}

/// A query argument: itself, or with `-` standard input, read as text (bytes that are not
/// UTF-8, a pasted binary, become U+FFFD).
fn query_text(arg: &str) -> Result<String> {
    if arg != "-" {
        return Ok(arg.to_owned());
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
        .context("reading the query from standard input")?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

pub(crate) fn context_cmd(
    out: &mut Out,
    g: &Global,
    root: &Path,
    args: &ContextArgs,
) -> Result<()> {
    let task = query_text(&args.task)?;
    if task.trim().is_empty() {
        usage!("the task is empty");
    }
    let budget = usize::try_from(args.budget).unwrap_or(usize::MAX);
    let files = usize::try_from(args.files).unwrap_or(usize::MAX);
    let b = on_tree_as_it_is(g, root, |store, facts| {
        context::bundle::bundle(
            store,
            facts,
            &context::bundle::BundleRequest {
                task: &task,
                budget,
                files,
            },
        )
    })?;
    let text = if b.files.is_empty() && b.omitted.is_empty() {
        format!("no file matches {}", query_label(&task))
    } else {
        b.markdown(budget)
    };
    out.value(b.json(budget), text);
    Ok(())
}

pub(crate) fn search(out: &mut Out, g: &Global, root: &Path, args: &SearchArgs) -> Result<()> {
    let query = query_text(&args.query)?;
    if query.trim().is_empty() {
        usage!("the search query is empty");
    }
    let filter = search_filter(args.kind.as_deref())?;
    let ranking = match args.ranking {
        RankingArg::Fused => Ranking::Fused,
        RankingArg::Plain => Ranking::Plain,
    };
    let limit = usize::try_from(args.limit).unwrap_or(usize::MAX);
    let hits = on_tree_as_it_is(g, root, |store, facts| {
        context::search_tree(
            store,
            facts,
            &SearchRequest {
                query: &query,
                limit,
                filter,
                ranking,
            },
        )
    })?;
    let text = if hits.is_empty() {
        if context::search::has_terms(&query) {
            format!("no file matches {}", query_label(&query))
        } else {
            format!(
                "no file matches {}: it holds only common words (stop words) and no name",
                query_label(&query)
            )
        }
    } else {
        let mut lines = Vec::new();
        for h in &hits {
            lines.push(format!("{} ({})", h.path, h.score));
            for s in &h.symbols {
                lines.push(format!(
                    "  {}-{}: {}",
                    s.line_start, s.line_end, s.signature
                ));
            }
            if !h.why.is_empty() {
                lines.push(format!("  why: {}", h.why.join("; ")));
            }
        }
        lines.join("\n")
    };
    out.value(Value::Array(hits.iter().map(Hit::json).collect()), text);
    Ok(())
}

/// `work`'s answer for the tree as it is on disk. Where nothing changed since the last scan
/// (the usual case) and the import graph is kept for that scan, it runs on a read-only handle
/// beside the rescan's plan, which writes nothing: a writable open and close of the store are
/// durable commits of their own, four `fdatasync`s a search. Otherwise the store is opened for
/// writing, rescanned, and the caches `work` fills (facts, the graph) are kept.
fn on_tree_as_it_is<T: Send>(
    g: &Global,
    root: &Path,
    work: impl Fn(&Store, &TreeFacts) -> context::Result<T> + Sync,
) -> Result<T> {
    if let Ok(reader) = crate::open(g, root, true)
        && let Some(scanned) = reader.root()?
        && Graph::kept_for(&reader) == Some(scanned)
    {
        let (plan, first) = std::thread::scope(|s| {
            let plan = s.spawn(|| reader.plan_scan(&ScanOptions::default()));
            // An error here may be the tree changing under it: the writable path says.
            let first = TreeFacts::listing(&reader)
                .and_then(|facts| Ok((facts.root, work(&reader, &facts)?)))
                .ok();
            let plan = match plan.join() {
                Ok(plan) => plan,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            (plan, first)
        });
        if plan?.unchanged().is_some()
            && let Some((Some(listed), answer)) = first
            && listed == scanned
        {
            return Ok(answer);
        }
    }
    let store = crate::open_existing(g, root)?;
    Ok(TreeFacts::on_current_tree(&store, |facts| {
        work(&store, facts)
    })?)
}
