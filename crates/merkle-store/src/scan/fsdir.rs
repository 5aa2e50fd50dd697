//! The file system calls of a walk, made relative to open directories: a directory is opened
//! from the open workspace root and listed, and its entries are stat'ed and opened by name, so
//! the kernel resolves a name or a few per call instead of a whole path from `/` (on a tree of
//! small files, path lookups were a tenth of a cold scan). On Unix through rustix's system
//! calls (std cannot open or stat relative to a directory); elsewhere through std, by path.
//!
//! Each folder is opened by the names below the nearest open folder above it (its parent, or
//! where the folders between hold few entries and a walk reuses their listings, a folder up
//! to [`MAX_NAMES_BELOW`] names further up: [`OPEN_MIN_ENTRIES`]), shared by the tasks below
//! it and closed once they are done with it, its stat taken before its entries are read, and
//! its listing ends only when `getdents64` returns nothing, on every file system.
use std::ffi::OsStr;
#[cfg(not(unix))]
use std::ffi::OsString;
use std::path::Path;

use crate::node::{NodeKind, Stat};

/// What a directory entry is, as its listing tells (some file systems do not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum EntryKind {
    Node(NodeKind),
    /// Neither a file, a directory nor a symlink (a socket, a FIFO, a device).
    Other,
    /// Not told by the listing: stat it.
    Unknown,
}

/// A directory's entries: their names one after the other in one buffer (on Unix), so that a
/// listing costs two allocations rather than one or two per entry, and their kinds.
#[derive(Default)]
pub(super) struct Entries {
    #[cfg(unix)]
    names: Vec<u8>,
    #[cfg(unix)]
    list: Vec<(std::ops::Range<usize>, EntryKind)>,
    #[cfg(not(unix))]
    list: Vec<(OsString, EntryKind)>,
}

impl Entries {
    pub(super) fn len(&self) -> usize {
        self.list.len()
    }

    /// Each entry's name and kind, in the order the file system gave them.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&OsStr, EntryKind)> {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            self.list
                .iter()
                .map(|(at, kind)| (OsStr::from_bytes(&self.names[at.clone()]), *kind))
        }
        #[cfg(not(unix))]
        {
            self.list
                .iter()
                .map(|(name, kind)| (name.as_os_str(), *kind))
        }
    }

    #[cfg(unix)]
    fn push(&mut self, name: &[u8], file_type: rustix::fs::FileType) {
        use rustix::fs::FileType;
        if name == b"." || name == b".." {
            return;
        }
        let kind = match file_type {
            FileType::RegularFile => EntryKind::Node(NodeKind::File),
            FileType::Directory => EntryKind::Node(NodeKind::Dir),
            FileType::Symlink => EntryKind::Node(NodeKind::Symlink),
            FileType::Unknown => EntryKind::Unknown,
            _ => EntryKind::Other,
        };
        let start = self.names.len();
        self.names.extend_from_slice(name);
        self.list.push((start..self.names.len(), kind));
    }
}

/// The kind of a stat'ed entry: `None` for neither a file, a directory nor a symlink.
#[cfg(unix)]
fn kind_of_mode(mode: u32) -> Option<NodeKind> {
    use rustix::fs::FileType;
    match FileType::from_raw_mode(mode as _) {
        FileType::RegularFile => Some(NodeKind::File),
        FileType::Directory => Some(NodeKind::Dir),
        FileType::Symlink => Some(NodeKind::Symlink),
        _ => None,
    }
}

#[cfg(not(unix))]
fn kind_of_meta(m: &std::fs::Metadata) -> Option<NodeKind> {
    let ft = m.file_type();
    if ft.is_dir() {
        Some(NodeKind::Dir)
    } else if ft.is_symlink() {
        Some(NodeKind::Symlink)
    } else if ft.is_file() {
        Some(NodeKind::File)
    } else {
        None
    }
}

/// The workspace root, open: the directories of a walk are opened relative to it.
pub(super) struct Root {
    #[cfg(unix)]
    fd: rustix::fd::OwnedFd,
    #[cfg(not(unix))]
    path: std::path::PathBuf,
}

/// A directory, open to stat its entries by name (not to list them).
pub(super) struct DirHandle {
    #[cfg(unix)]
    fd: rustix::fd::OwnedFd,
    #[cfg(not(unix))]
    path: std::path::PathBuf,
}

/// A directory, open for listing too; its entries are stat'ed as through a [`DirHandle`].
pub(super) struct OpenDir {
    handle: DirHandle,
    /// Its own stat, taken when it was opened: before its entries are read.
    stat: Option<Stat>,
}

impl OpenDir {
    /// The directory's own stat, taken when it was opened; `None` if that failed.
    pub(super) fn stat(&self) -> Option<Stat> {
        self.stat
    }

    /// The directory, open, for its subdirectories to be opened from.
    pub(super) fn into_handle(self) -> DirHandle {
        self.handle
    }
}

impl std::ops::Deref for OpenDir {
    type Target = DirHandle;

    fn deref(&self) -> &DirHandle {
        &self.handle
    }
}

/// `rel`, a workspace path, as a path relative to the root ("." for the root itself).
fn relative(rel: &str) -> &str {
    if rel.is_empty() { "." } else { rel }
}

/// A folder with fewer recorded entries than this is stat'ed by its name rather than opened,
/// and its entries are looked up through it from the nearest open folder above (one name more
/// each), by a stat check (`verify.rs`) and by a walk that reuses the last scan's listing:
/// opening a folder, stat'ing it and closing it costs about what three stats do. At 100k
/// files of deno (29k folders, 3.4 entries each on average), a check's system calls took 134
/// ms on one core with every folder opened, 118 ms with only those of 16 entries or more.
pub(super) const OPEN_MIN_ENTRIES: u64 = 16;

/// The most names a folder of few entries is looked up by below the nearest open folder
/// (its entries by one more); deeper, it is opened whatever it holds: no path looked up is
/// longer than four names of at most 255 bytes (the kernel's limit is 4,096), and a chain of
/// small folders costs no more than the folders themselves. Only the last name of a lookup is
/// not followed where it is a symlink: a folder between, found a folder when its own entry was
/// checked, could be made a symlink after that, a change of its parent's stat, which the parent's
/// stat taken before tells the next check or scan.
pub(super) const MAX_NAMES_BELOW: usize = 3;

/// Whether folder `rel`, recorded with `entries` entries, is stat'ed by its names below the
/// open folder `above` rather than opened, its entries looked up through it: it holds fewer
/// than [`OPEN_MIN_ENTRIES`] and is at most [`MAX_NAMES_BELOW`] names below `above` (the
/// root is always opened). The one rule of the stat check and of a walk.
pub(super) fn looked_up_through(above: &str, rel: &str, entries: u64) -> bool {
    !rel.is_empty()
        && entries < OPEN_MIN_ENTRIES
        && below(above, rel).bytes().filter(|&b| b == b'/').count() < MAX_NAMES_BELOW
}

/// An open folder above a path, with the folder's own path: where to look the path up from
/// (`None`: from the root).
pub(super) type Above<'a> = Option<(&'a str, &'a DirHandle)>;

/// Workspace path `path` relative to `above`, a folder above it (`""`: the root).
pub(super) fn below<'p>(above: &str, path: &'p str) -> &'p str {
    if above.is_empty() {
        path
    } else {
        &path[above.len() + 1..]
    }
}

/// How to open a directory only to look names up from it: `O_PATH` where the system has it
/// (no read access needed, nothing read), else read-only.
#[cfg(unix)]
fn path_only() -> rustix::fs::OFlags {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    return rustix::fs::OFlags::PATH;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    return rustix::fs::OFlags::RDONLY;
}

#[cfg(unix)]
impl Root {
    pub(super) fn open(root: &Path) -> std::io::Result<Root> {
        use rustix::fs::{Mode, OFlags};
        let flags = path_only() | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(root, flags, Mode::empty())?;
        Ok(Root { fd })
    }

    /// Opens directory `rel` to stat its entries; a symlink is not followed. With `from`, an
    /// open folder above it and that folder's path (its parent, or a folder further up), only
    /// the names below that folder are looked up, from there.
    pub(super) fn handle(&self, rel: &str, from: Above<'_>) -> std::io::Result<DirHandle> {
        self.open_at(rel, from, path_only())
    }

    /// Opens directory `rel` for listing, with its stat; a symlink is not followed. With
    /// `from`, as for [`Root::handle`].
    pub(super) fn open_dir(&self, rel: &str, from: Above<'_>) -> std::io::Result<OpenDir> {
        let handle = self.open_at(rel, from, rustix::fs::OFlags::RDONLY)?;
        let st = rustix::fs::fstat(&handle.fd).ok();
        Ok(OpenDir {
            stat: st.as_ref().map(Stat::of_raw),
            handle,
        })
    }

    fn open_at(
        &self,
        rel: &str,
        from: Above<'_>,
        access: rustix::fs::OFlags,
    ) -> std::io::Result<DirHandle> {
        use rustix::fs::{Mode, OFlags};
        let flags = access | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match from {
            // The names below the open folder rather than every folder of the path from the
            // root.
            Some((above, dir)) if !rel.is_empty() => {
                rustix::fs::openat(&dir.fd, below(above, rel), flags, Mode::empty())?
            }
            _ => rustix::fs::openat(&self.fd, relative(rel), flags, Mode::empty())?,
        };
        Ok(DirHandle { fd })
    }
}

#[cfg(unix)]
impl DirHandle {
    /// The directory's own stat.
    pub(super) fn stat(&self) -> std::io::Result<Stat> {
        Ok(Stat::of_raw(&rustix::fs::fstat(&self.fd)?))
    }

    /// The kind and stat of entry `name` (a name, or the names below this folder, `sub/name`),
    /// not following it where it is a symlink.
    pub(super) fn stat_at(&self, name: &OsStr) -> std::io::Result<(Option<NodeKind>, Stat)> {
        let st = rustix::fs::statat(&self.fd, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)?;
        Ok((kind_of_mode(st.st_mode as u32), Stat::of_raw(&st)))
    }
}

#[cfg(unix)]
impl OpenDir {
    /// Every entry but `.` and `..`, in the order the file system gives them; `err` hears of
    /// an entry that could not be read (the listing ends there).
    pub(super) fn entries(&self, mut err: impl FnMut(std::io::Error)) -> Entries {
        use rustix::fd::AsFd;
        let mut out = Entries::default();
        // Straight from `getdents64` into a buffer on the stack: no allocation per name. The
        // listing ends only when the kernel returns no more entries, on every file system.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            const BUF: usize = 16 << 10;
            let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); BUF];
            let mut dir = rustix::fs::RawDir::new(self.handle.fd.as_fd(), &mut buf);
            while let Some(e) = dir.next() {
                match e {
                    Ok(e) => out.push(e.file_name().to_bytes(), e.file_type()),
                    Err(e) => {
                        err(e.into());
                        break;
                    }
                }
            }
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            let mut dir = match rustix::fs::Dir::read_from(self.handle.fd.as_fd()) {
                Ok(dir) => dir,
                Err(e) => {
                    err(e.into());
                    return out;
                }
            };
            while let Some(e) = dir.read() {
                match e {
                    Ok(e) => out.push(e.file_name().to_bytes(), e.file_type()),
                    Err(e) => {
                        err(e.into());
                        break;
                    }
                }
            }
        }
        out
    }

    /// Opens entry `name` for reading, with its stat; `None` when it is no longer a regular
    /// file. A symlink is not followed, and a FIFO that took a file's place does not block.
    pub(super) fn open_file(&self, name: &OsStr) -> std::io::Result<Option<(std::fs::File, Stat)>> {
        use rustix::fs::{Mode, OFlags};
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(&self.handle.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            // A symlink now.
            Err(rustix::io::Errno::LOOP) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let st = rustix::fs::fstat(&fd)?;
        if kind_of_mode(st.st_mode as u32) != Some(NodeKind::File) {
            return Ok(None);
        }
        Ok(Some((std::fs::File::from(fd), Stat::of_raw(&st))))
    }
}

#[cfg(not(unix))]
impl Root {
    pub(super) fn open(root: &Path) -> std::io::Result<Root> {
        Ok(Root {
            path: root.to_path_buf(),
        })
    }

    pub(super) fn handle(&self, rel: &str, _from: Above<'_>) -> std::io::Result<DirHandle> {
        let path = self.path.join(rel);
        if !std::fs::symlink_metadata(&path)?.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("{} is not a directory", path.display()),
            ));
        }
        Ok(DirHandle { path })
    }

    pub(super) fn open_dir(&self, rel: &str, from: Above<'_>) -> std::io::Result<OpenDir> {
        let handle = self.handle(rel, from)?;
        Ok(OpenDir {
            stat: handle.stat().ok(),
            handle,
        })
    }
}

#[cfg(not(unix))]
impl DirHandle {
    pub(super) fn stat(&self) -> std::io::Result<Stat> {
        Ok(Stat::of(&std::fs::symlink_metadata(&self.path)?))
    }

    pub(super) fn stat_at(&self, name: &OsStr) -> std::io::Result<(Option<NodeKind>, Stat)> {
        let m = std::fs::symlink_metadata(self.path.join(name))?;
        Ok((kind_of_meta(&m), Stat::of(&m)))
    }
}

#[cfg(not(unix))]
impl OpenDir {
    pub(super) fn entries(&self, mut err: impl FnMut(std::io::Error)) -> Entries {
        let mut out = Entries::default();
        let rd = match std::fs::read_dir(&self.handle.path) {
            Ok(rd) => rd,
            Err(e) => {
                err(e);
                return out;
            }
        };
        for e in rd {
            match e {
                Ok(e) => {
                    let kind = match e.file_type() {
                        Ok(t) if t.is_dir() => EntryKind::Node(NodeKind::Dir),
                        Ok(t) if t.is_symlink() => EntryKind::Node(NodeKind::Symlink),
                        Ok(t) if t.is_file() => EntryKind::Node(NodeKind::File),
                        Ok(_) => EntryKind::Other,
                        Err(_) => EntryKind::Unknown,
                    };
                    out.list.push((e.file_name(), kind));
                }
                Err(e) => {
                    err(e);
                    break;
                }
            }
        }
        out
    }

    pub(super) fn open_file(&self, name: &OsStr) -> std::io::Result<Option<(std::fs::File, Stat)>> {
        let path = self.handle.path.join(name);
        if kind_of_meta(&std::fs::symlink_metadata(&path)?) != Some(NodeKind::File) {
            return Ok(None);
        }
        let file = std::fs::File::open(&path)?;
        let m = file.metadata()?;
        Ok(Some((file, Stat::of(&m))))
    }
}
