//! The mcp crate's integration tests, through its public API: a server started from a
//! `ServeConfig` on a temporary workspace. (The whole protocol, over
//! stdio and HTTP, is tested through `merkle mcp` in the CLI's tests.)
mod serve;
