//! The store's one error type: every variant names the input at fault.
use std::path::PathBuf;

use crate::hash::Hash;

/// Errors from scanning, storing and reading the Merkle tree and its frames.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("io error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "store {store} is in use by another process; wait for it to finish or point --store elsewhere"
    )]
    StoreInUse { store: PathBuf },
    #[error("no store at {store}: run `merkle scan` first")]
    NoStore { store: PathBuf },
    #[error(
        "the store file {file} is damaged ({message}): restore it from a backup, or move it aside and run `merkle scan` to start a new store"
    )]
    Damaged { file: PathBuf, message: String },
    #[error(
        "the store {store} holds a {holds} store, not {requested}: leave out --engine, or pass --engine {holds}"
    )]
    EngineMismatch {
        store: PathBuf,
        requested: &'static str,
        holds: &'static str,
    },
    #[error("storage engine error in {store}: {message}")]
    Engine { store: PathBuf, message: String },
    #[error(
        "the {engine} engine is not built into this binary (enable the `{engine}` cargo feature)"
    )]
    EngineUnavailable { engine: String },
    #[error("corrupt record in table {table} at key {key}: {reason}")]
    Corrupt {
        table: &'static str,
        key: String,
        reason: String,
    },
    #[error("no node at path {path:?} in the last scan")]
    NoSuchPath { path: String },
    #[error("no node with id {id}")]
    NoSuchNode { id: String },
    #[error("node id prefix {prefix} is ambiguous: it matches {count} nodes")]
    AmbiguousPrefix { prefix: String, count: usize },
    #[error("no frame with id {id}")]
    NoSuchFrame { id: String },
    #[error("invalid {what} {value:?}: {reason}")]
    Invalid {
        what: &'static str,
        value: String,
        reason: &'static str,
    },
    #[error("unknown agent {agent:?}: register it with `merkle agent add {agent} --role writer`")]
    UnknownAgent { agent: String },
    #[error("agent {agent:?} has role {role} and may not {action}")]
    Forbidden {
        agent: String,
        role: merkle_hash::Role,
        action: &'static str,
    },
    #[error(
        "frame {frame_id} already belongs to node {existing}, not {requested}: give the frame a basis that identifies its node"
    )]
    FrameConflict {
        frame_id: Hash,
        existing: Hash,
        requested: Hash,
    },
    #[error(
        "basis {basis} is the NodeID of {path:?}, another node: a frame derived from a node goes on that node"
    )]
    BasisOfAnotherNode { basis: Hash, path: String },
    #[error("{path} changed on disk since the last scan: run `merkle scan` first")]
    ContentChanged { path: String },
    #[error("no scan has been recorded yet: run `merkle scan` first")]
    NotScanned,
    #[error("refused {item}: {reason}")]
    Refused { item: String, reason: String },
}

/// The store's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// What kind of failure it is, as front ends name it (`--json` errors' `kind`):
    /// `not_found`, `no_store`, `not_scanned`, `busy`, `invalid` (a value the store refuses),
    /// or `store` (damage or an engine failure).
    pub fn kind(&self) -> &'static str {
        match self {
            Error::NoSuchPath { .. } | Error::NoSuchNode { .. } | Error::NoSuchFrame { .. } => {
                "not_found"
            }
            Error::NoStore { .. } => "no_store",
            Error::NotScanned => "not_scanned",
            Error::StoreInUse { .. } => "busy",
            Error::Invalid { .. }
            | Error::UnknownAgent { .. }
            | Error::Forbidden { .. }
            | Error::FrameConflict { .. }
            | Error::BasisOfAnotherNode { .. }
            | Error::AmbiguousPrefix { .. }
            | Error::Refused { .. } => "invalid",
            _ => "store",
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn corrupt(table: &'static str, key: &[u8], reason: impl Into<String>) -> Error {
        Error::Corrupt {
            table,
            key: key_text(key),
            reason: reason.into(),
        }
    }
}

/// A record key as messages show it: quoted when it is printable text (a path, a meta name),
/// else in hex (a NodeID, a FrameID).
pub(crate) fn key_text(key: &[u8]) -> String {
    match std::str::from_utf8(key) {
        Ok(text) if !text.is_empty() && !text.chars().any(char::is_control) => format!("{text:?}"),
        _ => crate::hash::to_hex(key),
    }
}
