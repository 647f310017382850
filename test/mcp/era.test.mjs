// The two eras of MCP in one shexec-mcp process, at the JSON-RPC level
// (no SDK): every error path of 2026-07-28 (a missing or malformed _meta
// envelope, a version of the other era or of none, methods the era removed),
// resultType on every result of it, requests of both eras mixed in one
// process in any order, and the Tasks extension's methods (tasks/get,
// tasks/update, tasks/cancel) with their errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { realpathSync, rmSync } from 'node:fs';
import { startRaw, tempDir, readPids, waitGone, sleep } from './util.mjs';

const MODERN = '2026-07-28';
const ALL = [MODERN, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const TASKS = 'io.modelcontextprotocol/tasks';

// The per-request envelope of the stateless era.
function meta(options = {}) {
  const caps = options.tasks ? { extensions: { [TASKS]: {} } } : {};
  return {
    'io.modelcontextprotocol/protocolVersion': options.version ?? MODERN,
    'io.modelcontextprotocol/clientCapabilities': options.caps ?? caps,
  };
}
const req = (id, method, params = {}, options) => ({
  jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...meta(options), ...(params._meta ?? {}) } },
});

// Every result of the stateless era: resultType and the server's info.
function modernResult(json, type = 'complete') {
  assert.ok(json.result, JSON.stringify(json));
  assert.equal(json.result.resultType, type);
  assert.equal(json.result._meta['io.modelcontextprotocol/serverInfo'].name, 'shexec-mcp');
  return json.result;
}

async function ask(s, msg) {
  s.send(msg);
  const { json } = await s.next(10000);
  assert.equal(json.id, msg.id);
  return json;
}

test('server/discover without initialize: versions, capabilities, cache hints', async () => {
  const s = startRaw();
  const r = modernResult(await ask(s, req(1, 'server/discover')));
  assert.deepEqual(r.supportedVersions, ALL);
  assert.deepEqual(r.capabilities, { tools: { listChanged: false }, extensions: { [TASKS]: {} } });
  assert.equal(typeof r.ttlMs, 'number');
  assert.equal(r.cacheScope, 'private');
  assert.match(r.instructions, /bash/);
  s.child.stdin.end();
  assert.deepEqual(await s.exited, { code: 0, sig: null });
});

test('a missing or malformed envelope is Invalid params; an unknown version -32022', async () => {
  const s = startRaw();
  // the methods only the stateless era has need the envelope
  for (const method of ['server/discover', 'tasks/get', 'tasks/update', 'tasks/cancel']) {
    const json = await ask(s, { jsonrpc: '2.0', id: method, method, params: { taskId: 'x' } });
    assert.equal(json.error.code, -32602, method);
    assert.match(json.error.message, /missing the required _meta envelope for protocol revision 2026-07-28/);
  }
  // the version must be a string; the capabilities an object
  let json = await ask(s, { jsonrpc: '2.0', id: 1, method: 'tools/list',
    params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 20260728 } } });
  assert.equal(json.error.code, -32602);
  assert.match(json.error.message, /protocolVersion must be a string/);
  json = await ask(s, { jsonrpc: '2.0', id: 2, method: 'tools/list',
    params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } } });
  assert.equal(json.error.code, -32602);
  assert.match(json.error.message, /clientCapabilities must be an object/);
  json = await ask(s, req(3, 'tools/list', {}, { caps: [] }));
  assert.equal(json.error.code, -32602);
  // a version of the initialize era, a future one, an odd one: -32022 with
  // the list of ours and the one asked for
  for (const version of ['2025-11-25', '2024-11-05', '2027-01-01', 'x\u0000y', 'é"\\']) {
    json = await ask(s, req(`v${version}`, 'tools/list', {}, { version }));
    assert.equal(json.error.code, -32022, version);
    assert.deepEqual(json.error.data, { supported: ALL, requested: version });
    assert.equal(json.error.message, `Unsupported protocol version: ${version}`);
  }
  s.child.stdin.end();
  assert.deepEqual(await s.exited, { code: 0, sig: null });
});

test('methods the stateless era removed are not found in it; initialize stays for its era', async () => {
  const s = startRaw();
  for (const method of ['ping', 'initialize', 'logging/setLevel']) {
    const json = await ask(s, req(method, method, { protocolVersion: '2025-11-25', capabilities: {},
      clientInfo: { name: 't', version: '0' } }));
    assert.equal(json.error.code, -32601, method);
  }
  // the same server still speaks the initialize era
  const init = await ask(s, { jsonrpc: '2.0', id: 9, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
  assert.equal(init.result.protocolVersion, '2025-11-25');
  assert.equal(init.result.resultType, undefined, 'no resultType in the initialize era');
  assert.deepEqual(init.result.capabilities, { tools: { listChanged: false } });
  const ping = await ask(s, { jsonrpc: '2.0', id: 10, method: 'ping' });
  assert.deepEqual(ping.result, {});
  s.child.stdin.end();
  assert.deepEqual(await s.exited, { code: 0, sig: null });
});

test('both eras in one process, in any order, each answered in its own form', async () => {
  const s = startRaw();
  // an initialize-era client of 2025-03-26 (no structured results) ...
  await ask(s, { jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
  // ... and stateless requests between its own: each keeps its form
  const modernList = modernResult(await ask(s, req(2, 'tools/list')));
  assert.ok(modernList.tools.every((t) => t.outputSchema), 'outputSchema in the stateless era');
  assert.equal(modernList.cacheScope, 'private');
  const legacyList = (await ask(s, { jsonrpc: '2.0', id: 3, method: 'tools/list' })).result;
  assert.ok(legacyList.tools.every((t) => !t.outputSchema), 'none for 2025-03-26');
  assert.equal(legacyList.ttlMs, undefined);
  assert.equal(legacyList.resultType, undefined);
  const modernCall = modernResult(await ask(s, req(4, 'tools/call',
    { name: 'bash', arguments: { command: 'echo hi' } })));
  assert.equal(modernCall.structuredContent.stdout, 'hi\n');
  assert.equal(modernCall.isError, false);
  const legacyCall = (await ask(s, { jsonrpc: '2.0', id: 5, method: 'tools/call',
    params: { name: 'bash', arguments: { command: 'echo hi' } } })).result;
  assert.equal(legacyCall.structuredContent, undefined);
  assert.equal(legacyCall.resultType, undefined);
  // a tool error and an error response of the stateless era
  const toolError = modernResult(await ask(s, req(6, 'tools/call',
    { name: 'bash', arguments: { nope: 1 } })));
  assert.equal(toolError.isError, true);
  const unknown = await ask(s, req(7, 'tools/call', { name: 'nope' }));
  assert.equal(unknown.error.code, -32602);
  s.child.stdin.end();
  assert.deepEqual(await s.exited, { code: 0, sig: null });
});

test('a stateless request after server/discover needs no initialize; progress works in it', async () => {
  const s = startRaw();
  modernResult(await ask(s, req(1, 'server/discover')));
  s.send(req(2, 'tools/call', { name: 'bash', arguments: { command: 'echo a; sleep 0.3; echo b' },
    _meta: { progressToken: 'p' } }));
  const progress = [];
  let result;
  for (;;) {
    const { json } = await s.next(10000);
    if (json.method === 'notifications/progress') progress.push(json.params);
    else { result = json; break; }
  }
  assert.equal(modernResult(result).structuredContent.stdout, 'a\nb\n');
  assert.ok(progress.length >= 1);
  assert.ok(progress.every((p) => p.progressToken === 'p'));
  assert.equal(progress.map((p) => p.message ?? '').join(''), 'a\nb\n');
  s.child.stdin.end();
  assert.deepEqual(await s.exited, { code: 0, sig: null });
});

test('cancellation by notifications/cancelled in the stateless era', async () => {
  const dir = realpathSync(tempDir());
  const s = startRaw();
  s.send(req(1, 'tools/call', { name: 'bash', arguments: { command: `sleep 60 & echo $! > ${dir}/pid; wait` } }));
  const pids = await readPids(`${dir}/pid`, 1);
  s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'test' } });
  assert.deepEqual(await waitGone(pids), []);
  // no answer for the cancelled call: the next message answers the next request
  assert.equal((await ask(s, req(2, 'tools/list'))).id, 2);
  s.child.stdin.end();
  await s.exited;
  rmSync(dir, { recursive: true, force: true });
});

test('the Tasks extension: only when declared; tasks/get, tasks/update, tasks/cancel', async () => {
  const dir = realpathSync(tempDir());
  const s = startRaw();
  // not declared: the tools' own background task
  let r = modernResult(await ask(s, req(1, 'tools/call',
    { name: 'bash', arguments: { command: 'echo x', run_in_background: true } })));
  assert.equal(r.structuredContent.status, 'running');
  // declared: a task of the extension
  const created = modernResult(await ask(s, req(2, 'tools/call',
    { name: 'bash', arguments: { command: `echo $$ > ${dir}/pid; trap 'sleep 1; exit 0' TERM; printf 'go? '; read a; echo "got $a"; sleep 60`, pty: true, run_in_background: true } },
    { tasks: true })), 'task');
  const id = created.taskId;
  assert.match(id, /^t[0-9a-f]{12}$/);
  assert.equal(created.status, 'working');
  assert.equal(created.ttlMs, null);
  assert.equal(created.pollIntervalMs, 500);
  assert.ok(!Number.isNaN(Date.parse(created.createdAt)));
  assert.equal(created.content, undefined);
  // it waits for input: input_required, with its input request
  let task;
  for (let i = 0; i < 100; i++) {
    task = modernResult(await ask(s, req(`g${i}`, 'tasks/get', { taskId: id }, { tasks: true })));
    if (task.status === 'input_required') break;
    await sleep(100);
  }
  assert.equal(task.status, 'input_required', JSON.stringify(task));
  const [key] = Object.keys(task.inputRequests);
  assert.equal(key, 'stdin-1');
  assert.equal(task.inputRequests[key].method, 'elicitation/create');
  assert.match(task.inputRequests[key].params.message, /Its prompt: go\? $/);
  assert.match(task.statusMessage, /status: running/);
  // the task tools leave it alone: it is the client's
  for (const tool of ['task_output', 'task_kill', 'task_write']) {
    r = modernResult(await ask(s, req(`tool-${tool}`, 'tools/call',
      { name: tool, arguments: { task_id: id } }, { tasks: true })));
    assert.equal(r.isError, true, tool);
    assert.match(r.content[0].text, /is an MCP task of the client/, tool);
  }
  // bad updates
  let json = await ask(s, req('u0', 'tasks/update', { taskId: id }, { tasks: true }));
  assert.equal(json.error.code, -32602);
  json = await ask(s, req('u1', 'tasks/update', { taskId: id, inputResponses: { [key]: { action: 'accept', content: { input: 7 } } } }, { tasks: true }));
  assert.equal(json.error.code, -32602);
  json = await ask(s, req('u2', 'tasks/update', { taskId: 'tffffffffffff', inputResponses: {} }, { tasks: true }));
  assert.equal(json.error.code, -32602);
  assert.match(json.error.message, /Task not found/);
  // an answer to a request that is not open changes nothing
  modernResult(await ask(s, req('u3', 'tasks/update', { taskId: id, inputResponses: { 'stdin-9': { action: 'accept', content: { input: 'no' } } } }, { tasks: true })));
  // the answer
  modernResult(await ask(s, req('u4', 'tasks/update', { taskId: id, inputResponses: { [key]: { action: 'accept', content: { input: 'yes' } } } }, { tasks: true })));
  for (let i = 0; i < 100; i++) {
    task = modernResult(await ask(s, req(`h${i}`, 'tasks/get', { taskId: id }, { tasks: true })));
    if (/got yes/.test(task.statusMessage)) break;
    await sleep(100);
  }
  assert.match(task.statusMessage, /got yes/);
  assert.equal(task.status, 'working');
  // cancel: acknowledged at once, cancelled from then on, the process ends
  const pids = await readPids(`${dir}/pid`, 1);
  modernResult(await ask(s, req('c1', 'tasks/cancel', { taskId: id }, { tasks: true })));
  task = modernResult(await ask(s, req('g-end', 'tasks/get', { taskId: id }, { tasks: true })));
  assert.equal(task.status, 'cancelled');
  assert.equal(task.result, undefined);
  // its TERM trap takes a second: meanwhile the status message says
  // cancelled too, never running, and asks for nothing
  assert.ok(task.statusMessage.startsWith('Cancelled: the command is being ended'), task.statusMessage);
  assert.match(task.statusMessage, /\nstatus: cancelled\n/);
  assert.match(task.statusMessage, /got yes/);
  assert.doesNotMatch(task.statusMessage, /running|waiting_for_input/);
  assert.equal(task.inputRequests, undefined);
  assert.deepEqual(await waitGone(pids), []);
  for (let i = 0; i < 100; i++) {
    task = modernResult(await ask(s, req(`e${i}`, 'tasks/get', { taskId: id }, { tasks: true })));
    if (task.statusMessage.startsWith('ended: ')) break;
    await sleep(100);
  }
  assert.equal(task.status, 'cancelled');
  assert.match(task.statusMessage, /^ended: (cancelled|killed)$/);
  // a finished task keeps its result
  const done = modernResult(await ask(s, req(3, 'tools/call',
    { name: 'bash', arguments: { command: 'echo fin; exit 3', run_in_background: true } }, { tasks: true })), 'task');
  for (let i = 0; i < 100; i++) {
    task = modernResult(await ask(s, req(`f${i}`, 'tasks/get', { taskId: done.taskId }, { tasks: true })));
    if (task.status === 'completed') break;
    await sleep(100);
  }
  assert.equal(task.status, 'completed');
  assert.equal(task.statusMessage, 'exited with code 3');
  assert.equal(task.result.resultType, 'complete');
  assert.equal(task.result.structuredContent.stdout, 'fin\n');
  assert.equal(task.result.structuredContent.exit_code, 3);
  assert.equal(task.result.isError, false);
  // cancelling a finished one changes nothing
  modernResult(await ask(s, req('c2', 'tasks/cancel', { taskId: done.taskId }, { tasks: true })));
  task = modernResult(await ask(s, req('f-again', 'tasks/get', { taskId: done.taskId }, { tasks: true })));
  assert.equal(task.status, 'completed');
  json = await ask(s, req('g-bad', 'tasks/get', { taskId: 42 }, { tasks: true }));
  assert.equal(json.error.code, -32602);
  s.child.stdin.end();
  assert.deepEqual(await s.exited, { code: 0, sig: null });
  rmSync(dir, { recursive: true, force: true });
});

test('a running MCP task is ended when the server exits', async () => {
  const dir = realpathSync(tempDir());
  const s = startRaw();
  modernResult(await ask(s, req(1, 'tools/call',
    { name: 'bash', arguments: { command: `sleep 60 & echo $! > ${dir}/pid; wait`, run_in_background: true } },
    { tasks: true })), 'task');
  const pids = await readPids(`${dir}/pid`, 1);
  s.child.stdin.end();
  assert.deepEqual(await s.exited, { code: 0, sig: null });
  assert.deepEqual(await waitGone(pids), []);
  rmSync(dir, { recursive: true, force: true });
});
