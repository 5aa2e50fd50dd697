//! Notes: small records a caller keeps by name about work in flight outside the store, such
//! as the id of a batch a provider is running for a `generate`, so that a run killed while it
//! waits picks the same work up instead of paying for it again.
//!
//! Unlike memos and derived data they are not a cache: losing one can cost a duplicate of
//! what it names. The store keeps them and never reads them.
use super::Store;
use crate::engine::{Batch, Table};
use crate::error::Result;

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
