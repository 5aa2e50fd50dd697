//! The retrieve crate's error type.
use std::path::PathBuf;

/// Errors from opening, updating and searching the index.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("full-text index {}: {message}", dir.display())]
    Index { dir: PathBuf, message: String },
    #[error("full-text index {}: another process is updating it (waited 10 s)", dir.display())]
    Busy { dir: PathBuf },
}

/// The retrieve crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
