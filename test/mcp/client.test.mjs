// shexec-mcp through the official MCP TypeScript SDK client (Client +
// StdioClientTransport): initialize, tools/list, every scenario of the bash /
// task_output tools, progress streaming, cancellation and shutdown.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { connect, text, bash, tempDir, alive, waitGone, readPids, sleep } from './util.mjs';

describe('initialize and tools/list', () => {
  test('server info, capabilities and the four tools', async () => {
    const { client } = await connect();
    try {
      const info = client.getServerVersion();
      assert.equal(info.name, 'shexec-mcp');
      assert.match(info.version, /^\d+\.\d+\.\d+/);
      assert.ok(client.getServerCapabilities().tools, 'tools capability');
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['bash', 'task_kill', 'task_output', 'task_write']);
      const b = tools.find((t) => t.name === 'bash');
      assert.equal(b.inputSchema.type, 'object');
      assert.deepEqual(b.inputSchema.required, ['command']);
      assert.equal(b.inputSchema.properties.timeout.maximum, 600000);
      assert.equal(b.inputSchema.properties.run_in_background.type, 'boolean');
      assert.match(b.description, /120000 ms/);
      await client.ping();
    } finally {
      await client.close();
    }
  });

  test('--no-bash hides bash; --disable-tools hides the listed ones', async () => {
    let { client } = await connect(['--no-bash']);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(names, ['task_kill', 'task_output', 'task_write']);
      await assert.rejects(bash(client, { command: 'echo hi' }),
        (e) => e instanceof McpError && e.code === ErrorCode.InvalidParams && /Unknown tool: bash/.test(e.message));
    } finally {
      await client.close();
    }
    ({ client } = await connect(['--disable-tools', 'task_kill,task_output,task_write', '--timeout', '7']));
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['bash']);
      assert.match(tools[0].description, /7000 ms/);
    } finally {
      await client.close();
    }
  });
});

describe('bash (seed scenarios)', () => {
  let client;
  before(async () => { ({ client } = await connect()); });
  after(async () => { await client.close(); });

  test('echo hello: stdout, no stderr, exit 0', async () => {
    const r = await bash(client, { command: 'echo hello' });
    assert.equal(r.isError, false);
    const t = text(r);
    assert.match(t, /^stdout:\nhello\n/);
    assert.doesNotMatch(t, /stderr:/);
    assert.match(t, /\nexit_code: 0\n/);
  });

  test('exit 42 is data: a result with the code, not an error', async () => {
    const r = await bash(client, { command: 'exit 42' });
    assert.equal(r.isError, false);
    assert.match(text(r), /exit_code: 42\n/);
  });

  test('a command killed by a signal from outside ran: data too, with the signal', async () => {
    for (const [sig, num] of [['KILL', 9], ['TERM', 15]]) {
      const r = await bash(client, { command: `echo before; kill -${sig} $$; echo after` });
      assert.equal(r.isError, false, sig);
      const t = text(r);
      assert.match(t, /^stdout:\nbefore\n/);
      assert.doesNotMatch(t, /after/);
      assert.match(t, new RegExp(`signal: ${num} \\(SIG${sig}\\)\\n`));
    }
  });

  test('what the tool could not do stays an error: a cwd argument that does not exist', async () => {
    const r = await bash(client, { command: 'echo should not run', cwd: '/nonexistent-shexec-dir' });
    assert.equal(r.isError, true);
    assert.match(text(r), /does not exist/);
    assert.doesNotMatch(text(r), /should not run/);
  });

  test('a session directory removed since: the command starts in the nearest existing ancestor', async () => {
    const dir = realpathSync(tempDir());
    try {
      assert.equal((await bash(client, { command: `mkdir -p '${dir}/a/b' && cd '${dir}/a/b'` })).isError, false);
      rmSync(`${dir}/a`, { recursive: true, force: true });
      const r = await bash(client, { command: 'pwd' });
      assert.equal(r.isError, false);
      assert.match(text(r), new RegExp(`^stdout:\n${dir}\n`));
      assert.match(text(r), /notice: the session's working directory .* no longer exists/);
    } finally {
      await bash(client, { command: 'cd /' });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a directory the command removed is not adopted: the cwd stays and a notice says why', async () => {
    const dir = realpathSync(tempDir());
    try {
      assert.equal((await bash(client, { command: `cd '${dir}'` })).isError, false);
      const r = await bash(client, { command: 'mkdir gone && cd gone && rmdir "$PWD"' });
      assert.equal(r.isError, false);
      assert.match(text(r), new RegExp(`cwd: ${dir}\n`));
      assert.match(text(r), /notice: the working directory the shell reported .*gone.* does not exist/);
      assert.match(text((await bash(client, { command: 'pwd' }))), new RegExp(`^stdout:\n${dir}\n`));
    } finally {
      await bash(client, { command: 'cd /' });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('stderr is its own section', async () => {
    const r = await bash(client, { command: 'echo err >&2' });
    assert.equal(r.isError, false);
    assert.match(text(r), /^stderr:\nerr\n/);
    assert.match(text(r), /exit_code: 0/);
  });

  test('cd persists; sentinel and pwd record never visible', async () => {
    const dir = realpathSync(tempDir());
    try {
      let t = text(await bash(client, { command: `cd '${dir}'` }));
      assert.match(t, new RegExp(`cwd: ${dir}\\n`));
      t = text(await bash(client, { command: 'pwd' }));
      assert.match(t, new RegExp(`^stdout:\\n${dir}\\n`));
      t = text(await bash(client, { command: 'echo hello; echo __BORIS_CWD__; printf tail' }));
      assert.match(t, /^stdout:\nhello\n__BORIS_CWD__\ntail\n\\ no newline at end of stdout\n/);
      assert.doesNotMatch(t, /SHEXEC/);
      assert.equal((t.match(new RegExp(dir, 'g')) || []).length, 1, 'only the cwd line names the dir');
    } finally {
      await bash(client, { command: 'cd /' });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('timeout 1000 ms returns in about 1 s, partial output kept, processes gone', async () => {
    const dir = tempDir();
    const pidfile = join(dir, 'pids');
    const t0 = Date.now();
    const r = await bash(client, {
      command: `echo partial; sleep 300 & echo $! > '${pidfile}'; sleep 301 & echo $! >> '${pidfile}'; wait`,
      timeout: 1000,
    });
    const took = Date.now() - t0;
    assert.ok(took >= 900 && took < 4000, `took ${took} ms`);
    assert.equal(r.isError, true);
    const t = text(r);
    assert.match(t, /^stdout:\npartial\n/);
    assert.match(t, /timed_out: true \(Command timed out after 1000 ms.*the output above is what it printed/);
    assert.match(t, /exit_code: -1/);
    const pids = await readPids(pidfile, 2);
    assert.deepEqual(await waitGone(pids, 10000), []); // a bound for a loaded machine, not a speed
    rmSync(dir, { recursive: true, force: true });
  });

  test('a timeout with no output says so, not "the output above"', async () => {
    const t = text(await bash(client, { command: 'sleep 30', timeout: 300 }));
    assert.match(t, /^\(no output\)\ntimed_out: true \(.*it printed nothing before\)\nexit_code: -1\n/);
  });

  test('a SIGTERM trap runs and its output is kept', async () => {
    const r = await bash(client, {
      command: "trap 'echo cleanup; exit 3' TERM; echo ready; sleep 300 & wait",
      timeout: 1000,
    });
    const t = text(r);
    assert.match(t, /^stdout:\nready\ncleanup\n/);
    assert.match(t, /timed_out: true/);
  });

  test('a program that handles SIGTERM gets the grace: its cleanup output is kept (bash and sh)', async () => {
    const py = "/usr/bin/python3 -c 'import signal, sys, time\n" +
      "def h(*a):\n    time.sleep(0.5); print(\"cleaned\", flush=True); sys.exit(0)\n" +
      "signal.signal(signal.SIGTERM, h)\nprint(\"ready\", flush=True); time.sleep(30)'";
    const check = async (c) => {
      const t = text(await bash(c, { command: py, timeout: 1500 }));
      assert.match(t, /^stdout:\nready\ncleaned\n/);
      assert.match(t, /timed_out: true/);
    };
    await check(client);
    const { client: sh } = await connect(['--', '/bin/sh']);
    try {
      await check(sh);
    } finally {
      await sh.close();
    }
  });

  test('stdout and stderr are cut at 30,000 characters each, with the total', async () => {
    let r = await bash(client, { command: "head -c 50000 /dev/zero | tr '\\0' x" });
    let t = text(r);
    assert.ok(t.includes('x'.repeat(30000)));
    assert.ok(!t.includes('x'.repeat(30001)));
    assert.ok(t.includes('[output truncated: kept the first 30000 characters (30000 bytes) of ' +
      '50000 (50000 bytes, 1 lines); 20000 characters (20000 bytes) omitted]'));
    r = await bash(client, {
      command: "head -c 40000 /dev/zero | tr '\\0' e >&2; head -c 5000 /dev/zero | tr '\\0' o",
    });
    t = text(r);
    assert.ok(t.includes('o'.repeat(5000)) && !t.includes('o'.repeat(5001)));
    assert.ok(t.includes('e'.repeat(30000)) && !t.includes('e'.repeat(30001)));
    assert.ok(t.includes('[output truncated: kept the first 30000 characters (30000 bytes) of ' +
      '40000 (40000 bytes, 1 lines); 10000 characters (10000 bytes) omitted]'));
    assert.equal((t.match(/output truncated/g) || []).length, 1, 'stdout is not truncated');
    // multi-byte characters count as one and are never split
    r = await bash(client, { command: "for i in $(seq 31000); do printf 'é'; done" });
    t = text(r);
    assert.ok(t.includes('é'.repeat(30000)) && !t.includes('é'.repeat(30001)));
    assert.ok(!t.includes('\ufffd'));
  });

  test('timeout above the maximum is clamped, not refused', async () => {
    const r = await bash(client, { command: 'echo ok', timeout: 900000 });
    assert.equal(r.isError, false);
    assert.match(text(r), /^stdout:\nok\n/);
  });

  test('bad arguments are tool errors, not protocol errors', async () => {
    for (const [args, msg] of [
      [{}, /missing required argument "command"/],
      [{ command: '' }, /"command" is empty/],
      [{ command: 'true', timeout: 0 }, /timeout/],
      [{ command: 'true', timeout: 1.5 }, /timeout/],
      [{ command: 'true', bogus: 1 }, /unknown argument "bogus"/],
      [{ cmd: 'ls' }, /unknown argument "cmd" \(the arguments are: command, /],
      [{ command: 42 }, /must be a string/],
      [{ command: 'true', cwd: '/nonexistent-dir' }, /nonexistent-dir/],
      // a model's variable names are shell identifiers, each bad one named
      [{ command: 'true', env: { 'INVALID-NAME': 'x' } },
        /invalid environment variable name "INVALID-NAME"/],
      [{ command: 'true', env: { OK: '1', '1X': '2', 'A B': '3' } },
        /invalid environment variable names "1X", "A B" in "env"/],
    ]) {
      const r = await bash(client, args);
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.match(text(r), msg);
    }
  });

  test('a command that leaves a server running returns at once with its task id', async () => {
    const t0 = Date.now();
    const r = await bash(client, { command: 'sleep 60 & echo started' });
    assert.ok(Date.now() - t0 < 5000);
    const t = text(r);
    assert.match(t, /^stdout:\nstarted\n/);
    const id = t.match(/leftover_task_id: (\S+)/)[1];
    const k = await client.callTool({ name: 'task_kill', arguments: { task_id: id } });
    assert.match(text(k), /status: killed/);
  });
});

describe('--error-on-nonzero-exit', () => {
  let client;
  before(async () => { ({ client } = await connect(['--error-on-nonzero-exit'])); });
  after(async () => { await client.close(); });

  test('a non-zero exit and a signal are isError; exit 0 is not; the text is the same', async () => {
    let r = await bash(client, { command: 'exit 42' });
    assert.equal(r.isError, true);
    assert.match(text(r), /^\(no output\)\nexit_code: 42\ncwd: /);
    r = await bash(client, { command: 'kill -KILL $$' });
    assert.equal(r.isError, true);
    assert.match(text(r), /signal: 9 \(SIGKILL\)/);
    r = await bash(client, { command: 'echo fine' });
    assert.equal(r.isError, false);
    assert.match(text(r), /exit_code: 0\n/);
  });

  test('a timeout is still isError; a background task started is not', async () => {
    let r = await bash(client, { command: 'sleep 30', timeout: 300 });
    assert.equal(r.isError, true);
    assert.match(text(r), /timed_out: true/);
    r = await bash(client, { command: 'exit 3', run_in_background: true });
    assert.equal(r.isError, false);
    const id = text(r).match(/^task_id: (\S+)\n/)[1];
    // task_output reports the task's end as data: the call itself succeeded
    const end = Date.now() + 5000;
    do {
      await sleep(100);
      r = await client.callTool({ name: 'task_output', arguments: { task_id: id } });
      assert.equal(r.isError, false);
    } while (/status: running/.test(text(r)) && Date.now() < end);
    assert.match(text(r), /status: completed\nexit_code: 3\n/);
  });
});

describe('--workdir and the launch directory', () => {
  test('default: the directory the server was launched from', async () => {
    const dir = realpathSync(tempDir());
    const { client } = await connect([], { cwd: dir });
    try {
      assert.match(text(await bash(client, { command: 'pwd' })), new RegExp(`^stdout:\\n${dir}\\n`));
    } finally {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('--workdir=/tmp and --workdir DIR', async () => {
    for (const args of [['--workdir=/tmp'], ['--workdir', '/usr']]) {
      const { client } = await connect(args);
      try {
        const want = args.length === 1 ? '/tmp' : '/usr';
        assert.match(text(await bash(client, { command: 'pwd' })), new RegExp(`^stdout:\\n${want}\\n`));
      } finally {
        await client.close();
      }
    }
  });
});

describe('-- PROGRAM and --wrapper-kind', () => {
  test('a remote kind keeps the record out of the output and tracks the cwd', async () => {
    const { client } = await connect(['--wrapper-kind', 'remote', '--workdir', '/usr', '--', 'sh']);
    try {
      assert.match(text(await bash(client, { command: 'cd /tmp; echo here' })), /^stdout:\nhere\n/);
      assert.match(text(await bash(client, { command: 'exec >/dev/null; cd /etc' })), /^(?!.*SHEXEC)/s);
      assert.match(text(await bash(client, { command: 'pwd; readlink /proc/$$/exe' })),
        /^stdout:\n\/etc\n\/(usr\/)?bin\/dash\n/);
    } finally {
      await client.close();
    }
  });
});

describe('background tasks', () => {
  let client;
  before(async () => { ({ client } = await connect()); });
  after(async () => { await client.close(); });

  const output = (id) => client.callTool({ name: 'task_output', arguments: { task_id: id } });
  const taskId = (r) => text(r).match(/^task_id: (\S+)\n/)[1];

  test('run_in_background returns a task_id at once; running, then completed once', async () => {
    const t0 = Date.now();
    const r = await bash(client, { command: 'echo one; sleep 0.5; echo two; exit 3', run_in_background: true });
    assert.ok(Date.now() - t0 < 400, 'returned before the command ended');
    assert.equal(r.isError, false);
    assert.match(text(r), /status: running/);
    const id = taskId(r);
    await sleep(150);
    let t = text(await output(id));
    assert.match(t, /status: running\n/);
    assert.match(t, /stdout:\none\n/);
    await sleep(800);
    t = text(await output(id));
    assert.match(t, /status: completed\nexit_code: 3\n/);
    assert.match(t, /stdout:\none\ntwo\n/);
    const again = await output(id);
    assert.equal(again.isError, true);
    assert.match(text(again), new RegExp(`Task not found: ${id}`));
  });

  test('unknown task id is an isError result', async () => {
    const r = await output('no-such-task');
    assert.equal(r.isError, true);
    assert.match(text(r), /Task not found: no-such-task/);
  });

  test('a background cd does not move the session', async () => {
    const before = text(await bash(client, { command: 'pwd' }));
    const id = taskId(await bash(client, { command: 'cd /; pwd', run_in_background: true }));
    await sleep(300);
    assert.match(text(await output(id)), /stdout:\n\/\n/);
    // the same but for what each command cost and took
    const noCost = (t) => t.replace(/^cost: .*\n/m, '').replace(/^elapsed_ms: \d+\n/m, '');
    assert.equal(noCost(text(await bash(client, { command: 'pwd' }))), noCost(before));
  });

  test('at most 10 at once; the 11th is refused; task_kill frees a slot', async () => {
    const ids = [];
    for (let i = 0; i < 10; i++) {
      const r = await bash(client, { command: 'sleep 60', run_in_background: true });
      assert.equal(r.isError, false, text(r));
      ids.push(taskId(r));
    }
    const over = await bash(client, { command: 'sleep 60', run_in_background: true });
    assert.equal(over.isError, true);
    assert.match(text(over), /10/);
    assert.match(text(over), /task_output/);
    for (const id of ids) {
      const k = await client.callTool({ name: 'task_kill', arguments: { task_id: id } });
      assert.match(text(k), /status: killed/);
    }
    const ok = await bash(client, { command: 'true', run_in_background: true });
    assert.equal(ok.isError, false);
  });
});

describe('background tasks: new_only and retention', () => {
  test('new_only returns each piece of output once', async () => {
    const { client } = await connect();
    const dir = tempDir();
    try {
      const go = join(dir, 'go');
      const read = (id) => client.callTool({ name: 'task_output', arguments: { task_id: id, new_only: true } });
      const r = await bash(client, {
        command: `echo one; while [ ! -e '${go}' ]; do sleep 0.02; done; echo two`, run_in_background: true });
      const id = text(r).match(/^task_id: (\S+)\n/)[1];
      let t;
      const end = Date.now() + 5000;
      do t = text(await read(id)); while (!/stdout:\none\n/.test(t) && Date.now() < end);
      assert.match(t, /^task_id: \S+\nstatus: running\nstdout:\none\nwaiting_for_input: false\n$/);
      assert.match(text(await read(id)), /status: running\n\(no output\)\nwaiting_for_input: false\n$/,
        'read already');
      writeFileSync(go, '');
      let rest = '';
      do {
        t = text(await read(id));
        rest += t;
      } while (/status: running/.test(t) && Date.now() < end);
      assert.match(t, /status: completed\nexit_code: 0\nstate: exited\n/);
      assert.match(rest, /stdout:\ntwo\n/);
      assert.doesNotMatch(rest, /one/);
    } finally {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a finished leftover task nobody read makes room; its id then says so', async () => {
    const { client } = await connect();
    const ids = [];
    try {
      const left = text(await bash(client, { command: 'sleep 0.2 & echo started' }))
        .match(/leftover_task_id: (\S+)/)[1];
      await sleep(1000); // the leftover sleep has ended: a finished task of the session
      for (let i = 0; i < 10; i++) {
        const r = await bash(client, { command: 'sleep 60', run_in_background: true });
        assert.equal(r.isError, false, text(r));
        ids.push(text(r).match(/^task_id: (\S+)\n/)[1]);
      }
      const r = await client.callTool({ name: 'task_output', arguments: { task_id: left } });
      assert.equal(r.isError, true);
      assert.match(text(r), new RegExp(`Task ${left} finished and was released unread \\(retention limit`));
      // the server's own tasks are never released: the next one is refused
      const over = await bash(client, { command: 'true', run_in_background: true });
      assert.equal(over.isError, true);
      assert.match(text(over), /to make room/);
    } finally {
      for (const id of ids)
        assert.match(text(await client.callTool({ name: 'task_kill', arguments: { task_id: id } })),
          /status: killed/);
      await client.close();
    }
  });
});

describe('streaming progress', () => {
  test('incremental output arrives as progress before the result', async () => {
    const { client } = await connect();
    try {
      const events = [];
      let resultAt = null;
      const r = await bash(client,
        { command: 'for i in 1 2 3 4; do echo line$i; sleep 0.3; done; echo err >&2' },
        { onprogress: (p) => { events.push({ ...p, at: Date.now() }); } });
      resultAt = Date.now();
      assert.ok(events.length >= 3, `${events.length} progress events`);
      for (let i = 1; i < events.length; i++) assert.ok(events[i].progress > events[i - 1].progress);
      assert.ok(events.every((e) => e.at <= resultAt));
      // The SDK hands notifications to handlers a microtask later than
      // responses, so a progress message read in the same chunk as the
      // result can be dropped on the client side (the wire order is checked
      // in protocol.test.mjs): what arrived must be a prefix of the output.
      const streamed = events.map((e) => e.message || '').join('');
      assert.ok('line1\nline2\nline3\nline4\nerr\n'.startsWith(streamed), JSON.stringify(streamed));
      assert.ok(streamed.startsWith('line1\nline2\nline3\n'), JSON.stringify(streamed));
      assert.ok(events[0].at < resultAt - 600, 'the first line came long before the result');
      assert.match(text(r), /^stdout:\nline1\nline2\nline3\nline4\nstderr:\nerr\n/);
    } finally {
      await client.close();
    }
  });

  test('resetTimeoutOnProgress keeps a long, chatty call alive past the client timeout', async () => {
    const { client } = await connect();
    try {
      const r = await bash(client, { command: 'for i in 1 2 3 4 5 6 7 8; do echo $i; sleep 0.25; done' },
        { timeout: 1000, resetTimeoutOnProgress: true, onprogress: () => {} });
      assert.match(text(r), /^stdout:\n1\n2\n3\n4\n5\n6\n7\n8\n/);
    } finally {
      await client.close();
    }
  });

  test('a flood is chunked: few messages, bounded, result still truncated', async () => {
    const { client } = await connect();
    try {
      let count = 0;
      let bytes = 0;
      const r = await bash(client, { command: 'seq 1 200000' },
        { onprogress: (p) => { count++; bytes += (p.message || '').length; } });
      assert.ok(count < 400, `${count} progress messages`);
      assert.ok(bytes <= (1 << 20) + 200, `${bytes} bytes streamed`);
      assert.match(text(r), /output truncated/);
    } finally {
      await client.close();
    }
  });
});

describe('concurrency, cancellation, shutdown', () => {
  test('ping and a second call are answered while a command runs', async () => {
    const { client } = await connect();
    try {
      const slow = bash(client, { command: 'sleep 1.5; echo slow' });
      const t0 = Date.now();
      await client.ping();
      const fast = await bash(client, { command: 'echo fast' });
      assert.ok(Date.now() - t0 < 1000);
      assert.match(text(fast), /^stdout:\nfast\n/);
      assert.match(text(await slow), /^stdout:\nslow\n/);
    } finally {
      await client.close();
    }
  });

  test('a client-side timeout cancels the call and kills the command', async () => {
    const { client } = await connect();
    const dir = tempDir();
    try {
      const pidfile = join(dir, 'pids');
      await assert.rejects(
        bash(client, { command: `sleep 300 & echo $! > '${pidfile}'; wait` }, { timeout: 700 }),
        (e) => e instanceof McpError && e.code === ErrorCode.RequestTimeout);
      const pids = await readPids(pidfile, 1);
      assert.deepEqual(await waitGone(pids, 10000), []); // a bound for a loaded machine, not a speed
      // the server is still fine and sent no stray response
      assert.match(text(await bash(client, { command: 'echo after' })), /^stdout:\nafter\n/);
    } finally {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an AbortSignal cancels the call and kills the command', async () => {
    const { client } = await connect();
    const dir = tempDir();
    try {
      const pidfile = join(dir, 'pids');
      const ac = new AbortController();
      const call = bash(client, { command: `sleep 300 & echo $! > '${pidfile}'; wait` }, { signal: ac.signal });
      const pids = await readPids(pidfile, 1);
      ac.abort('changed my mind');
      await assert.rejects(call);
      assert.deepEqual(await waitGone(pids, 10000), []); // a bound for a loaded machine, not a speed
    } finally {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a SIGKILLed server leaves no process behind (its watchdog ends them)', async () => {
    const { client, transport } = await connect();
    const dir = tempDir();
    try {
      const f = join(dir, 'pids');
      await bash(client, { command: `sleep 300 & echo $! >> '${f}'`, });
      await bash(client, { command: `sleep 301 & echo $! >> '${f}'; setsid sleep 303 & echo $! >> '${f}'; wait`, run_in_background: true });
      const pending = bash(client, { command: `sleep 302 & echo $! >> '${f}'; echo $$ >> '${f}'; wait` }).catch(() => {});
      const pids = await readPids(f, 5);
      const serverPid = transport.pid;
      assert.ok(alive(serverPid));
      assert.ok(pids.every(alive));
      process.kill(serverPid, 'SIGKILL');
      const left = await waitGone([serverPid, ...pids], 5000);
      for (const pid of left) process.kill(pid, 'SIGKILL');
      assert.deepEqual(left, []);
      await pending;
    } finally {
      await client.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('close() leaves no process behind (foreground, background, leftovers)', async () => {
    const { client, transport } = await connect();
    const dir = tempDir();
    try {
      const f = join(dir, 'pids');
      await bash(client, { command: `sleep 300 & echo $! >> '${f}'`, });
      await bash(client, { command: `trap '' TERM; sleep 301 & echo $! >> '${f}'; wait`, run_in_background: true });
      const pending = bash(client, { command: `sleep 302 & echo $! >> '${f}'; wait` }).catch(() => {});
      const pids = await readPids(f, 3);
      const serverPid = transport.pid;
      assert.ok(alive(serverPid));
      const t0 = Date.now();
      await client.close();
      await pending;
      assert.ok(Date.now() - t0 < 4000, 'closed before the client had to SIGKILL');
      assert.deepEqual(await waitGone([serverPid, ...pids], 3000), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('--persist-env', () => {
  test('exports, a venv-style function and shell variable carry over; off they do not', async () => {
    let { client } = await connect(['--persist-env']);
    try {
      const b = (await client.listTools()).tools.find((t) => t.name === 'bash');
      assert.match(b.description, /Exported variables persist between calls/);
      await bash(client, { command: 'export GREETING=hello; _OLD=keep; act() { echo "act $_OLD"; }' });
      let t = text(await bash(client, { command: 'echo "$GREETING"; act' }));
      assert.match(t, /^stdout:\nhello\nact keep\n/);
      await bash(client, { command: 'unset GREETING' });
      t = text(await bash(client, { command: 'echo "${GREETING-unset}"' }));
      assert.match(t, /^stdout:\nunset\n/);
      // a call's own env is for that call only
      await bash(client, { command: 'true', env: { ONCE: '1' } });
      t = text(await bash(client, { command: 'echo "${ONCE-unset}"; export LD_PRELOAD=/x.so' }));
      assert.match(t, /^stdout:\nunset\n/);
      t = text(await bash(client, { command: 'echo "${LD_PRELOAD-none}"' }));
      assert.match(t, /^stdout:\nnone\n/);
    } finally {
      await client.close();
    }
    ({ client } = await connect());
    try {
      const b = (await client.listTools()).tools.find((t) => t.name === 'bash');
      assert.match(b.description, /exports do not persist between calls/);
      await bash(client, { command: 'export GREETING=hello' });
      const t = text(await bash(client, { command: 'echo "${GREETING-unset}"' }));
      assert.match(t, /^stdout:\nunset\n/);
    } finally {
      await client.close();
    }
  });

  test('with a POSIX shell the description says so, and that only exports persist', async () => {
    const { client } = await connect(['--persist-env', '--', '/bin/dash']);
    try {
      const b = (await client.listTools()).tools.find((t) => t.name === 'bash');
      assert.match(b.description, /^Run a shell command \(dash -c: a POSIX shell, not bash/);
      assert.match(b.description, /Exported variables persist between calls too/);
      assert.match(b.description, /shell variables that are not exported, functions, aliases/);
      await bash(client, { command: 'export KEPT=1; LOCAL=2' });
      const t = text(await bash(client, { command: 'echo "${KEPT-unset} ${LOCAL-unset}"' }));
      assert.match(t, /^stdout:\n1 unset\n/);
    } finally {
      await client.close();
    }
  });

  test('--persist-env with a remote wrapper kind is refused at start', async () => {
    await assert.rejects(connect(['--persist-env', '--wrapper-kind', 'remote', '--', 'sh']));
  });
});
