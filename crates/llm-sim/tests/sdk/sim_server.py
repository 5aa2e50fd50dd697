"""Starts `merkle sim serve` for the SDK tests: the binary is $MERKLE_BIN, else
target/debug/merkle under $CARGO_TARGET_DIR or the repository."""

import contextlib
import os
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[4]

def merkle_bin():
    if "MERKLE_BIN" in os.environ:
        return os.environ["MERKLE_BIN"]
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return str(target / "debug" / "merkle")


@contextlib.contextmanager
def serve(tmp_path, script, *flags):
    path = tmp_path / "script.yaml"
    path.write_text(script)
    process = subprocess.Popen(
        [merkle_bin(), "sim", "serve", "--script", str(path), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), (url, process.stderr.read())
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
