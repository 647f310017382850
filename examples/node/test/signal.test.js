// Signals sent to a command: Ctrl+C to a pipe-mode task (Task.sendSignal(),
// or ^C typed with Task.typeInput()) takes Python http.server's
// KeyboardInterrupt path; a task that dies of it says signal 2; bad signals
// and finished tasks are refused; the tool layer's task_kill signal.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const shexec = require('shexec');

const { Session, InvalidArgumentError, StateError } = shexec;

const PY = '/usr/bin/python3';
const NO_PY = !fs.existsSync(PY) && 'needs /usr/bin/python3';
const SERVER = `${PY} -u -m http.server 0 --bind 127.0.0.1`;
// "ready" from the process the signal is for: forked already (a child bash
// forks as a signal comes starts without it, and bash waits for it)
const READY_SLEEP = "sh -c 'echo ready; exec sleep 60'";

/** GET / on the loopback, the reply read to its end: its status. */
function httpGet(port) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', timeout: 60000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('no answer')));
  });
}

/** Resolve once `text()` matches `re` (the pump runs meanwhile). */
async function until(text, re, ms = 60000) {
  const end = Date.now() + ms;
  while (!re.test(text())) {
    if (Date.now() > end) throw new Error(`no ${re} in ${JSON.stringify(text())}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The server's task, serving: its "Serving" line, then a request answered
 * (only inside serve_forever() does a SIGINT take its KeyboardInterrupt
 * path; the line is printed just before it).
 */
async function startServer(s) {
  const t = s.start(SERVER);
  await until(() => t.output(), / port \d+ /);
  assert.equal(await httpGet(Number(t.output().match(/ port (\d+) /)[1])), 200);
  return t;
}

test('Ctrl+C to http.server: sendSignal and typeInput("\\x03") take its KeyboardInterrupt path',
  { skip: NO_PY, timeout: 120000 }, async () => {
    const s = new Session({ killGraceMs: 500 });
    for (const how of ['sendSignal', 'typeInput']) {
      const t = await startServer(s);
      assert.equal(t.interrupted, false);
      if (how === 'sendSignal') t.sendSignal('SIGINT');
      else t.typeInput('\x03'); // no stdin: true, a ^C needs none
      const r = await t.done;
      assert.match(r.stdout, /Keyboard interrupt received, exiting\./, how);
      assert.equal(r.state, 'exited', how);
      assert.equal(r.exitCode, 0, how);
      assert.equal(r.signal, 0, how);
      assert.equal(r.interrupted, true, how);
      assert.equal(t.interrupted, true, how);
      assert.throws(() => t.sendSignal('SIGINT'), StateError); // over: nothing is sent
    }
    await s.close();
  });

test('a task ended by Ctrl+C says signal 2; task_kill with a signal does the same', { timeout: 60000 }, async () => {
  const s = new Session({ killGraceMs: 500 });
  const t = s.start(READY_SLEEP);
  await until(() => t.output(), /ready/);
  t.sendSignal(os.constants.signals.SIGINT);
  const r = await t.done;
  assert.equal(r.state, 'signaled');
  assert.equal(r.signal, 2);
  assert.equal(r.exitCode, -1);
  assert.equal(r.interrupted, true);
  assert.equal(t.toolResult().signal, 2);
  assert.equal(t.toolResult().interrupted, true);

  for (const tool of ['bash', 'task_kill', 'task_output']) s.setToolEnabled(tool);
  const bg = await s.callTool('bash', { command: READY_SLEEP, run_in_background: true });
  let res = { status: 'running', stdout: '' };
  let out = '';
  while (!/ready/.test(out)) {
    res = await s.callTool('task_output', { task_id: bg.task_id, new_only: true, yield_time_ms: 200 });
    out += res.stdout;
  }
  res = await s.callTool('task_kill', { task_id: bg.task_id, signal: 'SIGINT' });
  while (res.status === 'running') {
    res = await s.callTool('task_output', { task_id: bg.task_id, yield_time_ms: 20000 });
  }
  assert.deepEqual([res.status, res.state, res.signal, res.interrupted], ['completed', 'signaled', 2, true]);
  await s.close();
});

test('bad signals are refused; SIGUSR1 reaches a trap', { timeout: 60000 }, async () => {
  const s = new Session({ killGraceMs: 500 });
  const t = s.start("trap 'echo usr1; exit 7' USR1; echo ready; while :; do sleep 0.1; done");
  await until(() => t.output(), /ready/);
  for (const bad of ['SIGSEGV', '', 'TSTP', 'INT\0', 11, 0, 999, 2.5, null, ['SIGINT']]) {
    assert.throws(() => t.sendSignal(bad), InvalidArgumentError, String(bad));
  }
  assert.equal(shexec.signalNumber('int'), 2);
  assert.equal(shexec.signalNumber('SigTerm'), 15);
  assert.equal(t.running, true);
  t.sendSignal('usr1');
  const r = await t.done;
  assert.deepEqual([r.state, r.exitCode, r.interrupted, r.stdout], ['exited', 7, false, 'ready\nusr1\n']);
  assert.throws(() => t.sendSignal('SIGINT'), StateError);
  assert.throws(() => t.typeInput('\x03'), shexec.PipeError);
  await s.close();
});
