//! Malformed scripts: every error names the file, the line and what was expected, and an
//! unknown field is rejected, never ignored.

use llm_sim::{Error, Script, parse_strategy};

/// Each case's error message, one per line, as a user reads them.
fn errors(cases: &[(&str, &str)]) -> String {
    cases
        .iter()
        .map(|(name, yaml)| {
            let message = match Script::parse(yaml, "script.yaml") {
                Ok(script) => format!("parsed: {script:?}"),
                Err(err) => err.to_string(),
            };
            format!("{name}:\n  {message}\n")
        })
        .collect()
}

#[test]
fn malformed_scripts_name_file_line_and_expectation() {
    let report = errors(&[
        (
            "unknown field in a step",
            "responses:\n  - step: 1\n    content: hi\n    tool_call:\n      - name: x\n",
        ),
        (
            "unknown field in a tool call",
            "responses:\n  - tool_calls:\n      - name: read_file\n        inputs: {path: a}\n",
        ),
        (
            "unknown top-level field",
            "metadata: {name: x}\nresponse: []\n",
        ),
        (
            "unknown metadata field",
            "metadata:\n  title: x\nresponses: []\n",
        ),
        (
            "unknown failure kind",
            "responses:\n  - failure: {kind: exploded}\n",
        ),
        (
            "unknown failure field",
            "responses:\n  - failure: {kind: rate_limited, retry_afterr: 2}\n",
        ),
        (
            "negative retry_after",
            "responses:\n  - failure: {kind: rate_limited, retry_after: -1}\n",
        ),
        (
            "retry_after too long to wait",
            "responses:\n  - failure: {kind: rate_limited, retry_after: 1e20}\n",
        ),
        (
            "server error outside 5xx",
            "responses:\n  - failure: {kind: server_error, status: 404}\n",
        ),
        (
            "unknown stop reason",
            "responses:\n  - content: hi\n    stop_reason: tool_used\n",
        ),
        (
            "failure with an answer",
            "responses:\n  - content: hi\n    failure: {kind: overloaded}\n",
        ),
        (
            "both input and raw_input",
            "responses:\n  - tool_calls:\n      - name: x\n        input: {}\n        raw_input: '{'\n",
        ),
        (
            "step label out of place",
            "responses:\n  - step: 1\n    content: a\n  - step: 3\n    content: b\n",
        ),
        (
            "not yaml",
            "responses:\n  - content: 'unclosed\n    step: 1\n",
        ),
        ("tab indentation", "responses:\n\t- content: hi\n"),
        (
            "block-style failure",
            "responses:\n  - content: ok\n  - failure:\n      kind: rate_limited\n      retry_after: -2\n",
        ),
        (
            "wrong type",
            "responses:\n  - content: hi\n    tool_calls: read_file\n",
        ),
    ]);
    insta::assert_snapshot!(report);
}

#[test]
fn a_file_error_names_its_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.yaml");
    std::fs::write(&path, "responses:\n  - contnet: hi\n").expect("write script");
    let err = Script::load(&path).expect_err("unknown field");
    let Error::Script {
        origin,
        line,
        message,
        ..
    } = &err
    else {
        panic!("not a script error: {err:?}");
    };
    assert_eq!(
        (
            origin.as_str(),
            *line,
            message.contains("unknown field `contnet`")
        ),
        (path.to_str().expect("utf-8 temp path"), Some(2), true),
        "{err}"
    );
    let missing = Script::load(&dir.path().join("missing.yaml")).expect_err("no file");
    assert!(
        missing.to_string().starts_with("cannot read ")
            && missing.to_string().ends_with("missing.yaml"),
        "{missing}"
    );
}

#[test]
fn pattern_files_are_checked_as_strictly() {
    let report = [
        "patterns:\n  - when: {last_user_message: '(unclosed'}\n    respond: {content: x}\n",
        "patterns:\n  - when: {tool: [read_file]}\n    respond: {content: x}\n",
        "patterns:\n  - when: {}\n    reply: {content: x}\n",
    ]
    .iter()
    .map(|yaml| match parse_strategy(yaml, "patterns.yaml") {
        Ok(_) => "parsed\n".to_owned(),
        Err(err) => format!("{err}\n"),
    })
    .collect::<String>();
    insta::assert_snapshot!(report);
}
