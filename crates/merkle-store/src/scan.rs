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

/// The ignore rules in force in a directory, as far as reusing and recording listings goes.
#[derive(Clone, Copy)]
struct Rules {
    /// Every .gitignore above (not in) this directory is the one the last scan walked under:
    /// the last listing of this directory may be reused if its stat vouches for it.
    same: bool,
    /// Every .gitignore above this directory is a file of the tree, whose stat tells when it
    /// changes: a listing made here may be recorded as reusable.
    recordable: bool,
}

impl Rules {
    const FULL: Rules = Rules {
        same: true,
        recordable: true,
    };
}

/// The .gitignore matchers in force in a directory: its own, then its ancestors'.
struct IgnoreChain {
    here: Matcher,
    /// How many leading bytes of a workspace path make the folder of the file and its slash
    /// (0 at the root): what is left is the path relative to that folder.
    strip: usize,
    parent: Option<Arc<IgnoreChain>>,
}

/// A .gitignore file's matcher, built when first needed: a walk that reuses the listings of
/// every directory matches nothing and need not read a single .gitignore.
struct Matcher {
    file: PathBuf,
    built: std::sync::OnceLock<Arc<Gitignore>>,
}

impl Matcher {
    fn new(file: PathBuf) -> Matcher {
        Matcher {
            file,
            built: std::sync::OnceLock::new(),
        }
    }

    fn get(&self, ctx: &WalkCtx<'_>) -> &Gitignore {
        self.built.get_or_init(|| ctx.gitignore(&self.file))
    }
}

/// A matcher rooted at "." for the content of an ignore file, read as the ignore crate reads a
/// file: line by line (`\n` or `\r\n`), a leading byte-order mark dropped, up to the first
/// line that is not UTF-8.
///
/// Rooted at "." rather than at its folder, to be given paths relative to the folder: with its
/// folder as the root, the ignore crate strips that prefix from every path it is given,
/// comparing paths component by component, and on a tree with many .gitignore files that cost
/// more than the matching itself. And a matcher rooted at "." depends on the file's content
/// alone, so files with the same content (a vendored tree has dozens) share one.
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

/// The ignore files that apply below the root before any .gitignore inside it, lowest
/// precedence last: the .gitignore files of the root's ancestors inside its repository, then
/// .git/info/exclude, then core.excludesFile. Read, not compiled: a walk that reuses every
/// listing compiles none of them, and compares their content with the last scan's.
pub(crate) struct IgnoreSources {
    /// Each file's content, with the root's path relative to the file's folder ("" when it is
    /// the root).
    files: Vec<(Vec<u8>, String)>,
    /// blake3 of all of it.
    pub(crate) fingerprint: Hash,
}

impl IgnoreSources {
    pub(crate) fn read(root: &Path) -> IgnoreSources {
        // The root's path relative to `dir`, one of its ancestors.
        let below = |dir: &Path| {
            root.strip_prefix(dir)
                .ok()
                .and_then(Path::to_str)
                .unwrap_or_default()
                .to_owned()
        };
        let mut files = Vec::new();
        // A root below a repository's top still honours the .gitignore files above it.
        let mut repo_top = None;
        for dir in root.ancestors() {
            if dir != root
                && let Ok(content) = std::fs::read(dir.join(".gitignore"))
            {
                files.push((content, below(dir)));
            }
            if dir.join(".git").exists() {
                repo_top = Some(dir.to_path_buf());
                break;
            }
        }
        if repo_top.is_none() {
            // Not in a repository: only the root's own .gitignore files count.
            files.clear();
        }
        let top = repo_top.unwrap_or_else(|| root.to_path_buf());
        let exclude = top.join(".git").join("info").join("exclude");
        if let Ok(content) = std::fs::read(&exclude) {
            files.push((content, below(&top)));
        }
        if let Some(global) = global_excludes_file()
            && let Ok(content) = std::fs::read(&global)
        {
            files.push((content, below(&top)));
        }
        let mut h = blake3::Hasher::new();
        for (content, below) in &files {
            h.update(&(below.len() as u64).to_le_bytes())
                .update(below.as_bytes())
                .update(&(content.len() as u64).to_le_bytes())
                .update(content);
        }
        IgnoreSources {
            files,
            fingerprint: Hash(*h.finalize().as_bytes()),
        }
    }
}

/// The file `core.excludesFile` names, where git looks for it: the config `GIT_CONFIG_GLOBAL`
/// names, else `~/.gitconfig`, else `$XDG_CONFIG_HOME/git/config` (`~/.config/git/config`),
/// else the system's (`GIT_CONFIG_SYSTEM`, `/etc/gitconfig`); without one, git's default,
/// `$XDG_CONFIG_HOME/git/ignore`. Read with [`excludes_file_in`] rather than the `ignore`
/// crate's own lookup, which compiles a regular expression for it in every process (a
/// twentieth of a no-op status of a small checkout).
fn global_excludes_file() -> Option<PathBuf> {
    let set = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = std::env::home_dir();
    let xdg = set("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")));
    let named_in = |config: Option<PathBuf>| {
        let content = std::fs::read(config?).ok()?;
        excludes_file_in(&content, home.as_deref())
    };
    named_in(set("GIT_CONFIG_GLOBAL"))
        .or_else(|| named_in(home.as_ref().map(|h| h.join(".gitconfig"))))
        .or_else(|| named_in(xdg.as_ref().map(|x| x.join("git").join("config"))))
        .or_else(|| {
            named_in(Some(
                set("GIT_CONFIG_SYSTEM").unwrap_or_else(|| PathBuf::from("/etc/gitconfig")),
            ))
        })
        .or_else(|| xdg.map(|x| x.join("git").join("ignore")))
}

/// The path a git config sets `core.excludesFile` to, read as git reads it: in the `[core]`
/// section only, the key in any case, the last value winning; the value in quotes or not
/// (quoted, it may hold spaces), with a leading `~/` taken from `home`. `None` when the file
/// sets none, or its last value is not one path.
fn excludes_file_in(config: &[u8], home: Option<&Path>) -> Option<PathBuf> {
    const KEY: &[u8] = b"excludesfile";
    let mut in_core = false;
    let mut found = None;
    for line in config.split(|&b| b == b'\n') {
        let mut line = line.trim_ascii();
        if line.first() == Some(&b'[') {
            let Some(end) = line.iter().position(|&b| b == b']') else {
                in_core = false;
                continue;
            };
            in_core = line[1..end].trim_ascii().eq_ignore_ascii_case(b"core");
            // git takes a key on the header's line too: `[core] excludesfile = x`.
            line = line[end + 1..].trim_ascii();
        }
        if !in_core
            || !line
                .get(..KEY.len())
                .is_some_and(|k| k.eq_ignore_ascii_case(KEY))
        {
            continue;
        }
        let Some(value) = line[KEY.len()..].trim_ascii_start().strip_prefix(b"=") else {
            continue;
        };
        found = config_path(value.trim_ascii(), home);
    }
    found
}

/// A config value as one path: quoted (spaces allowed), or one word.
fn config_path(value: &[u8], home: Option<&Path>) -> Option<PathBuf> {
    let value = match value.strip_prefix(b"\"") {
        Some(quoted) => quoted.strip_suffix(b"\"")?,
        None if value.iter().any(u8::is_ascii_whitespace) => return None,
        None => value,
    };
    if value.is_empty() {
        return None;
    }
    let value = std::str::from_utf8(value).ok()?;
    Some(match (value.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(value),
    })
}

/// The matchers of the [`IgnoreSources`], built when first needed.
struct Base<'a> {
    sources: &'a IgnoreSources,
    built: std::sync::OnceLock<Vec<(Gitignore, String)>>,
}

impl<'a> Base<'a> {
    fn new(sources: &'a IgnoreSources) -> Base<'a> {
        Base {
            sources,
            built: std::sync::OnceLock::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.sources.files.is_empty()
    }

    fn get(&self) -> &[(Gitignore, String)] {
        self.built.get_or_init(|| {
            self.sources
                .files
                .iter()
                .map(|(content, below)| (gitignore_from(content), below.clone()))
                .filter(|(gi, _)| !gi.is_empty())
                .collect()
        })
    }
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
    if chain.is_none() && ctx.base.is_empty() {
        return false;
    }
    let mut link = chain;
    while let Some(c) = link {
        match c.here.get(ctx).matched(&path[c.strip..], is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => link = c.parent.as_ref(),
        }
    }
    for (gi, below) in ctx.base.get() {
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

/// A subdirectory to walk: `(abs, rel)`.
type Subdir = (PathBuf, String);

/// Walks directory `rel` (at `abs`): from the last scan's listing where that still holds, else
/// by reading it. Its stat is taken from the open directory before its entries are read, so a
/// change made while they are read shows as a new stat. `from` is the folder that holds it,
/// open (`None` for the folder a walk starts at): it is opened from there by its name, which
/// the kernel looks up alone rather than every folder of its path from the root.
fn walk_dir<'s>(
    scope: &rayon::Scope<'s>,
    ctx: &'s WalkCtx<'s>,
    abs: PathBuf,
    rel: String,
    from: Option<Arc<fsdir::DirHandle>>,
    parent: Option<Arc<IgnoreChain>>,
    rules: Rules,
) {
    let recorded = ctx
        .last
        .filter(|_| rules.same)
        .and_then(|last| last.prev.get(&rel))
        .filter(|e| e.kind == NodeKind::Dir && e.stat.is_recorded());
    let handle = recorded.and_then(|_| ctx.root.as_ref().ok()?.handle(&rel, from.as_deref()).ok());
    if let (Some(recorded), Some(handle)) = (recorded, handle) {
        let stat = handle.stat().unwrap_or_default();
        if stat.same_dir(&recorded.stat)
            && let Some((found, subdirs, chain)) = reuse_listing(ctx, &handle, &abs, &rel, &parent)
        {
            // Open folders wait only for their subfolders to be opened.
            drop(from);
            let n = (found.leaves.len() + subdirs.len()) as u64;
            let done = DirDone {
                found,
                stat: ctx.record(stat, rules.recordable),
                rel,
                n,
            };
            finish_dir(scope, ctx, done, subdirs, Some(handle), chain, rules);
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
/// each under `chain` with `rules`, and opened from `dir`, the directory open, where given: it
/// stays open only until they are.
fn finish_dir<'s>(
    scope: &rayon::Scope<'s>,
    ctx: &'s WalkCtx<'s>,
    done: DirDone,
    subdirs: Vec<Subdir>,
    dir: Option<fsdir::DirHandle>,
    chain: Option<Arc<IgnoreChain>>,
    rules: Rules,
) {
    let DirDone {
        mut found,
        rel,
        stat,
        n,
    } = done;
    let dir = dir
        .filter(|_| ctx.deep && !subdirs.is_empty())
        .map(Arc::new);
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
    dir: &fsdir::DirHandle,
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
            // Its own walk stats it (from the open folder).
            if ctx.skip_rel.iter().any(|s| s == path) {
                return None;
            }
            subdirs.push((abs.join(name), path.to_owned()));
            continue;
        }
        let (kind, stat) = dir.stat_at(std::ffi::OsStr::new(name)).ok()?;
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
    from: Option<Arc<fsdir::DirHandle>>,
    parent: Option<Arc<IgnoreChain>>,
    rules: Rules,
) {
    let mut found = Walked {
        dirs_read: 1,
        ..Walked::default()
    };
    let opened = match &ctx.root {
        Ok(root) => root.open_dir(&rel, from.as_deref()),
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
    // This directory's own .gitignore, found among its entries rather than probed for; and
    // whether the rules below are still the last scan's, and can be recorded.
    let mut ignore_buf = String::new();
    let gitignore = entries
        .iter()
        .find(|(name, _)| *name == ".gitignore")
        .map(|(name, kind)| (kind, dir.stat_at(name).ok()));
    let chain = match gitignore {
        Some(_) => Some(Arc::new(IgnoreChain {
            here: Matcher::new(abs.join(".gitignore")),
            strip: strip_len(&rel),
            parent,
        })),
        None => parent,
    };
    let below = match gitignore {
        // Unless the last tree had one here, gone now.
        None => Rules {
            same: rules.same
                && ctx
                    .last
                    .is_some_and(|last| !last.prev.contains_key(&node::join(&rel, ".gitignore"))),
            recordable: rules.recordable,
        },
        Some((_, stat)) => {
            let path = node::join(&rel, ".gitignore");
            let stat = stat.filter(|(kind, _)| *kind == Some(NodeKind::File));
            let file =
                stat.is_some() && !ignored(ctx, chain.as_ref(), &path, false, &mut ignore_buf);
            let same = ctx.last.is_some_and(|last| {
                last.prev.get(&path).is_some_and(|old| {
                    old.kind == NodeKind::File
                        && stat.is_some_and(|(_, s)| s == old.stat && last.racy.trusts(&path, &s))
                })
            });
            Rules {
                same: rules.same && file && same,
                recordable: rules.recordable && file,
            }
        }
    };
    let n = entries.len() as u64;
    let mut subdirs = Vec::new();
    // Files to hash as they are opened (see `WalkOptions::hash_all`): (name, path).
    let mut to_hash = Vec::new();
    for (name, kind) in entries.iter() {
        let Some(name_str) = name.to_str() else {
            found.warnings.push(format!(
                "{}: skipped: the path is not valid UTF-8",
                abs.join(name).display()
            ));
            continue;
        };
        if name_str == ".git" {
            continue;
        }
        let path = node::join(&rel, name_str);
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
        if ignored(ctx, chain.as_ref(), &path, is_dir, &mut ignore_buf) {
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
            subdirs.push((abs.join(name), path));
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
    hash_in_dir(ctx, &dir, to_hash, &mut found);
    // A listing with warnings left something out that a reuse would never report again.
    let stat = ctx.record(stat, below.recordable && found.warnings.is_empty());
    let done = DirDone {
        found,
        rel,
        stat,
        n,
    };
    finish_dir(
        scope,
        ctx,
        done,
        subdirs,
        Some(dir.into_handle()),
        chain,
        below,
    );
}

/// Hashes the files `(name, path)` of `dir` as [`WalkOptions::hash_all`] says, into `found`:
/// each opened by name, its stat taken from the open file, and read whole if it is under
/// 1 MiB (a larger one keeps its stat and is hashed by [`hash_leaves`] from a memory map with
/// every core). A directory of many files shares them out over the pool.
fn hash_in_dir(
    ctx: &WalkCtx<'_>,
    dir: &fsdir::OpenDir,
    files: Vec<(&std::ffi::OsStr, String)>,
    found: &mut Walked,
) {
    /// Files hashed in one run with one buffer.
    const CHUNK: usize = 32;
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

fn display(rel: &str) -> &str {
    if rel.is_empty() { "." } else { rel }
}

/// Hands one directory's findings to the shared result.
fn flush(out: &Mutex<Walked>, found: &mut Walked) {
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
fn hash_file_with(path: &Path, size: u64, buf: &mut Vec<u8>) -> std::io::Result<Hash> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_configs_excludes_file_is_read_as_git_writes_it() {
        let home = Path::new("/home/u");
        let read = |config: &str| excludes_file_in(config.as_bytes(), Some(home));
        assert_eq!(
            read("[core]\n\texcludesFile = ~/.gitignore_global\n"),
            Some(home.join(".gitignore_global"))
        );
        assert_eq!(
            read("[user]\n  name = x\r\n[core]\r\n  EXCLUDESFILE=\"/etc/ignore\"\r\n"),
            Some(PathBuf::from("/etc/ignore"))
        );
        // The last one wins, as `git config core.excludesFile` answers; only in [core].
        assert_eq!(
            read("[core]\nexcludesfile = /a\n[user]\n\tname = x\n[Core]\nexcludesfile = /b\n"),
            Some(PathBuf::from("/b"))
        );
        assert_eq!(read("[alias]\n  excludesfile = /a\n"), None);
        assert_eq!(read("excludesfile = /a\n"), None);
        assert_eq!(
            read("[core] excludesfile = /on-the-header\n"),
            Some(PathBuf::from("/on-the-header"))
        );
        // A key that only starts alike is none; a value of two words only in quotes.
        assert_eq!(read("[core]\n  excludesFiles = /a\n"), None);
        assert_eq!(read("[core]\n  excludeFile = /a\n"), None);
        assert_eq!(read("[core]\n  excludesfile = /my ignore\n"), None);
        assert_eq!(
            read("[core]\n  excludesfile = \"/my ignore\"\n"),
            Some(PathBuf::from("/my ignore"))
        );
        assert_eq!(read("[core]\n  excludesfile =\n"), None);
        // Only a leading `~/` is the home folder.
        assert_eq!(
            read("[core]\nexcludesfile = a~/b"),
            Some(PathBuf::from("a~/b"))
        );
        assert_eq!(
            excludes_file_in(b"[core]\nexcludesfile = ~/x", None),
            Some(PathBuf::from("~/x"))
        );
    }

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
            hashed: false,
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

    /// A leaf that cannot be hashed after the walk is dropped from it, and the folder it was
    /// in must then vouch for nothing: a later walk reusing that listing would never look for
    /// the leaf again, even once it can be read.
    #[test]
    fn a_leaf_that_cannot_be_hashed_unrecords_its_folder() {
        let root = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(root.path().join("d")).expect("mkdir");
        std::fs::write(root.path().join("d/kept.txt"), "kept").expect("write");
        let recorded = Stat {
            mtime_ns: 5,
            ctime_ns: 5,
            ino: 7,
            mode: 0o40755,
            size: 0,
        };
        let gone = |path: &str| Leaf {
            stat: Stat {
                size: 3,
                ..Stat::default()
            },
            ..leaf(path, NodeKind::File, 1)
        };
        let mut walked = Walked {
            // Not on disk: opening them fails.
            leaves: vec![
                gone("d/gone.txt"),
                gone("top.txt"),
                leaf("d/kept.txt", NodeKind::File, 1),
            ],
            dirs: vec![
                WalkedDir {
                    path: "d".to_owned(),
                    stat: recorded,
                },
                WalkedDir {
                    path: "e".to_owned(),
                    stat: recorded,
                },
            ],
            top: recorded,
            ..Walked::default()
        };
        let prev = PathMap::default();
        hash_leaves(
            &mut walked,
            &HashConfig {
                root: root.path(),
                prev: &prev,
                racy: Racy::Since(None),
                force: false,
                progress: None,
            },
        );
        let dirs: Vec<(&str, bool)> = walked
            .dirs
            .iter()
            .map(|d| (d.path.as_str(), d.stat.is_recorded()))
            .collect();
        assert_eq!(
            (dirs, walked.top.is_recorded(), walked.unrecorded.clone()),
            (
                vec![("d", false), ("e", true)],
                false,
                vec![String::new(), "d".to_owned()]
            )
        );
        let leaves: Vec<&str> = walked.leaves.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(leaves, ["d/kept.txt"]);
    }

    /// A folder's stat vouches for its listing only when older than the scan, by two seconds
    /// when its times are whole milliseconds (a coarse file system's clock, not the stamp's).
    #[test]
    fn coarse_folder_times_need_a_margin_to_vouch() {
        let at = |mtime_ns: i64, ctime_ns: i64| Stat {
            mtime_ns,
            ctime_ns,
            mode: 0o40755,
            ..Stat::default()
        };
        let s = 1_000_000_000;
        let fine = at(10 * s + 123_456_789, 10 * s + 123_456_789);
        let coarse = at(10 * s, 10 * s);
        let cases = [
            stat_vouches(&fine, 10 * s + 123_456_789),
            stat_vouches(&fine, 10 * s + 123_456_790),
            stat_vouches(&coarse, 11 * s),
            stat_vouches(&coarse, 12 * s + 1),
        ];
        assert_eq!(cases, [false, cfg!(unix), false, cfg!(unix)]);
    }
}
