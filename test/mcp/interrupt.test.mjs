// shexec-mcp's Ctrl+C: task_kill with a signal (SIGINT) and ^C (\u0003)
// typed with task_write reach a pipe-mode task as a terminal's Ctrl+C would
// (Python's http.server takes its KeyboardInterrupt path), task results
// say how the task ended (signal, interrupted) in the text and in
// structuredContent, bad signals and finished tasks are refused, and a ^C
// answered through the Tasks extension's tasks/update interrupts too.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { connect, text, bash, startRaw, sleep, tempDir, readPids, waitGone } from './util.mjs';

const PYTHON = '/usr/bin/python3';
const SERVER_CMD = `${PYTHON} -u -m http.server 0 --bind 127.0.0.1`;
const call = (client, name, args) => client.callTool({ name, arguments: args });
const taskId = (t) => t.match(/^task_id: (\S+)\n/)[1];

// GET / on the loopback, the reply read to its end.
function httpGet(port) {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path: '/', timeout: 60000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('no answer')));
  });
}

// The server started in the background and serving: its "Serving" line,
// then a request answered (only inside serve_forever() does a SIGINT take
// its KeyboardInterrupt path; the line is printed just before it).
async function startServer(client) {
  const id = taskId(text(await bash(client, { command: SERVER_CMD, run_in_background: true })));
  const end = Date.now() + 60000;
  let out = '';
  while (!/Serving HTTP on \S+ port \d+/.test(out)) {
    assert.ok(Date.now() < end, out);
    out += text(await call(client, 'task_output', { task_id: id, new_only: true, yield_time_ms: 200 }));
  }
  assert.equal(await httpGet(Number(out.match(/ port (\d+)/)[1])), 200);
  return id;
}

// The task's results until it completed: the text of each, joined, and
// the last structuredContent.
async function untilCompleted(client, id, first) {
  let r = first;
  let all = '';
  const end = Date.now() + 60000;
  for (;;) {
    assert.equal(r.isError, false, text(r));
    all += text(r);
    if (/^task_id: \S+\nstatus: completed\n/.test(text(r))) return { all, sc: r.structuredContent };
    assert.ok(Date.now() < end, all);
    r = await call(client, 'task_output', { task_id: id, new_only: true, yield_time_ms: 20000 });
  }
}

describe('Ctrl+C to a task: task_kill with a signal, ^C through task_write', { timeout: 300000 }, () => {
  let client;
  before(async () => { ({ client } = await connect()); });
  after(async () => { await client.close(); });

  for (const [how, args] of [
    ['task_kill signal SIGINT', (id) => ['task_kill', { task_id: id, signal: 'SIGINT' }]],
    ['task_write \\u0003', (id) => ['task_write', { task_id: id, input: '\u0003' }]],
  ]) {
    test(`${how}: http.server takes its KeyboardInterrupt path`, { skip: !existsSync(PYTHON) }, async () => {
      const id = await startServer(client);
      const [tool, a] = args(id);
      const { all, sc } = await untilCompleted(client, id, await call(client, tool, a));
      assert.match(all, /Keyboard interrupt received, exiting\./);
      assert.match(all, /status: completed\nexit_code: 0\nstate: exited\ninterrupted: true /);
      assert.equal(sc.exit_code, 0);
      assert.equal(sc.state, 'exited');
      assert.equal(sc.interrupted, true);
      assert.equal(sc.signal, undefined);
      // read to its end: gone
      const gone = await call(client, 'task_output', { task_id: id });
      assert.equal(gone.isError, true);
    });
  }

  test('a task ended by Ctrl+C says signal 2, in the text and structuredContent', async () => {
    for (const tool of ['task_kill', 'task_write']) {
      // "ready" from the process the ^C is for: forked already (a child bash
      // forks as a signal comes starts without it, and bash waits for it)
      const id = taskId(text(await bash(client, { command: "sh -c 'echo ready; exec sleep 60'",
        run_in_background: true })));
      let out = '';
      while (!/ready/.test(out)) out += text(await call(client, 'task_output', { task_id: id, yield_time_ms: 200 }));
      const a = tool === 'task_kill' ? { task_id: id, signal: 'int' } : { task_id: id, input: '\u0003' };
      const { all, sc } = await untilCompleted(client, id, await call(client, tool, a));
      assert.match(all, /status: completed\nexit_code: -1\nstate: signaled\nsignal: 2 \(SIGINT\)\ninterrupted: true /, tool);
      assert.equal(sc.state, 'signaled');
      assert.equal(sc.signal, 2);
      assert.equal(sc.interrupted, true);
    }
  });

  test('a bad signal is refused with the names; a finished task is sent nothing', async () => {
    const id = taskId(text(await bash(client, { command: 'sleep 60', run_in_background: true })));
    for (const signal of ['SIGSEGV', '', 'SIGINT\u0000']) {
      const r = await call(client, 'task_kill', { task_id: id, signal });
      assert.equal(r.isError, true, signal);
      assert.match(text(r), /^unknown signal ".*": task_kill takes SIGINT, SIGTERM, /, signal);
    }
    const r = await call(client, 'task_kill', { task_id: id, signal: 2 });
    assert.equal(r.isError, true);
    assert.match(text(r), /"signal" must be a string/);
    assert.match(text(await call(client, 'task_output', { task_id: id })), /status: running/);
    await call(client, 'task_kill', { task_id: id });

    // finished, unread: its shell's pid gone, and a moment for the server to see it
    const dir = tempDir();
    const done = taskId(text(await bash(client, { command: `echo $$ > ${dir}/pid; exit 3`,
      run_in_background: true })));
    assert.deepEqual(await waitGone(await readPids(`${dir}/pid`, 1, 60000), 60000), []);
    await sleep(500);
    const k = await call(client, 'task_kill', { task_id: done, signal: 'SIGINT' });
    assert.equal(k.isError, true);
    assert.match(text(k), new RegExp(`^Task ${done}: no SIGINT was sent: it has finished`));
    const w = await call(client, 'task_write', { task_id: done, input: '\u0003' });
    assert.equal(w.isError, true);
    assert.match(text(w), /has finished/);
    // still there to be read
    assert.match(text(await call(client, 'task_output', { task_id: done })),
      /status: completed\nexit_code: 3\nstate: exited\n/);
    rmSync(dir, { recursive: true, force: true });
  });

  test('tools/list: task_kill has the signal argument', async () => {
    const { tools } = await client.listTools();
    const kill = tools.find((t) => t.name === 'task_kill');
    assert.deepEqual(kill.inputSchema.properties.signal.enum,
      ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGKILL', 'SIGUSR1', 'SIGUSR2', 'SIGSTOP', 'SIGCONT']);
    assert.ok(kill.outputSchema.properties.signal);
    assert.ok(kill.outputSchema.properties.interrupted);
    assert.match(tools.find((t) => t.name === 'task_write').description, /Ctrl\+C/);
  });
});

// The Tasks extension: an answer typed with tasks/update is typed as at a
// terminal, ^C an interrupt on a pipe.
const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const req = (id, method, params = {}) => ({
  jsonrpc: '2.0', id, method, params: { ...params, _meta: {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
  } },
});

test('tasks/update: a ^C answer interrupts the command waiting for input', { timeout: 120000 }, async () => {
  const s = startRaw(['--input-look-ms', '200']);
  const ask = async (msg) => { s.send(msg); const { json } = await s.next(30000); assert.equal(json.id, msg.id); return json.result; };
  const created = await ask(req(1, 'tools/call', { name: 'bash', arguments: {
    command: "trap 'echo got-INT; exit 130' INT; printf 'go? '; read a; echo \"read $a\"", yield_time_ms: 20000 } }));
  const id = created.taskId;
  let task;
  for (let i = 0; i < 200; i++) {
    task = await ask(req(`g${i}`, 'tasks/get', { taskId: id }));
    if (task.status === 'input_required') break;
    await sleep(100);
  }
  assert.equal(task.status, 'input_required', JSON.stringify(task));
  const [key] = Object.keys(task.inputRequests);
  await ask(req('u', 'tasks/update', { taskId: id, inputResponses: {
    [key]: { action: 'accept', content: { input: '\u0003', newline: false } } } }));
  for (let i = 0; i < 200; i++) {
    task = await ask(req(`h${i}`, 'tasks/get', { taskId: id }));
    if (task.status === 'completed') break;
    await sleep(100);
  }
  assert.equal(task.status, 'completed', JSON.stringify(task));
  const sc = task.result.structuredContent;
  assert.match(sc.stdout, /got-INT/);
  assert.doesNotMatch(sc.stdout, /read /);
  assert.equal(sc.exit_code, 130);
  assert.equal(sc.interrupted, true);
  s.child.stdin.end();
  await s.exited;
});
