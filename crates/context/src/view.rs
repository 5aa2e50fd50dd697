//! `get_node(node, view)`: a bounded, deterministic selection of the frames around a node.
//!
//! Composition is read-only: it only calls the store's read API. The same store state and the
//! same view give the same frames in the same order, every run. Candidates are collected from
//! the view's sources, filtered, ordered by the view's policy, and cut to `max_frames`; ties in
//! every policy break on the total order (NodeID, then FrameID), ascending.
use std::sync::Arc;

use merkle_store::{Frame, FrameSummary, NodeId, NodeRecord, Store};

use crate::error::Result;

/// Where candidate frames come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The node itself.
    Node,
    /// The node's parent directory.
    Parent,
    /// The other children of the node's parent directory.
    Siblings,
    /// Listed nodes.
    Related(Vec<NodeId>),
    /// The files the node's file imports, then the files that import it (the related-files
    /// graph, [`crate::graph`]), at most [`MAX_GRAPH_RELATED`]: what the `related` source
    /// means when no nodes are listed.
    Imports,
}

/// The most related files the [`Source::Imports`] source adds: direct imports first, then
/// importers, each by path.
pub const MAX_GRAPH_RELATED: usize = 16;

/// Which source a composed frame came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SourceKind {
    /// The node itself.
    Node,
    /// A related node.
    Related,
    /// The parent directory.
    Parent,
    /// A sibling.
    Sibling,
}

impl SourceKind {
    /// The source as JSON spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Node => "node",
            SourceKind::Related => "related",
            SourceKind::Parent => "parent",
            SourceKind::Sibling => "sibling",
        }
    }

    /// The relevance weight of the source: the node itself counts most.
    fn weight(self) -> i64 {
        match self {
            SourceKind::Node => 4,
            SourceKind::Related => 3,
            SourceKind::Parent => 2,
            SourceKind::Sibling => 1,
        }
    }
}

/// Which candidates to keep. Empty lists keep everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filters {
    /// Keep only these frame types.
    pub frame_types: Vec<String>,
    /// Keep only frames by these agents.
    pub agents: Vec<String>,
    /// Keep only frames created at or after this time (ms since the epoch).
    pub created_from_ms: Option<u64>,
    /// Keep only frames created before this time (ms since the epoch).
    pub created_until_ms: Option<u64>,
    /// Keep only the head frame of each (node, type).
    pub heads_only: bool,
}

/// A frame as an ordering policy sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The frame.
    pub frame: Frame,
    /// Where it came from.
    pub source: SourceKind,
    /// The path of the node it is on.
    pub path: String,
    /// Whether it is the head of its (node, type).
    pub is_head: bool,
}

/// A pluggable ordering: a deterministic score, higher first.
pub trait FrameScorer: Send + Sync + std::fmt::Debug {
    /// The score of a candidate. Must depend only on the candidate.
    fn score(&self, candidate: &Candidate) -> i64;
}

/// How candidates are ordered before the bound is applied.
#[derive(Clone, Debug)]
pub enum Ordering {
    /// The node's own frames first (as in every built-in ordering), then newest first (by
    /// `created_at`, then by the store's append order).
    Recency,
    /// The node's own frames first; then listed types first, in list order; unlisted types
    /// after; then newest first.
    TypePriority(Vec<String>),
    /// The node's own frames first; then listed agents first, in list order; unlisted agents
    /// after; then newest first.
    AgentPriority(Vec<String>),
    /// The documented relevance score: source weight (node 4, related 3, parent 2, sibling 1),
    /// then heads before superseded frames, then newest first.
    Relevance,
    /// A custom scorer, higher first.
    Custom(Arc<dyn FrameScorer>),
}

impl Ordering {
    /// The policy's name, as views spell it.
    pub fn name(&self) -> &'static str {
        match self {
            Ordering::Recency => "recency",
            Ordering::TypePriority(_) => "type_priority",
            Ordering::AgentPriority(_) => "agent_priority",
            Ordering::Relevance => "relevance",
            Ordering::Custom(_) => "custom",
        }
    }
}

/// What `get_node` selects.
#[derive(Clone, Debug)]
pub struct ContextView {
    /// The hard bound on frames returned.
    pub max_frames: usize,
    /// Where candidates come from, in no particular order (ordering decides).
    pub sources: Vec<Source>,
    /// Which candidates to keep.
    pub filters: Filters,
    /// How to order them.
    pub ordering: Ordering,
}

impl Default for ContextView {
    /// The node's own frames, newest first, at most 20.
    fn default() -> ContextView {
        ContextView {
            max_frames: 20,
            sources: vec![Source::Node],
            filters: Filters::default(),
            ordering: Ordering::Recency,
        }
    }
}

impl ContextView {
    /// How far the view reads for the node at workspace path `path`, the scope a read of it
    /// checks on disk ([`crate::ops::Workspace::read_at`]): the node and below it, or its
    /// parent's folder where the view shows its parent or siblings; `None`, the whole tree,
    /// where it shows the files the node imports or others named.
    pub fn reach(&self, path: &str) -> Option<String> {
        let mut reach = path;
        for source in &self.sources {
            match source {
                Source::Node => {}
                Source::Parent | Source::Siblings => {
                    reach = path.rsplit_once('/').map_or("", |(parent, _)| parent);
                }
                Source::Imports | Source::Related(_) => return None,
            }
        }
        Some(reach.to_owned())
    }
}

/// A composed frame and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComposedFrame {
    /// The frame.
    pub frame: Frame,
    /// Its source.
    pub source: SourceKind,
    /// The path of the node it is on.
    pub path: String,
}

/// The result of `get_node`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeContext {
    /// The node asked for.
    pub node: NodeRecord,
    /// The selected frames, in view order, at most `max_frames`.
    pub frames: Vec<ComposedFrame>,
    /// How many candidates passed the filters, before the bound.
    pub frame_count: usize,
    /// Sources that could not be read (missing nodes or frames), with why; never fatal.
    pub skipped: Vec<String>,
}

/// Composes the view of `node`. Read-only.
pub fn get_node(store: &Store, node: &NodeRecord, view: &ContextView) -> Result<NodeContext> {
    let mut skipped = Vec::new();
    let parent = parent_of(store, node, &mut skipped);
    let mut sources = sources_of(store, node, parent.as_ref(), &view.sources, &mut skipped);
    // A node reached through two sources counts once, under its strongest source.
    sources.sort_by(|a, b| a.1.node_id.cmp(&b.1.node_id).then(a.0.cmp(&b.0)));
    sources.dedup_by(|b, a| a.1.node_id == b.1.node_id);
    let lights = light_frames(store, &sources, &view.filters, &mut skipped);
    let frame_count = lights.len();
    let candidates = pick(store, lights, view, &mut skipped);
    Ok(NodeContext {
        node: node.clone(),
        frames: candidates
            .into_iter()
            .map(|c| ComposedFrame {
                frame: c.frame,
                source: c.source,
                path: c.path,
            })
            .collect(),
        frame_count,
        skipped,
    })
}

/// The record of `node`'s parent folder; `None` for the root, or (said in `skipped`) where it
/// cannot be read.
fn parent_of(store: &Store, node: &NodeRecord, skipped: &mut Vec<String>) -> Option<NodeRecord> {
    if node.path.is_empty() {
        return None;
    }
    let parent_path = node.path.rsplit_once('/').map_or("", |(p, _)| p);
    match store.node_at(parent_path) {
        Ok(Some(p)) => Some(p),
        Ok(None) => {
            skipped.push(format!("parent {parent_path:?}: not in the last scan"));
            None
        }
        Err(e) => {
            skipped.push(format!("parent {parent_path:?}: {e}"));
            None
        }
    }
}

/// The nodes whose frames the view reads, each with its source, in the order of `wanted`;
/// what cannot be read is said in `skipped`.
fn sources_of(
    store: &Store,
    node: &NodeRecord,
    parent: Option<&NodeRecord>,
    wanted: &[Source],
    skipped: &mut Vec<String>,
) -> Vec<(SourceKind, NodeRecord)> {
    let mut sources: Vec<(SourceKind, NodeRecord)> = Vec::new();
    for source in wanted {
        match source {
            Source::Node => sources.push((SourceKind::Node, node.clone())),
            Source::Parent => {
                if let Some(p) = parent {
                    sources.push((SourceKind::Parent, p.clone()));
                }
            }
            Source::Siblings => {
                let Some(p) = parent else { continue };
                for child in &p.children {
                    let path = p.child_path(&child.name);
                    if path == node.path {
                        continue;
                    }
                    match store.node(&child.node_id) {
                        Ok(Some(rec)) => sources.push((SourceKind::Sibling, rec)),
                        Ok(None) => skipped.push(format!(
                            "sibling {path:?}: node {} is missing",
                            child.node_id
                        )),
                        Err(e) => skipped.push(format!("sibling {path:?}: {e}")),
                    }
                }
            }
            Source::Imports => imported(store, node, &mut sources, skipped),
            Source::Related(ids) => {
                for id in ids {
                    match store.node(id) {
                        Ok(Some(rec)) => sources.push((SourceKind::Related, rec)),
                        Ok(None) => skipped.push(format!("related node {id}: not in the store")),
                        Err(e) => skipped.push(format!("related node {id}: {e}")),
                    }
                }
            }
        }
    }
    sources
}

/// Adds to `sources` the files a file `node` imports or is imported by (at most
/// [`MAX_GRAPH_RELATED`]), from the import graph; nothing for a folder.
fn imported(
    store: &Store,
    node: &NodeRecord,
    sources: &mut Vec<(SourceKind, NodeRecord)>,
    skipped: &mut Vec<String>,
) {
    if !node.kind.is_leaf() {
        return;
    }
    let related = crate::facts::TreeFacts::read(store).and_then(|facts| {
        crate::graph::Graph::of_tree(store, &facts).map(|g| g.related(&node.path))
    });
    match related {
        Ok(related) => {
            for r in related.iter().take(MAX_GRAPH_RELATED) {
                match store.node_at(&r.path) {
                    Ok(Some(rec)) => sources.push((SourceKind::Related, rec)),
                    Ok(None) => skipped.push(format!("related {:?}: not in the last scan", r.path)),
                    Err(e) => skipped.push(format!("related {:?}: {e}", r.path)),
                }
            }
        }
        Err(e) => skipped.push(format!("related files of {:?}: {e}", node.path)),
    }
}

/// The frames of `sources` that the filters keep, as summaries (their records not read yet).
fn light_frames(
    store: &Store,
    sources: &[(SourceKind, NodeRecord)],
    f: &Filters,
    skipped: &mut Vec<String>,
) -> Vec<Light> {
    let mut lights = Vec::new();
    for (kind, rec) in sources {
        let head_frames = match store.heads(&rec.node_id) {
            Ok(h) => h,
            Err(e) => {
                skipped.push(format!("heads of {:?}: {e}", rec.path));
                Vec::new()
            }
        };
        let heads: Vec<_> = head_frames.iter().map(|h| h.frame_id).collect();
        // Read only what the filters can keep, and of that only the history index: the heads
        // alone, or the summaries of the listed types' history. Frame records are read once
        // the view has picked its frames.
        let summaries = if f.heads_only {
            Ok(head_frames.iter().map(summary_of).collect())
        } else if f.frame_types.is_empty() {
            store.frame_summaries(&rec.node_id, None)
        } else {
            f.frame_types
                .iter()
                .map(|t| store.frame_summaries(&rec.node_id, Some(t)))
                .collect::<merkle_store::Result<Vec<_>>>()
                .map(|v| v.into_iter().flatten().collect())
        };
        let summaries: Vec<FrameSummary> = match summaries {
            Ok(s) => s,
            Err(e) => {
                skipped.push(format!("frames of {:?}: {e}", rec.path));
                continue;
            }
        };
        for sum in summaries {
            let is_head = heads.contains(&sum.frame_id);
            // Invalidation markers are records, not context: shown only when asked for by type.
            let keep = (f.frame_types.is_empty()
                && !crate::invalidation::is_invalidation(&sum.frame_type)
                || f.frame_types.contains(&sum.frame_type))
                && (f.agents.is_empty() || f.agents.contains(&sum.agent_id))
                && f.created_from_ms.is_none_or(|t| sum.created_at_ms >= t)
                && f.created_until_ms.is_none_or(|t| sum.created_at_ms < t)
                && (!f.heads_only || is_head);
            if keep {
                lights.push(Light {
                    sum,
                    source: *kind,
                    path: rec.path.clone(),
                    is_head,
                });
            }
        }
    }
    lights
}

/// The view's frames of `lights`, in its order, at most `view.max_frames`, their records
/// read (a custom scorer reads every one first, as it may read anything in a frame).
fn pick(
    store: &Store,
    mut lights: Vec<Light>,
    view: &ContextView,
    skipped: &mut Vec<String>,
) -> Vec<Candidate> {
    let load = |l: Light, skipped: &mut Vec<String>| match store.frame(&l.sum.frame_id) {
        Ok(Some(frame)) => Some(Candidate {
            frame,
            source: l.source,
            path: l.path,
            is_head: l.is_head,
        }),
        Ok(None) => {
            skipped.push(format!("frame {} on {:?}: missing", l.sum.frame_id, l.path));
            None
        }
        Err(e) => {
            skipped.push(format!("frame {} on {:?}: {e}", l.sum.frame_id, l.path));
            None
        }
    };
    match &view.ordering {
        Ordering::Custom(scorer) => {
            let mut all: Vec<Candidate> = lights
                .into_iter()
                .filter_map(|l| load(l, skipped))
                .collect();
            all.sort_by_cached_key(|c| {
                (
                    std::cmp::Reverse(scorer.score(c)),
                    (c.frame.node_id, c.frame.frame_id),
                )
            });
            all.truncate(view.max_frames);
            all
        }
        ordering => {
            order(&mut lights, ordering);
            lights.truncate(view.max_frames);
            lights
                .into_iter()
                .filter_map(|l| load(l, skipped))
                .collect()
        }
    }
}

/// A candidate before its frame record is read.
struct Light {
    sum: FrameSummary,
    source: SourceKind,
    path: String,
    is_head: bool,
}

fn summary_of(f: &Frame) -> FrameSummary {
    FrameSummary {
        frame_id: f.frame_id,
        node_id: f.node_id,
        frame_type: f.frame_type.clone(),
        agent_id: f.agent_id.clone(),
        created_at_ms: f.metadata.created_at_ms,
        seq: f.seq,
    }
}

/// Sorts candidates by a built-in policy. Every policy puts the node's own frames before
/// those of other sources (a bound then never drops the node's context for a neighbour's),
/// and ends on the total order (NodeID, FrameID).
fn order(candidates: &mut [Light], ordering: &Ordering) {
    use std::cmp::Reverse;
    let other = |c: &Light| c.source != SourceKind::Node;
    let newest = |c: &Light| Reverse((c.sum.created_at_ms, c.sum.seq));
    let rank = |list: &[String], s: &str| list.iter().position(|x| x == s).unwrap_or(list.len());
    let tie = |c: &Light| (c.sum.node_id, c.sum.frame_id);
    match ordering {
        Ordering::Recency | Ordering::Custom(_) => {
            candidates.sort_by_key(|c| (other(c), newest(c), tie(c)))
        }
        Ordering::TypePriority(list) => {
            candidates.sort_by_key(|c| (other(c), rank(list, &c.sum.frame_type), newest(c), tie(c)))
        }
        Ordering::AgentPriority(list) => {
            candidates.sort_by_key(|c| (other(c), rank(list, &c.sum.agent_id), newest(c), tie(c)))
        }
        Ordering::Relevance => candidates.sort_by_key(|c| {
            (
                Reverse(c.source.weight()),
                Reverse(c.is_head),
                newest(c),
                tie(c),
            )
        }),
    }
}
