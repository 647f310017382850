#!/bin/sh
# Run the Python binding's unittest suite (test/python/test_*.py) and end
# with cmocka-style summary lines, so test/run-tests.sh can count them:
#   [  PASSED  ] N test(s).
#   [  SKIPPED ] N test(s).              (when some were skipped)
#   [  FAILED  ] N test(s), listed below: (when some failed or errored)
# No arguments; works from any directory (it moves to the repository root).
# SHEXEC_LIB defaults to build/libshexec.so.1 of this tree.
cd "$(dirname "$0")/../.." || exit 1

if ! command -v python3 >/dev/null 2>&1; then
    echo "python3 not found: Python binding tests not run"
    echo "[  PASSED  ] 0 test(s)."
    exit 0
fi
if [ -z "$SHEXEC_LIB" ]; then
    SHEXEC_LIB="$(pwd)/build/libshexec.so.1"
fi
export SHEXEC_LIB
PYTHONDONTWRITEBYTECODE=1   # leave no __pycache__ in the tree
export PYTHONDONTWRITEBYTECODE
if [ ! -e "$SHEXEC_LIB" ]; then
    echo "$SHEXEC_LIB not found: build the library first (make)"
    echo "[  FAILED  ] 1 test(s), listed below:"
    exit 1
fi

exec python3 - <<'EOF'
import sys
import unittest

suite = unittest.defaultTestLoader.discover("test/python", top_level_dir="test/python")
result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
sys.stdout.flush()

bad = [t for t, _ in result.failures + result.errors] + list(result.unexpectedSuccesses)
skipped = len(result.skipped)
passed = result.testsRun - len(bad) - skipped - len(result.expectedFailures)
print("[  PASSED  ] %d test(s)." % passed)
if skipped:
    print("[  SKIPPED ] %d test(s)." % skipped)
if bad:
    print("[  FAILED  ] %d test(s), listed below:" % len(bad))
    for t in bad:
        print("[  FAILED  ] %s" % t.id())
sys.exit(0 if not bad and result.wasSuccessful() else 1)
EOF
