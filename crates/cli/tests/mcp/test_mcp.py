"""`merkle mcp` driven by the official `mcp` Python SDK, as an editor or agent would drive it.

Each test makes a small workspace in a temporary folder, scans it and registers an agent with
the real binary, then starts `merkle --root <tmp> mcp --agent bot` as a stdio server through the
SDK's client and talks to it: list the tools, put a frame and read it back, see a bad path come
back as a tool error, list and read the node resources. It runs once per way the SDK connects:
`auto` (the 2026 `server/discover` lifecycle, falling back to `initialize`) and `legacy` (the
`initialize` handshake). The same server over Streamable HTTP (`mcp --http`) is driven too,
with and without a bearer token.

The binary is $MERKLE_BIN, else target/debug/merkle under $CARGO_TARGET_DIR or the
repository. Run: pip install mcp pytest && pytest crates/cli/tests/mcp
"""

import json
import os
import pathlib
import signal
import subprocess

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

REPO = pathlib.Path(__file__).resolve().parents[4]


def merkle_bin():
    if "MERKLE_BIN" in os.environ:
        return str(pathlib.Path(os.environ["MERKLE_BIN"]).resolve())
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return str((target / "debug" / "merkle").resolve())


def merkle(root, *args):
    done = subprocess.run(
        [merkle_bin(), "--root", str(root), *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "src" / "main.rs").write_text("fn main() {\n    println!(\"hi\");\n}\n")
    (root / "src" / "lib.rs").write_text("pub fn add(a: i32, b: i32) -> i32 { a + b }\n")
    (root / "README.md").write_text("# demo\n")
    merkle(root, "scan")
    merkle(root, "agent", "add", "bot", "--role", "synthesis")
    merkle(root, "agent", "add", "eve", "--role", "reader")
    return root


def server(root, agent):
    return StdioServerParameters(
        command=merkle_bin(), args=["--root", str(root), "mcp", "--agent", agent]
    )


def text_of(result):
    assert len(result.content) == 1, result
    return result.content[0].text


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_tools_and_resources_through_the_sdk(workspace, mode):
    async def session():
        async with Client(server(workspace, "bot"), mode=mode) as client:
            tools = await client.list_tools()
            assert sorted(t.name for t in tools.tools) == [
                "context",
                "get_node",
                "list_frames",
                "put_frame",
                "refs",
                "related",
                "search",
                "status",
                "synthesize",
            ]
            schema = next(t for t in tools.tools if t.name == "put_frame").input_schema
            assert sorted(schema["required"]) == ["content", "path", "type"]

            put = await client.call_tool(
                "put_frame",
                {"path": "src/main.rs", "type": "summary", "content": "Entry point: says hi."},
            )
            assert not put.is_error, put
            put_json = json.loads(text_of(put))
            assert put_json["created"] is True and put_json["path"] == "src/main.rs"

            got = await client.call_tool("get_node", {"path": "src/main.rs"})
            assert not got.is_error, got
            node = json.loads(text_of(got))
            assert node["node"]["path"] == "src/main.rs"
            assert node["node"]["kind"] == "file"
            assert [(f["frame_type"], f["agent_id"], f["content"]) for f in node["frames"]] == [
                ("summary", "bot", "Entry point: says hi.")
            ]
            assert node["frames"][0]["frame_id"] == put_json["frame_id"]

            # The same document `merkle --json get-node` prints.
            cli = json.loads(merkle(workspace, "--json", "get-node", "src/main.rs"))
            assert node == cli

            listed = await client.call_tool("list_frames", {"path": "src/main.rs", "type": "summary"})
            assert [f["frame_id"] for f in json.loads(text_of(listed))] == [put_json["frame_id"]]

            # search answers what `merkle --json search` prints: the definition first.
            found = await client.call_tool("search", {"query": "add"})
            assert not found.is_error, found
            hits = json.loads(text_of(found))
            assert hits[0]["path"] == "src/lib.rs", hits
            assert hits == json.loads(merkle(workspace, "--json", "search", "add"))

            missing = await client.call_tool("get_node", {"path": "no/such/file.rs"})
            assert missing.is_error
            assert "no/such/file.rs" in text_of(missing)

            unnamed = await client.call_tool("put_frame", {"type": "summary", "content": "x"})
            assert unnamed.is_error
            assert "path" in text_of(unnamed)

            synth = await client.call_tool("synthesize", {"path": "src", "type": "summary"})
            assert not synth.is_error, synth
            assert json.loads(text_of(synth))["path"] == "src"

            status = await client.call_tool("status", {})
            assert not status.is_error, status
            assert json.loads(text_of(status))["frames"] == 2
            # The same document `merkle --json status` prints, remotes and all.
            assert json.loads(text_of(status)) == json.loads(merkle(workspace, "--json", "status"))

            resources = await client.list_resources()
            uris = sorted(str(r.uri) for r in resources.resources)
            assert uris == ["merkle://node/src", "merkle://node/src/main.rs"]

            read = await client.read_resource("merkle://node/src/main.rs")
            assert len(read.contents) == 1
            assert read.contents[0].mime_type == "application/json"
            doc = json.loads(read.contents[0].text)
            assert doc["node"]["path"] == "src/main.rs"
            assert [f["content"] for f in doc["frames"]] == ["Entry point: says hi."]

    anyio.run(session)


def test_a_reader_cannot_write_and_the_store_stays_usable(workspace):
    async def session():
        async with Client(server(workspace, "eve")) as client:
            refused = await client.call_tool(
                "put_frame", {"path": "README.md", "type": "notes", "content": "nope"}
            )
            assert refused.is_error
            assert "eve" in text_of(refused) and "reader" in text_of(refused)

            # While the server runs, other merkle commands still open the store for writing.
            merkle(workspace, "agent", "add", "carol", "--role", "writer")
            merkle(workspace, "scan")

            got = await client.call_tool("get_node", {"path": "."})
            assert not got.is_error, got
            assert json.loads(text_of(got))["node"]["path"] == ""

    anyio.run(session)


def http_server(root, agent, *extra, token=None):
    """`merkle mcp --http` on a free loopback port: the process and the URL it printed."""
    env = dict(os.environ)
    if token is not None:
        env["MERKLE_MCP_TOKEN"] = token
    proc = subprocess.Popen(
        [merkle_bin(), "--root", str(root), "--json", "mcp", "--http", "--agent", agent, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    line = proc.stdout.readline()
    assert line, "the server printed no URL"
    return proc, json.loads(line)["url"]


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_streamable_http_through_the_sdk(workspace, mode):
    proc, url = http_server(workspace, "bot")
    try:

        async def session():
            async with Client(url, mode=mode) as client:
                tools = await client.list_tools()
                assert "put_frame" in [t.name for t in tools.tools]
                put = await client.call_tool(
                    "put_frame", {"path": "src/lib.rs", "type": "summary", "content": "Adds."}
                )
                assert not put.is_error, put
                got = await client.call_tool("get_node", {"path": "src/lib.rs"})
                node = json.loads(text_of(got))
                assert [f["content"] for f in node["frames"]] == ["Adds."]
                # The same document the CLI prints, over HTTP as over stdio.
                assert node == json.loads(merkle(workspace, "--json", "get-node", "src/lib.rs"))
                found = await client.call_tool("search", {"query": "add"})
                assert json.loads(text_of(found))[0]["path"] == "src/lib.rs"

        anyio.run(session)
    finally:
        stop(proc)


def test_streamable_http_with_a_token(workspace):
    token = "tok-" + "x" * 24
    proc, url = http_server(workspace, "bot", "--token-env", "MERKLE_MCP_TOKEN", token=token)
    try:

        async def with_token():
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
            async with Client(streamable_http_client(url, http_client=http)) as client:
                status = await client.call_tool("status", {})
                assert not status.is_error, status
                # The token acts as the server's agent, which may write.
                put = await client.call_tool(
                    "put_frame", {"path": "README.md", "type": "notes", "content": "by token"}
                )
                assert not put.is_error, put
                got = await client.call_tool("get_node", {"path": "README.md"})
                frames = json.loads(text_of(got))["frames"]
                assert [(f["agent_id"], f["content"]) for f in frames] == [("bot", "by token")]

        anyio.run(with_token)

        async def without_token():
            async with Client(url) as client:
                await client.list_tools()

        with pytest.raises(BaseException):
            anyio.run(without_token)
    finally:
        stop(proc)


def test_streamable_http_a_readers_token_cannot_write(workspace):
    reader, writer = "r-" + "y" * 24, "w-" + "z" * 24
    env_extra = {"MERKLE_MCP_READER": reader, "MERKLE_MCP_WRITER": writer}
    os.environ.update(env_extra)
    try:
        proc, url = http_server(
            workspace,
            "bot",
            "--token-env",
            "MERKLE_MCP_READER=eve",
            "--token-env",
            "MERKLE_MCP_WRITER=bot",
        )
    finally:
        for k in env_extra:
            os.environ.pop(k)
    try:

        async def as_token(token, tool, args):
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
            async with Client(streamable_http_client(url, http_client=http)) as client:
                listed = sorted(t.name for t in (await client.list_tools()).tools)
                return listed, await client.call_tool(tool, args)

        note = {"path": "README.md", "type": "notes", "content": "n"}
        # The reader's token reads, and is shown no tool that writes.
        listed, got = anyio.run(as_token, reader, "get_node", {"path": "README.md"})
        assert not got.is_error, got
        assert listed == [
            "context", "get_node", "list_frames", "refs", "related", "search", "status"
        ]
        # Its write is refused before it reaches the store, and the client is told why: a tool
        # error naming the agent and its role, not a bare HTTP error.
        listed, refused = anyio.run(as_token, reader, "put_frame", note)
        assert refused.is_error, refused
        assert text_of(refused) == (
            'put_frame refused: the request acts as "eve", whose role reader does not allow it '
            "(put_frame needs the writer role)"
        )
        listed, put = anyio.run(as_token, writer, "put_frame", note)
        assert not put.is_error, put
        assert "put_frame" in listed and "synthesize" in listed
        records = [json.loads(l) for l in (workspace / ".merkle" / "audit.jsonl").read_text().splitlines()]
        assert [(r["agent"], r["tool"], r["outcome"]) for r in records] == [
            ("eve", "put_frame", "blocked")
        ]
    finally:
        stop(proc)
