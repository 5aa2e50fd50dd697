//! Reaching a remote: the connection (rustls when the server offers TLS), its password, and
//! the checks every command makes before it reads or writes (the schema exists; the role may
//! do what the command does).
use std::str::FromStr;
use std::sync::Arc;

use tokio_postgres::Client;

use crate::config::{self, Remote};
use crate::error::{Error, Result};

/// An open connection to a remote's schema.
pub struct Session {
    pub(crate) client: Client,
    pub(crate) remote: Remote,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("remote", &self.remote)
            .finish()
    }
}

/// Connects to `remote`. A password missing from the URL comes from `PGPASSWORD` or the
/// password file (looked up through `env`). TLS follows the URL's `sslmode` (default
/// `prefer`: TLS when the server offers it, verified against the web's root certificates).
/// The connection runs as a task on the caller's tokio runtime.
pub async fn connect(remote: &Remote, env: &dyn Fn(&str) -> Option<String>) -> Result<Session> {
    let fail = |message: String| Error::Connect {
        name: remote.name.clone(),
        url: remote.display_url(),
        message,
    };
    let mut pg = tokio_postgres::Config::from_str(&remote.url).map_err(|e| fail(e.to_string()))?;
    if pg.get_password().is_none() {
        if let Some(p) = config::password_for(&pg, env) {
            pg.password(p);
        }
    }
    if pg.get_connect_timeout().is_none() {
        pg.connect_timeout(std::time::Duration::from_secs(10));
    }
    pg.application_name("merkle");
    let tls = tls_connector().map_err(fail)?;
    let (client, connection) = pg.connect(tls).await.map_err(|e| {
        fail(match e.as_db_error() {
            Some(db) => db.message().to_owned(),
            None => e.to_string(),
        })
    })?;
    tokio::spawn(async move {
        // The error, if any, surfaces on the client's next call.
        let _ = connection.await;
    });
    Ok(Session {
        client,
        remote: remote.clone(),
    })
}

fn tls_connector() -> std::result::Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

impl Session {
    /// The remote this session is connected to.
    pub fn remote(&self) -> &Remote {
        &self.remote
    }

    /// `table` qualified by the remote's schema (checked at configuration to need no quoting).
    pub(crate) fn table(&self, table: &str) -> String {
        format!("{}.{table}", self.remote.schema)
    }

    pub(crate) fn db_err(
        &self,
        context: &'static str,
    ) -> impl Fn(tokio_postgres::Error) -> Error + '_ {
        move |e| Error::db(&self.remote.name, context, &e)
    }

    /// The remote's id (made by `remote init`): what a push's mark in the store is kept under,
    /// so a remote created again from scratch is never taken for the one pushed to before.
    /// Fails with a pointer to `remote init` when the schema is not there.
    pub(crate) async fn remote_id(&self) -> Result<String> {
        let exists: bool = self
            .client
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&self.table("meta")])
            .await
            .map_err(self.db_err("checking the schema"))?
            .get(0);
        if !exists {
            return Err(Error::NotInitialized {
                name: self.remote.name.clone(),
                schema: self.remote.schema.clone(),
            });
        }
        let row = self
            .client
            .query_opt(
                &format!("SELECT value FROM {} WHERE key = 'id'", self.table("meta")),
                &[],
            )
            .await
            .map_err(self.db_err("reading the remote's id"))?;
        row.map(|r| r.get(0)).ok_or_else(|| Error::NotInitialized {
            name: self.remote.name.clone(),
            schema: self.remote.schema.clone(),
        })
    }

    /// Checks that the session's role holds `privilege` on each of `tables`, so a command is
    /// refused up front, naming what is missing, rather than part-way through.
    pub(crate) async fn require(
        &self,
        privilege: &'static str,
        tables: &[&'static str],
        action: &'static str,
        grant: &'static str,
    ) -> Result<()> {
        for table in tables {
            let row = self
                .client
                .query_one(
                    "SELECT current_user::text, has_table_privilege($1, $2)",
                    &[&self.table(table), &privilege],
                )
                .await
                .map_err(self.db_err("checking privileges"))?;
            let (role, ok): (String, bool) = (row.get(0), row.get(1));
            if !ok {
                return Err(Error::Permission {
                    name: self.remote.name.clone(),
                    role,
                    privilege,
                    schema: self.remote.schema.clone(),
                    table,
                    action,
                    grant,
                });
            }
        }
        Ok(())
    }
}
