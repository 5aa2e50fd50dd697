//! The SSE decoder, fed every way a network can cut a stream.

use llm_core::sse::{SseDecoder, SseEvent};
use pretty_assertions::assert_eq;

fn event(event: &str, data: &str) -> SseEvent {
    SseEvent {
        event: event.into(),
        data: data.into(),
    }
}

fn decode_in_pieces(input: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::default();
    let mut out = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
        decoder.feed(&input[start..cut], &mut out).expect("utf-8");
        start = cut;
    }
    decoder.finish(&mut out).expect("utf-8");
    out
}

/// Decodes `input` whole and cut at every single position and every pair of positions;
/// all must give `expected`.
fn check(input: &str, expected: &[SseEvent]) {
    let bytes = input.as_bytes();
    assert_eq!(decode_in_pieces(bytes, &[]), expected, "whole input");
    for first in 0..=bytes.len() {
        assert_eq!(
            decode_in_pieces(bytes, &[first]),
            expected,
            "cut at {first} of {input:?}"
        );
        for second in first..=bytes.len() {
            assert_eq!(
                decode_in_pieces(bytes, &[first, second]),
                expected,
                "cut at {first} and {second}"
            );
        }
    }
}

#[test]
fn events_survive_any_cut() {
    check(
        "event: a\ndata: 1\n\nevent: b\ndata: ✓ 日本\n\n",
        &[event("a", "1"), event("b", "✓ 日本")],
    );
}

#[test]
fn crlf_and_lone_cr_line_ends() {
    check(
        "event: a\r\ndata: x\r\n\r\ndata: y\r\rdata: z\n\n",
        &[event("a", "x"), event("", "y"), event("", "z")],
    );
}

#[test]
fn comments_multiline_data_and_fields_without_space() {
    check(
        ": keep-alive\ndata:one\ndata: two\nid: 7\nretry: 10\n\n",
        &[event("", "one\ntwo")],
    );
}

#[test]
fn an_event_name_without_data_is_not_dispatched() {
    check("event: ping\n\ndata: x\n\n", &[event("", "x")]);
}

#[test]
fn leading_bom_is_skipped_and_a_final_event_without_blank_line_is_kept() {
    check(
        "\u{feff}data: first\n\ndata: last",
        &[event("", "first"), event("", "last")],
    );
}

#[test]
fn invalid_utf8_is_reported_with_the_line() {
    let mut decoder = SseDecoder::default();
    let mut out = Vec::new();
    let error = decoder
        .feed(b"data: \xff\xfe\n\n", &mut out)
        .expect_err("not utf-8");
    assert!(error.line.starts_with("data: "));
}
