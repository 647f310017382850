// shexec-mcp at the JSON-RPC level, without the SDK: version negotiation,
// id and progress-token echo, error codes, framing, stdin EOF.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { SERVER, sleep, startRaw as start } from './util.mjs';

const init = (id, version) => ({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '0' } },
});

test('protocol version negotiation', async () => {
  for (const [asked, answered] of [
    ['2025-11-25', '2025-11-25'], ['2025-06-18', '2025-06-18'], ['2025-03-26', '2025-03-26'],
    ['2024-11-05', '2024-11-05'], ['1999-01-01', '2025-11-25'], [7, '2025-11-25'],
    // a version with a NUL inside is no version we know, whatever precedes the NUL
    ['2025-06-18\u0000junk', '2025-11-25'],
  ]) {
    const s = start();
    s.send(init(1, asked));
    const { json } = await s.next();
    assert.equal(json.result.protocolVersion, answered, String(asked));
    assert.deepEqual(json.result.capabilities, { tools: { listChanged: false } });
    assert.equal(json.result.serverInfo.name, 'shexec-mcp');
    s.child.stdin.end();
    assert.deepEqual(await s.exited, { code: 0, sig: null });
  }
});

test('ids echoed as the same value: 0, strings, large and negative numbers', async () => {
  const s = start();
  s.send(init(0, '2025-06-18'));
  assert.match((await s.next()).line, /^\{"jsonrpc":"2\.0","id":0,"result":/);
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  // numbers byte for byte (9007199254740993 is no double), strings as the
  // same string: an escape may be written anew (\u00e9 as the character)
  for (const [raw, echoed] of [['"abc"', '"abc"'], ['"with \\"quote\\" and \\u00e9"', '"with \\"quote\\" and \u00e9"'],
    ['9007199254740993', '9007199254740993'], ['-5', '-5'], ['1.50', '1.50'], ['""', '""']]) {
    s.send(`{"jsonrpc":"2.0","id":${raw},"method":"ping"}`);
    const { line } = await s.next();
    assert.equal(line, `{"jsonrpc":"2.0","id":${echoed},"result":{}}`);
  }
  s.child.stdin.end();
  await s.exited;
});

test('error codes: -32601, -32602, -32700 with id null, -32600', async () => {
  const s = start();
  s.send(init(1, '2025-06-18'));
  await s.next();
  s.send({ jsonrpc: '2.0', id: 2, method: 'prompts/list' });
  let { json } = await s.next();
  assert.equal(json.id, 2);
  assert.equal(json.error.code, -32601);
  s.send({ jsonrpc: '2.0', id: 3, method: 'resources/list' });
  assert.equal((await s.next()).json.error.code, -32601);
  s.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'nope', arguments: {} } });
  json = (await s.next()).json;
  assert.equal(json.error.code, -32602);
  assert.match(json.error.message, /Unknown tool: nope/);
  s.send('{"jsonrpc":"2.0","id":5,"method":"ping"');
  json = (await s.next()).json;
  assert.equal(json.id, null);
  assert.equal(json.error.code, -32700);
  s.send('not json at all');
  assert.equal((await s.next()).json.error.code, -32700);
  s.send(Buffer.from([0x22, 0xff, 0x22])); // invalid UTF-8
  assert.equal((await s.next()).json.error.code, -32700);
  s.send({ jsonrpc: '1.0', id: 6, method: 'ping' });
  json = (await s.next()).json;
  assert.equal(json.error.code, -32600);
  assert.equal(json.id, 6);
  s.send([{ jsonrpc: '2.0', id: 7, method: 'ping' }]);
  assert.equal((await s.next()).json.error.code, -32600);
  // notifications (unknown ones too) and responses get no answer
  s.send({ jsonrpc: '2.0', method: 'notifications/whatever' });
  s.send({ jsonrpc: '2.0', id: 99, result: {} });
  s.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
  assert.deepEqual((await s.next()).json, { jsonrpc: '2.0', id: 8, result: {} });
  // arguments that are not an object: a tool error
  s.send({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'bash', arguments: [1] } });
  json = (await s.next()).json;
  assert.equal(json.result.isError, true);
  assert.match(json.result.content[0].text, /arguments must be a JSON object/);
  s.child.stdin.end();
  assert.equal((await s.exited).code, 0);
  assert.equal(s.stderr(), '', 'nothing logged for client mistakes');
});

test('progress tokens echoed exactly (string and 0); progress never after the result', async () => {
  const s = start();
  s.send(init(1, '2025-06-18'));
  await s.next();
  for (const token of ['"tok-1"', '0']) {
    s.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"bash",` +
      `"arguments":{"command":"echo a; sleep 0.3; echo b"},"_meta":{"progressToken":${token}}}}`);
    const msgs = [];
    for (;;) {
      const m = await s.next();
      msgs.push(m);
      if (m.json.id === 10) break;
    }
    const progress = msgs.slice(0, -1);
    assert.ok(progress.length >= 2);
    for (const p of progress) {
      assert.equal(p.json.method, 'notifications/progress');
      assert.ok(p.line.includes(`"progressToken":${token},`), p.line);
    }
    assert.equal(progress.map((p) => p.json.params.message || '').join(''), 'a\nb\n');
    await sleep(200);
    assert.equal(s.pending(), 0, 'nothing after the result');
  }
  s.child.stdin.end();
  await s.exited;
});

test('cancelled: the command stops and no response is sent', async () => {
  const s = start();
  s.send(init(1, '2025-06-18'));
  await s.next();
  s.send({ jsonrpc: '2.0', id: 'long', method: 'tools/call',
    params: { name: 'bash', arguments: { command: 'echo $$; sleep 300' }, _meta: { progressToken: 1 } } });
  const p = await s.next();
  const shellPid = Number(p.json.params.message.trim());
  s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long', reason: 'test' } });
  const end = Date.now() + 3000;
  let gone = false;
  while (!gone && Date.now() < end) {
    await sleep(50);
    try { process.kill(shellPid, 0); } catch { gone = true; }
  }
  assert.ok(gone, 'the command was stopped');
  s.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
  assert.equal((await s.next()).json.id, 'after', 'no response for the cancelled call');
  s.child.stdin.end();
  await s.exited;
});

test('stdin EOF stops running commands and exits 0; SIGTERM too', async () => {
  for (const how of ['eof', 'sigterm']) {
    const s = start();
    s.send(init(1, '2025-06-18'));
    await s.next();
    s.send({ jsonrpc: '2.0', id: 2, method: 'tools/call',
      params: { name: 'bash', arguments: { command: 'echo $$; sleep 300' }, _meta: { progressToken: 'x' } } });
    const pid = Number((await s.next()).json.params.message.trim());
    const t0 = Date.now();
    if (how === 'eof') s.child.stdin.end();
    else s.child.kill('SIGTERM');
    const { code } = await s.exited;
    assert.equal(code, 0);
    assert.ok(Date.now() - t0 < 3000);
    assert.throws(() => process.kill(pid, 0), /ESRCH/, how);
  }
});

test('flags: --help, --version, bad flags, bad --workdir', async () => {
  const run = (args) => new Promise((resolve) => {
    const c = spawn(SERVER, args);
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => { out += d; });
    c.stderr.on('data', (d) => { err += d; });
    c.on('exit', (code) => resolve({ code, out, err }));
  });
  let r = await run(['--help']);
  assert.equal(r.code, 0);
  for (const f of ['--workdir', '--timeout', '--no-bash', '--disable-tools', '--background-task-timeout',
    '--error-on-nonzero-exit', '--wrapper-kind', '--idle-timeout', '--background-on-timeout',
    '--input-look-ms', '--leftovers-drain-ms', '--agent-env', '-- PROGRAM'])
    assert.ok(r.out.includes(f), f);
  r = await run(['--version']);
  assert.match(r.out, /^shexec-mcp \d+\.\d+\.\d+\n$/);
  for (const bad of [['--bogus'], ['--timeout', 'abc'], ['--timeout', '0'], ['--timeout', '601'],
    ['--workdir', '/no/such/dir'], ['--disable-tools', 'nosuchtool'], ['--workdir'],
    ['--wrapper-kind', 'pigeon'], ['--'], ['--', 'no-such-program-shexec'],
    ['--idle-timeout', 'x'], ['--idle-timeout', '5:later'], ['--idle-timeout', ':yield'],
    ['--background-on-timeout', '-1'], ['--input-look-ms', '1.5'], ['--leftovers-drain-ms', '2001']]) {
    r = await run(bad);
    assert.equal(r.code, 2, bad.join(' '));
    assert.match(r.err, /shexec-mcp: /);
  }
});

test('--background-task-timeout limits background commands', async () => {
  const s = start(['--background-task-timeout', '1']);
  s.send(init(1, '2025-06-18'));
  await s.next();
  s.send({ jsonrpc: '2.0', id: 2, method: 'tools/call',
    params: { name: 'bash', arguments: { command: 'sleep 30', run_in_background: true } } });
  const id = (await s.next()).json.result.content[0].text.match(/task_id: (\S+)/)[1];
  await sleep(1800);
  s.send({ jsonrpc: '2.0', id: 3, method: 'tools/call',
    params: { name: 'task_output', arguments: { task_id: id } } });
  const t = (await s.next()).json.result.content[0].text;
  assert.match(t, /status: completed/);
  assert.match(t, /state: timed_out/);
  s.child.stdin.end();
  await s.exited;
});

// A background task that ignores SIGTERM, started and seen running (its
// trap is set before it prints its pid); returns its id and shell pid.
async function termIgnoringTask(s, reqId) {
  s.send({ jsonrpc: '2.0', id: reqId, method: 'tools/call', params: { name: 'bash',
    arguments: { command: "trap '' TERM; echo $$; sleep 300", run_in_background: true } } });
  const id = (await s.next()).json.result.content[0].text.match(/task_id: (\S+)/)[1];
  for (let i = 0; ; i++) {
    s.send({ jsonrpc: '2.0', id: `${reqId}-o${i}`, method: 'tools/call',
      params: { name: 'task_output', arguments: { task_id: id } } });
    const m = (await s.next()).json.result.content[0].text.match(/stdout:\n(\d+)\n/);
    if (m) return { id, pid: Number(m[1]) };
    assert.ok(i < 200, 'the task printed its pid');
    await sleep(25);
  }
}

test('task_kill waits for the task without blocking the server: ping and task_output answered meanwhile', async () => {
  const s = start();
  s.send(init(1, '2025-06-18'));
  await s.next();
  const { id, pid } = await termIgnoringTask(s, 2);
  const kill = (rid) => ({ jsonrpc: '2.0', id: rid, method: 'tools/call',
    params: { name: 'task_kill', arguments: { task_id: id } } });
  // SIGTERM is ignored: the task ends at SIGKILL, after the grace period
  s.send(kill('k1'));
  s.send(kill('k2')); // the same task twice: both are answered
  s.send({ jsonrpc: '2.0', id: 'p', method: 'ping' });
  s.send({ jsonrpc: '2.0', id: 'o', method: 'tools/call',
    params: { name: 'task_output', arguments: { task_id: id } } });
  // (a server that blocked in the kill would answer k1 first, after the grace)
  assert.deepEqual((await s.next(15000)).json, { jsonrpc: '2.0', id: 'p', result: {} },
    'the ping is answered while the kill waits out the grace');
  const out = (await s.next()).json;
  assert.equal(out.id, 'o');
  assert.match(out.result.content[0].text, /^task_id: \S+\nstatus: running\n/);
  const answers = [(await s.next(15000)).json, (await s.next(15000)).json];
  assert.deepEqual(answers.map((a) => a.id).sort(), ['k1', 'k2']);
  for (const a of answers) {
    assert.equal(a.result.isError, false);
    assert.match(a.result.content[0].text,
      // SIGTERM ignored: the SIGKILL after the grace ended it
      new RegExp(`^task_id: ${id}\nstatus: killed\nexit_code: -1\nstate: killed\nsignal: 9 \\(SIGKILL\\)\nstdout:\n${pid}\n`));
  }
  assert.throws(() => process.kill(pid, 0), /ESRCH/);
  // reported killed: the task is gone
  s.send({ jsonrpc: '2.0', id: 'gone', method: 'tools/call',
    params: { name: 'task_output', arguments: { task_id: id } } });
  const gone = (await s.next()).json;
  assert.equal(gone.result.isError, true);
  assert.match(gone.result.content[0].text, new RegExp(`Task not found: ${id}`));
  await sleep(200);
  assert.equal(s.pending(), 0, 'one answer per request');
  s.child.stdin.end();
  assert.equal((await s.exited).code, 0);
  assert.equal(s.stderr(), '');
});

test('stdin EOF while a task_kill waits: the server exits 0 and the task is gone', async () => {
  const s = start();
  s.send(init(1, '2025-06-18'));
  await s.next();
  const { id, pid } = await termIgnoringTask(s, 2);
  s.send({ jsonrpc: '2.0', id: 3, method: 'tools/call',
    params: { name: 'task_kill', arguments: { task_id: id } } });
  s.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
  assert.equal((await s.next(15000)).json.id, 4, 'the kill is pending');
  s.child.stdin.end();
  assert.deepEqual(await s.exited, { code: 0, sig: null });
  assert.throws(() => process.kill(pid, 0), /ESRCH/);
  assert.equal(s.pending(), 0, 'a call cut short by EOF is not answered');
});

// Each bad message gets exactly one answer: the ping sent right after it must
// be the very next message, and nothing may follow.
async function expectOneAnswer(s, raw, check, pingId) {
  s.send(raw);
  s.send({ jsonrpc: '2.0', id: pingId, method: 'ping' });
  const first = (await s.next()).json;
  check(first, raw);
  const second = (await s.next()).json;
  assert.deepEqual(second, { jsonrpc: '2.0', id: pingId, result: {} }, 'one answer for ' + raw);
}

const invalidRequest = (id) => (json, raw) => {
  assert.equal(json.error?.code, -32600, raw + ' -> ' + JSON.stringify(json));
  assert.equal(json.id, id, raw);
};

test('a NUL in method or jsonrpc is an Invalid Request, never a match of the part before it', async () => {
  const s = start();
  s.send(init(1, '2025-06-18'));
  await s.next();
  let n = 0;
  for (const [raw, id] of [
    ['{"jsonrpc":"2.0","id":2,"method":"tools/list\\u0000junk"}', 2],
    ['{"jsonrpc":"2.0","id":3,"method":"ping\\u0000"}', 3],
    ['{"jsonrpc":"2.0","id":4,"method":"\\u0000"}', 4],
    ['{"jsonrpc":"2.0\\u0000","id":5,"method":"ping"}', 5],
    ['{"jsonrpc":"2.0\\u0000x","id":6,"method":"ping"}', 6],
    // a notification too: an invalid Request object is answered with id null
    ['{"jsonrpc":"2.0","method":"notifications/cancelled\\u0000","params":{"requestId":1}}', null],
    ['{"jsonrpc":"2.0","id":7,"method":"tools/call\\u0000","params":{"name":"bash",' +
      '"arguments":{"command":"echo ran"}}}', 7],
  ]) await expectOneAnswer(s, raw, invalidRequest(id), 'p' + n++);
  await sleep(200);
  assert.equal(s.pending(), 0, 'nothing else was sent');
  s.child.stdin.end();
  assert.equal((await s.exited).code, 0);
  assert.equal(s.stderr(), '');
});

test('a key given twice in the message is an Invalid Request (one answer, no side effect)', async () => {
  const s = start();
  s.send(init(1, '2025-06-18'));
  await s.next();
  const call = (cmd) => `{"name":"bash","arguments":{"command":"${cmd}"}}`;
  let n = 0;
  for (const [raw, id] of [
    [`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":${call('echo a')},"params":${call('echo b')}}`, 2],
    ['{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}', null],
    ['{"jsonrpc":"2.0","id":5,"id":5,"method":"ping"}', null],
    ['{"jsonrpc":"2.0","id":6,"method":"ping","method":"tools/list"}', 6],
    ['{"jsonrpc":"2.0","id":7,"method":"tools/list","method":"tools/list"}', 7],
    ['{"jsonrpc":"2.0","jsonrpc":"2.0","id":8,"method":"ping"}', 8],
    ['{"jsonrpc":"2.0","method":"notifications/initialized","method":"ping"}', null],
    // a key that differs from "id" only after a NUL is another key, not a repeat
  ]) await expectOneAnswer(s, raw, invalidRequest(id), 'p' + n++);
  await expectOneAnswer(s, '{"jsonrpc":"2.0","id":9,"id\\u0000":10,"method":"ping"}',
    (json) => assert.deepEqual(json, { jsonrpc: '2.0', id: 9, result: {} }), 'p' + n++);
  await sleep(200);
  assert.equal(s.pending(), 0, 'nothing else was sent');
  s.child.stdin.end();
  assert.equal((await s.exited).code, 0);
  assert.equal(s.stderr(), '');
});

test('a key given twice inside params is Invalid params; inside arguments a tool error', async () => {
  const s = start();
  s.send(init(1, '2025-06-18'));
  await s.next();
  const invalidParams = (id, what) => (json, raw) => {
    assert.equal(json.error?.code, -32602, raw + ' -> ' + JSON.stringify(json));
    assert.equal(json.id, id, raw);
    assert.match(json.error.message, what, raw);
  };
  const toolError = (id, what) => (json, raw) => {
    assert.equal(json.id, id, raw);
    assert.equal(json.result?.isError, true, raw + ' -> ' + JSON.stringify(json));
    assert.match(json.result.content[0].text, what, raw);
  };
  const req = (id, method, params) => `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`;
  let n = 0;
  for (const [raw, check] of [
    [req(2, 'tools/call', '{"name":"task_kill","name":"bash","arguments":{"command":"echo x"}}'),
      invalidParams(2, /"name" given twice/)],
    [req(3, 'tools/call', '{"name":"bash","arguments":{"command":"echo a"},"arguments":{"command":"echo b"}}'),
      invalidParams(3, /"arguments" given twice/)],
    [req(4, 'tools/call', '{"name":"bash","arguments":{"command":"echo a"},' +
      '"_meta":{"progressToken":1,"progressToken":2}}'), invalidParams(4, /"progressToken" given twice/)],
    [req(5, 'initialize', '{"protocolVersion":"2025-06-18","protocolVersion":"2024-11-05",' +
      '"capabilities":{},"clientInfo":{"name":"t","version":"0"}}'), invalidParams(5, /"protocolVersion" given twice/)],
    [req(6, 'initialize', '{"protocolVersion":"2025-06-18","capabilities":{"x":{"a":1,"a":2}},' +
      '"clientInfo":{"name":"t","version":"0"}}'), invalidParams(6, /"a" given twice/)],
    [req(7, 'ping', '{"_meta":{},"_meta":{}}'), invalidParams(7, /"_meta" given twice/)],
    // the tool's own input: bad arguments are tool errors, as always (bash's
    // are checked by the library, which names the key and where it repeats)
    [req(8, 'tools/call', '{"name":"bash","arguments":{"command":"echo a","command":"echo b"}}'),
      toolError(8, /duplicate key "command"/)],
    [req(9, 'tools/call', '{"name":"bash","arguments":{"command":"echo $A","env":{"A":"1","A":"2"}}}'),
      toolError(9, /duplicate key "A"/)],
    [req(10, 'tools/call', '{"name":"task_output","arguments":{"task_id":"t1","task_id":"t2"}}'),
      toolError(10, /twice|duplicate/i)],
    // NUL inside params: the tool name, an argument name, a task id
    [req(11, 'tools/call', '{"name":"bash\\u0000junk","arguments":{"command":"echo ran"}}'),
      invalidParams(11, /Unknown tool: bash\u0000junk/)],
    [req(12, 'tools/call', '{"name":"bash","arguments":{"command":"echo ran","command\\u0000x":1}}'),
      toolError(12, /unknown argument "command\u0000x"/)],
    [req(13, 'tools/call', '{"name":"task_output","arguments":{"task_id":"t1\\u0000x"}}'),
      toolError(13, /NUL/)],
  ]) await expectOneAnswer(s, raw, check, 'p' + n++);
  // a cancellation naming requestId twice is ignored: the call it might mean runs on
  s.send(req(20, 'tools/call', '{"name":"bash","arguments":{"command":"sleep 0.5; echo done"}}'));
  await sleep(100);
  s.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"other","requestId":20}}');
  const done = (await s.next()).json;
  assert.equal(done.id, 20);
  assert.match(done.result.content[0].text, /^stdout:\ndone\n/);
  await expectOneAnswer(s, '{"jsonrpc":"2.0","id":21,"method":"ping"}',
    (json) => assert.deepEqual(json.result, {}), 'last');
  await sleep(200);
  assert.equal(s.pending(), 0, 'nothing else was sent');
  s.child.stdin.end();
  assert.equal((await s.exited).code, 0);
  assert.equal(s.stderr(), '');
});

// Two bytes of `[0,0,...]` are a value: with only the line's 32 MiB to
// bound them, the values of one line took some 2 GiB. Its peak memory
// (VmHWM, read while it still runs) stays within a small multiple of the
// line, the line is answered once, and the server serves the next one.
test('a 32 MiB line of small values: one error, memory bounded by the line', async () => {
  const s = start();
  s.send(init(1, '2025-06-18'));
  await s.next();
  const n = (32 << 20) - 63; // within the line limit, so that it is parsed
  const line = Buffer.alloc(n, ',0');
  line[0] = 0x5b; // [0,0,...,0]
  line[n - 1] = 0x5d;
  s.send(line);
  const err = (await s.next(60000)).json;
  assert.equal(err.id, null);
  assert.ok([-32700, -32600].includes(err.error.code), JSON.stringify(err));
  const status = readFileSync(`/proc/${s.child.pid}/status`, 'utf8');
  const peak = Number(status.match(/\nVmHWM:\s+(\d+) kB/)[1]) * 1024;
  assert.ok(peak < 8 * n + (64 << 20), `peak ${peak >> 20} MiB for a line of ${n >> 20} MiB`);
  s.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
  assert.deepEqual((await s.next(10000)).json, { jsonrpc: '2.0', id: 2, result: {} });
  s.child.stdin.end();
  assert.equal((await s.exited).code, 0);
});

test('a 100 MB line gets one Parse error; the lines after it are served', async () => {
  const s = start();
  s.send(init(1, '2025-06-18'));
  await s.next();
  const huge = Buffer.alloc(100 << 20, 'x');
  huge.write('{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"');
  s.send(huge);
  s.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
  const err = (await s.next(60000)).json;
  assert.equal(err.id, null);
  assert.equal(err.error.code, -32700);
  assert.match(err.error.message, /larger than/);
  assert.deepEqual((await s.next(60000)).json, { jsonrpc: '2.0', id: 3, result: {} });
  // and once more: the limit holds for every line, not only the first
  s.send(huge.subarray(0, 40 << 20));
  s.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
  assert.equal((await s.next(60000)).json.error.code, -32700);
  assert.deepEqual((await s.next(60000)).json, { jsonrpc: '2.0', id: 4, result: {} });
  await sleep(200);
  assert.equal(s.pending(), 0, 'one answer per line');
  s.child.stdin.end();
  assert.equal((await s.exited).code, 0);
});
