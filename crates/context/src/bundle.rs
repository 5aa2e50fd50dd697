//! A task's context within a token budget: the files a search finds for the task and, in each,
//! the source of the definitions that matched (a file with none: its outline), best first,
//! until the budget is spent. What `merkle context`, the MCP `context` tool and the agent's
//! `task_context` tool give, ready to paste into a prompt.
//!
//! Tokens are estimated at four bytes each, as the LLM producers count them; the budget bounds
//! the estimate of the Markdown of the files and their sections (headings and fences
//! included; the bundle's first line and its list of files left out are not counted). Nothing is cut mid-line: a definition longer than
//! [`MAX_SECTION_LINES`] keeps its first lines and says how many it left out, and a section
//! that does not fit what is left of the budget is left out whole (its file is then named in
//! [`Bundle::omitted`] if nothing of it fitted).
use merkle_store::{NodeKind, Store};
use retrieve::TextIndex;

use crate::error::Result;
use crate::facts::TreeFacts;
use crate::regenerate::{FrameProducer, Outline};
use crate::search::{Hit, Ranking, SearchRequest, index_dir, search, sync_index};

/// The most lines of one definition in a bundle.
pub const MAX_SECTION_LINES: usize = 150;
/// The most definitions of one file in a bundle.
pub const MAX_SECTIONS: usize = 3;

/// What to bundle.
#[derive(Clone, Copy, Debug)]
pub struct BundleRequest<'a> {
    /// The task: an issue, a traceback, a question, a symbol name.
    pub task: &'a str,
    /// The most tokens the bundle may hold (estimated).
    pub budget: usize,
    /// The most files to look at, best first.
    pub files: usize,
}

/// A piece of a file in a bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// `definition` (a matched definition's source) or `outline` (the file's outline).
    pub kind: &'static str,
    /// The definition's name; `None` for an outline.
    pub name: Option<String>,
    /// The 1-based lines it covers (an outline covers the whole file).
    pub line_start: usize,
    pub line_end: usize,
    /// Its text: the source lines as they are, or the outline.
    pub text: String,
}

/// A file in a bundle.
#[derive(Clone, Debug, PartialEq)]
pub struct BundleFile {
    pub path: String,
    /// Its search score.
    pub score: f64,
    /// Why the search found it.
    pub why: Vec<String>,
    pub sections: Vec<Section>,
}

/// A task's context.
#[derive(Clone, Debug, PartialEq)]
pub struct Bundle {
    /// The files, best first, each with what fitted of it.
    pub files: Vec<BundleFile>,
    /// The estimated tokens of the sections (what [`BundleRequest::budget`] bounds).
    pub tokens: usize,
    /// Files the search found that nothing of fitted, best first.
    pub omitted: Vec<String>,
}

impl Bundle {
    /// The bundle as every front end answers it: `{budget, tokens, files: [{path, score,
    /// why, sections: [{kind, name, line_start, line_end, text}]}], omitted}`.
    pub fn json(&self, budget: usize) -> serde_json::Value {
        serde_json::json!({
            "budget": budget,
            "tokens": self.tokens,
            "files": self.files.iter().map(|f| serde_json::json!({
                "path": f.path,
                "score": f.score,
                "why": f.why,
                "sections": f.sections.iter().map(|s| serde_json::json!({
                    "kind": s.kind,
                    "name": s.name,
                    "line_start": s.line_start,
                    "line_end": s.line_end,
                    "text": s.text,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "omitted": self.omitted,
        })
    }

    /// The bundle as Markdown to paste into a prompt: per file a heading and why it was found,
    /// then each section under its name and line span, in a fenced block tagged with the
    /// file's language; last, the files over the budget.
    pub fn markdown(&self, budget: usize) -> String {
        let files = match self.files.len() {
            1 => "1 file".to_owned(),
            n => format!("{n} files"),
        };
        let mut out = format!(
            "# Context: {files} (about {} of {budget} tokens)\n",
            self.tokens
        );
        for f in &self.files {
            out.push_str(&file_heading(&f.path, &f.why));
            for s in &f.sections {
                out.push_str(&section_markdown(&f.path, s));
            }
        }
        if !self.omitted.is_empty() {
            out.push_str(&format!(
                "\nalso found, over the budget: {}\n",
                self.omitted.join(", ")
            ));
        }
        out.trim_end().to_owned()
    }
}

/// A file's heading in the Markdown: its path, and why the search found it.
fn file_heading(path: &str, why: &[String]) -> String {
    let mut out = format!("\n## {path}\n");
    if !why.is_empty() {
        out.push_str(&format!("why: {}\n", why.join("; ")));
    }
    out
}

/// A section in the Markdown: its name and lines, then its text in a fence longer than any run
/// of backticks in it (a Markdown file's own fences, a doc comment's example).
fn section_markdown(path: &str, s: &Section) -> String {
    let (label, tag) = match &s.name {
        Some(name) => (
            format!("{name}, lines {}-{}:", s.line_start, s.line_end),
            crate::language(path).to_ascii_lowercase(),
        ),
        None => ("outline:".to_owned(), "text".to_owned()),
    };
    let longest = s.text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("\n{label}\n{fence}{tag}\n{}\n{fence}\n", s.text)
}

/// The tokens `text` is estimated to cost: four bytes each, rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// The context of `req.task` in the tree `facts` describes (see the module documentation),
/// with the index beside the store brought in step first.
pub fn bundle(store: &Store, facts: &TreeFacts, req: &BundleRequest<'_>) -> Result<Bundle> {
    let (index, _) = sync_index(store, facts, &index_dir(store))?;
    bundle_in(store, facts, &index, req)
}

/// [`bundle`] with `index` already in step with `facts` (by the caller, who may share it).
pub fn bundle_in(
    store: &Store,
    facts: &TreeFacts,
    index: &TextIndex,
    req: &BundleRequest<'_>,
) -> Result<Bundle> {
    let hits = search(
        store,
        facts,
        index,
        &SearchRequest {
            query: req.task,
            limit: req.files,
            filter: None,
            ranking: Ranking::Fused,
            symbols: crate::search::MAX_SYMBOLS,
        },
    )?;
    let mut out = Bundle {
        files: Vec::new(),
        tokens: 0,
        omitted: Vec::new(),
    };
    for hit in hits {
        let sections = sections_of(store, &hit)?;
        let mut kept = Vec::new();
        // What the file's heading costs in the Markdown, charged with its first section.
        let heading = estimate_tokens(&file_heading(&hit.path, &hit.why));
        for s in sections {
            let cost = estimate_tokens(&section_markdown(&hit.path, &s))
                + if kept.is_empty() { heading } else { 0 };
            if out.tokens + cost <= req.budget {
                out.tokens += cost;
                kept.push(s);
            }
        }
        if kept.is_empty() {
            out.omitted.push(hit.path);
        } else {
            out.files.push(BundleFile {
                path: hit.path,
                score: hit.score,
                why: hit.why,
                sections: kept,
            });
        }
    }
    Ok(out)
}

/// What a hit offers: its matched definitions' source, best first, none overlapping another
/// already taken; a file without one, its outline.
fn sections_of(store: &Store, hit: &Hit) -> Result<Vec<Section>> {
    let Some(node) = store.node_at(&hit.path)? else {
        return Ok(Vec::new());
    };
    if node.kind != NodeKind::File {
        return Ok(Vec::new());
    }
    // A file that changed or vanished since the scan is left out, not an error.
    let Ok(content) = store.read_content(&node) else {
        return Ok(Vec::new());
    };
    let Ok(text) = std::str::from_utf8(&content) else {
        return Ok(Vec::new());
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut taken: Vec<(usize, usize)> = Vec::new();
    let mut out = Vec::new();
    for s in &hit.symbols {
        if out.len() == MAX_SECTIONS {
            break;
        }
        let (start, end) = (s.line_start.max(1), s.line_end.min(lines.len()));
        // One span of source once: a definition that overlaps what is shown of one taken is
        // left out (a method past the part of its class that is shown is not).
        if start > end || taken.iter().any(|&(a, b)| a <= end && start <= b) {
            continue;
        }
        let shown = end.min(start + MAX_SECTION_LINES - 1);
        taken.push((start, shown));
        let mut body = lines[start - 1..shown].join("\n");
        if shown < end {
            body.push_str(&format!("\n… {} more lines", end - shown));
        }
        out.push(Section {
            kind: "definition",
            name: Some(s.name.clone()),
            line_start: start,
            line_end: end,
            text: body,
        });
    }
    if out.is_empty() {
        let outline = Outline::default()
            .produce(&node, &content)
            .unwrap_or_default();
        out.push(Section {
            kind: "outline",
            name: None,
            line_start: 1,
            line_end: lines.len().max(1),
            text: String::from_utf8_lossy(&outline).trim_end().to_owned(),
        });
    }
    Ok(out)
}
