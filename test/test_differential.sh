#!/bin/sh
# The differential fidelity suite (test/diff/README.md): every case of
# test/diff/corpus runs through the library and through the plain shell
# started the same way (`bash -c CMD`, `sh -c CMD`), and stdout, stderr, the
# ending and the final directory must be the same, byte for byte. For bash
# and for sh (dash), three modes of the library share each plain run: the
# shell directly; behind bubblewrap as a local wrapper (skipped, and said,
# when bwrap is missing or cannot run here); behind test/diff/joinsh, which
# joins its arguments as ssh does, as a remote-shell wrapper. Each mode has
# its list of known differences (test/diff/known-*.txt). A case that differs
# and is not listed fails; in the direct modes so does a listed case that no
# longer differs (a stale entry), while the wrapper modes only report those.
#
# SHEXEC_DIFF_REPORT=1: never fail; print every difference, and for each mode
# the entries its list lacks (NAME: fields), to fill the lists.
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$top/test/diff
if [ -n "$SHEXEC_TEST_HELPERS" ]; then
    diffrun=$SHEXEC_TEST_HELPERS/../diffrun
else
    diffrun=$top/build/default/test/diffrun
fi
report=${SHEXEC_DIFF_REPORT:-0}
if [ ! -x "$diffrun" ]; then
    echo "test_differential: $diffrun is not built (make build/default/test/diffrun)"
    [ "$report" = 1 ] && exit 0
    echo "[  FAILED  ] 1 test(s)."
    exit 1
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# bubblewrap as a local wrapper: it passes descriptors; as root it needs no
# user namespace
bwrap_args="--dev-bind / / --proc /proc --die-with-parent"
if ! command -v bwrap >/dev/null 2>&1; then
    bwrap_skip="bubblewrap is not installed (apt-get install -y bubblewrap)"
elif ! why=$(bwrap $bwrap_args /bin/true 2>&1); then
    bwrap_skip="bwrap $bwrap_args cannot run here: $(printf '%s\n' "$why" | head -n 1)"
fi

passed=0
failed=0
status=0
for shell in bash sh; do
    set -- --shell "/bin/$shell" --direct --known "$dir/known-$shell.txt"
    if [ -z "$bwrap_skip" ]; then
        # shellcheck disable=SC2086 # the options are words
        set -- "$@" --wrapper-local bwrap $bwrap_args -- --known "$dir/known-bwrap-$shell.txt"
    fi
    if [ -x "$dir/joinsh" ]; then
        set -- "$@" --wrapper-remote-shell "$dir/joinsh" --
    else
        set -- "$@" --wrapper-remote-shell /bin/sh "$dir/joinsh" --
    fi
    set -- "$@" --known "$dir/known-remote-$shell.txt"
    [ "$report" = 1 ] && set -- "$@" --suggest
    echo "== $shell"
    [ -n "$bwrap_skip" ] && echo "test_differential: the bwrap mode is skipped: $bwrap_skip"
    "$diffrun" "$@" "$dir/corpus" >"$log" 2>&1
    rc=$?
    cat "$log"
    counts=$(awk '/^result: / {
            for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] += kv[2] }; n++ }
        END { if (n) print v["passed"] + v["known"], v["differ"] + v["stale"] }' "$log")
    if [ -z "$counts" ]; then
        echo "test_differential: diffrun for $shell did not finish (exit $rc)"
        failed=$((failed + 1))
        status=1
        continue
    fi
    passed=$((passed + ${counts% *}))
    failed=$((failed + ${counts#* }))
    [ "$rc" != 0 ] && status=1
done

echo
if [ "$report" = 1 ]; then
    echo "test_differential: report mode (SHEXEC_DIFF_REPORT=1): $failed unlisted or stale, not failing"
    echo "[  PASSED  ] $passed test(s)."
    exit 0
fi
echo "[  PASSED  ] $passed test(s)."
if [ "$failed" -gt 0 ] || [ "$status" != 0 ]; then
    echo "[  FAILED  ] $failed test(s)."
    exit 1
fi
exit 0
