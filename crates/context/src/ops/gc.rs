//! `merkle gc` (issue #46): what a store keeps and what it can let go, by kind, and the
//! collection itself ([`merkle_store::Store::collect_garbage`]) with the derived records
//! context still reads: the facts of the current tree's content in the current format, the
//! kept import graph of the current format and the stale-frame list. Every other derived
//! record is a cache of content no file has now or of an older format. The full-text index
//! beside the store, where there is one, is merged into one segment.
use std::path::Path;

use merkle_store::{Collected, Store};
use serde_json::{Value, json};

use crate::error::Result;

/// A collection's figures: what was kept and removed, and the store folder's bytes before and
/// after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Garbage {
    pub collected: Collected,
    pub dry_run: bool,
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// The full-text index's segments before and after they were merged (a dry run merges
    /// none); `None` where the store has no index.
    pub index_segments: Option<(usize, usize)>,
    /// Why the index was not merged (another process held it, or the merge failed): the
    /// store's collection stands all the same.
    pub index_error: Option<String>,
}

impl Garbage {
    /// `{dry_run, nodes: {kept, removed}, derived: [{namespace, kept, removed, why}], bodies:
    /// {kept, removed}, heads_implied, path_heads_implied, tree_copy_removed, packed,
    /// tree_blocked, compacted, bytes_before, bytes_after, index_segments: {before, after}}`.
    pub fn json(&self) -> Value {
        let c = &self.collected;
        json!({
            "dry_run": self.dry_run,
            "nodes": {"kept": c.nodes_kept, "removed": c.nodes_removed},
            "derived": c.derived.iter().map(|(n, kept, removed)| json!({
                "namespace": n, "kept": kept, "removed": removed, "why": why_kept(n),
            })).collect::<Vec<_>>(),
            "bodies": {"kept": c.bodies_kept, "removed": c.bodies_removed},
            "heads_implied": c.heads_implied,
            "path_heads_implied": c.path_heads_implied,
            "packed": c.packed,
            "tree_blocked": c.tree_blocked,
            "tree_copy_removed": c.tree_copy_removed,
            "compacted": c.compacted,
            "bytes_before": self.bytes_before,
            "bytes_after": self.bytes_after,
            "index_segments": self.index_segments.map(|(before, after)| json!({
                "before": before, "after": after,
            })),
            "index_error": self.index_error,
        })
    }
}

/// Why the records of a derived namespace are kept, or what the removed ones were.
pub fn why_kept(namespace: &str) -> &'static str {
    if crate::facts::is_facts(namespace) {
        "facts of the current tree's files; the rest are of content no file has now"
    } else if namespace == crate::graph::graph_cache() {
        "the import graph of the current format"
    } else if namespace == crate::regenerate::stale_list::STALE_NAMESPACE {
        "the last stale-frame list"
    } else {
        "a cache of an older format: nothing reads it"
    }
}

impl super::Workspace {
    /// [`collect_garbage`] on the workspace's existing store (never one made), opened for
    /// writing alone; a dry run reads it (beside another process's writer too), so that it
    /// writes nothing, not even what an engine writes when a writer closes.
    pub fn collect_garbage(&self, dry_run: bool) -> Result<Garbage> {
        let mut store = if dry_run {
            self.reader()?
        } else {
            self.existing_writer()?
        };
        collect_garbage(&mut store, dry_run)
    }
}

/// Collects `store`'s garbage (see the module documentation); a dry run counts only.
pub fn collect_garbage(store: &mut Store, dry_run: bool) -> Result<Garbage> {
    let bytes_before = folder_bytes(store.dir());
    let facts = crate::facts::current_keys(store)?;
    let graph = crate::graph::graph_cache();
    let keep = |namespace: &str, key: &merkle_store::Hash| {
        if crate::facts::is_facts(namespace) {
            facts.contains(key)
        } else {
            namespace == graph || namespace == crate::regenerate::stale_list::STALE_NAMESPACE
        }
    };
    let collected = store.collect_garbage(&keep, dry_run)?;
    let dir = crate::search::index_dir(store);
    let (index_segments, index_error) = match retrieve::TextIndex::segments_in(&dir) {
        None => (None, None),
        Some(n) if dry_run => (Some((n, n)), None),
        Some(n) => match merge_index(&dir) {
            Ok(merged) => (Some(merged), None),
            // A merge may have landed before what failed after it (the files' collection).
            Err(e) => (
                Some((n, retrieve::TextIndex::segments_in(&dir).unwrap_or(n))),
                Some(e.to_string()),
            ),
        },
    };
    Ok(Garbage {
        collected,
        dry_run,
        bytes_before,
        bytes_after: folder_bytes(store.dir()),
        index_segments,
        index_error,
    })
}

/// The index in `dir` merged into one segment (see [`retrieve::TextIndex::merge_segments`]):
/// its segments before and after. An index that does not check out is a cache: opening it
/// clears it, for the next search to build.
fn merge_index(dir: &Path) -> retrieve::Result<(usize, usize)> {
    retrieve::TextIndex::open(dir)?.merge_segments()
}

/// The bytes of the files below `dir` (0 where it cannot be listed).
fn folder_bytes(dir: &Path) -> u64 {
    folder_sizes(dir).map_or(0, |sizes| sizes.iter().map(|(_, n)| n).sum())
}

/// The bytes of each entry of `dir` (a folder's: every file below it), largest first: what
/// `status -v` and `gc` say of the store folder.
pub fn folder_sizes(dir: &Path) -> std::io::Result<Vec<(String, u64)>> {
    fn bytes(path: &Path) -> std::io::Result<u64> {
        let meta = std::fs::symlink_metadata(path)?;
        if !meta.is_dir() {
            return Ok(meta.len());
        }
        let mut total = 0;
        for entry in std::fs::read_dir(path)? {
            total += bytes(&entry?.path())?;
        }
        Ok(total)
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        out.push((
            entry.file_name().to_string_lossy().into_owned(),
            bytes(&entry.path())?,
        ));
    }
    out.sort_by_key(|(name, n)| (std::cmp::Reverse(*n), name.clone()));
    Ok(out)
}
