// Output for models (shexec.h, OUTPUT FOR MODELS): the truncation notice and
// its position, spill files, redaction.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { Session, InvalidArgumentError, StateError } = require('shexec');

/** A command printing n copies of one ASCII character, no newline. */
const xs = (n, ch = 'x') => `head -c ${n} /dev/zero | tr '\\0' ${ch}`;

// A key shape: "ghp_" and 36 letters or digits, as GitHub's tokens are.
const GHP = 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
const PEM = '-----BEGIN OPENSSH PRIVATE KEY-----\n'
  + 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n'
  + '-----END OPENSSH PRIVATE KEY-----\n';

/** A directory for spill files, removed once the test ends. */
function tempDir(t) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'shexec-spill-test-'));
  t.after(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

test('notice: what was kept and what was left out, in characters and bytes', async () => {
  const s = new Session();
  try {
    const r = await s.run("for i in $(seq 100); do printf '\\303\\251'; done", { outputLimit: 10 });
    assert.equal(r.stdout, 'é'.repeat(10) + '\n[output truncated: kept the first 10 characters (20 bytes) '
      + 'of 100 (200 bytes, 1 lines); 90 characters (180 bytes) omitted]\n');
    const r2 = await s.run(`printf ab; ${xs(96)}; printf yz`, { outputLimit: 4, outputKeep: 'head_tail' });
    assert.equal(r2.stdout, 'ab\n[... 96 characters (96 bytes) omitted ...]\nyz\n'
      + '[output truncated: kept the first 2 and the last 2 characters (2 + 2 bytes) of 100 '
      + '(100 bytes, 1 lines); 96 characters (96 bytes) omitted in the middle]\n');
  } finally {
    await s.close();
  }
});

/** {keptChars, keptBytes, totalChars, totalBytes, totalLines} in the order the counts are read
 * (by default one line, none when empty). */
const counts = (keptChars, keptBytes, totalChars, totalBytes, totalLines = totalBytes ? 1 : 0) =>
  ({ keptChars, keptBytes, totalChars, totalBytes, totalLines });

test('outputWithinLimit: a 600-character limit holds the notice, its spill path, the marker', async (t) => {
  const d = tempDir(t);
  const s = new Session({ spillDir: d });
  try {
    assert.equal(s.settings.outputWithinLimit, false);
    const cmd = 'for i in $(seq 3000); do echo "$i é€😀"; done; seq 1 9000 >&2';
    for (const outputUnit of ['chars', 'bytes']) {
      for (const outputKeep of ['head', 'head_tail']) {
        const r = await s.run(cmd, { outputLimit: 600, outputUnit, outputKeep, outputWithinLimit: true });
        for (const text of [r.stdout, r.stderr]) {
          const size = outputUnit === 'bytes' ? Buffer.byteLength(text) : [...text].length;
          assert.ok(size <= 600 && size > 590, `${outputUnit} ${outputKeep}: ${size}: ${text}`);
          assert.ok(!text.includes('\ufffd'), text); // never a split character
          assert.match(text, /\[output truncated: kept the first .*; full output \(\d+ bytes\) in \//);
        }
        assert.ok(r.stdout.startsWith('1 é€😀\n2 '), r.stdout);
        assert.equal(r.counts.stdout.totalLines, 3000);
        assert.equal(r.counts.stderr.totalLines, 9000);
      }
    }
    // the session's setting, and off: the notice on top of 600 characters
    const s2 = new Session({ outputLimit: 600, outputWithinLimit: true, outputKeep: 'head_tail' });
    assert.deepEqual([s2.settings.outputKeep, s2.settings.outputWithinLimit], ['head_tail', true]);
    assert.ok([...(await s2.run(cmd)).stdout].length <= 600);
    await s2.close();
    assert.ok([...(await s.run(cmd, { outputLimit: 600 })).stdout].length > 700);
  } finally {
    await s.close();
  }
});

test('counts: what the output limit kept and what the stream carried, as numbers', async () => {
  const s = new Session({ outputLimit: 30000 });
  try {
    const r = await s.run(`${xs(50000)}; echo oops >&2`);
    assert.deepEqual(r.counts.stdout, counts(30000, 30000, 50000, 50000));
    assert.deepEqual(r.counts.stderr, counts(5, 5, 5, 5)); // within its limit: all of it kept
    // two-byte characters: characters and bytes part
    const wide = await s.run('cat', { stdin: 'é'.repeat(40000) });
    assert.equal(wide.truncated.stdout, true);
    assert.deepEqual(wide.counts.stdout, counts(30000, 60000, 40000, 80000));
    // an invalid byte counts as one character
    assert.deepEqual((await s.run("printf 'a\\377b'")).counts.stdout, counts(3, 3, 3, 3));
    const ht = await s.run(`printf ab; ${xs(96)}; printf yz`, { outputLimit: 4, outputKeep: 'head_tail' });
    assert.deepEqual(ht.counts.stdout, counts(4, 4, 100, 100));
    assert.deepEqual(s.runSync(xs(500), { outputLimit: 100 }).counts.stdout, counts(100, 100, 500, 500));
    // the tool layer says what it left out
    s.setToolEnabled('bash');
    const res = await s.callTool('bash', { command: xs(30500) });
    assert.deepEqual(res.omitted, { stdout: { characters: 500, bytes: 500 } });
  } finally {
    await s.close();
  }
});

test('counts: a task\'s are read live, then are the result\'s', async () => {
  const s = new Session({ outputLimit: 1000 });
  try {
    const task = s.start(`${xs(4000)}; sleep 30`);
    let got = 0;
    await new Promise((resolve) => task.on('output', (data) => {
      got += data.length;
      if (got >= 1000) resolve();
    }));
    // the output is cut at the limit: wait for all 4000 bytes to be counted
    const deadline = Date.now() + 5000;
    while (task.counts().totalBytes < 4000 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.deepEqual(task.counts(), counts(1000, 1000, 4000, 4000));
    assert.deepEqual(task.counts('stderr'), counts(0, 0, 0, 0));
    assert.throws(() => task.counts('stdin'), InvalidArgumentError);
    const done = await task.kill();
    assert.deepEqual(done.counts.stdout, counts(1000, 1000, 4000, 4000));
    assert.deepEqual(task.counts('stdout'), done.counts.stdout);
  } finally {
    await s.close();
  }
});

test('notice first: before the kept text', async () => {
  const s = new Session({ noticePosition: 'first' });
  try {
    assert.equal(s.settings.noticePosition, 'first');
    const r = await s.run(xs(100), { outputLimit: 10, outputUnit: 'bytes' });
    assert.equal(r.stdout, '[output truncated: kept the first 10 characters (10 bytes) of 100 (100 bytes, 1 lines); '
      + '90 characters (90 bytes) omitted]\n' + 'x'.repeat(10));
    assert.equal((await s.run('echo short')).stdout, 'short\n');
    s.setNoticePosition('last');
    assert.equal(s.settings.noticePosition, 'last');
    assert.ok((await s.run(xs(100), { outputLimit: 10 })).stdout.startsWith('x'.repeat(10) + '\n['));
    assert.throws(() => s.setNoticePosition('middle'), InvalidArgumentError);
    assert.throws(() => new Session({ noticePosition: 'middle' }), InvalidArgumentError);
    assert.equal(s.settings.noticePosition, 'last');
  } finally {
    await s.close();
  }
});

test('spill: the whole output byte for byte in a file the notice names, removed with the session', async (t) => {
  const d = tempDir(t);
  const data = crypto.randomBytes(100000).toString('hex'); // 200000 ASCII characters
  fs.writeFileSync(path.join(d, 'source.txt'), data);
  const s = new Session({ spillDir: d, outputLimit: 1000 });
  assert.equal(s.settings.spillDir, d);
  const r = await s.run('cat source.txt; echo small >&2', { cwd: d });
  const { state, path: file, bytes, error } = r.spill.stdout;
  assert.deepEqual([state, bytes, error], ['whole', 200000, 0]);
  assert.equal(path.dirname(file), d);
  assert.match(path.basename(file), new RegExp(`^shexec-${process.pid}-\\d+-stdout\\.txt$`));
  assert.equal(fs.readFileSync(file, 'latin1'), data);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.equal(r.stdout, data.slice(0, 1000) + '\n[output truncated: kept the first 1000 characters (1000 bytes) '
    + 'of 200000 (200000 bytes, 1 lines); 199000 characters (199000 bytes) omitted; full output (200000 bytes) in '
    + `${file}]\n`);
  assert.deepEqual(r.spill.stderr, { state: 'none', path: null, bytes: 0, error: 0 });
  assert.deepEqual(fs.readdirSync(d).sort(), [path.basename(file), 'source.txt'].sort());
  await s.close();
  assert.equal(fs.existsSync(file), false);
  assert.deepEqual(fs.readdirSync(d), ['source.txt']);
});

test('spill: keepFiles leaves them; turned off removes them', async (t) => {
  const d = tempDir(t);
  const kept = new Session({ spillDir: d, spillKeepFiles: true, outputLimit: 100 });
  const file = (await kept.run(xs(5000))).spill.stdout.path;
  await kept.close();
  assert.equal(fs.readFileSync(file, 'utf8'), 'x'.repeat(5000));
  fs.rmSync(file);

  const s = new Session({ outputLimit: 100 });
  try {
    s.setSpillDir(d);
    const f2 = (await s.run(xs(5000))).spill.stdout.path;
    assert.ok(fs.existsSync(f2));
    s.setSpillDir(null);
    assert.equal(s.settings.spillDir, null);
    assert.equal(fs.existsSync(f2), false);
    const r = await s.run(xs(5000));
    assert.equal(r.spill.stdout.state, 'none');
    assert.doesNotMatch(r.stdout, /full output/);
    assert.deepEqual(fs.readdirSync(d), []);
  } finally {
    await s.close();
  }
});

test('spill: a file cap, and the budget that removes the oldest file', async (t) => {
  const d = tempDir(t);
  const s = new Session({ spillDir: d, spillFileMax: 5000, spillTotalMax: 8000, outputLimit: 1000 });
  try {
    const r = await s.run(xs(20000));
    const sp = r.spill.stdout;
    assert.deepEqual([sp.state, sp.bytes], ['capped', 5000]);
    assert.ok(fs.readFileSync(sp.path, 'utf8').startsWith('x'.repeat(5000) + '\n'));
    assert.ok(r.stdout.endsWith(`; the first 5000 bytes in ${sp.path} (15000 more bytes not saved: spill cap)]\n`));
    // a task's spill is read live while it runs
    const task = s.start(`${xs(4000, 't')}; sleep 30`);
    let got = 0;
    await new Promise((resolve) => task.on('output', (data) => {
      got += data.length;
      if (got >= 4000) resolve();
    }));
    const live = task.spill();
    assert.deepEqual([live.state, live.bytes], ['writing', 4000]);
    assert.match(task.output(), /; full output so far \(4000 bytes\) in .*-stdout\.txt\]\n$/);
    const done = await task.kill();
    assert.deepEqual([done.spill.stdout.state, done.spill.stdout.bytes], ['whole', 4000]);
    assert.deepEqual(task.spill('stdout'), done.spill.stdout); // the result, once ended
    // the first file was removed to make room for the task's; the task's for the next
    assert.equal(fs.existsSync(sp.path), false);
    await s.run(xs(5000, 'y'));
    assert.equal(fs.existsSync(done.spill.stdout.path), false);
  } finally {
    await s.close();
  }
});

test('spill: a failed spill changes no result, and says why', async (t) => {
  const gone = path.join(tempDir(t), 'gone');
  fs.mkdirSync(gone);
  const s = new Session({ spillDir: gone, outputLimit: 100 });
  try {
    fs.rmdirSync(gone);
    const r = await s.run(`${xs(2000)}; exit 3`);
    assert.deepEqual([r.state, r.exitCode], ['exited', 3]);
    assert.deepEqual(r.spill.stdout, { state: 'failed', path: null, bytes: 0, error: os.constants.errno.ENOENT });
    assert.ok(r.stdout.endsWith('; full output not saved: the spill failed (the directory is gone)]\n'));
  } finally {
    await s.close();
  }
});

test('spill: bad arguments change nothing', async (t) => {
  const d = tempDir(t);
  const s = new Session({ spillDir: d });
  try {
    for (const bad of ['relative/dir', path.join(d, 'missing'), __filename, '']) {
      assert.throws(() => s.setSpillDir(bad), InvalidArgumentError);
    }
    assert.throws(() => s.setSpillDir(d, { fileMax: 10, totalMax: 5 }), InvalidArgumentError);
    for (const bad of [-1, 1.5, 2 ** 60]) assert.throws(() => s.setSpillDir(d, { fileMax: bad }), InvalidArgumentError);
    assert.throws(() => new Session({ spillDir: 'relative' }), InvalidArgumentError);
    assert.throws(() => new Session({ spillKeepFiles: true }), InvalidArgumentError); // without spillDir
    assert.equal(s.settings.spillDir, d);
  } finally {
    await s.close();
  }
});

test('redaction: a value becomes [REDACTED:NAME] in chunks, results, spill files and tool results', async (t) => {
  const d = tempDir(t);
  const s = new Session({ redactValues: { API_KEY: 's3cr3t-value' }, spillDir: d });
  try {
    const chunks = [];
    // written in pieces, and on both streams
    const r = await s.run("printf 'key=s3cr'; sleep 0.1; printf '3t-value done\\n'; echo s3cr3t-values >&2", {
      onOutput: (data, stream) => chunks.push([stream, data]),
    });
    assert.equal(r.stdout, 'key=[REDACTED:API_KEY] done\n');
    assert.equal(r.stderr, '[REDACTED:API_KEY]s\n');
    assert.equal(chunks.filter(([st]) => st === 'stdout').map(([, c]) => c).join(''), r.stdout);
    assert.deepEqual(r.redactions, { stdout: 1, stderr: 1 });
    assert.deepEqual((await s.run('echo nothing')).redactions, { stdout: 0, stderr: 0 });
    // bytes that are not UTF-8
    s.redactValue('RAW', Buffer.from([0xff, 0xfe, 0x00, 0x01]));
    const raw = await s.run("printf 'a\\377\\376\\000\\001b'", { encoding: 'buffer' });
    assert.deepEqual(raw.stdout, Buffer.from('a[REDACTED:RAW]b'));
    const big = await s.run(`echo s3cr3t-value; ${xs(3000)}`, { outputLimit: 100 });
    assert.equal(fs.readFileSync(big.spill.stdout.path, 'utf8'), '[REDACTED:API_KEY]\n' + 'x'.repeat(3000));
    s.setToolEnabled('bash');
    const res = await s.callTool('bash', { command: 'echo s3cr3t-value' });
    assert.equal(res.stdout, '[REDACTED:API_KEY]\n');
    // runSync() and a task likewise
    assert.equal(s.runSync('echo s3cr3t-value').stdout, '[REDACTED:API_KEY]\n');
    const task = s.start('echo s3cr3t-value');
    const done = await task.done;
    assert.equal(done.stdout, '[REDACTED:API_KEY]\n');
    assert.equal(task.redactions('stdout'), 1);
  } finally {
    await s.close();
  }
});

test('redaction: per run values, and the run\'s own environment', async () => {
  const s = new Session();
  try {
    const r = await s.run('echo one-secret two-secret', {
      redactValues: { ONE: 'one-secret', TWO: Buffer.from('two-secret') },
    });
    assert.equal(r.stdout, '[REDACTED:ONE] [REDACTED:TWO]\n');
    assert.equal(r.redactions.stdout, 2);
    assert.equal((await s.run('echo one-secret')).stdout, 'one-secret\n'); // that run only
    const cmd = 'echo "$RUN_TOKEN"';
    const env = { RUN_TOKEN: 'run-token-value' };
    assert.equal((await s.run(cmd, { env })).stdout, 'run-token-value\n');
    // the default globs, as the session has none
    assert.equal((await s.run(cmd, { env, redactOwnEnv: true })).stdout, '[REDACTED:RUN_TOKEN]\n');
    s.redactEnv(['*NOTHING*']);
    assert.equal((await s.run(cmd, { env, redactOwnEnv: true })).stdout, 'run-token-value\n');
  } finally {
    await s.close();
  }
});

test('redaction: environment globs', async () => {
  const env = { SHX_TEST_TOKEN: 'tok-1234567890', SHX_PLAIN: 'plain-1234567890', SHX_SHORT_TOKEN: 'short' };
  const cmd = 'echo "$SHX_TEST_TOKEN $SHX_PLAIN $SHX_SHORT_TOKEN"';
  const s = new Session({ env });
  const d = new Session({ env, redactEnv: true }); // the defaults, *TOKEN* among them
  try {
    assert.equal((await s.run(cmd)).stdout, 'tok-1234567890 plain-1234567890 short\n');
    const r = await d.run(cmd);
    // values under 8 bytes are left alone
    assert.equal(r.stdout, '[REDACTED:SHX_TEST_TOKEN] plain-1234567890 short\n');
    assert.equal(r.redactions.stdout, 1);
    s.redactEnv();
    assert.equal((await s.run(cmd)).stdout, '[REDACTED:SHX_TEST_TOKEN] plain-1234567890 short\n');
    s.redactEnv(['shx_pl*']); // case ignored
    assert.equal((await s.run(cmd)).stdout, 'tok-1234567890 [REDACTED:SHX_PLAIN] short\n');
    s.redactEnv([]); // off
    assert.equal((await s.run(cmd)).stdout, 'tok-1234567890 plain-1234567890 short\n');
    assert.throws(() => s.redactEnv(['*KEY*', '']), InvalidArgumentError);
    assert.throws(() => s.redactEnv('*KEY*'), TypeError);
  } finally {
    await s.close();
    await d.close();
  }
});

test('redaction: key shapes and private keys, and clearing everything', async () => {
  const plain = `token ${GHP} end\n${PEM}`;
  const s = new Session();
  const cat = () => s.run('cat', { stdin: plain });
  try {
    assert.equal((await cat()).stdout, plain);
    s.redactShapes();
    const r = await cat();
    assert.equal(r.stdout, 'token [REDACTED:GITHUB_TOKEN] end\n[REDACTED:PRIVATE_KEY]\n');
    assert.equal(r.redactions.stdout, 2);
    assert.equal((await s.run('echo ghp_abc')).stdout, 'ghp_abc\n'); // too short to be a key
    s.redactShapes({ keys: true });
    assert.equal((await cat()).stdout, `token [REDACTED:GITHUB_TOKEN] end\n${PEM}`);
    s.redactShapes({ privateKeys: true });
    assert.equal((await cat()).stdout, `token ${GHP} end\n[REDACTED:PRIVATE_KEY]\n`);
    s.redactShapes(false);
    assert.equal((await cat()).stdout, plain);
    assert.throws(() => s.redactShapes({ pem: true }), InvalidArgumentError);
    s.redactShapes(true);
    s.redactValue('WORD', 'token ');
    s.redactEnv();
    s.redactClear();
    assert.equal((await cat()).stdout, plain);
    const o = new Session({ redactShapes: { keys: true } });
    assert.equal((await o.run('cat', { stdin: plain })).stdout, `token [REDACTED:GITHUB_TOKEN] end\n${PEM}`);
    await o.close();
  } finally {
    await s.close();
  }
});

test('redaction: bad arguments', async () => {
  const s = new Session();
  try {
    const bad = [['SHORT', 'ab'], ['SHORT', ''], ['BIG', Buffer.alloc(65537)], ['bad-name', 'long-enough'],
      ['', 'long-enough'], ['N'.repeat(65), 'long-enough']];
    for (const [name, value] of bad) {
      assert.throws(() => s.redactValue(name, value), InvalidArgumentError, `${name}`);
      await assert.rejects(s.run('true', { redactValues: { [name]: value } }), InvalidArgumentError);
      assert.throws(() => s.runSync('true', { redactValues: { [name]: value } }), InvalidArgumentError);
      assert.throws(() => s.start('true', { redactValues: { [name]: value } }), InvalidArgumentError);
    }
    assert.throws(() => new Session({ redactValues: { X: 'ab' } }), InvalidArgumentError);
    s.redactValue('N'.repeat(64), Buffer.alloc(65536, 'x')); // the bounds themselves
    assert.throws(() => s.redactValue('NAME', 12345678), TypeError);
    await assert.rejects(s.run('true', { redactValues: 'secret' }), TypeError);
    assert.equal((await s.run('echo ok')).stdout, 'ok\n');
  } finally {
    await s.close();
  }
  // a closed session refuses them
  assert.throws(() => s.redactValue('NAME', 'long-enough'), StateError);
  assert.throws(() => s.setSpillDir(null), StateError);
});
