//! Incremental regeneration: recompute exactly the frames whose inputs changed.
//!
//! Frames follow a path across versions of its node (the store's path heads). The latest frame
//! of a type at a path is **stale** when the basis it would have now differs from its stored
//! one: for a file, the file's node changed (its NodeID is the basis); for a synthesized
//! directory frame, a child's head changed or the directory's node did. It is also stale when
//! someone [`invalidate`]d it since it was written.
//!
//! [`regenerate`] walks its scope bottom-up (children before parents), appends a new frame for
//! each stale one (old frames stay readable; heads move in the frame's own transaction) and
//! counts what it did. File frames are recomputed by a [`FrameProducer`]; directory frames by
//! the synthesis policy recorded in the frame. When a file's content or a directory's inputs
//! equal those of the previous frame, its content is reused without running the producer or
//! policy: early cutoff, so an unchanged child costs its ancestors nothing but a copy.
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use merkle_store::{Encoder, Frame, Hash, NewFrame, NodeKind, NodeRecord, Role, Store};

use crate::error::{Error, Result};
use crate::facts::{self, FactsSink};
use crate::invalidation;
use crate::map::Ranking;
pub use crate::memo::Provenance;
pub(crate) mod stale_list;
pub use self::stale_list::{StaleKey, keep_stale_frames, stale_frames, stale_frames_keyed};

use crate::synthesis::{
    self, Concat, Filter, META_POLICY, Summary, SynthesisPolicy, SynthesisRequest,
};

/// The error a producer or a synthesis policy answers for work it has handed to a batch that
/// has not come back yet: [`crate::generate`] counts the node as deferred, not failed, and
/// leaves the directories above it for a later run, since their frames would read children
/// that are still missing.
pub const DEFERRED: &str = "deferred to a batch";

/// Produces a file frame's content from the file. Must be deterministic for a given input when
/// it is to be memoized; an LLM producer from a higher crate implements this too.
pub trait FrameProducer: Send + Sync {
    /// A stable id, recorded in the frames it produces.
    fn id(&self) -> String;
    /// The content for `node`'s frame, from the node's content.
    fn produce(&self, node: &NodeRecord, content: &[u8]) -> Result<Vec<u8>, String>;
    /// What of the node's path the content depends on: empty (the default) for nothing, so
    /// that a renamed, moved or duplicated file reuses its frame; the language an extension
    /// names, say; or the whole path. Memoization keys on it beside the content, so a frame is
    /// reused only where the producer would have written the same.
    fn path_input(&self, path: &str) -> String {
        let _ = path;
        String::new()
    }
    /// Whether this producer replaces frames that the producer `id` made even where they are
    /// not stale: an earlier version of itself, whose frames would otherwise stay until their
    /// files change. `generate` re-produces such frames; frames of other producers (a model's)
    /// are left alone unless it is asked to replace them.
    fn supersedes(&self, id: &str) -> bool {
        let _ = id;
        false
    }
    /// Who writes this producer's frames, recorded in their metadata (`provider`, `model`):
    /// a model's provider and name; nothing (the default) for a deterministic producer.
    fn provenance(&self) -> Provenance {
        Provenance::default()
    }
    /// Keeps in `store` what the producer derived beside the frames it made since the last
    /// call (the offline outline: each parsed file's facts, [`crate::facts`], from the parse
    /// its outline came from), so that readers find it cached. `generate` calls it once the
    /// files' frames are put, before directories; the default keeps nothing.
    fn keep_derived(&self, store: &Store) -> Result<()> {
        let _ = store;
        Ok(())
    }
}

/// Metadata key: the producer that made a file frame.
pub const META_PRODUCER: &str = "producer";
/// Metadata key: hash of (producer id, file content) that the frame was made from.
pub const META_PRODUCER_INPUT: &str = "producer.input";

/// A deterministic outline of a file, needing no model. Where the `outline` crate reads the
/// language (Rust, Python, JavaScript, TypeScript, Go, Java, C, C++ through its grammar
/// features; Markdown, JSON, TOML, YAML by hand), the file's structure: its doc, then its
/// definitions nested by scope, each with its signature, first doc line and line number, within
/// 4 KiB and saying what it left out. For other files, and where it finds nothing: kind, size,
/// lines, language by extension, and the first non-empty lines, each cut at
/// [`synthesis::MAX_LINE_BYTES`] and the whole at `max_bytes`, with a marker saying how much was cut. It names no path (the frame is
/// on the file's node, and a parent's contents list names it), so a renamed file keeps its
/// outline unless its language changes.
///
/// It keeps the parsers it has used (one per thread that outlined at once, as `generate`'s
/// workers do) and hands them out again, rather than set one up per file. The parse an outline
/// is made from gives the file's facts too ([`crate::facts`]): they wait in the producer until
/// [`FrameProducer::keep_derived`] puts them in the store's cache, so that the import graph and
/// search need not parse the file again.
#[derive(Clone, Debug)]
pub struct Outline {
    /// How many leading non-empty lines to keep.
    pub lines: usize,
    /// The most bytes of an outline.
    pub max_bytes: usize,
    parsers: Arc<Mutex<Vec<outline::Parser>>>,
    facts: FactsSink,
}

impl Default for Outline {
    fn default() -> Outline {
        Outline::new(8, 2048)
    }
}

impl Outline {
    /// An outline whose fallback keeps `lines` leading lines, within `max_bytes`.
    pub fn new(lines: usize, max_bytes: usize) -> Outline {
        Outline {
            lines,
            max_bytes,
            parsers: Arc::default(),
            facts: FactsSink::default(),
        }
    }

    /// The structural outline of `text` (the content of a file whose content hash is
    /// `content`), with a parser from the pool (a new one when all are in use, or when a thread
    /// panicked holding the lock); the file's facts, from the same parse, go to the sink.
    fn structure(
        &self,
        lang: outline::Language,
        text: &str,
        content: &Hash,
    ) -> outline::Result<outline::Outline> {
        let mut parser = self
            .parsers
            .lock()
            .ok()
            .and_then(|mut pool| pool.pop())
            .unwrap_or_default();
        let structure = parser.skim(lang, text).map(|parsed| {
            let structure = parsed.outline();
            let facts = facts::file_facts(text.len(), Some((&parsed, &structure)));
            self.facts.record(lang, content, &facts);
            structure
        });
        if let Ok(mut pool) = self.parsers.lock() {
            pool.push(parser);
        }
        if structure.is_err() {
            self.facts
                .record(lang, content, &facts::file_facts(text.len(), None));
        }
        structure
    }
}

/// `1 line`, `2 lines`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The language a file's name suggests (`Rust` for `*.rs`, `Makefile`, ...); `text` when it
/// suggests none.
pub fn language(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name {
        "Makefile" | "makefile" | "GNUmakefile" => return "Makefile",
        "Dockerfile" | "Containerfile" => return "Dockerfile",
        "CMakeLists.txt" => return "CMake",
        _ => {}
    }
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "rs" => "Rust",
        "py" => "Python",
        "js" | "mjs" | "cjs" => "JavaScript",
        "ts" | "tsx" => "TypeScript",
        "go" => "Go",
        "c" | "h" => "C",
        "cc" | "cpp" | "hpp" | "cxx" => "C++",
        "java" => "Java",
        "md" => "Markdown",
        "toml" => "TOML",
        "yaml" | "yml" => "YAML",
        "json" => "JSON",
        "sh" => "shell",
        _ => "text",
    }
}

impl FrameProducer for Outline {
    /// `outline:v6:8:2048`: the outline crate's format version (bumped when any outline
    /// changes), the fallback's line count and its byte bound. Version 1 was `outline:8`.
    fn id(&self) -> String {
        format!(
            "outline:{}:{}:{}",
            outline::FORMAT,
            self.lines,
            self.max_bytes
        )
    }

    fn produce(&self, node: &NodeRecord, content: &[u8]) -> Result<Vec<u8>, String> {
        if node.kind == NodeKind::Symlink {
            return Ok(format!("symlink to {}\n", String::from_utf8_lossy(content)).into_bytes());
        }
        let Ok(text) = std::str::from_utf8(content) else {
            if let Some(lang) = outline::Language::from_path(&node.path) {
                let none = facts::file_facts(content.len(), None);
                self.facts.record(lang, &node.content_hash, &none);
            }
            return Ok(format!("binary, {}\n", counted(content.len(), "byte")).into_bytes());
        };
        if let Some(lang) = outline::Language::from_path(&node.path) {
            let structure = self
                .structure(lang, text, &node.content_hash)
                .map_err(|e| e.to_string())?;
            if !structure.is_empty() {
                let config = outline::RenderConfig::default();
                return Ok(outline::render(&structure, &config).into_bytes());
            }
        }
        let mut out = format!(
            "{}, {}, {}\n",
            language(&node.path),
            counted(content.len(), "byte"),
            counted(text.lines().count(), "line")
        );
        for line in text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(self.lines)
        {
            out.push_str("  ");
            out.push_str(&synthesis::cut_to_bytes(
                line.trim_end(),
                synthesis::MAX_LINE_BYTES,
            ));
            out.push('\n');
        }
        Ok(synthesis::cut_to_bytes(&out, self.max_bytes)
            .into_owned()
            .into_bytes())
    }

    fn path_input(&self, path: &str) -> String {
        match outline::Language::from_path(path) {
            // The grammar too: `.h` and `.hpp` both parse as C++, but fall back under two names.
            Some(lang) => format!("{}/{}", language(path), lang.name()),
            None => language(path).to_owned(),
        }
    }

    /// Every earlier outline version (`outline:8` was the first).
    fn supersedes(&self, id: &str) -> bool {
        id.starts_with("outline:") && id != self.id()
    }

    /// The facts of the files outlined since the last call.
    fn keep_derived(&self, store: &Store) -> Result<()> {
        self.facts.keep(store)?;
        Ok(())
    }
}

/// Producers by frame type, and by the producer id a frame recorded.
#[derive(Clone, Default)]
pub struct Producers {
    by_type: BTreeMap<String, Arc<dyn FrameProducer>>,
    by_id: BTreeMap<String, Arc<dyn FrameProducer>>,
}

impl Producers {
    /// Uses `producer` for every frame of `frame_type`.
    pub fn with(mut self, frame_type: &str, producer: Arc<dyn FrameProducer>) -> Producers {
        self.by_type.insert(frame_type.to_owned(), producer);
        self
    }

    /// Uses `producer` again for the frames it made (those recording its id).
    pub fn with_known(mut self, producer: Arc<dyn FrameProducer>) -> Producers {
        self.by_id.insert(producer.id(), producer);
        self
    }

    /// Every producer it holds (one held twice is given twice).
    fn all(&self) -> impl Iterator<Item = &Arc<dyn FrameProducer>> {
        self.by_type.values().chain(self.by_id.values())
    }

    /// The producer that regenerates `frame`: the one for its type, else the one it recorded.
    /// A frame put by hand with no producer for its type has none: it is never overwritten.
    pub fn for_frame(&self, frame: &Frame) -> Option<&Arc<dyn FrameProducer>> {
        self.by_type.get(&frame.frame_type).or_else(|| {
            frame
                .metadata
                .extra
                .get(META_PRODUCER)
                .and_then(|id| self.by_id.get(id))
        })
    }
}

/// The built-in synthesis policy a recorded policy id names (`concat`, `summary:L:B`,
/// `map:v1:B`, `filter:contains:TEXT`).
pub fn builtin_policy(id: &str) -> Option<Arc<dyn SynthesisPolicy>> {
    if id == "concat" {
        return Some(Arc::new(Concat));
    }
    if let Some(rest) = id.strip_prefix("summary:") {
        let (l, b) = rest.split_once(':')?;
        return Some(Arc::new(Summary {
            lines_per_child: l.parse().ok()?,
            max_bytes: b.parse().ok()?,
        }));
    }
    // A map of any version is made again as the current one.
    if let Some(rest) = id
        .strip_prefix("map:v")
        .and_then(|r| r.split_once(':'))
        .filter(|(version, _)| version.bytes().all(|b| b.is_ascii_digit()))
        .map(|(_, rest)| rest)
    {
        // A map ranked by weights names them after its bytes: the import graph's (of the tree
        // as it is when the map is made again), or others, which live above this crate.
        let (bytes, ranking) = match rest.split_once(':') {
            None => (rest, Ranking::Size),
            Some((bytes, w)) if w == "imports" || w.starts_with("imports:") => {
                (bytes, Ranking::Imports)
            }
            Some(_) => return None,
        };
        return Some(Arc::new(crate::map::Map {
            max_bytes: bytes.parse().ok()?,
            ranking,
        }));
    }
    if let Some(needle) = id.strip_prefix("filter:contains:") {
        return Some(Arc::new(Filter::containing(needle)));
    }
    None
}

/// Which paths a regeneration covers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegenerateScope {
    /// Also every descendant of the path.
    pub recursive: bool,
    /// Also this many ancestors (propagation boundary); `None`: none.
    pub up: Option<usize>,
}

/// How to regenerate.
#[derive(Clone)]
pub struct RegenerateRequest<'a> {
    /// What to cover.
    pub scope: RegenerateScope,
    /// Producers for file frames.
    pub producers: &'a Producers,
    /// Extra synthesis policies by id, beside the built-in ones.
    pub policies: &'a BTreeMap<String, Arc<dyn SynthesisPolicy>>,
    /// `created_at` for new frames.
    pub now_ms: u64,
}

/// Why a frame is stale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stale {
    /// The path of the node.
    pub path: String,
    /// The frame type.
    pub frame_type: String,
    /// The stale frame (the latest of its type at the path).
    pub frame_id: Hash,
    /// Why: `node changed`, `children changed` or `invalidated`.
    pub reason: &'static str,
}

/// What one regeneration did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Regenerated {
    /// New frames whose producer or policy ran: (path, frame type, frame id).
    pub regenerated: Vec<(String, String, Hash)>,
    /// New frames whose content was reused because their inputs were unchanged (early cutoff).
    pub reused: Vec<(String, String, Hash)>,
    /// Frames in scope that were not stale.
    pub unchanged: usize,
    /// Stale frames that could not be regenerated, with why.
    pub skipped: Vec<String>,
}

/// The current heads at a path worth checking: every type but invalidation records.
fn frames_at(store: &Store, rec: &NodeRecord) -> Result<Vec<Frame>> {
    crate::current::current_frames(store, &rec.node_id, &rec.path)
}

/// The policies one regeneration makes directory frames with, by the id their frames
/// recorded: each as it reads the tree ([`SynthesisPolicy::with_tree`]), asked once.
struct Policies<'r, 'a> {
    req: &'r RegenerateRequest<'a>,
    resolved: BTreeMap<String, Arc<dyn SynthesisPolicy>>,
}

impl Policies<'_, '_> {
    fn get(&mut self, store: &Store, id: &str) -> Result<Option<Arc<dyn SynthesisPolicy>>> {
        if let Some(p) = self.resolved.get(id) {
            return Ok(Some(Arc::clone(p)));
        }
        let Some(policy) = self
            .req
            .policies
            .get(id)
            .cloned()
            .or_else(|| builtin_policy(id))
        else {
            return Ok(None);
        };
        // What the producers parsed so far, for a policy that reads the tree's facts.
        for producer in self.req.producers.all() {
            producer.keep_derived(store)?;
        }
        let policy = policy.with_tree(store)?.unwrap_or(policy);
        self.resolved.insert(id.to_owned(), Arc::clone(&policy));
        Ok(Some(policy))
    }
}

/// Whether `frame` (the latest of its type at `node`'s path) is stale, and why.
pub fn staleness(store: &Store, node: &NodeRecord, frame: &Frame) -> Result<Option<&'static str>> {
    if invalidation::pending(store, &node.path, frame)?.is_some() {
        return Ok(Some(INVALIDATED));
    }
    let policy = frame.metadata.extra.get(META_POLICY);
    match policy {
        Some(policy) if node.kind == NodeKind::Dir => {
            let collect = synthesis::collected_type(frame);
            let children = synthesis::child_frames(store, node, collect)?;
            let epoch =
                invalidation::latest(store, &node.path, &frame.frame_type)?.map(|f| f.frame_id);
            let basis =
                synthesis::synthesis_basis(node, collect, policy, &children, epoch.as_ref());
            Ok((basis != frame.basis).then_some(CHILDREN_CHANGED))
        }
        // A file frame, or a frame put by hand: stale once the node has a newer version.
        _ => Ok((frame.node_id != node.node_id).then_some(NODE_CHANGED)),
    }
}

const NODE_CHANGED: &str = "node changed";
const CHILDREN_CHANGED: &str = "children changed";
const INVALIDATED: &str = "invalidated";
/// The reasons a frame is stale, as [`staleness`] gives them.
pub(crate) const STALE_REASONS: [&str; 3] = [NODE_CHANGED, CHILDREN_CHANGED, INVALIDATED];

/// The paths a scope covers, deepest first so children come before parents.
fn scope_paths(store: &Store, node: &NodeRecord, scope: &RegenerateScope) -> Result<Vec<String>> {
    let mut paths = vec![node.path.clone()];
    if scope.recursive && node.kind == NodeKind::Dir {
        paths.extend(
            store
                .list_nodes(&node.path, true)?
                .into_iter()
                .map(|n| n.path),
        );
    }
    let mut p = node.path.as_str();
    for _ in 0..scope.up.unwrap_or(0) {
        if p.is_empty() {
            break;
        }
        p = p.rsplit_once('/').map_or("", |(parent, _)| parent);
        paths.push(p.to_owned());
    }
    let depth = |s: &str| {
        if s.is_empty() {
            0
        } else {
            s.matches('/').count() + 1
        }
    };
    paths.sort_by(|a, b| depth(b).cmp(&depth(a)).then(a.cmp(b)));
    paths.dedup();
    Ok(paths)
}

/// Regenerates the stale frames in scope, bottom-up. Re-running with nothing changed writes
/// nothing.
pub fn regenerate(
    store: &Store,
    node: &NodeRecord,
    req: &RegenerateRequest<'_>,
) -> Result<Regenerated> {
    let mut report = Regenerated::default();
    let mut policies = Policies {
        req,
        resolved: BTreeMap::new(),
    };
    for path in scope_paths(store, node, &req.scope)? {
        let Some(rec) = store.node_at(&path)? else {
            continue;
        };
        for frame in frames_at(store, &rec)? {
            let Some(_) = staleness(store, &rec, &frame)? else {
                report.unchanged += 1;
                continue;
            };
            let key = (path.clone(), frame.frame_type.clone());
            match regenerate_one(store, &rec, &frame, req, &mut policies) {
                Ok(Some((id, true))) => report.regenerated.push((key.0, key.1, id)),
                Ok(Some((id, false))) => report.reused.push((key.0, key.1, id)),
                Ok(None) => {}
                Err(e) => report
                    .skipped
                    .push(format!("{path:?} {}: {e}", frame.frame_type)),
            }
        }
    }
    for producer in req.producers.all() {
        producer.keep_derived(store)?;
    }
    Ok(report)
}

/// Appends the replacement of one stale frame; returns its id and whether work ran.
fn regenerate_one(
    store: &Store,
    rec: &NodeRecord,
    old: &Frame,
    req: &RegenerateRequest<'_>,
    policies: &mut Policies<'_, '_>,
) -> Result<Option<(Hash, bool)>> {
    if let Some(policy_id) = old
        .metadata
        .extra
        .get(META_POLICY)
        .filter(|_| rec.kind == NodeKind::Dir)
    {
        let policy = policies
            .get(store, policy_id)?
            .ok_or_else(|| Error::Policy {
                policy: policy_id.clone(),
                path: rec.path.clone(),
                message: "no such policy is registered".to_owned(),
            })?;
        let done = synthesis::synthesize(
            store,
            rec,
            &SynthesisRequest {
                frame_type: synthesis::collected_type(old),
                agent: &old.agent_id,
                policy: policy.as_ref(),
                now_ms: req.now_ms,
            },
        )?;
        return Ok(Some((done.frame_id, done.policy_ran)));
    }
    if rec.kind == NodeKind::Dir {
        return Err(Error::NoProducer {
            frame_type: old.frame_type.clone(),
            path: rec.path.clone(),
        });
    }
    let producer = req
        .producers
        .for_frame(old)
        .ok_or_else(|| Error::NoProducer {
            frame_type: old.frame_type.clone(),
            path: rec.path.clone(),
        })?;
    store.authorize(&old.agent_id, "put frames", Role::can_write)?;
    let content = store.read_content(rec)?;
    let input = producer_input(producer.as_ref(), rec, &content);
    let pending = invalidation::pending(store, &rec.path, old)?;
    let reusable = pending.is_none() && old.metadata.extra.get(META_PRODUCER_INPUT) == Some(&input);
    let (new_content, ran) = if reusable {
        (old.content.clone(), false)
    } else {
        let c = producer
            .produce(rec, &content)
            .map_err(|message| Error::Producer {
                producer: producer.id(),
                path: rec.path.clone(),
                message,
            })?;
        (c, true)
    };
    let mut frame = produced_frame(
        rec,
        &old.frame_type,
        &old.agent_id,
        new_content,
        producer.as_ref(),
        input,
        req.now_ms,
    );
    if let Some(inv) = pending {
        frame.basis = Some(answering_basis(rec, &inv));
    }
    let put = store.put_frame(frame)?;
    Ok(Some((put.frame_id, ran)))
}

/// The hash a produced frame records of what it was made from: the producer, the node's kind
/// (a symlink's content is its target: the same bytes as a file's are another input), what the
/// producer reads of the path ([`FrameProducer::path_input`]) and the content.
pub fn producer_input(producer: &dyn FrameProducer, node: &NodeRecord, content: &[u8]) -> String {
    Encoder::new("producer-input")
        .bytes(producer.id().as_bytes())
        .bytes(node.kind.as_str().as_bytes())
        .bytes(producer.path_input(&node.path).as_bytes())
        .bytes(content)
        .finish()
        .to_hex()
}

/// Produces a file frame for the first time (or again), recording its producer so that
/// `regenerate` can redo it.
pub fn produce(
    store: &Store,
    rec: &NodeRecord,
    frame_type: &str,
    agent: &str,
    producer: &dyn FrameProducer,
    now_ms: u64,
) -> Result<Hash> {
    store.authorize(agent, "put frames", Role::can_write)?;
    let content = store.read_content(rec)?;
    let input = producer_input(producer, rec, &content);
    let body = producer
        .produce(rec, &content)
        .map_err(|message| Error::Producer {
            producer: producer.id(),
            path: rec.path.clone(),
            message,
        })?;
    let frame = produced_frame(rec, frame_type, agent, body, producer, input, now_ms);
    let id = store.put_frame(frame)?.frame_id;
    producer.keep_derived(store)?;
    Ok(id)
}

/// A file frame made by `producer` from content whose [`producer_input`] is `input`, recording
/// both so that a later regeneration can redo it, or reuse it when the input is unchanged.
pub(crate) fn produced_frame(
    rec: &NodeRecord,
    frame_type: &str,
    agent: &str,
    content: Vec<u8>,
    producer: &dyn FrameProducer,
    input: String,
    now_ms: u64,
) -> NewFrame {
    let mut frame = NewFrame::new(rec.node_id, frame_type, agent, content);
    frame.metadata.created_at_ms = now_ms;
    let made_by = producer.provenance();
    frame.metadata.provider = made_by.provider;
    frame.metadata.model = made_by.model;
    let extra = &mut frame.metadata.extra;
    extra.insert(META_PRODUCER.to_owned(), producer.id());
    extra.insert(META_PRODUCER_INPUT.to_owned(), input);
    frame
}

/// The basis of a file frame produced again because of invalidation `inv`: a new frame even
/// when the recomputed content is the same, since its basis names the invalidation it answers
/// (otherwise the put would be a no-op and the frame would stay stale for ever).
pub(crate) fn answering_basis(rec: &NodeRecord, inv: &Frame) -> Hash {
    Encoder::new("regenerated")
        .hash(&rec.node_id)
        .hash(&inv.frame_id)
        .finish()
}
