//! The token-counting contract (the llm protocol spec: "accurate within ±5%"), held against
//! the fake Anthropic service's own tokenizer, which the client cannot compute: its count
//! endpoint answers exactly what the service bills, and the client's offline estimate is
//! within 5% of it once five answers have calibrated it.

use std::path::{Path, PathBuf};

use llm_core::{CountSource, Request};
use llm_sim::{FakeServer, parse_strategy};

use crate::support::{anthropic, clock, http};

/// This repository's text files of at least 1 KiB (on a shorter one, a few tokens of the
/// prompt format the client cannot know are more than 5%): Rust sources and the documents,
/// sorted.
fn repository_files() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut paths = Vec::new();
    let mut folders = vec![root.join("crates"), root.join("docs")];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            (text.len() >= 1024).then_some((path, text))
        })
        .collect()
}

fn file_request(text: &str) -> Request {
    Request::new("claude-sonnet-4-6")
        .system("You summarise source files.")
        .user(format!("Summarise this file:\n\n{text}"))
        .max_tokens(64)
}

async fn serve(answers: usize) -> FakeServer {
    let yaml = format!(
        "responses:\n{}",
        "  - content: \"A summary.\"\n".repeat(answers)
    );
    let strategy = parse_strategy(&yaml, "count.yaml").expect("script parses");
    FakeServer::start("127.0.0.1:0", strategy)
        .await
        .expect("server starts")
}

fn off(estimate: u64, counted: u64) -> f64 {
    (estimate as f64 - counted as f64).abs() / counted as f64
}

#[tokio::test]
async fn the_provider_count_is_the_billed_count_and_the_estimate_is_within_five_percent_after_five_calls()
 {
    let files = repository_files();
    assert!(files.len() > 100, "{} files", files.len());
    let server = serve(5).await;
    let client = anthropic(&server.url(), http(&clock(), 0));
    // Online: the endpoint's count, the same the service bills.
    for (_, text) in files.iter().step_by(17) {
        let request = file_request(text);
        let counted = client.count_input(&request).await.expect("counted");
        assert_eq!(counted.source, CountSource::Provider);
        assert_eq!(counted.tokens, llm_sim::tokenizer::count_request(&request));
    }
    // Offline, before any answer: the plain estimate, which misses by more.
    let mut worst_before: f64 = 0.0;
    let first = file_request(&files[0].1);
    assert_eq!(
        client.count_input(&first).await.map(|c| c.source).ok(),
        Some(CountSource::Provider)
    );
    for (_, text) in &files {
        let request = file_request(text);
        let truth = llm_sim::tokenizer::count_request(&request);
        worst_before = worst_before.max(off(client.count_tokens(&request), truth));
    }
    // Five answers calibrate it.
    for (_, text) in files.iter().take(5) {
        let request = file_request(text);
        let answer = client.complete(&request).await.expect("answered");
        assert_eq!(
            answer.usage.total_input(),
            llm_sim::tokenizer::count_request(&request)
        );
    }
    let mut misses = Vec::new();
    let mut worst_after: f64 = 0.0;
    for (path, text) in &files {
        let request = file_request(text);
        let truth = llm_sim::tokenizer::count_request(&request);
        let miss = off(client.count_tokens(&request), truth);
        worst_after = worst_after.max(miss);
        if miss > 0.05 {
            misses.push(format!("{}: {:.1}%", path.display(), miss * 100.0));
        }
    }
    eprintln!(
        "{} files: worst {:.1}% before calibration, {:.1}% after",
        files.len(),
        worst_before * 100.0,
        worst_after * 100.0
    );
    assert!(
        worst_before > 0.05,
        "the uncalibrated estimate is already close"
    );
    assert!(misses.is_empty(), "more than 5% off: {misses:#?}");
    let counted = client
        .count_input(&file_request(&files[0].1))
        .await
        .expect("counted");
    assert_eq!(counted.source, CountSource::Provider);
    // The count endpoint was asked once per distinct request, and the answers billed five.
    assert_eq!(client.usage_stats().requests, 5);
}
