#!/bin/sh
# The Node.js binding (examples/node) as a user gets it, against the library
# of this tree: npm pack makes its tarball in build/node-pack, a scratch
# project there installs it (its pinned dependency, koffi, comes from the npm
# registry), and copies of examples/node/test/*.js run in that project with
# node:test, where require('shexec') is the installed package. Ends with
# cmocka-style summary lines so test/run-tests.sh can count them.
# No arguments; works from any directory. SHEXEC_LIB overrides the library.
SUITE=node
. "$(dirname "$0")/../suite-lib.sh"
root=$repo

need_node
command -v npm >/dev/null 2>&1 || fail "npm not found (sudo apt-get install -y npm)"
if [ -z "$SHEXEC_LIB" ]; then
    SHEXEC_LIB="$root/build/libshexec.so.1"
fi
export SHEXEC_LIB
[ -e "$SHEXEC_LIB" ] || fail "$SHEXEC_LIB not found: build the library first (make)"

# made anew each time, so what is tested is this tree's package and nothing
# a previous run left; the npm cache keeps the reinstall of koffi fast
pack="$root/build/node-pack"
project="$pack/project"
log="$pack/npm.log"
rm -rf "$pack"
mkdir -p "$project/test" || fail "cannot make $project"

# the package has no build step: no script may run while packing
(cd examples/node && npm pack --ignore-scripts --pack-destination "$pack" --loglevel=error) >"$log" 2>&1 ||
    { cat "$log"; fail "npm pack failed"; }
tarball=$(ls "$pack"/shexec-*.tgz 2>/dev/null)
[ -f "$tarball" ] || { cat "$log"; fail "npm pack made no shexec-*.tgz in $pack"; }

# a project of another name: npm refuses a dependency named as its project
cat >"$project/package.json" <<'EOF'
{
  "name": "shexec-install-test",
  "version": "0.0.0",
  "private": true,
  "description": "test/node/run.sh: the packed shexec package installed as a user installs it"
}
EOF
# koffi's prebuilt native module comes in a per-platform optional package:
# no install script needs to run (--ignore-scripts), nothing is compiled
(cd "$project" && npm install --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error "$tarball") \
    >"$log" 2>&1 || { cat "$log"; fail "npm install $tarball failed"; }
rm -f "$log"
cp examples/node/test/*.js "$project/test/" || fail "cannot copy the tests"

# NODE_PATH could lead require('shexec') elsewhere: the project's
# node_modules alone must provide it
unset NODE_PATH
SHEXEC_SOURCE_DIR="$root"
SHEXEC_NODE_PROJECT="$project"
SHEXEC_NODE_TARBALL="$tarball"
export SHEXEC_SOURCE_DIR SHEXEC_NODE_PROJECT SHEXEC_NODE_TARBALL

out=$(mktemp)
trap 'rm -f "$out"' EXIT
(cd "$project" && node --test --test-concurrency=2 --test-reporter=tap test/*.test.js) >"$out" 2>&1
rc=$?
cat "$out"
tap_finish "$out" "$rc"
