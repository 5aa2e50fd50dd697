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
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rayon::prelude::*;

use crate::hash::{self, Hash};
use crate::node::{NodeKind, PathMap, PathSet, Stat, TreeEntry};

/// Files at least this large are hashed from a memory map with all cores.
const RAYON_MIN: u64 = 1 << 20;
/// Smaller files are read this much at a time.
const READ_PIECE: usize = 256 << 10;

/// Where a scan is, for progress displays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Walking: this many entries seen so far.
    Walked(u64),
    /// Hashing the files whose stat changed: `done` of `total`.
    Hashed { done: u64, total: u64 },
}

/// A leaf found on disk. `content_hash` is filled in by [`hash_leaves`].
#[derive(Debug)]
pub(crate) struct Leaf {
    pub(crate) path: String,
    pub(crate) kind: NodeKind,
    pub(crate) content_hash: Hash,
    pub(crate) stat: Stat,
    /// Whether the hash came from the last scan (same kind and stat, not racy).
    pub(crate) reused: bool,
}

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    pub(crate) leaves: Vec<Leaf>,
    /// Every directory below the root (the root itself is implied).
    pub(crate) dirs: Vec<String>,
    /// Entries that could not be read or named, with the reason.
    pub(crate) warnings: Vec<String>,
    /// How many leaves were hashed rather than taken from the last scan.
    pub(crate) hashed: u64,
    pub(crate) hashed_bytes: u64,
}

/// Walks the workspace in parallel, recording each entry's kind and stat; hashes nothing.
/// `skip` lists folders never entered besides `.git` (the workspace's `.merkle`, the store).
///
/// The walk is our own rather than the `ignore` crate's walker (whose gitignore matchers it
/// still uses): each directory is read once, its `.gitignore` is found among its entries rather
/// than probed for, and files are stat'ed relative to the open directory
/// (`DirEntry::metadata`), so the kernel never walks a whole path per file. Directories are
/// spread over the rayon pool.
pub(crate) fn walk(
    root: &Path,
    skip: Vec<PathBuf>,
    progress: Option<&(dyn Fn(Progress) + Sync)>,
) -> Walked {
    let out = Mutex::new(Walked::default());
    let seen = AtomicU64::new(0);
    let ctx = WalkCtx {
        skip,
        progress,
        seen: &seen,
        out: &out,
        base: base_ignores(root),
        deep: true,
        compiled: Mutex::default(),
    };
    rayon::scope(|s| walk_dir(s, &ctx, root.to_path_buf(), String::new(), None));
    // In no particular order: every consumer keys by path or sorts what it reports.
    let walked = out.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = progress {
        p(Progress::Walked(seen.load(Ordering::Relaxed)));
    }
    walked
}

/// Reads one directory below the root, `rel` (a directory of the tree, not ignored): its
/// leaves and subdirectories, and with `deep` everything below them too. The .gitignore files
/// of the root and of every directory above `rel` apply as they do in a full [`walk`]. A
/// directory that cannot be read is a warning, as in a walk; one that is gone (or is no longer
/// a directory) is `Err`.
pub(crate) fn walk_below(
    root: &Path,
    rel: &str,
    deep: bool,
    skip: Vec<PathBuf>,
) -> std::io::Result<Walked> {
    let out = Mutex::new(Walked::default());
    let seen = AtomicU64::new(0);
    let ctx = WalkCtx {
        skip,
        progress: None,
        seen: &seen,
        out: &out,
        base: base_ignores(root),
        deep,
        compiled: Mutex::default(),
    };
    // The chain of .gitignore files above `rel`, the root's first (`rel`'s own is read by
    // walk_dir among its entries); and every folder on the way must be a real one, not a
    // symlink to one: the tree never goes through a symlink.
    let mut chain: Option<Arc<IgnoreChain>> = None;
    let mut abs = root.to_path_buf();
    let mut walked_rel = String::new();
    for part in rel.split('/').filter(|p| !p.is_empty()) {
        let gitignore = abs.join(".gitignore");
        if gitignore.is_file() {
            chain = Some(Arc::new(IgnoreChain {
                here: ctx.gitignore(&gitignore),
                strip: strip_len(&walked_rel),
                parent: chain,
            }));
        }
        abs.push(part);
        if !walked_rel.is_empty() {
            walked_rel.push('/');
        }
        walked_rel.push_str(part);
        if !std::fs::symlink_metadata(&abs)?.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("{} is not a directory", abs.display()),
            ));
        }
    }
    rayon::scope(|s| walk_dir(s, &ctx, abs, rel.to_owned(), chain));
    Ok(out.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// What every directory's walk shares.
struct WalkCtx<'a> {
    skip: Vec<PathBuf>,
    progress: Option<&'a (dyn Fn(Progress) + Sync)>,
    seen: &'a AtomicU64,
    out: &'a Mutex<Walked>,
    /// Matchers below every .gitignore, lowest precedence last: the .gitignore files of the
    /// root's ancestors inside its repository, then .git/info/exclude, then core.excludesFile;
    /// each with the root's path relative to the matcher's folder ("" when it is the root).
    base: Vec<(Gitignore, String)>,
    /// Whether subdirectories are walked too, or only listed.
    deep: bool,
    /// The .gitignore matchers built so far, by file content.
    compiled: Mutex<std::collections::HashMap<Vec<u8>, Arc<Gitignore>, rustc_hash::FxBuildHasher>>,
}

/// The .gitignore matchers in force in a directory: its own, then its ancestors'.
struct IgnoreChain {
    /// Built with "." as its root (see [`gitignore_at_dot`]): it matches paths relative to the
    /// folder of its file.
    here: Arc<Gitignore>,
    /// How many leading bytes of a workspace path make the folder of the file and its slash
    /// (0 at the root): what is left is the path relative to that folder.
    strip: usize,
    parent: Option<Arc<IgnoreChain>>,
}

/// A .gitignore file's matcher with "." as its root, to be given paths relative to the file's
/// folder. With its folder as the root, the ignore crate strips that prefix from every path it
/// is given, comparing paths component by component; on a tree with many .gitignore files that
/// cost more than the matching itself. And a matcher rooted at "." depends on the file's
/// content alone, so files with the same content (a vendored tree has dozens) share one. An
/// unreadable file is an empty matcher and a bad line is skipped, as `Gitignore::new` does.
fn gitignore_at_dot(file: &Path) -> Gitignore {
    std::fs::read(file).map_or_else(|_| Gitignore::empty(), |c| gitignore_from(&c))
}

/// A matcher rooted at "." for the content of an ignore file, read as the ignore crate reads a
/// file: line by line (`\n` or `\r\n`), a leading byte-order mark dropped, up to the first
/// line that is not UTF-8.
fn gitignore_from(content: &[u8]) -> Gitignore {
    let mut b = GitignoreBuilder::new(".");
    for (i, line) in content.split(|&c| c == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(mut line) = std::str::from_utf8(line) else {
            break;
        };
        if i == 0 {
            line = line.trim_start_matches('\u{feff}');
        }
        // A bad line is skipped; the others still count.
        let _ = b.add_line(None, line);
    }
    b.build().unwrap_or_else(|_| Gitignore::empty())
}

impl WalkCtx<'_> {
    /// The matcher of the .gitignore file `file`, shared with every other file of the same
    /// content met in this walk.
    fn gitignore(&self, file: &Path) -> Arc<Gitignore> {
        let Ok(content) = std::fs::read(file) else {
            return Arc::new(Gitignore::empty());
        };
        let lock = || self.compiled.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(gi) = lock().get(&content) {
            return Arc::clone(gi);
        }
        // Built outside the lock: another thread may build the same one meanwhile, which only
        // costs the time.
        let gi = Arc::new(gitignore_from(&content));
        lock().insert(content, Arc::clone(&gi));
        gi
    }
}

/// The bytes of a workspace path below folder `rel` that name `rel` and its slash.
fn strip_len(rel: &str) -> usize {
    if rel.is_empty() { 0 } else { rel.len() + 1 }
}

/// The matchers that apply below the root before any .gitignore inside it, each with the root's
/// path relative to the matcher's folder.
fn base_ignores(root: &Path) -> Vec<(Gitignore, String)> {
    // The root's path relative to `dir`, one of its ancestors.
    let below = |dir: &Path| {
        root.strip_prefix(dir)
            .ok()
            .and_then(Path::to_str)
            .unwrap_or_default()
            .to_owned()
    };
    let mut base = Vec::new();
    // A root below a repository's top still honours the .gitignore files above it.
    let mut repo_top = None;
    for dir in root.ancestors() {
        if dir != root && dir.join(".gitignore").is_file() {
            base.push((gitignore_at_dot(&dir.join(".gitignore")), below(dir)));
        }
        if dir.join(".git").exists() {
            repo_top = Some(dir.to_path_buf());
            break;
        }
    }
    if repo_top.is_none() {
        // Not in a repository: only the root's own .gitignore files count.
        base.clear();
    }
    let top = repo_top.unwrap_or_else(|| root.to_path_buf());
    let exclude = top.join(".git").join("info").join("exclude");
    if exclude.is_file() {
        let gi = gitignore_at_dot(&exclude);
        if !gi.is_empty() {
            base.push((gi, below(&top)));
        }
    }
    let global = GitignoreBuilder::new(".").build_global().0;
    if !global.is_empty() {
        base.push((global, below(&top)));
    }
    base
}

/// Whether `path` (a workspace path) is ignored: the deepest .gitignore with an opinion
/// decides, then the base matchers in order. `buf` is the caller's, for the base matchers'
/// paths.
fn ignored(
    ctx: &WalkCtx<'_>,
    chain: Option<&Arc<IgnoreChain>>,
    path: &str,
    is_dir: bool,
    buf: &mut String,
) -> bool {
    let mut link = chain;
    while let Some(c) = link {
        match c.here.matched(&path[c.strip..], is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => link = c.parent.as_ref(),
        }
    }
    for (gi, below) in &ctx.base {
        let relative = if below.is_empty() {
            path
        } else {
            buf.clear();
            buf.push_str(below);
            buf.push('/');
            buf.push_str(path);
            buf.as_str()
        };
        match gi.matched(relative, is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    false
}

fn walk_dir<'s>(
    scope: &rayon::Scope<'s>,
    ctx: &'s WalkCtx<'s>,
    abs: PathBuf,
    rel: String,
    parent: Option<Arc<IgnoreChain>>,
) {
    let mut found = Walked::default();
    // Each entry with its name, taken once: `file_name` allocates.
    let entries: Vec<(std::fs::DirEntry, std::ffi::OsString)> = match std::fs::read_dir(&abs) {
        Ok(rd) => rd
            .filter_map(|e| match e {
                Ok(e) => {
                    let name = e.file_name();
                    Some((e, name))
                }
                Err(err) => {
                    found.warnings.push(format!("{}: {err}", display(&rel)));
                    None
                }
            })
            .collect(),
        Err(err) => {
            found
                .warnings
                .push(format!("{}: skipped: {err}", display(&rel)));
            flush(ctx.out, &mut found);
            return;
        }
    };
    // This directory's own .gitignore, found among its entries rather than probed for.
    let chain = if entries.iter().any(|(_, name)| name == ".gitignore") {
        Some(Arc::new(IgnoreChain {
            here: ctx.gitignore(&abs.join(".gitignore")),
            strip: strip_len(&rel),
            parent,
        }))
    } else {
        parent
    };
    let n = entries.len() as u64;
    let mut ignore_buf = String::new();
    for (entry, name) in entries {
        let Some(name_str) = name.to_str() else {
            found.warnings.push(format!(
                "{}: skipped: the path is not valid UTF-8",
                abs.join(&name).display()
            ));
            continue;
        };
        if name_str == ".git" {
            continue;
        }
        let path = if rel.is_empty() {
            name_str.to_owned()
        } else {
            let mut p = String::with_capacity(rel.len() + 1 + name_str.len());
            p.push_str(&rel);
            p.push('/');
            p.push_str(name_str);
            p
        };
        let ft = match entry.file_type() {
            Ok(t) => t,
            Err(err) => {
                found.warnings.push(format!("{path}: skipped: {err}"));
                continue;
            }
        };
        if (chain.is_some() || !ctx.base.is_empty())
            && ignored(ctx, chain.as_ref(), &path, ft.is_dir(), &mut ignore_buf)
        {
            continue;
        }
        if ft.is_dir() {
            let child_abs = abs.join(&name);
            if ctx.skip.iter().any(|s| s == &child_abs) {
                continue;
            }
            found.dirs.push(path.clone());
            if ctx.deep {
                let chain = chain.clone();
                scope.spawn(move |s| walk_dir(s, ctx, child_abs, path, chain));
            }
            continue;
        }
        let kind = if ft.is_symlink() {
            NodeKind::Symlink
        } else if ft.is_file() {
            NodeKind::File
        } else {
            found
                .warnings
                .push(format!("{path}: skipped: not a file, directory or symlink"));
            continue;
        };
        // Relative to the open directory: no path walk in the kernel.
        match entry.metadata() {
            Ok(m) => found.leaves.push(Leaf {
                path,
                kind,
                content_hash: Hash([0; 32]),
                stat: Stat::of(&m),
                reused: false,
            }),
            Err(err) => found.warnings.push(format!("{path}: skipped: {err}")),
        }
    }
    let seen = ctx.seen.fetch_add(n, Ordering::Relaxed) + n;
    if let Some(p) = ctx.progress {
        p(Progress::Walked(seen));
    }
    flush(ctx.out, &mut found);
}

fn display(rel: &str) -> &str {
    if rel.is_empty() { "." } else { rel }
}

/// Hands one directory's findings to the shared result.
fn flush(out: &Mutex<Walked>, found: &mut Walked) {
    let mut o = out.lock().unwrap_or_else(|e| e.into_inner());
    o.leaves.append(&mut found.leaves);
    o.dirs.append(&mut found.dirs);
    o.warnings.append(&mut found.warnings);
}

/// The entries of the last scans that an unchanged stat does not vouch for: files whose last
/// change (mtime, or ctime if later) was not older than the start of the scan that hashed them,
/// which may have been written again in the same clock tick after they were hashed.
pub(crate) enum Racy<'a> {
    /// Every entry that changed no earlier than this stamp, the last scan's start (a store
    /// written before racy paths were recorded; `None`: trust nothing).
    Since(Option<i64>),
    /// Exactly these paths: each scan records the ones it hashed racily and keeps those it
    /// did not look at, so a scan of part of the tree loses nothing of the rest.
    Paths(&'a PathSet),
}

impl Racy<'_> {
    fn trusts(&self, path: &str, stat: &Stat) -> bool {
        match self {
            Racy::Since(stamp) => stamp.is_some_and(|s| last_change(stat) < s),
            Racy::Paths(paths) => !paths.contains(path),
        }
    }
}

/// When a file last changed as far as its stat tells: its mtime, or its ctime when that is
/// later (a tool that writes and then restores the old mtime, like `cp -p` or `touch -r`,
/// cannot hold the ctime back).
fn last_change(stat: &Stat) -> i64 {
    stat.mtime_ns.max(stat.ctime_ns)
}

/// The racy paths after a scan that started at `stamp` and saw `seen` (and found `removed`
/// gone): the earlier ones it did not see, and those it saw that changed (mtime or ctime) no
/// earlier than its start. A full scan sees everything, so `earlier` does not matter to it.
pub(crate) fn racy_after<'a>(
    earlier: &PathSet,
    seen: impl IntoIterator<Item = &'a Leaf>,
    removed: impl Fn(&str) -> bool,
    stamp: i64,
) -> PathSet {
    let mut seen_paths = PathSet::default();
    let mut out = PathSet::default();
    for leaf in seen {
        // Only to filter `earlier`: a full scan has none, and need not copy every path.
        if !earlier.is_empty() {
            seen_paths.insert(leaf.path.clone());
        }
        if leaf.kind == NodeKind::File && last_change(&leaf.stat) >= stamp {
            out.insert(leaf.path.clone());
        }
    }
    out.extend(
        earlier
            .iter()
            .filter(|p| !seen_paths.contains(*p) && !removed(p))
            .cloned(),
    );
    out
}

/// How to decide which leaves to hash.
pub(crate) struct HashConfig<'a> {
    pub(crate) root: &'a Path,
    /// The last scan's entries, to skip hashing files whose stat has not changed.
    pub(crate) prev: &'a PathMap<TreeEntry>,
    /// Which entries of the last scan may not be trusted even with an unchanged stat.
    pub(crate) racy: Racy<'a>,
    /// Hash every file regardless of the last scan.
    pub(crate) force: bool,
    pub(crate) progress: Option<&'a (dyn Fn(Progress) + Sync)>,
}

/// Fills in every leaf's content hash: from the last scan where its stat is unchanged and not
/// racy, else by hashing, in parallel. Leaves that cannot be read are dropped with a warning.
pub(crate) fn hash_leaves(walked: &mut Walked, cfg: &HashConfig<'_>) {
    let mut todo = Vec::new();
    for (i, leaf) in walked.leaves.iter_mut().enumerate() {
        let reusable = cfg.prev.get(&leaf.path).filter(|p| {
            !cfg.force
                && p.kind == leaf.kind
                && p.stat == leaf.stat
                // A symlink cannot be rewritten in place (a new target is a new inode), so
                // only a file's mtime can be racy.
                && (leaf.kind == NodeKind::Symlink
                    || cfg.racy.trusts(&leaf.path, &leaf.stat))
        });
        match reusable {
            Some(p) => {
                leaf.content_hash = p.content_hash;
                leaf.reused = true;
            }
            None => todo.push(i),
        }
    }
    let total = todo.len() as u64;
    let done = AtomicU64::new(0);
    let results: Vec<(usize, std::io::Result<Hash>)> = todo
        .par_iter()
        // One read buffer per worker's run of files rather than an allocation per file.
        .map_init(Vec::new, |buf, &i| {
            let leaf = &walked.leaves[i];
            let path = cfg.root.join(&leaf.path);
            let r = match leaf.kind {
                NodeKind::Symlink => symlink_target(&path).map(|t| hash::content_hash(&t)),
                _ => hash_file_with(&path, leaf.stat.size, buf),
            };
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(p) = cfg.progress.filter(|_| n.is_multiple_of(256) || n == total) {
                p(Progress::Hashed { done: n, total });
            }
            (i, r)
        })
        .collect();
    let mut failed = Vec::new();
    for (i, r) in results {
        match r {
            Ok(h) => {
                let leaf = &mut walked.leaves[i];
                leaf.content_hash = h;
                walked.hashed += 1;
                walked.hashed_bytes += leaf.stat.size;
            }
            Err(e) => {
                walked
                    .warnings
                    .push(format!("{}: skipped: {e}", walked.leaves[i].path));
                failed.push(i);
            }
        }
    }
    if !failed.is_empty() {
        let mut idx = 0;
        walked.leaves.retain(|_| {
            let keep = failed.binary_search(&idx).is_err();
            idx += 1;
            keep
        });
    }
    walked.warnings.sort();
}

/// A symlink's target as raw bytes, so that it hashes the same whatever its encoding.
pub(crate) fn symlink_target(path: &Path) -> std::io::Result<Vec<u8>> {
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

/// blake3 of a file's content: from a memory map with all cores for large files; else read
/// into `buf` (the caller's, reused across files), in pieces the size of [`READ_PIECE`] so that
/// each is hashed while it is still in the cache.
///
/// Not `read_to_end`: it asks the kernel for the file's size and position again (a `statx` and
/// an `lseek` per file, which the walk's stat already answered), and a memory map of a file of
/// a few hundred KiB costs more than copying it: unmapping it flushes the other cores' TLBs.
fn hash_file_with(path: &Path, size: u64, buf: &mut Vec<u8>) -> std::io::Result<Hash> {
    use std::io::Read;
    let mut h = blake3::Hasher::new();
    if size >= RAYON_MIN {
        h.update_mmap_rayon(path)?;
        return Ok(Hash(*h.finalize().as_bytes()));
    }
    let mut file = std::fs::File::open(path)?;
    // One byte more than the walk's size, so that a file read whole is known to be at its end
    // without another read: a short read of a regular file is its end.
    let want = usize::try_from(size).unwrap_or(0).min(READ_PIECE) + 1;
    if buf.len() < want {
        buf.resize(want, 0);
    }
    let mut total = 0u64;
    loop {
        let n = match file.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        h.update(&buf[..n]);
        total += n as u64;
        // Everything the walk saw, in a short read: the end. A file that grew since is read
        // on, and one that changed at all has a new stat, which the next scan hashes again.
        if n < want && total >= size {
            break;
        }
    }
    Ok(Hash(*h.finalize().as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(path: &str, kind: NodeKind, mtime_ns: i64) -> Leaf {
        Leaf {
            path: path.to_owned(),
            kind,
            content_hash: Hash([0; 32]),
            stat: Stat {
                mtime_ns,
                ..Stat::default()
            },
            reused: false,
        }
    }

    #[test]
    fn racy_paths_keep_what_a_scan_did_not_see_and_settle_what_it_did() {
        let earlier: PathSet = ["a", "b", "c"].into_iter().map(str::to_owned).collect();
        let seen = [
            // Seen again, older than the scan: settled.
            leaf("b", NodeKind::File, 5),
            // Written as the scan started: racy now.
            leaf("d", NodeKind::File, 10),
            // A symlink is never rewritten in place.
            leaf("e", NodeKind::Symlink, 30),
            // An old mtime put back after a write: the ctime tells.
            Leaf {
                stat: Stat {
                    mtime_ns: 1,
                    ctime_ns: 12,
                    ..Stat::default()
                },
                ..leaf("f", NodeKind::File, 1)
            },
        ];
        let after = racy_after(&earlier, &seen, |p| p == "c", 10);
        let mut after: Vec<String> = after.into_iter().collect();
        after.sort();
        // a: not seen, still racy; c: gone.
        assert_eq!(after, ["a", "d", "f"]);
    }

    #[test]
    fn a_file_hashes_to_the_blake3_of_all_its_bytes_whatever_the_size_the_walk_saw() {
        let dir = std::env::temp_dir().join(format!("merkle-hash-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut buf = Vec::new();
        for len in [
            0,
            1,
            READ_PIECE - 1,
            READ_PIECE,
            READ_PIECE + 1,
            3 * READ_PIECE + 7,
            RAYON_MIN as usize + 5,
        ] {
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let path = dir.join(format!("f{len}"));
            std::fs::write(&path, &bytes).expect("write");
            let want = Hash(*blake3::hash(&bytes).as_bytes());
            let size = len as u64;
            // The size the walk saw, then a file that grew or shrank since.
            for seen in [size, size / 2, size + 100] {
                assert_eq!(
                    hash_file_with(&path, seen, &mut buf).expect("hash"),
                    want,
                    "{len} bytes, {seen} seen"
                );
            }
        }
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
