//! Frames: immutable, attributed pieces of context attached to nodes.
use std::collections::BTreeMap;

use crate::codec::{Reader, Writer};
use crate::error::{Error, Result};
use crate::hash::{FrameId, Hash, NodeId};

/// Facts about a frame that are not part of its identity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameMetadata {
    /// Milliseconds since the Unix epoch when the frame was first put.
    pub created_at_ms: u64,
    /// The LLM provider that produced the content, if any.
    pub provider: Option<String>,
    /// The model that produced the content, if any.
    pub model: Option<String>,
    /// Free key/values.
    pub extra: BTreeMap<String, String>,
}

/// A stored frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// blake3 over (basis, content, frame type, agent).
    pub frame_id: FrameId,
    /// The node the frame is attached to.
    pub node_id: NodeId,
    /// What kind of context this is (`summary`, `notes`, ...).
    pub frame_type: String,
    /// The agent that put it.
    pub agent_id: String,
    /// The hash of what the frame was derived from.
    pub basis: Hash,
    /// UTF-8 text or bytes.
    pub content: Vec<u8>,
    /// Facts not part of the identity.
    pub metadata: FrameMetadata,
    /// The frame's position in the store's append order.
    pub seq: u64,
}

impl Frame {
    /// The FrameID re-derived from the frame's fields.
    pub fn derive_id(&self) -> FrameId {
        crate::hash::frame_id(&self.basis, &self.content, &self.frame_type, &self.agent_id)
    }

    /// The content as text, if it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.content).ok()
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u64(self.seq)
            .hash(&self.node_id)
            .str(&self.frame_type)
            .str(&self.agent_id)
            .hash(&self.basis)
            .bytes(&self.content)
            .u64(self.metadata.created_at_ms)
            .opt_str(self.metadata.provider.as_deref())
            .opt_str(self.metadata.model.as_deref())
            .u64(self.metadata.extra.len() as u64);
        for (k, v) in &self.metadata.extra {
            w.str(k).str(v);
        }
        w.0
    }

    pub(crate) fn decode(frame_id: FrameId, bytes: &[u8]) -> Result<Frame> {
        let bad = || Error::corrupt("frames", &frame_id.0, "truncated or malformed frame record");
        let mut r = Reader::new(bytes);
        let seq = r.u64().ok_or_else(bad)?;
        let node_id = r.hash().ok_or_else(bad)?;
        let frame_type = r.str().ok_or_else(bad)?.to_owned();
        let agent_id = r.str().ok_or_else(bad)?.to_owned();
        let basis = r.hash().ok_or_else(bad)?;
        let content = r.bytes().ok_or_else(bad)?.to_vec();
        let created_at_ms = r.u64().ok_or_else(bad)?;
        let provider = r.opt_str().ok_or_else(bad)?.map(str::to_owned);
        let model = r.opt_str().ok_or_else(bad)?.map(str::to_owned);
        let n = r.u64().ok_or_else(bad)?;
        let mut extra = BTreeMap::new();
        for _ in 0..n {
            let k = r.str().ok_or_else(bad)?.to_owned();
            let v = r.str().ok_or_else(bad)?.to_owned();
            extra.insert(k, v);
        }
        if !r.is_empty() {
            return Err(bad());
        }
        Ok(Frame {
            frame_id,
            node_id,
            frame_type,
            agent_id,
            basis,
            content,
            metadata: FrameMetadata {
                created_at_ms,
                provider,
                model,
                extra,
            },
            seq,
        })
    }
}

/// A frame to put: everything but the ids the store derives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewFrame {
    /// The node to attach it to.
    pub node_id: NodeId,
    /// Its type.
    pub frame_type: String,
    /// The writing agent; it must be registered with a role that may write.
    pub agent_id: String,
    /// What it was derived from; `None` means the node itself (its NodeID).
    pub basis: Option<Hash>,
    /// Its content.
    pub content: Vec<u8>,
    /// Facts not part of the identity.
    pub metadata: FrameMetadata,
}

impl NewFrame {
    /// A frame on `node_id` whose basis is the node itself, created now.
    pub fn new(node_id: NodeId, frame_type: &str, agent_id: &str, content: Vec<u8>) -> NewFrame {
        NewFrame {
            node_id,
            frame_type: frame_type.to_owned(),
            agent_id: agent_id.to_owned(),
            basis: None,
            content,
            metadata: FrameMetadata {
                created_at_ms: now_ms(),
                ..FrameMetadata::default()
            },
        }
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The outcome of a put.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PutOutcome {
    /// The frame's id.
    pub frame_id: FrameId,
    /// False when an identical frame was already stored (the put changed nothing).
    pub created: bool,
}

/// Checks a name used as a frame type or an agent id: 1 to 128 characters of
/// `[A-Za-z0-9_.:@-]`, so that it is safe in keys, paths and shells.
pub fn check_name(what: &'static str, value: &str) -> Result<()> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '@' | '-');
    let reason = if value.is_empty() {
        "must not be empty"
    } else if value.len() > 128 {
        "must be at most 128 characters"
    } else if !value.chars().all(ok_char) {
        "may contain only letters, digits and _ . : @ -"
    } else {
        return Ok(());
    };
    Err(Error::Invalid {
        what,
        value: value.to_owned(),
        reason,
    })
}
