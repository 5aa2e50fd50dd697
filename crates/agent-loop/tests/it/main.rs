//! agent-loop's integration tests: one binary, one module per area, all through the public
//! API on real files in temporary folders.
mod conversation;
mod prompt;
mod storage;
mod tools;
mod window;

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use llm_core::{Clock, ManualClock};

/// A clock fixed at 2026-02-05T14:30:00Z.
pub fn clock() -> Arc<dyn Clock> {
    Arc::new(ManualClock::new(
        UNIX_EPOCH + Duration::from_secs(1_770_301_800),
    ))
}
