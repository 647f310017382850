// shexec - Node.js binding of libshexec (through koffi, no native build).
//
// libshexec runs shell commands for agent hosts: a Session is one persistent
// terminal (a `cd` carries over to the next command), every command runs in
// its own process group with a timeout that kills the whole tree and a bound
// on the output kept, and commands can run in the background as tasks.
// include/shexec.h is the manual; this module follows it.
//
//   const { Session } = require('shexec');
//   const s = new Session({ cwd: '/tmp', timeoutMs: 60000 });
//   const r = await s.run('cd /etc && ls | head -3', { onOutput: (data, stream) => {} });
//   r.stdout; r.exitCode; r.cwd;           // "/etc": the cd persists
//   const t = s.start('python3 -m http.server 8000');
//   t.on('output', (data, stream) => {});  // or: for await (const c of t)
//   t.read(); t.write('input'); t.kill(); await t.done;
//   const y = s.runSync('make test', { yieldMs: 10000 }); // blocks; may yield:
//   if (y.yielded !== 'none') s.task(y.taskId);            // the command goes on as a task
//   await s.close();
//
// The library is found through $SHEXEC_LIB (a path), else, when this is the
// package in the source tree (examples/node), that tree's
// build/libshexec.so.1, else the system's libshexec.so.1. Installed from npm
// pack's tarball (docs/node.md), the package is the same file: it finds the
// library through $SHEXEC_LIB or the system's.
//
// HOW THE EVENT LOOP STAYS FREE. The library's calls that wait
// (shexec_run_exec, shexec_session_wait) would block the main thread, and the
// library's callbacks must run on the main thread (JS is single-threaded),
// so neither is used, but by runSync(), which blocks on purpose (only
// shexec_run_exec() moves a command to the background: see LONG-RUNNING AND
// INTERACTIVE COMMANDS in the header). Instead the binding drives every
// session through the library's host event-loop interface:
// shexec_session_pollfds() lists the descriptors and the deadline, one
// helper thread (poller.js) waits for them with poll(2), and the main
// thread then calls shexec_session_process(),
// which reads the output, enforces timeouts and reaps, and calls the output
// callbacks there. When something is ready already (a command printing
// fast), the main thread takes it without the helper: a poll() with timeout
// 0, then the next round after setImmediate(), so timers and I/O of the host
// run between rounds. All library calls happen on the main thread; the
// helper only calls poll(). A poll() result goes to shexec_session_process()
// only if no library call that may change a session's descriptors (a start,
// a kill, a free, a tool call...) came after the shexec_session_pollfds() it
// was taken for; otherwise it is dropped and the round is done again.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { EventEmitter } = require('node:events');
const { StringDecoder } = require('node:string_decoder');
const { Worker } = require('node:worker_threads');
const koffi = require('koffi');

// --------------------------------------------------------------------------
// Loading the library
// --------------------------------------------------------------------------

function candidates() {
  if (process.env.SHEXEC_LIB) return [process.env.SHEXEC_LIB];
  const out = [];
  // the source tree's build, only for the source tree's package (beside
  // include/shexec.h): an installed copy must not load whatever build/ lies
  // two levels above its node_modules/shexec
  const root = path.resolve(__dirname, '..', '..');
  const tree = path.join(root, 'build', 'libshexec.so.1');
  if (fs.existsSync(path.join(root, 'include', 'shexec.h')) && fs.existsSync(tree)) out.push(tree);
  out.push('libshexec.so.1');
  return out;
}

function loadLibrary() {
  const errors = [];
  for (const p of candidates()) {
    try {
      return { lib: koffi.load(p), libraryPath: p };
    } catch (e) {
      errors.push(`${p}: ${e.message}`);
    }
  }
  throw new Error(`libshexec not found (set SHEXEC_LIB to its path): ${errors.join('; ')}`);
}

const { lib, libraryPath } = loadLibrary();

// the C library, for poll() and the wake pipe: glibc's name, else musl's
function loadLibc() {
  for (const name of ['libc.so.6', 'libc.so']) {
    try {
      return { libc: koffi.load(name), LIBC: name };
    } catch (e) {
      // try the next name
    }
  }
  throw new Error('the C library (libc.so.6 or libc.so) cannot be loaded');
}

// --------------------------------------------------------------------------
// Prototypes (include/shexec.h)
// --------------------------------------------------------------------------

// The loop's own two calls: shexec_session_pollfds() lists the descriptors,
// shexec_session_process() acts on the poll() results of that list.
const LOOP_CALLS = new Set(['shexec_session_pollfds', 'shexec_session_process']);

// Calls that only read: they neither start nor end a command, nor open or
// close a descriptor, nor move a deadline. Every other call may change what
// a session waits for (a start, a kill, a free, input queued or closed, a
// tool call that waits for a task to end, a read that queues an ANSI
// partial line for the next round, a setting), so the binding treats it
// as a change: see pump.changed().
const READ_ONLY = new Set([
  'shexec_version', 'shexec_strerror', 'shexec_free',
  'shexec_session_errmsg', 'shexec_session_cwd', 'shexec_session_persist_env', 'shexec_session_getenv',
  'shexec_session_timeouts_ms', 'shexec_session_kill_grace_ms', 'shexec_session_leftovers_drain_ms',
  'shexec_session_output_limit',
  'shexec_session_env_inherit', 'shexec_session_max_tasks', 'shexec_session_on_leftovers',
  'shexec_session_watchdog', 'shexec_session_containment', 'shexec_session_limit',
  'shexec_session_shell_argv',
  'shexec_run_state', 'shexec_run_exit_code', 'shexec_run_signal', 'shexec_run_interrupted',
  'shexec_signal_from_name',
  'shexec_run_output_total', 'shexec_run_truncated', 'shexec_run_duration_ms', 'shexec_run_pid',
  'shexec_run_timeout_ms', 'shexec_run_leftovers', 'shexec_run_cost', 'shexec_run_limit_hit',
  'shexec_run_notice', 'shexec_run_yielded', 'shexec_run_deadline', 'shexec_run_input_wait',
  'shexec_session_idle_timeout_ms', 'shexec_session_background_on_timeout',
  'shexec_session_input_look_ms', 'shexec_session_notice_position', 'shexec_session_spill_dir',
  'shexec_run_spill', 'shexec_run_redactions', 'shexec_run_output_counts', 'shexec_run_output_lines',
  'shexec_run_quiet_ms', 'shexec_task_read_counts',
  'shexec_task_id', 'shexec_task_run', 'shexec_tool_is_enabled', 'shexec_tool_list',
  'shexec_tool_task_result',
]);

/** `fn`, then pump.changed(): a poll() result taken before it is not handed on. */
function changing(fn) {
  return (...args) => {
    try {
      return fn(...args);
    } finally {
      pump.changed();
    }
  };
}

const OutputFn = koffi.proto('void shexec_output_fn(void *user, int stream, const void *data, size_t len)');
const InputFn = koffi.proto('void shexec_input_fn(void *user, void *run)');

const C = {};
for (const decl of [
  'const char *shexec_version(void)',
  'const char *shexec_strerror(int code)',
  'int shexec_session_new(_Out_ void **out)',
  'void shexec_session_free(void *s)',
  'const char *shexec_session_errmsg(void *s)',
  'int shexec_session_set_cwd(void *s, const char *dir)',
  'const char *shexec_session_cwd(void *s)',
  'int shexec_session_set_timeouts_ms(void *s, uint32_t default_ms, uint32_t max_ms)',
  'int shexec_session_timeouts_ms(void *s, _Out_ uint32_t *default_ms, _Out_ uint32_t *max_ms)',
  'int shexec_session_set_kill_grace_ms(void *s, uint32_t ms)',
  'uint32_t shexec_session_kill_grace_ms(void *s)',
  'int shexec_session_set_leftovers_drain_ms(void *s, uint32_t ms)',
  'uint32_t shexec_session_leftovers_drain_ms(void *s)',
  'int shexec_session_output_limit(void *s, _Out_ uint64_t *limit, _Out_ int *unit, _Out_ int *keep)',
  'int shexec_session_env_inherit(void *s)',
  'uint32_t shexec_session_max_tasks(void *s)',
  'int shexec_session_on_leftovers(void *s)',
  'int shexec_session_watchdog(void *s)',
  'int shexec_session_containment(void *s, _Out_ const char **detail)',
  'void *shexec_session_shell_argv(void *s)',
  'int shexec_session_set_output_limit(void *s, uint64_t limit, int unit, int keep)',
  'int shexec_session_set_env_inherit(void *s, int inherit)',
  'int shexec_session_setenv(void *s, const char *name, const char *value)',
  'int shexec_session_env_deny(void *s, const char *glob)',
  'int shexec_session_env_allow(void *s, const char *glob)',
  'int shexec_session_set_shell(void *s, const char **argv, int wrapper_kind)',
  'int shexec_session_pollfds(_Inout_ void *fds, uint32_t cap, _Out_ int32_t *timeout_ms, void *s)',
  'int shexec_session_process(void *s, const void *fds, uint32_t n)',
  'int shexec_session_set_max_tasks(void *s, uint32_t max)',
  'int shexec_session_set_watchdog(void *s, int on)',
  'int shexec_session_set_containment(void *s, const char *parent)',
  'int shexec_session_set_limit(void *s, int limit, uint64_t value)',
  'uint64_t shexec_session_limit(void *s, int limit)',
  'int shexec_session_set_persist_env(void *s, int on)',
  'int shexec_session_persist_env(void *s)',
  'const char *shexec_session_getenv(void *s, const char *name)',
  'int shexec_session_set_on_leftovers(void *s, int policy)',
  'int shexec_session_take_task(_Out_ void **out, void *s, const char *id)',
  'int shexec_session_set_idle_timeout_ms(void *s, uint32_t ms, int action)',
  'uint32_t shexec_session_idle_timeout_ms(void *s, _Out_ int *action)',
  'int shexec_session_set_background_on_timeout(void *s, uint32_t cap_ms)',
  'uint32_t shexec_session_background_on_timeout(void *s)',
  'int shexec_session_set_input_look_ms(void *s, uint32_t ms)',
  'uint32_t shexec_session_input_look_ms(void *s)',
  'int shexec_session_apply_agent_env(void *s)',
  'int shexec_session_set_notice_position(void *s, int where)',
  'int shexec_session_notice_position(void *s)',
  'int shexec_session_set_spill_dir(void *s, const char *dir, uint64_t file_max, uint64_t total_max, unsigned int flags)',
  'const char *shexec_session_spill_dir(void *s)',
  'int shexec_session_redact_value(void *s, const char *name, const void *value, size_t len)',
  'int shexec_session_redact_env(void *s, const char **globs, size_t n)',
  'int shexec_session_redact_shapes(void *s, unsigned int which)',
  'int shexec_session_redact_clear(void *s)',
  'int shexec_run_new_bytes(_Out_ void **out, void *s, const void *command, size_t len)',
  'int shexec_run_set_timeout_ms(void *r, uint32_t ms)',
  'int shexec_run_set_limit(void *r, int limit, uint64_t value)',
  'int shexec_run_set_cwd(void *r, const char *dir)',
  'int shexec_run_setenv(void *r, const char *name, const char *value)',
  'int shexec_run_set_output_limit(void *r, uint64_t limit, int unit, int keep)',
  'int shexec_run_set_output_fn(void *r, shexec_output_fn *fn, void *user)',
  'int shexec_run_set_stdin(void *r, int enable)',
  'int shexec_run_write(void *r, const void *data, size_t len)',
  'int shexec_run_close_stdin(void *r)',
  'int shexec_run_set_pty(void *r, int mode)',
  'int shexec_run_set_pty_size(void *r, uint32_t cols, uint32_t rows)',
  'int shexec_run_set_ansi(void *r, int mode)',
  'int shexec_run_start(void *r)',
  'int shexec_run_exec(void *r)',
  'int shexec_run_set_yield_ms(void *r, uint32_t ms)',
  'int shexec_run_set_idle_timeout_ms(void *r, uint32_t ms, int action)',
  'int shexec_run_set_background_on_timeout(void *r, uint32_t cap_ms)',
  'int shexec_run_set_input_fn(void *r, shexec_input_fn *fn, void *user)',
  'int shexec_run_input_wait(void *r, _Out_ const void **prompt, _Out_ size_t *prompt_len, _Out_ int *echo_off)',
  'int shexec_run_redact_value(void *r, const char *name, const void *value, size_t len)',
  'int shexec_run_redact_own_env(void *r, int on)',
  'uint64_t shexec_run_redactions(void *r, int stream)',
  'int shexec_run_spill(void *r, int stream, _Out_ const char **path, _Out_ uint64_t *bytes, _Out_ int *error)',
  'int shexec_run_yielded(void *r, _Out_ const char **task_id)',
  'int shexec_run_deadline(void *r)',
  'int shexec_run_start_task(_Out_ void **out, void *r)',
  'int shexec_run_cancel(void *r)',
  'int shexec_run_send_signal(void *r, int sig)',
  'int shexec_run_type_input(void *r, const void *data, size_t len)',
  'int shexec_run_interrupted(void *r)',
  'int shexec_signal_from_name(const char *name)',
  'int shexec_run_state(void *r)',
  'int shexec_run_exit_code(void *r)',
  'int shexec_run_signal(void *r)',
  'const void *shexec_run_output(void *r, int stream, _Out_ size_t *len)',
  'uint64_t shexec_run_output_total(void *r, int stream)',
  'int shexec_run_truncated(void *r, int stream)',
  'int shexec_run_output_counts(void *r, int stream, _Out_ uint64_t *kept_chars, _Out_ uint64_t *kept_bytes, _Out_ uint64_t *total_chars, _Out_ uint64_t *total_bytes)',
  'uint64_t shexec_run_output_lines(void *r, int stream)',
  'uint64_t shexec_run_duration_ms(void *r)',
  'int64_t shexec_run_pid(void *r)',
  'uint32_t shexec_run_timeout_ms(void *r)',
  'int shexec_run_leftovers(void *r, _Out_ const char **task_id)',
  'int shexec_run_cost(void *r, _Out_ uint64_t *user_usec, _Out_ uint64_t *system_usec, _Out_ uint64_t *peak_bytes)',
  'int shexec_run_limit_hit(void *r)',
  'const char *shexec_run_notice(void *r)',
  'void shexec_run_free(void *r)',
  'const char *shexec_task_id(void *t)',
  'void *shexec_task_run(void *t)',
  'const void *shexec_task_read(void *t, int stream, _Out_ size_t *len)',
  'int shexec_task_read_counts(void *t, int stream, _Out_ uint64_t *kept_chars, _Out_ uint64_t *kept_bytes, _Out_ uint64_t *total_chars, _Out_ uint64_t *total_bytes)',
  'uint64_t shexec_run_quiet_ms(void *r)',
  'void shexec_task_free(void *t)',
  'int shexec_tool_set_enabled(void *s, const char *name, int enabled)',
  'int shexec_tool_is_enabled(void *s, const char *name)',
  'int shexec_tool_rename(void *s, const char *name, const char *new_name)',
  'int shexec_tool_list(_Out_ void **out_json, void *s)',
  'int shexec_tool_call(_Out_ void **out_json, void *s, const char *name, const char *args_json)',
  'int shexec_tool_prepare(_Out_ void **out_run, _Out_ int *out_background, void *s, const char *name, const char *args_json)',
  'int shexec_tool_result(_Out_ void **out_json, void *r)',
  'int shexec_tool_task_result(_Out_ void **out_json, void *t, const char *status, const void *out, size_t out_len, const void *err, size_t err_len)',
  'void shexec_free(void *p)',
]) {
  const fn = lib.func(decl);
  const name = decl.match(/(shexec_\w+)\(/)[1];
  C[name] = LOOP_CALLS.has(name) || READ_ONLY.has(name) ? fn : changing(fn);
}

// --------------------------------------------------------------------------
// Constants
// --------------------------------------------------------------------------

const STDOUT = 1;
const STDERR = 2;
const STREAM_NAMES = { [STDOUT]: 'stdout', [STDERR]: 'stderr' };
const STREAMS = { stdout: STDOUT, stderr: STDERR, [STDOUT]: STDOUT, [STDERR]: STDERR };
const STATE_NAMES = ['new', 'running', 'exited', 'signaled', 'timed_out', 'cancelled', 'killed'];
const STATE_RUNNING = 1; // every state after it is final
/** True once the run has finished (its state is past RUNNING). */
const finished = (rp) => C.shexec_run_state(rp) > STATE_RUNNING;
const LEFTOVER_NAMES = ['none', 'adopted', 'killed'];
const UNITS = { chars: 0, bytes: 1 };
const KEEPS = { head: 0, head_tail: 1 };
const KEEP_WITHIN_LIMIT = 0x100; // SHEXEC_KEEP_WITHIN_LIMIT, or'ed into keep

/* The keep argument of an output limit from the options outputKeep and
 * outputWithinLimit. */
function keepOf(o) {
  return pick(KEEPS, o.outputKeep ?? 'head', 'outputKeep') | (o.outputWithinLimit ? KEEP_WITHIN_LIMIT : 0);
}
const LIMIT_OPTS = (o) => o.outputLimit !== undefined || o.outputUnit !== undefined ||
  o.outputKeep !== undefined || o.outputWithinLimit !== undefined;
const ON_LEFTOVERS = { adopt: 0, kill: 1 };
const CONTAIN_NAMES = ['group', 'cgroup'];
const COST_SOURCES = ['none', 'cgroup', 'rusage'];
// SHEXEC_LIMIT_*: memory and swap in bytes, pids a count, cpu in thousandths
// of one CPU. A limit's value is also its bit in shexec_run_limit_hit().
const LIMITS = { memory: 0, swap: 1, pids: 2, cpu: 3 };
const U32_MAX = 0xffffffff;
// LONG-RUNNING AND INTERACTIVE COMMANDS: SHEXEC_YIELD_*, SHEXEC_DEADLINE_*,
// SHEXEC_INPUT_* by value, SHEXEC_IDLE_* by name
const YIELD_NAMES = ['none', 'time', 'timeout', 'idle', 'input'];
const DEADLINE_NAMES = ['none', 'timeout', 'idle'];
const INPUT_NAMES = ['no', 'waiting', 'unknown'];
const INPUT_WAITING = 1;
const IDLE_ACTIONS = { end: 0, yield: 1 };
const DEFAULT_INPUT_LOOK_MS = 2000; // SHEXEC_DEFAULT_INPUT_LOOK_MS
// OUTPUT FOR MODELS: SHEXEC_NOTICE_* by name, SHEXEC_SPILL_* states by value
const NOTICE_POSITIONS = { last: 0, first: 1 };
const SPILL_NAMES = ['none', 'writing', 'whole', 'capped', 'failed', 'removed'];
const SPILL_KEEP_FILES = 1;
const REDACT_KEY_SHAPES = 1;
const REDACT_PRIVATE_KEYS = 2;
const DEFAULT_SPILL_FILE_MAX = 64 * 2 ** 20; // SHEXEC_DEFAULT_SPILL_FILE_MAX
const DEFAULT_SPILL_TOTAL_MAX = 2 ** 30; // SHEXEC_DEFAULT_SPILL_TOTAL_MAX

const CODES = {
  [-1]: 'SHEXEC_EINVAL', [-2]: 'SHEXEC_ENOMEM', [-3]: 'SHEXEC_ENOCWD', [-4]: 'SHEXEC_ESPAWN',
  [-5]: 'SHEXEC_ESYS', [-6]: 'SHEXEC_ESTATE', [-7]: 'SHEXEC_E2BIG', [-8]: 'SHEXEC_ELIMIT',
  [-9]: 'SHEXEC_ENOTASK', [-10]: 'SHEXEC_EPIPE', [-11]: 'SHEXEC_ENOTOOL',
};

// --------------------------------------------------------------------------
// Errors
// --------------------------------------------------------------------------

/** A libshexec call failed: .errno is the SHEXEC_E* value (negative), .code
 * its name ("SHEXEC_ENOCWD"), .message the library's detail. */
class ShexecError extends Error {
  constructor(errno, message) {
    const text = message || C.shexec_strerror(errno);
    super(text);
    this.name = this.constructor.name;
    this.errno = errno;
    this.code = CODES[errno] || `SHEXEC_E${-errno}`;
  }
}
class InvalidArgumentError extends ShexecError {}
class OutOfMemoryError extends ShexecError {}
class NoCwdError extends ShexecError {}
class SpawnError extends ShexecError {}
class SysError extends ShexecError {}
class StateError extends ShexecError {}
/** The session was closed (or the task freed): the handle is gone. */
class ClosedError extends StateError {}
class TooBigError extends ShexecError {}
class LimitError extends ShexecError {}
class NoTaskError extends ShexecError {}
class PipeError extends ShexecError {}
class ToolNotAvailableError extends ShexecError {}

const ERROR_CLASSES = {
  [-1]: InvalidArgumentError, [-2]: OutOfMemoryError, [-3]: NoCwdError, [-4]: SpawnError,
  [-5]: SysError, [-6]: StateError, [-7]: TooBigError, [-8]: LimitError, [-9]: NoTaskError,
  [-10]: PipeError, [-11]: ToolNotAvailableError,
};

function makeError(errno, message) {
  const Cls = ERROR_CLASSES[errno] || ShexecError;
  return new Cls(errno, message);
}

/** The error of a failed call on session pointer `sp`, its message read at once. */
function failure(rc, sp) {
  const msg = sp ? C.shexec_session_errmsg(sp) : '';
  return makeError(rc, msg);
}

function check(rc, sp) {
  if (rc < 0) throw failure(rc, sp);
  return rc;
}

/** The error an aborted run or task rejects with, as Node's own APIs do. */
class AbortError extends Error {
  constructor(reason, result) {
    super('The operation was aborted', reason === undefined ? undefined : { cause: reason });
    this.name = 'AbortError';
    this.code = 'ABORT_ERR';
    this.result = result;
  }
}

// --------------------------------------------------------------------------
// Small helpers
// --------------------------------------------------------------------------

function copyOut(ptr, len) {
  if (!ptr || len === 0) return Buffer.alloc(0);
  const u = koffi.decode(ptr, 'uint8_t', len); // a copy
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

function toBuffer(data, what) {
  if (Buffer.isBuffer(data)) return data;
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError(`${what} must be a string or a Buffer`);
}

function u32(value, what, { zeroOk = true } = {}) {
  if (!Number.isInteger(value) || value < (zeroOk ? 0 : 1) || value > U32_MAX) {
    throw new InvalidArgumentError(-1, `${what} must be an integer from ${zeroOk ? 0 : 1} to ${U32_MAX}`);
  }
  return value;
}

/** The [SHEXEC_LIMIT_*, value] pairs of a `limits` option ({memory, swap, pids, cpu}). */
function limitPairs(limits) {
  if (limits === undefined || limits === null) return [];
  if (typeof limits !== 'object' || Array.isArray(limits)) {
    throw new TypeError('limits must be an object such as {memory: 2 ** 30, pids: 200}');
  }
  return Object.entries(limits).map(([name, value]) => {
    const limit = pick(LIMITS, name, `limits key '${name}'`);
    // a number past 2^53 would reach C rounded: refused rather than changed
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new InvalidArgumentError(-1,
        `limits.${name} must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`);
    }
    return [limit, value];
  });
}

/** A byte count for a uint64_t argument: refused past 2^53 rather than rounded on the way to C. */
function u64(value, what) {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidArgumentError(-1, `${what} must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`);
  }
  return value;
}

/** The [name, Buffer] pairs of a redactValues option ({NAME: string or Buffer}). */
function redactPairs(values) {
  if (values === undefined || values === null) return [];
  if (typeof values !== 'object' || Array.isArray(values)) {
    throw new TypeError('redactValues must be an object such as {API_KEY: secret}');
  }
  return Object.entries(values).map(([name, value]) => [name, toBuffer(value, `redactValues.${name}`)]);
}

/** SHEXEC_REDACT_* bits of a redactShapes value: true (both), false, or {keys, privateKeys}. */
function shapeBits(which) {
  if (which === true) return REDACT_KEY_SHAPES | REDACT_PRIVATE_KEYS;
  if (which === false || which === null) return 0;
  if (typeof which !== 'object' || Array.isArray(which)) {
    throw new TypeError('redactShapes must be true, false or {keys, privateKeys}');
  }
  for (const k of Object.keys(which)) {
    if (k !== 'keys' && k !== 'privateKeys') {
      throw new InvalidArgumentError(-1, `redactShapes must be true, false or {keys, privateKeys}, not '${k}'`);
    }
  }
  return (which.keys ? REDACT_KEY_SHAPES : 0) | (which.privateKeys ? REDACT_PRIVATE_KEYS : 0);
}

/** The names of the limits set in a shexec_run_limit_hit() mask, in the enum's order. */
function limitNames(bits) {
  return Object.keys(LIMITS).filter((name) => bits & (1 << LIMITS[name]));
}

function pick(table, value, what) {
  if (!Object.prototype.hasOwnProperty.call(table, value)) {
    throw new InvalidArgumentError(-1, `${what} must be one of ${Object.keys(table).join(', ')}`);
  }
  return table[value];
}

function decodeAs(buf, encoding) {
  return encoding === 'buffer' ? buf : buf.toString(encoding);
}

function readStream(fn, handle, stream) {
  const len = [0];
  const ptr = fn(handle, stream, len);
  return copyOut(ptr, Number(len[0]));
}

/**
 * Whether the command of run `rp` waits for input (shexec_run_input_wait()):
 * {state: 'no'|'waiting'|'unknown', prompt, echoOff}, the prompt copied out
 * at once (the library's is valid until the next loop round); '' when not
 * waiting.
 */
function inputWaitOf(rp, encoding) {
  const prompt = [null], len = [0], echoOff = [0];
  const state = C.shexec_run_input_wait(rp, prompt, len, echoOff);
  const text = state === INPUT_WAITING ? copyOut(prompt[0], Number(len[0])) : Buffer.alloc(0);
  return {
    state: INPUT_NAMES[state] || 'no',
    prompt: decodeAs(text, encoding),
    echoOff: echoOff[0] === 1,
  };
}

/**
 * What became of a stream's spill file (shexec_run_spill()): {state, path
 * (null for 'none' and 'failed'), bytes (in the file), error (an errno
 * value for 'failed', else 0)}; the path, the run's, copied at once.
 */
function spillOf(rp, stream) {
  const path = [null], bytes = [0], error = [0];
  const state = C.shexec_run_spill(rp, stream, path, bytes, error);
  return { state: SPILL_NAMES[state] || 'none', path: path[0] || null, bytes: Number(bytes[0]), error: error[0] };
}

/**
 * What the output limit kept of a stream and what the stream carried
 * (shexec_run_output_counts(), shexec_run_output_lines()): {keptChars,
 * keptBytes, totalChars, totalBytes, totalLines}, characters counted as the
 * notice counts them (a UTF-8 sequence, or an invalid byte), lines as its
 * newlines and one more when it does not end with one. All 0 before the
 * start, as the library reports them then.
 */
function countsOf(rp, stream) {
  const keptChars = [0], keptBytes = [0], totalChars = [0], totalBytes = [0];
  C.shexec_run_output_counts(rp, stream, keptChars, keptBytes, totalChars, totalBytes);
  return {
    keptChars: Number(keptChars[0]),
    keptBytes: Number(keptBytes[0]),
    totalChars: Number(totalChars[0]),
    totalBytes: Number(totalBytes[0]),
    totalLines: Number(C.shexec_run_output_lines(rp, stream)),
  };
}

/** What the last shexec_task_read() of `stream` of C task `tp` kept and covered. */
function readCountsOf(tp, stream) {
  const keptChars = [0], keptBytes = [0], totalChars = [0], totalBytes = [0];
  C.shexec_task_read_counts(tp, stream, keptChars, keptBytes, totalChars, totalBytes);
  return {
    keptChars: Number(keptChars[0]),
    keptBytes: Number(keptBytes[0]),
    totalChars: Number(totalChars[0]),
    totalBytes: Number(totalBytes[0]),
  };
}

/** Everything a run reports (finished, or moved to the background), copied out of the C run. */
function collectResult(rp, sp, encoding) {
  const state = STATE_NAMES[C.shexec_run_state(rp)] || 'unknown';
  const out = readStream(C.shexec_run_output, rp, STDOUT);
  const err = readStream(C.shexec_run_output, rp, STDERR);
  const leftover = [null];
  const leftovers = C.shexec_run_leftovers(rp, leftover);
  const user = [0], system = [0], peak = [0];
  const costSource = C.shexec_run_cost(rp, user, system, peak);
  const taskId = [null];
  const yielded = C.shexec_run_yielded(rp, taskId);
  return {
    stdout: decodeAs(out, encoding),
    stderr: decodeAs(err, encoding),
    exitCode: C.shexec_run_exit_code(rp),
    signal: C.shexec_run_signal(rp),
    interrupted: C.shexec_run_interrupted(rp) === 1,
    state,
    timedOut: state === 'timed_out',
    cwd: C.shexec_session_cwd(sp),
    truncated: {
      stdout: C.shexec_run_truncated(rp, STDOUT) === 1,
      stderr: C.shexec_run_truncated(rp, STDERR) === 1,
    },
    totalBytes: {
      stdout: Number(C.shexec_run_output_total(rp, STDOUT)),
      stderr: Number(C.shexec_run_output_total(rp, STDERR)),
    },
    counts: { stdout: countsOf(rp, STDOUT), stderr: countsOf(rp, STDERR) },
    spill: { stdout: spillOf(rp, STDOUT), stderr: spillOf(rp, STDERR) },
    redactions: {
      stdout: Number(C.shexec_run_redactions(rp, STDOUT)),
      stderr: Number(C.shexec_run_redactions(rp, STDERR)),
    },
    leftovers: LEFTOVER_NAMES[leftovers] || 'none',
    leftoverTaskId: leftover[0] || null,
    durationMs: Number(C.shexec_run_duration_ms(rp)),
    pid: Number(C.shexec_run_pid(rp)),
    cost: {
      source: COST_SOURCES[costSource] || 'none',
      userUsec: Number(user[0]),
      systemUsec: Number(system[0]),
      peakBytes: Number(peak[0]),
    },
    limitsHit: limitNames(C.shexec_run_limit_hit(rp)),
    notice: C.shexec_run_notice(rp) || '',
    yielded: YIELD_NAMES[yielded] || 'none',
    taskId: taskId[0] || null,
    deadline: DEADLINE_NAMES[C.shexec_run_deadline(rp)] || 'none',
    inputWait: inputWaitOf(rp, encoding),
  };
}

// --------------------------------------------------------------------------
// The pump: one loop for every session of the process
// --------------------------------------------------------------------------

const POLLFD_SIZE = 8; // struct pollfd: int fd, short events, short revents
// a burst of ready output is taken on the main thread for at most this many
// rounds in a row before the helper thread waits again (fairness to the host)
const MAX_DIRECT_ROUNDS = 64;

const { libc, LIBC } = loadLibc();
const c_pipe2 = libc.func('int pipe2(_Out_ int *fds, int flags)');
const c_write = libc.func('long write(int fd, const void *buf, size_t count)');
const c_poll = libc.func('int poll(_Inout_ void *fds, unsigned long nfds, int timeout)');
const O_NONBLOCK = 0o4000;
const O_CLOEXEC = 0o2000000;

const pump = {
  sessions: new Set(), // open sessions
  worker: null,
  wakeFds: null, // [read, write]
  inFlight: null, // {segments, woken, generation, seq}
  scheduled: false, // a round is coming (a kick needs no other)
  // Bumped by every library call that may change what a session waits for
  // (see READ_ONLY). A poll() result is handed to shexec_session_process()
  // only when no such call came between shexec_session_pollfds() and then:
  // the library matches entries by descriptor, and a descriptor closed in
  // between (a task_kill that waited for its task, a free) may already be
  // another command's (its stdin closed by the old one's POLLERR).
  generation: 0,
  seq: 0, // numbers the helper's polls: a reply must be for the poll in flight
  refs: 0, // pending things that keep the process alive
  directRounds: 0,
  exiting: false,

  ref(delta) {
    this.refs += delta;
    this.updateRef();
  },

  updateRef() {
    if (!this.worker) return;
    if (this.refs > 0) this.worker.ref();
    else this.worker.unref();
  },

  startWorker() {
    const fds = new Int32Array(2);
    if (c_pipe2(fds, O_NONBLOCK | O_CLOEXEC) !== 0) throw new SysError(-5, 'pipe2 failed');
    this.wakeFds = [fds[0], fds[1]];
    this.worker = new Worker(path.join(__dirname, 'poller.js'), {
      workerData: { wakeFd: fds[0], libc: LIBC },
    });
    this.worker.on('message', (msg) => this.onPolled(msg));
    this.worker.on('error', (e) => {
      // the helper cannot fail on its own (poll errors come back as data);
      // should it die, say so loudly rather than leave commands unpumped
      process.emitWarning(`shexec poller thread failed: ${e && e.stack}`);
    });
    this.updateRef();
  },

  /** A library call may have changed a session's set: results taken before are stale. */
  changed() {
    this.generation++;
    this.kick();
  },

  /** Something changed (a start, input, a cancel): look again soon. */
  kick() {
    if (this.exiting) return;
    if (this.inFlight) {
      if (!this.inFlight.woken) {
        this.inFlight.woken = true;
        c_write(this.wakeFds[1], Buffer.from([1]), 1);
      }
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.round());
    }
  },

  round() {
    this.scheduled = false;
    if (this.inFlight || this.exiting) return;
    // listing settles idle sessions, whose listeners may call anything; a
    // change made meanwhile is caught by the generation check below
    const generation = this.generation;
    const segments = [];
    let total = 0;
    let timeout = -1;
    this.scheduled = true;
    try {
      for (const s of this.sessions) {
        const seg = s._pollSegment();
        if (!seg) continue;
        segments.push(seg);
        total += seg.n;
        if (seg.timeout >= 0 && (timeout < 0 || seg.timeout < timeout)) timeout = seg.timeout;
      }
    } finally {
      // a listener started, killed or freed something (and maybe threw)
      // after some sessions were listed: those lists may name descriptors
      // that are gone or reused. List again, after the host's pending I/O.
      if (this.generation !== generation) setImmediate(() => this.round());
      else this.scheduled = false;
    }
    if (this.scheduled) return;
    if (segments.length === 0) return; // nothing runs: idle, no thread waits
    const fds = Buffer.alloc((total + 1) * POLLFD_SIZE);
    let off = POLLFD_SIZE;
    for (const seg of segments) {
      seg.fds.copy(fds, off, 0, seg.n * POLLFD_SIZE);
      seg.offset = off;
      off += seg.n * POLLFD_SIZE;
    }
    // first a look without waiting, on this thread: ready output is taken
    // at once, without a round trip through the helper
    if (this.directRounds < MAX_DIRECT_ROUNDS && total > 0) {
      fds.writeInt32LE(-1, 0); // poll() skips a negative descriptor: not the wake pipe here
      const got = c_poll(fds, total + 1, 0);
      if (got > 0 || timeout === 0) {
        this.directRounds++;
        // the next round is coming (also if a listener throws): the
        // listeners' kicks need no other
        this.scheduled = true;
        setImmediate(() => this.round());
        this.dispatch(segments, fds, generation);
        return;
      }
    }
    this.directRounds = 0;
    if (!this.worker) this.startWorker();
    fds.writeInt32LE(this.wakeFds[0], 0);
    fds.writeInt16LE(1, 4); // POLLIN
    fds.writeInt16LE(0, 6);
    const seq = ++this.seq;
    this.inFlight = { segments, woken: false, generation, seq };
    const ab = fds.buffer.slice(fds.byteOffset, fds.byteOffset + fds.byteLength);
    this.worker.postMessage({ fds: new Uint8Array(ab), n: total + 1, timeout, seq }, [ab]);
  },

  onPolled(msg) {
    const flight = this.inFlight;
    if (!flight || msg.seq !== flight.seq) return; // not the poll in flight
    this.inFlight = null;
    if (this.exiting) return;
    this.scheduled = true; // the listeners' kicks: round() follows
    try {
      if (flight.generation === this.generation) {
        const fds = Buffer.from(msg.fds.buffer, msg.fds.byteOffset, msg.fds.byteLength);
        this.dispatch(flight.segments, fds, flight.generation);
      }
      // else: the sets changed while the helper waited (the kick that came
      // with the change woke it); its results are dropped unread, and the
      // round below lists the sets anew and looks again (poll() is level-
      // triggered: nothing ready is lost, a deadline passed is seen)
    } finally {
      this.round(); // also when a listener threw
    }
  },

  /** Hand each session its part of `fds`, polled for the sets of `generation`. */
  dispatch(segments, fds, generation) {
    for (const seg of segments) {
      // the output callbacks only copy, so nothing here changes a set;
      // checked all the same, as what follows relies on it
      if (this.generation !== generation) break;
      seg.session._process(fds.subarray(seg.offset, seg.offset + seg.n * POLLFD_SIZE), seg.n);
    }
    for (const seg of segments) seg.session._afterProcess();
  },

  /** At process exit: stop the helper's wait, free what is still open. */
  onExit() {
    this.exiting = true;
    if (this.wakeFds) c_write(this.wakeFds[1], Buffer.from([1]), 1);
    for (const s of [...this.sessions]) s._freeNow();
  },
};

process.on('exit', () => pump.onExit());

// --------------------------------------------------------------------------
// Session
// --------------------------------------------------------------------------

let nextUserId = 1;

// The argv a session's shell was set to (a NULL-terminated array the session
// owns), copied out; null for the default shell.
function shellArgv(sp) {
  const argv = C.shexec_session_shell_argv(sp);
  if (!argv) return null;
  const out = [];
  const width = koffi.sizeof('void *');
  for (let i = 0; ; i++) {
    const arg = koffi.decode(argv, i * width, 'const char *');
    if (arg === null) return out;
    out.push(arg);
  }
}

class Session {
  /**
   * @param {object} [opts] cwd, timeoutMs, maxTimeoutMs, killGraceMs, leftoversDrainMs,
   *   outputLimit, outputUnit ('chars'|'bytes'), outputKeep ('head'|'head_tail'),
   *   outputWithinLimit (true: the limit holds the truncation notice and
   *   the head/tail marker too, the kept text cut to leave them room;
   *   default: they come on top),
   *   env (object; null/undefined removes), envInherit, envDeny, envAllow (globs),
   *   shell (path or argv array), maxTasks, onLeftovers ('adopt'|'kill'),
   *   watchdog (true: the session's processes end when this process dies),
   *   containment ('auto', the default, 'off' or an absolute cgroup2
   *   directory: each command in a cgroup of its own, so that what detaches
   *   is still ended and costed; 'auto' falls back to process groups where
   *   no cgroup can be made, settings says why),
   *   limits ({memory, swap, pids, cpu}: bounds on every command's cgroup,
   *   0 for none; memory and swap in bytes, pids a count, cpu in
   *   thousandths of one CPU; a StateError without cgroup containment, a
   *   SysError where the controller is not available),
   *   persistEnv (true: exports, and with bash shell variables and functions,
   *   carry from one command to the next),
   *   idleTimeoutMs (a command silent so long is ended; 0: none) with
   *   idleAction ('end', or 'yield': moved to the background, in runSync()
   *   only), backgroundOnTimeoutMs (runSync() moves a command to the
   *   background at its timeout, ended this long after its start; 0: off),
   *   inputLookMs (silence before looking whether a command waits for
   *   input; 0: never; default DEFAULT_INPUT_LOOK_MS), agentEnv (true: the
   *   preset of applyAgentEnv(), before env),
   *   noticePosition ('last', the default, or 'first': where the
   *   truncation notice goes), spillDir (an absolute directory: the whole
   *   text of a stream cut by the output limit is kept in a file there)
   *   with spillFileMax, spillTotalMax (0: the defaults) and
   *   spillKeepFiles (see setSpillDir()), redactValues ({NAME: secret}:
   *   see redactValue()), redactEnv (true: the default globs, or an array
   *   of globs; see redactEnv()), redactShapes (true, or {keys,
   *   privateKeys}; see redactShapes()),
   *   encoding ('utf8' default, or 'buffer')
   */
  constructor(opts = {}) {
    const out = [null];
    const rc = C.shexec_session_new(out);
    if (rc < 0) throw makeError(rc);
    this._ptr = out[0];
    this._fdbuf = Buffer.alloc(16 * POLLFD_SIZE);
    this._timeout = new Int32Array(1);
    this._runs = new Set(); // pending foreground runs (RunState)
    this._tasks = new Set(); // live Task objects holding a C task
    this._knownTaskIds = new Set(); // leftovers and tool tasks, killed on close
    this._closing = null;
    this._encoding = opts.encoding || 'utf8';
    try {
      this._configure(opts);
    } catch (e) {
      C.shexec_session_free(this._ptr);
      this._ptr = null;
      throw e;
    }
    pump.sessions.add(this);
  }

  _configure(o) {
    const sp = this._ptr;
    if (o.cwd !== undefined) check(C.shexec_session_set_cwd(sp, String(o.cwd)), sp);
    if (o.timeoutMs !== undefined || o.maxTimeoutMs !== undefined) {
      const max = o.maxTimeoutMs !== undefined ? u32(o.maxTimeoutMs, 'maxTimeoutMs', { zeroOk: false })
        : Math.max(600000, o.timeoutMs);
      const def = o.timeoutMs !== undefined ? u32(o.timeoutMs, 'timeoutMs', { zeroOk: false })
        : Math.min(120000, max);
      check(C.shexec_session_set_timeouts_ms(sp, def, max), sp);
    }
    if (o.killGraceMs !== undefined) check(C.shexec_session_set_kill_grace_ms(sp, u32(o.killGraceMs, 'killGraceMs')), sp);
    if (o.leftoversDrainMs !== undefined) {
      check(C.shexec_session_set_leftovers_drain_ms(sp, u32(o.leftoversDrainMs, 'leftoversDrainMs')), sp);
    }
    if (LIMIT_OPTS(o)) {
      check(C.shexec_session_set_output_limit(sp, o.outputLimit ?? 30000,
        pick(UNITS, o.outputUnit ?? 'chars', 'outputUnit'), keepOf(o)), sp);
    }
    if (o.envInherit !== undefined) check(C.shexec_session_set_env_inherit(sp, o.envInherit ? 1 : 0), sp);
    // before env: the variables given there override the preset's
    if (o.agentEnv) check(C.shexec_session_apply_agent_env(sp), sp);
    for (const [k, v] of Object.entries(o.env || {})) this.setEnv(k, v);
    for (const g of o.envDeny || []) check(C.shexec_session_env_deny(sp, String(g)), sp);
    for (const g of o.envAllow || []) check(C.shexec_session_env_allow(sp, String(g)), sp);
    if (o.shell !== undefined && o.shell !== null) {
      const argv = Array.isArray(o.shell) ? o.shell.map(String) : [String(o.shell)];
      check(C.shexec_session_set_shell(sp, [...argv, null], 0), sp); // SHEXEC_WRAPPER_LOCAL
    }
    if (o.maxTasks !== undefined) check(C.shexec_session_set_max_tasks(sp, u32(o.maxTasks, 'maxTasks')), sp);
    if (o.containment !== undefined) {
      check(C.shexec_session_set_containment(sp, o.containment === null ? null : String(o.containment)), sp);
    }
    // after containment: the library refuses a limit that no cgroup holds
    for (const [limit, value] of limitPairs(o.limits)) {
      check(C.shexec_session_set_limit(sp, limit, value), sp);
    }
    if (o.watchdog !== undefined) check(C.shexec_session_set_watchdog(sp, o.watchdog ? 1 : 0), sp);
    if (o.persistEnv !== undefined) check(C.shexec_session_set_persist_env(sp, o.persistEnv ? 1 : 0), sp);
    if (o.onLeftovers !== undefined) {
      check(C.shexec_session_set_on_leftovers(sp, pick(ON_LEFTOVERS, o.onLeftovers, 'onLeftovers')), sp);
    }
    if (o.idleTimeoutMs !== undefined || o.idleAction !== undefined) {
      // one left out stays as it is
      const action = [0];
      const ms = C.shexec_session_idle_timeout_ms(sp, action);
      check(C.shexec_session_set_idle_timeout_ms(sp,
        o.idleTimeoutMs !== undefined ? u32(o.idleTimeoutMs, 'idleTimeoutMs') : ms,
        o.idleAction !== undefined ? pick(IDLE_ACTIONS, o.idleAction, 'idleAction') : action[0]), sp);
    }
    if (o.backgroundOnTimeoutMs !== undefined) {
      check(C.shexec_session_set_background_on_timeout(sp, u32(o.backgroundOnTimeoutMs, 'backgroundOnTimeoutMs')), sp);
    }
    if (o.inputLookMs !== undefined) check(C.shexec_session_set_input_look_ms(sp, u32(o.inputLookMs, 'inputLookMs')), sp);
    if (o.noticePosition !== undefined) this.setNoticePosition(o.noticePosition);
    if (o.spillDir !== undefined && o.spillDir !== null) {
      this.setSpillDir(o.spillDir, { fileMax: o.spillFileMax, totalMax: o.spillTotalMax, keepFiles: o.spillKeepFiles });
    } else if (o.spillFileMax !== undefined || o.spillTotalMax !== undefined || o.spillKeepFiles !== undefined) {
      throw new InvalidArgumentError(-1, 'spillFileMax, spillTotalMax and spillKeepFiles need spillDir');
    }
    for (const [name, value] of redactPairs(o.redactValues)) this.redactValue(name, value);
    if (o.redactEnv !== undefined && o.redactEnv !== false && o.redactEnv !== null) {
      this.redactEnv(o.redactEnv === true ? undefined : o.redactEnv);
    }
    if (o.redactShapes !== undefined) this.redactShapes(o.redactShapes);
  }

  _live() {
    if (!this._ptr || this._closing) throw new ClosedError(-6, 'the session is closed');
    return this._ptr;
  }

  /**
   * The session's settings as they are now, named as the constructor's
   * options: timeoutMs, maxTimeoutMs, killGraceMs, leftoversDrainMs, outputLimit, outputUnit,
   * outputKeep, outputWithinLimit, envInherit, maxTasks, onLeftovers, watchdog, persistEnv,
   * containment ({kind: 'cgroup', detail: the session's cgroup directory},
   * or {kind: 'group', detail: why not}), limits ({memory, swap, pids,
   * cpu}, 0 for none), shell (its argv as given, or null for the
   * default shell), idleTimeoutMs (0: none) and idleAction ('end'|'yield'),
   * backgroundOnTimeoutMs (the cap; 0: off), inputLookMs (0: never looks),
   * noticePosition ('last'|'first') and spillDir (null when off).
   */
  get settings() {
    const sp = this._live();
    const def = [0], max = [0], limit = [0], unit = [0], keep = [0];
    check(C.shexec_session_timeouts_ms(sp, def, max), sp);
    check(C.shexec_session_output_limit(sp, limit, unit, keep), sp);
    const nameOf = (table, v) => Object.keys(table).find((k) => table[k] === v);
    const detail = [null];
    const contained = C.shexec_session_containment(sp, detail);
    const idleAction = [0];
    const idleTimeoutMs = C.shexec_session_idle_timeout_ms(sp, idleAction);
    return {
      timeoutMs: def[0],
      maxTimeoutMs: max[0],
      killGraceMs: C.shexec_session_kill_grace_ms(sp),
      leftoversDrainMs: C.shexec_session_leftovers_drain_ms(sp),
      outputLimit: Number(limit[0]),
      outputUnit: nameOf(UNITS, unit[0]),
      outputKeep: nameOf(KEEPS, keep[0] & ~KEEP_WITHIN_LIMIT),
      outputWithinLimit: (keep[0] & KEEP_WITHIN_LIMIT) !== 0,
      envInherit: C.shexec_session_env_inherit(sp) === 1,
      maxTasks: C.shexec_session_max_tasks(sp),
      onLeftovers: nameOf(ON_LEFTOVERS, C.shexec_session_on_leftovers(sp)),
      watchdog: C.shexec_session_watchdog(sp) === 1,
      persistEnv: C.shexec_session_persist_env(sp) === 1,
      containment: { kind: CONTAIN_NAMES[contained] || 'group', detail: detail[0] || '' },
      limits: Object.fromEntries(Object.entries(LIMITS).map(([name, limit]) =>
        [name, Number(C.shexec_session_limit(sp, limit))])),
      shell: shellArgv(sp),
      idleTimeoutMs,
      idleAction: nameOf(IDLE_ACTIONS, idleAction[0]),
      backgroundOnTimeoutMs: C.shexec_session_background_on_timeout(sp),
      inputLookMs: C.shexec_session_input_look_ms(sp),
      noticePosition: nameOf(NOTICE_POSITIONS, C.shexec_session_notice_position(sp)),
      spillDir: C.shexec_session_spill_dir(sp) || null,
    };
  }

  /** The session's working directory (absolute): where the next command starts. */
  get cwd() {
    return this._ptr ? C.shexec_session_cwd(this._ptr) : null;
  }

  /** Set the working directory of the next commands (NoCwdError when missing). */
  setCwd(dir) {
    const sp = this._live();
    check(C.shexec_session_set_cwd(sp, String(dir)), sp);
  }

  /** Set (or, with null/undefined, remove) a variable for every later command. */
  setEnv(name, value) {
    const sp = this._ptr;
    check(C.shexec_session_setenv(sp, String(name), value === null || value === undefined ? null : String(value)), sp);
  }

  /**
   * The agent environment preset (the agentEnv option): PAGER, GIT_PAGER,
   * GH_PAGER, MANPAGER, SYSTEMD_PAGER=cat, GIT_TERMINAL_PROMPT=0,
   * GIT_EDITOR and EDITOR=false, DEBIAN_FRONTEND=noninteractive,
   * PIP_NO_INPUT=1, LANG=C.UTF-8 when neither LANG nor LC_ALL is set, as
   * session variables (a later setEnv() or a run's env overrides each);
   * and for pipe runs only, NO_COLOR=1 and TERM=dumb, unless the session's
   * own variables or the run's name them (getEnv() does not show these two).
   */
  applyAgentEnv() {
    const sp = this._live();
    check(C.shexec_session_apply_agent_env(sp), sp);
  }

  // -- output for models: the notice, spill files, redaction ---------------------

  /**
   * Where the truncation notice of a stream cut by the output limit goes,
   * for runs started from now on: 'last' (the default, after the kept
   * text) or 'first' (before it: a model reading the start sees it).
   */
  setNoticePosition(where) {
    const sp = this._live();
    check(C.shexec_session_set_notice_position(sp, pick(NOTICE_POSITIONS, where, 'noticePosition')), sp);
  }

  /**
   * Keep the whole text of every stream that outgrows its output limit in a
   * file of `dir` (an absolute path to an existing directory), named
   * shexec-<pid>-<run number>-<stdout|stderr>.txt (-1 to -15 before .txt
   * when that name is taken), mode 0600; the notice
   * then ends with where it is, and result.spill says so too. fileMax: the
   * most one file holds (0: DEFAULT_SPILL_FILE_MAX); totalMax: the most the
   * session's files hold together (0: DEFAULT_SPILL_TOTAL_MAX; the oldest
   * are removed to make room). The files are removed when the session is
   * closed, or the spill turned off (dir null), unless keepFiles. A write
   * error never changes a command's result: its notice says the spill
   * failed. For runs started from now on. InvalidArgumentError for a
   * relative path or one that is not a directory, or fileMax above
   * totalMax (nothing changes then).
   */
  setSpillDir(dir, { fileMax = 0, totalMax = 0, keepFiles = false } = {}) {
    const sp = this._live();
    check(C.shexec_session_set_spill_dir(sp, dir === null || dir === undefined ? null : String(dir),
      u64(fileMax ?? 0, 'fileMax'), u64(totalMax ?? 0, 'totalMax'), keepFiles ? SPILL_KEEP_FILES : 0), sp);
  }

  /**
   * Hide `value` (a string or Buffer, 4 to 65536 bytes) from the output of
   * runs started from now on: every occurrence becomes "[REDACTED:NAME]"
   * (name: 1 to 64 letters, digits or '_') in the onOutput chunks, the
   * result, spill files and tool results, also where the command's writes
   * split it. A safety net, not a boundary: a command that encodes the
   * secret passes it. InvalidArgumentError for a bad name or length,
   * LimitError past 100000 values.
   */
  redactValue(name, value) {
    const sp = this._live();
    const b = toBuffer(value, 'value');
    check(C.shexec_session_redact_value(sp, String(name), b, b.length), sp);
  }

  /**
   * Also hide the values (of at least 8 bytes) of the environment's
   * variables whose names match one of `globs` ('*' and '?', case
   * ignored), each as "[REDACTED:ITS_NAME]": the host's environment (when
   * inherited) and the session's variables, read as each run starts. No
   * globs: the library's defaults (*KEY* *SECRET* *TOKEN* *PASSWORD*
   * *CREDENTIAL*); an empty array: off, as a new session has.
   */
  redactEnv(globs) {
    const sp = this._live();
    if (globs === undefined || globs === null) {
      check(C.shexec_session_redact_env(sp, null, 0), sp);
      return;
    }
    if (!Array.isArray(globs)) throw new TypeError('redactEnv takes an array of globs (none: the defaults)');
    const list = globs.map(String);
    // never a NULL array: n 0 with an array turns it off, NULL means the defaults
    check(C.shexec_session_redact_env(sp, [...list, null], list.length), sp);
  }

  /**
   * Hide secrets found by their shape, for runs started from now on: keys,
   * a word that starts with a known key prefix and is long enough to be a
   * key (ghp_ and github_pat_ as GITHUB_TOKEN, sk-ant- as ANTHROPIC_API_KEY,
   * sk- as OPENAI_API_KEY, AKIA as AWS_ACCESS_KEY_ID, xoxb- and the like as
   * SLACK_TOKEN); privateKeys, a PEM private-key block as PRIVATE_KEY.
   * true (the argument's default): both; false: none, as a new session has.
   */
  redactShapes(which = true) {
    const sp = this._live();
    check(C.shexec_session_redact_shapes(sp, shapeBits(which)), sp);
  }

  /** Forget every redaction the session was given: values, globs, shapes. */
  redactClear() {
    const sp = this._live();
    check(C.shexec_session_redact_clear(sp), sp);
  }

  get closed() {
    return !this._ptr || !!this._closing;
  }

  /** Whether exports carry from one command to the next (the persistEnv option). */
  get persistEnv() {
    return !!C.shexec_session_persist_env(this._live());
  }

  /**
   * The value of `name` in the environment the next command starts with
   * (with persistEnv: what the last command exported), or null when unset.
   */
  getEnv(name) {
    const sp = this._live();
    const v = C.shexec_session_getenv(sp, String(name));
    if (v === null && C.shexec_session_errmsg(sp)) check(-1, sp);
    return v;
  }

  // -- commands --------------------------------------------------------------

  /**
   * Make and configure a C run for `how` ('run', 'start' or 'runSync'); the
   * caller starts it. The settings that only shexec_run_exec() uses (a
   * yield time, background on timeout, an idle timeout that yields) are
   * refused for run() and start(), which never call it: they would do
   * nothing there.
   */
  _newRun(command, o, how) {
    const sp = this._live();
    const sync = how === 'runSync';
    for (const name of ['onOutput', 'onInput']) {
      if (o[name] !== undefined && o[name] !== null && typeof o[name] !== 'function') {
        throw new TypeError(`${name} must be a function`);
      }
    }
    const given = (v) => v !== undefined && v !== null;
    const syncOnly = (what) => new InvalidArgumentError(-1,
      `${what} applies to runSync() only: ${how}() does not wait inside shexec_run_exec(), where a command is moved to the background`);
    const yieldMs = given(o.yieldMs) ? u32(o.yieldMs, 'yieldMs') : null;
    if (yieldMs && !sync) throw syncOnly('yieldMs');
    const cap = given(o.backgroundOnTimeoutMs) ? u32(o.backgroundOnTimeoutMs, 'backgroundOnTimeoutMs') : null;
    if (cap && !sync) throw syncOnly('backgroundOnTimeoutMs');
    let idle = null;
    if (given(o.idleTimeoutMs) || given(o.idleAction)) {
      const action = given(o.idleAction) ? pick(IDLE_ACTIONS, o.idleAction, 'idleAction') : IDLE_ACTIONS.end;
      // idleAction alone: the session's idle time with this action
      const ms = given(o.idleTimeoutMs) ? u32(o.idleTimeoutMs, 'idleTimeoutMs')
        : C.shexec_session_idle_timeout_ms(sp, [0]);
      if (action === IDLE_ACTIONS.yield && !sync) throw syncOnly("idleAction 'yield'");
      idle = [ms, action];
    }
    const cmd = toBuffer(command, 'command');
    // said here: an empty Buffer reaches C as a NULL pointer, which the
    // library would report as "command is NULL"
    if (cmd.length === 0) throw new InvalidArgumentError(-1, 'the command is empty');
    const out = [null];
    check(C.shexec_run_new_bytes(out, sp, cmd, cmd.length), sp);
    const rp = out[0];
    try {
      if (o.timeoutMs !== undefined && o.timeoutMs !== null) {
        check(C.shexec_run_set_timeout_ms(rp, u32(o.timeoutMs, 'timeoutMs', { zeroOk: false })), sp);
      }
      if (o.cwd !== undefined && o.cwd !== null) check(C.shexec_run_set_cwd(rp, String(o.cwd)), sp);
      // in place of the session's; whether a cgroup can hold them is checked at the start
      for (const [limit, value] of limitPairs(o.limits)) check(C.shexec_run_set_limit(rp, limit, value), sp);
      for (const [k, v] of Object.entries(o.env || {})) {
        check(C.shexec_run_setenv(rp, k, v === null || v === undefined ? null : String(v)), sp);
      }
      for (const [name, value] of redactPairs(o.redactValues)) {
        check(C.shexec_run_redact_value(rp, String(name), value, value.length), sp);
      }
      if (o.redactOwnEnv) check(C.shexec_run_redact_own_env(rp, 1), sp);
      if (LIMIT_OPTS(o)) {
        check(C.shexec_run_set_output_limit(rp, o.outputLimit ?? 30000,
          pick(UNITS, o.outputUnit ?? 'chars', 'outputUnit'), keepOf(o)), sp);
      }
      if (o.pty) {
        check(C.shexec_run_set_pty(rp, o.pty === 'echo' ? 2 : 1), sp);
        if (o.ptySize) check(C.shexec_run_set_pty_size(rp, o.ptySize.cols, o.ptySize.rows), sp);
      }
      if (o.ansi !== undefined) check(C.shexec_run_set_ansi(rp, pick({ keep: 0, strip: 1 }, o.ansi, 'ansi')), sp);
      if (o.stdin !== undefined && o.stdin !== null && o.stdin !== false && !o.pty) {
        check(C.shexec_run_set_stdin(rp, 1), sp);
      }
      if (yieldMs !== null) check(C.shexec_run_set_yield_ms(rp, yieldMs), sp);
      if (cap !== null) check(C.shexec_run_set_background_on_timeout(rp, cap), sp);
      // run() ends a command at its timeout, as the header says of a run
      // not inside shexec_run_exec(); the library built at this writing
      // moves a started run's deadline to the session's cap all the same
      else if (how === 'run' && C.shexec_session_background_on_timeout(sp)) {
        check(C.shexec_run_set_background_on_timeout(rp, 0), sp);
      }
      if (idle) check(C.shexec_run_set_idle_timeout_ms(rp, idle[0], idle[1]), sp);
    } catch (e) {
      C.shexec_run_free(rp);
      throw e;
    }
    return rp;
  }

  /**
   * Run `command` and resolve to its result once it has ended: {stdout,
   * stderr, exitCode, signal, state, timedOut, cwd, truncated, leftovers,
   * leftoverTaskId, cost, limitsHit (the limits that stopped it, e.g.
   * ['memory']), notice, ...}. A non-zero exit or a timeout is data, not an
   * error. Rejects with a ShexecError when the command could not be run
   * (NoCwdError, SpawnError, ...), with an AbortError (its .result set)
   * when opts.signal aborted it: its process tree is terminated first.
   * @param {string|Buffer} command
   * @param {object} [opts] timeoutMs, cwd, env, onOutput(data, stream),
   *   stdin (string|Buffer|true), pty (true|'echo'), ptySize {cols, rows},
   *   ansi ('keep'|'strip'), outputLimit/outputUnit/outputKeep/outputWithinLimit,
   *   limits ({memory, swap, pids, cpu} for this run, in place of the
   *   session's; 0 for none), idleTimeoutMs (in place of the session's; 0:
   *   none) with idleAction ('end' only here), onInput(wait, io) (found
   *   waiting for input: wait {state, prompt, echoOff}; io.write(),
   *   io.closeStdin() answer, io.setPtySize(cols, rows) resizes a pty),
   *   redactValues ({NAME: secret} hidden from this run's output too),
   *   redactOwnEnv (true: the values of this run's env variables whose
   *   names match the session's redactEnv globs, or
   *   the default globs, are hidden), signal, encoding ('utf8' default, or
   *   'buffer'). The result also says yielded ('none' here), taskId,
   *   deadline ('none', 'timeout', 'idle'), inputWait, counts ({stdout,
   *   stderr}: {keptChars, keptBytes, totalChars, totalBytes, totalLines},
   *   what the output limit kept of each stream and what it carried), spill
   *   ({stdout, stderr}: {state, path, bytes, error} of each stream's
   *   spill file) and redactions ({stdout, stderr}: how many secrets were
   *   hidden).
   */
  run(command, opts = {}) {
    return new Promise((resolve, reject) => {
      if (opts.signal && opts.signal.aborted) {
        reject(new AbortError(opts.signal.reason));
        return;
      }
      const sp = this._live();
      const rp = this._newRun(command, opts, 'run');
      let rs;
      try {
        rs = new RunState(this, rp, opts, resolve, reject);
      } catch (e) {
        C.shexec_run_free(rp);
        throw e;
      }
      const rc = C.shexec_run_start(rp);
      if (rc < 0) {
        const err = failure(rc, sp);
        rs.release();
        C.shexec_run_free(rp);
        reject(err);
        return;
      }
      this._runs.add(rs);
      pump.ref(1);
      rs.started();
      pump.kick();
    });
  }

  /**
   * Run `command` with the library's shexec_run_exec(), which BLOCKS this
   * thread (timers, I/O and other sessions' callbacks wait) until the
   * command ends or is moved to the background, and return its result.
   * Only this path moves a command to the background: with opts.yieldMs it
   * returns after that time, or as soon as the command is found waiting
   * for input (the session's inputLookMs), with the command still running;
   * with opts.backgroundOnTimeoutMs (or the session's) at its timeout; with
   * idleAction 'yield' at its idle timeout. The result then has state
   * 'running', the output so far, yielded ('time', 'timeout', 'idle',
   * 'input'; else 'none'), and taskId: the command goes on as that task of
   * the session, to take with task(taskId) (write(), read() what is new,
   * done). It keeps its timeout as its lifetime cap (or the cap), does not
   * move the session's cwd, and like a leftover it does not keep the
   * process alive until taken. A non-zero exit or a timeout is data; throws
   * a ShexecError when the command could not be run (NoCwdError, ...).
   * @param {string|Buffer} command
   * @param {object} [opts] as run() (stdin only true: input goes to the
   *   task after a yield; no signal), and yieldMs, backgroundOnTimeoutMs,
   *   idleTimeoutMs with idleAction ('end'|'yield'); onOutput and
   *   onInput(wait) are called before it returns, in order
   */
  runSync(command, opts = {}) {
    const sp = this._live();
    if (opts.signal !== undefined && opts.signal !== null) {
      throw new InvalidArgumentError(-1, 'runSync() takes no signal: nothing runs while it blocks (use timeoutMs)');
    }
    if (opts.stdin !== undefined && opts.stdin !== null && typeof opts.stdin !== 'boolean') {
      throw new InvalidArgumentError(-1,
        'runSync() takes stdin: true only (input is written once the command runs: to its task after a yield; or use run())');
    }
    const encoding = opts.encoding || this._encoding;
    const rp = this._newRun(command, opts, 'runSync');
    let sink = null;
    let watch = null;
    const release = () => {
      if (sink) sink.release();
      if (watch) watch.release();
    };
    let rc;
    try {
      if (opts.onOutput) {
        sink = new OutputSink(encoding);
        check(C.shexec_run_set_output_fn(rp, sink.cb, null), sp);
      }
      if (opts.onInput) watch = new InputWatch(rp, encoding, sp);
      // the session's other commands are pumped meanwhile: their callbacks
      // only queue, delivered by the next round (see below)
      rc = C.shexec_run_exec(rp);
    } catch (e) {
      release();
      C.shexec_run_free(rp);
      throw e;
    }
    if (rc < 0) {
      const err = failure(rc, sp);
      release();
      C.shexec_run_free(rp);
      throw err;
    }
    const result = collectResult(rp, sp, encoding);
    if (result.leftoverTaskId) this._knownTaskIds.add(result.leftoverTaskId);
    if (result.taskId) this._knownTaskIds.add(result.taskId); // ended by close() unless taken
    // moved to the background: the command goes on as the task, so this
    // call's output callback comes off its run (the task's wrapper sets its own)
    if (sink && !finished(rp)) C.shexec_run_set_output_fn(rp, null, null);
    if (watch) watch.release();
    C.shexec_run_free(rp); // after a yield only the handle: the command goes on as the task
    if (sink) {
      const emit = (d, st) => safeCall(opts.onOutput, d, st);
      sink.flush(emit);
      sink.end(emit);
      sink.release();
    }
    if (watch) watch.flush((w) => safeCall(opts.onInput, w, null));
    // commands of this session that ended inside the call are settled now
    // (their next poll round might be far off); a yielded one is polled
    if (this._runs.size || this._tasks.size) {
      setImmediate(() => {
        if (this._ptr) this._afterProcess();
      });
    }
    pump.kick();
    return result;
  }

  /**
   * Start `command` in the background as a task: a Task (an EventEmitter
   * with 'output' (data, stream) and 'done' (result) events, async-iterable
   * over {stream, data} chunks). Throws a ShexecError when it cannot start
   * (LimitError when the session holds its maximum of tasks).
   * @param {string|Buffer} command
   * @param {object} [opts] as run(), and stdin: true for write();
   *   onInput(wait, task) is an 'input' listener
   */
  start(command, opts = {}) {
    if (opts.signal && opts.signal.aborted) throw new AbortError(opts.signal.reason);
    const sp = this._live();
    const rp = this._newRun(command, opts, 'start');
    const task = new Task(this, opts);
    task._bindRun(rp); // the callback is set before the start: nothing is missed
    const out = [null];
    const rc = C.shexec_run_start_task(out, rp);
    if (rc < 0) {
      const err = failure(rc, sp);
      task._unbind();
      C.shexec_run_free(rp);
      throw err;
    }
    task._attach(out[0], true);
    return task;
  }

  /**
   * The task with this id (leftovers adopted from a command, such as the
   * leftoverTaskId of a run whose command was `server &`; the taskId of a
   * runSync() that moved its command to the background: read() gives what
   * came after the yield). Each call gives
   * the same object while the task lives. Like a started task, it keeps the
   * process alive until it ends (unref() lets it go); leftovers nobody
   * looks up never do. NoTaskError when there is none.
   */
  task(id) {
    for (const t of this._tasks) if (t.id === id) return t;
    const sp = this._live();
    const out = [null];
    check(C.shexec_session_take_task(out, sp, String(id)), sp);
    const task = new Task(this, {});
    task._bindRun(C.shexec_task_run(out[0]));
    task._attach(out[0], true);
    return task;
  }

  // -- tools (the shell as tools for a model; see shexec_tool.h) -------------------

  /** The enabled tools as [{name, description, inputSchema}]. */
  listTools() {
    const sp = this._live();
    const out = [null];
    check(C.shexec_tool_list(out, sp), sp);
    return takeJson(out[0]);
  }

  setToolEnabled(name, enabled = true) {
    const sp = this._live();
    check(C.shexec_tool_set_enabled(sp, String(name), enabled ? 1 : 0), sp);
  }

  isToolEnabled(name) {
    return C.shexec_tool_is_enabled(this._live(), String(name)) === 1;
  }

  renameTool(name, newName) {
    const sp = this._live();
    check(C.shexec_tool_rename(sp, String(name), String(newName)), sp);
  }

  /**
   * Call a tool with its arguments (an object) and resolve to its JSON
   * result (an object). A foreground bash call runs without blocking the
   * event loop; task_output answers at once; task_kill waits for the killed
   * task to end (its SIGTERM, at most the kill grace), as the library does.
   * Rejects with ToolNotAvailableError, InvalidArgumentError, NoTaskError,
   * ... carrying the library's message for the model (also in .result).
   */
  async callTool(name, args = {}) {
    const sp = this._live();
    const json = typeof args === 'string' ? args : JSON.stringify(args);
    const runOut = [null];
    const bg = [0];
    let rc = C.shexec_tool_prepare(runOut, bg, sp, String(name), json);
    if (rc === 0 && !bg[0]) {
      const rp = runOut[0];
      const result = await new Promise((resolve, reject) => {
        const rs = new RunState(this, rp, {}, resolve, reject);
        rs.toolResult = true;
        rc = C.shexec_run_start(rp);
        if (rc < 0) {
          const err = failure(rc, sp);
          rs.release();
          C.shexec_run_free(rp);
          reject(err);
          return;
        }
        rs.started();
        this._runs.add(rs);
        pump.ref(1);
        pump.kick();
      });
      return result;
    }
    if (rc === 0) C.shexec_run_free(runOut[0]); // background: the tool layer starts it itself
    const out = [null];
    rc = C.shexec_tool_call(out, sp, String(name), json);
    const err = rc < 0 ? failure(rc, sp) : null;
    const result = takeJson(out[0]);
    if (result && result.task_id && result.status === 'running') this._knownTaskIds.add(result.task_id);
    if (err) {
      err.result = result;
      throw err;
    }
    pump.kick();
    return result;
  }

  // -- pumping (called by the pump) ---------------------------------------------

  _pollSegment() {
    if (!this._ptr) return null;
    for (;;) {
      const cap = this._fdbuf.length / POLLFD_SIZE;
      const n = C.shexec_session_pollfds(this._fdbuf, cap, this._timeout, this._ptr);
      if (n < 0) {
        this._fatal(failure(n, this._ptr));
        return null;
      }
      if (n > cap) {
        this._fdbuf = Buffer.alloc(n * 2 * POLLFD_SIZE);
        continue;
      }
      const timeout = this._timeout[0];
      if (n === 0 && timeout < 0) {
        // nothing to wait for; a task found after it ended is settled here
        this._afterProcess();
        return null;
      }
      return { session: this, fds: this._fdbuf, n, timeout, offset: 0 };
    }
  }

  _process(fds, n) {
    if (!this._ptr) return;
    const rc = C.shexec_session_process(this._ptr, fds, n);
    if (rc < 0) this._fatal(failure(rc, this._ptr));
  }

  _afterProcess() {
    // output first (it happened before the end), then the ends
    for (const rs of this._runs) rs.flushEvents();
    for (const t of this._tasks) t._flushEvents();
    for (const rs of [...this._runs]) if (rs.poll()) this._runs.delete(rs);
    for (const t of [...this._tasks]) t._poll();
    this._maybeFinishClose();
  }

  /** The loop failed (poll, memory): nothing can be pumped any more. */
  _fatal(err) {
    for (const rs of [...this._runs]) {
      C.shexec_run_cancel(rs.rp);
    }
    process.emitWarning(`shexec: ${err.message}`);
  }

  // -- closing -----------------------------------------------------------------

  /**
   * Close the session: every command it still runs (runs, tasks, adopted
   * leftovers) is terminated (SIGTERM to its tree, SIGKILL after the kill
   * grace) without blocking the event loop; pending run() promises resolve
   * with state 'cancelled', tasks end 'killed'. Resolves once all of them
   * have ended and the session is freed. Idempotent.
   */
  close() {
    if (this._closing) return this._closing;
    if (!this._ptr) return Promise.resolve();
    // the wait for the end keeps the process alive, as a pending run does
    pump.ref(1);
    this._closing = new Promise((resolve) => {
      this._closeResolve = () => {
        pump.ref(-1);
        resolve();
      };
    });
    const sp = this._ptr;
    for (const rs of this._runs) C.shexec_run_cancel(rs.rp);
    for (const id of this._knownTaskIds) {
      const out = [null];
      if (C.shexec_session_take_task(out, sp, id) === 0 && !this._ownsTask(out[0])) {
        const t = new Task(this, {});
        t._bindRun(C.shexec_task_run(out[0]));
        t._attach(out[0], false);
      }
    }
    for (const t of this._tasks) if (t._tp) C.shexec_run_cancel(C.shexec_task_run(t._tp));
    pump.kick();
    this._maybeFinishClose();
    return this._closing;
  }

  _ownsTask(tp) {
    for (const t of this._tasks) if (t._tp === tp) return true;
    return false;
  }

  _maybeFinishClose() {
    if (!this._closing || !this._ptr || this._runs.size > 0) return;
    for (const t of this._tasks) if (t._tp) return;
    this._freeNow();
    this._closeResolve();
  }

  /** Free at once (blocking until the library has terminated what runs). */
  _freeNow() {
    if (!this._ptr) return;
    const sp = this._ptr;
    for (const rs of [...this._runs]) rs.abandon();
    for (const t of [...this._tasks]) t._abandon();
    this._ptr = null;
    pump.sessions.delete(this);
    C.shexec_session_free(sp);
  }
}

/**
 * Length of the well-formed UTF-8 sequence at buf[i], 0 when the byte there
 * starts none: the library's rule (lib/utf8.h, Unicode table 3-7: no
 * overlongs, no surrogates, at most U+10FFFF).
 */
function utf8SequenceLength(buf, i) {
  const c = buf[i];
  if (c < 0x80) return 1;
  let need, lo = 0x80, hi = 0xbf; // the allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) need = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    need = 3;
    if (c === 0xe0) lo = 0xa0;
    else if (c === 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    need = 4;
    if (c === 0xf0) lo = 0x90;
    else if (c === 0xf4) hi = 0x8f;
  } else return 0;
  for (let k = 1; k < need; k++) {
    if (i + k >= buf.length) return 0;
    const b = buf[i + k];
    if (k === 1 ? b < lo || b > hi : b < 0x80 || b > 0xbf) return 0;
  }
  return need;
}

/**
 * Bytes as the library's JSON writer puts them into a tool result: each
 * well-formed UTF-8 sequence as its character, every other byte as one
 * U+FFFD. Buffer#toString() would give one U+FFFD for some runs of bad
 * bytes, and the result must read the same whether the library or the
 * binding rendered it.
 */
function toolText(buf) {
  let text = '';
  let start = 0; // where the well-formed bytes not yet decoded begin
  let i = 0;
  while (i < buf.length) {
    const n = utf8SequenceLength(buf, i);
    if (n) {
      i += n;
      continue;
    }
    text += buf.toString('utf8', start, i) + '\uFFFD';
    start = ++i;
  }
  return text + buf.toString('utf8', start, i);
}

function takeJson(ptr) {
  if (!ptr) return null;
  try {
    return JSON.parse(koffi.decode(ptr, 'char', -1));
  } finally {
    C.shexec_free(ptr);
  }
}

// --------------------------------------------------------------------------
// Output callbacks
// --------------------------------------------------------------------------

/**
 * One output callback registered with koffi for a C run: it only copies the
 * chunk into a queue (it runs inside shexec_session_process(), where the
 * library refuses starts and waits); the queue is delivered to JS listeners
 * right after that call returns, so listeners may do anything.
 */
class OutputSink {
  constructor(encoding) {
    this.encoding = encoding;
    this.queue = [];
    this.decoders = encoding === 'buffer' ? null
      : { [STDOUT]: new StringDecoder(encoding), [STDERR]: new StringDecoder(encoding) };
    this.cb = koffi.register((user, stream, data, len) => {
      this.queue.push([stream, copyOut(data, Number(len))]);
    }, koffi.pointer(OutputFn));
  }

  /** Deliver queued chunks: emit(dataAsEncoded, streamName). */
  flush(emit) {
    if (this.queue.length === 0) return;
    const q = this.queue;
    this.queue = [];
    for (const [stream, buf] of q) {
      const data = this.decoders ? this.decoders[stream].write(buf) : buf;
      if (this.decoders && data === '') continue;
      emit(data, STREAM_NAMES[stream]);
    }
  }

  /** The end: whatever a decoder still holds (an incomplete UTF-8 sequence). */
  end(emit) {
    if (!this.decoders) return;
    for (const stream of [STDOUT, STDERR]) {
      const rest = this.decoders[stream].end();
      if (rest) emit(rest, STREAM_NAMES[stream]);
    }
  }

  release() {
    if (this.cb) koffi.unregister(this.cb);
    this.cb = null;
  }
}

// --------------------------------------------------------------------------
// Input callbacks (a command found waiting for input)
// --------------------------------------------------------------------------

// One input callback for every run, registered with koffi on first use: the
// library passes the run, which names the watch (a Map by its address).
// Like an output callback it only copies (the state, the prompt: valid
// until the next loop round) into the watch's queue, delivered to JS
// listeners once the library's call has returned. It calls nothing but
// read-only accessors: a change here would drop the round's poll results.
const inputWatches = new Map();
let inputCb = null;

function inputCallback() {
  if (!inputCb) {
    inputCb = koffi.register((user, run) => {
      const watch = inputWatches.get(koffi.address(run));
      if (watch) watch.queue.push(inputWaitOf(run, watch.encoding));
    }, koffi.pointer(InputFn));
  }
  return inputCb;
}

/** The input callback set on C run `rp`; queue holds the waits found. */
class InputWatch {
  constructor(rp, encoding, sp) {
    this.key = koffi.address(rp);
    this.encoding = encoding;
    this.queue = [];
    check(C.shexec_run_set_input_fn(rp, inputCallback(), null), sp);
    inputWatches.set(this.key, this);
  }

  /** Deliver the queued waits: emit(wait). */
  flush(emit) {
    if (this.queue.length === 0) return;
    const q = this.queue;
    this.queue = [];
    for (const wait of q) emit(wait);
  }

  /** No more deliveries (the run is freed or handed on; its callback finds no watch). */
  release() {
    if (inputWatches.get(this.key) === this) inputWatches.delete(this.key);
  }
}

function safeCall(fn, ...args) {
  try {
    fn(...args);
  } catch (e) {
    // a listener's exception must not unwind through the pump; surface it
    // as Node surfaces an exception thrown by an event listener
    process.nextTick(() => {
      throw e;
    });
  }
}

// --------------------------------------------------------------------------
// A foreground run in flight
// --------------------------------------------------------------------------

class RunState {
  constructor(session, rp, opts, resolve, reject) {
    this.session = session;
    this.rp = rp;
    this.resolve = resolve;
    this.reject = reject;
    this.encoding = opts.encoding || session._encoding;
    this.onOutput = opts.onOutput || null;
    this.signal = opts.signal || null;
    this.aborted = false;
    this.toolResult = false;
    this.stdin = opts.stdin;
    this.sink = null;
    this.onInput = opts.onInput || null;
    this.watch = null;
    this.ended = false;
    this.onAbort = null;
    try {
      if (this.onOutput) {
        if (typeof this.onOutput !== 'function') throw new TypeError('onOutput must be a function');
        this.sink = new OutputSink(this.encoding);
        check(C.shexec_run_set_output_fn(rp, this.sink.cb, null), session._ptr);
      }
      if (this.onInput) {
        if (typeof this.onInput !== 'function') throw new TypeError('onInput must be a function');
        this.watch = new InputWatch(rp, this.encoding, session._ptr);
      }
    } catch (e) {
      this.release();
      throw e;
    }
    if (this.onInput) {
      // what an onInput listener answers with: input to the running command
      this.io = {
        write: (data) => {
          if (this.ended) throw new PipeError(-10, 'the command has ended');
          const b = toBuffer(data, 'input');
          check(C.shexec_run_write(this.rp, b, b.length), this.session._ptr);
          pump.kick();
        },
        closeStdin: () => {
          if (this.ended) throw new PipeError(-10, 'the command has ended');
          check(C.shexec_run_close_stdin(this.rp), this.session._ptr);
          pump.kick();
        },
        typeInput: (data) => {
          if (this.ended) throw new PipeError(-10, 'the command has ended');
          const b = toBuffer(data, 'input');
          check(C.shexec_run_type_input(this.rp, b, b.length), this.session._ptr);
          pump.kick();
        },
        sendSignal: (sig) => {
          const n = signalNumber(sig);
          if (this.ended) throw new StateError(-6, 'the command has finished: no signal was sent');
          check(C.shexec_run_send_signal(this.rp, n), this.session._ptr);
          pump.kick();
        },
        setPtySize: (cols, rows) => {
          if (this.ended) throw new PipeError(-10, 'the command has ended');
          check(C.shexec_run_set_pty_size(this.rp, u32(cols, 'cols', { zeroOk: false }),
            u32(rows, 'rows', { zeroOk: false })), this.session._ptr);
        },
      };
    }
  }

  started() {
    try {
      this.feed();
    } catch (e) {
      // the input could not be queued: end the command, report why
      this.startError = e;
      C.shexec_run_cancel(this.rp);
    }
  }

  feed() {
    const sp = this.session._ptr;
    if (this.stdin !== undefined && this.stdin !== null && this.stdin !== false && this.stdin !== true) {
      const b = toBuffer(this.stdin, 'stdin');
      if (b.length) check(C.shexec_run_write(this.rp, b, b.length), sp);
      check(C.shexec_run_close_stdin(this.rp), sp);
    }
    if (this.signal) {
      this.onAbort = () => {
        this.aborted = true;
        C.shexec_run_cancel(this.rp);
        pump.kick();
      };
      this.signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  flushEvents() {
    if (this.sink && this.onOutput) this.sink.flush((d, st) => safeCall(this.onOutput, d, st));
    if (this.watch) this.watch.flush((w) => safeCall(this.onInput, w, this.io));
  }

  /** True once finished and settled. */
  poll() {
    if (!finished(this.rp)) return false;
    this.flushEvents();
    if (this.sink && this.onOutput) this.sink.end((d, st) => safeCall(this.onOutput, d, st));
    const sp = this.session._ptr;
    let result;
    if (this.toolResult) {
      const out = [null];
      const rc = C.shexec_tool_result(out, this.rp);
      result = rc < 0 ? failure(rc, sp) : takeJson(out[0]);
    } else {
      result = collectResult(this.rp, sp, this.encoding);
      if (result.leftoverTaskId) this.session._knownTaskIds.add(result.leftoverTaskId);
    }
    this.ended = true;
    C.shexec_run_free(this.rp);
    this.finish(result);
    return true;
  }

  finish(result) {
    this.release();
    pump.ref(-1);
    if (this.startError) this.reject(this.startError);
    else if (result instanceof Error) this.reject(result);
    else if (this.aborted) this.reject(new AbortError(this.signal.reason, result));
    else this.resolve(result);
  }

  /** The session is being freed under us (process exit). */
  abandon() {
    const sp = this.session._ptr;
    C.shexec_run_cancel(this.rp);
    const result = collectResult(this.rp, sp, this.encoding);
    result.state = 'cancelled';
    this.ended = true;
    C.shexec_run_free(this.rp); // terminates and reaps
    this.session._runs.delete(this);
    this.finish(result);
  }

  release() {
    if (this.signal && this.onAbort) this.signal.removeEventListener('abort', this.onAbort);
    this.onAbort = null;
    if (this.sink) this.sink.release();
    if (this.watch) this.watch.release();
  }
}

// --------------------------------------------------------------------------
// Task
// --------------------------------------------------------------------------

/**
 * A background command. Events: 'output' (data, stream) as it arrives,
 * 'input' (wait, task) when it is found waiting for input (wait: {state:
 * 'waiting', prompt, echoOff}; answer with task.write()), 'done' (result)
 * once it ended. `done` is a promise of the same result
 * (never rejected; an abort through opts.signal ends it 'killed'). Async
 * iteration yields {stream, data} chunks until the end. The C task is
 * freed as soon as it has ended: its results stay readable here.
 */
/**
 * A task status given to toolResult(): a string the library can take as a
 * C string (a NUL would cut it short), or null for the default.
 */
function toolStatus(status) {
  if (status === undefined || status === null) return null;
  if (typeof status !== 'string') throw new TypeError('status must be a string');
  if (status.includes('\0')) throw new InvalidArgumentError(-1, 'status contains a NUL character');
  return status;
}

/**
 * The task tools' result object of an ended task, taken just before its C
 * task is freed, with empty output: toolResult() puts the output it is
 * given into a copy. The error instead when the library could not render
 * it (out of memory), thrown by toolResult() then.
 */
function toolEndOf(tp, sp) {
  const out = [null];
  const rc = C.shexec_tool_task_result(out, tp, null, null, 0, null, 0);
  const result = takeJson(out[0]);
  return rc < 0 ? failure(rc, sp) : result;
}

class Task extends EventEmitter {
  constructor(session, opts) {
    super();
    this._session = session;
    this._encoding = opts.encoding || session._encoding;
    this._tp = null;
    this._rp = null;
    this._sink = null;
    this._watch = null;
    this._result = null;
    this._unread = null;
    this._unreadCounts = null; // readCounts() of the chunks in _unread
    this._quietAtEnd = 0;
    this._toolEnd = null; // toolResult()'s object at the end, or the error it met
    this._refed = false;
    this.id = null;
    this.command = null;
    this.done = new Promise((resolve) => {
      this._resolveDone = resolve;
    });
    if (typeof opts.onOutput === 'function') this.on('output', opts.onOutput);
    if (typeof opts.onInput === 'function') this.on('input', opts.onInput);
    this._signal = opts.signal || null;
    this._onAbort = null;
  }

  _bindRun(rp) {
    this._rp = rp;
    if (finished(rp)) return; // ended already: no output to come
    this._sink = new OutputSink(this._encoding);
    check(C.shexec_run_set_output_fn(rp, this._sink.cb, null), this._session._ptr);
    this._watch = new InputWatch(rp, this._encoding, this._session._ptr);
  }

  _unbind() {
    if (this._sink) this._sink.release();
    this._sink = null;
    if (this._watch) this._watch.release();
    this._watch = null;
    this._rp = null;
  }

  _attach(tp, ref) {
    this._tp = tp;
    this.id = C.shexec_task_id(tp);
    this._session._tasks.add(this);
    this._session._knownTaskIds.delete(this.id);
    if (ref) this.ref();
    if (this._signal) {
      this._onAbort = () => this.kill();
      this._signal.addEventListener('abort', this._onAbort, { once: true });
    }
    pump.kick();
  }

  /** Keep the process alive until the task ends (the default for start()). */
  ref() {
    if (!this._refed && this._tp) {
      this._refed = true;
      pump.ref(1);
    }
    return this;
  }

  /** Let the process exit while the task runs (it is then terminated at exit). */
  unref() {
    if (this._refed) {
      this._refed = false;
      pump.ref(-1);
    }
    return this;
  }

  get pid() {
    return this._result ? this._result.pid : Number(C.shexec_run_pid(this._rp));
  }

  /** 'running', or how it ended: 'exited', 'signaled', 'killed', 'timed_out'. */
  get state() {
    if (this._result) return this._result.state;
    if (!this._rp) return 'killed';
    return STATE_NAMES[C.shexec_run_state(this._rp)];
  }

  get running() {
    return !this._result && !!this._tp;
  }

  /**
   * Whether the command waits for input now: {state: 'no'|'waiting'|
   * 'unknown', prompt (the last line of output, unfinished), echoOff (a
   * password prompt)}; once ended, as it was at the end.
   */
  get inputWait() {
    if (this._result) return this._result.inputWait;
    if (!this._rp) return { state: 'no', prompt: decodeAs(Buffer.alloc(0), this._encoding), echoOff: false };
    return inputWaitOf(this._rp, this._encoding);
  }

  /** Output of `stream` that arrived since the previous read(), marked read. */
  read(stream = 'stdout') {
    const st = STREAMS[stream];
    if (!st) throw new InvalidArgumentError(-1, 'stream must be "stdout" or "stderr"');
    if (this._tp) return decodeAs(readStream(C.shexec_task_read, this._tp, st), this._encoding);
    if (this._unread) {
      const b = this._unread[st];
      this._unread[st] = Buffer.alloc(0);
      return decodeAs(b, this._encoding);
    }
    return decodeAs(Buffer.alloc(0), this._encoding);
  }

  /**
   * What the last read() of `stream` kept and covered: {keptChars,
   * keptBytes, totalChars, totalBytes} of that chunk (more total than kept
   * when the limit cut it: its notice gives the same numbers); once ended,
   * of the last chunk, the one read() gives then. All 0 before any read.
   */
  readCounts(stream = 'stdout') {
    const st = STREAMS[stream];
    if (!st) throw new InvalidArgumentError(-1, 'stream must be "stdout" or "stderr"');
    if (this._tp) return readCountsOf(this._tp, st);
    if (this._unreadCounts) return { ...this._unreadCounts[st] };
    return { keptChars: 0, keptBytes: 0, totalChars: 0, totalBytes: 0 };
  }

  /** How long the task has printed nothing, in ms (once ended: until its end). */
  get quietMs() {
    if (this._rp) return Number(C.shexec_run_quiet_ms(this._rp));
    return this._quietAtEnd;
  }

  /**
   * Follow the task without blocking the event loop: resolves once it has
   * ended ('ended'), waits for input ('input'), has printed nothing for
   * opts.quietMs ('quiet': counted from the later of its last output and
   * this call; 0 or absent: not watched for), or opts.maxMs has passed
   * ('time'; absent: no limit), whichever comes first, as
   * shexec_task_watch() answers. The 'output' and 'input' events go on
   * meanwhile; read() what came. A host follows a build or a server's log
   * with it ("no new output for N seconds").
   */
  watch({ quietMs = 0, maxMs } = {}) {
    if (!Number.isInteger(quietMs) || quietMs < 0) throw new InvalidArgumentError(-1, 'quietMs must be a whole number of ms >= 0');
    if (maxMs !== undefined && (!Number.isFinite(maxMs) || maxMs < 0)) throw new InvalidArgumentError(-1, 'maxMs must be a number of ms >= 0');
    if (this._result || !this._tp) return Promise.resolve('ended');
    if (this.inputWait.state === 'waiting') return Promise.resolve('input');
    return new Promise((resolve) => {
      const start = Date.now();
      let quietTimer = null, maxTimer = null;
      const finish = (why) => {
        clearTimeout(quietTimer);
        clearTimeout(maxTimer);
        this.off('input', onInput);
        this.off('done', onDone);
        resolve(why);
      };
      const onInput = () => finish('input');
      const onDone = () => finish('ended');
      // at each time the quiet could come, the library says how long the
      // task has been silent: output meanwhile only puts it off
      const quietCheck = () => {
        if (!this._rp) return; // ended: 'done' answers
        const quiet = Math.min(Number(C.shexec_run_quiet_ms(this._rp)), Date.now() - start);
        if (quiet >= quietMs) finish('quiet');
        else quietTimer = setTimeout(quietCheck, quietMs - quiet);
      };
      this.on('input', onInput);
      this.on('done', onDone);
      if (quietMs > 0) quietTimer = setTimeout(quietCheck, quietMs);
      if (maxMs !== undefined) maxTimer = setTimeout(() => finish('time'), maxMs);
    });
  }

  /** All captured output of `stream` so far (bounded by the output limit). */
  output(stream = 'stdout') {
    const st = STREAMS[stream];
    if (!st) throw new InvalidArgumentError(-1, 'stream must be "stdout" or "stderr"');
    if (this._result) return this._result[STREAM_NAMES[st]];
    if (!this._rp) return decodeAs(Buffer.alloc(0), this._encoding);
    return decodeAs(readStream(C.shexec_run_output, this._rp, st), this._encoding);
  }

  /**
   * What the output limit kept of the stream so far and what the stream
   * carried: {keptChars, keptBytes, totalChars, totalBytes} (see
   * RunResult.counts).
   */
  counts(stream = 'stdout') {
    const st = STREAMS[stream];
    if (!st) throw new InvalidArgumentError(-1, 'stream must be "stdout" or "stderr"');
    if (this._result) return { ...this._result.counts[STREAM_NAMES[st]] };
    if (!this._rp) return { keptChars: 0, keptBytes: 0, totalChars: 0, totalBytes: 0, totalLines: 0 };
    return countsOf(this._rp, st);
  }

  /** What became of the stream's spill file so far: {state, path, bytes, error} (see RunResult.spill). */
  spill(stream = 'stdout') {
    const st = STREAMS[stream];
    if (!st) throw new InvalidArgumentError(-1, 'stream must be "stdout" or "stderr"');
    if (this._result) return { ...this._result.spill[STREAM_NAMES[st]] };
    if (!this._rp) return { state: 'none', path: null, bytes: 0, error: 0 };
    return spillOf(this._rp, st);
  }

  /** How many secrets were hidden in the stream so far. */
  redactions(stream = 'stdout') {
    const st = STREAMS[stream];
    if (!st) throw new InvalidArgumentError(-1, 'stream must be "stdout" or "stderr"');
    if (this._result) return this._result.redactions[STREAM_NAMES[st]];
    if (!this._rp) return 0;
    return Number(C.shexec_run_redactions(this._rp, st));
  }

  /**
   * The task as the task tools' JSON result (shexec_tool_task_result(),
   * task_output's form): {task_id, status, stdout, stderr, then exit_code
   * and state once ended or waiting_for_input while running, truncated, and
   * omitted, full_output, redacted when they apply}, with opts.stdout and
   * opts.stderr (string or Buffer, e.g. what read() gave; default empty)
   * as its output: a host that shows a task's output its own way gives the
   * model the object the tools would. Nothing is read. opts.status
   * defaults to 'completed' once ended, else 'running' (task_kill says
   * 'killed'). The C task is freed as soon as it ended: the object is then
   * the one the library gave at the end, with the output given put in, so
   * full_output names the spill file as it was then (as result.spill
   * does). A task ended by the process's exit has none: ClosedError.
   */
  toolResult({ stdout = '', stderr = '', status } = {}) {
    const out = toBuffer(stdout, 'stdout');
    const err = toBuffer(stderr, 'stderr');
    const st = toolStatus(status);
    if (this._tp) {
      const json = [null];
      const rc = C.shexec_tool_task_result(json, this._tp, st, out, out.length, err, err.length);
      const result = takeJson(json[0]);
      check(rc, this._session._ptr);
      return result;
    }
    if (!this._toolEnd) throw new ClosedError(-6, `task ${this.id} ended with its session: it has no tool result`);
    if (this._toolEnd instanceof Error) throw this._toolEnd;
    const result = structuredClone(this._toolEnd);
    result.stdout = toolText(out);
    result.stderr = toolText(err);
    if (st !== null) result.status = st;
    return result;
  }

  /** Queue input (the task needs opts.stdin = true, or a pty). PipeError once it ended;
   *  LimitError past the bound on input it has not read (nothing queued: write again). */
  write(data) {
    if (!this._tp) throw new PipeError(-10, 'the task has ended');
    const b = toBuffer(data, 'input');
    check(C.shexec_run_write(this._rp, b, b.length), this._session._ptr);
    pump.kick();
  }

  /** End of input after what is queued (^D on a terminal). */
  closeStdin() {
    if (!this._tp) throw new PipeError(-10, 'the task has ended');
    check(C.shexec_run_close_stdin(this._rp), this._session._ptr);
    pump.kick();
  }

  /**
   * Type input as a person at a terminal (what a model writes): on a pty as
   * write(); on pipes each '\x03' (^C) is a SIGINT to the command, not a
   * byte of its input (also without opts.stdin), the text around it queued
   * in order. PipeError once it ended.
   */
  typeInput(data) {
    if (!this._tp) throw new PipeError(-10, 'the task has ended');
    const b = toBuffer(data, 'input');
    check(C.shexec_run_type_input(this._rp, b, b.length), this._session._ptr);
    pump.kick();
  }

  /**
   * Send a signal to the task's processes (its process group, or every
   * process of its cgroup): a name ('SIGINT', 'INT', 'int') or a number
   * (os.constants.signals.SIGINT) of SIGHUP, SIGINT, SIGQUIT, SIGKILL,
   * SIGUSR1, SIGUSR2, SIGTERM, SIGCONT, SIGSTOP. SIGINT is a terminal's
   * Ctrl+C (then `interrupted`). Nothing of the timeout or kill() changes:
   * a task that dies of it ends 'signaled'. InvalidArgumentError for
   * another signal, StateError once it ended.
   */
  sendSignal(sig) {
    const n = signalNumber(sig);
    if (!this._tp) throw new StateError(-6, `task ${this.id} has finished: no signal was sent`);
    check(C.shexec_run_send_signal(this._rp, n), this._session._ptr);
    pump.kick();
  }

  /** True once a SIGINT reached the task (sendSignal('SIGINT'), or ^C typed), however it ended. */
  get interrupted() {
    if (this._result) return this._result.interrupted;
    return !!this._rp && C.shexec_run_interrupted(this._rp) === 1;
  }

  /** Resize the task's terminal while it runs (a pty task), as a window is
   *  resized: its foreground process group gets SIGWINCH. StateError for a
   *  task on pipes or one that has ended; PipeError once it is gone. */
  setPtySize(cols, rows) {
    if (!this._tp) throw new PipeError(-10, 'the task has ended');
    check(C.shexec_run_set_pty_size(this._rp, u32(cols, 'cols', { zeroOk: false }),
      u32(rows, 'rows', { zeroOk: false })), this._session._ptr);
  }

  /** SIGTERM the task's tree now, SIGKILL after the grace; resolves with its result
   * (the process is kept alive until then, even for an unref'd task). */
  kill() {
    if (this._tp) {
      this.ref();
      check(C.shexec_run_cancel(C.shexec_task_run(this._tp)), this._session._ptr);
      pump.kick();
    }
    return this.done;
  }

  _flushEvents() {
    if (this._sink) this._sink.flush((d, st) => this.emit('output', d, st));
    if (this._watch) this._watch.flush((w) => this.emit('input', w, this));
  }

  _poll() {
    if (!this._tp || !finished(this._rp)) return;
    this._flushEvents();
    if (this._sink) this._sink.end((d, st) => this.emit('output', d, st));
    const sp = this._session._ptr;
    const result = collectResult(this._rp, sp, this._encoding);
    result.id = this.id;
    this._toolEnd = toolEndOf(this._tp, sp);
    this._quietAtEnd = Number(C.shexec_run_quiet_ms(this._rp));
    this._unread = {
      [STDOUT]: readStream(C.shexec_task_read, this._tp, STDOUT),
      [STDERR]: readStream(C.shexec_task_read, this._tp, STDERR),
    };
    this._unreadCounts = { [STDOUT]: readCountsOf(this._tp, STDOUT), [STDERR]: readCountsOf(this._tp, STDERR) };
    C.shexec_task_free(this._tp); // it has ended: this does not wait
    this._end(result);
  }

  _end(result) {
    this._tp = null;
    this._rp = null;
    this._result = result;
    this._session._tasks.delete(this);
    if (this._sink) this._sink.release();
    this._sink = null;
    if (this._watch) this._watch.release();
    this._watch = null;
    if (this._signal && this._onAbort) this._signal.removeEventListener('abort', this._onAbort);
    this.unref();
    this._resolveDone(result);
    this.emit('done', result);
  }

  /** The session is being freed under us (process exit). */
  _abandon() {
    const sp = this._session._ptr;
    C.shexec_run_cancel(C.shexec_task_run(this._tp));
    const result = collectResult(this._rp, sp, this._encoding);
    result.id = this.id;
    result.state = 'killed';
    C.shexec_task_free(this._tp); // terminates and reaps
    this._end(result);
  }

  /** {stream, data} chunks as they arrive, until the task ends. */
  async *[Symbol.asyncIterator]() {
    const queue = [];
    let wake = null;
    let ended = !!this._result;
    const onOut = (data, stream) => {
      queue.push({ stream, data });
      if (wake) wake();
    };
    const onDone = () => {
      ended = true;
      if (wake) wake();
    };
    this.on('output', onOut);
    this.once('done', onDone);
    try {
      for (;;) {
        if (queue.length) {
          yield queue.shift();
          continue;
        }
        if (ended) return;
        await new Promise((r) => {
          wake = r;
        });
        wake = null;
      }
    } finally {
      this.off('output', onOut);
      this.off('done', onDone);
    }
  }
}

function version() {
  return C.shexec_version();
}

/**
 * The number of a signal sendSignal() takes: a name ('SIGINT', 'INT',
 * 'int': shexec_signal_from_name()) or a number, kept as it is (the
 * library checks it when it is sent). InvalidArgumentError for an unknown
 * or refused name, or another type.
 */
function signalNumber(sig) {
  if (typeof sig === 'number' && Number.isInteger(sig)) return sig;
  if (typeof sig !== 'string' || sig.includes('\0')) {
    throw new InvalidArgumentError(-1, 'a signal is a name or a whole number');
  }
  const n = C.shexec_signal_from_name(sig);
  if (n < 0) {
    throw new InvalidArgumentError(-1, `unknown signal ${JSON.stringify(sig)}: SIGINT, SIGTERM, ` +
      'SIGHUP, SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2, SIGSTOP or SIGCONT');
  }
  return n;
}

function strerror(code) {
  return C.shexec_strerror(code);
}

module.exports = {
  Session,
  Task,
  version,
  strerror,
  signalNumber,
  libraryPath,
  DEFAULT_INPUT_LOOK_MS,
  DEFAULT_SPILL_FILE_MAX,
  DEFAULT_SPILL_TOTAL_MAX,
  ShexecError,
  InvalidArgumentError,
  OutOfMemoryError,
  NoCwdError,
  SpawnError,
  SysError,
  StateError,
  ClosedError,
  TooBigError,
  LimitError,
  NoTaskError,
  PipeError,
  ToolNotAvailableError,
  AbortError,
};
