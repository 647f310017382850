// The binding as a package: its version is the library's, the package the
// tests load is the installed one (test/node/run.sh installs npm pack's
// tarball into a scratch project and runs these files there), the tarball
// ships the declarations and not the tests, the declarations type-check
// (when a tsc is at hand), and the example of docs/node.md's Install section
// prints what it says.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');
const shexec = require('shexec');
const { nodeScript, SOURCE_DIR } = require('./util');

// set by test/node/run.sh: the scratch project the package is installed in,
// and the tarball installed there
const PROJECT = process.env.SHEXEC_NODE_PROJECT;
const TARBALL = process.env.SHEXEC_NODE_TARBALL;

function headerVersion() {
  const h = fs.readFileSync(path.join(SOURCE_DIR, 'include', 'shexec.h'), 'utf8');
  return ['MAJOR', 'MINOR', 'PATCH']
    .map((k) => h.match(new RegExp(`^#define SHEXEC_VERSION_${k} (\\d+)$`, 'm'))[1])
    .join('.');
}

test('the package version is the library version of include/shexec.h', () => {
  const want = headerVersion();
  assert.equal(require('shexec/package.json').version, want);
  // the source tree's package.json too, when the installed one is tested
  const tree = JSON.parse(fs.readFileSync(path.join(SOURCE_DIR, 'examples', 'node', 'package.json'), 'utf8'));
  assert.equal(tree.version, want);
  assert.equal(shexec.version(), want);
});

test('require("shexec") is the package installed in the scratch project', { skip: !PROJECT && 'run from the source tree (test/node/run.sh tests the installed package)' }, () => {
  const installed = fs.realpathSync(path.join(PROJECT, 'node_modules', 'shexec')) + path.sep;
  const resolved = fs.realpathSync(require.resolve('shexec'));
  assert.ok(resolved.startsWith(installed), `${resolved} is not under ${installed}`);
  const tree = fs.realpathSync(path.join(SOURCE_DIR, 'examples', 'node')) + path.sep;
  assert.ok(!resolved.startsWith(tree), `${resolved} is the source tree's`);
  // and it loads the library named by SHEXEC_LIB, not one of its own
  assert.equal(shexec.libraryPath, process.env.SHEXEC_LIB);
});

test('the packed tarball ships index.d.ts and not the tests', { skip: !TARBALL && 'no tarball (test/node/run.sh packs one)' }, () => {
  const files = execFileSync('tar', ['-tzf', TARBALL], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const f of ['index.js', 'index.d.ts', 'poller.js', 'package.json', 'README.md']) {
    assert.ok(files.includes(`package/${f}`), `${f} missing from ${files.join(' ')}`);
  }
  assert.deepEqual(files.filter((f) => /^package\/(test|node_modules)\//.test(f)), []);
  // what npm installed is what was packed
  if (PROJECT) {
    assert.ok(fs.existsSync(path.join(PROJECT, 'node_modules', 'shexec', 'index.d.ts')));
    assert.ok(!fs.existsSync(path.join(PROJECT, 'node_modules', 'shexec', 'test')));
  }
});

// tsc and @types/node from the node_modules of the project the tests run in
// (run.sh's scratch project, or examples/node): neither is a dependency of the
// package, so the check runs only where someone installed them
const MODULES = path.join(__dirname, '..', 'node_modules');
const TSC = path.join(MODULES, '.bin', 'tsc');
const noTsc = (!fs.existsSync(TSC) && 'tsc not installed in ' + MODULES) ||
  (!fs.existsSync(path.join(MODULES, '@types', 'node')) && '@types/node not installed in ' + MODULES);

test('index.d.ts type-checks with a typed use of the package', { skip: noTsc }, () => {
  // the file sits in the project, so 'shexec' resolves as for a user's code
  // (node16: through "exports", also the source tree's package by its name)
  const dir = fs.mkdtempSync(path.join(__dirname, '..', '.tsc-'));
  try {
    fs.writeFileSync(path.join(dir, 'use.ts'), [
      "import { Session, RunResult } from 'shexec';",
      'export async function main(): Promise<string> {',
      '  const s = new Session({ timeoutMs: 1000 });',
      "  const r: RunResult = await s.run('true');",
      "  const t = s.start('echo done');",
      '  await t.done;',
      '  await s.close();',
      '  return r.stdout + String(r.exitCode) + String(s.cwd) + t.read();',
      '}',
      '',
    ].join('\n'));
    const r = spawnSync(TSC, ['--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16',
      '--types', 'node', path.join(dir, 'use.ts')], { encoding: 'utf8', cwd: dir });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// The example of docs/node.md's Install section, the same as the top
// README's and the other bindings': run as it is written there, so the
// documentation cannot drift from what the package does.
function installExample() {
  const doc = fs.readFileSync(path.join(SOURCE_DIR, 'docs', 'node.md'), 'utf8');
  const section = doc.split(/^## Install$/m)[1];
  assert.ok(section, 'docs/node.md has no "## Install" section');
  const m = section.match(/^```js\n([\s\S]*?)^```$/m);
  assert.ok(m, 'no ```js block in the Install section of docs/node.md');
  return m[1];
}

test('the Install example of docs/node.md prints hello, 3, /tmp, done', async () => {
  const code = installExample();
  assert.match(code, /require\('shexec'\)/);
  const r = await nodeScript(code, { timeoutMs: 20000 });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.deepEqual(r.stdout.split('\n'), ['hello', '3', '/tmp', 'done', '']);
});
