//! Which file events may change a workspace's tree, and the paths they name: the rules the
//! server's watcher and `merkle watch` both follow, so that neither wakes itself up with its
//! own writes and both rescan only what an event names.
use std::collections::BTreeSet;
use std::path::{Component, Path};

use notify::EventKind;
use notify::event::{AccessKind, AccessMode};

/// The file watcher's settings for both watchers: symlinks not followed (scans do not follow
/// them: through a linked folder, events would name a path the tree does not hold), and only
/// the events that can change the tree asked of the kernel. A read (an open, a close without
/// writing) is never sent: before, every file another process opened (a `git grep`, a build)
/// was an event to deliver and drop, which made those reads a third slower and could overflow
/// the kernel's queue, costing a full rescan.
pub fn watcher_config() -> notify::Config {
    notify::Config::default()
        .with_follow_symlinks(false)
        .with_event_kinds(notify::EventKindMask::CORE | notify::EventKindMask::ACCESS_CLOSE)
}

/// Adds the paths `event` names, relative to `root`, to `touched`; an event that needs a full
/// rescan (the watcher's queue overflowed), names no path or one outside the workspace makes it
/// `None`: look at everything.
pub fn note_paths(touched: &mut Option<BTreeSet<String>>, event: &notify::Event, root: &Path) {
    let Some(set) = touched else {
        return;
    };
    if event.need_rescan() || event.paths.is_empty() {
        *touched = None;
        return;
    }
    for path in &event.paths {
        match relative(root, path) {
            Some(rel) => {
                set.insert(rel);
            }
            None => {
                *touched = None;
                return;
            }
        }
    }
}

/// `path` relative to `root`, `/`-separated; `None` outside it or not UTF-8.
pub(crate) fn relative(root: &Path, path: &Path) -> Option<String> {
    let parts = path
        .strip_prefix(root)
        .ok()?
        .components()
        .map(|c| match c {
            Component::Normal(name) => name.to_str(),
            _ => None,
        })
        .collect::<Option<Vec<&str>>>()?;
    Some(parts.join("/"))
}

/// Whether an event may mean the tree changed. Reads (scans and generation open files and
/// folders too) are not changes, and neither is anything under the store, the workspace's
/// `.merkle` or a `.git` (but its `info/exclude`, which decides what is ignored), or a watcher
/// would wake itself up forever.
pub fn is_relevant(event: &notify::Event, root: &Path, store_dir: &Path) -> bool {
    if event.need_rescan() {
        return true;
    }
    if let EventKind::Access(kind) = event.kind
        && kind != AccessKind::Close(AccessMode::Write)
    {
        return false;
    }
    // An event naming no path may be about anything.
    event.paths.is_empty()
        || event.paths.iter().any(|p| {
            let rel = p.strip_prefix(root).unwrap_or(p);
            !p.starts_with(store_dir)
                && !rel.starts_with(".merkle")
                && (rel == Path::new(".git/info/exclude")
                    || !rel
                        .components()
                        .any(|c| matches!(c, Component::Normal(name) if name == ".git")))
        })
}
