#!/bin/sh
# The library's shape (test/layering.py, test/shape.py): no circle of calls among lib/
# files, the tool layer on the public API and its one door, tests on the
# test hooks only, no oversized file; each header declaring only its own
# file's functions (a hook, its folder's), no include unused, the folders'
# rules (includes written from lib/, the helpers alone, the attachments
# reached through their hooks, at most 14 rooms), the back-up dependencies
# bounded.
if python3 "$(dirname "$0")/layering.py"; then
    echo "test_layering: ok"
    echo "[  PASSED  ] 1 test(s)."
else
    echo "[  FAILED  ] 1 test(s)"
    exit 1
fi
