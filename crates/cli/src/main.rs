//! `merkle`: the command line over the workspace's crates.
fn main() {}
