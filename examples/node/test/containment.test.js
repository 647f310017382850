// The containment option (a cgroup v2 per command) and what a run cost.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { alive } = require('./util');

const { Session, InvalidArgumentError, SysError } = require('shexec');

const MARK = `shexec-bind-mark-${process.pid}`; // this process's, not another suite's
// About 0.3 s of CPU in user mode, from the system's interpreter: a pyenv
// shim would add processes of its own to what is counted.
// 0.3 s of its own CPU time (not of the clock: a loaded machine would give it less)
const BUSY = "/usr/bin/python3 -c 'import time\nt=time.process_time()+0.3\nwhile time.process_time()<t: pass'";

/** Live processes (zombies left out) whose argv[0] is `mark`. */
function marked(mark) {
  const out = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let cmdline;
    try {
      cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'latin1');
    } catch (e) {
      continue; // gone meanwhile
    }
    if (cmdline.split('\0')[0] === mark && alive(Number(name))) out.push(Number(name));
  }
  return out;
}

function killMarked(mark) {
  for (const pid of marked(mark)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (e) {
      // gone meanwhile
    }
  }
}

async function waitUntil(pred, ms) {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** A session holding its commands in cgroups, or null (the test skipped, the reason given). */
async function contained(t, opts = {}) {
  const s = new Session({ containment: 'auto', killGraceMs: 200, ...opts });
  const { kind, detail } = s.settings.containment;
  if (kind !== 'cgroup') {
    await s.close();
    t.skip(`no cgroup containment here: ${detail}`);
    return null;
  }
  return s;
}

test('containment: "auto" by default; a bad parent is refused, nothing changed', async () => {
  const s = new Session();
  const auto = new Session({ containment: 'auto' });
  const [mine, its] = [s.settings.containment, auto.settings.containment];
  assert.equal(mine.kind, its.kind);
  if (mine.kind === 'cgroup') {
    assert.match(mine.detail, /\/shexec-/);
    assert.notEqual(mine.detail, its.detail); // a cgroup of its own
  } else {
    assert.equal(mine.detail, its.detail); // the same reason
  }
  await s.close();
  await auto.close();
  assert.throws(() => new Session({ containment: 'relative' }), (e) => {
    assert.ok(e instanceof InvalidArgumentError);
    assert.equal(e.errno, -1);
    assert.equal(e.code, 'SHEXEC_EINVAL');
    assert.match(e.message, /relative/); // the library's detail
    return true;
  });
  assert.throws(() => new Session({ containment: '/tmp' }), (e) => {
    assert.ok(e instanceof SysError);
    assert.equal(e.code, 'SHEXEC_ESYS');
    assert.match(e.message, /not a cgroup v2 directory/);
    return true;
  });
  const off = new Session({ containment: null });
  assert.deepEqual(off.settings.containment, { kind: 'group', detail: 'turned off' });
  assert.equal((await off.run('echo hi')).stdout, 'hi\n');
  await off.close();
});

test('containment auto: a process that detached (setsid -f) is killed with its command', async (t) => {
  const s = await contained(t, { onLeftovers: 'kill' });
  if (!s) return;
  const dir = s.settings.containment.detail;
  try {
    assert.ok(fs.statSync(dir).isDirectory(), dir);
    // setsid -f: a new session whose parent exits at once, out of reach of
    // the process group and of the /proc descendant walk
    const r = await s.run(`setsid -f bash -c 'exec -a ${MARK} sleep 300'; echo ok`);
    assert.equal(r.stdout, 'ok\n');
    assert.equal(r.state, 'exited');
    assert.equal(r.leftovers, 'killed');
    assert.ok(await waitUntil(() => marked(MARK).length === 0, 2000),
      `a detached process outlived its command: ${marked(MARK).join(' ')}`);
    await s.close();
    assert.equal(fs.existsSync(dir), false, "the session's cgroup was not removed");
  } finally {
    if (!s.closed) await s.close();
    killMarked(MARK);
  }
});

test('cost without containment: the kernel\'s rusage of the shell and what it waited for', async () => {
  const s = new Session({ containment: 'off' });
  try {
    const r = await s.run(BUSY);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.cost.source, 'rusage');
    const cpu = r.cost.userUsec + r.cost.systemUsec;
    assert.ok(cpu >= 150000 && cpu <= 1000000, JSON.stringify(r.cost));
    assert.ok(r.cost.peakBytes > 0, JSON.stringify(r.cost));
    for (const v of [r.cost.userUsec, r.cost.systemUsec, r.cost.peakBytes]) assert.equal(typeof v, 'number');
  } finally {
    await s.close();
  }
});

test('cost with containment: the cgroup of the command, for runs and tasks', async (t) => {
  const s = await contained(t);
  if (!s) return;
  try {
    const r = await s.run(BUSY);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.cost.source, 'cgroup');
    const cpu = r.cost.userUsec + r.cost.systemUsec;
    assert.ok(cpu >= 150000 && cpu <= 1000000, JSON.stringify(r.cost));
    const res = await s.start(BUSY).done;
    assert.equal(res.cost.source, 'cgroup');
    const taskCpu = res.cost.userUsec + res.cost.systemUsec;
    assert.ok(taskCpu >= 150000 && taskCpu <= 1000000, JSON.stringify(res.cost));
  } finally {
    await s.close();
  }
});
