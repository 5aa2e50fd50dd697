//! The store's identities, on merkle-hash's encoding ([`Encoder`]): a file's NodeID commits to
//! its content through the content hash (blake3 of the content alone) rather than by hashing the
//! content a second time: the content hash is what the node record keeps anyway, and it halves
//! the hashing work of a scan.
pub use merkle_hash::hash::{Encoder, FrameId, Hash, NodeId, content_hash, hex_val, to_hex};

/// The NodeID of a file or symlink: (kind, path, content hash).
pub fn leaf_node_id(kind: crate::kind::NodeKind, path: &str, content_hash: &Hash) -> NodeId {
    Encoder::new(kind.as_str())
        .bytes(path.as_bytes())
        .hash(content_hash)
        .finish()
}

/// The NodeID of a directory: (kind, path, children as byte-sorted (name, NodeID) pairs).
///
/// The caller passes the children already sorted by name bytes; the store keeps them that way.
pub fn dir_node_id<'a>(
    path: &str,
    children: impl ExactSizeIterator<Item = (&'a str, &'a NodeId)>,
) -> NodeId {
    let mut e = Encoder::new("dir");
    e.bytes(path.as_bytes()).count(children.len());
    for (name, id) in children {
        e.bytes(name.as_bytes()).hash(id);
    }
    e.finish()
}

/// A directory's content hash: its children's (name, kind, content hash), independent of where
/// the directory lives, so that a moved or copied directory keeps its content hash.
pub fn dir_content_hash<'a>(
    children: impl ExactSizeIterator<Item = (&'a str, crate::kind::NodeKind, &'a Hash)>,
) -> Hash {
    let mut e = Encoder::new("dir-content");
    e.count(children.len());
    for (name, kind, hash) in children {
        e.bytes(name.as_bytes())
            .bytes(kind.as_str().as_bytes())
            .hash(hash);
    }
    e.finish()
}

/// A FrameID: (basis, content, frame type, agent).
pub fn frame_id(basis: &Hash, content: &[u8], frame_type: &str, agent_id: &str) -> FrameId {
    Encoder::new("frame")
        .hash(basis)
        .bytes(content)
        .bytes(frame_type.as_bytes())
        .bytes(agent_id.as_bytes())
        .finish()
}
