//! merkle-generate's integration tests: one binary, one module per area, all through the public
//! API on real files in temporary folders.
mod generate;
mod producer;
