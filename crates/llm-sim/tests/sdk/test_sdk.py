"""The official `anthropic` and `openai` Python SDKs against `merkle sim serve`.

Proves that the fake server's answers, whole and streamed, tool calls and errors included,
parse in the clients other agents use. Each test starts its own server on a free loopback
port from a script written to a temporary folder, and stops it at the end.

The binary is $MERKLE_BIN, else target/debug/merkle under $CARGO_TARGET_DIR or the
repository. Run: pip install anthropic openai pytest && pytest crates/llm-sim/tests/sdk
"""

import json

import anthropic
import openai
import pytest

from sim_server import serve


TOOLS_ANTHROPIC = [
    {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]
TOOLS_OPENAI = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]

ANSWERS = """
responses:
  - thinking: Let me look at the file first.
    content: Reading it now.
    tool_calls:
      - id: toolu_01
        name: read_file
        input: {path: src/lib.rs, lines: [1, 2]}
    usage: {input_tokens: 21, output_tokens: 9}
  - content: "All done: the function is shorter. Ünïcödé survives too."
    usage: {input_tokens: 40, output_tokens: 12, cache_read_input_tokens: 4}
"""


def anthropic_client(url):
    return anthropic.Anthropic(api_key="sk-ant-test", base_url=url, max_retries=0)


def openai_client(url):
    return openai.OpenAI(api_key="sk-test", base_url=url + "/v1", max_retries=0)


def ask_anthropic(client, **extra):
    return dict(
        model="claude-sim",
        max_tokens=256,
        tools=TOOLS_ANTHROPIC,
        messages=[{"role": "user", "content": "Shorten the function."}],
        **extra,
    )


def ask_openai(**extra):
    return dict(
        model="gpt-sim",
        tools=TOOLS_OPENAI,
        messages=[
            {"role": "system", "content": "You fix code."},
            {"role": "user", "content": "Shorten the function."},
        ],
        **extra,
    )


def test_anthropic_message_with_thinking_text_and_tool_call(tmp_path):
    with serve(tmp_path, ANSWERS) as url:
        client = anthropic_client(url)
        message = client.messages.create(**ask_anthropic(client))
        assert [block.type for block in message.content] == ["thinking", "text", "tool_use"]
        thinking, text, tool = message.content
        assert thinking.thinking == "Let me look at the file first."
        assert thinking.signature
        assert text.text == "Reading it now."
        assert (tool.id, tool.name, tool.input) == (
            "toolu_01",
            "read_file",
            {"path": "src/lib.rs", "lines": [1, 2]},
        )
        assert message.stop_reason == "tool_use"
        assert (message.usage.input_tokens, message.usage.output_tokens) == (21, 9)
        assert message.model == "claude-sim"

        second = client.messages.create(**ask_anthropic(client))
        assert second.content[0].text == "All done: the function is shorter. Ünïcödé survives too."
        assert second.stop_reason == "end_turn"
        assert second.usage.cache_read_input_tokens == 4


def test_anthropic_stream_accumulates_to_the_same_message(tmp_path):
    with serve(tmp_path, ANSWERS) as url:
        client = anthropic_client(url)
        with client.messages.stream(**ask_anthropic(client)) as stream:
            texts = list(stream.text_stream)
            message = stream.get_final_message()
        assert "".join(texts) == "Reading it now."
        assert len(texts) > 1, "the text arrives in deltas"
        assert [block.type for block in message.content] == ["thinking", "text", "tool_use"]
        assert message.content[0].thinking == "Let me look at the file first."
        assert message.content[2].input == {"path": "src/lib.rs", "lines": [1, 2]}
        assert message.stop_reason == "tool_use"
        assert (message.usage.input_tokens, message.usage.output_tokens) == (21, 9)

        events = [event.type for event in client.messages.create(stream=True, **ask_anthropic(client))]
        assert events[0] == "message_start"
        assert events[-2:] == ["message_delta", "message_stop"]
        assert "content_block_start" in events and "content_block_delta" in events


def test_openai_completion_with_tool_call(tmp_path):
    with serve(tmp_path, ANSWERS) as url:
        client = openai_client(url)
        completion = client.chat.completions.create(**ask_openai())
        choice = completion.choices[0]
        assert choice.finish_reason == "tool_calls"
        assert choice.message.content == "Reading it now."
        (call,) = choice.message.tool_calls
        assert (call.id, call.type, call.function.name) == ("toolu_01", "function", "read_file")
        assert json.loads(call.function.arguments) == {"path": "src/lib.rs", "lines": [1, 2]}
        assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (21, 9)

        second = client.chat.completions.create(**ask_openai())
        assert second.choices[0].message.content.endswith("Ünïcödé survives too.")
        assert second.choices[0].finish_reason == "stop"
        assert second.usage.prompt_tokens_details.cached_tokens == 4


def test_openai_stream_with_usage_and_tool_call_deltas(tmp_path):
    with serve(tmp_path, ANSWERS) as url:
        client = openai_client(url)
        chunks = list(
            client.chat.completions.create(
                stream=True, stream_options={"include_usage": True}, **ask_openai()
            )
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        arguments = "".join(
            call.function.arguments or ""
            for c in chunks
            if c.choices
            for call in c.choices[0].delta.tool_calls or []
        )
        finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
        assert text == "Reading it now."
        assert json.loads(arguments) == {"path": "src/lib.rs", "lines": [1, 2]}
        assert finish == ["tool_calls"]
        assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == 30

        with client.chat.completions.stream(**ask_openai()) as stream:
            final = stream.get_final_completion()
        assert final.choices[0].message.content.endswith("Ünïcödé survives too.")
        assert final.choices[0].finish_reason == "stop"


FAILURES = """
responses:
  - failure: {kind: rate_limited, retry_after: 3}
  - failure: {kind: overloaded}
  - failure: {kind: server_error, status: 502}
  - content: one two three four five six
    failure: {kind: mid_stream}
"""


def test_anthropic_errors(tmp_path):
    with serve(tmp_path, FAILURES) as url:
        client = anthropic_client(url)
        with pytest.raises(anthropic.RateLimitError) as limited:
            client.messages.create(**ask_anthropic(client))
        assert limited.value.response.headers["retry-after"] == "3"
        assert limited.value.body["error"]["type"] == "rate_limit_error"
        with pytest.raises(anthropic.APIStatusError) as overloaded:
            client.messages.create(**ask_anthropic(client))
        assert overloaded.value.status_code == 529
        with pytest.raises(anthropic.InternalServerError) as server:
            client.messages.create(**ask_anthropic(client))
        assert server.value.status_code == 502
        received = []
        with pytest.raises(anthropic.APIStatusError) as interrupted:
            with client.messages.stream(**ask_anthropic(client)) as stream:
                for text in stream.text_stream:
                    received.append(text)
        assert "".join(received) == "one two three four "
        assert "Overloaded" in str(interrupted.value)


def test_openai_errors(tmp_path):
    with serve(tmp_path, FAILURES) as url:
        client = openai_client(url)
        with pytest.raises(openai.RateLimitError) as limited:
            client.chat.completions.create(**ask_openai())
        assert limited.value.response.headers["retry-after"] == "3"
        assert limited.value.code == "rate_limit_exceeded"
        with pytest.raises(openai.InternalServerError) as overloaded:
            client.chat.completions.create(**ask_openai())
        assert overloaded.value.status_code == 503
        with pytest.raises(openai.InternalServerError) as server:
            client.chat.completions.create(**ask_openai())
        assert server.value.status_code == 502
        received = []
        with pytest.raises(openai.APIError) as interrupted:
            for chunk in client.chat.completions.create(stream=True, **ask_openai()):
                if chunk.choices:
                    received.append(chunk.choices[0].delta.content or "")
        assert "".join(received) == "one two three four "
        assert "Overloaded" in str(interrupted.value)
