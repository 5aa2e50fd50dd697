//! Each remote's count of frames not yet pushed to it, as `status` reports it (`remotes`):
//! read from the store alone, without connecting.
//!
//! The remotes are the `remote` crate's: it writes `<store>/remotes.json` and, after each push,
//! the store's marker for it ([`merkle_store::pushed_marker`], read by `Store::pushed_to`). This reads the names in that file and those
//! markers and nothing else, so that every front end's `status` (the CLI's, the MCP server's)
//! answers them through [`crate::ops::Status`] without depending on the crate that owns
//! PostgreSQL. The CLI's tests pin the two together: `merkle status` after `merkle push`
//! (crates/cli/tests/it/remote.rs), and the MCP `status` beside `merkle --json status`.
use std::collections::BTreeMap;
use std::path::Path;

use merkle_store::Store;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::Result;

/// The file, in the store's folder, that names the remotes (`remote::config::FILE_NAME`).
const REMOTES_FILE: &str = "remotes.json";

/// The frames not yet pushed to one remote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unpushed {
    /// The remote's name.
    pub name: String,
    /// Frames appended to the store (written here, or pulled) since the last push to it; all
    /// of them when it was never pushed to.
    pub unpushed: u64,
}

impl Unpushed {
    /// Its one JSON shape: `{name, unpushed}`.
    pub fn json(&self) -> Value {
        json!({"name": self.name, "unpushed": self.unpushed})
    }
}

/// As much of the remotes file as a count needs: the names (its entries' URLs and schemas are
/// the `remote` crate's to check).
#[derive(Deserialize)]
struct Names {
    #[serde(default)]
    remotes: BTreeMap<String, serde::de::IgnoredAny>,
}

/// Each remote of `store`'s folder, by name, with its count of frames not pushed to it; and a
/// warning when the remotes file cannot be read (status then reports the store, and no
/// remote).
pub(crate) fn unpushed(store: &Store) -> Result<(Vec<Unpushed>, Option<String>)> {
    let names = match remote_names(store.dir()) {
        Ok(names) => names,
        Err(warning) => return Ok((Vec::new(), Some(warning))),
    };
    if names.is_empty() {
        return Ok((Vec::new(), None));
    }
    let top = store.frame_seq()?;
    let counts = names
        .into_iter()
        .map(|name| {
            let pushed = store.pushed_to(&name)?;
            Ok(Unpushed {
                unpushed: top.saturating_sub(pushed.unwrap_or(0)),
                name,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((counts, None))
}

/// The remotes named in `store_dir`'s remotes file, in name order (none without the file); a
/// message naming the file when it cannot be read.
fn remote_names(store_dir: &Path) -> Result<Vec<String>, String> {
    let path = store_dir.join(REMOTES_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}; no remote counted", path.display())),
    };
    let names: Names = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{}: {e}; no remote counted", path.display()))?;
    Ok(names.remotes.into_keys().collect())
}
