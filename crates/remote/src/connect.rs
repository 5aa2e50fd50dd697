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
/// password file (looked up through `env`). TLS follows the URL's `sslmode` as libpq reads it:
/// `disable`; `prefer` (the default: TLS when the server offers it) and `require` encrypt
/// without checking the server's certificate; `verify-ca` and `verify-full` require TLS and a
/// certificate valid for the host under the web's root authorities. The connection runs as a
/// task on the caller's tokio runtime.
pub async fn connect(remote: &Remote, env: &dyn Fn(&str) -> Option<String>) -> Result<Session> {
    let fail = |message: String| Error::Connect {
        name: remote.name.clone(),
        url: remote.display_url(),
        message,
    };
    let (url, verify) = split_verify(&remote.url);
    let mut pg = tokio_postgres::Config::from_str(&url).map_err(|e| fail(e.to_string()))?;
    if pg.get_password().is_none()
        && let Some(p) = config::password_for(&pg, env)
    {
        pg.password(p);
    }
    if pg.get_connect_timeout().is_none() {
        pg.connect_timeout(std::time::Duration::from_secs(10));
    }
    pg.application_name("merkle");
    let tls = tls_connector(verify).map_err(fail)?;
    let (client, connection) = pg
        .connect(tls)
        .await
        .map_err(|e| fail(connect_cause(&pg, &e)))?;
    tokio::spawn(async move {
        // The error, if any, surfaces on the client's next call.
        let _ = connection.await;
    });
    Ok(Session {
        client,
        remote: remote.clone(),
    })
}

/// Why a connection failed, in words a user can act on: refused (nothing listens), timed out,
/// the host unknown, authentication failed, or no password found; else the driver's message
/// with its causes.
fn connect_cause(pg: &tokio_postgres::Config, e: &tokio_postgres::Error) -> String {
    use tokio_postgres::error::SqlState;
    let at = match (pg.get_hosts().first(), pg.get_ports().first()) {
        (Some(tokio_postgres::config::Host::Tcp(h)), port) => {
            format!("{h}:{}", port.copied().unwrap_or(5432))
        }
        _ => "the server".to_owned(),
    };
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        return if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            format!(
                "authentication failed: {} (the password comes from PGPASSWORD, ~/.pgpass or \
                 the URL in MERKLE_REMOTE_<NAME>_URL)",
                db.message()
            )
        } else {
            db.message().to_owned()
        };
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind;
            return match io.kind() {
                ErrorKind::ConnectionRefused => {
                    format!("connection refused: nothing listens at {at} (is PostgreSQL running?)")
                }
                ErrorKind::TimedOut => {
                    let secs = pg.get_connect_timeout().map_or(0, |d| d.as_secs());
                    format!("timed out after {secs}s waiting for {at}")
                }
                _ if io.to_string().contains("lookup") => {
                    format!("the host of {at} was not found ({io})")
                }
                _ => format!("{io} ({at})"),
            };
        }
        source = s.source();
    }
    let text = e.to_string();
    if text.contains("password missing") {
        return "authentication needs a password: put it in PGPASSWORD, ~/.pgpass or \
                MERKLE_REMOTE_<NAME>_URL"
            .to_owned();
    }
    let mut chain = text;
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        chain.push_str(&format!(": {s}"));
        source = s.source();
    }
    chain
}

/// The URL tokio-postgres is given (which knows only `disable`, `prefer` and `require`), and
/// whether the certificate must be verified (`sslmode=verify-ca` or `verify-full`).
fn split_verify(url: &str) -> (String, bool) {
    for mode in ["sslmode=verify-full", "sslmode=verify-ca"] {
        if url.contains(mode) {
            return (url.replace(mode, "sslmode=require"), true);
        }
    }
    (url.replace("sslmode=allow", "sslmode=prefer"), false)
}

fn tls_connector(
    verify: bool,
) -> std::result::Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let config = if verify {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        builder.with_root_certificates(roots).with_no_client_auth()
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(EncryptOnly(provider)))
            .with_no_client_auth()
    };
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// libpq's `prefer` and `require`: the channel is encrypted and the handshake's signatures
/// checked, but the certificate is not checked against any authority (so a database with
/// Debian's default self-signed certificate works, as with psql). What a pull stores is
/// checked by its ids either way; `verify-full` is for keeping the data private.
#[derive(Debug)]
struct EncryptOnly(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> std::result::Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

impl Session {
    /// The remote this session is connected to.
    pub fn remote(&self) -> &Remote {
        &self.remote
    }

    /// A read-only, repeatable-read transaction: one consistent snapshot of the remote while
    /// pushers write (what a pull and a check read in). `context` names it in an error.
    pub(crate) async fn snapshot(
        &mut self,
        context: &'static str,
    ) -> Result<tokio_postgres::Transaction<'_>> {
        let name = self.remote.name.clone();
        self.client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(|e| Error::db(&name, context, &e))
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

    /// Checks, in one round trip, that the schema exists (else a pointer to `remote init`) and
    /// that the session's role holds `privilege` on each of `tables`, so a command is refused
    /// up front, naming what is missing, rather than part-way through.
    pub(crate) async fn require(
        &self,
        privilege: &'static str,
        tables: &[&'static str],
        action: &'static str,
        grant: &'static str,
    ) -> Result<()> {
        let qualified: Vec<String> = tables.iter().map(|t| self.table(t)).collect();
        let row = self
            .client
            .query_one(
                "SELECT to_regclass($1) IS NOT NULL, current_user::text, \
                 ARRAY(SELECT t FROM unnest($2::text[]) AS t \
                       WHERE NOT coalesce(has_table_privilege(to_regclass(t), $3), false))",
                &[&self.table("meta"), &qualified, &privilege],
            )
            .await
            .map_err(self.db_err("checking the schema and privileges"))?;
        let (initialised, role, lacking): (bool, String, Vec<String>) =
            (row.get(0), row.get(1), row.get(2));
        if !initialised {
            return Err(Error::NotInitialized {
                name: self.remote.name.clone(),
                schema: self.remote.schema.clone(),
            });
        }
        match lacking.into_iter().next() {
            None => Ok(()),
            Some(table) => Err(Error::Permission {
                name: self.remote.name.clone(),
                role,
                privilege,
                table,
                action,
                grant,
            }),
        }
    }

    /// The remote's id (made by `remote init`): what a push's mark in the store is kept under,
    /// so a remote created again from scratch is never taken for the one pushed to before.
    /// Call after [`Session::require`].
    pub(crate) async fn remote_id(&self) -> Result<String> {
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
}
