//! The redb engine: one database file, one table per store table, single-writer mode so that
//! read-only handles in other processes follow the writer's commits.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use redb::{ConcurrencyMode, ReadableDatabase, ReadableTableMetadata, TableDefinition};

use super::{Batch, Engine, Table};
use crate::error::{Error, Result};

type Def = TableDefinition<'static, &'static [u8], &'static [u8]>;
type OpenTable<'t> = redb::Table<'t, &'static [u8], &'static [u8]>;

fn def(table: Table) -> Def {
    TableDefinition::new(table.name())
}

enum Handle {
    Write(redb::Database),
    Read(redb::ReadOnlyDatabase),
}

pub(crate) struct RedbEngine {
    store: PathBuf,
    db: Handle,
    /// One read snapshot with every table open, shared by reads until this handle commits:
    /// opening a transaction and a table per point read costs more than the read itself. A
    /// read-only handle therefore reads one consistent snapshot for its whole life (see
    /// `Store::refresh`).
    snapshot: std::sync::Mutex<Option<Arc<Vec<Option<ReadTable>>>>>,
}

type ReadTable = redb::ReadOnlyTable<&'static [u8], &'static [u8]>;

fn builder() -> redb::Builder {
    let mut b = redb::Builder::new();
    b.set_concurrency_mode(ConcurrencyMode::SingleWriter);
    b
}

impl RedbEngine {
    pub(crate) fn open(store: &Path, path: &Path, writable: bool) -> Result<RedbEngine> {
        let store = store.to_path_buf();
        let db = if writable {
            let db = builder().create(path).map_err(|e| open_error(&store, e))?;
            // Create every table up front so readers never meet a missing table.
            let txn = db.begin_write().map_err(|e| engine_error(&store, e))?;
            for t in Table::ALL {
                txn.open_table(def(t))
                    .map_err(|e| engine_error(&store, e))?;
            }
            txn.commit().map_err(|e| engine_error(&store, e))?;
            Handle::Write(db)
        } else {
            if !path.exists() {
                return Err(Error::NoStore { store });
            }
            match builder().open_read_only(path) {
                Ok(db) => Handle::Read(db),
                // A store left by a killed writer needs recovery, which only a writer may do:
                // do it now if no writer holds the store, then read.
                Err(redb::DatabaseError::RepairAborted) => {
                    drop(builder().open(path).map_err(|e| open_error(&store, e))?);
                    Handle::Read(
                        builder()
                            .open_read_only(path)
                            .map_err(|e| open_error(&store, e))?,
                    )
                }
                Err(e) => return Err(open_error(&store, e)),
            }
        };
        Ok(RedbEngine {
            store,
            db,
            snapshot: std::sync::Mutex::new(None),
        })
    }

    fn tables(&self) -> Result<Arc<Vec<Option<ReadTable>>>> {
        let mut cached = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = cached.as_ref() {
            return Ok(Arc::clone(t));
        }
        let txn = match &self.db {
            Handle::Write(db) => db.begin_read(),
            Handle::Read(db) => db.begin_read(),
        }
        .map_err(|e| engine_error(&self.store, e))?;
        // A table missing from a store written by an older version (opened read-only, so it
        // was not created) reads as empty.
        let tables = Table::ALL
            .iter()
            .map(|t| match txn.open_table(def(*t)) {
                Ok(table) => Ok(Some(table)),
                Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
                Err(e) => Err(engine_error(&self.store, e)),
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

fn open_error(store: &Path, e: redb::DatabaseError) -> Error {
    match e {
        redb::DatabaseError::DatabaseAlreadyOpen => Error::StoreInUse {
            store: store.to_path_buf(),
        },
        e => engine_error(store, e),
    }
}

fn engine_error(store: &Path, e: impl std::fmt::Display) -> Error {
    Error::Engine {
        store: store.to_path_buf(),
        message: e.to_string(),
    }
}

impl Engine for RedbEngine {
    fn name(&self) -> &'static str {
        "redb"
    }

    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let tables = self.tables()?;
        let Some(t) = Self::table(&tables, table) else {
            return Ok(None);
        };
        let v = t.get(key).map_err(|e| engine_error(&self.store, e))?;
        Ok(v.map(|g| g.value().to_vec()))
    }

    fn scan(
        &self,
        table: Table,
        start: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let tables = self.tables()?;
        let Some(t) = Self::table(&tables, table) else {
            return Ok(());
        };
        for item in t.range(start..).map_err(|e| engine_error(&self.store, e))? {
            let (k, v) = item.map_err(|e| engine_error(&self.store, e))?;
            if !visit(k.value(), v.value()) {
                break;
            }
        }
        Ok(())
    }

    fn commit(&self, batch: Batch) -> Result<()> {
        let Handle::Write(db) = &self.db else {
            return Err(Error::Engine {
                store: self.store.clone(),
                message: "the store was opened read-only".to_owned(),
            });
        };
        let txn = db.begin_write().map_err(|e| engine_error(&self.store, e))?;
        {
            // Open each table once per batch; batches are mostly grouped by table already.
            let mut open: Vec<(Table, OpenTable<'_>)> = Vec::new();
            for (table, key, value) in &batch.ops {
                let idx = match open.iter().position(|(t, _)| t == table) {
                    Some(i) => i,
                    None => {
                        let t = txn
                            .open_table(def(*table))
                            .map_err(|e| engine_error(&self.store, e))?;
                        open.push((*table, t));
                        open.len() - 1
                    }
                };
                let t = &mut open[idx].1;
                match value {
                    Some(v) => {
                        t.insert(key.as_slice(), v.as_slice())
                            .map_err(|e| engine_error(&self.store, e))?;
                    }
                    None => {
                        t.remove(key.as_slice())
                            .map_err(|e| engine_error(&self.store, e))?;
                    }
                }
            }
        }
        txn.commit().map_err(|e| engine_error(&self.store, e))?;
        // Later reads must see this commit.
        *self.snapshot.lock().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }

    fn refresh(&self) {
        *self.snapshot.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn count(&self, table: Table) -> Result<u64> {
        let tables = self.tables()?;
        Self::table(&tables, table)
            .map_or(Ok(0), |t| t.len().map_err(|e| engine_error(&self.store, e)))
    }
}
