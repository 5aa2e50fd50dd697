//! The merkle store served over the Model Context Protocol, for any MCP client (an editor,
//! another agent) to read and write context frames: on stdio, or over Streamable HTTP with
//! static bearer tokens or OAuth 2.1 access tokens.
//!
//! The front end (the CLI's `merkle mcp`) parses its arguments into a [`ServeConfig`] (with
//! [`HttpConfig`], [`StaticToken`], [`OAuthConfig`]: plain data, no clap), builds the runtime and
//! calls [`Server::new`] (which checks the configuration and readies the store, without a
//! runtime), then [`Server::serve`] (async, on the caller's runtime, until the client closes
//! stdio or the caller's shutdown future completes); this crate builds no runtime and parses no
//! command line. The tools answer with the documents of `merkle --json`, made by context's shared
//! operations (`context::ops`), and open the store the way every front end does
//! (`context::ops::Workspace`).
//!
//! - `server.rs` and `server/tools.rs`: the handler, its tools and resources.
//! - `store.rs`: how requests reach the store: context's `Workspace` (shared handles, the
//!   freshness rule, the tree's listing and index kept per root), watched by merkle-watch's
//!   `Live` watcher, whose event barrier says what to rescan first.
//! - `streamable_http.rs`: the same handler over Streamable HTTP (rmcp's tower service on hyper's
//!   HTTP/1.1) behind a gate for tokens, scopes and agents' roles: the bearer token, the RFC 9728
//!   metadata, and a 403 for a call the token's scopes do not allow, with a JSON-RPC body naming
//!   the scope (rmcp checks `Host`); `oauth.rs` checks access tokens (JWTs, with jsonwebtoken)
//!   against the issuer's JWK Set, read from a file or fetched through the [`FetchJson`] it is given.
//! - `writes.rs`: what writing takes, which the handler and the HTTP gate both go by (the role
//!   each tool needs, the agent a request acts as, a refusal passed from the gate), so that
//!   `tools/list` offers only the writes the agent's role allows and a refused write (recorded in
//!   the audit log) is a tool error saying why.
//! - `budget.rs`: every tool's answer within its `max_tokens`, cut at whole items or lines, with a
//!   cursor.
//!
//! # Invariants
//!
//! - **Builds no runtime and parses no command line**: tokio without `rt-multi-thread`; the store
//!   is used from tokio's blocking pool.
//! - **Never holds the store while it waits for a client**: a handle lives for a request, so
//!   other `merkle` commands keep working beside a long-lived server.
//! - **No token reaches the handler**: the gate removes the `Authorization` header, and sets the
//!   agent header itself (one a client sends is dropped).
//! - **A tool's failure is a tool error**, whose text names the input; the server keeps serving.
mod budget;
mod config;
mod error;
mod oauth;
mod serve;
mod server;
mod store;
mod streamable_http;
mod writes;

pub use config::{HttpConfig, ServeConfig, StaticToken};
pub use error::{Error, Result};
pub use oauth::{FetchJson, Fetched, KeySource, OAuthConfig};
pub use serve::Server;
pub use streamable_http::ENDPOINT;
