// Shared helpers of the shexec-mcp tests: start the server under the SDK
// client, read tool results, and check processes by pid.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { after } from 'node:test';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const SERVER = process.env.SHEXEC_MCP || resolve(here, '../../build/examples/shexec-mcp');

if (!existsSync(SERVER)) throw new Error(`${SERVER} not built (make examples)`);

// options.env: variables the server gets besides the SDK's default few
// (HOME, PATH, ...), as a client's configuration would give them;
// options.client: the SDK Client's options (e.g. its jsonSchemaValidator).
export async function connect(args = [], options = {}) {
  const transport = new StdioClientTransport({
    command: SERVER,
    args,
    cwd: options.cwd,
    env: options.env,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'shexec-mcp-test', version: '1.0.0' }, options.client);
  await client.connect(transport);
  return { client, transport };
}

// The text of a tools/call result (one text block).
export function text(result) {
  if (!Array.isArray(result.content) || result.content.length !== 1 ||
      result.content[0].type !== 'text') {
    throw new Error('unexpected content: ' + JSON.stringify(result.content));
  }
  return result.content[0].text;
}

export async function bash(client, args, options) {
  return client.callTool({ name: 'bash', arguments: args }, undefined, options);
}

export function tempDir() {
  return mkdtempSync(join(tmpdir(), 'shexec-mcp-'));
}

// A pid is alive when /proc has it and it is not a zombie.
export function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Wait until every pid is gone; returns the ones still alive after ms.
export async function waitGone(pids, ms = 5000) {
  const end = Date.now() + ms;
  let left = pids;
  while (left.length && Date.now() < end) {
    await sleep(50);
    left = left.filter(alive);
  }
  return left;
}

// Poll a file until it holds one pid per line (count of them); returns them.
export async function readPids(file, count, ms = 5000) {
  const end = Date.now() + ms;
  for (;;) {
    let pids = [];
    try {
      pids = readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number);
    } catch { /* not written yet */ }
    if (pids.length >= count) return pids;
    if (Date.now() > end) throw new Error(`${file}: ${pids.length} of ${count} pids`);
    await sleep(20);
  }
}

// Raw JSON-RPC, without an SDK. Every server still running when the test
// file ends (a failed test) is killed, so that a failure cannot
// hang the run.
const children = [];
after(() => { for (const c of children) if (c.exitCode === null) c.kill('SIGKILL'); });

// A server on pipes; send() writes a line, next() resolves with the next message.
// options.wrap: a program and its arguments that run the server
// (['unshare', '-fp', '--mount-proc'], a setpriv that changes its user);
// options.server: another copy of it; options.cwd: where it starts.
export function startRaw(args = [], options = {}) {
  const argv = [...(options.wrap || []), options.server || SERVER, ...args];
  const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], cwd: options.cwd });
  children.push(child);
  const queue = [];
  const waiters = [];
  let buf = '';
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  // a server killed with input still queued (a failed test) is no second failure
  child.stdin.on('error', () => {});
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const msg = { line, json: JSON.parse(line) };
      if (waiters.length) waiters.shift()(msg);
      else queue.push(msg);
    }
  });
  const exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
  return {
    child,
    exited,
    stderr: () => stderr,
    send: (obj) => child.stdin.write(Buffer.isBuffer(obj) ? Buffer.concat([obj, Buffer.from('\n')])
      : (typeof obj === 'string' ? obj : JSON.stringify(obj)) + '\n'),
    next: (ms = 5000) => queue.length ? Promise.resolve(queue.shift()) : new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no message within ' + ms + ' ms')), ms);
      waiters.push((m) => { clearTimeout(t); resolve(m); });
    }),
    pending: () => queue.length,
  };
}
