// Session.run(): results, cwd tracking, timeouts, limits, environment, errors,
// and the behaviours agent hosts ask of a shell tool.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const shexec = require('shexec');
const { allGone } = require('./util');

const { Session } = shexec;

test('echo hello: stdout, empty stderr, exit code 0, the sentinel stripped', async () => {
  const s = new Session();
  const r = await s.run('echo hello');
  assert.equal(r.stdout, 'hello\n');
  assert.equal(r.stderr, '');
  assert.equal(r.exitCode, 0);
  assert.equal(r.state, 'exited');
  assert.equal(r.timedOut, false);
  assert.equal(r.signal, 0);
  assert.equal(r.leftoverTaskId, null);
  assert.deepEqual(r.truncated, { stdout: false, stderr: false });
  await s.close();
});

test('the late lines of what a command left running are its own, within the drain', async () => {
  const s = new Session({ leftoversDrainMs: 1000 });
  const r = await s.run('{ sleep 0.05; echo late; } &');
  assert.equal(r.stdout, 'late\n');
  assert.equal(r.leftovers, 'none');
  await s.close();
  const off = new Session({ leftoversDrainMs: 0 });
  // (the late line comes long after the run returns, however loaded the machine)
  const r2 = await off.run('{ sleep 2; echo late; } &');
  assert.equal(r2.stdout, '');
  assert.equal(r2.leftovers, 'adopted');
  await off.close();
  assert.throws(() => new Session({ leftoversDrainMs: 2001 }), shexec.InvalidArgumentError);
});

test('settings read back: the defaults, then what the options set', async () => {
  const d = new Session();
  // containment is "auto" by default: a cgroup where one can be made, else groups and why
  assert.ok(d.settings.containment.kind === 'cgroup'
    ? d.settings.containment.detail.includes('/shexec-')
    : d.settings.containment.detail !== 'turned off');
  assert.deepEqual(d.settings, {
    timeoutMs: 120000, maxTimeoutMs: 600000, killGraceMs: 5000, leftoversDrainMs: 100, outputLimit: 30000,
    outputUnit: 'chars', outputKeep: 'head', outputWithinLimit: false, envInherit: true, maxTasks: 10,
    onLeftovers: 'adopt', watchdog: false, persistEnv: false,
    containment: d.settings.containment,
    limits: { memory: 0, swap: 0, pids: 0, cpu: 0 }, shell: null,
    idleTimeoutMs: 0, idleAction: 'end', backgroundOnTimeoutMs: 0,
    inputLookMs: shexec.DEFAULT_INPUT_LOOK_MS, noticePosition: 'last', spillDir: null,
  });
  await d.close();
  const s = new Session({
    timeoutMs: 4000, maxTimeoutMs: 8000, killGraceMs: 250, leftoversDrainMs: 0, outputLimit: 100, outputUnit: 'bytes',
    outputKeep: 'head_tail', outputWithinLimit: true, envInherit: false, maxTasks: 3, onLeftovers: 'kill',
    persistEnv: true, containment: 'off', shell: ['/bin/sh'], noticePosition: 'first', spillDir: os.tmpdir(),
  });
  assert.deepEqual(s.settings, {
    timeoutMs: 4000, maxTimeoutMs: 8000, killGraceMs: 250, leftoversDrainMs: 0, outputLimit: 100,
    outputUnit: 'bytes', outputKeep: 'head_tail', outputWithinLimit: true, envInherit: false, maxTasks: 3,
    onLeftovers: 'kill', watchdog: false, persistEnv: true,
    containment: { kind: 'group', detail: 'turned off' },
    limits: { memory: 0, swap: 0, pids: 0, cpu: 0 }, shell: ['/bin/sh'],
    idleTimeoutMs: 0, idleAction: 'end', backgroundOnTimeoutMs: 0,
    inputLookMs: shexec.DEFAULT_INPUT_LOOK_MS, noticePosition: 'first', spillDir: os.tmpdir(),
  });
  await s.close();
});

test('a non-zero exit is data, not a rejection', async () => {
  const s = new Session();
  const r = await s.run('exit 42');
  assert.equal(r.exitCode, 42);
  assert.equal(r.state, 'exited');
  await s.close();
});

test('stderr is kept apart', async () => {
  const s = new Session();
  const r = await s.run('echo err >&2');
  assert.equal(r.stderr, 'err\n');
  assert.equal(r.stdout, '');
  assert.equal(r.exitCode, 0);
  await s.close();
});

test('cwd: a cd carries over to the next command, and is reported', async () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shexec-node-')));
  fs.mkdirSync(path.join(dir, 'sub'));
  const s = new Session({ cwd: dir });
  assert.equal(s.cwd, dir);
  assert.equal((await s.run('pwd')).stdout, `${dir}\n`);
  const r = await s.run('cd sub');
  assert.equal(r.cwd, path.join(dir, 'sub'));
  assert.equal((await s.run('pwd')).stdout, `${path.join(dir, 'sub')}\n`);
  assert.equal(s.cwd, path.join(dir, 'sub'));
  // a run with its own cwd does not move the session
  assert.equal((await s.run('pwd', { cwd: '/' })).stdout, '/\n');
  assert.equal(s.cwd, path.join(dir, 'sub'));
  s.setCwd('/tmp');
  assert.equal((await s.run('pwd')).stdout, '/tmp\n');
  // a task never moves it
  await s.start('cd /').done;
  assert.equal(s.cwd, '/tmp');
  await s.close();
  fs.rmSync(dir, { recursive: true });
});

test('cwd: the default is the host\'s current directory', async () => {
  const s = new Session();
  assert.equal((await s.run('pwd -P')).stdout, `${fs.realpathSync(process.cwd())}\n`);
  await s.close();
});

test('cwd: a command killed by its timeout before the sentinel leaves the cwd as it was', async () => {
  const s = new Session({ cwd: '/tmp' });
  const r = await s.run('cd / && sleep 30', { timeoutMs: 300 });
  assert.equal(r.timedOut, true);
  assert.equal(s.cwd, '/tmp');
  await s.close();
});

test('timeout: the whole tree is killed, no process is left, partial output kept', async () => {
  const s = new Session({ killGraceMs: 1000 });
  const t0 = Date.now();
  const r = await s.run(
    'echo partial; sleep 300 & echo $!; (sleep 301 & echo $!; wait) & sleep 302 & echo $!; wait',
    { timeoutMs: 500 },
  );
  assert.ok(Date.now() - t0 < 10000, 'returned soon after the timeout');
  assert.equal(r.timedOut, true);
  assert.equal(r.state, 'timed_out');
  assert.equal(r.exitCode, -1);
  assert.equal(r.signal, 15);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines[0], 'partial');
  const pids = lines.slice(1).map(Number);
  assert.equal(pids.length, 3);
  await allGone(pids);
  await s.close();
});

test('timeout: SIGTERM lets a command clean up, its output captured', async () => {
  const s = new Session();
  const r = await s.run("trap 'echo cleanup; exit 0' TERM; sleep 30 & wait", { timeoutMs: 300 });
  assert.equal(r.timedOut, true);
  assert.match(r.stdout, /cleanup/);
  await s.close();
});

test('timeout: a command ignoring SIGTERM gets SIGKILL after the grace', async () => {
  const s = new Session({ killGraceMs: 200 });
  const r = await s.run("trap '' TERM; sleep 30", { timeoutMs: 300 });
  assert.equal(r.timedOut, true);
  assert.equal(r.signal, 9);
  await s.close();
});

test('a command waiting on stdin gets EOF instead of hanging', async () => {
  const s = new Session({ timeoutMs: 10000 });
  const r = await s.run('read x; echo "got[$x] $?"');
  assert.equal(r.timedOut, false);
  assert.equal(r.stdout, 'got[] 1\n');
  await s.close();
});

test('stdin: a string given to run() is the command\'s input', async () => {
  const s = new Session();
  const r = await s.run('tr a-z A-Z', { stdin: 'hello\n' });
  assert.equal(r.stdout, 'HELLO\n');
  await s.close();
});

test('output limit: 50000 characters keep the first 30000 and a notice; streams apart', async () => {
  const s = new Session();
  const r = await s.run("head -c 50000 /dev/zero | tr '\\0' x; head -c 5000 /dev/zero | tr '\\0' y >&2");
  assert.deepEqual(r.truncated, { stdout: true, stderr: false });
  assert.equal(r.stdout, 'x'.repeat(30000) + '\n[output truncated: kept the first 30000 characters (30000 bytes) '
    + 'of 50000 (50000 bytes, 1 lines); 20000 characters (20000 bytes) omitted]\n');
  assert.equal(r.stderr, 'y'.repeat(5000));
  assert.equal(r.totalBytes.stdout, 50000);
  const r2 = await s.run("head -c 40000 /dev/zero | tr '\\0' e >&2; head -c 10000 /dev/zero | tr '\\0' o");
  assert.deepEqual(r2.truncated, { stdout: false, stderr: true });
  assert.equal(r2.stdout.length, 10000);
  // the session's limit and unit
  const s2 = new Session({ outputLimit: 100, outputUnit: 'bytes' });
  const r3 = await s2.run("head -c 1000 /dev/zero | tr '\\0' z");
  assert.equal(r3.stdout, 'z'.repeat(100) + '\n[output truncated: kept the first 100 characters (100 bytes) '
    + 'of 1000 (1000 bytes, 1 lines); 900 characters (900 bytes) omitted]\n');
  await s.close();
  await s2.close();
});

test('environment: overrides merged with the host\'s, dangerous variables removed', async () => {
  process.env.SHEXEC_NODE_TEST_INHERITED = 'yes';
  const s = new Session({ env: { SESSION_VAR: 's' } });
  const r = await s.run('echo "$SHEXEC_NODE_TEST_INHERITED $SESSION_VAR $RUN_VAR ${LD_PRELOAD-unset}"', {
    env: { RUN_VAR: 'r', LD_PRELOAD: '/evil.so' },
  });
  assert.equal(r.stdout, 'yes s r unset\n');
  const r2 = await s.run('echo "${SHEXEC_NODE_TEST_INHERITED-removed}"', { env: { SHEXEC_NODE_TEST_INHERITED: null } });
  assert.equal(r2.stdout, 'removed\n');
  await s.close();
});

test('pty: a terminal when asked, escapes stripped when asked', async () => {
  const s = new Session();
  const r = await s.run('[ -t 1 ] && echo tty || echo notty', { pty: true });
  assert.equal(r.stdout.replace(/\r/g, ''), 'tty\n');
  const r2 = await s.run("printf '\\033[31mred\\033[0m\\n'", { ansi: 'strip' });
  assert.equal(r2.stdout, 'red\n');
  await s.close();
});

test('encoding: buffer gives the exact bytes, NUL and invalid UTF-8 included', async () => {
  const s = new Session({ encoding: 'buffer' });
  const r = await s.run("printf 'a\\000b\\377'");
  assert.ok(Buffer.isBuffer(r.stdout));
  assert.deepEqual([...r.stdout], [0x61, 0, 0x62, 0xff]);
  await s.close();
});

test('errors are Error subclasses with the library\'s code and message', async () => {
  assert.throws(() => new Session({ cwd: '/nonexistent-shexec-dir' }), (e) => {
    assert.ok(e instanceof Error);
    assert.ok(e instanceof shexec.ShexecError);
    assert.ok(e instanceof shexec.NoCwdError);
    assert.equal(e.name, 'NoCwdError');
    assert.equal(e.code, 'SHEXEC_ENOCWD');
    assert.equal(e.errno, -3);
    assert.match(e.message, /\/nonexistent-shexec-dir/);
    return true;
  });
  const s = new Session();
  await assert.rejects(s.run('true', { cwd: '/nonexistent-shexec-dir' }), shexec.NoCwdError);
  await assert.rejects(s.run(''), (e) => e instanceof shexec.InvalidArgumentError && e.code === 'SHEXEC_EINVAL');
  await assert.rejects(s.run('echo a\0b'), /NUL/);
  assert.throws(() => s.task('t000000000000'), (e) => e instanceof shexec.NoTaskError && e.errno === -9);
  assert.throws(() => s.setEnv('A=B', 'x'), shexec.InvalidArgumentError);
  const bad = new Session({ shell: '/nonexistent-shexec-dir/sh' });
  await assert.rejects(bad.run('true'), (e) => e instanceof shexec.SpawnError && /nonexistent-shexec-dir/.test(e.message));
  await bad.close();
  await s.close();
  await assert.rejects(s.run('true'), (e) => e instanceof shexec.ClosedError && e instanceof shexec.StateError);
  assert.throws(() => s.start('true'), shexec.ClosedError);
});

test('the library is found through SHEXEC_LIB, and a wrong one is a clear error', async () => {
  const { nodeScript, SOURCE_DIR } = require('./util');
  const ok = await nodeScript("console.log(require('shexec').libraryPath)", {
    env: { SHEXEC_LIB: path.join(SOURCE_DIR, 'build', 'libshexec.so.1') },
  });
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /build\/libshexec\.so\.1/);
  const bad = await nodeScript("require('shexec')", { env: { SHEXEC_LIB: '/nonexistent/libshexec.so.1' } });
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /libshexec not found \(set SHEXEC_LIB to its path\)/);
});

test('tools: registered disabled, renamed, enabled, called without blocking', async () => {
  const s = new Session();
  assert.deepEqual(s.listTools(), []);
  s.renameTool('bash', 'run_bash');
  assert.equal(s.isToolEnabled('run_bash'), false);
  await assert.rejects(s.callTool('run_bash', { command: 'echo test' }), (e) => {
    assert.ok(e instanceof shexec.ToolNotAvailableError);
    assert.equal(e.message, 'Tool not available: run_bash');
    assert.deepEqual(e.result, { error: 'Tool not available: run_bash' });
    return true;
  });
  s.setToolEnabled('run_bash');
  s.setToolEnabled('task_output');
  assert.deepEqual(s.listTools().map((t) => t.name), ['run_bash', 'task_output']);
  const r = await s.callTool('run_bash', { command: 'echo test; exit 3' });
  assert.equal(r.stdout, 'test\n');
  assert.equal(r.exit_code, 3);
  const bg = await s.callTool('run_bash', { command: 'echo bg', run_in_background: true });
  assert.equal(bg.status, 'running');
  let out;
  for (let i = 0; i < 200; i++) {
    out = await s.callTool('task_output', { task_id: bg.task_id });
    if (out.status === 'completed') break;
    await new Promise((res) => setTimeout(res, 25));
  }
  assert.equal(out.status, 'completed');
  assert.equal(out.stdout, 'bg\n');
  await assert.rejects(s.callTool('task_output', { task_id: 'tnope' }), shexec.NoTaskError);
  await s.close();
});

test('version and strerror', () => {
  assert.match(shexec.version(), /^\d+\.\d+\.\d+$/);
  assert.equal(typeof shexec.strerror(-3), 'string');
});

test('persistEnv: exports and bash functions carry over; off they do not', async () => {
  const s = new Session({ persistEnv: true });
  assert.equal(s.persistEnv, true);
  await s.run("export A=1 B=$'two\\nlines'; V=shell; f() { echo fn; }");
  assert.equal((await s.run('echo "$A $V"; f')).stdout, '1 shell\nfn\n');
  assert.equal(s.getEnv('B'), 'two\nlines');
  assert.equal(s.getEnv('V'), null);
  await s.run('unset A; export LD_PRELOAD=/x.so');
  assert.equal(s.getEnv('A'), null);
  assert.equal(s.getEnv('LD_PRELOAD'), null);
  assert.equal((await s.run('echo ${A-unset} ${LD_PRELOAD-none}')).stdout, 'unset none\n');
  await s.close();
  const off = new Session();
  assert.equal(off.persistEnv, false);
  await off.run('export A=1');
  assert.equal((await off.run('echo ${A-unset}')).stdout, 'unset\n');
  await off.close();
});
