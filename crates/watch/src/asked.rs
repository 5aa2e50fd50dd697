//! What other processes ask a running `merkle watch` of the workspace, over its socket
//! ([`crate::vouch`]): a command sends `ask ` and one JSON object on a line; the watch says
//! `taken` at once (a watch that does not, stopped say, is not waited for), then answers one
//! JSON object on a line, or `none` where it does not answer that question (the command then
//! answers it itself). The watch keeps what a search makes of the tree (its
//! listing, path table and open index) from one question to the next, so a search beside it
//! costs what the search itself costs.
//!
//! The watch answers for the files as they are when it reads the question: through the same
//! freshness rule as the command would follow (its cookie barrier, then the folders it does
//! not watch by their stats), so asking it changes where the work is done, never the answer.
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// The start of a question's line.
pub(crate) const ASK: &str = "ask ";
/// What the watch says at once when it takes a question.
const TAKEN: &str = "taken";
/// How long a command waits for the answer before answering itself: a search that brings a
/// large index in step takes minutes, which the command would spend the same way.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// What answers a question: `None` where it is not one it answers.
pub(crate) type Answers = dyn Fn(&Value) -> Option<Value> + Send + Sync;

/// The answer of the watch that answers for the store in `store_dir` to `question`; `None`
/// where no watch answers there, it does not take the question within [`crate::ASK_TIMEOUT`]
/// (stopped, say), does not answer it, or its answer does not come within [`ANSWER_TIMEOUT`].
#[cfg(unix)]
pub fn ask(store_dir: &Path, question: &Value) -> Option<Value> {
    use std::io::{BufRead, BufReader, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(store_dir.join(crate::SOCKET)).ok()?;
    stream.set_write_timeout(Some(crate::ASK_TIMEOUT)).ok()?;
    stream.set_read_timeout(Some(crate::ASK_TIMEOUT)).ok()?;
    stream
        .write_all(format!("{ASK}{question}\n").as_bytes())
        .ok()?;
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    if line.trim_end() != TAKEN {
        return None;
    }
    stream.set_read_timeout(Some(ANSWER_TIMEOUT)).ok()?;
    line.clear();
    reader.read_line(&mut line).ok()?;
    serde_json::from_str(line.trim_end()).ok()
}

/// The answer of a running watch of `ws` to `search` ([`context::ops::Found::json`]), which
/// keeps the tree's listing and index between searches; `None` where none answers it, or where
/// the search first reads the git history (the asker reads it, with its progress shown).
pub fn search(ws: &context::ops::Workspace, search: &context::ops::Search<'_>) -> Option<Value> {
    let dir = ws.store_dir().ok()?;
    if !dir.join(crate::SOCKET).exists() {
        return None;
    }
    let reads_history = ws.read_stored(|store| {
        Ok::<_, context::Error>(context::ops::search_reads_history(
            store,
            search.query,
            search.ranking,
        ))
    });
    if reads_history.unwrap_or(true) {
        return None;
    }
    ask(&dir, &serde_json::json!({ "search": search.json() })).filter(Value::is_array)
}

/// No watch answers off Unix.
#[cfg(not(unix))]
pub fn ask(_store_dir: &Path, _question: &Value) -> Option<Value> {
    None
}

/// Answers the question on `line` (after [`ASK`]) with `answers`, on `stream`: `none` where
/// there is nothing to answer with, the line is no JSON, or `answers` does not answer it.
#[cfg(unix)]
pub(crate) fn answer(
    answers: Option<&Answers>,
    line: &str,
    mut stream: &std::os::unix::net::UnixStream,
) {
    use std::io::Write;
    if stream.write_all(format!("{TAKEN}\n").as_bytes()).is_err() {
        return;
    }
    let answer = answers.and_then(|answers| answers(&serde_json::from_str(line).ok()?));
    let reply = answer.map_or_else(|| "none".to_owned(), |a| a.to_string());
    let _ = stream.write_all(format!("{reply}\n").as_bytes());
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_watch_that_does_not_take_the_question_is_not_waited_for() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        // A socket whose listener never accepts: a watch stopped with Ctrl-Z, say.
        let _listener = std::os::unix::net::UnixListener::bind(dir.path().join(crate::SOCKET))
            .expect("binding the socket");
        let started = std::time::Instant::now();
        assert_eq!(ask(dir.path(), &serde_json::json!({"search": {}})), None);
        assert!(
            started.elapsed() < ANSWER_TIMEOUT / 10,
            "waited {:?}",
            started.elapsed()
        );
    }
}
