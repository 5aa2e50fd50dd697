//! The loop governor: repeated calls, repeated errors and the per-request caps end a request with
//! a typed reason.
use std::sync::Arc;

use governance::{
    AskMode, Governor, GovernorConfig, Limits, LoopGuard, LoopStop, Policy, Reset, Session,
};
use llm_types::Usage;
use merkle_hash::Role;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::call;

enum Event {
    Call(&'static str, Value),
    Ok,
    Err(&'static str),
    Model(u64, f64),
}

/// Feeds `events` to a guard with `limits`; one entry per event: its stop, if any.
fn check(limits: Limits, events: Vec<Event>, want: Vec<Option<LoopStop>>) {
    let mut guard = LoopGuard::new(limits);
    let got: Vec<Option<LoopStop>> = events
        .into_iter()
        .map(|event| match event {
            Event::Call(name, args) => guard.before_call(&call(name, args)),
            Event::Ok => guard.after_call(None),
            Event::Err(text) => guard.after_call(Some(text)),
            Event::Model(tokens, cost) => guard.after_model_call(
                &Usage {
                    input_tokens: tokens,
                    ..Usage::default()
                },
                cost,
            ),
        })
        .collect();
    assert_eq!(got, want);
}

fn off() -> Limits {
    Limits {
        repeat_calls: None,
        repeat_errors: None,
        max_tool_calls: None,
        max_tokens: None,
        max_cost_usd: None,
    }
}

#[test]
fn the_same_call_k_times_in_a_row_stops() {
    let limits = Limits {
        repeat_calls: Some(3),
        ..off()
    };
    let a = || Event::Call("read_file", json!({"path": "a", "limit": 10}));
    // The same arguments in another key order are the same call.
    let a_reordered = || Event::Call("read_file", json!({"limit": 10, "path": "a"}));
    let b = || Event::Call("read_file", json!({"path": "b", "limit": 10}));
    check(
        limits.clone(),
        vec![a(), a(), b(), a(), a_reordered(), a()],
        vec![
            None,
            None,
            None,
            None,
            None,
            Some(LoopStop::RepeatedCall {
                tool: "read_file".to_owned(),
                times: 3,
            }),
        ],
    );
    // The same arguments to another tool are another call.
    check(
        limits,
        vec![
            a(),
            Event::Call("list_dir", json!({"path": "a", "limit": 10})),
            a(),
        ],
        vec![None, None, None],
    );
}

#[test]
fn the_same_error_k_times_in_a_row_stops() {
    let limits = Limits {
        repeat_errors: Some(2),
        ..off()
    };
    check(
        limits,
        vec![
            Event::Err("no such file"),
            Event::Ok,
            Event::Err("no such file"),
            Event::Err("permission denied"),
            Event::Err("no such file"),
            Event::Err("no such file"),
        ],
        vec![
            None,
            None,
            None,
            None,
            None,
            Some(LoopStop::RepeatedError {
                error: "no such file".to_owned(),
                times: 2,
            }),
        ],
    );
}

#[test]
fn caps_on_calls_tokens_and_cost_stop() {
    let x = |n: u32| Event::Call("search", json!({"pattern": n}));
    check(
        Limits {
            max_tool_calls: Some(2),
            ..off()
        },
        vec![x(1), x(2), x(3)],
        vec![None, None, Some(LoopStop::ToolCallCap { limit: 2 })],
    );
    check(
        Limits {
            max_tokens: Some(100),
            ..off()
        },
        vec![Event::Model(60, 0.0), Event::Model(50, 0.0)],
        vec![
            None,
            Some(LoopStop::TokenCap {
                limit: 100,
                used: 110,
            }),
        ],
    );
    check(
        Limits {
            max_cost_usd: Some(0.5),
            ..off()
        },
        vec![Event::Model(1, 0.25), Event::Model(1, 0.25)],
        vec![
            None,
            Some(LoopStop::CostCap {
                limit_usd: 0.5,
                used_usd: 0.5,
            }),
        ],
    );
    // Switched off, nothing stops.
    check(
        off(),
        vec![
            x(1),
            x(1),
            x(1),
            Event::Err("e"),
            Event::Err("e"),
            Event::Model(u64::MAX / 2, 9.0),
        ],
        vec![None; 6],
    );
}

#[test]
fn a_retry_keeps_the_counters_and_a_new_request_resets_them() {
    let policy = Policy::parse(
        "limits.yaml",
        "version: 1\nlimits:\n  max_tool_calls: 2\n  repeat_calls: null\n",
    )
    .expect("the policy loads");
    let session = Session {
        conversation: "c".to_owned(),
        agent: "a".to_owned(),
        role: Role::Writer,
    };
    let mut gov = Governor::new(
        Arc::new(policy),
        session,
        GovernorConfig {
            ask: AskMode::Refuse,
        },
    );
    let c = call("read_file", json!({"path": "a"}));
    let mut got = vec![gov.before_call(&c), gov.before_call(&c)];
    gov.reset(Reset::Retry);
    got.push(gov.before_call(&c));
    gov.reset(Reset::NewRequest);
    got.push(gov.before_call(&c));
    gov.reset(Reset::Abort);
    got.push(gov.before_call(&c));
    assert_eq!(
        (got, gov.loop_guard().calls()),
        (
            vec![
                None,
                None,
                Some(LoopStop::ToolCallCap { limit: 2 }),
                None,
                None
            ],
            1
        )
    );
}

#[test]
fn stop_reasons_serialize_for_the_transcript() {
    let stops = [
        LoopStop::RepeatedCall {
            tool: "read_file".to_owned(),
            times: 3,
        },
        LoopStop::TokenCap {
            limit: 100,
            used: 110,
        },
    ];
    let got: Vec<(Value, &str, String)> = stops
        .iter()
        .map(|s| {
            (
                serde_json::to_value(s).expect("serializes"),
                s.rule(),
                s.to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                json!({"reason": "repeated_call", "tool": "read_file", "times": 3}),
                "limits.repeat_calls",
                "read_file was called with the same arguments 3 times in a row".to_owned()
            ),
            (
                json!({"reason": "token_cap", "limit": 100, "used": 110}),
                "limits.max_tokens",
                "the request used 110 tokens, its cap is 100".to_owned()
            ),
        ]
    );
    let back: LoopStop = serde_json::from_value(got[0].0.clone()).expect("deserializes");
    assert_eq!(back, stops[0]);
}

#[test]
fn a_next_call_that_could_pass_the_cost_cap_is_stopped_before_it() {
    let limits = governance::Limits {
        max_cost_usd: Some(1.0),
        ..governance::Limits::default()
    };
    let mut guard = governance::LoopGuard::new(limits);
    assert_eq!(guard.after_model_call(&Usage::default(), 0.6), None);
    assert_eq!(guard.before_model_call(0.3, true), None);
    let stop = guard.before_model_call(0.5, true);
    assert_eq!(
        stop,
        Some(LoopStop::NextCallCost {
            limit_usd: 1.0,
            used_usd: 0.6,
            next_usd: 0.5,
            exact: true,
        })
    );
    let said = stop.map(|s| s.to_string()).unwrap_or_default();
    assert!(said.contains("counted as the provider counts it"), "{said}");
    // Without a cap, nothing is stopped.
    let free = governance::LoopGuard::new(governance::Limits::default());
    assert_eq!(free.before_model_call(1e9, false), None);
}
