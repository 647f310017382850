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
if [ "$fail" = 0 ]; then
    echo "[  PASSED  ] 1 test(s)."
else
    echo "[  FAILED  ] 1 test(s)"
    exit 1
fi
