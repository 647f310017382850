// shexec-mcp with commands that outlive their call, through the official MCP
// SDK client: bash with yield_time_ms (answered while the command runs, with
// its output so far and a task id), a command waiting for input answered
// with task_write, task_output waiting (yield_time_ms) without blocking the
// server, and the flags --idle-timeout, --background-on-timeout,
// --input-look-ms and --agent-env.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, text, bash, sleep } from './util.mjs';

// A waiting command is looked at after 200 ms of silence instead of 2 s.
const LOOK = ['--input-look-ms', '200'];

const call = (client, name, args) => client.callTool({ name, arguments: args });
const taskId = (t) => t.match(/^task_id: (\S+)\n/)[1];

describe('bash with yield_time_ms, task_write, task_output waiting', () => {
  let client;
  before(async () => { ({ client } = await connect(LOOK)); });
  after(async () => { await client.close(); });

  test('a prompt on a terminal: waiting_for_input with the prompt, answered with task_write', async () => {
    const t0 = Date.now();
    const r = await bash(client, { command: "read -p 'Name: ' n; echo hi $n", pty: true,
      yield_time_ms: 10000 });
    assert.ok(Date.now() - t0 < 5000, 'answered when found waiting, not at the yield time');
    assert.equal(r.isError, false);
    const t = text(r);
    assert.match(t, /^task_id: \S+\nstatus: running\nyield_reason: input /);
    assert.match(t, /\nstdout:\nName: \n\\ no newline at end of stdout\n/);
    assert.match(t, /\nwaiting_for_input: true\nprompt: "Name: "\npassword: false\nelapsed_ms: \d+\n/);
    assert.match(t, /task_write/);
    const w = await call(client, 'task_write', { task_id: taskId(t), input: 'Ada\n' });
    assert.equal(w.isError, false);
    const wt = text(w);
    assert.match(wt, /^task_id: \S+\nstatus: completed\nexit_code: 0\nstate: exited\n/);
    assert.match(wt, /hi Ada/);
    assert.doesNotMatch(wt, /Name:/, 'new output only');
  });

  test('a prompt on a stdin pipe (yield_time_ms gives the command one)', async () => {
    const t = text(await bash(client, { command: "printf 'Name: '; read n; echo hi $n",
      yield_time_ms: 10000 }));
    assert.match(t, /yield_reason: input /);
    assert.match(t, /\nwaiting_for_input: true\nprompt: "Name: "\npassword: false\n/);
    const w = text(await call(client, 'task_write', { task_id: taskId(t), input: 'Bob\n' }));
    assert.match(w, /status: completed\n/);
    assert.match(w, /stdout:\nhi Bob\n/);
  });

  test('a yield time: running with the output so far; task_output waits for the end', async () => {
    const t0 = Date.now();
    const r = await bash(client, { command: 'echo a; sleep 2; echo b', yield_time_ms: 300 });
    assert.ok(Date.now() - t0 < 1500, 'answered at the yield time');
    assert.equal(r.isError, false);
    const t = text(r);
    assert.match(t, /^task_id: \S+\nstatus: running\nyield_reason: yield_time /);
    assert.match(t, /\nstdout:\na\nwaiting_for_input: false\nelapsed_ms: \d+\n/);
    const id = taskId(t);
    // a short wait answers at its time, still running, and the server keeps
    // serving while a longer one waits
    const short = text(await call(client, 'task_output', { task_id: id, yield_time_ms: 100 }));
    assert.match(short, /^task_id: \S+\nstatus: running\nstdout:\na\nwaiting_for_input: false\n$/);
    const t1 = Date.now();
    const waiting = call(client, 'task_output', { task_id: id, yield_time_ms: 20000 });
    let answered = false;
    waiting.then(() => { answered = true; });
    await client.ping();
    assert.equal(text(await bash(client, { command: 'echo meanwhile' })).split('\n')[1], 'meanwhile');
    assert.equal(answered, false, 'the ping and a bash call are answered while task_output waits');
    const done = text(await waiting);
    assert.ok(Date.now() - t1 < 5000, 'answered when the task ended, not at the wait time');
    assert.match(done, /^task_id: \S+\nstatus: completed\nexit_code: 0\nstate: exited\nstdout:\na\nb\n$/);
    // read once: the task is gone
    const gone = await call(client, 'task_output', { task_id: id });
    assert.equal(gone.isError, true);
    assert.match(text(gone), /Task not found/);
  });

  test('a waiting task_output cancelled by the client: dropped, the task goes on', async () => {
    const t = text(await bash(client, { command: 'echo a; sleep 1; echo b; sleep 30', yield_time_ms: 100 }));
    const id = taskId(t);
    const ac = new AbortController();
    const waiting = call(client, 'task_output', { task_id: id, yield_time_ms: 20000 });
    const cancelled = client.callTool({ name: 'task_output', arguments: { task_id: id, yield_time_ms: 20000 } },
      undefined, { signal: ac.signal });
    await sleep(100);
    ac.abort();
    await assert.rejects(cancelled);
    // the other wait is still pending; a plain read answers meanwhile
    assert.match(text(await call(client, 'task_output', { task_id: id })), /status: running\n/);
    const k = text(await call(client, 'task_kill', { task_id: id }));
    // the signal that ended it: the kill's SIGTERM
    assert.match(k, /status: killed\nexit_code: -1\nstate: killed\nsignal: 15 \(SIGTERM\)\nstdout:\na\n/);
    // the kill ended the task the other call waits on: it answers too
    assert.match(text(await waiting), /status: completed\nexit_code: -1\nstate: killed\nsignal: 15 /);
  });

  test('task_output with yield_time_ms answers at once for a task waiting for input', async () => {
    const t = text(await bash(client, { command: 'read x; echo "read $? [$x]"', yield_time_ms: 10000 }));
    assert.match(t, /waiting_for_input: true\nprompt: ""\n/);
    const id = taskId(t);
    const t0 = Date.now();
    const o = text(await call(client, 'task_output', { task_id: id, yield_time_ms: 20000 }));
    assert.ok(Date.now() - t0 < 2000);
    assert.match(o, /status: running\n\(no output\)\nwaiting_for_input: true\n/);
    // close_stdin alone: the command reads end of input
    const w = text(await call(client, 'task_write', { task_id: id, close_stdin: true }));
    assert.match(w, /status: completed\nexit_code: 0\nstate: exited\nstdout:\nread 1 \[\]\n$/);
  });

  test('task_write errors: no input, finished, unknown task, bad arguments', async () => {
    // started in the background without pty: its stdin is empty, it takes no input
    let r = await bash(client, { command: 'sleep 5', run_in_background: true });
    const id = taskId(text(r));
    r = await call(client, 'task_write', { task_id: id, input: 'x\n' });
    assert.equal(r.isError, true);
    assert.match(text(r), new RegExp(`^Task ${id} takes no input: .*yield_time_ms or pty`));
    await call(client, 'task_kill', { task_id: id });
    // a task that has finished takes no input
    const t = text(await bash(client, { command: 'echo x; sleep 0.3', yield_time_ms: 100 }));
    const fid = taskId(t);
    assert.match(text(await call(client, 'task_output', { task_id: fid, yield_time_ms: 5000, new_only: true })),
      /status: completed/);
    r = await call(client, 'task_write', { task_id: fid, input: 'x' });
    assert.equal(r.isError, true);
    assert.match(text(r), /Task not found/);
    const t2 = text(await bash(client, { command: 'true; sleep 0.3', yield_time_ms: 100 }));
    const id2 = taskId(t2);
    await new Promise((res) => setTimeout(res, 800));
    r = await call(client, 'task_write', { task_id: id2, input: 'x' });
    assert.equal(r.isError, true);
    assert.match(text(r), new RegExp(`Task ${id2} has finished: it takes no input`));
    assert.match(text(await call(client, 'task_output', { task_id: id2 })), /status: completed/);
    for (const [args, msg] of [
      [{ task_id: 'nope', input: 'x' }, /Task not found: nope/],
      [{ input: 'x' }, /missing required argument "task_id"/],
      [{ task_id: id, new_only: true }, /unknown argument "new_only" \(the arguments are: task_id, input, close_stdin, yield_time_ms\)/],
      [{ task_id: id, input: 3 }, /argument "input" must be a string/],
      [{ task_id: id, close_stdin: 'yes' }, /argument "close_stdin" must be a boolean/],
      [{ task_id: id, yield_time_ms: -1 }, /yield_time_ms" must be a whole number of milliseconds >= 0/],
    ]) {
      r = await call(client, 'task_write', args);
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.match(text(r), msg);
    }
    r = await call(client, 'task_output', { task_id: id, yield_time_ms: 1.5 });
    assert.equal(r.isError, true);
    assert.match(text(r), /yield_time_ms/);
    r = await call(client, 'task_kill', { task_id: id, yield_time_ms: 1 });
    assert.equal(r.isError, true);
    assert.match(text(r), /unknown argument "yield_time_ms" \(the arguments are: task_id, signal\)/);
  });
});

describe('--idle-timeout, --background-on-timeout', () => {
  test('--idle-timeout ends a silent command early, and says so; not a background one', async () => {
    const { client } = await connect(['--idle-timeout', '1']);
    try {
      // not for run_in_background commands: a server may be silent for long
      const bg = taskId(text(await bash(client, { command: 'sleep 30', run_in_background: true })));
      const t0 = Date.now();
      const r = await bash(client, { command: 'echo a; sleep 30' });
      assert.ok(Date.now() - t0 < 5000, 'ended after about 1 s of silence');
      assert.equal(r.isError, true);
      assert.match(text(r), /^stdout:\na\ntimed_out: true \(Command ended: no output for its idle timeout of 1000 ms, after \d+ ms; its process group was terminated, the output above is what it printed before\)\nexit_code: -1\n/);
      // a command that keeps printing is not idle
      const k = await bash(client, { command: 'for i in 1 2 3; do echo $i; sleep 0.5; done' });
      assert.equal(k.isError, false);
      assert.match(text(k), /^stdout:\n1\n2\n3\nexit_code: 0\n/);
      assert.match(text(await call(client, 'task_output', { task_id: bg })), /status: running\n/);
      assert.match(text(await call(client, 'task_kill', { task_id: bg })), /status: killed\n/);
    } finally {
      await client.close();
    }
  });

  test('--idle-timeout SECONDS:yield moves a silent command to the background', async () => {
    const { client } = await connect(['--idle-timeout', '1:yield']);
    try {
      const t0 = Date.now();
      const r = await bash(client, { command: 'echo a; sleep 30' });
      assert.ok(Date.now() - t0 < 5000);
      assert.equal(r.isError, false);
      const t = text(r);
      assert.match(t, /^task_id: \S+\nstatus: running\nyield_reason: idle_timeout \(no output for 1000 ms/);
      assert.match(t, /\nstdout:\na\nwaiting_for_input: false\n/);
      assert.doesNotMatch(t, /task_write/, 'its stdin is empty: no input to give');
      const k = text(await call(client, 'task_kill', { task_id: taskId(t) }));
      assert.match(k, /status: killed\n/);
    } finally {
      await client.close();
    }
  });

  test('--background-on-timeout: answered at the timeout, the command goes on to its end', async () => {
    const { client } = await connect(['--timeout', '1', '--background-on-timeout', '10']);
    try {
      const r = await bash(client, { command: 'echo a; sleep 2; echo b' });
      assert.equal(r.isError, false);
      const t = text(r);
      assert.match(t, /^task_id: \S+\nstatus: running\nyield_reason: timeout \(its timeout of 1000 ms passed: moved to the background instead of being ended; it is ended 10000 ms after its start\)\n/);
      const done = text(await call(client, 'task_output', { task_id: taskId(t), yield_time_ms: 10000 }));
      assert.match(done, /status: completed\nexit_code: 0\nstate: exited\nstdout:\na\nb\n/);
    } finally {
      await client.close();
    }
  });
});

describe('--agent-env and tools/list', () => {
  test('--agent-env: PAGER=cat and the rest; without it, not', async () => {
    let { client } = await connect(['--agent-env']);
    try {
      const t = text(await bash(client, {
        command: 'echo "$PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT $DEBIAN_FRONTEND $TERM $NO_COLOR"' }));
      assert.match(t, /^stdout:\ncat cat 0 noninteractive dumb 1\n/);
    } finally {
      await client.close();
    }
    ({ client } = await connect());
    try {
      const t = text(await bash(client, { command: 'echo "${PAGER-unset} ${GIT_TERMINAL_PROMPT-unset}"' }));
      assert.doesNotMatch(t, /^stdout:\ncat 0\n/);
    } finally {
      await client.close();
    }
  });

  test('tools/list has task_write and yield_time_ms; --disable-tools task_write hides it', async () => {
    let { client } = await connect();
    try {
      const { tools } = await client.listTools();
      const w = tools.find((t) => t.name === 'task_write');
      assert.ok(w, 'task_write listed');
      assert.deepEqual(w.inputSchema.required, ['task_id']);
      assert.deepEqual(Object.keys(w.inputSchema.properties).sort(),
        ['close_stdin', 'input', 'task_id', 'yield_time_ms']);
      const b = tools.find((t) => t.name === 'bash');
      assert.equal(b.inputSchema.properties.yield_time_ms.type, 'integer');
      assert.match(b.description, /yield_time_ms/);
      const o = tools.find((t) => t.name === 'task_output');
      assert.equal(o.inputSchema.properties.yield_time_ms.type, 'integer');
    } finally {
      await client.close();
    }
    ({ client } = await connect(['--disable-tools', 'task_write']));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(names, ['bash', 'task_kill', 'task_output']);
    } finally {
      await client.close();
    }
  });
});
