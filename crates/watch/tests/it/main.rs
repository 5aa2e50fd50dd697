//! The watch crate's integration tests, through its public API: the file event rules, over
//! events made by hand and by a real watcher. (`merkle watch`, the MCP server's watcher and
//! the reads they vouch for are tested through the CLI's tests.)
mod events;
