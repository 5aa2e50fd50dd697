//! The context crate's error type.

/// Errors from composing views, synthesizing and regenerating frames.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(transparent)]
    Store(#[from] merkle_store::Error),
    #[error(transparent)]
    Retrieve(#[from] retrieve::Error),
    #[error("cannot start the generate threads: {message}")]
    Threads { message: String },
    #[error("{path:?} is not a directory: only directories are synthesized")]
    NotADirectory { path: String },
    #[error("no view named {name:?} (known: {known})")]
    NoSuchView { name: String, known: String },
    #[error("invalid views file {file}: {message}")]
    ViewsFile { file: String, message: String },
    #[error("invalid view {view:?}: {message}")]
    InvalidView { view: String, message: String },
    #[error("no producer for frame type {frame_type:?} on {path:?}")]
    NoProducer { frame_type: String, path: String },
    #[error("producer {producer} failed on {path:?}: {message}")]
    Producer {
        producer: String,
        path: String,
        message: String,
    },
    /// A request a front end passed on that cannot be answered as asked (an empty query, a
    /// budget of nothing): the caller's to fix, as a usage error.
    #[error("{0}")]
    Request(String),
    /// A search's type that is neither a kind of definition nor a language.
    #[error(
        "--type {kind:?} is neither a kind of definition (function, method, struct, class, ...) \
         nor a language (rust, python, typescript, ...)"
    )]
    UnknownFilter { kind: String },
    /// Related files asked for a directory (`path` as messages show it: the root is `.`).
    #[error("{path:?} is a directory: related lists the imports of a file")]
    NotAFile { path: String },
    /// References asked for something that is no name (`refs`).
    #[error(
        "{target:?} is no symbol name: refs takes a name (`parse`, `Type::name`, `Class.name`) or PATH:LINE"
    )]
    NotASymbol { target: String },
    /// References asked for `PATH:LINE` where no definition spans that line.
    #[error("{path}:{line}: no definition spans that line")]
    NoDefinitionAt { path: String, line: usize },
    #[error("synthesis policy {policy} failed on {path:?}: {message}")]
    Policy {
        policy: String,
        path: String,
        message: String,
    },
    /// git, which `report` runs to read a revision's tree, failed or answered what it could
    /// not read.
    #[error("{message}")]
    Git {
        message: String,
        source: Option<std::io::Error>,
    },
}

/// The context crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// What kind of failure it is, as front ends name it: the store's kind for a store error
    /// ([`merkle_store::Error::kind`]), `usage` for a request that cannot be answered as asked
    /// (an empty query, an unknown filter, a directory's imports, a refs target that is no
    /// name or no definition's line), else `error`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Store(s) => s.kind(),
            Error::Request(_)
            | Error::UnknownFilter { .. }
            | Error::NotAFile { .. }
            | Error::NotASymbol { .. }
            | Error::NoDefinitionAt { .. } => "usage",
            _ => "error",
        }
    }
}
