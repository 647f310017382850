/*
 * shexec.h - libshexec: run shell commands for agent hosts, correctly.
 *
 * This header is the manual. Everything a host can call is declared and
 * documented here; nothing else in the library is visible to it.
 *
 * OVERVIEW
 *
 *   A session (shexec_session) is one persistent "terminal": it tracks the
 *   working directory across commands (a `cd` in one command is where the
 *   next one starts), owns the environment policy, the time and output
 *   limits, and one poll() loop that drives every process it started.
 *
 *   A run (shexec_run) is one foreground command in a session: configure it,
 *   execute it (blocking, or start it and pump the loop yourself), then read
 *   its result: how it ended, its exit code, its captured stdout and stderr.
 *   Output can also be streamed to a callback while the command runs.
 *
 *   A task (shexec_task) is a run started in the background with
 *   shexec_run_start_task(): it gets an id, belongs to the session, and adds
 *   only what a background command needs (reading what is new since the
 *   last read, kill, a done callback). Its settings and results are those
 *   of its run (shexec_task_run()): one family of functions for both.
 *
 *       shexec_session *s;
 *       shexec_run *r;
 *       if (shexec_session_new(&s) != SHEXEC_OK) return 1;
 *       shexec_run_new(&r, s, "cd /tmp && ls | head -3");
 *       if (shexec_run_exec(r) == SHEXEC_OK) {
 *           size_t n;
 *           const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
 *           printf("exit %d, %zu bytes: %s", shexec_run_exit_code(r), n, out);
 *       } else {
 *           fprintf(stderr, "shexec: %s\n", shexec_session_errmsg(s));
 *       }
 *       shexec_run_free(r);
 *       printf("cwd is now %s\n", shexec_session_cwd(s));   // "/tmp"
 *       shexec_session_free(s);
 *
 * CONVENTIONS
 *
 *   - Every fallible call returns int: SHEXEC_OK (0) or a negative
 *     SHEXEC_E* code. shexec_strerror() names a code; the session's
 *     shexec_session_errmsg() holds the detail of its last failure
 *     (e.g. `working directory "/nope" does not exist`).
 *   - Out-parameters come first; a constructor writes NULL to *out when it
 *     fails, so freeing the result unconditionally is always safe. Every
 *     free function accepts NULL.
 *   - Input strings are NUL-terminated UTF-8. Output is bytes with an explicit
 *     length: it may contain NUL bytes and invalid UTF-8 and is passed on
 *     exactly as the command wrote it (captured copies are additionally
 *     NUL-terminated for convenience).
 *   - No structs cross the API, no varargs; integers are fixed-width; enum
 *     values are explicit and only ever appended to. The library can be
 *     called from any FFI (ctypes, cffi, node-ffi, cgo, Rust) without glue.
 *     The one deliberate exception is POSIX's struct pollfd in
 *     shexec_session_pollfds()/shexec_session_process(): its layout is fixed
 *     by the system, and a host's own poll() loop already has it.
 *
 * THREADS AND PROCESS-WIDE STATE
 *
 *   A session and everything created from it is used by one thread at a time;
 *   different sessions may be used by different threads at once. The library
 *   creates no threads, installs no signal handlers, never changes a signal
 *   disposition or the signal mask of the host, never reaps a child it did not
 *   start (no waitpid(-1)), reads no environment variable of its own, never
 *   writes to stdout/stderr, and never aborts on bad input. Every descriptor
 *   it creates is close-on-exec.
 *
 *   A host that sets SIGCHLD to SIG_IGN, or sets SA_NOCLDWAIT, has the
 *   kernel reap every child the moment it exits, so how a shell ended is
 *   lost before the library can look. Such runs and tasks still complete
 *   with all their output and the cwd tracked; they report
 *   SHEXEC_STATE_EXITED with the exit code the shell's report gives (the
 *   status its EXIT trap saw), or -1 and signal 0 when it reported none
 *   (a command that replaced the trap, or ended in exec, or was killed by
 *   a signal), or TIMED_OUT, CANCELLED, KILLED when the library ended
 *   them; and what they leave
 *   running is adopted or killed as usual. A host that reaps with
 *   waitpid(-1) (say, in a SIGCHLD handler) takes statuses the same way,
 *   at random, and narrows the pid-reuse guarantee described below to the
 *   short time between a shell's exit and the library noticing it: wait
 *   for your own children by pid.
 *
 * HOW A COMMAND IS RUN
 *
 *   A command means what it means in the shell: its text is given to the
 *   shell untouched, and runs as `SHELL -c TEXT` would run it, line by line,
 *   with the shell's own line numbers, error messages, $0 and xtrace
 *   (`+ cmd`); a here-document without its terminator, a final backslash, a
 *   command of comments only, a stray `}`, an alias or `shopt -s extglob`
 *   used on a later line, and a syntax error late in a command (the lines
 *   before it run) all behave as in the plain shell. The shell is /bin/bash
 *   when it is executable, else /bin/sh (see
 *   shexec_session_set_shell()).
 *
 *   The library's own work (reporting the working directory and status,
 *   replaying kept state) is a prelude the shell runs before the command,
 *   out of its way. bash runs exactly `bash -c TEXT bash` and reads the
 *   prelude itself from BASH_ENV (which the prelude removes, so the
 *   command's own bash scripts never see it); other shells (dash, bash run
 *   as "sh") get the prelude on the command's first line, before its text,
 *   and so does bash behind a wrapper program that clears the environment
 *   (env -i, sudo: the first run through it shows it, reports nothing and
 *   says so in its notice) or is a script itself. The prelude sets
 *   an EXIT trap that reports, when the shell exits by itself (the last
 *   line, `exit N`, `set -e`), the command's status and the directory the
 *   shell's `pwd` builtin names (the logical path where it is valid; not
 *   the PWD variable). The report goes to the run's channel: an anonymous
 *   file (a memfd; elsewhere an unlinked temporary file) made for the run,
 *   at descriptor 173 in the shell, read once the shell has exited and
 *   closed, never reused. It is the one descriptor the command's processes
 *   get besides 0, 1 and 2 (a POSIX shell cannot address it; no ordinary
 *   script uses its number); stdout and stderr carry exactly what the
 *   command wrote.
 *
 *   What still differs from the plain shell, each for a reason that cannot
 *   go (the README lists them with the cases that show them):
 *     - descriptor 173 is open in the command's processes;
 *     - `trap -p` (dash: `trap`) lists the library's EXIT trap; a command
 *       that sets an EXIT trap of its own replaces it, so that command
 *       reports nothing: the session's directory stays where it was and
 *       shexec_run_notice() says so (its trap runs as in the plain shell);
 *       a command that ends in `exec cmd` reports nothing either;
 *     - bash runs the last command in a child of its own, as it does while
 *       any trap is set: a last command that dies of a signal gives exit
 *       code 128+N and bash's job message ("Segmentation fault") on stderr,
 *       where a plain `bash -c` would exec it and die of the signal;
 *     - under `set -v` the shell echoes the trap's text as it runs it; a
 *       DEBUG trap runs once more, for the trap's first command; in an EXIT
 *       trap of the command's own, bash's $BASH_COMMAND names the prelude's
 *       last command (bash restores it after a -c string when a startup
 *       file ran one);
 *     - a command longer than one argument can be (Linux: 128 KiB), which
 *       a plain `bash -c` cannot run at all, is read by the shell as a
 *       script from /dev/fd/172: its messages name that path, and $0 is it.
 *   Commands up to SHEXEC_MAX_COMMAND_BYTES run.
 *
 *   The report is untrusted input: the command runs in the same shell and
 *   can write the channel itself. Each run's channel is its own, so no
 *   process of an earlier run can write a later run's report, and no
 *   command can read an earlier one's. The directory becomes the session's
 *   cwd when the shell exited by itself (not a timeout, cancel or signal)
 *   and it is an absolute path naming an existing directory within the
 *   kernel's path limit; otherwise the session stays, and
 *   shexec_run_notice() says why. A session cwd that no longer exists when
 *   a command starts (removed since) does not lock the session: the
 *   command starts in its nearest existing ancestor, the session moves
 *   there, and shexec_run_notice() says so. The exit code comes from the
 *   shell's exit status, and from the report when the host's SIGCHLD
 *   setting took that status away (see THREADS AND PROCESS-WIDE STATE).
 *   On a timeout or cancel, bash runs the EXIT trap as it dies of the
 *   SIGTERM; what it reports then is not taken.
 *
 *   A wrapper program that cannot pass descriptors (ssh, docker exec) is
 *   declared with shexec_session_set_shell(): the report then comes
 *   in-band, at the end of stdout, as a per-session random tag and the
 *   directory, which the library strips from the output.
 *
 *   Each command gets its own process group, stdin from /dev/null, default
 *   signal dispositions, an empty signal mask, and no descriptor but 0, 1, 2
 *   and its channel (even those the host opened without O_CLOEXEC are
 *   closed).
 *
 *   A run completes when its shell exits, not when its pipes close: a command
 *   that leaves processes running (`server &`, `sleep 100 & echo started`)
 *   returns at once. Those leftover processes (still in the command's process
 *   group) are adopted as a background task of the session, whose output
 *   keeps being read and which can be killed (shexec_run_leftovers() names it), or
 *   killed at once (shexec_session_set_on_leftovers()).
 *
 *   On timeout or cancel the whole process group gets SIGTERM, then, after
 *   the session's grace period, SIGKILL. The grace is every process's, not
 *   the shell's alone: a program that handles SIGTERM (node or python under
 *   `npm test`, `pytest`) is not killed when its shell dies of the SIGTERM;
 *   the run ends when every process of the group is gone or the grace is
 *   over, whichever comes first, and their cleanup output is captured. The
 *   group is only ever signalled
 *   while its id provably belongs to us: while the command's shell is not yet
 *   reaped, or, for a group that outlives its shell, while a member we hold a
 *   pidfd on is still in it.
 *
 *   Processes that leave the command's process group (setsid, setpgid,
 *   `set -m` job control) are out of reach of a group signal. Whenever a
 *   command is terminated (timeout, cancel, killing a task, freeing its
 *   run, task or session) or its leftovers are killed, the library also
 *   looks through /proc for processes that descend from one of the
 *   command's live processes but are outside its group, and signals each
 *   of them along with the group (SIGTERM, then SIGKILL), by pidfd or, on
 *   kernels without pidfds, after checking its start time, so that a reused
 *   pid is never hit. Where the kernel lists each process's children
 *   (/proc/PID/task/TID/children) only the command's own processes are
 *   read (members that lost their parent are found among the children of
 *   init and of the host's ancestors, which are listed once per process),
 *   so the cost follows the size of the command, not of the machine;
 *   elsewhere every process in /proc is read.
 *   A process whose parent has already exited cannot be
 *   found: it has passed to init (or a subreaper) and nothing links it to
 *   the command any more. So a daemon that detaches properly (`setsid -f`,
 *   a double fork, or `setsid server &` in a command that then finishes)
 *   outlives the command and the session, and is not adopted as a leftover;
 *   stop such processes yourself (by a pid file, say), or keep them in the
 *   command's group (plain `server &`) to have them tracked.
 *
 *   Without /proc (some containers, chroots, hardened systems) the members
 *   of a group cannot be listed, so none can be anchored and escapees
 *   cannot be found. The command's shell is then left unreaped (a zombie)
 *   while its group is followed: the zombie keeps the group id from being
 *   reused, so the group can always be signalled. The group is followed
 *   through the command's output pipes: leftovers that hold them are
 *   adopted (or a task whose shell exited stays RUNNING) until both pipes
 *   close; whatever is still in the group then, and leftovers that already
 *   let go of the pipes when the shell exited, cannot be held once the
 *   zombie is reaped, so they are killed (the run reports
 *   SHEXEC_LEFTOVERS_KILLED). Killing a task, freeing it or the session
 *   stops its whole group as usual.
 *
 * WHAT PERSISTS IN A SESSION
 *
 *   The working directory persists (by the shell's report). By default nothing else
 *   does: shell variables, aliases, functions, `export`s and `set` options
 *   made inside a command last only for that command, as with separate
 *   `bash -c` calls. Set persistent variables with shexec_session_setenv(),
 *   or turn on shexec_session_set_persist_env(): then the exported
 *   environment (and, with bash, shell variables and functions) a command
 *   leaves is where the next one starts, so `export`, `unset`, `source
 *   .venv/bin/activate` and `deactivate` work across commands. Aliases and
 *   `set` options never persist.
 */
#ifndef SHEXEC_H
#define SHEXEC_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#define SHEXEC_VERSION_MAJOR 1
#define SHEXEC_VERSION_MINOR 0
#define SHEXEC_VERSION_PATCH 0
#define SHEXEC_VERSION_STRING "1.0.0"
/* MAJOR * 10000 + MINOR * 100 + PATCH */
#define SHEXEC_VERSION_NUMBER 10000

#if defined(SHEXEC_BUILDING) && defined(__GNUC__) && __GNUC__ >= 4
#define SHEXEC_API __attribute__((visibility("default")))
#else
#define SHEXEC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Handles, constants
 * ------------------------------------------------------------------------ */

/* A shell session: cwd, environment policy, limits, the process loop. */
typedef struct shexec_session shexec_session;
/* One foreground command and its result. */
typedef struct shexec_run shexec_run;
/* One background command, owned by its session, addressed by a string id. */
typedef struct shexec_task shexec_task;

/* Result codes. Append-only; values never change. */
enum {
    SHEXEC_OK = 0,
    SHEXEC_EINVAL = -1,   /* an argument is invalid (NULL, empty, bad name) */
    SHEXEC_ENOMEM = -2,   /* out of memory */
    SHEXEC_ENOCWD = -3,   /* the working directory is missing or not a directory */
    SHEXEC_ESPAWN = -4,   /* the shell could not be executed (missing, not executable) */
    SHEXEC_ESYS = -5,     /* a system call failed (descriptors exhausted, fork failed, ...) */
    SHEXEC_ESTATE = -6,   /* the handle is in the wrong state for this call */
    SHEXEC_E2BIG = -7,    /* the command (or environment) is too long for the kernel */
    SHEXEC_ELIMIT = -8,   /* a documented bound is reached: the session holds its maximum
                             number of tasks, or too many environment variables */
    SHEXEC_ENOTASK = -9,  /* no task has that id */
    SHEXEC_EPIPE = -10,   /* input cannot be written: stdin not enabled, closed, or the process ended */
    SHEXEC_ENOTOOL = -11  /* no tool of that name, or it is not enabled */
};

/* Output streams. */
enum {
    SHEXEC_STDOUT = 1,
    SHEXEC_STDERR = 2
};

/* How a run stands or ended (shexec_run_state()). Every state after
 * RUNNING is final: shexec_run_state(run) > SHEXEC_STATE_RUNNING means the
 * run has finished and its results no longer change. */
enum {
    SHEXEC_STATE_NEW = 0,       /* created, not started */
    SHEXEC_STATE_RUNNING = 1,   /* started, not finished */
    SHEXEC_STATE_EXITED = 2,    /* the shell exited; see shexec_run_exit_code() */
    SHEXEC_STATE_SIGNALED = 3,  /* the shell was killed by a signal it was not sent by us */
    SHEXEC_STATE_TIMED_OUT = 4, /* the timeout expired; the group was terminated */
    SHEXEC_STATE_CANCELLED = 5, /* shexec_run_cancel() or freeing ended it */
    SHEXEC_STATE_KILLED = 6     /* a task ended by shexec_run_cancel() on its run, or freeing */
};

/* Outcome: what happened to processes a foreground command left running
 * (shexec_run_leftovers()). */
enum {
    SHEXEC_LEFTOVERS_NONE = 0,    /* none were left */
    SHEXEC_LEFTOVERS_ADOPTED = 1, /* they became a task (its id: shexec_run_leftovers()) */
    SHEXEC_LEFTOVERS_KILLED = 2   /* they were killed (policy, a full task table, or they
                                     could not be held: see "Without /proc" under HOW A
                                     COMMAND IS RUN) */
};

/* Terminal modes (shexec_run_set_pty()). */
enum {
    SHEXEC_PTY_OFF = 0,  /* pipes (default) */
    SHEXEC_PTY_ON = 1,   /* a pseudo-terminal; input is not echoed */
    SHEXEC_PTY_ECHO = 2  /* a pseudo-terminal that echoes input, as a person would see it */
};

/* What to do with ANSI escape sequences (shexec_run_set_ansi()). */
enum {
    SHEXEC_ANSI_KEEP = 0, /* default: output exactly as written */
    SHEXEC_ANSI_STRIP = 1 /* remove escapes, resolve \r overwrites and backspaces */
};

/* Policy: what to do with leftovers (shexec_session_set_on_leftovers()). */
enum {
    SHEXEC_ON_LEFTOVERS_ADOPT = 0, /* default: adopt them as a task */
    SHEXEC_ON_LEFTOVERS_KILL = 1   /* SIGKILL the command's process group (and the processes
                                      that left it from inside it) when its shell exits */
};

/* Output limit units and what to keep (shexec_session_set_output_limit()). */
enum {
    SHEXEC_UNIT_CHARS = 0, /* UTF-8 code points; each invalid byte counts as one */
    SHEXEC_UNIT_BYTES = 1
};
enum {
    SHEXEC_KEEP_HEAD = 0,     /* keep the first `limit` units */
    SHEXEC_KEEP_HEAD_TAIL = 1 /* keep the first and the last limit/2 units */
};

/* What a wrapper program carries (shexec_session_set_shell()). */
enum {
    SHEXEC_WRAPPER_LOCAL = 0,       /* default: passes descriptors (bwrap, unshare, nsenter,
                                       env, or no wrapper): the report has a channel of its own */
    SHEXEC_WRAPPER_REMOTE = 1,      /* only stdin/stdout/stderr, arguments passed as they are
                                       (docker exec -i, kubectl exec -i --): the report comes
                                       in-band on stdout */
    SHEXEC_WRAPPER_REMOTE_SHELL = 2 /* as REMOTE, and the wrapper joins its arguments into one
                                       string that a remote POSIX shell parses again (ssh): the
                                       library quotes each argument it adds */
};

/*
 * The largest command a run takes, in bytes: 16 MiB. A command is passed to
 * the shell as its -c argument while it fits in one (Linux: 128 KiB), and as
 * a script file it reads from a descriptor when it is larger (so an agent's
 * 200 KB here-document runs; see HOW A COMMAND IS RUN). A larger command
 * fails to start with SHEXEC_E2BIG. Through a remote wrapper the command
 * travels as one argument on the other side, so there the bound is 120 KiB
 * for the command, the prelude (under 1 KiB) and the run's variables
 * together.
 */
#define SHEXEC_MAX_COMMAND_BYTES (16u << 20)

/*
 * The most a command's shell state may come to under
 * shexec_session_set_persist_env(), in bytes: 1 MiB for its listing of
 * variables and its functions' text together. A command that leaves more
 * changes nothing of the session's state, and shexec_run_notice() says so.
 */
#define SHEXEC_MAX_PERSIST_BYTES (1u << 20)

/* Defaults. */
#define SHEXEC_DEFAULT_TIMEOUT_MS 120000u
#define SHEXEC_DEFAULT_MAX_TIMEOUT_MS 600000u
#define SHEXEC_DEFAULT_KILL_GRACE_MS 5000u
#define SHEXEC_DEFAULT_OUTPUT_LIMIT 30000u
#define SHEXEC_DEFAULT_MAX_TASKS 10u

/*
 * The most distinct variable names one override list holds: the session's
 * (shexec_session_setenv()), and each run's or task's (shexec_run_setenv(),
 * the bash tool's `env`). Setting one more new name
 * is SHEXEC_ELIMIT; replacing or removing a name already in the list always
 * works. The inherited environment is not counted. A real environment has
 * tens to a few hundred variables, and Linux caps a command's arguments and
 * environment together at a quarter of the stack limit (2 MiB by default),
 * so 4096 is far above any real need while keeping every step of building
 * an environment well under a millisecond.
 */
#define SHEXEC_MAX_ENV_VARS 4096u

/*
 * Called with each chunk of output as the command produces it. `stream` is
 * SHEXEC_STDOUT or SHEXEC_STDERR; `data` is valid only during the call and is
 * not NUL-terminated. Chunks of one stream concatenated equal that stream's
 * complete output, in order (before truncation; the record a remote
 * wrapper writes in-band never appears): the same bytes, in the same order, as its captured output.
 *
 * WHEN CALLBACKS RUN. Output and done callbacks are called only from inside
 * the session's loop: from shexec_run_exec(), shexec_session_wait(),
 * shexec_session_process(), shexec_tool_call(), and from the calls that wait
 * for a command to end (shexec_run_free(), shexec_task_free() of a running
 * one, shexec_session_free()). A callback is never called from inside itself
 * or another callback of the session, and never by a call that reads output.
 *
 * WHAT A CALLBACK MAY CALL, on the session and on any of its runs and tasks
 * (its own included); all of it is safe:
 *   - every accessor: state, exit code, signal, duration, totals,
 *     truncation, leftovers, task ids, shexec_session_take_task(),
 *     shexec_session_cwd(), shexec_session_errmsg();
 *   - reading output: shexec_run_output(), shexec_task_read(). What they
 *     return already holds the chunk being
 *     delivered. With SHEXEC_ANSI_STRIP, a partial line that such a read
 *     pushes out (see shexec_run_set_ansi()) is captured at once and handed
 *     to the callback right after the current call returns, in its place in
 *     the stream; a read outside a callback likewise queues it for the next
 *     round of the loop, which then does not wait for more output;
 *   - shexec_run_cancel(), shexec_run_write(),
 *     shexec_run_close_stdin();
 *   - shexec_run_free() and shexec_task_free(), of any run or task of the
 *     session, its own included. A running one is terminated; from then on
 *     none of its callbacks is called, a task is no longer found by id, and
 *     the handle must not be used again (a second free before the callback
 *     returns does nothing). The memory is released once the command has ended and
 *     no library call still waits for it. A run freed during its own
 *     shexec_run_exec() makes that call return SHEXEC_ESTATE;
 *   - creating and configuring runs and tasks (they can be started once the
 *     callback has returned), changing session settings, and the tool
 *     registry calls other than shexec_tool_call().
 * Refused: starting or waiting for commands of the session
 * (shexec_run_exec(), shexec_run_start(), shexec_run_start_task(),
 * shexec_session_wait(), shexec_session_pollfds(), shexec_session_process(),
 * shexec_tool_call() fail with SHEXEC_ESTATE; shexec_run_start_task() may report
 * SHEXEC_ELIMIT first), and shexec_session_free() (ignored). Other sessions
 * are not affected.
 */
typedef void (*shexec_output_fn)(void *user, int stream, const char *data, size_t len);

/*
 * Called once when a task finishes (its state is final and all its output
 * has been delivered to the output callback and captured), from inside the
 * session's loop. It may call what an output callback may call (see
 * shexec_output_fn), shexec_task_free() of this task included.
 */
typedef void (*shexec_task_done_fn)(void *user, shexec_task *task);

/* ------------------------------------------------------------------------
 * Library
 * ------------------------------------------------------------------------ */

/* The library's version, "MAJOR.MINOR.PATCH". Static storage. */
SHEXEC_API const char *shexec_version(void);

/*
 * A short English description of a result code ("working directory not
 * found"). Static storage; never NULL (unknown codes give "unknown error").
 */
SHEXEC_API const char *shexec_strerror(int code);

/* ------------------------------------------------------------------------
 * Session
 * ------------------------------------------------------------------------ */

/*
 * Create a session. Its cwd is the host's current directory, its shell
 * /bin/bash if executable else /bin/sh, its environment inherited from the
 * host (with the dangerous-variable deny list applied), its limits the
 * SHEXEC_DEFAULT_* values. A random nonce for the in-band record of remote
 * wrappers is drawn.
 *
 * Errors: SHEXEC_EINVAL (out is NULL), SHEXEC_ENOMEM, SHEXEC_ENOCWD (the
 * host's cwd cannot be determined), SHEXEC_ESYS (no randomness available).
 * On failure *out is NULL.
 */
SHEXEC_API int shexec_session_new(shexec_session **out);

/*
 * Free a session (not from a callback: that call is ignored). Every command
 * it still runs is terminated (SIGTERM to its process group and to the
 * processes that left the group but can still be traced to it, the grace
 * period, then SIGKILL) and reaped before this returns. Processes that
 * detached completely (their parent exited after they left the group, as
 * daemons do) are not the session's any more and keep running: see HOW A
 * COMMAND IS RUN. Runs not yet freed stay valid for reading their results
 * and must still be freed with shexec_run_free(); they can no longer be
 * started. NULL is a no-op.
 */
SHEXEC_API void shexec_session_free(shexec_session *s);

/*
 * The detail message of the session's last failed call, or "" when there was
 * none. Owned by the session; valid until the next call on the session or on
 * one of its runs. Never NULL, also for s == NULL.
 */
SHEXEC_API const char *shexec_session_errmsg(const shexec_session *s);

/*
 * Set the working directory for the next commands. A relative path is taken
 * relative to the current session cwd. The directory must exist.
 * Errors: SHEXEC_EINVAL (NULL or empty), SHEXEC_ENOCWD (missing or not a
 * directory; the cwd is unchanged), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_set_cwd(shexec_session *s, const char *dir);

/*
 * The session's current working directory (absolute). Owned by the session;
 * valid until the cwd next changes (a completed run or set_cwd). NULL only
 * for s == NULL.
 */
SHEXEC_API const char *shexec_session_cwd(const shexec_session *s);

/*
 * Set the default timeout for runs and the maximum any run may ask for, in
 * milliseconds. A larger per-run timeout is clamped to max_ms.
 * Errors: SHEXEC_EINVAL (either is 0, or default_ms > max_ms).
 */
SHEXEC_API int shexec_session_set_timeouts_ms(shexec_session *s, uint32_t default_ms,
                                              uint32_t max_ms);

/*
 * Read the session's default and maximum timeouts, in ms, into *default_ms
 * and *max_ms (either may be NULL). Errors: SHEXEC_EINVAL (s NULL; the
 * outputs then get the defaults, SHEXEC_DEFAULT_TIMEOUT_MS and
 * SHEXEC_DEFAULT_MAX_TIMEOUT_MS).
 */
SHEXEC_API int shexec_session_timeouts_ms(const shexec_session *s, uint32_t *default_ms,
                                          uint32_t *max_ms);

/*
 * Set the time between SIGTERM and SIGKILL when a command is terminated
 * (timeout, cancel, free). 0 sends SIGKILL right after SIGTERM.
 * Errors: SHEXEC_EINVAL (s is NULL).
 */
SHEXEC_API int shexec_session_set_kill_grace_ms(shexec_session *s, uint32_t ms);

/* The session's kill grace in ms (SHEXEC_DEFAULT_KILL_GRACE_MS for s NULL). */
SHEXEC_API uint32_t shexec_session_kill_grace_ms(const shexec_session *s);

/*
 * Set how much of each output stream a run keeps (stdout and stderr are
 * limited independently). `limit` is in `unit` (SHEXEC_UNIT_CHARS or
 * SHEXEC_UNIT_BYTES); 0 keeps nothing (output only reaches the callback).
 * `keep` is SHEXEC_KEEP_HEAD or SHEXEC_KEEP_HEAD_TAIL. A UTF-8 sequence is
 * never split, whatever the unit. Memory held per stream is bounded by the
 * limit however much the command prints.
 *
 * When output exceeds the limit the captured text ends with (HEAD) or has in
 * its middle (HEAD_TAIL) a notice, in the unit of the limit, exactly:
 *   HEAD:      "\n[output truncated: N characters in total, the first K shown]\n"
 *   HEAD_TAIL: "\n[output truncated: N characters in total, M omitted here]\n"
 * ("bytes" instead of "characters" for SHEXEC_UNIT_BYTES).
 * Errors: SHEXEC_EINVAL (unknown unit or keep, limit above 1 GiB).
 */
SHEXEC_API int shexec_session_set_output_limit(shexec_session *s, uint64_t limit, int unit,
                                               int keep);

/*
 * Read the session's output limit into *limit, *unit (SHEXEC_UNIT_*) and
 * *keep (SHEXEC_KEEP_*); any of them may be NULL. Errors: SHEXEC_EINVAL
 * (s NULL; the outputs then get the defaults: SHEXEC_DEFAULT_OUTPUT_LIMIT,
 * SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD).
 */
SHEXEC_API int shexec_session_output_limit(const shexec_session *s, uint64_t *limit, int *unit,
                                           int *keep);

/*
 * Environment. A command's environment is built in this order:
 *   1. the base: the host's environment (inherit, the default) or nothing;
 *   2. the session's overrides (shexec_session_setenv);
 *   3. the run's overrides (shexec_run_setenv);
 *   4. the deny list: every variable whose name matches a deny glob and no
 *      allow glob is removed, whatever step added it.
 * The default deny list: LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH, DYLD_*,
 * BASH_ENV, ENV, BASH_FUNC_*, SHELLOPTS, BASHOPTS, PROMPT_COMMAND, IFS,
 * CDPATH, GLOBIGNORE. Globs are fnmatch(3) patterns matched against the
 * name (`*`, `?`, `[...]`). The host's own environ is never modified; it is
 * read each time a command starts.
 *
 * Cost: setting a variable takes constant time (amortized), and building a
 * command's environment is linear in the size of the variables, however
 * many there are and however many literal (NAME) or prefix (NAME_*) globs
 * the lists hold; other globs (*_TOKEN, *SECRET*, [..] patterns) are tried
 * one by one per variable. Override lists are bounded by
 * SHEXEC_MAX_ENV_VARS.
 */

/*
 * Inherit the host's environment (1, the default) or start from an empty
 * one (0). Errors: SHEXEC_EINVAL (s NULL).
 */
SHEXEC_API int shexec_session_set_env_inherit(shexec_session *s, int inherit);

/* 1 when commands start from the host's environment (the default, also for
 * s NULL), 0 when from an empty one. */
SHEXEC_API int shexec_session_env_inherit(const shexec_session *s);

/*
 * Set `name` to `value` for every later command of the session; value NULL
 * removes the variable (also an inherited one). Names must be non-empty and
 * must not contain '='. Errors: SHEXEC_EINVAL (bad name; nothing is
 * changed), SHEXEC_ELIMIT (the name is new and the session already has
 * SHEXEC_MAX_ENV_VARS overrides; nothing is changed), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_setenv(shexec_session *s, const char *name, const char *value);

/*
 * Add a glob to the deny list (variables it matches are removed), or to the
 * allow list (variables it matches are kept even if denied, e.g. "LD_LIBRARY_PATH"
 * for a host that needs it). Errors: SHEXEC_EINVAL (NULL or empty glob),
 * SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_env_deny(shexec_session *s, const char *glob);
SHEXEC_API int shexec_session_env_allow(shexec_session *s, const char *glob);

/*
 * Set the program that runs each command and what it carries, in one call.
 * `argv` is the program and its leading arguments, a NULL-terminated array,
 * copied: the library appends "-c", the command (after its prelude's first
 * line, except for bash started directly: see HOW A COMMAND IS RUN) and
 * $0, the shell's name (the last element's base name: "bash", "sh"). With
 * a prefix such as
 *   {"/usr/bin/env", "-i", "/bin/bash", NULL}  or
 *   {"docker", "exec", "-i", "ctr", "bash", NULL}
 * every command runs inside that wrapper. The shell inside must be POSIX
 * (bash, dash, ash, ksh, zsh in sh mode). {path, NULL} makes `path` the
 * shell (run as `path -c TEXT NAME`; it must be POSIX-compatible, as it
 * runs the prelude); NULL restores the default: /bin/bash when it is
 * executable, else /bin/sh. A shell whose name (resolved through symlinks
 * where it runs directly) starts with "bash", and is not run as "sh",
 * reads the prelude from BASH_ENV. A new program drops the shell variables
 * and functions kept by shexec_session_set_persist_env() (the environment
 * stays).
 *
 * `wrapper_kind` (SHEXEC_WRAPPER_*) says what the wrapper carries:
 * SHEXEC_WRAPPER_LOCAL for no wrapper or one that passes descriptors
 * (bwrap, unshare, nsenter, env); SHEXEC_WRAPPER_REMOTE or
 * SHEXEC_WRAPPER_REMOTE_SHELL for one that carries only stdin, stdout and
 * stderr (docker exec, kubectl exec; ssh).
 *
 * The program is the host's choice and nothing else can change it: argv[0]
 * is resolved here, once, as the host's own execvp() would (a name without
 * '/' in the host's PATH at the time of this call, "/usr/bin:/bin" when it
 * has none; a relative path against the host's cwd), and the absolute path
 * found is what every command executes. Neither the session's nor a run's
 * environment (a PATH a tool call supplies) nor a run's working directory
 * changes it.
 *
 * With a prefix of more than one element (a wrapper), the wrapper program
 * gets the session's environment (the base, the session's overrides, the
 * deny list: choose it with shexec_session_set_env_inherit() and
 * shexec_session_setenv()). The run's own variables (shexec_run_setenv(),
 * a tool call's "env") never reach the wrapper: the prelude exports them
 * inside the wrapper, in the shell that runs the command, after the deny
 * list has removed what it names; locally they travel in the run's
 * channel, never on a command line (a POSIX shell reads them through
 * /dev/fd/173, so the wrapper must give it /dev/fd, that is /proc; where
 * the host has no /dev/fd such a run fails with SHEXEC_ESTATE), and
 * through a remote wrapper as "NAME=VALUE" ("NAME" to unset) arguments,
 * the only way across. Such names must
 * be shell identifiers (ASCII letters, digits, '_'; starting with a letter
 * or '_'; whatever the host's locale): another name fails the run with
 * SHEXEC_EINVAL. A wrapper that
 * joins its arguments into one string for a remote shell (ssh) is declared
 * SHEXEC_WRAPPER_REMOTE_SHELL, and the library quotes what it adds.
 *
 * LOCAL: the wrapper passes descriptors (bubblewrap, unshare, nsenter,
 * env, sudo without closefrom): the report comes back on the run's channel,
 * descriptor 173 (see HOW A COMMAND IS RUN), and the session cwd is a
 * directory of the host, checked there. A POSIX shell through the wrapper
 * appends its report to /dev/fd/173, so the wrapper must give it /dev/fd
 * (/proc), else its commands report nothing.
 *
 * REMOTE, REMOTE_SHELL: the command runs on another machine or in another
 * container, and only stdin, stdout and stderr cross. The report then comes
 * in-band: the prelude keeps a copy of the shell's original stdout at
 * descriptor 9 and its EXIT trap writes a per-session random tag and the
 * directory there (so `exec >file` still keeps it out of the file), and the
 * library strips it from stdout. The command can read the tag (it is in the
 * prelude), so it could print a report of its own: the host takes only an
 * absolute path. The session cwd names a directory on the other side: it
 * is passed to the prelude, which changes to it there; one that no longer
 * exists there is replaced by its nearest existing ancestor, with a line
 * on stderr saying so. shexec_session_set_cwd() and shexec_run_set_cwd()
 * only make it absolute. Through a remote wrapper, descriptor 9 is open in
 * the command (a command's own use of it loses the report). Switching between LOCAL and a remote kind resets
 * the session cwd: to "" (the remote shell's starting directory, until the
 * first command reports one) or to the host's current directory. The exit
 * code is the wrapper's (ssh and docker pass the remote one on). Commands
 * are bounded by the remote exec limit (see SHEXEC_MAX_COMMAND_BYTES).
 * REMOTE passes the arguments the library adds (-c, the prelude and the
 * command, $0, the directory, the run's variables) as they are (docker exec -i ctr sh,
 * kubectl exec -i pod -- sh); REMOTE_SHELL single-quotes each of them for a
 * wrapper that joins its arguments into one string for a POSIX login shell
 * on the other side to parse (ssh host sh). A timeout or cancel signals the
 * wrapper's process group on the host; for the remote command to end too,
 * the wrapper must pass the hangup on: `ssh -tt` (a remote terminal, which
 * the remote side hangs up when the connection closes), `docker exec -it`.
 *
 * The call is atomic: on any error nothing changes (program, kind, cwd).
 * Errors: SHEXEC_EINVAL (s NULL, argv[0] NULL or empty, unknown kind),
 * SHEXEC_ESPAWN (a name not found in the host's PATH), SHEXEC_ESYS (a
 * relative path while the host's cwd cannot be read), SHEXEC_ESTATE (a
 * remote kind while shexec_session_set_persist_env() is on), SHEXEC_ENOCWD
 * (back to LOCAL while the host's cwd cannot be read), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_set_shell(shexec_session *s, const char *const *argv,
                                        int wrapper_kind);

/*
 * The program argv set with shexec_session_set_shell() (NULL-terminated,
 * as given), or NULL for the default shell (and for s NULL). Owned by the
 * session; valid until the shell is set again or the session is freed.
 */
SHEXEC_API const char *const *shexec_session_shell_argv(const shexec_session *s);

/* The session's wrapper kind, SHEXEC_WRAPPER_* (SHEXEC_WRAPPER_LOCAL, the
 * default, also for a NULL session). */
SHEXEC_API int shexec_session_wrapper_kind(const shexec_session *s);

/*
 * Keep the shell's state from one command to the next (on = 1), or not
 * (0, the default: each command starts from the session's environment, as
 * in separate `bash -c` calls). Turning it off forgets what was kept.
 *
 * WHAT IS KEPT. When a foreground run ends by itself (state EXITED: not a
 * timeout, cancel or signal), its shell lists its state with builtins only
 * (no process is started) on the run's channel, and the library takes it.
 * The listing comes from inside the command, which can write it too, so it
 * is read only from a run whose shell the library asked to list it, and
 * what is taken is parsed into names, attributes and values and given to
 * the next command in the library's own words, never as the listing's
 * text:
 *   - the exported environment: the session's environment becomes the one
 *     the command's shell left, new and changed variables kept, `unset`
 *     honoured, in the shell's order (bash and dash list by name). Names a
 *     shell cannot list (not identifiers) keep their value;
 *   - with bash, also the shell variables that are not exported
 *     (`_OLD_VIRTUAL_PATH`) and the functions (`deactivate`, `nvm`), given
 *     to each later command by its prelude, silently (no trace under
 *     `set -x`, no message, the command's own line numbers): each variable
 *     as one `declare` line the library quotes (attributes a, A, i, l, u,
 *     n; an integer whose value is not a number, a reference to anything
 *     but a plain name, or an array bash would not have listed is not
 *     kept, and shexec_run_notice() names it); each function through
 *     bash's import of functions from its environment (BASH_FUNC_NAME%%),
 *     which defines exactly that one function and runs nothing around it,
 *     and then made unexported, so the command's own programs do not
 *     inherit it. A function bash cannot define again as it starts is
 *     dropped alone, named in the notice: one that needs `shopt -s
 *     extglob` (known before it is given), and one bash refuses (its shell
 *     reports it); where posix_spawn cannot change directory and the
 *     /bin/sh trampoline is dash, every function (dash drops the entries). Variables and functions the command removed are gone.
 *     With a shell that cannot list them (dash, a POSIX sh), only the
 *     exported environment is kept.
 * Never kept: what the deny list removes (shexec_session_env_deny(): the
 * defaults LD_PRELOAD, BASH_ENV, BASH_FUNC_*, ...), exported or not; the
 * library's own variables and functions (__shexec*); functions named like
 * a builtin or keyword of bash or dash (cd, printf, trap, builtin, ...:
 * they would take over what the prelude and the report call), or with a
 * character other than letters, digits, '_', '.', ':', '-' (all named in
 * shexec_run_notice()); a function larger than 120 KiB (what one
 * environment entry can carry); PWD (always the session cwd);
 * SHLVL and _ (they keep the session's value: each shell changes them);
 * variables bash sets or keeps up itself, when not exported (BASH_*,
 * BASH, BASHOPTS, BASHPID, COLUMNS, COMP_WORDBREAKS, DIRSTACK,
 * EPOCHREALTIME, EPOCHSECONDS, EUID, FUNCNAME, GROUPS, HISTCMD, HISTFILE,
 * HISTFILESIZE, HISTSIZE, HOSTNAME, HOSTTYPE, IFS, LINENO, LINES, MACHTYPE,
 * MAILCHECK, OLDPWD, OPTERR, OPTIND, OSTYPE, PIPESTATUS, PPID, PS1, PS2,
 * PS4, PWD, RANDOM, SECONDS, SHELL, SHELLOPTS, SHLVL, SRANDOM, TERM, UID);
 * readonly variables that are not exported (an exported one keeps its
 * value, as environments carry no attributes); aliases and `set` options.
 *
 * WHAT CHANGES NOTHING. A timed-out, cancelled or signalled run; a command
 * that ends in `exec`, or replaces the EXIT trap and calls `exit` (it
 * reports nothing, as for the cwd); a state larger than
 * SHEXEC_MAX_PERSIST_BYTES, or a listing that cannot be read (both say so
 * in shexec_run_notice()). Tasks (shexec_run_start_task(), run_in_background)
 * start with the session's state as it is when they start, and their end
 * never changes it.
 *
 * A RUN'S OWN VARIABLES (shexec_run_setenv(), a tool call's `env`) are the
 * run's: a variable it set that the command left with that value, or
 * removed and the command did not set, takes back the session's value
 * afterwards; what the command itself exported or unset is kept. A run
 * with its own cwd keeps the state it reports like any other run.
 *
 * THE HOST'S SETTINGS. Once a run has reported its environment, it replaces
 * the base and the overrides: the host's environment is not read again
 * (turn the setting off and on to start from it anew), a later
 * shexec_session_setenv() changes it directly (and drops a shell variable
 * of that name), and the deny list still applies to every command. A new
 * shell program (shexec_session_set_shell()) drops the shell
 * variables and functions and keeps the environment. A host that changes
 * the session while a foreground run runs has those changes replaced by
 * what the run reports. With a wrapper program (more than the shell in
 * shexec_session_set_shell()), the kept environment is what the
 * wrapper gets; one that replaces the environment (env -i) has the shell
 * report its own.
 *
 * NOTHING KEPT IS ON A COMMAND LINE: the environment is the command's
 * environment, the rest travels in its channel and in its environment,
 * which only the same user can read (/proc/PID/environ). A listing that is
 * not one the session's shell writes (bash's for dash, an empty one) is
 * not taken.
 *
 * Read the state back with shexec_session_getenv() and
 * shexec_session_environ(). The shell lists its state after every
 * foreground command (tasks are not listed); that costs each command one
 * builtin listing, parsed only when it differs from the last (the
 * benchmark's rows 1p, 1bp, 1bx and 8p measure it).
 * Errors: SHEXEC_EINVAL (s NULL), SHEXEC_ESTATE (on with a remote wrapper
 * kind: the in-band record carries only the directory; the setting is
 * unchanged). shexec_session_set_shell() to a remote kind while it
 * is on is SHEXEC_ESTATE too.
 */
SHEXEC_API int shexec_session_set_persist_env(shexec_session *s, int on);

/* 1 when the session keeps the shell's state, else 0 (also for NULL). */
SHEXEC_API int shexec_session_persist_env(const shexec_session *s);

/*
 * The value of `name` in the environment the session's next command
 * starts with (before its run's own variables; PWD, always the session
 * cwd, is not listed), or NULL when it has none. With
 * shexec_session_set_persist_env() this is the state the last command
 * left; without it, the host's environment (if inherited), the session's
 * overrides and the deny list. The value may hold any byte but NUL
 * (newlines, invalid UTF-8) and may be "". Owned by the session; valid
 * until the next shexec_session_getenv() or shexec_session_environ() call
 * on it, or until it is freed.
 * NULL also on error, with shexec_session_errmsg() set: an invalid name
 * (NULL, empty, or containing '='), out of memory; s NULL.
 */
SHEXEC_API const char *shexec_session_getenv(shexec_session *s, const char *name);

/*
 * The whole of that environment: *out receives a NULL-terminated array of
 * "NAME=VALUE" strings (the name ends at the first '='), in the order the
 * command gets them. Owned by the session; valid until the next
 * shexec_session_getenv() or shexec_session_environ() call on it, or until
 * it is freed. Errors: SHEXEC_EINVAL (a NULL argument), SHEXEC_ENOMEM;
 * *out is NULL then.
 */
SHEXEC_API int shexec_session_environ(const char *const **out, shexec_session *s);

/*
 * Pump the session's loop: read output of running commands, enforce their
 * timeouts, reap the ones that ended. Returns when at least one run or task
 * of the session finished during the call, when timeout_ms elapsed
 * (negative: no limit), or at once when nothing is running. Used with
 * shexec_run_start() and tasks for non-blocking use. Output callbacks run
 * from inside this call.
 * Returns how many runs and tasks finished during the call (0: the time
 * ran out, or nothing was running), or a negative error: SHEXEC_EINVAL
 * (s NULL), SHEXEC_ESTATE (called from a callback), SHEXEC_ESYS (poll
 * failed other than by EINTR).
 */
SHEXEC_API int shexec_session_wait(shexec_session *s, int32_t timeout_ms);

/*
 * Host event-loop integration, instead of shexec_session_wait(): fill `fds`
 * (capacity `cap`) with the descriptors the session needs watched, and
 * *timeout_ms with how long the host may sleep before calling
 * shexec_session_process() anyway (-1: no deadline; 0 when a deadline has
 * already passed). Returns how many
 * entries are needed: when that exceeds cap, only cap were filled; call
 * again with a bigger array. Then poll() them (with the host's own
 * descriptors) and hand the same entries, revents filled, to
 * shexec_session_process(), which reads output, runs callbacks, enforces
 * deadlines and reaps; call it also when the timeout expires (the same
 * entries with no revents, or n = 0). Entries are matched by descriptor, so
 * call shexec_session_process() before any other call on the session (which
 * could end a command and let its descriptor number be reused); they may
 * come in any order, mixed with the host's own (which are ignored), at a
 * cost of O(k log k) for the k entries with revents, not one per pair. The set
 * changes as commands start and end: fill it anew each round.
 * shexec_session_pollfds() only lists: it changes nothing, signals nothing.
 * shexec_session_process() is the step that acts: it enforces every
 * deadline that has passed (timeouts, kill grace), and returns how many
 * runs and tasks finished in it (>= 0), like shexec_session_wait().
 * Errors (negative return): SHEXEC_EINVAL (s or timeout_ms NULL, fds NULL
 * with cap > 0), SHEXEC_ESTATE (from a callback), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_pollfds(struct pollfd *fds, uint32_t cap, int32_t *timeout_ms,
                                      shexec_session *s);
SHEXEC_API int shexec_session_process(shexec_session *s, const struct pollfd *fds, uint32_t n);

/*
 * How many tasks the session holds at once (default 10): a task holds one
 * slot from its start until it is freed, running or finished; adopted
 * leftovers count. Finished tasks the host never held are released to make
 * room (see TASK RETENTION); lowering the limit frees nothing at once.
 * Errors: SHEXEC_EINVAL (s NULL).
 */
SHEXEC_API int shexec_session_set_max_tasks(shexec_session *s, uint32_t max);

/* How many tasks the session holds at once (SHEXEC_DEFAULT_MAX_TASKS for
 * s NULL). */
SHEXEC_API uint32_t shexec_session_max_tasks(const shexec_session *s);

/*
 * What to do with processes a foreground command leaves running in its
 * process group after its shell exits: SHEXEC_ON_LEFTOVERS_ADOPT (default;
 * they become a task whose output keeps being read, so a logging server is
 * not killed by a broken pipe) or SHEXEC_ON_LEFTOVERS_KILL. What happened
 * is the run's outcome, shexec_run_leftovers(): SHEXEC_LEFTOVERS_*. When no task slot is
 * free and none can be made (see TASK RETENTION) they are killed either
 * way. Errors: SHEXEC_EINVAL.
 */
SHEXEC_API int shexec_session_set_on_leftovers(shexec_session *s, int policy);

/* The session's SHEXEC_ON_LEFTOVERS_* policy (SHEXEC_ON_LEFTOVERS_ADOPT, the
 * default, for s NULL). */
SHEXEC_API int shexec_session_on_leftovers(const shexec_session *s);

/*
 * What happens to the session's commands when the host process dies without
 * freeing the session (SIGKILL, an OOM kill, a crash, exit() or a return
 * from main that skips shexec_session_free()). Off (0, the default): they
 * keep running, reparented to init, as with any child of a dead process.
 * On (1): a watchdog process ends them, as a timeout would: every process
 * of every run, task and adopted leftover of the session gets SIGTERM (and
 * SIGCONT), then after the session's kill grace SIGKILL, including those
 * that left their command's process group while their parent was alive
 * (setsid, `set -m`), found as described in HOW A COMMAND IS RUN. Such a
 * process signalled on its own is remembered (pid and start time, up to
 * 4096 of them) for the SIGKILL: one that ignores SIGTERM is still ended
 * after the SIGTERM has killed its parent and so unlinked it.
 *
 * The watchdog is a fork() of the host made when the setting is turned on
 * (commands already running are included); it runs only async-signal-safe
 * code, so any host may make it, also a multithreaded one. It learns each
 * command's process group as the command starts and sees the host's death
 * as end-of-file on a pipe whose host end is close-on-exec: commands never
 * hold it, nor do programs the host itself fork()s and exec()s (those are
 * not the session's and are never signalled). A child the host fork()s
 * without exec() holds it until that child exits. The watchdog signals a
 * group only while it can prove it is still the command's (its leader, or
 * a member, with the start time recorded for it in /proc), and a process
 * outside the group only when its start time is the one seen as it was
 * found: a pid reused by another program is never signalled. It exits when
 * its work is done; shexec_session_free() (and turning the setting off)
 * tells it to exit without signalling and reaps it. It is in a session of
 * its own, so a terminal's signals (^C, a hangup) do not reach it.
 *
 * Without /proc (some containers; the plain POSIX path, as on macOS and the
 * BSDs) no start time is read and nothing can be proven once the host is
 * gone. The proof is the library's own while the host lives: it keeps the
 * leader of each group unreaped (a zombie) for as long as it follows the
 * group, so the id cannot have been reused by another program. So the
 * watchdog sends SIGTERM, SIGCONT and SIGKILL, one right after the other
 * with no grace, to the process group of every run, task and adopted
 * leftover the moment it sees the host's end, then exits. Processes that
 * left their group (setsid, `set -m`) cannot be found there and keep
 * running; leftovers are adopted there only while they hold the command's
 * output pipes (HOW A COMMAND IS RUN), so those are the leftovers it ends.
 * A host that reaps the library's children itself (CONVENTIONS: SIGCHLD
 * ignored, waitpid(-1)) takes that pin away between a shell's exit and
 * the library noticing it.
 *
 * Cost: turning it on forks the host once (page tables: grows with the
 * host's memory) and maps a few MiB of address space the watchdog touches
 * only as it needs; the watchdog gives back the copy of the host's large
 * memory areas at once, so the host's later writes are not duplicated.
 * Each command costs the host one small write to the watchdog's channel
 * (its end goes with the next command's start) and one read of the
 * shell's start time (/proc/PID/stat), which proves its group.
 *
 * Errors: SHEXEC_EINVAL (s NULL), SHEXEC_ENOMEM (the watchdog's tables
 * cannot be mapped), SHEXEC_ESYS (no channel or no fork: the setting stays
 * off). Turning it off, or on again, is always SHEXEC_OK.
 */
SHEXEC_API int shexec_session_set_watchdog(shexec_session *s, int on);

/* 1 while the session's watchdog is on and in place, else 0: off (the
 * default), s NULL, or a watchdog found gone (killed from outside, or its
 * channel closed by the host). */
SHEXEC_API int shexec_session_watchdog(const shexec_session *s);

/*
 * Take a task of the session by id: the one call that makes a task the
 * session holds (adopted leftovers, tasks the tool layer started) the
 * host's. From then on it is never released to make room (see TASK
 * RETENTION), and the host frees it with shexec_task_free() (or has the
 * tool layer read it to completion). Taking a task the host already holds
 * gives the same pointer again. Errors:
 * SHEXEC_EINVAL (NULL argument), SHEXEC_ENOTASK (*out is NULL; the message
 * is `no task with id "ID"`, or `task "ID" finished and was released
 * unread (retention limit)` for one of the last 64 tasks released).
 */
SHEXEC_API int shexec_session_take_task(shexec_task **out, shexec_session *s, const char *id);

/* ------------------------------------------------------------------------
 * Run
 * ------------------------------------------------------------------------ */

/*
 * Create a run of `command` in session `s`. The command is copied.
 * Errors: SHEXEC_EINVAL (out, s or command NULL, command empty),
 * SHEXEC_ENOMEM. On failure *out is NULL.
 */
SHEXEC_API int shexec_run_new(shexec_run **out, shexec_session *s, const char *command);

/*
 * Same, with an explicit length, for callers whose strings are not
 * NUL-terminated (FFI). A command containing a NUL byte is SHEXEC_EINVAL:
 * it could not reach the shell intact.
 */
SHEXEC_API int shexec_run_new_bytes(shexec_run **out, shexec_session *s, const char *command,
                                    size_t len);

/*
 * Set this run's timeout in ms. Unset, a run started in the foreground has
 * the session's default timeout and a task (shexec_run_start_task()) has
 * none. A foreground run's timeout is clamped to the session maximum; a
 * task's is not (it is a safety net for a server meant to run long).
 * shexec_run_timeout_ms() tells the timeout in force.
 * Errors: SHEXEC_EINVAL (run NULL or ms 0), SHEXEC_ESTATE (already started).
 */
SHEXEC_API int shexec_run_set_timeout_ms(shexec_run *run, uint32_t ms);

/*
 * Run in `dir` instead of the session cwd (relative: to the session cwd).
 * A run with its own cwd does not move the session cwd when it ends. The
 * directory is checked when the run starts (SHEXEC_ENOCWD then).
 * Errors: SHEXEC_EINVAL (NULL or empty), SHEXEC_ESTATE, SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_run_set_cwd(shexec_run *run, const char *dir);

/*
 * Set (value non-NULL) or remove (value NULL) a variable for this run only;
 * applied after the session's overrides, before the deny list.
 * Errors: SHEXEC_EINVAL (bad name), SHEXEC_ESTATE, SHEXEC_ELIMIT (the name
 * is new and the run already has SHEXEC_MAX_ENV_VARS overrides; nothing is
 * changed), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_run_setenv(shexec_run *run, const char *name, const char *value);

/*
 * Override the session's output limit for this run; arguments and notice as
 * for shexec_session_set_output_limit(). Errors: SHEXEC_EINVAL, SHEXEC_ESTATE.
 */
SHEXEC_API int shexec_run_set_output_limit(shexec_run *run, uint64_t limit, int unit, int keep);

/*
 * Set the output callback (NULL removes it). `user` is passed back verbatim.
 * It may be set or changed while the run runs: it gets the output read from
 * then on (a start never reads output, so a callback set right after
 * shexec_run_start() or shexec_run_start_task() misses nothing).
 * Errors: SHEXEC_EINVAL (run NULL), SHEXEC_ESTATE (the run has finished).
 */
SHEXEC_API int shexec_run_set_output_fn(shexec_run *run, shexec_output_fn fn, void *user);

/*
 * Give the command a pipe as stdin (enable = 1) instead of /dev/null, to be
 * fed with shexec_run_write(). Errors: SHEXEC_EINVAL, SHEXEC_ESTATE.
 */
SHEXEC_API int shexec_run_set_stdin(shexec_run *run, int enable);

/*
 * Queue `len` bytes for the running command's stdin (they are copied). The
 * bytes are written as the command reads them, while the loop is pumped, in
 * time linear in their number (however they are split into calls), at most
 * 1 MiB per command per round so that deadlines and output are seen to
 * meanwhile; this call never blocks and never raises SIGPIPE in the host.
 * Errors: SHEXEC_EINVAL, SHEXEC_EPIPE (stdin not enabled or already closed,
 * or the process has ended), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_run_write(shexec_run *run, const void *data, size_t len);

/*
 * Close the command's stdin once the queued bytes are written (the command
 * then reads EOF). Errors: SHEXEC_EINVAL, SHEXEC_EPIPE (stdin not enabled).
 */
SHEXEC_API int shexec_run_close_stdin(shexec_run *run);

/*
 * Run the command on a pseudo-terminal (mode SHEXEC_PTY_ON or
 * SHEXEC_PTY_ECHO; SHEXEC_PTY_OFF is pipes, the default) instead of pipes, for
 * programs that change behaviour without one (colours, progress bars,
 * prompts, REPLs). The command leads a new session with the terminal as its
 * controlling terminal; stdout and stderr are merged into SHEXEC_STDOUT
 * (SHEXEC_STDERR stays empty); input written with shexec_run_write() is typed
 * at the terminal (not echoed); "\x03" interrupts (SIGINT) and
 * shexec_run_close_stdin() sends ^D (end of input). Line endings are not
 * translated: "\n" stays "\n". When the command's shell exits, the terminal
 * hangs up: processes it left running get SIGHUP, as in a closed terminal
 * (those that survive it are leftovers like any other). A child the shell
 * had just forked can take the hangup in the shell's handler and lose it
 * when it execs; where /proc shows a leftover alive with SIGHUP neither
 * blocked, ignored nor caught, it is sent SIGHUP again (a few looks in
 * the first seconds after the exit, while the host drives the loop).
 * Errors: SHEXEC_EINVAL (unknown mode), SHEXEC_ESTATE (already started).
 */
SHEXEC_API int shexec_run_set_pty(shexec_run *run, int mode);

/* The terminal's size (default 200 columns x 50 rows, wide enough that
 * output is not hard-wrapped). Errors: SHEXEC_EINVAL (0 or > 65535),
 * SHEXEC_ESTATE. */
SHEXEC_API int shexec_run_set_pty_size(shexec_run *run, uint32_t cols, uint32_t rows);

/*
 * SHEXEC_ANSI_KEEP (default) or SHEXEC_ANSI_STRIP: remove CSI (colours,
 * cursor moves, erase), OSC (titles, hyperlinks: their text is kept),
 * charset selects and other escape sequences, resolve "\r" overwrites
 * (progress bars) and backspace overstrikes to the final line content, and
 * turn "\r\n" into "\n". Printable text is never dropped unless
 * overwritten. With stripping, the callback receives text a line at a time
 * (a line can still be overwritten until its "\n"); reading the output of
 * a running command (shexec_run_output(), shexec_task_read()) also pushes out a pending partial line such as a
 * prompt: it is captured then, and the callback gets it from the loop, in
 * order (see shexec_output_fn). Errors: SHEXEC_EINVAL, SHEXEC_ESTATE.
 */
SHEXEC_API int shexec_run_set_ansi(shexec_run *run, int mode);

/*
 * Start the run and wait until it ends (exits, times out, or is cancelled
 * from its callback). SHEXEC_OK means the command ran: how it ended is in
 * the result accessors (a non-zero exit or a timeout is data, not an error).
 * Errors (nothing was run, nothing is left behind): SHEXEC_EINVAL,
 * SHEXEC_ESTATE (already started, session freed, or called from a callback),
 * SHEXEC_ENOCWD (the cwd vanished), SHEXEC_ESPAWN (the shell could not be
 * executed), SHEXEC_E2BIG (the command above SHEXEC_MAX_COMMAND_BYTES, or
 * the environment too long for exec),
 * SHEXEC_ESYS (pipes or process could not be created, e.g. EMFILE, EAGAIN),
 * SHEXEC_ENOMEM.
 * A callback that frees the run while it executes (see shexec_output_fn)
 * ends it: the command is terminated and reaped, the run is released before
 * this returns, and the result is SHEXEC_ESTATE ("the run was freed by a
 * callback while it ran"). The handle is gone then: do not read it or free
 * it again.
 */
SHEXEC_API int shexec_run_exec(shexec_run *run);

/*
 * Start the run and return at once; drive it with shexec_session_wait()
 * until shexec_run_state() is past SHEXEC_STATE_RUNNING. Errors as for shexec_run_exec().
 */
SHEXEC_API int shexec_run_start(shexec_run *run);

/*
 * Start the run in the background, as a task of its session, and return at
 * once: *out receives the task, which now owns the run (shexec_task_run()
 * gives it back; it is freed with the task, and shexec_run_free() on it is
 * ignored). A task never moves the session cwd and has no timeout unless
 * one was set. If the session holds its maximum number of tasks, finished
 * ones the host never held are released first (see TASK RETENTION).
 * Errors: as shexec_run_start(), and SHEXEC_ELIMIT when no slot is free and
 * none can be made: the message names the limit and how many tasks run,
 * e.g. "the session already holds its maximum of 10 tasks (2 running, 8
 * finished but not yet freed)". On failure *out is NULL and the run is
 * still the caller's, not started: start it again later, or free it.
 */
SHEXEC_API int shexec_run_start_task(shexec_task **out, shexec_run *run);

/*
 * Terminate a running run: SIGTERM to its process group now, SIGKILL after
 * the grace period. Returns at once; the run finishes (state CANCELLED) as
 * the loop is pumped. A task's run (shexec_task_run()) is how a task is
 * killed: it finishes in state KILLED. Cancelling a finished run does
 * nothing.
 * Errors: SHEXEC_EINVAL (run NULL), SHEXEC_ESTATE (not started).
 */
SHEXEC_API int shexec_run_cancel(shexec_run *run);

/* The run's SHEXEC_STATE_* (SHEXEC_STATE_NEW for NULL); above
 * SHEXEC_STATE_RUNNING, the run has finished. */
SHEXEC_API int shexec_run_state(const shexec_run *run);

/*
 * The shell's exit status (0-255) when the state is EXITED, else -1 (also
 * when the library ended the run and the shell exited by itself on the way,
 * e.g. `trap 'exit 7' TERM` after a timeout: TIMED_OUT, exit code -1). When
 * the host reaped the shell itself (SIGCHLD ignored, SA_NOCLDWAIT,
 * waitpid(-1): see THREADS AND PROCESS-WIDE STATE), the status the shell's
 * report gives, or -1 in state EXITED when it reported none.
 */
SHEXEC_API int shexec_run_exit_code(const shexec_run *run);

/*
 * The signal that ended the shell (e.g. 15 after a timeout that SIGTERM
 * ended), or 0 when it exited normally, has not finished, or its status was
 * lost.
 */
SHEXEC_API int shexec_run_signal(const shexec_run *run);

/*
 * The captured output of `stream` (SHEXEC_STDOUT or SHEXEC_STDERR): bounded
 * by the output limit, with the truncation notice when truncated (through a
 * remote wrapper, the in-band record removed). *len receives its length in bytes (len may be NULL).
 * The text is NUL-terminated but may contain NUL bytes. Owned by the run;
 * valid until the run is freed or pumped again. Returns "" (len 0) for a
 * bad stream or a NULL run.
 */
SHEXEC_API const char *shexec_run_output(shexec_run *run, int stream, size_t *len);

/* How many bytes `stream` produced in total (through a remote wrapper,
 * after the in-band record's removal). */
SHEXEC_API uint64_t shexec_run_output_total(const shexec_run *run, int stream);

/* 1 when `stream` was truncated by the output limit, else 0. */
SHEXEC_API int shexec_run_truncated(const shexec_run *run, int stream);

/* Wall time from start to end (or until now, while running), in ms. */
SHEXEC_API uint64_t shexec_run_duration_ms(const shexec_run *run);

/*
 * The pid of the command's shell, which is also its process group id (and,
 * with a terminal, its session id), or 0 before start. It stays the same
 * after the run ends, but the process is gone by then and the id may
 * belong to another process: signal the command with shexec_run_cancel()
 * (also a task's run), which knows when the group is still the command's.
 */
SHEXEC_API int64_t shexec_run_pid(const shexec_run *run);

/*
 * The timeout in force, in ms: for a started run the deadline it runs
 * under (the session default, or its own, clamped for the foreground);
 * before start, what a foreground start would give. 0: none (a task without
 * one).
 */
SHEXEC_API uint32_t shexec_run_timeout_ms(const shexec_run *run);

/*
 * What became of processes the command left running: SHEXEC_LEFTOVERS_NONE,
 * _ADOPTED or _KILLED (NONE for a NULL run, or one that has not finished).
 * When task_id is not NULL, *task_id receives the id of the task that
 * adopted them (ADOPTED), else NULL; the id is owned by the run and valid
 * until it is freed. Take the task itself with shexec_session_take_task().
 */
SHEXEC_API int shexec_run_leftovers(const shexec_run *run, const char **task_id);

/*
 * What the library declined to do for this run, in English, or "" when
 * nothing: a working directory the shell reported that was not
 * adopted because it is not an absolute path naming an existing directory
 * within the kernel's path limit at the moment the run ended (the session
 * cwd then stays as it was); under shexec_session_set_persist_env(), a
 * shell state that was not taken (above SHEXEC_MAX_PERSIST_BYTES, or a
 * listing that could not be read). Several are joined with "; ".
 * Owned by the run; valid until it is freed. Never NULL.
 */
SHEXEC_API const char *shexec_run_notice(const shexec_run *run);

/*
 * Free a run. A run still running is terminated first (SIGTERM, grace,
 * SIGKILL) and reaped; the callbacks of other commands of the session may
 * run meanwhile, this run's own is not called again. NULL is a no-op, and
 * so is a task's run (free the task). From a callback: see
 * shexec_output_fn.
 */
SHEXEC_API void shexec_run_free(shexec_run *run);

/* ------------------------------------------------------------------------
 * Task: a background command
 *
 * A task is a run started with shexec_run_start_task(). It runs while the
 * host does other things, and its output is drained whenever the session's
 * loop is pumped (any run of the session, shexec_session_wait(), or the
 * host's own loop via pollfds/process). A task never moves the session cwd
 * and has no timeout unless one is set. Its output is bounded like a run's.
 * A task is running until its shell has exited and no process is left in
 * its process group. Everything about the command (state, exit code,
 * output, input, cancel) is read and done through its run,
 * shexec_task_run(); what is here is what only a task has. Tasks belong to
 * their session: shexec_session_free() stops and frees the ones the host
 * has not freed. A task made from a foreground command's leftovers has no
 * exit code (-1): those processes were not our children.
 *
 * TASK RETENTION. What a session keeps is bounded by
 * shexec_session_set_max_tasks(): a task holds one slot from its start
 * until it is freed, running or finished, so tasks hold at most max_tasks
 * times what one task keeps (its output, bounded by the output limit),
 * whatever is started and never read.
 *   - A task the host has a pointer to, from shexec_run_start_task() or
 *     shexec_session_take_task(), is the host's. The library never frees it
 *     on its own (only shexec_task_free(), shexec_session_free(), or the
 *     tool layer when a model reads it to completion or kills it): it keeps
 *     its slot until then, and a start past the limit is SHEXEC_ELIMIT.
 *   - A task the host never held is the session's: those started by
 *     shexec_tool_call() and leftovers adopted as tasks that nobody looked
 *     up. When a slot is needed (a task starting, leftovers being adopted)
 *     and none is free, the session's task that finished first is
 *     released, unread. Its id then answers SHEXEC_ENOTASK with `task "ID"
 *     finished and was released unread (retention limit)` (the tool layer:
 *     "Task ID finished and was released unread (retention limit: ...)");
 *     the last 64 released ids are remembered, older ones are just not
 *     found. Running tasks are never released.
 * ------------------------------------------------------------------------ */

/*
 * The task's id: a short random string unique in its session ("t" and 12 hex
 * digits), not guessable from other ids. Owned by the task.
 */
SHEXEC_API const char *shexec_task_id(const shexec_task *t);

/*
 * The task's run: its settings were made there before the start, and its
 * state, exit code, output, input and cancel are read and done there. Owned
 * by the task; valid until the task is freed. NULL only for t NULL.
 */
SHEXEC_API shexec_run *shexec_task_run(const shexec_task *t);

/*
 * Called once when the task finishes: see shexec_task_done_fn. Set it
 * right after the start (callbacks run only when the loop is pumped, so
 * none is missed), or any time before the task finishes.
 * Errors: SHEXEC_EINVAL (t NULL), SHEXEC_ESTATE (the task has finished).
 */
SHEXEC_API int shexec_task_set_done_fn(shexec_task *t, shexec_task_done_fn fn, void *user);

/*
 * Only the output of `stream` that arrived since the previous read (bounded
 * by the same limit, with the notice when more arrived than the limit), and
 * mark it read. Owned by the task; valid until the next read of the same
 * stream or the task is freed (a stdout read leaves the last stderr read
 * valid, and the other way round). All output so far: shexec_run_output(shexec_task_run(t), ...).
 */
SHEXEC_API const char *shexec_task_read(shexec_task *t, int stream, size_t *len);

/*
 * Free a task and its run; a running one is terminated first (SIGTERM,
 * grace, SIGKILL) and reaped, while the callbacks of other commands may
 * run; the task's own callbacks are not called again. NULL is a no-op. From
 * a callback (output or done), a running task is terminated and released
 * once it has ended: see shexec_output_fn.
 */
SHEXEC_API void shexec_task_free(shexec_task *t);

/* ------------------------------------------------------------------------
 * Tools: the shell as tools handed to a model
 *
 * Each session has a registry of three tools, registered but DISABLED until
 * the host enables them:
 *   bash         {command: string (required), timeout: integer ms,
 *                 run_in_background: boolean, cwd: string,
 *                 env: object of strings, pty: boolean}
 *   task_output  {task_id: string (required), new_only: boolean}
 *   task_kill    {task_id: string (required)}
 * Results are JSON objects:
 *   bash:        {"stdout","stderr","exit_code","timed_out",
 *                 "truncated":{"stdout":bool,"stderr":bool},"cwd"} plus
 *                 "signal" when a signal ended the command and
 *                 "leftover_task_id" when it left processes running and
 *                 "notice" when shexec_run_notice() has something to say; on
 *                 timeout exit_code is -1, timed_out true and stderr ends with
 *                 "Command timed out after N ms". With run_in_background:
 *                 {"task_id","status":"running"}.
 *   task_output: {"task_id","status":"running"|"completed","stdout","stderr",
 *                 "truncated":{...}} plus "exit_code" and "state" once
 *                 completed; a completed task is then removed (its final
 *                 output is returned once). Background tasks count against
 *                 the session's task limit until then; finished ones are
 *                 released unread, oldest first, when a new task needs
 *                 room (see TASK RETENTION).
 *   task_kill:   the same, with "status":"killed"; the task is removed.
 *   errors:      {"error": "message for the model"}.
 * Strings are valid UTF-8 JSON: invalid bytes become U+FFFD.
 * `env` takes at most SHEXEC_MAX_ENV_VARS variables (the schema says so
 * with maxProperties); more is SHEXEC_ELIMIT before anything is created.
 * A task the tool layer started or adopted is freed by the tool layer
 * (read to completion, killed, or released for room), unless the host
 * holds it: once the host got a pointer to it from
 * shexec_session_take_task(), a task_output or task_kill that completes it
 * only withdraws its id (it is no longer found, as the model expects) and
 * the host frees it with shexec_task_free(); it still holds its slot
 * until then.
 * ------------------------------------------------------------------------ */

/*
 * Enable (1) or disable (0) a tool by its exposed name. An unknown name is
 * SHEXEC_ENOTOOL, which is also how to ask whether a name exists.
 * Errors: SHEXEC_EINVAL (s NULL), SHEXEC_ENOTOOL (no such tool).
 */
SHEXEC_API int shexec_tool_set_enabled(shexec_session *s, const char *name, int enabled);
/* 1 when a tool is exposed under `name` and enabled, else 0. */
SHEXEC_API int shexec_tool_is_enabled(shexec_session *s, const char *name);
/*
 * Expose a tool under another name (e.g. "bash" as "run_bash"); later calls
 * use the new name. Names are 1-64 of [A-Za-z0-9_-].
 * Errors: SHEXEC_ENOTOOL, SHEXEC_EINVAL (bad or taken name), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_tool_rename(shexec_session *s, const char *name, const char *new_name);

/*
 * The enabled tools as a JSON array of {"name","description","inputSchema"}
 * (JSON Schema, draft 2020-12 compatible), ready for MCP tools/list or an
 * LLM API. *out_json is malloc'd: free it with shexec_free().
 * Errors: SHEXEC_EINVAL, SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_tool_list(char **out_json, shexec_session *s);

/*
 * Call a tool and wait for its result: `args_json` (NUL-terminated JSON
 * object; NULL means {}) is parsed strictly (RFC 8259, bounded depth and
 * size; unknown fields, wrong types, duplicate keys refused). *out_json
 * receives the result, also on most errors ({"error": ...}); free it with
 * shexec_free().
 * Returns SHEXEC_OK when the tool ran (a non-zero exit or a timeout is data),
 * else: SHEXEC_ENOTOOL ("Tool not available: NAME": unknown or disabled),
 * SHEXEC_EINVAL (malformed JSON or arguments), SHEXEC_ENOTASK ("Task not
 * found: ID", or "Task ID finished and was released unread (retention
 * limit: ...)"), SHEXEC_ELIMIT (no task slot, or more than
 * SHEXEC_MAX_ENV_VARS in `env`), SHEXEC_ENOCWD, SHEXEC_ESPAWN, SHEXEC_E2BIG,
 * SHEXEC_ESYS, SHEXEC_ESTATE (from a callback), SHEXEC_ENOMEM (then
 * *out_json may be NULL).
 */
SHEXEC_API int shexec_tool_call(char **out_json, shexec_session *s, const char *name,
                                const char *args_json);

/*
 * The bash tool without waiting, for hosts that run their own loop (an MCP
 * server answering pings while commands run, streaming their output):
 * `name` must be the bash tool's exposed name (enabled), and `args_json`
 * is checked exactly as shexec_tool_call() checks it. *out_run receives a
 * run configured from the arguments (command, timeout, cwd, env, pty) and
 * not started, and *out_background whether run_in_background was asked
 * for. The caller sets what it wants (an output callback), starts it
 * (shexec_run_start(), shexec_run_exec() or shexec_run_start_task()) and
 * owns it. Tasks the caller starts this way are the caller's (see TASK
 * RETENTION). Errors (*out_run NULL; the message for the model is in
 * shexec_session_errmsg()): as shexec_tool_call() before anything runs.
 */
SHEXEC_API int shexec_tool_prepare(shexec_run **out_run, int *out_background,
                                   shexec_session *s, const char *name, const char *args_json);

/*
 * A finished foreground run as the bash tool's JSON result (see above;
 * the session's cwd as it is now). *out_json is malloc'd: free it with
 * shexec_free(). Errors: SHEXEC_EINVAL (run NULL), SHEXEC_ESTATE (not
 * finished), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_tool_result(char **out_json, shexec_run *run);

/* Free a string the library handed out (tool JSON). NULL is a no-op. */
SHEXEC_API void shexec_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* SHEXEC_H */
