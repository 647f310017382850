#!/bin/sh
# The shexec-mcp server (examples/shexec-mcp) against the official MCP
# TypeScript clients (the 2026-07-28 dual-era client with the Tasks
# extension's client, and the 1.x SDK) and the inspector CLI
# (test/mcp/*.test.mjs, node:test).
# Installs the pinned packages (package-lock.json) on first use, then ends with
# cmocka-style summary lines so test/run-tests.sh can count them.
# No arguments; works from any directory. SHEXEC_MCP overrides the server path.
SUITE=mcp
. "$(dirname "$0")/../suite-lib.sh"
cd "$repo/test/mcp" || exit 1

need_node
[ -x ../../build/examples/shexec-mcp ] || [ -n "$SHEXEC_MCP" ] ||
    fail "build/examples/shexec-mcp not built (make examples)"
if [ ! -d node_modules/@modelcontextprotocol/sdk ] ||
   [ ! -d node_modules/@modelcontextprotocol/inspector-cli ] ||
   [ ! -d node_modules/@modelcontextprotocol/client ] ||
   [ ! -d node_modules/@modelcontextprotocol/ext-tasks ]; then
    command -v npm >/dev/null 2>&1 || fail "npm not found (apt-get install npm)"
    npm ci --no-audit --no-fund --loglevel=error >npm-ci.log 2>&1 ||
        { cat npm-ci.log; fail "npm ci failed"; }
    rm -f npm-ci.log
fi

log=$(mktemp)
# two files at a time: the tests spend their time waiting on commands and
# servers, and each file starts servers of its own
trap 'rm -f "$log"' EXIT
node --test --test-concurrency=2 --test-reporter=tap ./*.test.mjs >"$log" 2>&1
rc=$?
cat "$log"
tap_finish "$log" "$rc"
