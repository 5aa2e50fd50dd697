//! The MCP handler: the store served over the Model Context Protocol, on stdio or (through
//! [`crate::streamable_http`]) Streamable HTTP, for any MCP client (an editor, another agent)
//! to read and write context frames. The tools themselves are in `server/tools.rs`.
//!
//! The tools mirror the CLI and answer with the documents of `merkle --json`: `get_node` (a
//! view of a node's frames), `list_frames`, `put_frame`, `synthesize`, `search`, `context`,
//! `related`, `refs` and `status`. Resources
//! `merkle://node/{path}` hold the latest frame of each type on a path, one resource per path
//! that has frames. Paths are workspace-relative whatever the server's current directory is,
//! since a client rarely knows where it started the server.
//!
//! The store is opened for each request (read-only unless the request writes) and closed before
//! the answer goes out, so the server never holds the store's write lock while it waits for the
//! client, and other `merkle` commands keep working beside it. Requests touch the store one at a
//! time, on tokio's blocking pool. Writes are made as the server's agent (the CLI's `--agent`,
//! or `MERKLE_AGENT`), or over HTTP as the request's token's, so merkle-store's role checks
//! apply: a reader's `put_frame` is refused. `tools/list` shows only the writes that agent's
//! role allows (none without an agent, or for one not registered), read from the store at each
//! listing, so an agent registered while the server runs can write from the next one on.
//! Every failure is a tool error (`isError`) whose message names the input; the server keeps
//! serving. Every tool but `status` rescans first (a no-op costs what `merkle status` costs and
//! writes nothing; a read of one node checks that node and the folders on the way to it), so a
//! long-lived server answers for the files as they are; every result's `_meta` names the root
//! hash of the tree it read (`merkle/root`).
use std::sync::Arc;

use merkle_store::{Role, Store};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::budget;
use crate::error::{Error, Result};
use crate::store::or_missing;
use crate::writes::{AGENT_HEADER, Refused, no_agent, role_needed};
use context::ops::{Reads, Snapshot, Workspace, display_path, frame_json, node_json};

mod tools;

use tools::tools;

const NODE_URI: &str = "merkle://node/";

/// Resources per page of `resources/list`.
const RESOURCES_PAGE: usize = 500;

/// The cursor of the page after the one ending at `path`.
fn cursor_after(path: &str) -> String {
    merkle_store::hash::to_hex(path.as_bytes())
}

/// The path a cursor names, if it is one of ours.
fn path_after(cursor: &str) -> Option<String> {
    if !cursor.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..cursor.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(cursor.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

/// What every request needs to open the store.
pub(crate) struct Shared {
    agent: Option<String>,
    /// The store as requests reach it, fresh.
    workspace: Workspace,
    /// Taken by a search (or task context, or related) while it runs: they are many times the
    /// work of a read of one node, and left to run all at once they would take every core
    /// from the reads.
    heavy: tokio::sync::Semaphore,
}

impl Shared {
    /// What the requests of a server writing as `agent` (if any) share.
    pub(crate) fn new(workspace: Workspace, agent: Option<String>) -> Shared {
        Shared {
            agent,
            workspace,
            heavy: tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1)),
            ),
        }
    }

    /// The store as requests reach it.
    pub(crate) fn workspace(&self) -> &Workspace {
        &self.workspace
    }
}

/// The handler: a clone per session, all sharing one [`Shared`].
#[derive(Clone)]
pub(crate) struct MerkleMcp {
    shared: Arc<Shared>,
}

impl MerkleMcp {
    pub(crate) fn new(shared: Arc<Shared>) -> MerkleMcp {
        MerkleMcp { shared }
    }
}

/// How a read tool makes sure it answers for the files as they are.
#[derive(Clone, PartialEq, Eq)]
enum Fresh {
    /// It needs no rescan (it compares the disk with the store itself, or lists frames).
    AsStored,
    /// A rescan of what changed first, for a read of the node at this workspace path and
    /// below it alone where it reads no further (`None`: the whole tree): only what it answers
    /// from is checked on disk where no watcher vouches for it
    /// ([`context::ops::Workspace::read_at`]).
    At(Option<String>),
}

impl MerkleMcp {
    /// Runs `f` on tokio's blocking pool; a failure becomes its message.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Shared) -> Result<T> + Send + 'static,
    ) -> Result<T, String> {
        let shared = Arc::clone(&self.shared);
        tokio::task::spawn_blocking(move || f(&shared))
            .await
            .map_err(|e| format!("the request failed: {e}"))?
            .map_err(|e| e.chain())
    }

    /// Runs `f` on the shared read-only handle, made `fresh` first (and whether it is stale);
    /// with no store yet, answers `missing` when given, else fails saying how to make one.
    async fn read<T: Send + 'static>(
        &self,
        fresh: Fresh,
        missing: Option<T>,
        f: impl FnOnce(&Store, &Shared, bool) -> Result<T> + Send + 'static,
    ) -> Result<T, String> {
        self.blocking(move |shared| {
            let ws = &shared.workspace;
            let read = match fresh {
                Fresh::AsStored => ws.read_stored(|store| f(store, shared, false)),
                Fresh::At(scope) => {
                    ws.read_at(scope.as_deref(), |store, stale| f(store, shared, stale))
                }
            };
            or_missing(read, missing)
        })
        .await
    }

    /// A heavy read tool's answer: `f` on the tree as the files are, with its listing and
    /// search index ([`Workspace::read_facts`]; `f` may run twice), one heavy read at a time
    /// per two cores (see [`Shared::heavy`]); whether `f` `reads` the index too.
    async fn answer_facts(
        &self,
        reads: Reads,
        f: impl Fn(&Store, &Snapshot) -> Result<Value> + Send + Sync + 'static,
    ) -> Result<Answered, String> {
        let _turn = self
            .shared
            .heavy
            .acquire()
            .await
            .map_err(|e| format!("the request failed: {e}"))?;
        self.blocking(move |shared| {
            shared.workspace.read_facts_as(reads, |store, tree, stale| {
                Ok(Answered::of(store, &f(store, tree)?)?.stale(stale))
            })
        })
        .await
    }

    /// A read tool's answer (see [`MerkleMcp::read`]).
    async fn answer(
        &self,
        fresh: Fresh,
        f: impl FnOnce(&Store, &Shared) -> Result<Value> + Send + 'static,
    ) -> Result<Answered, String> {
        self.read(fresh, None, move |store, shared, stale| {
            Ok(Answered::of(store, &f(store, shared)?)?.stale(stale))
        })
        .await
    }

    /// A write tool's answer: `f` on the store opened for writing, alone, after a rescan of
    /// what changed (a frame attaches to the file as it is now).
    async fn write(
        &self,
        f: impl FnOnce(&Store, &Shared) -> Result<Value> + Send + 'static,
    ) -> Result<Answered, String> {
        self.blocking(move |shared| {
            shared
                .workspace
                .write(|store| Answered::of(store, &f(store, shared)?))
        })
        .await
    }
}

/// A tool's answer: its text, and the root hash of the tree it answered for (none before the
/// first scan), which the result's `_meta` carries as `merkle/root`, with `merkle/stale: true`
/// where files had changed while another process held the store for writing.
struct Answered {
    text: String,
    root: Option<String>,
    stale: bool,
}

impl Answered {
    fn of(store: &Store, json: &Value) -> Result<Answered> {
        Ok(Answered {
            text: serde_json::to_string_pretty(json)
                .expect("a serde_json::Value always serializes"),
            root: store.root()?.map(|r| r.to_hex()),
            stale: false,
        })
    }

    fn stale(self, stale: bool) -> Answered {
        Answered { stale, ..self }
    }
}

/// The agent `tool` writes as: the one the request's token acts as, else the server's; an
/// error saying how to configure one when there is neither.
fn writer(shared: &Shared, tool: &str, as_agent: Option<String>) -> Result<String, String> {
    as_agent
        .or_else(|| shared.agent.clone())
        .ok_or_else(|| no_agent(tool))
}

/// Over HTTP, the agent the request's token acts as (the gate set it); stdio has none.
fn token_agent(extensions: &rmcp::model::Extensions) -> Option<String> {
    extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.headers.get(AGENT_HEADER))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// Over HTTP, the gate's refusal of the call for its agent's role, if it refused it.
fn refused(extensions: &rmcp::model::Extensions) -> Option<String> {
    extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Refused>())
        .map(|refused| refused.0.clone())
}

impl MerkleMcp {
    /// The role of the agent a request writes as (its token's, else the server's); `None`
    /// without one, for one not registered, or with no store yet. A store that cannot be read
    /// counts as none: the listing then offers reads alone.
    async fn writer_role(&self, as_agent: Option<String>) -> Option<Role> {
        let agent = as_agent.or_else(|| self.shared.agent.clone())?;
        self.read(Fresh::AsStored, Some(None), move |store, _, _| {
            Ok(store.agent(&agent)?.map(|a| a.role))
        })
        .await
        .ok()
        .flatten()
    }
}

impl ServerHandler for MerkleMcp {
    /// The capabilities declared are those served: tools, resources, and prompts, of which
    /// there are none (rmcp answers `prompts/list` with an empty list, and a server that
    /// answers it must declare it: SEP-2575).
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("merkle", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "merkle keeps immutable, attributed context frames (summaries, notes) on the files \
             and directories of a workspace. Nodes are workspace paths (\"\" or \".\" is the \
             root) or NodeIDs. Find files with search and related; read with get_node, \
             list_frames, status and the \
             merkle://node/{path} resources; write with put_frame and synthesize.",
        )
    }

    /// Every read, and the writes the request's agent may make.
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let role = self.writer_role(token_agent(&context.extensions)).await;
        let allowed = |tool: &Tool| {
            role_needed(&tool.name).is_none_or(|needed| role.is_some_and(|r| r >= needed))
        };
        Ok(ListToolsResult::with_all_items(
            tools().into_iter().filter(allowed).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().into_iter().find(|t| t.name == name)
    }

    /// An unknown tool is a protocol error; everything that goes wrong inside a tool, bad
    /// arguments included, is a tool error the model can read and act on.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(message) = refused(&context.extensions) {
            return Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into());
        }
        let as_agent = token_agent(&context.extensions);
        let mut args = Value::Object(request.arguments.unwrap_or_default());
        let (max_tokens, cursor) = match budget::take(&mut args) {
            Ok(budget) => budget,
            Err(message) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "{}: {message}",
                    request.name
                ))])
                .into());
            }
        };
        let answer = match request.name.as_ref() {
            "get_node" => self.get_node(args).await,
            "list_frames" => self.list_frames(args).await,
            "put_frame" => self.put_frame(args, as_agent).await,
            "synthesize" => self.synthesize(args, as_agent).await,
            "search" => self.search(args).await,
            "context" => self.context(args).await,
            "related" => self.related(args).await,
            "refs" => self.refs(args).await,
            "status" => self.status().await,
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "unknown tool {other:?}: merkle has get_node, list_frames, put_frame, \
                         synthesize, search, context, related, refs and status"
                    ),
                    None,
                ));
            }
        };
        let answer =
            answer.and_then(|a| budget::fit(&a.text, max_tokens, cursor).map(|fitted| (fitted, a)));
        Ok(match answer {
            Ok(((text, note), Answered { root, stale, .. })) => {
                let mut blocks = vec![ContentBlock::text(text)];
                blocks.extend(note.map(ContentBlock::text));
                let mut result = CallToolResult::success(blocks);
                if let Some(root) = root {
                    let mut meta = rmcp::model::MetaObject::new();
                    meta.0.insert("merkle/root".to_owned(), Value::String(root));
                    if stale {
                        meta.0.insert("merkle/stale".to_owned(), Value::Bool(true));
                    }
                    result.meta = Some(meta);
                }
                result
            }
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        }
        .into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        // A page at a time, in path order; the cursor names the last path of the page before
        // (hex, so that it is opaque and any path fits).
        let after = match request.and_then(|r| r.cursor) {
            Some(cursor) => Some(path_after(&cursor).ok_or_else(|| {
                ErrorData::invalid_params(format!("invalid cursor {cursor:?}"), None)
            })?),
            None => None,
        };
        // Editors list resources on connect: a workspace never scanned has none, which is no
        // error.
        let mut paths = self
            .read(Fresh::AsStored, Some(Vec::new()), |store, _, _| {
                Ok(store.paths_with_frames()?)
            })
            .await
            .map_err(|e| ErrorData::internal_error(e, None))?;
        paths.sort_unstable();
        let start = after.map_or(0, |a| paths.partition_point(|p| *p <= a));
        let end = paths.len().min(start + RESOURCES_PAGE);
        let next_cursor = (end < paths.len()).then(|| cursor_after(&paths[end - 1]));
        let mut result = ListResourcesResult::with_all_items(
            paths[start..end]
                .iter()
                .map(|p| {
                    Resource::new(node_uri(p), display_path(p))
                        .with_description(format!(
                            "the latest frame of each type on {}",
                            display_path(p)
                        ))
                        .with_mime_type("application/json")
                })
                .collect(),
        );
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(format!("{NODE_URI}{{+path}}"), "node")
                .with_description(
                    "a node's record and the latest frame of each type on its path (the root: \
                     an empty path)",
                )
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        // The error names the URI in its data too (SEP-2164), for a client to match it.
        let not_found = |message: String| {
            ErrorData::resource_not_found(message, Some(json!({"uri": uri.as_str()})))
        };
        let path = uri
            .strip_prefix(NODE_URI)
            .and_then(percent_decode)
            .ok_or_else(|| {
                not_found(format!(
                    "{uri:?} is not a merkle node resource ({NODE_URI}PATH)"
                ))
            })?;
        let scope = Fresh::At(Some(merkle_store::normalize_path(&path)));
        let json = self
            .read(scope, None, move |store, _, _| {
                let node = store.node_at(&path)?;
                let frames = store.path_heads(&path)?;
                if node.is_none() && frames.is_empty() {
                    return Err(Error::Request(format!(
                        "no node and no frames at path {:?}",
                        merkle_store::normalize_path(&path)
                    )));
                }
                Ok(json!({
                    "node": node.as_ref().map(node_json),
                    "frames": frames.iter().map(frame_json).collect::<Vec<_>>(),
                }))
            })
            .await
            .map_err(|e| not_found(format!("{uri}: {e}")))?;
        let text =
            serde_json::to_string_pretty(&json).expect("a serde_json::Value always serializes");
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type("application/json"),
        ])
        .into())
    }
}

/// The resource URI of a workspace path: every byte but unreserved characters and `/`
/// percent-encoded, so any path makes a valid URI.
fn node_uri(path: &str) -> String {
    let mut uri = NODE_URI.to_owned();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// The path a resource URI spells, undoing [`node_uri`]'s encoding; `None` if it is malformed.
fn percent_decode(s: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_uris_round_trip_through_percent_encoding() {
        for path in ["", "src/main.rs", "a dir/ü%.txt", "x?#y"] {
            let uri = node_uri(path);
            assert!(!uri[NODE_URI.len()..].contains([' ', '?', '#']), "{uri}");
            assert_eq!(
                percent_decode(&uri[NODE_URI.len()..]).as_deref(),
                Some(path)
            );
        }
        assert_eq!(percent_decode("bad%zz"), None);
        assert_eq!(percent_decode("cut%4"), None);
    }
}
