//! `cargo xtask`: the one home for project automation (tidy checks, benchmarks, recording).
fn main() {}
