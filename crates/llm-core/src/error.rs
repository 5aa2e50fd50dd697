//! The one error type of this crate, with the kinds that retry and metrics reason about.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Opening the TCP/TLS connection.
    Connect,
    /// The whole request: for `complete` up to the last body byte, for `stream` up to the
    /// response headers.
    Request,
    /// The gap between two chunks of a streamed body.
    StreamIdle,
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Connect => "connect",
            Self::Request => "request",
            Self::StreamIdle => "stream idle",
        })
    }
}

/// Everything that can go wrong talking to a model.
///
/// `provider` fields name the provider that answered (`"anthropic"`, `"openai"`, ...) so a
/// message read in a log says whose input was at fault. Provider messages are kept verbatim.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("{provider}: {phase} timeout after {after:?}")]
    Timeout {
        provider: &'static str,
        phase: TimeoutPhase,
        after: Duration,
    },
    #[error("{provider}: could not connect to {url}")]
    Connect {
        provider: &'static str,
        url: String,
        #[source]
        source: Arc<reqwest::Error>,
    },
    #[error("{provider}: network error talking to {url}")]
    Network {
        provider: &'static str,
        url: String,
        #[source]
        source: Arc<reqwest::Error>,
    },
    #[error("{provider}: rate limited{}: {message}", retry_after_text(*retry_after))]
    RateLimited {
        provider: &'static str,
        retry_after: Option<Duration>,
        message: String,
    },
    #[error("{provider}: overloaded: {message}")]
    Overloaded {
        provider: &'static str,
        message: String,
    },
    /// OpenAI's Flex tier had no capacity for the call (429 "resource unavailable"; not
    /// billed). Not retried by the transport: a caller that asked for Flex decides how long to
    /// wait, or to go back to the default tier.
    #[error("{provider}: flex capacity unavailable (not billed; retry later): {message}")]
    CapacityUnavailable {
        provider: &'static str,
        message: String,
    },
    #[error("{provider}: authentication failed (check the api key): {message}")]
    Authentication {
        provider: &'static str,
        message: String,
    },
    #[error("{provider}: permission denied: {message}")]
    Permission {
        provider: &'static str,
        message: String,
    },
    #[error("{provider}: invalid request (http {status}): {message}")]
    InvalidRequest {
        provider: &'static str,
        status: u16,
        message: String,
    },
    #[error("{provider}: context window exceeded: {message}")]
    ContextWindowExceeded {
        provider: &'static str,
        message: String,
    },
    #[error("{provider}: quota exhausted (will not succeed on retry): {message}")]
    QuotaExhausted {
        provider: &'static str,
        message: String,
    },
    #[error("{provider}: server error (http {status}): {message}")]
    Server {
        provider: &'static str,
        status: u16,
        message: String,
    },
    #[error("{provider}: invalid response: {details}")]
    InvalidResponse {
        provider: &'static str,
        details: String,
    },
    /// A response body, or one event of a stream, grew past the transport's cap
    /// ([`crate::HttpConfig::max_body_bytes`], [`crate::HttpConfig::max_event_bytes`]).
    #[error("{provider}: {what} from {url} exceeds the limit of {limit} bytes")]
    TooLarge {
        provider: &'static str,
        /// `"the response body"` or `"a stream event"`.
        what: &'static str,
        url: String,
        limit: usize,
    },
    #[error("{provider}: stream interrupted: {details}")]
    StreamInterrupted {
        provider: &'static str,
        details: String,
    },
    #[error("malformed json in arguments of tool call {id} ({tool}): {details}; raw text: {raw}")]
    MalformedToolArguments {
        id: String,
        tool: String,
        raw: String,
        details: String,
    },
    /// For callers that abandon a call on their own signal. This crate never returns it:
    /// dropping a future or stream is how a call is cancelled here.
    #[error("request cancelled")]
    Cancelled,
    #[error("invalid configuration: {details}")]
    Config { details: String },
    /// An answer to a request with a [`crate::types::ResponseSchema`] that is not JSON of that
    /// schema.
    #[error("the answer does not follow the schema {schema:?}: {details}; the answer: {answer}")]
    SchemaMismatch {
        schema: String,
        details: String,
        /// Its text, cut to 500 bytes.
        answer: String,
    },
}

/// The kind of an [`Error`], without its data: what metrics count and retry decides on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    Timeout,
    Connect,
    Network,
    RateLimited,
    Overloaded,
    CapacityUnavailable,
    Authentication,
    Permission,
    InvalidRequest,
    ContextWindowExceeded,
    QuotaExhausted,
    Server,
    InvalidResponse,
    TooLarge,
    StreamInterrupted,
    MalformedToolArguments,
    Cancelled,
    Config,
    SchemaMismatch,
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Timeout { .. } => ErrorKind::Timeout,
            Self::Connect { .. } => ErrorKind::Connect,
            Self::Network { .. } => ErrorKind::Network,
            Self::RateLimited { .. } => ErrorKind::RateLimited,
            Self::Overloaded { .. } => ErrorKind::Overloaded,
            Self::CapacityUnavailable { .. } => ErrorKind::CapacityUnavailable,
            Self::Authentication { .. } => ErrorKind::Authentication,
            Self::Permission { .. } => ErrorKind::Permission,
            Self::InvalidRequest { .. } => ErrorKind::InvalidRequest,
            Self::ContextWindowExceeded { .. } => ErrorKind::ContextWindowExceeded,
            Self::QuotaExhausted { .. } => ErrorKind::QuotaExhausted,
            Self::Server { .. } => ErrorKind::Server,
            Self::InvalidResponse { .. } => ErrorKind::InvalidResponse,
            Self::TooLarge { .. } => ErrorKind::TooLarge,
            Self::StreamInterrupted { .. } => ErrorKind::StreamInterrupted,
            Self::MalformedToolArguments { .. } => ErrorKind::MalformedToolArguments,
            Self::Cancelled => ErrorKind::Cancelled,
            Self::Config { .. } => ErrorKind::Config,
            Self::SchemaMismatch { .. } => ErrorKind::SchemaMismatch,
        }
    }

    /// Whether sending the same request again may succeed.
    ///
    /// Request timeouts are not retried: a request that ran for the whole timeout is likely
    /// to do so again, and the caller chose that bound.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Timeout { phase, .. } => *phase == TimeoutPhase::Connect,
            Self::Connect { .. }
            | Self::Network { .. }
            | Self::RateLimited { .. }
            | Self::Overloaded { .. } => true,
            Self::Server { .. } => true,
            // 408 and 409 arrive as invalid requests but are transient by definition.
            Self::InvalidRequest { status, .. } => matches!(status, 408 | 409),
            _ => false,
        }
    }

    pub(crate) fn invalid_response(provider: &'static str, details: impl Into<String>) -> Self {
        Self::InvalidResponse {
            provider,
            details: details.into(),
        }
    }

    pub(crate) fn from_reqwest(provider: &'static str, url: &str, err: reqwest::Error) -> Self {
        let url = url.to_owned();
        if err.is_connect() {
            Self::Connect {
                provider,
                url,
                source: Arc::new(err),
            }
        } else {
            Self::Network {
                provider,
                url,
                source: Arc::new(err),
            }
        }
    }
}

/// " (retry after 2s)" when the server said how long to wait, else nothing. A wait too long
/// to be a real one (a server's `retry-after: 1e20`) reads as such rather than as digits.
fn retry_after_text(retry_after: Option<Duration>) -> String {
    match retry_after {
        None => String::new(),
        Some(after) if after >= Duration::from_secs(u64::from(u32::MAX)) => {
            " (retry after an unbounded wait)".to_owned()
        }
        Some(after) => format!(" (retry after {after:?})"),
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
