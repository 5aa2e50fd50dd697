//! The governance commands: `merkle policy show|check` and `merkle audit show|verify`.
//!
//! JSON output: `policy show` prints `{source, policy}` (the policy as its file's fields);
//! `policy check` prints `{file, ok, examples}`; `audit show` prints the records as the log holds
//! them; `audit verify` prints `{path, ok, records, last_hash, head, failure}`.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use governance::Policy;
use governance::audit::{self, HeadState, Record};
use serde_json::json;

use crate::output::{Out, rfc3339};

/// `merkle policy ...`
#[derive(Subcommand, Debug)]
pub(crate) enum PolicyCommand {
    /// Print the effective intent -> tools matrix, the rules and the limits of a policy
    Show {
        /// A policy file [default: the built-in policy]
        file: Option<PathBuf>,
    },
    /// Load a policy file and run its examples; fails naming the first that contradicts it
    Check {
        /// The policy file
        file: PathBuf,
    },
}

/// `merkle audit ...`
#[derive(Subcommand, Debug)]
pub(crate) enum AuditCommand {
    /// Show the records of the workspace's audit log (.merkle/audit.jsonl), oldest first
    Show {
        /// Only the records of this conversation
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
    },
    /// Check the audit log's hash chain and its head file; exit 1 naming the first bad record
    Verify,
}

/// The workspace's audit log. Its head file sits beside it (`audit.head`).
pub(crate) fn audit_path(root: &Path) -> PathBuf {
    root.join(".merkle").join("audit.jsonl")
}

pub(crate) fn run_policy(cmd: &PolicyCommand, out_json: bool) -> Result<ExitCode> {
    let mut out = Out::new(out_json);
    match cmd {
        PolicyCommand::Show { file } => {
            let (source, policy) = match file {
                Some(path) => (path.display().to_string(), Policy::load(path)?),
                None => ("built-in".to_owned(), Policy::builtin()),
            };
            out.value(
                json!({"source": source, "policy": policy}),
                format!("policy: {source}\n\n{}", policy.render().trim_end()),
            );
        }
        PolicyCommand::Check { file } => {
            let policy = Policy::load(file)?;
            let n = policy.examples.len();
            out.value(
                json!({"file": file.display().to_string(), "ok": true, "examples": n}),
                format!(
                    "{}: ok, {n} example{} pass",
                    file.display(),
                    if n == 1 { "" } else { "s" }
                ),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run_audit(cmd: &AuditCommand, root: &Path, out_json: bool) -> Result<ExitCode> {
    let mut out = Out::new(out_json);
    let path = audit_path(root);
    match cmd {
        AuditCommand::Show { conversation } => {
            let records: Vec<Record> = if path.exists() {
                audit::read_records(&path)?
            } else {
                Vec::new()
            };
            let records: Vec<Record> = records
                .into_iter()
                .filter(|r| conversation.as_ref().is_none_or(|c| *c == r.conversation))
                .collect();
            let text = if records.is_empty() {
                format!("no audit records in {}", path.display())
            } else {
                records_table(&records)
            };
            out.value(json!(records), text);
        }
        AuditCommand::Verify => {
            let report = audit::verify(&path)?;
            let mut json = json!({"path": path.display().to_string(), "ok": report.ok()});
            if let (Some(map), Ok(serde_json::Value::Object(fields))) =
                (json.as_object_mut(), serde_json::to_value(&report))
            {
                map.extend(fields);
            }
            let text = match &report.failure {
                Some(failure) => format!(
                    "{}: FAILED at {failure}\n{} record{} verified before it",
                    path.display(),
                    report.records,
                    if report.records == 1 { "" } else { "s" }
                ),
                None => format!(
                    "{}: ok, {} record{}, {}",
                    path.display(),
                    report.records,
                    if report.records == 1 { "" } else { "s" },
                    match report.head {
                        HeadState::OneBehind => {
                            "the head is one record behind (a crash between the two writes; the \
                             next append catches it up)"
                        }
                        HeadState::Absent => "no head yet",
                        _ => "the head matches",
                    }
                ),
            };
            out.value(json, text);
            if !report.ok() {
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One aligned line per record, under a header; a call started and never finished (the process
/// died while it ran) says so.
fn records_table(records: &[Record]) -> String {
    let cut_off = governance::unfinished(records);
    let mut rows = vec![
        [
            "seq",
            "time",
            "conversation",
            "agent",
            "intent",
            "tool",
            "decision",
            "rule",
            "outcome",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    for r in records {
        rows.push(vec![
            r.seq.to_string(),
            rfc3339(r.time),
            r.conversation.clone(),
            format!("{} ({})", r.agent, r.role),
            r.intent.map_or("-".to_owned(), |i| i.to_string()),
            r.tool.clone(),
            r.decision.to_string(),
            r.rule.clone(),
            if cut_off.contains(&r.seq) {
                "started, no outcome (cut off)".to_owned()
            } else {
                r.outcome.as_str().to_owned()
            },
        ]);
    }
    let mut table = governance::table::table(&rows);
    table.truncate(table.trim_end_matches('\n').len());
    table
}
