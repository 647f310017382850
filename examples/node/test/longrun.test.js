// Long-running and interactive commands: runSync() moving a command to the
// background (a yield time, its timeout, its idle timeout, a wait for input)
// and the task it goes on as; the idle timeout; finding a command that waits
// for input (bash's read in a pty, Python's input() on a pipe) in runSync(),
// run() and start(); the agent environment preset; the settings and the
// values refused.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const shexec = require('shexec');
const { alive, allGone, nodeScript } = require('./util');

const { Session, InvalidArgumentError, NoCwdError, ClosedError } = shexec;

const PY = '/usr/bin/python3';
const HAS_PY = fs.existsSync(PY);

// the looks for a wait for input read /proc/PID/syscall (Linux)
function hasProcSyscall() {
  try {
    fs.readFileSync('/proc/self/syscall', 'utf8');
    return true;
  } catch (e) {
    return false;
  }
}
const NO_PROCFS = !hasProcSyscall() && 'no readable /proc/PID/syscall: waits for input are not seen';

// looks after 300 ms of silence (2 s by default): the commands here wait a second or two
const newSession = (opts = {}) => new Session({ killGraceMs: 500, inputLookMs: 300, ...opts });

test('runSync with yieldMs 300: back running with "a\\n" and a task id; the task exits 3 with "b\\n"',
  { timeout: 20000 }, async () => {
    const s = newSession();
    const chunks = [];
    const t0 = Date.now();
    const r = s.runSync('echo a; sleep 2; echo b; exit 3', {
      yieldMs: 300, onOutput: (data, stream) => chunks.push([stream, data]),
    });
    assert.ok(Date.now() - t0 < 1800, `back after ${Date.now() - t0} ms`);
    assert.equal(r.state, 'running');
    assert.equal(r.stdout, 'a\n');
    assert.equal(r.exitCode, -1);
    assert.equal(r.timedOut, false);
    assert.equal(r.yielded, 'time');
    assert.match(r.taskId, /^t[0-9a-f]{12}$/);
    assert.ok(r.notice.includes(r.taskId), r.notice);
    assert.equal(r.deadline, 'none');
    assert.deepEqual(chunks, [['stdout', 'a\n']]); // delivered before runSync() returned
    const t = s.task(r.taskId);
    assert.equal(t.running, true);
    assert.equal(s.task(r.taskId), t);
    const done = await t.done;
    assert.equal(done.state, 'exited');
    assert.equal(done.exitCode, 3);
    assert.equal(done.id, r.taskId);
    assert.equal(done.yielded, 'time');
    assert.equal(t.read(), 'b\n'); // what came after the yield
    assert.equal(t.output(), 'a\nb\n');
    await s.close();
  });

test('runSync of a quick command does not yield: the cd moves the session', { timeout: 10000 }, async () => {
  const s = newSession();
  const r = s.runSync('cd /tmp && echo ok', { yieldMs: 10000 });
  assert.equal(r.state, 'exited');
  assert.equal(r.stdout, 'ok\n');
  assert.equal(r.yielded, 'none');
  assert.equal(r.taskId, null);
  assert.equal(r.cwd, '/tmp');
  assert.equal(s.cwd, '/tmp');
  await s.close();
});

test('a yielded command does not move the session: its cd is not taken, the notice says so',
  { timeout: 10000 }, async () => {
    const s = newSession({ cwd: '/' });
    const r = s.runSync('sleep 0.6; cd /tmp', { yieldMs: 100 });
    assert.equal(r.yielded, 'time');
    const done = await s.task(r.taskId).done;
    assert.equal(done.exitCode, 0);
    assert.equal(s.cwd, '/');
    assert.ok(done.notice.includes('not taken'), done.notice);
    await s.close();
  });

test('a yielded command keeps its timeout as its lifetime cap', { timeout: 15000 }, async () => {
  const s = newSession();
  const r = s.runSync('sleep 30', { yieldMs: 200, timeoutMs: 1200 });
  assert.equal(r.state, 'running');
  const done = await s.task(r.taskId).done;
  assert.equal(done.state, 'timed_out');
  assert.equal(done.deadline, 'timeout');
  await allGone([r.pid]);
  await s.close();
});

test('the idle timeout ends a silent command: timed out, deadline idle (run() and runSync())',
  { timeout: 20000 }, async () => {
    const s = newSession();
    let t0 = Date.now();
    const r = await s.run('echo a; sleep 30', { idleTimeoutMs: 500 });
    assert.ok(Date.now() - t0 < 10000);
    assert.equal(r.state, 'timed_out');
    assert.equal(r.timedOut, true);
    assert.equal(r.deadline, 'idle');
    assert.equal(r.stdout, 'a\n');
    assert.equal(r.yielded, 'none');
    t0 = Date.now();
    const rs = s.runSync('echo a; sleep 30', { idleTimeoutMs: 500, idleAction: 'end' });
    assert.ok(Date.now() - t0 < 10000);
    assert.equal(rs.state, 'timed_out');
    assert.equal(rs.deadline, 'idle');
    assert.equal(rs.stdout, 'a\n');
    // a plain timeout says so
    const rt = await s.run('sleep 30', { timeoutMs: 300 });
    assert.equal(rt.deadline, 'timeout');
    await s.close();
  });

test("the session's idle timeout spares steady output, and applies to start()", { timeout: 20000 }, async () => {
  const s = newSession({ idleTimeoutMs: 700 });
  assert.equal(s.settings.idleTimeoutMs, 700);
  assert.equal(s.settings.idleAction, 'end');
  // output every 0.1 s for 1.5 s
  const r = await s.run('i=0; while [ $i -lt 15 ]; do echo x; sleep 0.1; i=$((i+1)); done');
  assert.equal(r.state, 'exited');
  assert.equal(r.deadline, 'none');
  const t = s.start('echo a; sleep 30');
  const done = await t.done;
  assert.equal(done.state, 'timed_out');
  assert.equal(done.deadline, 'idle');
  // 0 for one run: none
  const r0 = await s.run('sleep 1; echo late', { idleTimeoutMs: 0 });
  assert.equal(r0.state, 'exited');
  assert.equal(r0.stdout, 'late\n');
  await s.close();
});

test("idleAction 'yield': runSync() moves a silent command to the background, where it runs on",
  { timeout: 15000 }, async () => {
    const s = newSession();
    const r = s.runSync('echo a; sleep 1; echo b', { idleTimeoutMs: 300, idleAction: 'yield' });
    assert.equal(r.yielded, 'idle');
    assert.equal(r.stdout, 'a\n');
    const done = await s.task(r.taskId).done;
    assert.equal(done.state, 'exited');
    assert.equal(done.stdout, 'a\nb\n');
    // the session's action: yield in runSync(), nothing in run()
    const y = newSession({ idleTimeoutMs: 300, idleAction: 'yield' });
    assert.equal(y.settings.idleAction, 'yield');
    const ry = y.runSync('sleep 1');
    assert.equal(ry.yielded, 'idle');
    const ra = await y.run('sleep 1; echo end');
    assert.equal(ra.state, 'exited');
    assert.equal(ra.stdout, 'end\n');
    await s.close();
    await y.close();
  });

test('background on timeout: runSync() yields at the timeout, the cap ends it; run() ends it at the timeout',
  { timeout: 20000 }, async () => {
    const s = newSession();
    const r = s.runSync('sleep 0.8; echo done', { timeoutMs: 200, backgroundOnTimeoutMs: 20000 });
    assert.equal(r.state, 'running');
    assert.equal(r.yielded, 'timeout');
    assert.ok(r.notice.includes('its timeout passed'), r.notice);
    const done = await s.task(r.taskId).done;
    assert.equal(done.state, 'exited');
    assert.equal(done.stdout, 'done\n');

    const capped = s.runSync('sleep 30', { timeoutMs: 200, backgroundOnTimeoutMs: 900 });
    assert.equal(capped.yielded, 'timeout');
    const end = await s.task(capped.taskId).done;
    assert.equal(end.state, 'timed_out');
    assert.equal(end.deadline, 'timeout');
    await s.close();

    // the session's cap; 0 for one run ends it at the timeout; run() never yields
    const b = newSession({ backgroundOnTimeoutMs: 5000 });
    assert.equal(b.settings.backgroundOnTimeoutMs, 5000);
    const off = b.runSync('sleep 30', { timeoutMs: 200, backgroundOnTimeoutMs: 0 });
    assert.equal(off.state, 'timed_out');
    assert.equal(off.yielded, 'none');
    const ra = await b.run('sleep 30', { timeoutMs: 200 });
    assert.equal(ra.state, 'timed_out');
    assert.equal(ra.yielded, 'none');
    assert.ok(ra.durationMs < 3000, `ended after ${ra.durationMs} ms, not at its timeout`);
    const ta = await b.start('sleep 30', { timeoutMs: 200 }).done;
    assert.equal(ta.state, 'timed_out');
    assert.ok(ta.durationMs < 3000, `ended after ${ta.durationMs} ms, not at its timeout`);
    await b.close();
  });

test("waiting for input in a pty: runSync() yields with the prompt 'Name: '; answering 'Ada' gives 'hi Ada'",
  { timeout: 30000, skip: NO_PROCFS }, async () => {
    const s = newSession();
    const seen = [];
    const t0 = Date.now();
    const r = s.runSync("read -p 'Name: ' n; echo hi $n", {
      pty: true, yieldMs: 10000, timeoutMs: 20000, onInput: (wait, io) => seen.push([wait, io]),
    });
    assert.ok(Date.now() - t0 < 8000, `found after ${Date.now() - t0} ms`);
    assert.equal(r.yielded, 'input');
    assert.equal(r.state, 'running');
    assert.deepEqual(r.inputWait, { state: 'waiting', prompt: 'Name: ', echoOff: false });
    assert.deepEqual(seen, [[{ state: 'waiting', prompt: 'Name: ', echoOff: false }, null]]);
    const t = s.task(r.taskId);
    assert.equal(t.inputWait.state, 'waiting');
    assert.equal(t.inputWait.prompt, 'Name: ');
    t.write('Ada\n');
    const done = await t.done;
    assert.equal(done.exitCode, 0);
    assert.ok(done.stdout.includes('hi Ada'), done.stdout);
    assert.equal(done.inputWait.state, 'no');
    assert.equal(t.inputWait.state, 'no');
    await s.close();
  });

test('waiting for input on a stdin pipe: runSync() finds python input(), the task answers',
  { timeout: 30000, skip: NO_PROCFS || (!HAS_PY && `${PY} is not installed`) }, async () => {
    const s = newSession({ encoding: 'buffer' });
    const r = s.runSync(`${PY} -c 'x = input("> "); print("got", x)'`, {
      stdin: true, yieldMs: 10000, timeoutMs: 20000,
    });
    assert.equal(r.yielded, 'input');
    assert.equal(r.inputWait.state, 'waiting');
    assert.ok(Buffer.isBuffer(r.inputWait.prompt));
    assert.equal(r.inputWait.prompt.toString(), '> ');
    const t = s.task(r.taskId);
    t.write('7\n');
    const done = await t.done;
    assert.ok(done.stdout.toString().includes('got 7'), done.stdout.toString());
    await s.close();
  });

test('run() calls onInput with the prompt, and its io answers (a pty, a stdin pipe)',
  { timeout: 30000, skip: NO_PROCFS }, async () => {
    const s = newSession();
    const waits = [];
    const r = await s.run("read -p 'Name: ' n; echo hi $n", {
      pty: true, timeoutMs: 15000,
      onInput: (wait, io) => {
        waits.push(wait);
        io.write('Ada\n');
      },
    });
    assert.equal(r.state, 'exited');
    assert.ok(r.stdout.includes('hi Ada'), r.stdout);
    assert.deepEqual(waits, [{ state: 'waiting', prompt: 'Name: ', echoOff: false }]);
    assert.equal(r.yielded, 'none');

    const p = await s.run('read n; echo hi $n', {
      stdin: true, timeoutMs: 15000,
      onInput: (wait, io) => {
        io.write('Bob\n');
        io.closeStdin();
      },
    });
    assert.equal(p.stdout, 'hi Bob\n');
    await s.close();
  });

test('a task emits input with the prompt and reports inputWait; write() answers',
  { timeout: 30000, skip: NO_PROCFS || (!HAS_PY && `${PY} is not installed`) }, async () => {
    const s = newSession();
    const onInput = [];
    const t = s.start(`${PY} -c 'x = input("> "); print("got", x)'`, {
      stdin: true, timeoutMs: 20000, onInput: (wait) => onInput.push(wait),
    });
    const [wait, task] = await new Promise((resolve) => t.once('input', (w, tk) => resolve([w, tk])));
    assert.equal(task, t);
    assert.deepEqual(wait, { state: 'waiting', prompt: '> ', echoOff: false });
    assert.deepEqual(t.inputWait, wait);
    assert.equal(onInput.length, 1);
    t.write('7\n');
    const done = await t.done;
    assert.equal(done.stdout, '> got 7\n');
    assert.equal(done.yielded, 'none');
    await s.close();
  });

test("setPtySize resizes a running task's terminal: SIGWINCH, and the new size", { timeout: 20000 }, async () => {
  const s = newSession();
  try {
    const t = s.start("trap 'echo WINCH $(stty size)' WINCH; echo ready; sleep 20 & wait $!; kill $!", { pty: true });
    await new Promise((resolve) => t.on('output', () => { if (t.output().includes('ready')) resolve(); }));
    await new Promise((resolve) => setTimeout(resolve, 100)); // `wait` is waiting
    assert.throws(() => t.setPtySize(0, 30), InvalidArgumentError);
    t.setPtySize(100, 30);
    const done = await t.done;
    assert.equal(done.stdout, 'ready\nWINCH 30 100\n');
    assert.throws(() => t.setPtySize(80, 24), shexec.PipeError);
    // a task on pipes has no terminal
    const p = s.start('sleep 20');
    assert.throws(() => p.setPtySize(80, 24), shexec.StateError);
    await p.kill();
  } finally {
    await s.close();
  }
});

test('a sleeping command is not taken for a wait for input; inputLookMs 0 never looks',
  { timeout: 20000, skip: NO_PROCFS }, async () => {
    const s = newSession();
    let calls = 0;
    const r = s.runSync('sleep 1.2', { stdin: true, yieldMs: 10000, onInput: () => calls++ });
    assert.equal(r.state, 'exited');
    assert.equal(r.yielded, 'none');
    const rp = await s.run('sleep 1.2 | cat', { pty: true, onInput: () => calls++ });
    assert.equal(rp.state, 'exited');
    assert.equal(calls, 0);
    await s.close();

    const off = newSession({ inputLookMs: 0 });
    assert.equal(off.settings.inputLookMs, 0);
    const ro = await off.run('read -t 1 n; echo $?', { stdin: true, onInput: () => calls++ });
    assert.ok(Number(ro.stdout) > 128, ro.stdout); // read timed out: nobody was told
    assert.equal(calls, 0);
    await off.close();
  });

test('agentEnv: PAGER=cat and TERM=dumb in a pipe run, not TERM in a pty run; env and run env override',
  { timeout: 15000 }, async () => {
    const names = 'PAGER GIT_PAGER GIT_TERMINAL_PROMPT GIT_EDITOR EDITOR DEBIAN_FRONTEND PIP_NO_INPUT NO_COLOR TERM';
    const show = `for v in ${names}; do eval "echo $v=\\\${$v-unset}"; done`;
    const s = newSession({ agentEnv: true });
    const r = await s.run(show);
    assert.equal(r.stdout, 'PAGER=cat\nGIT_PAGER=cat\nGIT_TERMINAL_PROMPT=0\nGIT_EDITOR=false\nEDITOR=false\n'
      + 'DEBIAN_FRONTEND=noninteractive\nPIP_NO_INPUT=1\nNO_COLOR=1\nTERM=dumb\n');
    assert.equal(s.getEnv('PAGER'), 'cat');
    assert.notEqual(s.getEnv('TERM'), 'dumb'); // pipe runs only: not a session variable
    const pty = await s.run('echo TERM=$TERM NO_COLOR=${NO_COLOR-unset}', { pty: true });
    assert.ok(!pty.stdout.includes('TERM=dumb'), pty.stdout);
    assert.ok(pty.stdout.includes('NO_COLOR=unset'), pty.stdout);
    const own = await s.run('echo $TERM', { env: { TERM: 'mine' } });
    assert.equal(own.stdout, 'mine\n');
    const sync = s.runSync('echo $PAGER $TERM');
    assert.equal(sync.stdout, 'cat dumb\n');
    await s.close();

    // the constructor's env overrides the preset; applyAgentEnv() on a session made without it
    const o = newSession({ agentEnv: true, env: { PAGER: 'less' } });
    assert.equal((await o.run('echo $PAGER $GIT_PAGER')).stdout, 'less cat\n');
    await o.close();
    const later = newSession({ env: { LANG: null, LC_ALL: null, PAGER: null } });
    assert.equal((await later.run('echo ${PAGER-unset}')).stdout, 'unset\n');
    later.applyAgentEnv();
    assert.equal((await later.run('echo $PAGER $LANG $TERM')).stdout, 'cat C.UTF-8 dumb\n');
    await later.close();
    assert.throws(() => later.applyAgentEnv(), ClosedError);
  });

test('settings read back: idle timeout and action, background cap, input look', { timeout: 10000 }, async () => {
  const d = new Session();
  const { idleTimeoutMs, idleAction, backgroundOnTimeoutMs, inputLookMs } = d.settings;
  assert.deepEqual({ idleTimeoutMs, idleAction, backgroundOnTimeoutMs, inputLookMs },
    { idleTimeoutMs: 0, idleAction: 'end', backgroundOnTimeoutMs: 0, inputLookMs: shexec.DEFAULT_INPUT_LOOK_MS });
  assert.equal(shexec.DEFAULT_INPUT_LOOK_MS, 2000);
  await d.close();
  const s = new Session({ idleTimeoutMs: 4000, idleAction: 'yield', backgroundOnTimeoutMs: 60000, inputLookMs: 500 });
  assert.equal(s.settings.idleTimeoutMs, 4000);
  assert.equal(s.settings.idleAction, 'yield');
  assert.equal(s.settings.backgroundOnTimeoutMs, 60000);
  assert.equal(s.settings.inputLookMs, 500);
  await s.close();
  // the action alone keeps the idle time (0: none) as it is
  const a = new Session({ idleAction: 'yield' });
  assert.equal(a.settings.idleTimeoutMs, 0);
  assert.equal(a.settings.idleAction, 'yield');
  await a.close();
});

test('bad values are refused with the library\'s InvalidArgumentError (SHEXEC_EINVAL)', { timeout: 10000 }, async () => {
  const einval = (fn, re) => assert.throws(fn, (e) => e instanceof InvalidArgumentError
    && e.code === 'SHEXEC_EINVAL' && e.errno === -1 && (!re || re.test(e.message)));
  einval(() => new Session({ idleAction: 'pause' }), /idleAction/);
  einval(() => new Session({ idleTimeoutMs: -1 }), /idleTimeoutMs/);
  einval(() => new Session({ backgroundOnTimeoutMs: 2 ** 32 }), /backgroundOnTimeoutMs/);
  einval(() => new Session({ inputLookMs: 1.5 }), /inputLookMs/);
  const s = newSession();
  einval(() => s.runSync('true', { yieldMs: -5 }), /yieldMs/);
  einval(() => s.runSync('true', { idleAction: 'stop' }), /idleAction/);
  einval(() => s.runSync('true', { stdin: 'data' }), /stdin/);
  einval(() => s.runSync('true', { signal: new AbortController().signal }), /signal/);
  einval(() => s.runSync(''), /empty/);
  // what only shexec_run_exec() does is refused where it would do nothing
  await assert.rejects(s.run('true', { yieldMs: 100 }), (e) => e instanceof InvalidArgumentError && /runSync/.test(e.message));
  await assert.rejects(s.run('true', { backgroundOnTimeoutMs: 100 }), InvalidArgumentError);
  await assert.rejects(s.run('true', { idleTimeoutMs: 100, idleAction: 'yield' }), InvalidArgumentError);
  await assert.rejects(s.run('true', { idleTimeoutMs: 2 ** 32 }), InvalidArgumentError);
  einval(() => s.start('true', { yieldMs: 100 }), /runSync/);
  einval(() => s.start('true', { idleAction: 'yield' }), /runSync/);
  assert.throws(() => s.runSync('true', { onInput: 'yes' }), TypeError);
  await assert.rejects(s.run('true', { onInput: 42 }), TypeError);
  assert.throws(() => s.start('true', { onInput: {} }), TypeError);
  // 0 is no yield anywhere
  assert.equal((await s.run('echo ok', { yieldMs: 0, backgroundOnTimeoutMs: 0 })).stdout, 'ok\n');
  // the library's own errors: a missing cwd, a closed session
  assert.throws(() => s.runSync('true', { cwd: '/nonexistent/shexec' }), NoCwdError);
  await s.close();
  assert.throws(() => s.runSync('true'), ClosedError);
});

test('runSync() while run() and a task are pending: all settle', { timeout: 15000 }, async () => {
  const s = newSession();
  const quiet = s.start('sleep 20'); // keeps the session's poll waiting: nothing else would settle them soon
  const pending = s.run('sleep 0.2; echo async');
  const t = s.start('sleep 0.3; echo task');
  const r = s.runSync('sleep 0.8; echo sync');
  assert.equal(r.stdout, 'sync\n');
  const t0 = Date.now();
  assert.equal((await pending).stdout, 'async\n');
  assert.equal((await t.done).stdout, 'task\n');
  assert.ok(Date.now() - t0 < 2000, `settled ${Date.now() - t0} ms after runSync()`);
  assert.equal(quiet.running, true);
  await s.close();
});

test('close() ends a yielded command nobody took', { timeout: 15000 }, async () => {
  const s = newSession();
  const r = s.runSync('echo a; sleep 30', { yieldMs: 200 });
  assert.equal(r.yielded, 'time');
  assert.ok(alive(r.pid));
  await s.close();
  await allGone([r.pid]);
});

test('a process with a yielded command nobody took exits, and leaves nothing running', { timeout: 30000 }, async () => {
  const out = await nodeScript(`
    const { Session } = require('shexec');
    const s = new Session({ killGraceMs: 300 });
    const r = s.runSync('sleep 30', { yieldMs: 200 });
    console.log(r.yielded, r.pid);
  `, { timeoutMs: 20000 });
  assert.equal(out.code, 0, out.stderr);
  const [why, pid] = out.stdout.trim().split(' ');
  assert.equal(why, 'time');
  await allGone([Number(pid)]);
  assert.ok(out.ms < 10000, `exited after ${out.ms} ms`);
});

test('watch(): quiet after the last output, not at once; maxMs while output flows; the end; a wait for input',
  { timeout: 40000 }, async () => {
    const s = newSession();
    try {
      let t = s.start('echo a; sleep 0.4; echo b; sleep 30');
      let t0 = Date.now();
      assert.equal(await t.watch({ quietMs: 800, maxMs: 20000 }), 'quiet');
      let took = Date.now() - t0;
      // b came at ~0.4 s: quiet 0.8 s after it, not 0.8 s after the call
      assert.ok(took >= 1100 && took < 8000, `quiet after ${took} ms`);
      assert.equal(t.read(), 'a\nb\n');
      assert.ok(t.quietMs >= 800, String(t.quietMs));
      // silent before the call: quietMs more
      t0 = Date.now();
      assert.equal(await t.watch({ quietMs: 500 }), 'quiet');
      assert.ok(Date.now() - t0 >= 450);
      await t.kill();
      t = s.start('while :; do echo x; sleep 0.1; done');
      t0 = Date.now();
      assert.equal(await t.watch({ quietMs: 600, maxMs: 1000 }), 'time');
      took = Date.now() - t0;
      assert.ok(took >= 950 && took < 8000, `time after ${took} ms`);
      await t.kill();
      assert.equal(await t.watch({ quietMs: 100 }), 'ended'); // ended: at once
      t = s.start('sleep 0.3; exit 4');
      assert.equal(await t.watch({ quietMs: 5000, maxMs: 20000 }), 'ended');
      assert.equal((await t.done).exitCode, 4);
      assert.throws(() => t.watch({ quietMs: -1 }), InvalidArgumentError);
      if (!NO_PROCFS) {
        t = s.start('read x; echo got $x', { stdin: true });
        assert.equal(await t.watch({ maxMs: 20000 }), 'input');
        t.write('y\n');
        assert.equal(await t.watch({ maxMs: 20000 }), 'ended');
        assert.equal(t.read(), 'got y\n');
      }
    } finally {
      await s.close();
    }
  });

test('read() never splits a UTF-8 character written in two halves; readCounts() counts the chunk',
  { timeout: 20000 }, async () => {
    const s = newSession();
    try {
      const t = s.start("printf 'A\\303'; sleep 0.6; printf '\\251B\\n'", { encoding: 'buffer' });
      while (t.counts().totalBytes < 2) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(t.read(), Buffer.from('A'));
      assert.deepEqual(t.readCounts(), { keptChars: 1, keptBytes: 1, totalChars: 1, totalBytes: 1 });
      await t.done;
      assert.deepEqual(t.read(), Buffer.from('éB\n'));
      assert.equal(t.readCounts().totalBytes, 4);
    } finally {
      await s.close();
    }
  });
