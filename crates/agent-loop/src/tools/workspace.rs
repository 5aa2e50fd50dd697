//! The workspace as the file tools see it: every path resolved beneath the root through open
//! directory handles, so no path, `..` or symbolic link reaches outside it.
//!
//! Resolution works like `openat2(RESOLVE_BENEATH)` or cap-std, and not by comparing strings:
//! starting from a handle on the root, each component is looked up in the directory handle
//! before it without following links (`fstatat(AT_SYMLINK_NOFOLLOW)`), directories are opened
//! with `O_NOFOLLOW | O_DIRECTORY`, and the final file with `O_NOFOLLOW`. `..` pops the stack of
//! handles and is refused at the root. A symbolic link is read and its target resolved the same
//! way from the link's directory, so a link that stays inside the workspace works and one that
//! leaves it (`../..`, an absolute target elsewhere) is refused. Because every step opens
//! relative to a handle already checked and never follows a link, renaming or replacing a
//! component while a tool runs can make the tool fail but cannot move it outside.
//!
//! An absolute path is accepted only if it names a place under the root (as given or
//! canonical); it is then resolved like the relative rest.
//!
//! Writes are refused anywhere in `.git` or `.merkle` (compared without case, for file systems
//! that ignore it), wherever in the workspace they are.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::error::{Error, Result};

/// Symbolic links followed in one resolution before giving up, as Linux does.
const MAX_LINKS: usize = 40;

/// Folders tools may read but never change.
const PROTECTED: [&str; 2] = [".git", ".merkle"];

/// A workspace root held open, against which tool paths are resolved.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    canonical: PathBuf,
    handle: OwnedFd,
}

/// What kind of thing a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

/// A directory entry as [`Workspace::list`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub kind: EntryKind,
}

impl Workspace {
    /// Opens the workspace at `root`, which must be a directory.
    pub fn open(root: &Path) -> Result<Self> {
        let handle = rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| Error::io(root, e.into()))?;
        let canonical = root.canonicalize().map_err(|e| Error::io(root, e))?;
        Ok(Self {
            root: root.to_owned(),
            canonical,
            handle,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Reads the file at `path`, refusing one larger than `limit` bytes.
    pub fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>> {
        let resolved = self.resolve(path, false)?;
        let (parent, name) = resolved.existing(path, self)?;
        let file = File::from(
            rustix::fs::openat(
                parent,
                name,
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| self.errno(path, e))?,
        );
        let size = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if size > limit {
            return Err(Error::TooLarge {
                path: resolved.display(),
                size,
                limit,
            });
        }
        let mut bytes = Vec::with_capacity(size as usize);
        file.take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(path, e))?;
        Ok(bytes)
    }

    /// Replaces (or creates) the file at `path` with `bytes`, creating missing folders. The
    /// new content goes to a temporary file beside it that is renamed over it, so a reader
    /// never sees half of it; an existing file keeps its permissions.
    pub fn write(&self, path: &str, bytes: &[u8]) -> Result<String> {
        let resolved = self.resolve(path, true)?;
        let Some(name) = resolved.name.as_deref() else {
            return Err(Error::IsADirectory { path: path.into() });
        };
        resolved.check_writable(path)?;
        let mode = match resolved.kind {
            Some(FileType::RegularFile) => resolved.mode,
            Some(FileType::Directory) => {
                return Err(Error::IsADirectory {
                    path: resolved.display(),
                });
            }
            Some(_) => {
                return Err(Error::NotAFile {
                    path: resolved.display(),
                });
            }
            None => None,
        };
        let parent = resolved.parent(self);
        let temp = temp_name(name);
        if let Err(e) = write_then_rename(parent, &temp, name, mode, bytes) {
            let _ = rustix::fs::unlinkat(parent, &temp, AtFlags::empty());
            return Err(match Errno::from_io_error(&e) {
                Some(errno) => self.errno(path, errno),
                None => Error::io(self.root.join(path), e),
            });
        }
        Ok(resolved.display())
    }

    /// The entries of the folder at `path`, sorted by name.
    pub fn list(&self, path: &str) -> Result<(String, Vec<DirEntry>)> {
        let resolved = self.resolve(path, false)?;
        let dir = match (&resolved.name, resolved.kind) {
            (None, _) => rustix::fs::openat(
                &self.handle,
                ".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            ),
            (Some(name), Some(FileType::Directory)) => rustix::fs::openat(
                resolved.parent(self),
                name,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ),
            (Some(_), None) => {
                return Err(Error::NoSuchPath { path: path.into() });
            }
            (Some(_), Some(_)) => {
                return Err(Error::NotADirectory {
                    path: resolved.display(),
                });
            }
        }
        .map_err(|e| self.errno(path, e))?;
        let mut entries = Vec::new();
        for entry in rustix::fs::Dir::read_from(&dir).map_err(|e| self.errno(path, e))? {
            let entry = entry.map_err(|e| self.errno(path, e))?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::RegularFile => EntryKind::File,
                FileType::Directory => EntryKind::Dir,
                FileType::Symlink => EntryKind::Symlink,
                // Some file systems do not report types in directory entries.
                FileType::Unknown => {
                    match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(stat) => kind_of(FileType::from_raw_mode(stat.st_mode)),
                        Err(_) => EntryKind::Other,
                    }
                }
                _ => EntryKind::Other,
            };
            entries.push(DirEntry {
                name: name.to_string_lossy().into_owned(),
                kind,
            });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok((resolved.display(), entries))
    }

    /// Where `path` leads inside the workspace, as a relative path with `/` (`.` for the
    /// root), and what it names there (`None` if nothing).
    pub fn locate(&self, path: &str) -> Result<(String, Option<EntryKind>)> {
        let resolved = self.resolve(path, false)?;
        Ok((resolved.display(), resolved.kind.map(kind_of)))
    }

    /// Walks `path` beneath the root; see the module documentation. With `create`, missing
    /// folders before the last component are made.
    fn resolve(&self, path: &str, create: bool) -> Result<Resolved> {
        let mut pending = self.components(path, Path::new(path))?;
        let mut dirs: Vec<OwnedFd> = Vec::new();
        let mut names: Vec<OsString> = Vec::new();
        let mut links = 0;
        while let Some(component) = pending.pop_front() {
            if component == ".." {
                if names.pop().is_none() {
                    return Err(Error::OutsideWorkspace { path: path.into() });
                }
                dirs.pop();
                continue;
            }
            let parent = dirs.last().map_or(self.handle.as_fd(), AsFd::as_fd);
            let stat = match rustix::fs::statat(parent, &component, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => Some(stat),
                Err(Errno::NOENT) => None,
                Err(e) => return Err(self.errno(path, e)),
            };
            let last = pending.is_empty();
            let Some(stat) = stat else {
                if last {
                    return Ok(Resolved::new(dirs, names, Some(component), None, None));
                }
                // Everything from here on is created, so all of it must be plain names that
                // tools may write; checked before the first folder is made.
                if !create || pending.iter().any(|c| c == "..") {
                    return Err(Error::NoSuchPath { path: path.into() });
                }
                let mut to_be = names.clone();
                to_be.push(component.clone());
                to_be.extend(pending.iter().cloned());
                check_writable(&to_be, path)?;
                match rustix::fs::mkdirat(parent, &component, Mode::from_raw_mode(0o777)) {
                    // Someone else made it meanwhile: look again.
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(self.errno(path, e)),
                }
                pending.push_front(component);
                continue;
            };
            let kind = FileType::from_raw_mode(stat.st_mode);
            match kind {
                FileType::Symlink => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(Error::SymlinkLoop { path: path.into() });
                    }
                    let target = rustix::fs::readlinkat(parent, &component, Vec::new())
                        .map_err(|e| self.errno(path, e))?;
                    let target = Path::new(OsStr::from_bytes(target.as_bytes()));
                    let mut expanded = self.components(path, target)?;
                    if target.is_absolute() {
                        dirs.clear();
                        names.clear();
                    }
                    expanded.extend(pending);
                    pending = expanded;
                }
                FileType::Directory if !last => {
                    let dir = rustix::fs::openat(
                        parent,
                        &component,
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .map_err(|e| self.errno(path, e))?;
                    dirs.push(dir);
                    names.push(component);
                }
                _ if !last => {
                    names.push(component);
                    return Err(Error::NotADirectory {
                        path: display(&names),
                    });
                }
                kind => {
                    let mode = Mode::from_raw_mode(stat.st_mode & 0o7777);
                    return Ok(Resolved::new(
                        dirs,
                        names,
                        Some(component),
                        Some(kind),
                        Some(mode),
                    ));
                }
            }
        }
        // The path ended at a folder on the stack (`.`, `a/..`, `a/b/`): name it by its parent.
        match names.pop() {
            None => Ok(Resolved::new(
                dirs,
                names,
                None,
                Some(FileType::Directory),
                None,
            )),
            Some(name) => {
                dirs.pop();
                Ok(Resolved::new(
                    dirs,
                    names,
                    Some(name),
                    Some(FileType::Directory),
                    None,
                ))
            }
        }
    }

    /// The components of `path` (from the input, or a link's target) to resolve from the
    /// root if absolute, else from where the resolution stands.
    fn components(&self, input: &str, path: &Path) -> Result<VecDeque<OsString>> {
        let relative = if path.is_absolute() {
            path.strip_prefix(&self.root)
                .or_else(|_| path.strip_prefix(&self.canonical))
                .map_err(|_| Error::OutsideWorkspace { path: input.into() })?
        } else {
            path
        };
        let mut components = VecDeque::new();
        for component in relative.components() {
            match component {
                Component::Normal(name) => components.push_back(name.to_owned()),
                Component::ParentDir => components.push_back(OsString::from("..")),
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) => {
                    return Err(Error::OutsideWorkspace { path: input.into() });
                }
            }
        }
        Ok(components)
    }

    fn errno(&self, path: &str, errno: Errno) -> Error {
        match errno {
            Errno::NOENT => Error::NoSuchPath { path: path.into() },
            // O_NOFOLLOW met a link that appeared after the lookup.
            Errno::LOOP => Error::SymlinkLoop { path: path.into() },
            Errno::NOTDIR => Error::NotADirectory { path: path.into() },
            Errno::ISDIR => Error::IsADirectory { path: path.into() },
            _ => Error::io(self.root.join(path), errno.into()),
        }
    }
}

/// A path resolved beneath the root: the open folders leading to it and its last name.
struct Resolved {
    /// Handles on the folders between the root (excluded) and the entry.
    dirs: Vec<OwnedFd>,
    names: Vec<OsString>,
    /// `None` for the root itself.
    name: Option<OsString>,
    /// `None` if nothing exists there yet.
    kind: Option<FileType>,
    mode: Option<Mode>,
}

impl Resolved {
    fn new(
        dirs: Vec<OwnedFd>,
        names: Vec<OsString>,
        name: Option<OsString>,
        kind: Option<FileType>,
        mode: Option<Mode>,
    ) -> Self {
        Self {
            dirs,
            names,
            name,
            kind,
            mode,
        }
    }

    fn parent<'a>(&'a self, workspace: &'a Workspace) -> BorrowedFd<'a> {
        self.dirs
            .last()
            .map_or(workspace.handle.as_fd(), AsFd::as_fd)
    }

    /// The parent handle and name of an existing regular file.
    fn existing<'a>(
        &'a self,
        input: &str,
        workspace: &'a Workspace,
    ) -> Result<(BorrowedFd<'a>, &'a OsStr)> {
        match (&self.name, self.kind) {
            (Some(name), Some(FileType::RegularFile)) => Ok((self.parent(workspace), name)),
            (_, None) => Err(Error::NoSuchPath { path: input.into() }),
            (_, Some(FileType::Directory)) => Err(Error::IsADirectory {
                path: self.display(),
            }),
            (_, Some(_)) => Err(Error::NotAFile {
                path: self.display(),
            }),
        }
    }

    fn full_names(&self) -> Vec<OsString> {
        let mut names = self.names.clone();
        names.extend(self.name.clone());
        names
    }

    fn check_writable(&self, input: &str) -> Result<()> {
        check_writable(&self.full_names(), input)
    }

    /// The workspace-relative path with `/`, `.` for the root.
    fn display(&self) -> String {
        display(&self.full_names())
    }
}

fn check_writable(names: &[OsString], input: &str) -> Result<()> {
    for name in names {
        for protected in PROTECTED {
            if name.as_bytes().eq_ignore_ascii_case(protected.as_bytes()) {
                return Err(Error::Protected {
                    path: input.into(),
                    protected,
                });
            }
        }
    }
    Ok(())
}

fn display(names: &[OsString]) -> String {
    if names.is_empty() {
        return ".".to_owned();
    }
    names
        .iter()
        .map(|n| n.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn kind_of(kind: FileType) -> EntryKind {
    match kind {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Dir,
        FileType::Symlink => EntryKind::Symlink,
        _ => EntryKind::Other,
    }
}

/// Writes `bytes` to a new file `temp` in `parent` with `mode` (if given) and renames it to
/// `name`.
fn write_then_rename(
    parent: BorrowedFd<'_>,
    temp: &OsStr,
    name: &OsStr,
    mode: Option<Mode>,
    bytes: &[u8],
) -> io::Result<()> {
    let fd = rustix::fs::openat(
        parent,
        temp,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
    )?;
    if let Some(mode) = mode {
        rustix::fs::fchmod(&fd, mode)?;
    }
    let mut file = File::from(fd);
    file.write_all(bytes)?;
    file.sync_data()?;
    rustix::fs::renameat(parent, temp, parent, name)?;
    Ok(())
}

/// Distinguishes temporary files of concurrent writes within one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn temp_name(name: &OsStr) -> OsString {
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!(
        ".merkle-tmp-{}-{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    temp
}
