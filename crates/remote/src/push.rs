//! `merkle push`: send the remote what it lacks, in one transaction.
//!
//! The candidates are the frames appended since the last push to this remote (a marker in the
//! store, kept under the remote's id, so local work is compared, not the whole store); `--full`
//! compares every frame. Which of them the remote lacks is decided by ids in batches, and only
//! those are loaded and streamed with `COPY ... BINARY` into temporary tables, then inserted
//! in key order with `ON CONFLICT DO NOTHING` (so two pushers of the same frames never
//! deadlock, and both land). Node records, memos and agents go with them. Everything becomes
//! visible at the commit or not at all, and the marker moves only after it.
use std::collections::{BTreeSet, HashSet};
use std::pin::pin;
use std::time::Instant;

use merkle_store::{FrameId, Hash, NodeId, Store};
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{Json, ToSql, Type};

use crate::connect::Session;
use crate::error::{Error, Result};
use crate::{Moved, OnProgress, Progress};

/// Ids compared or rows fetched per round trip.
pub(crate) const BATCH: usize = 5_000;

/// Up to this many frames go in one statement of arrays (no transaction block, no staging
/// tables: one round trip for an edit's frames); more are streamed with `COPY`.
const SMALL: usize = 2_000;

/// How to push.
#[derive(Clone, Copy, Debug, Default)]
pub struct PushOptions<'a> {
    /// Compare every frame of the store, not only those appended since the last push.
    pub full: bool,
    /// Compare and count what would be sent, but send nothing (and leave the marker).
    pub dry_run: bool,
    /// Called as the push goes.
    pub progress: OnProgress<'a>,
}

/// What a push did (in a dry run, would do).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PushReport {
    /// Rows the remote did not have.
    pub pushed: Moved,
    /// Candidate frames the remote already had.
    pub skipped: u64,
    /// Frames compared with the remote.
    pub compared: u64,
    /// Bytes of row data sent (ids, names and content; not the protocol's framing).
    pub bytes: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// The store marker that records how far the frame sequence was pushed to remote `id`.
pub(crate) fn marker_name(remote_id: &str) -> String {
    format!("remote:{remote_id}:pushed")
}

/// The same position kept under the remote's name, which `merkle status` reads without
/// connecting (the id-keyed marker is what a push trusts).
fn name_marker(remote_name: &str) -> String {
    merkle_store::pushed_marker(remote_name)
}

/// Records that the store's frames up to `seq` are on the session's remote (`marker` is its
/// id-keyed marker).
pub(crate) fn mark_pushed(store: &Store, session: &Session, marker: &str, seq: u64) -> Result<()> {
    store.set_marker(marker, seq)?;
    store.set_marker(&name_marker(&session.remote.name), seq)?;
    Ok(())
}

/// Forgets what was pushed to the remote named `remote_name` (for a name added again, which
/// may be another remote): `merkle status` then counts every frame as not pushed there until
/// the next push.
pub fn forget_pushed(store: &Store, remote_name: &str) -> Result<()> {
    Ok(store.set_marker(&name_marker(remote_name), 0)?)
}

/// Pushes `store`'s frames, with their nodes, memos and agents, to the session's remote.
pub async fn push(
    store: &Store,
    session: &mut Session,
    opts: &PushOptions<'_>,
) -> Result<PushReport> {
    let started = Instant::now();
    session
        .require(
            "INSERT",
            &["frames", "nodes", "memos", "agents"],
            "push",
            "writer",
        )
        .await?;
    let remote_id = session.remote_id().await?;
    let marker = marker_name(&remote_id);
    let after = if opts.full {
        0
    } else {
        store.marker(&marker)?.unwrap_or(0)
    };
    let top = store.frame_seq()?;
    let candidates: Vec<FrameId> = store
        .frames_after(after)?
        .into_iter()
        .filter(|(seq, _)| *seq <= top)
        .map(|(_, id)| id)
        .collect();
    let mut report = PushReport {
        compared: candidates.len() as u64,
        ..PushReport::default()
    };
    let missing = missing_ids(session, &candidates, opts.progress).await?;
    report.skipped = (candidates.len() - missing.len()) as u64;
    let candidate_set: HashSet<FrameId> = candidates.iter().copied().collect();
    let memos: Vec<(Hash, FrameId)> = store
        .memos()?
        .into_iter()
        .filter(|(_, f)| candidate_set.contains(f))
        .collect();
    if opts.dry_run {
        report.pushed = would_push(store, session, &missing, &memos).await?;
        report.seconds = started.elapsed().as_secs_f64();
        return Ok(report);
    }
    if missing.is_empty() && memos.is_empty() {
        mark_pushed(store, session, &marker, top)?;
        report.seconds = started.elapsed().as_secs_f64();
        return Ok(report);
    }
    if missing.len() <= SMALL {
        push_small(store, session, &missing, &memos, &mut report).await?;
    } else {
        push_copy(store, session, &missing, &memos, &mut report, opts.progress).await?;
    }
    mark_pushed(store, session, &marker, top)?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Which of the `candidates` the remote lacks, compared by id a batch at a time.
async fn missing_ids(
    session: &Session,
    candidates: &[FrameId],
    progress: OnProgress<'_>,
) -> Result<Vec<FrameId>> {
    let frames_table = session.table("frames");
    let mut missing = Vec::new();
    for (i, chunk) in candidates.chunks(BATCH).enumerate() {
        let present = present_ids(session, &frames_table, "frame_id", chunk).await?;
        missing.extend(chunk.iter().filter(|id| !present.contains(*id)).copied());
        progress.report(Progress::Comparing {
            done: (i * BATCH + chunk.len()) as u64,
            total: candidates.len() as u64,
        });
    }
    Ok(missing)
}

/// Sends a large push in one transaction: every table's rows streamed with `COPY` into
/// temporary tables, then inserted into the real ones.
async fn push_copy(
    store: &Store,
    session: &mut Session,
    missing: &[FrameId],
    memos: &[(Hash, FrameId)],
    report: &mut PushReport,
    progress: OnProgress<'_>,
) -> Result<()> {
    let name = session.remote.name.clone();
    let db = |context| Error::db_fn(&name, context);
    let schema = session.remote.schema.clone();
    let tx = session
        .client
        .transaction()
        .await
        .map_err(db("starting the push"))?;
    tx.batch_execute(&format!(
        "CREATE TEMP TABLE push_frames (LIKE {schema}.frames INCLUDING DEFAULTS) ON COMMIT DROP;
         CREATE TEMP TABLE push_nodes (LIKE {schema}.nodes INCLUDING DEFAULTS) ON COMMIT DROP;
         CREATE TEMP TABLE push_memos (LIKE {schema}.memos INCLUDING DEFAULTS) ON COMMIT DROP;
         CREATE TEMP TABLE push_agents (LIKE {schema}.agents INCLUDING DEFAULTS) ON COMMIT DROP;"
    ))
    .await
    .map_err(db("creating the staging tables"))?;
    let (nodes, agents) = copy_frames(&tx, &name, store, missing, report, progress).await?;
    copy_nodes(&tx, &name, store, nodes, report).await?;
    // Memos and agents: few, sent whole; the remote keeps what it has.
    copy_memos(&tx, &name, memos, report).await?;
    copy_agents(&tx, &name, store, &agents, report).await?;
    progress.report(Progress::Committing);
    report.pushed = insert_staged(&tx, &name, &schema).await?;
    tx.commit().await.map_err(db("committing the push"))?;
    // Rows another pusher committed first were skipped by the insert.
    report.skipped += missing.len() as u64 - report.pushed.frames;
    Ok(())
}

/// Streams the `missing` frames into `push_frames` as they are read from the store; the nodes
/// they are on and the agents they name.
async fn copy_frames(
    tx: &tokio_postgres::Transaction<'_>,
    name: &str,
    store: &Store,
    missing: &[FrameId],
    report: &mut PushReport,
    progress: OnProgress<'_>,
) -> Result<(BTreeSet<NodeId>, BTreeSet<String>)> {
    let db = |context| Error::db_fn(name, context);
    let mut nodes: BTreeSet<NodeId> = BTreeSet::new();
    let mut agents: BTreeSet<String> = BTreeSet::new();
    let sink = tx
        .copy_in(
            "COPY push_frames (frame_id, node_id, frame_type, agent_id, basis, content, \
             created_at_ms, provider, model, extra) FROM STDIN BINARY",
        )
        .await
        .map_err(db("sending frames"))?;
    let types = [
        Type::BYTEA,
        Type::BYTEA,
        Type::TEXT,
        Type::TEXT,
        Type::BYTEA,
        Type::BYTEA,
        Type::INT8,
        Type::TEXT,
        Type::TEXT,
        Type::JSONB,
    ];
    let mut writer = pin!(BinaryCopyInWriter::new(sink, &types));
    for (i, id) in missing.iter().enumerate() {
        let f = stored_frame(store, id)?;
        nodes.insert(f.node_id);
        agents.insert(f.agent_id.clone());
        let created = i64::try_from(f.metadata.created_at_ms).unwrap_or(i64::MAX);
        let extra = Json(&f.metadata.extra);
        report.bytes +=
            (32 * 3 + f.content.len() + f.frame_type.len() + f.agent_id.len()) as u64 + 8;
        let row: [&(dyn ToSql + Sync); 10] = [
            &f.frame_id.0.as_slice(),
            &f.node_id.0.as_slice(),
            &f.frame_type,
            &f.agent_id,
            &f.basis.0.as_slice(),
            &f.content,
            &created,
            &f.metadata.provider,
            &f.metadata.model,
            &extra,
        ];
        writer
            .as_mut()
            .write(&row)
            .await
            .map_err(db("sending frames"))?;
        if i % 1000 == 999 || i + 1 == missing.len() {
            progress.report(Progress::Transferring {
                done: i as u64 + 1,
                total: missing.len() as u64,
            });
        }
    }
    writer.finish().await.map_err(db("sending frames"))?;
    Ok((nodes, agents))
}

/// Streams the records of `nodes`, the nodes the frames are on, into `push_nodes`; the insert
/// keeps those the remote has.
async fn copy_nodes(
    tx: &tokio_postgres::Transaction<'_>,
    name: &str,
    store: &Store,
    nodes: BTreeSet<NodeId>,
    report: &mut PushReport,
) -> Result<()> {
    let db = |context| Error::db_fn(name, context);
    let send_nodes: Vec<NodeId> = nodes.into_iter().collect();
    let sink = tx
        .copy_in("COPY push_nodes (node_id, path, kind, record) FROM STDIN BINARY")
        .await
        .map_err(db("sending nodes"))?;
    let types = [Type::BYTEA, Type::TEXT, Type::TEXT, Type::BYTEA];
    let mut writer = pin!(BinaryCopyInWriter::new(sink, &types));
    for id in &send_nodes {
        let n = store
            .node(id)?
            .ok_or_else(|| merkle_store::Error::NoSuchNode { id: id.to_hex() })?;
        let record = n.encode();
        report.bytes += (32 + n.path.len() + record.len()) as u64;
        let row: [&(dyn ToSql + Sync); 4] =
            [&n.node_id.0.as_slice(), &n.path, &n.kind.as_str(), &record];
        writer
            .as_mut()
            .write(&row)
            .await
            .map_err(db("sending nodes"))?;
    }
    writer.finish().await.map_err(db("sending nodes"))?;
    Ok(())
}

/// Streams `memos` into `push_memos`.
async fn copy_memos(
    tx: &tokio_postgres::Transaction<'_>,
    name: &str,
    memos: &[(Hash, FrameId)],
    report: &mut PushReport,
) -> Result<()> {
    let db = |context| Error::db_fn(name, context);
    let sink = tx
        .copy_in("COPY push_memos (key, frame_id) FROM STDIN BINARY")
        .await
        .map_err(db("sending memos"))?;
    let mut writer = pin!(BinaryCopyInWriter::new(sink, &[Type::BYTEA, Type::BYTEA]));
    for (key, frame) in memos {
        report.bytes += 64;
        let row: [&(dyn ToSql + Sync); 2] = [&key.0.as_slice(), &frame.0.as_slice()];
        writer
            .as_mut()
            .write(&row)
            .await
            .map_err(db("sending memos"))?;
    }
    writer.finish().await.map_err(db("sending memos"))?;
    Ok(())
}

/// Streams `agents`, with their roles in the store, into `push_agents`.
async fn copy_agents(
    tx: &tokio_postgres::Transaction<'_>,
    name: &str,
    store: &Store,
    agents: &BTreeSet<String>,
    report: &mut PushReport,
) -> Result<()> {
    let db = |context| Error::db_fn(name, context);
    let sink = tx
        .copy_in("COPY push_agents (agent_id, role) FROM STDIN BINARY")
        .await
        .map_err(db("sending agents"))?;
    let mut writer = pin!(BinaryCopyInWriter::new(sink, &[Type::TEXT, Type::TEXT]));
    for id in agents {
        let role = store.agent(id)?.map_or("writer", |a| a.role.as_str());
        report.bytes += (id.len() + role.len()) as u64;
        let row: [&(dyn ToSql + Sync); 2] = [id, &role];
        writer
            .as_mut()
            .write(&row)
            .await
            .map_err(db("sending agents"))?;
    }
    writer.finish().await.map_err(db("sending agents"))?;
    Ok(())
}

/// Inserts the staging tables into the real tables, parents first, each in key order so
/// concurrent pushers of the same rows wait for each other instead of deadlocking; the rows
/// each insert added.
async fn insert_staged(
    tx: &tokio_postgres::Transaction<'_>,
    name: &str,
    schema: &str,
) -> Result<Moved> {
    let db = |context| Error::db_fn(name, context);
    let insert = |table: &str, cols: &str, key: &str| {
        format!(
            "INSERT INTO {schema}.{table} ({cols}) SELECT {cols} FROM push_{table} \
             ORDER BY {key} ON CONFLICT DO NOTHING"
        )
    };
    Ok(Moved {
        agents: tx
            .execute(&insert("agents", "agent_id, role", "agent_id"), &[])
            .await
            .map_err(db("storing agents"))?,
        nodes: tx
            .execute(
                &insert("nodes", "node_id, path, kind, record", "node_id"),
                &[],
            )
            .await
            .map_err(db("storing nodes"))?,
        frames: tx
            .execute(
                &insert(
                    "frames",
                    "frame_id, node_id, frame_type, agent_id, basis, content, created_at_ms, \
                     provider, model, extra",
                    "frame_id",
                ),
                &[],
            )
            .await
            .map_err(db("storing frames"))?,
        memos: tx
            .execute(&insert("memos", "key, frame_id", "key"), &[])
            .await
            .map_err(db("storing memos"))?,
    })
}

/// What a small push sends, read from the store: the frames, their nodes' records (with the
/// encoding sent), and the agents they name with their roles.
struct SmallPush {
    frames: Vec<merkle_store::Frame>,
    records: Vec<(merkle_store::NodeRecord, Vec<u8>)>,
    agents: BTreeSet<String>,
    roles: Vec<&'static str>,
}

/// Reads what a small push of `missing` and `memos` sends, counting its bytes.
fn load_small(
    store: &Store,
    missing: &[FrameId],
    memos: &[(Hash, FrameId)],
    report: &mut PushReport,
) -> Result<SmallPush> {
    let mut frames = Vec::with_capacity(missing.len());
    let mut nodes: BTreeSet<NodeId> = BTreeSet::new();
    let mut agents: BTreeSet<String> = BTreeSet::new();
    for id in missing {
        let f = stored_frame(store, id)?;
        nodes.insert(f.node_id);
        agents.insert(f.agent_id.clone());
        report.bytes +=
            (32 * 3 + f.content.len() + f.frame_type.len() + f.agent_id.len()) as u64 + 8;
        frames.push(f);
    }
    let mut records = Vec::with_capacity(nodes.len());
    for id in &nodes {
        let n = store
            .node(id)?
            .ok_or_else(|| merkle_store::Error::NoSuchNode { id: id.to_hex() })?;
        let encoded = n.encode();
        report.bytes += (32 + n.path.len() + encoded.len()) as u64;
        records.push((n, encoded));
    }
    let mut roles = Vec::with_capacity(agents.len());
    for id in &agents {
        let role = store.agent(id)?.map_or("writer", |a| a.role.as_str());
        report.bytes += (id.len() + role.len()) as u64;
        roles.push(role);
    }
    report.bytes += 64 * memos.len() as u64;
    Ok(SmallPush {
        frames,
        records,
        agents,
        roles,
    })
}

/// Sends a small push as one statement: each table's rows as arrays, inserted in key order by
/// data-modifying CTEs, parents before children. One statement is atomic on its own.
async fn push_small(
    store: &Store,
    session: &Session,
    missing: &[FrameId],
    memos: &[(Hash, FrameId)],
    report: &mut PushReport,
) -> Result<()> {
    let SmallPush {
        frames,
        records,
        agents,
        roles,
    } = load_small(store, missing, memos, report)?;

    let agent_ids: Vec<&str> = agents.iter().map(String::as_str).collect();
    let node_ids: Vec<&[u8]> = records
        .iter()
        .map(|(n, _)| n.node_id.0.as_slice())
        .collect();
    let paths: Vec<&str> = records.iter().map(|(n, _)| n.path.as_str()).collect();
    let kinds: Vec<&str> = records.iter().map(|(n, _)| n.kind.as_str()).collect();
    let encoded: Vec<&[u8]> = records.iter().map(|(_, e)| e.as_slice()).collect();
    let frame_ids: Vec<&[u8]> = frames.iter().map(|f| f.frame_id.0.as_slice()).collect();
    let frame_nodes: Vec<&[u8]> = frames.iter().map(|f| f.node_id.0.as_slice()).collect();
    let types: Vec<&str> = frames.iter().map(|f| f.frame_type.as_str()).collect();
    let frame_agents: Vec<&str> = frames.iter().map(|f| f.agent_id.as_str()).collect();
    let bases: Vec<&[u8]> = frames.iter().map(|f| f.basis.0.as_slice()).collect();
    let contents: Vec<&[u8]> = frames.iter().map(|f| f.content.as_slice()).collect();
    let created: Vec<i64> = frames
        .iter()
        .map(|f| i64::try_from(f.metadata.created_at_ms).unwrap_or(i64::MAX))
        .collect();
    let providers: Vec<Option<&str>> = frames
        .iter()
        .map(|f| f.metadata.provider.as_deref())
        .collect();
    let models: Vec<Option<&str>> = frames.iter().map(|f| f.metadata.model.as_deref()).collect();
    let extras: Vec<Json<&std::collections::BTreeMap<String, String>>> =
        frames.iter().map(|f| Json(&f.metadata.extra)).collect();
    let memo_keys: Vec<&[u8]> = memos.iter().map(|(k, _)| k.0.as_slice()).collect();
    let memo_frames: Vec<&[u8]> = memos.iter().map(|(_, f)| f.0.as_slice()).collect();

    let sql = small_push_sql(&session.remote.schema);
    let row = session
        .client
        .query_one(
            &sql,
            &[
                &agent_ids,
                &roles,
                &node_ids,
                &paths,
                &kinds,
                &encoded,
                &frame_ids,
                &frame_nodes,
                &types,
                &frame_agents,
                &bases,
                &contents,
                &created,
                &providers,
                &models,
                &extras,
                &memo_keys,
                &memo_frames,
            ],
        )
        .await
        .map_err(session.db_err("storing the push"))?;
    let count = |i: usize| u64::try_from(row.get::<_, i64>(i)).unwrap_or(0);
    report.pushed = Moved {
        agents: count(0),
        nodes: count(1),
        frames: count(2),
        memos: count(3),
    };
    // Rows another pusher committed first were skipped by the insert.
    report.skipped += missing.len() as u64 - report.pushed.frames;
    Ok(())
}

/// The one statement of a small push into `schema`: data-modifying CTEs that insert each
/// table's rows, given as arrays, in key order, parents before children, and count them.
fn small_push_sql(s: &str) -> String {
    format!(
        "WITH a AS (INSERT INTO {s}.agents (agent_id, role) \
           SELECT * FROM unnest($1::text[], $2::text[]) AS r ORDER BY 1 \
           ON CONFLICT DO NOTHING RETURNING 1), \
         n AS (INSERT INTO {s}.nodes (node_id, path, kind, record) \
           SELECT * FROM unnest($3::bytea[], $4::text[], $5::text[], $6::bytea[]) AS r ORDER BY 1 \
           ON CONFLICT DO NOTHING RETURNING 1), \
         f AS (INSERT INTO {s}.frames (frame_id, node_id, frame_type, agent_id, basis, content, \
             created_at_ms, provider, model, extra) \
           SELECT * FROM unnest($7::bytea[], $8::bytea[], $9::text[], $10::text[], $11::bytea[], \
             $12::bytea[], $13::int8[], $14::text[], $15::text[], $16::jsonb[]) AS r ORDER BY 1 \
           ON CONFLICT DO NOTHING RETURNING 1), \
         m AS (INSERT INTO {s}.memos (key, frame_id) \
           SELECT * FROM unnest($17::bytea[], $18::bytea[]) AS r ORDER BY 1 \
           ON CONFLICT DO NOTHING RETURNING 1) \
         SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM n), (SELECT count(*) FROM f), \
           (SELECT count(*) FROM m)"
    )
}

/// Frame `id`, which the store listed: its absence is an error naming it.
fn stored_frame(store: &Store, id: &FrameId) -> Result<merkle_store::Frame> {
    Ok(store
        .frame(id)?
        .ok_or_else(|| merkle_store::Error::NoSuchFrame { id: id.to_hex() })?)
}

/// What a push of `missing` frames and `memos` would insert: the frames, and the nodes, memos
/// and agents the remote lacks.
async fn would_push(
    store: &Store,
    session: &Session,
    missing: &[FrameId],
    memos: &[(Hash, FrameId)],
) -> Result<Moved> {
    let mut nodes: BTreeSet<NodeId> = BTreeSet::new();
    let mut agents: BTreeSet<String> = BTreeSet::new();
    for id in missing {
        let f = stored_frame(store, id)?;
        nodes.insert(f.node_id);
        agents.insert(f.agent_id);
    }
    let mut moved = Moved {
        frames: missing.len() as u64,
        ..Moved::default()
    };
    let nodes: Vec<NodeId> = nodes.into_iter().collect();
    for chunk in nodes.chunks(BATCH) {
        let present = present_ids(session, &session.table("nodes"), "node_id", chunk).await?;
        moved.nodes += (chunk.len() - present.len()) as u64;
    }
    let keys: Vec<Hash> = memos.iter().map(|(k, _)| *k).collect();
    for chunk in keys.chunks(BATCH) {
        let present = present_ids(session, &session.table("memos"), "key", chunk).await?;
        moved.memos += (chunk.len() - present.len()) as u64;
    }
    let agents: Vec<String> = agents.into_iter().collect();
    let row = session
        .client
        .query_one(
            &format!(
                "SELECT count(*) FROM {} WHERE agent_id = ANY($1)",
                session.table("agents")
            ),
            &[&agents],
        )
        .await
        .map_err(session.db_err("comparing agents"))?;
    let present: i64 = row.get(0);
    moved.agents = agents.len() as u64 - u64::try_from(present).unwrap_or(0);
    Ok(moved)
}

/// Which of `ids` the session's `table` holds in column `column`.
async fn present_ids(
    session: &Session,
    table: &str,
    column: &str,
    ids: &[Hash],
) -> Result<HashSet<Hash>> {
    present_ids_tx(&session.client, table, column, ids)
        .await
        .map_err(session.db_err("comparing ids"))
}

async fn present_ids_tx<C: tokio_postgres::GenericClient>(
    client: &C,
    table: &str,
    column: &str,
    ids: &[Hash],
) -> std::result::Result<HashSet<Hash>, tokio_postgres::Error> {
    let params: Vec<&[u8]> = ids.iter().map(|h| h.0.as_slice()).collect();
    let rows = client
        .query(
            &format!("SELECT {column} FROM {table} WHERE {column} = ANY($1)"),
            &[&params],
        )
        .await?;
    Ok(rows
        .iter()
        .filter_map(|r| Hash::from_slice(r.get::<_, &[u8]>(0)))
        .collect())
}
