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
# (its lock is this test's own: the run that runs this test holds the real one)
SHEXEC_CHECK_LOCK=$tmp/lock
export SHEXEC_CHECK_LOCK
printf '#!/bin/sh\necho noise-of-a-passing-suite\necho "[  PASSED  ] 3 test(s)."\n' >"$tmp/good.sh"
printf '#!/bin/sh\necho why-it-failed\necho "[  PASSED  ] 1 test(s)."\necho "[  FAILED  ] 2 test(s)"\nexit 1\n' >"$tmp/bad.sh"
report=$(VERBOSE= bash "$top/test/run-tests.sh" "$tmp/good.sh" "$tmp/bad.sh")
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

# several at a time (-j 2): a and b each wait for the other to have started;
# the suites after --alone run afterwards, with no other suite running; each
# starts with SIGINT and SIGQUIT as the runner had them (not ignored, unless
# they were here: Ctrl-C stops them), and every log is printed whole with
# the failing suite's line
mkdir "$tmp/marks"
# (what a program started here gets: the shell's own may differ, bash ignores SIGQUIT)
own_ign=$((0x$(sh -c 'sed -n "s/^SigIgn:[[:space:]]*//p" /proc/$$/status') & 6))
for s in a b c; do
    other=a
    [ "$s" = a ] && other=b
    cat >"$tmp/par-$s.sh" <<EOF
#!/bin/sh
: >"$tmp/marks/running-$s"; : >"$tmp/marks/started-$s"
n=0
if [ "$s" != c ]; then
    until [ -e "$tmp/marks/started-$other" ] || [ \$n -gt 200 ]; do sleep 0.05; n=\$((n + 1)); done
    [ -e "$tmp/marks/started-$other" ] || { rm -f "$tmp/marks/running-$s"; echo "[  FAILED  ] 1 test(s)"; exit 1; }
fi
sleep 0.3
rm -f "$tmp/marks/running-$s"
echo "[  PASSED  ] 1 test(s)."
EOF
done
cat >"$tmp/lone.sh" <<EOF
#!/bin/sh
left=\$(ls "$tmp/marks" | grep '^running-')
ign=\$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status)
[ -z "\$left" ] || { echo "others running: \$left"; echo "[  FAILED  ] 1 test(s)"; exit 1; }
[ \$((0x\$ign & 6)) = $own_ign ] || { echo "SIGINT or SIGQUIT ignored: SigIgn \$ign"; echo "[  FAILED  ] 1 test(s)"; exit 1; }
echo "[  PASSED  ] 2 test(s)."
EOF
report=$(VERBOSE= bash "$top/test/run-tests.sh" -j 2 "$tmp/par-a.sh" "$tmp/par-b.sh" "$tmp/bad.sh" \
         "$tmp/par-c.sh" --alone "$tmp/lone.sh")
rc=$?
expect_line '^ok   par-a.sh  *1 passed, 0 failed ('
expect_line '^ok   par-b.sh  *1 passed, 0 failed ('
expect_line '^ok   par-c.sh  *1 passed, 0 failed ('
expect_line '^ok   lone.sh  *2 passed, 0 failed ('
expect_line '^why-it-failed$'
expect_line '^check: 6 passed, 2 failed$'
# the failed suite's log comes whole, just before its line
printf '%s\n' "$report" | grep -B 3 '^FAIL bad.sh' | head -n 1 | grep -q '^why-it-failed$' ||
    { echo "test_makefile: bad.sh's log is not whole before its line: $report"; fail=1; }
[ "$(printf '%s\n' "$report" | grep -c '^check:')" = 1 ] ||
    { echo "test_makefile: not one closing line: $report"; fail=1; }
printf '%s\n' "$report" | tail -n 1 | grep -q '^check: ' ||
    { echo "test_makefile: the closing line is not the last: $report"; fail=1; }
[ "$rc" != 0 ] || { echo "test_makefile: the runner (-j 2) exited 0 with a failed suite"; fail=1; }

if [ "$fail" = 0 ]; then
    echo "[  PASSED  ] 1 test(s)."
else
    echo "[  FAILED  ] 1 test(s)"
    exit 1
fi
