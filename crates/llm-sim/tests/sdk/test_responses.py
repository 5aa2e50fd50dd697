"""The official `openai` Python SDK's Responses API against `merkle sim serve`.

Proves that the fake server's `/v1/responses`, whole and streamed, with reasoning items,
function calls and their outputs, parses in the client other agents use, and that what the
SDK sends back next turn (reasoning and function call outputs) is read. Each test starts
its own server on a free loopback port from a script written to a temporary folder, and
stops it at the end.

The binary is $MERKLE_BIN, else target/debug/merkle under $CARGO_TARGET_DIR or the
repository. Run: pip install openai pytest && pytest crates/llm-sim/tests/sdk
"""

import json

import openai
import pytest

from sim_server import serve


TOOLS = [
    {
        "type": "function",
        "name": "read_file",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        "strict": False,
    }
]

ANSWERS = """
responses:
  - thinking: Let me look at the file first.
    content: Reading it now.
    tool_calls:
      - id: call_01
        name: read_file
        input: {path: src/lib.rs, lines: [1, 2]}
    usage: {input_tokens: 21, output_tokens: 9, reasoning_tokens: 4}
  - content: "All done: the function is shorter. Ünïcödé survives too."
    usage: {input_tokens: 40, output_tokens: 12, cache_read_input_tokens: 4}
"""


def client(url):
    return openai.OpenAI(api_key="sk-test", base_url=url + "/v1", max_retries=0)


def ask(**extra):
    return dict(
        model="gpt-sim",
        instructions="You fix code.",
        input=[{"role": "user", "content": "Shorten the function."}],
        tools=TOOLS,
        store=False,
        include=["reasoning.encrypted_content"],
        **extra,
    )


def test_a_response_with_reasoning_text_and_a_function_call_then_its_output(tmp_path):
    with serve(tmp_path, ANSWERS) as url:
        sdk = client(url)
        response = sdk.responses.create(**ask())
        assert response.object == "response"
        assert response.status == "completed"
        assert response.model == "gpt-sim"
        assert [item.type for item in response.output] == ["reasoning", "message", "function_call"]
        reasoning, message, call = response.output
        assert reasoning.summary[0].text == "Let me look at the file first."
        assert reasoning.encrypted_content
        assert message.content[0].text == "Reading it now."
        assert response.output_text == "Reading it now."
        assert (call.call_id, call.name) == ("call_01", "read_file")
        assert json.loads(call.arguments) == {"path": "src/lib.rs", "lines": [1, 2]}
        usage = response.usage
        assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (21, 9, 30)
        assert usage.output_tokens_details.reasoning_tokens == 4

        # The next turn sends the output back, as a stateless client does, with the call's output.
        follow_up = [{"role": "user", "content": "Shorten the function."}]
        follow_up += [item.model_dump(exclude_none=True) for item in response.output]
        follow_up.append(
            {"type": "function_call_output", "call_id": "call_01", "output": "fn main() {}"}
        )
        second = sdk.responses.create(**{**ask(), "input": follow_up})
        assert second.output_text == "All done: the function is shorter. Ünïcödé survives too."
        assert second.status == "completed"
        assert second.usage.input_tokens_details.cached_tokens == 4


def test_a_stream_of_events_accumulates_to_the_same_response(tmp_path):
    with serve(tmp_path, ANSWERS) as url:
        sdk = client(url)
        events = list(sdk.responses.create(stream=True, **ask()))
        kinds = [event.type for event in events]
        assert kinds[:2] == ["response.created", "response.in_progress"]
        assert kinds[-1] == "response.completed"
        assert [event.sequence_number for event in events] == list(range(len(events)))
        text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
        assert text == "Reading it now."
        assert kinds.count("response.output_text.delta") > 1, "the text arrives in deltas"
        summary = "".join(
            e.delta for e in events if e.type == "response.reasoning_summary_text.delta"
        )
        assert summary == "Let me look at the file first."
        arguments = "".join(
            e.delta for e in events if e.type == "response.function_call_arguments.delta"
        )
        assert json.loads(arguments) == {"path": "src/lib.rs", "lines": [1, 2]}
        completed = events[-1].response
        assert [item.type for item in completed.output] == ["reasoning", "message", "function_call"]
        assert completed.usage.total_tokens == 30

        # The SDK's own accumulator checks that item ids and indexes agree from start to end.
        with sdk.responses.stream(**ask()) as stream:
            deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
            final = stream.get_final_response()
        assert "".join(deltas) == "All done: the function is shorter. Ünïcödé survives too."
        assert final.output_text == "All done: the function is shorter. Ünïcödé survives too."
        assert final.status == "completed"


FAILURES = """
responses:
  - failure: {kind: rate_limited, retry_after: 3}
  - content: one two three four five six
    failure: {kind: mid_stream}
"""


def test_errors(tmp_path):
    with serve(tmp_path, FAILURES) as url:
        sdk = client(url)
        with pytest.raises(openai.RateLimitError) as limited:
            sdk.responses.create(**ask())
        assert limited.value.response.headers["retry-after"] == "3"
        assert limited.value.code == "rate_limit_exceeded"
        events = list(sdk.responses.create(stream=True, **ask()))
        text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
        assert text == "one two three four "
        assert events[-1].type == "error"
        assert (events[-1].code, events[-1].message) == ("server_error", "Overloaded")
