#!/bin/sh
# The Rust binding (examples/rust) against the library of this tree: cargo
# test (its integration tests, the example and the doctests), with Debian's
# toolchain when it is there (the oldest Rust the crate supports), then a
# smoke run of the Rust bench peer (bench/peers/rust). Ends with
# cmocka-style summary lines so test/run-tests.sh can count them:
#   [  PASSED  ] N test(s).      (cargo's passed tests, +1 for the peer)
#   [  FAILED  ] N test(s), listed below:
#   [  FAILED  ] rust: NAME
# No arguments; works from any directory. Cargo builds in build/rust of the
# repository: nothing is written to the sources.
SUITE=rust
. "$(dirname "$0")/../suite-lib.sh"

# Debian's cargo first, else PATH's
pick_cargo() {
    if [ -x /usr/bin/cargo ]; then
        echo /usr/bin/cargo
    else
        command -v cargo 2>/dev/null
    fi
}
CARGO=$(pick_cargo)
if [ -z "$CARGO" ] || { [ ! -x /usr/bin/rustc ] && ! command -v rustc >/dev/null 2>&1; }; then
    debian_install cargo/rustc rustc cargo
    CARGO=$(pick_cargo)
    [ -n "$CARGO" ] || fail "cargo not found (sudo apt-get install -y rustc cargo)"
fi
# cargo runs the `rustc` and `rustdoc` of PATH, which may be a newer
# toolchain (rustup's): Debian's cargo gets Debian's compiler
if [ "$CARGO" = /usr/bin/cargo ] && [ -x /usr/bin/rustc ]; then
    RUSTC=/usr/bin/rustc
    export RUSTC
    if [ -x /usr/bin/rustdoc ]; then
        RUSTDOC=/usr/bin/rustdoc
        export RUSTDOC
    fi
fi
need_library

SHEXEC_LIB_DIR="$repo/build"     # this tree's library, before any installed one
CARGO_TARGET_DIR="$repo/build/rust"
RUSTFLAGS="-D warnings"
CARGO_TERM_COLOR=never
export SHEXEC_LIB_DIR CARGO_TARGET_DIR RUSTFLAGS CARGO_TERM_COLOR
"$CARGO" --version
"${RUSTC:-rustc}" --version

log=$(mktemp -d) || exit 1
trap 'rm -rf "$log"' EXIT

echo "== cargo test --offline (examples/rust)"
# --no-fail-fast: every test binary runs, so every failure is listed
"$CARGO" test --offline --no-fail-fast --manifest-path examples/rust/Cargo.toml >"$log/test" 2>&1
rc=$?
cat "$log/test"
# one "test result:" line per test binary and for the doctests
counts=$(sed -n 's/^test result: [A-Za-z]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored.*/\1 \2 \3/p' "$log/test" |
    awk '{ p += $1; f += $2; i += $3 } END { printf "%d %d %d", p, f, i }')
set -- $counts
passed=$((passed + $1))
skipped=$((skipped + $3))
names=$(sed -n 's/^test \(.*\) \.\.\. FAILED$/\1/p' "$log/test")
for name in $names; do
    add_failure "$name"
done
# a failure without a failed test: the build, or a crashed test binary
if [ "$rc" != 0 ] && [ -z "$names" ]; then
    add_failure "cargo test (exit $rc)"
fi

echo "== bench peer (bench/peers/rust): spawn std and shexec"
peer="$CARGO_TARGET_DIR/debug/shexec-bench-peer-rust"
peer_ok=1
if "$CARGO" build --offline --manifest-path bench/peers/rust/Cargo.toml >"$log/peer" 2>&1; then
    for mode in std shexec; do
        out=$("$peer" spawn "$mode" /bin/sh 5 0 2>&1)
        echo "spawn $mode: $out"
        echo "$out" | grep -Eq '^RESULT runs_per_s=[0-9]+\.[0-9]{3} runs=5$' || peer_ok=0
    done
    out=$("$peer" version 2>&1)
    echo "version: $out"
    echo "$out" | grep -Eq '^RESULT version=[0-9]' || peer_ok=0
else
    cat "$log/peer"
    peer_ok=0
fi
if [ "$peer_ok" = 1 ]; then
    passed=$((passed + 1))
else
    add_failure "bench peer"
fi
finish
