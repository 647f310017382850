/*
 * task.h - the task handle's layout (a run started in the background, with
 * an id and its session's ownership) and task.c's internal calls:
 * adoption of leftovers, retention, release.
 */
#ifndef SHX_TASK_H
#define SHX_TASK_H

#include "run/run.h"

struct shexec_task {
    shexec_session *s;
    shexec_task *prev, *next;     /* the session's tasks */
    char id[16];
    shexec_run *run;              /* the engine: a run in background mode */
    shexec_task_done_fn done_fn;
    void *done_user;
    shx_buf read_out[2];          /* last shexec_task_read() of stdout, stderr */
    shx_capture_counts read_counts[2]; /* what that read kept of what it covered */
    int free_pending;             /* freed: no callback any more; released once ended */
    int host_held;                /* the host has its pointer (shexec_run_start_task,
                                     shexec_session_take_task): the library never frees it */
    int withdrawn;                /* read to completion by the tool layer: no longer found
                                     by id, freed by the host */
};

int shx_task_adopt(shexec_session *s, shexec_run *from, shexec_task **out);
/* A task for run, which is not started yet: the session's room checked,
 * an id given, run made its engine. SHEXEC_OK, or shexec_run_start_task()'s
 * errors (ESTATE, ELIMIT, ENOMEM) with the session's message. Then either
 * shx_task_started() (the run started: the task joins the session, the run
 * is the task's) or shx_task_abandon() (it did not: run as it was, t freed). */
int shx_task_prepare(shexec_task **out, shexec_session *s, shexec_run *run);
void shx_task_started(shexec_task *t);
void shx_task_abandon(shexec_task *t);
int shx_task_live_count(const shexec_session *s);
/*
 * Room for one more task: 1 when the session holds fewer than max_tasks
 * tasks (started and not freed), if need be after releasing finished tasks
 * the host never held, oldest first (from inside the loop they are only
 * marked, and freed at the end of the round); else 0.
 */
int shx_task_room(shexec_session *s);
/* t holds one of the session's slots: started, and not on its way out (a
 * task freed from a callback or released is gone once it has finished). */
int shx_task_holds_slot(const shexec_task *t);
/* r, a foreground run, keeps the slot its yield will take (the tool
 * layer's: its yield must never find the table full), and may still yield. */
int shx_run_reserves_slot(const shexec_run *r);
/* The task with that id, or NULL; unlike shexec_session_take_task() it
 * does not make the task the host's. */
shexec_task *shx_task_find(shexec_session *s, const char *id);
/* 1 when id is one of the last SHX_RELEASED_IDS ids shx_task_room released. */
int shx_task_was_released(const shexec_session *s, const char *id);
/* Release a task now (terminated and reaped first if it runs). */
void shx_task_release(shexec_task *t);

/*
 * shexec_run_exec() hands its running command to the background: the run
 * becomes the engine of a new task of the session (the host keeps its run
 * handle: task_run_held), for the reason its quiet watch asked (or the
 * yield time: SHEXEC_YIELD_TIME). SHEXEC_OK; or SHEXEC_ELIMIT when the
 * session has no room for a task: the run stays in the foreground and may
 * not yield again in this call (a timeout that asked to yield ends it, as
 * without background on timeout), the notice says why.
 */
int shx_task_from_yield(shexec_session *s, shexec_run *r);

/* The session's hand-off of a foreground run's leftovers: per policy and
 * room, adopted as a task (1, *adopted: its run) or not (0). */
int shx_task_adopt_leftovers(shexec_session *s, shexec_run *r, shexec_run **adopted);

#endif
