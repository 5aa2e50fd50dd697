//! The merkle store served over the Model Context Protocol, for any MCP client (an editor,
//! another agent) to read and write context frames: on stdio, or over Streamable HTTP with
//! static bearer tokens or OAuth 2.1 access tokens.
//!
//! The front end (the CLI's `merkle mcp`) parses its arguments into a [`ServeConfig`], builds
//! the runtime and calls [`Server::new`], then [`Server::serve`]; this crate builds no runtime
//! and parses no command line. The tools answer with the documents of `merkle --json`, made by
//! context's shared operations (`context::ops`), and open the store the way every front end
//! does (`context::ops::Workspace`).
//!
//! - `server.rs` and `server/tools.rs`: the handler, its tools and resources.
//! - `store.rs`: how requests reach the store (reads share a read-only handle while any is in
//!   flight, a write takes the store alone, a file watcher and an event barrier say what to
//!   rescan first, and searches keep the tree's listing and index per root).
//! - `streamable_http.rs`: the same handler over Streamable HTTP behind a gate for tokens, scopes and
//!   agents' roles; `oauth.rs` checks access tokens (JWTs) against the issuer's key set.
//! - `writes.rs`: what writing takes, which the handler and the HTTP gate both go by (the role
//!   each tool needs, the agent a request acts as, a refusal passed from the gate).
//! - `budget.rs`: every tool's answer within its `max_tokens`, with a cursor.
//! - [`events`]: which file events may change the tree, shared with `merkle watch`.
mod budget;
mod config;
mod error;
pub mod events;
mod oauth;
mod serve;
mod server;
mod store;
mod streamable_http;
mod writes;

pub use config::{HttpConfig, ServeConfig, StaticToken};
pub use error::{Error, Result};
pub use oauth::{KeySource, OAuthConfig};
pub use serve::Server;
pub use streamable_http::ENDPOINT;
