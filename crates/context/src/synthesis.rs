//! Branch synthesis: a directory's frame of a type, derived from its children's head frames of
//! that type. Explicit only: nothing else in this crate or the store synthesizes.
//!
//! The basis of a synthesized frame is a hash of (directory NodeID, frame type, policy id, the
//! ordered child FrameIDs), so a change in any child's head changes the parent's basis, and two
//! directories never share a basis. Children's frames are ordered by (NodeID, FrameID) there;
//! the built-in policies write them in reading order instead ([`reading_order`]: a README
//! first, then entry points, then by name), which is as deterministic and what a reader wants.
//!
//! The frame's metadata also records `inputs`: a hash of the children's names and frame
//! contents that ignores their NodeIDs. When a directory is regenerated and its inputs equal
//! the previous frame's, the previous content is reused without running the policy (early
//! cutoff: an unchanged child summary costs nothing upstream).
//!
//! A policy that does not read names ([`SynthesisPolicy::reads_names`] is false: a model's
//! overview, say) is memoized on its children's kinds and frames alone, so a rename or a move
//! that changes no content costs no run anywhere above it. It is handed its children without
//! paths, in an order that does not depend on them, and context appends a contents list
//! naming each child after what it wrote ([`contents_list`]); the frame records where its own
//! output ends ([`META_OWN_BYTES`]), and a parent of the same kind reads only that part of it
//! ([`ChildFrame::body`]), never the names in the list.
use std::collections::HashMap;
use std::sync::Arc;

use merkle_store::{Encoder, Frame, Hash, NewFrame, NodeKind, NodeRecord, Role, Store};
use rayon::prelude::*;

use crate::error::{Error, Result};

mod policies;
pub use self::policies::{
    CONCAT_MAX_BYTES, CONCAT_MIN_CHILD_BYTES, Concat, Filter, MAX_LINE_BYTES, Summary,
    cut_to_bytes, reading_order,
};

/// One child frame that goes into a synthesis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildFrame {
    /// The child's workspace path; empty for a policy that does not read names.
    pub path: String,
    /// The child's kind.
    pub kind: NodeKind,
    /// The child's head frame.
    pub frame: Frame,
    /// A file's or symlink's size in bytes, as the tree has it now (its frame may be on an
    /// earlier version); `None` for a directory. Read by a policy whose
    /// [`SynthesisPolicy::reads_sizes`] says so.
    pub size: Option<u64>,
}

impl ChildFrame {
    /// What the child's frame says of the child: its whole content, except that a frame
    /// synthesized by a policy that does not read names ends before the contents list that
    /// context appended to it. A policy that does not read names reads only this.
    pub fn body(&self) -> &[u8] {
        own_output(&self.frame)
    }
}

/// A frame's content up to [`META_OWN_BYTES`], when it records that (and it fits).
fn own_output(frame: &Frame) -> &[u8] {
    frame
        .metadata
        .extra
        .get(META_OWN_BYTES)
        .and_then(|n| n.parse::<usize>().ok())
        .and_then(|n| frame.content.get(..n))
        .unwrap_or(&frame.content)
}

/// What a policy is given.
#[derive(Debug)]
pub struct SynthesisInput<'a> {
    /// The directory.
    pub dir: &'a NodeRecord,
    /// The frame type being synthesized (`*` for every type).
    pub frame_type: &'a str,
    /// The children's head frames, in (NodeID, FrameID) order.
    pub children: &'a [ChildFrame],
}

/// Turns children's frames into a directory's content. Must be deterministic: the same input
/// gives the same bytes. An LLM-backed policy from a higher crate implements this too.
pub trait SynthesisPolicy: Send + Sync {
    /// A stable id: part of the frame's basis, so a different policy gives a different frame.
    fn id(&self) -> String;
    /// The content for the directory's frame.
    fn synthesize(&self, input: &SynthesisInput<'_>) -> Result<Vec<u8>, String>;
    /// Who writes this policy's frames, recorded in their metadata: a model's provider and
    /// name; nothing (the default) for a deterministic policy.
    fn provenance(&self) -> crate::memo::Provenance {
        crate::memo::Provenance::default()
    }
    /// Whether the output depends on names: the directory's path and its children's. A policy
    /// that answers `false` must read only its children's kinds, frame types, agents and
    /// [`ChildFrame::body`] (it is given no child paths, and children in an order of those
    /// fields); it is then memoized on those alone, so renaming or moving unchanged files costs
    /// it no run, and context appends a [`contents_list`] naming the children to its output.
    fn reads_names(&self) -> bool {
        true
    }
    /// Whether the output depends on the children's sizes ([`ChildFrame::size`]): their memo
    /// inputs then hold the sizes too. A map does (a file whose frame states no size, a
    /// model's summary say, is counted by its size in the tree).
    fn reads_sizes(&self) -> bool {
        false
    }
    /// Whether its output is computed from its input alone, with no model or other service
    /// behind it, so that it may run on several directories at once: a level's directories are
    /// then prepared in parallel. `false` (the default): one at a time, in order.
    fn computes(&self) -> bool {
        false
    }
    /// Whether this policy replaces directory frames that the policy `id` made even where they
    /// are not stale: an earlier default it took over from, whose frames would otherwise stay
    /// until something below them changes. `generate` synthesizes such frames again.
    fn supersedes(&self, id: &str) -> bool {
        let _ = id;
        false
    }
    /// The policy that makes a generation's directory frames, asked once the files' frames are
    /// made: `None` (the default) for this one. A policy that reads the whole tree (the map
    /// ranked by the import graph, [`crate::map::Ranking::Imports`]) returns itself with what
    /// it read, under an id that names it. What it returns must depend on the current tree
    /// alone (paths and contents): a generation from a checkpoint does not ask again while
    /// the tree is the checkpoint's.
    fn with_tree(&self, store: &Store) -> Result<Option<Arc<dyn SynthesisPolicy>>> {
        let _ = store;
        Ok(None)
    }
}

/// The children's head frames that feed a synthesis, in (NodeID, FrameID) order.
pub fn child_frames(store: &Store, dir: &NodeRecord, frame_type: &str) -> Result<Vec<ChildFrame>> {
    if dir.kind != NodeKind::Dir {
        return Err(Error::NotADirectory {
            path: dir.path.clone(),
        });
    }
    // A child's head is the latest frame at its path, on whichever version of the child it was
    // put: a child edited but not yet regenerated still contributes its last known context
    // (and `status` reports it stale) rather than silently dropping out of its parent.
    let mut out = Vec::new();
    for child in &dir.children {
        let path = dir.child_path(&child.name);
        let heads = if frame_type == "*" {
            crate::current::current_frames(store, &child.node_id, &path)?
        } else {
            crate::current::current_frame(store, &child.node_id, &path, frame_type)?
                .into_iter()
                .collect()
        };
        for frame in heads {
            if crate::invalidation::is_invalidation(&frame.frame_type) {
                continue;
            }
            let size = match child.kind {
                NodeKind::Dir => None,
                // The tree's entry, read by path beside its siblings', where it is this child's
                // (a directory of an older tree reads the child's node by id).
                _ => match store.node_at(&path)? {
                    Some(n) if n.node_id == child.node_id => Some(n.size),
                    _ => store.node(&child.node_id)?.map(|n| n.size),
                },
            };
            out.push(ChildFrame {
                path: path.clone(),
                kind: child.kind,
                frame,
                size,
            });
        }
    }
    out.sort_by_key(|c| (c.frame.node_id, c.frame.frame_id));
    Ok(out)
}

/// The basis of a directory's synthesized frame. `epoch` is the newest invalidation of the
/// directory's frames of this type, if any: after an invalidation the basis differs, so the
/// frame is stale until it is synthesized again.
pub fn synthesis_basis(
    dir: &NodeRecord,
    frame_type: &str,
    policy_id: &str,
    children: &[ChildFrame],
    epoch: Option<&Hash>,
) -> Hash {
    // The store's framing: the domain tag and kind, then length-prefixed fields.
    let mut e = Encoder::new("synthesis");
    e.bytes(&dir.node_id.0)
        .bytes(frame_type.as_bytes())
        .bytes(policy_id.as_bytes());
    for c in children {
        e.bytes(&c.frame.frame_id.0);
    }
    if let Some(epoch) = epoch {
        e.bytes(b"epoch").bytes(&epoch.0);
    }
    e.finish()
}

/// A hash of what the policy reads, independent of NodeIDs: children's names, frame types and
/// contents, with the policy and type. Equal inputs give equal content. For a policy that does
/// not read names, the names (the directory's and its children's) are left out and each child
/// contributes its kind and [`ChildFrame::body`].
pub fn synthesis_inputs(
    dir: &NodeRecord,
    frame_type: &str,
    policy: &dyn SynthesisPolicy,
    children: &[ChildFrame],
) -> Hash {
    // The store's framing: the domain tag and kind, then length-prefixed fields.
    let sizes = policy.reads_sizes();
    let child = |e: &mut Encoder, c: &ChildFrame| {
        e.bytes(c.frame.frame_type.as_bytes())
            .bytes(c.frame.agent_id.as_bytes())
            .bytes(&c.frame.content);
        if sizes {
            e.bytes(&c.size.unwrap_or(u64::MAX).to_le_bytes());
        }
    };
    if !policy.reads_names() {
        let mut e = Encoder::new("synthesis-inputs-unnamed");
        e.bytes(frame_type.as_bytes()).bytes(policy.id().as_bytes());
        for c in unnamed(children) {
            e.bytes(kind_name(c.kind).as_bytes());
            child(&mut e, &c);
        }
        return e.finish();
    }
    let mut e = Encoder::new("synthesis-inputs");
    e.bytes(dir.path.as_bytes())
        .bytes(frame_type.as_bytes())
        .bytes(policy.id().as_bytes());
    let mut named: Vec<&ChildFrame> = children.iter().collect();
    named.sort_by(|a, b| {
        (a.path.as_bytes(), &a.frame.frame_type).cmp(&(b.path.as_bytes(), &b.frame.frame_type))
    });
    for c in named {
        e.bytes(c.path.as_bytes());
        child(&mut e, c);
    }
    e.finish()
}

fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::File => "file",
        NodeKind::Dir => "dir",
        NodeKind::Symlink => "symlink",
    }
}

/// The children as a policy that does not read names sees them: no paths, each frame cut to
/// its [`ChildFrame::body`], ordered by (kind, type, agent, body).
fn unnamed(children: &[ChildFrame]) -> Vec<ChildFrame> {
    let mut out: Vec<ChildFrame> = children
        .iter()
        .map(|c| {
            let mut frame = c.frame.clone();
            frame.content = c.body().to_vec();
            ChildFrame {
                path: String::new(),
                kind: c.kind,
                frame,
                size: c.size,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        (
            kind_name(a.kind),
            &a.frame.frame_type,
            &a.frame.agent_id,
            &a.frame.content,
        )
            .cmp(&(
                kind_name(b.kind),
                &b.frame.frame_type,
                &b.frame.agent_id,
                &b.frame.content,
            ))
    });
    out
}

/// The most characters of a child's first line in a [`contents_list`].
const CONTENTS_LINE_CHARS: usize = 100;

/// The list context appends to the output of a policy that does not read names: a line per
/// child in name order, its name (directories end in `/`) and the first non-empty line of its
/// body, cut at 100 characters. Empty when there are no children.
pub fn contents_list(children: &[ChildFrame]) -> String {
    let mut named: Vec<&ChildFrame> = children.iter().collect();
    named.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    named.dedup_by(|a, b| a.path == b.path);
    let mut out = String::new();
    for c in named {
        if out.is_empty() {
            out.push_str("\n\nContents:\n");
        }
        let name = c.path.rsplit('/').next().unwrap_or(&c.path);
        let slash = if c.kind == NodeKind::Dir { "/" } else { "" };
        let body = String::from_utf8_lossy(c.body());
        let first = body.lines().map(str::trim).find(|l| !l.is_empty());
        out.push_str(&format!("- `{name}{slash}`"));
        if let Some(line) = first {
            let mut cut: String = line.chars().take(CONTENTS_LINE_CHARS).collect();
            if cut.len() < line.len() {
                cut.push_str("...");
            }
            out.push_str(": ");
            out.push_str(&cut);
        }
        out.push('\n');
    }
    out
}

/// Metadata keys a synthesized frame carries.
pub const META_POLICY: &str = "synthesis.policy";
/// On a frame of a policy that does not read names: how many bytes of its content the policy
/// wrote; the rest is the [`contents_list`].
pub const META_OWN_BYTES: &str = "synthesis.own_bytes";
/// See [`synthesis_inputs`].
pub const META_INPUTS: &str = "synthesis.inputs";
/// How many child frames went in.
pub const META_CHILDREN: &str = "synthesis.children";

/// What one synthesis wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Synthesized {
    /// The directory's path.
    pub path: String,
    /// The frame type written (a synthesis of `*` is written under [`ALL_TYPES`]).
    pub frame_type: String,
    /// The frame.
    pub frame_id: Hash,
    /// Whether a new frame was appended (false: an identical frame was already there).
    pub created: bool,
    /// Whether the policy ran (false: content reused because the inputs were unchanged).
    pub policy_ran: bool,
    /// How many child frames went in.
    pub children: usize,
}

/// How to synthesize.
#[derive(Clone, Copy)]
pub struct SynthesisRequest<'a> {
    /// The frame type to collect from children and to write (`*`: every type, written as
    /// [`ALL_TYPES`]).
    pub frame_type: &'a str,
    /// The agent writing; it must have the synthesis role.
    pub agent: &'a str,
    /// The policy.
    pub policy: &'a dyn SynthesisPolicy,
    /// Milliseconds since the epoch for the frame's `created_at`.
    pub now_ms: u64,
}

/// The frame type a synthesis of `*` (every type) is written under.
pub const ALL_TYPES: &str = "all";
/// Metadata key: the type collected from children when it differs from the frame's own (`*`).
pub const META_COLLECT: &str = "synthesis.collect";

/// The type a synthesized frame collected from its children.
pub fn collected_type(frame: &Frame) -> &str {
    frame
        .metadata
        .extra
        .get(META_COLLECT)
        .map_or(frame.frame_type.as_str(), String::as_str)
}

/// Synthesizes one directory's frame from its children's current heads.
///
/// The policy runs without any lock held (it may be a slow model call); the children's heads are
/// then read again under the store's derivation lock, and only if they are unchanged is the
/// frame put. If another writer replaced one meanwhile, the synthesis is redone under the lock,
/// so a frame derived from superseded inputs never becomes the head.
pub fn synthesize(
    store: &Store,
    dir: &NodeRecord,
    req: &SynthesisRequest<'_>,
) -> Result<Synthesized> {
    let mut done = synthesize_each(store, std::slice::from_ref(dir), req)?;
    done.pop().expect("one synthesis per directory")
}

/// Synthesizes each of `dirs` (none an ancestor of another) as [`synthesize`] does, and puts
/// their frames and memos in one commit: a level of a tree costs one durable commit, not one
/// per directory. The policy runs without the lock, on every core where it
/// computes ([`SynthesisPolicy::computes`]), else on one directory at a time; where a frame
/// was put meanwhile, the children of every directory are read again under the derivation
/// lock, and a directory whose children changed is synthesized again there. One result per
/// directory, in order.
pub fn synthesize_each(
    store: &Store,
    dirs: &[NodeRecord],
    req: &SynthesisRequest<'_>,
) -> Result<Vec<Result<Synthesized>>> {
    // The frame sequence before preparing: while it has not moved, no child's head has.
    let seq = store.frame_seq()?;
    let prepared = prepare_each(store, dirs.to_vec(), req, seq, &InFlight::default())?;
    put_prepared(store, prepared, req, 0)
}

/// The outputs of directories being put, by memo key, with who made them: what a directory
/// prepared meanwhile with the same inputs reuses, as it would once their memos are in.
#[derive(Default)]
pub struct InFlight(HashMap<Hash, (Vec<u8>, crate::memo::Provenance)>);

impl PreparedDirs {
    /// What the directories prepared here hand to those prepared while these are put.
    pub fn in_flight(&self) -> InFlight {
        let mut out = InFlight::default();
        for p in self.prepared.iter().flatten() {
            let own = &p.content[..p.own_bytes.unwrap_or(p.content.len())];
            out.0
                .entry(p.key)
                .or_insert_with(|| (own.to_vec(), p.made_by.clone()));
        }
        out
    }
}

/// Directories prepared by [`prepare_each`], to be put by [`put_prepared`].
pub struct PreparedDirs {
    dirs: Vec<NodeRecord>,
    prepared: Vec<Result<Prepared>>,
    /// The store's frame sequence before they were prepared.
    seq: u64,
}

/// The first half of [`synthesize_each`]: reads each directory's children and runs the policy
/// on them (or reuses content made from the same inputs, in the store or `in_flight`), without
/// the lock and putting nothing, so that a caller may put one group while it prepares the
/// next. `seq` is the store's frame sequence read before anything this reads.
pub fn prepare_each(
    store: &Store,
    dirs: Vec<NodeRecord>,
    req: &SynthesisRequest<'_>,
    seq: u64,
    in_flight: &InFlight,
) -> Result<PreparedDirs> {
    store.authorize(req.agent, "synthesize", Role::can_synthesize)?;
    let written_type = written_type(req.frame_type);
    let policy_id = req.policy.id();
    let one = |dir: &NodeRecord| prepare(store, dir, req, (written_type, &policy_id), in_flight);
    // A policy that computes runs on every core; a model's calls keep their order.
    let prepared: Vec<Result<Prepared>> = if req.policy.computes() {
        dirs.par_iter().map(one).collect()
    } else {
        dirs.iter().map(one).collect()
    };
    Ok(PreparedDirs {
        dirs,
        prepared,
        seq,
    })
}

/// The second half of [`synthesize_each`]: puts what [`prepare_each`] prepared. `own` is how
/// many frames the caller itself created in the store since that preparation began (a group
/// it put meanwhile, none of them a child of these directories): a frame sequence that moved
/// by more means another writer, and every directory's children are read again under the lock.
pub fn put_prepared(
    store: &Store,
    p: PreparedDirs,
    req: &SynthesisRequest<'_>,
    own: u64,
) -> Result<Vec<Result<Synthesized>>> {
    let PreparedDirs {
        dirs,
        mut prepared,
        seq,
    } = p;
    let written_type = written_type(req.frame_type);
    let policy_id = req.policy.id();
    let none = InFlight::default();
    let one = |dir: &NodeRecord| prepare(store, dir, req, (written_type, &policy_id), &none);
    let _guard = store.derivation_lock();
    if store.frame_seq()? != seq + own {
        for (dir, p) in dirs.iter().zip(prepared.iter_mut()) {
            if let Ok(ready) = p
                && Seen::of(&child_frames(store, dir, req.frame_type)?) != ready.children
            {
                *p = one(dir);
            }
        }
    }
    let mut frames = Vec::new();
    for (dir, p) in dirs.iter().zip(&prepared) {
        if let Ok(p) = p {
            let frame = synthesized_frame(dir, req, written_type, &policy_id, p);
            frames.push((frame, Some(p.key)));
        }
    }
    let mut puts = store.put_frames_memoized(frames).into_iter();
    let mut out = Vec::with_capacity(dirs.len());
    for (dir, p) in dirs.iter().zip(prepared) {
        let p = match p {
            Ok(p) => p,
            Err(e) => {
                out.push(Err(e));
                continue;
            }
        };
        let put = match puts.next().expect("one put per prepared frame") {
            Ok(put) => put,
            Err(e) => {
                out.push(Err(e.into()));
                continue;
            }
        };
        out.push(Ok(Synthesized {
            path: dir.path.clone(),
            frame_type: written_type.to_owned(),
            frame_id: put.frame_id,
            created: put.created,
            policy_ran: p.policy_ran,
            children: p.children.count,
        }));
    }
    Ok(out)
}

/// The type a synthesis of `frame_type` writes: [`ALL_TYPES`] for `*`.
fn written_type(frame_type: &str) -> &str {
    if frame_type == "*" {
        ALL_TYPES
    } else {
        frame_type
    }
}

/// Reads `dir`'s children and runs the policy on them, or reuses the content of a frame made
/// from the same inputs.
fn prepare(
    store: &Store,
    dir: &NodeRecord,
    req: &SynthesisRequest<'_>,
    (written_type, policy_id): (&str, &str),
    in_flight: &InFlight,
) -> Result<Prepared> {
    let names = req.policy.reads_names();
    let children = child_frames(store, dir, req.frame_type)?;
    let epoch = crate::invalidation::latest(store, &dir.path, written_type)?;
    let previous = crate::current::current_frame(store, &dir.node_id, &dir.path, written_type)?;
    // An invalidation newer than the previous frame forces the policy to run again.
    let forced = epoch
        .as_ref()
        .is_some_and(|e| previous.as_ref().is_none_or(|p| e.seq > p.seq));
    let inputs = synthesis_inputs(dir, req.frame_type, req.policy, &children).to_hex();
    // Early cutoff: the latest frame of this type at this path, on any version of the
    // directory, already holds the content for these inputs.
    let reusable = previous.filter(|f| {
        !forced && f.metadata.extra.get(META_INPUTS) == Some(&inputs) && f.agent_id == req.agent
    });
    let key = synthesis_memo_key(&inputs, written_type, req.agent);
    // The reused frame's own output, and who wrote it.
    let of_frame = |f: Frame| {
        let made_by = crate::memo::Provenance {
            provider: f.metadata.provider.clone(),
            model: f.metadata.model.clone(),
        };
        (own_output(&f).to_vec(), made_by)
    };
    let reused = match reusable {
        Some(f) => Some(of_frame(f)),
        None if !forced => match in_flight.0.get(&key) {
            Some(x) => Some(x.clone()),
            None => crate::memo::memoized(store, &key, written_type, req.agent)?.map(of_frame),
        },
        None => None,
    };
    let (output, policy_ran, made_by) = match reused {
        Some((output, made_by)) => (output, false, made_by),
        None => {
            let unnamed_children;
            let shown = if names {
                &children
            } else {
                unnamed_children = unnamed(&children);
                &unnamed_children
            };
            let output = req
                .policy
                .synthesize(&SynthesisInput {
                    dir,
                    frame_type: req.frame_type,
                    children: shown,
                })
                .map_err(|message| Error::Policy {
                    policy: policy_id.to_owned(),
                    path: dir.path.clone(),
                    message,
                })?;
            (output, true, req.policy.provenance())
        }
    };
    let (content, own_bytes) = if names {
        (output, None)
    } else {
        let own = output.len();
        let mut content = output;
        content.extend_from_slice(contents_list(&children).as_bytes());
        (content, Some(own))
    };
    let basis = synthesis_basis(
        dir,
        req.frame_type,
        policy_id,
        &children,
        epoch.as_ref().map(|e| &e.frame_id),
    );
    Ok(Prepared {
        children: Seen::of(&children),
        inputs,
        content,
        own_bytes,
        policy_ran,
        made_by,
        basis,
        key,
    })
}

/// The frame a prepared synthesis puts.
fn synthesized_frame(
    dir: &NodeRecord,
    req: &SynthesisRequest<'_>,
    written_type: &str,
    policy_id: &str,
    p: &Prepared,
) -> NewFrame {
    let mut frame = NewFrame::new(dir.node_id, written_type, req.agent, p.content.clone());
    frame.basis = Some(p.basis);
    frame.metadata.created_at_ms = req.now_ms;
    frame.metadata.provider.clone_from(&p.made_by.provider);
    frame.metadata.model.clone_from(&p.made_by.model);
    let extra = &mut frame.metadata.extra;
    extra.insert(META_POLICY.to_owned(), policy_id.to_owned());
    extra.insert(META_INPUTS.to_owned(), p.inputs.clone());
    extra.insert(META_CHILDREN.to_owned(), p.children.count.to_string());
    if let Some(n) = p.own_bytes {
        extra.insert(META_OWN_BYTES.to_owned(), n.to_string());
    }
    if written_type != req.frame_type {
        extra.insert(META_COLLECT.to_owned(), req.frame_type.to_owned());
    }
    frame
}

/// The memo key of a synthesized frame: its inputs (the directory's path, the type collected,
/// the policy, the children's paths and contents; no names for a policy that reads none), the
/// type written and the agent. A revert below a directory brings its inputs back, and with
/// them the earlier content.
pub fn synthesis_memo_key(inputs: &str, written_type: &str, agent: &str) -> Hash {
    crate::memo::memo_key(b"synthesis", &[inputs, written_type, agent])
}

/// A synthesis computed but not yet written.
struct Prepared {
    key: Hash,
    children: Seen,
    inputs: String,
    content: Vec<u8>,
    /// Where the policy's own output ends, for a policy that does not read names.
    own_bytes: Option<usize>,
    policy_ran: bool,
    /// Who wrote the content.
    made_by: crate::memo::Provenance,
    basis: Hash,
}

/// The children a synthesis read, as told apart from any others: their number and a hash of
/// each one's path, kind, head frame (a frame id names one frame) and size. A level of a
/// large tree prepares thousands of directories before it puts their frames, and holding
/// every child's frame to compare was most of a generation's memory.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    count: usize,
    digest: Hash,
}

impl Seen {
    fn of(children: &[ChildFrame]) -> Seen {
        let mut e = Encoder::new("synthesis-children");
        e.count(children.len());
        for c in children {
            e.bytes(c.path.as_bytes())
                .bytes(kind_name(c.kind).as_bytes())
                .bytes(&c.frame.frame_id.0)
                .bytes(&c.size.map_or([0xff; 9], |n| {
                    let mut b = [0; 9];
                    b[1..].copy_from_slice(&n.to_le_bytes());
                    b
                }));
        }
        Seen {
            count: children.len(),
            digest: e.finish(),
        }
    }
}

/// Synthesizes a whole subtree bottom-up: every directory below `dir` before `dir` itself.
pub fn synthesize_recursive(
    store: &Store,
    dir: &NodeRecord,
    req: &SynthesisRequest<'_>,
) -> Result<Vec<Synthesized>> {
    if dir.kind != NodeKind::Dir {
        return Err(Error::NotADirectory {
            path: dir.path.clone(),
        });
    }
    let mut out = Vec::new();
    for child in &dir.children {
        if child.kind == NodeKind::Dir {
            let rec =
                store
                    .node(&child.node_id)?
                    .ok_or_else(|| merkle_store::Error::NoSuchNode {
                        id: child.node_id.to_hex(),
                    })?;
            out.extend(synthesize_recursive(store, &rec, req)?);
        }
    }
    out.push(synthesize(store, dir, req)?);
    Ok(out)
}
