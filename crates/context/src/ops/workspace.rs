//! A workspace's store as every front end opens it.
//!
//! One [`Workspace`] (the root and where its store is) opens the store the same way for the
//! CLI, the MCP server and the agent: a writer waits a little for a store that another process
//! holds ([`STORE_IN_USE_WAIT`]: `merkle watch` holds it only for a rescan); the reads and
//! writes of one process share its handles (`ops/handles.rs`); and every read answers for the
//! files as they are on disk, by the one rule of `ops/fresh.rs` ([`Workspace::read`],
//! [`Workspace::read_facts`], [`Workspace::write`]).
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use merkle_store::{OpenOptions, ScanOptions, ScanReport, Store};

use super::flight::Flight;
use super::fresh::{Snapshot, Watcher};
use super::handles::Handles;
use crate::error::Result;

/// How long a writer waits for a store that another process holds before giving up with the
/// store's "in use" error.
pub const STORE_IN_USE_WAIT: Duration = Duration::from_secs(2);

/// How often a waiting writer tries again.
const RETRY_EVERY: Duration = Duration::from_millis(25);

/// A workspace and its store, as the front ends open it. Its clones share its handles, its
/// watcher and its kept [`Snapshot`].
#[derive(Clone)]
pub struct Workspace {
    /// The workspace root.
    pub root: PathBuf,
    /// Where the store is and which engine (`store_dir`, `engine`); each way of opening sets
    /// `read_only` and `existing` itself.
    pub options: OpenOptions,
    pub(super) shared: Arc<Shared>,
}

/// What the clones of a workspace share.
#[derive(Default)]
pub(super) struct Shared {
    /// What a file watcher knows of the disk, where one runs.
    pub(super) watcher: Option<Arc<dyn Watcher>>,
    /// A store this process holds open for writing for its whole run (an agent's): every
    /// read and write goes through it.
    pub(super) held: Option<Arc<Store>>,
    pub(super) handles: Handles,
    /// The listing and search index of the last tree read.
    pub(super) snapshot: Mutex<Option<Arc<Snapshot>>>,
    /// Held while the search index is brought in step (one writer of it in this process) or
    /// opened ahead of a read.
    pub(super) indexing: Arc<Mutex<()>>,
    /// The checks of the disk's stats that reads share: of the folders the watcher does not
    /// watch, and of the whole tree where no watcher can say.
    pub(super) unwatched_checks: Flight,
    pub(super) stats_checks: Flight,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .field("options", &self.options)
            .field("watched", &self.shared.watcher.is_some())
            .field("held", &self.shared.held.is_some())
            .finish()
    }
}

impl Workspace {
    /// The workspace at `root` whose store `options` names.
    pub fn new(root: impl Into<PathBuf>, options: OpenOptions) -> Workspace {
        Workspace {
            root: root.into(),
            options,
            shared: Arc::default(),
        }
    }

    /// This workspace with `watcher` telling its reads what changed on disk (a server's own
    /// file watcher, or a running `merkle watch`).
    pub fn watched_by(self, watcher: Arc<dyn Watcher>) -> Workspace {
        let held = self.shared.held.clone();
        Workspace {
            shared: Arc::new(Shared {
                watcher: Some(watcher),
                held,
                ..Shared::default()
            }),
            ..self
        }
    }

    /// This workspace read and written through `store`, which this process holds open for
    /// writing (an agent's run): every read rescans through it first.
    pub fn holding(self, store: Arc<Store>) -> Workspace {
        let watcher = self.shared.watcher.clone();
        Workspace {
            shared: Arc::new(Shared {
                watcher,
                held: Some(store),
                ..Shared::default()
            }),
            ..self
        }
    }

    /// The store folder, as [`Store::open`] finds it (nothing is opened or created).
    pub fn store_dir(&self) -> merkle_store::Result<PathBuf> {
        merkle_store::store_dir(&self.root, &self.options)
    }

    /// The store, read-only (the store must exist).
    pub fn reader(&self) -> merkle_store::Result<Store> {
        self.open(true, false)
    }

    /// The store for writing, created where there is none; waits up to
    /// [`STORE_IN_USE_WAIT`] for another process's writer.
    pub fn writer(&self) -> merkle_store::Result<Store> {
        self.open(false, false)
    }

    /// The existing store for writing (never one made), waiting as [`Workspace::writer`] does.
    pub(super) fn existing_writer(&self) -> merkle_store::Result<Store> {
        self.open(false, true)
    }

    /// The existing store for writing, opened once and not waited for: for a read that keeps
    /// what it worked out where it can, and where another writer holds the store does not.
    pub(super) fn writer_if_free(&self) -> merkle_store::Result<Store> {
        Store::open(&self.root, &self.options(false, true))
    }

    fn options(&self, read_only: bool, existing: bool) -> OpenOptions {
        OpenOptions {
            read_only,
            existing,
            ..self.options.clone()
        }
    }

    fn open(&self, read_only: bool, existing: bool) -> merkle_store::Result<Store> {
        let opts = self.options(read_only, existing);
        let give_up = Instant::now() + STORE_IN_USE_WAIT;
        loop {
            match Store::open(&self.root, &opts) {
                Err(merkle_store::Error::StoreInUse { .. }) if Instant::now() < give_up => {
                    std::thread::sleep(RETRY_EVERY);
                }
                opened => return opened,
            }
        }
    }

    /// `status` ([`crate::ops::status`]) on a read-only handle. A stale-frame list worked out
    /// rather than read where an earlier status kept it is kept for the next one through a
    /// writer opened once, not waited for; one that cannot be kept (another process's writer,
    /// a read-only file system) costs the next status its time, nothing else.
    pub fn status(&self) -> Result<crate::ops::Status> {
        let reader = self.reader()?;
        // The walk beside the stale frames: one is the disk's time, the other the store's.
        let (report, stale) = std::thread::scope(|s| {
            let report = s.spawn(|| reader.status());
            let stale = crate::regenerate::stale_frames_keyed(&reader);
            (crate::joined(report), stale)
        });
        let (report, (stale, unkept)) = (report?, stale?);
        let status = crate::ops::Status::of(&reader, report, stale)?;
        if let Some(key) = unkept {
            drop(reader);
            if let Ok(writer) = self.writer_if_free() {
                let _ = crate::regenerate::keep_stale_frames(&writer, &key, &status.stale);
            }
        }
        Ok(status)
    }

    /// A full scan that opens an existing store for writing only when there is something to
    /// write (a no-op scan made on a read-only handle costs what `merkle status` costs); where
    /// no store is, one is made. A plan made read-only is committed through a writable handle,
    /// which makes the scan again if the store moved in between.
    pub fn scan(&self, opts: &ScanOptions<'_>) -> merkle_store::Result<ScanReport> {
        match self.scan_existing(opts)? {
            Some(report) => Ok(report),
            None => self.writer()?.scan(opts),
        }
    }

    /// [`Workspace::scan`] where a store is; `None` (and no store made) where none is.
    pub fn scan_existing(
        &self,
        opts: &ScanOptions<'_>,
    ) -> merkle_store::Result<Option<ScanReport>> {
        let reader = match self.reader() {
            Ok(store) => store,
            Err(merkle_store::Error::NoStore { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let plan = reader.plan_scan(opts)?;
        if let Some(report) = plan.unchanged() {
            return Ok(Some(report.clone()));
        }
        drop(reader);
        Ok(Some(self.writer()?.apply_scan(plan, opts)?))
    }
}
