#!/usr/bin/env bash
# Run test suites, several at a time: each cmocka test binary (under valgrind
# when VALGRIND=1) and each script suite (*.sh). Prints one line per suite as
# it ends ("ok", "FAIL" or "skip", its counts and seconds), the whole log of a
# suite only when it failed (or every log with VERBOSE=1), and one closing
# line: "check: N passed, N failed" (", N skipped" added when a build lacks
# what some tests need); exits non-zero when a suite failed.
#
#   bash test/run-tests.sh [-j N] SUITE... [--alone SUITE...]
#
# A cmocka suite written PATH@K/N is its shard K of N: the binary runs with
# SHEXEC_TEST_SHARD=K/N and so only its tests K, K+N, ... (testutil.h); the
# Makefile gives a suite that mostly waits several shards, which then run
# at once like any other suites.
#
# The suites before --alone start in the order given, N at a time (1 without
# -j): the longest first, so none is left to run by itself at the end. Those
# after --alone run afterwards, one at a time with nothing else running:
# suites that cannot share the machine. Nothing else means on the whole
# machine, in other runs too (other variants, other trees): a suite holds
# a lock on SHEXEC_CHECK_LOCK (default /tmp/shexec-check.lock; empty: none)
# while it runs, shared, or exclusive for those after --alone. With
# SHEXEC_CHECK_SLOTS=M (several runs sharing the machine), at most M
# suites of all the runs that share the lock run at once. Each suite
# writes its own log, and starts with stdin on /dev/null and the signal
# dispositions the runner had (bash, not sh: a non-interactive sh starts
# background jobs with SIGINT and SIGQUIT ignored, which the test programs
# would inherit).
jobs=1
if [ "$1" = -j ]; then
    jobs=$2
    shift 2
fi
case "$jobs" in '' | *[!0-9]* | 0) echo "run-tests.sh: -j needs a number, not '$jobs'" >&2; exit 2 ;; esac
suites=()
alone=()
in_alone=0
for t in "$@"; do
    if [ "$t" = --alone ]; then
        in_alone=1
    elif [ "$in_alone" = 1 ]; then
        alone+=("$t")
    else
        suites+=("$t")
    fi
done

lock=${SHEXEC_CHECK_LOCK-/tmp/shexec-check.lock}
slots=${SHEXEC_CHECK_SLOTS:-}
case "$slots" in '' | *[!0-9]* | 0) slots="" ;; esac
if [ -n "$lock" ]; then
    if ! command -v flock >/dev/null 2>&1; then
        echo "run-tests.sh: no flock (util-linux): suites are not kept apart from other runs"
        lock=""
    elif [ ! -e "$lock" ] && (umask 0; : >>"$lock") 2>/dev/null; then
        :  # made, readable by all (a lock taken on a read-only descriptor)
    elif [ ! -r "$lock" ]; then
        echo "run-tests.sh: cannot read $lock: suites are not kept apart from other runs"
        lock=""
    fi
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# each ended suite writes its number here; the runner reads one at a time
mkfifo "$tmp/ended" || exit 1
exec 3<>"$tmp/ended"

passed=0
failed=0
skipped=0
broken=""

# split_shard SUITE: sets path (SUITE without a trailing @K/N) and shard
# (K/N, or empty)
split_shard() {
    path=$1
    shard=""
    if [[ $path =~ @([0-9]+/[0-9]+)$ ]]; then
        shard=${BASH_REMATCH[1]}
        path=${path%@*}
    fi
}

# run_suite N PATH [-x]: run one suite (holding the lock, exclusive with
# -x), its output to $tmp/N.log, its exit status and milliseconds to $tmp/N.rc
run_suite() {
    local log=$tmp/$1.log start rc
    # the lock on fd 4 (opened by start_suite), closed for the suite: what it
    # leaves running holds no lock
    [ -n "$lock" ] && flock "${3:--s}" 4
    # a slot (fd 5, closed for the suite as well): the first of M free, a
    # lock on LOCK.slotK (none when no such file can be opened)
    local k opened
    if [ -n "$lock" ] && [ -n "$slots" ] && [ "$3" != -x ]; then
        while :; do
            opened=0
            for ((k = 0; k < slots; k++)); do
                if { exec 5<"$lock.slot$k" || exec 5>>"$lock.slot$k"; } 2>/dev/null; then
                    opened=1
                    flock -n 5 && break 2
                fi
            done
            [ "$opened" = 1 ] || break
            sleep 0.2
        done
    fi
    # PATH@K/N: shard K of N (exported to the suite alone)
    local path shard
    split_shard "$2"
    start=$(date +%s%N)
    case "$path" in
    *.sh) sh "$path" >"$log" 2>&1 </dev/null 3>&- 4>&- 5>&- ;;
    *)
        if [ "$VALGRIND" = 1 ]; then
            SHEXEC_TEST_SHARD=$shard valgrind -q --error-exitcode=99 --leak-check=full \
                --errors-for-leak-kinds=definite --track-fds=no "$path" >"$log" 2>&1 </dev/null 3>&- 4>&- 5>&-
        else
            SHEXEC_TEST_SHARD=$shard "$path" >"$log" 2>&1 </dev/null 3>&- 4>&- 5>&-
        fi ;;
    esac
    rc=$?
    echo "$rc $((($(date +%s%N) - start) / 1000000))" >"$tmp/$1.rc"
}

# start_suite N PATH [-x]: in the background; says N on the fifo when it ends
start_suite() {
    (run_suite "$@" 4<"${lock:-/dev/null}"; echo "$1" >&3) &
}

# report N PATH: its line, its log if it failed, and the totals
report() {
    local name log=$tmp/$1.log rc ms p f k status extra path shard
    split_shard "$2"
    name=$(basename "$path")
    # test/python/run.sh, test/node/run.sh, test/mcp/run.sh: named by their directory
    [ "$name" = run.sh ] && name=$(basename "$(dirname "$path")")/run.sh
    [ -n "$shard" ] && name="$name [$shard]"
    read -r rc ms <"$tmp/$1.rc" 2>/dev/null || { rc=126; ms=0; echo "could not start $2" >>"$log"; }
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
    rm -f "$log" "$tmp/$1.rc"
    extra=""
    [ -n "$k" ] && [ "$k" != 0 ] && extra=", $k skipped"
    [ "$rc" != 0 ] && extra="$extra, exit $rc"
    printf '%-4s %-28s %4s passed, %s failed%s (%d.%d s)\n' "$status" "$name" "${p:-0}" \
        "${f:-0}" "$extra" $((ms / 1000)) $((ms % 1000 / 100))
}

# run_all J LOCKMODE SUITE...: J at a time, each reported as it ends
run_all() {
    local j=$1 mode=$2 next=0 running=0 n
    shift 2
    local list=("$@")
    while [ "$next" -lt "${#list[@]}" ] || [ "$running" -gt 0 ]; do
        while [ "$running" -lt "$j" ] && [ "$next" -lt "${#list[@]}" ]; do
            start_suite "$((base + next))" "${list[next]}" "$mode"
            next=$((next + 1))
            running=$((running + 1))
        done
        read -r n <&3 || break
        report "$n" "${all[n]}"
        running=$((running - 1))
    done
}

all=("${suites[@]}" "${alone[@]}")
if [ "$jobs" -gt 1 ] && [ "${#suites[@]}" -gt 1 ]; then
    then_alone=""
    [ "${#alone[@]}" -gt 0 ] && then_alone=", then ${#alone[@]} one at a time"
    echo "running ${#suites[@]} suites, $jobs at a time$then_alone"
fi
base=0
run_all "$jobs" -s "${suites[@]}"
base=${#suites[@]}
[ "${#alone[@]}" -gt 0 ] && run_all 1 -x "${alone[@]}"
wait

echo
[ -n "$broken" ] && echo "failing binaries:$broken"
if [ "$skipped" -gt 0 ]; then
    echo "check: $passed passed, $failed failed, $skipped skipped"
else
    echo "check: $passed passed, $failed failed"
fi
[ "$failed" = 0 ] && [ -z "$broken" ]
