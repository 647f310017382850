#!/bin/sh
# `make check-conformance`: the MCP conformance suite
# (@modelcontextprotocol/conformance, run by Node 22 from the npm package
# "node") against examples/shexec-mcp, reached through bridge.mjs (stdio ->
# Streamable HTTP). Scenarios: server-initialize, ping, tools-list.
# Fails when a scenario fails. Needs node + npm and the npm registry once.
cd "$(dirname "$0")" || exit 1
server=$(cd ../../.. && pwd)/build/examples/shexec-mcp
[ -x "$server" ] || { echo "$server not built (make examples)"; exit 1; }
if [ ! -x node_modules/.bin/conformance ] || [ ! -x node_modules/.bin/node ]; then
    npm ci --no-audit --no-fund --loglevel=error || exit 1
fi
node22=$(pwd)/node_modules/.bin/node
echo "conformance $(sed -n 's/.*"version": "\(.*\)".*/\1/p' node_modules/@modelcontextprotocol/conformance/package.json | head -n 1), node $("$node22" --version)"

portfile=$(mktemp)
"$node22" bridge.mjs "$server" >"$portfile" &
bridge=$!
trap 'kill $bridge 2>/dev/null; rm -f "$portfile"' EXIT
for _ in $(seq 100); do
    grep -q '^listening' "$portfile" && break
    sleep 0.1
done
port=$(sed -n 's/^listening \([0-9]*\)$/\1/p' "$portfile")
[ -n "$port" ] || { echo "the bridge did not start"; exit 1; }

status=0
for scenario in server-initialize ping tools-list; do
    echo "== $scenario"
    out=$(mktemp -d)
    if (cd "$out" && "$node22" "$OLDPWD/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
            server --url "http://127.0.0.1:$port/mcp" --scenario "$scenario"); then
        echo "PASS $scenario"
    else
        echo "FAIL $scenario"
        status=1
    fi
    rm -rf "$out"
done
exit $status
