//! The remote crate's one error type: every variant names the remote, the input or the row at
//! fault, and none ever carries a password.
use std::path::PathBuf;

/// Errors from configuring, reaching, pushing to and pulling from a remote.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("invalid remote name {name:?}: use letters, digits, '_' and '-' (at most 64)")]
    BadName { name: String },
    #[error(
        "invalid schema name {schema:?}: use lowercase letters, digits and '_', not starting with a digit (at most 63)"
    )]
    BadSchema { schema: String },
    #[error("invalid role name {role:?}: use letters, digits, '_' and '-' (at most 63)")]
    BadRole { role: String },
    #[error("invalid URL for remote {name:?} ({url}): {reason}")]
    BadUrl {
        name: String,
        /// The URL with its password replaced by `***`.
        url: String,
        reason: String,
    },
    #[error(
        "no remote named {name:?}: add it with `merkle remote add {name} postgres://...`{known}"
    )]
    UnknownRemote { name: String, known: String },
    #[error("remote {name:?} already exists (remove it first with `merkle remote remove {name}`)")]
    RemoteExists { name: String },
    #[error("no remote is configured: add one with `merkle remote add NAME postgres://...`")]
    NoRemotes,
    #[error("several remotes are configured ({names}): name the one to use")]
    WhichRemote { names: String },
    #[error("{path}: {message}")]
    Config { path: PathBuf, message: String },
    #[error("io error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot connect to remote {name:?} at {url}: {message}")]
    Connect {
        name: String,
        url: String,
        message: String,
    },
    #[error(
        "remote {name:?} has no merkle schema {schema:?}: create it with `merkle remote init {name}`"
    )]
    NotInitialized { name: String, schema: String },
    #[error(
        "remote {name:?}: role {role:?} lacks {privilege} on {table}: {action} needs it (grant it with `merkle remote init {name} --{grant} {role}`, run by the schema's owner)"
    )]
    Permission {
        name: String,
        role: String,
        privilege: &'static str,
        /// Qualified by the schema.
        table: String,
        action: &'static str,
        grant: &'static str,
    },
    #[error(
        "remote {name:?}: role {role:?} does not exist, and {user:?} may not create roles: create it first (`CREATE ROLE {role} NOLOGIN`, then `GRANT {role} TO` each user), or run init as a user with CREATEROLE"
    )]
    NoSuchRole {
        name: String,
        role: String,
        user: String,
    },
    #[error("remote {name:?}: {context}: {message}")]
    Database {
        name: String,
        context: &'static str,
        message: String,
    },
    #[error("remote {name:?}: refused {item}: {reason}; nothing was stored")]
    Tampered {
        name: String,
        item: String,
        reason: String,
    },
    #[error(transparent)]
    Store(#[from] merkle_store::Error),
}

/// The remote crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// What kind of failure it is, as front ends name it: `connection`, `refused` (a row
    /// failed a check), `permission`, `not_initialized`, `remote` (any other database
    /// failure), the store's kind for a local store error, else `config`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Connect { .. } => "connection",
            Error::Tampered { .. } => "refused",
            Error::Permission { .. } | Error::NoSuchRole { .. } => "permission",
            Error::NotInitialized { .. } => "not_initialized",
            Error::Database { .. } => "remote",
            Error::Store(s) => s.kind(),
            _ => "config",
        }
    }

    /// A database error from `context` on remote `name`, with PostgreSQL's message and detail.
    pub(crate) fn db(name: &str, context: &'static str, e: &tokio_postgres::Error) -> Error {
        let message = match e.as_db_error() {
            Some(db) => match db.detail() {
                Some(d) => format!("{} ({d})", db.message()),
                None => db.message().to_owned(),
            },
            None => e.to_string(),
        };
        Error::Database {
            name: name.to_owned(),
            context,
            message,
        }
    }

    /// [`Error::db`] as a function for `map_err`, where a transaction holds the session and
    /// its own (`Session::db_err`) cannot be borrowed.
    pub(crate) fn db_fn<'a>(
        name: &'a str,
        context: &'static str,
    ) -> impl Fn(tokio_postgres::Error) -> Error + 'a {
        move |e| Error::db(name, context, &e)
    }
}
