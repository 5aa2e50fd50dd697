//! The context crate's integration tests: one binary, one module per area, all through the
//! public API over a real store in a temporary workspace.
mod bounds;
mod facts;
mod fixture;
mod generate;
mod map;
mod regenerate;
mod report;
mod resolve;
mod search;
mod synthesis;
mod view;
mod views_file;
mod workspace;
