//! How the MCP server reaches the store: through context's [`Workspace`], whose handles its
//! requests share (reads one read-only handle while any is in flight, a write the store
//! alone) and whose freshness rule every read follows, watched by merkle-watch's [`Live`]
//! watcher: before answering, a request waits until the watcher has delivered every event
//! queued before it arrived, and has what changed rescanned, so a read answers for the files
//! as they were when it arrived and costs no scan when nothing changed. Where no such watcher
//! runs (it failed to start; not Linux), every request checks the disk first, which costs what
//! `merkle status` costs.
use std::sync::Arc;

use context::ops::Workspace;
use watch::Live;

use crate::error::{Error, Result};

/// `workspace`, watched for changes when a watcher can start (else, unless `quiet`, a warning
/// says so).
pub(crate) fn watched(workspace: Workspace, quiet: bool) -> Workspace {
    if !cfg!(target_os = "linux") {
        return workspace;
    }
    match Live::start(&workspace) {
        Ok(live) => {
            if let (Some(warning), false) = (live.warning(), quiet) {
                eprintln!("warning: {warning}");
            }
            workspace.watched_by(Arc::new(live))
        }
        Err(e) => {
            if !quiet {
                eprintln!(
                    "warning: {}; every request checks the workspace first instead",
                    Error::from(e).chain()
                );
            }
            workspace
        }
    }
}

/// `read`'s answer, else, where there is no store yet, `missing` when given (a workspace never
/// scanned has no frames, no resources).
pub(crate) fn or_missing<T>(read: Result<T>, missing: Option<T>) -> Result<T> {
    match (read, missing) {
        (Err(e), Some(answer)) if no_store(&e) => Ok(answer),
        (read, _) => read,
    }
}

fn no_store(e: &Error) -> bool {
    matches!(
        e,
        Error::Store(merkle_store::Error::NoStore { .. })
            | Error::Context(context::Error::Store(merkle_store::Error::NoStore { .. }))
    )
}
