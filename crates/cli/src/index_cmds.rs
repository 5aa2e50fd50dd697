//! `merkle related`, `merkle search` and `merkle context`: the related-files graph, search and
//! a task's bundle over the tree's facts (context's `facts`, `graph`, `search` and `bundle`),
//! each answering for the tree as it is on disk ([`context::ops::Workspace::read_facts`]:
//! the rescan beside a first try on the last scan).
use std::path::Path;

use anyhow::{Context, Result};
use clap::Args;
use context::search::Ranking;
use context::{Related, ops};
use serde_json::Value;

use crate::output::Out;
use crate::{Global, workspace_path};

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
    #[arg(long, default_value_t = ops::SEARCH_LIMIT as u64, value_parser = crate::at_least_one::<u64>)]
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
    /// List the definitions themselves, best first across files (path, name, kind, lines,
    /// score and why; at most --limit), rather than files
    #[arg(long)]
    functions: bool,
}

#[derive(Args, Debug)]
pub(crate) struct ContextArgs {
    /// The task: an issue's text, a traceback, a question or a symbol name (`-` reads it from
    /// standard input)
    task: String,
    /// The most tokens the bundle may hold (estimated at 4 bytes a token)
    #[arg(long, default_value_t = ops::BUNDLE_BUDGET as u64, value_parser = crate::at_least_one::<u64>)]
    budget: u64,
    /// At most this many files, best first
    #[arg(long, default_value_t = ops::BUNDLE_FILES as u64, value_parser = crate::at_least_one::<u64>)]
    files: u64,
    /// Count the budget in this model's tokens: its tokenizer for OpenAI's models (exact), else
    /// merkle's estimate scaled by what the model's answers in this workspace taught it
    /// (`.merkle/llm-calibration.json`), else the estimate alone; the output says which
    /// [default: four bytes a token]
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum RankingArg {
    Fused,
    Plain,
}

pub(crate) fn related(out: &mut Out, g: &Global, root: &Path, args: &RelatedArgs) -> Result<()> {
    let path = workspace_path(root, &args.path)?;
    let related = crate::workspace(g, root)
        .read_facts(|store, tree, _| ops::file_related(store, &tree.facts, &path))?
        .map_or_else(
            || {
                Err(anyhow::Error::from(ops::not_a_file(
                    &crate::open(g, root, true)?,
                    &path,
                )))
            },
            Ok,
        )?;
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
    let counter = args.model.as_deref().map(|model| {
        let calibration = crate::calibration::shared().snapshot();
        (model, llm_core::TextCounter::new(model, &calibration))
    });
    let count = |text: &str| {
        counter.as_ref().map_or(0, |(_, c)| {
            usize::try_from(c.count(text)).unwrap_or(usize::MAX)
        })
    };
    let asked = ops::TaskBundle {
        task: &task,
        budget: Some(usize::try_from(args.budget).unwrap_or(usize::MAX)),
        files: Some(usize::try_from(args.files).unwrap_or(usize::MAX)),
        tokens: match counter {
            Some(_) => context::bundle::TokenCounter::new(&count),
            None => context::bundle::TokenCounter::default(),
        },
    };
    let budget = asked.request()?.budget;
    let b = crate::workspace(g, root).read_facts_as(ops::Reads::Index, |store, tree, _| {
        crate::output::read_history(g, store, &task, Ranking::Fused);
        ops::bundle_in(store, tree, &asked)
    })?;
    let mut text = if b.files.is_empty() && b.omitted.is_empty() {
        format!("no file matches {}", query_label(&task))
    } else {
        b.markdown(budget)
    };
    let mut json = b.json(budget);
    if let Some((model, c)) = &counter {
        json["counted"] = serde_json::json!({"model": model, "source": c.source().as_str()});
        text.push_str(&format!("\n({})\n", counted_by(model, c.source())));
    }
    out.value(json, text);
    Ok(())
}

/// How `context --model` counted, in words.
fn counted_by(model: &str, source: llm_core::CountSource) -> String {
    use llm_core::CountSource;
    match source {
        CountSource::Provider | CountSource::Tokenizer => {
            format!("tokens counted with {model}'s tokenizer")
        }
        CountSource::Calibrated => format!(
            "tokens estimated for {model}, calibrated by its earlier answers in this workspace"
        ),
        CountSource::Estimate => format!(
            "tokens estimated for {model}: no answer of it has calibrated the estimate in this \
             workspace yet"
        ),
    }
}

pub(crate) fn search(out: &mut Out, g: &Global, root: &Path, args: &SearchArgs) -> Result<()> {
    let query = query_text(&args.query)?;
    let search = ops::Search {
        query: &query,
        limit: Some(usize::try_from(args.limit).unwrap_or(usize::MAX)),
        kind: args.kind.as_deref(),
        ranking: match args.ranking {
            RankingArg::Fused => Ranking::Fused,
            RankingArg::Plain => Ranking::Plain,
        },
        functions: args.functions,
    };
    search.request()?;
    let json = match asked_of_watch(g, root, &search) {
        Some(json) => json,
        None => crate::workspace(g, root)
            .read_facts_as(ops::Reads::Index, |store, tree, _| {
                crate::output::read_history(g, store, &query, search.ranking);
                ops::search_in(store, tree, &search)
            })?
            .json(),
    };
    let text = if args.functions {
        functions_text(&json, &query)
    } else {
        files_text(g, &json, &query)
    };
    out.value(json, text);
    Ok(())
}

/// The answer of a running `merkle watch` to `search` ([`::watch::asked::search`]); `-v` says
/// it answered.
fn asked_of_watch(g: &Global, root: &Path, search: &ops::Search<'_>) -> Option<Value> {
    let answer = ::watch::asked::search(&crate::workspace(g, root), search)?;
    if g.verbose {
        eprintln!("note: answered by the running `merkle watch`");
    }
    Some(answer)
}

/// A search's files (`json`: [`ops::Found::json`]) as text: each one's path and score, its
/// best definitions' lines and signatures, and why it matched.
fn files_text(g: &Global, json: &Value, query: &str) -> String {
    let hits = json.as_array().map(Vec::as_slice).unwrap_or_default();
    // Every hit carries it: said once.
    if g.verbose
        && let Some(why) = hits.iter().find_map(|h| h["history_missing"].as_str())
    {
        eprintln!("warning: past fixes left out of the ranking: {why}");
    }
    if hits.is_empty() {
        return if context::search::has_terms(query) {
            format!("no file matches {}", query_label(query))
        } else {
            format!(
                "no file matches {}: it holds only common words (stop words) and no name",
                query_label(query)
            )
        };
    }
    let mut lines = Vec::new();
    for h in hits {
        lines.push(format!(
            "{} ({})",
            text_of(&h["path"]),
            score_of(&h["score"])
        ));
        for s in h["symbols"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            lines.push(format!(
                "  {}-{}: {}",
                s["line_start"],
                s["line_end"],
                text_of(&s["signature"])
            ));
        }
        let why = strings(&h["why"]);
        if !why.is_empty() {
            lines.push(format!("  why: {}", why.join("; ")));
        }
    }
    lines.join("\n")
}

/// `search --functions` (`json`: [`ops::Found::json`]) as text: one line a definition
/// (`path:start-end name (kind) score`), then its signature and why its file matched.
fn functions_text(json: &Value, query: &str) -> String {
    let found = json.as_array().map(Vec::as_slice).unwrap_or_default();
    if found.is_empty() {
        return format!("no definition matches {}", query_label(query));
    }
    let mut lines = Vec::new();
    for f in found {
        lines.push(format!(
            "{}:{}-{} {} ({}) {}",
            text_of(&f["path"]),
            f["line_start"],
            f["line_end"],
            text_of(&f["name"]),
            text_of(&f["kind"]),
            score_of(&f["score"])
        ));
        lines.push(format!("  {}", text_of(&f["signature"])));
        let why = strings(&f["why"]);
        if !why.is_empty() {
            lines.push(format!("  why: {}", why.join("; ")));
        }
    }
    lines.join("\n")
}

/// A JSON string's text (empty for anything else).
fn text_of(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// A score as Rust prints the number (`2`, not JSON's `2.0`).
fn score_of(v: &Value) -> f64 {
    v.as_f64().unwrap_or_default()
}

/// A JSON list of strings.
fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}
