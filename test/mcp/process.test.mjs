// shexec-mcp as a process among others: as PID 1 of a pid namespace (a
// container without an init) it reaps the orphans it inherits, and no other
// process of its user can open its descriptors through /proc.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SERVER, sleep, startRaw, tempDir } from './util.mjs';

const root = process.getuid() === 0;

const init = {
  jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
};

// A bash call over raw JSON-RPC: the text of its result.
async function bashText(s, id, args) {
  s.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'bash', arguments: args } });
  const { json } = await s.next(20000);
  assert.equal(json.id, id, JSON.stringify(json));
  return json.result.content[0].text;
}

// unshare -p needs root (CAP_SYS_ADMIN); a container may refuse it anyway
const unshare = ['unshare', '-fp', '--mount-proc'];
const canUnshare = root && spawnSync(unshare[0], [...unshare.slice(1), 'true']).status === 0;

test('as PID 1 it reaps the orphans it inherits; its commands are still its own',
  { skip: !canUnshare && 'needs root and unshare -p' }, async () => {
    const s = startRaw([], { wrap: unshare });
    s.send(init);
    await s.next();
    // the namespace's PID 1 is the server's program
    assert.match(await bashText(s, 1, { command: 'cat /proc/1/comm' }), /^stdout:\nshexec-mcp\n/);
    // orphans: short daemons, and what commands ended at their timeout leave
    let id = 10;
    for (let i = 0; i < 5; i++) {
      assert.match(await bashText(s, id++, { command: '(sleep 0.2 &) ; setsid -f sleep 0.3' }),
        /\nexit_code: 0\n/);
    }
    for (let i = 0; i < 5; i++) {
      assert.match(await bashText(s, id++, { command: 'sleep 0.1 & sleep 0.1 & sleep 30', timeout: 300 }),
        /timed_out: true/);
    }
    // every one of them has ended by now; none may be left a zombie
    await sleep(500);
    const count = 'for f in /proc/[0-9]*/stat; do read -r l < "$f" || continue; ' +
      's=${l##*) }; [ "${s%% *}" = Z ] && echo "zombie: $l"; done; echo counted';
    let t;
    for (let i = 0; i < 20; i++) {
      t = await bashText(s, id++, { command: count });
      if (/^stdout:\ncounted\n/.test(t)) break;
      await sleep(100);
    }
    assert.match(t, /^stdout:\ncounted\n/);
    // the library still waits for its own children: exit codes as they were
    assert.match(await bashText(s, id++, { command: 'exit 7' }), /\nexit_code: 7\n/);
    const bg = await bashText(s, id++, { command: 'sleep 0.2; exit 5', run_in_background: true });
    const task = bg.match(/task_id: (t[0-9a-f]+)/)[1];
    s.send({ jsonrpc: '2.0', id: id++, method: 'tools/call',
      params: { name: 'task_output', arguments: { task_id: task, yield_time_ms: 10000 } } });
    assert.match((await s.next(20000)).json.result.content[0].text, /\nexit_code: 5\n/);
    // SIGTERM to the namespace's PID 1 reaches the server, which stops and
    // exits 0, and so does PID 1
    const init1 = Number(readFileSync(`/proc/${s.child.pid}/task/${s.child.pid}/children`, 'utf8').trim());
    process.kill(init1, 'SIGTERM');
    assert.deepEqual(await s.exited, { code: 0, sig: null });
    assert.match(s.stderr(), /stopping every command/);
  });

// Another process of the server's user must not open /proc/PID/fd of the
// server: through it, it could read its commands' output before redaction
// or write into their input. Root may open anything, so as root the server
// and the probe both run as nobody, the server from a copy nobody can
// reach (the build tree may be in a private directory). A process of the
// same user that is not the server shows that the probe could open it.
test('no other process of its user opens /proc/PID/fd of the server', async () => {
  const as = root ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];
  const run = (...argv) => {
    const c = [...as, ...argv];
    return spawnSync(c[0], c.slice(1), { encoding: 'utf8' });
  };
  const dir = tempDir();
  chmodSync(dir, 0o755);
  const server = join(dir, 'shexec-mcp');
  copyFileSync(SERVER, server);
  chmodSync(server, 0o755);
  after(() => rmSync(dir, { recursive: true, force: true }));
  const s = startRaw([], { wrap: as, server, cwd: dir });
  s.send(init);
  assert.equal((await s.next()).json.id, 0);
  const sleeper = [...as, 'sleep', '30'];
  const other = spawn(sleeper[0], sleeper.slice(1));
  try {
    await sleep(200);
    const control = run('ls', `/proc/${other.pid}/fd`);
    assert.equal(control.status, 0, control.stderr);
    const probe = run('ls', `/proc/${s.child.pid}/fd`);
    assert.notEqual(probe.status, 0, probe.stdout);
    assert.match(probe.stderr, /Permission denied/);
    // the kernel's mark of a process that is not dumpable: its /proc is root's
    assert.equal(statSync(`/proc/${s.child.pid}/fd`).uid, 0);
    // and the server serves on
    s.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.deepEqual((await s.next()).json, { jsonrpc: '2.0', id: 1, result: {} });
  } finally {
    other.kill('SIGKILL');
  }
  s.child.stdin.end();
  assert.equal((await s.exited).code, 0);
});

// A number flag out of its range stops the server with one message that
// gives the range, never two that contradict each other.
test('--timeout out of range: one message, with the range', () => {
  for (const v of ['700', '0', '-1', 'abc', '']) {
    const r = spawnSync(SERVER, ['--timeout', v], { input: '', encoding: 'utf8', timeout: 10000 });
    assert.equal(r.status, 2, `--timeout "${v}": exit status ${r.status}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr,
      `shexec-mcp: --timeout wants a whole number of seconds from 1 to 600, not "${v}"\n`);
  }
});
