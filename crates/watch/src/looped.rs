//! `merkle watch`'s loop: file events (the `notify` crate: inotify on Linux) say when to look
//! and where. After a quiet spell (the debounce) the caller rescans only the paths the events
//! named (`Store::scan_paths`), so a save costs the work of its directory, not a walk of the
//! whole tree. After an event queue overflow (notify's `Rescan` flag), a watcher error or an
//! event naming no path, after which events may have been lost, it rescans everything. No
//! event is missed for good: one that arrives during a rescan schedules the next.
//!
//! While it runs, the loop answers other processes' reads that ask whether its last rescan is
//! still the tree on disk ([`crate::vouch`]).
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use merkle_store::NodeId;
use notify::Watcher as _;

use crate::events::{is_relevant, note_paths};
use crate::fan::Fan;
use crate::vouch::{Monitor, Observer};
use crate::{Error, Queue};

/// What the watch says once the file watcher reported what it cannot place.
const BLIND: &str = "the file watcher lost track of the tree (events lost to an overflow of the \
     kernel's queue, fs.inotify.max_queued_events, or a folder it could not watch and cannot \
     name): this watch vouches for nothing from now on, and every command checks the files \
     itself; restart `merkle watch` to have it vouch again";

/// How long to wait before retrying a rescan that found the store held by another writer.
const IN_USE_RETRY: Duration = Duration::from_secs(1);

/// How the loop runs.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Rescan once no file event has come for this long (under a steady stream of events, at
    /// the latest ten times this after the first).
    pub debounce: Duration,
    /// Stop after this many rescans, the first one included.
    pub exit_after: Option<u64>,
}

/// Why a rescan did not happen.
#[derive(Debug)]
pub enum Failed {
    /// Another process holds the store for writing: retried a second later.
    InUse(String),
    /// Whoever read the loop's output has gone: the loop ends.
    Closed,
    /// Anything else: reported, and the next change tries again.
    Other(String),
}

/// What the loop tells its caller.
#[derive(Debug)]
pub enum Said {
    /// Something it works around.
    Warning(String),
    /// A rescan that failed; the next change tries again.
    Error(String),
}

/// What wakes the loop.
enum Wake {
    /// A file event that may mean the tree changed (decided once, in the watcher's callback,
    /// so that the loop and the [`Monitor`] count the same changes).
    File(notify::Result<notify::Event>),
    /// A reader found and rescanned changes below the folders it does not watch: it rescans
    /// them too, and vouches for the tree again.
    Unwatched,
    Stop,
}

/// Ends a running loop from elsewhere (a signal handler).
#[derive(Clone)]
pub struct Stopper(Sender<Wake>);

impl Stopper {
    /// The loop ends once the rescan in flight, if any, is done.
    pub fn stop(&self) {
        let _ = self.0.send(Wake::Stop);
    }
}

/// A watch started on a workspace, before its first rescan.
pub struct Looping {
    root: PathBuf,
    store_dir: PathBuf,
    monitor: Monitor,
    _watcher: notify::RecommendedWatcher,
    /// The fanotify group watching what inotify could not, if any.
    _fan: Option<Fan>,
    /// What to say at the start: the kernel's limit kept it from watching every folder.
    warning: Option<String>,
    tx: Sender<Wake>,
    rx: Receiver<Wake>,
    /// Called after each rescan that succeeded, the first one included.
    rescanned: Box<dyn Fn() + Send>,
}

impl Looping {
    /// Starts watching `root`, whose store is in `store_dir` (its own writes are not changes),
    /// before the first rescan, so that nothing changed during it goes unseen.
    pub fn start(root: &Path, store_dir: &Path) -> Result<Looping, Error> {
        let store_dir = store_dir.canonicalize().unwrap_or(store_dir.to_path_buf());
        // Counts changes from before the first scan, and once the store is there answers
        // readers that ask whether the last rescan is still the tree on disk.
        let (tx, rx) = mpsc::channel();
        let mut monitor = Monitor::new(&store_dir);
        let poke = tx.clone();
        monitor.on_unwatched_change(move || {
            let _ = poke.send(Wake::Unwatched);
        });
        let observer = monitor.observer();
        observer.fitting();
        let handler = |queue| handler(root, &store_dir, observer.clone(), tx.clone(), queue);
        let mut watcher = crate::file_watcher(handler(Queue::Inotify))?;
        // The store's folder first (its cookies answer readers): under the kernel's limit, the
        // tree takes what watches are left.
        if store_dir.starts_with(root) && store_dir.is_dir() {
            watcher
                .watch(&store_dir, notify::RecursiveMode::NonRecursive)
                .map_err(|e| crate::watch_error(root, e))?;
        }
        // What inotify cannot take, a fanotify group marks where it can, the store's folder
        // first (its cookies must come back through both queues).
        let start_fan = || {
            let handler = Box::new(handler(Queue::Fanotify));
            store_dir
                .is_dir()
                .then(|| Fan::start(&store_dir, handler))?
        };
        let (fitted, fan) = crate::fit::watch_fitting(&mut watcher, root, &store_dir, start_fan)?;
        let warning = fitted.warning(root);
        observer.fitted(fitted, fan.is_some());
        Ok(Looping {
            root: root.to_path_buf(),
            store_dir,
            monitor,
            _watcher: watcher,
            _fan: fan,
            warning,
            tx,
            rx,
            rescanned: Box::new(|| {}),
        })
    }

    /// What to say once at the start: the kernel's limit kept it from watching every folder.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// What answers the questions other processes ask of the workspace ([`crate::asked`]),
    /// from the first rescan on.
    pub fn answer_asked(
        &mut self,
        answers: impl Fn(&serde_json::Value) -> Option<serde_json::Value> + Send + Sync + 'static,
    ) {
        self.monitor.on_ask(answers);
    }

    /// What to do after each rescan that succeeded, once the watch vouches for it (the first
    /// one included), where it answers other processes: not waited for by the loop where it
    /// hands its work to a thread.
    pub fn on_rescanned(&mut self, call: impl Fn() + Send + 'static) {
        self.rescanned = Box::new(call);
    }

    /// What ends the loop from elsewhere.
    pub fn stopper(&self) -> Stopper {
        Stopper(self.tx.clone())
    }

    /// After the first rescan, which left the tree at `first`: answers readers (where the
    /// store is inside the watched tree: its cookies must come back as file events), then
    /// calls `rescan` with the paths changed (`None`: everything) until stopped. `say` hears
    /// what the loop works around, and the rescans that failed. Where it does not watch every
    /// folder, a reader that found changes below those folders (and rescanned them: the store
    /// is no longer at the root vouched for) has it rescan them too.
    pub fn run(
        mut self,
        first: NodeId,
        opts: &Options,
        say: &dyn Fn(Said),
        mut rescan: impl FnMut(Option<&[String]>) -> Result<NodeId, Failed>,
    ) {
        self.monitor.rescanned(0, first);
        // What is done after a rescan is for those who ask: nothing where none can.
        let serving = self.store_dir.starts_with(&self.root)
            && match self.monitor.serve() {
                Ok(()) => true,
                Err(e) => {
                    say(Said::Warning(format!(
                        "other commands will check the files themselves: {e}"
                    )));
                    false
                }
            };
        if serving {
            (self.rescanned)();
        }
        let mut pending = Pending {
            touched: Some(BTreeSet::new()),
            due: None,
            first_event: None,
            in_use_reported: false,
            rescans: 1,
        };
        let limited = self.monitor.limited();
        let mut said_blind = false;
        while opts.exit_after.is_none_or(|n| pending.rescans < n) {
            let wake = match pending.due {
                None => self.rx.recv().ok(),
                Some(due_at) => {
                    match self
                        .rx
                        .recv_timeout(due_at.saturating_duration_since(Instant::now()))
                    {
                        Ok(wake) => Some(wake),
                        Err(RecvTimeoutError::Disconnected) => None,
                        Err(RecvTimeoutError::Timeout) => {
                            let before = pending.rescans;
                            if pending.rescan(&mut self.monitor, say, &mut rescan) {
                                if serving && pending.rescans > before {
                                    (self.rescanned)();
                                }
                                continue;
                            }
                            break;
                        }
                    }
                }
            };
            match wake {
                None | Some(Wake::Stop) => break,
                Some(Wake::File(result)) => {
                    self.monitor.taken();
                    pending.noted(&result, &self.root, opts.debounce, say, limited);
                    if !said_blind && self.monitor.blind() {
                        said_blind = true;
                        say(Said::Warning(BLIND.to_owned()));
                    }
                }
                Some(Wake::Unwatched) => pending.unwatched(&self.monitor, opts.debounce),
            }
        }
    }
}

/// What a file watcher's events (those of `queue`) go to: they wake the loop through `tx`,
/// each change counted by `observer` first. A reader's cookie and the store's own writes never
/// wake the loop.
fn handler(
    root: &Path,
    store_dir: &Path,
    observer: Observer,
    tx: Sender<Wake>,
    queue: Queue,
) -> impl Fn(notify::Result<notify::Event>) + Send + 'static {
    let watched = (root.to_path_buf(), store_dir.to_path_buf());
    move |event: notify::Result<notify::Event>| {
        let change = match &event {
            // A reader's cookie: every event before it in this queue has been counted.
            Ok(e) if e.paths.iter().any(|p| observer.cookie(p, queue)) => return,
            Ok(e) => is_relevant(e, &watched.0, &watched.1),
            // A folder it could not watch (the kernel's limit): it is left out, or where
            // the watcher cannot say which, nothing is vouched for.
            Err(_) => true,
        };
        if !change {
            return;
        }
        observer.note(&event, &watched.0);
        observer.changed();
        // The loop only stops listening when watch ends.
        let _ = tx.send(Wake::File(event));
    }
}

/// The loop's state between wakes.
struct Pending {
    /// The paths the events since the last rescan named; `None`: look at everything (an event
    /// named none, or events may have been lost).
    touched: Option<BTreeSet<String>>,
    /// When the next rescan is due, and the first event it answers (a steady stream of events
    /// must not put it off forever).
    due: Option<Instant>,
    first_event: Option<Instant>,
    in_use_reported: bool,
    /// Rescans so far, the first one included.
    rescans: u64,
}

impl Pending {
    /// The rescan that is due; `false` when the loop must end (its output was closed). A store
    /// held by another writer is retried after [`IN_USE_RETRY`]; other failures are reported
    /// and the next change tries again.
    fn rescan(
        &mut self,
        monitor: &mut Monitor,
        say: &dyn Fn(Said),
        rescan: &mut impl FnMut(Option<&[String]>) -> Result<NodeId, Failed>,
    ) -> bool {
        (self.due, self.first_event) = (None, None);
        let paths: Option<Vec<String>> = self.touched.as_ref().map(|t| t.iter().cloned().collect());
        let taken = monitor.changes_taken();
        match rescan(paths.as_deref()) {
            Ok(scanned) => {
                monitor.rescanned(taken, scanned);
                self.rescans += 1;
                self.in_use_reported = false;
                self.touched = Some(BTreeSet::new());
            }
            Err(Failed::InUse(why)) => {
                if !self.in_use_reported {
                    say(Said::Warning(format!("{why}; rescanning once it is free")));
                }
                self.in_use_reported = true;
                self.due = Some(Instant::now() + IN_USE_RETRY);
            }
            Err(Failed::Closed) => return false,
            Err(Failed::Other(why)) => say(Said::Error(why)),
        }
        true
    }

    /// The rescan put off by `debounce`, at most ten times that after the first change.
    fn put_off(&mut self, debounce: Duration) {
        let now = Instant::now();
        let first = *self.first_event.get_or_insert(now);
        self.due = Some((now + debounce).min(first + debounce * 10));
    }

    /// A reader rescanned changes below the folders it does not watch: those folders are
    /// rescanned after `debounce`, so that it vouches for the store's tree again.
    fn unwatched(&mut self, monitor: &Monitor, debounce: Duration) {
        if let Some(touched) = &mut self.touched {
            touched.extend(monitor.unwatched());
        }
        self.put_off(debounce);
    }

    /// A file event: its paths noted (all of them on a watcher's error, but for a folder it
    /// could not watch once `limited`: that folder), and the rescan put off by `debounce`, at
    /// most ten times that after the first event.
    fn noted(
        &mut self,
        result: &notify::Result<notify::Event>,
        root: &Path,
        debounce: Duration,
        say: &dyn Fn(Said),
        limited: bool,
    ) {
        match result {
            Err(e)
                if limited
                    && !e.paths.is_empty()
                    && e.paths.iter().all(|p| p.starts_with(root)) =>
            {
                let event = notify::Event::new(notify::EventKind::Any);
                note_paths(
                    &mut self.touched,
                    &e.paths.iter().fold(event, |ev, p| ev.add_path(p.clone())),
                    root,
                );
            }
            Err(e) => {
                say(Said::Warning(format!(
                    "file watcher: {e}; rescanning everything"
                )));
                self.touched = None;
            }
            Ok(event) => note_paths(&mut self.touched, event, root),
        }
        self.put_off(debounce);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_that_lost_track_of_the_tree_says_so_once() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = dir.path().canonicalize().expect("canonical");
        let store_dir = root.join(".merkle");
        std::fs::create_dir_all(&store_dir).expect("the store folder");
        let looping = Looping::start(&root, &store_dir).expect("a watch");
        // What the callback does with an error it cannot place, twice.
        looping.monitor.observer().blind();
        for _ in 0..2 {
            let lost = Wake::File(Err(notify::Error::generic("events lost")));
            looping.tx.send(lost).expect("the loop listens");
        }
        let said = std::cell::RefCell::new(Vec::new());
        let some = NodeId::from_hex(&"ab".repeat(32)).expect("a hash");
        let opts = Options {
            debounce: Duration::from_millis(10),
            exit_after: Some(2),
        };
        looping.run(
            some,
            &opts,
            &|s| said.borrow_mut().push(format!("{s:?}")),
            |_| Ok(some),
        );
        let said = said.into_inner();
        let blind = said
            .iter()
            .filter(|s| s.contains("vouches for nothing"))
            .count();
        assert_eq!(blind, 1, "{said:?}");
        assert!(said.iter().any(|s| s.contains("restart `merkle watch`")));
    }
}
