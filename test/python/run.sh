#!/bin/sh
# The Python binding (examples/python) as a user gets it: pip installs the
# package from the source tree as docs/python.md says, offline (no index;
# build isolation on, pip's default: the build backend, examples/python/
# shexec_build.py, needs nothing from an index), into a venv,
# build/python-venv (made when missing), and the unittest suite
# (test/python/test_*.py) runs with the venv's python from a directory where
# the source tree's package cannot be imported. The install must leave
# examples/python as it found it (no build/, *.egg-info or __pycache__ of
# the build's): the listing of its files before and after is compared. Ends with
# cmocka-style summary lines, so test/run-tests.sh can count them:
#   [  PASSED  ] N test(s).
#   [  SKIPPED ] N test(s).              (when some were skipped)
#   [  FAILED  ] N test(s), listed below: (when some failed or errored)
# Without python3-venv (installed from Debian when missing and root, as
# test/node/run.sh does with node) the install is skipped,
# saying so, and the suite runs against the source tree's package (the
# installed-package test is then skipped). No arguments; works from any directory (it moves to
# the repository root). SHEXEC_LIB defaults to build/libshexec.so.1 of this
# tree; SHEXEC_PYTHON names the python3 to make the venv with.
cd "$(dirname "$0")/../.." || exit 1
root=$(pwd)

# Debian's python3, with python3-venv: a python3 found first in PATH
# (pyenv's, another venv's) may lack what the install needs
py=$SHEXEC_PYTHON
if [ -z "$py" ]; then
    if [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; else py=$(command -v python3); fi
fi
if [ -z "$py" ]; then
    echo "python3 not found: Python binding tests not run"
    echo "[  PASSED  ] 0 test(s)."
    exit 0
fi
if [ -z "$SHEXEC_LIB" ]; then
    SHEXEC_LIB="$root/build/libshexec.so.1"
fi
export SHEXEC_LIB
PYTHONDONTWRITEBYTECODE=1   # leave no __pycache__ in the tree
export PYTHONDONTWRITEBYTECODE
# nothing of the caller's may put another shexec on the path
unset PYTHONPATH PYTHONHOME SHEXEC_TEST_VENV
if [ ! -e "$SHEXEC_LIB" ]; then
    echo "$SHEXEC_LIB not found: build the library first (make)"
    echo "[  FAILED  ] 1 test(s), listed below:"
    exit 1
fi

venv="$root/build/python-venv"
log="$root/build/python-install.log"

# Debian's package for Debian's python3, when root: python3-venv (ensurepip's
# pip)
apt_install() {
    [ "$py" = /usr/bin/python3 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 ||
        return 1
    echo "installing $* (apt-get)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

make_venv() {
    rm -rf "$venv"
    "$py" -m venv "$venv" >"$log" 2>&1 && return 0
    rm -rf "$venv"
    return 1
}

# every path under examples/python, sorted
tree_listing() {
    find examples/python | LC_ALL=C sort
}

# 0: installed; 1: a tool is missing (said why); 2: the install failed;
# 3: it left something in the source tree
install_package() {
    # the venv is made again when it is not the one this python3 made: its
    # python links to the python3 it was made with, and its site-packages
    # are named for that version, so an upgraded python3 leaves it broken
    # (and when it is not a plain one: older ones were made with the
    # system's site-packages, which the build no longer needs)
    made_with="$("$py" -c 'import sys; print(sys.executable, sys.version)' 2>/dev/null | tr '\n' ' ')plain"
    if [ "$(cat "$venv/made-with" 2>/dev/null)" != "$made_with" ] ||
        ! "$venv/bin/python" -c '' >/dev/null 2>&1; then
        if ! make_venv && ! { apt_install python3-venv && make_venv; }; then
            cat "$log"
            echo "python3 -m venv failed: python3-venv missing? (apt-get install python3-venv)"
            return 1
        fi
        echo "$made_with" >"$venv/made-with"
    fi
    # pip builds in the source tree (pip 21.3 and newer; older ones copy
    # it): the backend writes only into pip's own temporary directories.
    # Python's bytecode is let be written, as it is for a user, so a
    # __pycache__ the build leaves shows up too.
    before=$(tree_listing)
    # --force-reinstall: the version stays the same while the code changes
    if ! (unset PYTHONDONTWRITEBYTECODE
          PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 \
              "$venv/bin/python" -m pip install --no-index --no-deps \
                  --force-reinstall --no-cache-dir ./examples/python) >"$log" 2>&1; then
        cat "$log"
        echo "pip install of examples/python into $venv failed"
        return 2
    fi
    after=$(tree_listing)
    if [ "$before" != "$after" ]; then
        cat "$log"
        echo "pip install ./examples/python left in the source tree:"
        printf '%s\n' "$after" | grep -v -x -F -e "$before" | sed 's/^/    /'
        return 3
    fi
    return 0
}

mkdir -p "$root/build"
install_package
case $? in
0)
    echo "testing the package installed in $venv: $("$venv/bin/python" -m pip --version | cut -d' ' -f1-2)"
    testpy="$venv/bin/python"
    SHEXEC_TEST_VENV=$venv
    export SHEXEC_TEST_VENV
    # no shexec here: the import can only find the installed package
    rundir=$venv
    ;;
1)
    echo "the package is not installed: the suite runs against the source tree's"
    testpy=$py
    rundir=$root
    ;;
3)
    echo "[  FAILED  ] 1 test(s), listed below:"
    echo "[  FAILED  ] python: pip install ./examples/python leaves the source tree as it was"
    exit 1
    ;;
*)
    echo "[  FAILED  ] 1 test(s), listed below:"
    echo "[  FAILED  ] python: pip install ./examples/python"
    exit 1
    ;;
esac
rm -f "$log"

cd "$rundir" || exit 1
exec "$testpy" - "$root/test/python" <<'EOF'
# The tests run in two processes at once (forked after discovery, dealt
# out one by one in their order, so a class's slow tests are shared): most
# tests wait on the commands they run, and no test shares state with
# another (each makes its sessions in setUp). Each worker's verbose log is
# printed whole, one after the other, then the totals.
import os
import sys
import tempfile
import unittest

WORKERS = 2
tests = sys.argv[1]
suite = unittest.defaultTestLoader.discover(tests, top_level_dir=tests)


def cases(s):
    for t in s:
        if isinstance(t, unittest.TestSuite):
            yield from cases(t)
        else:
            yield t


groups = [[] for _ in range(WORKERS)]
for i, t in enumerate(cases(suite)):
    groups[i % WORKERS].append(t)

sys.stdout.flush()
workers = []
for g in groups:
    log = tempfile.TemporaryFile(mode="w+")
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            sys.stdout = sys.stderr = os.fdopen(1, "w", buffering=1)
            part = unittest.TestSuite(g)
            r = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(part)
            bad = [t.id() for t, _ in r.failures + r.errors]
            bad += [t.id() for t in r.unexpectedSuccesses]
            print("#counts %d %d %d" % (r.testsRun, len(r.skipped), len(r.expectedFailures)))
            for b in bad:
                print("#bad " + b)
            sys.stdout.flush()
        finally:
            os._exit(0)
    workers.append((pid, log))

run = skipped = expected = 0
bad = []
for pid, log in workers:
    _, status = os.waitpid(pid, 0)
    log.seek(0)
    counted = False
    for line in log:
        if line.startswith("#counts "):
            n = line.split()
            run += int(n[1])
            skipped += int(n[2])
            expected += int(n[3])
            counted = True
        elif line.startswith("#bad "):
            bad.append(line[5:].strip())
        else:
            sys.stdout.write(line)
    if not counted:
        bad.append("a worker ended without its counts (status %d)" % status)
sys.stdout.flush()

passed = run - len(bad) - skipped - expected
print("[  PASSED  ] %d test(s)." % passed)
if skipped:
    print("[  SKIPPED ] %d test(s)." % skipped)
if bad:
    print("[  FAILED  ] %d test(s), listed below:" % len(bad))
    for b in bad:
        print("[  FAILED  ] %s" % b)
sys.exit(1 if bad else 0)
EOF
