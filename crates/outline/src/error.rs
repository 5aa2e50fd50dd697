//! The outline crate's errors: a grammar that does not load, a parse that yields no tree.
use thiserror::Error;

/// What can go wrong while outlining a file. Both name the language at fault; the caller knows
/// the path and adds it.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The grammar was built for a tree-sitter ABI this runtime does not load.
    #[error("cannot load the {language} grammar: {message}")]
    Grammar {
        language: &'static str,
        message: String,
    },
    /// tree-sitter gave no tree (it does so only when cancelled or out of time, which outline
    /// never asks for).
    #[error("the {language} parser gave no tree")]
    Parse { language: &'static str },
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
