#!/bin/sh
# Run each cmocka test binary (under valgrind when VALGRIND=1) and each
# script suite, print one line per suite ("ok", "FAIL" or "skip", its counts
# and seconds), the whole log of a suite only when it failed (or every log
# with VERBOSE=1), and one closing line: "check: N passed, N failed"
# (", N skipped" added when a build lacks what some tests need).
passed=0
failed=0
skipped=0
broken=""
for t in "$@"; do
    name=$(basename "$t")
    # test/python/run.sh, test/node/run.sh, test/mcp/run.sh: named by their directory
    [ "$name" = run.sh ] && name=$(basename "$(dirname "$t")")/run.sh
    log=$(mktemp)
    start=$(date +%s%N)
    case "$t" in
    *.sh) sh "$t" >"$log" 2>&1 ;;
    *)
    if [ "$VALGRIND" = 1 ]; then
        valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
            --track-fds=no "$t" >"$log" 2>&1
    else
        "$t" >"$log" 2>&1
    fi ;;
    esac
    rc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    k=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    skipped=$((skipped + ${k:-0}))
    status=ok
    if [ "$rc" != 0 ]; then
        broken="$broken $name(exit $rc)"
        [ -z "$f" ] && failed=$((failed + 1))
        status=FAIL
    elif [ "${f:-0}" != 0 ]; then
        status=FAIL
    elif [ -z "$p" ] && [ -n "$k" ]; then
        status=skip
    fi
    if [ "$status" = FAIL ] || [ "$VERBOSE" = 1 ]; then
        cat "$log"
    fi
    rm -f "$log"
    extra=""
    [ -n "$k" ] && [ "$k" != 0 ] && extra=", $k skipped"
    [ "$rc" != 0 ] && extra="$extra, exit $rc"
    printf '%-4s %-28s %4s passed, %s failed%s (%d.%d s)\n' "$status" "$name" "${p:-0}" \
        "${f:-0}" "$extra" $((ms / 1000)) $((ms % 1000 / 100))
done
echo
[ -n "$broken" ] && echo "failing binaries:$broken"
if [ "$skipped" -gt 0 ]; then
    echo "check: $passed passed, $failed failed, $skipped skipped"
else
    echo "check: $passed passed, $failed failed"
fi
[ "$failed" = 0 ] && [ -z "$broken" ]
