// What the model reads of a command's output (OUTPUT FOR MODELS in
// shexec.h) through shexec-mcp's flags: secrets hidden by default
// (--no-redact, --redact-glob, --redact-file), the whole text of a stream
// cut at its limit kept in a spill file (--spill-dir, --spill-keep,
// --spill-max), the truncation notice first (--notice-first), the first and
// the last part of a cut stream kept (--keep-tail), a limit that holds the
// truncation notice (--output-budget), and the startup errors of bad output
// flags.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVER, connect, text, bash, tempDir, sleep } from './util.mjs';

const dirs = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
function scratch() {
  const d = tempDir();
  dirs.push(d);
  return d;
}

// A GitHub token by its shape: ghp_ and 36 letters and digits.
const TOKEN = 'ghp_' + 'aB3dE5gH7jK9mN1pQ2sT4vW6yZ8cF0hJ2kL4';
assert.equal(TOKEN.length, 40);

// The marker line the text carries when secrets were hidden.
const REDACTED_LINE = /\nredacted: (\d+) \(secrets hidden from the output, each shown as \[REDACTED:NAME\]\)\n/;

async function withServer(args, env, fn) {
  const { client, transport } = await connect(args, { env });
  try {
    return await fn(client, transport);
  } finally {
    await client.close();
  }
}

// Wait until the server process has exited (close() gives it ~2 s).
async function waitExit(pid, ms = 5000) {
  const end = Date.now() + ms;
  while (existsSync(`/proc/${pid}`) && Date.now() < end) await sleep(20);
  return !existsSync(`/proc/${pid}`);
}

describe('redaction (on by default)', () => {
  test('a token in the environment becomes [REDACTED:GITHUB_TOKEN], in the result and in progress', async () => {
    await withServer([], { GITHUB_TOKEN: TOKEN }, async (client) => {
      const live = [];
      const r = await bash(client, { command: 'echo "$GITHUB_TOKEN"; echo "again $GITHUB_TOKEN" >&2' },
        { onprogress: (p) => { if (p.message) live.push(p.message); } });
      assert.equal(r.isError, false);
      const t = text(r);
      assert.ok(!t.includes(TOKEN), t);
      assert.ok(!t.includes(TOKEN.slice(4)), 'no part of the token after its prefix');
      assert.match(t, /^stdout:\n\[REDACTED:GITHUB_TOKEN\]\nstderr:\nagain \[REDACTED:GITHUB_TOKEN\]\n/);
      assert.equal(t.match(REDACTED_LINE)?.[1], '2', t);
      assert.ok(!live.join('').includes(TOKEN), 'progress carries no token');
    });
  });

  test('a key-shaped word is hidden under no sensitive name too; plain output has no redacted line', async () => {
    await withServer([], {}, async (client) => {
      let t = text(await bash(client, { command: `echo 'key: ${TOKEN}.'` }));
      assert.match(t, /^stdout:\nkey: \[REDACTED:GITHUB_TOKEN\]\.\n/);
      assert.equal(t.match(REDACTED_LINE)?.[1], '1', t);
      t = text(await bash(client, { command: 'echo hello' }));
      assert.doesNotMatch(t, /redacted:/);
    });
  });

  test('--no-redact shows the token and says nothing of redaction', async () => {
    await withServer(['--no-redact'], { GITHUB_TOKEN: TOKEN }, async (client) => {
      const t = text(await bash(client, { command: 'echo "$GITHUB_TOKEN"' }));
      assert.match(t, new RegExp(`^stdout:\\n${TOKEN}\\n`));
      assert.doesNotMatch(t, /REDACTED|redacted:/);
    });
  });

  test('--redact-glob replaces the default globs (key shapes stay on)', async () => {
    const env = { MY_DB_URL: 'postgres://u:pw@db/x', SERVICE_TOKEN: 'plain-token-value', GITHUB_TOKEN: TOKEN };
    await withServer(['--redact-glob', 'MY_*', '--redact-glob=NOTHING_ELSE'], env, async (client) => {
      const t = text(await bash(client, {
        command: 'echo "$MY_DB_URL"; echo "$SERVICE_TOKEN"; echo "$GITHUB_TOKEN"',
      }));
      assert.match(t, /^stdout:\n\[REDACTED:MY_DB_URL\]\nplain-token-value\n\[REDACTED:GITHUB_TOKEN\]\n/);
      assert.equal(t.match(REDACTED_LINE)?.[1], '2', t);
    });
  });

  test('--redact-file hides each VALUE under its NAME; comments and empty lines are skipped', async () => {
    const file = join(scratch(), 'secrets');
    writeFileSync(file, '# database\n\nDB_PASSWORD=hunter2-correct-horse\r\n' +
      'PHRASE=open sesame=now\n#IGNORED=not-a-secret-at-all\n');
    await withServer(['--redact-file', file], {}, async (client) => {
      const t = text(await bash(client, {
        command: "echo 'pw=hunter2-correct-horse'; echo 'say open sesame=now'; echo not-a-secret-at-all",
      }));
      assert.match(t, /^stdout:\npw=\[REDACTED:DB_PASSWORD\]\nsay \[REDACTED:PHRASE\]\nnot-a-secret-at-all\n/);
      assert.equal(t.match(REDACTED_LINE)?.[1], '2', t);
    });
  });
});

describe('spill files (--spill-dir)', () => {
  const HUNDRED_K = 'y'.repeat(100000) + '\n';
  const command = "head -c 100000 /dev/zero | tr '\\0' y; echo";

  // Run the 100000-character command; returns the spill path the text names.
  async function spillOnce(client, dir) {
    const r = await bash(client, { command });
    assert.equal(r.isError, false);
    const t = text(r);
    assert.ok(t.includes('y'.repeat(30000)) && !t.includes('y'.repeat(30001)));
    const m = t.match(/\nfull_output: stdout in (\/\S+) \(the whole stream, 100001 bytes: /);
    assert.ok(m, t.slice(30000));
    const path = m[1];
    assert.equal(join(dir, path.slice(dir.length + 1)), path, 'in the spill directory');
    // the notice in the kept text names the same file
    assert.ok(t.includes(`omitted; full output (100001 bytes) in ${path}]`), t.slice(30000));
    assert.doesNotMatch(t, /full_output: stderr/);
    assert.equal(readFileSync(path, 'latin1'), HUNDRED_K, 'the whole stream, byte for byte');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    return path;
  }

  test('the text names the file, which holds the whole stream; it is gone once the server exits', async () => {
    const dir = scratch();
    const { client, transport } = await connect(['--spill-dir', dir]);
    const pid = transport.pid;
    let path;
    try {
      path = await spillOnce(client, dir);
      // within its limit: no file, no full_output line
      const t = text(await bash(client, { command: 'seq 3' }));
      assert.doesNotMatch(t, /full_output/);
      assert.deepEqual(readdirSync(dir), [path.slice(dir.length + 1)]);
    } finally {
      await client.close();
    }
    assert.ok(await waitExit(pid), 'the server exited');
    assert.ok(!existsSync(path), `${path} removed at exit`);
  });

  test('--spill-keep leaves the file after the server exits', async () => {
    const dir = scratch();
    const { client, transport } = await connect(['--spill-dir', dir, '--spill-keep']);
    const pid = transport.pid;
    let path;
    try {
      path = await spillOnce(client, dir);
    } finally {
      await client.close();
    }
    assert.ok(await waitExit(pid), 'the server exited');
    assert.equal(readFileSync(path, 'latin1'), HUNDRED_K);
  });

  test('stderr is kept apart; --spill-max caps the file and the text says so', async () => {
    const dir = scratch();
    await withServer(['--spill-dir', dir, '--spill-max', '64K'], {}, async (client) => {
      const t = text(await bash(client, { command: "head -c 100000 /dev/zero | tr '\\0' e >&2" }));
      const m = t.match(/\nfull_output: stderr in (\/\S+) \(only its first (\d+) bytes: the spill file's cap\)\n/);
      assert.ok(m, t.slice(30000));
      assert.doesNotMatch(t, /full_output: stdout/);
      const kept = readFileSync(m[1], 'latin1');
      assert.ok(kept.startsWith('e'.repeat(60000)), 'the head of the stream');
      assert.ok(Number(m[2]) <= 65536 && Number(m[2]) >= 60000, m[2]);
    });
  });

  test('a background task read with task_output names its spill file too', async () => {
    const dir = scratch();
    await withServer(['--spill-dir', dir], {}, async (client) => {
      const started = text(await bash(client, { command, run_in_background: true }));
      const id = started.match(/^task_id: (\S+)/)[1];
      let t;
      const end = Date.now() + 10000;
      do {
        t = text(await client.callTool({ name: 'task_output', arguments: { task_id: id, yield_time_ms: 1000 } }));
      } while (/status: running/.test(t) && Date.now() < end);
      assert.match(t, /status: completed\nexit_code: 0\n/);
      const m = t.match(/\nfull_output: stdout in (\/\S+) \(the whole stream, 100001 bytes: /);
      assert.ok(m, t.slice(30000));
      assert.equal(readFileSync(m[1], 'latin1'), HUNDRED_K);
    });
  });

  test('without --spill-dir nothing is written and the text names no file', async () => {
    await withServer([], {}, async (client) => {
      const t = text(await bash(client, { command }));
      assert.match(t, /\[output truncated: kept the first 30000 characters \(30000 bytes\) of 100001 \(100001 bytes, 1 lines\); 70001 characters \(70001 bytes\) omitted\]\n/);
      assert.doesNotMatch(t, /full_output|full output/);
    });
  });
});

describe('--notice-first', () => {
  test('the truncation notice comes before the kept text', async () => {
    await withServer(['--notice-first'], {}, async (client) => {
      const t = text(await bash(client, { command: "head -c 50000 /dev/zero | tr '\\0' x" }));
      const notice = '[output truncated: kept the first 30000 characters (30000 bytes) of 50000 ' +
        '(50000 bytes, 1 lines); 20000 characters (20000 bytes) omitted]\n';
      assert.ok(t.startsWith('stdout:\n' + notice + 'x'.repeat(30000) + '\n'), t.slice(0, 200));
      assert.equal((t.match(/output truncated/g) || []).length, 1);
    });
  });
});

describe('--keep-tail', () => {
  test('a cut stream keeps its first and its last 15000 characters', async () => {
    await withServer(['--keep-tail'], {}, async (client) => {
      const command = "head -c 50000 /dev/zero | tr '\\0' x; echo; echo 'FAILED: 3 tests'";
      const t = text(await bash(client, { command }));
      const tail = 'x'.repeat(15000 - 17) + '\nFAILED: 3 tests\n';
      assert.ok(t.startsWith('stdout:\n' + 'x'.repeat(15000) + '\n[... 20017 characters (20017 bytes) omitted ...]\n' + tail), t.slice(0, 200));
      assert.match(t, /\[output truncated: kept the first 15000 and the last 15000 characters \(15000 \+ 15000 bytes\) of 50017 \(50017 bytes, 2 lines\); 20017 characters \(20017 bytes\) omitted in the middle\]/);
      // within the limit nothing changes
      const short = text(await bash(client, { command: 'echo short' }));
      assert.ok(short.startsWith('stdout:\nshort\nexit_code: 0\n'), short);
      assert.doesNotMatch(short, /omitted|truncated/);
    });
  });
});

describe('--output-budget', () => {
  // Characters as the library counts them: each code point once.
  const chars = (s) => [...s].length;
  // The text of a result's stream section (what follows "stdout:\n" up to
  // the notice's end).
  function section(t, name) {
    const at = t.indexOf(name + ':\n') + name.length + 2;
    const notice = t.indexOf('[output truncated', at);
    return t.slice(at, t.indexOf(']\n', notice) + 2);
  }

  test('each stream, notice and spill path included, is at most CHARS characters', async () => {
    const dir = scratch();
    await withServer(['--output-budget', '600', '--spill-dir', dir], {}, async (client) => {
      const command = "for i in $(seq 5000); do echo \"$i é€😀\"; done; seq 1 9000 >&2";
      const r = await bash(client, { command });
      const t = text(r);
      for (const name of ['stdout', 'stderr']) {
        const s = section(t, name);
        assert.ok(chars(s) <= 600 && chars(s) > 590, `${name}: ${chars(s)}: ${s}`);
        assert.match(s, /\n\[output truncated: kept the first \d+ characters \(\d+ bytes\) of \d+ \(\d+ bytes, (5000|9000) lines\); .* omitted; full output \(\d+ bytes\) in \//);
        assert.ok(!s.includes('\ufffd'));
      }
      assert.ok(section(t, 'stdout').startsWith('1 é€😀\n2 é€😀\n'));
      // within the budget nothing changes
      assert.ok(text(await bash(client, { command: 'echo short' })).startsWith('stdout:\nshort\nexit_code: 0\n'));
    });
  });

  test('with --keep-tail: head and tail, marker and notice within the budget', async () => {
    await withServer(['--output-budget', '600', '--keep-tail'], {}, async (client) => {
      const t = text(await bash(client, { command: 'seq 1 20000' }));
      const s = section(t, 'stdout');
      assert.ok(chars(s) <= 600 && chars(s) > 590, `${chars(s)}: ${s}`);
      assert.ok(s.startsWith('1\n2\n3\n'), s);
      assert.match(s, /\n\[\.\.\. \d+ characters \(\d+ bytes\) omitted \.\.\.\]\n/);
      assert.match(s, /\n20000\n\n\[output truncated: kept the first \d+ and the last \d+ characters .* omitted in the middle\]\n$/);
    });
  });
});

describe('bad output flags stop the server at startup', () => {
  // Start the server with args; it must exit non-zero at once, saying why.
  function refused(args, message) {
    const r = spawnSync(SERVER, args, { input: '', encoding: 'utf8', timeout: 10000 });
    assert.notEqual(r.status, 0, `${args.join(' ')}: exit status ${r.status}`);
    assert.equal(r.stdout, '', 'nothing on stdout');
    assert.match(r.stderr, message);
    return r.stderr;
  }

  test('--spill-dir wants an absolute path to a directory', () => {
    refused(['--spill-dir', 'relative/dir'], /--spill-dir relative\/dir: .*absolute/);
    const file = join(scratch(), 'plain-file');
    writeFileSync(file, '');
    refused(['--spill-dir', file], /--spill-dir /);
    refused(['--spill-dir', join(scratch(), 'missing')], /--spill-dir /);
  });

  test('--spill-keep and --spill-max need --spill-dir; --spill-max wants a size', () => {
    refused(['--spill-keep'], /--spill-keep needs --spill-dir/);
    refused(['--spill-max', '1M'], /--spill-max needs --spill-dir/);
    refused(['--spill-dir', scratch(), '--spill-max', 'lots'], /--spill-max: "lots" is no size/);
  });

  test('--redact-file: a missing file, a bad line (by its number, never its text)', () => {
    const dir = scratch();
    refused(['--redact-file', join(dir, 'missing')], /--redact-file .*missing: No such file or directory/);
    const noEquals = join(dir, 'no-equals');
    writeFileSync(noEquals, '# ok\nGOOD=abcdefgh\n\nsupersecret-without-a-name\n');
    let err = refused(['--redact-file', noEquals], /line 4 is not NAME=VALUE/);
    assert.ok(!err.includes('supersecret'), err);
    const badName = join(dir, 'bad-name');
    writeFileSync(badName, 'BAD NAME=supersecret-value\n');
    err = refused(['--redact-file', badName], /line 1: a redaction name is/);
    assert.ok(!err.includes('supersecret'), err);
    const short = join(dir, 'short');
    writeFileSync(short, 'GOOD=abcdefgh\nSHORT=q7z\n');
    err = refused(['--redact-file', short], /line 2: a redacted value is 4 to 65536 bytes/);
    assert.ok(!err.includes('q7z'), err);
  });

  test('--output-budget wants a whole number of characters', () => {
    refused(['--output-budget', 'lots'], /--output-budget wants a whole number of characters/);
    // one message, with the range
    const err = refused(['--output-budget', '0'], /--output-budget wants a whole number of characters from 1 to 1073741824, not "0"/);
    assert.equal(err.trim().split('\n').length, 1, err);
  });

  test('--no-redact with --redact-glob or --redact-file is a contradiction', () => {
    refused(['--no-redact', '--redact-glob', 'X_*'], /--no-redact contradicts --redact-glob/);
    const file = join(scratch(), 'secrets');
    writeFileSync(file, 'A_SECRET=abcdefgh\n');
    refused(['--redact-file', file, '--no-redact'], /--no-redact contradicts --redact-file/);
  });

  test('--help lists the output flags', () => {
    const r = spawnSync(SERVER, ['--help'], { encoding: 'utf8' });
    assert.equal(r.status, 0);
    for (const flag of ['--spill-dir DIR', '--spill-keep', '--spill-max BYTES', '--notice-first',
      '--keep-tail', '--output-budget CHARS', '--redact-glob GLOB', '--redact-file FILE',
      '--no-redact']) {
      assert.ok(r.stdout.includes(flag), flag);
    }
  });
});
