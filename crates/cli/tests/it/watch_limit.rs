//! Under a kernel limit of inotify watches lower than the tree's folders (lowered for the test's
//! own processes only, [`crate::merkle_with_watch_limit`]): `merkle watch` says so once, with
//! the sysctl that raises it, watches what fits and keeps running; it vouches for the tree but
//! for the folders it could not watch, which every read checks by their stats, so no read
//! answers stale, and folders made afterwards are counted unwatched too. A read that rescans
//! changes there tells the watch, which vouches for the tree again. Where the kernel allows
//! fanotify marks too, they watch what inotify could not, and only the rest is checked.
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::{Workspace, merkle_with_watch_limits, stdout_lines};

/// The watches the tests allow: fewer than [`wide`]'s folders.
pub(crate) const LIMIT: u32 = 8;
/// The fanotify marks they allow: the barrier folder's and two more, far fewer than the
/// folders inotify leaves.
const MARKS: u32 = 3;

/// The fixture with 30 folders more, scanned.
pub(crate) fn wide() -> Workspace {
    let ws = Workspace::scanned();
    for i in 0..30 {
        ws.write(&format!("wide/f{i}/note.md"), &format!("note {i}\n"));
    }
    ws.ok(&["scan"]);
    ws
}

/// What the watch vouches for once it vouches for `want` (the store's root), polled: the
/// folders it does not watch.
fn unwatched_once_vouched(ws: &Workspace, want: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = watch::vouch::vouched(&ws.root.join(".merkle"));
        match got {
            Some((root, unwatched)) if root.to_hex() == want => return unwatched,
            _ if Instant::now() > deadline => panic!("the watch vouched for {got:?}, not {want}"),
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// The folders of the tree (but the store's), workspace-relative.
fn folders(ws: &Workspace) -> Vec<String> {
    let mut found = Vec::new();
    let mut open = vec![ws.root.clone()];
    while let Some(dir) = open.pop() {
        for entry in std::fs::read_dir(&dir).expect("listing a folder").flatten() {
            let path = entry.path();
            if path.is_dir() && entry.file_name() != ".merkle" {
                let rel = path
                    .strip_prefix(&ws.root)
                    .expect("inside")
                    .to_string_lossy();
                found.push(rel.into_owned());
                open.push(path);
            }
        }
    }
    found
}

/// `merkle --json watch` on `ws` under [`LIMIT`] watches and [`MARKS`] fanotify marks,
/// rescanning 2 s after a change (the searches right after an edit find the store free and
/// rescan it themselves, as a read does beside a watch between its rescans); and the file its
/// stderr goes to.
fn limited_watch(ws: &Workspace) -> (Watching, std::path::PathBuf) {
    watch_under_both(ws, LIMIT, MARKS)
}

/// [`limited_watch`] under `limit` watches.
fn watch_under(ws: &Workspace, limit: u32) -> (Watching, std::path::PathBuf) {
    watch_under_both(ws, limit, 0)
}

/// [`limited_watch`] under `limit` inotify watches and `marks` fanotify marks.
fn watch_under_both(ws: &Workspace, limit: u32, marks: u32) -> (Watching, std::path::PathBuf) {
    let stderr = ws.tmp.path().join("watch.stderr");
    let child = merkle_with_watch_limits(limit, marks)
        .arg("--root")
        .arg(&ws.root)
        .args(["--json", "watch", "--debounce-ms", "2000"])
        .env("HOME", ws.tmp.path().join("home"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&stderr).expect("creating the stderr file"))
        .spawn()
        .expect("running unshare (an unprivileged user namespace)");
    (Watching(child), stderr)
}

/// A running watch, stopped when dropped (also when a test fails before it stops it).
struct Watching(std::process::Child);

impl std::ops::Deref for Watching {
    type Target = std::process::Child;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Watching {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Asserts that what a watcher said at its start (`said`) names fanotify watching the folders
/// inotify could not, and no folder left to be checked by its stats.
pub(crate) fn fanotify_took_the_rest(said: &str) {
    assert!(
        said.contains("are watched through fanotify instead"),
        "{said}"
    );
    assert!(!said.contains("checks them by their stats"), "{said}");
}

fn root_of(ws: &Workspace) -> String {
    ws.json(&["status"])["root"]
        .as_str()
        .expect("a root")
        .to_owned()
}

#[test]
fn watch_says_the_limit_once_watches_what_fits_and_reads_check_the_rest() {
    let ws = wide();
    let (mut child, stderr) = limited_watch(&ws);
    let lines = stdout_lines(&mut child);
    let said = || std::fs::read_to_string(&stderr).expect("reading its stderr");
    let first = lines.recv_timeout(Duration::from_secs(30));
    assert!(matches!(first, Ok(Some(_))), "{first:?}; {}", said());
    assert_eq!(child.try_wait().expect("waiting"), None, "{}", said());
    let text = said();
    assert!(
        text.contains(&format!("fs.inotify.max_user_watches = {LIMIT})")),
        "{text}"
    );
    assert!(
        text.contains(
            "every read checks them by their stats instead; raise the limit with \
             `sudo sysctl fs.inotify.max_user_watches="
        ),
        "{text}"
    );
    assert_eq!(text.matches("max_user_watches = ").count(), 1, "{text}");

    // It vouches for the tree but for some folders: the root and others are watched.
    let unwatched = unwatched_once_vouched(&ws, &root_of(&ws));
    assert!(!unwatched.is_empty() && !unwatched.contains(&String::new()));
    let covered = |f: &str| {
        !unwatched
            .iter()
            .any(|u| f == u || f.starts_with(&format!("{u}/")))
    };
    let watched: Vec<String> = folders(&ws).into_iter().filter(|f| covered(f)).collect();
    assert!(!watched.is_empty(), "{unwatched:?}");

    // An edit below a folder it does not watch: the next read checks that folder and finds it.
    let edited = format!("{}/zebra.md", unwatched[0]);
    ws.write(&edited, "zebraword\n");
    let hits = ws.json(&["search", "zebraword"]);
    assert_eq!(hits[0]["path"], json!(edited), "{hits}");
    // An edit in a watched folder, and a folder made after the limit was reached (left out).
    let watched_file = format!("{}/yak.md", watched[0]);
    ws.write(&watched_file, "yakword\n");
    ws.write("made/later/new.md", "gnuword\n");
    for (word, path) in [
        ("yakword", &watched_file),
        ("gnuword", &"made/later/new.md".into()),
    ] {
        let hits = ws.json(&["search", word]);
        assert_eq!(hits[0]["path"], json!(path), "{word}: {hits}");
    }
    let unwatched = unwatched_once_vouched(&ws, &root_of(&ws));
    assert!(unwatched.contains(&"made".to_owned()), "{unwatched:?}");
    ws.write("made/later/new.md", "okapiword\n");
    let hits = ws.json(&["search", "okapiword"]);
    assert_eq!(hits[0]["path"], json!("made/later/new.md"), "{hits}");
    // A read that rescanned below a folder not watched tells the watch, which rescans it
    // too and vouches for the store's tree again.
    unwatched_once_vouched(&ws, &root_of(&ws));
    let _ = child.kill();
    let _ = child.wait();
    ws.assert_valid();
    assert_eq!(
        said().matches("max_user_watches = ").count(),
        1,
        "{}",
        said()
    );
}

#[test]
fn fanotify_marks_watch_what_inotify_cannot_and_reads_then_check_nothing() {
    let ws = wide();
    let (mut child, stderr) = watch_under_both(&ws, LIMIT, 1000);
    let lines = stdout_lines(&mut child);
    let said = || std::fs::read_to_string(&stderr).expect("reading its stderr");
    let first = lines.recv_timeout(Duration::from_secs(30));
    assert!(matches!(first, Ok(Some(_))), "{first:?}; {}", said());
    let text = said();
    assert!(
        text.contains(&format!("fs.inotify.max_user_watches = {LIMIT})")),
        "{text}"
    );
    fanotify_took_the_rest(&text);
    // Every folder watched by one queue or the other: the watch vouches for the whole tree.
    assert_eq!(
        unwatched_once_vouched(&ws, &root_of(&ws)),
        Vec::<String>::new()
    );
    // Edits in every folder, most of them watched through fanotify: each read sees them, with
    // no folder checked by its stats.
    for i in 0..30 {
        ws.write(&format!("wide/f{i}/note.md"), &format!("note marmot{i}\n"));
    }
    for i in [29, 17, 3] {
        let hits = ws.json(&["search", &format!("marmot{i}")]);
        assert_eq!(
            hits[0]["path"],
            json!(format!("wide/f{i}/note.md")),
            "{hits}"
        );
    }
    // A folder made in a marked folder (left out, as any made once the limit was reached) and
    // its attributes changed, which fanotify reports by that folder's own handle: the watch
    // still vouches, naming the new folder for reads to check.
    std::fs::create_dir(ws.root.join("wide/f21/fresh")).expect("mkdir");
    ws.write("wide/f21/fresh/fresh.md", "ibexword\n");
    let fresh = ws.root.join("wide/f21/fresh");
    let mut mode = std::fs::metadata(&fresh).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o750);
    std::fs::set_permissions(&fresh, mode).expect("chmod");
    let hits = ws.json(&["search", "ibexword"]);
    assert_eq!(hits[0]["path"], json!("wide/f21/fresh/fresh.md"), "{hits}");
    assert_eq!(
        unwatched_once_vouched(&ws, &root_of(&ws)),
        ["wide/f21/fresh"]
    );
    // A file made and removed in a marked folder, once the watch rescanned.
    let root = root_of(&ws);
    assert_eq!(unwatched_once_vouched(&ws, &root), ["wide/f21/fresh"]);
    ws.write("wide/f23/gone.md", "walrusword\n");
    let hits = ws.json(&["search", "walrusword"]);
    assert_eq!(hits[0]["path"], json!("wide/f23/gone.md"), "{hits}");
    std::fs::remove_file(ws.root.join("wide/f23/gone.md")).expect("removing");
    assert_eq!(ws.json(&["search", "walrusword"]), json!([]));
    let _ = child.kill();
    let _ = child.wait();
    ws.assert_valid();
}

#[test]
fn under_the_limit_the_ignore_rules_in_git_info_are_still_watched() {
    // Folder by folder every folder of the tree fits, but not with `.git`'s: the watch goes
    // folder by folder, and `.git/info` (whose `exclude` decides what is ignored) is one of them.
    let ws = Workspace::scanned();
    for i in 0..20 {
        std::fs::create_dir_all(ws.root.join(format!(".git/objects/{i:02}"))).expect("mkdir");
    }
    let (mut child, stderr) = limited_watch(&ws);
    let lines = stdout_lines(&mut child);
    let said = || std::fs::read_to_string(&stderr).expect("reading its stderr");
    let first = lines.recv_timeout(Duration::from_secs(30));
    assert!(matches!(first, Ok(Some(_))), "{first:?}; {}", said());
    assert!(said().contains("max_user_watches = "), "{}", said());
    assert_eq!(
        unwatched_once_vouched(&ws, &root_of(&ws)),
        Vec::<String>::new()
    );
    assert_eq!(ws.json(&["search", "TOKEN"]), json!([]));
    // `local.env` no longer excluded: the next read sees it.
    ws.write(".git/info/exclude", "\n");
    let hits = ws.json(&["search", "TOKEN"]);
    assert_eq!(hits[0]["path"], json!("local.env"), "{hits}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_tree_far_over_the_limit_is_fitted_without_losing_an_event() {
    // A try at watching a subtree whole that fails drops the watches it made, and the kernel
    // queues an event for each one dropped: more than its queue holds, and the watch lost
    // events while it started and vouched for nothing ever after. Subtrees are counted first.
    let queue: u32 = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .expect("reading the kernel's queue of inotify events")
        .trim()
        .parse()
        .expect("a number");
    let ws = Workspace::scanned();
    for i in 0..=queue / 100 + 10 {
        for j in 0..100 {
            std::fs::create_dir_all(ws.root.join(format!("wide/a{i}/b{j}"))).expect("mkdir");
        }
    }
    ws.ok(&["scan"]);
    let (mut child, stderr) = watch_under(&ws, queue + 500);
    let lines = stdout_lines(&mut child);
    let said = || std::fs::read_to_string(&stderr).expect("reading its stderr");
    let first = lines.recv_timeout(Duration::from_secs(60));
    assert!(matches!(first, Ok(Some(_))), "{first:?}; {}", said());
    let unwatched = unwatched_once_vouched(&ws, &root_of(&ws));
    assert!(
        !unwatched.is_empty() && unwatched.iter().all(|u| u.starts_with("wide/")),
        "{unwatched:?}"
    );
    // No rescan of everything after the first: no event was lost.
    assert_eq!(
        lines.recv_timeout(Duration::from_secs(3)),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout),
        "{}",
        said()
    );
}
