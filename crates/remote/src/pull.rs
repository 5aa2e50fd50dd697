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
    let progress = |p| opts.progress.report(p);
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
    let name = session.remote.name.clone();
    let schema = session.remote.schema.clone();
    let db = |context| {
        let name = name.clone();
        move |e: tokio_postgres::Error| Error::db(&name, context, &e)
    };
    let tampered = |item: String, reason: String| Error::Tampered {
        name: name.clone(),
        item,
        reason,
    };
    // A row that fails a check: the pull's error, or under skip_invalid one more refusal.
    let mut refused: Vec<Refusal> = Vec::new();
    let mut refuse = |item: String, reason: String| {
        if opts.skip_invalid {
            refused.push(Refusal { item, reason });
            Ok(())
        } else {
            Err(tampered(item, reason))
        }
    };
    let tx = session.snapshot("starting the pull").await?;

    let rows = if opts.all {
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
    .map_err(db("listing frames"))?;
    let mut candidates = Vec::with_capacity(rows.len());
    for r in &rows {
        let raw: &[u8] = r.get(0);
        match Hash::from_slice(raw) {
            Some(id) => candidates.push(id),
            None => refuse(format!("frame id {}", hex(raw)), "not 32 bytes".into())?,
        }
    }
    drop(rows);
    let mut missing = Vec::new();
    for (i, id) in candidates.iter().enumerate() {
        if !store.has_frame(id)? {
            missing.push(*id);
        }
        if i % 10_000 == 9_999 || i + 1 == candidates.len() {
            progress(Progress::Comparing {
                done: i as u64 + 1,
                total: candidates.len() as u64,
            });
        }
    }
    let mut report = PullReport {
        skipped: (candidates.len() - missing.len()) as u64,
        ..PullReport::default()
    };
    if missing.is_empty() {
        tx.commit().await.map_err(db("ending the pull"))?;
        report.refused = refused;
        report.seconds = started.elapsed().as_secs_f64();
        return Ok(report);
    }

    // Frames, checked row by row.
    let mut frames = Vec::with_capacity(missing.len());
    let mut need_nodes: BTreeSet<NodeId> = BTreeSet::new();
    let mut need_agents: BTreeSet<String> = BTreeSet::new();
    for chunk in missing.chunks(BATCH) {
        let ids: Vec<&[u8]> = chunk.iter().map(|h| h.0.as_slice()).collect();
        let rows = tx
            .query(
                &format!(
                    "SELECT frame_id, node_id, frame_type, agent_id, basis, content, \
                     created_at_ms, provider, model, extra FROM {schema}.frames \
                     WHERE frame_id = ANY($1)"
                ),
                &[&ids],
            )
            .await
            .map_err(db("fetching frames"))?;
        for r in rows {
            let f = match verified_frame(&r) {
                Ok(f) => f,
                Err((item, reason)) => {
                    refuse(item, reason)?;
                    continue;
                }
            };
            report.bytes +=
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
        progress(Progress::Transferring {
            done: frames.len() as u64,
            total: missing.len() as u64,
        });
    }

    // Node records the store lacks, each re-derived.
    let need_nodes: Vec<NodeId> = need_nodes.into_iter().collect();
    let mut nodes = Vec::with_capacity(need_nodes.len());
    for chunk in need_nodes.chunks(BATCH) {
        let ids: Vec<&[u8]> = chunk.iter().map(|h| h.0.as_slice()).collect();
        let rows = tx
            .query(
                &format!("SELECT node_id, record FROM {schema}.nodes WHERE node_id = ANY($1)"),
                &[&ids],
            )
            .await
            .map_err(db("fetching nodes"))?;
        for r in rows {
            let raw: &[u8] = r.get(0);
            let record: &[u8] = r.get(1);
            let Some(id) = Hash::from_slice(raw) else {
                refuse(format!("node id {}", hex(raw)), "not 32 bytes".into())?;
                continue;
            };
            let n = match NodeRecord::decode(id, record) {
                Ok(n) => n,
                Err(e) => {
                    refuse(format!("node {id}"), e.to_string())?;
                    continue;
                }
            };
            let derived = n.derive_id();
            if derived != id {
                refuse(
                    format!("node {id} ({:?})", n.path),
                    format!("its record hashes to {derived}, not to its id"),
                )?;
                continue;
            }
            report.bytes += (32 + record.len()) as u64;
            nodes.push(n);
        }
    }

    // Memos of the fetched frames, and the agents they name.
    let fetched: HashSet<FrameId> = frames.iter().map(|f| f.frame_id).collect();
    let missing_set: HashSet<FrameId> = missing.iter().copied().collect();
    let mut memos = Vec::new();
    for chunk in missing.chunks(BATCH) {
        let ids: Vec<&[u8]> = chunk.iter().map(|h| h.0.as_slice()).collect();
        let rows = tx
            .query(
                &format!("SELECT key, frame_id FROM {schema}.memos WHERE frame_id = ANY($1)"),
                &[&ids],
            )
            .await
            .map_err(db("fetching memos"))?;
        for r in rows {
            let (k, f): (&[u8], &[u8]) = (r.get(0), r.get(1));
            match (Hash::from_slice(k), Hash::from_slice(f)) {
                (Some(k), Some(f)) if fetched.contains(&f) => memos.push((k, f)),
                // The memo of a frame left out above goes with it.
                (Some(_), Some(f)) if missing_set.contains(&f) => {}
                _ => refuse(
                    format!("memo {}", hex(k)),
                    "malformed key or frame id".into(),
                )?,
            }
            report.bytes += 64;
        }
    }
    let agent_ids: Vec<String> = need_agents.into_iter().collect();
    let rows = tx
        .query(
            &format!("SELECT agent_id, role FROM {schema}.agents WHERE agent_id = ANY($1)"),
            &[&agent_ids],
        )
        .await
        .map_err(db("fetching agents"))?;
    let mut agents = Vec::with_capacity(rows.len());
    for r in rows {
        let (id, role): (String, String) = (r.get(0), r.get(1));
        match Role::parse(&role) {
            Some(role) => agents.push((id, role)),
            None => refuse(format!("agent {id:?}"), format!("unknown role {role:?}"))?,
        }
    }
    tx.commit().await.map_err(db("ending the pull"))?;

    progress(Progress::Committing);
    let import_opts = ImportOptions {
        skip_invalid: opts.skip_invalid,
        dry_run: opts.dry_run,
    };
    let imported = store
        .import_with(
            Import {
                nodes,
                frames,
                memos,
                agents,
            },
            &import_opts,
        )
        .map_err(|e| match e {
            merkle_store::Error::Refused { item, reason } => tampered(item, reason),
            e => Error::Store(e),
        })?;
    refused.extend(imported.refused);
    // A store with nothing unpushed before the import has nothing unpushed after it: what it
    // appended came from this remote.
    if !opts.dry_run && imported.frames > 0 {
        let marker = crate::push::marker_name(&remote_id);
        if store.marker(&marker)?.unwrap_or(0) == imported.seq_before {
            crate::push::mark_pushed(store, session, &marker, imported.seq_after)?;
        }
    }
    report.pulled = Moved {
        frames: imported.frames,
        nodes: imported.nodes,
        memos: imported.memos,
        agents: imported.agents,
    };
    report.skipped += imported.skipped;
    report.refused = refused;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
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
