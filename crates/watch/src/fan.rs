//! A second pool of folder watches for what the kernel's inotify limit leaves out: a fanotify
//! group, which Linux 5.13 and later lets any user make, and whose marks count against a limit
//! of their own (`fs.fanotify.max_user_marks`, about as large as inotify's). Each folder is
//! marked alone, for its children's events ([`MASK`]), which come named by the folder's file
//! handle and the child's name (`FAN_REPORT_DFID_NAME`); the handle is looked up in a map made
//! as each folder was marked. Its events are handed on as the notify events inotify gives, so
//! one set of rules (`events.rs`, `fit.rs`) reads both. Where the kernel makes no group for
//! this user, or the group cannot mark the folder of the barrier files (whose events must come
//! through both queues), there is none, and the folders left out are checked by their stats.
//!
//! The crate's only unsafe code: calls to the kernel that no safe crate here wraps (fanotify's,
//! `name_to_handle_at`, `fstatfs`, an eventfd's, `poll` and `read`), each with its SAFETY note.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use notify::event::{
    CreateKind, DataChange, EventKind, Flag, MetadataKind, ModifyKind, RemoveKind, RenameMode,
};

/// What a group's events go to, on its reading thread.
pub(crate) type Handler = Box<dyn Fn(notify::Result<notify::Event>) + Send>;

/// The events asked of each folder marked: of its children (`FAN_EVENT_ON_CHILD`), folders
/// among them (`FAN_ONDIR`), the ones inotify's watcher asks for: made, removed, moved in or
/// out, written and closed after writing, their attributes changed. A folder's own move or
/// removal is its parent's event.
const MASK: u64 = libc::FAN_CREATE
    | libc::FAN_DELETE
    | libc::FAN_MOVED_FROM
    | libc::FAN_MOVED_TO
    | libc::FAN_MODIFY
    | libc::FAN_CLOSE_WRITE
    | libc::FAN_ATTRIB
    | libc::FAN_ONDIR
    | libc::FAN_EVENT_ON_CHILD;

/// The length of an event's fixed part (`struct fanotify_event_metadata`).
const META_LEN: usize = 24;
/// The bits of an event on a folder itself, rather than on a name in it.
const SELF_ONLY: u64 = libc::FAN_ATTRIB | libc::FAN_ONDIR | libc::FAN_EVENT_ON_CHILD;

/// What marking a folder came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marked {
    Watched,
    /// The limit of marks reached (then and from then on).
    Limit,
    /// Another failure: gone, no permission, a file system without file handles.
    Failed,
}

/// A fanotify group and the folders it marks.
pub(crate) struct Fan {
    group: OwnedFd,
    /// Wakes the reading thread to stop.
    stop: OwnedFd,
    /// Each marked folder's path by its key ([`key_of`]).
    folders: Arc<Mutex<HashMap<Vec<u8>, PathBuf>>>,
    reader: Option<JoinHandle<()>>,
    /// The folders of the tree marked (the barriers' folder aside).
    marked: usize,
    full: bool,
}

impl Fan {
    /// A group whose events go to `handler`, with `barriers` (the folder whose files a read
    /// waits for) marked first; `None` where the kernel makes no group for this user (older
    /// than Linux 5.13, or a system that forbids it) or cannot mark that folder.
    pub(crate) fn start(barriers: &Path, handler: Handler) -> Option<Fan> {
        let flags = libc::FAN_CLASS_NOTIF
            | libc::FAN_REPORT_DFID_NAME
            | libc::FAN_CLOEXEC
            | libc::FAN_NONBLOCK;
        let event_flags = (libc::O_RDONLY | libc::O_CLOEXEC) as libc::c_uint;
        // SAFETY: no pointers; the descriptor returned, if any, is owned from here on.
        let group = unsafe { libc::fanotify_init(flags, event_flags) };
        if group < 0 {
            return None;
        }
        // SAFETY: `group` is a new descriptor nothing else owns.
        let group = unsafe { OwnedFd::from_raw_fd(group) };
        // SAFETY: no pointers; as above.
        let stop = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if stop < 0 {
            return None;
        }
        // SAFETY: as above.
        let stop = unsafe { OwnedFd::from_raw_fd(stop) };
        let mut fan = Fan {
            group,
            stop,
            folders: Arc::default(),
            reader: None,
            marked: 0,
            full: false,
        };
        if fan.mark_folder(barriers) != Marked::Watched {
            return None;
        }
        let (group, stop) = (fan.group.as_raw_fd(), fan.stop.as_raw_fd());
        let folders = Arc::clone(&fan.folders);
        fan.reader = std::thread::Builder::new()
            .name("watch-fanotify".to_owned())
            .spawn(move || read_events(group, stop, &folders, &handler))
            .ok();
        fan.reader.is_some().then_some(fan)
    }

    /// Marks `folder`, a folder of the tree; once the limit was reached, none is tried again.
    pub(crate) fn mark(&mut self, folder: &Path) -> Marked {
        if self.full {
            return Marked::Limit;
        }
        let marked = self.mark_folder(folder);
        match marked {
            Marked::Watched => self.marked += 1,
            Marked::Limit => self.full = true,
            Marked::Failed => {}
        }
        marked
    }

    /// How many folders of the tree it marks.
    pub(crate) fn marked(&self) -> usize {
        self.marked
    }

    /// Marks the folder at `folder`, opened once (not a link to one) so that the handle it is
    /// keyed by and the mark are the same folder's, whatever replaces it meanwhile.
    fn mark_folder(&self, folder: &Path) -> Marked {
        let Ok(opened) = open_folder(folder) else {
            return Marked::Failed;
        };
        let Some(key) = key_of(&opened) else {
            return Marked::Failed;
        };
        // In the map before the mark: its first event may come at once.
        let mut folders = self.folders.lock().unwrap_or_else(|e| e.into_inner());
        folders.insert(key.clone(), folder.to_path_buf());
        // SAFETY: no path: the folder `opened` refers to is marked, a descriptor live for the
        // call.
        let done = unsafe {
            libc::fanotify_mark(
                self.group.as_raw_fd(),
                libc::FAN_MARK_ADD | libc::FAN_MARK_ONLYDIR,
                MASK,
                opened.as_raw_fd(),
                std::ptr::null(),
            )
        };
        if done == 0 {
            return Marked::Watched;
        }
        let error = std::io::Error::last_os_error();
        folders.remove(&key);
        if error.raw_os_error() == Some(libc::ENOSPC) {
            Marked::Limit
        } else {
            Marked::Failed
        }
    }
}

impl Drop for Fan {
    fn drop(&mut self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from a live buffer of 8.
        let _ = unsafe { libc::write(self.stop.as_raw_fd(), one.as_ptr().cast(), one.len()) };
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// The folder at `path` opened to be read (a link to one is not followed).
fn open_folder(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
}

/// An open folder's key, as its events name it: its file system's id (`statfs`'s `f_fsid`),
/// then its file handle's type and bytes. `None` where the file system gives no handles.
fn key_of(folder: &std::fs::File) -> Option<Vec<u8>> {
    #[repr(C)]
    struct Handle {
        bytes: libc::c_uint,
        kind: libc::c_int,
        handle: [u8; libc::MAX_HANDLE_SZ as usize],
    }
    let mut handle = Handle {
        bytes: libc::MAX_HANDLE_SZ as libc::c_uint,
        kind: 0,
        handle: [0; libc::MAX_HANDLE_SZ as usize],
    };
    let mut mount = 0;
    // SAFETY: `handle` is a `struct file_handle` with room for MAX_HANDLE_SZ bytes, as its
    // `bytes` says; the empty path (AT_EMPTY_PATH: the descriptor's own folder) and `mount`
    // outlive the call.
    let done = unsafe {
        libc::name_to_handle_at(
            folder.as_raw_fd(),
            c"".as_ptr(),
            (&raw mut handle).cast(),
            &mut mount,
            libc::AT_EMPTY_PATH,
        )
    };
    if done != 0 || handle.bytes as usize > handle.handle.len() {
        return None;
    }
    // SAFETY: `statfs` is plain data, filled by the call below before it is read.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `fs` outlives the call; the descriptor is live.
    if unsafe { libc::fstatfs(folder.as_raw_fd(), &mut fs) } != 0 {
        return None;
    }
    // SAFETY: `fsid_t` is two plain `int`s, eight bytes, with no field of its own to read.
    let fsid: [u8; 8] = unsafe { std::mem::transmute(fs.f_fsid) };
    let mut key = fsid.to_vec();
    key.extend_from_slice(&handle.kind.to_ne_bytes());
    key.extend_from_slice(&handle.handle[..handle.bytes as usize]);
    Some(key)
}

/// The reading thread: the group's events, as notify's, to `handler` until `stop` is written.
fn read_events(
    group: RawFd,
    stop: RawFd,
    folders: &Mutex<HashMap<Vec<u8>, PathBuf>>,
    handler: &(dyn Fn(notify::Result<notify::Event>) + Send),
) {
    let mut buf = vec![0u8; 64 * 1024];
    let failed = |what: &str| {
        let e = std::io::Error::last_os_error();
        handler(Err(notify::Error::generic(&format!(
            "fanotify {what}: {e}"
        ))));
    };
    loop {
        let mut fds = [group, stop].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        // SAFETY: `fds` is a live array of two `pollfd`s.
        if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return failed("poll");
        }
        if fds[1].revents != 0 {
            return;
        }
        // SAFETY: reads at most `buf.len()` bytes into `buf`.
        let n = unsafe { libc::read(group, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let kind = std::io::Error::last_os_error().kind();
            if matches!(
                kind,
                std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
            ) {
                continue;
            }
            return failed("read");
        }
        let events = {
            let folders = folders.lock().unwrap_or_else(|e| e.into_inner());
            parse(&buf[..n as usize], &folders)
        };
        for event in events {
            handler(Ok(event));
        }
    }
}

/// The notify events of a buffer of fanotify events: each event's kinds on the path its
/// folder's handle and its name give; an event whose folder is not known names no path (so
/// everything is looked at), and a lost event (the queue overflowed) asks for a rescan.
fn parse(buf: &[u8], folders: &HashMap<Vec<u8>, PathBuf>) -> Vec<notify::Event> {
    let u16_at = |b: &[u8], i: usize| u16::from_ne_bytes([b[i], b[i + 1]]) as usize;
    let u32_at = |b: &[u8], i: usize| u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let rescan = || notify::Event::new(EventKind::Other).set_flag(Flag::Rescan);
    let mut out = Vec::new();
    let mut at = 0;
    while at + META_LEN <= buf.len() {
        let len = u32_at(buf, at) as usize;
        let meta = u16_at(buf, at + 6);
        if len < META_LEN || meta > len || at + len > buf.len() {
            out.push(rescan());
            break;
        }
        let event = &buf[at..at + len];
        at += len;
        if event[4] != libc::FANOTIFY_METADATA_VERSION || meta < META_LEN {
            // Another layout: nothing in it can be read, a descriptor included.
            out.push(rescan());
            continue;
        }
        let mask = u64::from_ne_bytes(event[8..16].try_into().unwrap_or_default());
        let fd = u32_at(event, 16) as i32;
        if fd >= 0 {
            // Not asked for (events report handles), but never leaked.
            // SAFETY: a descriptor the kernel opened for this process and nothing owns.
            drop(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        if mask & libc::FAN_Q_OVERFLOW != 0 {
            out.push(rescan());
            continue;
        }
        match named(&event[meta..], folders) {
            Some(path) => {
                out.extend(kinds(mask).map(|kind| notify::Event::new(kind).add_path(path.clone())))
            }
            // A folder's own attributes changed (a chmod, a touch), reported through its
            // parent's mark by its own handle: a folder not marked, which inotify watches
            // itself, is left out (checked by its stats), or is not the tree's (`.git`).
            None if mask & libc::FAN_ONDIR != 0 && mask & !SELF_ONLY == 0 => {}
            None => out.push(notify::Event::new(EventKind::Any)),
        }
    }
    out
}

/// The path an event's records name: its folder's, by the folder's key, joined with the name.
fn named(mut info: &[u8], folders: &HashMap<Vec<u8>, PathBuf>) -> Option<PathBuf> {
    while info.len() >= 4 {
        let len = u16::from_ne_bytes([info[2], info[3]]) as usize;
        if len < 4 || len > info.len() {
            return None;
        }
        let (record, rest) = info.split_at(len);
        info = rest;
        if record[0] != libc::FAN_EVENT_INFO_TYPE_DFID_NAME || record.len() < 20 {
            continue;
        }
        let bytes = u32::from_ne_bytes(record[12..16].try_into().ok()?) as usize;
        let end = 20usize.checked_add(bytes).filter(|&e| e <= record.len())?;
        let mut key = record[4..12].to_vec();
        key.extend_from_slice(&record[16..end]);
        let folder = folders.get(&key)?;
        let name = &record[end..];
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        return Some(if name.is_empty() || name == b"." {
            folder.clone()
        } else {
            folder.join(OsStr::from_bytes(name))
        });
    }
    None
}

/// The notify kinds of an event's mask, in the order the changes could have come (the
/// kernel merges a name's events while they wait to be read).
fn kinds(mask: u64) -> impl Iterator<Item = EventKind> {
    let folder = mask & libc::FAN_ONDIR != 0;
    let create = if folder {
        CreateKind::Folder
    } else {
        CreateKind::File
    };
    let remove = if folder {
        RemoveKind::Folder
    } else {
        RemoveKind::File
    };
    [
        (libc::FAN_CREATE, EventKind::Create(create)),
        (
            libc::FAN_MOVED_TO,
            EventKind::Modify(ModifyKind::Name(RenameMode::To)),
        ),
        (
            libc::FAN_MODIFY | libc::FAN_CLOSE_WRITE,
            EventKind::Modify(ModifyKind::Data(DataChange::Content)),
        ),
        (
            libc::FAN_ATTRIB,
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any)),
        ),
        (
            libc::FAN_MOVED_FROM,
            EventKind::Modify(ModifyKind::Name(RenameMode::From)),
        ),
        (libc::FAN_DELETE, EventKind::Remove(remove)),
    ]
    .into_iter()
    .filter(move |(bits, _)| mask & bits != 0)
    .map(|(_, kind)| kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// A group over a temporary folder, its events sent on a channel. The kernel must make
    /// one for an unprivileged user (Linux 5.13 or later), as on the machines the tests run on.
    fn started(dir: &Path) -> (Fan, mpsc::Receiver<notify::Event>) {
        let (tx, rx) = mpsc::channel();
        let tx = Mutex::new(tx);
        let fan = Fan::start(
            dir,
            Box::new(move |e| {
                if let Ok(e) = e {
                    let _ = tx.lock().unwrap_or_else(|p| p.into_inner()).send(e);
                }
            }),
        )
        .expect("a fanotify group (Linux 5.13 or later)");
        (fan, rx)
    }

    /// The paths of the events that come within a second, with their kinds.
    fn drained(rx: &mpsc::Receiver<notify::Event>) -> Vec<(EventKind, PathBuf)> {
        let mut out = Vec::new();
        while let Ok(e) = rx.recv_timeout(Duration::from_millis(500)) {
            for p in e.paths {
                out.push((e.kind, p));
            }
        }
        out
    }

    #[test]
    fn a_marked_folder_s_changes_come_named_by_their_paths() {
        let tmp = tempfile::tempdir().expect("a temporary folder");
        let root = tmp.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        let (mut fan, rx) = started(&root);
        assert_eq!(fan.mark(&root.join("a/b")), Marked::Watched);
        assert_eq!(fan.marked(), 1);
        std::fs::write(root.join("a/b/new.rs"), "fn x() {}\n").expect("write");
        std::fs::create_dir(root.join("a/b/sub")).expect("mkdir");
        // Not marked: nothing comes of it.
        std::fs::write(root.join("a/other.rs"), "x\n").expect("write");
        let seen = drained(&rx);
        assert!(
            seen.iter()
                .any(|(k, p)| matches!(k, EventKind::Create(CreateKind::File))
                    && p == &root.join("a/b/new.rs")),
            "{seen:?}"
        );
        assert!(
            seen.iter()
                .any(|(k, p)| *k == EventKind::Create(CreateKind::Folder)
                    && p == &root.join("a/b/sub")),
            "{seen:?}"
        );
        assert!(
            seen.iter().all(|(_, p)| p != &root.join("a/other.rs")),
            "{seen:?}"
        );
        std::fs::rename(root.join("a/b/new.rs"), root.join("a/b/old.rs")).expect("rename");
        std::fs::remove_file(root.join("a/b/old.rs")).expect("remove");
        let seen = drained(&rx);
        for (kind, path) in [
            (
                EventKind::Modify(ModifyKind::Name(RenameMode::From)),
                "new.rs",
            ),
            (
                EventKind::Modify(ModifyKind::Name(RenameMode::To)),
                "old.rs",
            ),
            (EventKind::Remove(RemoveKind::File), "old.rs"),
        ] {
            assert!(
                seen.contains(&(kind, root.join("a/b").join(path))),
                "{kind:?} {path}: {seen:?}"
            );
        }
        drop(fan);
    }

    #[test]
    fn events_of_a_folder_it_does_not_know_name_nothing_and_a_lost_event_asks_a_rescan() {
        // A record whose handle no folder has: an event with no path.
        let mut buf = vec![0u8; META_LEN];
        let record_len = 20 + 4 + 2;
        buf[0..4].copy_from_slice(&((META_LEN + record_len) as u32).to_ne_bytes());
        buf[4] = libc::FANOTIFY_METADATA_VERSION;
        buf[6..8].copy_from_slice(&(META_LEN as u16).to_ne_bytes());
        buf[8..16].copy_from_slice(&libc::FAN_CREATE.to_ne_bytes());
        buf[16..20].copy_from_slice(&(-1i32).to_ne_bytes());
        let mut record = vec![libc::FAN_EVENT_INFO_TYPE_DFID_NAME, 0];
        record.extend_from_slice(&(record_len as u16).to_ne_bytes());
        record.extend_from_slice(&[0; 8]);
        record.extend_from_slice(&4u32.to_ne_bytes());
        record.extend_from_slice(&1i32.to_ne_bytes());
        record.extend_from_slice(&[1, 2, 3, 4, b'x', 0]);
        buf.extend_from_slice(&record);
        let events = parse(&buf, &HashMap::new());
        assert_eq!(events.len(), 1);
        assert!(events[0].paths.is_empty() && !events[0].need_rescan());
        // The folder known: the name joined to its path.
        let mut key = vec![0; 8];
        key.extend_from_slice(&1i32.to_ne_bytes());
        key.extend_from_slice(&[1, 2, 3, 4]);
        let known = HashMap::from([(key, PathBuf::from("/w/a"))]);
        let events = parse(&buf, &known);
        assert_eq!(events[0].paths, [PathBuf::from("/w/a/x")]);
        // A folder's own attributes, through its parent's mark by its own handle: not a
        // change of the tree where that folder is not marked.
        let attrib = libc::FAN_ATTRIB | libc::FAN_ONDIR;
        buf[8..16].copy_from_slice(&attrib.to_ne_bytes());
        assert_eq!(parse(&buf, &HashMap::new()).len(), 0);
        // Overflow.
        buf[8..16].copy_from_slice(&libc::FAN_Q_OVERFLOW.to_ne_bytes());
        assert!(parse(&buf, &known)[0].need_rescan());
        // Cut short: a rescan, never a guess.
        assert!(parse(&buf[..META_LEN + 3], &known)[0].need_rescan());
    }
}
