//! The tree table kept as one record ([`META_TREE_SNAPSHOT`]): every entry of the last scan's
//! tree in path order, as the table holds it, under the state of the table it was read from.
//! A read of the whole tree ([`Store::tree_files`], [`Store::unchanged_on_disk`]) takes it in
//! one piece where it is of the table as it is now, instead of walking the table's pages entry
//! by entry: on a 15,000-file tree, most of a search's listing. A writable handle that had to
//! walk the table keeps one; a scan that writes the tree moves the table to a new state
//! ([`META_TREE_GEN`]), so the kept one is no longer read. A cache: one of another state, or
//! one that does not read, is not used.
use super::Store;
use crate::codec::{Reader, Writer};
use crate::engine::{Batch, Table};
use crate::error::Result;
use crate::hash::Hash;
use crate::keys::*;
use crate::node::TreeEntry;

/// The record's format; one of another is not read.
const FORMAT: u8 = 1;

/// The kept tree, of the table as it is.
pub(super) struct Snapshot {
    bytes: Vec<u8>,
    /// Where the entries begin, and where the second half of them does.
    body: usize,
    middle: usize,
}

impl Snapshot {
    /// The entries between byte offsets `from` and `to` ([`Snapshot::halves`]), in path order,
    /// while `visit` returns true. `None` when one does not read (the record is damaged).
    pub(super) fn visit(
        &self,
        (from, to): (usize, usize),
        mut visit: impl FnMut(&str, TreeEntry) -> bool,
    ) -> Option<()> {
        let mut r = Reader::new(self.bytes.get(from..to)?);
        while !r.is_empty() {
            let path = r.str()?;
            let entry = TreeEntry::read(&mut r)?;
            if !visit(path, entry) {
                break;
            }
        }
        Some(())
    }

    /// The byte ranges of the first and the second half of the entries (the second empty for
    /// a tree read in one piece).
    pub(super) fn halves(&self) -> [(usize, usize); 2] {
        [(self.body, self.middle), (self.middle, self.bytes.len())]
    }

    /// Every entry, in path order.
    pub(super) fn whole(&self) -> (usize, usize) {
        (self.body, self.bytes.len())
    }
}

/// The entries of one half of the table as the snapshot records them ([`Store::keep_tree`]).
#[derive(Default)]
pub(super) struct Records(Writer);

impl Records {
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

    /// Whether the tree table is kept as one record of it as it is now: a whole-tree read of
    /// this handle then takes that record instead of walking the table.
    pub fn tree_kept(&self) -> Result<bool> {
        self.kept_of(&self.tree_state()?)
    }

    /// Whether the kept snapshot is of the table in `state`.
    fn kept_of(&self, state: &Hash) -> Result<bool> {
        let of = self.engine.get(Table::Meta, META_TREE_SNAPSHOT_OF)?;
        Ok(of.is_some_and(|of| of == state.0))
    }

    /// The kept snapshot, when it is of the table as it is now and reads.
    pub(super) fn tree_snapshot(&self) -> Result<Option<Snapshot>> {
        let state = self.tree_state()?;
        if !self.kept_of(&state)? {
            return Ok(None);
        }
        let Some(bytes) = self.engine.get(Table::Meta, META_TREE_SNAPSHOT)? else {
            return Ok(None);
        };
        let mut r = Reader::new(&bytes);
        let header = (|| {
            (r.u8()? == FORMAT).then_some(())?;
            (r.hash()? == state).then_some(())?;
            r.u64().and_then(|m| usize::try_from(m).ok())
        })();
        let body = bytes.len() - r.remaining();
        let Some(middle) = header.map(|m| body + m).filter(|m| *m <= bytes.len()) else {
            return Ok(None);
        };
        Ok(Some(Snapshot {
            bytes,
            body,
            middle,
        }))
    }

    /// Keeps `halves` (every entry of the table, in path order, in one or two halves) as the
    /// snapshot of the table in `state`, where it is still in that state and this handle can
    /// write. A cache: a failure to keep it is not an error.
    pub(super) fn keep_tree(&self, state: Hash, halves: &[Records]) {
        if self.is_read_only() {
            return;
        }
        let len: usize = halves.iter().map(|h| h.0.0.len()).sum();
        let middle = halves.first().map_or(0, |h| h.0.0.len());
        let mut w = Writer::with_capacity(1 + 32 + 8 + len);
        w.u8(FORMAT).hash(&state).u64(middle as u64);
        for half in halves {
            w.0.extend_from_slice(&half.0.0);
        }
        // Under the write lock: no commit of this handle lands between the check and the put.
        let _guard = self.lock();
        if !matches!(self.tree_state(), Ok(now) if now == state) {
            return;
        }
        let mut batch = Batch::default();
        batch.put(Table::Meta, META_TREE_SNAPSHOT.to_vec(), w.0);
        batch.put(
            Table::Meta,
            META_TREE_SNAPSHOT_OF.to_vec(),
            state.0.to_vec(),
        );
        let _ = self.engine.commit(batch);
    }
}
