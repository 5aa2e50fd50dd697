//! `merkle remote check`: every row of a remote checked as a pull would check it, and the bad
//! ones listed, so a team can see what blocks its pulls (and what `pull --skip-invalid` would
//! leave out) without pulling anything.
//!
//! One repeatable-read, read-only transaction; frames and nodes are read in key order, a batch
//! at a time, so memory stays flat on a remote of millions of rows.
use std::time::Instant;

use merkle_store::{Hash, NodeRecord, Role};

use crate::connect::Session;
use crate::error::{Error, Result};
use crate::pull::{hex, verified_frame};
use crate::push::BATCH;
use crate::{OnProgress, Progress};

/// One row that fails a check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRow {
    /// The remote's table: `frames`, `nodes`, `memos` or `agents`.
    pub table: &'static str,
    /// The row, as a pull names it: `frame <id>`, `node <id> ("path")`, ...
    pub item: String,
    /// What is wrong with it.
    pub reason: String,
}

/// What a check read and found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckReport {
    /// Rows read, per table.
    pub frames: u64,
    /// Node rows read.
    pub nodes: u64,
    /// Memo rows read.
    pub memos: u64,
    /// Agent rows read.
    pub agents: u64,
    /// The rows that fail a check, table by table in key order.
    pub bad: Vec<BadRow>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Checks every row of the session's remote (see the module documentation).
pub async fn check(session: &mut Session, progress: OnProgress<'_>) -> Result<CheckReport> {
    let started = Instant::now();
    session
        .require(
            "SELECT",
            &["frames", "nodes", "memos", "agents"],
            "check",
            "reader",
        )
        .await?;
    let name = session.remote.name.clone();
    let schema = session.remote.schema.clone();
    let db = |context| {
        let name = name.clone();
        move |e: tokio_postgres::Error| Error::db(&name, context, &e)
    };
    let tx = session.snapshot("starting the check").await?;
    let mut report = CheckReport::default();
    let bad = |table: &'static str, item: String, reason: String| BadRow {
        table,
        item,
        reason,
    };
    let mut found = Vec::new();

    // Nodes: each record hashes to its id.
    let mut after: Vec<u8> = Vec::new();
    loop {
        let rows = tx
            .query(
                &format!(
                    "SELECT node_id, record FROM {schema}.nodes WHERE node_id > $1 \
                     ORDER BY node_id LIMIT {BATCH}"
                ),
                &[&after],
            )
            .await
            .map_err(db("reading nodes"))?;
        let Some(last) = rows.last() else { break };
        after = last.get::<_, Vec<u8>>(0);
        for r in &rows {
            report.nodes += 1;
            let (raw, record): (&[u8], &[u8]) = (r.get(0), r.get(1));
            let Some(id) = Hash::from_slice(raw) else {
                found.push(bad(
                    "nodes",
                    format!("node id {}", hex(raw)),
                    "not 32 bytes".into(),
                ));
                continue;
            };
            match NodeRecord::decode(id, record) {
                Err(e) => found.push(bad("nodes", format!("node {id}"), e.to_string())),
                Ok(n) if n.derive_id() != id => found.push(bad(
                    "nodes",
                    format!("node {id} ({:?})", n.path),
                    format!("its record hashes to {}, not to its id", n.derive_id()),
                )),
                Ok(_) => {}
            }
        }
    }

    // Frames: each id re-derives from its fields.
    let total: i64 = tx
        .query_one(&format!("SELECT count(*) FROM {schema}.frames"), &[])
        .await
        .map_err(db("counting frames"))?
        .get(0);
    let total = u64::try_from(total).unwrap_or(0);
    let mut after: Vec<u8> = Vec::new();
    loop {
        let rows = tx
            .query(
                &format!(
                    "SELECT frame_id, node_id, frame_type, agent_id, basis, content, \
                     created_at_ms, provider, model, extra FROM {schema}.frames \
                     WHERE frame_id > $1 ORDER BY frame_id LIMIT {BATCH}"
                ),
                &[&after],
            )
            .await
            .map_err(db("reading frames"))?;
        let Some(last) = rows.last() else { break };
        after = last.get::<_, Vec<u8>>(0);
        for r in &rows {
            report.frames += 1;
            match verified_frame(r) {
                Err((item, reason)) => found.push(bad("frames", item, reason)),
                Ok(f) => {
                    let names = merkle_store::frame::check_name("frame type", &f.frame_type)
                        .and_then(|()| merkle_store::frame::check_name("agent id", &f.agent_id));
                    if let Err(e) = names {
                        found.push(bad(
                            "frames",
                            format!("frame {}", f.frame_id),
                            e.to_string(),
                        ));
                    }
                }
            }
        }
        progress.report(Progress::Transferring {
            done: report.frames,
            total,
        });
    }

    // Frames whose basis is another node's id: moved off the node they were made for.
    let rows = tx
        .query(
            &format!(
                "SELECT f.frame_id, f.node_id, n.path, f.basis, b.path FROM {schema}.frames f \
                 JOIN {schema}.nodes b ON b.node_id = f.basis \
                 JOIN {schema}.nodes n ON n.node_id = f.node_id \
                 WHERE f.basis <> f.node_id ORDER BY f.frame_id"
            ),
            &[],
        )
        .await
        .map_err(db("reading frames' bases"))?;
    for r in &rows {
        let (frame, node, path, basis, other): (&[u8], &[u8], &str, &[u8], &str) =
            (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4));
        // One line per frame: one already listed (its id does not derive) is not listed again.
        let item = format!("frame {}", hex(frame));
        if found.iter().any(|b| b.item == item) {
            continue;
        }
        found.push(bad(
            "frames",
            item,
            format!(
                "it is on node {} ({path:?}), but its basis is node {} ({other:?}): a frame \
                 made for one node, moved onto another",
                hex(node),
                hex(basis)
            ),
        ));
    }

    // Memos and agents: few; read whole.
    let rows = tx
        .query(&format!("SELECT key, frame_id FROM {schema}.memos"), &[])
        .await
        .map_err(db("reading memos"))?;
    for r in &rows {
        report.memos += 1;
        let (k, f): (&[u8], &[u8]) = (r.get(0), r.get(1));
        if Hash::from_slice(k).is_none() || Hash::from_slice(f).is_none() {
            found.push(bad(
                "memos",
                format!("memo {}", hex(k)),
                "malformed key or frame id".into(),
            ));
        }
    }
    let rows = tx
        .query(&format!("SELECT agent_id, role FROM {schema}.agents"), &[])
        .await
        .map_err(db("reading agents"))?;
    for r in &rows {
        report.agents += 1;
        let (id, role): (&str, &str) = (r.get(0), r.get(1));
        if Role::parse(role).is_none() {
            found.push(bad(
                "agents",
                format!("agent {id:?}"),
                format!("unknown role {role:?}"),
            ));
        }
    }
    tx.commit().await.map_err(db("ending the check"))?;
    report.bad = found;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}
