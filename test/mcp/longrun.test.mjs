// shexec-mcp with commands that outlive their call, through the official MCP
// SDK client: bash with yield_time_ms (answered while the command runs, with
// its output so far and a task id), a command waiting for input answered
// with task_write, task_output waiting (yield_time_ms, quiet_ms) without
// blocking the server, a question asked only on a terminal, a full task
// table, and the flags --idle-timeout, --background-on-timeout,
// --input-look-ms, --leftovers-drain-ms and --agent-env.
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

  test('read -s on the terminal, which never echoes: password true', async () => {
    const t = text(await bash(client, { command: "read -s -p 'Password: ' p; echo got ${#p}",
      pty: true, yield_time_ms: 10000 }));
    assert.match(t, /yield_reason: input /);
    assert.match(t, /\nwaiting_for_input: true\nprompt: "Password: "\npassword: true\n/);
    const w = text(await call(client, 'task_write', { task_id: taskId(t), input: 'hunter2\n' }));
    assert.match(w, /status: completed\n/);
    assert.match(w, /got 7/);
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
      [{ task_id: id, new_only: true }, /unknown argument "new_only" \(the arguments are: task_id, input, close_stdin, yield_time_ms, quiet_ms\)/],
      [{ task_id: id, quiet_ms: 0 }, /argument "quiet_ms" must be a whole number of milliseconds >= 1/],
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

describe('a question asked only on a terminal, following a task, a full task table', () => {
  let client;
  before(async () => { ({ client } = await connect(LOOK)); });
  after(async () => { await client.close(); });

  test('read -p on a pipe: an empty prompt with a hint; task_write answers it', async () => {
    const r = await bash(client, { command: "read -p 'Enter name: ' n; echo \"hi $n\"",
      yield_time_ms: 10000 });
    const t = text(r);
    assert.match(t, /yield_reason: input /);
    assert.match(t, /\nwaiting_for_input: true\nprompt: ""\npassword: false\nhint: It waits for input but printed no question: the program may print its question only on a terminal\. .*pty: true/);
    assert.equal(r.structuredContent.prompt, '');
    assert.match(r.structuredContent.hint, /only on a terminal/);
    const w = await call(client, 'task_write', { task_id: taskId(t), input: 'Ada\n' });
    assert.match(text(w), /status: completed\n/);
    assert.match(text(w), /stdout:\nhi Ada\n/);
    // on a terminal the question shows, and no hint is needed
    const p = text(await bash(client, { command: "read -p 'Enter name: ' n", pty: true,
      yield_time_ms: 10000 }));
    assert.match(p, /prompt: "Enter name: "\npassword: false\n/);
    assert.doesNotMatch(p, /hint:/);
    await call(client, 'task_kill', { task_id: taskId(p) });
  });

  test('task_output with quiet_ms answers once the task has printed nothing for that long', async () => {
    const id = taskId(text(await bash(client, {
      command: 'for i in 1 2 3; do echo $i; sleep 0.3; done; sleep 30', run_in_background: true })));
    const t0 = Date.now();
    const waiting = call(client, 'task_output', { task_id: id, new_only: true, quiet_ms: 800,
      yield_time_ms: 20000 });
    await client.ping(); // the server serves while the call waits
    const r = await waiting;
    const took = Date.now() - t0;
    assert.ok(took >= 1000 && took < 10000, `answered after ${took} ms`);
    assert.match(text(r), /^task_id: \S+\nstatus: running\nstdout:\n1\n2\n3\nwaiting_for_input: false\nwait_reason: quiet\n$/);
    assert.equal(r.structuredContent.wait_reason, 'quiet');
    assert.equal(r.structuredContent.stdout, '1\n2\n3\n');
    // its time runs out first while output keeps coming
    const busy = taskId(text(await bash(client, {
      command: 'while :; do echo x; sleep 0.1; done', run_in_background: true })));
    const b = await call(client, 'task_output', { task_id: busy, quiet_ms: 1000, yield_time_ms: 600 });
    assert.match(text(b), /wait_reason: time\n/);
    assert.equal(b.structuredContent.wait_reason, 'time');
    // without quiet_ms, no wait_reason
    assert.doesNotMatch(text(await call(client, 'task_output', { task_id: busy, yield_time_ms: 100 })),
      /wait_reason/);
    await call(client, 'task_kill', { task_id: busy });
    await call(client, 'task_kill', { task_id: id });
    // the end comes first
    const done = taskId(text(await bash(client, { command: 'sleep 0.2; echo end', run_in_background: true })));
    const d = await call(client, 'task_output', { task_id: done, quiet_ms: 5000 });
    assert.match(text(d), /status: completed\n/);
    assert.match(text(d), /wait_reason: ended\n/);
  });

  test('a full task table: a call that may go on as a task is refused at once', async () => {
    const ids = [];
    for (let i = 0; i < 10; i++)
      ids.push(taskId(text(await bash(client, { command: `sleep 30 # server ${i}`, run_in_background: true }))));
    const t0 = Date.now();
    const r = await bash(client, { command: 'sleep 3; echo late', yield_time_ms: 200 });
    assert.ok(Date.now() - t0 < 1500, 'refused at once');
    assert.equal(r.isError, true);
    assert.match(text(r), /No room for another background task/);
    assert.match(text(r), /task_kill/);
    // (the newest first, eight of them)
    assert.ok(text(r).includes(ids[9]), text(r));
    assert.ok(text(r).includes('`sleep 30 # server 9`'), text(r));
    assert.match(text(r), /10 running \(.*, \.\.\.\)/);
    // room made: a command with a yield keeps the slot it needs while it runs,
    // so a background call meanwhile is refused and the yield comes on time
    await call(client, 'task_kill', { task_id: ids.pop() });
    const t1 = Date.now();
    const yielding = bash(client, { command: 'sleep 3; echo late', yield_time_ms: 500 });
    const bg = await bash(client, { command: 'sleep 30', run_in_background: true });
    assert.equal(bg.isError, true);
    assert.match(text(bg), /maximum of 10 tasks \(9 running, 0 finished but not yet freed, and a slot kept for each command started with a yield time/);
    const y = await yielding;
    assert.ok(Date.now() - t1 < 2500, 'answered at its yield time');
    assert.match(text(y), /^task_id: \S+\nstatus: running\nyield_reason: yield_time /);
    ids.push(taskId(text(y)));
    for (const id of ids) await call(client, 'task_kill', { task_id: id });
  });
});

describe('--leftovers-drain-ms', () => {
  test('the late line of what a command left running is its own; 0 leaves it to the task', async () => {
    const { client } = await connect(['--leftovers-drain-ms', '1000']);
    try {
      const r = await bash(client, { command: '{ sleep 0.05; echo late; } &' });
      assert.match(text(r), /^stdout:\nlate\nexit_code: 0\n/);
      assert.doesNotMatch(text(r), /leftover_task_id/);
    } finally {
      await client.close();
    }
    const off = (await connect(['--leftovers-drain-ms', '0'])).client;
    try {
      const r = await bash(off, { command: '{ sleep 0.3; echo late; } & echo now' });
      assert.match(text(r), /^stdout:\nnow\nexit_code: 0\n/);
      assert.match(text(r), /leftover_task_id: /);
    } finally {
      await off.close();
    }
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
        ['close_stdin', 'input', 'quiet_ms', 'task_id', 'yield_time_ms']);
      const b = tools.find((t) => t.name === 'bash');
      assert.equal(b.inputSchema.properties.yield_time_ms.type, 'integer');
      assert.match(b.description, /yield_time_ms/);
      const o = tools.find((t) => t.name === 'task_output');
      assert.equal(o.inputSchema.properties.yield_time_ms.type, 'integer');
      assert.equal(o.inputSchema.properties.quiet_ms.type, 'integer');
      assert.match(b.description, /only on a terminal/);
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
