//! The caches room: checkpoints of derived work over a tree, and notes of work in flight
//! elsewhere (remote markers live beside the exchange that writes them; derived data in
//! `derived.rs`).
//!
//! Notes are small records a caller keeps by name about work in flight outside the store, such
//! as the id of a batch a provider is running for a `generate`, so that a run killed while it
//! waits picks the same work up instead of paying for it again. Unlike memos and derived data
//! they are not a cache: losing one can cost a duplicate of what it names. The store keeps
//! them and never reads them.
use super::*;

pub(super) fn checkpoint_key(name: &str) -> Vec<u8> {
    let mut key = b"checkpoint:".to_vec();
    key.extend_from_slice(name.as_bytes());
    key
}

impl Store {
    /// The checkpoint `name` last recorded: a root, and [`Store::frame_seq`] when it was
    /// recorded. A caller that derives frames over a whole tree records one when it is done;
    /// while the frame sequence is unchanged no frame has been created since, so only the nodes
    /// that differ between that root and the current one ([`Store::changed_since`]) can need its
    /// work again. The store keeps checkpoints and never reads them.
    pub fn checkpoint(&self, name: &str) -> Result<Option<(NodeId, u64)>> {
        let key = checkpoint_key(name);
        self.engine
            .get(Table::Meta, &key)?
            .map(|v| {
                codec::decode("meta", &key, &v, "a root hash and a frame sequence", |r| {
                    Some((r.hash()?, r.u64()?))
                })
            })
            .transpose()
    }

    /// Records the checkpoint `name` (see [`Store::checkpoint`]).
    pub fn set_checkpoint(&self, name: &str, root: &NodeId, frame_seq: u64) -> Result<()> {
        let _guard = self.lock();
        let mut value = root.0.to_vec();
        value.extend_from_slice(&frame_seq.to_le_bytes());
        let mut batch = Batch::default();
        batch.put(Table::Meta, checkpoint_key(name), value);
        self.engine.commit(batch)
    }
}

fn note_key(name: &str) -> Vec<u8> {
    let mut key = b"note:".to_vec();
    key.extend_from_slice(name.as_bytes());
    key
}

impl Store {
    /// The note kept under `name`, if any.
    pub fn note(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.engine.get(Table::Meta, &note_key(name))
    }

    /// Keeps `value` under `name`, or removes the note when `value` is `None`; durable when
    /// it returns.
    pub fn set_note(&self, name: &str, value: Option<&[u8]>) -> Result<()> {
        let _guard = self.lock();
        let mut batch = Batch::default();
        match value {
            Some(value) => batch.put(Table::Meta, note_key(name), value.to_vec()),
            None => batch.delete(Table::Meta, note_key(name)),
        }
        self.engine.commit(batch)
    }
}
