//! The frames room: putting frames (group-committed), heads, history, summaries, memos and the
//! basis index (path heads: `path_heads.rs`).
use super::path_heads::stage_path_head;
use super::*;

/// One frame as the node's history index describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameSummary {
    /// The frame.
    pub frame_id: FrameId,
    /// The node it is on.
    pub node_id: NodeId,
    /// Its type.
    pub frame_type: String,
    /// Its agent.
    pub agent_id: String,
    /// Its `created_at`, ms since the epoch.
    pub created_at_ms: u64,
    /// Its position in the store's append order.
    pub seq: u64,
}

impl FrameSummary {
    /// Decodes a history entry (key: node ++ type ++ 0 ++ seq; value: [`history_value`]).
    pub(crate) fn decode(key: &[u8], value: &[u8]) -> Option<FrameSummary> {
        let node_id = Hash::from_slice(key.get(..32)?)?;
        let rest = key.get(32..)?;
        let (ty, seq) = rest.split_at(rest.len().checked_sub(9)?);
        if seq.first() != Some(&0) {
            return None;
        }
        let seq = u64::from_be_bytes(seq.get(1..)?.try_into().ok()?);
        Some(FrameSummary {
            frame_id: Hash::from_slice(value.get(..32)?)?,
            node_id,
            frame_type: std::str::from_utf8(ty).ok()?.to_owned(),
            created_at_ms: u64::from_le_bytes(value.get(32..40)?.try_into().ok()?),
            agent_id: std::str::from_utf8(value.get(40..)?).ok()?.to_owned(),
            seq,
        })
    }
}

impl Store {
    /// How many frames the store has appended, ever: it grows with every frame created, by
    /// anyone, and with nothing else.
    pub fn frame_seq(&self) -> Result<u64> {
        self.engine
            .get(Table::Meta, META_FRAME_SEQ)?
            .map_or(Ok(0), |v| decode_frame_seq(&v))
    }

    /// Appends a frame and moves its (node, type) head, in one durable transaction with the
    /// basis index. Putting an identical frame again changes nothing and returns the same id.
    ///
    /// Concurrent callers are group-committed: while one transaction commits, the frames that
    /// arrive queue up and go into the next one together, in arrival order. Each call still
    /// returns only once its own frame is durable, and each gets its own error.
    pub fn put_frame(&self, new: NewFrame) -> Result<PutOutcome> {
        frame::check_name("frame type", &new.frame_type)?;
        frame::check_name("agent id", &new.agent_id)?;
        let mut g = self.group.lock().unwrap_or_else(|e| e.into_inner());
        let ticket = g.next_ticket;
        g.next_ticket += 1;
        g.queue.push((ticket, new));
        loop {
            if let Some(r) = g.done.remove(&ticket) {
                return r;
            }
            if g.leading {
                g = self.group_done.wait(g).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            g.leading = true;
            let queue = std::mem::take(&mut g.queue);
            drop(g);
            let results = self.commit_frames(queue, &HashMap::new());
            g = self.group.lock().unwrap_or_else(|e| e.into_inner());
            g.done.extend(results);
            g.leading = false;
            self.group_done.notify_all();
        }
    }

    /// Puts many frames in one durable transaction, in order; each gets its own result, and a
    /// refused frame does not stop the others. For bulk work (generating a whole tree), where one
    /// commit per frame would cost one sync per frame.
    pub fn put_frames(&self, frames: Vec<NewFrame>) -> Vec<Result<PutOutcome>> {
        self.put_frames_memoized(frames.into_iter().map(|f| (f, None)).collect())
    }

    /// Puts many frames as [`Store::put_frames`] does and, in the same transaction, records
    /// each memo key given beside a frame for the frame put or found (as [`Store::put_memos`]
    /// would after): a frame and its memo land together or not at all, for one sync.
    pub fn put_frames_memoized(
        &self,
        frames: Vec<(NewFrame, Option<Hash>)>,
    ) -> Vec<Result<PutOutcome>> {
        let mut checked = Vec::with_capacity(frames.len());
        let mut memos = HashMap::new();
        let mut results: Vec<Option<Result<PutOutcome>>> = Vec::with_capacity(frames.len());
        for (i, (f, memo)) in frames.into_iter().enumerate() {
            match frame::check_name("frame type", &f.frame_type)
                .and_then(|()| frame::check_name("agent id", &f.agent_id))
            {
                Ok(()) => {
                    if let Some(key) = memo {
                        memos.insert(i as u64, key);
                    }
                    checked.push((i as u64, f));
                    results.push(None);
                }
                Err(e) => results.push(Some(Err(e))),
            }
        }
        for (i, r) in self.commit_frames(checked, &memos) {
            results[i as usize] = Some(r);
        }
        results
            .into_iter()
            .map(|r| r.expect("every frame got a result"))
            .collect()
    }

    /// Writes a group of frames in one transaction; a frame that is refused does not stop the
    /// others.
    /// `memos`: the memo key to record for the frame of a ticket.
    pub(super) fn commit_frames(
        &self,
        queue: Vec<(u64, NewFrame)>,
        memos: &HashMap<u64, Hash>,
    ) -> Vec<(u64, Result<PutOutcome>)> {
        let _guard = self.lock();
        let mut results: Vec<(u64, Result<PutOutcome>)> = Vec::with_capacity(queue.len());
        let mut batch = Batch::default();
        // A damaged counter must stop every put: read as 0, it would hand out sequence numbers
        // that are already history keys, and the new entries would overwrite the old.
        let seq = self
            .engine
            .get(Table::Meta, META_FRAME_SEQ)
            .and_then(|v| v.map_or(Ok(0), |v| decode_frame_seq(&v)));
        let mut seq = match seq {
            Ok(seq) => seq,
            Err(e) => {
                return queue
                    .into_iter()
                    .map(|(t, _)| (t, Err(shared_error(&e))))
                    .collect();
            }
        };
        // Frames written earlier in this group, by id, with their node.
        let mut written: HashMap<FrameId, NodeId> = HashMap::new();
        let mut bodies = super::bodies::Staged::default();
        let mut created = Vec::new();
        for (ticket, new) in queue {
            let r = self.stage_frame(new, &mut seq, (&mut written, &mut bodies), &mut batch);
            if let (Ok(put), Some(key)) = (&r, memos.get(&ticket)) {
                batch.put(Table::Memo, key.0.to_vec(), put.frame_id.0.to_vec());
                if !put.created {
                    // Only a memo to write: its commit can still fail.
                    created.push(results.len());
                }
            }
            if matches!(r, Ok(PutOutcome { created: true, .. })) {
                created.push(results.len());
            }
            results.push((ticket, r));
        }
        if !batch.is_empty() {
            batch.put(
                Table::Meta,
                META_FRAME_SEQ.to_vec(),
                seq.to_le_bytes().to_vec(),
            );
            if let Err(e) = self.engine.commit(batch) {
                for i in created {
                    results[i].1 = Err(shared_error(&e));
                }
            }
        }
        results
    }

    pub(super) fn stage_frame(
        &self,
        new: NewFrame,
        seq: &mut u64,
        (written, bodies): (&mut HashMap<FrameId, NodeId>, &mut super::bodies::Staged),
        batch: &mut Batch,
    ) -> Result<PutOutcome> {
        self.authorize(&new.agent_id, "put frames", Role::can_write)?;
        let basis = new.basis.unwrap_or(new.node_id);
        let frame_id = hash::frame_id(&basis, &new.content, &new.frame_type, &new.agent_id);
        let Some(node_bytes) = self.engine.get(Table::Nodes, &new.node_id.0)? else {
            return Err(Error::NoSuchNode {
                id: new.node_id.to_hex(),
            });
        };
        let node_path = NodeRecord::decode(new.node_id, &node_bytes)?.path;
        // A FrameID does not cover the node, so the basis must: a basis that is a node's id
        // names the node the frame is on (import and validate hold every frame to this).
        if basis != new.node_id
            && let Some(other) = self.engine.get(Table::Nodes, &basis.0)?
        {
            return Err(Error::BasisOfAnotherNode {
                basis,
                path: NodeRecord::decode(basis, &other)?.path,
            });
        }
        let existing = match written.get(&frame_id) {
            Some(node) => Some(*node),
            None => self
                .engine
                .get(Table::Frames, &frame_id.0)?
                .map(|v| Frame::decode(frame_id, &v))
                .transpose()?
                .map(|(f, _)| f.node_id),
        };
        if let Some(node) = existing {
            if node != new.node_id {
                return Err(Error::FrameConflict {
                    frame_id,
                    existing: node,
                    requested: new.node_id,
                });
            }
            return Ok(PutOutcome {
                frame_id,
                created: false,
            });
        }
        let frame = Frame {
            frame_id,
            node_id: new.node_id,
            frame_type: new.frame_type,
            agent_id: new.agent_id,
            basis,
            content: new.content,
            metadata: new.metadata,
            seq: *seq + 1,
        };
        // The frame will be its history's latest entry, so the head: an entry of the heads
        // table naming another (an import's, or a store's from before heads were derived)
        // goes. Read before anything is staged, as is whether its body is stored: a failed
        // read stages nothing of the frame, and the sequence moves only for a staged frame.
        let head = head_key(&frame.node_id, &frame.frame_type);
        let named_head = self.engine.contains(Table::Heads, &head)?;
        let at_path = self.is_at_path(&node_path, &frame.node_id)?;
        self.stage_frame_record(&frame, bodies, batch)?;
        *seq += 1;
        batch.put(
            Table::NodeFrames,
            history_key(&frame.node_id, &frame.frame_type, frame.seq),
            history_value(&frame),
        );
        if named_head {
            batch.delete(Table::Heads, head);
        }
        stage_path_head(&node_path, &frame, at_path, batch);
        // A frame whose basis is its node is found through its node's history.
        if basis != frame.node_id {
            batch.put(Table::Basis, basis_key(&basis, &frame_id), Vec::new());
        }
        written.insert(frame_id, frame.node_id);
        Ok(PutOutcome {
            frame_id,
            created: true,
        })
    }

    /// A frame by id.
    pub fn frame(&self, id: &FrameId) -> Result<Option<Frame>> {
        self.engine
            .get(Table::Frames, &id.0)?
            .map(|v| self.frame_from(*id, &v))
            .transpose()
    }

    pub(super) fn frame_required(
        &self,
        id: &FrameId,
        table: &'static str,
        key: &[u8],
    ) -> Result<Frame> {
        self.frame(id)?
            .ok_or_else(|| Error::corrupt(table, key, format!("frame {id} is missing")))
    }

    /// Every frame on a node (of one type, if given), oldest first.
    pub fn frames_of(&self, node: &NodeId, frame_type: Option<&str>) -> Result<Vec<Frame>> {
        self.frame_summaries(node, frame_type)?
            .iter()
            .map(|s| {
                self.frame_required(
                    &s.frame_id,
                    "node_frames",
                    &history_key(node, &s.frame_type, s.seq),
                )
            })
            .collect()
    }

    /// What ordering and filtering need of every frame on a node (of one type, if given),
    /// oldest first, read from the node's history index alone: no frame record is read, so a
    /// view over a long history loads only the frames it selects.
    pub fn frame_summaries(
        &self,
        node: &NodeId,
        frame_type: Option<&str>,
    ) -> Result<Vec<FrameSummary>> {
        let mut prefix = node.0.to_vec();
        if let Some(t) = frame_type {
            prefix.extend_from_slice(t.as_bytes());
            prefix.push(0);
        }
        let mut out = Vec::new();
        self.history_under(&prefix, &mut |s| out.push(s))?;
        out.sort_by_key(|s| s.seq);
        Ok(out)
    }

    /// The head frame of (node, type): the latest entry of its history, unless the heads
    /// table names another (an imported frame appended after a head it did not outrank, see
    /// `store/exchange.rs`).
    pub fn head(&self, node: &NodeId, frame_type: &str) -> Result<Option<Frame>> {
        if let Some(f) = self.indexed_frame(Table::Heads, &head_key(node, frame_type))? {
            return Ok(Some(f));
        }
        self.latest_frame(node, frame_type)
    }

    /// The frame of (node, type)'s latest history entry.
    fn latest_frame(&self, node: &NodeId, frame_type: &str) -> Result<Option<Frame>> {
        match self.latest_entry(node, frame_type)? {
            Some(s) => self
                .frame_required(
                    &s.frame_id,
                    "node_frames",
                    &history_key(node, frame_type, s.seq),
                )
                .map(Some),
            None => Ok(None),
        }
    }

    /// The head frame of every type on a node, by type (see [`Store::head`]).
    pub fn heads(&self, node: &NodeId) -> Result<Vec<Frame>> {
        self.head_ids(node)?
            .into_iter()
            .map(|(ty, id, named)| {
                let table = if named { "heads" } else { "node_frames" };
                self.frame_required(&id, table, &head_key(node, &ty))
            })
            .collect()
    }

    /// The head of every type on a node, by type, as (type, frame, whether the heads table
    /// names it): a type's latest entry read alone, then the next type's, unless the heads
    /// table names another.
    pub(super) fn head_ids(&self, node: &NodeId) -> Result<Vec<(String, FrameId, bool)>> {
        let mut named: BTreeMap<Vec<u8>, FrameId> = BTreeMap::new();
        let mut err = None;
        self.engine.scan(Table::Heads, &node.0, &mut |k, v| {
            if !k.starts_with(&node.0) {
                return false;
            }
            match Hash::from_slice(v) {
                Some(id) => {
                    named.insert(k.to_vec(), id);
                    true
                }
                None => {
                    err = Some(Error::corrupt("heads", k, "value is not a frame id"));
                    false
                }
            }
        })?;
        if let Some(e) = err {
            return Err(e);
        }
        let mut out = Vec::new();
        let mut from = node.0.to_vec();
        loop {
            let mut next = None;
            self.history_under_from(&node.0, &from, &mut |s| {
                next = Some(s);
                false
            })?;
            let Some(first) = next else {
                return Ok(out);
            };
            let ty = first.frame_type;
            let key = head_key(node, &ty);
            let (id, by_name) = match named.get(&key) {
                Some(id) => (*id, true),
                None => {
                    let latest = self.latest_entry(node, &ty)?.ok_or_else(|| {
                        Error::corrupt("node_frames", &node.0, "a history with no latest entry")
                    })?;
                    (latest.frame_id, false)
                }
            };
            out.push((ty, id, by_name));
            // Past every entry of this type: its keys have a 0 byte after the type, which no
            // type's own bytes are.
            from = key;
            from.push(1);
        }
    }

    /// The rank (`created_at`, FrameID) of the head of (node, type), as [`Store::head`] finds
    /// it, without reading its content.
    pub(super) fn head_rank(
        &self,
        node: &NodeId,
        frame_type: &str,
    ) -> Result<Option<(u64, FrameId)>> {
        let key = head_key(node, frame_type);
        if let Some(v) = self.engine.get(Table::Heads, &key)? {
            let id = Hash::from_slice(&v)
                .ok_or_else(|| Error::corrupt("heads", &key, "value is not a frame id"))?;
            let f = self
                .frame_fields(&id)?
                .ok_or_else(|| Error::corrupt("heads", &key, format!("frame {id} is missing")))?;
            return Ok(Some((f.metadata.created_at_ms, id)));
        }
        Ok(self
            .latest_entry(node, frame_type)?
            .map(|s| (s.created_at_ms, s.frame_id)))
    }

    /// The latest entry of (node, type)'s history, read alone.
    pub(super) fn latest_entry(
        &self,
        node: &NodeId,
        frame_type: &str,
    ) -> Result<Option<FrameSummary>> {
        let mut prefix = head_key(node, frame_type);
        prefix.push(0);
        match self.engine.last_under(Table::NodeFrames, &prefix)? {
            Some((k, v)) => FrameSummary::decode(&k, &v)
                .map(Some)
                .ok_or_else(|| Error::corrupt("node_frames", &k, "malformed history entry")),
            None => Ok(None),
        }
    }

    /// Visits the history entries whose keys start with `prefix`, in key order (a type's in
    /// append order).
    fn history_under(&self, prefix: &[u8], visit: &mut dyn FnMut(FrameSummary)) -> Result<()> {
        self.history_under_from(prefix, prefix, &mut |s| {
            visit(s);
            true
        })
    }

    /// Visits the history entries whose keys start with `prefix`, from the first at or after
    /// `from`, in key order, while `visit` returns true.
    pub(super) fn history_under_from(
        &self,
        prefix: &[u8],
        from: &[u8],
        visit: &mut dyn FnMut(FrameSummary) -> bool,
    ) -> Result<()> {
        let mut err = None;
        self.engine.scan(Table::NodeFrames, from, &mut |k, v| {
            if !k.starts_with(prefix) {
                return false;
            }
            match FrameSummary::decode(k, v) {
                Some(s) => visit(s),
                None => {
                    err = Some(Error::corrupt("node_frames", k, "malformed history entry"));
                    false
                }
            }
        })?;
        err.map_or(Ok(()), Err)
    }

    /// The frame an index entry (a frame id as its value) points at.
    pub(super) fn indexed_frame(&self, table: Table, key: &[u8]) -> Result<Option<Frame>> {
        match self.engine.get(table, key)? {
            None => Ok(None),
            Some(v) => {
                let id = Hash::from_slice(&v)
                    .ok_or_else(|| Error::corrupt(table.name(), key, "value is not a frame id"))?;
                self.frame_required(&id, table.name(), key).map(Some)
            }
        }
    }

    /// The frames the index entries under `prefix` point at, in key order.
    pub(super) fn indexed_frames(&self, table: Table, prefix: &[u8]) -> Result<Vec<Frame>> {
        let mut ids = Vec::new();
        self.engine.scan(table, prefix, &mut |k, v| {
            if !k.starts_with(prefix) {
                return false;
            }
            ids.push((k.to_vec(), v.to_vec()));
            true
        })?;
        ids.iter()
            .map(|(k, v)| {
                let id = Hash::from_slice(v)
                    .ok_or_else(|| Error::corrupt(table.name(), k, "value is not a frame id"))?;
                self.frame_required(&id, table.name(), k)
            })
            .collect()
    }

    /// A hash of every head the store records, by node and by path (the heads table, keys and
    /// values, and the count of frames appended, which moves every head found as its
    /// history's latest entry and every path head): it changes whenever some head does. With
    /// the tree's root, all that which frames are current depends on (a frame never changes
    /// once written). Taken without the handle's lock, so it can run beside a walk: a put
    /// landing between the count and the table gives a digest of no state the store is ever in
    /// (heads only move forward).
    pub fn heads_digest(&self) -> Result<Hash> {
        let mut h = blake3::Hasher::new();
        h.update(b"merkle/heads-digest/v3");
        // A head is most often its history's latest entry, found in no table: the count of
        // frames appended moves with every head that moves so.
        h.update(&self.frame_seq()?.to_le_bytes());
        // Entries gathered and hashed 64 KiB at a time: an update per field costs more than
        // the hashing of these few bytes.
        let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
        // Not the recorded path heads: a path head moves only with a frame appended or with
        // the tree (its root is beside this digest where it is used); a scan and `gc` only
        // change which are recorded, not what they are (`store/path_heads.rs`).
        {
            let table = Table::Heads;
            buf.extend_from_slice(table.name().as_bytes());
            self.engine.scan(table, b"", &mut |k, v| {
                buf.extend_from_slice(&(k.len() as u64).to_le_bytes());
                buf.extend_from_slice(k);
                buf.extend_from_slice(&(v.len() as u64).to_le_bytes());
                buf.extend_from_slice(v);
                if buf.len() >= 1 << 16 {
                    h.update(&buf);
                    buf.clear();
                }
                true
            })?;
        }
        h.update(&buf);
        Ok(Hash(*h.finalize().as_bytes()))
    }

    /// The frame recorded under memo `key` by [`Store::put_memos`], if any.
    ///
    /// Memos let a derivation find earlier work by what it was derived from, wherever that work
    /// is attached: a file renamed, reverted or duplicated has the same inputs as before, so its
    /// frame's content can be reused without running the producer again. The key is the
    /// caller's hash of those inputs. A memo is a cache beside the frames, not part of them: it
    /// is written after the frame, in a commit of its own (one with the frames let a
    /// generation's store file grow to twice its size: redb reuses the pages a commit frees
    /// only after the next commit), and a memo lost to a crash costs only a recomputation
    /// (frames are never deleted, so a memo never dangles).
    pub fn memo(&self, key: &Hash) -> Result<Option<FrameId>> {
        self.engine
            .get(Table::Memo, &key.0)?
            .map(|v| codec::decode("memo", &key.0, &v, "a frame id", |r| r.hash()))
            .transpose()
    }

    /// Records each (memo key, frame) in one commit; a later record of a key replaces it. Every
    /// frame must exist.
    pub fn put_memos(&self, memos: &[(Hash, FrameId)]) -> Result<()> {
        if memos.is_empty() {
            return Ok(());
        }
        let _guard = self.lock();
        let mut batch = Batch::default();
        for (key, frame) in memos {
            if !self.engine.contains(Table::Frames, &frame.0)? {
                return Err(Error::NoSuchFrame { id: frame.to_hex() });
            }
            batch.put(Table::Memo, key.0.to_vec(), frame.0.to_vec());
        }
        self.engine.commit(batch)
    }

    /// The frames derived from a basis, by FrameID: those the basis index names, and, where
    /// the basis is a node's id, the frames of the node's history whose basis is the node.
    pub fn frames_with_basis(&self, basis: &Hash) -> Result<Vec<FrameId>> {
        let mut out = Vec::new();
        let mut err = None;
        self.engine.scan(Table::Basis, &basis.0, &mut |k, _| {
            if !k.starts_with(&basis.0) {
                return false;
            }
            match Hash::from_slice(&k[32..]) {
                Some(id) => {
                    out.push(id);
                    true
                }
                None => {
                    err = Some(Error::corrupt(
                        "basis",
                        k,
                        "key is not a basis and a frame id",
                    ));
                    false
                }
            }
        })?;
        if let Some(e) = err {
            return Err(e);
        }
        // A store written before kept own-basis frames in the index too: those are found.
        let indexed: std::collections::HashSet<FrameId> = out.iter().copied().collect();
        let mut history = Vec::new();
        self.engine.scan(Table::NodeFrames, &basis.0, &mut |k, v| {
            if !k.starts_with(&basis.0) {
                return false;
            }
            match v.get(..32).and_then(Hash::from_slice) {
                Some(id) => history.push((k.to_vec(), id)),
                None => err = Some(Error::corrupt("node_frames", k, "value is not a frame id")),
            }
            err.is_none()
        })?;
        if let Some(e) = err {
            return Err(e);
        }
        for (key, id) in history {
            if indexed.contains(&id) {
                continue;
            }
            let Some(f) = self.frame_fields(&id)? else {
                return Err(Error::corrupt(
                    "node_frames",
                    &key,
                    format!("frame {id} is missing"),
                ));
            };
            if f.node_id == *basis && f.basis == *basis {
                out.push(id);
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }
}
