//! How the MCP server reaches the store, and keeps its answers fresh however long it runs.
//!
//! - **Handles.** Reads share one read-only handle: the first read that finds none opens it,
//!   and the last read in flight drops it, so that between requests every other `merkle`
//!   command opens the store as if the server were not running (opening costs well under a
//!   millisecond). A write waits for the reads in flight, new reads wait behind it, and it
//!   opens the store for writing alone.
//! - **Freshness.** A file watcher (`notify`: inotify) names the paths that change. Before
//!   answering, a request waits until the watcher has delivered every event queued before it
//!   arrived, then, if a change is pending, has it rescanned (only the paths named; the whole
//!   tree after a lost event), as a write. The wait is a barrier: the request creates a file
//!   in a folder of the server's own, watched by the same watcher, and waits for that file's
//!   event, which one inotify queue delivers after every earlier one. So a read answers for the
//!   files as they were when it arrived, and costs no scan when nothing changed. Where no such
//!   watcher runs (it failed to start; not Linux), every request rescans first, which costs
//!   what `merkle status` costs. The server starts with a rescan pending: files may have
//!   changed while it was not running.
//! - **Caches.** The first search (or task context, or related) after a rescan brings the
//!   search index, the facts cache and the import graph in step, as a write; searches then
//!   read them on the shared handle and write nothing. The index is brought in step under a
//!   lock of its own, so that even a reader that finds it behind (another process scanned)
//!   never meets a second writer of it in this process.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use context::ops::Workspace;
use merkle_store::{ScanOptions, Store};
use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::error::{Error, Result};
use crate::events;

/// How long a request waits for its barrier's event before it rescans everything instead.
const BARRIER_WAIT: Duration = Duration::from_secs(2);

/// The store of one workspace, as the requests of one server reach it.
pub(crate) struct Access {
    workspace: Workspace,
    handles: Mutex<Handles>,
    turn: Condvar,
    watch: Option<Watch>,
    /// Whether the next search must bring the caches in step first.
    caches_behind: AtomicBool,
    /// Held while bringing the search index in step.
    index: Mutex<()>,
    /// What searches read, for the last tree they read.
    searchable: Mutex<Option<Arc<Searchable>>>,
}

/// The tree's listing and its search index, opened once for every search of that tree.
pub(crate) struct Searchable {
    /// `None`: made while a scan landed, for one search only.
    root: Option<merkle_store::NodeId>,
    pub(crate) facts: context::TreeFacts,
    pub(crate) index: context::TextIndex,
}

/// Who holds the store now.
#[derive(Default)]
struct Handles {
    /// The read-only handle the reads in flight share.
    reader: Option<Arc<Store>>,
    readers: usize,
    writing: bool,
    writers_waiting: usize,
}

/// What a read does when there is no store yet.
pub(crate) enum NoStore<T> {
    /// Answers this (a workspace never scanned has no frames, no resources).
    Answer(T),
    /// Fails, saying how to make one.
    Fail,
}

impl Access {
    /// The store of `workspace`, watched for changes when a watcher can start (else, unless
    /// `quiet`, a warning says so).
    pub(crate) fn new(workspace: Workspace, quiet: bool) -> Access {
        let watch = if cfg!(target_os = "linux") {
            match Watch::start(&workspace) {
                Ok(watch) => Some(watch),
                Err(e) => {
                    if !quiet {
                        eprintln!(
                            "warning: {}; every request rescans the workspace first instead",
                            e.chain()
                        );
                    }
                    None
                }
            }
        } else {
            None
        };
        Access {
            workspace,
            handles: Mutex::new(Handles::default()),
            turn: Condvar::new(),
            watch,
            caches_behind: AtomicBool::new(true),
            index: Mutex::new(()),
            searchable: Mutex::new(None),
        }
    }

    /// The workspace whose store this is.
    pub(crate) fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    fn handles(&self) -> MutexGuard<'_, Handles> {
        self.handles.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the shared read-only handle, as the store is now (no rescan first).
    pub(crate) fn read<T>(
        &self,
        no_store: NoStore<T>,
        f: impl FnOnce(&Store) -> Result<T>,
    ) -> Result<T> {
        let store = {
            let mut h = self.handles();
            while h.writing || h.writers_waiting > 0 {
                h = self.turn.wait(h).unwrap_or_else(|e| e.into_inner());
            }
            let store = match &h.reader {
                Some(store) => Arc::clone(store),
                None => match self.workspace.reader() {
                    Ok(store) => {
                        let store = Arc::new(store);
                        h.reader = Some(Arc::clone(&store));
                        store
                    }
                    Err(e) => {
                        return match (no_store, e) {
                            (NoStore::Answer(answer), merkle_store::Error::NoStore { .. }) => {
                                Ok(answer)
                            }
                            (_, e) => Err(e.into()),
                        };
                    }
                },
            };
            h.readers += 1;
            store
        };
        let _done = ReadDone(self);
        f(&store)
    }

    /// Runs `f` once no read is in flight, while no other request of this process touches the
    /// store (it opens the store itself).
    pub(crate) fn write<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        {
            let mut h = self.handles();
            h.writers_waiting += 1;
            while h.writing || h.readers > 0 {
                h = self.turn.wait(h).unwrap_or_else(|e| e.into_inner());
            }
            h.writers_waiting -= 1;
            h.writing = true;
        }
        let _done = WriteDone(self);
        f()
    }

    /// Makes the store answer for the files as they are on disk: waits for the watcher to
    /// deliver what happened before this call, then rescans what changed, if anything did.
    pub(crate) fn fresh(&self) -> Result<()> {
        if let Some(watch) = &self.watch
            && !watch.settle()
        {
            return Ok(());
        }
        self.write(|| {
            // Taken here, alone: a request that finds nothing pending while this rescans
            // reads after it, as reads wait for a write.
            let touched = match &self.watch {
                Some(watch) => match watch.take() {
                    Some(touched) => touched,
                    None => return Ok(()),
                },
                None => None,
            };
            let scanned = self.rescan(touched.as_ref());
            if scanned.is_err()
                && let Some(watch) = &self.watch
            {
                watch.put_back();
            }
            scanned?;
            self.caches_behind.store(true, Ordering::SeqCst);
            Ok(())
        })
        .map_err(|e| e.during("rescanning the workspace"))
    }

    /// [`Access::fresh`], and the search caches in step with the tree.
    pub(crate) fn fresh_for_search(&self) -> Result<()> {
        self.fresh()?;
        if !self.caches_behind.swap(false, Ordering::SeqCst) {
            return Ok(());
        }
        let warmed = self.write(|| {
            let store = match self.workspace.existing_writer() {
                Ok(store) => store,
                Err(merkle_store::Error::NoStore { .. }) => return Ok(()),
                Err(e) => return Err(e.into()),
            };
            let facts = context::TreeFacts::listing(&store)?;
            self.synced_index(&store, &facts)?;
            context::Graph::of_tree(&store, &facts)?;
            Ok(())
        });
        if warmed.is_err() {
            self.caches_behind.store(true, Ordering::SeqCst);
        }
        warmed.map_err(|e| e.during("bringing the search index in step"))
    }

    /// The listing of `store`'s tree and its search index in step: kept from an earlier
    /// search of the same tree (listing a 15k-file tree and opening its index are most of a
    /// search's time), else made now, and kept when they are of one scan.
    pub(crate) fn searchable(&self, store: &Store) -> Result<Arc<Searchable>> {
        let root = store.root()?;
        let mut kept = self.searchable.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = kept.as_ref()
            && s.root.is_some()
            && s.root == root
        {
            return Ok(Arc::clone(s));
        }
        let facts = context::TreeFacts::listing(store)?;
        let index = self.synced_index(store, &facts)?;
        let made = Arc::new(Searchable {
            root: facts.root,
            facts,
            index,
        });
        *kept = made.root.is_some().then(|| Arc::clone(&made));
        Ok(made)
    }

    /// The search index beside `store`, in step with `facts`.
    fn synced_index(
        &self,
        store: &Store,
        facts: &context::TreeFacts,
    ) -> Result<context::TextIndex> {
        let _one = self.index.lock().unwrap_or_else(|e| e.into_inner());
        Ok(context::sync_index(store, facts, &context::index_dir(store))?.0)
    }

    /// One rescan, of `touched` alone when given; a workspace without a store is left without.
    fn rescan(&self, touched: Option<&BTreeSet<String>>) -> Result<()> {
        let opts = ScanOptions::default();
        match touched {
            None => Ok(self.workspace.scan_existing(&opts).map(drop)?),
            Some(paths) if paths.is_empty() => Ok(()),
            Some(paths) => match self.workspace.existing_writer() {
                Ok(store) => {
                    let paths: Vec<String> = paths.iter().cloned().collect();
                    store.scan_paths(&paths, &opts)?;
                    Ok(())
                }
                Err(merkle_store::Error::NoStore { .. }) => Ok(()),
                Err(e) => Err(e.into()),
            },
        }
    }
}

/// Ends a read: the last one in flight drops the shared handle.
struct ReadDone<'a>(&'a Access);

impl Drop for ReadDone<'_> {
    fn drop(&mut self) {
        let mut h = self.0.handles();
        h.readers -= 1;
        if h.readers == 0 {
            h.reader = None;
            self.0.turn.notify_all();
        }
    }
}

/// Ends a write.
struct WriteDone<'a>(&'a Access);

impl Drop for WriteDone<'_> {
    fn drop(&mut self) {
        self.0.handles().writing = false;
        self.0.turn.notify_all();
    }
}

/// The watcher, and what it has seen.
struct Watch {
    _watcher: notify::RecommendedWatcher,
    /// The server's own folder of barrier files (removed when the server stops).
    barriers: PathBuf,
    issued: AtomicU64,
    seen: Arc<(Mutex<Seen>, Condvar)>,
}

struct Seen {
    /// The highest barrier whose event has come.
    passed: u64,
    /// Whether a change waits for a rescan.
    pending: bool,
    /// The paths changed since the last rescan; `None`: anything may have (an event was lost,
    /// or named no path).
    touched: Option<BTreeSet<String>>,
}

impl Watch {
    fn start(workspace: &Workspace) -> Result<Watch> {
        let root = &workspace.root;
        // A folder of each server's own, also when a process serves more than one.
        static SERVERS: AtomicU64 = AtomicU64::new(0);
        let n = SERVERS.fetch_add(1, Ordering::Relaxed);
        let barriers = std::env::temp_dir().join(format!("merkle-mcp-{}-{n}", std::process::id()));
        // Left by a server of the same process id that was killed.
        let _ = std::fs::remove_dir_all(&barriers);
        std::fs::create_dir_all(&barriers).map_err(|e| Error::Io {
            what: format!("creating {}", barriers.display()),
            source: e,
        })?;
        let barriers = barriers.canonicalize().unwrap_or(barriers);
        let store_dir = workspace.store_dir()?;
        let store_dir = store_dir.canonicalize().unwrap_or(store_dir);
        let seen = Arc::new((
            Mutex::new(Seen {
                passed: 0,
                pending: true,
                touched: None,
            }),
            Condvar::new(),
        ));
        let events = Arc::clone(&seen);
        let (watch_root, watch_barriers) = (root.to_path_buf(), barriers.clone());
        let mut watcher = notify::RecommendedWatcher::new(
            move |event: notify::Result<notify::Event>| {
                let (lock, cond) = &*events;
                let mut seen = lock.lock().unwrap_or_else(|e| e.into_inner());
                match &event {
                    Ok(e) if e.paths.iter().any(|p| p.starts_with(&watch_barriers)) => {
                        if matches!(e.kind, EventKind::Create(_)) {
                            let n = e.paths.iter().filter_map(|p| barrier_number(p)).max();
                            seen.passed = seen.passed.max(n.unwrap_or(0));
                            cond.notify_all();
                        }
                    }
                    Ok(e) if !events::is_relevant(e, &watch_root, &store_dir) => {}
                    Ok(e) => {
                        seen.pending = true;
                        events::note_paths(&mut seen.touched, e, &watch_root);
                    }
                    Err(_) => {
                        seen.pending = true;
                        seen.touched = None;
                    }
                }
            },
            events::watcher_config(),
        )
        .map_err(|e| Error::Watcher {
            what: "starting the file watcher".to_owned(),
            source: e,
        })?;
        watcher
            .watch(root, RecursiveMode::Recursive)
            .map_err(|e| Error::Watcher {
                what: format!("watching {} for changes", root.display()),
                source: e,
            })?;
        watcher
            .watch(&barriers, RecursiveMode::NonRecursive)
            .map_err(|e| Error::Watcher {
                what: format!("watching {}", barriers.display()),
                source: e,
            })?;
        Ok(Watch {
            _watcher: watcher,
            barriers,
            issued: AtomicU64::new(0),
            seen,
        })
    }

    fn seen(&self) -> MutexGuard<'_, Seen> {
        self.seen.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until every event queued before this call has been seen; returns whether a
    /// change is pending. A barrier whose event does not come in time (or that cannot be
    /// made) counts as a lost event: everything is rescanned.
    fn settle(&self) -> bool {
        let n = self.issued.fetch_add(1, Ordering::SeqCst) + 1;
        let file = self.barriers.join(n.to_string());
        let made = std::fs::File::create(&file).is_ok();
        let (lock, cond) = &*self.seen;
        let mut seen = lock.lock().unwrap_or_else(|e| e.into_inner());
        if made {
            let waited = cond
                .wait_timeout_while(seen, BARRIER_WAIT, |s| s.passed < n)
                .unwrap_or_else(|e| e.into_inner());
            seen = waited.0;
        }
        if !made || seen.passed < n {
            seen.pending = true;
            seen.touched = None;
        }
        let pending = seen.pending;
        drop(seen);
        let _ = std::fs::remove_file(&file);
        pending
    }

    /// The paths to rescan (`Some(None)`: everything), clearing them; `None` when nothing is
    /// pending.
    fn take(&self) -> Option<Option<BTreeSet<String>>> {
        let mut seen = self.seen();
        if !seen.pending {
            return None;
        }
        seen.pending = false;
        Some(seen.touched.replace(BTreeSet::new()))
    }

    /// After a failed rescan: everything is to be rescanned again.
    fn put_back(&self) {
        let mut seen = self.seen();
        seen.pending = true;
        seen.touched = None;
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.barriers);
    }
}

/// The number a barrier file is named by.
fn barrier_number(path: &Path) -> Option<u64> {
    path.file_name()?.to_str()?.parse().ok()
}
