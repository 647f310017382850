// Type declarations of the shexec Node.js binding (index.js).
/// <reference types="node" />
import { EventEmitter } from 'node:events';

export type StreamName = 'stdout' | 'stderr';
export type RunStateName = 'exited' | 'signaled' | 'timed_out' | 'cancelled' | 'killed';
export type Output = string | Buffer;
export type LimitName = 'memory' | 'swap' | 'pids' | 'cpu';
/**
 * Why runSync() moved a command to the background (SHEXEC_YIELD_*): 'none'
 * (it did not), 'time' (its yieldMs passed), 'timeout' (its timeout passed,
 * with backgroundOnTimeoutMs), 'idle' (its idle timeout passed, with
 * idleAction 'yield'), 'input' (it waits for input, with yieldMs set).
 */
export type YieldReason = 'none' | 'time' | 'timeout' | 'idle' | 'input';
/** Which deadline ended a 'timed_out' run (SHEXEC_DEADLINE_*): 'none' unless timed out,
 * 'timeout' (its timeout, or in the background its cap), 'idle' (its idle timeout). */
export type DeadlineName = 'none' | 'timeout' | 'idle';
/** What a command's idle timeout does (SHEXEC_IDLE_*): 'end' it (SIGTERM, grace, SIGKILL),
 * or 'yield' it to the background (runSync() only). */
export type IdleAction = 'end' | 'yield';
/** Where the truncation notice goes (SHEXEC_NOTICE_*): after the kept text, or before it. */
export type NoticePosition = 'last' | 'first';
/**
 * What became of a stream's spill file (SHEXEC_SPILL_*): 'none' (no spill
 * directory, or the stream stayed within its limit), 'writing' (the command
 * runs), 'whole' (the file holds all of it), 'capped' (its first `bytes`
 * bytes: the file cap or the session's budget), 'failed' (`error` says why;
 * no file), 'removed' (removed since, to make room in the session's budget).
 */
export type SpillState = 'none' | 'writing' | 'whole' | 'capped' | 'failed' | 'removed';

/**
 * What the output limit kept of a stream and what the stream carried
 * (shexec_run_output_counts()), as the truncation notice counts them: a
 * character is a UTF-8 sequence, or an invalid byte on its own. Of the
 * output as captured (after ANSI stripping and redaction); the notice is
 * not counted. Kept equals total for a stream within its limit.
 */
export interface OutputCounts {
  keptChars: number;
  keptBytes: number;
  totalChars: number;
  totalBytes: number;
  /** Lines the stream carried: its newlines, and one more when it does not end with one. */
  totalLines: number;
}

/**
 * A stream's spill file (shexec_run_spill()), as it was when the result was
 * taken: the file goes all the same when the session's budget needs the
 * room or the session is closed (unless spillKeepFiles).
 */
export interface Spill {
  state: SpillState;
  /** The file, null for 'none' and 'failed'. */
  path: string | null;
  /** The bytes of the stream in the file. */
  bytes: number;
  /** An errno value for 'failed' (ENOSPC, EDQUOT, EIO, ...), else 0. */
  error: number;
}

/**
 * Secrets found by their shape (redactShapes): keys, a word that starts
 * with a known key prefix and is long enough to be a key (ghp_ and
 * github_pat_ as GITHUB_TOKEN, sk-ant- as ANTHROPIC_API_KEY, sk- as
 * OPENAI_API_KEY, AKIA as AWS_ACCESS_KEY_ID, xoxa-/xoxb-/xoxp- as
 * SLACK_TOKEN); privateKeys, a PEM private-key block as PRIVATE_KEY. true:
 * both; false: none.
 */
export type RedactShapes = boolean | { keys?: boolean; privateKeys?: boolean };

/**
 * Whether a command waits for input (shexec_run_input_wait()). After the
 * command has been silent for the session's inputLookMs the library looks,
 * once a second while it stays silent, whether one of its processes is
 * blocked reading its terminal (a pty run) or its stdin pipe (stdin: true).
 * Output or input since then clears it. Linux only (/proc): elsewhere the
 * state is 'unknown' or never 'waiting'.
 */
export interface InputWait<T extends Output = string> {
  /** 'no' (not found waiting, or not looked at yet), 'waiting', 'unknown' (this system cannot tell). */
  state: 'no' | 'waiting' | 'unknown';
  /** When waiting: the last line of output, unfinished (usually the question; at most 256 bytes), else ''. */
  prompt: T;
  /** When waiting: the terminal does not echo (a password prompt). */
  echoOff: boolean;
}

/** Input to a run() command still running: what its onInput listener gets. */
export interface RunInput {
  /** Queue input (the run needs a pty or stdin: true). PipeError once it ended or its stdin is closed. */
  write(data: string | Buffer | Uint8Array): void;
  /** End of input after what is queued (^D on a terminal). */
  closeStdin(): void;
  /** Type input as at a terminal: on pipes each '\x03' (^C) is a SIGINT, not input. */
  typeInput(data: string | Buffer | Uint8Array): void;
  /** Send a signal to the command's processes (see Task.sendSignal()). */
  sendSignal(sig: SignalName | number): void;
  /** Resize the command's terminal (a pty run): its foreground process group gets SIGWINCH. */
  setPtySize(cols: number, rows: number): void;
}

/**
 * The signals sendSignal() sends, by name (also 'INT', 'int', any case, with
 * or without 'SIG'), or their numbers (os.constants.signals).
 */
export type SignalName =
  | 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'SIGQUIT' | 'SIGKILL' | 'SIGUSR1' | 'SIGUSR2' | 'SIGSTOP' | 'SIGCONT'
  | string;

/**
 * Bounds on a command's processes together, held by its cgroup (so they
 * need the containment option); 0 or absent for none. memory: bytes of
 * memory (the out-of-memory killer ends a process past it); swap: bytes of
 * swap besides (on cgroup v1 only with memory); pids: processes and threads
 * at once (a fork bomb's end); cpu: CPU time per wall time in thousandths
 * of one CPU (500: half a CPU, 2000: two; at least 10).
 */
export interface Limits {
  memory?: number;
  swap?: number;
  pids?: number;
  cpu?: number;
}

export interface SessionOptions {
  /** Initial working directory (default: the host's). NoCwdError when missing. */
  cwd?: string;
  /** Default timeout of a run in ms (default 120000). */
  timeoutMs?: number;
  /** The most a run may ask for, in ms (default 600000). */
  maxTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL when a command is terminated (default 5000). */
  killGraceMs?: number;
  /**
   * After a command's shell exits, what it left running is read as the
   * command's output until it ends or prints nothing for this long (default
   * 100, at most 2000; ten times that in all), then adopted: the lines of
   * `echo word &` or `seq 3 > >(tac)` are the command's, and a server's first
   * lines. 0: the command ends at its shell's exit.
   */
  leftoversDrainMs?: number;
  /** How much of each stream a run keeps (default 30000). */
  outputLimit?: number;
  outputUnit?: 'chars' | 'bytes';
  outputKeep?: 'head' | 'head_tail';
  /**
   * true: the limit holds the truncation notice and the head/tail marker
   * too (the kept text is cut to leave them room), so a cut stream's text is
   * at most outputLimit units in all; default: they come on top.
   */
  outputWithinLimit?: boolean;
  /** Variables for every command; null or undefined removes one. */
  env?: Record<string, string | null | undefined>;
  /** Inherit the host's environment (default true). */
  envInherit?: boolean;
  /** Globs added to the deny list (LD_PRELOAD and the like are denied already). */
  envDeny?: string[];
  /** Globs kept even when denied. */
  envAllow?: string[];
  /** The shell (a path), or a wrapper argv such as ['docker', 'exec', '-i', 'c', 'bash']. */
  shell?: string | string[];
  /** How many tasks the session holds at once (default 10). */
  maxTasks?: number;
  /** What becomes of processes a command leaves running (default 'adopt'). */
  onLeftovers?: 'adopt' | 'kill';
  /**
   * true: a watchdog process ends every command of the session when this
   * process dies for any reason (SIGKILL, crash) without close() (default false).
   */
  watchdog?: boolean;
  /**
   * Hold each command's processes in a cgroup v2 of its own, so that those
   * that detach (setsid, daemons) are still ended, reported as leftovers and
   * costed: 'auto' (a child of the cgroup this process runs in), the absolute
   * path of a cgroup2 directory this process may write, or 'off'/null
   * (process groups only). The default is 'auto'. 'auto' where no cgroup can be made
   * keeps process groups (settings.containment says why); a named directory
   * that cannot hold them throws a SysError.
   */
  containment?: 'auto' | 'off' | string | null;
  /**
   * Limits on every command, applied after containment: a StateError
   * without containment by cgroup, a SysError where the controller is not
   * available here (the message says why), an InvalidArgumentError for an
   * unknown name or a value too small (memory below 1 MiB, cpu below 10).
   */
  limits?: Limits;
  /**
   * true: the exported environment a command leaves (with bash also its shell
   * variables and functions) is where the next one starts, so
   * `source .venv/bin/activate` lasts (default false; local shells only).
   */
  persistEnv?: boolean;
  /**
   * The idle timeout of every run that sets none: a command silent on both
   * streams for so long is ended ('timed_out', deadline 'idle') or, with
   * idleAction 'yield' and inside runSync() only, moved to the background
   * (default 0: none). One of the two left out stays as it is.
   */
  idleTimeoutMs?: number;
  /** What the idle timeout does (default 'end'); 'yield' does nothing in run() and start(). */
  idleAction?: IdleAction;
  /**
   * Background on timeout for every runSync() that sets none: at its
   * timeout the command is moved to the background instead of being ended,
   * and ended ('timed_out') only this many ms after its start (default 0:
   * ended at the timeout; a cap not beyond the timeout ends it there).
   * run() and start() end a command at its timeout all the same.
   */
  backgroundOnTimeoutMs?: number;
  /**
   * How long a command must be silent before the library first looks
   * whether it waits for input (then once a second while it stays silent);
   * 0: never look (default 2000, DEFAULT_INPUT_LOOK_MS). Applies to runs
   * started after.
   */
  inputLookMs?: number;
  /**
   * true: the agent environment preset (Session.applyAgentEnv()), applied
   * after envInherit and before env (whose variables override it).
   */
  agentEnv?: boolean;
  /** Where the truncation notice goes (default 'last'; see setNoticePosition()). */
  noticePosition?: NoticePosition;
  /**
   * Keep the whole text of a stream cut by the output limit in a file of
   * this absolute directory (see setSpillDir()); with spillFileMax,
   * spillTotalMax (0: DEFAULT_SPILL_FILE_MAX, DEFAULT_SPILL_TOTAL_MAX) and
   * spillKeepFiles, which need it.
   */
  spillDir?: string | null;
  spillFileMax?: number;
  spillTotalMax?: number;
  spillKeepFiles?: boolean;
  /** Secrets hidden from every run's output as "[REDACTED:NAME]" (see redactValue()). */
  redactValues?: Record<string, string | Buffer | Uint8Array>;
  /** true: hide the values of variables matching the default globs; an array: these globs (see redactEnv()). */
  redactEnv?: boolean | string[];
  /** Secrets hidden by their shape (see redactShapes()). */
  redactShapes?: RedactShapes;
  /** 'utf8' (default): strings; 'buffer': the exact bytes. */
  encoding?: BufferEncoding | 'buffer';
}

export interface RunOptions {
  timeoutMs?: number;
  /** Run there instead of the session cwd (the session cwd then does not move). */
  cwd?: string;
  env?: Record<string, string | null | undefined>;
  /** Called with each chunk as the command writes it, on the main thread. */
  onOutput?: (data: Output, stream: StreamName) => void;
  /** Input: the whole of it (string or Buffer), or true (Task.write()). */
  stdin?: string | Buffer | Uint8Array | boolean;
  /** A pseudo-terminal (stdout and stderr merged); 'echo' echoes input. */
  pty?: boolean | 'echo';
  ptySize?: { cols: number; rows: number };
  /** 'strip' removes escapes and resolves \r overwrites. */
  ansi?: 'keep' | 'strip';
  outputLimit?: number;
  outputUnit?: 'chars' | 'bytes';
  outputKeep?: 'head' | 'head_tail';
  /** As SessionOptions.outputWithinLimit, for this run. */
  outputWithinLimit?: boolean;
  /**
   * This run's limits in place of the session's (0: none for this run); a
   * name left out keeps the session's. Checked when the command starts.
   */
  limits?: Limits;
  /** Aborting terminates the command's tree: run() rejects with an AbortError,
   * a task ends 'killed'. */
  signal?: AbortSignal;
  encoding?: BufferEncoding | 'buffer';
  /**
   * This run's idle timeout in place of the session's (0: none for this
   * run): a command silent on both streams for so long is ended
   * ('timed_out', deadline 'idle'). With idleAction 'yield' (runSync()
   * only) it is moved to the background instead.
   */
  idleTimeoutMs?: number;
  /** 'end' (the default) or 'yield' (runSync() only; an InvalidArgumentError
   * in run() and start()). Alone: the session's idle time with this action. */
  idleAction?: IdleAction;
  /** Secrets hidden from this run's output too, as Session.redactValue() hides them from every run's. */
  redactValues?: Record<string, string | Buffer | Uint8Array>;
  /**
   * true: the values of this run's own env variables whose names match the
   * session's redactEnv globs (the default globs when it has none) are
   * hidden from its output.
   */
  redactOwnEnv?: boolean;
  /**
   * Called on the main thread when the command is found waiting for input
   * (see InputWait; the session's inputLookMs says after how much silence).
   * run(): `io` writes to the command (a pty, or stdin: true); start(): the
   * Task (also its 'input' event); runSync(): called before it returns,
   * `io` null (answer through task(result.taskId)).
   */
  onInput?: (wait: InputWait<any>, io: RunInput | null) => void;
}

/**
 * Options of runSync(), the only path that moves a command to the
 * background (yielding happens only inside the library's shexec_run_exec(),
 * which blocks the thread). No signal (nothing can abort a blocked call),
 * stdin only true (written to the task after a yield); onOutput and
 * onInput are called before runSync() returns.
 */
export interface RunSyncOptions extends Omit<RunOptions, 'signal' | 'stdin'> {
  /** A pipe for input, written to through the task after a yield. */
  stdin?: boolean;
  /**
   * Return after this many ms with the command still running, moved to the
   * background as a task (result.yielded 'time', result.taskId); also as
   * soon as it is found waiting for input ('input'). 0 (the default): wait
   * for the end. It keeps its timeout as its lifetime cap.
   */
  yieldMs?: number;
  /**
   * At its timeout move the command to the background instead of ending it
   * (yielded 'timeout'), ended only this many ms after its start; in place
   * of the session's (0: ended at the timeout).
   */
  backgroundOnTimeoutMs?: number;
}

export interface RunResult<T extends Output = string> {
  stdout: T;
  stderr: T;
  /** 0-255 when the state is 'exited', else -1. */
  exitCode: number;
  /**
   * The signal that ended the shell, else 0: after a timeout 15 (SIGTERM)
   * when it died of it, 9 when it outlived the grace, 0 when it handled
   * SIGTERM and exited by itself (state says 'timed_out' all the same).
   */
  signal: number;
  /** A SIGINT reached the command (sendSignal('SIGINT'), or ^C typed), however it ended. */
  interrupted: boolean;
  state: RunStateName;
  timedOut: boolean;
  /** The session's cwd once the command ended. */
  cwd: string;
  truncated: { stdout: boolean; stderr: boolean };
  totalBytes: { stdout: number; stderr: number };
  /** What the output limit kept of each stream and what each carried, in characters and bytes. */
  counts: { stdout: OutputCounts; stderr: OutputCounts };
  /** Where the whole text of a truncated stream is (the session's spillDir). */
  spill: { stdout: Spill; stderr: Spill };
  /** How many secrets were hidden in each stream. */
  redactions: { stdout: number; stderr: number };
  leftovers: 'none' | 'adopted' | 'killed';
  /** The task that adopted the processes the command left running (`server &`). */
  leftoverTaskId: string | null;
  durationMs: number;
  pid: number;
  /** What the library declined to do (a cwd it did not adopt), which limit stopped
   * the command, that it moved it to the background (with the task id), or ''. */
  notice: string;
  /** Whether runSync() moved the command to the background and why ('none' for run() and start()). */
  yielded: YieldReason;
  /** The task the command goes on as after a yield (Session.task()), else null. */
  taskId: string | null;
  /** Which deadline ended a 'timed_out' command: 'timeout' or 'idle'; else 'none'. */
  deadline: DeadlineName;
  /** Whether the command waits for input: after a yield 'input', 'waiting' with the prompt. */
  inputWait: InputWait<T>;
  /**
   * What the command cost: CPU time in microseconds and peak memory in bytes
   * (0 when unknown). source 'cgroup': every process of the command's cgroup
   * (the containment option); 'rusage': the shell and the children it waited
   * for, not what it left running; 'none': nothing known (all 0).
   */
  cost: { source: 'cgroup' | 'rusage' | 'none'; userUsec: number; systemUsec: number; peakBytes: number };
  /**
   * The limits that stopped the command, in the order memory, swap, pids,
   * cpu: 'memory' when the out-of-memory killer ended one of its processes
   * at the memory limit, 'pids' when a fork failed at the process limit;
   * [] when none. The notice says the same in words.
   */
  limitsHit: LimitName[];
}

export interface TaskResult<T extends Output = string> extends RunResult<T> {
  id: string;
}

/**
 * What runSync() returns: a RunResult, or after a yield (yielded not
 * 'none') the command still running: state 'running', exitCode -1, the
 * output so far, and taskId to take it with Session.task().
 */
export interface RunSyncResult<T extends Output = string> extends Omit<RunResult<T>, 'state'> {
  state: 'running' | RunStateName;
}

export interface Chunk<T extends Output = string> {
  stream: StreamName;
  data: T;
}

/**
 * A task as the task tools give it (shexec_tool_task_result(), task_output's
 * form), its stdout and stderr the output given to Task.toolResult().
 */
export interface TaskToolResult {
  task_id: string;
  /** 'completed' once the command ended, else 'running'; or the status given. */
  status: string;
  stdout: string;
  stderr: string;
  /** Once ended. */
  exit_code?: number;
  state?: RunStateName;
  /** Once ended by a signal (not its timeout). */
  signal?: number;
  /** Once a SIGINT reached it. */
  interrupted?: boolean;
  /** While running; prompt and password too while it waits. */
  waiting_for_input?: boolean;
  prompt?: string;
  password?: boolean;
  truncated: { stdout: boolean; stderr: boolean };
  /** What the output limit left out of each truncated stream. */
  omitted?: { stdout?: { characters: number; bytes: number }; stderr?: { characters: number; bytes: number } };
  /** The spill file holding each truncated stream whole. */
  full_output?: { stdout?: string; stderr?: string };
  /** How many secrets were hidden. */
  redacted?: number;
}

export class Task<T extends Output = string> extends EventEmitter {
  /** "t" and 12 hex digits. */
  readonly id: string;
  readonly pid: number;
  readonly state: 'running' | RunStateName;
  readonly running: boolean;
  /** Whether the command waits for input now (once ended: as it was at the end). */
  readonly inputWait: InputWait<T>;
  /** Resolves once the task ended (never rejects). */
  readonly done: Promise<TaskResult<T>>;
  /** Output since the previous read(), marked read (a UTF-8 character is never split between reads). */
  read(stream?: StreamName): T;
  /** What the last read() kept and covered (its notice's numbers); once ended, of the last chunk. */
  readCounts(stream?: StreamName): OutputCounts;
  /** How long the task has printed nothing, in ms (once ended: until its end). */
  readonly quietMs: number;
  /**
   * Resolves once the task has ended, waits for input, has printed nothing
   * for quietMs (from the later of its last output and the call; 0: not
   * watched for), or maxMs has passed (absent: no limit), whichever first.
   */
  watch(opts?: { quietMs?: number; maxMs?: number }): Promise<'ended' | 'quiet' | 'input' | 'time'>;
  /** All captured output so far (bounded by the output limit). */
  output(stream?: StreamName): T;
  /** What the output limit kept of the stream so far and what it carried; once ended, as in the result. */
  counts(stream?: StreamName): OutputCounts;
  /** The stream's spill file so far ('writing' while it runs); once ended, as in the result. */
  spill(stream?: StreamName): Spill;
  /** How many secrets were hidden in the stream so far. */
  redactions(stream?: StreamName): number;
  /**
   * The task as the task tools' JSON result, with the output given (e.g.
   * what read() gave; default empty) as its stdout and stderr; nothing is
   * read. Once ended, the result the library gave at the end with that
   * output put in; ClosedError for a task ended by the process's exit.
   */
  toolResult(opts?: {
    stdout?: string | Buffer | Uint8Array;
    stderr?: string | Buffer | Uint8Array;
    status?: string;
  }): TaskToolResult;
  /** Queue input (start the task with stdin: true, or a pty). PipeError once it ended;
   *  LimitError past the bound on input it has not read (nothing queued: write again). */
  write(data: string | Buffer | Uint8Array): void;
  closeStdin(): void;
  /** Type input as at a terminal: on pipes each '\x03' (^C) is a SIGINT to the command, not
   *  input (also without stdin: true), the text around it queued in order. */
  typeInput(data: string | Buffer | Uint8Array): void;
  /**
   * Send a signal to the task's processes (its process group, or every process of its
   * cgroup): SIGINT is a terminal's Ctrl+C. Nothing of the timeout or kill() changes: a
   * task that dies of it ends 'signaled'. InvalidArgumentError for a signal not allowed,
   * StateError once it ended.
   */
  sendSignal(sig: SignalName | number): void;
  /** A SIGINT reached the task (sendSignal('SIGINT'), or ^C typed), however it ended. */
  readonly interrupted: boolean;
  /** Resize the task's terminal while it runs (a pty task): its foreground process group gets SIGWINCH. */
  setPtySize(cols: number, rows: number): void;
  /** SIGTERM the tree now, SIGKILL after the grace; resolves with the result. */
  kill(): Promise<TaskResult<T>>;
  /** Keep the process alive until the task ends (the default). */
  ref(): this;
  /** Let the process exit while the task runs (it is terminated at exit). */
  unref(): this;
  on(event: 'output', listener: (data: T, stream: StreamName) => void): this;
  /** Found waiting for input: answer with write(). */
  on(event: 'input', listener: (wait: InputWait<T>, task: this) => void): this;
  on(event: 'done', listener: (result: TaskResult<T>) => void): this;
  once(event: 'output', listener: (data: T, stream: StreamName) => void): this;
  once(event: 'input', listener: (wait: InputWait<T>, task: this) => void): this;
  once(event: 'done', listener: (result: TaskResult<T>) => void): this;
  [Symbol.asyncIterator](): AsyncIterator<Chunk<T>>;
}

export class Session {
  /** The session's settings as they are now, named as the constructor's options. */
  readonly settings: {
    timeoutMs: number; maxTimeoutMs: number; killGraceMs: number; leftoversDrainMs: number;
    outputLimit: number; outputUnit: 'chars' | 'bytes'; outputKeep: 'head' | 'head_tail';
    outputWithinLimit: boolean;
    envInherit: boolean; maxTasks: number; onLeftovers: 'adopt' | 'kill';
    watchdog: boolean; persistEnv: boolean;
    /** 'cgroup' and the session's cgroup directory, or 'group' and why not ('turned off', 'no cgroup2 mount', ...). */
    containment: { kind: 'cgroup' | 'group'; detail: string };
    /** Every limit of the session, 0 for none. */
    limits: Required<Limits>;
    /** The shell's argv as given, or null for the default shell. */
    shell: string[] | null;
    /** The idle timeout of runs that set none (0: none) and what it does. */
    idleTimeoutMs: number; idleAction: IdleAction;
    /** The background-on-timeout cap of runSync() runs that set none (0: off). */
    backgroundOnTimeoutMs: number;
    /** Silence before the first look for a wait for input (0: never looks). */
    inputLookMs: number;
    noticePosition: NoticePosition;
    /** The spill directory, or null when off. */
    spillDir: string | null;
  };
  constructor(options?: SessionOptions);
  /** Where the next command starts (absolute). */
  readonly cwd: string | null;
  readonly closed: boolean;
  setCwd(dir: string): void;
  setEnv(name: string, value: string | null | undefined): void;
  /** Whether exports carry from one command to the next (persistEnv). */
  readonly persistEnv: boolean;
  /** The value of name in the environment the next command starts with, or null. */
  getEnv(name: string): string | null;
  /**
   * The agent environment preset: PAGER, GIT_PAGER, GH_PAGER, MANPAGER,
   * SYSTEMD_PAGER=cat; GIT_TERMINAL_PROMPT=0; GIT_EDITOR and EDITOR=false;
   * DEBIAN_FRONTEND=noninteractive; PIP_NO_INPUT=1; LANG=C.UTF-8 when
   * neither LANG nor LC_ALL is set (session variables: a later setEnv() or a
   * run's env overrides each); and for pipe runs only NO_COLOR=1 and
   * TERM=dumb, unless the session's or the run's variables name them
   * (getEnv() does not show these two).
   */
  applyAgentEnv(): void;
  /** Put the truncation notice after the kept text ('last', the default) or before it ('first'). */
  setNoticePosition(where: NoticePosition): void;
  /**
   * Keep the whole text of every stream that outgrows its output limit in a
   * file of `dir` (an absolute path to an existing directory; null: off, and
   * the files made so far are removed unless kept), named
   * shexec-<pid>-<run number>-<stdout|stderr>.txt (-1 to -15 before .txt
   * when that name is taken), mode 0600; the notice
   * says where, result.spill too. fileMax: one file's cap (0:
   * DEFAULT_SPILL_FILE_MAX); totalMax: the session's files together (0:
   * DEFAULT_SPILL_TOTAL_MAX; the oldest are removed to make room). Removed
   * when the session is closed unless keepFiles. InvalidArgumentError for a
   * relative path, one that is not a directory, fileMax above totalMax.
   */
  setSpillDir(dir: string | null, options?: { fileMax?: number; totalMax?: number; keepFiles?: boolean }): void;
  /**
   * Hide `value` (4 to 65536 bytes) from the output of runs started from
   * now on: each occurrence becomes "[REDACTED:NAME]" (name: 1 to 64
   * letters, digits or '_') in onOutput chunks, results, spill files and
   * tool results. A safety net, not a boundary: an encoded secret passes.
   */
  redactValue(name: string, value: string | Buffer | Uint8Array): void;
  /**
   * Hide the values (of at least 8 bytes) of the environment's variables
   * whose names match a glob ('*' and '?', case ignored), as
   * "[REDACTED:ITS_NAME]". No argument: the defaults (*KEY* *SECRET*
   * *TOKEN* *PASSWORD* *CREDENTIAL*); []: off (the default).
   */
  redactEnv(globs?: string[]): void;
  /** Hide secrets by their shape (default true: both shapes; false: none). */
  redactShapes(which?: RedactShapes): void;
  /** Forget every redaction the session was given: values, globs, shapes. */
  redactClear(): void;
  /** Run a command; resolves once it ended (a non-zero exit or a timeout is data). */
  run(command: string | Buffer, options?: RunOptions & { encoding?: BufferEncoding }): Promise<RunResult<string>>;
  run(command: string | Buffer, options: RunOptions & { encoding: 'buffer' }): Promise<RunResult<Buffer>>;
  /**
   * Run a command through the library's shexec_run_exec(), BLOCKING the
   * thread until it ends or is moved to the background (yieldMs,
   * backgroundOnTimeoutMs, idleAction 'yield'; the only path that yields).
   * After a yield: state 'running', the output so far, taskId (the command
   * goes on as that task: task(taskId)). Throws a ShexecError when it
   * could not run.
   */
  runSync(command: string | Buffer, options?: RunSyncOptions & { encoding?: BufferEncoding }): RunSyncResult<string>;
  runSync(command: string | Buffer, options: RunSyncOptions & { encoding: 'buffer' }): RunSyncResult<Buffer>;
  /** Start a command in the background. */
  start(command: string | Buffer, options?: RunOptions): Task;
  /** A task by id (an adopted leftover: RunResult.leftoverTaskId; a yielded runSync(): RunSyncResult.taskId). */
  task(id: string): Task;
  listTools(): Array<{ name: string; description: string; inputSchema: object }>;
  setToolEnabled(name: string, enabled?: boolean): void;
  isToolEnabled(name: string): boolean;
  renameTool(name: string, newName: string): void;
  /** The tool's JSON result; rejects with the library's error (its JSON in .result). */
  callTool(name: string, args?: object | string): Promise<Record<string, unknown>>;
  /** Terminate everything the session runs, then free it. Idempotent. */
  close(): Promise<void>;
}

export class ShexecError extends Error {
  /** The SHEXEC_E* value (negative). */
  readonly errno: number;
  /** Its name, e.g. "SHEXEC_ENOCWD". */
  readonly code: string;
  /** For callTool(): the tool's JSON error result. */
  result?: unknown;
}
export class InvalidArgumentError extends ShexecError {}
export class OutOfMemoryError extends ShexecError {}
export class NoCwdError extends ShexecError {}
export class SpawnError extends ShexecError {}
export class SysError extends ShexecError {}
export class StateError extends ShexecError {}
export class ClosedError extends StateError {}
export class TooBigError extends ShexecError {}
export class LimitError extends ShexecError {}
export class NoTaskError extends ShexecError {}
export class PipeError extends ShexecError {}
export class ToolNotAvailableError extends ShexecError {}
export class AbortError extends Error {
  readonly code: 'ABORT_ERR';
  /** How the aborted run ended ('cancelled'). */
  readonly result?: RunResult<Output>;
}

export function version(): string;
export function strerror(code: number): string;
/** The number of a signal sendSignal() takes, by name ('SIGINT', 'INT', 'int'); a number as it is. */
export function signalNumber(sig: SignalName | number): number;
export const libraryPath: string;
/** SHEXEC_DEFAULT_INPUT_LOOK_MS: the default inputLookMs (2000). */
export const DEFAULT_INPUT_LOOK_MS: number;
/** SHEXEC_DEFAULT_SPILL_FILE_MAX: one spill file's cap when none is given (64 MiB). */
export const DEFAULT_SPILL_FILE_MAX: number;
/** SHEXEC_DEFAULT_SPILL_TOTAL_MAX: a session's spill files together when no cap is given (1 GiB). */
export const DEFAULT_SPILL_TOTAL_MAX: number;
