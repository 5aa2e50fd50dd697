//! `mcp::events`: which file events may change the tree, and the paths they name.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use mcp::events::{is_relevant, note_paths};
use notify::event::{AccessKind, AccessMode, CreateKind, Flag, ModifyKind};
use notify::{Event, EventKind};
use pretty_assertions::assert_eq;

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
