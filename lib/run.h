/*
 * run.h - the run handle's layout, and run.c's internal calls (the handle,
 * its input, its exit policy). Starting a run is start.h's, what it tells
 * result.h's, how it ends ending.h's, the cwd it reports cwd.h's.
 */
#ifndef SHX_RUN_H
#define SHX_RUN_H

#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "env.h"
#include "persist.h"
#include "proc.h"
#include "record.h"
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
    /* how the loop reports the run's ending (its creator sets them, as
     * libuv's per-handle exit callback): its processes are done and its
     * output read (make it final: run.c's shx_run_ended); then, after the
     * round that ended it, once the active list is consistent again (a
     * task's done callback; NULL: nothing) */
    void (*on_ended)(shexec_run *r);
    void (*on_finished)(shexec_run *r);
    int leftovers;                /* SHEXEC_LEFTOVERS_NONE/ADOPTED/KILLED */
    char *leftover_task;          /* id of the adopting task */
    shx_buf notice;               /* shexec_run_notice(): what was declined */
    int rec_fd;                   /* the run's channel (channels.c); -1 when read or none */
    size_t rec_from;              /* where the report starts in it (after the prelude) */
    shx_record record;            /* what the shell reported on it */
    int prelude_marked;           /* its prelude says it ran (BASH_ENV through a wrapper) */
    shx_persist_run persist;      /* its shell reports its state (persist.h) */

    int pty;                      /* a pseudo-terminal instead of pipes */
    int hangup_checks;            /* looks left for members that missed the
                                     terminal's hangup (loop.c) */
    int64_t hangup_check_ns;      /* when the next look is due */
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

/* After a terminal's hangup, members that missed it are looked for this
 * many times, the first SHX_HANGUP_FIRST_NS after it, each wait four times
 * the one before (5 ms to 1.7 s after). */
#define SHX_HANGUP_CHECKS 5
#define SHX_HANGUP_FIRST_NS ((int64_t)5000000)

int shx_run_alloc(shexec_run **out, shexec_session *s, const char *command, size_t len);
/* Take r off the session's list of runs (it became a task's). */
void shx_run_unlink(shexec_session *s, shexec_run *r);
void shx_run_release(shexec_run *r);
int shx_run_queue_input(shexec_run *r, const void *data, size_t len);
int shx_run_end_input(shexec_run *r);
/* No more callbacks for this run (it is being freed). */
void shx_run_detach(shexec_run *r);
/* The run's processes are done: its final state, and the cwd it reported. */
void shx_run_ended(shexec_run *r);

#endif
