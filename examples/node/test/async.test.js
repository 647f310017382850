// What makes the binding asynchronous: the event loop stays free, output
// streams while a command runs, many commands at once, tasks, leftovers,
// AbortSignal.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const shexec = require('shexec');
const { alive, allGone } = require('./util');

const { Session } = shexec;

test('the event loop stays free: a setInterval keeps ticking during a 2 s command', async () => {
  const s = new Session();
  const ticks = [];
  const timer = setInterval(() => ticks.push(Date.now()), 50);
  const t0 = Date.now();
  const r = await s.run('sleep 2');
  clearInterval(timer);
  assert.equal(r.exitCode, 0);
  assert.ok(Date.now() - t0 >= 1900);
  // about 40 ticks; a blocked loop would give 0 or 1. Generous for a loaded machine.
  assert.ok(ticks.length >= 10, `only ${ticks.length} ticks during the command`);
  await s.close();
});

test('streaming: the first line of `echo a; sleep 1; echo b` arrives well before the second', async () => {
  const s = new Session();
  const seen = [];
  const t0 = Date.now();
  const r = await s.run('echo a; sleep 1; echo b', {
    onOutput: (data, stream) => seen.push({ data, stream, at: Date.now() - t0 }),
  });
  const done = Date.now() - t0;
  assert.deepEqual(seen.map((c) => [c.data, c.stream]), [['a\n', 'stdout'], ['b\n', 'stdout']]);
  const gap = seen[1].at - seen[0].at;
  assert.ok(gap >= 500, `a came ${gap} ms before b`);
  assert.ok(done - seen[0].at >= 500, 'a was delivered while the command ran');
  assert.equal(r.stdout, 'a\nb\n');
  await s.close();
});

test('onOutput: chunks of a stream concatenate to its output; a listener may start commands', async () => {
  const s = new Session();
  const got = { stdout: '', stderr: '' };
  let nested = null;
  const r = await s.run('for i in $(seq 1 200); do echo out$i; echo err$i >&2; done', {
    onOutput: (data, stream) => {
      got[stream] += data;
      if (!nested) nested = s.run('echo nested');
    },
  });
  assert.equal(got.stdout, r.stdout);
  assert.equal(got.stderr, r.stderr);
  assert.equal((await nested).stdout, 'nested\n');
  await s.close();
});

test('many concurrent runs in one session, and in several sessions', async () => {
  const s = new Session();
  const others = [new Session(), new Session()];
  const n = 60;
  const runs = Array.from({ length: n }, (_, i) =>
    (i % 3 === 0 ? s : others[i % 2]).run(`echo ${i}; sleep 0.$((${i} % 5)); echo done${i} >&2`));
  const results = await Promise.all(runs);
  results.forEach((r, i) => {
    assert.equal(r.stdout, `${i}\n`);
    assert.equal(r.stderr, `done${i}\n`);
    assert.equal(r.exitCode, 0);
  });
  await Promise.all([s.close(), ...others.map((o) => o.close())]);
});

test('leftovers: `server &` returns at once and becomes a task (leftoverTaskId)', async () => {
  const s = new Session();
  const t0 = Date.now();
  const r = await s.run('sleep 300 & echo $!');
  assert.ok(Date.now() - t0 < 10000);
  assert.equal(r.exitCode, 0);
  assert.equal(r.leftovers, 'adopted');
  assert.match(r.leftoverTaskId, /^t[0-9a-f]{12}$/);
  const pid = Number(r.stdout.trim());
  assert.ok(alive(pid));
  const t = s.task(r.leftoverTaskId);
  assert.equal(t.id, r.leftoverTaskId);
  assert.equal(s.task(r.leftoverTaskId), t, 'one object per task');
  assert.equal(t.running, true);
  const res = await t.kill();
  assert.equal(res.state, 'killed');
  assert.equal(t.running, false);
  await allGone([pid]);
  // with the kill policy they are killed at once
  const k = new Session({ onLeftovers: 'kill' });
  const r2 = await k.run('sleep 300 & echo $!');
  assert.equal(r2.leftovers, 'killed');
  assert.equal(r2.leftoverTaskId, null);
  await allGone([Number(r2.stdout.trim())]);
  await k.close();
  await s.close();
});

test('leftovers not looked up are killed by close()', async () => {
  const s = new Session();
  const r = await s.run('sleep 300 & echo $!');
  await s.close();
  await allGone([Number(r.stdout.trim())]);
});

test('tasks: output events, write, closeStdin, read (new only), done', async () => {
  const s = new Session();
  const t = s.start("while read l; do echo \"got $l\"; done; echo bye >&2; exit 5", { stdin: true });
  assert.match(t.id, /^t[0-9a-f]{12}$/);
  assert.equal(t.running, true);
  assert.ok(t.pid > 0);
  const chunks = [];
  t.on('output', (data, stream) => chunks.push([stream, data]));
  t.write('one\n');
  await new Promise((res) => t.once('output', res));
  assert.equal(t.read(), 'got one\n');
  assert.equal(t.read(), '', 'read gives only what is new');
  t.write(Buffer.from('two\n'));
  t.closeStdin();
  const res = await t.done;
  assert.equal(res.exitCode, 5);
  assert.equal(res.state, 'exited');
  assert.equal(res.stdout, 'got one\ngot two\n');
  assert.equal(res.stderr, 'bye\n');
  assert.equal(t.read(), 'got two\n', 'what was not read yet stays readable after the end');
  assert.equal(t.read('stderr'), 'bye\n');
  assert.equal(t.output(), 'got one\ngot two\n');
  assert.deepEqual(chunks.filter(([st]) => st === 'stdout').map(([, d]) => d).join(''), 'got one\ngot two\n');
  assert.throws(() => t.write('late'), shexec.PipeError);
  assert.equal(t.running, false);
  await s.close();
});

test('tasks: kill() ends the tree, the done promise says killed', async () => {
  const s = new Session({ killGraceMs: 500 });
  const t = s.start('sleep 300 & echo $!; sleep 301 & echo $!; wait');
  const first = await new Promise((res) => t.once('output', res));
  await new Promise((res) => setTimeout(res, 50));
  const pids = (first + t.read().replace(first, '')).trim().split('\n').map(Number);
  const res = await t.kill();
  assert.equal(res.state, 'killed');
  assert.equal(t.state, 'killed');
  await allGone(pids.filter(Boolean));
  await s.close();
});

test('tasks: async iteration yields the chunks until the end', async () => {
  const s = new Session();
  const t = s.start('for i in 1 2 3; do echo $i; sleep 0.05; done; echo e >&2');
  const out = [];
  for await (const c of t) out.push(c);
  assert.equal(out.filter((c) => c.stream === 'stdout').map((c) => c.data).join(''), '1\n2\n3\n');
  assert.equal(out.filter((c) => c.stream === 'stderr').map((c) => c.data).join(''), 'e\n');
  assert.equal((await t.done).exitCode, 0);
  await s.close();
});

test('tasks: the session\'s task limit is a LimitError; ended tasks free their slot', async () => {
  const s = new Session({ maxTasks: 2 });
  const a = s.start('sleep 300');
  const b = s.start('true');
  assert.throws(() => s.start('true'), (e) => e instanceof shexec.LimitError && /maximum of 2 tasks/.test(e.message));
  await b.done;
  const c = s.start('true'); // b's slot was freed when it ended
  await c.done;
  await a.kill();
  await s.close();
});

test('AbortSignal: aborting a run kills its tree and rejects with an AbortError', async () => {
  const s = new Session({ killGraceMs: 1000 });
  const ac = new AbortController();
  let pid = 0;
  const p = s.run('sleep 300 & echo $!; wait', {
    signal: ac.signal,
    onOutput: (data) => {
      pid = Number(data.trim());
      ac.abort(new Error('user pressed stop'));
    },
  });
  await assert.rejects(p, (e) => {
    assert.equal(e.name, 'AbortError');
    assert.equal(e.code, 'ABORT_ERR');
    assert.equal(e.cause.message, 'user pressed stop');
    assert.equal(e.result.state, 'cancelled');
    return true;
  });
  assert.ok(pid > 0);
  await allGone([pid]);
  // already aborted: nothing runs
  await assert.rejects(s.run('echo never', { signal: AbortSignal.abort() }), { name: 'AbortError' });
  // a task: the abort kills it
  const ac2 = new AbortController();
  const t = s.start('sleep 300', { signal: ac2.signal });
  ac2.abort();
  assert.equal((await t.done).state, 'killed');
  await s.close();
});

test('close() ends pending runs and tasks without blocking the loop', async () => {
  const s = new Session({ killGraceMs: 300 });
  const run = s.run("trap '' TERM; sleep 300");
  const t = s.start('sleep 300');
  await new Promise((res) => setTimeout(res, 100));
  let ticks = 0;
  const timer = setInterval(() => ticks++, 20);
  await s.close();
  clearInterval(timer);
  const r = await run;
  assert.equal(r.state, 'cancelled');
  assert.equal((await t.done).state, 'killed');
  assert.ok(ticks >= 3, `the loop ticked ${ticks} times while close() waited out the grace`);
  assert.equal(s.closed, true);
  await s.close(); // idempotent
});
