//! Team-shared context: a store's frames pushed to and pulled from a PostgreSQL remote.
//!
//! Frames are immutable and named by their content, so sharing them is a set union: a push
//! sends what the remote lacks, a pull fetches what the store lacks, and neither ever changes a
//! frame. A remote is a schema in a PostgreSQL database that a team already runs (tables
//! `frames`, `nodes`, `memos`, `agents` and `meta`; [`schema::INIT_SQL`] is the whole of it),
//! so it grows to millions of frames without a server of our own, and reads stay local: the
//! store (redb) is the working copy, the remote only a meeting place.
//!
//! - [`config`]: remotes by name in `<store>/remotes.json` (URL and schema; credentials from the
//!   URL, `PGPASSWORD` / `~/.pgpass`, or `MERKLE_REMOTE_<NAME>_URL`, and never printed).
//! - [`push`]: one transaction; what is missing is decided by ids, in batches, and sent with
//!   `COPY ... BINARY`; a push that dies leaves nothing half-visible. A per-remote mark in the
//!   store remembers how far the frame sequence was pushed, so the ids compared grow with
//!   what was written since, not with the store.
//! - [`check`]: every row checked as a pull would, and the bad ones listed.
//! - [`pull`]: fetches the frames (with their nodes, memos and agents) for the local tree's
//!   paths, or everything; checks every FrameID and NodeID against what it names before
//!   storing anything ([`merkle_store::Store::import`]); heads follow one deterministic rule.
//!
//! **Trust.** A pulled frame's id is re-derived from its basis, content, type and agent, and a
//! node's from its record, so a remote cannot alter a frame's content or attribution without
//! the pull refusing it. The id does not cover the node a frame is on; the basis does where it
//! is a node's id (a file's frames, and any frame put without a basis), and a frame whose basis
//! is another node's id is refused. A frame with a derived basis (a directory's synthesis, an
//! invalidation, a regeneration) is trusted for its node, as for what else ids do not cover: a
//! frame's metadata (`created_at`, provider, model, notes), which frames and memos it offers or
//! withholds, and that an agent's name is the person it says: anyone who may write to the
//! schema can write new frames, on any node, under any agent name. Grant writing to those you
//! would let write your store.
//!
//! The crate is async (tokio-postgres over rustls); it spawns the connection's task on the
//! caller's runtime and builds none. The store is called synchronously between awaits.
//!
//! **Concurrency and secrets.** A push copies into temporary tables, then inserts in key order
//! with `ON CONFLICT DO NOTHING`, so concurrent pushers neither deadlock nor fail; its mark in the
//! store (per remote id) moves only after the commit. No credential is stored, logged or printed:
//! URLs are shown through `config::redact`. Reads never touch the remote, and the store does not
//! depend on this crate (it offers `frames_after`, `memos`, `import` and the marks).
pub mod check;
pub mod config;
mod connect;
pub mod error;
pub mod pull;
pub mod push;
pub mod schema;

pub use check::{BadRow, CheckReport, check};
pub use config::{Remote, Remotes};
pub use connect::{Session, connect};
pub use error::{Error, Result};
pub use pull::{PullOptions, PullReport, pull};
pub use push::{PushOptions, PushReport, forget_pushed, push};

/// Counts of what a push or pull moved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Moved {
    /// Frames.
    pub frames: u64,
    /// Node records.
    pub nodes: u64,
    /// Memos.
    pub memos: u64,
    /// Agents.
    pub agents: u64,
}

/// Whom a push or pull tells where it is: nobody, or a function.
#[derive(Clone, Copy, Default)]
pub struct OnProgress<'a>(pub Option<&'a (dyn Fn(Progress) + Sync)>);

impl std::fmt::Debug for OnProgress<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "OnProgress(Some(..))"
        } else {
            "OnProgress(None)"
        })
    }
}

impl OnProgress<'_> {
    pub(crate) fn report(&self, p: Progress) {
        if let Some(f) = self.0 {
            f(p);
        }
    }
}

/// Where a long push or pull is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Comparing ids with the other side: `done` of `total`.
    Comparing { done: u64, total: u64 },
    /// Sending (push) or receiving (pull) frames: `done` of `total`.
    Transferring { done: u64, total: u64 },
    /// Committing.
    Committing,
}
