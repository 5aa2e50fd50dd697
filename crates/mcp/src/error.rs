//! The MCP server's error type.
//!
//! A tool's failure reaches the client as text (a tool error the model can read), written by
//! [`Error::chain`]: the message, then every cause after it, `: `-separated. The server's own
//! failures (starting it, a key set it cannot read) are returned to the caller.
use std::net::SocketAddr;

/// Errors from serving MCP.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(transparent)]
    Store(#[from] merkle_store::Error),
    #[error(transparent)]
    Context(#[from] context::Error),
    /// A step of the server's work that failed, and why.
    #[error("{what}")]
    Step {
        what: String,
        #[source]
        source: Box<Error>,
    },
    /// A request's own failure, in words (what it asked for is not there).
    #[error("{0}")]
    Request(String),
    #[error("{what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// The file watcher could not start, or watch a folder.
    #[error(transparent)]
    Watch(#[from] watch::Error),
    /// The MCP session on stdio could not start.
    #[error("{what}")]
    Session {
        what: String,
        #[source]
        source: Box<rmcp::service::ServerInitializeError>,
    },
    /// The MCP session's task ended in a panic or was cancelled.
    #[error("{what}")]
    Task {
        what: String,
        #[source]
        source: tokio::task::JoinError,
    },
    /// An issuer's key set that is not JSON.
    #[error("{what}")]
    Json {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// An issuer's key set that could not be fetched.
    #[error("{what}")]
    Fetch {
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An issuer's key set that holds no key this server takes (`from` names where it came
    /// from).
    #[error("{from}: {message}")]
    KeySet { from: String, message: &'static str },
    /// The server's URL could not be announced (whoever started it has gone).
    #[error(transparent)]
    Announce(std::io::Error),
    /// Static token number `token` of the configuration acts as an agent the store does not
    /// know.
    #[error(
        "no agent {agent:?} (register it with `merkle agent add {agent} --role \
         reader|writer|synthesis`)"
    )]
    UnknownTokenAgent { token: usize, agent: String },
    /// An address that is not loopback, to be served without authentication, which the
    /// configuration did not say is meant.
    #[error("refusing to serve {addr} (not a loopback address) without authentication")]
    Unauthenticated { addr: SocketAddr },
}

/// The MCP server's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// `what`, failed because of `self`.
    pub(crate) fn during(self, what: impl Into<String>) -> Error {
        Error::Step {
            what: what.into(),
            source: Box::new(self),
        }
    }

    /// The message and every cause after it, `: `-separated.
    pub fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            text.push_str(": ");
            text.push_str(&c.to_string());
            cause = c.source();
        }
        text
    }
}
