//! Data derived from content, kept by the caller's key ([`Store::derived`],
//! [`Store::put_derived`]), and the current tree's leaves with their content hashes
//! ([`Store::tree_files`]), which is what a caller keys such data by.
//!
//! The store does not know what derived bytes mean: a caller (context's facts: the symbols and
//! imports of a parse) names a namespace that carries its own format version and keys each
//! record by a hash of what it was derived from, so that a rescan recomputes only what changed
//! and a renamed file costs nothing. Like memos it is a cache: losing a record costs a
//! recomputation, and a store written before the table existed reads it as empty.
use super::Store;
use crate::codec::{self, Writer};
use crate::engine::{Batch, Table};
use crate::error::{Error, Result};
use crate::hash::{Hash, NodeId};
use crate::node::NodeKind;

/// A leaf of the current tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeFile {
    /// Workspace-relative path.
    pub path: String,
    /// File or symlink.
    pub kind: NodeKind,
    /// Its NodeID.
    pub node_id: NodeId,
    /// blake3 of its content (a symlink's target).
    pub content_hash: Hash,
}

fn derived_key(namespace: &str, key: &Hash) -> Result<Vec<u8>> {
    if namespace.is_empty() || namespace.contains('\0') {
        return Err(Error::Invalid {
            what: "derived-data namespace",
            value: namespace.to_owned(),
            reason: "must be non-empty and hold no NUL",
        });
    }
    let mut k = Vec::with_capacity(namespace.len() + 33);
    k.extend_from_slice(namespace.as_bytes());
    k.push(0);
    k.extend_from_slice(&key.0);
    Ok(k)
}

impl Store {
    /// The bytes recorded under (`namespace`, `key`) by [`Store::put_derived`], if any.
    pub fn derived(&self, namespace: &str, key: &Hash) -> Result<Option<Vec<u8>>> {
        let k = derived_key(namespace, key)?;
        let Some(mut v) = self.engine.get(Table::Derived, &k)? else {
            return Ok(None);
        };
        if let Some(body) = crate::keys::derived_body(&v) {
            return self.body(&body, "derived", &k).map(Some);
        }
        let n = codec::decode("derived", &k, &v, "a derived record", |r| {
            r.bytes().map(<[u8]>::len)
        })?;
        // The bytes kept in place: a record may be megabytes (a kept graph).
        v.drain(..v.len() - n);
        Ok(Some(v))
    }

    /// Records every (key, bytes) under `namespace` in one commit; a later record of a key
    /// replaces it.
    pub fn put_derived(&self, namespace: &str, records: &[(Hash, Vec<u8>)]) -> Result<()> {
        self.put_derived_in(namespace, records, false)
    }

    /// [`Store::put_derived`] for a namespace keyed by content, whose same bytes recur under
    /// many keys (the symbols of a file's copies): long records are kept once, as bodies.
    /// Not for a record rewritten under one key (a kept graph): each rewrite would leave a body
    /// that only `merkle gc` removes.
    pub fn put_derived_shared(&self, namespace: &str, records: &[(Hash, Vec<u8>)]) -> Result<()> {
        self.put_derived_in(namespace, records, true)
    }

    fn put_derived_in(
        &self,
        namespace: &str,
        records: &[(Hash, Vec<u8>)],
        shared: bool,
    ) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let _guard = self.lock();
        let mut batch = Batch::default();
        let mut staged = super::bodies::Staged::default();
        for (key, bytes) in records {
            let record = if shared && bytes.len() >= super::bodies::BODY_MIN {
                let body = self.stage_body(bytes, &mut staged, &mut batch)?;
                crate::keys::derived_apart(&body)
            } else {
                let mut w = Writer::default();
                w.bytes(bytes);
                w.0
            };
            batch.put(Table::Derived, derived_key(namespace, key)?, record);
        }
        self.engine.commit(batch)
    }

    /// Every file and symlink of the last scan's tree, in path order, with its content hash.
    pub fn tree_files(&self) -> Result<Vec<TreeFile>> {
        self.tree_files_as(|f| f)
    }

    /// [`Store::tree_files`], each file made into a `T` by `make` as it is read: a reader that
    /// makes its own entry of each file holds a million entries once, not twice. The table is
    /// read in two halves side by side, into one vector sized up front for every entry, so
    /// that neither its growth nor the join moves the entries made first.
    pub fn tree_files_as<T: Send>(&self, make: impl Fn(TreeFile) -> T + Sync) -> Result<Vec<T>> {
        if self.root()?.is_none() {
            return Err(Error::NotScanned);
        }
        let n = usize::try_from(self.engine.count(Table::Tree)?).unwrap_or(0);
        let halves = self.tree_halves(|start, end| {
            // Folders are counted too: a little room to spare, never a move.
            let mut out = Vec::with_capacity(if start.is_empty() { n } else { n / 2 });
            self.tree_range(
                start,
                |k| end.is_none_or(|end| k < end),
                |path, e| {
                    if e.kind.is_leaf() {
                        out.push(make(TreeFile {
                            path: path.to_owned(),
                            kind: e.kind,
                            node_id: e.node_id,
                            content_hash: e.content_hash,
                        }));
                    }
                },
            )
            .map(|()| out)
        })?;
        let mut halves = halves.into_iter();
        let mut all = halves.next().unwrap_or_default();
        for mut rest in halves {
            all.append(&mut rest);
        }
        Ok(all)
    }
}
