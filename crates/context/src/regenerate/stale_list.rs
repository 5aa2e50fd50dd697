//! The stale-frame list `status` and `report` show, kept for the tree and heads it was worked
//! out for, and brought up to a later tree by the paths that changed.
use merkle_store::{Hash, NodeId, Store};

use super::{STALE_REASONS, Stale, frames_at, staleness};
use crate::error::Result;

/// The derived-record namespace of kept stale-frame lists.
pub(crate) const STALE_NAMESPACE: &str = "stale-frames";
/// The one record of that namespace: the last list kept, after the key it was kept for (one
/// list, not one per tree the workspace has been at).
const STALE_RECORD: Hash = Hash([0; 32]);

/// What a stale-frame list is a function of: the tree's root and every head the store records
/// (frames never change once written). `None` before the first scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaleKey {
    root: NodeId,
    heads: Hash,
}

fn stale_key(store: &Store) -> Result<Option<StaleKey>> {
    let Some(root) = store.root()? else {
        return Ok(None);
    };
    Ok(Some(StaleKey {
        root,
        heads: store.heads_digest()?,
    }))
}

/// The start of a kept list's record: its format, then the key's root and heads.
const STALE_FORMAT: &[u8] = b"stale-frames/v2\0";

/// Every stale frame in the current tree, by path then type. Read from where an earlier call
/// kept it for the same tree and heads; else worked out, and kept when `store` is writable.
pub fn stale_frames(store: &Store) -> Result<Vec<Stale>> {
    let (stale, unkept) = stale_frames_keyed(store)?;
    if let Some(key) = unkept
        && !store.is_read_only()
    {
        keep_stale_frames(store, &key, &stale)?;
    }
    Ok(stale)
}

/// [`stale_frames`] without keeping anything: with the key to keep the list under
/// ([`keep_stale_frames`]) when it was worked out rather than read, and the tree and heads did
/// not move meanwhile. A list kept for the same heads and an earlier tree is brought up to
/// this one: only the paths whose node changed between the two are looked at again
/// ([`Store::changed_since`]), so the first status after an edit costs the edit, not the tree.
pub fn stale_frames_keyed(store: &Store) -> Result<(Vec<Stale>, Option<StaleKey>)> {
    let key = stale_key(store)?;
    let kept = store
        .derived(STALE_NAMESPACE, &STALE_RECORD)?
        .and_then(|bytes| decode_kept(&bytes));
    let stale = match (key, kept) {
        (Some(key), Some((was, list))) if was == key => return Ok((list, None)),
        (Some(key), Some((was, list))) if was.heads == key.heads => {
            match update_stale_frames(store, list, &was.root, &key.root) {
                Ok(stale) => stale,
                // An earlier root whose records are not all there: the whole tree, as before.
                Err(_) => work_out_stale_frames(store)?,
            }
        }
        _ => work_out_stale_frames(store)?,
    };
    let unmoved = key.filter(|k| stale_key(store).ok().flatten().as_ref() == Some(k));
    Ok((stale, unmoved))
}

/// Keeps `stale`, the list worked out for `key` ([`stale_frames_keyed`]), for the next read, in
/// place of the list kept before.
pub fn keep_stale_frames(store: &Store, key: &StaleKey, stale: &[Stale]) -> Result<()> {
    let list: Vec<serde_json::Value> = stale
        .iter()
        .map(|s| serde_json::json!([s.path, s.frame_type, s.frame_id.to_hex(), s.reason]))
        .collect();
    let mut bytes = STALE_FORMAT.to_vec();
    bytes.extend_from_slice(&key.root.0);
    bytes.extend_from_slice(&key.heads.0);
    serde_json::to_writer(&mut bytes, &list).expect("a list of strings encodes");
    Ok(store.put_derived(STALE_NAMESPACE, &[(STALE_RECORD, bytes)])?)
}

/// A kept record: the key it was kept for and its list.
fn decode_kept(bytes: &[u8]) -> Option<(StaleKey, Vec<Stale>)> {
    let rest = bytes.strip_prefix(STALE_FORMAT)?;
    let (root, rest) = rest.split_first_chunk::<32>()?;
    let (heads, list) = rest.split_first_chunk::<32>()?;
    let key = StaleKey {
        root: Hash(*root),
        heads: Hash(*heads),
    };
    Some((key, decode_stale(list)?))
}

/// The stale frames of the tree at `new`, from `kept`, those of the tree at `old` under the same
/// heads: a frame at a path whose node is the same in both trees is stale in one exactly when
/// in the other (its node, its children's frames and the invalidations are the same), so only
/// the paths whose node changed are worked out again, and those no longer in the tree dropped.
fn update_stale_frames(
    store: &Store,
    kept: Vec<Stale>,
    old: &NodeId,
    new: &NodeId,
) -> Result<Vec<Stale>> {
    let changed: std::collections::HashSet<String> =
        store.changed_since(old, new)?.into_iter().collect();
    // A path no longer in the tree had a folder above it change.
    let below_a_change = |p: &str| {
        p.match_indices('/')
            .map(|(at, _)| &p[..at])
            .chain([""])
            .any(|dir| changed.contains(dir))
    };
    let mut out = Vec::with_capacity(kept.len());
    for s in kept {
        if changed.contains(&s.path)
            || (below_a_change(&s.path) && store.node_at(&s.path)?.is_none())
        {
            continue;
        }
        out.push(s);
    }
    // The changed paths alone, each with its frames, if any (not every path with frames).
    for path in &changed {
        push_stale_at(store, path, &mut out)?;
    }
    out.sort_by(|a, b| (&a.path, &a.frame_type).cmp(&(&b.path, &b.frame_type)));
    Ok(out)
}

/// A kept list, or `None` when it does not read as one (then it is worked out again).
fn decode_stale(bytes: &[u8]) -> Option<Vec<Stale>> {
    let list: Vec<(String, String, String, String)> = serde_json::from_slice(bytes).ok()?;
    list.into_iter()
        .map(|(path, frame_type, id, reason)| {
            Some(Stale {
                path,
                frame_type,
                frame_id: Hash::from_hex(&id)?,
                reason: STALE_REASONS.into_iter().find(|r| *r == reason)?,
            })
        })
        .collect()
}

/// The stale frames at `path` in the current tree, onto `out`.
fn push_stale_at(store: &Store, path: &str, out: &mut Vec<Stale>) -> Result<()> {
    let Some(rec) = store.node_at(path)? else {
        return Ok(());
    };
    for f in frames_at(store, &rec)? {
        if let Some(reason) = staleness(store, &rec, &f)? {
            out.push(Stale {
                path: path.to_owned(),
                frame_type: f.frame_type.clone(),
                frame_id: f.frame_id,
                reason,
            });
        }
    }
    Ok(())
}

/// Every stale frame in the current tree, by path then type, worked out frame by frame.
fn work_out_stale_frames(store: &Store) -> Result<Vec<Stale>> {
    let mut out = Vec::new();
    for path in store.paths_with_frames()? {
        push_stale_at(store, &path, &mut out)?;
    }
    out.sort_by(|a, b| (&a.path, &a.frame_type).cmp(&(&b.path, &b.frame_type)));
    Ok(out)
}
