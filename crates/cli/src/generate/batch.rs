//! `generate --batch` and `generate --dry-run`: the generation's model calls sent as provider
//! batches ([`agent_loop::batch`]), with progress and a note in the store that lets a killed
//! run pick its batch up; or counted and priced without sending anything.
use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::Result;
use serde_json::json;

use agent_loop::batch::{BatchEvent, BatchQueue, BatchRun, Batched};
use merkle_store::{NodeRecord, Store};

use super::{GenerateArgs, Generator};
use crate::output::{Out, count};

/// Runs the generation in batches until nothing is left to ask; returns the passes' report
/// as one, and the batches used.
pub(super) fn generate_batched(
    store: &Store,
    root: &std::path::Path,
    a: &GenerateArgs,
    generator: &Generator,
    queue: &BatchQueue,
    quiet: bool,
) -> Result<(context::Generated, Batched)> {
    let model = generator.model.as_ref().expect("a batch needs a model");
    let api = model
        .setup
        .client
        .batches()
        .expect("the caller checked the batch api");
    let bar = (!quiet).then(|| {
        let b =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        b.set_style(
            crate::output::steady_style("batch [{bar:30}] {pos}/{len} calls {elapsed} {msg}")
                .progress_chars("=> "),
        );
        b
    });
    let progress = |event: &BatchEvent| {
        let Some(b) = &bar else {
            return;
        };
        // Said on stderr whether or not it is a terminal (a hidden bar prints nothing).
        let say = |line: String| b.suspend(|| eprintln!("{line}"));
        match event {
            BatchEvent::Submitted { id, calls } => {
                say(format!(
                    "sent batch {id} of {}",
                    count(*calls as u64, "call")
                ));
            }
            BatchEvent::Resumed { id } => {
                say(format!("picking up batch {id}, sent by an earlier run"));
            }
            BatchEvent::Status(status) => {
                let c = status.counts;
                let total = c.processing + c.succeeded + c.errored + c.expired + c.canceled;
                b.set_length(total);
                b.set_position(total - c.processing);
                b.set_message(format!(
                    "{}: {} succeeded, {} errored, {} expired",
                    status.id, c.succeeded, c.errored, c.expired
                ));
            }
            BatchEvent::Answered { id, answers } => {
                say(format!(
                    "batch {id}: {} answered{}",
                    count(answers.succeeded as u64, "call"),
                    if answers.failed > 0 {
                        format!(", {} failed (sent again once)", answers.failed)
                    } else {
                        String::new()
                    }
                ));
            }
        }
    };
    let run = BatchRun {
        queue,
        api,
        runtime: model.runtime.handle(),
        store,
        note: note_name(generator, &model.setup.provider),
        poll: a.poll,
        interrupt: &model.interrupt,
        progress: &progress,
    };
    let result = run.run(|| generator.run(store, root, a.path.as_deref(), a.recursive, quiet));
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let (passes, batched) = result?;
    Ok((merged(passes), batched))
}

/// The note that keeps a generation's batch in flight: one per type, agent, producer, policy
/// and provider, so that only the same generation picks it up.
fn note_name(generator: &Generator, provider: &str) -> String {
    let agent = generator.agent.as_deref().unwrap_or(super::GENERATE_AGENT);
    let mut h = blake3::Hasher::new();
    for part in [
        generator.frame_type.as_str(),
        agent,
        &generator.producer.id(),
        &generator.policy.id(),
        provider,
    ] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    format!("generate-batch:{}", h.finalize().to_hex())
}

/// The passes of a batched generation as one report: what each did, with the failures and
/// deferrals of the last; every pass after the first finds the earlier ones' work up to date.
fn merged(passes: Vec<context::Generated>) -> context::Generated {
    let mut all = context::Generated::default();
    for (i, pass) in passes.iter().enumerate() {
        if i == 0 {
            all.up_to_date = pass.up_to_date;
            all.visited = pass.visited;
        }
        all.produced += pass.produced;
        all.reused += pass.reused;
        all.synthesized += pass.synthesized;
        all.synthesis_reused += pass.synthesis_reused;
        all.created += pass.created;
    }
    if let Some(last) = passes.last() {
        all.failed.clone_from(&last.failed);
        all.deferred = last.deferred;
    }
    all
}

/// Prints what a batched generation would send, from its first pass's queue.
pub(super) fn dry_run(
    out: &mut Out,
    store: &Store,
    generator: &Generator,
    queue: &Arc<BatchQueue>,
    covered: &NodeRecord,
    recursive: bool,
    report: &context::Generated,
) -> Result<()> {
    let model = generator.model.as_ref().expect("a dry run needs a model");
    let pending = queue.take_pending();
    let mut input = 0u64;
    // With a model's directory policy, every directory above a file that needs a call needs
    // one too.
    let mut dirs = BTreeSet::new();
    let llm_dirs = generator.policy.id().starts_with("llm-synthesis");
    for (_, call) in &pending {
        input += model.setup.client.count_tokens(&call.request);
        if !llm_dirs {
            continue;
        }
        let below =
            |dir: &str| covered.path.is_empty() || dir.starts_with(&format!("{}/", covered.path));
        let mut path = call.label.as_str();
        while !path.is_empty() && path != covered.path {
            let parent = path.rsplit_once('/').map_or("", |(parent, _)| parent);
            if parent != covered.path && !(recursive && below(parent)) {
                break;
            }
            dirs.insert(parent.to_owned());
            path = parent;
        }
    }
    // A directory's prompt holds its children's frames, each at most --max-tokens.
    for dir in &dirs {
        let children = store.list_nodes(dir, false)?.len() as u64;
        input += (children * u64::from(generator.max_tokens)).min(generator.max_input_tokens) + 100;
    }
    let calls = pending.len() + dirs.len();
    let output = calls as u64 * u64::from(generator.max_tokens);
    let usage = llm_core::Usage {
        input_tokens: input,
        output_tokens: output,
        ..llm_core::Usage::default()
    };
    let cost = generator
        .price
        .map(|p| (p.cost(&usage), p.cost(&usage) * p.batch_factor));
    let text = format!(
        "would send {} ({} for files, {} for directories) to {}{}: about {} input tokens and \
         at most {} output tokens\n{}\nnothing was sent{}",
        count(calls as u64, "call"),
        pending.len(),
        dirs.len(),
        model.setup.provider,
        if model.model.is_empty() {
            String::new()
        } else {
            format!(" ({})", model.model)
        },
        input,
        output,
        match cost {
            Some((direct, batch)) =>
                format!("cost: up to about ${direct:.4} called directly, ${batch:.4} as a batch"),
            None => "pass --price IN,OUT (dollars per million tokens) for a cost".to_owned(),
        },
        if report.produced + report.reused + report.synthesized + report.synthesis_reused > 0 {
            format!(
                "; {} that needed no call were written",
                count(
                    (report.produced + report.reused + report.synthesized + report.synthesis_reused)
                        as u64,
                    "frame"
                )
            )
        } else {
            String::new()
        }
    );
    out.value(
        json!({
            "dry_run": true,
            "calls": {"files": pending.len(), "directories": dirs.len(), "total": calls},
            "input_tokens": input,
            "output_tokens_at_most": output,
            "cost_usd": cost.map(|(direct, batch)| json!({"direct": direct, "batch": batch})),
            "provider": model.setup.provider,
            "path": covered.path,
            "recursive": recursive,
        }),
        text,
    );
    Ok(())
}
