//! The tree table kept in two records, one per half ([`Table::Kept`]): every entry of the last
//! scan's tree in path order, as the table holds it, under the state of the table it was read
//! from ([`META_TREE_KEPT_OF`]). A read of the whole tree ([`Store::tree_files`],
//! [`Store::unchanged_on_disk`]) takes them where they are of the table as it is now, each
//! read where the engine holds it (no copy), instead of walking the table's pages entry by
//! entry: on a 15,000-file tree, most of a search's listing. They are a table's only values,
//! megabytes each: among the meta table's small values they were read with each of those.
//! A writable handle that had to walk the table keeps them; a scan that writes the tree moves
//! the table to a new state ([`META_TREE_GEN`]), so the kept ones are no longer read. A cache:
//! one of another state, or one that does not read, is not used.
use super::Store;
use crate::codec::{Reader, Writer};
use crate::engine::{Batch, Table};
use crate::error::Result;
use crate::hash::Hash;
use crate::keys::*;
use crate::node::TreeEntry;

/// The records' format; one of another is not read.
const FORMAT: u8 = 2;

/// The keys of the two halves of the kept tree in [`Table::Kept`]: each half a record of its
/// own, so that each of a whole-tree read's two threads reads its own.
const HALVES: [&[u8]; 2] = [b"tree:0", b"tree:1"];

/// The state of the table the kept tree is of, where it is of the table as it is now: its
/// halves may be read ([`Store::visit_kept_half`]).
#[derive(Clone, Copy)]
pub(super) struct Kept(Hash);

/// One half of the kept tree's record ([`Store::keep_tree`]): its header, then the entries of
/// that half of the table, written as read, so that the record is kept without a copy.
pub(super) struct Records(Writer);

impl Records {
    /// A half of the kept tree of the table in `state`, no entry yet.
    pub(super) fn of(state: Hash) -> Records {
        let mut w = Writer::default();
        w.u8(FORMAT).hash(&state);
        Records(w)
    }

    pub(super) fn push(&mut self, path: &str, entry: &TreeEntry) {
        self.0.str(path);
        entry.write(&mut self.0);
    }
}

impl Store {
    /// The state of the tree table: its root, stamp (and racy record), counts and the number of
    /// commits that wrote it, hashed. Every commit that writes the table changes it.
    pub(super) fn tree_state(&self) -> Result<Hash> {
        let mut h = blake3::Hasher::new();
        for key in [META_ROOT, META_STAMP, META_COUNTS, META_TREE_GEN] {
            match self.engine.get(Table::Meta, key)? {
                Some(v) => {
                    h.update(&[1]);
                    h.update(&(v.len() as u64).to_le_bytes());
                    h.update(&v);
                }
                None => {
                    h.update(&[0]);
                }
            }
        }
        Ok(Hash(*h.finalize().as_bytes()))
    }

    /// Counts a commit that writes the tree table into `batch`, which writes it.
    pub(super) fn count_tree_write(&self, batch: &mut Batch) -> Result<()> {
        let count = self
            .engine
            .get(Table::Meta, META_TREE_GEN)?
            .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok())
            .map_or(0, u64::from_le_bytes);
        batch.put(
            Table::Meta,
            META_TREE_GEN.to_vec(),
            count.wrapping_add(1).to_le_bytes().to_vec(),
        );
        Ok(())
    }

    /// Whether the tree table is kept as it is now: a whole-tree read of this handle then
    /// takes the kept tree instead of walking the table.
    pub fn tree_kept(&self) -> Result<bool> {
        Ok(self.kept()?.is_some())
    }

    /// The kept tree, where it is of the table as it is now.
    pub(super) fn kept(&self) -> Result<Option<Kept>> {
        let state = self.tree_state()?;
        let of = self.engine.get(Table::Meta, META_TREE_KEPT_OF)?;
        Ok(of.is_some_and(|of| of == state.0).then_some(Kept(state)))
    }

    /// The entries of half `half` (0 or 1) of the kept tree, in path order, while `visit`
    /// returns true, read where the engine holds them. `None` when the half is missing, of
    /// another state or does not read (a damaged record).
    pub(super) fn visit_kept_half(
        &self,
        kept: Kept,
        half: usize,
        mut visit: impl FnMut(&str, TreeEntry) -> bool,
    ) -> Result<Option<()>> {
        let mut read = None;
        let key = HALVES.get(half).copied().unwrap_or_default();
        self.engine.visit_value(Table::Kept, key, &mut |bytes| {
            let Some(bytes) = bytes else { return };
            let mut r = Reader::new(bytes);
            read = (|| {
                (r.u8()? == FORMAT && r.hash()? == kept.0).then_some(())?;
                while !r.is_empty() {
                    let path = r.str()?;
                    let entry = TreeEntry::read(&mut r)?;
                    if !visit(path, entry) {
                        break;
                    }
                }
                Some(())
            })();
        })?;
        Ok(read)
    }

    /// Keeps `halves` (every entry of the table, in path order, in one or two halves) as the
    /// kept tree of the table in `state`, where it is still in that state and this handle can
    /// write. A cache: a failure to keep it is not an error.
    pub(super) fn keep_tree(&self, state: Hash, halves: Vec<Records>) {
        if self.is_read_only() {
            return;
        }
        let mut batch = Batch::default();
        let mut halves = halves.into_iter();
        for key in HALVES {
            let half = halves.next().unwrap_or_else(|| Records::of(state));
            batch.put(Table::Kept, key.to_vec(), half.0.0);
        }
        batch.put(Table::Meta, META_TREE_KEPT_OF.to_vec(), state.0.to_vec());
        // Where a store of an earlier version kept it, among the meta table's small values.
        for key in META_TREE_KEPT_BEFORE {
            batch.delete(Table::Meta, key.to_vec());
        }
        // Under the write lock: no commit of this handle lands between the check and the put.
        let _guard = self.lock();
        if !matches!(self.tree_state(), Ok(now) if now == state) {
            return;
        }
        let _ = self.engine.commit(batch);
    }
}
