#!/bin/sh
# The Node.js binding (examples/node) against the library of this tree:
# examples/node/test/*.test.js with node:test. Installs the pinned packages
# (examples/node/package-lock.json: koffi) on first use, then ends with
# cmocka-style summary lines so test/run-tests.sh can count them.
# No arguments; works from any directory. SHEXEC_LIB overrides the library.
cd "$(dirname "$0")/../../examples/node" || exit 1

fail() {
    echo "$1"
    echo "[  FAILED  ] 1 test(s), listed below:"
    echo "[  FAILED  ] node: $1"
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
if [ -z "$SHEXEC_LIB" ]; then
    SHEXEC_LIB="$(cd ../.. && pwd)/build/libshexec.so.1"
fi
export SHEXEC_LIB
[ -e "$SHEXEC_LIB" ] || fail "$SHEXEC_LIB not found: build the library first (make)"
# koffi's prebuilt native module comes in a per-platform optional package:
# no install script needs to run (--ignore-scripts), nothing is compiled
if [ ! -f node_modules/koffi/package.json ]; then
    command -v npm >/dev/null 2>&1 || fail "npm not found (apt-get install npm)"
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >npm-ci.log 2>&1 ||
        { cat npm-ci.log; fail "npm ci failed"; }
    rm -f npm-ci.log
fi

log=$(mktemp)
node --test --test-concurrency=1 --test-reporter=tap test/*.test.js >"$log" 2>&1
rc=$?
cat "$log"
pass=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log" | tail -n 1)
failed=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$log" | tail -n 1)
cancelled=$(sed -n 's/^# cancelled \([0-9]*\)$/\1/p' "$log" | tail -n 1)
skipped=$(sed -n 's/^# skip \([0-9]*\)$/\1/p' "$log" | tail -n 1)
rm -f "$log"
failed=$((${failed:-0} + ${cancelled:-0}))
echo "[  PASSED  ] ${pass:-0} test(s)."
[ "${skipped:-0}" != 0 ] && echo "[  SKIPPED ] $skipped test(s)."
if [ "$rc" != 0 ] || [ "$failed" != 0 ]; then
    [ "$failed" = 0 ] && failed=1
    echo "[  FAILED  ] $failed test(s), listed below:"
    echo "[  FAILED  ] node (see the 'not ok' lines above)"
    exit 1
fi
exit 0
