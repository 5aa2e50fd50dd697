//! Past fixes: a task is often like one the workspace's history already holds, and the files
//! that commit changed are where this one lands too (bug localisation by similar past reports,
//! as BugLocator does). The commits of the workspace's git history (HEAD's, merges left out, at
//! most [`MAX_COMMITS`] of the newest) are read once per HEAD into a file in the store folder
//! ([`FILE`]): each commit's subject, the files it changed below the workspace, and its
//! message's words; then, per task, the [`TOP_COMMITS`] commits whose messages are most like
//! the task (BM25 over the messages) give each file they changed their score, shared by the
//! files they changed (over the square root of how many), divided by the best file's.
//!
//! When HEAD has moved on from the kept file's (a commit, a pull), only the commits since are
//! read and added (0.15 s rather than 0.9 s on sympy), and the file is the one a whole read
//! makes: commits are kept newest first by committer time, then id.
//!
//! Only what HEAD reaches is read, so a checkout of an older commit never sees later fixes. A
//! workspace that is not a git checkout, or a machine without git, has no history: the signal
//! is left out, never an error.
//!
//! The history is read from commits and trees alone, never a file's content: renames are not
//! looked for (`--no-renames`; a renamed file is listed under its old name and its new, the
//! old one no file of the tree), since finding them reads the blobs of every added and deleted
//! file, and an object store may lack some (a partial clone, `--filter=blob:none`; a mirror
//! without its large files). Nor does a read ever reach a remote: a partial clone's missing
//! objects are not fetched ([`git`]). When git still cannot read the history (a tree is
//! missing), the search goes on without it and says why ([`Unread`]).
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};

use merkle_store::Store;

/// The file in the store folder that holds the history read at one HEAD.
pub const FILE: &str = "history";
/// What the file begins with, then HEAD's commit id. v3: renames are not looked for, so a
/// renamed file is listed under both its names (v2 listed the new one alone).
const MAGIC: &str = "merkle-history v3";
/// The most commits read, newest first: a long history's old commits say little of today's
/// files, and the file stays a few megabytes.
pub const MAX_COMMITS: usize = 100_000;
/// How many of the most similar commits give their files evidence.
pub const TOP_COMMITS: usize = 30;

/// What a task's past fixes say of one file: its share (the best file's is 1) and the subject
/// of the most similar commit that changed it.
#[derive(Clone, Debug, PartialEq)]
pub struct PastFix {
    pub share: f64,
    pub subject: String,
}

/// Why the workspace's git history could not be read: git's own words (`git log failed:
/// fatal: unable to read tree ...`). A search goes on without the history signal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unread(pub String);

/// git, run in `workspace` so that reading the history never reaches a remote: a partial
/// clone's missing objects are not fetched (`GIT_NO_LAZY_FETCH`, git 2.44 on; before it,
/// every transport refused, `protocol.allow=never`), and nothing asks for a password.
fn git(workspace: &Path) -> Command {
    let mut git = Command::new("git");
    git.args(["-c", "protocol.allow=never"])
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .current_dir(workspace);
    git
}

/// HEAD's commit id in the workspace's git checkout; `None` when it is none (or git is not
/// installed).
fn head(workspace: &Path) -> Option<String> {
    let out = git(workspace)
        .args(["rev-parse", "--verify", "-q", "HEAD"])
        .output()
        .ok()?;
    let id = String::from_utf8(out.stdout).ok()?;
    let id = id.trim();
    (out.status.success() && !id.is_empty()).then(|| id.to_owned())
}

/// A commit as the history file keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Commit {
    /// Its committer time (seconds) and id: the file's order, newest first.
    time: i64,
    id: String,
    subject: String,
    /// The files it changed, below the workspace.
    files: Vec<String>,
    /// Its message's words, sorted, each once, stop words and numbers left out.
    words: Vec<String>,
}

/// The commits of `range` (`HEAD`, or `OLD..NEW` for those since OLD) that changed a file below
/// the workspace, merges left out, at most [`MAX_COMMITS`]; why not when git cannot read them.
fn git_log(workspace: &Path, range: &str, progress: &dyn Fn(usize)) -> Result<Vec<Commit>, Unread> {
    let mut child = git(workspace)
        .args([
            "-c",
            "core.quotePath=false",
            "log",
            "--no-merges",
            "--no-renames",
            "--relative",
            "--name-only",
            "--format=%x1e%ct %H%x1f%s%x1f%B%x1f",
        ])
        .arg(format!("--max-count={MAX_COMMITS}"))
        .arg(range)
        .arg("--")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Unread(format!("git log could not run: {e}")))?;
    let mut stderr = child.stderr.take();
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_end(&mut text);
        }
        text
    });
    let log = read_counting(child.stdout.take(), progress);
    let status = child
        .wait()
        .map_err(|e| Unread(format!("git log could not run: {e}")))?;
    let errors = errors.join().unwrap_or_default();
    if !status.success() {
        // git's last line is its reason (`fatal: ...`), after any warnings.
        let stderr = String::from_utf8_lossy(&errors);
        let reason = stderr.lines().map(str::trim).rfind(|l| !l.is_empty());
        return Err(Unread(format!(
            "git log failed: {}",
            reason.map_or_else(|| status.to_string(), str::to_owned)
        )));
    }
    Ok(parse_log(&String::from_utf8_lossy(&log?)))
}

/// How many commits read from git between two calls of a history read's progress.
pub const PROGRESS_EVERY: usize = 1000;

/// All of git's log from `out`, calling `progress` with the commits read so far (each begins
/// with `RS`): at the start, every [`PROGRESS_EVERY`] and at the end.
fn read_counting(
    out: Option<std::process::ChildStdout>,
    progress: &dyn Fn(usize),
) -> Result<Vec<u8>, Unread> {
    let Some(mut out) = out else {
        return Ok(Vec::new());
    };
    let (mut log, mut buf, mut commits) = (Vec::new(), vec![0u8; 64 << 10], 0);
    progress(0);
    loop {
        let n = match out.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Unread(format!("git log could not be read: {e}"))),
        };
        let before = commits / PROGRESS_EVERY;
        commits += buf[..n].iter().filter(|&&b| b == 0x1e).count();
        if commits / PROGRESS_EVERY > before {
            progress(commits);
        }
        log.extend_from_slice(&buf[..n]);
    }
    progress(commits);
    Ok(log)
}

/// Whether commit `old` is one `new` reaches.
fn is_ancestor(workspace: &Path, old: &str, new: &str) -> bool {
    git(workspace)
        .args(["merge-base", "--is-ancestor", old, new])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// git's log as [`git_log`] asks for it: each commit as `RS time SP id US subject US message
/// US`, then the names of the files it changed, a line each.
fn parse_log(log: &str) -> Vec<Commit> {
    let mut commits = Vec::new();
    for chunk in log.split('\x1e').filter(|c| !c.is_empty()) {
        let mut parts = chunk.splitn(4, '\x1f');
        let (Some(stamp), Some(subject), Some(message), Some(names)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let Some((time, id)) = stamp
            .split_once(' ')
            .and_then(|(t, id)| Some((t.parse().ok()?, id.trim().to_owned())))
        else {
            continue;
        };
        // A name git had to quote (a tab, a newline, a quote in it) is left out.
        let files: Vec<String> = names
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty() && !l.starts_with('"'))
            .map(str::to_owned)
            .collect();
        if files.is_empty() {
            continue;
        }
        let mut words = retrieve::tokenize::token_strings(message);
        words.retain(|w| {
            !retrieve::query::is_stop_word(w) && !w.bytes().all(|b| b.is_ascii_digit())
        });
        words.sort_unstable();
        words.dedup();
        let subject: String = subject
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        commits.push(Commit {
            time,
            id,
            subject: subject.trim().to_owned(),
            files,
            words,
        });
    }
    commits
}

/// The history file of `commits` read at `head`: a header, a line per commit, newest first
/// (`time TAB id TAB words TAB subject TAB files separated by US`; at most [`MAX_COMMITS`]),
/// then a line per word (`word TAB the numbers of the commits holding it`), in order.
fn encode(head: &str, mut commits: Vec<Commit>) -> String {
    commits.sort_by(|a, b| b.time.cmp(&a.time).then_with(|| a.id.cmp(&b.id)));
    commits.dedup_by(|a, b| a.id == b.id);
    commits.truncate(MAX_COMMITS);
    let mut postings: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut out = format!("{MAGIC} {head}\n{}\n", commits.len());
    for (n, c) in commits.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}",
            c.time,
            c.id,
            c.words.len(),
            c.subject,
            c.files.join("\x1f")
        );
        for w in &c.words {
            postings.entry(w.as_str()).or_default().push(n);
        }
    }
    let mut words: Vec<(&str, Vec<usize>)> = postings.into_iter().collect();
    words.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for (w, list) in words {
        out.push_str(w);
        out.push('\t');
        for (i, c) in list.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            let _ = write!(out, "{c}");
        }
        out.push('\n');
    }
    out
}

/// A commit's line of the history file ([`encode`]): its time, id, number of words, subject
/// and files (separated by US).
fn commit_fields(line: &str) -> Option<[&str; 5]> {
    let mut f = line.splitn(5, '\t');
    Some([f.next()?, f.next()?, f.next()?, f.next()?, f.next()?])
}

/// The HEAD a history file was read at and its commits; `None` for a file that does not read.
fn decode(text: &str) -> Option<(&str, Vec<Commit>)> {
    let mut lines = text.lines();
    let head = lines.next()?.strip_prefix(MAGIC)?.trim();
    let n: usize = lines.next()?.parse().ok()?;
    let mut commits = Vec::with_capacity(n);
    for line in lines.by_ref().take(n) {
        let [time, id, _, subject, files] = commit_fields(line)?;
        commits.push(Commit {
            time: time.parse().ok()?,
            id: id.to_owned(),
            subject: subject.to_owned(),
            files: files.split('\x1f').map(str::to_owned).collect(),
            words: Vec::new(),
        });
    }
    if commits.len() < n {
        return None;
    }
    // The words come in order, so each commit's come sorted.
    for line in lines {
        let (word, list) = line.split_once('\t')?;
        for c in list.split(' ') {
            let c: usize = c.parse().ok()?;
            commits.get_mut(c)?.words.push(word.to_owned());
        }
    }
    Some((head, commits))
}

/// How many commits the history file in `store_dir` holds, and whether that is the
/// [`MAX_COMMITS`] it is cut at (the history is longer: older fixes are not weighed); `None`
/// where none was read (no search yet, no git history).
pub fn kept_commits(store_dir: &Path) -> Option<(usize, bool)> {
    let (_, n) = kept_header(store_dir)?;
    Some((n, n >= MAX_COMMITS))
}

/// The HEAD the history file in `store_dir` was read at and how many commits it holds, from
/// its first two lines; `None` where there is none (or it is not one).
fn kept_header(store_dir: &Path) -> Option<(String, usize)> {
    use std::io::BufRead as _;
    let file = fs::File::open(store_dir.join(FILE)).ok()?;
    let mut lines = std::io::BufReader::new(file).lines();
    let head = lines.next()?.ok()?.strip_prefix(MAGIC)?.trim().to_owned();
    let n: usize = lines.next()?.ok()?.trim().parse().ok()?;
    Some((head, n))
}

/// The history file's text for the workspace's HEAD: read from the store folder when it was
/// written for this HEAD, else from git and written there (as the text index is, by a
/// read-only handle of the store too: the file is a cache of git's). `None` when the workspace
/// has no history; why not when git cannot read it.
fn history_text(store: &Store, progress: &dyn Fn(usize)) -> Result<Option<String>, Unread> {
    let workspace = store.workspace();
    let Some(head) = head(workspace) else {
        return Ok(None);
    };
    let path = store.dir().join(FILE);
    let kept = fs::read_to_string(&path).ok();
    let kept_head = kept
        .as_deref()
        .and_then(|t| t.lines().next()?.strip_prefix(MAGIC).map(str::trim));
    if kept_head == Some(head.as_str()) {
        return Ok(kept);
    }
    // HEAD moved on from the kept file's: only the commits since are read from git. Else (a
    // checkout of another branch, an older commit) the whole history is.
    let since = kept
        .as_deref()
        .and_then(decode)
        .filter(|(old, _)| is_ancestor(workspace, old, &head))
        .and_then(|(old, mut commits)| {
            commits.extend(git_log(workspace, &format!("{old}..{head}"), progress).ok()?);
            Some(commits)
        });
    let commits = match since {
        Some(commits) => commits,
        None => git_log(workspace, &head, progress)?,
    };
    let text = encode(&head, commits);
    // Through a file of this process's own, renamed into place: a reader sees the old file or
    // the new. A failed write costs the next search the read again, nothing else.
    let tmp = store
        .dir()
        .join(format!("{FILE}.{}.tmp", std::process::id()));
    if fs::write(&tmp, &text).is_ok() && fs::rename(&tmp, &path).is_err() {
        let _ = fs::remove_file(&tmp);
    }
    Ok(Some(text))
}

/// Each file the task's most similar past commits changed, with its share and the subject of
/// the most similar of them; empty when the workspace has no history, and why when git could
/// not read it. `words` are the task's words with their weights.
pub fn past_fixes(
    store: &Store,
    words: &[(String, f32)],
) -> Result<HashMap<String, PastFix>, Unread> {
    Ok(match history_text(store, &|_| {})? {
        Some(text) => score(&text, words),
        None => HashMap::new(),
    })
}

/// Brings the history file in the store folder in step with the workspace's HEAD, reading
/// from git what it lacks and calling `progress` with the commits read so far (as it starts,
/// then every [`PROGRESS_EVERY`]): what a search of a task does first, done ahead of it by a front end that
/// shows a first read of a long history. How many commits the file holds; `None` where the
/// workspace has no history; why not when git cannot read it.
pub fn bring_in_step(store: &Store, progress: &dyn Fn(usize)) -> Result<Option<usize>, Unread> {
    history_text(store, progress)?;
    Ok(kept_commits(store.dir()).map(|(n, _)| n))
}

/// Whether the history file in the store folder was read at the workspace's HEAD (a search
/// then reads no commit from git).
pub fn in_step(store: &Store) -> bool {
    let Some(head) = head(store.workspace()) else {
        return true;
    };
    kept_header(store.dir()).is_some_and(|(kept, _)| kept == head)
}

/// [`past_fixes`] over a history file's text.
fn score(text: &str, words: &[(String, f32)]) -> HashMap<String, PastFix> {
    let mut lines = text.lines();
    let _header = lines.next();
    let n: usize = lines.next().and_then(|l| l.parse().ok()).unwrap_or(0);
    let commits: Vec<&str> = lines.by_ref().take(n).collect();
    if commits.len() < n || n == 0 {
        return HashMap::new();
    }
    let wanted: HashMap<&str, f32> = words.iter().map(|(w, x)| (w.as_str(), *x)).collect();
    // Each commit's BM25 over the task's words (a word counts once in a message).
    let lengths: Vec<f64> = commits
        .iter()
        .map(|c| {
            commit_fields(c)
                .and_then(|[_, _, words, ..]| words.parse().ok())
                .unwrap_or(0.0)
        })
        .collect();
    let average = (lengths.iter().sum::<f64>() / n as f64).max(1.0);
    let mut scores = vec![0.0f64; n];
    for line in lines {
        let Some((word, list)) = line.split_once('\t') else {
            continue;
        };
        let Some(&weight) = wanted.get(word) else {
            continue;
        };
        let holding: Vec<usize> = list
            .split(' ')
            .filter_map(|c| c.parse().ok())
            .filter(|&c: &usize| c < n)
            .collect();
        let df = holding.len() as f64;
        let idf = (1.0 + (n as f64 - df + 0.5) / (df + 0.5)).ln();
        for c in holding {
            scores[c] += idf * f64::from(weight);
        }
    }
    let mut best: Vec<(f64, usize)> = scores
        .iter()
        .enumerate()
        .filter(|(_, s)| **s > 0.0)
        .map(|(c, s)| {
            let norm = 1.2 * (0.25 + 0.75 * lengths[c] / average) + 1.0;
            (s * 2.2 / norm, c)
        })
        .collect();
    best.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    best.truncate(TOP_COMMITS);
    let mut out: HashMap<String, PastFix> = HashMap::new();
    for (s, c) in best {
        let Some([_, _, _, subject, files]) = commit_fields(commits[c]) else {
            continue;
        };
        let files: Vec<&str> = files.split('\x1f').collect();
        let share = s / (files.len() as f64).sqrt();
        for f in files {
            // The most similar commits come first: the first subject met is theirs.
            let e = out.entry(f.to_owned()).or_insert_with(|| PastFix {
                share: 0.0,
                subject: subject.to_owned(),
            });
            e.share += share;
        }
    }
    let top = out.values().map(|p| p.share).fold(0.0, f64::max);
    for p in out.values_mut() {
        p.share /= top.max(f64::MIN_POSITIVE);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log() -> String {
        [
            "\x1e300 ccc\x1fDocs\x1fDocs\x1f\n\nREADME.md\n\"odd\\tname\"\n",
            "\x1e200 bbb\x1fFix overflow in widget parsing\x1fFix overflow in widget parsing\n\nLong widgets overflowed the buffer.\x1f\n\nsrc/parser.py\n",
            "\x1e100 aaa\x1fAdd the parser\x1fAdd the parser\n\nIt reads widgets.\x1f\n\nsrc/parser.py\nsrc/util.py\n",
        ]
        .concat()
    }

    #[test]
    fn the_most_similar_commits_files_lead() {
        let text = encode("abc", parse_log(&log()));
        assert!(text.starts_with("merkle-history v3 abc\n3\n300\tccc\t1\tDocs\tREADME.md\n"));
        let found = score(
            &text,
            &[("overflow".to_owned(), 1.0), ("widgets".to_owned(), 1.0)],
        );
        assert_eq!(found["src/parser.py"].share, 1.0);
        assert_eq!(
            found["src/parser.py"].subject,
            "Fix overflow in widget parsing"
        );
        assert!(found["src/util.py"].share < 1.0);
        assert!(!found.contains_key("README.md"));
        assert!(score(&text, &[("nothing".to_owned(), 1.0)]).is_empty());
        // A quoted name is left out; a file that is not one is not taken for one.
        assert!(score(&text, &[("docs".to_owned(), 1.0)]).contains_key("README.md"));
        assert_eq!(score(&text, &[("docs".to_owned(), 1.0)]).len(), 1);
        assert!(score("garbage", &[("overflow".to_owned(), 1.0)]).is_empty());
    }

    #[test]
    fn the_commits_since_added_to_a_kept_file_make_the_file_a_whole_read_makes() {
        let all = parse_log(&log());
        let whole = encode("ccc", all.clone());
        // Kept at the second commit; the newest read since, in either order.
        let kept = encode("bbb", all[1..].to_vec());
        let (head, mut commits) = decode(&kept).expect("decodes");
        assert_eq!(head, "bbb");
        assert_eq!(commits, all[1..].to_vec());
        commits.push(all[0].clone());
        assert_eq!(encode("ccc", commits), whole);
        let (_, mut reversed) = decode(&kept).expect("decodes");
        reversed.insert(0, all[0].clone());
        assert_eq!(encode("ccc", reversed), whole);
        assert_eq!(decode("merkle-history v3 x\n2\n1\ta\t0\ts\tf\n"), None);
        assert_eq!(decode("garbage"), None);
    }
}
