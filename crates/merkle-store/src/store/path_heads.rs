//! Path heads: the latest frame of a type on any node that has been at a path (any version of
//! it), which follows a file across its versions. Most are implied, as most heads are
//! (`Store::head`): where the node the tree holds at a path now has the latest frame of a type
//! put there, its head is the path head, and [`Table::PathHeads`] records nothing. It records a
//! path head only where that is not so:
//! - a scan replaces or removes a node that has frames: each of its heads is recorded at its
//!   path, unless a path head of that type is recorded there already (it is the later one);
//! - a frame is put on a node that is not the one at its path (an older version), or an import
//!   brings one that outranks the path head.
//!
//! A frame put on the node at its path removes the record of its type there: it is the latest.
//! At 100k files the table held an entry for every path, 12 MB of the store; now a fresh
//! generation writes none. A store written before holds every path head; they are right, and
//! `merkle gc` removes those that are implied.
use std::collections::HashSet;

use super::*;

/// Stages the path head that a put of `frame` (on a node at `path`) makes: implied where its
/// node is the one at its path now (`at_path`; a record there is removed), else recorded.
pub(super) fn stage_path_head(path: &str, frame: &Frame, at_path: bool, batch: &mut Batch) {
    let key = path_head_key(path, &frame.frame_type);
    if at_path {
        batch.delete(Table::PathHeads, key);
    } else {
        batch.put(Table::PathHeads, key, frame.frame_id.0.to_vec());
    }
}

impl Store {
    /// The node the tree holds at `path` (normalized) now.
    pub(super) fn node_id_at(&self, path: &str) -> Result<Option<NodeId>> {
        match self.engine.get(Table::Tree, path.as_bytes())? {
            Some(v) => Ok(Some(TreeEntry::decode(path.as_bytes(), &v)?.node_id)),
            None => Ok(None),
        }
    }

    /// Whether `node` is the node the tree holds at `path` now; not where the tree's entry
    /// there does not read (a path head recorded is right either way, and `validate` names the
    /// entry).
    pub(super) fn is_at_path(&self, path: &str, node: &NodeId) -> Result<bool> {
        match self.node_id_at(path) {
            Ok(at) => Ok(at == Some(*node)),
            Err(Error::Corrupt { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Stages, for each (path, node) that a scan replaces or removes, the path heads that the
    /// node's heads implied: each recorded at its path unless one of its type is recorded there
    /// already.
    pub(super) fn stage_replaced_path_heads<'p>(
        &self,
        replaced: impl Iterator<Item = (&'p str, NodeId)>,
        batch: &mut Batch,
    ) -> Result<()> {
        // A store that never had a frame has no head to record.
        if self.frame_seq()? == 0 {
            return Ok(());
        }
        for (path, node) in replaced {
            // Heads that do not read are not recorded: the scan goes on, and `validate` names
            // both the damage and the path head it cost.
            let heads = match self.head_ids(&node) {
                Ok(heads) => heads,
                Err(Error::Corrupt { .. }) => continue,
                Err(e) => return Err(e),
            };
            for (ty, id, _) in heads {
                let key = path_head_key(path, &ty);
                if !self.engine.contains(Table::PathHeads, &key)? {
                    batch.put(Table::PathHeads, key, id.0.to_vec());
                }
            }
        }
        Ok(())
    }

    /// The head of `node` (at `path`, now or once) of a type, else the path head there: each
    /// table read once, where [`Store::head`] then [`Store::path_head`] would read the node's
    /// history twice when it is the node at its path (a generation's every new file).
    pub fn head_or_path_head(
        &self,
        node: &NodeId,
        path: &str,
        frame_type: &str,
    ) -> Result<Option<Frame>> {
        if let Some(f) = self.head(node, frame_type)? {
            return Ok(Some(f));
        }
        let path = normalize_path(path);
        if let Some(f) = self.indexed_frame(Table::PathHeads, &path_head_key(&path, frame_type))? {
            return Ok(Some(f));
        }
        match self.node_id_at(&path)? {
            Some(at) if at != *node => self.head(&at, frame_type),
            _ => Ok(None),
        }
    }

    /// The latest frame of a type on any node that has been at `path` (any version of it):
    /// the one recorded there, else the head of the node at `path` now.
    pub fn path_head(&self, path: &str, frame_type: &str) -> Result<Option<Frame>> {
        let path = normalize_path(path);
        if let Some(f) = self.indexed_frame(Table::PathHeads, &path_head_key(&path, frame_type))? {
            return Ok(Some(f));
        }
        match self.node_id_at(&path)? {
            Some(node) => self.head(&node, frame_type),
            None => Ok(None),
        }
    }

    /// The rank (`created_at`, FrameID) of the path head at `key` (a path, a 0 byte, a type),
    /// as [`Store::path_head`] finds it, without reading its content.
    pub(super) fn path_head_rank(&self, key: &[u8]) -> Result<Option<(u64, FrameId)>> {
        if let Some(v) = self.engine.get(Table::PathHeads, key)? {
            let id = Hash::from_slice(&v)
                .ok_or_else(|| Error::corrupt("path_heads", key, "value is not a frame id"))?;
            return Ok(self
                .frame_fields(&id)?
                .map(|f| (f.metadata.created_at_ms, f.frame_id)));
        }
        let (path, ty) = path_head_parts(key).unwrap_or((key, b""));
        let (Ok(path), Ok(ty)) = (std::str::from_utf8(path), std::str::from_utf8(ty)) else {
            return Err(Error::corrupt(
                "path_heads",
                key,
                "key is not a UTF-8 path, a 0 byte and a frame type",
            ));
        };
        match self.node_id_at(path)? {
            Some(node) => self.head_rank(&node, ty),
            None => Ok(None),
        }
    }

    /// The latest frame of every type on any version of the node at `path`, by type.
    pub fn path_heads(&self, path: &str) -> Result<Vec<Frame>> {
        let path = normalize_path(path);
        let mut prefix = path.clone().into_bytes();
        prefix.push(0);
        let mut by_type: BTreeMap<String, Frame> = self
            .indexed_frames(Table::PathHeads, &prefix)?
            .into_iter()
            .map(|f| (f.frame_type.clone(), f))
            .collect();
        if let Some(node) = self.node_id_at(&path)? {
            for f in self.heads(&node)? {
                by_type.entry(f.frame_type.clone()).or_insert(f);
            }
        }
        Ok(by_type.into_values().collect())
    }

    /// Every path that has had a frame on some version of its node, in path order: those with
    /// a path head recorded, and those whose node now has a history.
    pub fn paths_with_frames(&self) -> Result<Vec<String>> {
        let mut out = self.recorded_paths()?;
        let mut framed: HashSet<NodeId> = HashSet::new();
        for table in [Table::NodeFrames, Table::Heads] {
            let mut last = None;
            self.engine.scan(table, b"", &mut |k, _| {
                // A node's entries are together: each node looked at once.
                if let Some(id) = k.get(..32).and_then(Hash::from_slice)
                    && last != Some(id)
                {
                    framed.insert(id);
                    last = Some(id);
                }
                true
            })?;
        }
        if !framed.is_empty() {
            self.tree_entries("", |path, e| {
                if framed.contains(&e.node_id) {
                    out.push(path.to_owned());
                }
            })?;
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// The paths with a path head recorded, in path order, once each.
    fn recorded_paths(&self) -> Result<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        let mut err = None;
        self.engine.scan(Table::PathHeads, b"", &mut |k, _| {
            let path = path_head_parts(k).and_then(|(p, _)| std::str::from_utf8(p).ok());
            let Some(path) = path else {
                err = Some(Error::corrupt(
                    "path_heads",
                    k,
                    "key is not a UTF-8 path, a 0 byte and a frame type",
                ));
                return false;
            };
            if out.last().map(String::as_str) != Some(path) {
                out.push(path.to_owned());
            }
            true
        })?;
        err.map_or(Ok(out), Err)
    }

    /// The keys of the recorded path heads that are implied: the head of the node at their
    /// path now (every path head of a store written before they were implied, most of them).
    /// Read [`IMPLIED_CHUNK`] at a time, so that a million of them are never held at once.
    pub(super) fn implied_path_heads(&self) -> Result<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        let mut from = Vec::new();
        // The path read last, and its node's heads.
        let mut at: Option<(Vec<u8>, TypedHeads)> = None;
        loop {
            let mut recorded = Vec::new();
            self.engine.scan(Table::PathHeads, &from, &mut |k, v| {
                recorded.push((k.to_vec(), v.to_vec()));
                recorded.len() < IMPLIED_CHUNK
            })?;
            let Some((last, _)) = recorded.last() else {
                return Ok(out);
            };
            from = last.clone();
            // The least key after the last one read.
            from.push(0);
            for (k, v) in recorded {
                let Some((path, ty)) = path_head_parts(&k) else {
                    continue;
                };
                if at.as_ref().is_none_or(|(p, _)| p.as_slice() != path) {
                    let Ok(p) = std::str::from_utf8(path) else {
                        continue;
                    };
                    let heads = match self.node_id_at(p)? {
                        Some(node) => self.head_ids(&node)?,
                        None => Vec::new(),
                    };
                    at = Some((path.to_vec(), heads));
                }
                let heads = at.as_ref().map_or(&[][..], |(_, h)| h.as_slice());
                if heads
                    .iter()
                    .any(|(t, id, _)| t.as_bytes() == ty && id.0[..] == v[..])
                {
                    out.push(k);
                }
            }
        }
    }
}

/// A node's heads as [`Store::head_ids`] gives them.
type TypedHeads = Vec<(String, FrameId, bool)>;

/// The recorded path heads [`Store::implied_path_heads`] reads at a time.
const IMPLIED_CHUNK: usize = 65_536;
