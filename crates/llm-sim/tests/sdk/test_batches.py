"""The official SDKs' batch methods against `merkle sim serve`: Anthropic's
`messages.batches` and OpenAI's `files` and `batches`, from creation to results.

Each test starts its own server on a free loopback port from a script written to a temporary
folder, and stops it at the end. Run: pip install anthropic openai pytest && pytest
crates/llm-sim/tests/sdk
"""

import json

import anthropic
import openai

from sim_server import serve


# Calls are answered in submission order: a success, a server error, a timeout (which a batch
# reports as expired), another success.
ANSWERS = """
responses:
  - content: The first file holds the parser.
    usage: {input_tokens: 30, output_tokens: 7}
  - failure: {kind: server_error, status: 500, message: the model broke}
  - failure: {kind: timeout}
  - content: The fourth file holds the tests.
    usage: {input_tokens: 25, output_tokens: 7}
"""


def prompt(n):
    return f"Summarize file {n}."


def poll(retrieve, running):
    """Reads a batch until it is no longer `running`, as a client of the real service must:
    the server keeps a batch in progress for its first reads (`--batch-polls`, 2 by default)."""
    reads = [retrieve() for _ in range(10)]
    states = [running(batch) for batch in reads]
    assert states[:3] == [True, True, False], states
    return reads[2]


def test_anthropic_message_batches_create_retrieve_results_list_delete(tmp_path):
    with serve(tmp_path, ANSWERS) as url:
        client = anthropic.Anthropic(api_key="sk-ant-test", base_url=url, max_retries=0)
        batch = client.messages.batches.create(
            requests=[
                {
                    "custom_id": f"file-{n}",
                    "params": {
                        "model": "claude-sim",
                        "max_tokens": 100,
                        "messages": [{"role": "user", "content": prompt(n)}],
                    },
                }
                for n in range(1, 5)
            ]
        )
        assert batch.type == "message_batch"
        assert batch.processing_status == "in_progress"
        assert batch.request_counts.processing == 4

        done = poll(
            lambda: client.messages.batches.retrieve(batch.id),
            lambda b: b.processing_status == "in_progress",
        )
        assert done.processing_status == "ended"
        assert done.ended_at is not None and done.created_at <= done.ended_at
        counts = done.request_counts
        assert (counts.succeeded, counts.errored, counts.expired, counts.canceled) == (2, 1, 1, 0)

        results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
        assert sorted(results) == ["file-1", "file-2", "file-3", "file-4"]
        first = results["file-1"]
        assert first.type == "succeeded"
        assert first.message.content[0].text == "The first file holds the parser."
        assert first.message.usage.input_tokens == 30
        assert results["file-2"].type == "errored"
        assert results["file-2"].error.error.message == "the model broke"
        assert results["file-3"].type == "expired"
        assert results["file-4"].message.content[0].text == "The fourth file holds the tests."

        listed = [b.id for b in client.messages.batches.list()]
        assert listed == [batch.id]
        deleted = client.messages.batches.delete(batch.id)
        assert (deleted.id, deleted.type) == (batch.id, "message_batch_deleted")
        try:
            client.messages.batches.retrieve(batch.id)
            raise AssertionError("a deleted batch is gone")
        except anthropic.NotFoundError:
            pass


def test_anthropic_cancel_before_the_batch_ends(tmp_path):
    # A script that has run out still answers; the cancel comes while the batch is still in
    # progress, as it is at first on the real service.
    with serve(tmp_path, ANSWERS) as url:
        client = anthropic.Anthropic(api_key="sk-ant-test", base_url=url, max_retries=0)
        batch = client.messages.batches.create(
            requests=[
                {
                    "custom_id": "only",
                    "params": {
                        "model": "claude-sim",
                        "max_tokens": 100,
                        "messages": [{"role": "user", "content": prompt(1)}],
                    },
                }
            ]
        )
        cancelled = client.messages.batches.cancel(batch.id)
        assert cancelled.processing_status in ("canceling", "ended")


def test_openai_files_and_batches_from_upload_to_output_and_error_files(tmp_path):
    with serve(tmp_path, ANSWERS) as url:
        client = openai.OpenAI(api_key="sk-test", base_url=url + "/v1", max_retries=0)
        lines = [
            {
                "custom_id": f"file-{n}",
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {
                    "model": "gpt-sim",
                    "messages": [{"role": "user", "content": prompt(n)}],
                },
            }
            for n in range(1, 5)
        ]
        path = tmp_path / "batch.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        with path.open("rb") as file:
            uploaded = client.files.create(file=file, purpose="batch")
        assert (uploaded.purpose, uploaded.bytes) == ("batch", path.stat().st_size)
        assert client.files.retrieve(uploaded.id).filename == "batch.jsonl"

        batch = client.batches.create(
            input_file_id=uploaded.id,
            endpoint="/v1/chat/completions",
            completion_window="24h",
        )
        assert batch.status == "validating"
        done = poll(
            lambda: client.batches.retrieve(batch.id),
            lambda b: b.status in ("validating", "in_progress", "finalizing"),
        )
        assert done.status == "completed"
        assert (done.request_counts.total, done.request_counts.completed) == (4, 2)
        assert [b.id for b in client.batches.list()] == [batch.id]

        output = [json.loads(line) for line in client.files.content(done.output_file_id).text.splitlines()]
        by_id = {line["custom_id"]: line for line in output}
        assert by_id["file-1"]["response"]["status_code"] == 200
        body = by_id["file-1"]["response"]["body"]
        assert body["choices"][0]["message"]["content"] == "The first file holds the parser."
        assert body["usage"]["prompt_tokens"] == 30
        assert by_id["file-2"]["response"]["status_code"] == 500
        assert by_id["file-2"]["response"]["body"]["error"]["message"] == "the model broke"

        errors = [json.loads(line) for line in client.files.content(done.error_file_id).text.splitlines()]
        assert [(e["custom_id"], e["error"]["code"]) for e in errors] == [("file-3", "batch_expired")]


def test_openai_refuses_a_batch_for_a_file_it_does_not_hold(tmp_path):
    with serve(tmp_path, ANSWERS) as url:
        client = openai.OpenAI(api_key="sk-test", base_url=url + "/v1", max_retries=0)
        try:
            client.batches.create(
                input_file_id="file-missing",
                endpoint="/v1/chat/completions",
                completion_window="24h",
            )
            raise AssertionError("a batch over a missing file is refused")
        except openai.BadRequestError as err:
            assert "file-missing" in str(err)
