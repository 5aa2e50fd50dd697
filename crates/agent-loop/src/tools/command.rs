//! Runs a shell command in the workspace with a time limit and bounded output.
//!
//! The command runs as `sh -c COMMAND` in its own process group, with no input. Two threads
//! read its output and a third waits for it; the caller waits on a channel with a deadline, so
//! nothing sleeps. When the deadline passes, the whole process group is killed (the shell and
//! anything it started that stayed in the group). Each stream keeps its first and last bytes
//! up to a cap, because a long build log has its errors at the end.
//!
//! The command can do anything the user can: confinement of commands is governance's job,
//! not this module's.

use std::collections::VecDeque;
use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// What a finished (or killed) command left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// `None` if the shell itself was killed at the deadline.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    /// The deadline passed and the process group was killed.
    pub timed_out: bool,
}

impl CommandOutput {
    /// The output as the model reads it.
    pub fn render(&self) -> String {
        let mut text = match self.status {
            None => String::new(),
            Some(status) => match status.code() {
                Some(code) => format!("exit code: {code}\n"),
                None => format!("the command ended by {status}\n"),
            },
        };
        if self.timed_out && self.status.is_some() {
            text.push_str(
                "something the command started kept its output open until the time limit \
                 and was killed\n",
            );
        }
        for (name, stream) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            if !stream.is_empty() {
                text.push_str(&format!("--- {name} ---\n{stream}"));
                if !stream.ends_with('\n') {
                    text.push('\n');
                }
            }
        }
        text
    }
}

enum Event {
    Stdout(Captured),
    Stderr(Captured),
    Exited(std::io::Result<ExitStatus>),
}

/// Runs `command` in `dir`, killing it after `timeout`; each stream keeps at most
/// `stream_cap` bytes.
pub fn run(
    command: &str,
    dir: &Path,
    timeout: Duration,
    stream_cap: usize,
) -> Result<CommandOutput> {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|source| Error::Spawn {
            command: command.to_owned(),
            source,
        })?;
    let group = rustix::process::Pid::from_child(&child);
    let (events, received) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        let events = events.clone();
        std::thread::spawn(move || {
            let _ = events.send(Event::Stdout(Captured::read(stdout, stream_cap)));
        });
    }
    if let Some(stderr) = child.stderr.take() {
        let events = events.clone();
        std::thread::spawn(move || {
            let _ = events.send(Event::Stderr(Captured::read(stderr, stream_cap)));
        });
    }
    std::thread::spawn(move || {
        let _ = events.send(Event::Exited(child.wait()));
    });

    let deadline = Instant::now() + timeout;
    let mut output = CommandOutput {
        status: None,
        stdout: String::new(),
        stderr: String::new(),
        timed_out: false,
    };
    let mut pending = 3;
    while pending > 0 {
        let event = if output.timed_out {
            // Killed: the pipes close as the group dies; a process that left the group may
            // still hold them, so wait a little and give up.
            received.recv_timeout(Duration::from_secs(2))
        } else {
            received.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        };
        match event {
            Ok(Event::Stdout(captured)) => output.stdout = captured.into_text(),
            Ok(Event::Stderr(captured)) => output.stderr = captured.into_text(),
            // After the kill, the status only says that we killed it.
            Ok(Event::Exited(_)) if output.timed_out => {}
            Ok(Event::Exited(status)) => {
                output.status = Some(status.map_err(|source| Error::Spawn {
                    command: command.to_owned(),
                    source,
                })?);
            }
            Err(mpsc::RecvTimeoutError::Timeout) if !output.timed_out => {
                output.timed_out = true;
                // The group may be gone already; either way there is nothing left to do.
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
                continue;
            }
            Err(_) => break,
        }
        pending -= 1;
    }
    Ok(output)
}

/// The first and last bytes of a stream, and how many were in between.
struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Captured {
    fn read(mut stream: impl Read, cap: usize) -> Self {
        let half = cap / 2;
        let mut captured = Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        };
        let mut buffer = [0u8; 8192];
        loop {
            let n = match stream.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            captured.total += n as u64;
            let mut chunk = &buffer[..n];
            let room = half.saturating_sub(captured.head.len());
            let (into_head, rest) = chunk.split_at(room.min(chunk.len()));
            captured.head.extend_from_slice(into_head);
            chunk = rest;
            captured.tail.extend(chunk);
            let excess = captured.tail.len().saturating_sub(cap - half);
            captured.tail.drain(..excess);
        }
        captured
    }

    fn into_text(self) -> String {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.total > kept {
            text.push_str(&format!(
                "\n[... {} bytes not shown ...]\n",
                self.total - kept
            ));
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        text.push_str(&String::from_utf8_lossy(&tail));
        text
    }
}
