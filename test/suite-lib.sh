# suite-lib.sh - what the runners of the bindings' and the MCP server's
# suites share (test/go, test/rust, test/node and test/mcp: run.sh), sourced
# by each after it sets SUITE to its name: the repository's root, a stop
# before any test ran, a toolchain installed from Debian when missing, and
# the cmocka-style summary lines test/run-tests.sh counts:
#   [  PASSED  ] N test(s).
#   [  SKIPPED ] N test(s).               (when some were skipped)
#   [  FAILED  ] N test(s), listed below:  (then one line per failure)
#   [  FAILED  ] SUITE: NAME
# Not a suite itself: it runs nothing when sourced but the cd below.

# the runner is test/SUITE/run.sh: the repository is two levels up
repo=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
cd "$repo" || exit 1

# Stop before any test ran, saying why.
fail() {
    echo "$1"
    echo "[  FAILED  ] 1 test(s), listed below:"
    echo "[  FAILED  ] $SUITE: $1"
    exit 1
}

# Like cmocka, a missing toolchain is installed from Debian when running as
# root: debian_install WHAT PACKAGE... (does nothing otherwise; the caller
# looks for the tool again and fails if it is still missing).
debian_install() {
    what=$1
    shift
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 0
    echo "$what missing: installing $*"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# node and npm (Debian's nodejs and npm when missing); without node, stop.
need_node() {
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        debian_install node/npm nodejs npm
        command -v node >/dev/null 2>&1 || fail "node not found (sudo apt-get install -y nodejs npm)"
    fi
}

# This tree's library, built.
need_library() {
    [ -e "$repo/build/libshexec.so.1" ] ||
        fail "build/libshexec.so.1 not found: build the library first (make)"
}

# What ran, for finish: add to passed and skipped, and add_failure NAME
# for each failure.
passed=0
skipped=0
failed=0
failures=""
add_failure() {
    failures="$failures
[  FAILED  ] $SUITE: $1"
    failed=$((failed + 1))
}

# The summary lines, and the exit status: 1 when anything failed.
finish() {
    echo "[  PASSED  ] $passed test(s)."
    [ "$skipped" != 0 ] && echo "[  SKIPPED ] $skipped test(s)."
    if [ "$failed" != 0 ]; then
        echo "[  FAILED  ] $failed test(s), listed below:$failures"
        exit 1
    fi
    exit 0
}

# The counts of a node --test run from its TAP output in file $1 (its exit
# status $2), then finish: a cancelled test counts as failed, a run that
# failed with none counted fails once, and the failures are the 'not ok'
# lines of the output shown.
tap_finish() {
    pass=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$1" | tail -n 1)
    fails=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$1" | tail -n 1)
    cancelled=$(sed -n 's/^# cancelled \([0-9]*\)$/\1/p' "$1" | tail -n 1)
    # node:test says "# skipped N"; "# skip N" is the other TAP spelling
    skip=$(sed -n -e 's/^# skip \([0-9]*\)$/\1/p' -e 's/^# skipped \([0-9]*\)$/\1/p' "$1" | tail -n 1)
    passed=${pass:-0}
    skipped=${skip:-0}
    fails=$((${fails:-0} + ${cancelled:-0}))
    if [ "$2" != 0 ] || [ "$fails" != 0 ]; then
        [ "$fails" = 0 ] && fails=1
        failed=$fails
        failures="
[  FAILED  ] $SUITE (see the 'not ok' lines above)"
    fi
    finish
}
