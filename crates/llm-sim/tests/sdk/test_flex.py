"""OpenAI's Flex tier through the official SDK against `merkle sim serve`.

A request with `service_tier="flex"` is answered and reports the tier it ran on, in both APIs;
a model without the tier is refused in the API's words; and a call that finds no capacity is
the SDK's RateLimitError with code `resource_unavailable` (its own retry sends it again).

Run: pip install openai pytest && pytest crates/llm-sim/tests/sdk
"""

import openai
import pytest

from sim_server import serve


ANSWERS = """
responses:
  - content: "One."
  - content: "Two."
  - content: "Three."
"""


def test_a_flex_call_reports_the_flex_tier_in_both_apis(tmp_path):
    with serve(tmp_path, ANSWERS) as url:
        client = openai.OpenAI(api_key="sk-test", base_url=url + "/v1", max_retries=0)
        chat = client.chat.completions.create(
            model="gpt-5.6-terra",
            messages=[{"role": "user", "content": "hi"}],
            service_tier="flex",
        )
        assert chat.service_tier == "flex"
        assert chat.choices[0].message.content == "One."
        response = client.responses.create(
            model="gpt-5.6-terra", input="hi", service_tier="flex"
        )
        assert response.service_tier == "flex"
        assert response.output_text == "Two."
        plain = client.responses.create(model="gpt-5.6-terra", input="hi")
        assert plain.service_tier == "default"


def test_no_capacity_and_no_tier_are_refused_as_the_service_refuses(tmp_path):
    with serve(tmp_path, ANSWERS, "--refuse-flex", "1") as url:
        client = openai.OpenAI(api_key="sk-test", base_url=url + "/v1", max_retries=0)
        ask = dict(model="gpt-5.6-terra", input="hi", service_tier="flex")
        with pytest.raises(openai.RateLimitError) as busy:
            client.responses.create(**ask)
        assert busy.value.code == "resource_unavailable"
        # The SDK's own retries wait the shortage out; the refused call took no answer.
        patient = openai.OpenAI(api_key="sk-test", base_url=url + "/v1", max_retries=2)
        assert patient.responses.create(**ask).output_text == "One."
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(
                model="gpt-4o",
                messages=[{"role": "user", "content": "hi"}],
                service_tier="flex",
            )
        assert "Unsupported service_tier: flex" in str(refused.value)
