//! Watching a tree under the kernel's limit of inotify watches (one a folder,
//! `fs.inotify.max_user_watches`): the whole tree where the limit allows; else as much of it as
//! fits, and the folders left out are named ([`Coverage`]) so that every read checks their part
//! of the tree by its stats (`Store::unchanged_below`), as a read with no watcher checks all
//! of it. Never a silently stale read: a folder made after the limit was reached is counted
//! unwatched too, whether or not the watcher managed to watch it.
//!
//! How it fits: a subtree is watched whole (recursively) where it fits; where it does not, its
//! partial watches are dropped, its folder is watched alone, and each child folder is tried the
//! same way, depth first. Once not even one folder fits, every folder not yet tried is left
//! out. A failed try costs at most the watches left, along one path from the root: about the
//! limit times the tree's depth in calls to the kernel.
//!
//! What inotify cannot take, a fanotify group marks where the kernel makes one (`fan.rs`: a
//! limit of its own), folder by folder, depth first; only what neither holds is left out.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::events::relative;
use crate::fan::{Fan, Marked};
use crate::{Error, watch_error};

/// What a watcher covers of its tree.
#[derive(Debug, Default)]
pub struct Coverage {
    /// The folders not watched (workspace-relative, `/`-separated; `""` the whole tree), none
    /// below another: a read checks their part of the tree by its stats.
    unwatched: BTreeSet<String>,
    /// The kernel's limit was reached: the watcher no longer watches every new folder.
    limited: bool,
    /// The tree is being fitted: a folder made meanwhile is left out should the limit be
    /// reached ([`Coverage::fitted`]).
    starting: bool,
    /// The folders a fanotify group watches where inotify's limit was reached.
    fanned: usize,
}

impl Coverage {
    /// The folders not watched, none below another.
    pub fn unwatched(&self) -> Vec<String> {
        self.unwatched.iter().cloned().collect()
    }

    /// What a watcher's callback keeps while [`watch_fitting`] runs: folders made meanwhile.
    pub(crate) fn starting() -> Coverage {
        Coverage {
            starting: true,
            ..Coverage::default()
        }
    }

    /// The fitting's outcome taken in: where the limit was reached, the folders made while it
    /// ran are left out too (one made in a folder watched alone would go unseen).
    pub(crate) fn fitted(&mut self, fitted: Coverage) {
        let limited = fitted.limited || self.limited;
        if !limited {
            self.unwatched.clear();
        }
        self.limited = limited;
        self.starting = false;
        self.fanned = fitted.fanned;
        for folder in fitted.unwatched {
            self.leave_out(folder);
        }
    }

    /// Whether it watches every folder.
    pub fn all_watched(&self) -> bool {
        self.unwatched.is_empty()
    }

    /// Whether the kernel's limit kept the watcher from watching the whole tree.
    pub fn limited(&self) -> bool {
        self.limited
    }

    /// What the watch says once, where the limit kept it from watching the whole tree.
    pub fn warning(&self, root: &Path) -> Option<String> {
        if !self.limited {
            return None;
        }
        let limit = crate::watch_limit();
        let fanned = match self.fanned {
            0 => String::new(),
            n => format!("{n} folder(s) are watched through fanotify instead; "),
        };
        let left_out = match self.unwatched.len() {
            0 => String::new(),
            n => format!(
                "{n} folder(s) and what is below them are not watched, and every read checks \
                 them by their stats instead; "
            ),
        };
        Some(format!(
            "watching {}: the kernel's limit of file watches (fs.inotify.max_user_watches = \
             {limit}) is lower than this tree's folders need; {fanned}{left_out}raise the limit \
             with `sudo sysctl fs.inotify.max_user_watches=1048576` (and a line in \
             /etc/sysctl.d/ to keep it)",
            root.display(),
        ))
    }

    /// Takes in what a watcher's `event` says of what it covers: once the limit was reached,
    /// a folder made or moved in is not watched (where the watcher watched it all the same, a
    /// read checks it twice, never too little), and a folder the watcher reports it could not
    /// watch is not either. False where it can no longer say what it misses (an error naming
    /// no folder of the tree, or the limit reached after the start, when folders made in the
    /// same spell may have gone unwatched unnamed): every read must check the whole tree.
    pub(crate) fn note(&mut self, event: &notify::Result<notify::Event>, root: &Path) -> bool {
        match event {
            Ok(e) if (self.limited || self.starting) && may_make_folder(&e.kind) => {
                for path in &e.paths {
                    let folder =
                        matches!(e.kind, EventKind::Create(notify::event::CreateKind::Folder))
                            || path.symlink_metadata().is_ok_and(|m| m.is_dir());
                    if let (true, Some(rel)) = (folder, relative(root, path)) {
                        self.leave_out(rel);
                    }
                }
                true
            }
            // Events lost (an overflow) or one naming nothing: a folder made meanwhile may be
            // neither watched nor left out.
            Ok(e) if (self.limited || self.starting) && (e.need_rescan() || e.paths.is_empty()) => {
                false
            }
            Ok(_) => true,
            Err(e) if (self.limited || self.starting) && !e.paths.is_empty() => {
                let named: Option<Vec<String>> =
                    e.paths.iter().map(|p| relative(root, p)).collect();
                named.is_some_and(|named| {
                    // While the tree is fitted: the limit reached by a folder made meanwhile.
                    self.limited = true;
                    named.into_iter().for_each(|rel| self.leave_out(rel));
                    true
                })
            }
            Err(_) => false,
        }
    }

    /// Counts `folder` unwatched, unless a folder above it is.
    fn leave_out(&mut self, folder: String) {
        let mut above = folder.as_str();
        loop {
            if self.unwatched.contains(above) {
                return;
            }
            match above.rfind('/') {
                Some(i) => above = &above[..i],
                None if !above.is_empty() => above = "",
                None => break,
            }
        }
        let below = |u: &str| {
            folder.is_empty()
                || (u.starts_with(&folder) && u.as_bytes().get(folder.len()) == Some(&b'/'))
        };
        self.unwatched.retain(|u| !below(u));
        self.unwatched.insert(folder);
    }
}

/// Whether an event of `kind` may bring a folder into the tree.
fn may_make_folder(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Create(_) | EventKind::Modify(notify::event::ModifyKind::Name(_))
    )
}

/// Watches the tree at `root` with `watcher`, all of it where the kernel's limit allows, else
/// what fits ([`Coverage`]); `skip` (the store's folder, which its own caller watches) is not
/// gone into where folders are tried one by one.
///
/// A subtree is only tried whole where its folders, counted first, fit the watches left: a
/// try that fails drops the watches it made, and the kernel queues an event for each one
/// dropped. More than its queue holds (`fs.inotify.max_queued_events`, 16,384 by default)
/// overflow it, and events lost while the tree is fitted leave the watcher blind for good.
///
/// Once inotify takes no more, the fanotify group `start_fan` makes (the first time it is
/// needed) marks what it can of the rest; it is kept where it marked a folder of the tree.
pub(crate) fn watch_fitting(
    watcher: &mut notify::RecommendedWatcher,
    root: &Path,
    skip: &Path,
    start_fan: impl FnOnce() -> Option<Fan>,
) -> Result<(Coverage, Option<Fan>), Error> {
    let mut coverage = Coverage::default();
    let mut rest = Rest {
        start: Some(start_fan),
        fan: None,
    };
    let mut full = false;
    // None: the watches left are not known, and every subtree is tried.
    let mut left = watches_left();
    let mut to_try: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(folder) = to_try.pop() {
        let rel = || relative(root, &folder).unwrap_or_default();
        if full {
            rest.take(&mut coverage, &folder, root, skip);
            continue;
        }
        let folders = left.map(|left| (folders_up_to(&folder, left), left));
        if folders.is_none_or(|(n, left)| n <= left) {
            match tried(watcher, &folder, RecursiveMode::Recursive, root)? {
                Tried::Watched => {
                    left = folders.map(|(n, left)| left - n);
                    continue;
                }
                Tried::Gone => continue,
                // A folder below the root it cannot watch (no permission, say) is checked
                // instead.
                Tried::Failed => {
                    coverage.leave_out(rel());
                    continue;
                }
                Tried::Limit => {
                    // Fewer left than counted (a process that started meanwhile): its partial
                    // watches dropped, and what is left read again.
                    let _ = watcher.unwatch(&folder);
                    left = watches_left();
                }
            }
        }
        coverage.limited = true;
        // The folder alone, then each child the same way.
        match tried(watcher, &folder, RecursiveMode::NonRecursive, root)? {
            Tried::Watched => {
                left = left.map(|left| left.saturating_sub(1));
                match child_folders(&folder, root, skip) {
                    Some(children) => to_try.extend(children),
                    // Children it cannot list are neither watched nor known: all checked.
                    None => coverage.leave_out(rel()),
                }
            }
            Tried::Limit => {
                full = true;
                rest.take(&mut coverage, &folder, root, skip);
            }
            Tried::Failed => coverage.leave_out(rel()),
            Tried::Gone => {}
        }
    }
    let fan = rest.fan.filter(|fan| fan.marked() > 0);
    coverage.fanned = fan.as_ref().map_or(0, Fan::marked);
    Ok((coverage, fan))
}

/// What takes the folders inotify cannot: a fanotify group, made when first needed.
struct Rest<F> {
    start: Option<F>,
    fan: Option<Fan>,
}

impl<F: FnOnce() -> Option<Fan>> Rest<F> {
    /// Marks `folder` and every folder below it, depth first, as far as the group (if there is
    /// one) holds them; what it does not hold is left out, checked by every read.
    fn take(&mut self, coverage: &mut Coverage, folder: &Path, root: &Path, skip: &Path) {
        if let Some(start) = self.start.take() {
            self.fan = start();
        }
        let leave_out = |coverage: &mut Coverage, dir: &Path| {
            coverage.leave_out(relative(root, dir).unwrap_or_default());
        };
        let Some(fan) = self.fan.as_mut() else {
            return leave_out(coverage, folder);
        };
        let mut to_mark = vec![folder.to_path_buf()];
        while let Some(dir) = to_mark.pop() {
            match fan.mark(&dir) {
                Marked::Watched => match child_folders(&dir, root, skip) {
                    Some(children) => to_mark.extend(children),
                    None => leave_out(coverage, &dir),
                },
                Marked::Limit | Marked::Failed => leave_out(coverage, &dir),
            }
        }
    }
}

/// How many more watches this process may make: the kernel's limit (one per user) less the
/// watches held by the inotify instances of this user's processes (each a line `inotify wd:`
/// in `/proc/PID/fdinfo/FD`, for each FD linked to `anon_inode:inotify`); those it cannot read
/// count none, so a try can still fail. `None` where the limit cannot be read.
#[cfg(unix)]
fn watches_left() -> Option<u64> {
    use std::os::unix::fs::MetadataExt as _;
    let limit = crate::watch_limit_number()?;
    let me = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
    let mut held = 0u64;
    for process in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let mine = process.metadata().is_ok_and(|m| Some(m.uid()) == me);
        let numbered = process
            .file_name()
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
        if mine && numbered {
            held += watches_held(&process.path());
        }
    }
    Some(limit.saturating_sub(held))
}

/// Off Unix the watches left are not known: every subtree is tried.
#[cfg(not(unix))]
fn watches_left() -> Option<u64> {
    None
}

/// The inotify watches the process at `proc` (`/proc/PID`) holds, as far as can be read.
#[cfg(unix)]
fn watches_held(proc: &Path) -> u64 {
    let Ok(fds) = std::fs::read_dir(proc.join("fd")) else {
        return 0;
    };
    let mut held = 0u64;
    for fd in fds.flatten() {
        let inotify =
            std::fs::read_link(fd.path()).is_ok_and(|l| l == Path::new("anon_inode:inotify"));
        if !inotify {
            continue;
        }
        if let Ok(info) = std::fs::read_to_string(proc.join("fdinfo").join(fd.file_name())) {
            held += info
                .lines()
                .filter(|l| l.starts_with("inotify wd:"))
                .count() as u64;
        }
    }
    held
}

/// The folders a recursive watch of `folder` would watch (it and every folder below it, links
/// not followed), counted up to `cap + 1`: enough to know it does not fit.
fn folders_up_to(folder: &Path, cap: u64) -> u64 {
    let mut count = 0u64;
    let mut open = vec![folder.to_path_buf()];
    while let Some(dir) = open.pop() {
        count += 1;
        if count > cap {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                open.push(entry.path());
            }
        }
    }
    count
}

/// What watching a folder came to.
enum Tried {
    Watched,
    /// The kernel's limit reached.
    Limit,
    /// Gone meanwhile (below the root: its parent's watch reports it).
    Gone,
    /// Another error, below the root.
    Failed,
}

/// Watches `folder` in `mode`; an error other than the limit is the caller's at the root.
fn tried(
    watcher: &mut notify::RecommendedWatcher,
    folder: &Path,
    mode: RecursiveMode,
    root: &Path,
) -> Result<Tried, Error> {
    match watcher.watch(folder, mode) {
        Ok(()) => Ok(Tried::Watched),
        Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => Ok(Tried::Limit),
        Err(e) if folder == root => Err(watch_error(root, e)),
        Err(e) if matches!(e.kind, notify::ErrorKind::PathNotFound) => Ok(Tried::Gone),
        Err(_) => Ok(Tried::Failed),
    }
}

/// The folders in `folder` to try one by one, in reverse name order (tried last first off the
/// stack: in name order): not symlinks to one, nor `skip`; of the root's `.git`, only `info`
/// (its `exclude` decides what is ignored). `None` where the listing fails.
fn child_folders(folder: &Path, root: &Path, skip: &Path) -> Option<Vec<PathBuf>> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir(folder).ok()? {
        let entry = entry.ok()?;
        if !entry.file_type().ok()?.is_dir() {
            continue;
        }
        let path = entry.path();
        if path == skip {
            continue;
        }
        if entry.file_name() == ".git" {
            let info = path.join("info");
            if folder == root && info.is_dir() {
                children.push(info);
            }
            continue;
        }
        children.push(path);
    }
    children.sort();
    children.reverse();
    Some(children)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited(unwatched: &[&str]) -> Coverage {
        let mut c = Coverage {
            limited: true,
            ..Coverage::default()
        };
        for u in unwatched {
            c.leave_out((*u).to_owned());
        }
        c
    }

    #[test]
    fn a_folder_left_out_covers_those_below_it() {
        let mut c = limited(&["a/b/c", "a/bc", "x"]);
        c.leave_out("a/b/c/d".to_owned());
        assert_eq!(c.unwatched(), ["a/b/c", "a/bc", "x"]);
        c.leave_out("a/b".to_owned());
        assert_eq!(c.unwatched(), ["a/b", "a/bc", "x"]);
        c.leave_out(String::new());
        assert_eq!(c.unwatched(), [""]);
        c.leave_out("q".to_owned());
        assert_eq!(c.unwatched(), [""]);
    }

    #[test]
    fn once_limited_new_folders_are_left_out_and_an_unnamed_error_blinds() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = dir.path();
        std::fs::create_dir_all(root.join("made/deep")).expect("folders");
        std::fs::write(root.join("file.rs"), "").expect("a file");
        let event = |kind, path: &str| Ok(notify::Event::new(kind).add_path(root.join(path)));
        let created = EventKind::Create(notify::event::CreateKind::Any);
        let renamed = EventKind::Modify(notify::event::ModifyKind::Name(
            notify::event::RenameMode::To,
        ));
        // Not limited: a new folder is the watcher's to watch.
        let mut full = Coverage::default();
        assert!(full.note(&event(created, "made"), root));
        assert!(full.unwatched().is_empty());
        assert!(!full.note(
            &Err(notify::Error::new(notify::ErrorKind::MaxFilesWatch).add_path(root.join("made"))),
            root
        ));
        // Limited: folders made or moved in are left out, files are not.
        let mut c = limited(&["x"]);
        assert!(c.note(&event(created, "file.rs"), root));
        assert!(c.note(&event(renamed, "made/deep"), root));
        assert_eq!(c.unwatched(), ["made/deep", "x"]);
        let lost = notify::Error::new(notify::ErrorKind::MaxFilesWatch).add_path(root.join("made"));
        assert!(c.note(&Err(lost), root));
        assert_eq!(c.unwatched(), ["made", "x"]);
        assert!(!c.note(&Err(notify::Error::generic("queue")), root));
        // Events lost: a folder made meanwhile may be neither watched nor left out.
        let overflow = notify::Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        assert!(!c.note(&Ok(overflow), root));
        // While fitting: a folder the watcher could not watch means the limit was reached.
        let mut starting = Coverage::starting();
        let lost = notify::Error::new(notify::ErrorKind::MaxFilesWatch).add_path(root.join("made"));
        assert!(starting.note(&Err(lost), root));
        starting.fitted(Coverage::default());
        assert!(starting.limited());
        assert_eq!(starting.unwatched(), ["made"]);
        assert!(!c.note(
            &Err(notify::Error::generic("elsewhere").add_path(PathBuf::from("/elsewhere"))),
            root
        ));
    }
}
