// Smoke run of shexec-mcp with the MCP inspector's command-line client
// (@modelcontextprotocol/inspector-cli): tools/list and tools/call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER } from './util.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const build = resolve(here, 'node_modules/@modelcontextprotocol/inspector-cli/build');

// The CLI finds its own package.json relative to the working directory, so it
// runs from its build directory.
function inspector(args) {
  return new Promise((resolvePromise, reject) => {
    execFile(process.execPath, [resolve(build, 'index.js'), SERVER, ...args],
      { cwd: build, timeout: 30000 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolvePromise(JSON.parse(stdout));
      });
  });
}

test('inspector-cli: tools/list', async () => {
  const { tools } = await inspector(['--method', 'tools/list']);
  assert.deepEqual(tools.map((t) => t.name).sort(), ['bash', 'task_kill', 'task_output', 'task_write']);
});

test('inspector-cli: tools/call bash, with a server flag', async () => {
  const r = await inspector(['--workdir', '/usr', '--method', 'tools/call', '--tool-name', 'bash',
    '--tool-arg', 'command=pwd; echo from-inspector']);
  assert.equal(r.isError, false);
  assert.match(r.content[0].text,
    /^stdout:\n\/usr\nfrom-inspector\nexit_code: 0\ncwd: \/usr\nelapsed_ms: \d+\ncost: cpu [0-9.]+ s \(user [0-9.]+, system [0-9.]+; [a-z ]+\)(, peak memory [0-9.]+ MiB)?\n$/);
});
