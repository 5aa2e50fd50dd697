//! Remotes by name: `<store>/remotes.json`, and how a remote's URL and password are found.
//!
//! The file keeps each remote's URL and schema, written atomically. A password may come from
//! the URL itself, from `PGPASSWORD`, from `~/.pgpass` (or `PGPASSFILE`), or from
//! `MERKLE_REMOTE_<NAME>_URL`, which replaces the stored URL for one run (CI keeps the secret
//! there and out of the file). Nothing here ever prints a password: [`redact`] is what every
//! message and listing shows. The environment is read through a lookup function, so tests
//! never touch the process's.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The schema a remote uses when `remote add` names none.
pub const DEFAULT_SCHEMA: &str = "merkle";

/// The file, under the store's folder, that keeps the remotes.
pub const FILE_NAME: &str = "remotes.json";

/// One remote as the file keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// A `postgres://` or `postgresql://` URL (or libpq key=value string).
    pub url: String,
    /// The PostgreSQL schema holding merkle's tables.
    pub schema: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileBody {
    remotes: BTreeMap<String, Entry>,
}

/// A remote ready to connect to: its name, the URL in force (the file's or the environment's)
/// and its schema.
#[derive(Clone, PartialEq, Eq)]
pub struct Remote {
    /// The remote's name.
    pub name: String,
    /// The URL connected to; may hold a password, so print [`Remote::display_url`] instead.
    pub url: String,
    /// The schema holding merkle's tables.
    pub schema: String,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("name", &self.name)
            .field("url", &redact(&self.url))
            .field("schema", &self.schema)
            .finish()
    }
}

impl Remote {
    /// The URL with any password replaced by `***`.
    pub fn display_url(&self) -> String {
        redact(&self.url)
    }
}

/// The remotes of one store.
#[derive(Debug)]
pub struct Remotes {
    path: PathBuf,
    body: FileBody,
}

/// The environment variable that overrides remote `name`'s URL: `MERKLE_REMOTE_<NAME>_URL`,
/// the name upper-cased with `-` as `_`.
pub fn env_var(name: &str) -> String {
    format!(
        "MERKLE_REMOTE_{}_URL",
        name.to_ascii_uppercase().replace('-', "_")
    )
}

/// Checks a remote name: letters, digits, `_` and `-`, at most 64.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::BadName {
            name: name.to_owned(),
        })
    }
}

/// Checks a schema name: a plain lowercase SQL identifier, so it never needs quoting rules.
pub fn check_schema(schema: &str) -> Result<()> {
    let ok = !schema.is_empty()
        && schema.len() <= 63
        && !schema.as_bytes()[0].is_ascii_digit()
        && schema
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::BadSchema {
            schema: schema.to_owned(),
        })
    }
}

/// Checks that `url` is a connection string tokio-postgres accepts.
pub fn check_url(name: &str, url: &str) -> Result<()> {
    let bad = |reason: String| Error::BadUrl {
        name: name.to_owned(),
        url: redact(url),
        reason,
    };
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(bad("expected a postgres:// or postgresql:// URL".to_owned()));
    }
    tokio_postgres::Config::from_str(
        &url.replace("sslmode=verify-full", "sslmode=require")
            .replace("sslmode=verify-ca", "sslmode=require")
            .replace("sslmode=allow", "sslmode=prefer"),
    )
    .map(drop)
    .map_err(|e| bad(e.to_string()))
}

/// Where the user and password of a URL are: `scheme://USERINFO@...`, the user info running to
/// the first `@` after the scheme as tokio-postgres reads it (a password may hold `/` or `?`).
/// The range of the password within `url`, if the user info has one.
fn password_range(url: &str) -> Option<std::ops::Range<usize>> {
    let start = url.find("://")? + 3;
    let at = start + url[start..].find('@')?;
    let colon = start + url[start..at].find(':')?;
    Some(colon + 1..at)
}

/// Whether a query parameter's name is `password`, percent-encoded or not, in any case.
fn is_password_param(param: &str) -> bool {
    let name = param.split('=').next().unwrap_or_default();
    let mut decoded = Vec::with_capacity(name.len());
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                decoded.push(b);
                i += 3;
            }
            (b, _) => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    decoded.eq_ignore_ascii_case(b"password")
}

/// The position of the `?` that starts `url`'s query, if it has one.
fn query_start(url: &str) -> Option<usize> {
    let from = password_range(url).map_or_else(|| url.find("://").map_or(0, |s| s + 3), |r| r.end);
    url[from..].find('?').map(|q| from + q)
}

/// `url` without its password (`user:PASSWORD@` becomes `user@`; a `password=` parameter is
/// dropped), and whether it had one.
pub fn without_password(url: &str) -> (String, bool) {
    let mut had = false;
    let mut out = url.to_owned();
    if let Some(q) = query_start(&out) {
        let (base, query) = out.split_at(q);
        let kept: Vec<&str> = query[1..]
            .split('&')
            .filter(|p| {
                let secret = is_password_param(p);
                had |= secret;
                !secret && !p.is_empty()
            })
            .collect();
        out = if kept.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
    }
    if let Some(range) = password_range(&out) {
        out.replace_range(range.start - 1..range.end, "");
        had = true;
    }
    (out, had)
}

/// `url` with its password (`user:PASSWORD@`, or a `password=` parameter) replaced by `***`.
pub fn redact(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(q) = query_start(&out) {
        let (base, query) = out.split_at(q);
        let params: Vec<String> = query[1..]
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((name, _)) if is_password_param(p) => format!("{name}=***"),
                _ => p.to_owned(),
            })
            .collect();
        out = format!("{base}?{}", params.join("&"));
    }
    if let Some(range) = password_range(&out) {
        out.replace_range(range, "***");
    }
    out
}

impl Remotes {
    /// The remotes of the store in `store_dir` (none when the file does not exist).
    pub fn load(store_dir: &Path) -> Result<Remotes> {
        let path = store_dir.join(FILE_NAME);
        let body = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::Config {
                path: path.clone(),
                message: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => FileBody::default(),
            Err(source) => return Err(Error::Io { path, source }),
        };
        Ok(Remotes { path, body })
    }

    /// The remotes by name, in name order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.body.remotes.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Adds a remote after checking its name, URL and schema, and saves the file. A password
    /// in the URL is not kept (the file would hold it in clear): the URL is stored without it,
    /// and the result is true when one was left out, for the caller to say where it belongs.
    pub fn add(&mut self, name: &str, url: &str, schema: &str) -> Result<bool> {
        check_name(name)?;
        check_url(name, url)?;
        check_schema(schema)?;
        let (url, had_password) = without_password(url);
        let url = url.as_str();
        // What is kept must hold no password however the driver reads it.
        let still = tokio_postgres::Config::from_str(url)
            .ok()
            .is_some_and(|c| c.get_password().is_some());
        if still {
            return Err(Error::BadUrl {
                name: name.to_owned(),
                url: redact(url),
                reason: "it holds a password merkle cannot take out of it; give the URL without \
                         one, and the password in ~/.pgpass or PGPASSWORD"
                    .to_owned(),
            });
        }
        if self.body.remotes.contains_key(name) {
            return Err(Error::RemoteExists {
                name: name.to_owned(),
            });
        }
        self.body.remotes.insert(
            name.to_owned(),
            Entry {
                url: url.to_owned(),
                schema: schema.to_owned(),
            },
        );
        self.save()?;
        Ok(had_password)
    }

    /// Removes a remote and saves the file.
    pub fn remove(&mut self, name: &str) -> Result<()> {
        if self.body.remotes.remove(name).is_none() {
            return Err(self.unknown(name));
        }
        self.save()
    }

    /// The remote to use: `name`, or when none is given the only one configured (or `origin`
    /// among several). `env` looks up environment variables: `MERKLE_REMOTE_<NAME>_URL`
    /// replaces the stored URL, and defines a remote the file does not have.
    pub fn resolve(
        &self,
        name: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Remote> {
        let name = match name {
            Some(n) => n.to_owned(),
            None => self.default_name()?,
        };
        check_name(&name)?;
        let entry = self.body.remotes.get(&name);
        let url = match env(&env_var(&name)).filter(|u| !u.is_empty()) {
            Some(url) => url,
            None => match entry {
                Some(e) => e.url.clone(),
                None => return Err(self.unknown(&name)),
            },
        };
        check_url(&name, &url)?;
        Ok(Remote {
            schema: entry.map_or_else(|| DEFAULT_SCHEMA.to_owned(), |e| e.schema.clone()),
            name,
            url,
        })
    }

    fn default_name(&self) -> Result<String> {
        let names: Vec<&String> = self.body.remotes.keys().collect();
        match names.as_slice() {
            [] => Err(Error::NoRemotes),
            [one] => Ok((*one).clone()),
            _ if self.body.remotes.contains_key("origin") => Ok("origin".to_owned()),
            _ => Err(Error::WhichRemote {
                names: names
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    fn unknown(&self, name: &str) -> Error {
        let known = if self.body.remotes.is_empty() {
            String::new()
        } else {
            format!(
                " (configured: {})",
                self.body
                    .remotes
                    .keys()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        Error::UnknownRemote {
            name: name.to_owned(),
            known,
        }
    }

    /// Writes the file atomically (a temporary file, synced, renamed over it), readable by its
    /// owner only where the platform allows: a URL may hold a password.
    fn save(&self) -> Result<()> {
        let io = |source| Error::Io {
            path: self.path.clone(),
            source,
        };
        let mut json = serde_json::to_vec_pretty(&self.body).map_err(|e| Error::Config {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        json.push(b'\n');
        let tmp = self.path.with_extension("json.tmp");
        {
            use std::io::Write;
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create(true).truncate(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            let mut f = opts.open(&tmp).map_err(io)?;
            f.write_all(&json).map_err(io)?;
            f.sync_all().map_err(io)?;
        }
        std::fs::rename(&tmp, &self.path).map_err(io)
    }
}

/// The password for `config` from the sources libpq reads when the URL has none:
/// `PGPASSWORD`, then the password file (`PGPASSFILE`, else `~/.pgpass`), whose lines are
/// `host:port:database:user:password` with `*` matching anything and `\` escaping.
pub(crate) fn password_for(
    config: &tokio_postgres::Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if let Some(p) = env("PGPASSWORD").filter(|p| !p.is_empty()) {
        return Some(p);
    }
    let file = env("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".pgpass")))?;
    let text = std::fs::read_to_string(file).ok()?;
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user()?.to_owned();
    let db = config.get_dbname().unwrap_or(&user).to_owned();
    let want = [host.as_str(), port.as_str(), db.as_str(), user.as_str()];
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = split_pgpass(line);
            if fields.len() != 5 {
                return None;
            }
            let matches = fields[..4]
                .iter()
                .zip(want)
                .all(|(f, w)| f == "*" || f == w);
            matches.then(|| fields[4].clone())
        })
}

/// Splits a password-file line on unescaped `:`.
fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    fields.last_mut().expect("never empty").push(n);
                }
            }
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("never empty").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_hides_passwords_only() {
        let cases = [
            (
                "postgres://u:secret@h:5432/db",
                "postgres://u:***@h:5432/db",
            ),
            ("postgres://u@h/db", "postgres://u@h/db"),
            (
                "postgres://h/db?password=x&sslmode=require",
                "postgres://h/db?password=***&sslmode=require",
            ),
            ("postgresql://u:p%40ss@h/db", "postgresql://u:***@h/db"),
            ("postgres://u:ab/cd@h/db", "postgres://u:***@h/db"),
            (
                "postgres://h/db?pass%77ord=x",
                "postgres://h/db?pass%77ord=***",
            ),
        ];
        for (url, want) in cases {
            assert_eq!(redact(url), want, "{url}");
        }
    }

    #[test]
    fn a_password_is_taken_out_of_a_url_and_the_rest_kept() {
        let cases = [
            (
                "postgres://u:secret@h:5432/db",
                "postgres://u@h:5432/db",
                true,
            ),
            ("postgres://u@h/db", "postgres://u@h/db", false),
            (
                "postgres://h/db?password=x&sslmode=require",
                "postgres://h/db?sslmode=require",
                true,
            ),
            (
                "postgres://u:p%40ss@h/db?password=y",
                "postgres://u@h/db",
                true,
            ),
            (
                "postgres://h/db?sslmode=require",
                "postgres://h/db?sslmode=require",
                false,
            ),
            // As the driver reads them: a password with `/` in it, an encoded parameter name.
            ("postgres://u:ab/cd@h/db", "postgres://u@h/db", true),
            (
                "postgres://h/db?pass%77ord=x&sslmode=require",
                "postgres://h/db?sslmode=require",
                true,
            ),
        ];
        for (url, want, had) in cases {
            assert_eq!(without_password(url), (want.to_owned(), had), "{url}");
        }
    }

    #[test]
    fn a_password_comes_from_pgpassword_then_the_password_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:5432:*:alice:wrong\ndb.example.com:5432:team:alice:right\n",
        )
        .expect("write");
        let config = tokio_postgres::Config::from_str("postgres://alice@db.example.com/team")
            .expect("a URL");
        let file_env = |k: &str| (k == "PGPASSFILE").then(|| file.display().to_string());
        assert_eq!(password_for(&config, &file_env).as_deref(), Some("right"));
        let both = |k: &str| match k {
            "PGPASSWORD" => Some("from-env".to_owned()),
            k => file_env(k),
        };
        assert_eq!(password_for(&config, &both).as_deref(), Some("from-env"));
        let none = |_: &str| None;
        assert_eq!(password_for(&config, &none), None);
    }

    #[test]
    fn pgpass_lines_match_by_field() {
        assert_eq!(
            split_pgpass(r"h:5432:*:u:p\:w"),
            ["h", "5432", "*", "u", "p:w"]
        );
    }
}
