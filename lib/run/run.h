/*
 * run.h - the run handle's layout, and run.c's internal calls (the handle,
 * its input, its exit policy). A run keeps what the command was set to and
 * what it gave (its settings, policy and results); what the loop drives
 * for it is its job (job.h), embedded, whose callbacks run.c and task.c
 * set. Starting a run is start.h's, what it tells result.h's, how its job
 * ends ending.h's, the cwd it reports cwd.h's.
 */
#ifndef SHX_RUN_H
#define SHX_RUN_H

#include <stdint.h>
#include <sys/types.h>

#include "shx/buf.h"
#include "shell/channels.h"
#include "contain/contain_hook.h"
#include "shx/env.h"
#include "loop/job.h"
#include "persist/persist_hook.h"
#include "shell/record.h"
#include "shexec.h"

struct shexec_run {
    shexec_session *s;            /* NULL once the session is freed */
    shexec_run *prev, *next;      /* all runs of the session */
    char *command;
    size_t command_len;
    uint32_t timeout_ms;          /* 0: not set (the session default; a task: none) */
    uint32_t effective_timeout_ms; /* in force from the start; 0: none */
    char *cwd;                    /* NULL: the session cwd (and track it) */
    shx_envlist env;
    uint64_t limit;
    int unit, keep;
    shexec_output_fn fn;
    void *user;

    int state;                    /* SHEXEC_STATE_* */
    int leftovers;                /* SHEXEC_LEFTOVERS_NONE/ADOPTED/KILLED */
    shx_job job;                  /* what the loop drives: its process, streams, input */
    int64_t start_ns, end_ns;
    shx_buf rendered[2];          /* captured output as returned to the host */
    int rendered_valid[2];

    shexec_task *task;            /* the task this run is the engine of, or NULL */
    char *leftover_task;          /* id of the adopting task */
    shx_buf notice;               /* shexec_run_notice(): what was declined */
    shx_report report;            /* the run's report channel (channels.h); fd -1: closed */
    shx_record record;            /* what the shell reported on it */
    int prelude_marked;           /* its prelude says it ran (bash through a wrapper) */
    int wrapper_guard;            /* the wrapper's first run: it tells whether BASH_ENV passed */
    shx_persist_run persist;      /* its shell reports its state (persist_hook.h) */

    int pty;                      /* a pseudo-terminal instead of pipes */
    uint16_t cols, rows;
    int ansi;                     /* SHEXEC_ANSI_* */
    int free_pending;             /* freed: no callback any more; released once ended */
    int held;                     /* library frames that wait on this run across loop
                                     rounds: its deferred release waits for them */
    int want_stdin;

    uint64_t limits[SHEXEC_LIMITS]; /* shexec_run_set_limit(): in limits_set, the run's own */
    unsigned limits_set;          /* bit 1 << SHEXEC_LIMIT_* */
    int limit_set;
    uint64_t limits_in_force[SHEXEC_LIMITS]; /* from its start (launch.c) */
    char *cgroup_v1[SHX_CTRLS];   /* its cgroups in v1 hierarchies (contain_hook.h), NULL: none */
    int limit_hits;               /* shexec_run_limit_hit() */
    uint32_t yield_ms;            /* shexec_run_set_yield_ms(); 0: none */
    int idle_set;                 /* the run's own idle timeout, over the session's */
    uint32_t idle_ms;
    int idle_action;
    int background_set;           /* the run's own background cap, over the session's */
    uint32_t background_cap_ms;
    int yielded;                  /* SHEXEC_YIELD_*: moved to the background by exec */
    shexec_input_fn input_fn;
    void *input_user;
    int task_run_held;            /* yielded: the host still holds the run handle */
    int reserves_slot;            /* a task slot is kept for its yield while it may yield
                                     (the tool layer's runs: task.c counts it) */
    shx_secrets redact_values;    /* shexec_run_redact_value() */
    int redact_own_env;           /* shexec_run_redact_own_env() */
    int notice_first;             /* the session's, from the start */
    int interrupted;              /* a SIGINT reached it: shexec_run_interrupted() */
    int probe;                    /* the library's own run of `:` that learns the wrapper */
    int bare;                     /* its shell was started bare (bare.h): it reports nothing */
    int cwd_gone;                 /* its shell could not enter the session's cwd: it starts
                                     again in the nearest existing ancestor (launch.c) */
};

/* A new run of the command's len bytes, not yet linked to the session. A
 * failure sets the session's message; a success leaves the message as it
 * was (the public call that asked for the run clears it). */
int shx_run_alloc(shexec_run **out, shexec_session *s, const char *command, size_t len);
/* The one rule for a run's timeout: a task has its own or none, a
 * foreground run its own or the session's, clamped to the maximum. */
uint32_t shx_run_effective_timeout(const shexec_run *r);
/* SHEXEC_OK while r may still be set (not started), else the error (the
 * session's message set). */
int shx_run_configurable(shexec_run *r);
/* Put r on the session's list of runs (new, or back from a task). */
void shx_run_link(shexec_session *s, shexec_run *r);
/* Take r off the session's list of runs (it became a task's). */
void shx_run_unlink(shexec_session *s, shexec_run *r);
/* A running run ended (SIGTERM, grace, SIGKILL: KILL for a task's, else
 * CANCEL) and waited for, while other commands' callbacks may run. */
void shx_run_end(shexec_run *r);
void shx_run_release(shexec_run *r);
/* Begin terminating a live run's job: SIGTERM now, SIGKILL after the
 * session's grace. */
void shx_run_terminate(shexec_run *r, int reason, int64_t now);
/* No more callbacks for this run (it is being freed). */
void shx_run_detach(shexec_run *r);
/* The run's processes are done: its final state, and the cwd it reported. */
void shx_run_ended(shexec_run *r);
/* The job of a run (its ctx): the run. */
static inline shexec_run *shx_run_of(const shx_job *j)
{
    return (shexec_run *)j->ctx;
}

#endif
