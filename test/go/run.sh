#!/bin/sh
# The Go binding (examples/go) against the library of this tree: go vet,
# go test -v (the binding's tests, the seed scenarios, the example), the same
# under the race detector, and a smoke run of the Go bench peer
# (bench/peers/go). Ends with cmocka-style summary lines so
# test/run-tests.sh can count them:
#   [  PASSED  ] N test(s).      (each --- PASS: line, +1 vet, +1 race, +1 peer)
#   [  FAILED  ] N test(s), listed below:
#   [  FAILED  ] go: NAME
# No arguments; works from any directory. Go's module cache goes to build/go
# of the repository, and its build cache too unless the user has one (below):
# nothing is created in $HOME or written to the sources.
SUITE=go
. "$(dirname "$0")/../suite-lib.sh"

# Debian's go first (the toolchain the module is written for), else PATH's
pick_go() {
    if [ -x /usr/bin/go ]; then
        echo /usr/bin/go
    else
        command -v go 2>/dev/null
    fi
}
GO=$(pick_go)
if [ -z "$GO" ]; then
    debian_install go golang-go
    GO=$(pick_go)
    [ -n "$GO" ] || fail "go not found (sudo apt-get install -y golang-go)"
fi
need_library
command -v "${CC:-gcc}" >/dev/null 2>&1 || command -v cc >/dev/null 2>&1 ||
    fail "no C compiler: cgo needs gcc (apt-get install -y gcc)"

GOPATH="$repo/build/go/path"
# Go's build cache is keyed by content and shared by design: the user's own
# (go env GOCACHE, the one a plain `go test` uses), where it exists already,
# keeps the race-instrumented standard library built once per machine, not
# once per clone; else build/go/cache
GOCACHE=$("$GO" env GOCACHE 2>/dev/null)
case "$GOCACHE" in /*) [ -d "$GOCACHE" ] || GOCACHE= ;; *) GOCACHE= ;; esac
[ -n "$GOCACHE" ] || GOCACHE="$repo/build/go/cache"
GOTOOLCHAIN=local        # never download another toolchain (go 1.21+)
GOFLAGS=-buildvcs=false  # no VCS stamping: the tree may be mid-change
CGO_ENABLED=1
export GOPATH GOCACHE GOTOOLCHAIN GOFLAGS CGO_ENABLED
mkdir -p "$GOPATH" "$GOCACHE" || fail "cannot create build/go"
"$GO" version

log=$(mktemp -d) || exit 1
trap 'rm -rf "$log"' EXIT

cd "$repo/examples/go" || exit 1

# the race detector's run starts first, beside vet and the plain run: its
# build (the standard library again, instrumented) is most of this suite's
# time in a clean tree, and the plain tests spend theirs waiting on commands
"$GO" test -race -count=1 ./... >"$log/race" 2>&1 &
race_pid=$!

echo "== go vet ./..."
if "$GO" vet ./... >"$log/vet" 2>&1; then
    passed=$((passed + 1))
else
    add_failure vet
fi
cat "$log/vet"

echo "== go test -count=1 -v ./..."
"$GO" test -count=1 -v ./... >"$log/test" 2>&1
rc=$?
cat "$log/test"
n=$(grep -c -- '--- PASS:' "$log/test")
passed=$((passed + n))
names=$(sed -n 's/^ *--- FAIL: \([^ ]*\).*/\1/p' "$log/test")
for name in $names; do
    add_failure "$name"
done
if [ "$rc" != 0 ] && [ -z "$names" ]; then
    add_failure "go test (exit $rc: see above)"
fi

echo "== go test -race -count=1 ./..."
wait "$race_pid"
rc=$?
cat "$log/race"
if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
else
    names=$(sed -n 's/^ *--- FAIL: \([^ ]*\).*/\1/p' "$log/race")
    [ -n "$names" ] || names="(exit $rc: see above)"
    for name in $names; do
        add_failure "race: $name"
    done
fi

# the bench peer: built as `make bench` builds it, then each mode once
echo "== bench/peers/go: version, spawn osexec, spawn shexec"
peer_ok=1
if (cd "$repo/bench/peers/go" && "$GO" vet . && "$GO" build -o "$log/peer-go" .) >"$log/peer" 2>&1; then
    for args in "version" "spawn osexec /bin/sh 5 0 2" "spawn shexec /bin/sh 5 0 2"; do
        # shellcheck disable=SC2086 # the arguments are words
        out=$("$log/peer-go" $args 2>&1)
        rc=$?
        echo "peer-go $args: $out"
        case "$out" in
        "RESULT version=go"*) ;;
        "RESULT runs_per_s="*" runs="*) ;;
        *) peer_ok=0 ;;
        esac
        [ "$rc" = 0 ] || peer_ok=0
    done
else
    cat "$log/peer"
    peer_ok=0
fi
if [ "$peer_ok" = 1 ]; then
    passed=$((passed + 1))
else
    add_failure "bench peer (bench/peers/go)"
fi
finish
