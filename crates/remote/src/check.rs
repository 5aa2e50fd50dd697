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
    let mut c = Checking {
        name: session.remote.name.clone(),
        schema: session.remote.schema.clone(),
        report: CheckReport::default(),
    };
    let tx = session.snapshot("starting the check").await?;
    c.nodes(&tx).await?;
    c.frames(&tx, progress).await?;
    c.bases(&tx).await?;
    c.memos(&tx).await?;
    c.agents(&tx).await?;
    tx.commit().await.map_err(c.db("ending the check"))?;
    c.report.seconds = started.elapsed().as_secs_f64();
    Ok(c.report)
}

/// A check under way: the remote's name and schema, and the report so far.
struct Checking {
    name: String,
    schema: String,
    report: CheckReport,
}

impl Checking {
    /// A database error, in `context`, as the check's error.
    fn db(&self, context: &'static str) -> impl Fn(tokio_postgres::Error) -> Error + '_ {
        Error::db_fn(&self.name, context)
    }

    /// Lists a row of `table` that fails a check.
    fn bad(&mut self, table: &'static str, item: String, reason: String) {
        self.report.bad.push(BadRow {
            table,
            item,
            reason,
        });
    }

    /// Nodes, read in key order a batch at a time: each record hashes to its id.
    async fn nodes(&mut self, tx: &tokio_postgres::Transaction<'_>) -> Result<()> {
        let sql = format!(
            "SELECT node_id, record FROM {}.nodes WHERE node_id > $1 \
             ORDER BY node_id LIMIT {BATCH}",
            self.schema
        );
        let mut after: Vec<u8> = Vec::new();
        loop {
            let rows = tx
                .query(&sql, &[&after])
                .await
                .map_err(self.db("reading nodes"))?;
            let Some(last) = rows.last() else { break };
            after = last.get::<_, Vec<u8>>(0);
            for r in &rows {
                self.report.nodes += 1;
                let (raw, record): (&[u8], &[u8]) = (r.get(0), r.get(1));
                let Some(id) = Hash::from_slice(raw) else {
                    self.bad(
                        "nodes",
                        format!("node id {}", hex(raw)),
                        "not 32 bytes".into(),
                    );
                    continue;
                };
                match NodeRecord::decode(id, record) {
                    Err(e) => self.bad("nodes", format!("node {id}"), e.to_string()),
                    Ok(n) if n.derive_id() != id => self.bad(
                        "nodes",
                        format!("node {id} ({:?})", n.path),
                        format!("its record hashes to {}, not to its id", n.derive_id()),
                    ),
                    Ok(_) => {}
                }
            }
        }
        Ok(())
    }

    /// Frames, read in key order a batch at a time: each id re-derives from its fields, and
    /// its names are valid.
    async fn frames(
        &mut self,
        tx: &tokio_postgres::Transaction<'_>,
        progress: OnProgress<'_>,
    ) -> Result<()> {
        let schema = &self.schema;
        let sql = format!(
            "SELECT frame_id, node_id, frame_type, agent_id, basis, content, \
             created_at_ms, provider, model, extra FROM {schema}.frames \
             WHERE frame_id > $1 ORDER BY frame_id LIMIT {BATCH}"
        );
        let total: i64 = tx
            .query_one(&format!("SELECT count(*) FROM {schema}.frames"), &[])
            .await
            .map_err(self.db("counting frames"))?
            .get(0);
        let total = u64::try_from(total).unwrap_or(0);
        let mut after: Vec<u8> = Vec::new();
        loop {
            let rows = tx
                .query(&sql, &[&after])
                .await
                .map_err(self.db("reading frames"))?;
            let Some(last) = rows.last() else { break };
            after = last.get::<_, Vec<u8>>(0);
            for r in &rows {
                self.report.frames += 1;
                match verified_frame(r) {
                    Err((item, reason)) => self.bad("frames", item, reason),
                    Ok(f) => {
                        let names = merkle_store::frame::check_name("frame type", &f.frame_type)
                            .and_then(|()| {
                                merkle_store::frame::check_name("agent id", &f.agent_id)
                            });
                        if let Err(e) = names {
                            self.bad("frames", format!("frame {}", f.frame_id), e.to_string());
                        }
                    }
                }
            }
            progress.report(Progress::Transferring {
                done: self.report.frames,
                total,
            });
        }
        Ok(())
    }

    /// Frames whose basis is another node's id: moved off the node they were made for.
    async fn bases(&mut self, tx: &tokio_postgres::Transaction<'_>) -> Result<()> {
        let schema = &self.schema;
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
            .map_err(self.db("reading frames' bases"))?;
        for r in &rows {
            let (frame, node, path, basis, other): (&[u8], &[u8], &str, &[u8], &str) =
                (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4));
            // One line per frame: one already listed (its id does not derive) is not listed again.
            let item = format!("frame {}", hex(frame));
            if self.report.bad.iter().any(|b| b.item == item) {
                continue;
            }
            self.bad(
                "frames",
                item,
                format!(
                    "it is on node {} ({path:?}), but its basis is node {} ({other:?}): a frame \
                     made for one node, moved onto another",
                    hex(node),
                    hex(basis)
                ),
            );
        }
        Ok(())
    }

    /// Memos, few and read whole: each key and frame id is 32 bytes.
    async fn memos(&mut self, tx: &tokio_postgres::Transaction<'_>) -> Result<()> {
        let rows = tx
            .query(
                &format!("SELECT key, frame_id FROM {}.memos", self.schema),
                &[],
            )
            .await
            .map_err(self.db("reading memos"))?;
        for r in &rows {
            self.report.memos += 1;
            let (k, f): (&[u8], &[u8]) = (r.get(0), r.get(1));
            if Hash::from_slice(k).is_none() || Hash::from_slice(f).is_none() {
                self.bad(
                    "memos",
                    format!("memo {}", hex(k)),
                    "malformed key or frame id".into(),
                );
            }
        }
        Ok(())
    }

    /// Agents, few and read whole: each role is known.
    async fn agents(&mut self, tx: &tokio_postgres::Transaction<'_>) -> Result<()> {
        let rows = tx
            .query(
                &format!("SELECT agent_id, role FROM {}.agents", self.schema),
                &[],
            )
            .await
            .map_err(self.db("reading agents"))?;
        for r in &rows {
            self.report.agents += 1;
            let (id, role): (&str, &str) = (r.get(0), r.get(1));
            if Role::parse(role).is_none() {
                self.bad(
                    "agents",
                    format!("agent {id:?}"),
                    format!("unknown role {role:?}"),
                );
            }
        }
        Ok(())
    }
}
