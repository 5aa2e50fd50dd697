//! Durable JSON and JSON Lines files: rewrites that are atomic, appends that are on disk when
//! they return, and recovery that never drops data without saying so.
//!
//! The conversation store is built on five operations: [`read_json`], [`write_json`],
//! [`append_jsonl`], [`read_all_jsonl`] and [`write_jsonl`] (plus [`append_jsonl_all`], one
//! durable write for many entries). Rewrites go to a temporary file in the same folder, which
//! is synced, renamed over the target and followed by a sync of the folder, so a crash leaves
//! either the old file or the new one. An append is one `write` of a whole line followed by
//! `fdatasync`; a crash during it can leave only a *torn tail*: a last line without its
//! newline, which was never acknowledged.
//!
//! Damage is handled by kind:
//! - a torn tail is skipped by readers and cut off before the next append, and both report it;
//! - a corrupt line before the end (which no crash of ours produces: a bad disk, a bad edit) is
//!   an error for readers. [`recover_jsonl`] copies the whole file to a `.corrupt` file next to
//!   it, keeps the good lines before the damage, and reports what it did; nothing is dropped
//!   without a copy and a report.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// Reads and parses a whole JSON file.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = read(path)?;
    serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt {
        path: path.to_owned(),
        line: e.line(),
        reason: reason(&e),
    })
}

/// Replaces `path` with `value` as pretty JSON, atomically and durably.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| encode_error(path, &e))?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Appends `entry` as one line, creating the file if needed; the line is on disk when this
/// returns. A torn tail left by an earlier crash is cut off first and returned.
pub fn append_jsonl<T: Serialize>(path: &Path, entry: &T) -> Result<Option<TornTail>> {
    append_jsonl_all(path, std::slice::from_ref(entry))
}

/// Appends `entries`, one line each, with one write and one sync; see [`append_jsonl`]. A
/// crash can leave a prefix of the lines and a torn tail, never a damaged line in the middle.
pub fn append_jsonl_all<T: Serialize>(path: &Path, entries: &[T]) -> Result<Option<TornTail>> {
    let lines = encode_lines(path, entries)?;
    let io = |e| Error::io(path, e);
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let torn = if len > 0 {
        cut_torn_tail(&mut file, path, len)?
    } else {
        None
    };
    if !lines.is_empty() {
        file.write_all(&lines).map_err(io)?;
        file.sync_data().map_err(io)?;
    }
    if len == 0 {
        // The file may be new: its name must be on disk too.
        sync_dir(path)?;
    }
    Ok(torn)
}

/// Reads every entry of a JSON Lines file. A torn tail is skipped and reported, the file left
/// as it is; a corrupt line before it is an [`Error::Corrupt`] naming the line. Blank lines
/// carry nothing and are skipped.
pub fn read_all_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Jsonl<T>> {
    let bytes = read(path)?;
    let parsed = parse_lines(&bytes);
    if let Some(corrupt) = parsed.corrupt {
        return Err(Error::Corrupt {
            path: path.to_owned(),
            line: corrupt.line,
            reason: corrupt.reason,
        });
    }
    Ok(Jsonl {
        entries: parsed.entries,
        damage: parsed
            .torn_at
            .map(|offset| Damage::TornTail(TornTail::new(path, offset, bytes.len()))),
    })
}

/// Replaces `path` with `entries`, one line each, atomically and durably.
pub fn write_jsonl<T: Serialize>(path: &Path, entries: &[T]) -> Result<()> {
    write_atomic(path, &encode_lines(path, entries)?)
}

/// Reads every entry of a JSON Lines file, repairing what it must: a torn tail is cut off; a
/// corrupt line quarantines the file (a full copy at `<path>.corrupt`, or `.corrupt.2` and so
/// on if that exists) and rewrites it with only the good lines before the damage. What was
/// done is in [`Jsonl::damage`] for the caller to tell the user.
pub fn recover_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Jsonl<T>> {
    let bytes = read(path)?;
    let parsed = parse_lines(&bytes);
    let damage = if let Some(corrupt) = parsed.corrupt {
        // The copy is durable before the original loses anything.
        let copy = write_quarantine_copy(path, &bytes)?;
        write_atomic(path, &bytes[..parsed.good_len])?;
        let dropped_lines = bytes[parsed.good_len..]
            .split(|b| *b == b'\n')
            .filter(|line| !line.trim_ascii().is_empty())
            .count();
        Some(Damage::Quarantined(Quarantine {
            path: path.to_owned(),
            copy,
            line: corrupt.line,
            reason: corrupt.reason,
            kept: parsed.entries.len(),
            dropped_lines,
        }))
    } else if let Some(offset) = parsed.torn_at {
        let io = |e| Error::io(path, e);
        let file = OpenOptions::new().write(true).open(path).map_err(io)?;
        file.set_len(offset as u64).map_err(io)?;
        file.sync_data().map_err(io)?;
        Some(Damage::TornTail(TornTail::new(path, offset, bytes.len())))
    } else {
        None
    };
    Ok(Jsonl {
        entries: parsed.entries,
        damage,
    })
}

/// The entries of a JSON Lines file and the damage found (and, by [`recover_jsonl`] or an
/// append, repaired) on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Jsonl<T> {
    pub entries: Vec<T>,
    pub damage: Option<Damage>,
}

/// Damage to a JSON Lines file, described for the person who owns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    TornTail(TornTail),
    Quarantined(Quarantine),
}

/// A last line without its newline: a write that a crash interrupted, never acknowledged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    pub path: PathBuf,
    /// Where the torn line starts: the length of the file's intact part.
    pub offset: u64,
    /// Length of the torn line.
    pub bytes: u64,
}

impl TornTail {
    fn new(path: &Path, offset: usize, len: usize) -> Self {
        Self {
            path: path.to_owned(),
            offset: offset as u64,
            bytes: (len - offset) as u64,
        }
    }
}

/// A file set aside because a line before its end was corrupt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quarantine {
    pub path: PathBuf,
    /// The full copy of the damaged file.
    pub copy: PathBuf,
    /// The first corrupt line, counted from 1.
    pub line: usize,
    pub reason: String,
    /// Entries kept in `path`: the good ones before the damage.
    pub kept: usize,
    /// Non-blank lines from the corrupt one on, which are now only in `copy`.
    pub dropped_lines: usize,
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Damage::TornTail(torn) => write!(
                f,
                "{} ended in a partly written line ({} bytes at offset {}), left by an \
                 interrupted write; it was never acknowledged and is cut off",
                torn.path.display(),
                torn.bytes,
                torn.offset
            ),
            Damage::Quarantined(q) => write!(
                f,
                "{} is corrupt at line {} ({}); the whole file was copied to {} and only the \
                 {} entries before that line were kept ({} later lines are only in the copy)",
                q.path.display(),
                q.line,
                q.reason,
                q.copy.display(),
                q.kept,
                q.dropped_lines
            ),
        }
    }
}

/// The result of parsing a JSON Lines buffer up to its first problem.
struct Parsed<T> {
    entries: Vec<T>,
    /// Bytes through the last good line, newline included.
    good_len: usize,
    /// Offset of an unterminated last line, if the parse reached one.
    torn_at: Option<usize>,
    corrupt: Option<CorruptLine>,
}

struct CorruptLine {
    line: usize,
    reason: String,
}

fn parse_lines<T: DeserializeOwned>(bytes: &[u8]) -> Parsed<T> {
    let mut parsed = Parsed {
        entries: Vec::new(),
        good_len: 0,
        torn_at: None,
        corrupt: None,
    };
    // Checking UTF-8 once for the whole buffer lets lines be found with `str`'s memchr and
    // parsed as `str`, which spares serde_json checking every string again. A file is valid
    // UTF-8 up to some point (its end, unless a torn tail cut a character or a disk went
    // bad); lines past that point are found and parsed as bytes.
    let valid = match std::str::from_utf8(bytes) {
        Ok(valid) => valid,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).expect("valid up to there"),
    };
    let mut start = 0;
    let mut line = 0;
    while start < bytes.len() {
        line += 1;
        // `start` follows a newline, so it is a character boundary of `valid`.
        let found = valid.get(start..).and_then(|rest| rest.find('\n'));
        let Some(len) = found.or_else(|| bytes[start..].iter().position(|b| *b == b'\n')) else {
            parsed.torn_at = Some(start);
            break;
        };
        let text = &bytes[start..start + len];
        if !text.trim_ascii().is_empty() {
            let entry = match valid.get(start..start + len) {
                Some(text) => serde_json::from_str(text),
                None => serde_json::from_slice(text),
            };
            match entry {
                Ok(entry) => parsed.entries.push(entry),
                Err(e) => {
                    parsed.corrupt = Some(CorruptLine {
                        line,
                        reason: reason(&e),
                    });
                    break;
                }
            }
        }
        start += len + 1;
        parsed.good_len = start;
    }
    parsed
}

/// serde_json's message without its position, which for one line of many would mislead.
fn reason(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let message = match message.rfind(" at line ") {
        Some(at) => &message[..at],
        None => &message,
    };
    format!("{message} (column {})", e.column())
}

fn encode_error(path: &Path, e: &serde_json::Error) -> Error {
    Error::Encode {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

fn encode_lines<T: Serialize>(path: &Path, entries: &[T]) -> Result<Vec<u8>> {
    let mut lines = Vec::new();
    for entry in entries {
        // Compact JSON escapes every newline inside strings, so an entry is exactly one line.
        serde_json::to_writer(&mut lines, entry).map_err(|e| encode_error(path, &e))?;
        lines.push(b'\n');
    }
    Ok(lines)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Error::NotFound {
            path: path.to_owned(),
        },
        _ => Error::io(path, e),
    })
}

/// If the file does not end in a newline, truncates it after its last one.
fn cut_torn_tail(file: &mut File, path: &Path, len: u64) -> Result<Option<TornTail>> {
    const CHUNK: u64 = 64 * 1024;
    let io = |e| Error::io(path, e);
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1)).map_err(io)?;
    file.read_exact(&mut last).map_err(io)?;
    if last[0] == b'\n' {
        return Ok(None);
    }
    let mut end = len;
    let mut keep = 0;
    let mut buffer = Vec::new();
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        buffer.resize((end - start) as usize, 0);
        file.seek(SeekFrom::Start(start)).map_err(io)?;
        file.read_exact(&mut buffer).map_err(io)?;
        if let Some(newline) = buffer.iter().rposition(|b| *b == b'\n') {
            keep = start + newline as u64 + 1;
            break;
        }
        end = start;
    }
    file.set_len(keep).map_err(io)?;
    file.sync_data().map_err(io)?;
    Ok(Some(TornTail {
        path: path.to_owned(),
        offset: keep,
        bytes: len - keep,
    }))
}

/// Distinguishes temporary files of concurrent writers within one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to a temporary file beside `path`, syncs it, renames it over `path` and
/// syncs the folder.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let Some(name) = path.file_name() else {
        return Err(Error::io(
            path,
            io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"),
        ));
    };
    let temp = path.with_file_name(format!(
        ".{}.tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let write_then_rename = |temp: &Path| -> io::Result<()> {
        let mut file = OpenOptions::new().write(true).create_new(true).open(temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(temp, path)
    };
    if let Err(e) = write_then_rename(&temp) {
        // Best effort: the error that matters is the write's.
        let _ = fs::remove_file(&temp);
        return Err(Error::io(path, e));
    }
    sync_dir(path)
}

/// Writes the quarantine copy under a name no earlier quarantine holds.
fn write_quarantine_copy(path: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let base = path.as_os_str().to_owned();
    const MAX_COPIES: u32 = 1000;
    for n in 1..=MAX_COPIES {
        let mut name = base.clone();
        name.push(if n == 1 {
            ".corrupt".to_owned()
        } else {
            format!(".corrupt.{n}")
        });
        let copy = PathBuf::from(name);
        let mut file = match OpenOptions::new().write(true).create_new(true).open(&copy) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(&copy, e)),
        };
        let io = |e| Error::io(&copy, e);
        file.write_all(bytes).map_err(io)?;
        file.sync_all().map_err(io)?;
        sync_dir(&copy)?;
        return Ok(copy);
    }
    Err(Error::io(
        path,
        io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{MAX_COPIES} quarantine copies exist already; remove old ones"),
        ),
    ))
}

/// Syncs the folder holding `path`, so that a created or renamed name survives a crash.
fn sync_dir(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_drops_the_position_serde_adds() {
        let e =
            serde_json::from_str::<serde_json::Value>("{\"a\": tru}").expect_err("invalid json");
        assert_eq!(reason(&e), "expected ident (column 10)");
    }
}
