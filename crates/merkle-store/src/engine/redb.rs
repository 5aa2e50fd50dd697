//! The redb engine: one database file, one table per store table, single-writer mode so that
//! read-only handles in other processes follow the writer's commits.
//!
//! redb trusts the pages it reads: a file whose header is intact but whose pages are garbage
//! makes it panic (`unreachable` in its btree code) rather than return an error. Every call
//! into redb therefore goes through [`guard`], which turns such a panic, like redb's own
//! `Corrupted` error, into [`Error::Damaged`] naming the file.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use redb::{ConcurrencyMode, ReadableDatabase, ReadableTableMetadata, TableDefinition};

use super::{Batch, Engine, Table};
use crate::error::{Error, Result};

type Def = TableDefinition<'static, &'static [u8], &'static [u8]>;

/// One write of a [`Batch`]: a table, a key, and a value or `None` to remove the key.
type Op = (Table, Vec<u8>, Option<Vec<u8>>);

/// Batches with at least this many writes to each of two tables write the tables in parallel.
const PARALLEL_MIN: usize = 4096;
/// At least this many writes of keys above a table's last (all of an empty table's) are
/// loaded through a cursor (see [`RedbEngine::commit_in`]).
const BULK_MIN: usize = 256;

fn def(table: Table) -> Def {
    TableDefinition::new(table.name())
}

enum Handle {
    Write(redb::Database),
    Read(redb::ReadOnlyDatabase),
}

pub(crate) struct RedbEngine {
    store: PathBuf,
    /// The database file, which errors about damage name.
    file: PathBuf,
    db: Handle,
    /// One read snapshot with every table open, shared by reads until this handle commits:
    /// opening a transaction and a table per point read costs more than the read itself. A
    /// read-only handle therefore reads one consistent snapshot for its whole life (see
    /// `Store::refresh`).
    snapshot: std::sync::Mutex<Option<Arc<Vec<Option<ReadTable>>>>>,
}

type ReadTable = redb::ReadOnlyTable<&'static [u8], &'static [u8]>;

/// redb's page cache: its default (1 GiB) would let one command's memory grow with the store
/// on a large tree (issue #46: every command within 1 GiB); pages beyond it are read again
/// from the OS's page cache. Half of it buffers a transaction's writes. Every command that
/// reads the whole tree table (status, a rescan, generate, the index build) fills it. A cold
/// scan of a million files: at 256 MiB its peak was 1,079 MiB, at 128 MiB 950 MiB, in the
/// same time. At 300,000 files, 128 -> 32 MiB: status 383 -> 263 MiB, generate 520 -> 415
/// MiB, the index build 677 -> 596 MiB, each in the same time (1.1, 92 and 37 s).
const CACHE_BYTES: usize = 32 << 20;

fn builder() -> redb::Builder {
    let mut b = redb::Builder::new();
    b.set_concurrency_mode(ConcurrencyMode::SingleWriter);
    b.set_cache_size(CACHE_BYTES);
    b
}

impl RedbEngine {
    pub(crate) fn open(store: &Path, path: &Path, writable: bool) -> Result<RedbEngine> {
        let at = Errors {
            store: store.to_path_buf(),
            file: path.to_path_buf(),
        };
        let db = guard(&at.file, || {
            if writable {
                let db = builder().create(path).map_err(|e| at.open(e))?;
                // No table is created up front: a write creates its table, and every read
                // takes a missing table as an empty one. Creating them here was a durable
                // commit of its own (two fsyncs) on every new store.
                return Ok(Handle::Write(db));
            }
            if !path.exists() {
                return Err(Error::NoStore {
                    store: at.store.clone(),
                });
            }
            match builder().open_read_only(path) {
                Ok(db) => Ok(Handle::Read(db)),
                // A store left by a killed writer needs recovery, which only a writer may do:
                // do it now if no writer holds the store, then read.
                Err(redb::DatabaseError::RepairAborted) => {
                    drop(builder().open(path).map_err(|e| at.open(e))?);
                    Ok(Handle::Read(
                        builder().open_read_only(path).map_err(|e| at.open(e))?,
                    ))
                }
                Err(e) => Err(at.open(e)),
            }
        })?;
        Ok(RedbEngine {
            store: at.store,
            file: at.file,
            db,
            snapshot: std::sync::Mutex::new(None),
        })
    }

    fn errors(&self) -> Errors {
        Errors {
            store: self.store.clone(),
            file: self.file.clone(),
        }
    }

    /// Runs a call into redb under [`guard`]; after a panic the cached snapshot is dropped, as
    /// it may be half built.
    fn guarded<T>(&self, f: impl FnOnce(&Errors) -> Result<T>) -> Result<T> {
        let at = self.errors();
        let r = guard(&self.file, || f(&at));
        if matches!(r, Err(Error::Damaged { .. })) {
            self.refresh();
        }
        r
    }

    fn tables(&self, at: &Errors) -> Result<Arc<Vec<Option<ReadTable>>>> {
        let mut cached = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = cached.as_ref() {
            return Ok(Arc::clone(t));
        }
        let txn = match &self.db {
            Handle::Write(db) => db.begin_read(),
            Handle::Read(db) => db.begin_read(),
        }
        .map_err(|e| at.engine(e))?;
        // A table missing from a store written by an older version (opened read-only, so it
        // was not created) reads as empty.
        let tables = Table::ALL
            .iter()
            .map(|t| match txn.open_table(def(*t)) {
                Ok(table) => Ok(Some(table)),
                Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
                Err(e) => Err(at.engine(e)),
            })
            .collect::<Result<Vec<_>>>()?;
        let tables = Arc::new(tables);
        *cached = Some(Arc::clone(&tables));
        Ok(tables)
    }

    fn table(tables: &[Option<ReadTable>], table: Table) -> Option<&ReadTable> {
        let idx = Table::ALL
            .iter()
            .position(|t| *t == table)
            .expect("every table is in Table::ALL");
        tables[idx].as_ref()
    }
}

/// Runs `f`, turning a panic inside it into [`Error::Damaged`] naming `file`.
fn guard<T>(file: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    // Nothing `f` touches is left for the caller to observe half-changed: a write transaction
    // that panics is dropped uncommitted, and the cached snapshot is cleared by the caller.
    let caught = super::catching(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    caught.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the engine panicked".to_owned());
        Err(Error::Damaged {
            file: file.to_path_buf(),
            message: format!("redb: {message}"),
        })
    })
}

/// What errors from one store name.
struct Errors {
    store: PathBuf,
    file: PathBuf,
}

impl Errors {
    fn open(&self, e: redb::DatabaseError) -> Error {
        match e {
            redb::DatabaseError::DatabaseAlreadyOpen => Error::StoreInUse {
                store: self.store.clone(),
            },
            e => self.engine(e),
        }
    }

    /// redb's error as ours: its `Corrupted` is a damaged file.
    fn engine(&self, e: impl Into<redb::Error>) -> Error {
        match e.into() {
            redb::Error::Corrupted(message) => Error::Damaged {
                file: self.file.clone(),
                message: format!("redb: {message}"),
            },
            e => Error::Engine {
                store: self.store.clone(),
                message: e.to_string(),
            },
        }
    }
}

impl Engine for RedbEngine {
    fn name(&self) -> &'static str {
        "redb"
    }

    fn visit_value(
        &self,
        table: Table,
        key: &[u8],
        visit: &mut dyn FnMut(Option<&[u8]>),
    ) -> Result<()> {
        self.guarded(|at| {
            let tables = self.tables(at)?;
            let Some(t) = Self::table(&tables, table) else {
                visit(None);
                return Ok(());
            };
            let v = t.get(key).map_err(|e| at.engine(e))?;
            visit(v.as_ref().map(|g| g.value()));
            Ok(())
        })
    }

    fn scan(
        &self,
        table: Table,
        start: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.guarded(|at| {
            let tables = self.tables(at)?;
            let Some(t) = Self::table(&tables, table) else {
                return Ok(());
            };
            for item in t.range(start..).map_err(|e| at.engine(e))? {
                let (k, v) = item.map_err(|e| at.engine(e))?;
                if !visit(k.value(), v.value()) {
                    break;
                }
            }
            Ok(())
        })
    }

    fn last_under(&self, table: Table, prefix: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        self.guarded(|at| {
            let tables = self.tables(at)?;
            let Some(t) = Self::table(&tables, table) else {
                return Ok(None);
            };
            let range = match super::after_prefix(prefix) {
                Some(end) => t.range(prefix..end.as_slice()),
                None => t.range(prefix..),
            };
            let last = range.map_err(|e| at.engine(e))?.next_back();
            match last {
                Some(item) => {
                    let (k, v) = item.map_err(|e| at.engine(e))?;
                    Ok(Some((k.value().to_vec(), v.value().to_vec())))
                }
                None => Ok(None),
            }
        })
    }

    fn floor(&self, table: Table, key: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        self.guarded(|at| {
            let tables = self.tables(at)?;
            let Some(t) = Self::table(&tables, table) else {
                return Ok(None);
            };
            match t.range(..=key).map_err(|e| at.engine(e))?.next_back() {
                Some(item) => {
                    let (k, v) = item.map_err(|e| at.engine(e))?;
                    Ok(Some((k.value().to_vec(), v.value().to_vec())))
                }
                None => Ok(None),
            }
        })
    }

    fn commit(&self, batch: Batch) -> Result<()> {
        let Handle::Write(db) = &self.db else {
            return Err(Error::Engine {
                store: self.store.clone(),
                message: "the store was opened read-only".to_owned(),
            });
        };
        self.guarded(|at| Self::commit_in(db, at, &batch))?;
        // Later reads must see this commit.
        *self.snapshot.lock().unwrap_or_else(|e| e.into_inner()) = None;
        // A cold scan's batch is two allocations per path: freed off the caller's path.
        if batch.len() >= PARALLEL_MIN {
            rayon::spawn(move || drop(batch));
        }
        Ok(())
    }

    fn refresh(&self) {
        *self.snapshot.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn compact(&mut self) -> Result<bool> {
        // The cached snapshot is a read transaction, which compaction waits for: dropped.
        self.refresh();
        let at = self.errors();
        let Handle::Write(db) = &mut self.db else {
            return Ok(false);
        };
        // `None` where another process reads the store (a server, a watch): nothing moves, and
        // nothing is rewritten, since the pages a rewrite frees could not be given back.
        let compact = |db: &mut redb::Database| {
            guard(&at.file, || match db.compact() {
                Ok(done) => Ok(Some(done)),
                Err(redb::CompactionError::TransactionInProgress) => Ok(None),
                Err(e) => Err(Error::Engine {
                    store: at.store.clone(),
                    message: format!("compacting: {e}"),
                }),
            })
        };
        let start = std::fs::metadata(&at.file).map_or(0, |m| m.len());
        let Some(first) = compact(db)? else {
            return Ok(false);
        };
        let mut repacked = false;
        for table in Table::ALL {
            repacked |= guard(&at.file, || repack(db, &at, table))
                .map_err(|e| doing(e, &format!("repacking table {}", table.name())))?;
        }
        // The pages the repacks freed become free for new values only once compaction has
        // drained them: the large values are written again after it (see [`relocate_large`]).
        if repacked && compact(db)?.is_none() {
            return Ok(first);
        }
        // Each round writes the large values again and compacts, while the file is well over
        // what is allocated in it; it may take two before they land low (the first often lands
        // them past the end, which compaction then moves down only as far as the others let
        // it). Stops after a round, past the first, that leaves the file no shorter.
        let len = || std::fs::metadata(&at.file).map_or(0, |m| m.len());
        let mut before = len();
        for round in 0..RELOCATE_ROUNDS {
            let allocated = guard(&at.file, || allocated_bytes(db, &at))?;
            if before <= allocated + allocated / 8 {
                break;
            }
            guard(&at.file, || relocate_large(db, &at))
                .map_err(|e| doing(e, "writing large values again"))?;
            if compact(db)?.is_none() {
                break;
            }
            let after = len();
            if after >= before && round > 0 {
                break;
            }
            before = after;
        }
        Ok(first || repacked || len() < start)
    }

    fn count(&self, table: Table) -> Result<u64> {
        self.guarded(|at| {
            let tables = self.tables(at)?;
            Self::table(&tables, table).map_or(Ok(0), |t| t.len().map_err(|e| at.engine(e)))
        })
    }
}

/// A table is rewritten by [`repack`] when more than a fifth of its pages' bytes are free,
/// and it has at least this many pages.
const REPACK_MIN_PAGES: u64 = 64;

/// Rewrites `table` in key order when much of its pages is free; whether it did. A table
/// written in random key order (nodes and frames by hash) keeps its leaves about two thirds
/// full, as splits leave them: a third of a large store's file is that free space. Loaded in
/// key order through a cursor at its end, redb packs each leaf full. One transaction: the new
/// table is renamed over the old one, or nothing happened. The file holds both copies until
/// compaction, so a repack needs free disk for the table's size once more.
fn repack(db: &redb::Database, at: &Errors, table: Table) -> Result<bool> {
    let free_enough = {
        let txn = db.begin_read().map_err(|e| at.engine(e))?;
        match txn.open_table(def(table)) {
            Ok(t) => {
                let s = t.stats().map_err(|e| at.engine(e))?;
                let pages = s.leaf_pages() + s.branch_pages();
                let bytes = s.stored_bytes() + s.metadata_bytes() + s.fragmented_bytes();
                pages >= REPACK_MIN_PAGES && s.fragmented_bytes() * 5 > bytes
            }
            Err(redb::TableError::TableDoesNotExist(_)) => false,
            Err(e) => return Err(at.engine(e)),
        }
    };
    if !free_enough {
        return Ok(false);
    }
    let name = format!("{}.repack", table.name());
    let new_def: TableDefinition<'_, &'static [u8], &'static [u8]> = TableDefinition::new(&name);
    let txn = db.begin_write().map_err(|e| at.engine(e))?;
    {
        use redb::ReadableTable;
        // A table of that name is only ever left by a transaction that did not commit.
        txn.delete_table(new_def).map_err(|e| at.engine(e))?;
        let old = txn.open_table(def(table)).map_err(|e| at.engine(e))?;
        let mut new = txn.open_table(new_def).map_err(|e| at.engine(e))?;
        let mut end = new
            .upper_bound_mut(std::ops::Bound::<&[u8]>::Unbounded)
            .map_err(|e| at.engine(e))?;
        for entry in old.iter().map_err(|e| at.engine(e))? {
            let (k, v) = entry.map_err(|e| at.engine(e))?;
            end.insert_before(k.value(), v.value())
                .map_err(|e| at.engine(redb::Error::from(e)))?;
        }
        end.close().map_err(|e| at.engine(e))?;
        let (had, has) = (old.len(), new.len());
        if had.as_ref().ok() != has.as_ref().ok() {
            // Dropped uncommitted: the old table stays as it was.
            return Err(Error::Engine {
                store: at.store.clone(),
                message: format!("the copy holds {has:?} entries of the table's {had:?}"),
            });
        }
    }
    txn.delete_table(def(table)).map_err(|e| at.engine(e))?;
    txn.rename_table(new_def, def(table))
        .map_err(|e| at.engine(e))?;
    txn.commit().map_err(|e| at.engine(e))?;
    Ok(true)
}

/// The bytes of the pages allocated in the file (what compaction could shrink it to).
fn allocated_bytes(db: &redb::Database, at: &Errors) -> Result<u64> {
    let txn = db.begin_write().map_err(|e| at.engine(e))?;
    let stats = txn.stats().map_err(|e| at.engine(e))?;
    let bytes = stats.allocated_pages() * stats.page_size() as u64;
    txn.abort().map_err(|e| at.engine(e))?;
    Ok(bytes)
}

/// `e`, saying what was being done when it came.
fn doing(e: Error, what: &str) -> Error {
    match e {
        Error::Engine { store, message } => Error::Engine {
            store,
            message: format!("{what}: {message}"),
        },
        Error::Damaged { file, message } => Error::Damaged {
            file,
            message: format!("{what}: {message}"),
        },
        e => e,
    }
}

/// At most this many rounds of [`relocate_large`] and compaction.
const RELOCATE_ROUNDS: usize = 4;

/// Values at least this long sit on pages of their own, allocated in one piece.
const LARGE_VALUE: usize = 16 << 10;

/// Writes the large values of the tables that hold them (long bodies, a derived record of an
/// older format, an earlier version's copy of the tree) again, in one transaction, so that each is allocated
/// anew among the pages the repacks freed. Compaction moves the file's last pages down one at
/// a time and stops at the first it cannot place lower: a large value near the end, needing a
/// free run of its whole length, stopped it there, and the file did not shrink at all.
fn relocate_large(db: &redb::Database, at: &Errors) -> Result<()> {
    use redb::ReadableTable;
    let txn = db.begin_write().map_err(|e| at.engine(e))?;
    for table in [Table::Kept, Table::Bodies, Table::Derived] {
        let mut t = match txn.open_table(def(table)) {
            Ok(t) => t,
            Err(e) => return Err(at.engine(e)),
        };
        let mut large = Vec::new();
        for entry in t.iter().map_err(|e| at.engine(e))? {
            let (k, v) = entry.map_err(|e| at.engine(e))?;
            if v.value().len() >= LARGE_VALUE {
                large.push(k.value().to_vec());
            }
        }
        for key in large {
            let value = t.remove(key.as_slice()).map_err(|e| at.engine(e))?;
            if let Some(value) = value.map(|v| v.value().to_vec()) {
                t.insert(key.as_slice(), value.as_slice())
                    .map_err(|e| at.engine(e))?;
            }
        }
    }
    txn.commit().map_err(|e| at.engine(e))
}

/// Whether every key of `table` is below `first` (an empty table's are).
fn above_last(
    table: &redb::Table<&'static [u8], &'static [u8]>,
    first: &[u8],
) -> std::result::Result<bool, redb::StorageError> {
    use redb::ReadableTable;
    Ok(match table.last()? {
        Some((last, _)) => last.value() < first,
        None => true,
    })
}

impl RedbEngine {
    fn commit_in(db: &redb::Database, at: &Errors, batch: &Batch) -> Result<()> {
        let txn = db.begin_write().map_err(|e| at.engine(e))?;
        // Each table's writes in key order: a B-tree takes keys in order far faster than in a
        // hash map's (a scan's tree entries) or a hash's (node records) order, as each insert
        // lands beside the last. Stable, so that two writes of one key keep theirs; skipped
        // where the caller already wrote them in order.
        let mut by_table: Vec<(Table, Vec<&Op>)> = Vec::new();
        for op in &batch.ops {
            match by_table.iter_mut().find(|(t, _)| *t == op.0) {
                Some((_, ops)) => ops.push(op),
                None => by_table.push((op.0, vec![op])),
            }
        }
        // Each table has a B-tree of its own, so big batches are written a table per thread
        // (a cold scan's tree entries beside its node records): redb's transaction is shared
        // between threads, its tables are not. The threads are the pool's, whose heaps are warm
        // from the walk, rather than new ones whose every page is faulted in afresh.
        let big = by_table
            .iter()
            .filter(|(_, ops)| ops.len() >= PARALLEL_MIN)
            .count()
            >= 2;
        let write = |table: Table, ops: &mut Vec<&Op>| {
            // One pass over the keys when they come strictly in order, as a scan's do.
            let strictly = |ops: &[&Op]| ops.windows(2).all(|w| w[0].1 < w[1].1);
            let mut ascending = strictly(ops);
            if !ascending && !ops.is_sorted_by(|a, b| a.1 <= b.1) {
                ops.sort_by(|a, b| a.1.cmp(&b.1));
                ascending = strictly(ops);
            }
            let mut t = txn.open_table(def(table)).map_err(|e| at.engine(e))?;
            // A table given only new keys above its last, in strictly increasing order (a cold
            // scan's tree entries, its node records a chunk at a time): through a cursor at its
            // end, whose inserts redb buffers and packs into full leaves, rather than one B-tree
            // descent and leaf update per key. A third of the commit of a cold scan of Django
            // went on those.
            let bulk = ops.len() >= BULK_MIN
                && ascending
                && ops.iter().all(|op| op.2.is_some())
                && above_last(&t, &ops[0].1).map_err(|e| at.engine(e))?;
            if bulk {
                let mut end = t
                    .upper_bound_mut(std::ops::Bound::<&[u8]>::Unbounded)
                    .map_err(|e| at.engine(e))?;
                for (_, key, value) in ops.iter() {
                    let value = value.as_deref().expect("only puts are loaded in bulk");
                    end.insert_before(key.as_slice(), value)
                        .map_err(|e| at.engine(redb::Error::from(e)))?;
                }
                return end.close().map_err(|e| at.engine(e));
            }
            for (_, key, value) in ops.iter() {
                match value {
                    Some(v) => {
                        t.insert(key.as_slice(), v.as_slice())
                            .map_err(|e| at.engine(e))?;
                    }
                    None => {
                        t.remove(key.as_slice()).map_err(|e| at.engine(e))?;
                    }
                }
            }
            Ok::<(), Error>(())
        };
        if big {
            // The largest table on one side, the others on the other.
            by_table.sort_by_key(|(_, ops)| std::cmp::Reverse(ops.len()));
            if let Some(((table, ops), rest)) = by_table.split_first_mut() {
                let (first, others) = rayon::join(
                    || write(*table, ops),
                    || {
                        rest.iter_mut()
                            .try_for_each(|(table, ops)| write(*table, ops))
                    },
                );
                first?;
                others?;
            }
        } else {
            for (table, ops) in &mut by_table {
                write(*table, ops)?;
            }
        }
        txn.commit().map_err(|e| at.engine(e))
    }
}
