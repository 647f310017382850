#!/bin/sh
# The shexec-mcp server (examples/shexec-mcp) against the official MCP
# TypeScript clients (the 2026-07-28 dual-era client with the Tasks
# extension's client, and the 1.x SDK) and the inspector CLI
# (test/mcp/*.test.mjs, node:test).
# Installs the pinned packages (package-lock.json) on first use, then ends with
# cmocka-style summary lines so test/run-tests.sh can count them.
# No arguments; works from any directory. SHEXEC_MCP overrides the server path.
cd "$(dirname "$0")" || exit 1

fail() {
    echo "$1"
    echo "[  FAILED  ] 1 test(s), listed below:"
    echo "[  FAILED  ] mcp: $1"
    exit 1
}

# like cmocka, node and npm are installed from Debian when missing and root
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "node/npm missing: installing nodejs npm"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
    fi
    command -v node >/dev/null 2>&1 || fail "node not found (sudo apt-get install -y nodejs npm)"
fi
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
node --test --test-concurrency=1 --test-reporter=tap ./*.test.mjs >"$log" 2>&1
rc=$?
cat "$log"
pass=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log" | tail -n 1)
failed=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$log" | tail -n 1)
skipped=$(sed -n 's/^# skip \([0-9]*\)$/\1/p' "$log" | tail -n 1)
rm -f "$log"
echo "[  PASSED  ] ${pass:-0} test(s)."
[ "${skipped:-0}" != 0 ] && echo "[  SKIPPED ] $skipped test(s)."
if [ "$rc" != 0 ] || [ "${failed:-0}" != 0 ]; then
    echo "[  FAILED  ] ${failed:-1} test(s), listed below:"
    echo "[  FAILED  ] mcp (see the 'not ok' lines above)"
    exit 1
fi
exit 0
