//! [`NodeKind`], merkle-hash's, where the store's modules name it.
pub use merkle_hash::kind::NodeKind;
