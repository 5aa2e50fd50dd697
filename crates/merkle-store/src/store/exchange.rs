//! Moving frames between stores: what a push reads ([`Store::frames_after`], [`Store::memos`])
//! and what a pull writes ([`Store::import`]).
//!
//! Frames are named by their content, so sharing them is a set union: an import appends the
//! frames the store lacks and skips the rest. What it cannot take on trust it checks: every
//! FrameID and NodeID is re-derived from the fields it names, and one that does not match
//! refuses the whole import, naming it, before anything is written.
//!
//! **Heads after an import.** A frame put locally always becomes the head of its (node, type)
//! and (path, type), as it always did. An imported frame becomes the head only when its
//! (`created_at`, FrameID) is greater than the current head's, so two stores that hold the same
//! frames show the same heads whatever order they got them in, and no frame written locally is
//! lost (history keeps every frame; only the head may move to a newer one). `validate` checks
//! the rule: no frame appended after a head may order above it.
use std::collections::{BTreeMap, HashMap};

use super::{Store, basis_key, head_key, history_key, history_value, path_head_key};
use crate::agent::{self, Role};
use crate::engine::{Batch, Table};
use crate::error::{Error, Result};
use crate::frame::{self, Frame};
use crate::hash::{FrameId, Hash, NodeId};
use crate::node::NodeRecord;

/// What an import brings: node records, frames, memos and agents from another store.
#[derive(Clone, Debug, Default)]
pub struct Import {
    /// Records of the nodes the frames are on, where the store may lack them.
    pub nodes: Vec<NodeRecord>,
    /// The frames; their `seq` is ignored (the store appends them in its own order).
    pub frames: Vec<Frame>,
    /// Memo key -> frame; each frame must be imported too or already stored.
    pub memos: Vec<(Hash, FrameId)>,
    /// Agents the frames name, with their roles.
    pub agents: Vec<(String, Role)>,
}

/// How to import.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Leave out what fails a check (and what depends on it), naming it in
    /// [`ImportReport::refused`], and import the rest; by default one refusal refuses all.
    pub skip_invalid: bool,
    /// Check everything and report what would be written, but write nothing.
    pub dry_run: bool,
}

/// What an import left out under [`ImportOptions::skip_invalid`], and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// What was left out: `frame <id>`, `node <id> ("path")`, `memo <key>`, `agent "id"`.
    pub item: String,
    /// Why.
    pub reason: String,
}

/// What an import wrote (or, in a dry run, would write).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Frames appended.
    pub frames: u64,
    /// Node records the store lacked.
    pub nodes: u64,
    /// Memos recorded (a key the store already had keeps its own).
    pub memos: u64,
    /// Agents registered (a registered agent keeps its role).
    pub agents: u64,
    /// Frames the store already had.
    pub skipped: u64,
    /// What was left out, under [`ImportOptions::skip_invalid`].
    pub refused: Vec<Refusal>,
    /// The frame sequence before the import and after it: the appended frames are numbered
    /// `seq_before + 1 ..= seq_after` (equal in a dry run).
    pub seq_before: u64,
    /// See [`ImportReport::seq_before`].
    pub seq_after: u64,
}

/// What an import has staged so far: its writes, its report, and what it left out.
#[derive(Default)]
struct Staged {
    batch: Batch,
    /// The bodies `batch` writes.
    bodies: super::bodies::Staged,
    report: ImportReport,
    out: Vec<Refusal>,
}

/// A head's rank among frames of one (node, type) or (path, type): newest `created_at` first,
/// then the greater FrameID.
type Rank = (u64, FrameId);

fn refused(item: String, reason: impl Into<String>) -> Error {
    Error::Refused {
        item,
        reason: reason.into(),
    }
}

/// Refuses `item`: an error, or under `skip_invalid` a line in `out` and `Ok` (the caller
/// then leaves the item out).
fn refuse(
    opts: &ImportOptions,
    out: &mut Vec<Refusal>,
    item: String,
    reason: impl Into<String>,
) -> Result<()> {
    if opts.skip_invalid {
        out.push(Refusal {
            item,
            reason: reason.into(),
        });
        Ok(())
    } else {
        Err(refused(item, reason))
    }
}

impl Store {
    /// The frames appended after sequence number `after`, in append order, as (seq, FrameID).
    /// What a push sends when the remote has everything up to `after`.
    pub fn frames_after(&self, after: u64) -> Result<Vec<(u64, FrameId)>> {
        let mut out = Vec::new();
        let mut err = None;
        self.engine.scan(
            Table::NodeFrames,
            b"",
            &mut |k, v| match super::FrameSummary::decode(k, v) {
                Some(s) => {
                    if s.seq > after {
                        out.push((s.seq, s.frame_id));
                    }
                    true
                }
                None => {
                    err = Some(Error::corrupt("node_frames", k, "malformed history entry"));
                    false
                }
            },
        )?;
        if let Some(e) = err {
            return Err(e);
        }
        out.sort_unstable();
        Ok(out)
    }

    /// Every memo, as (key, frame), in key order.
    pub fn memos(&self) -> Result<Vec<(Hash, FrameId)>> {
        let mut out = Vec::new();
        let mut err = None;
        self.engine.scan(Table::Memo, b"", &mut |k, v| match (
            Hash::from_slice(k),
            Hash::from_slice(v),
        ) {
            (Some(key), Some(frame)) => {
                out.push((key, frame));
                true
            }
            _ => {
                err = Some(Error::corrupt("memo", k, "malformed memo record"));
                false
            }
        })?;
        err.map_or(Ok(out), Err)
    }

    /// Imports frames from another store in one durable transaction, after checking all of
    /// them: a FrameID or NodeID that does not re-derive from its fields, a frame whose basis
    /// is the NodeID of another node (a frame moved off the node it was made for), a frame on
    /// a node neither imported nor stored, a memo pointing at no frame, or a malformed name
    /// refuses the whole import with an error naming it, and nothing is written. Frames
    /// already stored are skipped; the new ones are appended in (`created_at`, FrameID) order,
    /// and heads move by the rule in this module's documentation.
    pub fn import(&self, import: Import) -> Result<ImportReport> {
        self.import_with(import, &ImportOptions::default())
    }

    /// [`Store::import`], leaving out what fails a check instead of refusing all
    /// ([`ImportOptions::skip_invalid`]), or writing nothing ([`ImportOptions::dry_run`]).
    pub fn import_with(&self, import: Import, opts: &ImportOptions) -> Result<ImportReport> {
        let _guard = self.lock();
        let Import {
            nodes,
            frames,
            memos,
            agents,
        } = import;
        let mut st = Staged::default();
        let paths = self.import_nodes(&nodes, opts, &mut st)?;
        let imported_agents = self.import_agents(&agents, opts, &mut st)?;
        let (seq, new_frames) =
            self.import_frames(frames, &paths, &imported_agents, opts, &mut st)?;
        self.import_memos(&memos, &new_frames, opts, &mut st)?;

        let Staged {
            mut batch,
            mut report,
            out,
            ..
        } = st;
        report.refused = out;
        report.seq_after = report.seq_before;
        if !batch.is_empty() && !opts.dry_run {
            report.seq_after = seq;
            batch.put(
                Table::Meta,
                super::META_FRAME_SEQ.to_vec(),
                seq.to_le_bytes().to_vec(),
            );
            self.engine.commit(batch)?;
        }
        Ok(report)
    }

    /// Stages the node records: each must re-derive to its id; those the store lacks are
    /// written (a verified record is the tree as it was, whatever becomes of the frames on it:
    /// a directory's record names its children, whose records a store keeps beside it). The
    /// path of each verified node.
    fn import_nodes(
        &self,
        nodes: &[NodeRecord],
        opts: &ImportOptions,
        st: &mut Staged,
    ) -> Result<HashMap<NodeId, String>> {
        let mut paths: HashMap<NodeId, String> = HashMap::with_capacity(nodes.len());
        for n in nodes {
            let derived = n.derive_id();
            if derived != n.node_id {
                refuse(
                    opts,
                    &mut st.out,
                    format!("node {} ({:?})", n.node_id, n.path),
                    format!("its record hashes to {derived}"),
                )?;
                continue;
            }
            paths.insert(n.node_id, n.path.clone());
            if self.engine.get(Table::Nodes, &n.node_id.0)?.is_none() {
                st.batch
                    .put(Table::Nodes, n.node_id.0.to_vec(), n.encode_stored());
                st.report.nodes += 1;
            }
        }
        Ok(paths)
    }

    /// Stages the agents, whose names are checked; registered ones keep their role. The ids of
    /// those that pass.
    fn import_agents<'a>(
        &self,
        agents: &'a [(String, Role)],
        opts: &ImportOptions,
        st: &mut Staged,
    ) -> Result<Vec<&'a str>> {
        let mut imported_agents = Vec::with_capacity(agents.len());
        for (id, role) in agents {
            if let Err(e) = frame::check_name("agent id", id) {
                refuse(opts, &mut st.out, format!("agent {id:?}"), e.to_string())?;
                continue;
            }
            imported_agents.push(id.as_str());
            if self.engine.get(Table::Agents, id.as_bytes())?.is_none() {
                st.batch.put(
                    Table::Agents,
                    id.as_bytes().to_vec(),
                    agent::encode(*role, &BTreeMap::new()),
                );
                st.report.agents += 1;
            }
        }
        Ok(imported_agents)
    }

    /// Stages the frames, checked, then appended in a deterministic order with their history,
    /// basis and heads. The last sequence number given, and the frames appended, with their
    /// nodes.
    fn import_frames(
        &self,
        mut frames: Vec<Frame>,
        paths: &HashMap<NodeId, String>,
        imported_agents: &[&str],
        opts: &ImportOptions,
        st: &mut Staged,
    ) -> Result<(u64, HashMap<FrameId, NodeId>)> {
        frames.sort_unstable_by_key(|f| (f.metadata.created_at_ms, f.frame_id));
        let mut seq = self.frame_seq()?;
        st.report.seq_before = seq;
        let mut heads: HashMap<Vec<u8>, Rank> = HashMap::new();
        let mut path_heads: HashMap<Vec<u8>, Rank> = HashMap::new();
        let mut new_frames: HashMap<FrameId, NodeId> = HashMap::new();
        for mut f in frames {
            let Some(path) = self.check_imported(&f, paths, imported_agents, opts, &mut st.out)?
            else {
                continue;
            };
            if new_frames.contains_key(&f.frame_id) {
                st.report.skipped += 1;
                continue;
            }
            if let Some(stored) = self.frame_fields(&f.frame_id)? {
                if stored.node_id != f.node_id {
                    refuse(
                        opts,
                        &mut st.out,
                        format!("frame {}", f.frame_id),
                        format!(
                            "it is on node {}, but the stored frame is on {}",
                            f.node_id, stored.node_id
                        ),
                    )?;
                    continue;
                }
                st.report.skipped += 1;
                continue;
            }
            seq += 1;
            f.seq = seq;
            let rank = (f.metadata.created_at_ms, f.frame_id);
            // Appended last, the frame is its history's latest entry: the head where it
            // outranks the head before, else the heads table names that one.
            let hk = head_key(&f.node_id, &f.frame_type);
            let before = match heads.get(&hk) {
                Some(r) => Some(*r),
                None => self.head_rank(&f.node_id, &f.frame_type)?,
            };
            match before {
                Some(before) if rank <= before => {
                    st.batch.put(Table::Heads, hk, before.1.0.to_vec());
                }
                _ => {
                    heads.insert(hk.clone(), rank);
                    st.batch.delete(Table::Heads, hk);
                }
            }
            let pk = path_head_key(&path, &f.frame_type);
            if self.outranks(&mut path_heads, &pk, rank)? {
                st.batch.put(Table::PathHeads, pk, f.frame_id.0.to_vec());
            }
            st.batch.put(
                Table::NodeFrames,
                history_key(&f.node_id, &f.frame_type, f.seq),
                history_value(&f),
            );
            if f.basis != f.node_id {
                st.batch
                    .put(Table::Basis, basis_key(&f.basis, &f.frame_id), Vec::new());
            }
            self.stage_frame_record(&f, &mut st.bodies, &mut st.batch)?;
            new_frames.insert(f.frame_id, f.node_id);
            st.report.frames += 1;
        }
        Ok((seq, new_frames))
    }

    /// Stages the memos: each must point at a frame imported or stored; a key the store has
    /// keeps its own frame.
    fn import_memos(
        &self,
        memos: &[(Hash, FrameId)],
        new_frames: &HashMap<FrameId, NodeId>,
        opts: &ImportOptions,
        st: &mut Staged,
    ) -> Result<()> {
        for (key, frame_id) in memos {
            let exists = new_frames.contains_key(frame_id)
                || self.engine.contains(Table::Frames, &frame_id.0)?;
            if !exists {
                refuse(
                    opts,
                    &mut st.out,
                    format!("memo {key}"),
                    format!("its frame {frame_id} is neither imported nor stored"),
                )?;
                continue;
            }
            if self.engine.get(Table::Memo, &key.0)?.is_none() {
                st.batch
                    .put(Table::Memo, key.0.to_vec(), frame_id.0.to_vec());
                st.report.memos += 1;
            }
        }
        Ok(())
    }

    /// The checks of one imported frame that need nothing staged: its id, names, agent, node
    /// and basis. The path of its node when it passes; `None` when it was refused under
    /// `skip_invalid`.
    fn check_imported(
        &self,
        f: &Frame,
        paths: &HashMap<NodeId, String>,
        agents: &[&str],
        opts: &ImportOptions,
        out: &mut Vec<Refusal>,
    ) -> Result<Option<String>> {
        let item = || format!("frame {}", f.frame_id);
        let derived = f.derive_id();
        let problem = if derived != f.frame_id {
            Some(format!(
                "its basis, content, type and agent hash to {derived}"
            ))
        } else if let Err(e) = frame::check_name("frame type", &f.frame_type)
            .and_then(|()| frame::check_name("agent id", &f.agent_id))
        {
            Some(e.to_string())
        } else if !(agents.contains(&f.agent_id.as_str())
            || self
                .engine
                .get(Table::Agents, f.agent_id.as_bytes())?
                .is_some())
        {
            Some(format!(
                "its agent {:?} is neither imported nor registered",
                f.agent_id
            ))
        } else {
            None
        };
        if let Some(reason) = problem {
            refuse(opts, out, item(), reason)?;
            return Ok(None);
        }
        let path = match paths.get(&f.node_id) {
            Some(p) => p.clone(),
            None => match self.node(&f.node_id)? {
                Some(n) => n.path,
                None => {
                    refuse(
                        opts,
                        out,
                        item(),
                        format!("its node {} is neither imported nor stored", f.node_id),
                    )?;
                    return Ok(None);
                }
            },
        };
        // The id does not cover the node; a basis that is a node's id does (see put_frame).
        if f.basis != f.node_id {
            let other = match paths.get(&f.basis) {
                Some(p) => Some(p.clone()),
                None => self.node(&f.basis)?.map(|n| n.path),
            };
            if let Some(other) = other {
                refuse(
                    opts,
                    out,
                    item(),
                    format!(
                        "it is on node {} ({path:?}), but its basis is node {} ({other:?}): \
                         a frame made for one node, moved onto another",
                        f.node_id, f.basis
                    ),
                )?;
                return Ok(None);
            }
        }
        Ok(Some(path))
    }

    /// Whether a frame of rank `rank` becomes the path head at `key`, given the path heads
    /// this import has set so far (updated when it does).
    fn outranks(
        &self,
        staged: &mut HashMap<Vec<u8>, Rank>,
        key: &[u8],
        rank: Rank,
    ) -> Result<bool> {
        let current = match staged.get(key) {
            Some(r) => Some(*r),
            None => self.path_head_rank(key)?,
        };
        let wins = current.is_none_or(|c| rank > c);
        if wins {
            staged.insert(key.to_vec(), rank);
        }
        Ok(wins)
    }
}

impl Store {
    /// Whether the store holds frame `id`.
    pub fn has_frame(&self, id: &FrameId) -> Result<bool> {
        self.engine.contains(Table::Frames, &id.0)
    }

    /// The frames of this store that the remote named `remote_name` holds: those up to this
    /// position in the frame sequence, as the last push to it recorded (`None`: never pushed
    /// to). Its count of frames not pushed is [`Store::frame_seq`] less this.
    pub fn pushed_to(&self, remote_name: &str) -> Result<Option<u64>> {
        self.marker(&pushed_marker(remote_name))
    }

    /// The number a caller keeps under `name` (a push's position in the frame sequence, per
    /// remote), if any. The store keeps markers and never reads them.
    pub fn marker(&self, name: &str) -> Result<Option<u64>> {
        Ok(self
            .engine
            .get(Table::Meta, &marker_key(name))?
            .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok())
            .map(u64::from_le_bytes))
    }

    /// Records the marker `name` (see [`Store::marker`]).
    pub fn set_marker(&self, name: &str, value: u64) -> Result<()> {
        let _guard = self.lock();
        let mut batch = Batch::default();
        batch.put(Table::Meta, marker_key(name), value.to_le_bytes().to_vec());
        self.engine.commit(batch)
    }
}

fn marker_key(name: &str) -> Vec<u8> {
    let mut key = b"marker:".to_vec();
    key.extend_from_slice(name.as_bytes());
    key
}

/// The marker a push to the remote named `remote_name` keeps its position under: one name for
/// the `remote` crate, which writes it, and `status`, which reads it.
pub fn pushed_marker(remote_name: &str) -> String {
    format!("remote-name:{remote_name}:pushed")
}
