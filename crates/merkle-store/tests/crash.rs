//! Crash safety: a child process putting frames is killed with SIGKILL at random moments; after
//! every kill, each frame whose put the child reported as done must be in the store, and
//! `validate` must find nothing wrong.
//!
//! This file runs without the test harness because the test re-runs its own binary as the
//! child (`crash child ENGINE WORKSPACE`).
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use merkle_store::{EngineKind, Hash, NewFrame, OpenOptions, Role, ScanOptions, Store};

const KILLS: usize = 24;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child") {
        child(
            EngineKind::parse(&args[2]).expect("engine name"),
            Path::new(&args[3]),
        );
        return;
    }
    // The harness's own flags (e.g. --nocapture, a filter) are accepted and ignored.
    let mut failures = 0;
    for engine in EngineKind::available() {
        match std::panic::catch_unwind(|| parent(engine)) {
            Ok(()) => println!("test crash_{} ... ok", engine.name()),
            Err(_) => {
                println!("test crash_{} ... FAILED", engine.name());
                failures += 1;
            }
        }
    }
    let total = EngineKind::available().len();
    println!("{} passed, {failures} failed", total - failures);
    if failures > 0 {
        std::process::exit(1);
    }
}

fn open(root: &Path, engine: EngineKind, read_only: bool) -> Store {
    Store::open(
        root,
        &OpenOptions {
            engine: Some(engine),
            read_only,
            ..OpenOptions::default()
        },
    )
    .expect("open store")
}

/// Puts frames forever, printing each FrameID once its put has returned.
fn child(engine: EngineKind, root: &Path) {
    let store = open(root, engine, false);
    let nodes: Vec<Hash> = store
        .list_nodes("", true)
        .expect("list")
        .into_iter()
        .map(|n| n.node_id)
        .collect();
    let mut out = std::io::stdout().lock();
    let pid = std::process::id();
    for i in 0u64.. {
        let node = nodes[(i as usize) % nodes.len()];
        let ty = ["summary", "notes", "outline"][(i % 3) as usize];
        // Sizes vary so that kills land in writes of different lengths.
        let content = format!(
            "pid {pid} frame {i} {}",
            "x".repeat((i as usize * 37) % 5000)
        );
        let put = store
            .put_frame(NewFrame::new(node, ty, "crasher", content.into_bytes()))
            .expect("put");
        writeln!(out, "{}", put.frame_id).expect("stdout");
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

fn parent(engine: EngineKind) {
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..12 {
        let p = dir.path().join(format!("d{}/f{i}.txt", i % 3));
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, format!("file {i}\n")).expect("write");
    }
    {
        let store = open(dir.path(), engine, false);
        store.scan(&ScanOptions::default()).expect("scan");
        store.add_agent("crasher", Role::Writer).expect("agent");
    }
    let exe = std::env::current_exe().expect("current exe");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut acknowledged: Vec<Hash> = Vec::new();
    for kill in 0..KILLS {
        let mut child = Command::new(&exe)
            .args(["child", engine.name()])
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        // Kill after a random number of acknowledged puts: sometimes before the first one,
        // while the child is still opening (and recovering) the store.
        let wanted = rng.below(60);
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        for _ in 0..wanted {
            match lines.next() {
                Some(Ok(line)) => {
                    acknowledged.push(Hash::from_hex(&line).expect("child prints frame ids"))
                }
                _ => break,
            }
        }
        child.kill().expect("SIGKILL the child");
        child.wait().expect("reap the child");
        // Anything printed before the kill landed was acknowledged too.
        for line in lines.map_while(Result::ok) {
            if let Some(h) = Hash::from_hex(&line) {
                acknowledged.push(h);
            }
        }

        // A read-only open recovers the store if it must, then sees every acknowledged frame.
        let store = open(dir.path(), engine, true);
        for id in &acknowledged {
            assert!(
                store.frame(id).expect("read frame").is_some(),
                "{}: after kill {kill}, acknowledged frame {id} is missing",
                engine.name()
            );
        }
        let problems = store.validate().expect("validate");
        assert!(
            problems.is_empty(),
            "{}: after kill {kill}, validate found {problems:?}",
            engine.name()
        );
    }
    assert!(
        acknowledged.len() >= KILLS,
        "the children acknowledged only {} frames",
        acknowledged.len()
    );
}
