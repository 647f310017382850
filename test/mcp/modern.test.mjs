// shexec-mcp under MCP 2026-07-28 (stateless: server/discover, no
// initialize, the version and capabilities in every request's _meta), with
// the official dual-era client @modelcontextprotocol/client and the Tasks
// extension's client @modelcontextprotocol/ext-tasks (both pinned in
// package.json). The client probes with server/discover and must settle on
// the stateless era; tools/list carries outputSchema and cache hints; tool
// results carry structuredContent valid against it; progress and
// cancellation work; a background command, and a foreground one that
// yields, become MCP tasks driven by tasks/get, tasks/update and
// tasks/cancel; the seed scenarios behave as in the initialize era.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { realpathSync, rmSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { SERVER, text, tempDir, sleep, alive, waitGone, readPids } from './util.mjs';

const MODERN = '2026-07-28';
const dirs = [];
const clients = [];
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function scratch() {
  const d = realpathSync(tempDir());
  dirs.push(d);
  return d;
}

// The official client, negotiating the era itself (it probes with
// server/discover and falls back to initialize only when that fails).
async function connectModern(args = [], cwd) {
  const transport = new StdioClientTransport({ command: SERVER, args, cwd, stderr: 'pipe' });
  const client = new Client({ name: 'shexec-mcp-test', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

// A session of the Tasks extension over a connected client. The extension's
// client sends tools/call and tasks/* itself as raw JSON-RPC (the SDK's
// codecs do not know results of resultType "task"): this coordinator sends
// them on the client's own transport and routes their answers back.
function taskSession(client, transport, onInputRequest) {
  const pending = new Map();
  let seq = 0;
  const sdkOnMessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg && typeof msg.id === 'string' && pending.has(msg.id)) {
      const done = pending.get(msg.id);
      pending.delete(msg.id);
      done('error' in msg ? { kind: 'error', error: msg.error } : { kind: 'result', result: msg.result });
      return;
    }
    sdkOnMessage(msg, extra);
  };
  const sent = [];
  const rawDispatch = (request) => new Promise((resolve) => {
    const id = `raw-${++seq}`;
    pending.set(id, resolve);
    const { jsonrpc: _v, id: _i, ...rest } = request;
    sent.push(rest.method);
    transport.send({ jsonrpc: '2.0', id, ...rest });
  });
  const session = createTaskSessionFromClient(client, {
    endpointId: 'shexec-mcp',
    rawDispatch,
    v2RequestFraming: {
      protocolVersion: MODERN,
      clientInfo: { name: 'shexec-mcp-test', version: '1.0.0' },
      clientCapabilities: {},
    },
    onInputRequest,
  });
  return { session, sent };
}

const field = (t, key) => (t.match(new RegExp(`(?:^|\\n)${key}: ([^\\n]*)\\n`)) || [])[1];

describe('MCP 2026-07-28 with @modelcontextprotocol/client', () => {
  let client, transport, validators;
  before(async () => {
    ({ client, transport } = await connectModern());
  });

  test('the client settles on the stateless era through server/discover', () => {
    assert.equal(client.getProtocolEra(), 'modern');
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    const discover = client.getDiscoverResult();
    assert.ok(discover.supportedVersions.includes(MODERN));
    for (const v of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'])
      assert.ok(discover.supportedVersions.includes(v), v);
    assert.deepEqual(client.getServerCapabilities().extensions, { 'io.modelcontextprotocol/tasks': {} });
    assert.equal(client.getServerVersion().name, 'shexec-mcp');
    assert.match(discover.instructions, /bash/);
  });

  test('tools/list: every tool with an outputSchema, and cache hints', async () => {
    const list = await client.listTools();
    assert.deepEqual(list.tools.map((t) => t.name).sort(), ['bash', 'task_kill', 'task_output', 'task_write']);
    assert.equal(typeof list.ttlMs, 'number');
    assert.ok(list.ttlMs > 0);
    assert.equal(list.cacheScope, 'private');
    const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
    validators = {};
    for (const t of list.tools) {
      assert.equal(t.outputSchema.type, 'object', t.name);
      validators[t.name] = ajv.compile(t.outputSchema);
    }
  });

  // The result of a call, its structuredContent checked against the tool's
  // outputSchema and against what the text says.
  async function call(args, options) {
    const r = await client.callTool({ name: 'bash', arguments: args }, options);
    assert.equal(typeof r.structuredContent, 'object', JSON.stringify(r));
    assert.ok(validators.bash(r.structuredContent), JSON.stringify(validators.bash.errors));
    const t = text(r);
    if ('exit_code' in r.structuredContent && !r.structuredContent.timed_out)
      assert.equal(field(t, 'exit_code'), String(r.structuredContent.exit_code));
    return r;
  }

  test('seed scenarios: echo, exit 42, stderr', async () => {
    let r = await call({ command: 'echo hello' });
    assert.equal(r.structuredContent.stdout, 'hello\n');
    assert.equal(r.structuredContent.exit_code, 0);
    assert.equal(r.isError, false);
    r = await call({ command: 'exit 42' });
    assert.equal(r.structuredContent.exit_code, 42);
    assert.equal(r.isError, false, 'an exit code is data');
    r = await call({ command: 'echo oops >&2' });
    assert.equal(r.structuredContent.stderr, 'oops\n');
    assert.equal(r.structuredContent.stdout, '');
  });

  test('seed scenario: cd persists from one call to the next', async () => {
    const d = scratch();
    let r = await call({ command: `cd ${d}` });
    assert.equal(r.structuredContent.cwd, d);
    r = await call({ command: 'pwd' });
    assert.equal(r.structuredContent.stdout, d + '\n');
  });

  test('seed scenario: a timeout keeps the output so far and ends the processes', async () => {
    const d = scratch();
    const start = Date.now();
    const r = await call({ command: `echo partial; sleep 30 & echo $! > ${d}/pid; wait`, timeout: 1000 });
    assert.ok(Date.now() - start < 10000);
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.timed_out, true);
    assert.equal(r.structuredContent.stdout, 'partial\n');
    const pids = await readPids(`${d}/pid`, 1);
    assert.deepEqual(await waitGone(pids), []);
  });

  test('seed scenario: output past 30000 characters is truncated with counts', async () => {
    const r = await call({ command: "head -c 50000 /dev/zero | tr '\\0' a" });
    assert.equal(r.structuredContent.truncated.stdout, true);
    assert.deepEqual(r.structuredContent.omitted.stdout, { characters: 20000, bytes: 20000 });
    assert.match(text(r), /\[output truncated: kept the first 30000 characters \(30000 bytes\) of 50000/);
  });

  test('progress notifications stream a command\'s output', async () => {
    const seen = [];
    const r = await call({ command: 'for i in 1 2 3; do echo line$i; sleep 0.2; done' },
      { onprogress: (p) => seen.push(p) });
    assert.equal(r.structuredContent.stdout, 'line1\nline2\nline3\n');
    const streamed = seen.map((p) => p.message ?? '').join('');
    assert.equal(streamed, 'line1\nline2\nline3\n');
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress);
  });

  test('cancelling a call ends its command', async () => {
    const d = scratch();
    const ac = new AbortController();
    const p = client.callTool({ name: 'bash', arguments: { command: `sleep 30 & echo $! > ${d}/pid; wait` } },
      { signal: ac.signal });
    const pids = await readPids(`${d}/pid`, 1);
    ac.abort();
    await assert.rejects(p);
    assert.deepEqual(await waitGone(pids), []);
    // the server goes on serving
    assert.equal((await call({ command: 'echo after' })).structuredContent.stdout, 'after\n');
  });

  test('without the Tasks extension a background command is a task of the task tools', async () => {
    const r = await call({ command: 'echo bg', run_in_background: true });
    const id = r.structuredContent.task_id;
    assert.match(id, /^t[0-9a-f]{12}$/);
    let out;
    for (let i = 0; i < 50; i++) {
      out = await client.callTool({ name: 'task_output', arguments: { task_id: id, yield_time_ms: 2000 } });
      if (out.structuredContent.status === 'completed') break;
    }
    assert.ok(validators.task_output(out.structuredContent));
    assert.equal(out.structuredContent.stdout, 'bg\n');
  });
});

describe('the Tasks extension with @modelcontextprotocol/ext-tasks', () => {
  let client, transport, session, sent;
  const inputs = [];
  before(async () => {
    ({ client, transport } = await connectModern());
    ({ session, sent } = taskSession(client, transport, async (request) => {
      inputs.push(request);
      return { action: 'accept', content: { input: 'world' } };
    }));
  });
  after(async () => { await session.close?.(); });

  test('a background command is a task: working, then completed with its result', async () => {
    // running for 1.5 s: polled every 500 ms, it is seen running however late a poll comes
    const ex = await session.callTool('bash', { command: 'echo start; sleep 1.5; echo done', run_in_background: true });
    assert.equal(ex.kind, 'task');
    assert.match(ex.handle.taskId, /^t[0-9a-f]{12}$/);
    const statuses = [];
    const { outcome, lastTask } = await ex.settle({ onEvent: (e) => e.type === 'task' && statuses.push(e.task) });
    assert.ok(statuses.some((t) => t.status === 'working'), JSON.stringify(statuses));
    // while it ran, the status message held its output so far
    const working = statuses.filter((t) => t.status === 'working' && t.statusMessage);
    assert.ok(working.length > 0);
    assert.match(working[0].statusMessage, /status: running/);
    assert.equal(lastTask.status, 'completed');
    assert.equal(lastTask.suggestedPollIntervalMs, 500);
    const result = resultFromTaskOutcome(outcome);
    assert.equal(result.isError, false);
    assert.equal(result.structuredContent.stdout, 'start\ndone\n');
    assert.equal(result.structuredContent.exit_code, 0);
    assert.match(text(result), /exit_code: 0\n/);
    assert.ok(sent.includes('tasks/get'));
  });

  test('a command waiting for input is input_required; tasks/update types the answer', async () => {
    const ex = await session.callTool('bash', {
      command: 'printf "Name? "; read n; echo "hello $n"; read m; echo "then $m"',
      yield_time_ms: 20000,
    });
    // the call yields when the command waits for input: it goes on as a task
    assert.equal(ex.kind, 'task');
    inputs.length = 0;
    const { outcome } = await ex.settle();
    const result = resultFromTaskOutcome(outcome);
    assert.equal(result.structuredContent.stdout, 'Name? hello world\nthen world\n');
    // two waits, two input requests (each under its own key), each an
    // elicitation form with the prompt
    assert.equal(inputs.length, 2);
    assert.equal(inputs[0].kind, 'elicitation');
    assert.match(inputs[0].params.message, /waits for input\. Its prompt: Name\? $/);
    assert.equal(inputs[0].params.requestedSchema.properties.input.type, 'string');
    assert.ok(sent.includes('tasks/update'));
  });

  // MCP 2026-07-28 forbids a form for a password: a prompt that asks for
  // one is input_required with no input request, and its status message
  // says what the command asks for; the client is asked nothing, and
  // nothing is typed at the prompt. Such a prompt is known by its text
  // (sudo or ssh turn off only an echo the tool's terminal never had) or
  // by the terminal the library finds changed (read -s clears ECHOK,
  // getpass() turns off signals too).
  async function askedNothing(command, prompt) {
    const before = sent.length;
    const ex = await session.callTool('bash', { command, pty: true, yield_time_ms: 20000 });
    assert.equal(ex.kind, 'task');
    inputs.length = 0;
    let waiting;
    const { outcome } = await ex.settle({
      onEvent: (e) => {
        // tasks/get's answer (the call's, that made the task, has no inputRequests)
        if (e.type !== 'task' || e.task.status !== 'input_required' || !e.task.raw.inputRequests ||
            waiting) return;
        waiting = e.task;
        ex.cancel().catch(() => {});
      },
    });
    assert.ok(waiting, 'the task was seen waiting for input');
    assert.deepEqual(waiting.raw.inputRequests, {});
    assert.ok(waiting.statusMessage.startsWith(
      `The command waits for a password or another secret at its prompt "${prompt}". `),
      waiting.statusMessage);
    assert.ok(waiting.statusMessage.includes(`\nprompt: "${prompt}"\n`), waiting.statusMessage);
    assert.equal(inputs.length, 0, JSON.stringify(inputs));
    assert.ok(!sent.slice(before).includes('tasks/update'));
    assert.equal(outcome.status, 'cancelled');
  }

  test('a password prompt is input_required without a form: the client is asked nothing', async () => {
    await askedNothing(`read -s -p 'Password: ' p; echo "got \${#p}"`, 'Password: ');
  });

  test('so is a prompt the terminal shows a password reader at', async () => {
    await askedNothing(`stty -isig; read -s -p 'Enter it: ' p; echo "got \${#p}"`, 'Enter it: ');
  });

  test('tasks/cancel ends the command and its processes', async () => {
    const d = scratch();
    const ex = await session.callTool('bash', {
      command: `sleep 60 & echo $! > ${d}/pid; wait`, run_in_background: true,
    });
    assert.equal(ex.kind, 'task');
    const pids = await readPids(`${d}/pid`, 1);
    assert.ok(alive(pids[0]));
    await ex.cancel();
    const { outcome } = await ex.settle();
    assert.equal(outcome.status, 'cancelled');
    assert.ok(sent.includes('tasks/cancel'));
    assert.deepEqual(await waitGone(pids), []);
  });

  test('seed scenario: the task limit; a full table is an error the model can act on', async () => {
    const started = [];
    for (let i = 0; i < 10; i++) {
      const ex = await session.callTool('bash', { command: 'sleep 60', run_in_background: true });
      assert.equal(ex.kind, 'task', `task ${i}`);
      started.push(ex);
    }
    const over = await session.callTool('bash', { command: 'sleep 60', run_in_background: true });
    assert.equal(over.kind, 'immediate');
    const r = resultFromTaskOutcome((await over.settle()).outcome);
    assert.equal(r.isError, true);
    assert.match(text(r), /to make room/);
    for (const ex of started) await ex.cancel();
    for (const ex of started) assert.equal((await ex.settle()).outcome.status, 'cancelled');
    // once they ended, there is room again
    await sleep(200);
    const again = await session.callTool('bash', { command: 'echo room', run_in_background: true });
    assert.equal(again.kind, 'task');
    assert.equal(resultFromTaskOutcome((await again.settle()).outcome).structuredContent.stdout, 'room\n');
  });

  test('a foreground command that finishes in time is answered at once, not as a task', async () => {
    const ex = await session.callTool('bash', { command: 'echo quick' });
    assert.equal(ex.kind, 'immediate');
    const r = resultFromTaskOutcome((await ex.settle()).outcome);
    assert.equal(r.structuredContent.stdout, 'quick\n');
  });
});
