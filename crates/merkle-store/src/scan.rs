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
use crate::node::{self, NodeKind, PathMap, PathSet, Stat, TreeEntry};

mod fsdir;
mod hashing;
mod ignores;
mod verify;

pub(crate) use self::hashing::{HashConfig, Racy, hash_leaves, racy_after, symlink_target};
use self::hashing::{display, flush, hash_in_dir, last_change};
pub(crate) use self::ignores::IgnoreSources;
use self::ignores::{Base, IgnoreChain, Matcher, Rules, gitignore_from, ignored};
pub(crate) use self::verify::Checker;

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
    /// Whether the walk hashed it already, from the file it opened for its stat.
    pub(crate) hashed: bool,
}

/// A directory found on disk, with the stat its tree entry is to record (see
/// [`Stat::dir_record`]): the one it had before it was read, or all zero when that stat cannot
/// vouch for the listing (too recent, a listing with warnings, a .gitignore that is not a file
/// of the tree).
#[derive(Debug)]
pub(crate) struct WalkedDir {
    pub(crate) path: String,
    pub(crate) stat: Stat,
}

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    pub(crate) leaves: Vec<Leaf>,
    /// Every directory below the directory walked (that one itself is [`Walked::top`]).
    pub(crate) dirs: Vec<WalkedDir>,
    /// The stat to record for the directory walked, as [`WalkedDir::stat`].
    pub(crate) top: Stat,
    /// The workspace path of the directory walked ("" for the root).
    pub(crate) top_path: String,
    /// Folders whose listing lost a leaf after the walk (it could not be hashed): their stat,
    /// zeroed here in [`Walked::dirs`] and [`Walked::top`], must vouch for nothing, or the
    /// next walk would reuse a listing without it and never look for it again.
    pub(crate) unrecorded: Vec<String>,
    /// The fingerprint of the ignore rules from outside the tree (see [`IgnoreSources`]).
    pub(crate) ignores: Option<Hash>,
    /// Entries that could not be read or named, with the reason.
    pub(crate) warnings: Vec<String>,
    /// How many directories were read, rather than taken from the last scan's listing.
    pub(crate) dirs_read: u64,
    /// How many leaves were hashed rather than taken from the last scan.
    pub(crate) hashed: u64,
    pub(crate) hashed_bytes: u64,
}

/// What the last scan recorded, for a walk to reuse: a directory whose stat is the one
/// recorded before the last scan read it, under the same ignore rules, holds the same entries,
/// so the walk stats them (the tree's files and folders) without reading the directory or
/// matching a single ignore rule. This is git's untracked cache: adding, removing or renaming an
/// entry changes a directory's mtime and ctime, and a .gitignore is a file of the tree whose
/// stat tells when it changes; the rules from outside the tree are compared by content.
pub(crate) struct Listing<'a> {
    prev: &'a PathMap<TreeEntry>,
    /// Each directory's children in the last tree (path and entry), by the directory's path.
    kids: std::collections::HashMap<
        &'a str,
        Vec<(&'a str, &'a TreeEntry)>,
        rustc_hash::FxBuildHasher,
    >,
    /// Which recorded stats of .gitignore files are not to be trusted.
    racy: Racy<'a>,
    /// The fingerprint of the ignore rules from outside the tree that the last scan walked under.
    ignores: Option<Hash>,
}

/// The entries of the last tree grouped at a time by one task in [`Listing::new`].
const LISTING_CHUNK: usize = 4096;

impl<'a> Listing<'a> {
    /// The listings of `prev`, the last scan's tree, whose racy entries `racy` names, walked
    /// under the ignore rules of fingerprint `ignores`. A leaf of a reused listing whose stat
    /// is unchanged takes its content hash from its entry (a forced scan, which hashes every
    /// file again, reuses no listing).
    pub(crate) fn new(prev: &'a PathMap<TreeEntry>, racy: Racy<'a>, ignores: Option<Hash>) -> Self {
        type Kids<'a> = Vec<(&'a str, &'a TreeEntry)>;
        type ByFolder<'a> = std::collections::HashMap<&'a str, Kids<'a>, rustc_hash::FxBuildHasher>;
        // Grouped on every core: one by one, this was a tenth of a no-op status of a 14k-file
        // checkout. The map is walked once to list its entries, which are then grouped in
        // chunks side by side, and the groups merged.
        let entries: Vec<(&str, &TreeEntry)> = prev
            .iter()
            .filter(|(p, _)| !p.is_empty())
            .map(|(p, e)| (p.as_str(), e))
            .collect();
        let group = |mut kids: ByFolder<'a>, chunk: &[(&'a str, &'a TreeEntry)]| {
            for &(path, entry) in chunk {
                kids.entry(node::split(path).0)
                    .or_default()
                    .push((path, entry));
            }
            kids
        };
        let kids = entries
            .par_chunks(LISTING_CHUNK)
            .fold(ByFolder::default, group)
            .reduce(ByFolder::default, |a, b| {
                // The smaller map into the larger, the shorter list onto the longer.
                let (mut big, small) = if a.len() >= b.len() { (a, b) } else { (b, a) };
                for (folder, mut more) in small {
                    let into = big.entry(folder).or_default();
                    if into.len() < more.len() {
                        std::mem::swap(into, &mut more);
                    }
                    into.extend(more);
                }
                big
            });
        Listing {
            prev,
            kids,
            racy,
            ignores,
        }
    }
}

/// How to walk.
pub(crate) struct WalkOptions<'a> {
    /// Folders never entered besides `.git` (the workspace's `.merkle`, the store).
    pub(crate) skip: Vec<PathBuf>,
    pub(crate) progress: Option<&'a (dyn Fn(Progress) + Sync)>,
    /// The last scan's listings, to reuse where they still hold.
    pub(crate) last: Option<&'a Listing<'a>>,
    /// The start of the scan the walk is for, to record directory stats that can vouch for a
    /// listing: only those older than it (as files are racy, see [`Racy`]). `None` records none.
    pub(crate) stamp: Option<i64>,
    /// Whether every file is to be hashed (no last scan, or a forced one): then the walk hashes
    /// each file under 1 MiB as it meets it, opened by name in its open directory, with its
    /// stat from the open file, so the file is looked up once rather than three times (stat,
    /// then open by its whole path).
    pub(crate) hash_all: bool,
}

/// Walks the workspace in parallel, recording each entry's kind and stat; with
/// [`WalkOptions::hash_all`] it hashes the files it can as it goes.
///
/// The walk is our own rather than the `ignore` crate's walker (whose gitignore matchers it
/// still uses): each directory is read once, its `.gitignore` is found among its entries rather
/// than probed for, and every directory is opened relative to the open root and its entries
/// reached relative to it (see [`fsdir`]), so the kernel never walks a whole path per file. A
/// directory the last scan's [`Listing`] vouches for is not read at all. Directories are spread
/// over the rayon pool.
pub(crate) fn walk(root: &Path, opts: &WalkOptions<'_>) -> Walked {
    let out = Mutex::new(Walked::default());
    let seen = AtomicU64::new(0);
    let sources = IgnoreSources::read(root);
    let last = opts.last.filter(|l| l.ignores == Some(sources.fingerprint));
    let ctx = WalkCtx {
        skip_rel: skip_rel(root, &opts.skip),
        progress: opts.progress,
        seen: &seen,
        out: &out,
        base: Base::new(&sources),
        deep: true,
        compiled: Mutex::default(),
        top: String::new(),
        stamp: opts.stamp,
        root: fsdir::Root::open(root),
        hash_all: opts.hash_all,
        bufs: Mutex::default(),
        last,
    };
    rayon::scope(|s| {
        walk_dir(
            s,
            &ctx,
            root.to_path_buf(),
            String::new(),
            None,
            None,
            Rules::FULL,
        )
    });
    // In no particular order: every consumer keys by path or sorts what it reports.
    let mut walked = out.into_inner().unwrap_or_else(|e| e.into_inner());
    walked.ignores = Some(sources.fingerprint);
    if let Some(p) = opts.progress {
        p(Progress::Walked(seen.load(Ordering::Relaxed)));
    }
    walked
}

/// Reads one directory below the root, `rel` (a directory of the tree, not ignored): its
/// leaves and subdirectories, and with `deep` everything below them too. The .gitignore files
/// of the root and of every directory above `rel` apply as they do in a full [`walk`]. A
/// directory that cannot be read is a warning, as in a walk; one that is gone (or is no longer
/// a directory) is `Err`. Nothing is reused from the last scan; with `stamp`, directory stats
/// are recorded as a full walk records them (subdirectories that are only listed record none).
/// `sources` are the root's [`IgnoreSources`], read once for all the walks of a rescan.
pub(crate) fn walk_below(
    root: &Path,
    sources: &IgnoreSources,
    rel: &str,
    deep: bool,
    skip: Vec<PathBuf>,
    stamp: Option<i64>,
) -> std::io::Result<Walked> {
    let out = Mutex::new(Walked::default());
    let seen = AtomicU64::new(0);
    let ctx = WalkCtx {
        skip_rel: skip_rel(root, &skip),
        progress: None,
        seen: &seen,
        out: &out,
        base: Base::new(sources),
        deep,
        compiled: Mutex::default(),
        top: rel.to_owned(),
        stamp,
        root: fsdir::Root::open(root),
        hash_all: false,
        bufs: Mutex::default(),
        last: None,
    };
    // The chain of .gitignore files above `rel`, the root's first (`rel`'s own is read by
    // walk_dir among its entries); and every folder on the way must be a real one, not a
    // symlink to one: the tree never goes through a symlink.
    let mut chain: Option<Arc<IgnoreChain>> = None;
    let mut rules = Rules::FULL;
    let mut abs = root.to_path_buf();
    let mut walked_rel = String::new();
    std::fs::symlink_metadata(root)?;
    for part in rel.split('/').filter(|p| !p.is_empty()) {
        let gitignore = abs.join(".gitignore");
        if let Ok(m) = std::fs::symlink_metadata(&gitignore) {
            chain = Some(Arc::new(IgnoreChain {
                here: Matcher::new(gitignore),
                strip: strip_len(&walked_rel),
                parent: chain,
            }));
            // Whether it is a file of the tree is not checked here: record no stats below it.
            if !m.is_file() {
                rules.recordable = false;
            }
        }
        abs.push(part);
        if !walked_rel.is_empty() {
            walked_rel.push('/');
        }
        walked_rel.push_str(part);
        let m = std::fs::symlink_metadata(&abs)?;
        if !m.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("{} is not a directory", abs.display()),
            ));
        }
    }
    rayon::scope(|s| walk_dir(s, &ctx, abs, rel.to_owned(), None, chain, rules));
    let mut walked = out.into_inner().unwrap_or_else(|e| e.into_inner());
    walked.ignores = Some(sources.fingerprint);
    walked.top_path = rel.to_owned();
    Ok(walked)
}

/// What every directory's walk shares.
struct WalkCtx<'a> {
    /// The folders never entered besides `.git` (see [`WalkOptions::skip`]) that are below the
    /// root, as workspace paths.
    skip_rel: Vec<String>,
    progress: Option<&'a (dyn Fn(Progress) + Sync)>,
    seen: &'a AtomicU64,
    out: &'a Mutex<Walked>,
    /// The ignore rules below every .gitignore.
    base: Base<'a>,
    /// Whether subdirectories are walked too, or only listed.
    deep: bool,
    /// The .gitignore matchers built so far, by file content.
    compiled: Mutex<std::collections::HashMap<Vec<u8>, Arc<Gitignore>, rustc_hash::FxBuildHasher>>,
    /// The directory the walk started at, which [`Walked::top`] describes.
    top: String,
    stamp: Option<i64>,
    /// The last scan's listings, when they were made under the same rules from outside the tree.
    last: Option<&'a Listing<'a>>,
    /// The root, open: directories are opened, and the entries of those not read stat'ed,
    /// relative to it. Why it could not be opened, the walk's only warning then.
    root: std::io::Result<fsdir::Root>,
    /// See [`WalkOptions::hash_all`].
    hash_all: bool,
    /// Read buffers for hashing, handed from one directory to the next.
    bufs: Mutex<Vec<Vec<u8>>>,
}

/// The folders of `skip` below `root`, as workspace paths.
fn skip_rel(root: &Path, skip: &[PathBuf]) -> Vec<String> {
    skip.iter()
        .filter_map(|s| s.strip_prefix(root).ok()?.to_str().map(str::to_owned))
        .collect()
}

impl WalkCtx<'_> {
    /// The matcher of the .gitignore file `file`, shared with every other file of the same
    /// content met in this walk. An unreadable file is an empty matcher and a bad line is
    /// skipped, as `Gitignore::new` does.
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

    /// The stat to record for a directory read with `stat` (see [`WalkedDir::stat`]).
    fn record(&self, stat: Stat, vouches: bool) -> Stat {
        match self.stamp {
            Some(stamp) if vouches && stat_vouches(&stat, stamp) => stat,
            _ => Stat::default(),
        }
    }
}

/// Whether a folder's `stat`, taken before it was read by a scan that started at `stamp`, can
/// vouch for the listing read: it must be older than the scan (a change in the same clock tick
/// would not change it), by two seconds when its times look like a coarse file system's (whole
/// milliseconds: FAT, some network file systems), whose clock the stamp, taken in the store's
/// folder, does not share. Elsewhere than Unix a folder has no ctime and no inode to tell a
/// replaced folder from the old one: nothing vouches.
fn stat_vouches(stat: &Stat, stamp: i64) -> bool {
    if cfg!(not(unix)) {
        return false;
    }
    const MS: i64 = 1_000_000;
    let coarse = stat.mtime_ns % MS == 0 && stat.ctime_ns % MS == 0;
    let margin = if coarse { 2_000 * MS } else { 0 };
    last_change(stat).saturating_add(margin) < stamp
}

/// The bytes of a workspace path below folder `rel` that name `rel` and its slash.
fn strip_len(rel: &str) -> usize {
    if rel.is_empty() { 0 } else { rel.len() + 1 }
}

/// A subdirectory to walk: `(abs, rel)`.
type Subdir = (PathBuf, String);

/// An open folder and its path: where a walk looks the folders below it up from.
struct Open {
    dir: fsdir::DirHandle,
    rel: String,
}

impl Open {
    fn above(&self) -> fsdir::Above<'_> {
        Some((&self.rel, &self.dir))
    }
}

/// Walks directory `rel` (at `abs`): from the last scan's listing where that still holds, else
/// by reading it. Its stat is taken from the open directory before its entries are read, so a
/// change made while they are read shows as a new stat. `from` is the nearest open folder
/// above it (`None` for the folder a walk starts at): it is looked up from there by the names
/// below that folder, which the kernel looks up alone rather than every folder of its path
/// from the root. A folder whose last listing held fewer than [`fsdir::OPEN_MIN_ENTRIES`] is
/// not opened where that listing holds: it is stat'ed, and its entries too, from `from` (at
/// most [`fsdir::MAX_NAMES_BELOW`] names below it).
fn walk_dir<'s>(
    scope: &rayon::Scope<'s>,
    ctx: &'s WalkCtx<'s>,
    abs: PathBuf,
    rel: String,
    from: Option<Arc<Open>>,
    parent: Option<Arc<IgnoreChain>>,
    rules: Rules,
) {
    let recorded = ctx
        .last
        .filter(|_| rules.same)
        .and_then(|last| last.prev.get(&rel))
        .filter(|e| e.kind == NodeKind::Dir && e.stat.is_recorded());
    if let (Some(recorded), Ok(root)) = (recorded, &ctx.root) {
        let above = from.as_deref().and_then(Open::above);
        // Looked up from the folder above where it holds few entries, else opened.
        let (open, stat) = match above {
            Some((at, dir)) if fsdir::looked_up_through(at, &rel, recorded.stat.size) => {
                let stat = dir
                    .stat_at(std::ffi::OsStr::new(fsdir::below(at, &rel)))
                    .ok()
                    .filter(|(kind, _)| *kind == Some(NodeKind::Dir));
                (from.clone(), stat.map(|(_, stat)| stat))
            }
            _ => match root.handle(&rel, above) {
                Ok(dir) => {
                    let stat = dir.stat().ok();
                    let open = Open {
                        dir,
                        rel: rel.clone(),
                    };
                    (Some(Arc::new(open)), stat)
                }
                Err(_) => (None, None),
            },
        };
        if let (Some(open), Some(stat)) = (open, stat)
            && stat.same_dir(&recorded.stat)
            && let Some((found, subdirs, chain)) = reuse_listing(ctx, &open, &abs, &rel, &parent)
        {
            // An open folder waits only for the folders looked up from it.
            drop(from);
            let n = (found.leaves.len() + subdirs.len()) as u64;
            let done = DirDone {
                found,
                stat: ctx.record(stat, rules.recordable),
                rel,
                n,
            };
            finish_dir(scope, ctx, done, subdirs, Some(open), chain, rules);
            return;
        }
    }
    read_dir(scope, ctx, abs, rel, from, parent, rules);
}

/// A directory walked, and what goes with it to the shared result.
struct DirDone {
    found: Walked,
    rel: String,
    /// The stat to record for it.
    stat: Stat,
    /// How many entries it has, for progress.
    n: u64,
}

/// Hands a walked directory's findings on and walks (or, not deep, lists) its subdirectories,
/// each under `chain` with `rules`, and looked up from `dir`, the nearest open folder at or
/// above it, where given: it stays open only until they, and the folders of few entries below
/// them that are looked up from it too, are.
fn finish_dir<'s>(
    scope: &rayon::Scope<'s>,
    ctx: &'s WalkCtx<'s>,
    done: DirDone,
    subdirs: Vec<Subdir>,
    dir: Option<Arc<Open>>,
    chain: Option<Arc<IgnoreChain>>,
    rules: Rules,
) {
    let DirDone {
        mut found,
        rel,
        stat,
        n,
    } = done;
    let dir = dir.filter(|_| ctx.deep && !subdirs.is_empty());
    for (child_abs, path) in subdirs {
        if ctx.deep {
            let chain = chain.clone();
            let from = dir.clone();
            scope.spawn(move |s| walk_dir(s, ctx, child_abs, path, from, chain, rules));
        } else {
            // Listed, not read: its stat vouches for nothing here.
            found.dirs.push(WalkedDir {
                path,
                stat: Stat::default(),
            });
        }
    }
    if rel == ctx.top {
        found.top = stat;
    } else {
        found.dirs.push(WalkedDir { path: rel, stat });
    }
    let seen = ctx.seen.fetch_add(n, Ordering::Relaxed) + n;
    if let Some(p) = ctx.progress {
        p(Progress::Walked(seen));
    }
    flush(ctx.out, &mut found);
}

/// The last scan's listing of `rel`, whose stat vouches for it, with every entry stat'ed again:
/// leaves, subdirectories to walk, and the .gitignore chain in force below. `None` when the
/// listing does not fit the disk after all (an entry gone or of another kind, a .gitignore
/// changed, a store folder among the subdirectories): the directory is read instead.
fn reuse_listing(
    ctx: &WalkCtx<'_>,
    open: &Open,
    abs: &Path,
    rel: &str,
    parent: &Option<Arc<IgnoreChain>>,
) -> Option<(Walked, Vec<Subdir>, Option<Arc<IgnoreChain>>)> {
    let last = ctx.last?;
    let mut found = Walked::default();
    let mut subdirs = Vec::new();
    let mut chain = parent.clone();
    for &(path, entry) in last.kids.get(rel).map(Vec::as_slice).unwrap_or_default() {
        let name = node::split(path).1;
        if entry.kind == NodeKind::Dir {
            // Its own walk stats it (from the nearest open folder above it).
            if ctx.skip_rel.iter().any(|s| s == path) {
                return None;
            }
            subdirs.push((abs.join(name), path.to_owned()));
            continue;
        }
        let below = fsdir::below(&open.rel, path);
        let (kind, stat) = open.dir.stat_at(std::ffi::OsStr::new(below)).ok()?;
        if kind != Some(entry.kind) {
            return None;
        }
        if name == ".gitignore" {
            // The rules below are the last scan's only if this file is unchanged.
            if entry.kind != NodeKind::File || stat != entry.stat || !last.racy.trusts(path, &stat)
            {
                return None;
            }
            chain = Some(Arc::new(IgnoreChain {
                here: Matcher::new(abs.join(name)),
                strip: strip_len(rel),
                parent: chain,
            }));
        }
        // As `hash_leaves` decides, without looking the entry up again.
        let reused = stat == entry.stat
            && (entry.kind == NodeKind::Symlink || last.racy.trusts(path, &stat));
        found.leaves.push(Leaf {
            path: path.to_owned(),
            kind: entry.kind,
            content_hash: if reused {
                entry.content_hash
            } else {
                Hash([0; 32])
            },
            stat,
            reused,
            hashed: false,
        });
    }
    Some((found, subdirs, chain))
}

/// Walks directory `rel` by reading it.
fn read_dir<'s>(
    scope: &rayon::Scope<'s>,
    ctx: &'s WalkCtx<'s>,
    abs: PathBuf,
    rel: String,
    from: Option<Arc<Open>>,
    parent: Option<Arc<IgnoreChain>>,
    rules: Rules,
) {
    let mut found = Walked {
        dirs_read: 1,
        ..Walked::default()
    };
    let opened = match &ctx.root {
        Ok(root) => root.open_dir(&rel, from.as_deref().and_then(Open::above)),
        Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
    };
    drop(from);
    let dir = match opened {
        Ok(dir) => dir,
        Err(err) => {
            found
                .warnings
                .push(format!("{}: skipped: {err}", display(&rel)));
            let done = DirDone {
                found,
                rel,
                stat: Stat::default(),
                n: 0,
            };
            finish_dir(scope, ctx, done, Vec::new(), None, parent, rules);
            return;
        }
    };
    // Before the entries are read: a change made while they are read then shows as a new stat.
    let stat = dir.stat().unwrap_or_default();
    let entries = dir.entries(|err| found.warnings.push(format!("{}: {err}", display(&rel))));
    let reading = Reading {
        ctx,
        dir: &dir,
        abs: &abs,
        rel: &rel,
    };
    let mut ignore_buf = String::new();
    let (chain, below) = reading.rules_below(&entries, parent, rules, &mut ignore_buf);
    let n = entries.len() as u64;
    let (subdirs, to_hash) =
        reading.sort_entries(&entries, chain.as_ref(), &mut found, &mut ignore_buf);
    hash_in_dir(ctx, &dir, to_hash, &mut found);
    // A listing with warnings left something out that a reuse would never report again.
    let stat = ctx.record(stat, below.recordable && found.warnings.is_empty());
    // Kept open for its subfolders to be looked up from.
    let open = (ctx.deep && !subdirs.is_empty()).then(|| {
        Arc::new(Open {
            dir: dir.into_handle(),
            rel: rel.clone(),
        })
    });
    let done = DirDone {
        found,
        rel,
        stat,
        n,
    };
    finish_dir(scope, ctx, done, subdirs, open, chain, below);
}

/// A directory [`read_dir`] is reading: the walk's shared state, the directory open, and
/// where it is.
struct Reading<'a> {
    ctx: &'a WalkCtx<'a>,
    dir: &'a fsdir::OpenDir,
    abs: &'a Path,
    rel: &'a str,
}

impl Reading<'_> {
    /// The .gitignore chain in force below the directory, its own .gitignore (found among its
    /// `entries` rather than probed for) on top of `parent`; and whether the rules below are
    /// still the last scan's, and can be recorded.
    fn rules_below(
        &self,
        entries: &fsdir::Entries,
        parent: Option<Arc<IgnoreChain>>,
        rules: Rules,
        ignore_buf: &mut String,
    ) -> (Option<Arc<IgnoreChain>>, Rules) {
        let (ctx, rel) = (self.ctx, self.rel);
        let gitignore = entries
            .iter()
            .find(|(name, _)| *name == ".gitignore")
            .map(|(name, kind)| (kind, self.dir.stat_at(name).ok()));
        let chain = match gitignore {
            Some(_) => Some(Arc::new(IgnoreChain {
                here: Matcher::new(self.abs.join(".gitignore")),
                strip: strip_len(rel),
                parent,
            })),
            None => parent,
        };
        let below = match gitignore {
            // Unless the last tree had one here, gone now.
            None => Rules {
                same: rules.same
                    && ctx.last.is_some_and(|last| {
                        !last.prev.contains_key(&node::join(rel, ".gitignore"))
                    }),
                recordable: rules.recordable,
            },
            Some((_, stat)) => {
                let path = node::join(rel, ".gitignore");
                let stat = stat.filter(|(kind, _)| *kind == Some(NodeKind::File));
                let file =
                    stat.is_some() && !ignored(ctx, chain.as_ref(), &path, false, ignore_buf);
                let same = ctx.last.is_some_and(|last| {
                    last.prev.get(&path).is_some_and(|old| {
                        old.kind == NodeKind::File
                            && stat
                                .is_some_and(|(_, s)| s == old.stat && last.racy.trusts(&path, &s))
                    })
                });
                Rules {
                    same: rules.same && file && same,
                    recordable: rules.recordable && file,
                }
            }
        };
        (chain, below)
    }

    /// Sorts the directory's `entries` under `chain`: leaves stat'ed into `found`, and the
    /// subdirectories to walk and the files to hash as they are opened (see
    /// `WalkOptions::hash_all`: (name, path)) returned. What is ignored is left out; what
    /// cannot be named or stat'ed is a warning.
    fn sort_entries<'e>(
        &self,
        entries: &'e fsdir::Entries,
        chain: Option<&Arc<IgnoreChain>>,
        found: &mut Walked,
        ignore_buf: &mut String,
    ) -> (Vec<Subdir>, Vec<(&'e std::ffi::OsStr, String)>) {
        let (ctx, dir) = (self.ctx, self.dir);
        let mut subdirs = Vec::new();
        let mut to_hash = Vec::new();
        for (name, kind) in entries.iter() {
            let Some(name_str) = name.to_str() else {
                found.warnings.push(format!(
                    "{}: skipped: the path is not valid UTF-8",
                    self.abs.join(name).display()
                ));
                continue;
            };
            if name_str == ".git" {
                continue;
            }
            let path = node::join(self.rel, name_str);
            // Told by the listing, or else by a stat (which a leaf then keeps).
            let (kind, stat) = match kind {
                fsdir::EntryKind::Node(kind) => (Some(kind), None),
                fsdir::EntryKind::Other => (None, None),
                fsdir::EntryKind::Unknown => match dir.stat_at(name) {
                    Ok((kind, stat)) => (kind, Some(stat)),
                    Err(err) => {
                        found.warnings.push(format!("{path}: skipped: {err}"));
                        continue;
                    }
                },
            };
            let is_dir = kind == Some(NodeKind::Dir);
            if ignored(ctx, chain, &path, is_dir, ignore_buf) {
                continue;
            }
            let Some(kind) = kind else {
                found
                    .warnings
                    .push(format!("{path}: skipped: not a file, directory or symlink"));
                continue;
            };
            if kind == NodeKind::Dir {
                if ctx.skip_rel.contains(&path) {
                    continue;
                }
                subdirs.push((self.abs.join(name), path));
                continue;
            }
            if kind == NodeKind::File && ctx.hash_all {
                to_hash.push((name, path));
                continue;
            }
            let stat = match stat {
                Some(stat) => Ok(stat),
                None => dir.stat_at(name).map(|(_, s)| s),
            };
            match stat {
                Ok(stat) => found.leaves.push(Leaf {
                    path,
                    kind,
                    content_hash: Hash([0; 32]),
                    stat,
                    reused: false,
                    hashed: false,
                }),
                Err(err) => found.warnings.push(format!("{path}: skipped: {err}")),
            }
        }
        (subdirs, to_hash)
    }
}

#[cfg(test)]
mod tests;
