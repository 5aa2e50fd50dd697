//! Storage: atomic JSON, durable JSON Lines, and recovery from torn and corrupt lines.
use std::fs;
use std::path::Path;

use agent_loop::storage::{
    append_jsonl, append_jsonl_all, read_all_jsonl, read_json, recover_jsonl, write_json,
    write_jsonl,
};
use agent_loop::{Damage, Error, Jsonl, Quarantine, TornTail};
use pretty_assertions::assert_eq;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    n: u32,
    text: String,
}

fn entry(n: u32) -> Entry {
    Entry {
        n,
        text: format!("entry {n}\nwith a newline"),
    }
}

fn line(n: u32) -> String {
    format!("{}\n", serde_json::to_string(&entry(n)).expect("encode"))
}

/// Names in `dir`, sorted: temporary files must never be left behind.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn json_round_trips_atomically() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("meta.json");
    write_json(&path, &entry(1)).expect("write");
    write_json(&path, &entry(2)).expect("rewrite");
    assert_eq!(read_json::<Entry>(&path).expect("read"), entry(2));
    assert_eq!(names(dir.path()), ["meta.json"]);
}

#[test]
fn reading_a_missing_file_is_not_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("absent.json");
    assert!(matches!(read_json::<Entry>(&path), Err(Error::NotFound { path: p }) if p == path));
    assert!(matches!(
        read_all_jsonl::<Entry>(&path),
        Err(Error::NotFound { .. })
    ));
}

#[test]
fn corrupt_json_names_file_and_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("meta.json");
    fs::write(&path, "{\n  \"n\": 1,\n  \"text\": oops\n}\n").expect("write");
    let err = read_json::<Entry>(&path).expect_err("corrupt");
    assert!(matches!(&err, Error::Corrupt { line: 3, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{} is corrupt at line 3: expected value (column 11)",
            path.display()
        )
    );
}

#[test]
fn appends_and_reads_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    assert_eq!(append_jsonl(&path, &entry(1)).expect("append"), None);
    append_jsonl_all(&path, &[entry(2), entry(3)]).expect("append all");
    assert_eq!(
        read_all_jsonl::<Entry>(&path).expect("read"),
        Jsonl {
            entries: vec![entry(1), entry(2), entry(3)],
            damage: None
        }
    );
    assert_eq!(
        fs::read_to_string(&path).expect("read"),
        line(1) + &line(2) + &line(3)
    );
}

#[test]
fn write_jsonl_replaces_the_whole_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    append_jsonl_all(&path, &[entry(1), entry(2)]).expect("append");
    write_jsonl(&path, &[entry(7)]).expect("rewrite");
    assert_eq!(fs::read_to_string(&path).expect("read"), line(7));
    write_jsonl::<Entry>(&path, &[]).expect("empty");
    assert_eq!(fs::read_to_string(&path).expect("read"), "");
    assert_eq!(names(dir.path()), ["t.jsonl"]);
}

#[test]
fn blank_lines_are_skipped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    fs::write(&path, line(1) + "\n  \n" + &line(2)).expect("write");
    let read = read_all_jsonl::<Entry>(&path).expect("read");
    assert_eq!(read.entries, [entry(1), entry(2)]);
}

#[test]
fn a_torn_tail_is_skipped_by_readers_and_cut_before_the_next_append() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    let intact = line(1) + &line(2);
    let torn = &line(3)[..10];
    fs::write(&path, intact.clone() + torn).expect("write");
    let expected_tail = TornTail {
        path: path.clone(),
        offset: intact.len() as u64,
        bytes: 10,
    };

    // Reading reports it and leaves the file alone.
    assert_eq!(
        read_all_jsonl::<Entry>(&path).expect("read"),
        Jsonl {
            entries: vec![entry(1), entry(2)],
            damage: Some(Damage::TornTail(expected_tail.clone()))
        }
    );
    assert_eq!(
        fs::read_to_string(&path).expect("read"),
        intact.clone() + torn
    );

    // Appending cuts it off first and says so.
    assert_eq!(
        append_jsonl(&path, &entry(4)).expect("append"),
        Some(expected_tail)
    );
    assert_eq!(fs::read_to_string(&path).expect("read"), intact + &line(4));
}

#[test]
fn a_torn_only_line_is_cut_to_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    fs::write(&path, "{\"n\":").expect("write");
    let cut = append_jsonl(&path, &entry(1)).expect("append");
    assert_eq!(
        cut,
        Some(TornTail {
            path: path.clone(),
            offset: 0,
            bytes: 5
        })
    );
    assert_eq!(fs::read_to_string(&path).expect("read"), line(1));
}

#[test]
fn a_torn_tail_longer_than_a_read_chunk_is_cut_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    let torn = "x".repeat(200_000);
    fs::write(&path, line(1) + &torn).expect("write");
    let cut = append_jsonl(&path, &entry(2))
        .expect("append")
        .expect("cut");
    assert_eq!((cut.offset, cut.bytes), (line(1).len() as u64, 200_000));
    assert_eq!(fs::read_to_string(&path).expect("read"), line(1) + &line(2));
}

#[test]
fn recovery_cuts_a_torn_tail() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    fs::write(&path, line(1) + "{\"n\": 2, \"te").expect("write");
    let recovered = recover_jsonl::<Entry>(&path).expect("recover");
    assert_eq!(recovered.entries, [entry(1)]);
    assert!(matches!(
        recovered.damage,
        Some(Damage::TornTail(TornTail { bytes: 12, .. }))
    ));
    assert_eq!(fs::read_to_string(&path).expect("read"), line(1));
    // Repaired: the next recovery finds nothing.
    assert_eq!(recover_jsonl::<Entry>(&path).expect("again").damage, None);
}

#[test]
fn a_corrupt_middle_line_is_an_error_for_readers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    fs::write(&path, line(1) + "not json\n" + &line(3)).expect("write");
    let err = read_all_jsonl::<Entry>(&path).expect_err("corrupt");
    assert!(
        matches!(&err, Error::Corrupt { path: p, line: 2, .. } if *p == path),
        "{err:?}"
    );
}

#[test]
fn recovery_quarantines_a_corrupt_middle_line_and_keeps_the_good_prefix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    let original = line(1) + &line(2) + "{\"n\": \"two\"}\n" + &line(4) + "\n" + &line(5);
    fs::write(&path, &original).expect("write");

    let recovered = recover_jsonl::<Entry>(&path).expect("recover");
    let copy = dir.path().join("t.jsonl.corrupt");
    assert_eq!(recovered.entries, [entry(1), entry(2)]);
    let Some(Damage::Quarantined(quarantine)) = recovered.damage else {
        panic!("expected a quarantine, got {:?}", recovered.damage);
    };
    assert_eq!(
        quarantine,
        Quarantine {
            path: path.clone(),
            copy: copy.clone(),
            line: 3,
            reason: quarantine.reason.clone(),
            kept: 2,
            dropped_lines: 3,
        }
    );
    assert!(
        quarantine.reason.contains("invalid type"),
        "{}",
        quarantine.reason
    );
    // Nothing is lost: the copy is the whole original; the file keeps the good prefix.
    assert_eq!(fs::read_to_string(&copy).expect("copy"), original);
    assert_eq!(fs::read_to_string(&path).expect("kept"), line(1) + &line(2));
    assert!(Damage::Quarantined(quarantine).to_string().contains(
        "only the 2 entries before that line were kept (3 later lines are only in the copy)"
    ));

    // A second quarantine does not overwrite the first copy.
    fs::write(&path, line(1) + "garbage\n").expect("write");
    let again = recover_jsonl::<Entry>(&path).expect("recover");
    let Some(Damage::Quarantined(second)) = again.damage else {
        panic!("expected a quarantine");
    };
    assert_eq!(second.copy, dir.path().join("t.jsonl.corrupt.2"));
    assert_eq!(fs::read_to_string(&copy).expect("copy"), original);
}
