// A Node process using the binding exits on its own and leaves nothing
// behind: no process, no descriptor, no handle keeping it alive; with
// close() and without it.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { allGone, nodeScript } = require('./util');

const pidsOf = (stdout) => (stdout.match(/pid=(\d+)/g) || []).map((m) => Number(m.slice(4)));

test('with close(): the process exits on its own, nothing left running', async () => {
  const r = await nodeScript(`
    const { Session } = require('shexec');
    (async () => {
      const s = new Session();
      const a = await s.run('sleep 300 & echo pid=$!');
      const t = s.start('echo pid=$$; sleep 301');
      await new Promise((res) => t.once('output', res));
      process.stdout.write(a.stdout + t.read());
      await s.close();
      console.log('closed');
    })();
  `);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /closed/);
  const pids = pidsOf(r.stdout);
  assert.equal(pids.length, 2);
  await allGone(pids);
});

test('without close(): leftovers and unref\'d tasks do not hold the process; exit kills them', async () => {
  const r = await nodeScript(`
    const { Session } = require('shexec');
    (async () => {
      const s = new Session({ killGraceMs: 200 });
      const a = await s.run('sleep 300 & echo pid=$!');
      const t = s.start("trap '' TERM; echo pid=$$; sleep 302");
      await new Promise((res) => t.once('output', res));
      t.unref();
      process.stdout.write(a.stdout + t.read());
      console.log('end of script');
    })();
  `);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /end of script/);
  assert.ok(r.ms < 20000);
  const pids = pidsOf(r.stdout);
  assert.equal(pids.length, 2);
  await allGone(pids);
});

test('without close(): a pending run and a started task keep the process alive until they end', async () => {
  const r = await nodeScript(`
    const { Session } = require('shexec');
    const s = new Session();
    const t0 = Date.now();
    s.run('sleep 0.5; echo run').then((r) => console.log('run ' + r.stdout.trim() + ' ' + (Date.now() - t0 >= 450)));
    s.start('sleep 1; echo task').done.then((r) => console.log('task ' + r.stdout.trim() + ' ' + (Date.now() - t0 >= 950)));
  `);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'run run true\ntask task true\n');
});

test('process.exit() while commands run: they are terminated, the exit is not held up', async () => {
  const r = await nodeScript(`
    const { Session } = require('shexec');
    const s = new Session({ killGraceMs: 200 });
    s.run('echo pid=$$; sleep 300', { onOutput: (d) => { process.stdout.write(d); process.exit(3); } });
  `);
  assert.equal(r.code, 3, r.stderr);
  const pids = pidsOf(r.stdout);
  assert.equal(pids.length, 1);
  await allGone(pids);
});

test('watchdog: a SIGKILLed Node host takes its commands with it', async () => {
  const r = await nodeScript(`
    const { Session } = require('shexec');
    (async () => {
      const s = new Session({ watchdog: true, killGraceMs: 200 });
      const a = await s.run('sleep 300 & echo pid=$!');
      const t = s.start('echo pid=$$; setsid sleep 303 & echo pid=$!; wait');
      await new Promise((res) => t.on('output', () => { if ((t.output().match(/pid=/g) || []).length === 2) res(); }));
      process.stdout.write(a.stdout + t.output());
      process.kill(process.pid, 'SIGKILL');
    })();
  `);
  assert.equal(r.signal, 'SIGKILL', r.stderr);
  const pids = pidsOf(r.stdout);
  assert.equal(pids.length, 3, r.stdout);
  await allGone(pids);
});

test('no descriptor or handle leaks over many sessions and runs', async () => {
  const { Session } = require('shexec');
  const fds = () => fs.readdirSync('/proc/self/fd').length;
  const warm = new Session(); // the helper thread and its wake pipe exist once
  await warm.run('sleep 0.05');
  await warm.close();
  const before = fds();
  for (let i = 0; i < 20; i++) {
    const s = new Session();
    await Promise.all([s.run('echo x'), s.run('sleep 0.01 & true'), s.start('echo t').done]);
    await s.close();
  }
  assert.equal(fds(), before);
  await new Promise((res) => setTimeout(res, 50)); // a last round of the pump, if scheduled, runs
  const handles = process.getActiveResourcesInfo().filter((h) => h !== 'TTYWrap' && h !== 'Timeout');
  assert.deepEqual(handles.filter((h) => !['FSReqCallback', 'PipeWrap', 'ProcessWrap'].includes(h)), []);
});
