#!/bin/sh
# The built library loads on glibc 2.28 and newer: no symbol it needs from
# the C library may carry a glibc version past 2.28 (objdump -T lists each
# dynamic symbol with the version it is bound to). Newer functions, where
# used, are looked up at run time (lib/shx/platform.c).
top=$(cd "$(dirname "$0")/.." && pwd)
lib="$top/build/libshexec.so.1"
fail=0
if ! command -v objdump >/dev/null 2>&1; then
    echo "test_portability: objdump not found (binutils)"
    fail=1
elif ! objdump -T "$lib" >/dev/null 2>&1; then
    echo "test_portability: cannot read $lib"
    fail=1
else
    late=$(objdump -T "$lib" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\(?GLIBC_[0-9.]+\)?$/) {
        v = $i; gsub(/[()]|GLIBC_/, "", v); split(v, p, ".");
        if (p[1] > 2 || (p[1] == 2 && p[2] + 0 > 28)) print $NF " needs GLIBC_" v } }')
    if [ -n "$late" ]; then
        echo "test_portability: symbols newer than glibc 2.28:"
        printf '%s\n' "$late" | sed 's/^/  /'
        fail=1
    fi
fi
if [ "$fail" = 0 ]; then
    echo "[  PASSED  ] 1 test(s)."
else
    echo "[  FAILED  ] 1 test(s)"
    exit 1
fi
