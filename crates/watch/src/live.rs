//! A long-running process's own file watcher over a workspace (an MCP server's), as the
//! [`Watcher`] its reads go by: it names the paths that change, and before a read answers,
//! [`Watcher::settle`] waits until it has delivered every event queued before the read
//! arrived. The wait is a barrier: a file is created in a folder of the watcher's own, watched
//! by the same watcher, and the read waits for that file's event, which one inotify queue
//! delivers after every earlier one. So a read answers for the files as they were when it
//! arrived, and costs no scan when nothing changed. It starts with a rescan pending: files may
//! have changed while nothing watched them.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use context::ops::{Settled, Watcher, Workspace};
use merkle_store::NodeId;
use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::events;
use crate::fan::Fan;
use crate::{Coverage, Error, Queue};

/// How long a read waits for its barrier's event before it rescans everything instead.
const BARRIER_WAIT: Duration = Duration::from_secs(2);

/// What a server's barrier folder in the temporary folder is named from: then its process
/// id and its number within the process.
const BARRIERS_PREFIX: &str = "merkle-watch-";
/// What a barrier folder's lock file adds to its name: the file beside the folder that its
/// server holds locked while it runs. The kernel lets go of a killed process's locks, so a
/// folder whose lock file another can lock is left over.
const LOCK: &str = ".lock";

/// The watcher, and what it has seen.
pub struct Live {
    _watcher: notify::RecommendedWatcher,
    /// The fanotify group watching what inotify could not, if any.
    _fan: Option<Fan>,
    /// The server's own folder of barrier files (removed when the server stops).
    barriers: PathBuf,
    /// Its lock file ([`LOCK`]), locked while the server runs.
    _lock: std::fs::File,
    issued: AtomicU64,
    seen: Arc<(Mutex<Seen>, Condvar)>,
    warning: Option<String>,
}

struct Seen {
    /// The highest barrier whose event has come, through inotify's queue and fanotify's.
    passed: [u64; 2],
    /// Whether a fanotify group watches part of the tree: a barrier waits for both queues.
    fan: bool,
    /// Whether a change waits for a rescan.
    pending: bool,
    /// The paths changed since the last rescan; `None`: anything may have (an event was lost,
    /// or named no path).
    touched: Option<BTreeSet<String>>,
    /// The watcher reported an error it cannot place (a folder it could not watch once the
    /// kernel's limit was reached after the start, say): it no longer sees every change, so
    /// every read checks the disk.
    blind: bool,
    /// The folders it does not watch (the kernel's limit): every read checks them by their
    /// stats.
    coverage: Coverage,
}

impl Seen {
    /// The highest barrier whose event came through every queue that watches.
    fn passed_all(&self) -> u64 {
        if self.fan {
            self.passed[0].min(self.passed[1])
        } else {
            self.passed[0]
        }
    }
}

impl Live {
    /// Starts watching `workspace` (its root, and a barrier folder of its own).
    pub fn start(workspace: &Workspace) -> Result<Live, Error> {
        let root = &workspace.root;
        // A folder of each server's own, also when a process serves more than one.
        static SERVERS: AtomicU64 = AtomicU64::new(0);
        let n = SERVERS.fetch_add(1, Ordering::Relaxed);
        let temp = std::env::temp_dir();
        sweep_barriers(&temp);
        // The time too: a process id comes back, and a folder's name never should, or a sweep
        // that found one left over could remove a new server's of the same name.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!("{BARRIERS_PREFIX}{}-{n}-{nanos:x}", std::process::id());
        let (barriers, lock) = own_barriers(&temp, &name)?;
        let barriers = barriers.canonicalize().unwrap_or(barriers);
        let store_dir = workspace.store_dir()?;
        let store_dir = store_dir.canonicalize().unwrap_or(store_dir);
        let seen = Arc::new((
            Mutex::new(Seen {
                passed: [0; 2],
                fan: false,
                pending: true,
                touched: None,
                blind: false,
                coverage: Coverage::starting(),
            }),
            Condvar::new(),
        ));
        let handler = |queue: Queue| {
            let events = Arc::clone(&seen);
            let (watch_root, watch_store, watch_barriers) =
                (root.to_path_buf(), store_dir.clone(), barriers.clone());
            move |event: notify::Result<notify::Event>| {
                let at = (&*watch_root, &*watch_store, &*watch_barriers);
                noted(&events, &event, at, queue);
            }
        };
        let mut watcher = crate::file_watcher(handler(Queue::Inotify))?;
        // The barriers first: under the kernel's limit, the tree takes what watches are left.
        watcher
            .watch(&barriers, RecursiveMode::NonRecursive)
            .map_err(|e| Error::Watcher {
                what: format!("watching {}", barriers.display()),
                source: e,
            })?;
        // What inotify cannot take, a fanotify group marks where it can, the barriers' folder
        // first (a barrier must come back through both queues).
        let start_fan = || Fan::start(&barriers, Box::new(handler(Queue::Fanotify)));
        let (fitted, fan) = crate::fit::watch_fitting(&mut watcher, root, &store_dir, start_fan)?;
        let warning = fitted.warning(root);
        {
            let mut seen = seen.0.lock().unwrap_or_else(|e| e.into_inner());
            seen.coverage.fitted(fitted);
            seen.fan = fan.is_some();
        }
        Ok(Live {
            _watcher: watcher,
            _fan: fan,
            _lock: lock,
            barriers,
            issued: AtomicU64::new(0),
            seen,
            warning,
        })
    }

    /// What to say once at the start: the kernel's limit kept it from watching the whole tree.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    fn seen(&self) -> MutexGuard<'_, Seen> {
        self.seen.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until every event queued before this call has been seen; returns whether a
    /// change is pending. A barrier whose event does not come in time (or that cannot be
    /// made) counts as a lost event: everything is rescanned.
    fn pending(&self) -> bool {
        let n = self.issued.fetch_add(1, Ordering::SeqCst) + 1;
        let file = self.barriers.join(n.to_string());
        let made = std::fs::File::create(&file).is_ok();
        let (lock, cond) = &*self.seen;
        let mut seen = lock.lock().unwrap_or_else(|e| e.into_inner());
        if made {
            let waited = cond
                .wait_timeout_while(seen, BARRIER_WAIT, |s| s.passed_all() < n)
                .unwrap_or_else(|e| e.into_inner());
            seen = waited.0;
        }
        if !made || seen.passed_all() < n {
            seen.pending = true;
            seen.touched = None;
        }
        let pending = seen.pending;
        drop(seen);
        let _ = std::fs::remove_file(&file);
        pending
    }
}

impl Watcher for Live {
    fn settle(&self, _root: NodeId) -> Settled {
        if self.seen().blind {
            return Settled::Unknown;
        }
        if self.pending() {
            Settled::Pending
        } else if self.seen().coverage.all_watched() {
            Settled::Clean
        } else {
            Settled::Partly
        }
    }

    fn take(&self) -> Option<Option<BTreeSet<String>>> {
        let mut seen = self.seen();
        if !seen.pending {
            return None;
        }
        seen.pending = false;
        let unwatched = seen.coverage.unwatched();
        let touched = seen.touched.replace(BTreeSet::new());
        Some(touched.map(|mut t| {
            t.extend(unwatched);
            t
        }))
    }

    fn unwatched(&self) -> Vec<String> {
        self.seen().coverage.unwatched()
    }

    fn put_back(&self) {
        let mut seen = self.seen();
        seen.pending = true;
        seen.touched = None;
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.barriers);
        // Its lock file goes while still held (the lock itself when the field drops).
        let _ = std::fs::remove_file(lock_of(&self.barriers));
    }
}

/// One event of the watcher, noted in `seen`: a barrier passed, paths changed, or an error,
/// after which the watcher can no longer vouch for anything.
fn noted(
    seen: &(Mutex<Seen>, Condvar),
    event: &notify::Result<notify::Event>,
    (root, store_dir, barriers): (&Path, &Path, &Path),
    queue: Queue,
) {
    let (lock, cond) = seen;
    let mut seen = lock.lock().unwrap_or_else(|e| e.into_inner());
    match event {
        Ok(e) if e.paths.iter().any(|p| p.starts_with(barriers)) => {
            if matches!(e.kind, EventKind::Create(_)) {
                let n = e.paths.iter().filter_map(|p| barrier_number(p)).max();
                let at = usize::from(queue == Queue::Fanotify);
                seen.passed[at] = seen.passed[at].max(n.unwrap_or(0));
                cond.notify_all();
            }
        }
        Ok(e) if !events::is_relevant(e, root, store_dir) => {}
        Ok(e) => {
            seen.pending = true;
            if !seen.coverage.note(event, root) {
                seen.blind = true;
            }
            events::note_paths(&mut seen.touched, e, root);
        }
        Err(_) => {
            // A folder it names is left out, and checked by every read from now on.
            seen.pending = true;
            if !seen.coverage.note(event, root) {
                seen.touched = None;
                seen.blind = true;
            }
            cond.notify_all();
        }
    }
}

/// A barrier folder `name` in `temp`, its lock file ([`LOCK`] beside it) made and locked
/// first, so that no sweep ([`sweep_barriers`]) sees the folder without a live owner. A lock
/// the file system does not take (an NFS without a lock daemon) is no reason not to watch: a
/// sweep cannot take it either, and leaves the folder alone.
fn own_barriers(temp: &Path, name: &str) -> Result<(PathBuf, std::fs::File), Error> {
    let io = |what: String| move |source| Error::Io { what, source };
    let barriers = temp.join(name);
    let lock_path = lock_of(&barriers);
    let lock = std::fs::File::create(&lock_path)
        .map_err(io(format!("creating {}", lock_path.display())))?;
    let _ = lock.lock();
    std::fs::create_dir_all(&barriers).map_err(io(format!("creating {}", barriers.display())))?;
    Ok((barriers, lock))
}

/// The lock file of the barrier folder `barriers`: beside it, named as it with [`LOCK`] added.
fn lock_of(barriers: &Path) -> PathBuf {
    let mut lock = barriers.as_os_str().to_owned();
    lock.push(LOCK);
    PathBuf::from(lock)
}

/// Removes from `temp` the barrier folders of servers that are gone without removing their own
/// (killed), with their lock files: those whose lock file no longer holds a lock. Anything else
/// (no lock file, or one that is not a plain file) is left alone.
fn sweep_barriers(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(folder) = name
            .to_str()
            .filter(|n| n.starts_with(BARRIERS_PREFIX))
            .and_then(|n| n.strip_suffix(LOCK))
        else {
            continue;
        };
        // A FIFO of that name would block the open.
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let Ok(lock) = std::fs::File::open(entry.path()) else {
            continue;
        };
        if lock.try_lock().is_ok() {
            let _ = std::fs::remove_dir_all(temp.join(folder));
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The number a barrier file is named by.
fn barrier_number(path: &Path) -> Option<u64> {
    path.file_name()?.to_str()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_servers_barrier_folder_is_swept_and_a_running_ones_kept() {
        let temp = tempfile::tempdir().expect("a temporary folder");
        let temp = temp.path();
        let made = |name: &str, lock: bool| {
            let dir = temp.join(name);
            std::fs::create_dir_all(&dir).expect("a folder");
            std::fs::write(dir.join("7"), "").expect("a barrier");
            lock.then(|| std::fs::File::create(lock_of(&dir)).expect("a lock file"))
        };
        // Killed: its lock file there, locked by no one.
        drop(made("merkle-watch-1-0-a", true));
        // Running: its server holds the lock.
        let running = made("merkle-watch-2-0-a", true).expect("a lock file");
        running.lock().expect("locked");
        // Not ours to judge: no lock file, another program's.
        made("merkle-watch-3-0-a", false);
        drop(made("other-1-0", true));
        // This server's own, made as `Live::start` makes it.
        let (own, lock) = own_barriers(temp, "merkle-watch-5-0-a").expect("its folder");
        assert_eq!(own, temp.join("merkle-watch-5-0-a"));

        sweep_barriers(temp);
        let listed = || {
            let mut left: Vec<String> = std::fs::read_dir(temp)
                .expect("listed")
                .map(|e| {
                    e.expect("an entry")
                        .file_name()
                        .into_string()
                        .expect("UTF-8")
                })
                .collect();
            left.sort();
            left
        };
        assert_eq!(
            listed(),
            [
                "merkle-watch-2-0-a",
                "merkle-watch-2-0-a.lock",
                "merkle-watch-3-0-a",
                "merkle-watch-5-0-a",
                "merkle-watch-5-0-a.lock",
                "other-1-0",
                "other-1-0.lock",
            ]
        );
        // Once their servers let go (killed), the next sweep takes them.
        drop((running, lock));
        sweep_barriers(temp);
        assert_eq!(
            listed(),
            ["merkle-watch-3-0-a", "other-1-0", "other-1-0.lock"]
        );
    }

    #[test]
    fn a_stopped_server_leaves_nothing_in_the_temporary_folder() {
        let (_dir, _root, live) = started();
        let barriers = live.barriers.clone();
        let lock = lock_of(&barriers);
        assert!(barriers.is_dir() && lock.is_file());
        drop(live);
        assert!(!barriers.exists() && !lock.exists());
    }

    /// A watcher started over a temporary folder (kept while the folder is), and its root.
    fn started() -> (tempfile::TempDir, PathBuf, Live) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = dir.path().canonicalize().expect("canonical");
        let workspace = Workspace::new(&root, merkle_store::OpenOptions::default());
        let live = Live::start(&workspace).expect("a watcher");
        (dir, root, live)
    }

    #[test]
    fn after_a_watcher_error_every_read_checks_the_disk() {
        let (_dir, root, live) = started();
        let some = NodeId::from_hex(&"ab".repeat(32)).expect("a hash");
        // It starts with a rescan pending (files may have changed while nothing watched).
        assert_eq!(live.settle(some), Settled::Pending);
        assert_eq!(live.take(), Some(None));
        assert_eq!(live.settle(some), Settled::Clean);
        // The kernel's limit of watches reached under a new folder: blind from now on.
        let limit = Err(notify::Error::new(notify::ErrorKind::MaxFilesWatch));
        let store = root.join(".merkle");
        noted(
            &live.seen,
            &limit,
            (&root, &store, &live.barriers),
            Queue::Inotify,
        );
        assert_eq!(live.settle(some), Settled::Unknown);
        let _ = live.take();
        assert_eq!(live.settle(some), Settled::Unknown);
    }
}
