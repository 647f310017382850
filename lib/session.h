/*
 * session.h - the internal layout of sessions and runs, shared by
 * session.c (settings, cwd, env policy), run.c (run lifecycle and results)
 * and loop.c (the poll loop that drives every live run of a session).
 */
#ifndef SHX_SESSION_H
#define SHX_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "env.h"
#include "group.h"
#include "proc.h"
#include "shexec.h"
#include "stream.h"


struct shexec_run {
    shexec_session *s;            /* NULL once the session is freed */
    shexec_run *prev, *next;      /* all runs of the session */
    shexec_run *next_active;      /* runs the loop drives */
    char *command;
    size_t command_len;
    uint32_t timeout_ms;          /* 0: not set (the session default; a task: none) */
    uint32_t effective_timeout_ms; /* in force from the start; 0: none */
    char *cwd;                    /* NULL: the session cwd (and track it) */
    shx_envlist env;
    int limit_set;
    uint64_t limit;
    int unit, keep;
    shexec_output_fn fn;
    void *user;

    int state;                    /* SHEXEC_STATE_* */
    shx_proc proc;                /* the shell, its group, deadlines (proc.c) */
    int64_t start_ns, end_ns;
    shx_stream out, err;
    shx_buf rendered[2];          /* captured output as returned to the host */
    int rendered_valid[2];

    shexec_task *task;            /* the task this run is the engine of, or NULL */
    int leftovers;                /* SHEXEC_LEFTOVERS_NONE/ADOPTED/KILLED */
    char *leftover_task;          /* id of the adopting task */
    shx_buf notice;               /* shexec_run_notice(): what was declined */

    int pty;                      /* a pseudo-terminal instead of pipes */
    uint16_t cols, rows;
    int ansi;                     /* SHEXEC_ANSI_* */
    int free_pending;             /* freed: no callback any more; released once ended */
    int held;                     /* library frames that wait on this run across loop
                                     rounds: its deferred release waits for them */
    int want_stdin;
    int stdin_fd;                 /* write end, non-blocking; -1 when closed */
    shx_buf stdin_buf;            /* queued input: bytes from stdin_off on are not written */
    size_t stdin_off;
    int stdin_close;              /* close once stdin_buf is written */
};

struct shexec_task {
    shexec_session *s;
    shexec_task *prev, *next;     /* the session's tasks */
    char id[16];
    shexec_run *run;              /* the engine: a run in background mode */
    shexec_task_done_fn done_fn;
    void *done_user;
    shx_buf read_out;             /* last shexec_task_read() result */
    int free_pending;             /* freed: no callback any more; released once ended */
    int host_held;                /* the host has its pointer (shexec_run_start_task,
                                     shexec_session_find_task): the library never frees it */
    int withdrawn;                /* read to completion by the tool layer: no longer found
                                     by id, freed by the host */
};

/* How many ids of tasks released unread a session remembers. */
#define SHX_RELEASED_IDS 64

enum { SHX_TOOL_BASH = 0, SHX_TOOL_TASK_OUTPUT = 1, SHX_TOOL_TASK_KILL = 2, SHX_TOOL_COUNT = 3 };

/*
 * How the loop reports upward without calling up (loop.c knows processes
 * and streams, not what runs and tasks make of them); installed by
 * session.c, which hands each report to run.c's exit policy or to task.c.
 */
typedef struct shx_loop_hooks {
    /* A foreground run's shell exited and members of its group remain:
     * adopt them (1, *adopted receives the adopting task's run, which the
     * loop then drives) or not (0: the loop kills them). */
    int (*adopt)(shexec_session *s, shexec_run *r, shexec_run **adopted);
    /* The run's processes are done and its output read: make it final. */
    void (*ended)(shexec_session *s, shexec_run *r);
    /* After a round's walk, once per run that ended in it: callbacks. */
    void (*notify)(shexec_session *s, shexec_run *r);
    /* A round is over and nothing holds run or task pointers. */
    void (*round_end)(shexec_session *s);
} shx_loop_hooks;

struct shexec_session {
    const shx_loop_hooks *hooks;
    char *cwd;
    char **shell_argv;            /* NULL: the default shell */
    char *shell_path;             /* shell_argv[0] resolved, absolute */
    const char *default_shell;
    uint32_t default_timeout_ms, max_timeout_ms, kill_grace_ms;
    uint64_t limit;
    int unit, keep;
    int env_inherit;
    shx_envlist env;
    shx_globlist deny, allow;
    char tag[SHX_SENTINEL_TAG_MAX];
    char *script;                 /* the wrapper script, with the tag */
    char *wrapper_script;         /* the same, applying run variables passed as arguments */
    shx_buf errmsg;
    shexec_run *runs;             /* every run not yet freed */
    shexec_run *active;           /* runs with a live process */
    shexec_task *tasks;           /* every task not yet freed */
    uint32_t max_tasks;
    int leftovers_policy;
    int in_loop;                  /* inside the loop (callbacks run there) */
    int use_pidfd;
    char *tool_name[3];           /* exposed names; NULL: the tool's own */
    int tool_enabled[3];
    char released[SHX_RELEASED_IDS][16]; /* ids of tasks released unread, a ring */
    uint32_t released_next;
};

/* Record a failure: message into s->errmsg (if s), returns code. */
int shx_fail(shexec_session *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Clear the message at the start of a call that can fail. */
void shx_ok(shexec_session *s);
int64_t shx_now_ns(void);

/* loop.c */
typedef struct shx_fd_owner {
    shexec_run *run;
    int kind;
    int index;
} shx_fd_owner;
/*
 * One round of the loop, split for host integration: list the descriptors
 * to watch (returns how many are needed; fills at most cap) with the
 * nearest deadline in *next_ns (-1: none; a past one when it is due); then
 * handle what poll() reported; then enforce deadlines (shx_loop_enforce);
 * then finish what ended (returns how many runs finished).
 */
size_t shx_loop_collect(shexec_session *s, struct pollfd *fds, shx_fd_owner *own, size_t cap,
                        int64_t *next_ns);
void shx_loop_dispatch(shexec_session *s, const struct pollfd *fds, const shx_fd_owner *own,
                       size_t n);
int shx_loop_settle(shexec_session *s);
/*
 * Pump until `until` is done (if non-NULL), or until any run finished
 * (stop_on_any), or until timeout_ns passed (negative: none). SHEXEC_OK or
 * SHEXEC_ESYS.
 */
int shx_loop(shexec_session *s, shexec_run *until, int stop_on_any, int64_t timeout_ns,
             int *finished);
/* Act on every deadline that has passed: SIGTERM on timeout, SIGKILL after
 * the grace. The one step that signals on time; listing never does. */
void shx_loop_enforce(shexec_session *s);
/* Begin terminating a live run: SIGTERM now, SIGKILL after the grace. */
void shx_run_terminate(shexec_run *r, int reason, int64_t now);
void shx_loop_add(shexec_session *s, shexec_run *r);

/* run.c */
int shx_run_alloc(shexec_run **out, shexec_session *s, const char *command, size_t len);
int shx_run_begin(shexec_run *r);
/* Take r off the session's list of runs (it became a task's). */
void shx_run_unlink(shexec_session *s, shexec_run *r);
void shx_run_release(shexec_run *r);
int shx_run_queue_input(shexec_run *r, const void *data, size_t len);
int shx_run_end_input(shexec_run *r);
/* Queued input not yet written. */
size_t shx_run_input_left(const shexec_run *r);
/* After writes (stdin_off moved on): drop written bytes, amortized linear. */
void shx_run_input_written(shexec_run *r);
/* No more callbacks for this run (it is being freed). */
void shx_run_detach(shexec_run *r);
const char *shx_run_rendered(shexec_run *r, int stream, size_t *len);
/* Make dir (len bytes, NUL-terminated) the session cwd if it is an absolute
 * path naming an existing directory now; else keep the cwd and say why in
 * the run's notice. */
void shx_run_adopt_cwd(shexec_run *r, const char *dir, size_t len);
/* The run's processes are done: its final state, and the cwd it reported. */
void shx_run_ended(shexec_run *r);
/* The session's hand-off of a foreground run's leftovers: per policy and
 * room, adopted as a task (1, *adopted: its run) or not (0). */
int shx_task_adopt_leftovers(shexec_session *s, shexec_run *r, shexec_run **adopted);
/* base.c, settings.c */
int shx_settings_init(shexec_session *s);
void shx_settings_free(shexec_session *s);

/* task.c */
int shx_task_adopt(shexec_session *s, shexec_run *from, shexec_task **out);
int shx_task_live_count(const shexec_session *s);
/*
 * Room for one more task: 1 when the session holds fewer than max_tasks
 * tasks (started and not freed), if need be after releasing finished tasks
 * the host never held, oldest first (from inside the loop they are only
 * marked, and freed at the end of the round); else 0.
 */
int shx_task_room(shexec_session *s);
/* The task with that id, or NULL; unlike shexec_session_find_task() it
 * does not make the task the host's. */
shexec_task *shx_task_find(shexec_session *s, const char *id);
/* 1 when id is one of the last SHX_RELEASED_IDS ids shx_task_room released. */
int shx_task_was_released(const shexec_session *s, const char *id);
/* Release runs and tasks whose free was asked for from a callback and that
 * have finished, unless a frame still holds them (held). Called where no
 * loop round holds pointers to them. */
void shx_release_deferred(shexec_session *s);
/* Release a task now (terminated and reaped first if it runs). */
void shx_task_release(shexec_task *t);
void shx_task_finished(shexec_task *t);

/* session.c */
int shx_random64(unsigned long long *out);
int shx_check_limit(shexec_session *s, uint64_t limit, int unit, int keep);
int shx_env_error(shexec_session *s, int rc, const char *name);
int shx_session_resolve_dir(shexec_session *s, const char *dir, char **out);
int shx_session_check_dir(shexec_session *s, const char *dir);

#endif
