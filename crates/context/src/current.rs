//! Which frame is "the" frame of a type for a node as it is now.
//!
//! The node's own head when it has one (its content may have been seen before: a revert brings
//! back a NodeID whose frames already exist), else the latest frame at its path on an earlier
//! version (the path head), which is then stale but still the best context known.
use merkle_store::{Frame, NodeId, Store};

use crate::error::Result;
use crate::invalidation::is_invalidation;

/// The current frame of `frame_type` for the node `node_id` at `path`.
pub fn current_frame(
    store: &Store,
    node_id: &NodeId,
    path: &str,
    frame_type: &str,
) -> Result<Option<Frame>> {
    Ok(store.head_or_path_head(node_id, path, frame_type)?)
}

/// The current frame of every context type for the node `node_id` at `path` (invalidation
/// records left out), by type.
pub fn current_frames(store: &Store, node_id: &NodeId, path: &str) -> Result<Vec<Frame>> {
    let mut by_type: std::collections::BTreeMap<String, Frame> = store
        .path_heads(path)?
        .into_iter()
        .filter(|f| !is_invalidation(&f.frame_type))
        .map(|f| (f.frame_type.clone(), f))
        .collect();
    for f in store.heads(node_id)? {
        if !is_invalidation(&f.frame_type) {
            by_type.insert(f.frame_type.clone(), f);
        }
    }
    Ok(by_type.into_values().collect())
}
