//! Crash safety of conversations: a child process appending messages is killed with SIGKILL
//! at random moments; after every kill, each message whose append the child reported as done
//! must be in the conversation, in order, and at most the one message in flight may be there
//! beyond them.
//!
//! This file runs without the test harness because the test re-runs its own binary as the
//! child (`crash child WORKSPACE`). Each child resumes the conversation (repairing whatever
//! the previous kill left) and appends from where it finds it.
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use agent_loop::ConversationStore;
use llm_core::{ContentBlock, Message, Role, SystemClock};

const KILLS: usize = 24;
const ID: &str = "crash";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child") {
        child(Path::new(&args[2]));
        return;
    }
    // The harness's own flags (e.g. --nocapture, a filter) are accepted and ignored.
    match std::panic::catch_unwind(parent) {
        Ok(()) => println!("test crash_mid_append ... ok\n1 passed, 0 failed"),
        Err(_) => {
            println!("test crash_mid_append ... FAILED\n0 passed, 1 failed");
            std::process::exit(1);
        }
    }
}

/// Message `n` of the conversation: roles alternate, and sizes vary so that kills land in
/// writes of different lengths.
fn message(n: usize) -> Message {
    let text = format!("message {n} {}", "x".repeat((n * 7919) % 60_000));
    Message {
        role: if n.is_multiple_of(2) {
            Role::User
        } else {
            Role::Assistant
        },
        content: vec![ContentBlock::text(text)],
    }
}

/// Appends messages forever, printing each one's number once its append has returned.
fn child(workspace: &Path) {
    let (mut store, _) =
        ConversationStore::initialize(workspace, ID, Arc::new(SystemClock)).expect("resume");
    let mut out = std::io::stdout().lock();
    for n in store.messages().len().. {
        store.append_message(message(n)).expect("append");
        writeln!(out, "{n}").expect("stdout");
        out.flush().expect("flush");
    }
}

/// A small deterministic PRNG (xorshift), so every run kills at the same points in the stream.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn parent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("current exe");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut acknowledged = 0usize;
    for kill in 0..KILLS {
        let mut child = Command::new(&exe)
            .arg("child")
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        // Kill after a random number of acknowledged appends: sometimes before the first,
        // while the child is still resuming (and repairing) the conversation.
        let wanted = rng.below(40);
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        for _ in 0..wanted {
            match lines.next() {
                Some(Ok(line)) => {
                    acknowledged = acknowledged.max(line.parse::<usize>().expect("a number") + 1);
                }
                _ => break,
            }
        }
        child.kill().expect("SIGKILL the child");
        child.wait().expect("reap the child");
        // Anything printed before the kill landed was acknowledged too.
        for line in lines.map_while(Result::ok) {
            if let Ok(n) = line.parse::<usize>() {
                acknowledged = acknowledged.max(n + 1);
            }
        }

        let (store, _) = ConversationStore::load(dir.path(), ID, Arc::new(SystemClock))
            .unwrap_or_else(|e| panic!("after kill {kill}, the conversation does not load: {e}"));
        let messages = store.messages();
        assert!(
            messages.len() >= acknowledged,
            "after kill {kill}: {acknowledged} messages were acknowledged, {} survived",
            messages.len()
        );
        assert!(
            messages.len() <= acknowledged + 1,
            "after kill {kill}: {} messages where {acknowledged} were acknowledged",
            messages.len()
        );
        for (n, m) in messages.iter().enumerate() {
            assert!(
                *m == message(n),
                "after kill {kill}, message {n} is not the one appended"
            );
        }
        // The one in flight, if it made it, counts from now on.
        acknowledged = messages.len();
    }
    assert!(
        acknowledged >= KILLS,
        "the children acknowledged only {acknowledged} messages"
    );
}
