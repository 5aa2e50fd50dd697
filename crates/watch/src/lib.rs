//! All of merkle's file watching, above the core: context's freshness rule
//! (`context::ops::Workspace::read`) asks a [`context::ops::Watcher`] what changed, and this
//! crate has the two there are, with the one set of event rules they follow.
//!
//! - [`events`]: which file events may change a workspace's tree, and the paths they name.
//! - [`Live`] (`live.rs`): a long-running process's own watcher (the MCP server's), which
//!   settles each read with a barrier file and names the paths to rescan.
//! - [`Looping`] (`looped.rs`): `merkle watch`'s loop (debounce, rescans of the paths named,
//!   full rescans after a lost event), and [`vouch`]: the socket over which it vouches for its
//!   last rescan, and [`Vouching`], the watcher a reader in another process asks it through;
//!   [`asked`]: the questions (a search) other processes ask it of the workspace, answered on
//!   the tree it keeps.
//!
//! # Invariants
//!
//! - **Never a silently stale read**: a lost event, a barrier that does not come back, or a
//!   watch that cannot answer means everything is looked at.
//! - **No watcher wakes itself**: the store's own writes, `.git` and reads are not changes.
pub mod asked;
pub mod events;
#[cfg(target_os = "linux")]
mod fan;
/// Off Linux there is no fanotify: folders the watcher cannot watch are checked by their stats.
#[cfg(not(target_os = "linux"))]
mod fan {
    pub(crate) type Handler = Box<dyn Fn(notify::Result<notify::Event>) + Send>;
    #[allow(dead_code)]
    pub(crate) enum Marked {
        Watched,
        Limit,
        Failed,
    }
    pub(crate) struct Fan;
    impl Fan {
        pub(crate) fn start(_barriers: &std::path::Path, _handler: Handler) -> Option<Fan> {
            None
        }
        pub(crate) fn mark(&mut self, _folder: &std::path::Path) -> Marked {
            Marked::Failed
        }
        pub(crate) fn marked(&self) -> usize {
            0
        }
    }
}
mod fit;
mod live;
mod looped;
pub mod vouch;

pub use fit::Coverage;
pub use live::Live;
pub use looped::{Failed, Looping, Options, Said, Stopper};
pub use vouch::Vouching;

/// The queue an event came through: inotify's, or a fanotify group's where inotify's limit
/// was reached (`fan.rs`). A barrier file's event must come through every queue that watches,
/// each delivering its events in order, before a read knows it has seen all that came before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Queue {
    Inotify = 1,
    Fanotify = 2,
}

impl Queue {
    /// The queues a barrier waits for, as bits: inotify's, and the fanotify group's where
    /// there is one.
    pub(crate) fn all(fan: bool) -> u8 {
        Queue::Inotify as u8 | if fan { Queue::Fanotify as u8 } else { 0 }
    }
}

/// The socket's file name in the store folder, where a running `merkle watch` answers
/// ([`vouch`], [`asked`]).
pub const SOCKET: &str = "watch.sock";
/// How long a reader waits for the watch's word on freshness before walking the tree itself
/// (and for a question to be taken).
pub const ASK_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);

/// An inotify watcher whose events, by the rules both watchers follow
/// ([`events::watcher_config`]), go to `handler`.
fn file_watcher(
    handler: impl Fn(notify::Result<notify::Event>) + Send + 'static,
) -> Result<notify::RecommendedWatcher, Error> {
    use notify::Watcher as _;
    notify::RecommendedWatcher::new(handler, events::watcher_config()).map_err(|e| Error::Watcher {
        what: "starting the file watcher".to_owned(),
        source: e,
    })
}

/// The error of watching `root`.
fn watch_error(root: &std::path::Path, e: notify::Error) -> Error {
    if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) {
        return Error::WatchLimit {
            root: root.to_path_buf(),
            limit: watch_limit(),
        };
    }
    Error::Watcher {
        what: format!("watching {} for changes", root.display()),
        source: e,
    }
}

/// The kernel's limit of inotify watches: the lower of the kernel's and this user namespace's
/// own (a container's), which the kernel holds every watch to; `?` where neither reads.
fn watch_limit() -> String {
    watch_limit_number().map_or_else(|| "?".to_owned(), |n| n.to_string())
}

/// The kernel's limit of inotify watches as a number; `None` where neither limit reads.
fn watch_limit_number() -> Option<u64> {
    WATCH_LIMITS
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok()?.trim().parse::<u64>().ok())
        .min()
}

/// Where Linux keeps its limits of inotify watches per user (one a folder): the kernel's, and
/// the user namespace's own.
const WATCH_LIMITS: [&str; 2] = [
    "/proc/sys/fs/inotify/max_user_watches",
    "/proc/sys/user/max_inotify_watches",
];

/// Errors of starting a watcher.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(transparent)]
    Store(#[from] merkle_store::Error),
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// The kernel's limit of inotify watches (one a folder) is lower than the tree needs.
    #[error(
        "watching {}: the kernel's limit of file watches (fs.inotify.max_user_watches = {limit}) \
         is lower than this tree's folders need; raise it with `sudo sysctl \
         fs.inotify.max_user_watches=1048576` (and a line in /etc/sysctl.d/ to keep it)",
        root.display()
    )]
    WatchLimit {
        root: std::path::PathBuf,
        limit: String,
    },
    /// The file watcher could not start, or watch a folder.
    #[error("{what}")]
    Watcher {
        what: String,
        #[source]
        source: notify::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_s_watch_limit_is_named_with_the_sysctl_that_raises_it() {
        let root = std::path::Path::new("/work/repo");
        let limit = watch_error(root, notify::Error::new(notify::ErrorKind::MaxFilesWatch));
        let text = limit.to_string();
        assert!(text.starts_with("watching /work/repo: "), "{text}");
        assert!(
            text.contains("sudo sysctl fs.inotify.max_user_watches="),
            "{text}"
        );
        let other = watch_error(root, notify::Error::new(notify::ErrorKind::PathNotFound));
        assert_eq!(other.to_string(), "watching /work/repo for changes");
    }
}
