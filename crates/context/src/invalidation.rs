//! Invalidation: marking frames stale on request, append-only.
//!
//! An invalidation is itself a frame on the node: type `merkle.invalidate` for every type, or
//! `merkle.invalidate:TYPE` for one. A frame of type T at a path is *pending invalidation* when
//! the newest invalidation for T there is newer (by append order) than the frame. Regeneration
//! then recomputes it without reusing content, and the replacement's basis names the
//! invalidation, so that it is a new frame even when the recomputed content is the same.
use merkle_store::{Encoder, Frame, Hash, NewFrame, NodeRecord, Store};

use crate::error::Result;

/// The frame type of an invalidation of every type; `merkle.invalidate:TYPE` for one type.
pub const INVALIDATION_TYPE: &str = "merkle.invalidate";

/// Whether a frame type is an invalidation record rather than context.
pub fn is_invalidation(frame_type: &str) -> bool {
    frame_type == INVALIDATION_TYPE
        || frame_type
            .strip_prefix(INVALIDATION_TYPE)
            .is_some_and(|rest| rest.starts_with(':'))
}

/// The newest invalidation at `path` that covers `frame_type`.
pub fn latest(store: &Store, path: &str, frame_type: &str) -> Result<Option<Frame>> {
    let all = store.path_head(path, INVALIDATION_TYPE)?;
    let one = store.path_head(path, &format!("{INVALIDATION_TYPE}:{frame_type}"))?;
    Ok(match (all, one) {
        (Some(a), Some(o)) => Some(if a.seq > o.seq { a } else { o }),
        (a, o) => a.or(o),
    })
}

/// The newest invalidation covering `frame` that is newer than it, if any.
pub fn pending(store: &Store, path: &str, frame: &Frame) -> Result<Option<Frame>> {
    Ok(latest(store, path, &frame.frame_type)?.filter(|inv| inv.seq > frame.seq))
}

/// Marks the frames of `frame_types` (empty: every type) at `node` stale, so that the next
/// regenerate recomputes them. Returns the invalidation frames written.
pub fn invalidate(
    store: &Store,
    node: &NodeRecord,
    frame_types: &[String],
    agent: &str,
    now_ms: u64,
) -> Result<Vec<Hash>> {
    let heads: Vec<Frame> = store
        .path_heads(&node.path)?
        .into_iter()
        .filter(|f| !is_invalidation(&f.frame_type))
        .collect();
    let types: Vec<String> = if frame_types.is_empty() {
        vec![INVALIDATION_TYPE.to_owned()]
    } else {
        frame_types
            .iter()
            .map(|t| format!("{INVALIDATION_TYPE}:{t}"))
            .collect()
    };
    let mut out = Vec::new();
    for ty in types {
        // The basis covers the heads being invalidated, so invalidating again after a
        // regeneration is a new record, while invalidating twice in a row is one.
        let mut basis = Encoder::new("invalidate");
        basis
            .hash(&node.node_id)
            .bytes(ty.as_bytes())
            .count(heads.len());
        for f in &heads {
            basis.hash(&f.frame_id);
        }
        let mut frame = NewFrame::new(node.node_id, &ty, agent, b"invalidated\n".to_vec());
        frame.basis = Some(basis.finish());
        frame.metadata.created_at_ms = now_ms;
        out.push(store.put_frame(frame)?.frame_id);
    }
    Ok(out)
}
