#!/bin/sh
# The README's test command on a machine without cmocka: `make check` must
# reach the step that installs cmocka (or says how) before it compiles
# anything that includes <cmocka.h>. Checked on make's own plan (make -n)
# for a fresh build directory, target by target, so the order holds under
# -j as well: each object that includes cmocka.h has the step as a
# prerequisite of its own. Also: everything make builds lands in build/.
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check_target() {
    plan=$(make -n -C "$top" B="$tmp/b" "$tmp/b/$1" 2>&1)
    step=$(printf '%s\n' "$plan" | grep -n 'cmocka is missing' | head -n 1 | cut -d: -f1)
    compile=$(printf '%s\n' "$plan" | grep -n -e ' -c test/' -e ' test/test_[a-z_]*\.c ' | head -n 1 | cut -d: -f1)
    if [ -z "$compile" ]; then
        echo "test_makefile: make -n $1 compiles nothing from test/: $plan"
        fail=1
    elif [ -z "$step" ] || [ "$step" -gt "$compile" ]; then
        echo "test_makefile: $1 is compiled before the cmocka check"
        fail=1
    fi
}
for target in test/testutil.o test/test_run test/test_json; do
    check_target "$target"
done
# `make check` builds what its script suites run, on a fresh tree too
plan=$(make -n -B -C "$top" check 2>&1)
for prog in build/examples/poll_host build/examples/shexec-mcp; do
    if ! printf '%s\n' "$plan" | grep -q -e "-o $prog "; then
        echo "test_makefile: make check does not build $prog"
        fail=1
    fi
done
# Build products go under build/ only: nothing else in the tree is made
# (node_modules and Python's __pycache__ are the test runners' own).
if command -v git >/dev/null 2>&1 && git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
    stray=$(git -C "$top" ls-files --others --ignored --exclude-standard --directory |
            grep -v -e '^build/' -e 'node_modules/' -e '__pycache__/')
    if [ -n "$stray" ]; then
        echo "test_makefile: build products outside build/: $stray"
        fail=1
    fi
fi
# make check's runner: one line per suite, a failed suite's whole log, the total
printf '#!/bin/sh\necho noise-of-a-passing-suite\necho "[  PASSED  ] 3 test(s)."\n' >"$tmp/good.sh"
printf '#!/bin/sh\necho why-it-failed\necho "[  PASSED  ] 1 test(s)."\necho "[  FAILED  ] 2 test(s)"\nexit 1\n' >"$tmp/bad.sh"
report=$(VERBOSE= sh "$top/test/run-tests.sh" "$tmp/good.sh" "$tmp/bad.sh")
rc=$?
expect_line() {
    printf '%s\n' "$report" | grep -q -e "$1" || { echo "test_makefile: runner output lacks /$1/: $report"; fail=1; }
}
expect_line '^ok   good.sh  *3 passed, 0 failed ('
expect_line '^FAIL bad.sh  *1 passed, 2 failed, exit 1 ('
expect_line '^why-it-failed$'
expect_line '^check: 4 passed, 2 failed$'
if printf '%s\n' "$report" | grep -q noise-of-a-passing-suite; then
    echo "test_makefile: the runner printed a passing suite's log"
    fail=1
fi
[ "$rc" != 0 ] || { echo "test_makefile: the runner exited 0 with a failed suite"; fail=1; }

if [ "$fail" = 0 ]; then
    echo "[  PASSED  ] 1 test(s)."
else
    echo "[  FAILED  ] 1 test(s)"
    exit 1
fi
