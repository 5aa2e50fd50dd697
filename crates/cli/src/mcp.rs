//! `merkle mcp`: the store served over the Model Context Protocol on stdio (or, with `--http`,
//! Streamable HTTP: [`crate::mcp_http`]), for any MCP client (an editor, another agent) to read
//! and write context frames.
//!
//! The tools mirror the CLI and answer with the documents of `merkle --json`: `get_node` (a
//! view of a node's frames), `list_frames`, `put_frame`, `synthesize`, `search`, `related` and
//! `status`. Resources
//! `merkle://node/{path}` hold the latest frame of each type on a path, one resource per path
//! that has frames. Paths are workspace-relative whatever the server's current directory is,
//! since a client rarely knows where it started the server.
//!
//! The store is opened for each request (read-only unless the request writes) and closed before
//! the answer goes out, so the server never holds the store's write lock while it waits for the
//! client, and other `merkle` commands keep working beside it. Requests touch the store one at a
//! time, on tokio's blocking pool. Writes are made as the agent given with `--agent` (or
//! `MERKLE_AGENT`), so merkle-store's role checks apply: a reader's `put_frame` is refused.
//! Every failure is a tool error (`isError`) whose message names the input; the server keeps
//! serving. Every tool but `status` rescans first (a no-op costs what `merkle status` costs and
//! writes nothing), so a long-lived server answers for the files as they are; every result's
//! `_meta` names the root hash of the tree it answered for (`merkle/root`).
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use clap::Args;
use merkle_store::{NewFrame, Store};
use rmcp::handler::server::common::{schema_for_empty_input, schema_for_input};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::schemars::JsonSchema;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::mcp_budget;
use crate::mcp_store::{Access, NoStore};
use crate::output::{self, frame_json};
use crate::{Global, display_path};
use context::views_file::ViewRequest;

/// `merkle mcp`.
#[derive(Args, Debug)]
pub(crate) struct McpArgs {
    /// The agent that put_frame and synthesize write as (registered with `merkle agent add`);
    /// without one the server only reads
    #[arg(long, env = "MERKLE_AGENT")]
    agent: Option<String>,
    /// Serve Streamable HTTP at ADDR (IP:PORT; port 0 takes a free one) on the endpoint
    /// `/mcp`, instead of stdio; the URL goes to stderr (and, in JSON mode, `{url}` to stdout)
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:0")]
    http: Option<String>,
    /// With --http: require `Authorization: Bearer TOKEN`, TOKEN being the value of this
    /// environment variable (never given on the command line). NAME=AGENT: that token acts as
    /// AGENT (its role decides what it may write; a refused write is 403 and is audited), else
    /// as --agent. Repeatable: one per token
    #[arg(long, value_name = "NAME[=AGENT]", requires = "http")]
    token_env: Vec<String>,
    /// With --http: take OAuth 2.1 access tokens (JWTs) issued by this authorization server
    /// (their `iss`); needs --audience and --jwks-file or --jwks-url. A token acts as the
    /// agent its `sub` names (see --agent-claim), which must be registered; its scopes
    /// (merkle:read, merkle:write, merkle:synthesize) and the agent's role bound what it may do
    #[arg(long, value_name = "URL", requires_all = ["http", "audience"])]
    issuer: Option<String>,
    /// With --issuer: the resource this server is (RFC 8707), which a token's `aud` must
    /// name; clients know the server by it, so give the URL of the endpoint they reach (e.g.
    /// https://merkle.example.com/mcp)
    #[arg(long, value_name = "URI", requires = "issuer")]
    audience: Option<String>,
    /// With --issuer: the issuer's keys, a JWK Set in this file (read again when a token
    /// names a key it lacks, at most once a minute)
    #[arg(
        long,
        value_name = "PATH",
        requires = "issuer",
        conflicts_with = "jwks_url"
    )]
    jwks_file: Option<PathBuf>,
    /// With --issuer: the issuer's keys, a JWK Set fetched from this URL at start (and again
    /// when a token names a key it lacks, at most once a minute)
    #[arg(long, value_name = "URL", requires = "issuer")]
    jwks_url: Option<String>,
    /// With --issuer: the claim that names a token's merkle agent
    #[arg(long, value_name = "NAME", requires = "issuer", default_value = "sub")]
    agent_claim: String,
    /// With --http: serve an address that is not loopback without a token (anyone who
    /// reaches it reads, and as --agent writes, the store)
    #[arg(long, requires = "http")]
    insecure_no_auth: bool,
    /// With --http: a host name (or host:port) clients may use in `Host`, besides the
    /// loopback names and the address served (repeatable)
    #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
    allowed_hosts: Vec<String>,
    /// The global --json, hidden here: the server speaks JSON-RPC whatever it says (an arg of
    /// the same id keeps clap from copying the global one, and its help, into this command).
    #[arg(id = "json", long = "json", hide = true)]
    _json: bool,
}

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

/// Serves MCP on stdin/stdout until the client closes the connection.
pub(crate) fn serve(g: &Global, root: &Path, args: &McpArgs) -> Result<ExitCode> {
    let server = MerkleMcp {
        shared: Arc::new(Shared {
            global: g.clone(),
            root: root.to_path_buf(),
            agent: args.agent.clone(),
            access: Access::new(g, root),
            heavy: tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1)),
            ),
        }),
    };
    if let Some(addr) = &args.http {
        // Every agent's role, to refuse at the door a write a token's agent may not make; read
        // again (one store handle at a time, as for any request) when a token names an agent
        // registered since.
        let roles = server
            .shared
            .access
            .read(NoStore::Answer(Default::default()), roles_in)?;
        let shared = Arc::clone(&server.shared);
        let reload_roles: crate::mcp_http::ReloadRoles = Arc::new(move || {
            shared
                .access
                .read(NoStore::Answer(Default::default()), roles_in)
        });
        let mut tokens = Vec::new();
        for spec in &args.token_env {
            let (name, agent) = match spec.split_once('=') {
                Some((name, agent)) => (name, Some(agent.to_owned())),
                None => (spec.as_str(), None),
            };
            let secret = match std::env::var(name) {
                Ok(token) if !token.trim().is_empty() => token.trim().to_owned(),
                Ok(_) => crate::usage!("--token-env {name}: the variable is empty"),
                Err(_) => crate::usage!("--token-env {name}: no such environment variable"),
            };
            if let Some(agent) = &agent
                && !roles.contains_key(agent)
            {
                crate::usage!(
                    "--token-env {spec}: no agent {agent:?} (register it with `merkle agent add \
                     {agent} --role reader|writer|synthesis`)"
                );
            }
            tokens.push(crate::mcp_http::Token { secret, agent });
        }
        let oauth = match &args.issuer {
            None => None,
            Some(issuer) => {
                let keys = match (&args.jwks_file, &args.jwks_url) {
                    (Some(path), None) => crate::mcp_oauth::KeySource::File(path.clone()),
                    (None, Some(url)) => crate::mcp_oauth::KeySource::Url(url.clone()),
                    _ => crate::usage!(
                        "--issuer {issuer}: give the issuer's keys with --jwks-file PATH or \
                         --jwks-url URL"
                    ),
                };
                let audience = args
                    .audience
                    .clone()
                    .expect("clap requires --audience with --issuer");
                if issuer.trim().is_empty() || audience.trim().is_empty() {
                    crate::usage!("--issuer and --audience must not be empty");
                }
                Some(crate::mcp_oauth::OAuthConfig {
                    issuer: issuer.clone(),
                    audience,
                    keys,
                    agent_claim: args.agent_claim.clone(),
                })
            }
        };
        let opts = crate::mcp_http::HttpOptions {
            addr: addr.clone(),
            tokens,
            oauth,
            writes: crate::mcp_http::Writes {
                roles,
                reload_roles,
                default_agent: args.agent.clone(),
                audit: crate::governance_cmds::audit_path(root),
            },
            insecure_no_auth: args.insecure_no_auth,
            allowed_hosts: args.allowed_hosts.clone(),
        };
        return crate::mcp_http::serve(server, opts, g.json || args._json);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .context("starting the MCP session on stdio")?;
        running.waiting().await.context("serving MCP on stdio")?;
        Ok(ExitCode::SUCCESS)
    })
}

/// Every registered agent's role (none before the first scan: [`NoStore::Answer`]).
fn roles_in(store: &Store) -> Result<crate::mcp_http::Roles> {
    Ok(store
        .agents()?
        .into_iter()
        .map(|a| (a.id, a.role))
        .collect())
}

/// What every request needs to open the store.
struct Shared {
    global: Global,
    root: PathBuf,
    agent: Option<String>,
    /// The store as requests reach it, fresh.
    access: Access,
    /// Taken by a search (or task context, or related) while it runs: they are many times the
    /// work of a read of one node, and left to run all at once they would take every core
    /// from the reads.
    heavy: tokio::sync::Semaphore,
}

#[derive(Clone)]
struct MerkleMcp {
    shared: Arc<Shared>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct GetNodeParams {
    /// The node: a workspace path ("" or "." is the root) or a NodeID (a unique hex prefix of 8+
    /// digits)
    path: String,
    /// A view named in .merkle/views.yaml [default: the view named `default` if any, else the
    /// node's head frames]
    view: Option<String>,
    /// At most this many frames
    max_frames: Option<usize>,
    /// Only frames of these types
    #[serde(default)]
    types: Vec<String>,
    /// Where frames come from: node, parent, siblings, related (imports and importers, unless
    /// `related` lists nodes)
    #[serde(default)]
    sources: Vec<String>,
    /// Only frames by these agents
    #[serde(default)]
    agents: Vec<String>,
    /// Also frames of these nodes (paths or NodeIDs)
    #[serde(default)]
    related: Vec<String>,
    /// Order: recency, relevance, type_priority or agent_priority
    ordering: Option<String>,
    /// The priority list for type_priority / agent_priority
    #[serde(default)]
    priority: Vec<String>,
    /// Superseded frames too, not only the latest of each type
    #[serde(default)]
    all: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct ListFramesParams {
    /// The node: a workspace path ("" or "." is the root) or a NodeID
    path: String,
    /// Only frames of this type
    #[serde(rename = "type")]
    frame_type: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct PutFrameParams {
    /// The node: a workspace path ("" or "." is the root) or a NodeID
    path: String,
    /// The frame type, e.g. summary or notes
    #[serde(rename = "type")]
    frame_type: String,
    /// The frame's content
    content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct SynthesizeParams {
    /// The directory: a workspace path ("" or "." is the root) or a NodeID
    path: String,
    /// The frame type to collect from the children and write (`*`: every type) [default:
    /// summary]
    #[serde(rename = "type")]
    frame_type: Option<String>,
    /// Synthesize every directory below first, children before parents
    #[serde(default)]
    recursive: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct SearchParams {
    /// What to look for: a symbol name, a question, an issue's text, a traceback or an error
    /// message
    query: String,
    /// At most this many files [default: 20]
    limit: Option<usize>,
    /// Only definitions of this kind (function, method, struct, class, ...) or only files of
    /// this language (rust, python, typescript, ...)
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct RelatedParams {
    /// The file: a workspace path
    path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct ContextParams {
    /// The task: an issue's text, a traceback, a question or a symbol name
    task: String,
    /// The most tokens the bundle may hold, estimated at 4 bytes a token [default: 8000]
    budget: Option<usize>,
    /// At most this many files, best first [default: 10]
    files: Option<usize>,
}

/// The tools, as `tools/list` shows them.
fn tools() -> Vec<Tool> {
    let reads = || ToolAnnotations::new().read_only(true);
    let writes = || ToolAnnotations::new().read_only(false).destructive(false);
    vec![
        Tool::new(
            "get_node",
            "Read a workspace node (file or directory): its record (path, kind, NodeID, content \
             hash, children) and the context frames a view selects, as `merkle --json get-node` \
             prints them. Default: the node's head frames (the latest of each type).",
            input_schema::<GetNodeParams>(),
        )
        .with_annotations(reads()),
        Tool::new(
            "list_frames",
            "List every frame on a node, oldest first, optionally of one type.",
            input_schema::<ListFramesParams>(),
        )
        .with_annotations(reads()),
        Tool::new(
            "put_frame",
            "Attach a context frame (a summary, notes, a decision) to a node, as the server's \
             agent. Frames are append-only: the new frame becomes the head of its type on the \
             node and older ones stay readable. Answers the FrameID and whether it was new.",
            input_schema::<PutFrameParams>(),
        )
        .with_annotations(writes()),
        Tool::new(
            "synthesize",
            "Synthesize a directory's frame of a type from its children's head frames \
             (concatenated under path headers), as the server's agent, which needs the \
             synthesis role; recursive does every directory below first.",
            input_schema::<SynthesizeParams>(),
        )
        .with_annotations(writes()),
        Tool::new(
            "search",
            "Find the files a query is about (a symbol name, a question, an issue's text, a \
             traceback), best first, as `merkle --json search` prints them: [{path, score, \
             symbols: [{name, kind, line_start, line_end, signature}], why}]. Rescans first, \
             so it sees the files as they are.",
            input_schema::<SearchParams>(),
        )
        .with_annotations(reads()),
        Tool::new(
            "context",
            "A task's context within a token budget, as `merkle --json context` prints it: the \
             files search finds for the task and, in each, the source of the matched \
             definitions (else the file's outline): {budget, tokens, files: [{path, score, \
             why, sections: [{kind, name, line_start, line_end, text}]}], omitted}. Rescans \
             first.",
            input_schema::<ContextParams>(),
        )
        .with_annotations(reads()),
        Tool::new(
            "related",
            "A file's imports and the files that import it, resolved in the workspace, as \
             `merkle --json related` prints them: [{path, relation: imports | imported_by, \
             line, specifier}]. Rescans first.",
            input_schema::<RelatedParams>(),
        )
        .with_annotations(reads()),
        Tool::new(
            "status",
            "The workspace's status, as `merkle --json status` prints it: the last scan's root \
             hash, node and frame counts, files changed on disk since, and stale frames.",
            budgeted(&schema_for_empty_input()),
        )
        .with_annotations(reads()),
    ]
}

/// `schema` with the budget's properties ([`mcp_budget`]), which every tool takes.
fn budgeted(schema: &JsonObject) -> Arc<JsonObject> {
    let mut schema = schema.clone();
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Some(properties) = properties.as_object_mut() {
        properties.extend(mcp_budget::schema_properties());
    }
    Arc::new(schema)
}

fn input_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let schema = schema_for_input::<T>().expect("every parameter struct has an object schema");
    let mut schema = Value::Object(JsonObject::clone(&schema));
    strict(&mut schema);
    match schema {
        Value::Object(o) => budgeted(&o),
        _ => unreachable!("strict keeps an object an object"),
    }
}

/// The formats JSON Schema defines; a validator in strict mode (ajv's, the MCP Inspector's)
/// rejects any other.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Makes a schema that schemars wrote acceptable to strict validators and single-type dialects
/// (Gemini's): an optional field's `type: [X, "null"]` becomes `type: X` (an optional field is
/// one left out of `required`; a null is still accepted by the server), and a format that is
/// not JSON Schema's (`uint`, `int64`: schemars's) is dropped, the `minimum` beside it staying.
fn strict(schema: &mut Value) {
    match schema {
        Value::Object(o) => {
            if let Some(Value::Array(types)) = o.get("type") {
                let named: Vec<Value> = types
                    .iter()
                    .filter(|t| t.as_str() != Some("null"))
                    .cloned()
                    .collect();
                if let [one] = named.as_slice() {
                    o.insert("type".to_owned(), one.clone());
                }
            }
            if o.get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
            {
                o.remove("format");
            }
            o.values_mut().for_each(strict);
        }
        Value::Array(items) => items.iter_mut().for_each(strict),
        _ => {}
    }
}

/// A tool's arguments, or an error naming the tool and the argument at fault.
fn arguments<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, String> {
    serde_json::from_value(args).map_err(|e| format!("{tool}: invalid arguments: {e}"))
}

/// How a read tool makes sure it answers for the files as they are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fresh {
    /// It needs no rescan (it compares the disk with the store itself, or lists frames).
    AsStored,
    /// A rescan of what changed first.
    Tree,
    /// That, and the search caches in step; one of the heavy reads (see [`Shared::heavy`]).
    Search,
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
            .map_err(|e| format!("{e:#}"))
    }

    /// Runs `f` on the shared read-only handle, made `fresh` first; with no store yet, answers
    /// `missing` when given, else fails saying how to make one.
    async fn read<T: Send + 'static>(
        &self,
        fresh: Fresh,
        missing: Option<T>,
        f: impl FnOnce(&Store, &Shared) -> Result<T> + Send + 'static,
    ) -> Result<T, String> {
        let _turn = match fresh {
            Fresh::Search => Some(
                self.shared
                    .heavy
                    .acquire()
                    .await
                    .map_err(|e| format!("the request failed: {e}"))?,
            ),
            _ => None,
        };
        self.blocking(move |shared| {
            match fresh {
                Fresh::AsStored => {}
                Fresh::Tree => shared.access.fresh()?,
                Fresh::Search => shared.access.fresh_for_search()?,
            }
            let no_store = missing.map_or(NoStore::Fail, NoStore::Answer);
            shared.access.read(no_store, |store| f(store, shared))
        })
        .await
    }

    /// A read tool's answer (see [`MerkleMcp::read`]).
    async fn answer(
        &self,
        fresh: Fresh,
        f: impl FnOnce(&Store, &Shared) -> Result<Value> + Send + 'static,
    ) -> Result<Answered, String> {
        self.read(fresh, None, move |store, shared| {
            Answered::of(store, &f(store, shared)?)
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
            shared.access.fresh()?;
            shared.access.write(|| {
                let store = crate::open(&shared.global, &shared.root, false)?;
                Answered::of(&store, &f(&store, shared)?)
            })
        })
        .await
    }
}

/// A tool's answer: its text, and the root hash of the tree it answered for (none before the
/// first scan), which the result's `_meta` carries as `merkle/root`.
struct Answered {
    text: String,
    root: Option<String>,
}

impl Answered {
    fn of(store: &Store, json: &Value) -> Result<Answered> {
        Ok(Answered {
            text: serde_json::to_string_pretty(json)
                .expect("a serde_json::Value always serializes"),
            root: store.root()?.map(|r| r.to_hex()),
        })
    }
}

/// The agent `tool` writes as: the one the request's token acts as, else the server's; an
/// error saying how to configure one when there is neither.
fn writer(shared: &Shared, tool: &str, as_agent: Option<String>) -> Result<String, String> {
    as_agent.or_else(|| shared.agent.clone()).ok_or_else(|| {
        format!(
            "{tool} writes as an agent and none is configured: start the server with \
             `merkle mcp --agent ID` (or MERKLE_AGENT=ID)"
        )
    })
}

/// The tools themselves; each answers the JSON document as text, or a message saying what failed.
impl MerkleMcp {
    async fn get_node(&self, args: Value) -> Result<Answered, String> {
        let p: GetNodeParams = arguments("get_node", args)?;
        self.answer(Fresh::Tree, move |store, shared| {
            let node = store.resolve(&p.path)?;
            let request = ViewRequest {
                view: p.view,
                max_frames: p.max_frames,
                types: p.types,
                agents: p.agents,
                sources: p.sources,
                related: p.related,
                ordering: p.ordering,
                priority: p.priority,
                all: p.all,
            };
            // Paths are workspace-relative here, whatever the server's current folder.
            let view =
                request.compose(&shared.root, &mut |path| Ok(store.resolve(path)?.node_id))?;
            let composed = context::get_node(store, &node, &view)?;
            // Fresh: the watcher's rescan ran first.
            let json = context::ops::node_context_json(&composed);
            Ok(context::ops::read_from(json, store.root()?, false))
        })
        .await
    }

    async fn list_frames(&self, args: Value) -> Result<Answered, String> {
        let p: ListFramesParams = arguments("list_frames", args)?;
        self.answer(Fresh::Tree, move |store, _| {
            let node = store.resolve(&p.path)?;
            let frames = store.frames_of(&node.node_id, p.frame_type.as_deref())?;
            Ok(Value::Array(frames.iter().map(frame_json).collect()))
        })
        .await
    }

    async fn put_frame(&self, args: Value, as_agent: Option<String>) -> Result<Answered, String> {
        let p: PutFrameParams = arguments("put_frame", args)?;
        let agent = writer(&self.shared, "put_frame", as_agent)?;
        self.write(move |store, _| {
            let node = store.resolve(&p.path)?;
            let frame = NewFrame::new(node.node_id, &p.frame_type, &agent, p.content.into_bytes());
            let put = context::ops::put_frame(store, &node, frame)
                .with_context(|| format!("put_frame on {:?}", display_path(&node.path)))?;
            Ok(put.json())
        })
        .await
    }

    async fn synthesize(&self, args: Value, as_agent: Option<String>) -> Result<Answered, String> {
        let p: SynthesizeParams = arguments("synthesize", args)?;
        let agent = writer(&self.shared, "synthesize", as_agent)?;
        self.write(move |store, _| {
            let dir = store.resolve(&p.path)?;
            let done = context::ops::synthesize_dir(
                store,
                &dir,
                &context::ops::Synthesize {
                    frame_type: p.frame_type.as_deref().unwrap_or("summary"),
                    agent: &agent,
                    policy: "concat",
                    contains: None,
                    recursive: p.recursive,
                },
            )?;
            Ok(context::ops::synthesized_json(&done, p.recursive))
        })
        .await
    }

    async fn search(&self, args: Value) -> Result<Answered, String> {
        let p: SearchParams = arguments("search", args)?;
        if p.query.trim().is_empty() {
            return Err("search: the query is empty".to_owned());
        }
        self.answer(Fresh::Search, move |store, shared| {
            let filter = context::ops::search_filter(p.kind.as_deref())
                .map_err(|e| anyhow::anyhow!("search: {e}"))?;
            let tree = shared.access.searchable(store)?;
            let hits = context::search(
                store,
                &tree.facts,
                &tree.index,
                &context::SearchRequest {
                    query: &p.query,
                    limit: p.limit.unwrap_or(20),
                    filter,
                    ranking: context::search::Ranking::Fused,
                },
            )?;
            Ok(Value::Array(hits.iter().map(context::Hit::json).collect()))
        })
        .await
    }

    async fn context(&self, args: Value) -> Result<Answered, String> {
        let p: ContextParams = arguments("context", args)?;
        if p.task.trim().is_empty() {
            return Err("context: the task is empty".to_owned());
        }
        let budget = p.budget.unwrap_or(8_000);
        let files = p.files.unwrap_or(10);
        if budget == 0 || files == 0 {
            return Err("context: budget and files must be at least 1".to_owned());
        }
        self.answer(Fresh::Search, move |store, shared| {
            let tree = shared.access.searchable(store)?;
            let b = context::bundle::bundle_in(
                store,
                &tree.facts,
                &tree.index,
                &context::bundle::BundleRequest {
                    task: &p.task,
                    budget,
                    files,
                },
            )?;
            Ok(b.json(budget))
        })
        .await
    }

    async fn related(&self, args: Value) -> Result<Answered, String> {
        let p: RelatedParams = arguments("related", args)?;
        self.answer(Fresh::Search, move |store, shared| {
            let path = merkle_store::normalize_path(&p.path);
            let tree = shared.access.searchable(store)?;
            let related = context::ops::related_in(store, &tree.facts, &path)?;
            Ok(Value::Array(
                related.iter().map(context::Related::json).collect(),
            ))
        })
        .await
    }

    async fn status(&self) -> Result<Answered, String> {
        self.answer(Fresh::AsStored, |store, _| {
            Ok(context::ops::status(store)?.json())
        })
        .await
    }
}

impl ServerHandler for MerkleMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
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

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
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
        // Over HTTP, the agent the request's token acts as (the gate set it; stdio has none).
        let as_agent = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get(crate::mcp_http::AGENT_HEADER))
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut args = Value::Object(request.arguments.unwrap_or_default());
        let (max_tokens, cursor) = match mcp_budget::take(&mut args) {
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
            "status" => self.status().await,
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "unknown tool {other:?}: merkle has get_node, list_frames, put_frame, \
                         synthesize, search, context, related and status"
                    ),
                    None,
                ));
            }
        };
        let answer = answer.and_then(|a| {
            mcp_budget::fit(&a.text, max_tokens, cursor).map(|fitted| (fitted, a.root))
        });
        Ok(match answer {
            Ok(((text, note), root)) => {
                let mut blocks = vec![ContentBlock::text(text)];
                blocks.extend(note.map(ContentBlock::text));
                let mut result = CallToolResult::success(blocks);
                if let Some(root) = root {
                    let mut meta = rmcp::model::MetaObject::new();
                    meta.0.insert("merkle/root".to_owned(), Value::String(root));
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
            .read(Fresh::AsStored, Some(Vec::new()), |store, _| {
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
        let path = uri
            .strip_prefix(NODE_URI)
            .and_then(percent_decode)
            .ok_or_else(|| {
                ErrorData::resource_not_found(
                    format!("{uri:?} is not a merkle node resource ({NODE_URI}PATH)"),
                    None,
                )
            })?;
        let json = self
            .read(Fresh::Tree, None, move |store, _| {
                let node = store.node_at(&path)?;
                let frames = store.path_heads(&path)?;
                if node.is_none() && frames.is_empty() {
                    anyhow::bail!(
                        "no node and no frames at path {:?}",
                        merkle_store::normalize_path(&path)
                    );
                }
                Ok(json!({
                    "node": node.as_ref().map(output::node_json),
                    "frames": frames.iter().map(frame_json).collect::<Vec<_>>(),
                }))
            })
            .await
            .map_err(|e| ErrorData::resource_not_found(format!("{uri}: {e}"), None))?;
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
