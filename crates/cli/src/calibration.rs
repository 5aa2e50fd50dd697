//! The token-count calibration ([`llm_core::count`]) kept between runs, in the workspace's
//! store folder as `llm-calibration.json`: what the provider counted against merkle's estimate,
//! per model, so that an offline estimate made later (`merkle llm count --offline`, a budget)
//! is within a few percent of the provider's count after a few calls.
//!
//! Every model client this process builds shares one calibrator; it is loaded on first use and
//! written back (atomically, by rename) when the command ends, if any answer taught it
//! something. Outside a workspace with a store nothing is kept.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use llm_core::{Calibration, Calibrator};

/// The file's name in the store folder.
const FILE: &str = "llm-calibration.json";

struct Kept {
    path: Option<PathBuf>,
    loaded: Calibration,
    calibrator: Arc<Calibrator>,
}

static STORE_DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
static KEPT: OnceLock<Kept> = OnceLock::new();

/// Names the store folder the calibration lives in (none outside a workspace). Called once,
/// before any model client is built.
pub(crate) fn locate(store_dir: Option<PathBuf>) {
    let _ = STORE_DIR.set(store_dir);
}

/// The calibrator every model client of this process shares, loaded from the store folder.
pub(crate) fn shared() -> Arc<Calibrator> {
    Arc::clone(&kept().calibrator)
}

fn kept() -> &'static Kept {
    KEPT.get_or_init(|| {
        let path = STORE_DIR
            .get()
            .cloned()
            .flatten()
            .filter(|dir| dir.is_dir())
            .map(|dir| dir.join(FILE));
        // A missing or unreadable file is a calibration not learnt yet: it is only a
        // correction, and the next answers rebuild it.
        let loaded: Calibration = path
            .as_deref()
            .and_then(|path| std::fs::read(path).ok())
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        Kept {
            path,
            calibrator: Arc::new(Calibrator::new(loaded.clone())),
            loaded,
        }
    })
}

/// Writes the calibration back if this run's answers changed it. A failure to write is a
/// warning: the command's own work is done.
pub(crate) fn save() {
    let Some(kept) = KEPT.get() else {
        return;
    };
    let now = kept.calibrator.snapshot();
    let Some(path) = &kept.path else {
        return;
    };
    if now == kept.loaded {
        return;
    }
    let temporary = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(&now).expect("a calibration always serializes");
    let written = std::fs::write(&temporary, text).and_then(|()| std::fs::rename(&temporary, path));
    if let Err(err) = written {
        eprintln!(
            "warning: cannot keep the token-count calibration in {}: {err}",
            path.display()
        );
    }
}
