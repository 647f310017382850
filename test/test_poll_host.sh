#!/bin/sh
# The poll-host example (build/examples/poll_host): one host poll() loop
# drives background tasks while it waits for its own input. Fed through a fifo
# so the test can react to the transcript: learn a task's id, kill it, close
# stdin while a task still runs. Checks that each task's lines arrive whole
# and in order, that tasks run concurrently (A's last line needs B's first to
# have been printed, so a serial host could not finish), a task waiting for
# input announced and answered (`input`), kill / bad kill /
# usage, `list`, `wait`, --kill-on-eof, --redact hiding the environment's secrets,
# exit 0 after EOF, and that no process
# the host started is left behind.
#
#   sh test/test_poll_host.sh [path/to/poll_host]     (from the repo root)
set -u
bin=${1:-build/examples/poll_host}
tmp=$(mktemp -d)
hpid=""
token="30.$$" # a unique sleep length marks the sleepers for the leftover checks
trap '' PIPE # a host that died must fail a check, not kill the test with SIGPIPE

cleanup() {
    exec 3>&-
    [ -d "$tmp" ] && : >"$tmp/go" # let task A end if the host still runs it
    if [ -n "$hpid" ] && kill -0 "$hpid" 2>/dev/null; then
        kill "$hpid" 2>/dev/null
        wait "$hpid" 2>/dev/null
    fi
    # a host that failed may have left its tasks running: end them
    for p in $(procs_with "$token" | cut -d: -f1; procs_with "$tmp" | cut -d: -f1); do
        kill "$p" 2>/dev/null
    done
    rm -rf "$tmp"
}
fail() {
    echo "test_poll_host: $*"
    for f in out err out2 err2; do
        [ -s "$tmp/$f" ] && { echo "--- $f:"; sed 's/^/  | /' "$tmp/$f"; }
    done
    cleanup
    echo "[  FAILED  ] 1 test(s)"
    exit 1
}

# wait_for FILE REGEX: until a line of FILE matches (10 s at most)
wait_for() {
    n=0
    until grep -q -e "$2" "$1" 2>/dev/null; do
        n=$((n + 1))
        [ "$n" -gt 200 ] && return 1
        sleep 0.05
    done
}

# A process is alive if it exists and is not a zombie waiting for its reaper.
alive() {
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
    [ -n "$st" ] && [ "$st" != Z ]
}

# Live processes whose command line contains $1 (read with tr, whose own
# command line does not contain it).
procs_with() {
    for p in /proc/[0-9]*; do
        c=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
        case "$c" in *"$1"*) alive "${p#/proc/}" && echo "${p#/proc/}: $c" ;; esac
    done
}

# The task id of the `run` whose command starts with ": NAME;".
id_of() {
    sed -n "s/^\[\(t[0-9a-f]\{12\}\) started\] : $2;.*/\1/p" "$1"
}

# The output lines of task $2 on stream $3 (out/err), prefix removed, joined by spaces.
lines_of() {
    grep -F "[$2 $3] " "$1" | sed 's/^\[[^]]*\] //' | tr '\n' ' ' | sed 's/ $//'
}

# The transcript line number of the first line containing $2.
line_no() {
    grep -n -F -e "$2" "$1" | head -n 1 | cut -d: -f1
}

[ -x "$bin" ] || fail "no executable $bin (build it: make examples)"
[ -d /proc/self ] || fail "needs /proc"
command -v timeout >/dev/null || fail "needs timeout(1)"

# --- 1. interactive: through a fifo -----------------------------------------

mkfifo "$tmp/in" || fail "mkfifo failed"
timeout 30 "$bin" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
hpid=$!
exec 3>"$tmp/in"

S=": S; sleep $token & echo \"sleeper \$!\"; wait"
A=": A; for i in 1 2 3 4; do echo A\$i; sleep 0.05; done; n=0; while [ ! -e '$tmp/go' ] && [ \$n -lt 400 ]; do sleep 0.05; n=\$((n+1)); done; echo A5"
B=": B; for i in 1 2 3 4 5; do echo B\$i; sleep 0.05; done"
C=": C; echo C1; sleep 0.1; echo C2 >&2; sleep 0.1; printf C3"

printf 'run %s\n' "$S" >&3
wait_for "$tmp/out" '^\[t[0-9a-f]* out\] sleeper [0-9]' || fail "the sleeper task never printed its pid"
sid=$(id_of "$tmp/out" S)
spid=$(sed -n 's/^\[t[0-9a-f]* out\] sleeper \([0-9]*\)$/\1/p' "$tmp/out")
[ -n "$sid" ] && [ -n "$spid" ] || fail "could not learn the sleeper's id and pid"
alive "$spid" || fail "the sleeper $spid is not running"

# three tasks at once, with bad input in between; the sleeper is killed meanwhile
{
    printf 'run %s\n' "$A"
    printf '\n   \n'
    printf 'run %s\n' "$B"
    printf 'kill %s\n' "$sid"
    printf 'frobnicate\n'
    printf 'run %s\n' "$C"
    printf 'kill t000000000000\n'
} >&3
wait_for "$tmp/out" "^\[$sid done\] killed\$" || fail "the killed task did not report killed"
wait_for "$tmp/out" '^\[t[0-9a-f]* out\] C3$' || fail "task C's unterminated last line never appeared"
ida=$(id_of "$tmp/out" A)
idb=$(id_of "$tmp/out" B)
idc=$(id_of "$tmp/out" C)
[ -n "$ida" ] && [ -n "$idb" ] && [ -n "$idc" ] || fail "not every task reported its start"

printf 'list\n' >&3
wait_for "$tmp/out" "^\[list\] $idc " || fail "list did not show every task"
grep -q "^\[list\] $sid killed: : S;" "$tmp/out" || fail "list does not show the sleeper as killed"
grep -q "^\[list\] $ida running: : A;" "$tmp/out" || fail "list does not show task A running"
grep -q "^\[list\] $idc exit 0: : C;" "$tmp/out" || fail "list does not show task C exited 0"

# a task that asks: announced as waiting for input, answered with `input`
Q=": Q; printf 'Answer? '; read -r ans; echo got \$ans"
printf 'run %s\n' "$Q" >&3
wait_for "$tmp/out" '^\[t[0-9a-f]* input\] waiting: Answer? $' || fail "the asking task was not announced as waiting for input"
idq=$(id_of "$tmp/out" Q)
[ -n "$idq" ] || fail "could not learn the asking task's id"
printf 'input %s hello there\n' "$idq" >&3
wait_for "$tmp/out" "^\[$idq out\] Answer? got hello there\$" || fail "the answered task did not print the answer"
wait_for "$tmp/out" "^\[$idq done\] exit 0\$" || fail "the answered task did not end"

# end the input while A still runs (it waits for go): the host must keep going
wait_for "$tmp/out" "^\[$idb out\] B1\$" || fail "task B printed nothing"
exec 3>&-
sleep 0.2
kill -0 "$hpid" 2>/dev/null || fail "the host exited at EOF while task A was still running"
: >"$tmp/go"
wait "$hpid"
rc=$?
hpid=""
[ "$rc" = 0 ] || fail "the host exited $rc (124: timed out)"

[ "$(lines_of "$tmp/out" "$ida" out)" = "A1 A2 A3 A4 A5" ] || fail "task A's lines are wrong"
[ "$(lines_of "$tmp/out" "$idb" out)" = "B1 B2 B3 B4 B5" ] || fail "task B's lines are wrong"
[ "$(lines_of "$tmp/out" "$idc" out)" = "C1 C3" ] || fail "task C's stdout lines are wrong"
[ "$(lines_of "$tmp/out" "$idc" err)" = "C2" ] || fail "task C's stderr line is wrong"
for id in "$ida" "$idb" "$idc"; do
    [ "$(grep -c "^\[$id done\] exit 0\$" "$tmp/out")" = 1 ] || fail "task $id did not report exit 0 once"
done
[ "$(grep -c ' started\] ' "$tmp/out")" = 5 ] || fail "expected 5 started tasks"
# concurrency: B's first line is printed before A's last
b1=$(line_no "$tmp/out" "[$idb out] B1")
a5=$(line_no "$tmp/out" "[$ida out] A5")
[ "$b1" -lt "$a5" ] || fail "tasks did not interleave (B1 at line $b1, A5 at line $a5)"
# a task's end comes after all of its output
[ "$(line_no "$tmp/out" "[$ida done]")" -gt "$a5" ] || fail "A's done line precedes its output"

grep -q 'no task.*t000000000000' "$tmp/err" || fail "the bad kill did not print the library's error"
grep -q 'frobnicate' "$tmp/err" && grep -q 'run CMD' "$tmp/err" || fail "no usage message for a bad command"
[ "$(wc -l <"$tmp/err")" = 3 ] || fail "unexpected messages on stderr"

alive "$spid" && fail "the killed sleeper (pid $spid) is still running"
left=$(procs_with "$token"; procs_with "$tmp")
[ -z "$left" ] || fail "processes left behind: $left"

# --- 2. piped input: `wait` holds later lines; --kill-on-eof ----------------

{
    printf 'run : W; echo W1; sleep 0.3; echo W2\n'
    printf 'wait\n'
    printf 'run : Z; sleep %s; echo not killed\n' "$token"
} | timeout 30 "$bin" --kill-on-eof >"$tmp/out2" 2>"$tmp/err2"
rc=$?
[ "$rc" = 0 ] || fail "--kill-on-eof: the host exited $rc (124: it waited for the sleeper)"
idw=$(id_of "$tmp/out2" W)
idz=$(id_of "$tmp/out2" Z)
[ -n "$idw" ] && [ -n "$idz" ] || fail "--kill-on-eof: not every task started"
w_done=$(line_no "$tmp/out2" "[$idw done] exit 0")
z_start=$(line_no "$tmp/out2" "[$idz started]")
[ -n "$w_done" ] && [ -n "$z_start" ] && [ "$w_done" -lt "$z_start" ] ||
    fail "wait: a line after it ran before the task ended"
grep -q "^\[wait\] no task running\$" "$tmp/out2" || fail "wait did not report its end"
grep -q "^\[$idz done\] killed\$" "$tmp/out2" || fail "--kill-on-eof did not kill the sleeper"
grep -q "^\[$idz out\]" "$tmp/out2" && fail "the killed task went on"
[ -s "$tmp/err2" ] && fail "unexpected messages on stderr"
left=$(procs_with "$token"; procs_with "$tmp")
[ -z "$left" ] || fail "processes left behind: $left"

# --- 3. --redact: the environment's secrets never reach the host's output ---

secret="tok-$$-abcdefgh"
printf 'run echo "$DEPLOY_TOKEN" and ghp_0123456789abcdefghijklmnopqrstuvwxyz\nwait\n' |
    DEPLOY_TOKEN="$secret" timeout 30 "$bin" --redact >"$tmp/out3" 2>"$tmp/err3" ||
    fail "--redact: the host failed"
grep -q "out\] \[REDACTED:DEPLOY_TOKEN\] and \[REDACTED:GITHUB_TOKEN\]\$" "$tmp/out3" ||
    fail "--redact: the secrets were not hidden: $(cat "$tmp/out3")"
grep -q "$secret" "$tmp/out3" && fail "--redact: the token reached the output"
printf 'run echo "$DEPLOY_TOKEN"\nwait\n' |
    DEPLOY_TOKEN="$secret" timeout 30 "$bin" >"$tmp/out3" 2>"$tmp/err3" || fail "the host failed"
grep -q "$secret" "$tmp/out3" || fail "without --redact the value is printed as it is"

rm -rf "$tmp"
echo "test_poll_host: 4 tasks streamed, interleaved and killed through one host poll loop: ok"
echo "[  PASSED  ] 1 test(s)."
