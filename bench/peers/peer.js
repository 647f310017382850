// peer.js - the Node contender of the libshexec benchmark.
//
// Runs one measurement the way a Node agent host runs commands, with Node's
// standard library only, and prints one line "RESULT key=value ..." for the
// C driver (bench/main.c) to parse. Anything wrong (a non-zero exit, a short
// read) throws, so node exits non-zero and the driver stops.
//
//   peer.js version
//   peer.js spawn async|sync|shexec SHELL N HOST_MIB [BUDGET_S]
//                                  sequential spawns of `true`; shexec: through
//                                  the Node binding of libshexec (examples/node,
//                                  $SHEXEC_NODE overrides its path), or
//                                  runs_per_s=-1 when it is not installed
//   peer.js stream CMD [stderr]    spawn + 'data' events to 'close' (stdout,
//                                  or stderr with the argument)
//   peer.js idle CMD               context switches over one run
//   peer.js latency CMD N          'data' latency of timestamped lines
//   peer.js concurrency K CMD      K spawns at once, Promise.all

'use strict';

const cp = require('child_process');

const SH = '/bin/sh';

function result(kv) {
  const parts = Object.entries(kv).map(([k, v]) => `${k}=${v}`);
  process.stdout.write(`RESULT ${parts.join(' ')}\n`);
}

const seconds = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;

// A CLI agent's shell tool: its own process group (detached), stdout and
// stderr piped and collected, resolved when the pipes close.
function runLikeAnAgent(cmd, shell = SH) {
  return new Promise((resolve, reject) => {
    const child = cp.spawn(shell, ['-c', cmd], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) reject(new Error(`\`${cmd}\` exited ${code} ${signal || ''}`));
      else resolve(Buffer.concat(out));
    });
  });
}

function runSync(cmd, shell) {
  const r = cp.spawnSync(shell, ['-c', cmd], { stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`\`${cmd}\` exited ${r.status}`);
}

function holdMemory(mib) {
  // filled, so every page is resident, as a heap in use; 1 GiB pieces stay
  // under Buffer's size limit
  const pieces = [];
  for (let left = mib; left > 0; left -= 1024) {
    pieces.push(Buffer.alloc(Math.min(left, 1024) * 1024 * 1024, 1));
  }
  return pieces;
}

// The binding, when its dependency (koffi) is installed: `npm ci` in examples/node.
function loadBinding() {
  const dir = process.env.SHEXEC_NODE || require('path').join(__dirname, '..', '..', 'examples', 'node');
  try {
    return require(dir);
  } catch (e) {
    if (e.code === 'MODULE_NOT_FOUND') return null;
    throw e;
  }
}

async function tSpawn(mode, shell, n, hostMib, budgetS = '0') {
  n = Number(n);
  const budget = Number(budgetS);
  let one;
  let session = null;
  if (mode === 'async') one = () => runLikeAnAgent('true', shell);
  else if (mode === 'sync') one = async () => runSync('true', shell);
  else if (mode === 'shexec') {
    const binding = loadBinding();
    if (!binding) {
      result({ runs_per_s: -1, runs: 0, held: 0 });
      return;
    }
    // one session, as a host keeps one per agent; awaited like runLikeAnAgent
    session = new binding.Session({ shell });
    one = async () => {
      const r = await session.run('true');
      if (r.exitCode !== 0) throw new Error(`\`true\` ended ${r.state} ${r.exitCode}`);
    };
  } else throw new Error(`unknown spawn mode ${mode}`);
  const ballast = holdMemory(Number(hostMib));
  // a budget (seconds) ends the loop early: a slow spawner still gives a rate
  let t0 = process.hrtime.bigint();
  for (let i = 0; i < 10; i++) {
    await one();
    if (budget && seconds(t0) > budget / 4) break;
  }
  t0 = process.hrtime.bigint();
  let done = 0;
  while (done < n) {
    await one();
    done++;
    if (budget && done >= 3 && seconds(t0) > budget) break;
  }
  const dt = seconds(t0);
  if (session) await session.close();
  result({ runs_per_s: (done / dt).toFixed(3), runs: done, held: ballast.length });
}

function tStream(cmd, which = 'stdout') {
  return new Promise((resolve, reject) => {
    const rss0 = process.resourceUsage().maxRSS;
    const t0 = process.hrtime.bigint();
    const onErr = which === 'stderr';
    const child = cp.spawn(SH, ['-c', cmd], {
      stdio: ['ignore', onErr ? 'inherit' : 'pipe', onErr ? 'pipe' : 'inherit'],
    });
    let total = 0;
    (onErr ? child.stderr : child.stdout).on('data', (d) => { total += d.length; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`\`${cmd}\` exited ${code}`));
      const dt = seconds(t0);
      const grow = process.resourceUsage().maxRSS - rss0;
      result({ bytes: total, seconds: dt.toFixed(6), rss_growth_kib: grow });
      resolve();
    });
  });
}

async function tIdle(cmd) {
  // process-wide: Node offers no per-thread figure, so its libuv and V8
  // threads are counted too
  const before = process.resourceUsage().voluntaryContextSwitches;
  await runLikeAnAgent(cmd);
  const after = process.resourceUsage().voluntaryContextSwitches;
  result({ nvcsw: after - before });
}

// nearest rank, as the C side computes it
function pct(sorted, p) {
  const rank = Math.max(1, Math.min(sorted.length, Math.ceil((sorted.length * p) / 100)));
  return sorted[rank - 1];
}

function tLatency(cmd, n) {
  n = Number(n);
  return new Promise((resolve, reject) => {
    const lat = [];
    let part = '';
    const child = cp.spawn(SH, ['-c', cmd], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.setEncoding('latin1');
    child.stdout.on('data', (d) => {
      // process.hrtime is CLOCK_MONOTONIC on Linux, the writer's clock
      const t = process.hrtime.bigint();
      const lines = (part + d).split('\n');
      part = lines.pop();
      for (const line of lines) lat.push(Number(t - BigInt(line.split(' ')[1])) / 1e3);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`\`${cmd}\` exited ${code}`));
      if (lat.length !== n) return reject(new Error(`saw ${lat.length} lines, expected ${n}`));
      lat.sort((a, b) => a - b);
      result({ p50_us: pct(lat, 50).toFixed(1), p99_us: pct(lat, 99).toFixed(1) });
      resolve();
    });
  });
}

function countBytes(cmd) {
  return new Promise((resolve, reject) => {
    const child = cp.spawn(SH, ['-c', cmd], { stdio: ['ignore', 'pipe', 'inherit'] });
    let total = 0;
    child.stdout.on('data', (d) => { total += d.length; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`\`${cmd}\` exited ${code}`));
      else resolve(total);
    });
  });
}

async function tConcurrency(k, cmd) {
  const t0 = process.hrtime.bigint();
  const got = await Promise.all(Array.from({ length: Number(k) }, () => countBytes(cmd)));
  const dt = seconds(t0);
  result({ seconds: dt.toFixed(6), min_bytes: Math.min(...got), max_bytes: Math.max(...got) });
}

async function main(argv) {
  const tests = {
    spawn: tSpawn, stream: tStream, idle: tIdle, latency: tLatency, concurrency: tConcurrency,
  };
  if (argv[0] === 'version') {
    result({ version: process.version, exe: process.execPath });
  } else if (tests[argv[0]]) {
    await tests[argv[0]](...argv.slice(1));
  } else {
    throw new Error(`usage: peer.js {version|${Object.keys(tests).join('|')}} ARGS`);
  }
}

main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`peer.js: ${e.stack || e}\n`);
  process.exit(1);
});
