//! `ops::report`: the counts, stale frames and changes since an earlier root, in the one JSON
//! shape `merkle report --json` prints.
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::fixture::{Fixture, T0, WRITER};

#[test]
fn report_since_an_earlier_root_lists_the_changes_and_their_frames() {
    let fx = Fixture::new();
    let first = fx.store.root().expect("root").expect("scanned").to_hex();
    fx.edit("src/lib.rs", "pub fn answer() -> u32 { 43 }\n");
    let frame = fx.put("src/lib.rs", "notes", WRITER, "edited", T0);
    let now = fx.store.root().expect("root").expect("scanned").to_hex();

    let report = context::ops::report(&fx.store, Some(&first[..12])).expect("report");
    let file = |path: &str| json!({"path": path, "kind": "file"});
    let dir = |path: &str| json!({"path": path, "kind": "dir"});
    assert_eq!(
        report.json(),
        json!({
            "root": now,
            // six files; the root, docs, docs/drafts, empty, src and src/util
            "files": 6,
            "dirs": 6,
            "frames": 1,
            "stale": {},
            "stale_frames": [],
            "since": {
                "given": &first[..12],
                "root": first,
                "added": [],
                "removed": [],
                "changed": [dir(""), dir("src"), file("src/lib.rs")],
                "frames_added": [{
                    "path": "src/lib.rs",
                    "frame_type": "notes",
                    "agent_id": WRITER,
                    "frame_id": frame.to_hex(),
                }],
            },
        })
    );
    // Without `since`, the same document without its `since`.
    let plain = context::ops::report(&fx.store, None)
        .expect("report")
        .json();
    assert_eq!((plain.get("since"), &plain["root"]), (None, &json!(now)));
}

#[test]
fn a_name_that_is_neither_a_root_nor_a_revision_is_an_error_naming_it() {
    let fx = Fixture::new();
    let err = context::ops::report(&fx.store, Some("no-such-rev")).expect_err("not a tree");
    assert!(
        matches!(err, context::Error::Git { .. })
            && err.to_string().starts_with(
                "\"no-such-rev\" is neither a root hash of this store nor a git revision"
            ),
        "{err}"
    );
}
