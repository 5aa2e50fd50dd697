//! The context tools: `get_node` reads a bounded view of a node's frames, `put_frame` attaches
//! a frame to a node, `synthesize` derives a directory's frame from its children's,
//! `search_symbols` ranks files for a query (`merkle search`), `task_context` gathers a task's
//! code within a token budget (`merkle context`), `related_files` lists a file's imports
//! and importers (`merkle related`) and `refs` a definition's callers and callees (`merkle
//! refs`). `search_symbols` is named apart from the built-in
//! `search`, which greps file text.
//!
//! They act on the workspace's store as the run's agent, so merkle-store's role checks apply:
//! a reader cannot put, only an agent with the synthesis role synthesizes. Each call goes
//! through the workspace's freshness rule (`context::ops::Workspace`, holding the run's
//! store), which rescans first (incremental: only changed files are hashed), because the file
//! tools may have changed the tree since the last call and a frame must attach to the node as
//! it is now, not as it was when the run began.

use std::sync::Arc;

use context::ops::{Reads, Workspace};
use context::views_file::ViewRequest;
use context::{ContextView, get_node};
use merkle_store::{NewFrame, NodeRecord, OpenOptions, Store};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::tools::ToolDefinition;
use crate::tools::builtin::{optional_str, str_field};

/// `get_node`, `put_frame`, `synthesize`, `search_symbols`, `task_context`, `related_files`
/// and `refs` on `store` (held for the run), acting as `agent`.
pub fn context_tools(store: &Arc<Store>, agent: &str) -> Vec<ToolDefinition> {
    let workspace =
        &Workspace::new(store.workspace(), OpenOptions::default()).holding(Arc::clone(store));
    let s = workspace.clone();
    let get = ToolDefinition::new(
        "get_node",
        "Read the context frames of a workspace node (file or directory): its record and the \
         frames a view selects, newest first. Path \"\" or \".\" is the root. Optional: a view \
         named in .merkle/views.yaml, max_frames, types, sources (node, parent, siblings, \
         related: the files it imports and that import it). Answers JSON: {node, frames: \
         [{frame_type, agent_id, content, source, path, ...}], frame_count, skipped, root, \
         stale}.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "view": {"type": "string"},
                "max_frames": {"type": "integer", "minimum": 1, "maximum": 200},
                "types": {"type": "array", "items": {"type": "string"}},
                "sources": {"type": "array", "items": {"type": "string", "enum": ["node", "parent", "siblings", "related"]}},
            },
            "required": ["path"],
            "additionalProperties": false,
        }),
        move |input| s.read(|store, stale| get_node_tool(store, stale, input)),
    );

    let (s, who) = (workspace.clone(), agent.to_owned());
    let put = ToolDefinition::new(
        "put_frame",
        "Attach a context frame (notes, a summary, a decision) to a workspace node. Frames are \
         append-only: the new frame becomes the head of its type on that node; older ones stay \
         readable. Answers JSON: {frame_id, node_id, path, created}.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "type": {"type": "string", "description": "The frame type, e.g. notes or summary"},
                "content": {"type": "string"},
            },
            "required": ["path", "type", "content"],
            "additionalProperties": false,
        }),
        move |input| {
            s.write(|store| {
                let node = resolved(store, str_field(input, "put_frame", "path")?)?;
                let frame_type = str_field(input, "put_frame", "type")?;
                let content = str_field(input, "put_frame", "content")?;
                let frame =
                    NewFrame::new(node.node_id, frame_type, &who, content.as_bytes().to_vec());
                let put = context::ops::put_frame(store, &node, frame)
                    .map_err(|e| handler("put_frame", e))?;
                Ok(pretty(&put.json()))
            })
        },
    );

    let (s, who) = (workspace.clone(), agent.to_owned());
    let synth = ToolDefinition::new(
        "synthesize",
        "Synthesize a directory's frame of a type from its children's head frames of that type \
         (concatenated under path headers); recursive does every directory below first. Needs \
         the synthesis role. Answers JSON: {path, frame_type, frame_id, created, policy_ran, \
         children}, or recursive {frames: [...], written, unchanged}.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "type": {"type": "string"},
                "recursive": {"type": "boolean"},
            },
            "required": ["path", "type"],
            "additionalProperties": false,
        }),
        move |input| {
            let recursive = input.get("recursive").and_then(Value::as_bool) == Some(true);
            s.write(|store| {
                let dir = resolved(store, str_field(input, "synthesize", "path")?)?;
                let written = context::ops::synthesize_dir(
                    store,
                    &dir,
                    &context::ops::Synthesize {
                        frame_type: str_field(input, "synthesize", "type")?,
                        agent: &who,
                        policy: "concat",
                        contains: None,
                        recursive,
                    },
                )
                .map_err(|e| handler("synthesize", e))?;
                Ok(pretty(&context::ops::synthesized_json(&written, recursive)))
            })
        },
    );
    vec![
        get,
        put,
        synth,
        search_symbols_tool(workspace),
        task_context_tool(workspace),
        related_files_tool(workspace),
        refs_tool(workspace),
    ]
}

/// `task_context`: a task's context within a token budget, as `merkle context` prints it
/// (Markdown: the files found for the task and the source of their matched definitions).
fn task_context_tool(workspace: &Workspace) -> ToolDefinition {
    let s = workspace.clone();
    ToolDefinition::new(
        "task_context",
        "Gather the code a task needs, within a token budget: the definitions ranked for the \
         task (an issue, a traceback, a question, a symbol name) across the files found for \
         it, best first, with their line numbers, their files' imports and their classes' \
         heads (else a file's outline). Answers Markdown. Optional: budget in tokens (default \
         8000), files (default 10).",
        json!({
            "type": "object",
            "properties": {
                "task": {"type": "string", "minLength": 1},
                "budget": {"type": "integer", "minimum": 1, "maximum": 200000},
                "files": {"type": "integer", "minimum": 1, "maximum": 100},
            },
            "required": ["task"],
            "additionalProperties": false,
        }),
        move |input| {
            const TOOL: &str = "task_context";
            let number = |field: &str| {
                input
                    .get(field)
                    .and_then(Value::as_u64)
                    .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            };
            let asked = context::ops::TaskBundle {
                task: str_field(input, TOOL, "task")?,
                budget: number("budget"),
                files: number("files"),
                tokens: Default::default(),
            };
            let budget = asked.request().map_err(|e| handler(TOOL, e))?.budget;
            let bundle = on_current_tree(&s, TOOL, Reads::Index, |store, tree| {
                context::ops::bundle_in(store, tree, &asked)
            })?;
            if bundle.files.is_empty() && bundle.omitted.is_empty() {
                return Ok("no file matches the task".to_owned());
            }
            Ok(bundle.markdown(budget))
        },
    )
}

/// `search_symbols`: files ranked for a query, as `merkle --json search` answers it.
fn search_symbols_tool(workspace: &Workspace) -> ToolDefinition {
    let s = workspace.clone();
    ToolDefinition::new(
        "search_symbols",
        "Find the files a query is about (a symbol name, a question, an issue's text, a \
         traceback), best first. Answers JSON: [{path, score, symbols: [{name, kind, \
         line_start, line_end, signature}], why}]. \
         Optional: limit (default 20), type: a kind of definition (function, method, struct, \
         class, ...) or a language (rust, python, typescript, ...), functions: true to list \
         the definitions themselves best first across files ([{path, name, kind, line_start, \
         line_end, signature, score, why}], at most limit). For text inside function bodies \
         use search.",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "limit": {"type": "integer", "minimum": 1, "maximum": 200},
                "type": {"type": "string"},
                "functions": {"type": "boolean"},
            },
            "required": ["query"],
            "additionalProperties": false,
        }),
        move |input| {
            const TOOL: &str = "search_symbols";
            let search = context::ops::Search {
                query: str_field(input, TOOL, "query")?,
                limit: input
                    .get("limit")
                    .and_then(Value::as_u64)
                    .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
                kind: optional_str(input, "type"),
                ranking: context::search::Ranking::Fused,
                functions: input.get("functions").and_then(Value::as_bool) == Some(true),
            };
            search.request().map_err(|e| handler(TOOL, e))?;
            let found = on_current_tree(&s, TOOL, Reads::Index, |store, tree| {
                context::ops::search_in(store, tree, &search)
            })?;
            Ok(pretty(&found.json()))
        },
    )
}

/// `related_files`: a file's imports and importers, as `merkle --json related` answers it.
fn related_files_tool(workspace: &Workspace) -> ToolDefinition {
    let s = workspace.clone();
    ToolDefinition::new(
        "related_files",
        "A file's imports and the files that import it, resolved in the workspace. Answers \
         JSON: [{path, relation: imports | imported_by, line, specifier}].",
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": false,
        }),
        move |input| {
            const TOOL: &str = "related_files";
            let path = merkle_store::normalize_path(str_field(input, TOOL, "path")?);
            let related = on_current_tree(&s, TOOL, Reads::Listing, |store, tree| {
                context::ops::related_in(store, &tree.facts, &path)
            })?;
            let json: Vec<Value> = related.iter().map(context::Related::json).collect();
            Ok(pretty(&Value::Array(json)))
        },
    )
}

/// `refs`: a definition's callers and callees, as `merkle --json refs` answers it.
fn refs_tool(workspace: &Workspace) -> ToolDefinition {
    let s = workspace.clone();
    ToolDefinition::new(
        "refs",
        "Where a definition is, the definitions that call or name it (callers) and those it \
         calls (callees), read from the syntax tree and resolved by name and imports (dynamic \
         dispatch, macros that build names and reflection are not seen). target: a name \
         (`parse`, `Type::name`, `Class.name`) or PATH:LINE. Answers JSON: {name, \
         definitions, callers, callees}, each [{path, name, kind, line_start, line_end, \
         lines, candidates}].",
        json!({
            "type": "object",
            "properties": {"target": {"type": "string"}},
            "required": ["target"],
            "additionalProperties": false,
        }),
        move |input| {
            const TOOL: &str = "refs";
            let target = str_field(input, TOOL, "target")?.trim().to_owned();
            let found = on_current_tree(&s, TOOL, Reads::Index, |store, tree| {
                context::refs::refs_in(store, &tree.facts, &*tree.index(store)?, &target)
            })?;
            Ok(pretty(&found.json()))
        },
    )
}

/// `work`'s answer for the tree as it is on disk, as the CLI's search, context and related
/// answer ([`Workspace::read_facts_as`], `work` reading the search index too or not); its error
/// names `tool`.
fn on_current_tree<T: Send>(
    workspace: &Workspace,
    tool: &str,
    reads: Reads,
    work: impl Fn(&Store, &context::ops::Snapshot) -> context::Result<T> + Sync,
) -> Result<T> {
    workspace
        .read_facts_as(reads, |store, tree, _| work(store, tree))
        .map_err(|e| handler(tool, e))
}

fn get_node_tool(store: &Store, stale: bool, input: &Value) -> Result<String> {
    let node = resolved(store, str_field(input, "get_node", "path")?)?;
    // The request every front end makes: a named view (else `default`, else the head
    // frames), then fields over it.
    let request = ViewRequest {
        view: optional_str(input, "view").map(str::to_owned),
        max_frames: input
            .get("max_frames")
            .and_then(Value::as_u64)
            .map(|max| usize::try_from(max).unwrap_or(usize::MAX)),
        types: strings(input, "types").unwrap_or_default(),
        sources: strings(input, "sources").unwrap_or_default(),
        ..ViewRequest::default()
    };
    let view: ContextView = request
        .compose(store.workspace(), &mut |path| {
            store.resolve(path).map(|n| n.node_id).map_err(Into::into)
        })
        .map_err(|e| handler("get_node", e))?;
    let composed = get_node(store, &node, &view).map_err(|e| handler("get_node", e))?;
    // The tree as it is: the node was resolved after a rescan.
    let root = store.root().map_err(|e| handler("get_node", e))?;
    Ok(pretty(&context::ops::read_from(
        context::ops::node_context_json(&composed),
        root,
        stale,
    )))
}

/// A JSON answer as the tools give it.
fn pretty(json: &Value) -> String {
    serde_json::to_string_pretty(json).expect("a serde_json::Value always serializes")
}

/// The node `spec` names (a workspace path or a NodeID prefix, as for every front end:
/// [`Store::resolve`]), on a store the freshness rule has rescanned, so that edits made by
/// other tools are seen.
fn resolved(store: &Store, spec: &str) -> Result<NodeRecord> {
    store.resolve(spec).map_err(|e| match e {
        merkle_store::Error::NoSuchPath { path } => Error::NoSuchPath { path },
        e => handler("get_node", e),
    })
}

fn strings(input: &Value, field: &str) -> Option<Vec<String>> {
    input.get(field)?.as_array().map(|items| {
        items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    })
}

fn handler(tool: &str, e: impl std::fmt::Display) -> Error {
    Error::Handler {
        tool: tool.to_owned(),
        message: e.to_string(),
    }
}
