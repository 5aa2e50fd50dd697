//! A content-addressed Merkle tree of a workspace, immutable attributed frames, a durable store.
