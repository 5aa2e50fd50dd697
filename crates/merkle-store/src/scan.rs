//! Walking the workspace: which files belong to the tree, their stat, and their content hashes.
//!
//! The walk honours .gitignore the way `git ls-files --cached --others --exclude-standard` does
//! for a checkout with no tracked-but-ignored files: nested .gitignore files, .git/info/exclude
//! and core.excludesFile; ripgrep's own `.ignore` files are not read. `.git`, the workspace's
//! `.merkle` folder and the store folder are never entered. Symlinks are recorded, never
//! followed.
//!
//! Whether a file must be hashed again is decided from the last scan's stat (size, mtime, ctime,
//! inode, mode) with git's racy-timestamp rule, made stricter: the stamp is taken when a scan
//! starts, not when it ends, so an entry whose mtime is not older than the scan that recorded it
//! is hashed again next time. A file changed while it was being scanned can then never hide
//! behind an unchanged stat.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::hash::{self, Hash};
use crate::node::{NodeKind, Stat, TreeEntry};

/// Files at least this large are hashed from a memory map with all cores.
const RAYON_MIN: u64 = 1 << 20;
/// Files at least this large are hashed from a memory map.
const MMAP_MIN: u64 = 64 << 10;

/// A leaf found on disk.
#[derive(Debug)]
pub(crate) struct Leaf {
    pub(crate) path: String,
    pub(crate) kind: NodeKind,
    pub(crate) content_hash: Hash,
    pub(crate) stat: Stat,
}

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    pub(crate) leaves: Vec<Leaf>,
    /// Every directory below the root (the root itself is implied).
    pub(crate) dirs: Vec<String>,
    /// Files that could not be read or named, with the reason.
    pub(crate) warnings: Vec<String>,
    /// How many leaves were hashed rather than taken from the last scan.
    pub(crate) hashed: u64,
    pub(crate) hashed_bytes: u64,
}

/// How to walk.
pub(crate) struct WalkConfig<'a> {
    pub(crate) root: &'a Path,
    /// Folders never entered besides `.git` (the workspace's `.merkle`, the store).
    pub(crate) skip: Vec<PathBuf>,
    /// The last scan's entries, to skip hashing files whose stat has not changed.
    pub(crate) prev: &'a HashMap<String, TreeEntry>,
    /// The last scan's start stamp (ns); entries not older than it are hashed again.
    pub(crate) stamp: Option<i64>,
    /// Hash every file regardless of the last scan.
    pub(crate) force: bool,
    pub(crate) progress: Option<&'a (dyn Fn(u64) + Sync)>,
}

/// Walks the workspace in parallel and hashes what needs hashing.
pub(crate) fn walk(cfg: &WalkConfig<'_>) -> Walked {
    let skip = cfg.skip.clone();
    let mut builder = ignore::WalkBuilder::new(cfg.root);
    builder
        .hidden(false)
        .ignore(false)
        .parents(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| {
            e.file_name() != ".git" && !skip.iter().any(|s| s.as_path() == e.path())
        });
    let out = Mutex::new(Walked::default());
    let seen = AtomicU64::new(0);
    builder.build_parallel().run(|| {
        let mut local = Local {
            out: &out,
            found: Walked::default(),
        };
        let seen = &seen;
        Box::new(move |entry| {
            match entry {
                Ok(entry) => visit(cfg, &entry, &mut local.found),
                Err(e) => local.found.warnings.push(e.to_string()),
            }
            let n = seen.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(p) = cfg.progress.filter(|_| n.is_multiple_of(1024)) {
                p(n);
            }
            if local.found.leaves.len() >= 4096 {
                local.flush();
            }
            ignore::WalkState::Continue
        })
    });
    let mut walked = out.into_inner().unwrap_or_else(|e| e.into_inner());
    walked.leaves.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    walked.dirs.sort_unstable();
    walked.warnings.sort();
    if let Some(p) = cfg.progress {
        p(seen.load(Ordering::Relaxed));
    }
    walked
}

/// One walker thread's findings, handed to the shared result in chunks and, when the walker
/// drops the thread's visitor, all of the rest.
struct Local<'a> {
    out: &'a Mutex<Walked>,
    found: Walked,
}

impl Local<'_> {
    fn flush(&mut self) {
        let mut o = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let f = &mut self.found;
        o.leaves.append(&mut f.leaves);
        o.dirs.append(&mut f.dirs);
        o.warnings.append(&mut f.warnings);
        o.hashed += std::mem::take(&mut f.hashed);
        o.hashed_bytes += std::mem::take(&mut f.hashed_bytes);
    }
}

impl Drop for Local<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

fn visit(cfg: &WalkConfig<'_>, entry: &ignore::DirEntry, local: &mut Walked) {
    if entry.depth() == 0 {
        return;
    }
    let Some(path) = rel_path(cfg.root, entry.path()) else {
        local.warnings.push(format!(
            "{}: skipped: the path is not valid UTF-8",
            entry.path().display()
        ));
        return;
    };
    let Some(ft) = entry.file_type() else {
        return;
    };
    if ft.is_dir() {
        local.dirs.push(path);
        return;
    }
    let meta = match entry.path().symlink_metadata() {
        Ok(m) => m,
        Err(e) => {
            local.warnings.push(format!("{path}: skipped: {e}"));
            return;
        }
    };
    let stat = Stat::of(&meta);
    let kind = if ft.is_symlink() {
        NodeKind::Symlink
    } else if ft.is_file() {
        NodeKind::File
    } else {
        local
            .warnings
            .push(format!("{path}: skipped: not a file, directory or symlink"));
        return;
    };
    let reusable = cfg.prev.get(&path).filter(|p| {
        !cfg.force
            && p.kind == kind
            && p.stat == stat
            && cfg.stamp.is_some_and(|s| stat.mtime_ns < s)
    });
    let content_hash = match reusable {
        Some(p) => p.content_hash,
        None => {
            let hashed = match kind {
                NodeKind::Symlink => symlink_target(entry.path()).map(|t| hash::content_hash(&t)),
                _ => hash_file(entry.path(), stat.size),
            };
            match hashed {
                Ok(h) => {
                    local.hashed += 1;
                    local.hashed_bytes += stat.size;
                    h
                }
                Err(e) => {
                    local.warnings.push(format!("{path}: skipped: {e}"));
                    return;
                }
            }
        }
    };
    local.leaves.push(Leaf {
        path,
        kind,
        content_hash,
        stat,
    });
}

/// The workspace-relative path with `/` separators, or `None` if it is not UTF-8.
fn rel_path(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut out = String::new();
    for (i, c) in rel.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(c.as_os_str().to_str()?);
    }
    Some(out)
}

/// A symlink's target as raw bytes, so that it hashes the same whatever its encoding.
fn symlink_target(path: &Path) -> std::io::Result<Vec<u8>> {
    let target = std::fs::read_link(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(target.as_os_str().as_bytes().to_vec())
    }
    #[cfg(not(unix))]
    {
        // Windows targets use `\`; hash them with `/` so a tree hashes the same on every OS.
        Ok(target.to_string_lossy().replace('\\', "/").into_bytes())
    }
}

/// blake3 of a file's content, from a memory map with all cores for large files.
pub(crate) fn hash_file(path: &Path, size: u64) -> std::io::Result<Hash> {
    let mut h = blake3::Hasher::new();
    if size >= RAYON_MIN {
        h.update_mmap_rayon(path)?;
    } else if size >= MMAP_MIN {
        h.update_mmap(path)?;
    } else {
        h.update(&std::fs::read(path)?);
    }
    Ok(Hash(*h.finalize().as_bytes()))
}
