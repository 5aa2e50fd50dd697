"""The official SDKs' token-count calls against `merkle sim serve`.

`client.messages.count_tokens` (Anthropic) and `client.responses.input_tokens.count` (OpenAI)
must parse the fake services' answers, which are the counts they bill the same request by;
a field only a model call takes is refused as the services refuse it.

Run: pip install anthropic openai pytest && pytest crates/llm-sim/tests/sdk
"""

import anthropic
import openai
import pytest

from sim_server import serve


ANSWERS = """
responses:
  - content: "Counted."
"""

TEXT = "def shorten(text):\n    return text[:80]\n" * 20


def test_anthropic_counts_what_it_then_bills(tmp_path):
    with serve(tmp_path, ANSWERS) as url:
        client = anthropic.Anthropic(api_key="sk-ant-test", base_url=url, max_retries=0)
        ask = dict(
            model="claude-sonnet-4-6",
            system="You shorten code.",
            messages=[{"role": "user", "content": TEXT}],
        )
        counted = client.messages.count_tokens(**ask)
        assert isinstance(counted.input_tokens, int) and counted.input_tokens > 100
        answer = client.messages.create(max_tokens=64, **ask)
        assert answer.usage.input_tokens == counted.input_tokens
        with pytest.raises(anthropic.BadRequestError) as refused:
            client.messages.count_tokens(extra_body={"max_tokens": 64}, **ask)
        assert "max_tokens" in str(refused.value)


def test_openai_counts_a_responses_request(tmp_path):
    with serve(tmp_path, ANSWERS) as url:
        client = openai.OpenAI(api_key="sk-test", base_url=url + "/v1", max_retries=0)
        counted = client.responses.input_tokens.count(
            model="gpt-5-mini", instructions="You shorten code.", input=TEXT
        )
        assert counted.object == "response.input_tokens"
        assert counted.input_tokens > 100
        answer = client.responses.create(
            model="gpt-5-mini", instructions="You shorten code.", input=TEXT
        )
        assert answer.usage.input_tokens == counted.input_tokens


CACHED = """
responses:
  - content: "From the cache."
    usage: {input_tokens: 12, output_tokens: 3, cache_creation_input_tokens: 2048, cache_read_input_tokens: 4096}
"""


def test_cache_writes_are_reported_as_each_service_reports_them(tmp_path):
    with serve(tmp_path, CACHED) as url:
        client = anthropic.Anthropic(api_key="sk-ant-test", base_url=url, max_retries=0)
        answer = client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=64,
            messages=[{"role": "user", "content": "hi"}],
        )
        assert answer.usage.cache_creation_input_tokens == 2048
        assert answer.usage.cache_creation.ephemeral_5m_input_tokens == 2048
        assert answer.usage.cache_creation.ephemeral_1h_input_tokens == 0
    with serve(tmp_path, CACHED) as url:
        client = openai.OpenAI(api_key="sk-test", base_url=url + "/v1", max_retries=0)
        answer = client.chat.completions.create(
            model="gpt-5.6-terra", messages=[{"role": "user", "content": "hi"}]
        )
        details = answer.usage.prompt_tokens_details
        assert details.cached_tokens == 4096
        assert details.model_dump()["cache_write_tokens"] == 2048
        assert answer.usage.prompt_tokens == 12 + 2048 + 4096
