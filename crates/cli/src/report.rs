//! `merkle report`: the state of the context for CI, and what changed since a root hash or a git
//! revision, as Markdown (for a pull request comment) or JSON. The document is
//! [`context::ops::report`]'s; this renders it.

use std::io::Write;

use anyhow::{Context, Result};
use clap::Args;
use merkle_store::Store;
use serde_json::Value;

#[derive(Args, Debug)]
pub(crate) struct ReportArgs {
    /// Compare with this tree: a root hash (or a unique prefix of 8+ hex digits) from an earlier
    /// scan, or a git revision (HEAD~1, main, a commit)
    #[arg(long, value_name = "REV_OR_ROOT_HASH")]
    since: Option<String>,
    /// Markdown for people and pull requests, or JSON (as --json)
    #[arg(long, value_parser = ["md", "json"], default_value = "md")]
    format: String,
}

/// Lines of each list the Markdown shows; JSON has them all.
const MD_LIMIT: usize = 100;

pub(crate) fn report(store: &Store, args: &ReportArgs, json_flag: bool) -> Result<()> {
    let document = context::ops::report(store, args.since.as_deref())?.json();
    let mut stdout = std::io::stdout().lock();
    if json_flag || args.format == "json" {
        writeln!(
            stdout,
            "{}",
            serde_json::to_string_pretty(&document).context("printing the report")?
        )?;
    } else {
        write!(stdout, "{}", markdown(&document))?;
    }
    Ok(())
}

fn markdown(d: &Value) -> String {
    let mut md = String::from("# merkle report\n\n");
    md.push_str(&format!(
        "- root: `{}`\n- files: {}, directories: {}, frames: {}\n",
        d["root"].as_str().unwrap_or_default(),
        d["files"],
        d["dirs"],
        d["frames"]
    ));
    let stale = d["stale"].as_object().cloned().unwrap_or_default();
    if stale.is_empty() {
        md.push_str("- stale frames: none\n");
    } else {
        md.push_str("\n## Stale frames\n\n| type | stale |\n|---|---|\n");
        for (ty, n) in &stale {
            md.push_str(&format!("| {ty} | {n} |\n"));
        }
    }
    if let Some(since) = d.get("since") {
        md.push_str(&format!(
            "\n## Since {} (`{}`)\n",
            since["given"].as_str().unwrap_or_default(),
            since["root"].as_str().unwrap_or_default()
        ));
        for key in ["added", "removed", "changed"] {
            let items = since[key].as_array().cloned().unwrap_or_default();
            md.push_str(&format!("\n### {} ({})\n\n", capitalize(key), items.len()));
            if items.is_empty() {
                md.push_str("none\n");
            }
            for item in items.iter().take(MD_LIMIT) {
                let slash = if item["kind"] == "dir" { "/" } else { "" };
                let path = item["path"].as_str().unwrap_or_default();
                md.push_str(&format!(
                    "- `{}{slash}`\n",
                    if path.is_empty() { "." } else { path }
                ));
            }
            if items.len() > MD_LIMIT {
                md.push_str(&format!("- ... and {} more\n", items.len() - MD_LIMIT));
            }
        }
        let frames = since["frames_added"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        md.push_str(&format!(
            "\n### Frames on added or changed nodes ({})\n\n",
            frames.len()
        ));
        if frames.is_empty() {
            md.push_str("none\n");
        } else {
            md.push_str("| path | type | agent | frame |\n|---|---|---|---|\n");
            for f in frames.iter().take(MD_LIMIT) {
                let field = |key: &str| f[key].as_str().unwrap_or_default();
                let id = field("frame_id");
                md.push_str(&format!(
                    "| `{}` | {} | {} | `{}` |\n",
                    field("path"),
                    field("frame_type"),
                    field("agent_id"),
                    &id[..id.len().min(12)]
                ));
            }
            if frames.len() > MD_LIMIT {
                md.push_str(&format!("\n... and {} more\n", frames.len() - MD_LIMIT));
            }
        }
    }
    md
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
