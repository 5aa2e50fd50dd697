//! The remote's tables, and `merkle remote init`: the SQL that creates them and the grants.
//!
//! Five tables in one schema. `frames` holds each frame's fields as columns (what its FrameID
//! hashes, and the metadata beside it); `nodes` the record of every node a frame is on, in its
//! fixed-width encoding (`NodeRecord::encode`), with its path for the pull's lookups; `memos` the cache of work by
//! inputs; `agents` the names frames are attributed to; `meta` the remote's id. Rows are only
//! ever inserted: nothing a client does updates or deletes one, so writers need INSERT and
//! SELECT, readers SELECT.
use crate::connect::Session;
use crate::error::{Error, Result};

/// The SQL `merkle remote init` runs, with `{schema}` for the remote's schema.
pub const INIT_SQL: &str = "\
CREATE SCHEMA IF NOT EXISTS {schema};
CREATE TABLE IF NOT EXISTS {schema}.meta (
    key text PRIMARY KEY,
    value text NOT NULL
);
CREATE TABLE IF NOT EXISTS {schema}.agents (
    agent_id text PRIMARY KEY,
    role text NOT NULL
);
CREATE TABLE IF NOT EXISTS {schema}.nodes (
    node_id bytea PRIMARY KEY,
    path text NOT NULL,
    kind text NOT NULL,
    record bytea NOT NULL
);
CREATE INDEX IF NOT EXISTS nodes_path ON {schema}.nodes (path);
CREATE TABLE IF NOT EXISTS {schema}.frames (
    frame_id bytea PRIMARY KEY,
    node_id bytea NOT NULL REFERENCES {schema}.nodes,
    frame_type text NOT NULL,
    agent_id text NOT NULL REFERENCES {schema}.agents,
    basis bytea NOT NULL,
    content bytea NOT NULL,
    created_at_ms bigint NOT NULL,
    provider text,
    model text,
    extra jsonb NOT NULL,
    pushed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS frames_node ON {schema}.frames (node_id);
CREATE TABLE IF NOT EXISTS {schema}.memos (
    key bytea PRIMARY KEY,
    frame_id bytea NOT NULL REFERENCES {schema}.frames
);
INSERT INTO {schema}.meta (key, value)
    VALUES ('id', md5(random()::text || clock_timestamp()::text)), ('version', '1')
    ON CONFLICT (key) DO NOTHING;
";

/// The grants `init` adds for each `--reader ROLE`.
pub const READER_SQL: &str = "\
GRANT USAGE ON SCHEMA {schema} TO {role};
GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role};
";

/// The grants `init` adds for each `--writer ROLE`.
pub const WRITER_SQL: &str = "\
GRANT USAGE ON SCHEMA {schema} TO {role};
GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA {schema} TO {role};
";

/// What `init` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitReport {
    /// The remote's id.
    pub id: String,
    /// The roles granted reading.
    pub readers: Vec<String>,
    /// The roles granted writing.
    pub writers: Vec<String>,
    /// The roles that did not exist and were created (as NOLOGIN group roles: a user gets
    /// one's privileges with `GRANT ROLE TO user`).
    pub created: Vec<String>,
}

/// Creates the remote's schema and tables where missing (safe to run again) and grants each
/// reader and writer role its privileges, in one transaction.
pub async fn init(
    session: &mut Session,
    readers: &[String],
    writers: &[String],
) -> Result<InitReport> {
    for role in readers.iter().chain(writers) {
        check_role(role)?;
    }
    let schema = session.remote.schema.clone();
    let name = session.remote.name.clone();
    let tx = session
        .client
        .transaction()
        .await
        .map_err(|e| Error::db(&name, "starting init", &e))?;
    let created = missing_roles(&tx, &name, readers.iter().chain(writers)).await?;
    let mut sql = INIT_SQL.replace("{schema}", &schema);
    for role in &created {
        sql.push_str(&format!("CREATE ROLE {} NOLOGIN;\n", quote(role)));
    }
    for role in readers {
        sql.push_str(
            &READER_SQL
                .replace("{schema}", &schema)
                .replace("{role}", &quote(role)),
        );
    }
    for role in writers {
        sql.push_str(
            &WRITER_SQL
                .replace("{schema}", &schema)
                .replace("{role}", &quote(role)),
        );
    }
    tx.batch_execute(&sql)
        .await
        .map_err(|e| Error::db(&name, "creating the schema", &e))?;
    tx.commit()
        .await
        .map_err(|e| Error::db(&name, "committing init", &e))?;
    session
        .require("SELECT", &["meta"], "init", "reader")
        .await?;
    let id = session.remote_id().await?;
    Ok(InitReport {
        id,
        readers: readers.to_vec(),
        writers: writers.to_vec(),
        created,
    })
}

/// The roles among `roles` that do not exist yet, each once, in order: init creates them
/// where the connected user may create roles (CREATEROLE or superuser), and otherwise stops
/// naming the first, before anything is written.
async fn missing_roles(
    tx: &tokio_postgres::Transaction<'_>,
    name: &str,
    roles: impl Iterator<Item = &String>,
) -> Result<Vec<String>> {
    let mut missing: Vec<String> = Vec::new();
    for role in roles {
        let exists = tx
            .query_opt("SELECT 1 FROM pg_roles WHERE rolname = $1", &[role])
            .await
            .map_err(|e| Error::db(name, "looking up a role", &e))?
            .is_some();
        if !exists && !missing.contains(role) {
            missing.push(role.clone());
        }
    }
    let Some(first) = missing.first() else {
        return Ok(missing);
    };
    let row = tx
        .query_one(
            "SELECT current_user::text, rolcreaterole OR rolsuper FROM pg_roles \
             WHERE rolname = current_user",
            &[],
        )
        .await
        .map_err(|e| Error::db(name, "reading the user's privileges", &e))?;
    let (user, may_create): (String, bool) = (row.get(0), row.get(1));
    if may_create {
        Ok(missing)
    } else {
        Err(Error::NoSuchRole {
            name: name.to_owned(),
            role: first.clone(),
            user,
        })
    }
}

fn check_role(role: &str) -> Result<()> {
    let ok = !role.is_empty()
        && role.len() <= 63
        && role
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::BadRole {
            role: role.to_owned(),
        })
    }
}

fn quote(ident: &str) -> String {
    format!("\"{ident}\"")
}
