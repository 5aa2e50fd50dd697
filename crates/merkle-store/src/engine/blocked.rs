//! The tree table in blocks (issue #46: a compact store): every engine is opened behind
//! [`Blocked`], which stores [`Table::Tree`]'s entries (a path and its entry, one per file and
//! folder) in blocks of a few kilobytes instead of a record each, and hands every reader the
//! entries as they were written. At 100k files the table took 22.5 MB as a record per path:
//! each its whole path and the engine's own overhead. A block writes each key as the bytes it
//! shares with the key before it and the rest (sorted paths share most of theirs), and is one
//! of the engine's values, under its first key.
//!
//! A block is [`FORMAT`], then its entries in key order, each: the LEB128 count of bytes its key
//! shares with the key before (0 for the first), the rest of the key and the value, each after
//! its LEB128 length. A read of one key reads the block at or before it ([`Engine::floor`]);
//! a scan reads the blocks from there. A commit rewrites the blocks its writes fall in, cut
//! where one would pass [`BLOCK_FILL`] bytes, so that a block stays within one of the engine's
//! pages. The table's count of entries is kept in the meta table under [`MARK`], which also
//! says that the store's tree is in blocks: a store written before has no mark, and its table
//! is read and written a record per path until `merkle gc` rewrites it ([`Engine::block_all`]).
//! A new store is marked with its first commit.
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Batch, Engine, Table};
use crate::codec::{Reader, Writer};
use crate::error::{Error, Result};

/// The meta key saying a store's tree is in blocks; its value is the table's count of entries
/// (u64, little-endian).
pub(crate) const MARK: &[u8] = b"tree-blocks";
/// A block's first byte: one no tree entry starts with (a kind's code, with or without the
/// short form's flag), so that a record per path read as a block does not read.
const FORMAT: u8 = 0x40;
/// A block is cut before an entry that would take it past this many bytes: with its key and
/// the engine's own bytes, it stays within a 4 KiB page.
#[cfg(not(test))]
const BLOCK_FILL: usize = 3_800;
/// Blocks of a few entries, so that a small table has several.
#[cfg(test)]
const BLOCK_FILL: usize = 120;

impl Table {
    /// Whether the table's entries are kept in blocks.
    fn blocked(self) -> bool {
        matches!(self, Table::Tree)
    }
}

/// The entries of one block, as [`Block::push`] wrote them, after its format byte.
struct Entries<'a> {
    r: Reader<'a>,
    key: Vec<u8>,
}

impl<'a> Entries<'a> {
    /// The entries of `block`; `None` where it is not a block.
    fn of(block: &'a [u8]) -> Option<Entries<'a>> {
        match block.split_first() {
            Some((&FORMAT, rest)) => Some(Entries {
                r: Reader::new(rest),
                key: Vec::new(),
            }),
            _ => None,
        }
    }

    /// The next entry; `None` at the end, `Some(None)` where the block does not read.
    fn next(&mut self) -> Option<Option<(&[u8], &'a [u8])>> {
        if self.r.is_empty() {
            return None;
        }
        let mut read = || {
            let shared = usize::try_from(self.r.var()?).ok()?;
            let rest = self.r.var_bytes()?;
            if shared > self.key.len() {
                return None;
            }
            self.key.truncate(shared);
            self.key.extend_from_slice(rest);
            self.r.var_bytes()
        };
        Some(read().map(|value| (self.key.as_slice(), value)))
    }
}

/// Visits a block's entries in key order while `visit` returns true: `Some(true)` where it
/// read them all, `Some(false)` where `visit` stopped it, `None` where the block does not read.
fn visit_block(block: &[u8], mut visit: impl FnMut(&[u8], &[u8]) -> bool) -> Option<bool> {
    let mut entries = Entries::of(block)?;
    while let Some(entry) = entries.next() {
        let (k, v) = entry?;
        if !visit(k, v) {
            return Some(false);
        }
    }
    Some(true)
}

/// The error of the block under `key` that does not read.
fn unreadable(key: &[u8]) -> Error {
    Error::corrupt(Table::Tree.name(), key, "a tree block that does not read")
}

/// The entries of a block copied out, in key order; an error naming the block where it does
/// not read.
fn decode(key: &[u8], block: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut out = Vec::new();
    visit_block(block, |k, v| {
        out.push((k.to_vec(), v.to_vec()));
        true
    })
    .ok_or_else(|| unreadable(key))?;
    Ok(out)
}

/// A block being written.
struct Block {
    w: Writer,
    first: Vec<u8>,
    last: Vec<u8>,
}

impl Block {
    fn new() -> Block {
        let mut w = Writer::with_capacity(BLOCK_FILL + 256);
        w.u8(FORMAT);
        Block {
            w,
            first: Vec::new(),
            last: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.w.0.len() == 1
    }

    fn push(&mut self, key: &[u8], value: &[u8]) {
        let shared = self
            .last
            .iter()
            .zip(key)
            .take_while(|(a, b)| a == b)
            .count();
        self.w.var(shared as u64).var_bytes(&key[shared..]);
        self.w.var_bytes(value);
        self.last.truncate(shared);
        self.last.extend_from_slice(&key[shared..]);
    }
}

/// Writes sorted entries into blocks, each cut before the entry that would take it past
/// [`BLOCK_FILL`]: (first key, block) in key order.
#[derive(Default)]
struct Blocks {
    done: Vec<(Vec<u8>, Vec<u8>)>,
    open: Option<Block>,
}

impl Blocks {
    fn push(&mut self, key: &[u8], value: &[u8]) {
        let entry = key.len() + value.len() + 6;
        if let Some(block) = self
            .open
            .take_if(|b| !b.is_empty() && b.w.0.len() + entry > BLOCK_FILL)
        {
            self.done.push((block.first, block.w.0));
        }
        let block = self.open.get_or_insert_with(Block::new);
        if block.is_empty() {
            block.first = key.to_vec();
        }
        block.push(key, value);
    }

    fn finish(mut self) -> Vec<(Vec<u8>, Vec<u8>)> {
        if let Some(block) = self.open.take().filter(|b| !b.is_empty()) {
            self.done.push((block.first, block.w.0));
        }
        self.done
    }
}

/// An engine whose [`Table::blocked`] tables are stored in blocks (see the module
/// documentation).
pub(crate) struct Blocked {
    inner: Box<dyn Engine>,
    /// Whether the store's tree is in blocks: its mark is there, or it was empty when opened
    /// for writing (it is marked with its first commit).
    on: AtomicBool,
    /// Whether the mark is written (a new store's is with its first commit).
    marked: AtomicBool,
    /// Commits that rewrite blocks take it alone, one at a time (each reads the blocks it
    /// rewrites); a scan shares it, so that the block it starts at and those it reads after
    /// are of one commit (a commit between the two reads may have moved the entries at the
    /// start under a key before it).
    writing: std::sync::RwLock<()>,
}

impl Blocked {
    pub(crate) fn open(inner: Box<dyn Engine>, writable: bool) -> Result<Blocked> {
        let (marked, empty) = super::marked_or_empty(&*inner, MARK, writable)?;
        Ok(Blocked {
            inner,
            on: (marked || empty).into(),
            marked: marked.into(),
            writing: std::sync::RwLock::new(()),
        })
    }

    fn on(&self, table: Table) -> bool {
        table.blocked() && self.on.load(Ordering::Acquire)
    }

    /// The table's count of entries, as its mark says (0 before the first commit).
    fn marked_count(&self) -> Result<u64> {
        let Some(v) = self.inner.get(Table::Meta, MARK)? else {
            return Ok(0);
        };
        let bytes = <[u8; 8]>::try_from(v.as_slice()).map_err(|_| {
            Error::corrupt("meta", MARK, "a count of tree entries that does not read")
        })?;
        Ok(u64::from_le_bytes(bytes))
    }

    /// The block `key` falls in, (its key, its entries): the last at or before it, else the
    /// first of the table; `None` for an empty table.
    fn block_for(&self, table: Table, key: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if let Some(found) = self.inner.floor(table, key)? {
            return Ok(Some(found));
        }
        let mut first = None;
        self.inner.scan(table, b"", &mut |k, v| {
            first = Some((k.to_vec(), v.to_vec()));
            false
        })?;
        Ok(first)
    }

    /// The first block key after `key`.
    fn next_block(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut after = key.to_vec();
        after.push(0);
        let mut next = None;
        self.inner.scan(table, &after, &mut |k, _| {
            next = Some(k.to_vec());
            false
        })?;
        Ok(next)
    }

    /// The block writes that apply `ops` (sorted by key, one each) to `table`: every block
    /// they fall in rewritten. `count` is moved by the entries added and removed.
    fn rewrite(
        &self,
        table: Table,
        ops: Vec<(Vec<u8>, Option<Vec<u8>>)>,
        count: &mut u64,
    ) -> Result<std::collections::BTreeMap<Vec<u8>, Option<Vec<u8>>>> {
        let mut writes = std::collections::BTreeMap::new();
        let mut ops = ops.into_iter().peekable();
        while let Some((first, _)) = ops.peek() {
            let (old_key, mut old) = match self.block_for(table, first)? {
                Some((k, block)) => {
                    let entries = decode(&k, &block)?;
                    (Some(k), entries)
                }
                None => (None, Vec::new()),
            };
            let next = match &old_key {
                Some(k) => self.next_block(table, k)?,
                None => None,
            };
            let mut blocks = Blocks::default();
            let mut old_entries = std::mem::take(&mut old).into_iter().peekable();
            while let Some((key, value)) = ops.next_if(|(k, _)| next.as_ref().is_none_or(|n| k < n))
            {
                while let Some((k, v)) = old_entries.next_if(|(k, _)| *k < key) {
                    blocks.push(&k, &v);
                }
                let replaced = old_entries.next_if(|(k, _)| *k == key).is_some();
                match value {
                    Some(v) => {
                        *count += u64::from(!replaced);
                        blocks.push(&key, &v);
                    }
                    None => *count -= u64::from(replaced),
                }
            }
            for (k, v) in old_entries {
                blocks.push(&k, &v);
            }
            if let Some(k) = old_key {
                writes.insert(k, None);
            }
            for (k, block) in blocks.finish() {
                writes.insert(k, Some(block));
            }
        }
        Ok(writes)
    }

    /// Applies the batch's writes to blocked tables as block writes, and marks the store with
    /// its new count.
    fn commit_blocks(&self, mut batch: Batch) -> Result<()> {
        let _writing = self.writing.write().unwrap_or_else(|e| e.into_inner());
        let mut ops = Vec::new();
        batch.ops.retain_mut(|(table, key, value)| {
            if !table.blocked() {
                return true;
            }
            ops.push((std::mem::take(key), value.take()));
            false
        });
        // The last write of each key, in key order.
        ops.reverse();
        ops.sort_by(|a, b| a.0.cmp(&b.0));
        ops.dedup_by(|later, earlier| later.0 == earlier.0);
        if ops.is_empty() && self.marked.load(Ordering::Acquire) {
            return self.inner.commit(batch);
        }
        let mut count = self.marked_count()?;
        let writes = self.rewrite(Table::Tree, ops, &mut count)?;
        for (key, value) in writes {
            batch.ops.push((Table::Tree, key, value));
        }
        batch.put(Table::Meta, MARK.to_vec(), count.to_le_bytes().to_vec());
        self.inner.commit(batch)?;
        self.marked.store(true, Ordering::Release);
        Ok(())
    }
}

impl Engine for Blocked {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn visit_value(
        &self,
        table: Table,
        key: &[u8],
        visit: &mut dyn FnMut(Option<&[u8]>),
    ) -> Result<()> {
        if !self.on(table) {
            return self.inner.visit_value(table, key, visit);
        }
        let Some((block_key, block)) = self.inner.floor(table, key)? else {
            visit(None);
            return Ok(());
        };
        let mut found = false;
        visit_block(&block, |k, v| {
            if k == key {
                found = true;
                visit(Some(v));
            }
            k < key
        })
        .ok_or_else(|| unreadable(&block_key))?;
        if !found {
            visit(None);
        }
        Ok(())
    }

    fn floor(&self, table: Table, key: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if !self.on(table) {
            return self.inner.floor(table, key);
        }
        let Some((block_key, block)) = self.inner.floor(table, key)? else {
            return Ok(None);
        };
        // The block's entries read one at a time into one buffer each, not all copied out.
        let (mut k_at, mut v_at, mut any) = (Vec::new(), Vec::new(), false);
        visit_block(&block, |k, v| {
            if k > key {
                return false;
            }
            k_at.clear();
            k_at.extend_from_slice(k);
            v_at.clear();
            v_at.extend_from_slice(v);
            any = true;
            true
        })
        .ok_or_else(|| unreadable(&block_key))?;
        Ok(any.then_some((k_at, v_at)))
    }

    fn scan(
        &self,
        table: Table,
        start: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        if !self.on(table) {
            return self.inner.scan(table, start, visit);
        }
        // A scan's visit never commits through this handle (it would wait on itself).
        let _reading = self.writing.read().unwrap_or_else(|e| e.into_inner());
        let from = match self.inner.floor(table, start)? {
            Some((k, _)) => k,
            None => start.to_vec(),
        };
        let mut bad = None;
        self.inner.scan(
            table,
            &from,
            &mut |block_key, block| match visit_block(block, |k, v| k < start || visit(k, v)) {
                Some(read_all) => read_all,
                None => {
                    bad = Some(block_key.to_vec());
                    false
                }
            },
        )?;
        bad.map_or(Ok(()), |k| Err(unreadable(&k)))
    }

    fn last_under(&self, table: Table, prefix: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if !self.on(table) {
            return self.inner.last_under(table, prefix);
        }
        super::last_under_by_scan(self, table, prefix)
    }

    fn scan_stored(
        &self,
        table: Table,
        start: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.inner.scan_stored(table, start, visit)
    }

    fn commit(&self, batch: Batch) -> Result<()> {
        if self.on.load(Ordering::Acquire) {
            self.commit_blocks(batch)
        } else {
            self.inner.commit(batch)
        }
    }

    fn count(&self, table: Table) -> Result<u64> {
        if self.on(table) {
            self.marked_count()
        } else {
            self.inner.count(table)
        }
    }

    fn refresh(&self) {
        self.inner.refresh();
        // A reader that opened a store before its writer's first commit learns its mark now.
        if !self.on.load(Ordering::Acquire)
            && matches!(self.inner.get(Table::Meta, MARK), Ok(Some(_)))
        {
            self.marked.store(true, Ordering::Release);
            self.on.store(true, Ordering::Release);
        }
    }

    fn compact(&mut self) -> Result<bool> {
        self.inner.compact()
    }

    fn pack_all(&self) -> Result<u64> {
        self.inner.pack_all()
    }

    /// Writes the tree in blocks anew, and marks the store, in one commit: a store written
    /// before blocks, or one whose blocks are half empty or more (a commit never joins blocks,
    /// and one that fills a block past its size cuts it in two); nothing for one whose blocks
    /// are fuller. The entries written.
    fn block_all(&self) -> Result<u64> {
        let _writing = self.writing.write().unwrap_or_else(|e| e.into_inner());
        let on = self.on.load(Ordering::Acquire);
        let (mut records, mut bytes) = (Vec::new(), 0);
        self.inner.scan(Table::Tree, b"", &mut |k, v| {
            records.push(k.to_vec());
            bytes += k.len() + v.len();
            true
        })?;
        if on && records.len() <= bytes / BLOCK_FILL * 2 + 1 {
            return Ok(0);
        }
        let mut blocks = Blocks::default();
        let mut count = 0u64;
        let mut bad = None;
        self.inner.scan(Table::Tree, b"", &mut |k, v| {
            if !on {
                blocks.push(k, v);
                count += 1;
                return true;
            }
            let read = visit_block(v, |key, value| {
                blocks.push(key, value);
                count += 1;
                true
            });
            if read.is_none() {
                bad = Some(k.to_vec());
            }
            read.is_some()
        })?;
        if let Some(k) = bad {
            return Err(unreadable(&k));
        }
        let blocks = blocks.finish();
        // A block's key may be an old record's: its put stands for it.
        let firsts: std::collections::HashSet<&[u8]> =
            blocks.iter().map(|(k, _)| k.as_slice()).collect();
        let mut batch = Batch::default();
        for key in records
            .into_iter()
            .filter(|k| !firsts.contains(k.as_slice()))
        {
            batch.delete(Table::Tree, key);
        }
        for (k, block) in &blocks {
            batch.put(Table::Tree, k.clone(), block.clone());
        }
        batch.put(Table::Meta, MARK.to_vec(), count.to_le_bytes().to_vec());
        self.inner.commit(batch)?;
        self.marked.store(true, Ordering::Release);
        self.on.store(true, Ordering::Release);
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn redb(dir: &std::path::Path) -> Box<dyn Engine> {
        let file = dir.join("store.redb");
        Box::new(super::super::redb::RedbEngine::open(dir, &file, true).expect("open redb"))
    }

    /// Every entry a scan from `start` visits.
    fn scanned(engine: &dyn Engine, start: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        engine
            .scan(Table::Tree, start, &mut |k, v| {
                out.push((k.to_vec(), v.to_vec()));
                true
            })
            .expect("scan");
        out
    }

    /// The engine reads as `model` does, every way a reader reads it.
    fn reads_as(engine: &dyn Engine, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
        let all: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(scanned(engine, b""), all);
        assert_eq!(
            engine.count(Table::Tree).expect("count"),
            model.len() as u64
        );
        for probe in ["", "a", "d/", "d/k", "d/k5", "d/k50", "m", "z/z", "~"] {
            let probe = probe.as_bytes();
            let from: Vec<_> = all
                .iter()
                .filter(|(k, _)| k.as_slice() >= probe)
                .cloned()
                .collect();
            assert_eq!(scanned(engine, probe), from, "scan from {probe:?}");
            let floor = all
                .iter()
                .rev()
                .find(|(k, _)| k.as_slice() <= probe)
                .cloned();
            assert_eq!(engine.floor(Table::Tree, probe).expect("floor"), floor);
        }
        for (k, v) in model {
            assert_eq!(engine.get(Table::Tree, k).expect("get").as_ref(), Some(v));
            let mut missing = k.clone();
            missing.push(b'!');
            if !model.contains_key(&missing) {
                assert!(!engine.contains(Table::Tree, &missing).expect("contains"));
            }
        }
    }

    /// A path of a small tree: a few folders of numbered files.
    fn path(n: u64) -> Vec<u8> {
        format!("{}/k{}", ["a", "d", "m", "z"][(n % 4) as usize], n % 97).into_bytes()
    }

    #[test]
    fn blocks_read_as_the_writes_made_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = Blocked::open(redb(dir.path()), true).expect("open");
        let mut model = BTreeMap::new();
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        for round in 0..40 {
            let mut batch = Batch::default();
            // A first commit of many, as a cold scan's; then a few at a time, some twice.
            for _ in 0..if round == 0 { 200 } else { 1 + next() % 12 } {
                let key = path(next());
                if next() % 3 == 0 {
                    batch.delete(Table::Tree, key.clone());
                    model.remove(&key);
                } else {
                    let value = format!("entry {round} {}", next() % 1000)
                        .repeat(1 + (next() % 3) as usize);
                    batch.put(Table::Tree, key.clone(), value.clone().into_bytes());
                    model.insert(key, value.into_bytes());
                }
            }
            batch.put(
                Table::Nodes,
                format!("n{round}").into_bytes(),
                b"node".to_vec(),
            );
            engine.commit(batch).expect("commit");
            reads_as(&engine, &model);
        }
        assert_eq!(
            engine.get(Table::Nodes, b"n3").expect("get").as_deref(),
            Some(&b"node"[..]),
            "other tables are as written"
        );
        // Every block within its fill but for its last entry, and more than one.
        let mut blocks = 0;
        engine
            .scan_stored(Table::Tree, b"", &mut |_, block| {
                blocks += 1;
                assert!(block.len() <= BLOCK_FILL + 80, "a block of {}", block.len());
                true
            })
            .expect("scan blocks");
        assert!(blocks > 3, "{blocks} blocks");
        drop(engine);
        reads_as(
            &Blocked::open(redb(dir.path()), false).expect("reopen"),
            &model,
        );
        // Emptied, the table has no block left.
        let engine = Blocked::open(redb(dir.path()), true).expect("reopen");
        let mut batch = Batch::default();
        for key in model.keys() {
            batch.delete(Table::Tree, key.clone());
        }
        engine.commit(batch).expect("commit");
        reads_as(&engine, &BTreeMap::new());
        let mut left = 0;
        engine
            .scan_stored(Table::Tree, b"", &mut |_, _| {
                left += 1;
                true
            })
            .expect("scan blocks");
        assert_eq!(left, 0);
    }

    #[test]
    fn a_store_written_before_blocks_reads_as_it_is_until_blocked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let inner = redb(dir.path());
        let mut model = BTreeMap::new();
        let mut batch = Batch::default();
        for n in 0..60 {
            let (k, v) = (path(n * 7), format!("old entry {n}").into_bytes());
            batch.put(Table::Tree, k.clone(), v.clone());
            model.insert(k, v);
        }
        inner.commit(batch).expect("commit");
        let engine = Blocked::open(inner, true).expect("open");
        reads_as(&engine, &model);
        // Written a record per path too, until blocked.
        let mut batch = Batch::default();
        batch.put(Table::Tree, b"b/new".to_vec(), b"new".to_vec());
        model.insert(b"b/new".to_vec(), b"new".to_vec());
        engine.commit(batch).expect("commit");
        reads_as(&engine, &model);
        assert_eq!(engine.block_all().expect("block"), model.len() as u64);
        assert_eq!(
            engine.block_all().expect("again"),
            0,
            "a marked store is in blocks"
        );
        reads_as(&engine, &model);
        drop(engine);
        let inner = redb(dir.path());
        assert!(inner.count(Table::Tree).expect("count") < model.len() as u64 / 3);
        let engine = Blocked::open(inner, false).expect("reopen");
        reads_as(&engine, &model);
    }

    #[test]
    fn blocks_deletes_left_part_empty_are_written_anew() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = Blocked::open(redb(dir.path()), true).expect("open");
        let blocks = |engine: &Blocked| {
            let mut n = 0;
            engine
                .scan_stored(Table::Tree, b"", &mut |_, _| {
                    n += 1;
                    true
                })
                .expect("scan blocks");
            n
        };
        let mut model = BTreeMap::new();
        let mut batch = Batch::default();
        for n in 0..400u64 {
            let (k, v) = (format!("p/{n:04}").into_bytes(), vec![b'v'; 20]);
            batch.put(Table::Tree, k.clone(), v.clone());
            model.insert(k, v);
        }
        engine.commit(batch).expect("commit");
        assert_eq!(engine.block_all().expect("full blocks"), 0);
        let full = blocks(&engine);
        // One entry in four removed: no block is half empty yet. Then two more: as many
        // blocks, each a quarter full.
        for removed in [&[1][..], &[2, 3]] {
            let mut batch = Batch::default();
            for n in (0..400u64).filter(|n| removed.contains(&(n % 4))) {
                let k = format!("p/{n:04}").into_bytes();
                batch.delete(Table::Tree, k.clone());
                model.remove(&k);
            }
            engine.commit(batch).expect("commit");
            assert_eq!(blocks(&engine), full);
            if removed.len() == 1 {
                assert_eq!(engine.block_all().expect("three quarters full"), 0);
            }
        }
        assert_eq!(engine.block_all().expect("sparse blocks"), 100);
        assert!(blocks(&engine) * 3 <= full, "{} of {full}", blocks(&engine));
        reads_as(&engine, &model);
        // A record per path (its first byte a kind's code) does not read as a block.
        assert!(Entries::of(&[0x81, 0, 1, b'a']).is_none());
        assert!(Entries::of(&[1, 0, 1, b'a']).is_none());
    }

    #[test]
    fn a_block_that_does_not_read_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = Blocked::open(redb(dir.path()), true).expect("open");
        let mut batch = Batch::default();
        batch.put(Table::Tree, b"a/x".to_vec(), b"x".to_vec());
        engine.commit(batch).expect("commit");
        drop(engine);
        let inner = redb(dir.path());
        let mut batch = Batch::default();
        batch.put(Table::Tree, b"a/x".to_vec(), vec![FORMAT, 0, 9]);
        inner.commit(batch).expect("commit");
        let engine = Blocked::open(inner, false).expect("reopen");
        let err = engine
            .get(Table::Tree, b"a/x")
            .expect_err("a damaged block");
        assert!(err.to_string().contains("tree"), "{err}");
        assert!(engine.scan(Table::Tree, b"", &mut |_, _| true).is_err());
    }
}
