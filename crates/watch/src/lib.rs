//! All of merkle's file watching, above the core: context's freshness rule
//! (`context::ops::Workspace::read`) asks a [`context::ops::Watcher`] what changed, and this
//! crate has the two there are, with the one set of event rules they follow.
//!
//! - [`events`]: which file events may change a workspace's tree, and the paths they name.
//! - [`Live`] (`live.rs`): a long-running process's own watcher (the MCP server's), which
//!   settles each read with a barrier file and names the paths to rescan.
//! - [`Looping`] (`looped.rs`): `merkle watch`'s loop (debounce, rescans of the paths named,
//!   full rescans after a lost event), and [`vouch`]: the socket over which it vouches for its
//!   last rescan, and [`Vouching`], the watcher a reader in another process asks it through.
//!
//! # Invariants
//!
//! - **Never a silently stale read**: a lost event, a barrier that does not come back, or a
//!   watch that cannot answer means everything is looked at.
//! - **No watcher wakes itself**: the store's own writes, `.git` and reads are not changes.
pub mod events;
mod live;
mod looped;
pub mod vouch;

pub use live::Live;
pub use looped::{Failed, Looping, Options, Said, Stopper};
pub use vouch::Vouching;

/// Starts `watcher` on the workspace at `root`, every folder below.
fn watch_tree(
    watcher: &mut notify::RecommendedWatcher,
    root: &std::path::Path,
) -> Result<(), Error> {
    use notify::Watcher as _;
    watcher
        .watch(root, notify::RecursiveMode::Recursive)
        .map_err(|e| Error::Watcher {
            what: format!("watching {} for changes", root.display()),
            source: e,
        })
}

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
    /// The file watcher could not start, or watch a folder.
    #[error("{what}")]
    Watcher {
        what: String,
        #[source]
        source: notify::Error,
    },
}
