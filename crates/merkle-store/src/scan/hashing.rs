//! Hashing what the walk found: files in their directory as it reads them, the rest afterwards
//! (large ones from a memory map), symlink targets, and the racy-stat rule that says which
//! stats cannot be trusted.
//!
//! When every file is to be hashed (no last scan, or `--force`), the walk hashes each file
//! under 1 MiB as it meets it: opened by name (`O_NOFOLLOW | O_NONBLOCK`, so neither a symlink
//! nor a FIFO that took a file's place is followed or waited on), its stat from the open file,
//! read once.
use super::*;

/// Hashes the files `(name, path)` of `dir` as [`WalkOptions::hash_all`] says, into `found`:
/// each opened by name, its stat taken from the open file, and read whole if it is under
/// 1 MiB (a larger one keeps its stat and is hashed by [`hash_leaves`] from a memory map with
/// every core). A directory of many files shares them out over the pool.
pub(super) fn hash_in_dir(
    ctx: &WalkCtx<'_>,
    dir: &fsdir::OpenDir,
    files: Vec<(&std::ffi::OsStr, String)>,
    found: &mut Walked,
) {
    /// Files hashed in one run with one buffer.
    pub(super) const CHUNK: usize = 32;
    let hash_run = |run: Vec<(&std::ffi::OsStr, String)>| {
        let mut buf = ctx
            .bufs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        let out: Vec<Result<Leaf, String>> = run
            .into_iter()
            .map(|(name, path)| open_and_hash(dir, name, path, &mut buf))
            .collect();
        ctx.bufs.lock().unwrap_or_else(|e| e.into_inner()).push(buf);
        out
    };
    let results: Vec<Result<Leaf, String>> = if files.len() > CHUNK {
        files
            .into_par_iter()
            .chunks(CHUNK)
            .flat_map_iter(hash_run)
            .collect()
    } else {
        hash_run(files)
    };
    for r in results {
        match r {
            Ok(leaf) => {
                if leaf.hashed {
                    found.hashed += 1;
                    found.hashed_bytes += leaf.stat.size;
                }
                found.leaves.push(leaf);
            }
            Err(warning) => found.warnings.push(warning),
        }
    }
}

/// One file of [`hash_in_dir`]: its leaf, hashed unless it is large or no longer a file (a
/// symlink or a folder that took its place is stat'ed as it is now), or a warning.
fn open_and_hash(
    dir: &fsdir::OpenDir,
    name: &std::ffi::OsStr,
    path: String,
    buf: &mut Vec<u8>,
) -> Result<Leaf, String> {
    let skipped = |err: std::io::Error| format!("{path}: skipped: {err}");
    let leaf = |path, kind, stat, content_hash: Option<Hash>| Leaf {
        path,
        kind,
        content_hash: content_hash.unwrap_or(Hash([0; 32])),
        stat,
        reused: false,
        hashed: content_hash.is_some(),
    };
    match dir.open_file(name).map_err(skipped)? {
        Some((_, stat)) if stat.size >= RAYON_MIN => Ok(leaf(path, NodeKind::File, stat, None)),
        Some((mut file, stat)) => {
            let h = hash_read(&mut file, stat.size, buf).map_err(skipped)?;
            Ok(leaf(path, NodeKind::File, stat, Some(h)))
        }
        None => match dir.stat_at(name).map_err(skipped)? {
            (Some(NodeKind::Dir), _) => Err(format!(
                "{path}: skipped: became a directory while it was walked"
            )),
            (Some(kind), stat) => Ok(leaf(path, kind, stat, None)),
            (None, _) => Err(format!("{path}: skipped: not a file, directory or symlink")),
        },
    }
}

pub(super) fn display(rel: &str) -> &str {
    if rel.is_empty() { "." } else { rel }
}

/// Hands one directory's findings to the shared result.
pub(super) fn flush(out: &Mutex<Walked>, found: &mut Walked) {
    let mut o = out.lock().unwrap_or_else(|e| e.into_inner());
    o.leaves.append(&mut found.leaves);
    o.dirs.append(&mut found.dirs);
    o.warnings.append(&mut found.warnings);
    o.dirs_read += found.dirs_read;
    o.hashed += found.hashed;
    o.hashed_bytes += found.hashed_bytes;
    if found.top != Stat::default() {
        o.top = found.top;
    }
}

/// The entries of the last scans that an unchanged stat does not vouch for: files whose last
/// change (mtime, or ctime if later) was not older than the start of the scan that hashed them,
/// which may have been written again in the same clock tick after they were hashed.
#[derive(Clone, Copy)]
pub(crate) enum Racy<'a> {
    /// Every entry that changed no earlier than this stamp, the last scan's start (a store
    /// written before racy paths were recorded; `None`: trust nothing).
    Since(Option<i64>),
    /// Exactly these paths: each scan records the ones it hashed racily and keeps those it
    /// did not look at, so a scan of part of the tree loses nothing of the rest.
    Paths(&'a PathSet),
}

impl Racy<'_> {
    pub(super) fn trusts(&self, path: &str, stat: &Stat) -> bool {
        match self {
            Racy::Since(stamp) => stamp.is_some_and(|s| last_change(stat) < s),
            Racy::Paths(paths) => !paths.contains(path),
        }
    }
}

/// When a file last changed as far as its stat tells: its mtime, or its ctime when that is
/// later (a tool that writes and then restores the old mtime, like `cp -p` or `touch -r`,
/// cannot hold the ctime back).
pub(super) fn last_change(stat: &Stat) -> i64 {
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
        // Decided by the walk already, from a reused listing or the file it opened.
        if leaf.reused || leaf.hashed {
            continue;
        }
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
        let parents: std::collections::BTreeSet<String> = failed
            .iter()
            .map(|&i| node::split(&walked.leaves[i].path).0.to_owned())
            .collect();
        for dir in &mut walked.dirs {
            if parents.contains(&dir.path) {
                dir.stat = Stat::default();
            }
        }
        if parents.contains(&walked.top_path) {
            walked.top = Stat::default();
        }
        walked.unrecorded.extend(parents);
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
pub(super) fn hash_file_with(path: &Path, size: u64, buf: &mut Vec<u8>) -> std::io::Result<Hash> {
    if size >= RAYON_MIN {
        let mut h = blake3::Hasher::new();
        h.update_mmap_rayon(path)?;
        return Ok(Hash(*h.finalize().as_bytes()));
    }
    hash_read(&mut std::fs::File::open(path)?, size, buf)
}

/// blake3 of an open file of `size` bytes (as its stat said), read into `buf` in pieces (see
/// [`hash_file_with`]).
fn hash_read(file: &mut std::fs::File, size: u64, buf: &mut Vec<u8>) -> std::io::Result<Hash> {
    use std::io::Read;
    let mut h = blake3::Hasher::new();
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
