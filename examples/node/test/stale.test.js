// A poll() result is only handed to the library for the descriptors it was
// taken for: calls made while the helper thread waits (a task_kill that
// waits for its task and closes its descriptors, a start that reuses their
// numbers) must not let the old descriptors' events reach the new command.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const { Session } = require('shexec');
const { sleep } = require('./util');

const withTimeout = (p, ms, what) => Promise.race([
  p,
  new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref()),
]);

test('task_kill while a poll is in flight: the next run gets all of its stdin', async () => {
  const s = new Session();
  s.setToolEnabled('task_kill');
  const input = Buffer.alloc(4 << 20, 'a');
  const rounds = 30;
  const short = [];
  for (let i = 0; i < rounds; i++) {
    // a task with input queued that it never reads: its stdin is in the
    // set the helper thread waits on, and breaks (POLLERR) when it dies.
    // `exec` leaves the shell the only reader, so the break comes at once.
    const t = s.start('exec sleep 100', { stdin: true });
    t.write(Buffer.alloc(1 << 20));
    await sleep(30); // the helper thread is in poll() with the task's descriptors
    const killed = await s.callTool('task_kill', { task_id: t.id });
    assert.equal(killed.status, 'killed');
    // started before the helper's answer is seen: its descriptors take the
    // numbers the task's had
    const r = await s.run('wc -c', { stdin: input });
    assert.equal(r.exitCode, 0, r.stderr);
    if (r.stdout.trim() !== String(input.length)) short.push(`round ${i}: ${r.stdout.trim()} bytes`);
    await t.done;
  }
  assert.deepEqual(short, [], `${short.length} of ${rounds} runs lost their input`);
  await s.close();
});

test('a bash tool task killed in flight: the next run reads its own output and input', async () => {
  const s = new Session();
  s.setToolEnabled('bash');
  s.setToolEnabled('task_kill');
  const input = Buffer.alloc(1 << 20, 'b');
  for (let i = 0; i < 10; i++) {
    const bg = await s.callTool('bash', { command: 'echo started; exec sleep 100', run_in_background: true });
    assert.equal(bg.status, 'running');
    await sleep(30);
    await s.callTool('task_kill', { task_id: bg.task_id });
    const r = await s.run('wc -c; echo end >&2', { stdin: input });
    assert.equal(r.stdout.trim(), String(input.length), `round ${i}`);
    assert.equal(r.stderr, 'end\n');
  }
  await s.close();
});

test('a listener that starts a command while the sessions are listed: the command is waited for', async () => {
  // a is listed first, with a task that stays quiet; b's leftover task is
  // settled while the sessions are listed, and its 'done' listener starts a
  // run in a, after a's list was taken: that run must not be left out of
  // the wait that follows
  const a = new Session();
  const b = new Session();
  const quiet = a.start('sleep 100');
  const r = await b.run('sleep 0.2 >/dev/null 2>&1 &');
  assert.equal(r.leftovers, 'adopted');
  await sleep(600); // the leftover has ended; nobody held it
  let started = null;
  const t = b.task(r.leftoverTaskId);
  t.on('done', () => {
    started = a.run('echo from-listener');
  });
  await t.done;
  assert.ok(started, 'the done listener ran');
  const res = await withTimeout(started, 5000, 'the run started from the listener');
  assert.equal(res.stdout, 'from-listener\n');
  quiet.kill();
  await quiet.done;
  await Promise.all([a.close(), b.close()]);
});

test('close() while a poll is in flight, then a new session reuses the numbers', async () => {
  const input = Buffer.alloc(2 << 20, 'c');
  for (let i = 0; i < 5; i++) {
    const old = new Session();
    const t = old.start('exec sleep 100', { stdin: true });
    t.write(Buffer.alloc(1 << 20));
    await sleep(30);
    const closing = old.close();
    const s = new Session();
    const r = await s.run('wc -c', { stdin: input });
    assert.equal(r.stdout.trim(), String(input.length), `round ${i}`);
    await closing;
    assert.equal(t.state, 'killed');
    await s.close();
  }
});
