//! The sled engine: one sled tree per store table, batches as multi-tree transactions, flushed
//! before a commit returns (sled otherwise buffers writes for up to 500 ms).
use std::path::{Path, PathBuf};

use sled::Transactional;

use super::{Batch, Engine, Table};
use crate::error::{Error, Result};

pub(crate) struct SledEngine {
    store: PathBuf,
    db: sled::Db,
    trees: Vec<sled::Tree>,
}

fn engine_error(store: &Path, e: impl std::fmt::Display) -> Error {
    Error::Engine {
        store: store.to_path_buf(),
        message: e.to_string(),
    }
}

impl SledEngine {
    pub(crate) fn open(store: &Path, path: &Path) -> Result<SledEngine> {
        let store = store.to_path_buf();
        let db = sled::Config::new().path(path).open().map_err(|e| match e {
            // sled reports a held lock as an io error from its file lock.
            sled::Error::Io(io)
                if io.kind() == std::io::ErrorKind::WouldBlock
                    || io.to_string().contains("lock") =>
            {
                Error::StoreInUse {
                    store: store.clone(),
                }
            }
            e => engine_error(&store, e),
        })?;
        let trees = Table::ALL
            .iter()
            .map(|t| db.open_tree(t.name()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| engine_error(&store, e))?;
        Ok(SledEngine { store, db, trees })
    }

    fn tree(&self, table: Table) -> &sled::Tree {
        let idx = Table::ALL
            .iter()
            .position(|t| *t == table)
            .expect("every table is in Table::ALL");
        &self.trees[idx]
    }
}

impl Engine for SledEngine {
    fn name(&self) -> &'static str {
        "sled"
    }

    fn visit_value(
        &self,
        table: Table,
        key: &[u8],
        visit: &mut dyn FnMut(Option<&[u8]>),
    ) -> Result<()> {
        let v = self
            .tree(table)
            .get(key)
            .map_err(|e| engine_error(&self.store, e))?;
        visit(v.as_deref());
        Ok(())
    }

    fn scan(
        &self,
        table: Table,
        start: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        for item in self.tree(table).range(start..) {
            let (k, v) = item.map_err(|e| engine_error(&self.store, e))?;
            if !visit(&k, &v) {
                break;
            }
        }
        Ok(())
    }

    fn last_under(&self, table: Table, prefix: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        match self.tree(table).scan_prefix(prefix).next_back() {
            Some(item) => {
                let (k, v) = item.map_err(|e| engine_error(&self.store, e))?;
                Ok(Some((k.to_vec(), v.to_vec())))
            }
            None => Ok(None),
        }
    }

    fn floor(&self, table: Table, key: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        match self.tree(table).range(..=key).next_back() {
            Some(item) => {
                let (k, v) = item.map_err(|e| engine_error(&self.store, e))?;
                Ok(Some((k.to_vec(), v.to_vec())))
            }
            None => Ok(None),
        }
    }

    fn commit(&self, batch: Batch) -> Result<()> {
        let mut per_tree: Vec<sled::Batch> =
            Table::ALL.iter().map(|_| sled::Batch::default()).collect();
        for (table, key, value) in batch.ops {
            let idx = Table::ALL
                .iter()
                .position(|t| *t == table)
                .expect("every table is in Table::ALL");
            match value {
                Some(v) => per_tree[idx].insert(key, v),
                None => per_tree[idx].remove(key),
            }
        }
        self.trees
            .as_slice()
            .transaction(|trees| {
                for (tree, b) in trees.iter().zip(&per_tree) {
                    tree.apply_batch(b)?;
                }
                Ok::<(), sled::transaction::ConflictableTransactionError<()>>(())
            })
            .map_err(|e| engine_error(&self.store, format!("{e:?}")))?;
        self.db.flush().map_err(|e| engine_error(&self.store, e))?;
        Ok(())
    }

    fn count(&self, table: Table) -> Result<u64> {
        Ok(self.tree(table).len() as u64)
    }
}
