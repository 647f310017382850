// Task.toolResult(): a task as the task tools' JSON result, with the output
// the host read given as its output, live and once the task ended.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const shexec = require('shexec');

const { Session } = shexec;

/** Resolve once the task's stdout has carried `text`. */
function outputSeen(task, text) {
  return new Promise((resolve) => {
    let seen = '';
    const onOutput = (data, stream) => {
      if (stream !== 'stdout') return;
      seen += data;
      if (seen.includes(text)) {
        task.off('output', onOutput);
        resolve();
      }
    };
    task.on('output', onOutput);
  });
}

test('toolResult: an ended task with the output read, exit code and state', async () => {
  const s = new Session();
  try {
    const t = s.start('echo hi; echo oops >&2; exit 4');
    await t.done;
    const out = t.read();
    assert.equal(out, 'hi\n');
    assert.deepEqual(t.toolResult({ stdout: out }), {
      task_id: t.id,
      status: 'completed',
      stdout: 'hi\n',
      stderr: '',
      exit_code: 4,
      state: 'exited',
      truncated: { stdout: false, stderr: false },
    });
    // the status is passed through, the output may be a Buffer
    const killed = t.toolResult({ stdout: 'said\n', stderr: Buffer.from('err\n'), status: 'killed' });
    assert.deepEqual([killed.status, killed.stdout, killed.stderr, killed.exit_code, killed.state],
      ['killed', 'said\n', 'err\n', 4, 'exited']);
    // each call gives an object of its own
    killed.truncated.stdout = true;
    assert.equal(t.toolResult().truncated.stdout, false);
    // nothing was read: stderr still waits
    assert.equal(t.read('stderr'), 'oops\n');
    assert.throws(() => t.toolResult({ stdout: 4 }), TypeError);
    assert.throws(() => t.toolResult({ status: 'com\0pleted' }), shexec.InvalidArgumentError);
  } finally {
    await s.close();
  }
});

test('toolResult: a running task reads as task_output gives it, and its output the same before and after the end',
  async () => {
    // no input look: waiting_for_input stays false whatever the timing
    const s = new Session({ inputLookMs: 0 });
    try {
      s.setToolEnabled('task_output');
      const t = s.start('printf hi; cat', { stdin: true });
      await outputSeen(t, 'hi');
      const mine = t.toolResult({ stdout: t.output() });
      assert.deepEqual(mine, {
        task_id: t.id,
        status: 'running',
        stdout: 'hi',
        stderr: '',
        waiting_for_input: false,
        truncated: { stdout: false, stderr: false },
      });
      assert.deepEqual(mine, await s.callTool('task_output', { task_id: t.id }));
      // bytes that are not UTF-8: the library's U+FFFD for each bad byte, while
      // the C task is there and from what was kept once it is gone
      const bad = Buffer.from([0x61, 0xe2, 0x82, 0x62, 0xff, 0xf0, 0x9f, 0x98, 0x80]);
      const live = t.toolResult({ stdout: bad, stderr: 'é' });
      assert.equal(live.stdout, 'a\uFFFD\uFFFDb\uFFFD\u{1F600}');
      t.closeStdin();
      const done = await t.done;
      assert.equal(done.exitCode, 0);
      const ended = t.toolResult({ stdout: bad, stderr: 'é' });
      assert.deepEqual([ended.stdout, ended.stderr], [live.stdout, live.stderr]);
      assert.deepEqual([ended.status, ended.exit_code, ended.state], ['completed', 0, 'exited']);
      assert.equal('waiting_for_input' in ended, false);
    } finally {
      await s.close();
    }
  });

test('toolResult: what the output limit left out is there once the task ended', async () => {
  const s = new Session({ outputLimit: 100 });
  try {
    const t = s.start('head -c 300 /dev/zero | tr "\\0" x');
    await t.done;
    const res = t.toolResult({ stdout: t.read() });
    assert.deepEqual(res.truncated, { stdout: true, stderr: false });
    assert.deepEqual(res.omitted, { stdout: { characters: 200, bytes: 200 } });
    assert.ok(res.stdout.startsWith('x'.repeat(100)), res.stdout);
  } finally {
    await s.close();
  }
});
