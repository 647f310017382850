// The limits option (memory, swap, pids, cpu of a command's cgroup) and
// what a run reports of them.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');

const { Session, InvalidArgumentError, StateError, SysError } = require('shexec');

// Every b starts two more in the background, without end; the shell goes on
// to print once it could still fork a sleep.
const FORK_BOMB = 'b() { b | b & }; b; sleep 1; echo survived';
// Memory taken 1 MiB at a time until the kernel says no, then the status;
// the system's interpreter, as a pyenv shim is slow to start.
const MEMORY_HOG = "/usr/bin/python3 -c 'a = []\nwhile True: a.append(bytearray(1 << 20))'; echo \"exit $?\"";
const NONE = { memory: 0, swap: 0, pids: 0, cpu: 0 };

/**
 * A session holding its commands in cgroups with these limits, or null
 * (the test skipped with the reason the library gives).
 */
async function limited(t, limits, opts = {}) {
  const probe = new Session({ containment: 'auto' });
  const { kind, detail } = probe.settings.containment;
  await probe.close();
  if (kind !== 'cgroup') {
    t.skip(`no cgroup containment here: ${detail}`);
    return null;
  }
  try {
    return new Session({ containment: 'auto', killGraceMs: 200, ...opts, limits });
  } catch (e) {
    if (!(e instanceof SysError)) throw e;
    t.skip(e.message); // the controller is not available here
    return null;
  }
}

test('limits need containment by cgroup; names and values are checked', async () => {
  assert.throws(() => new Session({ containment: 'off', limits: { pids: 10 } }), (e) => {
    assert.ok(e instanceof StateError);
    assert.equal(e.errno, -6);
    assert.equal(e.code, 'SHEXEC_ESTATE');
    assert.match(e.message, /containment/); // the library's detail
    return true;
  });
  assert.throws(() => new Session({ limits: { fork: 10 } }), (e) => {
    assert.ok(e instanceof InvalidArgumentError);
    assert.equal(e.code, 'SHEXEC_EINVAL');
    assert.match(e.message, /fork/);
    return true;
  });
  for (const bad of [-1, 1.5, '40', 2 ** 60]) {
    assert.throws(() => new Session({ limits: { pids: bad } }), InvalidArgumentError);
  }
  assert.throws(() => new Session({ limits: 40 }), TypeError);
  // none needs no cgroup
  const s = new Session({ containment: 'off', limits: { pids: 0, memory: 0 } });
  try {
    assert.deepEqual(s.settings.limits, NONE);
    await assert.rejects(s.run('echo never', { limits: { fork: 10 } }), InvalidArgumentError);
    // a run's limits are checked by the library when it starts
    await assert.rejects(s.run('echo never', { limits: { pids: 40 } }), StateError);
    assert.throws(() => s.start('echo never', { limits: { pids: 40 } }), StateError);
    const r = await s.run('echo hi', { limits: { pids: 0 } });
    assert.equal(r.stdout, 'hi\n');
    assert.deepEqual(r.limitsHit, []);
  } finally {
    await s.close();
  }
});

test('limits: a fork bomb meets the process limit, the next command runs as usual', async (t) => {
  const s = await limited(t, { pids: 40 }, { onLeftovers: 'kill' });
  if (!s) return;
  try {
    assert.deepEqual(s.settings.limits, { ...NONE, pids: 40 });
    const r = await s.run(FORK_BOMB, { timeoutMs: 3000 });
    assert.ok(r.limitsHit.includes('pids'), JSON.stringify(r.limitsHit));
    assert.match(r.notice, /the process limit \(40\) was reached/);
    const ok = await s.run('echo alive');
    assert.equal(ok.stdout, 'alive\n');
    assert.deepEqual(ok.limitsHit, []);
    assert.equal(ok.notice, '');
  } finally {
    await s.close();
  }
});

test('limits: the memory limit ends a runaway allocation (exit 137)', async (t) => {
  const s = await limited(t, { memory: 64 * 1024 * 1024 });
  if (!s) return;
  try {
    assert.equal(s.settings.limits.memory, 64 * 1024 * 1024);
    const r = await s.run(MEMORY_HOG, { timeoutMs: 20000 });
    assert.equal(r.stdout, 'exit 137\n', r.stderr);
    assert.ok(r.limitsHit.includes('memory'), JSON.stringify(r.limitsHit));
    assert.ok(r.notice.includes('killed: out of memory (limit 64 MiB)'), r.notice);
  } finally {
    await s.close();
  }
});

test("limits per run and per task, in place of the session's", async (t) => {
  const s = await limited(t, { pids: 40 }, { onLeftovers: 'kill' });
  if (!s) return;
  try {
    const r = await s.run(FORK_BOMB, { timeoutMs: 3000, limits: { pids: 30 } });
    assert.ok(r.limitsHit.includes('pids'), JSON.stringify(r.limitsHit));
    assert.match(r.notice, /the process limit \(30\) was reached/);
    assert.deepEqual(s.settings.limits, { ...NONE, pids: 40 }); // the session's are untouched
    const res = await s.start(FORK_BOMB, { timeoutMs: 3000, limits: { pids: 25 } }).done;
    assert.ok(res.limitsHit.includes('pids'), JSON.stringify(res.limitsHit));
    assert.match(res.notice, /the process limit \(25\) was reached/);
    // a run's 0 lifts the session's limit for that run
    const free = await s.run('echo free', { limits: { pids: 0 } });
    assert.equal(free.stdout, 'free\n');
    assert.deepEqual(free.limitsHit, []);
  } finally {
    await s.close();
  }
});
