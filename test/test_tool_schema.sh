#!/bin/sh
# The tool schemas checked by a real JSON Schema validator (the jsonschema
# package, draft 2020-12) through the Python binding. Uses the first python3
# that has jsonschema (Debian: apt-get install python3-jsonschema).
top=$(cd "$(dirname "$0")/.." && pwd)
py=""
for cand in python3 /usr/bin/python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'from jsonschema import Draft202012Validator' 2>/dev/null; then
        py=$cand
        break
    fi
done
if [ -z "$py" ]; then
    echo "test_tool_schema: no python3 with jsonschema >= 4; install it: apt-get install -y python3-jsonschema"
    echo "[  FAILED  ] 1 test(s)"
    exit 1
fi
log=$(mktemp)
SHEXEC_LIB="$top/build/libshexec.so.1" "$py" "$top/test/python/check_tool_schema.py" -v >"$log" 2>&1
rc=$?
cat "$log"
n=$(sed -n 's/^Ran \([0-9]*\) test.*/\1/p' "$log")
rm -f "$log"
if [ "$rc" = 0 ]; then
    echo "[  PASSED  ] ${n:-0} test(s)."
else
    echo "[  FAILED  ] ${n:-1} test(s)"
    exit 1
fi
