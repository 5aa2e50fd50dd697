//! The audit log: a sample log pinned by a snapshot, verify on an untouched log, and the first
//! bad record named on edited, reordered, truncated and torn ones.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use governance::audit::{
    Failure, GENESIS_HASH, HeadState, Problem, head_path, read_records, verify,
};
use governance::{
    AskMode, AuditLog, Decision, Governor, GovernorConfig, ManualClock, Outcome, Policy, Record,
    Reset, Session, VerifyReport, canonical_json,
};
use merkle_hash::Role;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::{call, select};

/// Writes the sample log of one conversation through a governor, as a dispatcher would: a
/// blocked call, a selection, an allowed call with an error result, a denied write and a call
/// the loop governor stopped. Returns the log's path.
fn sample(dir: &Path) -> PathBuf {
    let path = dir.join(".merkle").join("audit.jsonl");
    let log = AuditLog::open(&path, Box::new(ManualClock::new(1_767_225_600_000, 1_500)))
        .expect("the log opens");
    let policy = Policy::parse(
        "sample.yaml",
        &format!(
            "{}\nlimits:\n  repeat_calls: 2\n",
            governance::DEFAULT_POLICY_YAML
                .split("\nlimits:")
                .next()
                .expect("the default has limits")
        ),
    )
    .expect("the sample policy loads");
    let mut gov = Governor::new(
        Arc::new(policy),
        Session {
            conversation: "conv-1".to_owned(),
            agent: "alice".to_owned(),
            role: Role::Writer,
        },
        GovernorConfig {
            ask: AskMode::Refuse,
        },
    );
    gov.reset(Reset::NewRequest);
    let read = call("read_file", json!({"path": "src/lib.rs"}));
    let calls = [
        (read.clone(), Outcome::Ok),
        (select("ANALYZE"), Outcome::Ok),
        (read.clone(), Outcome::Error),
        (call("write_file", json!({"path": "a"})), Outcome::Ok),
        (read.clone(), Outcome::Ok),
        (read, Outcome::Ok),
    ];
    for (c, ran) in calls {
        if let Some(stop) = gov.before_call(&c) {
            log.append(&gov.audit_stop(&c, &stop))
                .expect("the record appends");
            break;
        }
        let decision = gov.decide(&c);
        let outcome = match decision {
            Decision::Deny { .. } => Outcome::Blocked,
            _ => ran,
        };
        log.append(&gov.audit_entry(&c, &decision, outcome))
            .expect("the record appends");
    }
    path
}

fn records(path: &Path) -> Vec<Record> {
    read_records(path).expect("the sample reads")
}

#[test]
fn a_sample_log_is_pinned() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = sample(dir.path());
    let log = std::fs::read_to_string(&path).expect("the log reads");
    let head = std::fs::read_to_string(head_path(&path)).expect("the head reads");
    insta::assert_snapshot!("audit_sample", format!("{log}--- audit.head\n{head}"));
}

#[test]
fn an_untouched_log_verifies() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = sample(dir.path());
    let records = records(&path);
    assert_eq!(
        verify(&path).expect("the log reads"),
        VerifyReport {
            records: 6,
            last_hash: records[5].hash.clone(),
            head: HeadState::Matches,
            failure: None,
        }
    );
    // Hashes are recomputed the way the module documents: over prev_hash and the canonical
    // record without `hash`.
    let mut value = serde_json::to_value(&records[2]).expect("serializes");
    value.as_object_mut().expect("an object").remove("hash");
    let hash =
        blake3::hash(format!("{}{}", records[2].prev_hash, canonical_json(&value)).as_bytes());
    assert_eq!(records[2].hash, hash.to_hex().to_string());
    assert_eq!(records[0].prev_hash, GENESIS_HASH);
}

#[test]
fn appends_continue_the_chain_across_opens_and_an_empty_log_verifies() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("audit.jsonl");
    let clock = || Box::new(ManualClock::new(0, 1));
    AuditLog::open(&path, clock()).expect("the log opens");
    assert_eq!(
        verify(&path).expect("the log reads"),
        VerifyReport {
            records: 0,
            last_hash: GENESIS_HASH.to_owned(),
            head: HeadState::Absent,
            failure: None,
        }
    );
    let gov = Governor::new(
        Arc::new(Policy::builtin()),
        Session {
            conversation: "c".to_owned(),
            agent: "a".to_owned(),
            role: Role::Reader,
        },
        GovernorConfig::default(),
    );
    let c = call("complete", json!({}));
    let entry = gov.audit_entry(
        &c,
        &Decision::Allow {
            rule: "control".to_owned(),
        },
        Outcome::Ok,
    );
    let first = AuditLog::open(&path, clock())
        .expect("the log opens")
        .append(&entry)
        .expect("appends");
    let second = AuditLog::open(&path, clock())
        .expect("the log opens again")
        .append(&entry)
        .expect("appends");
    assert_eq!(
        (first.seq, second.seq, second.prev_hash.clone()),
        (1, 2, first.hash)
    );
    assert_eq!(
        verify(&path).expect("the log reads"),
        VerifyReport {
            records: 2,
            last_hash: second.hash,
            head: HeadState::Matches,
            failure: None,
        }
    );
}

/// A way to damage the sample log: its lines (each without its newline), whether the file ends
/// with a newline, and the head file's text (`None`: removed).
struct Damaged {
    lines: Vec<String>,
    final_newline: bool,
    head: Option<String>,
}

fn edit_record(line: &str, edit: impl FnOnce(&mut Record)) -> String {
    let mut record: Record = serde_json::from_str(line).expect("a record");
    edit(&mut record);
    serde_json::to_string(&record).expect("serializes")
}

fn head_text(seq: u64, hash: &str) -> Option<String> {
    Some(format!("{{\"seq\":{seq},\"hash\":\"{hash}\"}}\n"))
}

/// Damages the sample with `damage` and returns what verify says and what the sample's records
/// were.
fn verify_damaged(damage: impl FnOnce(&mut Damaged)) -> (VerifyReport, Vec<Record>) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = sample(dir.path());
    let records = records(&path);
    let text = std::fs::read_to_string(&path).expect("the log reads");
    let mut d = Damaged {
        lines: text.lines().map(str::to_owned).collect(),
        final_newline: true,
        head: std::fs::read_to_string(head_path(&path)).ok(),
    };
    damage(&mut d);
    let mut text = d.lines.join("\n");
    if d.final_newline {
        text.push('\n');
    }
    std::fs::write(&path, text).expect("the log writes");
    match d.head {
        Some(head) => std::fs::write(head_path(&path), head).expect("the head writes"),
        None => std::fs::remove_file(head_path(&path)).expect("the head is removed"),
    }
    (verify(&path).expect("the log reads"), records)
}

fn failed(records: u64, last_hash: &str, head: HeadState, failure: Failure) -> VerifyReport {
    VerifyReport {
        records,
        last_hash: last_hash.to_owned(),
        head,
        failure: Some(failure),
    }
}

#[test]
fn an_edited_record_is_named() {
    let (report, r) = verify_damaged(|d| {
        d.lines[2] = edit_record(&d.lines[2], |rec| rec.outcome = Outcome::Ok);
    });
    let mut edited = r[2].clone();
    edited.outcome = Outcome::Ok;
    assert_eq!(
        report,
        failed(
            2,
            &r[1].hash,
            HeadState::NotChecked,
            Failure {
                line: 3,
                seq: Some(3),
                problem: Problem::Hash {
                    expected: edited.compute_hash(),
                    found: r[2].hash.clone(),
                },
            }
        )
    );
    assert_eq!(
        report.failure.expect("a failure").to_string(),
        format!(
            "line 3 (seq 3): hash {} does not match the record's content ({}): the record was \
             edited",
            r[2].hash,
            edited.compute_hash()
        )
    );
}

#[test]
fn an_edited_and_rehashed_record_breaks_the_next_link() {
    let (report, r) = verify_damaged(|d| {
        d.lines[2] = edit_record(&d.lines[2], |rec| {
            rec.outcome = Outcome::Ok;
            rec.hash = rec.compute_hash();
        });
    });
    let mut edited = r[2].clone();
    edited.outcome = Outcome::Ok;
    assert_eq!(
        report,
        failed(
            3,
            &edited.compute_hash(),
            HeadState::NotChecked,
            Failure {
                line: 4,
                seq: Some(4),
                problem: Problem::PrevHash {
                    expected: edited.compute_hash(),
                    found: r[2].hash.clone(),
                },
            }
        )
    );
}

#[test]
fn reordered_records_are_named() {
    let (report, r) = verify_damaged(|d| d.lines.swap(1, 2));
    assert_eq!(
        report,
        failed(
            1,
            &r[0].hash,
            HeadState::NotChecked,
            Failure {
                line: 2,
                seq: Some(3),
                problem: Problem::Seq {
                    expected: 2,
                    found: 3
                },
            }
        )
    );
}

#[test]
fn a_record_removed_from_the_middle_is_named() {
    let (report, r) = verify_damaged(|d| {
        d.lines.remove(2);
    });
    assert_eq!(
        report,
        failed(
            2,
            &r[1].hash,
            HeadState::NotChecked,
            Failure {
                line: 3,
                seq: Some(4),
                problem: Problem::Seq {
                    expected: 3,
                    found: 4
                },
            }
        )
    );
}

#[test]
fn a_log_truncated_at_the_end_is_caught_by_its_head() {
    let (report, r) = verify_damaged(|d| {
        d.lines.truncate(4);
    });
    assert_eq!(
        report,
        failed(
            4,
            &r[3].hash,
            HeadState::Bad,
            Failure {
                line: 5,
                seq: Some(5),
                problem: Problem::Truncated { head_seq: 6 },
            }
        )
    );
}

#[test]
fn a_torn_last_line_is_reported() {
    let (report, r) = verify_damaged(|d| {
        let last = d.lines.pop().expect("a last line");
        d.lines.push(last[..last.len() / 2].to_owned());
        d.final_newline = false;
    });
    assert_eq!(
        report,
        failed(
            5,
            &r[4].hash,
            HeadState::NotChecked,
            Failure {
                line: 6,
                seq: None,
                problem: Problem::Torn,
            }
        )
    );
}

#[test]
fn a_line_that_is_not_a_record_is_named() {
    let (report, r) = verify_damaged(|d| d.lines[1] = "{\"seq\": 2}".to_owned());
    assert_eq!(
        report,
        failed(
            1,
            &r[0].hash,
            HeadState::NotChecked,
            Failure {
                line: 2,
                seq: None,
                problem: Problem::NotARecord {
                    message: "missing field `time` at line 1 column 10".to_owned()
                },
            }
        )
    );
}

#[test]
fn the_head_file_is_checked_against_the_end() {
    // Removed beside records: truncation could not be seen, so it fails.
    let (report, r) = verify_damaged(|d| d.head = None);
    assert_eq!(
        report,
        failed(
            6,
            &r[5].hash,
            HeadState::Bad,
            Failure {
                line: 7,
                seq: None,
                problem: Problem::HeadMissing,
            }
        )
    );
    // One record behind: a crash between the log's sync and the head's rename.
    let (report, r) = verify_damaged(|d| {
        let r4: Record = serde_json::from_str(&d.lines[4]).expect("a record");
        d.head = head_text(5, &r4.hash);
    });
    assert_eq!(
        report,
        VerifyReport {
            records: 6,
            last_hash: r[5].hash.clone(),
            head: HeadState::OneBehind,
            failure: None,
        }
    );
    // The whole log removed, the head left: everything was truncated.
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = sample(dir.path());
    std::fs::remove_file(&path).expect("the log is removed");
    assert_eq!(
        verify(&path).expect("a missing log reads as empty"),
        failed(
            0,
            GENESIS_HASH,
            HeadState::Bad,
            Failure {
                line: 1,
                seq: Some(1),
                problem: Problem::Truncated { head_seq: 6 },
            }
        )
    );
    // Naming a record the log does not hold: the log was replaced.
    let (report, r) = verify_damaged(|d| d.head = head_text(6, GENESIS_HASH));
    assert_eq!(
        report,
        failed(
            6,
            &r[5].hash,
            HeadState::Bad,
            Failure {
                line: 7,
                seq: None,
                problem: Problem::HeadMismatch {
                    head_seq: 6,
                    head_hash: GENESIS_HASH.to_owned(),
                },
            }
        )
    );
}

#[test]
fn appends_refuse_to_chain_onto_a_torn_or_truncated_log() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = sample(dir.path());
    let text = std::fs::read_to_string(&path).expect("the log reads");
    let lines: Vec<&str> = text.lines().collect();
    let open_error = |content: String| {
        std::fs::write(&path, content).expect("the log writes");
        AuditLog::open(&path, Box::new(ManualClock::new(0, 1)))
            .err()
            .map(|e| e.to_string())
    };
    let shown = path.display();
    let head = head_path(&path);
    assert_eq!(
        [
            open_error(format!("{}\n{}", lines[..5].join("\n"), &lines[5][..20])),
            open_error(format!("{}\n", lines[..4].join("\n"))),
            open_error(text.clone()),
        ],
        [
            Some(format!(
                "audit log {shown} ends with a torn record (an append was cut off); run `merkle \
                 audit verify`"
            )),
            Some(format!(
                "audit log {shown} does not match its head file {}: the head names seq 6 but \
                 the log ends at seq 4; run `merkle audit verify`",
                head.display()
            )),
            None,
        ]
    );
}

#[test]
fn the_head_sits_beside_the_log() {
    assert_eq!(
        head_path(Path::new(".merkle/audit.jsonl")),
        PathBuf::from(".merkle/audit.head")
    );
}

#[test]
fn canonical_json_sorts_keys_and_drops_whitespace() {
    let value = json!({"b": [1, {"z": null, "a": "x\"y"}], "a": 1.5, "é": true});
    assert_eq!(
        canonical_json(&value),
        r#"{"a":1.5,"b":[1,{"a":"x\"y","z":null}],"é":true}"#
    );
    assert_eq!(
        governance::args_hash(&value),
        blake3::hash(canonical_json(&value).as_bytes())
            .to_hex()
            .to_string()
    );
}

#[test]
fn a_started_call_without_an_outcome_after_it_is_unfinished() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::open(&path, Box::new(ManualClock::new(1_767_225_600_000, 10)))
        .expect("the log opens");
    let mut gov = Governor::new(
        Arc::new(Policy::builtin()),
        Session {
            conversation: "c".to_owned(),
            agent: "alice".to_owned(),
            role: Role::Writer,
        },
        GovernorConfig {
            ask: AskMode::Refuse,
        },
    );
    gov.reset(Reset::NewRequest);
    let chosen = select("ANALYZE");
    let decision = gov.decide(&chosen);
    log.append(&gov.audit_entry(&chosen, &decision, Outcome::Ok))
        .expect("append");
    let read = |path: &str| call("read_file", json!({ "path": path }));
    // a.rs starts and is cut off, b.rs too; a.rs is run again and finishes; c.rs finishes.
    for (c, outcome) in [
        (read("a.rs"), Outcome::Started),
        (read("b.rs"), Outcome::Started),
        (read("a.rs"), Outcome::Started),
        (read("a.rs"), Outcome::Ok),
        (read("c.rs"), Outcome::Started),
        (read("c.rs"), Outcome::Error),
        // b.rs asked for again and refused: it did not run, so it completes nothing.
        (read("b.rs"), Outcome::Declined),
    ] {
        let decision = gov.decide(&c);
        log.append(&gov.audit_entry(&c, &decision, outcome))
            .expect("append");
    }
    // Calls run one at a time: the outcome is the second a.rs run's, the first was cut off.
    assert_eq!(governance::unfinished(&records(&path)), [2, 3]);
    assert!(verify(&path).expect("verify").ok());
}
