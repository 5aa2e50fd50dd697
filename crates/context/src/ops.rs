//! Operations the front ends share (the CLI, the MCP server, the agent's tools): each a typed
//! request and an answer with its one JSON shape, so that a front end only parses, calls and
//! renders. (Search, the task bundle, related files and get-node's views have theirs in their
//! own modules: [`crate::search`], [`crate::bundle`], [`crate::graph`],
//! [`crate::views_file::ViewRequest`].)
use std::sync::Arc;

use merkle_store::{NodeRecord, Store};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::synthesis::{
    Concat, Filter, Summary, SynthesisPolicy, SynthesisRequest, Synthesized, synthesize,
    synthesize_recursive,
};

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
