// shexec-mcp with each command in a cgroup (--containment, on by default
// where this machine can make cgroups): a daemon that detaches is ended when
// the server is killed outright, the limit flags bound commands and the
// result says which limit ended one, and every result says what it cost.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { SERVER, connect, text, bash, sleep } from './util.mjs';

const MARK = 'shexec-mcp-contain-mark';
const children = [];
after(() => { for (const c of children) if (c.exitCode === null) c.kill('SIGKILL'); });

// Live processes whose argv[0] is MARK (zombies are gone).
function marked() {
  const pids = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'latin1').split('\0')[0] !== MARK) continue;
      const st = readFileSync(`/proc/${d}/stat`, 'latin1');
      const state = st[st.lastIndexOf(')') + 2];
      if (state !== 'Z' && state !== 'X') pids.push(Number(d));
    } catch { /* gone meanwhile */ }
  }
  return pids;
}

function killMarked() {
  for (const pid of marked()) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
}

// The server's view: a first call tells whether it holds commands in
// cgroups (it says so on stderr when it cannot).
async function cgroupsHere() {
  const { client, transport } = await connect();
  let err = '';
  transport.stderr.on('data', (d) => { err += d; });
  const r = await bash(client, { command: 'true' });
  await client.close();
  return /cost: .*every process of the command/.test(text(r)) ? null : (err || 'no cgroups');
}

test('containment: a detached daemon ends with a server killed by SIGKILL', async (t) => {
  const why = await cgroupsHere();
  if (why) return t.skip(why);
  try {
    const child = spawn(SERVER, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    const send = (m) => child.stdin.write(JSON.stringify(m) + '\n');
    send({ jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'bash', arguments: {
      command: `setsid bash -c 'exec -a ${MARK} sleep 300' & sleep 0.2; echo ok` } } });
    for (let i = 0; i < 200 && !out.includes('"id":2'); i++) await sleep(25);
    assert.match(out, /leftover_task_id/);
    assert.equal(marked().length, 1);
    child.kill('SIGKILL');
    let left = marked();
    for (let i = 0; i < 60 && left.length; i++) { await sleep(50); left = marked(); }
    assert.deepEqual(left, [], 'the detached daemon outlived the killed server');
  } finally {
    killMarked();
  }
});

test('containment off: process groups; the cost is the shell\'s wait', async () => {
  const { client } = await connect(['--containment', 'off']);
  try {
    const r = await bash(client, { command: 'true' });
    assert.match(text(r), /cost: cpu [0-9.]+ s .*the shell and what it waited for/);
  } finally {
    await client.close();
  }
});

test('--pids-max ends a fork bomb and says so; the server serves on', async (t) => {
  const why = await cgroupsHere();
  if (why) return t.skip(why);
  const { client } = await connect(['--pids-max', '40']);
  try {
    let r = await bash(client, { command: 'b() { b | b & }; b; sleep 1; echo survived', timeout: 3000 });
    assert.match(text(r), /notice: .*the process limit \(40\) was reached/);
    r = await bash(client, { command: 'echo alive' });
    assert.match(text(r), /stdout:\nalive/);
  } finally {
    await client.close();
  }
});

test('--memory-max: an allocation loop is killed, the result says out of memory', async (t) => {
  const why = await cgroupsHere();
  if (why) return t.skip(why);
  const { client } = await connect(['--memory-max', '64M']);
  try {
    const r = await bash(client, { command: "/usr/bin/python3 -c 'a = []\nwhile True: a.append(bytearray(1 << 20))'", timeout: 20000 });
    assert.match(text(r), /notice: .*killed: out of memory \(limit 64 MiB\)/);
    // one command: bash execs python, which the kernel's SIGKILL ends, as under `bash -c`
    assert.match(text(r), /signal: 9 \(SIGKILL\)/);
  } finally {
    await client.close();
  }
});

test('limit flags: bad values and a limit without containment are refused at start', async () => {
  const run = (args) => new Promise((resolve) => {
    const c = spawn(SERVER, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d) => { err += d; });
    c.on('exit', (code) => resolve({ code, err }));
    c.stdin.end();
  });
  let r = await run(['--memory-max', '1.5G']);
  assert.equal(r.code, 2);
  assert.match(r.err, /--memory-max: "1.5G" is no size/);
  r = await run(['--cpu-max', 'fast']);
  assert.equal(r.code, 2);
  r = await run(['--containment', 'off', '--pids-max', '10']);
  assert.equal(r.code, 2);
  assert.match(r.err, /--pids-max: limits need containment by cgroup/);
  r = await run(['--containment', 'relative']);
  assert.equal(r.code, 2);
  assert.match(r.err, /--containment: containment is "auto", "off" or an absolute/);
});
