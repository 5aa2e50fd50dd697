//! The agent runtime's one error type: every variant names the input at fault.
use std::path::PathBuf;

/// Errors from storage, conversations, the system prompt and tools.
///
/// Tool errors are not fatal to a turn: the registry turns them into error results that the
/// model reads, so their messages are written for a model as much as for a person.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("io error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} does not exist")]
    NotFound { path: PathBuf },
    #[error("{path} is corrupt at line {line}: {reason}")]
    Corrupt {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("cannot encode an entry of {path} as JSON: {reason}")]
    Encode { path: PathBuf, reason: String },
    #[error("invalid conversation id {id:?}: {reason}")]
    InvalidConversationId { id: String, reason: &'static str },
    #[error("no conversation {id:?} in {dir}")]
    NoSuchConversation { id: String, dir: PathBuf },

    #[error("model call failed: {0}")]
    Model(#[from] llm_core::Error),
    #[error("store: {0}")]
    Store(#[from] merkle_store::Error),
    /// A context operation's error, worded as context words it.
    #[error(transparent)]
    Context(#[from] context::Error),
    #[error("cannot write the audit log: {0}")]
    Audit(#[from] governance::Error),
    #[error(
        "the newest message is about {tokens} tokens, more than the {budget} the context window \
         leaves for messages: compaction cannot make it fit; send less (or raise the window)"
    )]
    ContextOverflow { tokens: u64, budget: u64 },
    #[error("nothing to retry: the conversation's last message is not a pending request")]
    NothingToRetry,

    #[error("unknown tool {name:?}; the tools are: {known}")]
    UnknownTool { name: String, known: String },
    #[error("tool {name:?} is registered twice")]
    DuplicateTool { name: String },
    #[error("invalid input for tool {tool}: {reason}")]
    InvalidInput { tool: String, reason: String },
    #[error("tool {tool} failed: {message}")]
    Handler { tool: String, message: String },
    #[error("path {path:?} is outside the workspace")]
    OutsideWorkspace { path: String },
    #[error("path {path:?} is in {protected}, which tools may not change")]
    Protected {
        path: String,
        protected: &'static str,
    },
    #[error("path {path:?} has too many symbolic links")]
    SymlinkLoop { path: String },
    #[error("path {path:?} does not exist")]
    NoSuchPath { path: String },
    #[error("path {path:?} is not a directory")]
    NotADirectory { path: String },
    #[error("path {path:?} is a directory, not a file")]
    IsADirectory { path: String },
    #[error("path {path:?} is not a regular file")]
    NotAFile { path: String },
    #[error("{path:?} is not a text file")]
    NotText { path: String },
    #[error("{path:?} is {size} bytes, more than the {limit} bytes the tools read")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("old_string does not occur in {path:?}; read the file and copy the text exactly")]
    NoMatch { path: String },
    #[error("old_string occurs {count} times in {path:?}; include more context to make it unique")]
    AmbiguousMatch { path: String, count: usize },
    #[error("invalid regular expression {pattern:?}: {reason}")]
    InvalidPattern { pattern: String, reason: String },
    #[error("command {command:?} ran past its time limit of {limit:?} and was killed\n{output}")]
    CommandTimedOut {
        command: String,
        limit: std::time::Duration,
        output: String,
    },
    #[error("command {command:?} could not start: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
}

/// The agent runtime's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// What kind of failure it is, as front ends name it: that of the shared operations'
    /// error it carries ([`context::Error::kind`]), else `error`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Context(c) => c.kind(),
            _ => "error",
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
