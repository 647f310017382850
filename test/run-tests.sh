#!/bin/sh
# Run each cmocka test binary (under valgrind when VALGRIND=1), add up the
# cmocka summaries and print one closing line: "check: N passed, N failed"
# (", N skipped" added when a build lacks what some tests need).
passed=0
failed=0
skipped=0
broken=""
for t in "$@"; do
    name=$(basename "$t")
    log=$(mktemp)
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
    cat "$log"
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    k=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    rm -f "$log"
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    skipped=$((skipped + ${k:-0}))
    if [ "$rc" != 0 ]; then
        broken="$broken $name(exit $rc)"
        [ -z "$f" ] && failed=$((failed + 1))
    fi
done
echo
[ -n "$broken" ] && echo "failing binaries:$broken"
if [ "$skipped" -gt 0 ]; then
    echo "check: $passed passed, $failed failed, $skipped skipped"
else
    echo "check: $passed passed, $failed failed"
fi
[ "$failed" = 0 ] && [ -z "$broken" ]
