//! The audit log: every governance decision, appended as one JSON line, each hash-chained to the
//! one before, so an edited, reordered or truncated log is detected by [`verify`].
//!
//! A call that runs has two records, one with outcome `started` written before it runs and one
//! with what became of it after; a call that does not run (blocked, declined, stopped) has one.
//!
//! A record is `{seq, time, conversation, agent, role, intent, tool, args_hash, decision, rule,
//! outcome, prev_hash, hash}`: `seq` counts from 1, `time` is milliseconds since the Unix epoch
//! (UTC) from an injected [`Clock`], `args_hash` is [`crate::args_hash`] of the call's arguments
//! (the arguments themselves are not logged: they may hold file contents or secrets), and
//!
//! ```text
//! hash = blake3(prev_hash as 64 hex digits ++ canonical JSON of the record without `hash`)
//! ```
//!
//! with `prev_hash` of the first record 64 zeros and canonical JSON as in [`crate::canonical_json`].
//! Anyone can check a log with `b3sum` and a JSON tool.
//!
//! **Durability.** An append writes the whole line in one `write` and syncs it before it returns.
//! A crash can still cut the last line off; that torn line is reported (by [`verify`] and by the
//! next append, which refuses to chain onto it), never silently taken as a record or dropped.
//! Appends take an exclusive lock on the log for the duration, so two processes appending to
//! one workspace's log interleave whole records and keep one chain.
//!
//! **The head file.** A chain alone cannot show that records were cut off the end: a prefix of a
//! valid chain is a valid chain. So after every append the log's last `seq` and `hash` are
//! written to a head file beside it ([`head_path`]: `audit.jsonl` -> `audit.head`), atomically
//! (write, sync, rename). [`verify`] fails when the log ends before the record the head names, or
//! when the head names a record the log does not hold; a missing head beside a non-empty log is
//! a failure too. A crash between the log's sync and the head's rename leaves the head one record
//! behind; that is accepted (and reported) because the record is durable and chains.
//!
//! What this does not do: anyone who can write the files can rewrite the whole chain and its head
//! consistently; nothing here is secret. Anchoring the head elsewhere (a commit, a frame, a
//! remote log) is what detects that.
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use merkle_hash::Role;
use serde::{Deserialize, Serialize};

use crate::canonical::canonical_json;
use crate::decision::DecisionKind;
use crate::error::{Error, Result};
use crate::intent::Intent;

/// The `prev_hash` of the first record.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Where the time of a record comes from.
pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch, UTC.
    fn now_ms(&self) -> u64;
}

/// The system's clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// A clock for tests and recordings: it reads `start`, then `step` ms later at every reading.
#[derive(Debug)]
pub struct ManualClock {
    next: AtomicU64,
    step: u64,
}

impl ManualClock {
    pub fn new(start_ms: u64, step_ms: u64) -> ManualClock {
        ManualClock {
            next: AtomicU64::new(start_ms),
            step: step_ms,
        }
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.next.fetch_add(self.step, Ordering::Relaxed)
    }
}

/// What happened to a call after the decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It ran and succeeded.
    Ok,
    /// It ran and returned an error.
    Error,
    /// Governance denied it; it did not run.
    Blocked,
    /// The user answered no to an ask; it did not run.
    Declined,
    /// The loop governor ended the request instead; it did not run.
    Stopped,
    /// Allowed and about to run: written before the call runs, so that a call which never
    /// returns (it killed the process, or the machine went down) is still on record. The
    /// record of what became of it follows; a started call with none after it was cut off
    /// ([`unfinished`]).
    Started,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Blocked => "blocked",
            Outcome::Declined => "declined",
            Outcome::Stopped => "stopped",
            Outcome::Started => "started",
        }
    }
}

/// The `seq` of every `started` record that no later `ok` or `error` record of the same
/// conversation, tool and arguments completes: calls that were cut off while they ran. A
/// conversation runs its calls one at a time, so an outcome completes the latest such call
/// started before it; a later refusal of the same call (blocked, declined, stopped) did not
/// run and completes nothing.
pub fn unfinished(records: &[Record]) -> Vec<u64> {
    let mut open: Vec<&Record> = Vec::new();
    for r in records {
        if r.outcome == Outcome::Started {
            open.push(r);
        } else if !matches!(r.outcome, Outcome::Ok | Outcome::Error) {
            continue;
        } else if let Some(i) = open.iter().rposition(|s| {
            s.conversation == r.conversation && s.tool == r.tool && s.args_hash == r.args_hash
        }) {
            open.remove(i);
        }
    }
    open.iter().map(|r| r.seq).collect()
}

/// What the caller records: a decision and its outcome. [`AuditLog::append`] adds the sequence
/// number, the time and the chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub conversation: String,
    pub agent: String,
    pub role: Role,
    /// The intent selected when the call was decided (after it, for a selection).
    pub intent: Option<Intent>,
    pub tool: String,
    /// [`crate::args_hash`] of the call's arguments.
    pub args_hash: String,
    pub decision: DecisionKind,
    pub rule: String,
    pub outcome: Outcome,
}

/// One line of the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub seq: u64,
    /// Milliseconds since the Unix epoch, UTC.
    pub time: u64,
    pub conversation: String,
    pub agent: String,
    pub role: String,
    pub intent: Option<Intent>,
    pub tool: String,
    pub args_hash: String,
    pub decision: DecisionKind,
    pub rule: String,
    pub outcome: Outcome,
    pub prev_hash: String,
    pub hash: String,
}

impl Record {
    /// The hash the record should carry: over `prev_hash` and the record without `hash`.
    pub fn compute_hash(&self) -> String {
        let mut value = serde_json::to_value(self).expect("a record always serializes");
        if let Some(map) = value.as_object_mut() {
            map.remove("hash");
        }
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.prev_hash.as_bytes());
        hasher.update(canonical_json(&value).as_bytes());
        hasher.finalize().to_hex().to_string()
    }
}

/// The head file's content: the last record's `seq` and `hash`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Head {
    pub seq: u64,
    pub hash: String,
}

/// The head file of the log at `log`: the same name with the extension `head`.
pub fn head_path(log: &Path) -> PathBuf {
    log.with_extension("head")
}

/// An open audit log, appended to record by record.
pub struct AuditLog {
    path: PathBuf,
    head: PathBuf,
    file: File,
    clock: Box<dyn Clock>,
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .finish()
    }
}

/// Holds an exclusive lock on the log file until dropped.
struct Locked<'a>(&'a File);

impl<'a> Locked<'a> {
    fn new(file: &'a File, path: &Path) -> Result<Locked<'a>> {
        file.lock().map_err(|source| Error::Io {
            action: "locking audit log",
            path: path.display().to_string(),
            source,
        })?;
        Ok(Locked(file))
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        // Closing the file would release the lock too; an error here leaves nothing to undo.
        let _ = self.0.unlock();
    }
}

impl AuditLog {
    /// Opens (creating it and its folder when missing) the log at `path`. Fails when the log
    /// ends with a torn record or disagrees with its head file: appending would hide either.
    pub fn open(path: &Path, clock: Box<dyn Clock>) -> Result<AuditLog> {
        let io = |action: &'static str| {
            move |source| Error::Io {
                action,
                path: path.display().to_string(),
                source,
            }
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io("creating the folder of audit log"))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io("opening audit log"))?;
        let log = AuditLog {
            path: path.to_path_buf(),
            head: head_path(path),
            file,
            clock,
        };
        {
            let _lock = Locked::new(&log.file, &log.path)?;
            log.tail()?;
        }
        Ok(log)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry` as the next record, durably: the record is synced to disk, and the head
    /// file updated, before this returns. Takes `&self`: appends from several threads (or
    /// processes) serialize on the file lock.
    pub fn append(&self, entry: &Entry) -> Result<Record> {
        let _lock = Locked::new(&self.file, &self.path)?;
        let (seq, prev_hash) = self.tail()?;
        let mut record = Record {
            seq: seq + 1,
            time: self.clock.now_ms(),
            conversation: entry.conversation.clone(),
            agent: entry.agent.clone(),
            role: entry.role.as_str().to_owned(),
            intent: entry.intent,
            tool: entry.tool.clone(),
            args_hash: entry.args_hash.clone(),
            decision: entry.decision,
            rule: entry.rule.clone(),
            outcome: entry.outcome,
            prev_hash,
            hash: String::new(),
        };
        record.hash = record.compute_hash();
        let mut line = serde_json::to_string(&record).expect("a record always serializes");
        line.push('\n');
        let path = &self.path;
        let io = |action: &'static str| {
            move |source| Error::Io {
                action,
                path: path.display().to_string(),
                source,
            }
        };
        (&self.file)
            .write_all(line.as_bytes())
            .map_err(io("appending to audit log"))?;
        self.file.sync_data().map_err(io("syncing audit log"))?;
        write_head(
            &self.head,
            &Head {
                seq: record.seq,
                hash: record.hash.clone(),
            },
        )?;
        Ok(record)
    }

    /// The last record's `seq` and `hash` (0 and the genesis hash for an empty log), checked
    /// against the head file. Called under the lock.
    fn tail(&self) -> Result<(u64, String)> {
        let path = self.path.display().to_string();
        let line = match last_line(&self.file).map_err(|source| Error::Io {
            action: "reading audit log",
            path: path.clone(),
            source,
        })? {
            LastLine::Empty => None,
            LastLine::Torn => return Err(Error::TornTail { path }),
            LastLine::Line(line) => Some(line),
        };
        let last = match line {
            None => None,
            Some(line) => {
                let record: Record = serde_json::from_slice(&line).map_err(|e| Error::BadTail {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                Some(record)
            }
        };
        let head = read_head(&self.head)?;
        let mismatch = |message: String| Error::HeadMismatch {
            path: path.clone(),
            head: self.head.display().to_string(),
            message,
        };
        match (&last, &head) {
            (None, None) => Ok((0, GENESIS_HASH.to_owned())),
            (None, Some(head)) => Err(mismatch(format!(
                "the log is empty but the head names seq {}",
                head.seq
            ))),
            (Some(last), None) => Err(mismatch(format!(
                "the head file is missing and the log ends at seq {}",
                last.seq
            ))),
            (Some(last), Some(head)) => {
                let current = head.seq == last.seq && head.hash == last.hash;
                let one_behind = head.seq + 1 == last.seq && head.hash == last.prev_hash;
                if current || one_behind {
                    Ok((last.seq, last.hash.clone()))
                } else {
                    Err(mismatch(format!(
                        "the head names seq {} but the log ends at seq {}",
                        head.seq, last.seq
                    )))
                }
            }
        }
    }
}

enum LastLine {
    Empty,
    /// The file does not end with a newline.
    Torn,
    /// The last line, without its newline.
    Line(Vec<u8>),
}

/// Reads the last line of `file` from its end, in chunks, so an append costs the same on a
/// long log as on a short one.
fn last_line(mut file: &File) -> io::Result<LastLine> {
    const CHUNK: u64 = 4096;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(LastLine::Empty);
    }
    let mut byte = [0u8];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut byte)?;
    if byte[0] != b'\n' {
        return Ok(LastLine::Torn);
    }
    let mut start = len - 1;
    let mut line: Vec<u8> = Vec::new();
    while start > 0 {
        let size = CHUNK.min(start);
        start -= size;
        let mut piece = vec![0; usize::try_from(size).expect("a chunk fits in memory")];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut piece)?;
        piece.extend_from_slice(&line);
        line = piece;
        if let Some(i) = line.iter().rposition(|&b| b == b'\n') {
            line.drain(..=i);
            break;
        }
    }
    Ok(LastLine::Line(line))
}

fn read_head(path: &Path) -> Result<Option<Head>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| Error::BadHead {
                path: path.display().to_string(),
                message: e.to_string(),
            }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Io {
            action: "reading audit head",
            path: path.display().to_string(),
            source,
        }),
    }
}

/// Replaces the head file atomically: a reader sees the old head or the new one, never half.
fn write_head(path: &Path, head: &Head) -> Result<()> {
    let io = |action: &'static str| {
        move |source| Error::Io {
            action,
            path: path.display().to_string(),
            source,
        }
    };
    let tmp = path.with_extension("head.tmp");
    let mut text = serde_json::to_string(head).expect("a head always serializes");
    text.push('\n');
    let mut file = File::create(&tmp).map_err(io("writing audit head"))?;
    file.write_all(text.as_bytes())
        .map_err(io("writing audit head"))?;
    file.sync_all().map_err(io("syncing audit head"))?;
    std::fs::rename(&tmp, path).map_err(io("replacing audit head"))?;
    // The rename is durable once the folder is synced. Not every platform can open a folder
    // for syncing; there the rename is as durable as the platform makes it.
    if let Some(parent) = path.parent()
        && let Ok(dir) = File::open(if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        })
    {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// What [`verify`] found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// Records that checked, before the first failure if any.
    pub records: u64,
    /// The hash of the last record that checked (the genesis hash when none did).
    pub last_hash: String,
    /// How the head file compared with the log.
    pub head: HeadState,
    /// The first bad record, or the missing one; `None` when the log is intact.
    pub failure: Option<Failure>,
}

impl VerifyReport {
    pub fn ok(&self) -> bool {
        self.failure.is_none()
    }
}

/// How the head file compared with the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HeadState {
    /// It names the last record.
    Matches,
    /// It names the record before the last: a crash between the log's sync and the head's
    /// rename. The last record is durable and chains, so this is not a failure.
    OneBehind,
    /// There is no head file, and no record either.
    Absent,
    /// It disagrees with the log, or is missing or unreadable beside records: see the failure.
    Bad,
    /// Not compared, because the chain failed first.
    NotChecked,
}

/// The first bad record of a log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// 1-based; for a record missing at the end, the line it would be on.
    pub line: u64,
    /// The `seq` of the bad record as written (or of the missing one); `None` when the line is
    /// not a record.
    pub seq: Option<u64>,
    pub problem: Problem,
}

/// What is wrong with a record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Problem {
    /// The line is not an audit record.
    NotARecord { message: String },
    /// The last line has no newline: an append was cut off.
    Torn,
    /// Records were reordered, removed or inserted before this one.
    Seq { expected: u64, found: u64 },
    /// The record does not chain to the one before it.
    PrevHash { expected: String, found: String },
    /// The record's content does not match its hash: it was edited.
    Hash { expected: String, found: String },
    /// The head names a later record: the log was cut off at the end.
    Truncated { head_seq: u64 },
    /// The head names a record the log does not hold.
    HeadMismatch { head_seq: u64, head_hash: String },
    /// The log has records but no head file.
    HeadMissing,
    /// The head file is not a head.
    HeadUnreadable { message: String },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}", self.line)?;
        if let Some(seq) = self.seq {
            write!(f, " (seq {seq})")?;
        }
        f.write_str(": ")?;
        match &self.problem {
            Problem::NotARecord { message } => write!(f, "not an audit record: {message}"),
            Problem::Torn => f.write_str("the line is cut off: an append did not finish"),
            Problem::Seq { expected, found } => write!(
                f,
                "expected seq {expected}, found {found}: records were reordered, removed or \
                 inserted"
            ),
            Problem::PrevHash { expected, found } => write!(
                f,
                "prev_hash {found} does not chain to the record before ({expected}): a record \
                 was changed or removed"
            ),
            Problem::Hash { expected, found } => write!(
                f,
                "hash {found} does not match the record's content ({expected}): the record was \
                 edited"
            ),
            Problem::Truncated { head_seq } => write!(
                f,
                "missing: the head names seq {head_seq} but the log ends before it: the log was \
                 truncated"
            ),
            Problem::HeadMismatch {
                head_seq,
                head_hash,
            } => write!(
                f,
                "the head names seq {head_seq} with hash {head_hash}, which the log does not hold"
            ),
            Problem::HeadMissing => f.write_str(
                "the head file is missing, so records cut off the end would go unnoticed",
            ),
            Problem::HeadUnreadable { message } => {
                write!(f, "the head file is unreadable: {message}")
            }
        }
    }
}

/// Checks the log at `path` and its head file: every record's seq, chain and hash, a torn last
/// line, and the end against the head. A missing log reads as an empty one, so a head without
/// its log is a truncation. `Err` only when a file cannot be read at all.
pub fn verify(path: &Path) -> Result<VerifyReport> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(Error::Io {
                action: "reading audit log",
                path: path.display().to_string(),
                source,
            });
        }
    };
    let mut report = VerifyReport {
        records: 0,
        last_hash: GENESIS_HASH.to_owned(),
        head: HeadState::NotChecked,
        failure: None,
    };
    match check_chain(&bytes, &mut report) {
        Ok(before_last) => check_head(path, &before_last, &mut report),
        Err(failure) => report.failure = Some(failure),
    }
    Ok(report)
}

/// Checks each line of the log in `bytes` in turn, counting the good records and keeping the
/// last one's hash in `report`: the hash of the record before the last when all are good, else
/// the first failure.
fn check_chain(bytes: &[u8], report: &mut VerifyReport) -> Result<String, Failure> {
    let torn = !bytes.is_empty() && !bytes.ends_with(b"\n");
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let lines: Vec<&[u8]> = if bytes.is_empty() {
        Vec::new()
    } else {
        body.split(|&b| b == b'\n').collect()
    };
    // The last two good records' hashes, to accept a head one record behind.
    let mut before_last = GENESIS_HASH.to_owned();
    for (i, line) in lines.iter().enumerate() {
        let line_no = i as u64 + 1;
        let fail = |seq: Option<u64>, problem: Problem| Failure {
            line: line_no,
            seq,
            problem,
        };
        if torn && i + 1 == lines.len() {
            let seq = serde_json::from_slice::<Record>(line).ok().map(|r| r.seq);
            return Err(fail(seq, Problem::Torn));
        }
        let record: Record = match serde_json::from_slice(line) {
            Ok(r) => r,
            Err(e) => {
                let message = e.to_string();
                return Err(fail(None, Problem::NotARecord { message }));
            }
        };
        if let Some(problem) = record_problem(&record, report) {
            return Err(fail(Some(record.seq), problem));
        }
        report.records += 1;
        before_last = std::mem::replace(&mut report.last_hash, record.hash);
    }
    Ok(before_last)
}

/// What is wrong with `record` as the next after the `report.records` good ones: its seq, its
/// link to the last one's hash, then its own hash.
fn record_problem(record: &Record, report: &VerifyReport) -> Option<Problem> {
    if record.seq != report.records + 1 {
        Some(Problem::Seq {
            expected: report.records + 1,
            found: record.seq,
        })
    } else if record.prev_hash != report.last_hash {
        Some(Problem::PrevHash {
            expected: report.last_hash.clone(),
            found: record.prev_hash.clone(),
        })
    } else {
        let computed = record.compute_hash();
        (computed != record.hash).then(|| Problem::Hash {
            expected: computed,
            found: record.hash.clone(),
        })
    }
}

/// Checks the head file of the log at `path` against the end of a whole chain (`report`'s last
/// record, or `before_last` for a head one record behind), and sets the head's state and any
/// failure in `report`.
fn check_head(path: &Path, before_last: &str, report: &mut VerifyReport) {
    let next_line = report.records + 1;
    let head_failure = |problem: Problem, seq: Option<u64>| Failure {
        line: next_line,
        seq,
        problem,
    };
    let head = match read_head(&head_path(path)) {
        Ok(head) => head,
        Err(e) => {
            report.head = HeadState::Bad;
            report.failure = Some(head_failure(
                Problem::HeadUnreadable {
                    message: e.to_string(),
                },
                None,
            ));
            return;
        }
    };
    let last = report.records;
    match head {
        None if last == 0 => report.head = HeadState::Absent,
        None => {
            report.head = HeadState::Bad;
            report.failure = Some(head_failure(Problem::HeadMissing, None));
        }
        Some(head) if head.seq == last && head.hash == report.last_hash => {
            report.head = HeadState::Matches;
        }
        Some(head) if head.seq + 1 == last && head.hash == before_last => {
            report.head = HeadState::OneBehind;
        }
        Some(head) if head.seq > last => {
            report.head = HeadState::Bad;
            report.failure = Some(head_failure(
                Problem::Truncated { head_seq: head.seq },
                Some(last + 1),
            ));
        }
        Some(head) => {
            report.head = HeadState::Bad;
            report.failure = Some(head_failure(
                Problem::HeadMismatch {
                    head_seq: head.seq,
                    head_hash: head.hash,
                },
                None,
            ));
        }
    }
}

/// The records of the log at `path`, in order, without checking the chain (that is
/// [`verify`]'s job); for showing a log.
pub fn read_records(path: &Path) -> Result<Vec<Record>> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        action: "reading audit log",
        path: path.display().to_string(),
        source,
    })?;
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        return Err(Error::TornTail {
            path: path.display().to_string(),
        });
    }
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    if body.is_empty() {
        return Ok(Vec::new());
    }
    body.split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_slice(line).map_err(|e| Error::BadRecord {
                path: path.display().to_string(),
                line: i as u64 + 1,
                message: e.to_string(),
            })
        })
        .collect()
}
