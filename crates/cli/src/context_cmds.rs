//! The context commands: `get-node` with views, `synthesize`, `regenerate`, `invalidate` and
//! `views`.
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use clap::{Args, Subcommand};
use context::views_file::{ViewRequest, ViewSpec};
use context::{
    ContextView, NodeContext, Outline, Producers, RegenerateRequest, RegenerateScope, ViewsFile,
};
use merkle_store::{NodeRecord, Store};
use serde_json::{Value, json};

use crate::output::{self, Out};
use crate::{display_path, resolve, workspace_path};

/// Which frames `get-node` shows: a named view, then flags overriding its fields.
#[derive(Args, Debug, Default)]
pub(crate) struct ViewArgs {
    /// A named view from .merkle/views.yaml [default: the view named `default` if any, else the
    /// node's head frames]
    #[arg(long, value_name = "NAME")]
    pub(crate) view: Option<String>,
    /// At most this many frames
    #[arg(value_parser = crate::at_least_one::<usize>, long, value_name = "N")]
    pub(crate) max_frames: Option<usize>,
    /// Only frames of this type (repeatable)
    #[arg(long = "type", value_name = "TYPE")]
    pub(crate) types: Vec<String>,
    /// Only frames by this agent (repeatable)
    #[arg(long = "agent", value_name = "AGENT")]
    pub(crate) agents: Vec<String>,
    /// Where frames come from: node, parent, siblings, related (the files it imports and that
    /// import it, unless --related lists nodes) (comma-separated)
    #[arg(long, value_name = "SOURCES", value_delimiter = ',', value_parser = ["node", "parent", "siblings", "related"])]
    pub(crate) source: Vec<String>,
    /// Also frames of this node: a path or NodeID (repeatable)
    #[arg(long, value_name = "NODE")]
    pub(crate) related: Vec<String>,
    /// Order: recency, relevance, type_priority, agent_priority
    #[arg(long, value_name = "ORDER", value_parser = ["recency", "relevance", "type_priority", "agent_priority"])]
    pub(crate) ordering: Option<String>,
    /// The priority list for type_priority / agent_priority (comma-separated)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub(crate) priority: Vec<String>,
    /// Include superseded frames, not only heads
    #[arg(long)]
    pub(crate) all: bool,
}

impl ViewArgs {
    /// The flags as the request every front end makes ([`context::views_file::ViewRequest`]).
    pub(crate) fn request(&self) -> ViewRequest {
        ViewRequest {
            view: self.view.clone(),
            max_frames: self.max_frames,
            types: self.types.clone(),
            agents: self.agents.clone(),
            sources: self.source.clone(),
            related: self.related.clone(),
            ordering: self.ordering.clone(),
            priority: self.priority.clone(),
            all: self.all,
        }
    }
}

/// The view a request names, related nodes resolved as the CLI resolves paths (relative to
/// the current folder inside the workspace).
pub(crate) fn view(store: &Store, root: &Path, request: &ViewRequest) -> Result<ContextView> {
    let name = request
        .view
        .clone()
        .unwrap_or_else(|| "(default)".to_owned());
    let mut resolver = |s: &str| -> context::Result<merkle_store::NodeId> {
        resolve(store, root, s)
            .map(|n| n.node_id)
            .map_err(|e| context::Error::InvalidView {
                view: name.clone(),
                message: format!("related node {s:?}: {e:#}"),
            })
    };
    Ok(request.compose(root, &mut resolver)?)
}

/// `get-node`'s answer, read from the tree of `root`; `stale`: files changed on disk since
/// that scan and could not be scanned in.
pub(crate) fn print_node_context(
    out: &mut Out,
    c: &NodeContext,
    root: Option<merkle_store::NodeId>,
    stale: bool,
) {
    // The context first; the node's ids and its children's under -v.
    let n = &c.node;
    let mut text = match n.children.len() {
        0 => format!("{} ({})", display_path(&n.path), n.kind.as_str()),
        k => format!(
            "{} ({}, {k} {})",
            display_path(&n.path),
            n.kind.as_str(),
            if k == 1 { "child" } else { "children" }
        ),
    };
    if c.frame_count == 0 {
        text.push_str("\nno frames yet: `merkle generate -r` gives every file and folder one");
    } else {
        text.push_str(&format!(
            "\n{} of {}",
            c.frames.len(),
            output::count(c.frame_count as u64, "frame")
        ));
    }
    for f in &c.frames {
        text.push_str("\n\n");
        if f.path != c.node.path {
            text.push_str(&format!(
                "from {} ({})\n",
                display_path(&f.path),
                f.source.as_str()
            ));
        }
        text.push_str(&output::frame_text(&f.frame, out.verbose));
    }
    for s in &c.skipped {
        text.push_str(&format!("\nskipped: {s}"));
    }
    if out.verbose {
        text.push_str("\n\n");
        text.push_str(&output::node_text(n));
    }
    if stale {
        text.push_str(
            "\n\nstale: files changed on disk since the last scan, and another process holds \
             the store for writing; this is the last scan's tree",
        );
    }
    out.value(
        context::ops::read_from(context::ops::node_context_json(c), root, stale),
        text,
    );
}

/// The synthesis policy flags.
#[derive(Args, Debug)]
pub(crate) struct SynthesizeArgs {
    /// The directory
    pub(crate) dir: String,
    /// The frame type to collect from children and write (`*`: every type)
    #[arg(long = "type", value_name = "TYPE", default_value = "summary")]
    pub(crate) frame_type: String,
    /// The writing agent (needs the synthesis role)
    #[arg(long, env = "MERKLE_AGENT")]
    pub(crate) agent: String,
    /// How children's frames become the directory's: concat, summary, filter, or map (the
    /// offline directory map `generate` writes, its children ranked by the import graph)
    #[arg(long, default_value = "concat", value_parser = ["concat", "summary", "filter", "map"])]
    pub(crate) policy: String,
    /// With --policy filter: keep child frames whose content contains this text
    #[arg(long, value_name = "TEXT", required_if_eq("policy", "filter"))]
    pub(crate) contains: Option<String>,
    /// Synthesize the whole subtree bottom-up, children before parents
    #[arg(short, long)]
    pub(crate) recursive: bool,
}

pub(crate) fn synthesize(
    out: &mut Out,
    store: &Store,
    root: &Path,
    a: &SynthesizeArgs,
) -> Result<()> {
    // The directory as it is now, as from MCP and the agent's tools.
    if store.root()?.is_some() {
        store.scan(&merkle_store::ScanOptions::default())?;
    }
    let dir = resolve(store, root, &a.dir)?;
    let (json, text) = synthesize_node(store, &dir, a)?;
    out.value(json, text);
    Ok(())
}

/// Synthesizes `dir` (resolved from `a.dir` by the caller) as `a` says
/// ([`context::ops::synthesize_dir`]); returns the JSON document and the text report.
pub(crate) fn synthesize_node(
    store: &Store,
    dir: &NodeRecord,
    a: &SynthesizeArgs,
) -> Result<(Value, String)> {
    let done = context::ops::synthesize_dir(
        store,
        dir,
        &context::ops::Synthesize {
            frame_type: &a.frame_type,
            agent: &a.agent,
            policy: &a.policy,
            contains: a.contains.as_deref(),
            recursive: a.recursive,
        },
    )?;
    let text = done
        .iter()
        .map(|s| {
            format!(
                "{}  {}{}",
                s.frame_id,
                display_path(&s.path),
                if s.created { "" } else { " (unchanged)" }
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    Ok((context::ops::synthesized_json(&done, a.recursive), text))
}

/// The regeneration scope.
#[derive(Args, Debug)]
pub(crate) struct RegenerateArgs {
    /// The node to regenerate
    path: String,
    /// Also every node below it
    #[arg(short, long)]
    recursive: bool,
    /// Also propagate to this many ancestors
    #[arg(long, value_name = "N", conflicts_with = "to")]
    up: Option<usize>,
    /// Also propagate to the ancestors up to and including this directory
    #[arg(long, value_name = "DIR")]
    to: Option<String>,
}

pub(crate) fn regenerate(
    out: &mut Out,
    store: &Store,
    root: &Path,
    a: &RegenerateArgs,
) -> Result<()> {
    let node = resolve(store, root, &a.path)?;
    let up = match &a.to {
        Some(to) => {
            let to = workspace_path(root, to)?;
            let inside =
                to.is_empty() || node.path == to || node.path.starts_with(&format!("{to}/"));
            if !inside {
                crate::usage!(
                    "--to {to:?} is not an ancestor of {:?}",
                    display_path(&node.path)
                );
            }
            let depth = |p: &str| {
                if p.is_empty() {
                    0
                } else {
                    p.matches('/').count() + 1
                }
            };
            Some(depth(&node.path) - depth(&to))
        }
        None => a.up,
    };
    let producers = Producers::default().with_known(Arc::new(Outline::default()));
    let report = context::regenerate(
        store,
        &node,
        &RegenerateRequest {
            scope: RegenerateScope {
                recursive: a.recursive,
                up,
            },
            producers: &producers,
            policies: &BTreeMap::new(),
            now_ms: merkle_store::frame::now_ms(),
        },
    )?;
    let list = |v: &[(String, String, merkle_store::Hash)]| {
        v.iter()
            .map(|(p, t, id)| json!({"path": p, "frame_type": t, "frame_id": id.to_hex()}))
            .collect::<Vec<_>>()
    };
    let mut text = format!(
        "{} regenerated, {} reused (inputs unchanged), {} up to date, {} skipped",
        report.regenerated.len(),
        report.reused.len(),
        report.unchanged,
        report.skipped.len()
    );
    for (p, t, id) in &report.regenerated {
        text.push_str(&format!("\n  regenerated {t} {} {id}", display_path(p)));
    }
    for (p, t, id) in &report.reused {
        text.push_str(&format!("\n  reused      {t} {} {id}", display_path(p)));
    }
    for s in &report.skipped {
        text.push_str(&format!("\n  skipped {s}"));
    }
    out.value(
        json!({
            "regenerated": list(&report.regenerated),
            "reused": list(&report.reused),
            "unchanged": report.unchanged,
            "skipped": report.skipped,
            "counts": {
                "regenerated": report.regenerated.len(),
                "reused": report.reused.len(),
                "unchanged": report.unchanged,
                "skipped": report.skipped.len(),
            },
        }),
        text,
    );
    Ok(())
}

/// What to invalidate.
#[derive(Args, Debug)]
pub(crate) struct InvalidateArgs {
    /// The node whose frames become stale
    path: String,
    /// Only frames of this type (repeatable) [default: every type]
    #[arg(long = "type", value_name = "TYPE")]
    types: Vec<String>,
    /// The agent recording the invalidation (needs the writer role)
    #[arg(long, env = "MERKLE_AGENT")]
    agent: String,
}

pub(crate) fn invalidate(
    out: &mut Out,
    store: &Store,
    root: &Path,
    a: &InvalidateArgs,
) -> Result<()> {
    let node = resolve(store, root, &a.path)?;
    let ids = context::invalidate(
        store,
        &node,
        &a.types,
        &a.agent,
        merkle_store::frame::now_ms(),
    )?;
    out.value(
        json!({
            "frame_ids": ids.iter().map(|i| i.to_hex()).collect::<Vec<_>>(),
            "path": node.path,
        }),
        ids.iter()
            .map(|id| format!("{id}  invalidated {}", display_path(&node.path)))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    Ok(())
}

/// `merkle views`.
#[derive(Subcommand, Debug)]
pub(crate) enum ViewsCommand {
    /// List the named views in .merkle/views.yaml
    List,
    /// Show one view's fields
    Show {
        /// The view's name
        name: String,
    },
}

fn spec_json(s: &ViewSpec) -> Value {
    json!({
        "max_frames": s.max_frames,
        "sources": s.sources,
        "related": s.related,
        "types": s.types,
        "agents": s.agents,
        "created_from_ms": s.created_from_ms,
        "created_until_ms": s.created_until_ms,
        "heads_only": s.heads_only,
        "ordering": s.ordering,
        "priority": s.priority,
    })
}

pub(crate) fn views(out: &mut Out, root: &Path, cmd: &ViewsCommand) -> Result<()> {
    let views = ViewsFile::load(root)?;
    match cmd {
        ViewsCommand::List => out.value(
            Value::Array(views.views.keys().map(|k| json!(k)).collect()),
            if views.views.is_empty() {
                format!(
                    "no views in {}",
                    context::views_file::views_path(root).display()
                )
            } else {
                views.views.keys().cloned().collect::<Vec<_>>().join("\n")
            },
        ),
        ViewsCommand::Show { name } => {
            let spec = views.get(name)?;
            let json = spec_json(spec);
            let text =
                serde_json::to_string_pretty(&json).expect("a serde_json::Value always serializes");
            out.value(json!({"name": name, "view": json}), text);
        }
    }
    Ok(())
}

/// The stale frames as `status` prints them: counted by type, then each one; empty when none.
pub(crate) fn stale_text(stale: &[context::Stale]) -> String {
    if stale.is_empty() {
        return String::new();
    }
    let mut by_type: BTreeMap<&str, usize> = BTreeMap::new();
    for s in stale {
        *by_type.entry(&s.frame_type).or_default() += 1;
    }
    let mut t = format!(
        "{} ({}); `merkle regenerate PATH` recomputes {}:",
        output::count(stale.len() as u64, "stale frame"),
        by_type
            .iter()
            .map(|(t, n)| format!("{t}: {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        if stale.len() == 1 { "it" } else { "them" }
    );
    for s in stale {
        t.push_str(&format!(
            "\n  {} {} ({})",
            s.frame_type,
            display_path(&s.path),
            s.reason
        ));
    }
    t
}
