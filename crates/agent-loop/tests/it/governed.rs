//! The turn loop under governance: every call decided before it runs, through the dispatcher,
//! with the built-in policy (or a small one), and audited in a hash-chained log.
use std::fs;
use std::future::Future;
use std::path::PathBuf;
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};

use agent_loop::{Agent, Approver, Governance, TurnEnd};
use governance::audit::{read_records, verify};
use governance::{
    AskMode, AuditLog, DecisionKind, Governor, GovernorConfig, Intent, LoopStop, Outcome, Policy,
    Session,
};
use llm_core::{ContentBlock, EventStream, LlmClient, Request, Response, Role, ToolCall};
use llm_sim::{SimulatedClient, Step, UsageSpec};
use merkle_store::Role as AgentRole;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::{Running, Setup, clock, failed, ok, setup};

/// How the agent is governed; by default a writer under the built-in policy in a
/// non-interactive run.
struct Rules {
    role: AgentRole,
    ask: AskMode,
    policy: Policy,
    approver: Option<Box<dyn Approver>>,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            role: AgentRole::Writer,
            ask: AskMode::Refuse,
            policy: Policy::builtin(),
            approver: None,
        }
    }
}

struct Governed {
    run: Running,
    audit: PathBuf,
}

fn governance(setup: &Setup, rules: Rules) -> (Governance, PathBuf) {
    let audit = setup.dir.path().join("audit").join("audit.jsonl");
    let session = Session {
        conversation: setup.conversation.id().to_owned(),
        agent: "alice".to_owned(),
        role: rules.role,
    };
    let governance = Governance {
        governor: Governor::new(
            Arc::new(rules.policy),
            session,
            GovernorConfig { ask: rules.ask },
        ),
        audit: AuditLog::open(&audit, Box::new(governance::ManualClock::new(0, 1)))
            .expect("audit log"),
        approver: rules.approver,
    };
    (governance, audit)
}

fn start(rules: Rules, steps: impl IntoIterator<Item = Step>) -> Governed {
    let setup = setup();
    let (governance, audit) = governance(&setup, rules);
    Governed {
        run: setup.start_governed(steps, Some(governance)),
        audit,
    }
}

impl Governed {
    /// Each audit record as (tool, decision, rule, outcome).
    fn audited(&self) -> Vec<(String, DecisionKind, String, Outcome)> {
        read_records(&self.audit)
            .expect("records")
            .into_iter()
            .map(|r| (r.tool, r.decision, r.rule, r.outcome))
            .collect()
    }

    /// The result blocks of the newest message, which answers the newest calls.
    fn last_results(&self) -> Vec<ContentBlock> {
        let transcript = self.run.on_disk();
        let last = transcript.last().expect("a message");
        assert_eq!(last.role, Role::User);
        last.content.clone()
    }
}

fn select(intent: &str) -> Value {
    json!({"intent": intent, "justification": "the task needs it"})
}

fn audited(
    tool: &str,
    decision: DecisionKind,
    rule: &str,
    outcome: Outcome,
) -> (String, DecisionKind, String, Outcome) {
    (tool.to_owned(), decision, rule.to_owned(), outcome)
}

/// A policy with `ANALYZE: [read_file]` and the given `limits` (YAML lines).
fn small_policy(limits: &str) -> Policy {
    Policy::parse(
        "test policy",
        &format!("version: 1\nintents:\n  ANALYZE: [read_file]\nlimits:\n{limits}"),
    )
    .expect("policy")
}

const README: &str = "# Demo\n";

#[tokio::test]
async fn a_tool_before_an_intent_is_blocked_by_intent_required() {
    let mut gov = start(
        Rules::default(),
        [
            Step::tool_call("read_file", json!({"path": "README.md"})),
            Step::text("I cannot read it."),
        ],
    );

    gov.run
        .agent
        .process_turn("Read the README")
        .await
        .expect("turn");

    assert_eq!(
        gov.run.on_disk()[2].content,
        [failed(
            "sim_1_0",
            "blocked by governance rule intent-required: no intent is selected in this \
             request; call select_active_intent first with one of PLAN, CODE, ANALYZE, DEBUG, \
             WRITE_FILE, READ_FILE, EXECUTE"
        )]
    );
    assert_eq!(
        gov.audited(),
        [audited(
            "read_file",
            DecisionKind::Deny,
            "intent-required",
            Outcome::Blocked
        )]
    );
}

#[tokio::test]
async fn a_tool_outside_the_intent_is_blocked_by_the_intent_matrix() {
    let mut gov = start(
        Rules::default(),
        [Step::tool_call("select_active_intent", select("ANALYZE"))
            .with_tool_call("write_file", json!({"path": "out.txt", "content": "x"}))],
    );

    gov.run
        .agent
        .process_turn("Write out.txt")
        .await
        .expect("turn");

    let results = gov.run.on_disk()[2].content.clone();
    assert_eq!(
        results[1],
        failed(
            "sim_1_1",
            "blocked by governance rule intents.ANALYZE: write_file is not allowed under \
             intent ANALYZE, which allows read_file, list_dir, search, get_node, \
             search_symbols, task_context, related_files, refs; select another intent if the task needs it"
        )
    );
    assert!(!gov.run.ws.join("out.txt").exists());
}

#[tokio::test]
async fn allowed_calls_run() {
    let mut gov = start(
        Rules::default(),
        [
            Step::tool_call("select_active_intent", select("WRITE_FILE")).with_tool_call(
                "write_file",
                json!({"path": "out.txt", "content": "hello\n"}),
            ),
            Step::tool_call("select_active_intent", select("READ_FILE"))
                .with_tool_call("read_file", json!({"path": "out.txt"})),
            Step::text("It says hello."),
        ],
    );

    let outcome = gov
        .run
        .agent
        .process_turn("Write and read out.txt")
        .await
        .expect("turn");

    assert_eq!(outcome.end, TurnEnd::EndTurn);
    assert_eq!(
        fs::read_to_string(gov.run.ws.join("out.txt")).expect("written"),
        "hello\n"
    );
    assert_eq!(gov.run.on_disk()[4].content[1], ok("sim_2_1", "hello\n"));
    assert_eq!(
        gov.audited(),
        [
            audited(
                "select_active_intent",
                DecisionKind::Allow,
                "control",
                Outcome::Ok
            ),
            audited(
                "write_file",
                DecisionKind::Allow,
                "intents.WRITE_FILE",
                Outcome::Started
            ),
            audited(
                "write_file",
                DecisionKind::Allow,
                "intents.WRITE_FILE",
                Outcome::Ok
            ),
            audited(
                "select_active_intent",
                DecisionKind::Allow,
                "control",
                Outcome::Ok
            ),
            audited(
                "read_file",
                DecisionKind::Allow,
                "intents.READ_FILE",
                Outcome::Started
            ),
            audited(
                "read_file",
                DecisionKind::Allow,
                "intents.READ_FILE",
                Outcome::Ok
            ),
        ]
    );
}

#[tokio::test]
async fn the_intent_resets_with_a_new_request() {
    let mut gov = start(
        Rules::default(),
        [
            Step::tool_call("select_active_intent", select("ANALYZE"))
                .with_tool_call("read_file", json!({"path": "README.md"})),
            Step::text("Read."),
            Step::tool_call("read_file", json!({"path": "README.md"})),
            Step::text("Blocked."),
        ],
    );

    gov.run
        .agent
        .process_turn("Read the README")
        .await
        .expect("turn");
    assert_eq!(
        gov.run.agent.governor().and_then(Governor::intent),
        Some(Intent::Analyze)
    );
    gov.run
        .agent
        .process_turn("Read it again")
        .await
        .expect("turn");

    let rules: Vec<_> = gov.audited().into_iter().map(|a| (a.0, a.2)).collect();
    assert_eq!(
        rules,
        [
            ("select_active_intent".to_owned(), "control".to_owned()),
            ("read_file".to_owned(), "intents.ANALYZE".to_owned()),
            ("read_file".to_owned(), "intents.ANALYZE".to_owned()),
            ("read_file".to_owned(), "intent-required".to_owned()),
        ]
    );
}

#[tokio::test]
async fn the_intent_resets_on_retry() {
    let mut gov = start(
        Rules::default(),
        [
            Step::tool_call("select_active_intent", select("ANALYZE")),
            Step::failure(llm_sim::FailureSpec::Overloaded { message: None }),
            Step::tool_call("read_file", json!({"path": "README.md"})),
            Step::text("Blocked."),
        ],
    );

    gov.run
        .agent
        .process_turn("Read the README")
        .await
        .expect_err("overloaded");
    gov.run.agent.retry().await.expect("retry");

    assert_eq!(
        gov.audited().last(),
        Some(&audited(
            "read_file",
            DecisionKind::Deny,
            "intent-required",
            Outcome::Blocked
        ))
    );
}

#[tokio::test]
async fn retry_keeps_the_loop_governors_counts() {
    let mut gov = start(
        Rules {
            policy: small_policy("  max_tool_calls: 2\n"),
            ..Rules::default()
        },
        [
            Step::tool_call("select_active_intent", select("ANALYZE"))
                .with_tool_call("read_file", json!({"path": "README.md"})),
            Step::failure(llm_sim::FailureSpec::Overloaded { message: None }),
            Step::tool_call("select_active_intent", select("ANALYZE")),
        ],
    );

    gov.run
        .agent
        .process_turn("Read the README")
        .await
        .expect_err("overloaded");
    let outcome = gov.run.agent.retry().await.expect("retry");

    // A retry must not buy the request a fresh budget: the third call is over the cap.
    assert_eq!(
        outcome.end,
        TurnEnd::Stopped {
            stop: LoopStop::ToolCallCap { limit: 2 }
        }
    );
}

/// A model that answers from `inner` for its first `answers` calls and then never answers: a
/// request still in flight when the user gives up.
#[derive(Debug)]
struct Stalling {
    inner: Arc<SimulatedClient>,
    answers: u64,
}

impl LlmClient for Stalling {
    fn complete<'a>(
        &'a self,
        request: &'a Request,
    ) -> Pin<Box<dyn Future<Output = llm_core::Result<Response>> + Send + 'a>> {
        if self.inner.call_count() < self.answers {
            self.inner.complete(request)
        } else {
            Box::pin(std::future::pending())
        }
    }

    fn stream<'a>(
        &'a self,
        request: &'a Request,
    ) -> Pin<Box<dyn Future<Output = llm_core::Result<EventStream>> + Send + 'a>> {
        self.inner.stream(request)
    }

    fn usage_stats(&self) -> llm_core::UsageStats {
        self.inner.usage_stats()
    }

    fn reset_usage_stats(&self) {
        self.inner.reset_usage_stats();
    }

    fn count_tokens(&self, request: &Request) -> u64 {
        self.inner.count_tokens(request)
    }
}

#[test]
fn abort_resets_the_intent_and_the_counts() {
    let setup = setup();
    let (governance, _audit) = governance(&setup, Rules::default());
    let client = Stalling {
        inner: Arc::new(llm_sim::factory::for_testing([Step::tool_call(
            "select_active_intent",
            select("ANALYZE"),
        )
        .with_tool_call("read_file", json!({"path": "README.md"}))])),
        answers: 1,
    };
    let mut agent = Agent::new(
        Arc::new(client),
        setup.conversation,
        setup.tools,
        setup.config,
        clock(),
    )
    .with_governance(governance);

    {
        // The turn runs until its second model call, which never answers; then it is dropped,
        // as Ctrl-C drops it.
        let turn = pin!(agent.process_turn("Read the README"));
        let poll = turn.poll(&mut Context::from_waker(Waker::noop()));
        assert!(poll.is_pending());
    }
    let state = |agent: &Agent| {
        let governor = agent.governor().expect("governed");
        (governor.intent(), governor.loop_guard().calls())
    };
    assert_eq!(state(&agent), (Some(Intent::Analyze), 2));

    agent.abort();

    assert_eq!(state(&agent), (None, 0));
}

#[tokio::test]
async fn a_reader_cannot_select_an_intent_that_writes_or_executes() {
    let mut gov = start(
        Rules {
            role: AgentRole::Reader,
            ..Rules::default()
        },
        [
            Step::tool_call("select_active_intent", select("WRITE_FILE"))
                .with_tool_call("select_active_intent", select("EXECUTE")),
            Step::text("I may only read."),
        ],
    );

    gov.run
        .agent
        .process_turn("Fix and test")
        .await
        .expect("turn");

    assert_eq!(
        gov.run.on_disk()[2].content,
        [
            failed(
                "sim_1_0",
                "blocked by governance rule role-cap: an agent with role reader cannot select \
                 WRITE_FILE, which needs role writer or above; it may select PLAN, ANALYZE, \
                 DEBUG, READ_FILE"
            ),
            failed(
                "sim_1_1",
                "blocked by governance rule role-cap: an agent with role reader cannot select \
                 EXECUTE, which needs role writer or above; it may select PLAN, ANALYZE, \
                 DEBUG, READ_FILE"
            ),
        ]
    );
    assert_eq!(gov.run.agent.governor().and_then(Governor::intent), None);
}

const COMMAND: &str = "echo hi > ran.txt";

fn run_command() -> Step {
    Step::tool_call("select_active_intent", select("EXECUTE"))
        .with_tool_call("run_command", json!({"command": COMMAND}))
}

/// A user who answers every ask with `yes`, and what they were asked: (tool, rule).
struct User {
    yes: bool,
    asked: Arc<Mutex<Vec<(String, String)>>>,
}

impl Approver for User {
    fn approve(&mut self, call: &ToolCall, rule: &str) -> bool {
        self.asked
            .lock()
            .expect("lock")
            .push((call.name.clone(), rule.to_owned()));
        self.yes
    }
}

#[tokio::test]
async fn an_ask_is_refused_when_no_one_can_answer() {
    let mut gov = start(Rules::default(), [run_command(), Step::text("Refused.")]);

    gov.run.agent.process_turn("Run it").await.expect("turn");

    assert_eq!(
        gov.run.on_disk()[2].content[1],
        failed(
            "sim_1_1",
            "blocked by governance rule confirm-commands: rule confirm-commands asks the user \
             first, and this run is non-interactive without pre-approval"
        )
    );
    assert!(!gov.run.ws.join("ran.txt").exists());
}

#[tokio::test]
async fn an_ask_the_user_declines_is_not_run() {
    let asked = Arc::default();
    let user = User {
        yes: false,
        asked: Arc::clone(&asked),
    };
    let mut gov = start(
        Rules {
            ask: AskMode::Prompt,
            approver: Some(Box::new(user)),
            ..Rules::default()
        },
        [run_command(), Step::text("Declined.")],
    );

    gov.run.agent.process_turn("Run it").await.expect("turn");

    assert_eq!(
        *asked.lock().expect("lock"),
        [("run_command".to_owned(), "confirm-commands".to_owned())]
    );
    assert_eq!(
        gov.run.on_disk()[2].content[1],
        failed(
            "sim_1_1",
            "not run: the user declined this call (rule confirm-commands asks first)"
        )
    );
    assert_eq!(
        gov.audited().last(),
        Some(&audited(
            "run_command",
            DecisionKind::Ask,
            "confirm-commands",
            Outcome::Declined
        ))
    );
    assert!(!gov.run.ws.join("ran.txt").exists());
}

#[tokio::test]
async fn an_ask_the_user_approves_runs() {
    let user = User {
        yes: true,
        asked: Arc::default(),
    };
    let mut gov = start(
        Rules {
            ask: AskMode::Prompt,
            approver: Some(Box::new(user)),
            ..Rules::default()
        },
        [run_command(), Step::text("Done.")],
    );

    gov.run.agent.process_turn("Run it").await.expect("turn");

    assert_eq!(
        fs::read_to_string(gov.run.ws.join("ran.txt")).expect("ran"),
        "hi\n"
    );
    assert_eq!(
        gov.audited().last(),
        Some(&audited(
            "run_command",
            DecisionKind::Ask,
            "confirm-commands",
            Outcome::Ok
        ))
    );
}

#[tokio::test]
async fn repeated_identical_calls_stop_the_request() {
    let read = || Step::tool_call("read_file", json!({"path": "README.md"}));
    let mut gov = start(
        Rules::default(),
        [
            Step::tool_call("select_active_intent", select("ANALYZE")),
            read(),
            read(),
            read(),
            Step::text("never sent"),
        ],
    );

    let outcome = gov
        .run
        .agent
        .process_turn("Read the README")
        .await
        .expect("turn");

    let stop = LoopStop::RepeatedCall {
        tool: "read_file".to_owned(),
        times: 3,
    };
    assert_eq!(outcome.end, TurnEnd::Stopped { stop });
    assert_eq!(gov.run.client.call_count(), 4);
    assert_eq!(
        gov.last_results(),
        [
            failed(
                "sim_4_0",
                "not run: the loop governor stopped the request (limits.repeat_calls): \
                 read_file was called with the same arguments 3 times in a row"
            ),
            ContentBlock::text(
                "[merkle: turn stopped: the loop governor stopped the request \
                 (limits.repeat_calls): read_file was called with the same arguments 3 times \
                 in a row] {\"kind\":\"stopped\",\"stop\":{\"reason\":\"repeated_call\",\
                 \"tool\":\"read_file\",\"times\":3}}"
            ),
        ]
    );
    assert_eq!(
        gov.audited().last(),
        Some(&audited(
            "read_file",
            DecisionKind::Deny,
            "limits.repeat_calls",
            Outcome::Stopped
        ))
    );
}

#[tokio::test]
async fn repeated_errors_stop_the_request() {
    // Three calls, each different, that fail the same way.
    let mut gov = start(
        Rules::default(),
        [Step::tool_call("select_active_intent", select("ANALYZE"))
            .with_tool_call("read_file", json!({"path": "missing.txt"}))
            .with_tool_call("read_file", json!({"path": "missing.txt", "offset": 1}))
            .with_tool_call("read_file", json!({"path": "missing.txt", "limit": 1}))
            .with_tool_call("read_file", json!({"path": "README.md"}))],
    );

    let outcome = gov
        .run
        .agent
        .process_turn("Read missing.txt")
        .await
        .expect("turn");

    let error = "error: path \"missing.txt\" does not exist";
    assert_eq!(
        outcome.end,
        TurnEnd::Stopped {
            stop: LoopStop::RepeatedError {
                error: error.to_owned(),
                times: 3
            }
        }
    );
    let results = gov.last_results();
    assert_eq!(results[3], failed("sim_1_3", error), "the third ran");
    assert_eq!(
        results[4],
        failed(
            "sim_1_4",
            &format!(
                "not run: the loop governor stopped the request (limits.repeat_errors): the \
                 same error came back 3 times in a row: {error}"
            )
        ),
        "the call after it did not"
    );
    assert!(
        matches!(&results[5], ContentBlock::Text { text } if text.starts_with("[merkle: turn stopped")),
        "{:?}",
        results[5]
    );
}

#[tokio::test]
async fn the_tool_call_cap_stops_the_request() {
    let mut gov = start(
        Rules {
            policy: small_policy("  max_tool_calls: 2\n"),
            ..Rules::default()
        },
        [
            Step::tool_call("select_active_intent", select("ANALYZE"))
                .with_tool_call("read_file", json!({"path": "README.md"})),
            Step::tool_call("read_file", json!({"path": "missing.txt"})),
        ],
    );

    let outcome = gov.run.agent.process_turn("Read").await.expect("turn");

    assert_eq!(
        outcome.end,
        TurnEnd::Stopped {
            stop: LoopStop::ToolCallCap { limit: 2 }
        }
    );
    assert_eq!(gov.run.on_disk()[2].content[1], ok("sim_1_1", README));
    assert_eq!(
        gov.last_results()[0],
        failed(
            "sim_2_0",
            "not run: the loop governor stopped the request (limits.max_tool_calls): the \
             request reached its cap of 2 tool calls"
        )
    );
}

#[tokio::test]
async fn the_cost_cap_stops_a_priced_request() {
    let mut step = Step::tool_call("select_active_intent", select("ANALYZE"));
    step.usage = Some(UsageSpec {
        input_tokens: 100_000,
        output_tokens: 10_000,
        ..UsageSpec::default()
    });
    let mut setup = setup();
    // $3 in, $15 out per million tokens: this call costs $0.30 + $0.15.
    setup.config.price = Some(agent_loop::Price::new(3.0, 15.0));
    let rules = Rules {
        policy: small_policy("  max_cost_usd: 0.4\n"),
        ..Rules::default()
    };
    let (governance, _audit) = governance(&setup, rules);
    let mut run = setup.start_governed([step, Step::text("never sent")], Some(governance));

    let outcome = run.agent.process_turn("Read").await.expect("turn");

    match outcome.end {
        TurnEnd::Stopped {
            stop:
                LoopStop::CostCap {
                    limit_usd,
                    used_usd,
                },
        } => assert_eq!((limit_usd, (used_usd * 1000.0).round()), (0.4, 450.0)),
        other => panic!("not stopped by the cost cap: {other:?}"),
    }
    assert_eq!(run.client.call_count(), 1);
}

#[tokio::test]
async fn the_token_cap_stops_the_request() {
    let mut step = Step::tool_call("select_active_intent", select("ANALYZE"));
    step.usage = Some(UsageSpec {
        input_tokens: 100,
        output_tokens: 20,
        ..UsageSpec::default()
    });
    let mut gov = start(
        Rules {
            policy: small_policy("  max_tokens: 100\n"),
            ..Rules::default()
        },
        [step, Step::text("never sent")],
    );

    let outcome = gov.run.agent.process_turn("Read").await.expect("turn");

    assert_eq!(
        outcome.end,
        TurnEnd::Stopped {
            stop: LoopStop::TokenCap {
                limit: 100,
                used: 120
            }
        }
    );
    assert_eq!(gov.run.client.call_count(), 1);
    // The model's calls in the message that reached the cap are answered, not run.
    assert_eq!(
        gov.last_results()[0],
        failed(
            "sim_1_0",
            "not run: the loop governor stopped the request (limits.max_tokens): the request \
             used 120 tokens, its cap is 100"
        )
    );
    assert_eq!(
        gov.audited(),
        [audited(
            "select_active_intent",
            DecisionKind::Deny,
            "limits.max_tokens",
            Outcome::Stopped
        )]
    );
    assert_eq!(gov.run.agent.governor().and_then(Governor::intent), None);
}

#[tokio::test]
async fn the_tools_offered_follow_the_intent() {
    let mut gov = start(
        Rules::default(),
        [
            Step::tool_call("select_active_intent", select("ANALYZE")),
            Step::text("Ready."),
        ],
    );

    gov.run
        .agent
        .process_turn("Look around")
        .await
        .expect("turn");

    let history = gov.run.client.history();
    let offered: Vec<Vec<&str>> = history.iter().map(|call| call.tool_names()).collect();
    assert_eq!(
        offered,
        [
            vec!["complete", "escalate", "select_active_intent"],
            vec![
                "read_file",
                "list_dir",
                "search",
                "complete",
                "escalate",
                "select_active_intent"
            ],
        ]
    );
    // The system prompt describes every tool either way, so it stays the same.
    assert_eq!(history[0].system(), history[1].system());
}

#[tokio::test]
async fn an_allowed_list_offers_every_tool_and_names_the_allowed_ones() {
    let mut setup = setup();
    setup.config.tool_offer = agent_loop::ToolOffering::AllowedList;
    let (governance, _audit) = governance(&setup, Rules::default());
    let mut run = setup.start_governed(
        [
            Step::tool_call("select_active_intent", select("ANALYZE")),
            Step::tool_call("write_file", json!({"path": "x.md", "content": "x"})),
            Step::text("Ready."),
        ],
        Some(governance),
    );
    run.agent.process_turn("Look around").await.expect("turn");

    let history = run.client.history();
    let allowed: Vec<Vec<String>> = history
        .iter()
        .map(|call| {
            assert_eq!(call.tool_names().len(), 9, "every tool is offered");
            call.request.extra["tool_choice"]["allowed_tools"]["tools"]
                .as_array()
                .expect("an allowed list")
                .iter()
                .map(|t| t["function"]["name"].as_str().expect("a name").to_owned())
                .collect()
        })
        .collect();
    assert_eq!(
        allowed[..2],
        [
            vec!["complete", "escalate", "select_active_intent"],
            vec![
                "read_file",
                "list_dir",
                "search",
                "complete",
                "escalate",
                "select_active_intent"
            ],
        ]
    );
    // Offering a tool is not allowing it: the dispatcher still blocks the write.
    assert!(!run.ws.join("x.md").exists());
}

#[tokio::test]
async fn every_decided_call_is_audited_in_a_verifiable_chain() {
    let mut gov = start(
        Rules::default(),
        [
            Step::tool_call("read_file", json!({"path": "README.md"})),
            Step::tool_call("select_active_intent", select("ANALYZE"))
                .with_tool_call("read_file", json!({"path": "README.md"}))
                .with_tool_call("read_file", json!({"path": "missing.txt"}))
                .with_tool_call("write_file", json!({"path": "out.txt", "content": ""})),
            Step::text("Done."),
        ],
    );

    gov.run
        .agent
        .process_turn("Read the README")
        .await
        .expect("turn");

    assert_eq!(
        gov.audited(),
        [
            audited(
                "read_file",
                DecisionKind::Deny,
                "intent-required",
                Outcome::Blocked
            ),
            audited(
                "select_active_intent",
                DecisionKind::Allow,
                "control",
                Outcome::Ok
            ),
            audited(
                "read_file",
                DecisionKind::Allow,
                "intents.ANALYZE",
                Outcome::Started
            ),
            audited(
                "read_file",
                DecisionKind::Allow,
                "intents.ANALYZE",
                Outcome::Ok
            ),
            audited(
                "read_file",
                DecisionKind::Allow,
                "intents.ANALYZE",
                Outcome::Started
            ),
            audited(
                "read_file",
                DecisionKind::Allow,
                "intents.ANALYZE",
                Outcome::Error
            ),
            audited(
                "write_file",
                DecisionKind::Deny,
                "intents.ANALYZE",
                Outcome::Blocked
            ),
        ]
    );
    let records = read_records(&gov.audit).expect("records");
    let who: Vec<_> = records
        .iter()
        .map(|r| {
            (
                r.seq,
                r.conversation.as_str(),
                r.agent.as_str(),
                r.role.as_str(),
                r.intent,
            )
        })
        .collect();
    let id = gov.run.agent.conversation().id();
    assert_eq!(
        who,
        [
            (1, id, "alice", "writer", None),
            (2, id, "alice", "writer", Some(Intent::Analyze)),
            (3, id, "alice", "writer", Some(Intent::Analyze)),
            (4, id, "alice", "writer", Some(Intent::Analyze)),
            (5, id, "alice", "writer", Some(Intent::Analyze)),
            (6, id, "alice", "writer", Some(Intent::Analyze)),
            (7, id, "alice", "writer", Some(Intent::Analyze)),
        ]
    );
    let report = verify(&gov.audit).expect("verify");
    assert!(report.ok(), "{report:?}");
    assert_eq!(report.records, 7);
    assert_eq!(governance::unfinished(&records), Vec::<u64>::new());
}

#[tokio::test]
async fn when_the_audit_log_fails_the_results_so_far_are_saved() {
    let mut setup = setup();
    let (governance, audit) = governance(
        &setup,
        Rules {
            policy: Policy::parse(
                "test policy",
                "version: 1\nintents:\n  ANALYZE: [sabotage, read_file]\n",
            )
            .expect("policy"),
            ..Rules::default()
        },
    );
    // A tool that tears the audit log's last line: the append after it fails.
    let log = audit.clone();
    setup
        .tools
        .register(agent_loop::ToolDefinition::new(
            "sabotage",
            "Tears the audit log",
            json!({"type": "object"}),
            move |_| {
                use std::io::Write;
                let mut file = fs::OpenOptions::new()
                    .append(true)
                    .open(&log)
                    .expect("open the audit log");
                file.write_all(b"{\"torn").expect("tear");
                Ok("torn".to_owned())
            },
        ))
        .expect("register");
    let mut run = setup.start_governed(
        [Step::text("unused")
            .with_tool_call("select_active_intent", select("ANALYZE"))
            .with_tool_call("sabotage", json!({}))
            .with_tool_call("read_file", json!({"path": "README.md"}))],
        Some(governance),
    );

    let error = run
        .agent
        .process_turn("Go")
        .await
        .expect_err("the audit log fails");
    assert!(matches!(error, agent_loop::Error::Audit(_)), "{error}");
    let last = run.on_disk().pop().expect("messages");
    assert_eq!(last.role, Role::User);
    let results: Vec<(bool, String)> = last
        .content
        .iter()
        .map(|b| match b {
            ContentBlock::ToolResult {
                content, is_error, ..
            } => (*is_error, content.chars().take(30).collect()),
            other => panic!("not a result: {other:?}"),
        })
        .collect();
    assert_eq!(
        results,
        [
            (false, "intent ANALYZE selected; it al".to_owned()),
            (true, "error: cannot write the audit ".to_owned()),
            (true, "not run: the request failed at".to_owned()),
        ]
    );
}
