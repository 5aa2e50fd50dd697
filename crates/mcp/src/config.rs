//! What a server is started with: plain data, built by the front end from its own arguments
//! (the CLI's `merkle mcp` flags), checked by [`crate::Server::new`].
use std::net::SocketAddr;
use std::path::PathBuf;

use context::ops::Workspace;

use crate::oauth::OAuthConfig;

/// How to serve a workspace's store.
#[derive(Debug)]
pub struct ServeConfig {
    /// The workspace, and where its store is.
    pub workspace: Workspace,
    /// The agent `put_frame` and `synthesize` write as; without one (and without a token that
    /// names one) the server only reads.
    pub agent: Option<String>,
    /// No warnings on stderr (a file watcher that could not start).
    pub quiet: bool,
    /// Serve Streamable HTTP, as this says; `None`: serve stdin and stdout.
    pub http: Option<HttpConfig>,
}

/// How to serve Streamable HTTP (on the endpoint [`crate::ENDPOINT`]).
#[derive(Debug)]
pub struct HttpConfig {
    /// Where to listen (port 0: a free one).
    pub addr: SocketAddr,
    /// The static bearer tokens requests may carry.
    pub tokens: Vec<StaticToken>,
    /// OAuth access tokens are taken too. With `tokens` empty and this `None`, no token is
    /// asked for, which [`crate::Server::new`] refuses for an address that is not loopback
    /// unless `insecure_no_auth` says it is meant.
    pub oauth: Option<OAuthConfig>,
    /// Serving an address that is not loopback without authentication is meant.
    pub insecure_no_auth: bool,
    /// Hosts (or `host:port`) accepted in `Host` besides the loopback names and the address.
    pub allowed_hosts: Vec<String>,
    /// The workspace's audit log, where a call refused for its scopes or its agent's role is
    /// recorded.
    pub audit_log: PathBuf,
}

/// A bearer token the server takes.
pub struct StaticToken {
    /// The token itself.
    pub secret: String,
    /// The agent it acts as (it must be registered); `None`: the server's own.
    pub agent: Option<String>,
}

impl std::fmt::Debug for StaticToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A secret is never printed.
        f.debug_struct("StaticToken")
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}
