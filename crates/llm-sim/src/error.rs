//! The one error type of this crate.

use std::path::PathBuf;

/// Everything that can go wrong loading, simulating, recording or serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A script, recording or pattern file that does not parse or does not make sense.
    /// `origin` is the file's path (or `<inline>`); `line` is 1-based where known.
    #[error("{origin}{}: {message}", location(*line, *column))]
    Script {
        origin: String,
        line: Option<usize>,
        column: Option<usize>,
        message: String,
    },
    #[error("{variable} is required for MERKLE_LLM_MODE={mode}: {hint}")]
    MissingSetting {
        variable: &'static str,
        mode: &'static str,
        hint: &'static str,
    },
    #[error("{variable}={value:?} is not valid: expected {expected}")]
    InvalidSetting {
        variable: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("invalid scrub pattern {pattern:?}: {details}")]
    InvalidPattern { pattern: String, details: String },
    /// A request in playback that no recorded request matches.
    #[error(
        "playback miss at call {call}: no recorded request matches; the closest is recorded \
         step {closest_step}, which differs first at `{field}` (recorded {recorded}, got {actual})\n\
         closest recorded request:\n{closest}"
    )]
    PlaybackMiss {
        call: u64,
        closest_step: usize,
        /// The first differing field, as a path like `messages[2].content[0].text`.
        field: String,
        recorded: String,
        actual: String,
        /// The closest recorded request as pretty JSON, cut to a readable length.
        closest: String,
    },
    #[error(
        "playback: call {call} has no recorded response left (the recording {origin} holds {recorded})"
    )]
    PlaybackExhausted {
        call: u64,
        origin: String,
        recorded: usize,
    },
    /// The secret scan found something key-like; the file was not written.
    #[error(
        "refusing to write {}: line {line} holds what looks like {kind} ({preview}); scrub it \
         before saving",
        path.display()
    )]
    SecretFound {
        path: PathBuf,
        line: usize,
        kind: &'static str,
        /// The first characters only, never the whole secret.
        preview: String,
    },
    #[error("cannot bind the fake api server to {addr}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Llm(#[from] llm_core::Error),
}

fn location(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!(":{line}:{column}"),
        (Some(line), None) => format!(":{line}"),
        _ => String::new(),
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
