//! `watch::events`: which file events may change the tree, and the paths they name.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use notify::event::{AccessKind, AccessMode, CreateKind, Flag, ModifyKind};
use notify::{Event, EventKind};
use pretty_assertions::assert_eq;
use watch::events::{is_relevant, note_paths};

const ROOT: &str = "/work/repo";
const STORE: &str = "/elsewhere/store";

fn event(kind: EventKind, paths: &[&str]) -> Event {
    let mut e = Event::new(kind);
    e.paths = paths.iter().map(PathBuf::from).collect();
    e
}

fn modified(paths: &[&str]) -> Event {
    event(EventKind::Modify(ModifyKind::Any), paths)
}

#[test]
fn reads_and_the_stores_and_gits_own_writes_change_nothing() {
    let check = |e: Event, expected: bool| {
        assert_eq!(
            is_relevant(&e, Path::new(ROOT), Path::new(STORE)),
            expected,
            "{e:?}"
        );
    };
    check(modified(&["/work/repo/src/lib.rs"]), true);
    check(
        event(EventKind::Create(CreateKind::File), &["/work/repo/new.rs"]),
        true,
    );
    check(
        event(
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            &["/work/repo/src/lib.rs"],
        ),
        true,
    );
    check(
        event(
            EventKind::Access(AccessKind::Open(AccessMode::Read)),
            &["/work/repo/src/lib.rs"],
        ),
        false,
    );
    check(modified(&["/work/repo/.merkle/data.redb"]), false);
    check(modified(&["/elsewhere/store/data.redb"]), false);
    check(modified(&["/work/repo/.git/index"]), false);
    check(modified(&["/work/repo/sub/.git/HEAD"]), false);
    check(modified(&["/work/repo/.git/info/exclude"]), true);
    // One path that matters is enough; an event naming none may be about anything.
    check(
        modified(&["/work/repo/.git/index", "/work/repo/src/lib.rs"]),
        true,
    );
    check(modified(&[]), true);
    check(
        modified(&["/work/repo/.git/index"]).set_flag(Flag::Rescan),
        true,
    );
}

#[test]
fn the_paths_an_event_names_are_noted_until_one_asks_for_everything() {
    let root = Path::new(ROOT);
    let mut touched = Some(BTreeSet::new());
    note_paths(
        &mut touched,
        &modified(&["/work/repo/src/lib.rs", "/work/repo/README.md"]),
        root,
    );
    note_paths(&mut touched, &modified(&["/work/repo"]), root);
    let noted: Vec<&str> = touched.iter().flatten().map(String::as_str).collect();
    assert_eq!(noted, ["", "README.md", "src/lib.rs"]);

    for everything in [
        modified(&["/outside/file"]),
        modified(&[]),
        modified(&["/work/repo/a"]).set_flag(Flag::Rescan),
    ] {
        let mut touched = Some(BTreeSet::from(["a".to_owned()]));
        note_paths(&mut touched, &everything, root);
        assert_eq!(touched, None, "{everything:?}");
        // Once everything is to be looked at, it stays so.
        note_paths(&mut touched, &modified(&["/work/repo/b"]), root);
        assert_eq!(touched, None);
    }
}

/// The watchers' settings ask the kernel for no read events: a file read, then a file made,
/// gives the made file's event with nothing before it about the read one (inotify keeps its
/// events in order), while a write to the read file is an event.
#[cfg(target_os = "linux")]
#[test]
fn the_watcher_hears_of_writes_and_not_of_reads() {
    use notify::Watcher;
    use std::time::Duration;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    std::fs::write(root.join("read.txt"), "read me\n").expect("write");
    let (tx, rx) = std::sync::mpsc::channel();
    let mut watcher = notify::RecommendedWatcher::new(
        move |e: notify::Result<Event>| {
            let _ = tx.send(e);
        },
        watch::events::watcher_config(),
    )
    .expect("watcher");
    watcher
        .watch(&root, notify::RecursiveMode::Recursive)
        .expect("watch");
    // Every event up to the one naming `marker`, which must come.
    let until = |marker: &Path| -> Vec<Event> {
        let mut seen = Vec::new();
        loop {
            let e = rx
                .recv_timeout(Duration::from_secs(10))
                .expect("the marker's event came")
                .expect("no watcher error");
            let done = e.paths.iter().any(|p| p == marker);
            seen.push(e);
            if done {
                return seen;
            }
        }
    };
    let read = root.join("read.txt");
    assert_eq!(std::fs::read_to_string(&read).expect("read"), "read me\n");
    std::fs::write(root.join("marker-1"), "").expect("marker");
    let seen = until(&root.join("marker-1"));
    assert!(
        !seen.iter().any(|e| e.paths.contains(&read)),
        "a read was an event: {seen:?}"
    );
    std::fs::write(&read, "written\n").expect("write");
    std::fs::write(root.join("marker-2"), "").expect("marker");
    let seen = until(&root.join("marker-2"));
    assert!(
        seen.iter()
            .any(|e| e.paths.contains(&read) && is_relevant(e, &root, Path::new(STORE))),
        "a write was no event: {seen:?}"
    );
}
