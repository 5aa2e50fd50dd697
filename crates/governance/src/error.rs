//! The governance crate's error type.
use std::io;

/// Errors from loading a policy and from reading or appending to an audit log.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A policy file could not be read.
    #[error("reading policy {path}: {source}")]
    ReadPolicy { path: String, source: io::Error },
    /// A policy file is not valid YAML, has an unknown field or breaks a rule of the format.
    /// `at` is `file:line` when the line is known, else the file.
    #[error("invalid policy {at}: {message}")]
    Policy { at: String, message: String },
    /// An example of a policy file contradicts the policy's own rules.
    #[error(
        "policy {at}: example {example:?} expects {expected} but the policy decides {actual} \
         (rule {rule})"
    )]
    Example {
        at: String,
        example: String,
        expected: String,
        actual: String,
        rule: String,
    },
    /// An IO operation on an audit log or its head file failed.
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        source: io::Error,
    },
    /// The audit log's last line has no newline: an append was cut off. Nothing is appended
    /// after it until someone looks (`merkle audit verify` names the line).
    #[error(
        "audit log {path} ends with a torn record (an append was cut off); run `merkle audit verify`"
    )]
    TornTail { path: String },
    /// The audit log's last record, which the next one chains to, is not a record.
    #[error(
        "audit log {path}: its last record is unreadable ({message}); run `merkle audit verify`"
    )]
    BadTail { path: String, message: String },
    /// The audit log's head file is not a head.
    #[error("audit head {path} is unreadable: {message}")]
    BadHead { path: String, message: String },
    /// A record of the audit log is not a record.
    #[error("audit log {path}: line {line}: {message}")]
    BadRecord {
        path: String,
        line: u64,
        message: String,
    },
    /// The audit log and its head file disagree (the log was truncated or replaced). Appending
    /// would hide that, so it is refused.
    #[error(
        "audit log {path} does not match its head file {head}: {message}; run `merkle audit verify`"
    )]
    HeadMismatch {
        path: String,
        head: String,
        message: String,
    },
}

/// The governance crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
