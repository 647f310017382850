/*
 * task.c - the task handle: a background command owned by its session,
 * addressed by a random id. A task is a run in background mode (no cwd
 * tracking, no timeout unless set, a "new since the last read" capture)
 * that stays running while its process group has members. Leftovers of a
 * foreground run are adopted into a task here, and the session's policy
 * for them (adopted or killed, after how long a drain of their output) is
 * set here.
 *
 * What a session retains is bounded: every task from its start until it is
 * freed, running or finished, holds one of max_tasks slots. Tasks the host
 * never had a pointer to (started by the tool layer, adopted leftovers not
 * looked up) are the session's own: when a slot is needed, the one that
 * finished first is released, and its id is remembered to say so. A task
 * the host holds is never freed behind its back: it keeps its slot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/session.h"
#include "session/task.h"
#include "run/run.h"
#include "stream/stream.h"
#include "stream/fresh.h"

static void link_task(shexec_session *s, shexec_task *t)
{
    t->next = s->tasks;
    if (s->tasks)
        s->tasks->prev = t;
    s->tasks = t;
}

static void unlink_task(shexec_session *s, shexec_task *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else if (s->tasks == t)
        s->tasks = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->prev = t->next = NULL;
}

int shx_task_live_count(const shexec_session *s)
{
    int n = 0;
    for (const shexec_task *t = s->tasks; t; t = t->next)
        n += t->run->state == SHEXEC_STATE_RUNNING;
    return n;
}

int shx_task_holds_slot(const shexec_task *t)
{
    int state = t->run->state;
    return state != SHEXEC_STATE_NEW && !(t->free_pending && state != SHEXEC_STATE_RUNNING);
}

int shx_run_reserves_slot(const shexec_run *r)
{
    return r->reserves_slot && r->state == SHEXEC_STATE_RUNNING && r->job.quiet.can_yield &&
           !r->task;
}

static uint32_t slots_used(const shexec_session *s)
{
    uint32_t n = 0;
    for (const shexec_task *t = s->tasks; t; t = t->next)
        n += shx_task_holds_slot(t) ? 1 : 0;
    for (const shexec_run *r = s->runs; r; r = r->next)
        n += shx_run_reserves_slot(r) ? 1 : 0;
    return n;
}

/* A finished task of the session's own that no caller is holding. */
static int releasable(const shexec_task *t)
{
    int state = t->run->state;
    return !t->host_held && !t->run->task_run_held && t->run->held == 0 && !t->free_pending && state != SHEXEC_STATE_NEW &&
           state != SHEXEC_STATE_RUNNING;
}

/* The releasable task that finished first, or NULL; *count: how many there are. */
static shexec_task *oldest_releasable(shexec_session *s, uint32_t *count)
{
    shexec_task *best = NULL;
    *count = 0;
    for (shexec_task *t = s->tasks; t; t = t->next) {
        if (!releasable(t))
            continue;
        ++*count;
        if (!best || t->run->end_ns < best->run->end_ns)
            best = t;
    }
    return best;
}

int shx_task_room(shexec_session *s)
{
    uint32_t used = slots_used(s), count;
    if (used < s->max_tasks)
        return 1;
    (void)oldest_releasable(s, &count);
    if (used - count >= s->max_tasks)
        return 0; /* releasing would not be enough: release nothing */
    for (; used >= s->max_tasks; used--) {
        shexec_task *t = oldest_releasable(s, &count);
        if (!t) /* cannot happen: count said there are enough */
            return 0;
        memcpy(s->released[s->released_next % SHX_RELEASED_IDS], t->id, sizeof t->id);
        s->released_next++;
        /* unreachable by id from now on, and on its way out (so no longer
         * holding a slot): freed as if from a callback */
        t->id[0] = '\0';
        t->free_pending = 1;
    }
    /* Inside the loop the round may still hold them: the end of the round
     * frees them (shx_release_deferred). Outside it nothing does. */
    if (!s->loop.in_loop) {
        for (shexec_task *t = s->tasks, *next; t; t = next) {
            next = t->next;
            if (t->free_pending && t->run->state != SHEXEC_STATE_RUNNING)
                shexec_task_free(t);
        }
    }
    return 1;
}

int shx_task_was_released(const shexec_session *s, const char *id)
{
    for (size_t i = 0; i < SHX_RELEASED_IDS; i++)
        if (s->released[i][0] && strcmp(s->released[i], id) == 0)
            return 1;
    return 0;
}

/* A task freed from a callback stays linked until it is released, but it
 * is the host's no more: it is not found. */
shexec_task *shx_task_find(shexec_session *s, const char *id)
{
    for (shexec_task *t = s->tasks; t; t = t->next)
        if (t->id[0] && !t->free_pending && !t->withdrawn && strcmp(t->id, id) == 0)
            return t;
    return NULL;
}

/* A fresh random id, unique in the session. */
static int assign_id(shexec_session *s, shexec_task *t)
{
    for (int tries = 0; tries < 16; tries++) {
        unsigned long long r;
        if (shx_random64(&r) != 0)
            return shx_fail(s, SHEXEC_ESYS, "no randomness available for a task id");
        char id[sizeof t->id];
        (void)snprintf(id, sizeof id, "t%012llx", r & 0xffffffffffffull);
        if (!shx_task_find(s, id) && !shx_task_was_released(s, id)) {
            memcpy(t->id, id, sizeof id);
            return SHEXEC_OK;
        }
    }
    return shx_fail(s, SHEXEC_ESYS, "could not draw a unique task id");
}

int shx_task_adopt_leftovers(shexec_session *s, shexec_run *r, shexec_run **adopted)
{
    shexec_task *t = NULL;
    *adopted = NULL;
    if (s->leftovers_policy != SHEXEC_ON_LEFTOVERS_ADOPT || !shx_task_room(s) ||
        shx_task_adopt(s, r, &t) != SHEXEC_OK)
        return 0;
    r->leftovers = SHEXEC_LEFTOVERS_ADOPTED;
    r->leftover_task = strdup(t->id);
    *adopted = t->run;
    return 1;
}

/* A task's run ended in the last round: the host's done callback. */
static void task_run_finished(void *ctx)
{
    shexec_run *r = ctx;
    shexec_task *t = r->task;
    if (t && t->done_fn)
        t->done_fn(t->done_user, t);
}

int shx_task_adopt(shexec_session *s, shexec_run *from, shexec_task **out)
{
    *out = NULL;
    shexec_task *t = calloc(1, sizeof *t);
    if (!t)
        return SHEXEC_ENOMEM;
    if (shx_run_alloc(&t->run, s, from->command, from->command_len) != SHEXEC_OK ||
        assign_id(s, t) != SHEXEC_OK) {
        if (t->run)
            shx_run_release(t->run);
        free(t);
        return SHEXEC_ENOMEM;
    }
    shexec_run *r = t->run;
    t->s = s;
    r->task = t;
    r->job.follows_leftovers = 1;
    r->job.on_finished = task_run_finished;
    r->state = SHEXEC_STATE_RUNNING;
    r->job.hangup_checks = from->job.hangup_checks;
    r->job.hangup_check_ns = from->job.hangup_check_ns;
    r->start_ns = shx_now_ns();
    shx_quiet_start(&r->job, r->start_ns); /* its quiet counts from here (no looks) */
    shx_proc_looks_from(&r->job.proc, r->start_ns);
    /* the pipes move to the task: later output is the leftovers' */
    shx_stream_init(&r->job.out, SHEXEC_STDOUT, from->job.out.fd, NULL, from->job.out.capture.limit,
                    from->job.out.capture.unit, from->job.out.capture.keep_arg, NULL, NULL);
    shx_stream_init(&r->job.err, SHEXEC_STDERR, from->job.err.fd, NULL, from->job.err.capture.limit,
                    from->job.err.capture.unit, from->job.err.capture.keep_arg, NULL, NULL);
    shx_stream_enable_fresh(&r->job.out);
    shx_stream_enable_fresh(&r->job.err);
    /* the leftovers' output is the command's: hidden as its was */
    r->notice_first = from->notice_first;
    shx_streams_attach(&r->job.out, &r->job.err, s->spill,
                       from->job.out.redact_on ? from->job.out.redact.set : NULL);
    /* what the command's last bytes began, the leftovers' first may end */
    shx_stream_hand_redaction(&from->job.out, &r->job.out);
    shx_stream_hand_redaction(&from->job.err, &r->job.err);
    from->job.out.fd = from->job.err.fd = -1;
    shx_proc_adopt_group(&r->job.proc, &from->job.proc, s->loop.jobs.use_pidfd);
    link_task(s, t);
    *out = t; /* the caller adds t->run to the loop */
    return SHEXEC_OK;
}

static const char *const yield_why[] = {"", "its yield time passed", "its timeout passed",
                                        "its idle timeout passed", "it waits for input"};

int shx_task_from_yield(shexec_session *s, shexec_run *r)
{
    shx_quiet *q = &r->job.quiet;
    int why = q->yield ? q->yield : SHEXEC_YIELD_TIME;
    shexec_task *t = NULL;
    r->reserves_slot = 0; /* the slot it kept is the one it takes now */
    if (shx_task_room(s) && (t = calloc(1, sizeof *t)) && assign_id(s, t) == SHEXEC_OK) {
        t->s = s;
        t->run = r;
        r->task = t;
        r->task_run_held = 1;
        r->yielded = why;
        r->job.follows_leftovers = 1;
        r->job.on_finished = task_run_finished;
        q->yield = 0;
        q->can_yield = 0;
        if (why == SHEXEC_YIELD_IDLE)
            q->idle_ns = 0; /* it yielded for that: in the background it runs on */
        shx_stream_enable_fresh(&r->job.out);
        shx_stream_enable_fresh(&r->job.err);
        shx_run_unlink(s, r);
        link_task(s, t);
        if (r->notice.len)
            shx_buf_puts(&r->notice, "; ");
        shx_buf_printf(&r->notice, "moved to the background as task %s after %lld ms (%s); "
                       "the cwd and shell state it reports when it ends are not taken", t->id,
                       (long long)((shx_now_ns() - r->start_ns) / 1000000), yield_why[why]);
        return SHEXEC_OK;
    }
    free(t);
    if (why == SHEXEC_YIELD_TIMEOUT)
        r->job.proc.deadline_ns = shx_now_ns(); /* ended as at its timeout */
    q->yield = 0;
    q->can_yield = 0;
    if (r->notice.len)
        shx_buf_puts(&r->notice, "; ");
    shx_buf_printf(&r->notice, "not moved to the background (%s): the session holds its maximum "
                   "of %u tasks", yield_why[why], s->max_tasks);
    return SHEXEC_ELIMIT;
}

int shx_task_prepare(shexec_task **out, shexec_session *s, shexec_run *run)
{
    *out = NULL;
    if (run->state != SHEXEC_STATE_NEW || run->task || run->free_pending)
        return shx_fail(s, SHEXEC_ESTATE, "the run has already been started");
    /* before making room: a start from a callback fails anyway */
    if (s->loop.in_loop)
        return shx_fail(s, SHEXEC_ESTATE, "cannot start a task from a callback");
    if (!shx_task_room(s)) {
        int running = shx_task_live_count(s);
        uint32_t kept = 0;
        for (const shexec_run *r = s->runs; r; r = r->next)
            kept += shx_run_reserves_slot(r) ? 1 : 0;
        return shx_fail(s, SHEXEC_ELIMIT,
                        "the session already holds its maximum of %u tasks (%d running, %u "
                        "finished but not yet freed%s)",
                        s->max_tasks, running, slots_used(s) - (uint32_t)running - kept,
                        kept ? ", and a slot kept for each command started with a yield time "
                               "that may still go on as a task" : "");
    }
    shexec_task *t = calloc(1, sizeof *t);
    if (!t)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    t->s = s;
    t->run = run;
    t->host_held = 1; /* the caller has the pointer */
    int rc = assign_id(s, t);
    if (rc != SHEXEC_OK) {
        free(t);
        return rc;
    }
    run->task = t;
    run->job.follows_leftovers = 1;
    run->job.on_finished = task_run_finished;
    *out = t;
    return SHEXEC_OK;
}

void shx_task_started(shexec_task *t)
{
    shx_run_unlink(t->s, t->run); /* the task's now: freed with it */
    link_task(t->s, t);
}

void shx_task_abandon(shexec_task *t)
{
    shexec_run *run = t->run;
    run->task = NULL;
    run->job.follows_leftovers = 0;
    run->job.on_finished = NULL;
    free(t);
}

SHEXEC_API shexec_run *shexec_task_run(const shexec_task *t)
{
    return t ? t->run : NULL;
}

SHEXEC_API const char *shexec_task_id(const shexec_task *t)
{
    return t ? t->id : "";
}

SHEXEC_API int shexec_session_take_task(shexec_task **out, shexec_session *s, const char *id)
{
    if (out)
        *out = NULL;
    if (!s || !id || !out)
        return SHEXEC_EINVAL;
    shx_ok(s);
    shexec_task *t = shx_task_find(s, id);
    if (!t && shx_task_was_released(s, id))
        return shx_fail(s, SHEXEC_ENOTASK,
                        "task \"%.64s\" finished and was released unread (retention limit)", id);
    if (!t)
        return shx_fail(s, SHEXEC_ENOTASK, "no task with id \"%.64s\"", id);
    t->host_held = 1; /* the host has the pointer now: never released for room */
    *out = t;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_task_set_done_fn(shexec_task *t, shexec_task_done_fn fn, void *user)
{
    if (!t)
        return SHEXEC_EINVAL;
    shx_ok(t->s);
    if (t->run->state != SHEXEC_STATE_RUNNING || t->free_pending)
        return shx_fail(t->s, SHEXEC_ESTATE, "the task has finished");
    t->done_fn = fn;
    t->done_user = user;
    return SHEXEC_OK;
}

SHEXEC_API void shexec_task_free(shexec_task *t)
{
    /* From inside the loop a free under way (deferred, or waiting below for
     * the task to end) is not started again. Outside it, a deferred free
     * that has not happened yet (the task was still running) happens now. */
    if (!t || (t->free_pending && t->s && t->s->loop.in_loop))
        return;
    t->free_pending = 1;
    t->done_fn = NULL; /* no callback for a task being freed */
    shx_run_detach(t->run);
    if (t->s && t->s->loop.in_loop) {
        /* from a callback: the loop round, or a frame waiting for this
         * task, may still hold it; released once it has ended */
        if (t->run->state == SHEXEC_STATE_RUNNING)
            shx_run_terminate(t->run, SHX_END_KILL, shx_now_ns());
        return;
    }
    shx_task_release(t);
}

/* A yielded run whose handle the host still holds outlives its task: ended,
 * it goes back to the session's runs, for the host's shexec_run_free(). */
static int keep_held_run(shexec_task *t)
{
    shexec_run *r = t->run;
    if (!r->task_run_held)
        return 0;
    shx_run_end(r); /* a task's: KILL, as before its task goes */
    r->task = NULL;
    r->task_run_held = 0;
    r->job.on_finished = NULL;
    if (r->s)
        shx_run_link(r->s, r);
    return 1;
}

void shx_task_release(shexec_task *t)
{
    if (!keep_held_run(t))
        shx_run_release(t->run); /* a running task: holds it while it is ended */
    if (t->s)
        unlink_task(t->s, t);
    shx_buf_free(&t->read_out[0]);
    shx_buf_free(&t->read_out[1]);
    free(t);
}

/* ---- what becomes of the processes a command leaves ---------------------- */

SHEXEC_API int shexec_session_set_on_leftovers(shexec_session *s, int policy)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    if (policy != SHEXEC_ON_LEFTOVERS_ADOPT && policy != SHEXEC_ON_LEFTOVERS_KILL)
        return shx_fail(s, SHEXEC_EINVAL, "unknown leftovers policy %d", policy);
    s->leftovers_policy = policy;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_set_leftovers_drain_ms(shexec_session *s, uint32_t ms)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    if (ms > SHEXEC_MAX_LEFTOVERS_DRAIN_MS)
        return shx_fail(s, SHEXEC_EINVAL, "the drain of leftovers' output is at most %u ms, not %u",
                        SHEXEC_MAX_LEFTOVERS_DRAIN_MS, ms);
    s->loop.jobs.drain_ms = ms;
    return SHEXEC_OK;
}
