//! The tools: their parameters, the schemas `tools/list` shows, and what each one does (each
//! answers the JSON document of `merkle --json` as text, or a message saying what failed).
use std::sync::Arc;

use context::ops::{Reads, display_path, frame_json};
use context::views_file::ViewRequest;
use merkle_store::NewFrame;
use rmcp::handler::server::common::{schema_for_empty_input, schema_for_input};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Answered, Fresh, MerkleMcp, writer};
use crate::budget;
use crate::error::Error;

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
    /// List the definitions themselves, best first across files (`merkle search
    /// --functions`): [{path, name, kind, line_start, line_end, signature, score, why}], at
    /// most limit
    functions: Option<bool>,
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
struct RefsParams {
    /// The definition: a name (`parse`, `Type::name`, `Class.name`) or PATH:LINE (the
    /// definition spanning that line of that workspace file)
    target: String,
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

/// The search a `search` call asks for, as every front end passes it on.
fn search_of(p: &SearchParams) -> context::ops::Search<'_> {
    context::ops::Search {
        query: &p.query,
        limit: p.limit,
        kind: p.kind.as_deref(),
        ranking: context::search::Ranking::Fused,
        functions: p.functions == Some(true),
    }
}

/// The bundle a `context` call asks for, as every front end passes it on.
fn bundle_of(p: &ContextParams) -> context::ops::TaskBundle<'_> {
    context::ops::TaskBundle {
        task: &p.task,
        budget: p.budget,
        files: p.files,
        tokens: Default::default(),
    }
}

/// The tools, as `tools/list` shows them.
pub(super) fn tools() -> Vec<Tool> {
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
             definitions search ranks for the task across files, best first, with their \
             files' imports and their classes' heads (else a file's outline): {budget, tokens, \
             files: [{path, score, why, sections: [{kind, name, line_start, line_end, \
             text}]}], omitted}. Rescans first.",
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
            "refs",
            "Where a definition is, the definitions that call or name it and those it calls, \
             as `merkle --json refs` prints them: {name, definitions, callers, callees}, each \
             [{path, name, kind, line_start, line_end, lines, candidates}] (lines: where it is \
             named; candidates: among how many same-named definitions it was resolved). From \
             tree-sitter's identifiers resolved by name and imports: dynamic dispatch, macros \
             that build names and reflection are not seen. Rescans first.",
            input_schema::<RefsParams>(),
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

/// `schema` with the budget's properties ([`budget`]), which every tool takes.
fn budgeted(schema: &JsonObject) -> Arc<JsonObject> {
    let mut schema = schema.clone();
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Some(properties) = properties.as_object_mut() {
        properties.extend(budget::schema_properties());
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

/// The tools themselves; each answers the JSON document as text, or a message saying what failed.
impl MerkleMcp {
    pub(super) async fn get_node(&self, args: Value) -> Result<Answered, String> {
        let p: GetNodeParams = arguments("get_node", args)?;
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
        let path = merkle_store::normalize_path(&p.path);
        let scope = request.reach(&self.shared.workspace().root, &path);
        self.answer(Fresh::At(scope), move |store, shared| {
            let node = store.resolve(&p.path)?;
            // Paths are workspace-relative here, whatever the server's current folder.
            let view = request.compose(&shared.workspace().root, &mut |path| {
                Ok(store.resolve(path)?.node_id)
            })?;
            let composed = context::get_node(store, &node, &view)?;
            // Fresh: the watcher's rescan ran first.
            let json = context::ops::node_context_json(&composed);
            Ok(context::ops::read_from(json, store.root()?, false))
        })
        .await
    }

    pub(super) async fn list_frames(&self, args: Value) -> Result<Answered, String> {
        let p: ListFramesParams = arguments("list_frames", args)?;
        let scope = Fresh::At(Some(merkle_store::normalize_path(&p.path)));
        self.answer(scope, move |store, _| {
            let node = store.resolve(&p.path)?;
            let frames = store.frames_of(&node.node_id, p.frame_type.as_deref())?;
            Ok(Value::Array(frames.iter().map(frame_json).collect()))
        })
        .await
    }

    pub(super) async fn put_frame(
        &self,
        args: Value,
        as_agent: Option<String>,
    ) -> Result<Answered, String> {
        let p: PutFrameParams = arguments("put_frame", args)?;
        let agent = writer(&self.shared, "put_frame", as_agent)?;
        self.write(move |store, _| {
            let node = store.resolve(&p.path)?;
            let frame = NewFrame::new(node.node_id, &p.frame_type, &agent, p.content.into_bytes());
            let put = context::ops::put_frame(store, &node, frame).map_err(|e| {
                Error::from(e).during(format!("put_frame on {:?}", display_path(&node.path)))
            })?;
            Ok(put.json())
        })
        .await
    }

    pub(super) async fn synthesize(
        &self,
        args: Value,
        as_agent: Option<String>,
    ) -> Result<Answered, String> {
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

    pub(super) async fn search(&self, args: Value) -> Result<Answered, String> {
        let p: SearchParams = arguments("search", args)?;
        search_of(&p)
            .request()
            .map_err(|e| format!("search: {e}"))?;
        self.answer_facts(Reads::Index, move |store, tree| {
            Ok(context::ops::search_in(store, tree, &search_of(&p))?.json())
        })
        .await
    }

    pub(super) async fn context(&self, args: Value) -> Result<Answered, String> {
        let p: ContextParams = arguments("context", args)?;
        let budget = bundle_of(&p)
            .request()
            .map_err(|e| format!("context: {e}"))?
            .budget;
        self.answer_facts(Reads::Index, move |store, tree| {
            Ok(context::ops::bundle_in(store, tree, &bundle_of(&p))?.json(budget))
        })
        .await
    }

    pub(super) async fn related(&self, args: Value) -> Result<Answered, String> {
        let p: RelatedParams = arguments("related", args)?;
        self.answer_facts(Reads::Listing, move |store, tree| {
            let path = merkle_store::normalize_path(&p.path);
            let related = context::ops::related_in(store, &tree.facts, &path)?;
            Ok(Value::Array(
                related.iter().map(context::Related::json).collect(),
            ))
        })
        .await
    }

    pub(super) async fn refs(&self, args: Value) -> Result<Answered, String> {
        let p: RefsParams = arguments("refs", args)?;
        self.answer_facts(Reads::Index, move |store, tree| {
            let index = tree.index(store)?;
            let found = context::refs::refs_in(store, &tree.facts, &index, p.target.trim())?;
            Ok(found.json())
        })
        .await
    }

    pub(super) async fn status(&self) -> Result<Answered, String> {
        self.answer(Fresh::AsStored, |store, _| {
            Ok(context::ops::status(store)?.json())
        })
        .await
    }
}
