//! `merkle pull`: fetch what the store lacks, check every row, store all or nothing.
//!
//! By default the candidates are the remote's frames on any node at a path of the local tree
//! (the current versions and earlier ones, which path heads follow); `--all` takes every frame.
//! Ids are compared first, so only missing frames travel. Everything is read in one
//! repeatable-read, read-only transaction (one consistent snapshot while pushers write), then
//! checked: a frame whose id does not re-derive from its basis, content, type and agent, a
//! frame whose basis is another node's id (moved off the node it was made for), a node whose
//! record does not hash to its id, or a row that does not decode, refuses the pull, naming it,
//! and nothing is stored. With `skip_invalid` such rows are left out, named in the report, and
//! the verified rest is stored. The store imports in one transaction ([`Store::import_with`],
//! which also decides heads); a dry run checks everything and stores nothing.
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::Instant;

use merkle_store::{
    Frame, FrameId, FrameMetadata, Hash, Import, ImportOptions, NodeId, NodeRecord, Refusal, Role,
    Store,
};
use tokio_postgres::types::Json;

use crate::connect::Session;
use crate::error::{Error, Result};
use crate::push::BATCH;
use crate::{Moved, OnProgress, Progress};

/// How to pull.
#[derive(Clone, Copy, Debug, Default)]
pub struct PullOptions<'a> {
    /// Every frame of the remote, not only those at the local tree's paths.
    pub all: bool,
    /// Leave out the rows that fail a check (named in [`PullReport::refused`]) and store the
    /// verified rest, instead of refusing the whole pull.
    pub skip_invalid: bool,
    /// Fetch and check everything, count what would be stored, store nothing.
    pub dry_run: bool,
    /// Called as the pull goes.
    pub progress: OnProgress<'a>,
}

/// What a pull did (in a dry run, would do).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PullReport {
    /// Rows the store did not have.
    pub pulled: Moved,
    /// Candidate frames the store already had.
    pub skipped: u64,
    /// Bytes of row data received (ids, names and content; not the protocol's framing).
    pub bytes: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Rows left out under [`PullOptions::skip_invalid`], and why.
    pub refused: Vec<Refusal>,
}

/// Pulls the session's remote's frames into `store` (see the module documentation).
pub async fn pull(
    store: &Store,
    session: &mut Session,
    opts: &PullOptions<'_>,
) -> Result<PullReport> {
    let started = Instant::now();
    session
        .require(
            "SELECT",
            &["frames", "nodes", "memos", "agents"],
            "pull",
            "reader",
        )
        .await?;
    let paths: Vec<String> = if opts.all {
        Vec::new()
    } else {
        // The root is not among its own descendants.
        std::iter::once(String::new())
            .chain(store.list_nodes("", true)?.into_iter().map(|n| n.path))
            .collect()
    };
    let remote_id = session.remote_id().await?;
    let mut p = Pulling {
        name: session.remote.name.clone(),
        schema: session.remote.schema.clone(),
        opts: *opts,
        report: PullReport::default(),
    };
    let tx = session.snapshot("starting the pull").await?;

    let candidates = p.candidates(&tx, &paths).await?;
    let missing = p.missing(store, &candidates)?;
    p.report.skipped = (candidates.len() - missing.len()) as u64;
    if missing.is_empty() {
        tx.commit().await.map_err(p.db("ending the pull"))?;
        p.report.seconds = started.elapsed().as_secs_f64();
        return Ok(p.report);
    }
    let (frames, need_nodes, need_agents) = p.fetch_frames(&tx, store, &missing).await?;
    let nodes = p.fetch_nodes(&tx, need_nodes).await?;
    let memos = p.fetch_memos(&tx, &frames, &missing).await?;
    let agents = p.fetch_agents(&tx, need_agents).await?;
    tx.commit().await.map_err(p.db("ending the pull"))?;

    let import = Import {
        nodes,
        frames,
        memos,
        agents,
    };
    p.import(store, session, &remote_id, import)?;
    p.report.seconds = started.elapsed().as_secs_f64();
    Ok(p.report)
}

/// A pull under way: the remote's name and schema, the options, and the report so far (the
/// rows refused under `skip_invalid` among it).
struct Pulling<'a> {
    name: String,
    schema: String,
    opts: PullOptions<'a>,
    report: PullReport,
}

impl Pulling<'_> {
    /// A database error, in `context`, as the pull's error.
    fn db(&self, context: &'static str) -> impl Fn(tokio_postgres::Error) -> Error + '_ {
        Error::db_fn(&self.name, context)
    }

    /// The error of a row that fails a check.
    fn tampered(&self, item: String, reason: String) -> Error {
        Error::Tampered {
            name: self.name.clone(),
            item,
            reason,
        }
    }

    /// A row that fails a check: the pull's error, or under skip_invalid one more refusal.
    fn refuse(&mut self, item: String, reason: String) -> Result<()> {
        if self.opts.skip_invalid {
            self.report.refused.push(Refusal { item, reason });
            Ok(())
        } else {
            Err(self.tampered(item, reason))
        }
    }

    /// The ids of the remote's frames on a node at one of `paths`, or with `all` of every
    /// frame.
    async fn candidates(
        &mut self,
        tx: &tokio_postgres::Transaction<'_>,
        paths: &[String],
    ) -> Result<Vec<FrameId>> {
        let schema = &self.schema;
        let rows = if self.opts.all {
            tx.query(&format!("SELECT frame_id FROM {schema}.frames"), &[])
                .await
        } else {
            tx.query(
                &format!(
                    "SELECT f.frame_id FROM {schema}.frames f JOIN {schema}.nodes n \
                     ON n.node_id = f.node_id WHERE n.path = ANY($1)"
                ),
                &[&paths],
            )
            .await
        }
        .map_err(self.db("listing frames"))?;
        let mut candidates = Vec::with_capacity(rows.len());
        for r in &rows {
            let raw: &[u8] = r.get(0);
            match Hash::from_slice(raw) {
                Some(id) => candidates.push(id),
                None => self.refuse(format!("frame id {}", hex(raw)), "not 32 bytes".into())?,
            }
        }
        Ok(candidates)
    }

    /// The `candidates` the store lacks.
    fn missing(&self, store: &Store, candidates: &[FrameId]) -> Result<Vec<FrameId>> {
        let mut missing = Vec::new();
        for (i, id) in candidates.iter().enumerate() {
            if !store.has_frame(id)? {
                missing.push(*id);
            }
            if i % 10_000 == 9_999 || i + 1 == candidates.len() {
                self.opts.progress.report(Progress::Comparing {
                    done: i as u64 + 1,
                    total: candidates.len() as u64,
                });
            }
        }
        Ok(missing)
    }

    /// Fetches the `missing` frames, checked row by row, with the node records the store lacks
    /// for them and the agents they name.
    async fn fetch_frames(
        &mut self,
        tx: &tokio_postgres::Transaction<'_>,
        store: &Store,
        missing: &[FrameId],
    ) -> Result<(Vec<Frame>, BTreeSet<NodeId>, BTreeSet<String>)> {
        let mut frames = Vec::with_capacity(missing.len());
        let mut need_nodes: BTreeSet<NodeId> = BTreeSet::new();
        let mut need_agents: BTreeSet<String> = BTreeSet::new();
        for chunk in missing.chunks(BATCH) {
            let ids: Vec<&[u8]> = chunk.iter().map(|h| h.0.as_slice()).collect();
            let rows = tx
                .query(
                    &format!(
                        "SELECT frame_id, node_id, frame_type, agent_id, basis, content, \
                         created_at_ms, provider, model, extra FROM {}.frames \
                         WHERE frame_id = ANY($1)",
                        self.schema
                    ),
                    &[&ids],
                )
                .await
                .map_err(self.db("fetching frames"))?;
            for r in rows {
                let f = match verified_frame(&r) {
                    Ok(f) => f,
                    Err((item, reason)) => {
                        self.refuse(item, reason)?;
                        continue;
                    }
                };
                self.report.bytes +=
                    (32 * 3 + f.content.len() + f.frame_type.len() + f.agent_id.len()) as u64 + 8;
                if store.node(&f.node_id)?.is_none() {
                    need_nodes.insert(f.node_id);
                }
                // A basis that may be a node's id: its record lets the import see a frame moved
                // off the node it was made for, even where this store never saw that node.
                if f.basis != f.node_id && store.node(&f.basis)?.is_none() {
                    need_nodes.insert(f.basis);
                }
                need_agents.insert(f.agent_id.clone());
                frames.push(f);
            }
            self.opts.progress.report(Progress::Transferring {
                done: frames.len() as u64,
                total: missing.len() as u64,
            });
        }
        Ok((frames, need_nodes, need_agents))
    }

    /// Fetches the node records the store lacks, each re-derived.
    async fn fetch_nodes(
        &mut self,
        tx: &tokio_postgres::Transaction<'_>,
        need_nodes: BTreeSet<NodeId>,
    ) -> Result<Vec<NodeRecord>> {
        let need_nodes: Vec<NodeId> = need_nodes.into_iter().collect();
        let mut nodes = Vec::with_capacity(need_nodes.len());
        for chunk in need_nodes.chunks(BATCH) {
            let ids: Vec<&[u8]> = chunk.iter().map(|h| h.0.as_slice()).collect();
            let rows = tx
                .query(
                    &format!(
                        "SELECT node_id, record FROM {}.nodes WHERE node_id = ANY($1)",
                        self.schema
                    ),
                    &[&ids],
                )
                .await
                .map_err(self.db("fetching nodes"))?;
            for r in rows {
                let raw: &[u8] = r.get(0);
                let record: &[u8] = r.get(1);
                let Some(id) = Hash::from_slice(raw) else {
                    self.refuse(format!("node id {}", hex(raw)), "not 32 bytes".into())?;
                    continue;
                };
                let n = match NodeRecord::decode(id, record) {
                    Ok(n) => n,
                    Err(e) => {
                        self.refuse(format!("node {id}"), e.to_string())?;
                        continue;
                    }
                };
                let derived = n.derive_id();
                if derived != id {
                    self.refuse(
                        format!("node {id} ({:?})", n.path),
                        format!("its record hashes to {derived}, not to its id"),
                    )?;
                    continue;
                }
                self.report.bytes += (32 + record.len()) as u64;
                nodes.push(n);
            }
        }
        Ok(nodes)
    }

    /// Fetches the memos of the fetched `frames`; the memo of a frame `missing` but left out
    /// goes with it.
    async fn fetch_memos(
        &mut self,
        tx: &tokio_postgres::Transaction<'_>,
        frames: &[Frame],
        missing: &[FrameId],
    ) -> Result<Vec<(Hash, FrameId)>> {
        let fetched: HashSet<FrameId> = frames.iter().map(|f| f.frame_id).collect();
        let missing_set: HashSet<FrameId> = missing.iter().copied().collect();
        let mut memos = Vec::new();
        for chunk in missing.chunks(BATCH) {
            let ids: Vec<&[u8]> = chunk.iter().map(|h| h.0.as_slice()).collect();
            let rows = tx
                .query(
                    &format!(
                        "SELECT key, frame_id FROM {}.memos WHERE frame_id = ANY($1)",
                        self.schema
                    ),
                    &[&ids],
                )
                .await
                .map_err(self.db("fetching memos"))?;
            for r in rows {
                let (k, f): (&[u8], &[u8]) = (r.get(0), r.get(1));
                match (Hash::from_slice(k), Hash::from_slice(f)) {
                    (Some(k), Some(f)) if fetched.contains(&f) => memos.push((k, f)),
                    // The memo of a frame left out above goes with it.
                    (Some(_), Some(f)) if missing_set.contains(&f) => {}
                    _ => self.refuse(
                        format!("memo {}", hex(k)),
                        "malformed key or frame id".into(),
                    )?,
                }
                self.report.bytes += 64;
            }
        }
        Ok(memos)
    }

    /// Fetches the agents the fetched frames name, with their roles.
    async fn fetch_agents(
        &mut self,
        tx: &tokio_postgres::Transaction<'_>,
        need_agents: BTreeSet<String>,
    ) -> Result<Vec<(String, Role)>> {
        let agent_ids: Vec<String> = need_agents.into_iter().collect();
        let rows = tx
            .query(
                &format!(
                    "SELECT agent_id, role FROM {}.agents WHERE agent_id = ANY($1)",
                    self.schema
                ),
                &[&agent_ids],
            )
            .await
            .map_err(self.db("fetching agents"))?;
        let mut agents = Vec::with_capacity(rows.len());
        for r in rows {
            let (id, role): (String, String) = (r.get(0), r.get(1));
            match Role::parse(&role) {
                Some(role) => agents.push((id, role)),
                None => self.refuse(format!("agent {id:?}"), format!("unknown role {role:?}"))?,
            }
        }
        Ok(agents)
    }

    /// Stores what was fetched in one transaction of the store, and moves the push marker
    /// when the store had nothing unpushed before.
    fn import(
        &mut self,
        store: &Store,
        session: &Session,
        remote_id: &str,
        import: Import,
    ) -> Result<()> {
        self.opts.progress.report(Progress::Committing);
        let import_opts = ImportOptions {
            skip_invalid: self.opts.skip_invalid,
            dry_run: self.opts.dry_run,
        };
        let imported = store
            .import_with(import, &import_opts)
            .map_err(|e| match e {
                merkle_store::Error::Refused { item, reason } => self.tampered(item, reason),
                e => Error::Store(e),
            })?;
        self.report.refused.extend(imported.refused);
        // A store with nothing unpushed before the import has nothing unpushed after it: what it
        // appended came from this remote.
        if !self.opts.dry_run && imported.frames > 0 {
            let marker = crate::push::marker_name(remote_id);
            if store.marker(&marker)?.unwrap_or(0) == imported.seq_before {
                crate::push::mark_pushed(store, session, &marker, imported.seq_after)?;
            }
        }
        self.report.pulled = Moved {
            frames: imported.frames,
            nodes: imported.nodes,
            memos: imported.memos,
            agents: imported.agents,
        };
        self.report.skipped += imported.skipped;
        Ok(())
    }
}

/// A frame from a `frames` row whose id re-derives from its basis, content, type and agent,
/// or (what, why) when the row does not decode or its id does not derive.
pub(crate) fn verified_frame(
    r: &tokio_postgres::Row,
) -> std::result::Result<Frame, (String, String)> {
    let f = frame_from_row(r)?;
    let derived = f.derive_id();
    if derived != f.frame_id {
        return Err((
            format!("frame {}", f.frame_id),
            format!("its basis, content, type and agent hash to {derived}, not to its id"),
        ));
    }
    Ok(f)
}

/// A frame from a `frames` row, or (what, why) when the row does not decode.
fn frame_from_row(r: &tokio_postgres::Row) -> std::result::Result<Frame, (String, String)> {
    let raw: &[u8] = r.get(0);
    let Some(frame_id) = Hash::from_slice(raw) else {
        return Err((format!("frame id {}", hex(raw)), "not 32 bytes".into()));
    };
    let item = || format!("frame {frame_id}");
    let hash = |i: usize, what: &str| {
        Hash::from_slice(r.get::<_, &[u8]>(i))
            .ok_or_else(|| (item(), format!("its {what} is not 32 bytes")))
    };
    let node_id = hash(1, "node id")?;
    let basis = hash(4, "basis")?;
    let created: i64 = r.get(6);
    let created_at_ms = u64::try_from(created)
        .map_err(|_| (item(), format!("created_at_ms {created} is negative")))?;
    let extra: Json<BTreeMap<String, String>> = r.try_get(9).map_err(|e| {
        (
            item(),
            format!("its extra metadata is not an object of strings: {e}"),
        )
    })?;
    Ok(Frame {
        frame_id,
        node_id,
        frame_type: r.get(2),
        agent_id: r.get(3),
        basis,
        content: r.get(5),
        metadata: FrameMetadata {
            created_at_ms,
            provider: r.get(7),
            model: r.get(8),
            extra: extra.0,
        },
        seq: 0,
    })
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    merkle_store::hash::to_hex(bytes)
}
