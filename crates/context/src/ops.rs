//! Operations the front ends share (the CLI, the MCP server, the agent's tools): each a typed
//! request and an answer with its one JSON shape, so that a front end only parses, calls and
//! renders. [`report`] (counts, stale frames, and changes since a root or a git revision) is in
//! `ops/report.rs`; each remote's count of frames not pushed to it, which [`Status`] carries, in
//! `ops/remotes.rs`; `generate`, which needs a model's client, is merkle-generate's
//! (`generate::generate`). (Search, the task bundle, related files and get-node's views have
//! theirs in their own modules: [`crate::search`], [`crate::bundle`], [`crate::graph`],
//! [`crate::views_file::ViewRequest`].) A node is named the same way from every front end:
//! [`Store::resolve`] (a workspace path, or a NodeID prefix), after the front end's own
//! reading of its argument (the CLI's is relative to the current folder).
use std::sync::Arc;

use merkle_store::{Frame, FrameId, NewFrame, NodeId, NodeRecord, StatusReport, Store};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::regenerate::{Stale, stale_frames};
use crate::synthesis::{
    Concat, Filter, Summary, SynthesisPolicy, SynthesisRequest, Synthesized, synthesize,
    synthesize_recursive,
};
use crate::view::NodeContext;

mod find;
mod flight;
mod fresh;
mod gc;
mod handles;
mod remotes;
mod report;
mod served;
mod workspace;

pub use find::{
    BUNDLE_BUDGET, BUNDLE_FILES, Found, SEARCH_LIMIT, Search, TaskBundle, bundle_in, display_path,
    file_related, history_before_search, not_a_file, related_in, search_filter, search_in,
    search_reads_history,
};
pub use fresh::{Reads, Settled, Snapshot, Watcher};
pub use gc::{Garbage, collect_garbage, folder_sizes, why_kept};
pub use remotes::Unpushed;
use remotes::unpushed;
pub use report::{AddedFrame, Report, Since, report};
pub use served::{prepare_searches, served_search};
pub use workspace::{STORE_IN_USE_WAIT, Workspace};

/// The synthesis policies by name.
pub const POLICIES: [&str; 4] = ["concat", "summary", "filter", "map"];

/// A directory's synthesis, as a front end asks for it.
#[derive(Clone, Debug)]
pub struct Synthesize<'a> {
    /// The frame type to collect from children and write (`*`: every type).
    pub frame_type: &'a str,
    /// The writing agent (it needs the synthesis role).
    pub agent: &'a str,
    /// One of [`POLICIES`].
    pub policy: &'a str,
    /// With `filter`: keep child frames whose content holds this.
    pub contains: Option<&'a str>,
    /// The whole subtree, children before parents.
    pub recursive: bool,
}

/// Synthesizes `dir` as `req` says: the frames written or found unchanged, parents last.
pub fn synthesize_dir(
    store: &Store,
    dir: &NodeRecord,
    req: &Synthesize<'_>,
) -> Result<Vec<Synthesized>> {
    let policy: Arc<dyn SynthesisPolicy> = match req.policy {
        "concat" => Arc::new(Concat),
        "summary" => Arc::new(Summary::default()),
        "filter" => Arc::new(Filter::containing(req.contains.unwrap_or_default())),
        "map" => {
            // Ranked by the tree as it is now, as `generate` ranks it.
            let map = crate::Map::by_imports();
            map.with_tree(store)?.unwrap_or_else(|| Arc::new(map))
        }
        other => {
            return Err(Error::Policy {
                policy: other.to_owned(),
                path: dir.path.clone(),
                message: format!("no such policy (known: {})", POLICIES.join(", ")),
            });
        }
    };
    let request = SynthesisRequest {
        frame_type: req.frame_type,
        agent: req.agent,
        policy: policy.as_ref(),
        now_ms: merkle_store::frame::now_ms(),
    };
    if req.recursive {
        synthesize_recursive(store, dir, &request)
    } else {
        Ok(vec![synthesize(store, dir, &request)?])
    }
}

/// What a synthesis answers: one frame's `{path, frame_type, frame_id, created, policy_ran,
/// children}`, or for a recursive one `{frames: [...], written, unchanged}`.
pub fn synthesized_json(done: &[Synthesized], recursive: bool) -> Value {
    let item = |s: &Synthesized| {
        json!({
            "path": s.path,
            "frame_type": s.frame_type,
            "frame_id": s.frame_id.to_hex(),
            "created": s.created,
            "policy_ran": s.policy_ran,
            "children": s.children,
        })
    };
    match (recursive, done) {
        (false, [one]) => item(one),
        _ => json!({
            "frames": done.iter().map(item).collect::<Vec<_>>(),
            "written": done.iter().filter(|s| s.created).count(),
            "unchanged": done.iter().filter(|s| !s.created).count(),
        }),
    }
}

/// A put frame: what `put-frame` answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Put {
    pub frame_id: FrameId,
    pub node_id: NodeId,
    /// The node's workspace path.
    pub path: String,
    /// False when an identical frame was already there (the put changed nothing).
    pub created: bool,
}

impl Put {
    /// Its one JSON shape.
    pub fn json(&self) -> Value {
        json!({
            "frame_id": self.frame_id.to_hex(),
            "node_id": self.node_id.to_hex(),
            "path": self.path,
            "created": self.created,
        })
    }
}

/// Puts `frame` (made for `node`) into the store.
pub fn put_frame(store: &Store, node: &NodeRecord, frame: NewFrame) -> Result<Put> {
    let put = store.put_frame(frame)?;
    Ok(Put {
        frame_id: put.frame_id,
        node_id: node.node_id,
        path: node.path.clone(),
        created: put.created,
    })
}

/// A node's record as every front end shows it: its ids, kind, size and children.
pub fn node_json(n: &NodeRecord) -> Value {
    json!({
        "path": n.path,
        "kind": n.kind.as_str(),
        "node_id": n.node_id.to_hex(),
        "content_hash": n.content_hash.to_hex(),
        "size": n.size,
        "children": n.children.iter().map(|c| json!({
            "name": c.name,
            "path": n.child_path(&c.name),
            "kind": c.kind.as_str(),
            "node_id": c.node_id.to_hex(),
        })).collect::<Vec<_>>(),
    })
}

/// A frame as every front end shows it: its content as text when it is UTF-8, else base64
/// (`content_encoding` says which).
pub fn frame_json(f: &Frame) -> Value {
    let (content, encoding) = match f.text() {
        Some(t) => (t.to_owned(), "utf-8"),
        None => (base64(&f.content), "base64"),
    };
    json!({
        "frame_id": f.frame_id.to_hex(),
        "node_id": f.node_id.to_hex(),
        "frame_type": f.frame_type,
        "agent_id": f.agent_id,
        "basis": f.basis.to_hex(),
        "content": content,
        "content_encoding": encoding,
        "metadata": {
            "created_at": merkle_store::time::rfc3339_millis(f.metadata.created_at_ms),
            "provider": f.metadata.provider,
            "model": f.metadata.model,
            "extra": f.metadata.extra,
        },
    })
}

/// What get-node answers: the node, the frames its view selected (each with its source and
/// the path it is on), how many passed the filters, and the sources it could not read.
pub fn node_context_json(c: &NodeContext) -> Value {
    let frames: Vec<Value> = c
        .frames
        .iter()
        .map(|f| {
            let mut j = frame_json(&f.frame);
            j["source"] = json!(f.source.as_str());
            j["path"] = json!(f.path);
            j
        })
        .collect();
    json!({
        "node": node_json(&c.node),
        "frames": frames,
        "frame_count": c.frame_count,
        "skipped": c.skipped,
    })
}

/// What `status` answers: the tree against the disk, the frames gone stale, and each remote's
/// count of frames not pushed to it. Every front end's `status` is this one answer.
#[derive(Clone, Debug)]
pub struct Status {
    /// The tree against the disk; its warnings include a remotes file that cannot be read.
    pub report: StatusReport,
    pub stale: Vec<Stale>,
    pub remotes: Vec<Unpushed>,
}

impl Status {
    /// What status answers for `store`, given the tree against the disk and the stale frames
    /// (which [`Workspace::status`] works out side by side): the remotes read here.
    pub(crate) fn of(store: &Store, mut report: StatusReport, stale: Vec<Stale>) -> Result<Status> {
        let (remotes, warning) = unpushed(store)?;
        report.warnings.extend(warning);
        Ok(Status {
            report,
            stale,
            remotes,
        })
    }

    /// Its one JSON shape: the report's fields, [`stale_json`]'s, and `remotes`
    /// (`[{name, unpushed}]`).
    pub fn json(&self) -> Value {
        let r = &self.report;
        let mut json = json!({
            "root": r.root.to_hex(),
            "nodes": r.nodes,
            "frames": r.frames,
            "changed_on_disk": r.changed_on_disk.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            "changes": r.changed_on_disk.iter().map(|(p, c)| json!({"path": p, "change": c.as_str()})).collect::<Vec<_>>(),
            "warnings": r.warnings,
            "dirs_read": r.dirs_read,
            "remotes": self.remotes.iter().map(Unpushed::json).collect::<Vec<_>>(),
        });
        if let (Some(obj), Value::Object(stale)) = (json.as_object_mut(), stale_json(&self.stale)) {
            obj.extend(stale);
        }
        json
    }
}

/// The store's tree against the disk, its stale frames and its remotes' counts.
pub fn status(store: &Store) -> Result<Status> {
    Status::of(store, store.status()?, stale_frames(store)?)
}

/// Stale frames as `status` and `report` show them: how many of each type (`stale`) and each
/// one (`stale_frames`: path, type, FrameID and why).
pub fn stale_json(stale: &[Stale]) -> Value {
    let mut by_type: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for s in stale {
        *by_type.entry(&s.frame_type).or_default() += 1;
    }
    json!({
        "stale": by_type,
        "stale_frames": stale.iter().map(|s| json!({
            "path": s.path, "frame_type": s.frame_type, "frame_id": s.frame_id.to_hex(), "reason": s.reason,
        })).collect::<Vec<_>>(),
    })
}

/// `answer` marked with the tree it was read from: its `root`, and `stale` when files changed
/// on disk since that scan and could not be scanned in (another process held the store for
/// writing). The freshness rule of every read: it answers for the files as they are on disk,
/// or says that it does not.
pub fn read_from(mut answer: Value, root: Option<NodeId>, stale: bool) -> Value {
    answer["root"] = json!(root.map(|r| r.to_hex()));
    answer["stale"] = json!(stale);
    answer
}

/// Standard base64 with padding (RFC 4648), for binary frame content in JSON.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::base64;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), want);
        }
    }
}
