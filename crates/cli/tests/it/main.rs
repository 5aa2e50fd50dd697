//! Integration tests of the `merkle` binary: one test binary (as uv and jj do), one module per area.
//!
//! Every test builds its own workspace in a temporary folder from [`FIXTURE`], runs the real
//! binary on it with `--root`, and checks what a user or a script reads: whole JSON documents
//! and insta snapshots of the text, with the temporary path and frame creation times filtered
//! out. NodeIDs, FrameIDs and root hashes are golden values and stay in the snapshots: the same
//! tree must hash the same on every machine.
//!
//! The fixture holds symlinks, and the tests compare unix exit statuses, so the whole binary is
//! unix-only; CI runs on Linux.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde_json::Value;

mod address;
mod agent;
mod bundle;
mod context;
mod damage;
mod frames;
mod generate;
mod generate_batch;
mod in_use;
mod json_contract;
mod llm;
mod llm_count;
mod mcp;
mod mcp_http;
mod model_config;
mod outline;
mod readme;
mod refs;
mod related;
mod remote;
mod report;
mod rescan;
mod search;
mod self_scan;
mod tree;
mod usage;
mod watch;
mod watch_limit;

/// The fixture tree: regular files by workspace path and content. Some must never be scanned:
/// `.git/`, what `.gitignore` ignores (`debug.log`, `target/`), what the nested `src/.gitignore`
/// ignores (`src/scratch.tmp`) and what `.git/info/exclude` ignores (`local.env`).
const FIXTURE: &[(&str, &str)] = &[
    (".git/HEAD", "ref: refs/heads/main\n"),
    (".git/info/exclude", "local.env\n"),
    (".gitignore", "/target/\n*.log\n"),
    ("README.md", "# fixture\n"),
    ("debug.log", "ignored by .gitignore\n"),
    ("docs/guide.md", "How to use the fixture.\n"),
    ("local.env", "TOKEN=ignored-by-info-exclude\n"),
    ("src/.gitignore", "*.tmp\n"),
    ("src/lib.rs", "pub mod util;\n"),
    ("src/scratch.tmp", "ignored by the nested .gitignore\n"),
    ("src/util/mod.rs", "pub fn answer() -> u32 {\n    42\n}\n"),
    ("src/util/x.rs", "aaa\n"),
    ("target/out.bin", "ignored directory\n"),
];

/// The fixture's symlinks, by workspace path and target: to a file, to a directory (never
/// followed, so `linkdir/` has no children) and to nothing at all.
const FIXTURE_LINKS: &[(&str, &str)] = &[
    ("link", "README.md"),
    ("linkdir", "src"),
    ("src/dangling", "../missing"),
];

/// A temporary workspace and the `merkle` commands run on it.
struct Workspace {
    tmp: tempfile::TempDir,
    /// The workspace root, `<tmp>/ws`, canonical.
    root: PathBuf,
}

/// What one run of `merkle` did.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

impl Workspace {
    /// The `name` of each entry of the JSON list `merkle --json ARGS` prints, in order.
    fn names(&self, args: &[&str]) -> Vec<String> {
        self.json(args)
            .as_array()
            .expect("a list")
            .iter()
            .map(|f| f["name"].as_str().expect("a name").to_owned())
            .collect()
    }

    /// An empty workspace.
    fn empty() -> Workspace {
        let tmp = tempfile::tempdir().expect("creating a temporary folder");
        let base = tmp
            .path()
            .canonicalize()
            .expect("the temporary folder has a canonical path");
        let root = base.join("ws");
        std::fs::create_dir_all(&root).expect("creating the workspace root");
        std::fs::create_dir_all(base.join("home")).expect("creating the fake home");
        Workspace { tmp, root }
    }

    /// A workspace holding [`FIXTURE`] and [`FIXTURE_LINKS`].
    fn fixture() -> Workspace {
        let ws = Workspace::empty();
        for (path, content) in FIXTURE {
            ws.write(path, content);
        }
        for (path, target) in FIXTURE_LINKS {
            ws.symlink(path, target);
        }
        ws
    }

    /// The fixture, scanned; then, once the clock has passed every change, scanned again, so
    /// that nothing the first scan met is racy any more (a file or folder changed in the clock
    /// tick a scan starts is looked at again by the next) and what later scans hash and write
    /// does not depend on the clock.
    fn scanned() -> Workspace {
        let ws = Workspace::fixture();
        ws.ok(&["scan"]);
        ws.settle();
        ws.ok(&["scan"]);
        ws
    }

    /// Waits until the filesystem's clock has passed the last change of every file and folder
    /// of the workspace (the store's included), so that a scan started now can trust all their
    /// stats. It polls the clock through a file beside the workspace; no sleep.
    fn settle(&self) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ns = |m: &std::fs::Metadata| {
                let at = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
                at(m.mtime(), m.mtime_nsec()).max(at(m.ctime(), m.ctime_nsec()))
            };
            let mut newest = 0i128;
            let mut todo = vec![self.root.clone()];
            while let Some(dir) = todo.pop() {
                newest = newest.max(ns(&std::fs::symlink_metadata(&dir).expect("stat")));
                for e in std::fs::read_dir(&dir).expect("reading a folder") {
                    let e = e.expect("an entry");
                    let m = std::fs::symlink_metadata(e.path()).expect("stat");
                    newest = newest.max(ns(&m));
                    if m.is_dir() {
                        todo.push(e.path());
                    }
                }
            }
            let probe = self.tmp.path().join("clock-probe");
            loop {
                std::fs::write(&probe, "tick").expect("writing the clock probe");
                if ns(&std::fs::metadata(&probe).expect("stat")) > newest {
                    return;
                }
                std::thread::yield_now();
            }
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn write(&self, rel: &str, content: &str) {
        let p = self.path(rel);
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).expect("creating the file's folder");
        }
        std::fs::write(&p, content).expect("writing a fixture file");
    }

    fn symlink(&self, rel: &str, target: &str) {
        std::os::unix::fs::symlink(target, self.path(rel)).expect("creating a fixture symlink");
    }

    /// `merkle --root <ws> ARGS`, run in the workspace root, with a home of its own so that the
    /// user's global git excludes cannot change what a scan sees.
    fn cmd(&self, args: &[&str]) -> assert_cmd::Command {
        let home = self.tmp.path().join("home");
        let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("merkle");
        cmd.arg("--root")
            .arg(&self.root)
            .args(args)
            .current_dir(&self.root)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &home)
            .env_remove("COLUMNS");
        cmd
    }

    fn run(&self, args: &[&str]) -> Run {
        run(&mut self.cmd(args))
    }

    /// Runs a command that must succeed quietly, and returns its stdout.
    fn ok(&self, args: &[&str]) -> String {
        ok(&mut self.cmd(args))
    }

    /// Runs a command with `--json` that must succeed, and returns its document.
    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        parse(&self.ok(&all))
    }

    /// Checks that `validate` finds nothing wrong, in both output formats.
    fn assert_valid(&self) {
        pretty_assertions::assert_eq!(
            self.json(&["validate"]),
            serde_json::json!({"ok": true, "problems": []})
        );
        pretty_assertions::assert_eq!(self.ok(&["validate"]), "ok: the store is consistent\n");
    }

    /// The NodeID of the node at `path` in the last scan.
    fn node_id(&self, path: &str) -> String {
        str_field(&self.json(&["get-node", path])["node"], "node_id")
    }

    /// Every file of the default store folder with its bytes and mtime, to tell whether anything
    /// wrote to it.
    fn store_state(&self) -> BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)> {
        let dir = self.path(".merkle");
        let entries = std::fs::read_dir(&dir).expect("the store folder exists");
        entries
            .map(|e| {
                let p = e.expect("reading the store folder").path();
                let m = std::fs::metadata(&p).expect("stat of a store file");
                let modified = m.modified().expect("the platform has mtimes");
                let bytes = std::fs::read(&p).expect("reading a store file");
                (p, (bytes, modified))
            })
            .collect()
    }

    /// Snapshot settings: the temporary folder shows as `[TMP]`, frame creation times as
    /// `[CREATED_AT]`.
    fn settings(&self) -> insta::Settings {
        let mut s = insta::Settings::clone_current();
        let canonical = self.root.parent().expect("the root is <tmp>/ws");
        s.add_filter(&regex_escape(&canonical.to_string_lossy()), "[TMP]");
        s.add_filter(&regex_escape(&self.tmp.path().to_string_lossy()), "[TMP]");
        s.add_filter(
            r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z",
            "[CREATED_AT]",
        );
        s
    }
}

fn run(cmd: &mut assert_cmd::Command) -> Run {
    let out = cmd.output().expect("running merkle");
    Run {
        code: out.status.code().expect("merkle exits, it is not killed"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

fn ok(cmd: &mut assert_cmd::Command) -> String {
    let r = run(cmd);
    assert!(
        r.code == 0 && r.stderr.is_empty(),
        "{:?} {:?} failed or warned:\n{r}",
        cmd.get_program(),
        cmd.get_args().collect::<Vec<_>>()
    );
    r.stdout
}

fn parse(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{s}"))
}

fn str_field(v: &Value, key: &str) -> String {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is not a string in {v}"))
        .to_owned()
}

/// Escapes regex metacharacters, so that a literal path can be an insta filter.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `merkle`, run where the kernel allows this process at most `watches` inotify watches (one a
/// folder) and no fanotify mark, so what does not fit is checked by its stats: in a user
/// namespace of its own (`unshare -r`, unprivileged), whose limits
/// (`/proc/sys/user/max_inotify_watches`, `max_fanotify_marks`) it lowers first; the machine's
/// stay as they are.
fn merkle_with_watch_limit(watches: u32) -> std::process::Command {
    merkle_with_watch_limits(watches, 0)
}

/// A user namespace's limit of fanotify marks, where the kernel has one (Linux 5.13 or later).
const FANOTIFY_MARKS: &str = "/proc/sys/user/max_fanotify_marks";

/// [`merkle_with_watch_limit`] with at most `marks` fanotify marks (Linux 5.13 or later), the
/// second pool of folder watches.
fn merkle_with_watch_limits(watches: u32, marks: u32) -> std::process::Command {
    let mut cmd = std::process::Command::new("unshare");
    cmd.args(["-r", "sh", "-c"])
        .arg(format!(
            "echo {watches} > /proc/sys/user/max_inotify_watches && \
             {{ [ ! -e {FANOTIFY_MARKS} ] || echo {marks} > {FANOTIFY_MARKS}; }} && \
             exec \"$0\" \"$@\""
        ))
        .arg(assert_cmd::cargo::cargo_bin!("merkle"));
    cmd
}

/// The lines of a child's piped stdout, read on a thread of their own: `Some(line)` per line,
/// then `None` at the end, so a test can wait for a line with a deadline rather than hang.
fn stdout_lines(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<Option<String>> {
    use std::io::BufRead;
    let stdout = child.stdout.take().expect("stdout is piped");
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(Some(line)).is_err() {
                return;
            }
        }
        let _ = tx.send(None);
    });
    lines
}
