//! A damaged store and a store opened with the other engine: every command fails with an error
//! naming the store file or the engine the store holds, never a panic or a second store.
use pretty_assertions::assert_eq;

use crate::Workspace;

/// Overwrites the store file after its first 4 KiB (redb's header page) with garbage, keeping
/// its length.
fn garble_after_header(ws: &Workspace) {
    let path = ws.path(".merkle/store.redb");
    let mut bytes = std::fs::read(&path).expect("read store file");
    let mut x: u32 = 0x9e37_79b9;
    for b in bytes.iter_mut().skip(4096) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *b = x as u8;
    }
    std::fs::write(&path, &bytes).expect("write store file");
}

#[test]
fn a_garbled_store_file_is_reported_damaged_by_every_command() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "w", "--role", "writer"]);
    ws.ok(&[
        "put-frame",
        "README.md",
        "-",
        "--type",
        "note",
        "--agent",
        "w",
    ]);
    garble_after_header(&ws);
    let file = ws.path(".merkle/store.redb");
    for args in [
        &["validate"][..],
        &["status"],
        &["get-node", "README.md"],
        &["list-nodes"],
        &["agent", "list"],
        &["scan"],
    ] {
        let r = ws.run(args);
        assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{args:?}: {r}");
        assert!(
            r.stderr.starts_with(&format!(
                "error: the store file {} is damaged (redb: ",
                file.display()
            )) && !r.stderr.contains("panicked"),
            "{args:?}: {r}"
        );
    }
}

#[test]
fn the_other_engine_is_refused_with_the_engine_the_store_holds() {
    let ws = Workspace::scanned();
    let before = ws.store_state();
    for args in [
        &["--engine", "sled", "status"][..],
        &["--engine", "sled", "scan"],
    ] {
        let r = ws.run(args);
        assert_eq!(r.code, 1, "{r}");
        let message = format!(
            "error: the store {} holds a redb store, not sled: leave out --engine, or pass \
             --engine redb\n",
            ws.path(".merkle").display()
        );
        // Checked before the engine is looked for, so with or without the sled feature.
        assert_eq!(r.stderr, message);
    }
    assert_eq!(ws.store_state(), before);
}
