//! Memoization of derived frames: the key of what a frame was derived from (its producer or
//! policy, its inputs, type and agent), the frame a key finds, and who made it
//! ([`Provenance`], for the frame's metadata). `generate`, `regenerate` and `synthesis` all
//! read and write memos through here.
//!
//! A memo key names what a frame was derived from wherever it is attached: for a file the
//! producer id (which names model and prompt), the content, type and agent; for a directory its
//! synthesis inputs, type and agent. A hit's content is reused, so a renamed, duplicated or
//! reverted file costs no producer run. The frame's basis stays its node, so a FrameID never
//! collides between two files with the same content; the memo index is a cache beside the
//! frames.
use merkle_store::{Encoder, Hash, Store};

use crate::error::Result;

/// The model behind a producer's or a policy's frames, for their metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Provenance {
    /// The provider (`anthropic`, `openai`, `sim`, `playback`, ...).
    pub provider: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
}

/// The memo key of a file frame: what its content was derived from (the producer, which names
/// its model and prompt, and the file's content), its type and its agent. The same key anywhere
/// in the tree (a renamed, reverted or duplicated file) means the same content.
pub fn file_memo_key(producer_input: &str, frame_type: &str, agent: &str) -> Hash {
    memo_key(b"file", &[producer_input, frame_type, agent])
}

/// The encoding of `fields` as a memo key of `kind`.
pub(crate) fn memo_key(kind: &[u8], fields: &[&str]) -> Hash {
    let mut key = Encoder::new("memo");
    key.bytes(kind).count(fields.len());
    for f in fields {
        key.bytes(f.as_bytes());
    }
    key.finish()
}

/// The frame memoized under `key` by `agent` for `frame_type`, if any.
pub(crate) fn memoized(
    store: &Store,
    key: &Hash,
    frame_type: &str,
    agent: &str,
) -> Result<Option<merkle_store::Frame>> {
    let Some(id) = store.memo(key)? else {
        return Ok(None);
    };
    let Some(frame) = store
        .frame(&id)?
        .filter(|f| f.frame_type == frame_type && f.agent_id == agent)
    else {
        return Ok(None);
    };
    // Content someone invalidated where it was made is not to be handed out elsewhere.
    if let Some(node) = store.node(&frame.node_id)?
        && crate::invalidation::pending(store, &node.path, &frame)?.is_some()
    {
        return Ok(None);
    }
    Ok(Some(frame))
}
