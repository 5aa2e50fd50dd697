//! The freshness rule: every read of every front end answers for the files as they are on
//! disk, through one entry ([`Workspace::read`] for nodes and frames, [`Workspace::read_facts`]
//! for what reads the tree's facts, [`Workspace::read_facts_as`] for what reads its search
//! index too, [`Workspace::write`] before a write).
//!
//! 1. **What changed.** A [`Watcher`], where one runs, says whether anything changed since the
//!    last scan ([`Settled`]): an MCP server's own file watcher knows which paths, a running
//!    `merkle watch` vouches that nothing did. Where none knows, the last scan's recorded stats
//!    are checked ([`Store::unchanged_on_disk`]), and where they differ the rescan is planned
//!    on a read-only handle (with redb a writable open is a durable commit of its own: a read
//!    that finds nothing changed, the usual case, costs what `merkle status` costs and writes
//!    nothing). A read of one node that reaches no further ([`Workspace::read_at`]) checks
//!    only the node's entries and the folders on the way to it.
//! 2. **The rescan.** What changed is scanned in through a writer opened once and not waited
//!    for: where another process holds the store for writing, the read answers for the last
//!    scan's tree and says it is stale, rather than wait. A store never scanned is left so by
//!    a read of nodes (which then says how to start), and scanned by a read of facts or a write.
//! 3. **The caches.** A read of facts brings the import graph in step through such a writer
//!    when it is behind, and reads the tree's listing and search
//!    index from a [`Snapshot`] kept per root (listing a 15k-file tree and opening its index
//!    are most of a search's time; a read of the index opens it beside the listing). Where
//!    the caches are in step, the check of step 1 runs beside the read itself, whose answer
//!    stands when nothing changed.
//!
//! A process that holds the store open for writing (an agent's run, [`Workspace::holding`])
//! rescans through it instead, beside the read.
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use merkle_store::{NodeId, ScanOptions, Store};

use super::Workspace;
use crate::error::{Error, Result};
use crate::facts::TreeFacts;
use crate::graph::Graph;
use crate::search::{index_dir, sync_index, sync_opened};
use retrieve::TextIndex;

/// What a file watcher knows of the disk: a server's own, or a running `merkle watch`.
pub trait Watcher: Send + Sync {
    /// Waits until every change made on disk before this call has been seen, and says what it
    /// knows of the disk against `root`, the store's tree as its last scan left it.
    fn settle(&self, root: NodeId) -> Settled;
    /// The changes to rescan, cleared: `None` when nothing is pending, `Some(None)` when
    /// anything may have changed, else the workspace paths that did. Called while no other
    /// read or write of this process runs.
    fn take(&self) -> Option<Option<BTreeSet<String>>>;
    /// A rescan of what [`Watcher::take`] gave failed or could not run: everything is to be
    /// looked at again.
    fn put_back(&self);
    /// The folders it does not watch (the kernel's limit of watches reached), where it settles
    /// [`Settled::Partly`]: workspace-relative, `/`-separated, none below another.
    fn unwatched(&self) -> Vec<String> {
        Vec::new()
    }
    /// A read found changes below the folders it does not watch and rescanned them (the store
    /// is no longer at the root it vouched for).
    fn unwatched_rescanned(&self) {}
}

/// What a [`Watcher`] knows after settling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settled {
    /// The files on disk are the tree at the root asked about.
    Clean,
    /// Changes wait to be taken ([`Watcher::take`]) and rescanned.
    Pending,
    /// The watcher cannot say: the disk is checked.
    Unknown,
    /// Nothing changed that it watches, but it does not watch every folder
    /// ([`Watcher::unwatched`]): those are checked by their stats
    /// ([`Store::unchanged_below`]), and rescanned where they differ.
    Partly,
}

/// The tree of one scan as the reads of facts share it: its listing, and its search index once
/// asked for.
pub struct Snapshot {
    /// The tree's files, their facts read by need ([`TreeFacts::listing`]).
    pub facts: TreeFacts,
    index: Mutex<Option<Arc<TextIndex>>>,
    /// The index as opened beside the listing, not yet found in step.
    opened: Mutex<Option<TextIndex>>,
    indexing: Arc<Mutex<()>>,
}

impl Snapshot {
    /// The root of the tree listed (`None`: a scan landed while it was listed; such a snapshot
    /// serves one read and is not kept).
    pub fn root(&self) -> Option<NodeId> {
        self.facts.root
    }

    /// The search index in step with this tree, brought in step on first use.
    pub fn index(&self, store: &Store) -> Result<Arc<TextIndex>> {
        let mut index = self.index.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(index) = index.as_ref() {
            return Ok(Arc::clone(index));
        }
        let _one = self.indexing.lock().unwrap_or_else(|e| e.into_inner());
        let opened = self.opened.lock().unwrap_or_else(|e| e.into_inner()).take();
        // One opened before a commit (of a read of this process, or of another process) is
        // behind it: opened again.
        let synced = match opened {
            Some(opened) if opened.is_current() => sync_opened(store, &self.facts, opened)?.0,
            _ => sync_index(store, &self.facts, &index_dir(store))?.0,
        };
        let synced = Arc::new(synced);
        *index = Some(Arc::clone(&synced));
        Ok(synced)
    }
}

/// The files from which a snapshot's listing is freed on the pool ([`Snapshot`]'s drop).
const FREED_APART: usize = 65_536;

impl Drop for Snapshot {
    /// A large tree's listing, and its index where no one else holds it, are freed off the
    /// caller's path, on the pool: at a million files, freeing them was a tenth of a search.
    fn drop(&mut self) {
        if self.facts.files.len() >= FREED_APART {
            let facts = std::mem::take(&mut self.facts);
            let index = self
                .index
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            let opened = self
                .opened
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            rayon::spawn(move || drop((facts, index, opened)));
        }
    }
}

/// What a read of facts reads of the tree's [`Snapshot`] ([`Workspace::read_facts_as`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// The listing alone (`related`).
    Listing,
    /// The search index too (a search, a bundle, refs): a snapshot listed for the read opens
    /// the index beside the listing, as both read every path (at 100k files, a search beside
    /// a watch 106 -> 95 ms).
    Index,
}

/// Where a read of facts stands before it rescans ([`Workspace::read_facts`]).
enum First<T> {
    /// The answer, for the files as they are.
    Answer(T),
    /// The answer, for the files as they are; the plan only keeps new stats.
    Settle(T, Box<merkle_store::ScanPlan>),
    /// No answer yet; the rescan's plan where the try made one (the files differ from the
    /// last scan's tree), which the rescan applies rather than walking the tree again.
    Rescan(Option<(Box<merkle_store::ScanPlan>, NodeId)>),
}

impl Workspace {
    /// `work` on the store as the files are on disk now, with whether it is stale (another
    /// process held the store for writing while files had changed). Where there is no store,
    /// the store's `NoStore` error.
    pub fn read<T, E: From<Error>>(
        &self,
        work: impl FnOnce(&Store, bool) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        self.read_at(None, work)
    }

    /// [`Workspace::read`] for `work` that reads no further than the node at workspace path
    /// `scope` and below it (`None`, or `""`: the whole tree; see
    /// [`crate::view::ContextView::reach`]): where no watcher
    /// vouches for them, what it answers from alone is checked on disk
    /// ([`Store::unchanged_along`]: `scope`'s entries and the folders on the way to it), so a
    /// read of one file of a large tree pays a few stats rather than a check of every file.
    /// The root it reads from is the last scan's, which holds `scope` as the disk does.
    pub fn read_at<T, E: From<Error>>(
        &self,
        scope: Option<&str>,
        work: impl FnOnce(&Store, bool) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        if let Some(held) = &self.shared.held {
            held.scan(&ScanOptions::default()).map_err(Error::from)?;
            return work(held, false);
        }
        // The usual case on one handle: the watcher or the last scan's stats vouch for the
        // store's root (or it was never scanned, and is left so: the read says how to start);
        // else `work` comes back, to run after the rescan.
        let first = self.read_stored(move |store| {
            let Some(root) = store.root().map_err(Error::from)? else {
                return Ok(Ok(work(store, false)?));
            };
            let settled = self.settle(Some(root));
            // Asked only where the disk is checked: a path the tree does not hold (a NodeID
            // given) reads what the whole tree says.
            let held =
                || scope.filter(|s| !s.is_empty() && matches!(store.node_at(s), Ok(Some(_))));
            let vouched = match settled {
                Settled::Clean => true,
                Settled::Pending => false,
                Settled::Unknown => match held() {
                    None => self.stats_vouch_for(store, root),
                    Some(path) => unchanged_along(store, root, path),
                },
                Settled::Partly => match held() {
                    None => self.unwatched_vouch_for(store, root),
                    Some(path) => self.unwatched_vouch_along(store, root, path),
                },
            };
            if vouched {
                Ok(Ok(work(store, false)?))
            } else {
                Ok::<_, E>(Err((settled, work)))
            }
        })?;
        match first {
            Ok(answer) => Ok(answer),
            Err((settled, work)) => {
                // Where the watcher could not say, the stats were just checked.
                let stale = self.refresh_settled(settled, true)?;
                self.read_stored(|store| work(store, stale))
            }
        }
    }

    /// `work` on the store as it is, with no rescan first (for what compares the store with
    /// the disk itself, as `status` does).
    pub fn read_stored<T, E: From<Error>>(
        &self,
        work: impl FnOnce(&Store) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        match &self.shared.held {
            Some(held) => work(held),
            None => self
                .shared
                .handles
                .read(|| self.reader().map_err(|e| E::from(e.into())), work),
        }
    }

    /// `work` on the store opened for writing, alone in this process, after a rescan of what
    /// changed (a frame attaches to the file as it is now).
    pub fn write<T, E: From<Error>>(
        &self,
        work: impl FnOnce(&Store) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        if let Some(held) = &self.shared.held {
            held.scan(&ScanOptions::default()).map_err(Error::from)?;
            return work(held);
        }
        self.refresh_for_write()?;
        self.shared.handles.alone(|| {
            let store = self.writer().map_err(Error::from)?;
            work(&store)
        })
    }

    /// `work` on the tree as the files are on disk now: the store, the tree's [`Snapshot`], and
    /// whether the answer is stale (as for [`Workspace::read`]). `work` may run twice: once
    /// beside the check that nothing changed, and again when something did.
    pub fn read_facts<T: Send, E: From<Error>>(
        &self,
        work: impl Fn(&Store, &Snapshot, bool) -> std::result::Result<T, E> + Sync,
    ) -> std::result::Result<T, E> {
        self.read_facts_as(Reads::Listing, work)
    }

    /// [`Workspace::read_facts`] for `work` that `reads` the search index too, or not.
    pub fn read_facts_as<T: Send, E: From<Error>>(
        &self,
        reads: Reads,
        work: impl Fn(&Store, &Snapshot, bool) -> std::result::Result<T, E> + Sync,
    ) -> std::result::Result<T, E> {
        if let Some(held) = &self.shared.held {
            return self.held_facts(held, reads, &work);
        }
        // One handle for the first try: the store's root, whether the caches are kept for it,
        // what the watcher knows of it, and the try.
        let (settled, first) = self.read_stored(|reader| {
            let root = reader.root()?;
            let settled = self.settle(root);
            let kept = root.is_some() && Graph::kept_for(reader) == root;
            let first = match root {
                Some(root) if kept => self.first_try(reader, root, settled, reads, &work)?,
                _ => First::Rescan(None),
            };
            Ok::<_, Error>((settled, first))
        })?;
        let plan = match first {
            First::Answer(answer) => return Ok(answer),
            First::Settle(answer, plan) => {
                // The files are the last scan's; a file written in that scan's clock tick,
                // found the same, is settled for the next read where no writer is held.
                self.shared.handles.alone(|| {
                    if let Ok(writer) = self.writer_if_free() {
                        let _ = writer.apply_scan(*plan, &ScanOptions::default());
                    }
                });
                return Ok(answer);
            }
            First::Rescan(plan) => plan,
        };
        let stale = match plan {
            Some((plan, from)) => {
                // The tree listed for the first try is not the one read after the rescan:
                // freed before it rather than held through it.
                self.forget_snapshot();
                self.shared
                    .handles
                    .alone(|| self.rescan_planned(*plan, from))?
            }
            None => self.refresh_settled(settled, false)?,
        };
        self.caches_in_step()?;
        self.read_stored(|store| work(store, &*self.snapshot(store, reads)?, stale))
    }

    /// The first try of [`Workspace::read_facts`] where the caches are kept for `root`: on the
    /// shared read-only handle, when the watcher vouches for `root`, or beside the check of the
    /// disk when it cannot say. An error of the try is not returned: it may be the tree
    /// changing under it, and the read after the rescan says.
    fn first_try<T: Send, E: From<Error>>(
        &self,
        reader: &Store,
        root: NodeId,
        settled: Settled,
        reads: Reads,
        work: &(impl Fn(&Store, &Snapshot, bool) -> std::result::Result<T, E> + Sync),
    ) -> Result<First<T>> {
        if settled == Settled::Pending {
            return Ok(First::Rescan(None));
        }
        // The listing is made in the try, beside the check of the disk: it is most of a read's
        // time.
        let attempt = || {
            let snapshot = self.snapshot(reader, reads).ok()?;
            (snapshot.root() == Some(root))
                .then(|| work(reader, &snapshot, false).ok())
                .flatten()
        };
        if settled == Settled::Clean {
            return Ok(attempt().map_or(First::Rescan(None), First::Answer));
        }
        // The stats of the last scan's tree (of the folders not watched, where a watcher
        // watches the rest) checked beside the answer, then, when they differ (an edit, or a
        // file only touched), the rescan's plan.
        let check = || match settled {
            Settled::Partly => self.unwatched_vouch_for(reader, root),
            _ => self.stats_vouch_for(reader, root),
        };
        let (vouched, answer) = crate::beside(check, attempt);
        let Some(answer) = answer else {
            return Ok(First::Rescan(None));
        };
        if vouched {
            return Ok(First::Answer(answer));
        }
        if settled == Settled::Partly {
            return Ok(First::Rescan(None));
        }
        // The answer stands only where the plan finds the same tree (a file touched, not
        // changed): its listing is not held through the walk, which needs as much again.
        self.forget_snapshot();
        let plan = reader.plan_scan(&ScanOptions::default())?;
        Ok(match (plan.same_tree(), plan.unchanged().is_some()) {
            (false, _) => First::Rescan(Some((Box::new(plan), root))),
            (true, true) => First::Answer(answer),
            (true, false) => First::Settle(answer, Box::new(plan)),
        })
    }

    /// [`Workspace::read_facts`] through the store this process holds: the rescan runs beside a
    /// first try on the last scan's tree, whose answer stands when the rescan found nothing
    /// changed (the usual case, so a read costs about what the rescan costs).
    fn held_facts<T: Send, E: From<Error>>(
        &self,
        held: &Store,
        reads: Reads,
        work: &(impl Fn(&Store, &Snapshot, bool) -> std::result::Result<T, E> + Sync),
    ) -> std::result::Result<T, E> {
        let (scanned, first) = crate::beside(
            || held.scan(&ScanOptions::default()),
            || {
                let snapshot = self.snapshot(held, reads).ok()?;
                let answer = work(held, &snapshot, false).ok()?;
                Some((snapshot.root(), answer))
            },
        );
        scanned.map_err(Error::from)?;
        let root = held.root().map_err(Error::from)?;
        if let Some((Some(listed), answer)) = first
            && Some(listed) == root
        {
            return Ok(answer);
        }
        work(held, &*self.snapshot(held, reads)?, false)
    }

    /// The tree's [`Snapshot`] for `store`: the one kept for its root, else listed now (and
    /// kept when it is of one scan), with the index opened beside the listing where the read
    /// `reads` it.
    fn snapshot(&self, store: &Store, reads: Reads) -> Result<Arc<Snapshot>> {
        let root = store.root()?;
        let mut kept = self
            .shared
            .snapshot
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(s) = kept.as_ref()
            && s.root().is_some()
            && s.root() == root
        {
            return Ok(Arc::clone(s));
        }
        // The index opened beside the listing (its manifest names every file too): a
        // search's next step. One that does not open is opened again, and says why, when
        // asked for.
        let (opened, facts) = match reads {
            Reads::Index => crate::beside(|| self.open_index(store), || TreeFacts::listing(store)),
            Reads::Listing => (None, TreeFacts::listing(store)),
        };
        let made = Arc::new(Snapshot {
            facts: facts?,
            index: Mutex::new(None),
            opened: Mutex::new(opened),
            indexing: Arc::clone(&self.shared.indexing),
        });
        *kept = made.root().is_some().then(|| Arc::clone(&made));
        Ok(made)
    }

    /// Drops the [`Snapshot`] kept for the next read (its tree about to be replaced), its
    /// listing freed here and now where no one else holds it, not on the pool: the pool is
    /// about to rescan, and the listing would be held through it.
    pub(crate) fn forget_snapshot(&self) {
        self.forget_snapshot_unless(None);
    }

    /// [`Workspace::forget_snapshot`] unless it is the tree at `root`.
    pub(crate) fn forget_snapshot_unless(&self, root: Option<NodeId>) {
        let kept = {
            let mut kept = self
                .shared
                .snapshot
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            match kept.as_ref() {
                Some(s) if root.is_some() && s.root() == root => None,
                _ => kept.take(),
            }
        };
        if let Some(mut alone) = kept.and_then(|s| Arc::try_unwrap(s).ok()) {
            drop(std::mem::take(&mut alone.facts));
        }
    }

    /// The search index opened ahead of a read; `None` while a read of this process brings it
    /// in step (opening it then could find a manifest that read's commit removes, and clear
    /// the folder), or where it does not open.
    fn open_index(&self, store: &Store) -> Option<TextIndex> {
        let _one = self.shared.indexing.try_lock().ok()?;
        TextIndex::open(&index_dir(store)).ok()
    }

    /// What the watcher knows of the disk against `root` (nothing where none runs, or the
    /// store was never scanned).
    fn settle(&self, root: Option<NodeId>) -> Settled {
        match (&self.shared.watcher, root) {
            (Some(watcher), Some(root)) => watcher.settle(root),
            _ => Settled::Unknown,
        }
    }

    /// Steps 1 and 2 before a write (a store never scanned is scanned).
    fn refresh_for_write(&self) -> Result<bool> {
        match self.read_stored(|store| Ok::<_, Error>(store.root()?)) {
            Ok(root @ Some(_)) => self.refresh_settled(self.settle(root), false),
            Ok(None) => self.refresh_settled(Settled::Unknown, false),
            // No store: the write makes one.
            Err(Error::Store(merkle_store::Error::NoStore { .. })) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Steps 1 and 2 after settling (`stats_checked`: the last scan's stats were found not to
    /// vouch for the tree just now, so the rescan's plan comes next).
    fn refresh_settled(&self, settled: Settled, stats_checked: bool) -> Result<bool> {
        match (settled, &self.shared.watcher) {
            (Settled::Clean, _) => Ok(false),
            // What changed is below the folders it does not watch: those alone are rescanned.
            (Settled::Partly, Some(watcher)) => self.shared.handles.alone(|| {
                // Unless just checked (a read), their stats first: a write, or a read of
                // facts whose caches were behind, finds them unchanged as a rule.
                if !stats_checked
                    && let Ok(reader) = self.reader()
                    && let Ok(Some(root)) = reader.root()
                    && self.unwatched_vouch_for(&reader, root)
                {
                    return Ok(false);
                }
                let folders: BTreeSet<String> = watcher.unwatched().into_iter().collect();
                let rescanned = self.rescan(Some(&folders), false);
                watcher.unwatched_rescanned();
                rescanned
            }),
            (Settled::Pending, Some(watcher)) => self.shared.handles.alone(|| {
                // Taken here, alone: a read that finds nothing pending while this rescans
                // reads after it, as reads wait for a write.
                let Some(touched) = watcher.take() else {
                    return Ok(false);
                };
                let rescanned = self.rescan(touched.as_ref(), false);
                if !matches!(rescanned, Ok(false)) {
                    watcher.put_back();
                }
                rescanned
            }),
            _ => self
                .shared
                .handles
                .alone(|| self.rescan(None, stats_checked)),
        }
    }

    /// Scans in `touched` (`None`: whatever changed, found by the stats, then the plan),
    /// through a writer opened once; true where another process's writer kept it out while
    /// the files differ from the store's tree.
    fn rescan(&self, touched: Option<&BTreeSet<String>>, stats_checked: bool) -> Result<bool> {
        let opts = ScanOptions::default();
        let plan = match touched {
            Some(paths) if paths.is_empty() => return Ok(false),
            Some(_) => None,
            None => {
                let reader = match self.reader() {
                    Ok(reader) => reader,
                    Err(merkle_store::Error::NoStore { .. }) => return Ok(false),
                    Err(e) => return Err(e.into()),
                };
                if !stats_checked
                    && let Some(root) = reader.root()?
                    && self.stats_vouch_for(&reader, root)
                {
                    return Ok(false);
                }
                let plan = reader.plan_scan(&opts)?;
                if plan.unchanged().is_some() {
                    return Ok(false);
                }
                Some(plan)
            }
        };
        self.apply(plan, touched)
    }

    /// A rescan whose plan a read made already against the tree at `from` (the files differ
    /// from it), applied through a writer opened once; true where another process's writer
    /// kept it out. Where the tree moved meanwhile (another read rescanned), the plan is
    /// dropped and the rescan made as any other, from the stats.
    fn rescan_planned(&self, plan: merkle_store::ScanPlan, from: NodeId) -> Result<bool> {
        let now = self.reader().ok().and_then(|r| r.root().ok().flatten());
        if now != Some(from) {
            drop(plan);
            return self.rescan(None, false);
        }
        self.apply(Some(plan), None)
    }

    /// [`Workspace::rescan`]'s second half: `plan` applied, else `touched` scanned in (else a
    /// whole scan), through a writer opened once.
    fn apply(
        &self,
        plan: Option<merkle_store::ScanPlan>,
        touched: Option<&BTreeSet<String>>,
    ) -> Result<bool> {
        let opts = ScanOptions::default();
        match (self.writer_if_free(), plan, touched) {
            (Ok(writer), Some(plan), _) => writer.apply_scan(plan, &opts).map(drop)?,
            (Ok(writer), None, Some(paths)) => {
                let paths: Vec<String> = paths.iter().cloned().collect();
                writer.scan_paths(&paths, &opts).map(drop)?;
            }
            (Ok(writer), None, None) => writer.scan(&opts).map(drop)?,
            // Not stale where the files are the last scan's, only its bookkeeping to be written.
            (Err(merkle_store::Error::StoreInUse { .. }), plan, _) => {
                return Ok(plan.is_none_or(|p| !p.same_tree()));
            }
            (Err(merkle_store::Error::NoStore { .. }), _, _) => {}
            (Err(e), _, _) => return Err(e.into()),
        }
        Ok(false)
    }

    /// Step 3: the import graph for the tree the store holds, made through a writer opened
    /// once where it is not (where another process's writer keeps this out, reads derive what
    /// they need and keep nothing).
    fn caches_in_step(&self) -> Result<()> {
        let behind = self.read_stored(|store| {
            let root = store.root()?;
            Ok::<_, Error>(root.is_some() && Graph::kept_for(store) != root)
        });
        let graph = match behind {
            Ok(behind) => behind,
            Err(Error::Store(merkle_store::Error::NoStore { .. })) => return Ok(()),
            Err(e) => return Err(e),
        };
        if !graph {
            return Ok(());
        }
        self.shared.handles.alone(|| match self.writer_if_free() {
            Ok(writer) => {
                let facts = TreeFacts::listing(&writer)?;
                Graph::keep_for_tree(&writer, &facts).map(|_| ())
            }
            Err(merkle_store::Error::StoreInUse { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        })
    }

    /// Whether the last scan's recorded stats still hold below the folders the watcher does
    /// not watch, and vouch for the tree at `root` with what it watches; one check shared by
    /// the reads that wait for it (`ops/flight.rs`).
    fn unwatched_vouch_for(&self, store: &Store, root: NodeId) -> bool {
        let Some(watcher) = &self.shared.watcher else {
            return self.stats_vouch_for(store, root);
        };
        self.shared.unwatched_checks.vouch(root, || {
            matches!(store.unchanged_below(&watcher.unwatched()), Ok(Some(same)) if same == root)
        })
    }

    /// [`Workspace::unwatched_vouch_for`] for a read of `path` and below it alone: the folders
    /// the watcher does not watch below `path`, or `path`'s own way where it lies in one.
    fn unwatched_vouch_along(&self, store: &Store, root: NodeId, path: &str) -> bool {
        let Some(watcher) = &self.shared.watcher else {
            return unchanged_along(store, root, path);
        };
        let unwatched = watcher.unwatched();
        if unwatched.iter().any(|folder| at_or_below(path, folder)) {
            return unchanged_along(store, root, path);
        }
        let below: Vec<String> = unwatched
            .into_iter()
            .filter(|folder| at_or_below(folder, path))
            .collect();
        // With none below, the ignore rules from outside the tree are still checked.
        matches!(store.unchanged_below(&below), Ok(Some(same)) if same == root)
    }

    /// Whether the last scan's recorded stats still hold for the disk and vouch for the tree
    /// at `root` ([`Store::unchanged_on_disk`]): the walk a read would otherwise plan is
    /// spared. One check shared by the reads that wait for it.
    fn stats_vouch_for(&self, store: &Store, root: NodeId) -> bool {
        self.shared.stats_checks.vouch(
            root,
            || matches!(store.unchanged_on_disk(), Ok(Some(same)) if same == root),
        )
    }
}

/// Whether the last scan's stats still hold for what a read of `path` answers from, and vouch
/// for the tree at `root` ([`Store::unchanged_along`]).
fn unchanged_along(store: &Store, root: NodeId, path: &str) -> bool {
    matches!(store.unchanged_along(path), Ok(Some(same)) if same == root)
}

/// Whether workspace path `path` is `folder` or below it (everything is below the root, `""`).
fn at_or_below(path: &str, folder: &str) -> bool {
    folder.is_empty()
        || path
            .strip_prefix(folder)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}
