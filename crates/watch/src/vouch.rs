//! What a running `merkle watch` vouches for, so that a read need not walk the tree to know it
//! is fresh (as git's fsmonitor spares `git status` its walk).
//!
//! The watch serves a Unix socket in the store folder ([`SOCKET`]). A reader connects and
//! sends `sync`; the watch creates a cookie file in the store folder and waits until its own
//! file watcher reports that file. A file watcher reports events in order, so by then every
//! change made before the reader asked has been seen. The watch answers `clean ROOT` when it
//! has rescanned every change it has seen and that rescan left the tree at ROOT, else `dirty`.
//! A reader skips its walk only when the store's root is ROOT ([`vouched_root`]): any failure
//! (no watch, a socket left by one that was killed, a slow or odd answer) means the walk, as
//! without a watch.
//!
//! The watch counts the changes its file watcher reports ([`Observer::changed`], called in the
//! watcher's callback, in event order) and, separately, the changes its loop has taken in
//! ([`Monitor::taken`]): the same events, counted in the same order on the other side of a
//! channel. A rescan made with `taken` changes in hand is clean once it is done
//! ([`Monitor::rescanned`]) as long as no further change has been reported meanwhile.
//!
//! Only on Unix: elsewhere no watch answers, and every read walks.
//!
//! A reader asks through [`Vouching`], the [`Watcher`] the CLI gives its workspace.

use std::collections::{BTreeSet, HashMap};
#[cfg(unix)]
use std::io::{BufRead, BufReader, Write};
#[cfg(unix)]
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use context::ops::{Settled, Watcher};
use merkle_store::NodeId;

use crate::{Coverage, Queue};

pub use crate::{ASK_TIMEOUT, SOCKET};
/// The start of a cookie's file name in the store folder.
const COOKIE: &str = "watch-cookie-";
/// How long the watch waits for its cookie to come back through its file watcher before it
/// answers `dirty`.
const COOKIE_WAIT: Duration = Duration::from_millis(400);

/// The root a running watch vouches for: every file as it is on disk now is in that tree.
/// `None` when no watch answers for this store folder, it has changes not yet rescanned, or it
/// does not watch every folder ([`vouched`]).
pub fn vouched_root(store_dir: &Path) -> Option<NodeId> {
    vouched(store_dir).and_then(|(root, unwatched)| unwatched.is_empty().then_some(root))
}

/// The root a running watch vouches for, with the folders it does not watch (the kernel's
/// limit of watches reached: `partly ROOT N`, then N lines each a folder as a JSON string):
/// every file as it is on disk now is in that tree, but for what may have changed below those
/// folders. `None` when no watch answers for this store folder, or it has changes not yet
/// rescanned.
#[cfg(unix)]
pub fn vouched(store_dir: &Path) -> Option<(NodeId, Vec<String>)> {
    let mut stream = UnixStream::connect(store_dir.join(SOCKET)).ok()?;
    stream.set_read_timeout(Some(ASK_TIMEOUT)).ok()?;
    stream.set_write_timeout(Some(ASK_TIMEOUT)).ok()?;
    stream.write_all(b"sync\n").ok()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    if let Some(root) = line.trim_end().strip_prefix("clean ") {
        return Some((NodeId::from_hex(root)?, Vec::new()));
    }
    let (root, n) = line.trim_end().strip_prefix("partly ")?.split_once(' ')?;
    let root = NodeId::from_hex(root)?;
    let n: usize = n.parse().ok()?;
    let mut unwatched = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        line.clear();
        reader.read_line(&mut line).ok()?;
        unwatched.push(serde_json::from_str::<String>(line.trim_end()).ok()?);
    }
    Some((root, unwatched))
}

/// Tells the watch that answers for the store in `store_dir`, if one does, that this reader
/// found changes below the folders it does not watch and rescanned them: it rescans them too,
/// and vouches for the store's tree again. Nothing is waited for.
#[cfg(unix)]
pub fn unwatched_changed(store_dir: &Path) {
    if let Ok(mut stream) = UnixStream::connect(store_dir.join(SOCKET)) {
        let _ = stream.set_write_timeout(Some(ASK_TIMEOUT));
        let _ = stream.write_all(b"unwatched-changed\n");
    }
}

/// No watch answers off Unix.
#[cfg(not(unix))]
pub fn unwatched_changed(_store_dir: &Path) {}

/// No watch answers off Unix.
#[cfg(not(unix))]
pub fn vouched(_store_dir: &Path) -> Option<(NodeId, Vec<String>)> {
    None
}

#[derive(Default)]
struct State {
    /// Changes the file watcher has reported.
    seen: u64,
    /// The last finished rescan: how many changes it had taken in, and the root it made.
    clean: Option<(u64, NodeId)>,
    /// Cookies made and not yet reported back, with the queues ([`Queue`] bits) still to.
    waiting: HashMap<u64, u8>,
    /// Whether a fanotify group watches what inotify could not: a cookie must come back
    /// through both queues.
    fan: bool,
    /// The file watcher reported an error it cannot place (a folder it could not watch once
    /// the kernel's limit was reached after the start): it no longer sees every change, so
    /// the watch vouches for nothing from then on.
    blind: bool,
    /// The folders it does not watch (the kernel's limit): named with every answer, for the
    /// reader to check by their stats.
    coverage: Coverage,
    next_cookie: u64,
}

type Shared = Arc<(Mutex<State>, Condvar)>;

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    // A panic elsewhere leaves counts, never a broken invariant: carry on with them.
    shared
        .0
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The part of a [`Monitor`] a file watcher's callback holds.
#[derive(Clone)]
pub struct Observer {
    shared: Shared,
    dir: PathBuf,
    prefix: String,
    /// Called when a reader says it rescanned changes below the folders not watched.
    unwatched_changed: Option<Arc<dyn Fn() + Send + Sync>>,
    /// Answers what another process asks of the workspace ([`crate::asked`]).
    answers: Option<Arc<crate::asked::Answers>>,
}

impl Observer {
    /// Called for every event the watch counts as a change of the tree, in the order the file
    /// watcher reports them, before the event is passed on.
    pub fn changed(&self) {
        lock(&self.shared).seen += 1;
    }

    /// The file watcher reported an error: from now on the watch answers `dirty`, and every
    /// reader checks the disk itself.
    pub fn blind(&self) {
        lock(&self.shared).blind = true;
    }

    /// What a file watcher's `event` says of the folders it covers ([`Coverage::note`]):
    /// blind where it can no longer say what it misses.
    pub(crate) fn note(&self, event: &notify::Result<notify::Event>, root: &Path) {
        let mut state = lock(&self.shared);
        if !state.coverage.note(event, root) {
            state.blind = true;
        }
    }

    /// The outcome of fitting the tree's watches taken in ([`Coverage::fitted`]), and whether
    /// a fanotify group watches part of the tree.
    pub(crate) fn fitted(&self, fitted: Coverage, fan: bool) {
        let mut state = lock(&self.shared);
        state.coverage.fitted(fitted);
        state.fan = fan;
    }

    /// The tree's watches are being fitted: folders made meanwhile are noted
    /// ([`Coverage::starting`]).
    pub(crate) fn fitting(&self) {
        lock(&self.shared).coverage = Coverage::starting();
    }

    /// Whether `path` is one of this monitor's cookies: in the store folder, named for this
    /// process. The reader waiting for it is woken once it came through every queue.
    pub(crate) fn cookie(&self, path: &Path, queue: Queue) -> bool {
        if path.parent() != Some(self.dir.as_path()) {
            return false;
        }
        let Some(id) = path.file_name().and_then(|name| {
            name.to_str()?
                .strip_prefix(&self.prefix)?
                .parse::<u64>()
                .ok()
        }) else {
            return false;
        };
        let mut state = lock(&self.shared);
        if let Some(left) = state.waiting.get_mut(&id) {
            *left &= !(queue as u8);
            if *left == 0 {
                state.waiting.remove(&id);
                self.shared.1.notify_all();
            }
        }
        true
    }
}

/// A watch's side: the socket it answers on, removed when dropped.
pub struct Monitor {
    observer: Observer,
    socket: PathBuf,
    stop: Arc<AtomicBool>,
    serving: bool,
    taken: u64,
}

impl Monitor {
    /// A monitor for the store in `store_dir`, counting changes from now on; it answers
    /// readers once [`Monitor::serve`] is called.
    pub fn new(store_dir: &Path) -> Monitor {
        Monitor {
            observer: Observer {
                shared: Shared::default(),
                dir: store_dir.to_path_buf(),
                prefix: format!("{COOKIE}{}-", std::process::id()),
                unwatched_changed: None,
                answers: None,
            },
            socket: store_dir.join(SOCKET),
            stop: Arc::new(AtomicBool::new(false)),
            serving: false,
            taken: 0,
        }
    }

    /// Starts answering on the socket in the store folder, which must exist and which the
    /// file watcher must cover (the cookies are made there). An error when another watch
    /// answers there already, or the socket cannot be made (a path too long for a socket's
    /// address, say); a socket left by a watch that was killed is replaced.
    #[cfg(unix)]
    pub fn serve(&mut self) -> std::io::Result<()> {
        if UnixStream::connect(&self.socket).is_ok() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                format!("another merkle watch answers at {}", self.socket.display()),
            ));
        }
        match std::fs::remove_file(&self.socket) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let listener = UnixListener::bind(&self.socket)?;
        let (serving, stopping) = (self.observer.clone(), self.stop.clone());
        std::thread::Builder::new()
            .name("watch-socket".to_owned())
            .spawn(move || {
                for stream in listener.incoming() {
                    if stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let serving = serving.clone();
                    // One thread a reader: an answer may wait for its cookie.
                    let _ = std::thread::Builder::new()
                        .name("watch-answer".to_owned())
                        .spawn(move || answer(&serving, stream));
                }
            })?;
        self.serving = true;
        Ok(())
    }

    /// Off Unix there is no socket to answer on.
    #[cfg(not(unix))]
    pub fn serve(&mut self) -> std::io::Result<()> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    /// What a reader's word that it rescanned changes below the folders not watched calls
    /// ([`unwatched_changed`]); set before [`Monitor::serve`].
    pub fn on_unwatched_change(&mut self, call: impl Fn() + Send + Sync + 'static) {
        self.observer.unwatched_changed = Some(Arc::new(call));
    }

    /// What answers the questions other processes ask of the workspace ([`crate::asked`]);
    /// set before [`Monitor::serve`].
    pub fn on_ask(
        &mut self,
        answers: impl Fn(&serde_json::Value) -> Option<serde_json::Value> + Send + Sync + 'static,
    ) {
        self.observer.answers = Some(Arc::new(answers));
    }

    /// The handle for the file watcher's callback.
    pub fn observer(&self) -> Observer {
        self.observer.clone()
    }

    /// The watch's loop has taken in one more change (one the callback counted with
    /// [`Observer::changed`]).
    pub fn taken(&mut self) {
        self.taken += 1;
    }

    /// A rescan made with every change taken in so far is done and left the tree at `root`.
    /// (Call [`Monitor::changes_taken`] when the rescan starts, and pass its count here.)
    pub fn rescanned(&self, taken: u64, root: NodeId) {
        lock(&self.observer.shared).clean = Some((taken, root));
    }

    /// How many changes the loop has taken in so far.
    pub fn changes_taken(&self) -> u64 {
        self.taken
    }

    /// The folders the watch does not watch (the kernel's limit of watches).
    pub fn unwatched(&self) -> Vec<String> {
        lock(&self.observer.shared).coverage.unwatched()
    }

    /// Whether the file watcher reported what it cannot place ([`Observer::blind`]): the
    /// watch vouches for nothing from then on.
    pub fn blind(&self) -> bool {
        lock(&self.observer.shared).blind
    }

    /// Whether the kernel's limit kept the watch from watching every folder.
    pub fn limited(&self) -> bool {
        lock(&self.observer.shared).coverage.limited()
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        if !self.serving {
            return;
        }
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the listener so that it sees `stop`.
        #[cfg(unix)]
        let _ = UnixStream::connect(&self.socket);
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Answers one reader: a cookie through the file watcher, then `clean ROOT`, `partly ROOT N`
/// and the N folders not watched, or `dirty`; or takes its word that it rescanned changes
/// below the folders not watched.
#[cfg(unix)]
fn answer(observer: &Observer, stream: UnixStream) {
    let _ = stream.set_read_timeout(Some(ASK_TIMEOUT));
    let mut line = String::new();
    let mut reader = BufReader::new(&stream);
    if reader.read_line(&mut line).is_err() {
        return;
    }
    if line.trim_end() == "unwatched-changed" {
        if let Some(call) = &observer.unwatched_changed {
            call();
        }
        return;
    }
    if let Some(asked) = line.trim_end().strip_prefix(crate::asked::ASK) {
        crate::asked::answer(observer.answers.as_deref(), asked, &stream);
        return;
    }
    if line.trim_end() != "sync" {
        return;
    }
    let id = {
        let mut state = lock(&observer.shared);
        state.next_cookie += 1;
        let id = state.next_cookie;
        let queues = Queue::all(state.fan);
        state.waiting.insert(id, queues);
        id
    };
    let cookie = observer.dir.join(format!("{}{id}", observer.prefix));
    let made = std::fs::File::create(&cookie).is_ok();
    let deadline = Instant::now() + COOKIE_WAIT;
    let mut state = lock(&observer.shared);
    while made && state.waiting.contains_key(&id) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        state = match observer.shared.1.wait_timeout(state, left) {
            Ok((state, _)) => state,
            Err(poisoned) => poisoned.into_inner().0,
        };
    }
    let reported = state.waiting.remove(&id).is_none();
    let reply = match state.clean {
        Some((taken, root)) if made && reported && taken == state.seen && !state.blind => {
            let unwatched = state.coverage.unwatched();
            if unwatched.is_empty() {
                format!("clean {}\n", root.to_hex())
            } else {
                let mut reply = format!("partly {} {}\n", root.to_hex(), unwatched.len());
                for folder in unwatched {
                    reply.push_str(&serde_json::Value::String(folder).to_string());
                    reply.push('\n');
                }
                reply
            }
        }
        _ => "dirty\n".to_owned(),
    };
    drop(state);
    let _ = std::fs::remove_file(&cookie);
    let _ = (&stream).write_all(reply.as_bytes());
}

/// A reader's [`Watcher`]: a running `merkle watch` vouches for the tree (but for the folders
/// it could not watch, which the reader checks by their stats), else the disk is checked.
pub struct Vouching {
    store_dir: PathBuf,
    /// The folders the watch named unwatched in its last answer.
    unwatched: Mutex<Vec<String>>,
}

impl Vouching {
    /// Asks the watch that answers for the store in `store_dir`, if one does.
    pub fn new(store_dir: impl Into<PathBuf>) -> Vouching {
        Vouching {
            store_dir: store_dir.into(),
            unwatched: Mutex::new(Vec::new()),
        }
    }
}

impl Watcher for Vouching {
    fn settle(&self, root: NodeId) -> Settled {
        match vouched(&self.store_dir) {
            Some((vouched, unwatched)) if vouched == root && unwatched.is_empty() => Settled::Clean,
            Some((vouched, unwatched)) if vouched == root => {
                *self.unwatched.lock().unwrap_or_else(|e| e.into_inner()) = unwatched;
                Settled::Partly
            }
            _ => Settled::Unknown,
        }
    }

    fn unwatched(&self) -> Vec<String> {
        self.unwatched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn unwatched_rescanned(&self) {
        unwatched_changed(&self.store_dir);
    }

    fn take(&self) -> Option<Option<BTreeSet<String>>> {
        // The watch does not say what changed.
        Some(None)
    }

    fn put_back(&self) {}
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A stand-in for the file watcher: reports every cookie that appears in `dir`.
    fn report_cookies(dir: PathBuf, observer: Observer, stop: Arc<AtomicBool>) {
        report_through(Queue::Inotify, dir, observer, stop);
    }

    /// [`report_cookies`] through `queue`.
    fn report_through(queue: Queue, dir: PathBuf, observer: Observer, stop: Arc<AtomicBool>) {
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                    observer.cookie(&entry.path(), queue);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        });
    }

    #[test]
    fn a_watch_vouches_only_for_a_rescan_that_took_every_change() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = NodeId::from_hex(&"ab".repeat(32)).expect("a hash");
        assert_eq!(vouched_root(dir.path()), None, "no watch");
        let mut monitor = Monitor::new(dir.path());
        monitor.serve().expect("serving");
        let stop = Arc::new(AtomicBool::new(false));
        report_cookies(dir.path().to_path_buf(), monitor.observer(), stop.clone());
        assert_eq!(vouched_root(dir.path()), None, "nothing rescanned yet");

        monitor.rescanned(monitor.changes_taken(), root);
        assert_eq!(vouched_root(dir.path()), Some(root));

        // A change reported, not yet taken in and rescanned.
        monitor.observer().changed();
        assert_eq!(vouched_root(dir.path()), None);
        let taken = {
            monitor.taken();
            monitor.changes_taken()
        };
        // Another change during the rescan.
        monitor.observer().changed();
        monitor.rescanned(taken, root);
        assert_eq!(vouched_root(dir.path()), None);
        monitor.taken();
        monitor.rescanned(monitor.changes_taken(), root);
        assert_eq!(vouched_root(dir.path()), Some(root));
        // The file watcher reported an error: nothing is vouched for from then on.
        assert!(!monitor.blind());
        monitor.observer().blind();
        assert!(monitor.blind());
        monitor.rescanned(monitor.changes_taken(), root);
        assert_eq!(vouched_root(dir.path()), None);

        // Cookies are cleaned up; a second watch is refused; the socket goes with the watch.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("listing the folder")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from(SOCKET)]);
        let second = Monitor::new(dir.path()).serve().err().map(|e| e.kind());
        assert_eq!(second, Some(std::io::ErrorKind::AddrInUse));
        drop(monitor);
        stop.store(true, Ordering::SeqCst);
        assert!(!dir.path().join(SOCKET).exists());
        assert_eq!(vouched_root(dir.path()), None);
    }

    #[test]
    fn where_fanotify_watches_too_a_cookie_must_come_back_through_both_queues() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = NodeId::from_hex(&"ef".repeat(32)).expect("a hash");
        let mut monitor = Monitor::new(dir.path());
        monitor.observer().fitted(Coverage::default(), true);
        monitor.serve().expect("serving");
        monitor.rescanned(0, root);
        let stop = Arc::new(AtomicBool::new(false));
        report_through(
            Queue::Inotify,
            dir.path().to_path_buf(),
            monitor.observer(),
            stop.clone(),
        );
        // Only inotify's queue has delivered it: fanotify's may still hold earlier events.
        assert_eq!(vouched_root(dir.path()), None);
        report_through(
            Queue::Fanotify,
            dir.path().to_path_buf(),
            monitor.observer(),
            stop.clone(),
        );
        assert_eq!(vouched_root(dir.path()), Some(root));
        stop.store(true, Ordering::SeqCst);
    }

    #[test]
    fn a_cookie_never_reported_means_dirty_and_a_dead_socket_is_replaced() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = NodeId::from_hex(&"cd".repeat(32)).expect("a hash");
        // A socket file no one answers on, as a killed watch leaves it.
        drop(UnixListener::bind(dir.path().join(SOCKET)).expect("binding"));
        assert_eq!(vouched_root(dir.path()), None);
        let mut monitor = Monitor::new(dir.path());
        monitor.serve().expect("serving");
        monitor.rescanned(0, root);
        // No file watcher reports the cookie: the watch cannot know it has seen every change.
        let started = Instant::now();
        assert_eq!(vouched_root(dir.path()), None);
        assert!(started.elapsed() < ASK_TIMEOUT + Duration::from_millis(200));
        // A stranger's answer is no answer.
        let mut stream = UnixStream::connect(dir.path().join(SOCKET)).expect("connecting");
        stream.write_all(b"hello\n").expect("writing");
        let mut line = String::new();
        let _ = BufReader::new(stream).read_line(&mut line);
        assert_eq!(line, "");
    }
}
