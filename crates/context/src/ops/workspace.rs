//! A workspace's store as every front end opens it, and the freshness rule of its reads.
//!
//! One [`Workspace`] (the root and where its store is) opens the store the same way for the
//! CLI, the MCP server and whoever else reads it: a writer waits a little for a store that
//! another process holds ([`STORE_IN_USE_WAIT`]: `merkle watch` holds it only for a rescan),
//! and a read that must answer for the files as they are on disk plans its rescan on a
//! read-only handle first, since with redb a writable open and close are durable commits of
//! their own: a read that finds nothing changed (the usual case) costs what `merkle status`
//! costs and writes nothing.
use std::path::PathBuf;
use std::time::{Duration, Instant};

use merkle_store::{OpenOptions, ScanOptions, ScanReport, Store};

use crate::error::Result;
use crate::facts::TreeFacts;
use crate::graph::Graph;

/// How long a writer waits for a store that another process holds before giving up with the
/// store's "in use" error.
pub const STORE_IN_USE_WAIT: Duration = Duration::from_secs(2);

/// How often a waiting writer tries again.
const RETRY_EVERY: Duration = Duration::from_millis(25);

/// A workspace and its store, as the front ends open it.
#[derive(Clone, Debug)]
pub struct Workspace {
    /// The workspace root.
    pub root: PathBuf,
    /// Where the store is and which engine (`store_dir`, `engine`); each way of opening sets
    /// `read_only` and `existing` itself.
    pub options: OpenOptions,
}

/// A store opened to answer for the files as they are on disk ([`Workspace::current`]).
#[derive(Debug)]
pub struct Current {
    /// A read-only handle.
    pub store: Store,
    /// The files changed since the last scan, and another process held the store for
    /// writing: the store answers for the last scan's tree.
    pub stale: bool,
}

impl Workspace {
    /// The workspace at `root` whose store `options` names.
    pub fn new(root: impl Into<PathBuf>, options: OpenOptions) -> Workspace {
        Workspace {
            root: root.into(),
            options,
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

    /// The store for a read that keeps caches of its own (a rescan, the search index): opened
    /// for writing, but never created. Run where no store is (in `$HOME`, say), such a read
    /// says how to start rather than scan everything below.
    pub fn existing_writer(&self) -> merkle_store::Result<Store> {
        self.open(false, true)
    }

    /// The existing store for writing, opened once and not waited for: for a read that keeps
    /// what it worked out where it can, and where another writer holds the store does not.
    fn writer_if_free(&self) -> merkle_store::Result<Store> {
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

    /// The store read-only, answering for the files as they are on disk: where the last scan's
    /// stats do not vouch for it ([`Store::unchanged_on_disk`]) the rescan is planned
    /// read-only, and what changed is scanned in through a writer. When another
    /// process holds the store for writing, that is not waited for: the store is read as its
    /// last scan left it, and [`Current::stale`] says so where a file changed since. A store
    /// never scanned is left so (the caller then says how to start).
    pub fn current(&self) -> merkle_store::Result<Current> {
        let reader = self.reader()?;
        // Never scanned (left so), or a running `merkle watch` or the last scan's own stats
        // vouch for it.
        let fresh = match reader.root()? {
            None => true,
            Some(root) => watch_vouches_for(&reader, root) || stats_vouch_for(&reader, root),
        };
        if fresh {
            return Ok(Current {
                store: reader,
                stale: false,
            });
        }
        let opts = ScanOptions::default();
        let plan = reader.plan_scan(&opts)?;
        if plan.unchanged().is_some() {
            return Ok(Current {
                store: reader,
                stale: false,
            });
        }
        drop(reader);
        // Once, not waited for: a writer elsewhere makes this read stale, not slow (and not
        // stale where the files are the last scan's, only its bookkeeping to be written).
        let same_tree = plan.same_tree();
        let stale = match self.writer_if_free() {
            Ok(writer) => {
                writer.apply_scan(plan, &opts)?;
                false
            }
            Err(merkle_store::Error::StoreInUse { .. }) => !same_tree,
            Err(e) => return Err(e),
        };
        Ok(Current {
            store: self.reader()?,
            stale,
        })
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

    /// `work`'s answer for the tree as it is on disk (the store must exist). Where no file
    /// changed since the last scan (the usual case) and the import graph and the tree's kept
    /// records ([`Store::tree_kept`]) are kept for that scan, it runs on a read-only handle
    /// beside a check of the last scan's stats
    /// ([`Store::unchanged_on_disk`]), or, where a stat differs, before the rescan's plan,
    /// which writes nothing (or, where the plan has bookkeeping to keep, keeps it through a
    /// writer opened once, not waited for).
    /// Otherwise the store is opened for writing and `work` runs through
    /// [`TreeFacts::on_current_tree`], which rescans and keeps the caches `work` fills (facts,
    /// the graph). An error of the read-only try is not returned: it may be the tree changing
    /// under it, and the writable path says.
    pub fn on_current_tree<T: Send>(
        &self,
        work: impl Fn(&Store, &TreeFacts) -> Result<T> + Sync,
    ) -> Result<T> {
        if let Ok(reader) = self.reader()
            && let Some(scanned) = reader.root()?
            && Graph::kept_for(&reader) == Some(scanned)
            && reader.tree_kept().unwrap_or(false)
        {
            if watch_vouches_for(&reader, scanned)
                && let Ok(facts) = TreeFacts::listing(&reader)
                && facts.root == Some(scanned)
                && let Ok(answer) = work(&reader, &facts)
            {
                return Ok(answer);
            }
            // First the stats of the last scan's tree checked beside the answer, then, when
            // they differ (an edit, or a file only touched), the rescan's plan.
            let (vouched, first) = crate::beside(
                || stats_vouch_for(&reader, scanned),
                || {
                    TreeFacts::listing(&reader)
                        .and_then(|facts| Ok((facts.root, work(&reader, &facts)?)))
                        .ok()
                },
            );
            if let Some((Some(listed), answer)) = first
                && listed == scanned
            {
                if vouched {
                    return Ok(answer);
                }
                let plan = reader.plan_scan(&ScanOptions::default())?;
                if plan.same_tree() {
                    // The files are the last scan's; a file written in that scan's clock
                    // tick, found the same, is settled for the next read where no writer is
                    // held (the reader let go first: an engine may refuse a writer beside it
                    // in-process).
                    drop(reader);
                    if plan.unchanged().is_none()
                        && let Ok(writer) = self.writer_if_free()
                    {
                        let _ = writer.apply_scan(plan, &ScanOptions::default());
                    }
                    return Ok(answer);
                }
            }
        }
        let store = self.existing_writer()?;
        TreeFacts::on_current_tree(&store, |facts| work(&store, facts))
    }
}

/// Whether the last scan's recorded stats still hold for the disk and vouch for the tree at
/// `root` ([`Store::unchanged_on_disk`]): the walk a read would otherwise plan is spared.
fn stats_vouch_for(store: &Store, root: merkle_store::NodeId) -> bool {
    matches!(store.unchanged_on_disk(), Ok(Some(same)) if same == root)
}

/// Whether a running `merkle watch` vouches that the files on disk are the tree at `root`
/// ([`crate::ops::watched`]), which spares a read its walk.
fn watch_vouches_for(store: &Store, root: merkle_store::NodeId) -> bool {
    crate::ops::watched::vouched_root(store.dir()) == Some(root)
}
