// Helpers of the binding's tests.
'use strict';

const fs = require('node:fs');
const { spawn } = require('node:child_process');
const path = require('node:path');

/** True while `pid` is a live process (not gone, not a zombie). */
function alive(pid) {
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (e) {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

/** Resolve once none of `pids` is alive; reject after `ms` naming the survivors. */
async function allGone(pids, ms = 10000) {
  const end = Date.now() + ms;
  for (;;) {
    const left = pids.filter(alive);
    if (left.length === 0) return;
    if (Date.now() > end) throw new Error(`processes still running: ${left.join(' ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The tests take the binding as a user does, require('shexec'). In the source
// tree that is examples/node itself (a package may require itself by name
// when its package.json has "exports"); test/node/run.sh runs copies of these
// files in a scratch project where the packed package is installed, so there
// it is node_modules/shexec, and names the source tree in SHEXEC_SOURCE_DIR.
const SOURCE_DIR = process.env.SHEXEC_SOURCE_DIR || path.resolve(__dirname, '..', '..', '..');

/**
 * Run `node -e script` with the binding; resolve {code, signal, stdout, stderr, ms}.
 * It runs in the directory above this one, where require('shexec') finds the
 * same package as the tests do.
 */
function nodeScript(script, { timeoutMs = 30000, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, ['-e', script], {
      cwd: path.join(__dirname, '..'),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node script did not exit within ${timeoutMs} ms: ${stdout} ${stderr}`));
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

module.exports = { alive, allGone, sleep, nodeScript, SOURCE_DIR };
