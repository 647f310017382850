// Structured tool results (MCP 2025-06-18 and later): every tool has an
// outputSchema in tools/list, and every result that is a result object (not a
// tool error) carries it as structuredContent, valid against that schema and
// saying what the text says. The SDK client validates structuredContent
// against the outputSchema in callTool and throws on a mismatch, once
// listTools has cached the schemas (client/index.js, callTool); a counting
// jsonSchemaValidator checks that it did, and the schemas are compiled again
// here with the ajv the SDK depends on (draft-07, as the SDK reads them, and
// 2020-12) in strict mode. Clients of 2025-03-26 and 2024-11-05 get neither
// (raw JSON-RPC), and the same text.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { realpathSync, rmSync } from 'node:fs';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { SERVER, connect, text, tempDir } from './util.mjs';

const TOOLS = ['bash', 'task_kill', 'task_output', 'task_write'];

const dirs = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
function scratch() {
  const d = realpathSync(tempDir());
  dirs.push(d);
  return d;
}

// The SDK's own validator, counting the results it checked.
class CountingValidator {
  constructor() {
    this.inner = new AjvJsonSchemaValidator();
    this.checked = 0;
  }

  getValidator(schema) {
    const validate = this.inner.getValidator(schema);
    return (input) => {
      this.checked++;
      return validate(input);
    };
  }
}

// The value of a "key: value" line of a result's text.
function field(t, key) {
  const m = t.match(new RegExp(`(?:^|\\n)${key}: ([^\\n]*)\\n`));
  return m ? m[1] : undefined;
}

// Every property of a schema, nested ones too, has a type and a description;
// no object is closed with additionalProperties:false.
function checkProperties(schema, where) {
  assert.notEqual(schema.additionalProperties, false, `${where}: additionalProperties:false`);
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    assert.equal(typeof p.type, 'string', `${where}.${name}: type`);
    assert.ok(typeof p.description === 'string' && p.description.length > 0,
      `${where}.${name}: description`);
    assert.doesNotMatch(p.description, /\n/, `${where}.${name}: one line`);
    if (p.type === 'object') checkProperties(p, `${where}.${name}`);
  }
}

describe('outputSchema and structuredContent (SDK client, protocol 2025-11-25)', { timeout: 60000 }, () => {
  let client;
  let cwd;
  let counter;
  let schemas;
  const ownValidators = {};

  before(async () => {
    cwd = scratch();
    counter = new CountingValidator();
    ({ client } = await connect(['--input-look-ms', '200'],
      { cwd, client: { jsonSchemaValidator: counter } }));
    const { tools } = await client.listTools();
    schemas = Object.fromEntries(tools.map((t) => [t.name, t.outputSchema]));
    for (const t of tools) {
      // strictRequired would have each form of bash's anyOf repeat the
      // properties it requires: that they are properties is checked below
      const options = { strict: true, strictRequired: false, allErrors: true };
      ownValidators[t.name] = [new Ajv(options), new Ajv2020(options)]
        .map((ajv) => ajv.compile(t.outputSchema));
    }
  });
  after(async () => { await client.close(); });

  // A call whose result must carry structuredContent: checked by the SDK
  // client (counted) and by the schemas compiled here.
  async function call(name, args, isError = false) {
    const checked = counter.checked;
    const r = await client.callTool({ name, arguments: args });
    assert.equal(r.isError, isError, text(r));
    assert.equal(typeof r.structuredContent, 'object', `${name}: structuredContent`);
    assert.equal(counter.checked, checked + 1, 'the SDK client validated it');
    for (const validate of ownValidators[name])
      assert.ok(validate(r.structuredContent), JSON.stringify(validate.errors));
    return { sc: r.structuredContent, t: text(r) };
  }

  test('tools/list: an outputSchema for each tool', () => {
    assert.deepEqual(Object.keys(schemas).sort(), TOOLS);
    for (const name of TOOLS) {
      const s = schemas[name];
      assert.equal(s.type, 'object', name);
      checkProperties(s, name);
    }
    const bash = schemas.bash;
    for (const p of ['stdout', 'stderr', 'exit_code', 'timed_out', 'truncated', 'cwd', 'signal',
      'leftover_task_id', 'notice', 'cost', 'omitted', 'lines', 'full_output', 'redacted', 'task_id',
      'status', 'yield_reason', 'waiting_for_input', 'prompt', 'password', 'elapsed_ms'])
      assert.ok(bash.properties[p], `bash.${p}`);
    assert.equal(bash.properties.exit_code.type, 'integer');
    assert.equal(bash.properties.truncated.properties.stdout.type, 'boolean');
    assert.equal(bash.properties.omitted.properties.stdout.properties.characters.type, 'integer');
    assert.equal(bash.properties.cost.properties.peak_bytes.type, 'integer');
    // no member is in every bash result: each of its two forms has its own
    assert.equal(bash.required, undefined);
    assert.deepEqual(bash.anyOf.map((f) => f.required), [
      ['stdout', 'stderr', 'exit_code', 'timed_out', 'truncated', 'cwd'], ['task_id', 'status']]);
    // the schemas do refuse: a wrong type, a result of neither bash form
    const [validate] = ownValidators.bash;
    assert.ok(validate({ task_id: 't', status: 'running' }));
    assert.ok(!validate({ task_id: 't', status: 'running', exit_code: '0' }));
    assert.ok(!validate({ stdout: '', stderr: '' }));
    assert.ok(!ownValidators.task_output[0]({ task_id: 't', status: 'running' }));
    for (const form of bash.anyOf)
      for (const p of form.required) assert.ok(bash.properties[p], `bash requires ${p}`);
    for (const name of ['task_output', 'task_write', 'task_kill']) {
      assert.deepEqual(schemas[name].required, ['task_id', 'status', 'stdout', 'stderr', 'truncated'], name);
      for (const p of ['exit_code', 'state', 'waiting_for_input', 'prompt', 'password', 'omitted',
        'lines', 'full_output', 'redacted'])
        assert.ok(schemas[name].properties[p], `${name}.${p}`);
    }
  });

  test('echo: the result object, as the text says it', async () => {
    const { sc, t } = await call('bash', { command: 'echo hello' });
    const { cost, elapsed_ms, ...rest } = sc;
    assert.deepEqual(rest, {
      stdout: 'hello\n', stderr: '', exit_code: 0, timed_out: false,
      truncated: { stdout: false, stderr: false }, cwd,
    });
    if (cost !== undefined) {
      assert.equal(typeof cost.cpu_ms, 'number');
      assert.equal(typeof cost.peak_bytes, 'number');
    }
    assert.ok(t.startsWith('stdout:\n' + sc.stdout));
    assert.equal(Number(field(t, 'exit_code')), sc.exit_code);
    assert.equal(field(t, 'cwd'), sc.cwd);
    // how long it ran, as a yielded command's result says it
    assert.ok(Number.isInteger(elapsed_ms) && elapsed_ms >= 0 && elapsed_ms < 10000, `${elapsed_ms}`);
    assert.match(field(t, 'elapsed_ms'), /^\d+$/);
    const slow = await call('bash', { command: 'sleep 0.3' });
    assert.ok(slow.sc.elapsed_ms >= 300, `${slow.sc.elapsed_ms}`);
  });

  test('exit 42: data, not an error', async () => {
    const { sc, t } = await call('bash', { command: 'exit 42' });
    assert.equal(sc.exit_code, 42);
    assert.equal(sc.timed_out, false);
    assert.equal(Number(field(t, 'exit_code')), 42);
  });

  test('stderr', async () => {
    const { sc, t } = await call('bash', { command: 'echo out; echo oops >&2' });
    assert.equal(sc.stdout, 'out\n');
    assert.equal(sc.stderr, 'oops\n');
    assert.match(t, /\nstderr:\noops\n/);
  });

  test('cd persists: cwd', async () => {
    const dir = scratch();
    let { sc, t } = await call('bash', { command: `cd ${dir}` });
    assert.equal(sc.cwd, dir);
    assert.equal(field(t, 'cwd'), dir);
    ({ sc, t } = await call('bash', { command: 'pwd' }));
    assert.equal(sc.stdout, dir + '\n');
    assert.equal(sc.cwd, dir);
    ({ sc } = await call('bash', { command: `cd ${cwd}` }));
    assert.equal(sc.cwd, cwd);
  });

  test('a timeout with partial output: isError, and still the result object', async () => {
    const { sc, t } = await call('bash', { command: 'echo partial; sleep 5', timeout: 1000 }, true);
    assert.equal(sc.timed_out, true);
    assert.equal(sc.exit_code, -1);
    assert.equal(sc.stdout, 'partial\n');
    assert.match(sc.stderr, /Command timed out after 1000 ms\n$/);
    assert.match(t, /timed_out: true \(Command timed out after 1000 ms/);
    assert.equal(Number(field(t, 'exit_code')), -1);
  });

  test('truncation: truncated.stdout and what was omitted', async () => {
    const { sc, t } = await call('bash', { command: "head -c 50000 /dev/zero | tr '\\0' x" });
    assert.deepEqual(sc.truncated, { stdout: true, stderr: false });
    assert.deepEqual(sc.omitted, { stdout: { characters: 20000, bytes: 20000 } });
    assert.deepEqual(sc.lines, { stdout: 1 });
    assert.match(sc.stdout, /of 50000 \(50000 bytes, 1 lines\); 20000 characters \(20000 bytes\) omitted/);
    assert.ok(t.startsWith('stdout:\n' + sc.stdout));
  });

  test('run_in_background, then task_output once it finished', async () => {
    let { sc, t } = await call('bash', { command: 'echo bg; exit 3', run_in_background: true });
    assert.deepEqual(Object.keys(sc).sort(), ['status', 'task_id']);
    assert.equal(sc.status, 'running');
    assert.equal(sc.task_id, field(t, 'task_id'));
    const id = sc.task_id;
    ({ sc, t } = await call('task_output', { task_id: id, yield_time_ms: 10000 }));
    assert.deepEqual(sc, {
      task_id: id, status: 'completed', stdout: 'bg\n', stderr: '', exit_code: 3, state: 'exited',
      truncated: { stdout: false, stderr: false },
    });
    assert.equal(field(t, 'status'), 'completed');
    assert.equal(Number(field(t, 'exit_code')), 3);
    assert.equal(field(t, 'state'), 'exited');
  });

  test('task_output of a running task, then task_kill', async () => {
    let { sc } = await call('bash', { command: 'echo started; sleep 30', run_in_background: true });
    const id = sc.task_id;
    let t;
    ({ sc, t } = await call('task_output', { task_id: id, yield_time_ms: 300 }));
    assert.deepEqual(sc, {
      task_id: id, status: 'running', stdout: 'started\n', stderr: '', waiting_for_input: false,
      truncated: { stdout: false, stderr: false },
    });
    assert.equal(field(t, 'waiting_for_input'), 'false');
    ({ sc, t } = await call('task_kill', { task_id: id }));
    assert.equal(sc.task_id, id);
    assert.equal(sc.status, 'killed');
    assert.equal(sc.state, 'killed');
    assert.equal(sc.exit_code, -1);
    assert.equal(sc.stdout, 'started\n');
    assert.equal(field(t, 'status'), 'killed');
    assert.equal(Number(field(t, 'exit_code')), sc.exit_code);
  });

  test('yield_time_ms: the running form, with yield_reason', async () => {
    let { sc, t } = await call('bash', { command: 'echo early; sleep 1.5; echo late', yield_time_ms: 300 });
    const { elapsed_ms: elapsed, ...rest } = sc;
    assert.deepEqual(rest, {
      task_id: field(t, 'task_id'), status: 'running', yield_reason: 'yield_time',
      stdout: 'early\n', stderr: '', waiting_for_input: false,
    });
    assert.ok(Number.isInteger(elapsed) && elapsed >= 300, String(elapsed));
    // the text says it too, maybe a millisecond later
    assert.ok(Math.abs(Number(field(t, 'elapsed_ms')) - elapsed) < 100);
    assert.match(field(t, 'yield_reason'), /^yield_time /);
    ({ sc } = await call('task_output', { task_id: sc.task_id, yield_time_ms: 10000 }));
    assert.equal(sc.status, 'completed');
    assert.equal(sc.exit_code, 0);
    assert.equal(sc.stdout, 'early\nlate\n');
  });

  test('waiting for input: prompt, then task_write', async () => {
    let { sc, t } = await call('bash', { command: "printf 'Name: '; read n; echo \"hi $n\"", yield_time_ms: 10000 });
    assert.equal(sc.status, 'running');
    assert.equal(sc.yield_reason, 'input');
    assert.equal(sc.waiting_for_input, true);
    assert.equal(sc.prompt, 'Name: ');
    assert.equal(sc.password, false);
    assert.equal(field(t, 'prompt'), JSON.stringify(sc.prompt));
    ({ sc, t } = await call('task_write', { task_id: sc.task_id, input: 'bob\n', yield_time_ms: 10000 }));
    assert.equal(sc.status, 'completed');
    assert.equal(sc.exit_code, 0);
    assert.match(sc.stdout, /hi bob\n$/);
    assert.equal(Number(field(t, 'exit_code')), 0);
  });

  test('tool errors carry no structuredContent', async () => {
    for (const [name, args] of [['task_output', { task_id: 'no-such-task' }],
      ['task_kill', { task_id: 'no-such-task' }], ['bash', { command: 'true', timeout: 'soon' }],
      ['bash', { command: 'true', cwd: '/nonexistent-shexec-dir' }]]) {
      const r = await client.callTool({ name, arguments: args });
      assert.equal(r.isError, true, name);
      assert.equal(r.structuredContent, undefined, name);
    }
  });
});

test('--error-on-nonzero-exit: isError, with the result object the SDK client accepts', { timeout: 30000 }, async () => {
  const counter = new CountingValidator();
  const { client } = await connect(['--error-on-nonzero-exit'], { client: { jsonSchemaValidator: counter } });
  try {
    await client.listTools();
    const checked = counter.checked;
    const r = await client.callTool({ name: 'bash', arguments: { command: 'echo out; exit 42' } });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.exit_code, 42);
    assert.equal(r.structuredContent.stdout, 'out\n');
    assert.equal(counter.checked, checked + 1);
    assert.equal(Number(field(text(r), 'exit_code')), 42);
  } finally {
    await client.close();
  }
});

test('spill file and redaction: full_output, omitted, redacted in bash and task results', { timeout: 30000 }, async () => {
  const spill = scratch();
  const TOKEN = 'ghp_' + 'aB3dE5gH7jK9mN1pQ2sT4vW6yZ8cF0hJ2kL4';
  const { client } = await connect(['--spill-dir', spill], { env: { GITHUB_TOKEN: TOKEN } });
  try {
    await client.listTools();
    const command = "echo \"$GITHUB_TOKEN\" >&2; head -c 50000 /dev/zero | tr '\\0' x";
    const r = await client.callTool({ name: 'bash', arguments: { command } });
    const started = await client.callTool({ name: 'bash', arguments: { command, run_in_background: true } });
    const task = await client.callTool({ name: 'task_output',
      arguments: { task_id: started.structuredContent.task_id, yield_time_ms: 10000 } });
    for (const [what, sc, t] of [['bash', r.structuredContent, text(r)],
      ['task_output', task.structuredContent, text(task)]]) {
      assert.equal(sc.stderr, '[REDACTED:GITHUB_TOKEN]\n', what);
      assert.equal(sc.redacted, 1, what);
      assert.deepEqual(sc.omitted, { stdout: { characters: 20000, bytes: 20000 } }, what);
      assert.deepEqual(Object.keys(sc.full_output), ['stdout'], what);
      assert.ok(sc.full_output.stdout.startsWith(spill + '/'), what);
      assert.match(t, new RegExp(`\\nfull_output: stdout in ${sc.full_output.stdout} \\(`), what);
      assert.match(t, /\nredacted: 1 /, what);
    }
  } finally {
    await client.close();
  }
});

// ---- raw JSON-RPC: what each protocol version gets ------------------------

const children = [];
after(() => { for (const c of children) if (c.exitCode === null) c.kill('SIGKILL'); });

// A server on pipes, initialized with `version`; request() resolves with the
// response to it.
async function rawServer(version) {
  const child = spawn(SERVER, [], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  child.stdin.on('error', () => {});
  const waiting = new Map();
  let buf = '';
  let nextId = 1;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const msg = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      waiting.get(msg.id)?.(msg);
      waiting.delete(msg.id);
    }
  });
  const request = (method, params) => new Promise((resolve) => {
    const id = nextId++;
    waiting.set(id, resolve);
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  });
  const init = await request('initialize', {
    protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '0' },
  });
  assert.equal(init.result.protocolVersion, version);
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  const exited = new Promise((r) => child.on('exit', r));
  return { request, close: () => { child.stdin.end(); return exited; } };
}

// What each version is answered: tools/list, an echo, a background start and
// a task_output.
async function session(version) {
  const s = await rawServer(version);
  const tools = (await s.request('tools/list', {})).result.tools;
  const echo = (await s.request('tools/call', { name: 'bash', arguments: { command: 'echo same' } })).result;
  const start = (await s.request('tools/call',
    { name: 'bash', arguments: { command: 'echo task', run_in_background: true } })).result;
  const id = start.content[0].text.match(/^task_id: (\S+)\n/)[1];
  const output = (await s.request('tools/call',
    { name: 'task_output', arguments: { task_id: id, yield_time_ms: 10000 } })).result;
  await s.close();
  return { tools, echo, start, output, id };
}

// the text without what differs from run to run (cost, time taken, task ids)
const stable = (r, id) => r.content[0].text.replace(/^cost: .*\n/m, '')
  .replace(/^elapsed_ms: \d+\n/m, '').replaceAll(id, 'ID');

test('structuredContent and outputSchema by protocol version (raw JSON-RPC)', { timeout: 60000 }, async () => {
  const latest = await session('2025-06-18');
  assert.equal(latest.tools.length, 4);
  for (const t of latest.tools) assert.equal(t.outputSchema.type, 'object', t.name);
  assert.equal(latest.echo.structuredContent.stdout, 'same\n');
  assert.equal(latest.echo.structuredContent.exit_code, 0);
  assert.deepEqual(latest.start.structuredContent, { task_id: latest.id, status: 'running' });
  assert.equal(latest.output.structuredContent.stdout, 'task\n');
  assert.equal(latest.output.structuredContent.status, 'completed');
  for (const version of ['2025-03-26', '2024-11-05']) {
    const old = await session(version);
    for (const t of old.tools) assert.equal(t.outputSchema, undefined, `${version} ${t.name}`);
    // the tool list is otherwise the same, and so is every text
    assert.deepEqual(old.tools, latest.tools.map(({ outputSchema, ...t }) => t), version);
    for (const r of ['echo', 'start', 'output']) {
      assert.equal(old[r].structuredContent, undefined, `${version} ${r}`);
      assert.deepEqual(Object.keys(old[r]), ['content', 'isError'], `${version} ${r}`);
      assert.equal(stable(old[r], old.id), stable(latest[r], latest.id), `${version} ${r}`);
    }
  }
});
