#!/bin/sh
# The C snippets of README.md and docs/*.md, compiled against include/ and
# linked with build/libshexec.so, so that what a reader copies builds: each
# ```c block is one test. A block with its own main() is a whole program,
# built and run (it must exit 0). Any other is a fragment: it becomes the
# body of a function, in a file that gives it what the docs take as given
# (a session s, a task t, a size_t n, a socket my_socket, a value pw, a
# show() to print with); a line that is only "..." (with a comment or not)
# stands for the host's own code. Variables a fragment sets for show are
# allowed to go unused; every other warning of -Wall -Wextra fails it.
# Prints cmocka-style summary lines for test/run-tests.sh. No arguments;
# works from any directory. CC names the compiler (default cc).
top=$(cd "$(dirname "$0")/.." && pwd)
cc=${CC:-cc}
lib="$top/build/libshexec.so"
if [ ! -e "$lib" ]; then
    echo "test_doc_snippets: $lib not found: build the library first (make)"
    echo "[  FAILED  ] 1 test(s)"
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-variable
       -Wno-unused-but-set-variable -I$top/include"
link="-L$top/build -lshexec -Wl,-rpath,$top/build"

passed=0
failed=""
for doc in "$top/README.md" "$top"/docs/*.md; do
    name=${doc#"$top"/}
    # each ```c block into its own file, named by the line it starts on
    awk -v dir="$work" '
        /^```c[ \t]*$/ { start = NR + 1; file = dir "/block-" start ".c"; next }
        /^```[ \t]*$/ && file { close(file); file = ""; next }
        file { print > file }
    ' "$doc"
    for block in "$work"/block-*.c; do
        [ -e "$block" ] || continue
        line=${block##*/block-}
        line=${line%.c}
        what="$name:$line"
        if grep -q 'main(' "$block"; then
            if ! "$cc" $flags -o "$work/prog" "$block" $link >"$work/log" 2>&1; then
                failed="$failed $what"
                echo "$what: does not build:"; sed 's/^/    /' "$work/log"
            elif ! (cd "$work" && ./prog >"$work/log" 2>&1); then
                failed="$failed $what"
                echo "$what: does not exit 0:"; sed 's/^/    /' "$work/log"
            else
                passed=$((passed + 1))
            fi
        else
            {
                cat <<'C'
#include <shexec.h>
#include <shexec_tool.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* what the docs' fragments take as given */
shexec_session *s;
shexec_task *t;
size_t n;
int my_socket;
const char *pw = "";
void show(const char *text);
void show(const char *text) { (void)text; }
void fragment(void);
void fragment(void)
{
C
                # a line that is only "..." is the host's own code
                printf '#line %s "%s"\n' "$line" "$name"
                sed 's|^\([ \t]*\)\.\.\.\([ \t]*/\*.*\*/\)\{0,1\}[ \t]*$|\1/* ... */|' "$block"
                printf '}\nint main(void) { return 0; }\n'
            } >"$work/fragment.c"
            if "$cc" $flags -o "$work/prog" "$work/fragment.c" $link >"$work/log" 2>&1; then
                passed=$((passed + 1))
            else
                failed="$failed $what"
                echo "$what: does not build:"; sed 's/^/    /' "$work/log"
            fi
        fi
        rm -f "$block"
    done
done

echo "[  PASSED  ] $passed test(s)."
if [ -n "$failed" ]; then
    set -- $failed
    echo "[  FAILED  ] $# test(s), listed below:"
    for f in "$@"; do
        echo "[  FAILED  ] $f"
    done
    exit 1
fi
exit 0
