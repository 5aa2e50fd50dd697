//! Bodies (issue #46, a compact store): a frame's content, or a derived record's bytes, of at
//! least [`BODY_MIN`] bytes is kept once in the bodies table under its content hash, and the
//! record names it. The copies of a file that a monorepo vendors, generates or keeps per
//! version have the same outline and the same symbols: each is stored once, however many
//! records hold it. Shorter values stay in their records, where a hash would cost more than
//! it saves.
//!
//! A body is written with the first record that names it, in the same commit, and removed
//! only by `merkle gc` once no record names it. A record of a store written before bodies
//! holds its content in place and is read as it is.
use std::collections::HashSet;

use super::*;

/// Contents this long or longer are held apart.
pub const BODY_MIN: usize = 128;

/// The bodies one commit has staged, so that a body two of its records share is written once.
#[derive(Default)]
pub(crate) struct Staged(HashSet<Hash>);

impl Store {
    /// Stages `content` as a body unless it is stored or staged already; its hash.
    pub(super) fn stage_body(
        &self,
        content: &[u8],
        staged: &mut Staged,
        batch: &mut Batch,
    ) -> Result<Hash> {
        let hash = hash::content_hash(content);
        // Marked staged only once it is: a failed read must not let a later record of the
        // same content skip writing it.
        if !staged.0.contains(&hash) {
            if !self.engine.contains(Table::Bodies, &hash.0)? {
                batch.put(Table::Bodies, hash.0.to_vec(), content.to_vec());
            }
            staged.0.insert(hash);
        }
        Ok(hash)
    }

    /// Stages a frame's record, its content held apart where it is long.
    pub(super) fn stage_frame_record(
        &self,
        frame: &Frame,
        staged: &mut Staged,
        batch: &mut Batch,
    ) -> Result<()> {
        let body = if frame.content.len() >= BODY_MIN {
            Some(self.stage_body(&frame.content, staged, batch)?)
        } else {
            None
        };
        batch.put(
            Table::Frames,
            frame.frame_id.0.to_vec(),
            frame.encode(body.as_ref()),
        );
        Ok(())
    }

    /// A body the record at `key` of `table` names; a missing body is damage to that record.
    pub(super) fn body(&self, hash: &Hash, table: &'static str, key: &[u8]) -> Result<Vec<u8>> {
        self.engine
            .get(Table::Bodies, &hash.0)?
            .ok_or_else(|| Error::corrupt(table, key, format!("its body {hash} is missing")))
    }

    /// A frame's fields without its content (left empty, its body not read), for what needs
    /// only its node, type or rank.
    pub(super) fn frame_fields(&self, id: &FrameId) -> Result<Option<Frame>> {
        self.engine
            .get(Table::Frames, &id.0)?
            .map(|v| Frame::decode(*id, &v).map(|(f, _)| f))
            .transpose()
    }

    /// A frame from its record, its content read from its body where it is held apart.
    pub(super) fn frame_from(&self, id: FrameId, record: &[u8]) -> Result<Frame> {
        let (mut frame, body) = Frame::decode(id, record)?;
        if let Some(hash) = body {
            frame.content = self.body(&hash, "frames", &id.0)?;
        }
        Ok(frame)
    }

    /// Removes the bodies no frame or derived record names, leaving out the derived records
    /// at `gone` keys (a dry run's, which are still there); how many were kept and removed (a
    /// dry run removes nothing). Run after the records themselves were collected.
    pub(super) fn collect_bodies(
        &self,
        dry_run: bool,
        gone_derived: &HashSet<&[u8]>,
    ) -> Result<(u64, u64)> {
        // A store written before bodies has none, and needs no reading of its records.
        if self.engine.count(Table::Bodies)? == 0 {
            return Ok((0, 0));
        }
        let mut named: HashSet<Hash> = HashSet::new();
        let mut bad = None;
        self.engine.scan(Table::Frames, b"", &mut |k, v| {
            match Hash::from_slice(k).map(|id| Frame::decode(id, v)) {
                Some(Ok((_, body))) => named.extend(body),
                Some(Err(e)) => bad = Some(e),
                None => bad = Some(Error::corrupt("frames", k, "a key that is no FrameID")),
            }
            bad.is_none()
        })?;
        if let Some(e) = bad {
            return Err(e);
        }
        self.engine.scan(Table::Derived, b"", &mut |k, v| {
            if !gone_derived.contains(k) {
                named.extend(crate::keys::derived_body(v));
            }
            true
        })?;
        let mut gone = Vec::new();
        let mut kept = 0;
        self.engine.scan_stored(Table::Bodies, b"", &mut |k, _| {
            if Hash::from_slice(k).is_some_and(|h| named.contains(&h)) {
                kept += 1;
            } else {
                gone.push(k.to_vec());
            }
            true
        })?;
        let removed = gone.len() as u64;
        if !dry_run {
            for chunk in gone.chunks(super::gc::REMOVE_BATCH) {
                let mut batch = Batch::with_capacity(chunk.len());
                for key in chunk {
                    batch.delete(Table::Bodies, key.clone());
                }
                self.engine.commit(batch)?;
            }
        }
        Ok((kept, removed))
    }
}
