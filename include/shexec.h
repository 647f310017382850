/*
 * shexec.h - libshexec: run shell commands for agent hosts, correctly.
 *
 * This header is the manual: every function a host can call is declared and
 * documented here, the main path first. The tool layer (the shell as JSON
 * tools for a model) is in shexec_tool.h. How the library keeps its
 * promises, where that is not API, is told in docs/internals.md.
 *
 * A session (shexec_session) is one persistent "terminal": its working
 * directory follows the commands (a `cd` in one is where the next starts),
 * and it holds the environment policy, the limits and one poll() loop. A
 * run (shexec_run) is one command: create it, execute it, read how it ended
 * and what it wrote. A task (shexec_task) is a run started in the
 * background (see TASKS).
 *
 *     shexec_session *s;
 *     shexec_run *r;
 *     if (shexec_session_new(&s) != SHEXEC_OK) return 1;
 *     shexec_run_new(&r, s, "cd /tmp && ls | head -3");
 *     if (shexec_run_exec(r) == SHEXEC_OK) {
 *         size_t n;
 *         const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
 *         printf("exit %d, %zu bytes: %s", shexec_run_exit_code(r), n, out);
 *     } else {
 *         fprintf(stderr, "shexec: %s\n", shexec_session_errmsg(s));
 *     }
 *     shexec_run_free(r);
 *     printf("cwd is now %s\n", shexec_session_cwd(s));   // "/tmp"
 *     shexec_session_free(s);
 *
 * CONVENTIONS
 *   - A fallible call returns SHEXEC_OK (0) or a negative SHEXEC_E* code;
 *     shexec_strerror() names it, shexec_session_errmsg() has the detail,
 *     until the session's next call that succeeds, which clears it: read
 *     it right after the failure.
 *   - A call that makes or hands over something (shexec_session_new(),
 *     shexec_run_new(), shexec_run_start_task(), shexec_session_take_task(),
 *     shexec_session_environ(), the tool layer's JSON) takes where it goes
 *     first, and sets *out to NULL when it fails; shexec_session_pollfds()
 *     takes the array it fills first too. Every other call takes its handle
 *     first and any out-parameters after it (shexec_run_output(run,
 *     stream, &len)). Every free function accepts NULL.
 *   - Input strings are NUL-terminated UTF-8. Output is bytes with a
 *     length, exactly as the command wrote it (NUL-terminated for
 *     convenience; it may hold NUL bytes and invalid UTF-8).
 *   - No structs cross the API (but POSIX's struct pollfd), no varargs,
 *     fixed-width integers, enum values explicit and append-only: any FFI
 *     can call it without glue.
 *   - A session and what was made from it is used by one thread at a time.
 *   Guarantees (threads, signals, processes, the shell): see GUARANTEES
 *   below the main path.
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
/* The version as one number: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define SHEXEC_VERSION_NUMBER 10000

#if defined(SHEXEC_BUILDING) && defined(__GNUC__) && __GNUC__ >= 4
#define SHEXEC_API __attribute__((visibility("default")))
#else
#define SHEXEC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A shell session: cwd, environment policy, limits, the process loop. */
typedef struct shexec_session shexec_session;
/* One command and its result. */
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
                             number of tasks, too many environment variables, or too
                             much input waits for a command (shexec_run_write()) */
    SHEXEC_ENOTASK = -9,  /* no task has that id */
    SHEXEC_EPIPE = -10,   /* input cannot be written: stdin not enabled, closed, or the process ended */
    SHEXEC_ENOTOOL = -11  /* no tool of that name, or it is not enabled (shexec_tool.h) */
};

/* Output streams. */
enum {
    SHEXEC_STDOUT = 1,
    SHEXEC_STDERR = 2
};

/* How a run stands or ended (shexec_run_state()).
 * Every state after RUNNING is final: state > SHEXEC_STATE_RUNNING means
 * the run has finished and its results no longer change. */
enum {
    SHEXEC_STATE_NEW = 0,       /* created, not started */
    SHEXEC_STATE_RUNNING = 1,   /* started, not finished */
    SHEXEC_STATE_EXITED = 2,    /* the shell exited; see shexec_run_exit_code() */
    SHEXEC_STATE_SIGNALED = 3,  /* the shell was killed by a signal: one from elsewhere, or one
                                   the host sent (shexec_run_send_signal()), not the library's
                                   ending of it (the states below) */
    SHEXEC_STATE_TIMED_OUT = 4, /* the timeout expired; the group was terminated */
    SHEXEC_STATE_CANCELLED = 5, /* shexec_run_cancel() or freeing ended it */
    SHEXEC_STATE_KILLED = 6     /* a task ended by shexec_run_cancel() on its run, or freeing */
};

/* ------------------------------------------------------------------------
 * THE MAIN PATH: run a command, read its result
 * ------------------------------------------------------------------------ */

/* The library's version, "MAJOR.MINOR.PATCH". Static storage. */
SHEXEC_API const char *shexec_version(void);

/* Describe a result code in English ("unknown error" if unknown).
 * Static storage; never NULL. */
SHEXEC_API const char *shexec_strerror(int code);

/*
 * Create a session.
 * Defaults: the host's cwd, /bin/bash (else /bin/sh), the host's environment
 * minus the deny list (see ENVIRONMENT), SHEXEC_DEFAULT_*, a cgroup per
 * command where one can be made (CONTAINMENT: it makes the session's cgroup
 * now). Errors (*out
 * NULL): SHEXEC_EINVAL (out NULL), SHEXEC_ENOMEM, SHEXEC_ENOCWD (no host
 * cwd), SHEXEC_ESYS (no randomness for its tag).
 */
SHEXEC_API int shexec_session_new(shexec_session **out);

/*
 * Free a session, ending every command it still runs.
 * SIGTERM, the kill grace, SIGKILL (see ENDING PROCESSES), all before it
 * returns. Runs not yet freed keep their results and must still be freed.
 * Ignored from a callback. NULL is a no-op.
 */
SHEXEC_API void shexec_session_free(shexec_session *s);

/* The detail of the session's last failed call, or "": a call on the
 * session that succeeds clears it (and one that fails replaces it), so read
 * it right after the failure. Owned by the session; valid until its next
 * call. Never NULL. */
SHEXEC_API const char *shexec_session_errmsg(const shexec_session *s);

/* The session's working directory (absolute), NULL for s NULL.
 * Owned by the session; valid until the cwd changes. */
SHEXEC_API const char *shexec_session_cwd(const shexec_session *s);

/* Create a run of `command` (copied) in session s.
 * Errors (*out NULL): SHEXEC_EINVAL (NULL, empty), SHEXEC_ENOMEM. */
SHEXEC_API int shexec_run_new(shexec_run **out, shexec_session *s, const char *command);

/*
 * Run the command and wait until it ends.
 * SHEXEC_OK means it ran: a non-zero exit, a timeout or a cancel from a
 * callback is data, read from the accessors below. Errors (nothing ran,
 * nothing is left behind): SHEXEC_EINVAL, SHEXEC_ESTATE (already started,
 * session freed, called from a callback, or freed by a callback while it
 * ran: the handle is gone then), SHEXEC_ENOCWD, SHEXEC_ESPAWN, SHEXEC_E2BIG
 * (above SHEXEC_MAX_COMMAND_BYTES, or the environment too long for exec),
 * SHEXEC_ESYS (e.g. EMFILE, EAGAIN), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_run_exec(shexec_run *run);

/* The run's SHEXEC_STATE_* (NEW for NULL).
 * Past SHEXEC_STATE_RUNNING the run has finished. */
SHEXEC_API int shexec_run_state(const shexec_run *run);

/*
 * The shell's exit status (0-255) in state EXITED, else -1.
 * Also -1 when it exited by itself after the library began ending it. When
 * the host took the status (GUARANTEES, SIGNALS): the status the shell
 * reported, or -1.
 */
SHEXEC_API int shexec_run_exit_code(const shexec_run *run);

/*
 * The signal that ended the shell, else 0. After a timeout, cancel or kill
 * that is SIGTERM (15) when the shell died of it, SIGKILL (9) when it
 * outlived the grace, and 0 when it handled SIGTERM and exited by itself
 * (the state still says TIMED_OUT, CANCELLED or KILLED). 0 also when it has
 * not finished, or its status was lost.
 */
SHEXEC_API int shexec_run_signal(const shexec_run *run);

/*
 * The captured output of `stream` (SHEXEC_STDOUT, SHEXEC_STDERR).
 * Bounded by the output limit, with a truncation notice; *len gets its
 * length (len may be NULL). Owned by the run; valid until it is freed or
 * pumped again. "" (length 0) for a bad stream or a NULL run.
 */
SHEXEC_API const char *shexec_run_output(shexec_run *run, int stream, size_t *len);

/* Free a run, ending it first if it still runs (SIGTERM, grace, SIGKILL).
 * NULL and a task's run (free the task) are no-ops. From a callback: see
 * CALLBACKS. */
SHEXEC_API void shexec_run_free(shexec_run *run);

/* ------------------------------------------------------------------------
 * GUARANTEES
 *
 * THE HOST PROCESS. The library creates no threads, installs no signal
 * handlers, never changes a signal disposition or the host's signal mask,
 * never reaps a child it did not start (no waitpid(-1)), reads no
 * environment variable of its own, never writes to stdout or stderr and
 * never aborts on bad input. Every descriptor it creates is close-on-exec.
 * Different sessions may be used by different threads at once.
 *
 * SIGNALS. A host that sets SIGCHLD to SIG_IGN (or SA_NOCLDWAIT), or reaps
 * with waitpid(-1), takes the shell's exit status before the library sees
 * it. Such runs still complete with their output and cwd; they report
 * EXITED with the status the shell's own report gives (or -1 and signal 0
 * when it gave none), or TIMED_OUT, CANCELLED, KILLED when the library
 * ended them. Waitpid(-1) also narrows the pid-reuse guarantee (ENDING
 * PROCESSES) to the moment between a shell's exit and the library seeing
 * it: wait for your own children by pid.
 *
 * THE COMMAND. A command runs as `SHELL -c TEXT` would run it: its text is
 * given to the shell untouched, with the shell's own line numbers, errors,
 * $0 and xtrace. The shell is /bin/bash when executable, else /bin/sh (see
 * shexec_session_set_shell()). Each command leads a session of its own
 * (its own process group, and no controlling terminal: it cannot open the
 * host's /dev/tty; a pty command gets its pty), with stdin from /dev/null,
 * default signal dispositions (on Linux every signal's, reset by the
 * library's own spawn; on the plain POSIX path, where posix_spawn resets
 * them, all but the libc's internal signals, which no signal set can name:
 * glibc leaves its 32 and 33 ignored, musl its 32 to 34; see
 * docs/platforms.md), an empty signal mask, and no descriptor but
 * 0, 1, 2 and its report channel (descriptor 173: a socket for bash, on
 * which only the shell's own messages are heard and, unless the session
 * keeps shell state, no write waits: a command that fills it makes its own
 * report fail; a pipe for a POSIX shell).
 * Its stdout and stderr carry exactly what the command wrote. With
 * containment by cgroup the shell is in its cgroup before it runs any code:
 * the child is born in it (Linux 5.7 on x86-64: clone3's CLONE_INTO_CGROUP),
 * else joins it between fork and exec. The library's own work
 * (reporting the cwd and status, giving back kept state) is a prelude the
 * shell runs before the command (bash reads it from a sealed file, whatever
 * POSIXLY_CORRECT, POSIX_PEDANTIC, SHELLOPTS or BASHOPTS say: those are set
 * by the prelude's last lines, not at bash's start); what that leaves
 * visible to a command (descriptor 173, the library's EXIT trap in `trap
 * -p`, bash running the last command in a child, a command above 128 KiB
 * read from /dev/fd/171) is listed in docs/internals.md, "How a command is
 * run". Commands up to SHEXEC_MAX_COMMAND_BYTES run.
 *
 * BARE RUNS. Where bash or dash runs directly (no wrapper program), the
 * session keeps no bash state to give, the host does not ignore SIGCHLD and the
 * environment gives bash no BASH_ENV or function, a run that needs no
 * report gets none of the above: its shell is started as `SHELL -c CMD`
 * and nothing else (no prelude, no EXIT trap, no descriptor 173), so it
 * runs the command exactly as the plain shell does (bash then execs its
 * last command). A run needs no report when no directory is taken from it (a
 * task, or a run with its own cwd) or when its text cannot move the shell:
 * no `$`, backquote, backslash, unquoted parenthesis, no name such as cd,
 * pushd, popd, source, eval, exec, command, builtin or trap anywhere in it,
 * a pattern (`*`, `?`, `[`, braces) only among a plain command's
 * arguments, and no `.` that could be the dot command (docs/session-model.md,
 * "Bare runs", has the whole rule). `ls -la`, `git status`, `make -j4 &&
 * make check`, `grep -rn "x" .`, `ls *.c` run bare; `cd src && make`
 * reports. Where the session keeps bash variables or functions
 * (shexec_session_set_persist_env()), such a run's bash still gets them
 * in a prelude, with no trap and no descriptor 173 (a foreground run's
 * text must then also set nothing and name no kept function; the rule is
 * in docs/session-model.md), unless the command cannot read them: where
 * the kept state is only variables with a lower-case letter in their
 * names (bash reads none of those by itself) and the text can set
 * nothing, which also means it reads no variable, the run is bare.
 *
 * THE CWD. The shell reports the directory it ends in; the report is
 * untrusted input (the shell can be made to write anything by the command
 * it runs; but each run has its own channel, which cannot be reopened
 * through /proc, and of bash's only what the shell process itself writes
 * is heard, never a process it started, so no earlier command, leftover or
 * other process of the user can forge a run's report). It becomes the
 * session cwd when the shell exited by itself (not a timeout, cancel or
 * signal) and it names an existing directory by an absolute path;
 * otherwise the cwd stays. shexec_run_notice() says why when the report was
 * refused (not absolute, no such directory); after a timeout, cancel, kill
 * or signal the run's state is the reason, and the notice says nothing of
 * the cwd. A command that
 * replaces the EXIT trap, or ends in `exec`, reports nothing; a bare run
 * (above) reports nothing either, and cannot have moved. A session cwd
 * removed since does not lock the session: the command starts in its
 * nearest existing ancestor, and the session moves there.
 *
 * LEFTOVERS. A run completes soon after its shell exits, not when its
 * pipes close: `server &` returns once the server has printed nothing for
 * the drain (100 ms by default; shexec_session_set_leftovers_drain_ms()),
 * with what it printed until then in the run's output, as `bash -c` read
 * to its end has the lines of `echo word &`. Processes still left in the
 * command's group (with containment, in its cgroup) are then adopted as a
 * task of the session (their output keeps being read; see
 * shexec_run_leftovers()), or killed (shexec_session_set_on_leftovers()).
 *
 * ENDING PROCESSES. On a timeout, cancel, kill or free, the command's
 * process group gets SIGTERM and, after the session's kill grace, SIGKILL;
 * the run ends when every process of the group is gone or the grace is
 * over, and the cleanup output of processes that handle SIGTERM is
 * captured. Each process gets SIGTERM once. A child the shell forked just
 * as the SIGTERM came started without it (bash blocks the signal while it
 * forks, because of the wrapper's EXIT trap; plain `bash -c` has no trap
 * and dies in that fork). So, in the grace's first 1.7 s, the shell's
 * children (not in a bare run, whose shell may have become the command:
 * whatever outlives the SIGTERM there handles it, and its children are
 * its cleanup's) (or, once the shell is gone, the command's processes whose
 * parent is no process of the command) born from 30-40 ms before the
 * SIGTERM to the clock tick after its own (/proc counts start times in
 * ticks), on which SIGTERM still takes its default action, get it from the
 * library; a cleanup a handler started is not one of them. A
 * group is signalled only while its id provably belongs to the command,
 * so a reused pid is never hit. Processes that left the group
 * (setsid, `set -m`) but still descend from one of the command's live
 * processes are found through /proc and signalled with it. A process whose
 * parent already exited has passed to init and cannot be traced (a daemon
 * that detaches properly outlives the session), unless the session holds
 * its commands in cgroups (CONTAINMENT, below). Without /proc, escapees
 * cannot be found, and leftovers are adopted only while they hold the
 * command's output pipes (else killed: SHEXEC_LEFTOVERS_KILLED). How:
 * docs/internals.md, "Ending processes".
 *
 * CONTAINMENT. Where the library can make cgroups (a cgroup v2 mount the
 * host may write below its own cgroup: shexec_session_set_containment(),
 * "auto", the default), each command runs in a cgroup v2 of its own,
 * which its shell joins before any of the command runs; elsewhere, or
 * turned off, process groups as above. Membership survives setsid and double forks: the command's
 * processes are its cgroup's members. Signals go to the members (SIGTERM
 * first, then SIGKILL to all at once through cgroup.kill); leftovers are
 * the members left after the shell exits, including daemons that
 * detached; a task lasts while any member does. shexec_run_cost() gives
 * the whole tree's CPU time. The session's cgroups belong to the host's
 * uid, so a command of that uid (or of one a delegated subtree lets write
 * there) can make cgroups below its own, ended and removed with it, and
 * move processes into the session's other cgroups, ended when the session
 * is freed (or by its watchdog, or by the next session when the host
 * died); but also into any cgroup of the host's subtree whose cgroup.procs
 * it may write, such as a sibling of the session's, where the library
 * cannot see them. Against that, contain the session below a parent owned
 * by another uid than the commands' (a delegated subtree), or have the
 * host's supervisor end the host's whole cgroup. A command running as root
 * can do so anywhere: containment bounds accidents, not an attacker
 * (docs/hostile-host.md).
 *
 * WHAT PERSISTS. The working directory. Nothing else by default: variables,
 * functions, `export`s and `set` options last for one command, as with
 * separate `bash -c` calls. shexec_session_setenv() sets variables for
 * every command; shexec_session_set_persist_env() keeps what a command
 * leaves for the next. Aliases and `set` options never persist.
 * ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------
 * SESSION SETTINGS
 *
 * Each setting has a getter; given a NULL session a getter reads the
 * default (shexec_session_cwd() reads NULL). Runs read the settings when
 * they start.
 * ------------------------------------------------------------------------ */

/* Defaults. */
#define SHEXEC_DEFAULT_TIMEOUT_MS 120000u
#define SHEXEC_DEFAULT_MAX_TIMEOUT_MS 600000u
#define SHEXEC_DEFAULT_KILL_GRACE_MS 5000u
#define SHEXEC_DEFAULT_OUTPUT_LIMIT 30000u
#define SHEXEC_DEFAULT_MAX_TASKS 10u
#define SHEXEC_DEFAULT_INPUT_LOOK_MS 2000u
#define SHEXEC_DEFAULT_INPUT_QUEUE_MAX ((uint64_t)1 << 20)  /* 1 MiB a command */

/*
 * Set the session's working directory.
 * The next commands start there. A relative path is taken relative to the
 * current session cwd; the directory must exist. Errors: SHEXEC_EINVAL (s or
 * dir NULL, dir empty), SHEXEC_ENOCWD (missing or not a directory; the cwd
 * is unchanged), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_set_cwd(shexec_session *s, const char *dir);

/*
 * Set the default and the maximum run timeout.
 * In ms; a larger per-run timeout is clamped to max_ms. Errors:
 * SHEXEC_EINVAL (s NULL, either 0, or default_ms > max_ms; nothing changes).
 */
SHEXEC_API int shexec_session_set_timeouts_ms(shexec_session *s, uint32_t default_ms,
                                              uint32_t max_ms);

/*
 * Read the default and the maximum run timeout.
 * In ms, into *default_ms and *max_ms (either may be NULL). Errors:
 * SHEXEC_EINVAL (s NULL; the outputs then get SHEXEC_DEFAULT_TIMEOUT_MS and
 * SHEXEC_DEFAULT_MAX_TIMEOUT_MS).
 */
SHEXEC_API int shexec_session_timeouts_ms(const shexec_session *s, uint32_t *default_ms,
                                          uint32_t *max_ms);

/*
 * Set the kill grace: the time between SIGTERM and SIGKILL.
 * In ms, whenever a command is ended (timeout, cancel, free); 0 sends
 * SIGKILL right after SIGTERM. Errors: SHEXEC_EINVAL (s NULL).
 */
SHEXEC_API int shexec_session_set_kill_grace_ms(shexec_session *s, uint32_t ms);

/* The session's kill grace in ms (SHEXEC_DEFAULT_KILL_GRACE_MS for s NULL). */
SHEXEC_API uint32_t shexec_session_kill_grace_ms(const shexec_session *s);

/* Output limit units and what to keep (shexec_session_set_output_limit()). */
enum {
    SHEXEC_UNIT_CHARS = 0, /* UTF-8 code points; each invalid byte counts as one */
    SHEXEC_UNIT_BYTES = 1
};
enum {
    SHEXEC_KEEP_HEAD = 0,     /* keep the first `limit` units */
    SHEXEC_KEEP_HEAD_TAIL = 1 /* keep the first and the last limit/2 units */
};
/* Or'ed into `keep`: the limit holds the whole text, notice included. */
enum {
    SHEXEC_KEEP_WITHIN_LIMIT = 0x100
};

/*
 * Set how much of each output stream a run keeps (stdout and stderr apart):
 * `limit` in `unit` (SHEXEC_UNIT_*; 0 keeps nothing, output only reaches
 * the callback), `keep` SHEXEC_KEEP_*. A UTF-8 sequence is never split;
 * memory per stream is bounded by the limit. What is left out is counted
 * whatever its size, in characters and in bytes (whichever the unit), the
 * stream's lines too (its newlines, and one more when its last byte is
 * not one; shexec_run_output_lines()), and truncated output carries
 * exactly this notice, after the kept text or, with
 * shexec_session_set_notice_position(), before it:
 *   HEAD:      "[output truncated: kept the first K characters (KB bytes) of
 *               N (NB bytes, L lines); D characters (DB bytes) omitted]"
 *   HEAD_TAIL: "[output truncated: kept the first K1 and the last K2
 *               characters (K1B + K2B bytes) of N (NB bytes, L lines); D
 *               characters (DB bytes) omitted in the middle]"
 * (one line each; "\n" before and after it when last, after it when
 * first; the plural is kept for 1: "1 characters", "1 lines"). With
 * HEAD_TAIL the kept head and tail are also parted by the line
 *   "\n[... D characters (DB bytes) omitted ...]\n".
 * The limit counts the kept text only: notice and marker come on top. With
 * SHEXEC_KEEP_WITHIN_LIMIT or'ed into `keep` it holds them too: a
 * truncated stream's text, marker, notice and their newlines take at most
 * `limit` units together (the notice's own characters or bytes counted as
 * the unit says), the kept text being cut (head and tail sharing what is
 * left as they share the limit) to leave the notice room; K, K1, K2 and D
 * then say what is shown. A limit too small for that notice with no text
 * at all takes "[output truncated]" as the notice and "\n[...]\n" as
 * the marker instead, and one too small even for those keeps text alone.
 * Output within the limit is never cut either way.
 * With a spill directory (shexec_session_set_spill_dir()) the notice ends
 * with "; " and where the whole text is, before its "]":
 *   "full output (NB bytes) in PATH", "the first FB bytes in PATH (XB more
 *   bytes not saved: spill cap)" (with "the process's file-size limit,
 *   RLIMIT_FSIZE, is L bytes" for "spill cap" when that limit cut it),
 *   "full output not saved: the spill failed (REASON)", or "full output
 *   was in PATH, since removed (spill budget)" ("full output so far (FB
 *   bytes) in PATH" while the command runs).
 * Errors: SHEXEC_EINVAL (s NULL, unknown unit, keep or flag, limit above
 * 1 GiB; nothing changes).
 */
SHEXEC_API int shexec_session_set_output_limit(shexec_session *s, uint64_t limit, int unit,
                                               int keep);

/*
 * Read the session's output limit.
 * Into *limit, *unit (SHEXEC_UNIT_*) and *keep (SHEXEC_KEEP_*, with
 * SHEXEC_KEEP_WITHIN_LIMIT when it was set so); any may be NULL. Errors:
 * SHEXEC_EINVAL (s NULL; the outputs then get SHEXEC_DEFAULT_OUTPUT_LIMIT,
 * SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD).
 */
SHEXEC_API int shexec_session_output_limit(const shexec_session *s, uint64_t *limit, int *unit,
                                           int *keep);

/*
 * OUTPUT FOR MODELS. What a model cannot read in full is kept on disk, the
 * notice says exactly what was left out, and secrets can be hidden before
 * output reaches anyone: the output callback, the capture, the spill file,
 * the tool result. Redaction is a safety net, not a boundary: a command
 * that encodes a secret (base64, reversed, split by its own hand) passes it.
 */

/* Where the truncation notice goes (shexec_session_set_notice_position()). */
enum {
    SHEXEC_NOTICE_LAST = 0, /* after the kept text (the default) */
    SHEXEC_NOTICE_FIRST = 1 /* before it: a model reading the start sees it */
};

/* Put the truncation notice first or last (SHEXEC_NOTICE_*) for runs
 * started from now on. Errors: SHEXEC_EINVAL (s NULL, unknown position). */
SHEXEC_API int shexec_session_set_notice_position(shexec_session *s, int where);

/* SHEXEC_NOTICE_FIRST or SHEXEC_NOTICE_LAST (also for s NULL). */
SHEXEC_API int shexec_session_notice_position(const shexec_session *s);

#define SHEXEC_DEFAULT_SPILL_FILE_MAX ((uint64_t)64 << 20)  /* 64 MiB a stream */
#define SHEXEC_DEFAULT_SPILL_TOTAL_MAX ((uint64_t)1 << 30)  /* 1 GiB a session */

/* shexec_session_set_spill_dir() flags. */
enum {
    SHEXEC_SPILL_KEEP_FILES = 1 /* the files stay when the session is freed */
};

/*
 * Keep the whole text of every stream that outgrows its output limit in a
 * file of `dir` (an absolute path to an existing directory; NULL: no more
 * spill files, and those made so far are removed unless kept). The file is
 * made with mode 0600 and O_EXCL, named
 *   DIR/shexec-<host pid>-<run number>-<stdout|stderr>.txt
 * or, when that name is taken (a file another session of the process, or
 * a kept one of an earlier process with the same pid, left there),
 *   DIR/shexec-<host pid>-<run number>-<stdout|stderr>-<N>.txt
 * with N the first of 1 to 15 that is free (none free: the spill fails,
 * EEXIST); shexec_run_spill() and the notice give the name used. It holds what the capture would have held without a limit (after ANSI
 * stripping and redaction), up to `file_max` bytes (0: the default,
 * SHEXEC_DEFAULT_SPILL_FILE_MAX); past that it ends with a line saying how
 * many more bytes were not written. The process's soft file-size limit
 * (RLIMIT_FSIZE, read before each write) caps a file the same way, below
 * the limit, so that no write raises SIGXFSZ in the host: the file is
 * SHEXEC_SPILL_CAPPED with the error EFBIG, and its last line and the
 * notice say so; a limit that leaves no room fails the spill (EFBIG). A
 * stream that stays within its limit leaves no file. The session's files
 * take at most `total_max` bytes (0: SHEXEC_DEFAULT_SPILL_TOTAL_MAX): to
 * make room the oldest files of other streams are removed first; when
 * only the writing stream's own is left, the rest is counted as not
 * written. The files are removed when the session is freed (or the spill
 * turned off) unless `flags` has SHEXEC_SPILL_KEEP_FILES. A write error
 * (ENOSPC, EDQUOT, EIO, ...) removes the file and never changes the
 * command's result: its notice says the spill failed and why. Applies to
 * runs started from now on; a run still going when its directory is turned
 * off or replaced makes no file from then on (one it is writing stops:
 * removed, or kept as it is with SHEXEC_SPILL_KEEP_FILES). Errors:
 * SHEXEC_EINVAL (s NULL, dir not absolute or not a directory, unknown
 * flags, file_max above total_max; nothing changes), SHEXEC_ENOMEM,
 * SHEXEC_ESYS (a dir, in a library built without the output filters,
 * OUTPUT=0: turning the spill off succeeds).
 */
SHEXEC_API int shexec_session_set_spill_dir(shexec_session *s, const char *dir,
                                            uint64_t file_max, uint64_t total_max,
                                            unsigned flags);

/* The spill directory (owned by the session), or NULL when off. */
SHEXEC_API const char *shexec_session_spill_dir(const shexec_session *s);

/* What became of a stream's spill file (shexec_run_spill()). */
enum {
    SHEXEC_SPILL_NONE = 0,    /* no spill: off, or the stream stayed within its limit */
    SHEXEC_SPILL_WRITING = 1, /* the command runs: the file is being written */
    SHEXEC_SPILL_WHOLE = 2,   /* the file holds the whole stream */
    SHEXEC_SPILL_CAPPED = 3,  /* the file holds its first *bytes bytes (a cap, or RLIMIT_FSIZE) */
    SHEXEC_SPILL_FAILED = 4,  /* making or writing it failed (*error); it is removed */
    SHEXEC_SPILL_REMOVED = 5  /* removed since (the session's budget, or its end) */
};

/*
 * A stream's spill: returns SHEXEC_SPILL_*; *path (owned by the run, valid
 * while it lives; NULL for NONE and FAILED), *bytes (the stream's bytes in
 * the file; a CAPPED file's closing line is not counted) and
 * *error (an errno value for FAILED; EFBIG for CAPPED when the file-size
 * limit cut the file, not its cap; else 0); any may be NULL. NONE for
 * run NULL, a run not started or an unknown stream.
 */
SHEXEC_API int shexec_run_spill(const shexec_run *run, int stream, const char **path,
                                uint64_t *bytes, int *error);

/*
 * Hide `value` (len bytes, 4 to 65536; copied) from the output of runs
 * started from now on: every occurrence becomes "[REDACTED:NAME]" (`name`:
 * 1 to 64 letters, digits or '_'), also where the command's writes, the
 * pipe's reads or the output's chunks split it. Where secrets overlap, the
 * occurrence that starts first wins, and of those the longest. All values
 * are looked for in one pass (a multi-pattern automaton, built when a run
 * starts after a change): the cost per byte does not grow with their
 * number. Output is held back at most the longest value's length less one
 * byte while it could still be a secret's start; the end of the stream
 * lets it go, unless leftovers adopted as a task read on from the same
 * pipe: then what was held back goes on to the task, so a secret the
 * command began and its leftovers end is hidden there. Errors: SHEXEC_EINVAL (s NULL, bad name, value NULL or its
 * length out of bounds), SHEXEC_ELIMIT (100000 values), SHEXEC_ENOMEM,
 * SHEXEC_ESYS (a library built without the output filters, OUTPUT=0:
 * every call that asks for redaction or a spill fails so, saying why, and
 * every call that turns one off succeeds).
 */
SHEXEC_API int shexec_session_redact_value(shexec_session *s, const char *name,
                                           const void *value, size_t len);

/*
 * Also hide the values (of at least 8 bytes) of the environment's variables
 * whose names match one of `globs` ('*' and '?', case ignored), each under
 * its variable's name: the host's environment (when inherited) with the
 * session's variables, read when each run starts (a variable the deny list
 * keeps from commands is hidden too: a command may read it elsewhere).
 * `globs` NULL: the defaults, *KEY* *SECRET* *TOKEN* *PASSWORD*
 * *CREDENTIAL*; n 0 with globs non-NULL: off (the default). Errors:
 * SHEXEC_EINVAL (s NULL, an empty or NULL glob), SHEXEC_ENOMEM, SHEXEC_ESYS
 * (globs to take, OUTPUT=0).
 */
SHEXEC_API int shexec_session_redact_env(shexec_session *s, const char *const *globs, size_t n);

/* Shapes of secrets found without knowing their value
 * (shexec_session_redact_shapes()). */
enum {
    /* a word (letters, digits, '_', '-') that starts with a key prefix and
     * is long enough to be a key: github_pat_ and ghp_/gho_/ghu_/ghs_/ghr_
     * as GITHUB_TOKEN, sk-ant- as ANTHROPIC_API_KEY, sk- as OPENAI_API_KEY,
     * AKIA as AWS_ACCESS_KEY_ID, xoxa-/xoxb-/xoxp- as SLACK_TOKEN. Escape
     * sequences right before or after it are no part of the word: a key
     * in colour (grep --color=always) is found, its codes kept */
    SHEXEC_REDACT_KEY_SHAPES = 1,
    /* a PEM private-key block wherever it stands (at a line's start,
     * indented, inside a line with its breaks written out as \n in a JSON
     * string or turned into spaces): from "-----BEGIN <label>-----", the
     * label ending in PRIVATE KEY and a key's body (a base64 digit after
     * white space and written-out breaks) following, to the
     * "-----END <label>-----" of the same label, as PRIVATE_KEY; the text
     * before and after it is kept (no END: the rest is hidden). A boundary
     * only named in code or prose hides nothing */
    SHEXEC_REDACT_PRIVATE_KEYS = 2
};

/* Hide these shapes (SHEXEC_REDACT_* or'ed; 0: none, the default) from runs
 * started from now on. Errors: SHEXEC_EINVAL (s NULL, unknown bits),
 * SHEXEC_ESYS (a shape, OUTPUT=0). */
SHEXEC_API int shexec_session_redact_shapes(shexec_session *s, unsigned which);

/* Forget every redaction the session was given (values, globs, shapes).
 * Errors: SHEXEC_EINVAL (s NULL). */
SHEXEC_API int shexec_session_redact_clear(shexec_session *s);

/* Hide `value` from this run's output too (as shexec_session_redact_value()).
 * Errors: as shexec_session_redact_value(), SHEXEC_ESTATE (started). */
SHEXEC_API int shexec_run_redact_value(shexec_run *run, const char *name, const void *value,
                                       size_t len);

/* With `on`, the run's own variables (shexec_run_setenv()) are looked at
 * as the session's are: the values of those matching the session's globs,
 * or the default globs when the session has none, are hidden from this
 * run's output. Errors: SHEXEC_EINVAL (run NULL), SHEXEC_ESTATE (started),
 * SHEXEC_ESYS (on, OUTPUT=0). */
SHEXEC_API int shexec_run_redact_own_env(shexec_run *run, int on);

/* How many occurrences were hidden in a stream so far (0 for run NULL or an
 * unknown stream); a leftovers task's run counts those hidden in its own
 * output, one that straddled the adoption included. */
SHEXEC_API uint64_t shexec_run_redactions(const shexec_run *run, int stream);

/*
 * ENVIRONMENT. A command's environment is built in this order:
 *   1. the base: the host's environment (inherit, the default) or nothing;
 *   2. the session's overrides (shexec_session_setenv());
 *   3. the run's overrides (shexec_run_setenv());
 *   4. the deny list: every variable whose name matches a deny glob and no
 *      allow glob is removed, whatever step added it.
 * The default deny list: LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH, DYLD_*,
 * BASH_ENV, ENV, BASH_FUNC_*, SHELLOPTS, BASHOPTS, PROMPT_COMMAND, IFS,
 * CDPATH, GLOBIGNORE. Globs are fnmatch(3) patterns on the name. The
 * host's environ is never modified; it is read as each command starts.
 * Building an environment is linear in its size for literal (NAME) and
 * prefix (NAME_*) globs; other globs are tried one by one per variable.
 * A command whose run sets no variable is given the environment the
 * session kept from the last such command while nothing it is built from
 * changed: the session's settings, and the host's environ, compared by
 * content with a copy (so the host's setenv and putenv are seen).
 */

/*
 * The most variables one override list holds.
 * Counted in distinct names, per list: the session's
 * (shexec_session_setenv()) and each run's (shexec_run_setenv(), the bash
 * tool's `env`). One more new name is SHEXEC_ELIMIT; replacing or removing a
 * name always works. The inherited environment is not counted.
 */
#define SHEXEC_MAX_ENV_VARS 4096u

/*
 * Set whether commands start from the host's environment.
 * Non-zero (the default): from the host's; 0: from an empty one. Errors:
 * SHEXEC_EINVAL (s NULL).
 */
SHEXEC_API int shexec_session_set_env_inherit(shexec_session *s, int inherit);

/*
 * Whether commands start from the host's environment.
 * 1 when commands start from the host's environment (the default, also for s
 * NULL), 0 when from an empty one.
 */
SHEXEC_API int shexec_session_env_inherit(const shexec_session *s);

/*
 * Set or remove a variable for every later command.
 * Set `name` to `value` for every later command; value NULL removes the
 * variable (also an inherited one). Names are non-empty, without '='. Errors
 * (nothing changes): SHEXEC_EINVAL (s NULL, bad name), SHEXEC_ELIMIT (a new
 * name past SHEXEC_MAX_ENV_VARS), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_setenv(shexec_session *s, const char *name, const char *value);

/*
 * Deny or allow variables by name glob.
 * Add a glob to the deny list (matching variables are removed) or to the
 * allow list (matching variables are kept even if denied, e.g.
 * "LD_LIBRARY_PATH"). Errors: SHEXEC_EINVAL (s NULL, glob NULL or empty),
 * SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_env_deny(shexec_session *s, const char *glob);
SHEXEC_API int shexec_session_env_allow(shexec_session *s, const char *glob);

/*
 * Read a variable of the next command's environment.
 * The value of `name` in the environment the next command starts with
 * (before its run's own variables; PWD is not listed), or NULL when unset.
 * With shexec_session_set_persist_env() it is what the last command left.
 * The value may hold any byte but NUL. Owned by the session; valid until the
 * next getenv or environ call on it. NULL also on error, with the errmsg
 * set: s NULL, an invalid name (NULL, empty, with '='), no memory.
 */
SHEXEC_API const char *shexec_session_getenv(shexec_session *s, const char *name);

/*
 * Read the next command's whole environment.
 * That whole environment: *out receives a NULL-terminated array of
 * "NAME=VALUE" strings in the order the command gets them. Owned by the
 * session; valid until the next getenv or environ call on it. Errors (*out
 * NULL): SHEXEC_EINVAL (a NULL argument), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_environ(const char *const **out, shexec_session *s);

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
 * Set the program that runs each command, and what it carries, in one call.
 * `argv` is the program and its leading arguments (NULL-terminated, copied);
 * the library appends "-c", the command and $0 (the last element's base
 * name). {"/bin/dash", NULL} makes dash the shell; {"docker", "exec", "-i",
 * "ctr", "bash", NULL} runs every command through that wrapper; NULL
 * restores the default (/bin/bash when executable, else /bin/sh). The shell
 * must be POSIX (bash, dash, ash, ksh, zsh in sh mode). argv[0] is resolved
 * now, once, as the host's execvp() would (PATH at this call,
 * "/usr/bin:/bin" without one; a relative path against the host's cwd): no
 * run's environment or cwd can change which program runs.
 *
 * `wrapper_kind` is SHEXEC_WRAPPER_LOCAL (no wrapper, or one that passes
 * descriptors: bwrap, unshare, nsenter, env) or, for one that carries only
 * stdin, stdout and stderr, SHEXEC_WRAPPER_REMOTE (docker exec -i ctr sh,
 * kubectl exec -i pod -- sh) or SHEXEC_WRAPPER_REMOTE_SHELL (ssh host sh:
 * the library single-quotes what it adds). Through a remote wrapper the
 * report comes in-band at the end of stdout and is removed from it; the
 * session cwd names a directory on the other side (only made absolute by
 * shexec_session_set_cwd() and shexec_run_set_cwd(); one missing there is
 * replaced by its nearest existing ancestor, with a line on stderr); the
 * exit code is the wrapper's; commands are bounded by the remote exec limit
 * (see SHEXEC_MAX_COMMAND_BYTES); a timeout ends the remote command only if
 * the wrapper passes the hangup on (`ssh -tt`, `docker exec -it`). Switching
 * between LOCAL and a remote kind resets the session cwd: to "" (the remote
 * shell's starting directory, until a command reports one), or back to the
 * host's current directory.
 *
 * A wrapper gets the session's environment (base, overrides, deny list); the
 * run's own variables never reach it: they travel in the run's channel
 * (locally: a POSIX shell behind a local wrapper reads /dev/fd/173, so the
 * wrapper must give it /proc; without /dev/fd such a run fails with
 * SHEXEC_ESTATE), or as "NAME=VALUE" arguments through a remote wrapper,
 * whose names must be shell identifiers (else the run fails with
 * SHEXEC_EINVAL). A new program drops the shell variables and functions kept
 * by shexec_session_set_persist_env() (the environment stays). More:
 * docs/internals.md, "Wrappers".
 *
 * Atomic: on any error nothing changes (program, kind, cwd). Errors:
 * SHEXEC_EINVAL (s NULL, argv[0] NULL or empty, unknown kind), SHEXEC_ESPAWN
 * (a name not found in the host's PATH), SHEXEC_ESYS (a relative path while
 * the host's cwd cannot be read), SHEXEC_ESTATE (a remote kind while
 * shexec_session_set_persist_env() is on), SHEXEC_ENOCWD (back to LOCAL
 * while the host's cwd cannot be read), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_set_shell(shexec_session *s, const char *const *argv,
                                        int wrapper_kind);

/*
 * Read the program set with shexec_session_set_shell().
 * The argv last given to shexec_session_set_shell() (NULL-terminated), or
 * NULL for the default shell (and for s NULL). Owned by the session; valid
 * until the shell is set again or the session is freed.
 */
SHEXEC_API const char *const *shexec_session_shell_argv(const shexec_session *s);

/*
 * Read the session's wrapper kind.
 * The session's SHEXEC_WRAPPER_* kind (SHEXEC_WRAPPER_LOCAL, the default,
 * also for s NULL).
 */
SHEXEC_API int shexec_session_wrapper_kind(const shexec_session *s);

/*
 * The largest shell state a session keeps.
 * The most a command's shell state may come to under
 * shexec_session_set_persist_env(), in bytes: 1 MiB for its listing of
 * variables and its functions' text together. A command that leaves more
 * changes nothing of the session's state, and shexec_run_notice() says so.
 */
#define SHEXEC_MAX_PERSIST_BYTES (1u << 20)

/*
 * Keep the shell's state from one command to the next.
 * On (non-zero) or off (0, the default; turning it off forgets what was
 * kept). When a foreground run ends by itself (state EXITED), the exported
 * environment its shell left becomes the session's (new, changed and unset
 * variables; so `export`, `source .venv/bin/activate` and `deactivate` work
 * across commands), and with bash also its shell variables and functions,
 * given back to later commands silently. The state is parsed, never replayed
 * as text, and nothing kept is put on a command line. The shell lists its
 * state after a command that could change it; one whose text can set
 * nothing and names no kept function (`ls`, `git status`: see BARE RUNS)
 * is given the state and not listed (nor given it, where it can read none
 * of it); after a deny or allow rule or a
 * shexec_session_setenv(), the next foreground bash that is given kept
 * variables or functions lists (so the rule reaches what is kept).
 *
 * Never kept: what the deny list removes; the library's own names
 * (__shexec*); functions named like a builtin or keyword, or with unusual
 * characters, or above 120 KiB; PWD (always the session cwd), SHLVL and _;
 * the variables bash keeps itself; readonly unexported variables; aliases
 * and `set` options. What is dropped is named in shexec_run_notice(). A
 * timed-out, cancelled or signalled run, a command that ends in `exec` or
 * replaces the EXIT trap, and a state above SHEXEC_MAX_PERSIST_BYTES change
 * nothing; tasks start with the session's state and never change it. A run's
 * own variables (shexec_run_setenv()) are given back their session value
 * afterwards unless the command changed them. Once a run reported its
 * environment, it replaces the base and the overrides (the host's
 * environment is not read again) and a later shexec_session_setenv() changes
 * it directly. Read it with shexec_session_getenv() and
 * shexec_session_environ(). The full rules: docs/internals.md, "What
 * persists".
 *
 * Errors: SHEXEC_EINVAL (s NULL), SHEXEC_ESTATE (on with a remote wrapper
 * kind, which reports only the directory; nothing changes), SHEXEC_ESYS (on
 * in a library built without it, PERSIST=0), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_set_persist_env(shexec_session *s, int on);

/* 1 when the session keeps the shell's state, else 0 (also for s NULL). */
SHEXEC_API int shexec_session_persist_env(const shexec_session *s);

/*
 * Set how many tasks the session holds at once.
 * The default is 10. A task holds a slot from its start until it is freed,
 * running or finished; adopted leftovers count. Lowering it frees nothing at
 * once (see TASKS, retention). Errors: SHEXEC_EINVAL (s NULL).
 */
SHEXEC_API int shexec_session_set_max_tasks(shexec_session *s, uint32_t max);

/*
 * Read how many tasks the session holds at once.
 * How many tasks the session holds at once (SHEXEC_DEFAULT_MAX_TASKS for s
 * NULL).
 */
SHEXEC_API uint32_t shexec_session_max_tasks(const shexec_session *s);

/* Policy: what to do with leftovers (shexec_session_set_on_leftovers()). */
enum {
    SHEXEC_ON_LEFTOVERS_ADOPT = 0, /* default: adopt them as a task */
    SHEXEC_ON_LEFTOVERS_KILL = 1   /* SIGKILL the command's process group (and the processes
                                      that left it from inside it) when its shell exits */
};

/*
 * Set what happens to processes a command leaves running.
 * Set what happens to processes a foreground command leaves running in its
 * group once its shell exits: SHEXEC_ON_LEFTOVERS_ADOPT (the default: they
 * become a task whose output keeps being read, so a logging server is not
 * killed by a broken pipe) or SHEXEC_ON_LEFTOVERS_KILL. With no task slot
 * free and none to be made (see TASKS, retention) they are killed either
 * way; the outcome is shexec_run_leftovers(). Errors: SHEXEC_EINVAL (s NULL,
 * unknown policy; nothing changes).
 */
SHEXEC_API int shexec_session_set_on_leftovers(shexec_session *s, int policy);

/*
 * Read the session's leftovers policy.
 * The session's SHEXEC_ON_LEFTOVERS_* policy (SHEXEC_ON_LEFTOVERS_ADOPT, the
 * default, for s NULL).
 */
SHEXEC_API int shexec_session_on_leftovers(const shexec_session *s);

/* The default and the largest drain of leftovers' output, in ms
 * (shexec_session_set_leftovers_drain_ms()). */
#define SHEXEC_DEFAULT_LEFTOVERS_DRAIN_MS 100u
#define SHEXEC_MAX_LEFTOVERS_DRAIN_MS 2000u

/*
 * Set how long the output of what a command left running is read as the
 * command's own.
 * When a foreground command's shell exits while processes it started still
 * run (`echo word &`, `seq 3 > >(tac)`, `server &`), the run goes on
 * reading its output until they have all exited, or have printed nothing
 * for `ms`; in all, at most 10 * ms after the shell's exit. What they
 * printed meanwhile is the run's output, as `bash -c` read to the end of
 * its output has it; what still runs then goes to the leftovers policy
 * (shexec_session_set_on_leftovers()). So `sleep 30 &` returns `ms` after
 * the shell's exit, and `server &` about `ms` after the server's first
 * lines, with those lines in the run's output. While it drains, the run's
 * timeout, idle timeout and yield no longer apply (its shell is gone); its
 * state and exit code are the shell's. 0: the run ends at the shell's exit
 * (a process that is just exiting then may be adopted). A task's leftovers
 * are followed to their end as before. Errors: SHEXEC_EINVAL (s NULL, ms
 * above SHEXEC_MAX_LEFTOVERS_DRAIN_MS; nothing changes).
 */
SHEXEC_API int shexec_session_set_leftovers_drain_ms(shexec_session *s, uint32_t ms);

/* The session's drain of leftovers' output in ms
 * (SHEXEC_DEFAULT_LEFTOVERS_DRAIN_MS for s NULL). */
SHEXEC_API uint32_t shexec_session_leftovers_drain_ms(const shexec_session *s);

/* How a session holds its commands' processes (shexec_session_containment()). */
enum {
    SHEXEC_CONTAIN_GROUP = 0, /* a process group each, and the processes found leaving it */
    SHEXEC_CONTAIN_CGROUP = 1 /* a cgroup v2 each (ENDING PROCESSES, CONTAINMENT) */
};

/*
 * Hold each command's processes in a cgroup v2 of its own.
 * parent names where: "auto" (a child of the cgroup the host runs in, found
 * through /proc/self/cgroup and the cgroup2 mount: whatever the host's
 * supervisor set on that cgroup still applies), an absolute path of a
 * cgroup2 directory the host may write, or NULL, "" or "off" (process
 * groups only). A new session is "auto". The session makes one cgroup there
 * (shexec-PID-N) and one below it per command, removed when the command's
 * processes are gone, with any cgroups the command made below its own; the
 * session's free kills what is left anywhere in the session's cgroup and
 * below it, and removes them all; the cgroups of a host that died (its pid
 * gone) are ended the same way when the next session is contained beside
 * them. With "auto" where no cgroup can be made (no cgroup2 mount,
 * read-only, no permission, a kernel before 5.2), the session keeps
 * process groups and shexec_session_containment() says why: that is
 * SHEXEC_OK.
 * Errors: SHEXEC_EINVAL (s NULL, or parent none of the above),
 * SHEXEC_ESTATE (commands run: runs, tasks or adopted leftovers; or from a
 * callback), SHEXEC_ESYS (a named parent where no cgroup can be made: the
 * message says why; the setting is unchanged).
 */
SHEXEC_API int shexec_session_set_containment(shexec_session *s, const char *parent);

/*
 * How the session holds its commands' processes.
 * SHEXEC_CONTAIN_CGROUP or SHEXEC_CONTAIN_GROUP. When detail is not NULL,
 * *detail receives the session's cgroup directory (CGROUP), or why not
 * ("turned off", "no cgroup2 mount", "the cgroup2 mount is
 * read-only", ...); owned by the session, valid until the setting changes.
 */
SHEXEC_API int shexec_session_containment(const shexec_session *s, const char **detail);

/* What a limit bounds (shexec_session_set_limit(), shexec_run_set_limit()). */
enum {
    SHEXEC_LIMIT_MEMORY = 0, /* bytes of memory of the command's processes together (memory.max) */
    SHEXEC_LIMIT_SWAP = 1,   /* bytes of swap they may use besides (memory.swap.max) */
    SHEXEC_LIMIT_PIDS = 2,   /* processes and threads at once (pids.max): a fork bomb's end */
    SHEXEC_LIMIT_CPU = 3     /* CPU time per wall time, in thousandths of one CPU (cpu.max:
                                500 = half a CPU, 2000 = two) */
};
/* How many SHEXEC_LIMIT_* there are. */
#define SHEXEC_LIMITS 4

/*
 * Bound every command of the session: limit (SHEXEC_LIMIT_*) to value, 0
 * for none (the default). Needs containment by cgroup (a command's limits
 * are its cgroup's) and the limit's controller (memory, pids, cpu) for the
 * session's cgroups: in cgroup v2 where the parent cgroup enables it for
 * its children, else (hybrid machines, whose controllers sit in cgroup v1
 * hierarchies) in the v1 hierarchy of that controller, in a cgroup below
 * the host's own there. A command that a limit stopped says so
 * (shexec_run_limit_hit(), and its notice). On cgroup v1, SHEXEC_LIMIT_SWAP
 * needs SHEXEC_LIMIT_MEMORY too (it bounds memory and swap together).
 * Errors: SHEXEC_EINVAL (s NULL, an unknown limit, a CPU limit below 10
 * or a memory limit below 1 MiB: the command could not start), SHEXEC_ESTATE
 * (containment is not by cgroup: shexec_session_set_containment()),
 * SHEXEC_ESYS (the controller is not available here: the message says why;
 * nothing is set, never silently ignored).
 */
SHEXEC_API int shexec_session_set_limit(shexec_session *s, int limit, uint64_t value);

/* The session's limit (SHEXEC_LIMIT_*): its value, 0 for none (s NULL, an
 * unknown limit). */
SHEXEC_API uint64_t shexec_session_limit(const shexec_session *s, int limit);

/*
 * End the session's commands if the host dies (a watchdog).
 * Set whether the session's commands are ended when the host dies without
 * freeing it (SIGKILL, an OOM kill, a crash, exit() past
 * shexec_session_free()). Off (0, the default): they keep running,
 * reparented to init. On (non-zero): a watchdog process, forked from the
 * host now (async-signal-safe code only, so any host may do it), ends them
 * as a timeout would: SIGTERM (and SIGCONT) to every process of every run,
 * task and adopted leftover, SIGKILL after the kill grace, including those
 * that left their group, and never a process whose pid was reused. It never
 * signals the host's own children, is out of reach of the terminal's
 * signals, and exits without signalling when the setting is turned off or
 * the session freed. Without /proc it can prove nothing once the host is
 * gone: it signals the groups at once, without a grace, and escapees keep
 * running. Cost: one fork of the host, and one small write per command. How:
 * docs/internals.md, "The watchdog". Errors: SHEXEC_EINVAL (s NULL),
 * SHEXEC_ENOMEM (its tables cannot be mapped), SHEXEC_ESYS (no channel or no
 * fork, or a library built without the watchdog, WATCHDOG=0: the setting
 * stays off). Turning it off, or on again, is always SHEXEC_OK.
 */
SHEXEC_API int shexec_session_set_watchdog(shexec_session *s, int on);

/*
 * Whether the session's watchdog is in place.
 * 1 while the session's watchdog is on and in place, else 0: off (the
 * default), s NULL, or a watchdog found gone (killed from outside, or its
 * channel closed by the host).
 */
SHEXEC_API int shexec_session_watchdog(const shexec_session *s);

/* ------------------------------------------------------------------------
 * RUN CONFIGURATION: before the start
 * ------------------------------------------------------------------------ */

/*
 * The largest command a run takes.
 * 16 MiB; a larger one fails to start with SHEXEC_E2BIG. Through a remote
 * wrapper the command travels as one argument, so there the bound is 120 KiB
 * for the command, the prelude and the run's variables together.
 */
#define SHEXEC_MAX_COMMAND_BYTES (16u << 20)

/*
 * Create a run from a command given with its length.
 * For FFI strings that are not NUL-terminated; otherwise as
 * shexec_run_new(). A command holding a NUL byte is SHEXEC_EINVAL: it could
 * not reach the shell intact.
 */
SHEXEC_API int shexec_run_new_bytes(shexec_run **out, shexec_session *s, const char *command,
                                    size_t len);

/*
 * Set this run's timeout.
 * In ms. Unset, a foreground run has the session's default and a task none.
 * A foreground run's timeout is clamped to the session maximum; a task's is
 * not. shexec_run_timeout_ms() tells the one in force. Errors: SHEXEC_EINVAL
 * (run NULL or ms 0), SHEXEC_ESTATE (already started).
 */
SHEXEC_API int shexec_run_set_timeout_ms(shexec_run *run, uint32_t ms);

/*
 * Bound this run: limit (SHEXEC_LIMIT_*) to value in place of the
 * session's (0: none for this run). Checked when the run starts, as
 * shexec_session_set_limit() checks it. Errors: SHEXEC_EINVAL (run NULL,
 * an unknown limit, a value too small), SHEXEC_ESTATE (started already).
 */
SHEXEC_API int shexec_run_set_limit(shexec_run *run, int limit, uint64_t value);

/*
 * Run in another directory than the session cwd.
 * A relative `dir` is taken relative to the session cwd. Such a run does not
 * move the session cwd. The directory is checked at the start (SHEXEC_ENOCWD
 * then). Errors: SHEXEC_EINVAL (NULL or empty), SHEXEC_ESTATE (already
 * started), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_run_set_cwd(shexec_run *run, const char *dir);

/*
 * Set or remove a variable for this run only.
 * value NULL removes it. Applied after the session's overrides and before
 * the deny list. Errors: SHEXEC_EINVAL (run NULL, bad name), SHEXEC_ESTATE
 * (already started), SHEXEC_ELIMIT (a new name past SHEXEC_MAX_ENV_VARS;
 * nothing changes), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_run_setenv(shexec_run *run, const char *name, const char *value);

/*
 * Set this run's output limit.
 * It overrides the session's; arguments and notice as for
 * shexec_session_set_output_limit(). Errors: SHEXEC_EINVAL, SHEXEC_ESTATE
 * (already started).
 */
SHEXEC_API int shexec_run_set_output_limit(shexec_run *run, uint64_t limit, int unit, int keep);

/*
 * The output callback, and what callbacks may do.
 * CALLBACKS. An output callback gets each chunk of output as the command
 * produces it: `stream` is SHEXEC_STDOUT or SHEXEC_STDERR, `data` is valid
 * only during the call and not NUL-terminated. A stream's chunks together
 * are its complete output, in order: the same bytes as its captured output
 * before truncation (a remote wrapper's in-band report never appears).
 *
 * Callbacks are called only from inside the session's loop: from
 * shexec_run_exec(), shexec_session_wait(), shexec_session_process(),
 * shexec_tool_call(), and the calls that wait for a command to end
 * (shexec_run_free(), shexec_task_free() of a running task,
 * shexec_session_free()); never from inside another callback of the session,
 * never by a call that reads output.
 *
 * A callback may call, on the session and any of its runs and tasks (its own
 * included): every accessor (state, exit code, output, totals,
 * shexec_task_read(), shexec_session_take_task(), cwd, errmsg);
 * shexec_run_cancel(), shexec_run_send_signal(), shexec_run_write(),
 * shexec_run_type_input(), shexec_run_close_stdin();
 * shexec_run_free() and shexec_task_free() (a running one is ended, none of
 * its callbacks is called again, and its memory goes once it ended; a run
 * freed during its own shexec_run_exec() makes that call return
 * SHEXEC_ESTATE); creating and configuring runs; changing settings; the tool
 * registry calls but shexec_tool_call(). Refused with SHEXEC_ESTATE:
 * starting or waiting for the session's commands (shexec_run_exec(),
 * shexec_run_start(), shexec_run_start_task(), shexec_session_wait(),
 * shexec_session_pollfds(), shexec_session_process(), shexec_tool_call());
 * shexec_session_free() is ignored. Other sessions are not affected.
 *
 * With SHEXEC_ANSI_STRIP, a read of a running command's output pushes out a
 * pending partial line (a prompt): it is captured at once and handed to the
 * callback in its place in the stream, right after the current callback
 * returns or in the loop's next round.
 */
typedef void (*shexec_output_fn)(void *user, int stream, const char *data, size_t len);

/*
 * Set the run's output callback.
 * NULL removes it; `user` is passed back. It may be set while the run runs
 * and gets the output read from then on (a start reads nothing, so one set
 * right after the start misses nothing). Errors: SHEXEC_EINVAL (run NULL),
 * SHEXEC_ESTATE (the run has finished).
 */
SHEXEC_API int shexec_run_set_output_fn(shexec_run *run, shexec_output_fn fn, void *user);

/*
 * Give the command a stdin pipe to write to.
 * enable non-zero: a pipe instead of /dev/null, fed with shexec_run_write().
 * Errors: SHEXEC_EINVAL, SHEXEC_ESTATE.
 */
SHEXEC_API int shexec_run_set_stdin(shexec_run *run, int enable);

/*
 * Write to the running command's stdin.
 * The `len` bytes are copied and queued, and written as the command reads
 * them while the loop is pumped; this call never blocks and never raises
 * SIGPIPE in the host. The queue is bounded
 * (shexec_session_set_input_queue_max()): a write is taken whole or not at
 * all, and refused while input the command has not read yet is queued and
 * this write would take it past the bound (a write into an empty queue is
 * always taken, whatever its size). Nothing of a refused write is queued:
 * pump the loop (the command reads) and write the same bytes again.
 * Errors: SHEXEC_EINVAL, SHEXEC_EPIPE (stdin not enabled or closed, or the
 * process ended), SHEXEC_ELIMIT (the bound: the message says how much is
 * queued), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_run_write(shexec_run *run, const void *data, size_t len);

/*
 * Bound the input queued for each command of the session and not yet read
 * by it, in bytes: at least 1; SHEXEC_DEFAULT_INPUT_QUEUE_MAX, 1 MiB, by
 * default (far more than answers to prompts; a command that reads keeps
 * its queue near empty, its pipe taking what is written); UINT64_MAX: none.
 * A command that never reads then holds at most the bound of the host's
 * memory, or the one larger write made into its empty queue. Read at each
 * shexec_run_write(), so it applies to running commands too. Errors:
 * SHEXEC_EINVAL (s NULL, bytes 0; nothing changes).
 */
SHEXEC_API int shexec_session_set_input_queue_max(shexec_session *s, uint64_t bytes);

/* The session's bound on queued input (SHEXEC_DEFAULT_INPUT_QUEUE_MAX for s
 * NULL). */
SHEXEC_API uint64_t shexec_session_input_queue_max(const shexec_session *s);

/*
 * Close the command's stdin.
 * Once the queued bytes are written; the command then reads EOF. Errors:
 * SHEXEC_EINVAL, SHEXEC_EPIPE (stdin not enabled).
 */
SHEXEC_API int shexec_run_close_stdin(shexec_run *run);

/*
 * Type input at the command, as a person at a terminal would: what a model
 * writes. On a pseudo-terminal (shexec_run_set_pty()) as
 * shexec_run_write(): the terminal makes "\x03" (^C) a SIGINT itself. On a
 * pipe, which has no such line discipline, and on a pseudo-terminal that
 * is nobody's controlling terminal (see shexec_run_set_pty(); while its
 * program does not read raw keys), each "\x03" byte is the ^C key,
 * not input: the command is sent SIGINT in its place
 * (shexec_run_send_signal(); shexec_run_interrupted() then says so), the
 * text before it queued first and the text after it next (a command that
 * has not read the text yet gets the signal before it). Input that is
 * only ^C keys needs no stdin. The text, without its ^C bytes, is held to
 * the bound on queued input as one write, before any signal: a refused
 * call changed nothing. Errors: SHEXEC_EINVAL (run NULL, data NULL with a
 * length), SHEXEC_EPIPE (text for a command without stdin, or one that is
 * not running), SHEXEC_ELIMIT (as shexec_run_write()), SHEXEC_ESTATE
 * (a ^C found none of the command's processes left), SHEXEC_ENOMEM (the
 * text before a ^C may have been queued and signals sent).
 */
SHEXEC_API int shexec_run_type_input(shexec_run *run, const void *data, size_t len);

/* Terminal modes (shexec_run_set_pty()). */
enum {
    SHEXEC_PTY_OFF = 0,  /* pipes (default) */
    SHEXEC_PTY_ON = 1,   /* a pseudo-terminal; input is not echoed */
    SHEXEC_PTY_ECHO = 2  /* a pseudo-terminal that echoes input, as a person would see it */
};

/*
 * Run the command on a pseudo-terminal.
 * SHEXEC_PTY_ON or SHEXEC_PTY_ECHO, instead of pipes (SHEXEC_PTY_OFF, the
 * default), for programs that behave differently without one (colours,
 * progress bars, prompts, REPLs). The command leads a new session with the
 * terminal as its controlling terminal (a build without a spawn that can
 * start a session, PORTABLE=1 on a libc without POSIX_SPAWN_SETSID, gives
 * it its own process group only, and the terminal is nobody's controlling
 * terminal: shexec_run_type_input() then turns ^C into SIGINT itself);
 * stdout and stderr are merged into
 * SHEXEC_STDOUT; input from shexec_run_write() is typed at the terminal,
 * "\x03" interrupts (SIGINT; shexec_run_type_input() gives ^C the same
 * meaning on pipes), shexec_run_close_stdin() sends ^D. Line
 * endings are not translated. When the shell exits the terminal hangs up:
 * processes it left get SIGHUP, as in a closed terminal (see
 * docs/internals.md, "Terminals"); those that survive are leftovers like any
 * other. Errors: SHEXEC_EINVAL (unknown mode), SHEXEC_ESTATE (already
 * started).
 */
SHEXEC_API int shexec_run_set_pty(shexec_run *run, int mode);

/*
 * The run's terminal mode, as set: SHEXEC_PTY_* (SHEXEC_PTY_OFF for NULL).
 * A pipe run's program may print its question only on a terminal (bash's
 * `read -p`, many CLIs): found waiting for input with an empty prompt, it
 * may have asked nothing the host can see.
 */
SHEXEC_API int shexec_run_pty(const shexec_run *run);

/*
 * Set the terminal's size.
 * Before the start, the size it starts with; the default is 200 columns x
 * 50 rows, so output is not hard-wrapped. While a pty run (or a task's)
 * runs, the terminal is resized at once, as a window is: the kernel sends
 * SIGWINCH to the command's foreground process group when the size
 * changes, and `stty size` (TIOCGWINSZ) gives the new one.
 * Errors: SHEXEC_EINVAL (run NULL, 0 or above 65535), SHEXEC_ESTATE (the
 * run has ended, or runs on pipes, or its terminal is closed),
 * SHEXEC_ESYS (the resize failed).
 */
SHEXEC_API int shexec_run_set_pty_size(shexec_run *run, uint32_t cols, uint32_t rows);

/* What to do with ANSI escape sequences (shexec_run_set_ansi()). */
enum {
    SHEXEC_ANSI_KEEP = 0, /* default: output exactly as written */
    SHEXEC_ANSI_STRIP = 1 /* remove escapes, resolve \r overwrites and backspaces */
};

/*
 * Keep or strip ANSI escape sequences.
 * Keep escape sequences (SHEXEC_ANSI_KEEP, the default) or strip them
 * (SHEXEC_ANSI_STRIP): CSI, OSC (their text kept), charset selects and other
 * escapes go, "\r" overwrites and backspace overstrikes resolve to the final
 * line, "\r\n" becomes "\n"; printable text is never dropped unless
 * overwritten. Stripped output reaches the callback a line at a time (see
 * CALLBACKS for a pending partial line). Errors: SHEXEC_EINVAL,
 * SHEXEC_ESTATE.
 */
SHEXEC_API int shexec_run_set_ansi(shexec_run *run, int mode);

/* ------------------------------------------------------------------------
 * NON-BLOCKING USE: start, pump, cancel
 * ------------------------------------------------------------------------ */

/*
 * Start the run without waiting for it.
 * Pump with shexec_session_wait() (or the host's own loop) until
 * shexec_run_state() is past SHEXEC_STATE_RUNNING. Errors as for
 * shexec_run_exec().
 */
SHEXEC_API int shexec_run_start(shexec_run *run);

/*
 * End a running run (or kill a task, through its run).
 * SIGTERM to its process group now, SIGKILL after the kill grace. Returns at
 * once; the run finishes as the loop is pumped, in state CANCELLED, or
 * KILLED for a task's run (this is how a task is killed). A finished run is
 * left as it is. Errors: SHEXEC_EINVAL (run NULL), SHEXEC_ESTATE (not
 * started).
 */
SHEXEC_API int shexec_run_cancel(shexec_run *run);

/*
 * Send a signal to the running command's processes: an interrupt (SIGINT,
 * the ^C of a terminal), a hangup, a pause (SIGSTOP, then SIGCONT), a
 * program's own (SIGUSR1), or SIGTERM or SIGKILL by hand. Allowed, by
 * the platform's numbers: SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGUSR1,
 * SIGUSR2, SIGTERM, SIGCONT, SIGSTOP (not the signals of faults and timers,
 * nor SIGTSTP, SIGTTIN, SIGTTOU, which the kernel drops for a command's
 * group: it leads a session of its own). It goes to the command's process
 * group, as a terminal's ^C goes to its foreground group (while the
 * group's id provably is the command's; after the shell exited, to the
 * members a task follows), or, with containment by cgroup
 * (CONTAINMENT), to every process of the command's cgroup, wherever its
 * group; never to any other process, and never to the host. Through a
 * remote wrapper it reaches the wrapper's processes, which pass it on or
 * not. As with a terminal's ^C, a child the shell forks just as the
 * signal comes starts without it (bash blocks signals while it forks, for
 * the library's EXIT trap) and the shell waits for that child: a command
 * is best signalled once it runs what is to get the signal. It returns at
 * once and changes nothing of the run's timeout, cancel or kill grace: a
 * command that dies of it ends as any other
 * (SHEXEC_STATE_SIGNALED and the signal, for a shell that died of it; the
 * status it chose, for one that handled it), and a SIGINT marks it
 * interrupted (shexec_run_interrupted()). A task is signalled through its
 * run. Errors: SHEXEC_EINVAL (run NULL, a signal not allowed; the message
 * lists them), SHEXEC_ESTATE (not started, finished, or none of its
 * processes left: nothing was sent).
 */
SHEXEC_API int shexec_run_send_signal(shexec_run *run, int sig);

/*
 * The number of a signal shexec_run_send_signal() takes, by its name as a
 * model or a user writes it: "SIGINT", "INT" or "int", in any case, with
 * or without "SIG". Returns the platform's number (SIGINT, 2 on Linux), or
 * SHEXEC_EINVAL for NULL, an unknown name, or a signal not allowed.
 */
SHEXEC_API int shexec_signal_from_name(const char *name);

/*
 * Pump the session's loop until something finishes.
 * It reads output, enforces timeouts and reaps. Returns when a run or task
 * of the session finished, when timeout_ms passed (negative: no limit), or
 * at once when nothing runs. Callbacks run inside it. Returns how many runs
 * and tasks finished (0: time ran out, or nothing ran), or SHEXEC_EINVAL (s
 * NULL), SHEXEC_ESTATE (from a callback), SHEXEC_ESYS (poll failed other
 * than by EINTR).
 */
SHEXEC_API int shexec_session_wait(shexec_session *s, int32_t timeout_ms);

/*
 * Drive the session from the host's own poll() loop.
 * The host's own poll() loop, instead of shexec_session_wait():
 * shexec_session_pollfds() fills `fds` (capacity `cap`) with what the
 * session needs watched and *timeout_ms with how long the host may sleep
 * (-1: no deadline; 0: one has passed); it returns how many entries are
 * needed (more than cap: only cap were filled, call again with more room)
 * and changes nothing. Poll them with the host's own, then hand the same
 * entries (in any order, mixed with the host's, which are ignored) to
 * shexec_session_process(), also when the timeout expires (no revents, or n
 * 0). It reads output, runs callbacks, enforces deadlines and reaps, and
 * returns how many runs and tasks finished (>= 0). Entries are matched by
 * descriptor: call shexec_session_process() before any other call on the
 * session, and fill the set anew each round. Errors: SHEXEC_EINVAL (s or
 * timeout_ms NULL, fds NULL with cap > 0), SHEXEC_ESTATE (from a callback),
 * SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_pollfds(struct pollfd *fds, uint32_t cap, int32_t *timeout_ms,
                                      shexec_session *s);
SHEXEC_API int shexec_session_process(shexec_session *s, const struct pollfd *fds, uint32_t n);

/* ------------------------------------------------------------------------
 * MORE RESULTS
 * ------------------------------------------------------------------------ */

/*
 * How many bytes a stream produced in total (as captured: after ANSI
 * stripping and redaction, when they are on).
 * Through a remote wrapper, without the in-band report.
 */
SHEXEC_API uint64_t shexec_run_output_total(const shexec_run *run, int stream);

/* 1 when `stream` was truncated by the output limit, else 0. */
SHEXEC_API int shexec_run_truncated(const shexec_run *run, int stream);

/*
 * What the output limit kept of a stream and what the stream carried, as
 * the notice counts them: characters (a well-formed UTF-8 sequence, or an
 * invalid byte) and bytes, into any of the four that are not NULL. The
 * counts are of the output as captured: after ANSI stripping and
 * redaction, when they are on. While the command runs they are so far.
 * The kept counts are of the text shexec_run_output() shows (with
 * SHEXEC_KEEP_WITHIN_LIMIT, what the notice's room leaves of it).
 * Errors: SHEXEC_EINVAL (run NULL, not started, unknown stream; the
 * outputs are then 0), SHEXEC_ENOMEM (with SHEXEC_KEEP_WITHIN_LIMIT: the
 * notice could not be measured; the kept counts are then 0).
 */
SHEXEC_API int shexec_run_output_counts(const shexec_run *run, int stream, uint64_t *kept_chars,
                                        uint64_t *kept_bytes, uint64_t *total_chars,
                                        uint64_t *total_bytes);

/*
 * How many lines a stream carried, as the notice counts them: its newline
 * bytes, and one more when it does not end with one ("a\nb" is 2 lines,
 * "a\n" 1, "" 0). Of the output as captured, kept or not (after ANSI
 * stripping and redaction, when they are on); so far while the command
 * runs. 0 for a NULL run, one not started, an unknown stream.
 */
SHEXEC_API uint64_t shexec_run_output_lines(const shexec_run *run, int stream);

/* Wall time from start to end (or until now, while running), in ms. */
SHEXEC_API uint64_t shexec_run_duration_ms(const shexec_run *run);

/*
 * The pid (and process group id) of the command's shell.
 * 0 before the start. After the end the id may belong to another process:
 * end a command with shexec_run_cancel(), which knows when the group is
 * still the command's.
 */
SHEXEC_API int64_t shexec_run_pid(const shexec_run *run);

/*
 * The timeout in force.
 * In ms: a started run's deadline, or what a foreground start would give; 0
 * for none (a task without one).
 */
SHEXEC_API uint32_t shexec_run_timeout_ms(const shexec_run *run);

/*
 * Whether the command was interrupted: 1 once a SIGINT reached it through
 * shexec_run_send_signal(), or a ^C typed with shexec_run_type_input() (on
 * a pipe; on a terminal whose line discipline makes ^C a SIGINT), else 0
 * (also for NULL). It stays 1 however the command then ended, or while it
 * runs on: the state, exit code and signal say how. A shell that died of
 * the SIGINT is SHEXEC_STATE_SIGNALED with signal 2; one whose command
 * handled it exited with the status it chose (130 by the shells' custom,
 * 0 for a server that shut down cleanly).
 */
SHEXEC_API int shexec_run_interrupted(const shexec_run *run);

/* What became of processes a command left running (shexec_run_leftovers()). */
enum {
    SHEXEC_LEFTOVERS_NONE = 0,    /* none were left */
    SHEXEC_LEFTOVERS_ADOPTED = 1, /* they became a task (its id: shexec_run_leftovers()) */
    SHEXEC_LEFTOVERS_KILLED = 2   /* they were killed (policy, a full task table, or they
                                     could not be held: see GUARANTEES, ENDING PROCESSES) */
};

/*
 * What became of processes the command left running.
 * SHEXEC_LEFTOVERS_* (NONE for a NULL run, or one that has not finished).
 * When task_id is not NULL, *task_id receives the id of the task that
 * adopted them (ADOPTED), else NULL; the id is owned by the run and valid
 * until it is freed. Take the task itself with shexec_session_take_task().
 */
SHEXEC_API int shexec_run_leftovers(const shexec_run *run, const char **task_id);

/*
 * Which limits stopped the command, once it has finished: a bit (1 <<
 * SHEXEC_LIMIT_*) for each limit it ran into: MEMORY when the out-of-memory
 * killer ended one of its processes at the memory limit, PIDS when a fork
 * failed at the process limit. 0: none (run NULL, not finished, no limits).
 * The notice says the same in words ("killed: out of memory (limit 512
 * MiB)").
 */
SHEXEC_API int shexec_run_limit_hit(const shexec_run *run);

/* Where shexec_run_cost()'s numbers come from. */
enum {
    SHEXEC_COST_NONE = 0,   /* not finished, or nothing known */
    SHEXEC_COST_CGROUP = 1, /* the command's cgroup: every process it started */
    SHEXEC_COST_RUSAGE = 2  /* the kernel's wait of the shell: the shell and the
                               children it waited for (not what it left running) */
};

/*
 * What the command cost, once it has finished.
 * Returns the SHEXEC_COST_* source; each pointer that is not NULL receives
 * the CPU time in user and system mode (microseconds) and the peak memory
 * in bytes: the cgroup's memory.peak where the memory controller is on for
 * it, else the largest resident size of the shell or one process it waited
 * for; 0 when unknown. All 0 with SHEXEC_COST_NONE (run NULL, not
 * finished).
 */
SHEXEC_API int shexec_run_cost(const shexec_run *run, uint64_t *user_usec, uint64_t *system_usec,
                               uint64_t *peak_bytes);

/*
 * What the library declined to do for this run.
 * In English, or "": a cwd report not taken (see GUARANTEES, THE CWD), a
 * shell state not kept (see shexec_session_set_persist_env()); several are
 * joined with "; ". Owned by the run; valid until it is freed. Never NULL.
 */
SHEXEC_API const char *shexec_run_notice(const shexec_run *run);

/* ------------------------------------------------------------------------
 * TASKS: background commands
 *
 * A task is a run started with shexec_run_start_task(). Its output is read
 * whenever the session's loop is pumped (any run of the session,
 * shexec_session_wait(), or the host's own loop). It never moves the
 * session cwd, has no timeout unless one is set, and runs until its shell
 * has exited and no process is left in its group. Everything about the
 * command (state, exit code, output, input, cancel) is done through its
 * run, shexec_task_run() (signals too: shexec_run_send_signal()); here is
 * what only a task has. A task made from
 * leftovers has no exit code (-1): those processes were not our children.
 *
 * Retention. A task holds one of shexec_session_set_max_tasks() slots from
 * its start until it is freed, so memory stays bounded however many are
 * started and never read.
 *   - A task the host holds (from shexec_run_start_task() or
 *     shexec_session_take_task()) is freed only by shexec_task_free(),
 *     shexec_session_free(), or the tool layer when a model reads it to
 *     completion or kills it; a start past the limit is SHEXEC_ELIMIT.
 *   - A task the host never held (started by shexec_tool_call(), or
 *     adopted leftovers) is the session's: when a slot is needed and none is
 *     free, the session's task that finished first is released, unread.
 *     Its id then gives SHEXEC_ENOTASK with `task "ID" finished and was
 *     released unread (retention limit)` while it is recent. Running tasks
 *     are never released.
 * ------------------------------------------------------------------------ */

/*
 * Start the run in the background, as a task.
 * It returns at once: *out receives the task, which now owns the run
 * (shexec_task_run() gives it back; shexec_run_free() on it is ignored).
 * When the session is full, finished tasks it holds are released first (see
 * TASKS). Errors (*out NULL; the run is still the caller's, not started): as
 * shexec_run_start(), and SHEXEC_ELIMIT when no slot can be made (the
 * message says how many tasks run and how many finished).
 */
SHEXEC_API int shexec_run_start_task(shexec_task **out, shexec_run *run);

/*
 * Take a task by id: it becomes the host's.
 * The one call that makes a task the session holds (adopted leftovers, tasks
 * the tool layer started) the host's. From then on it is never released to
 * make room, and the host frees it with shexec_task_free() (or has the tool
 * layer read it to completion). Taking a task the host already holds gives
 * the same pointer again. Errors: SHEXEC_EINVAL (a NULL argument),
 * SHEXEC_ENOTASK (*out NULL; the message is `no task with id "ID"`, or says
 * it was released unread).
 */
SHEXEC_API int shexec_session_take_task(shexec_task **out, shexec_session *s, const char *id);

/*
 * The task's id.
 * "t" and 12 random hex digits, unique in its session and not guessable from
 * other ids. Owned by the task ("" for NULL).
 */
SHEXEC_API const char *shexec_task_id(const shexec_task *t);

/*
 * The task's run.
 * Where its settings, state, results, input and cancel are. Owned by the
 * task; valid until the task is freed. NULL for t NULL.
 */
SHEXEC_API shexec_run *shexec_task_run(const shexec_task *t);

/*
 * The task's done callback.
 * Called once when a task finishes (its state final, all its output
 * delivered and captured), from inside the session's loop. It may call what
 * an output callback may (see CALLBACKS), shexec_task_free() of this task
 * included.
 */
typedef void (*shexec_task_done_fn)(void *user, shexec_task *task);

/*
 * Set the task's done callback.
 * Set it right after the start (callbacks run only while the loop is pumped,
 * so none is missed) or any time before the task finishes. Errors:
 * SHEXEC_EINVAL (t NULL), SHEXEC_ESTATE (the task has finished).
 */
SHEXEC_API int shexec_task_set_done_fn(shexec_task *t, shexec_task_done_fn fn, void *user);

/*
 * Read what is new in a task's output since the last read.
 * What `stream` produced since then, bounded by the same limit (with the
 * notice, which counts this chunk), is marked read. Owned by the task;
 * valid until the next read of the same stream or the task is freed. A
 * UTF-8 character whose bytes came apart is never split between reads:
 * while the task runs its first bytes wait for the rest and come whole in
 * a later read (at the end, bytes that never completed one are invalid
 * bytes, as in shexec_run_output()). The first read of a task a run was
 * moved to (a yield) starts where the run's output so far stops, that
 * character's bytes included. All output so far:
 * shexec_run_output(shexec_task_run(t), ...).
 */
SHEXEC_API const char *shexec_task_read(shexec_task *t, int stream, size_t *len);

/*
 * What the last shexec_task_read() of `stream` kept and covered, as
 * shexec_run_output_counts() counts a whole run: kept_chars/kept_bytes are
 * in the text it returned, total_chars/total_bytes what the command wrote
 * in that stretch (more than kept when the limit cut the chunk: its
 * notice gives the same numbers). All 0 before the first read. Any of the
 * pointers may be NULL. Errors: SHEXEC_EINVAL (t NULL, an unknown stream;
 * the counts 0).
 */
SHEXEC_API int shexec_task_read_counts(const shexec_task *t, int stream, uint64_t *kept_chars,
                                       uint64_t *kept_bytes, uint64_t *total_chars,
                                       uint64_t *total_bytes);

/*
 * Free a task and its run.
 * A running one is ended first (SIGTERM, grace, SIGKILL) and reaped, while
 * other commands' callbacks may run; its own are not called again. NULL is a
 * no-op. From a callback: see CALLBACKS.
 */
SHEXEC_API void shexec_task_free(shexec_task *t);

/* ------------------------------------------------------------------------
 * LONG-RUNNING AND INTERACTIVE COMMANDS
 *
 * A command that does not end quickly need not be waited for to the end,
 * nor killed at its timeout.
 *   - Yield. shexec_run_exec() of a run with a yield time returns once that
 *     time has passed, the command still running: the output so far is in
 *     the run (shexec_run_output()), and the command goes on in the
 *     background as a task of the session (shexec_run_yielded() gives its
 *     id), keeping its timeout as its lifetime cap. A run may instead (or
 *     also) be moved to the background at its timeout rather than ended
 *     (shexec_run_set_background_on_timeout(): the cap it then has), or at
 *     its idle timeout (SHEXEC_IDLE_YIELD). With a yield time set, a
 *     command found waiting for input (below) is yielded at once too.
 *   - Idle timeout. A command that writes nothing on either stream for so
 *     long is ended (SIGTERM, grace, SIGKILL: SHEXEC_STATE_TIMED_OUT, and
 *     shexec_run_deadline() says SHEXEC_DEADLINE_IDLE) or yielded. Output
 *     already in its pipes when the deadline comes (a host that did not
 *     pump for a while) is read first and counts as output.
 *   - Waiting for input. After a command has been silent for a while
 *     (shexec_session_set_input_look_ms(), 2 s by default) the library
 *     looks, once a second while it stays silent, whether one of its
 *     processes is blocked reading its terminal (a pty run) or the stdin
 *     pipe (shexec_run_set_stdin()); a pipe run without stdin reads
 *     /dev/null and is never looked at. Found, the run's input callback is
 *     called and shexec_run_input_wait() says so, with the prompt (the
 *     last line of output, unfinished) and whether the terminal echoes
 *     (a password prompt does not). Output or input since then clears it.
 *     A process that sleeps, computes, or reads a pipe another process
 *     fills is not waiting for the host. A look comes after the output
 *     already in the command's pipes has been read, so that output is
 *     never held behind the wait it precedes. Linux only (/proc/PID/syscall
 *     and /proc/PID/fd of the command's own processes; a read(2), a
 *     select(2) of descriptor 0 alone, or a poll(2) of one descriptor);
 *     elsewhere, and for a process blocked in epoll, the state is
 *     SHEXEC_INPUT_UNKNOWN or never WAITING.
 * A run started with shexec_run_start() yields the same way in the host's
 * own loop: at the end of the loop round in which its yield came it goes on
 * as a task (shexec_run_yielded() then says so) while the loop goes on. A
 * task never yields: it is in the background already (an idle timeout set
 * to yield does nothing to it).
 *
 * After a yield the run handle stays the host's: read the output so far
 * from it, or what is new (shexec_run_read_new()), write input to it
 * (shexec_run_write()), watch its state while the loop is pumped, and free
 * it with shexec_run_free() when done with it; the command itself goes on as the task, found by id
 * (shexec_session_take_task()), freed with the session or by
 * shexec_task_free(), and like any task the session holds released unread
 * when room is needed only once it has finished and the run handle is
 * freed. What the command reports when it ends (its cwd, its shell state)
 * is not taken: the session has moved on (the notice says so).
 *
 * Following a task: shexec_task_watch() returns when it has been quiet for
 * a while, has ended, or waits for input (a host that follows a build or a
 * server's log need not loop over waits and reads); a host with its own
 * loop reads shexec_run_quiet_ms().
 * ------------------------------------------------------------------------ */

/* Why a run was moved to the background (shexec_run_yielded()). */
enum {
    SHEXEC_YIELD_NONE = 0,    /* it was not */
    SHEXEC_YIELD_TIME = 1,    /* its yield time passed (shexec_run_set_yield_ms()) */
    SHEXEC_YIELD_TIMEOUT = 2, /* its timeout passed, with background on timeout set */
    SHEXEC_YIELD_IDLE = 3,    /* its idle timeout passed, set to SHEXEC_IDLE_YIELD */
    SHEXEC_YIELD_INPUT = 4    /* it waits for input, with a yield time set */
};

/* What a command's idle timeout does. */
enum {
    SHEXEC_IDLE_END = 0,      /* end it: SIGTERM, grace, SIGKILL */
    SHEXEC_IDLE_YIELD = 1     /* move it to the background (a foreground run) */
};

/* Which deadline ended a run in SHEXEC_STATE_TIMED_OUT (shexec_run_deadline()). */
enum {
    SHEXEC_DEADLINE_NONE = 0,    /* none did */
    SHEXEC_DEADLINE_TIMEOUT = 1, /* its timeout (or, moved to the background, its cap) */
    SHEXEC_DEADLINE_IDLE = 2     /* its idle timeout */
};

/* Whether a command waits for input (shexec_run_input_wait()). */
enum {
    SHEXEC_INPUT_NO = 0,      /* not found waiting (or not looked at yet) */
    SHEXEC_INPUT_WAITING = 1, /* one of its processes is blocked reading the host's input */
    SHEXEC_INPUT_UNKNOWN = 2  /* this system cannot tell (no /proc) */
};

/*
 * Give the run a yield time.
 * ms > 0: shexec_run_exec() returns after ms with the command still running,
 * moved to the background (see LONG-RUNNING AND INTERACTIVE COMMANDS), or
 * as soon as the command is found waiting for input; a run started with
 * shexec_run_start() is moved then in the host's loop. 0 (the default):
 * it runs in the foreground to its end. Errors: SHEXEC_EINVAL (run NULL),
 * SHEXEC_ESTATE (started).
 */
SHEXEC_API int shexec_run_set_yield_ms(shexec_run *run, uint32_t ms);

/*
 * Set the idle timeout: a command silent on both streams for ms is ended or
 * yielded, as action says (SHEXEC_IDLE_END / SHEXEC_IDLE_YIELD). 0: none
 * (the default). The session's applies to every run that sets none; the
 * run's (set_idle_timeout on the run) to it alone, 0 included. Errors:
 * SHEXEC_EINVAL (NULL, an unknown action), SHEXEC_ESTATE (the run started).
 */
SHEXEC_API int shexec_session_set_idle_timeout_ms(shexec_session *s, uint32_t ms, int action);
SHEXEC_API int shexec_run_set_idle_timeout_ms(shexec_run *run, uint32_t ms, int action);
/* The session's idle timeout (0: none) and its action into *action (not NULL). */
SHEXEC_API uint32_t shexec_session_idle_timeout_ms(const shexec_session *s, int *action);

/*
 * Background on timeout: at its timeout a foreground command is moved to
 * the background instead of being ended,
 * and ended (SHEXEC_STATE_TIMED_OUT) only cap_ms after its start. 0 (the
 * default): ended at the timeout. A cap not beyond the timeout ends it at
 * the timeout. The session's applies to every run that sets none. Errors:
 * SHEXEC_EINVAL (NULL), SHEXEC_ESTATE (the run started).
 */
SHEXEC_API int shexec_session_set_background_on_timeout(shexec_session *s, uint32_t cap_ms);
SHEXEC_API int shexec_run_set_background_on_timeout(shexec_run *run, uint32_t cap_ms);
/* The session's cap (0: off). */
SHEXEC_API uint32_t shexec_session_background_on_timeout(const shexec_session *s);

/*
 * How long a command must be silent before the library first looks whether
 * it waits for input (then once a second while it stays silent). 0: never
 * look. Default SHEXEC_DEFAULT_INPUT_LOOK_MS. Applies to runs started
 * after. Errors: SHEXEC_EINVAL (s NULL).
 */
SHEXEC_API int shexec_session_set_input_look_ms(shexec_session *s, uint32_t ms);
SHEXEC_API uint32_t shexec_session_input_look_ms(const shexec_session *s);

/* Called when a command is found waiting for input, from inside the loop
 * (it may do what an output callback may: see CALLBACKS). */
typedef void (*shexec_input_fn)(void *user, shexec_run *run);

/*
 * Set the run's input callback (NULL: none). Errors: SHEXEC_EINVAL (run
 * NULL).
 */
SHEXEC_API int shexec_run_set_input_fn(shexec_run *run, shexec_input_fn fn, void *user);

/*
 * Whether the command waits for input: SHEXEC_INPUT_*. When it does, and
 * prompt is not NULL, *prompt gets the last line of its output so far,
 * unfinished (usually the question it asks; at most 256 bytes, not
 * NUL-safe: its length in *prompt_len when not NULL), owned by the run and
 * valid until the next loop round; *echo_off (not NULL) gets 1 when the
 * terminal does not echo (a password prompt). A terminal opened with
 * SHEXEC_PTY_ON never echoes: there a password reader is seen only by
 * another flag it clears (bash's `read -s`, glibc's getpass()), and one
 * that turns off echo alone or with ECHONL (sudo, ssh, Python's getpass)
 * gives 0 (docs/long-running.md). SHEXEC_INPUT_NO for NULL.
 */
SHEXEC_API int shexec_run_input_wait(const shexec_run *run, const char **prompt,
                                     size_t *prompt_len, int *echo_off);

/*
 * Whether shexec_run_exec() moved the command to the background:
 * SHEXEC_YIELD_*, and the id of the task it goes on as into *task_id (not
 * NULL; NULL when not yielded), owned by the task. SHEXEC_YIELD_NONE for
 * NULL.
 */
SHEXEC_API int shexec_run_yielded(const shexec_run *run, const char **task_id);

/* Which deadline ended the run: SHEXEC_DEADLINE_* (NONE unless its state is
 * SHEXEC_STATE_TIMED_OUT). */
SHEXEC_API int shexec_run_deadline(const shexec_run *run);

/*
 * Read what is new in a run's output, through the run handle: for a run
 * moved to the background (shexec_run_yielded()) or a task's run, what
 * shexec_task_read() of its task gives (the two share the mark of what
 * was read), without taking the task (shexec_session_take_task()), which
 * would make it the host's to free. The first read starts where the run's
 * output at the yield stopped. "" (and *len 0) for a run that is no
 * task's (never moved, NULL, or its task gone). Owned by the task; valid
 * as shexec_task_read()'s.
 */
SHEXEC_API const char *shexec_run_read_new(shexec_run *run, int stream, size_t *len);

/*
 * How long the command has printed nothing, in ms: since the output last
 * read from either stream (by any pump of the session's loop), or since
 * its start; for a run that ended, until its end. 0 for NULL or a run not
 * started. A host with its own loop follows a command with it as
 * shexec_task_watch() does.
 */
SHEXEC_API uint64_t shexec_run_quiet_ms(const shexec_run *run);

/* Why shexec_task_watch() returned. */
enum {
    SHEXEC_WATCH_ENDED = 1, /* the task has finished (its state is final) */
    SHEXEC_WATCH_QUIET = 2, /* it printed nothing for quiet_ms */
    SHEXEC_WATCH_INPUT = 3, /* it waits for input (shexec_run_input_wait()) */
    SHEXEC_WATCH_TIME = 4   /* max_ms passed first */
};

/*
 * Follow a running task: pump the session's loop until the task has
 * finished, waits for input, has printed nothing for quiet_ms, or max_ms
 * has passed, whichever comes first, and say which (SHEXEC_WATCH_*; when
 * several hold, the first listed). The quiet counts from the later of
 * the task's last output and this call, so a task silent before the call
 * is watched for quiet_ms more; quiet_ms 0: not watched for (the call
 * returns at the end, a wait for input, or max_ms). max_ms 0: one round,
 * taking in what is there. A task found waiting for input returns at once
 * (SHEXEC_WATCH_INPUT); an ended one gives SHEXEC_WATCH_ENDED. Output
 * already in the command's pipes counts before its silence does. Other
 * commands of the session go on, their callbacks called. Read what came
 * with shexec_task_read(). Errors: SHEXEC_EINVAL (t NULL), SHEXEC_ESTATE
 * (from a callback; or the task freed, by a callback during the call
 * included: t is then gone), SHEXEC_ESYS (the loop failed).
 */
SHEXEC_API int shexec_task_watch(shexec_task *t, uint32_t quiet_ms, uint32_t max_ms);

/*
 * The agent environment preset: one call that sets, in the session's
 * environment, what keeps commands from stopping for a person or a pager:
 *   PAGER, GIT_PAGER, GH_PAGER, MANPAGER, SYSTEMD_PAGER=cat;
 *   GIT_TERMINAL_PROMPT=0; GIT_EDITOR and EDITOR=false (an editor that
 *   fails rather than opens); DEBIAN_FRONTEND=noninteractive;
 *   PIP_NO_INPUT=1; COLORTERM removed (it describes the host's terminal,
 *   which commands do not write to); a UTF-8 locale where commands would
 *   run in the plain C one: LC_ALL or LC_CTYPE set to C or POSIX become
 *   C.UTF-8, and LANG=C.UTF-8 when LANG is unset, empty, C or POSIX and
 *   LC_ALL names no other locale (a locale the host or the session chose
 *   is kept; the values are read when the call is made);
 * and, for pipe runs only (a pty run keeps its terminal's), NO_COLOR=1 and
 * TERM=dumb. The first are session variables like any: shexec_session_setenv()
 * after the call overrides each, a run's shexec_run_setenv() too. TERM and
 * NO_COLOR are not set on the session: a pipe run gets them unless the
 * session's own variables (set before the call or after) or the run's name
 * them; shexec_session_getenv() does not show them.
 * Errors: SHEXEC_EINVAL (s NULL), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_session_apply_agent_env(shexec_session *s);

#ifdef __cplusplus
}
#endif

#endif /* SHEXEC_H */
