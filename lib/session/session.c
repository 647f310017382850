/*
 * session.c - the session handle: its life (new, free: every command of it
 * stopped and reaped) and the calls that pump its loop (wait, and
 * pollfds/process for a host's own loop), and the watchdog attached to it.
 * It installs in its loop (loop.h) the leftovers policy (task.c's) a
 * foreground run's ending asks, and the release of what was freed from a
 * callback at the end of each loop round. Settings are settings.c's.
 */
#include "session/session.h"
#include "output/output_hook.h"
#include "contain/contain_hook.h"

#include <poll.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "shx/platform.h"
#include "session/settings.h"
#include "shell/channels.h"
#include "run/run.h"
#include "session/task.h"
#include "loop/loop.h"

_Static_assert(offsetof(struct shexec_session, base) == 0,
               "base.c reaches its part of a session through the session pointer");

/* Release the tasks freed from a callback that have ended and that no
 * frame holds any more. */
static void release_deferred_tasks(shexec_session *s)
{
    /* releasing a finished task runs no loop: `next` stays valid */
    for (shexec_task *t = s->tasks, *next; t; t = next) {
        next = t->next;
        if (t->free_pending && t->run->state != SHEXEC_STATE_RUNNING && !t->run->held)
            shx_task_release(t);
    }
}

/* Release r if it was freed from a callback, has ended and no frame holds
 * it any more: 1 when it was. */
static int release_if_deferred(shexec_session *s, shexec_run *r)
{
    if (!r->free_pending || r->state == SHEXEC_STATE_RUNNING || r->held)
        return 0;
    shx_run_unlink(s, r);
    shx_run_release(r);
    return 1;
}

void shx_release_deferred(shexec_session *s)
{
    release_deferred_tasks(s);
    for (shexec_run *r = s->runs, *next; r; r = next) {
        next = r->next;
        (void)release_if_deferred(s, r);
    }
}

/* The loop's end of a round: nothing holds run or task pointers. Runs and
 * tasks freed from a callback are released, and runs the host started whose
 * yield came this round go to the background (a frame waiting on its run,
 * shexec_run_exec(), hands it over itself), in one walk of the runs:
 * releasing a run frees no task slot (only a running run reserves one), so
 * no yield depends on the releases after it. The tasks go first: a yield
 * that makes room marks finished ones to release, at the next round's end,
 * as before. */
static void round_end(void *ctx)
{
    shexec_session *s = ctx;
    release_deferred_tasks(s);
    for (shexec_run *r = s->runs, *next; r; r = next) {
        next = r->next;
        if (!release_if_deferred(s, r) && r->job.quiet.yield && !r->held && !r->free_pending &&
            r->state == SHEXEC_STATE_RUNNING)
            (void)shx_task_from_yield(s, r);
    }
}

/* The loop's leftovers policy for a foreground run's job: task.c's. */
static shx_job *adopt_leftovers(void *ctx, shx_job *from)
{
    shexec_run *adopted = NULL;
    if (!shx_task_adopt_leftovers(ctx, shx_run_of(from), &adopted))
        return NULL;
    return &adopted->job;
}

SHEXEC_API int shexec_session_new(shexec_session **out)
{
    if (!out)
        return SHEXEC_EINVAL;
    *out = NULL;
    shexec_session *s = calloc(1, sizeof *s);
    if (!s)
        return SHEXEC_ENOMEM;
    s->loop.jobs.use_pidfd = shx_pidfd_compiled(); /* and the kernel may still have none */
    s->loop.jobs.adopt_leftovers = adopt_leftovers;
    s->loop.jobs.ctx = s;
    s->loop.round_end = round_end;
    s->loop.round_end_ctx = s;
    s->loop.errs = s;
    int rc = shx_settings_init(s);
    if (rc != SHEXEC_OK) {
        shx_settings_free(s);
        shx_buf_free(&s->base.errmsg);
        free(s);
        return rc;
    }
    /* a cgroup per command where one can be made, else process groups */
    (void)shexec_session_set_containment(s, "auto");
    shx_ok(s);
    *out = s;
    return SHEXEC_OK;
}

SHEXEC_API void shexec_session_free(shexec_session *s)
{
    if (!s || s->loop.in_loop) /* from a callback: refused, the loop still uses s */
        return;
    int64_t now = shx_now_ns();
    for (shx_job *j = s->loop.active; j; j = j->next_active)
        shx_run_terminate(shx_run_of(j), shx_run_of(j)->task ? SHX_END_KILL : SHX_END_CANCEL, now);
    while (s->loop.active)
        if (shx_loop_run(&s->loop, NULL, 0, -1, NULL) != SHEXEC_OK)
            break;
    while (s->tasks)
        shexec_task_free(s->tasks);
    for (shexec_run *r = s->runs, *next; r; r = next) {
        next = r->next;
        if (r->free_pending) { /* freed from a callback: its free was deferred */
            r->s = NULL;
            shx_run_release(r);
        } else {
            r->s = NULL;
            r->job.proc.observer = NULL;
        }
    }
    shx_watchdog_free(s->watchdog); /* every command is over: it exits without signalling */
    shx_contain_free(s->contain, SHX_CONTAIN_FREE_WAIT_MS);
    shx_prelude_kept_free(s->prelude_kept);
    shx_prelude_kept_free(s->prelude_quiet);
    if (s->spill) /* the spill files go, unless kept (output_hook.h) */
        shx_spill_dir_release(s->spill);
    shx_redact_cfg_free(&s->redact);
    shx_settings_free(s);
    shx_buf_free(&s->base.errmsg);
    free(s);
}

SHEXEC_API int shexec_session_wait(shexec_session *s, int32_t timeout_ms)
{
    if (!s)
        return SHEXEC_EINVAL;
    if (s->loop.in_loop)
        return shx_fail(s, SHEXEC_ESTATE, "shexec_session_wait called from a callback");
    shx_ok(s);
    if (!s->loop.active)
        return 0;
    int finished = 0;
    int rc = shx_loop_run(&s->loop, NULL, 1, timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000, &finished);
    return rc != SHEXEC_OK ? rc : finished;
}

SHEXEC_API int shexec_session_pollfds(struct pollfd *fds, uint32_t cap, int32_t *timeout_ms,
                                      shexec_session *s)
{
    if (!s || !timeout_ms || (!fds && cap))
        return SHEXEC_EINVAL;
    if (s->loop.in_loop)
        return shx_fail(s, SHEXEC_ESTATE, "shexec_session_pollfds called from a callback");
    shx_ok(s);
    int64_t next;
    size_t n = shx_loop_collect(&s->loop, fds, NULL, cap, &next);
    if (next < 0)
        *timeout_ms = -1;
    else {
        int64_t d = next - shx_now_ns();
        int64_t ms = d <= 0 ? 0 : (d + 999999) / 1000000;
        *timeout_ms = ms > INT32_MAX ? INT32_MAX : (int32_t)ms;
    }
    return n > INT32_MAX ? INT32_MAX : (int)n;
}

/* A host entry with events, by descriptor. */
typedef struct ready_fd {
    int fd;
    short revents;
} ready_fd;

static int by_fd(const void *a, const void *b)
{
    int x = ((const ready_fd *)a)->fd, y = ((const ready_fd *)b)->fd;
    return (x > y) - (x < y);
}

SHEXEC_API int shexec_session_process(shexec_session *s, const struct pollfd *fds, uint32_t n)
{
    if (!s || (!fds && n))
        return SHEXEC_EINVAL;
    if (s->loop.in_loop)
        return shx_fail(s, SHEXEC_ESTATE, "shexec_session_process called from a callback");
    shx_ok(s);
    s->loop.in_loop = 1;
    /* match the host's entries against the current set by descriptor: the
     * host's entries with events, sorted, are searched (the host's array
     * and ours may both hold thousands) */
    int64_t next;
    size_t have = shx_loop_collect(&s->loop, NULL, NULL, 0, &next);
    size_t nready = 0;
    for (uint32_t j = 0; j < n; j++)
        nready += fds[j].revents != 0;
    struct pollfd *cur = have ? malloc(have * sizeof *cur) : NULL;
    shx_fd_owner *own = have ? malloc(have * sizeof *own) : NULL;
    ready_fd *ready = have && nready ? malloc(nready * sizeof *ready) : NULL;
    if (have && (!cur || !own || (nready && !ready))) {
        free(cur);
        free(own);
        free(ready);
        s->loop.in_loop = 0;
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    }
    if (ready) {
        size_t k = 0;
        for (uint32_t j = 0; j < n; j++)
            if (fds[j].revents)
                ready[k++] = (ready_fd){fds[j].fd, fds[j].revents};
        qsort(ready, nready, sizeof *ready, by_fd);
    }
    if (have)
        have = shx_loop_collect(&s->loop, cur, own, have, &next);
    for (size_t i = 0; i < have; i++) {
        ready_fd key = {cur[i].fd, 0};
        const ready_fd *hit = ready ? bsearch(&key, ready, nready, sizeof *ready, by_fd) : NULL;
        cur[i].revents = 0;
        if (hit)
            cur[i].revents = hit->revents;
    }
    shx_loop_dispatch(&s->loop, cur, own, have);
    shx_loop_enforce(&s->loop);
    int finished = shx_loop_settle(&s->loop, 0);
    free(cur);
    free(own);
    free(ready);
    s->loop.in_loop = 0;
    round_end(s);
    return finished;
}

/* What a watchdog is told as it starts: the processes running now. */
static void replay_running(void *ctx)
{
    shexec_session *s = ctx;
    for (const shx_job *j = s->loop.active; j; j = j->next_active)
        shx_proc_replay(&j->proc);
}

SHEXEC_API int shexec_session_set_watchdog(shexec_session *s, int on)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    if (!on) {
        s->proc_observer = (shx_proc_observer){NULL, NULL};
        shx_watchdog_free(s->watchdog);
        s->watchdog = NULL;
        return SHEXEC_OK;
    }
    if (!SHX_WITH_WATCHDOG)
        return shx_fail(s, SHEXEC_ESYS, "this build of the library has no watchdog (WATCHDOG=0)");
    if (!s->watchdog) {
        s->watchdog = shx_watchdog_new(s, s->loop.jobs.kill_grace_ms, replay_running, s);
        if (!s->watchdog)
            return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        s->proc_observer = (shx_proc_observer){shx_watchdog_observe, s->watchdog};
        if (s->contain && shx_watchdog_set_cgroup(s->watchdog, shx_contain_dir(s->contain)) != SHEXEC_OK) {
            s->proc_observer = (shx_proc_observer){NULL, NULL};
            shx_watchdog_free(s->watchdog);
            s->watchdog = NULL;
            return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        }
    }
    int rc = shx_watchdog_start(s->watchdog);
    if (rc != SHEXEC_OK) {
        s->proc_observer = (shx_proc_observer){NULL, NULL};
        shx_watchdog_free(s->watchdog);
        s->watchdog = NULL;
    }
    return rc;
}

SHEXEC_API int shexec_session_set_containment(shexec_session *s, const char *parent)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    if (s->loop.in_loop)
        return shx_fail(s, SHEXEC_ESTATE, "cannot change containment from an output callback");
    if (s->loop.active)
        return shx_fail(s, SHEXEC_ESTATE, "cannot change containment while commands run "
                        "(runs, tasks or adopted leftovers)");
    int off = !parent || !*parent || strcmp(parent, "off") == 0;
    if (!off && parent[0] != '/' && strcmp(parent, "auto") != 0)
        return shx_fail(s, SHEXEC_EINVAL, "containment is \"auto\", \"off\" or an absolute "
                        "cgroup directory, not \"%s\"", parent);
    shx_contain *made = NULL;
    const char *why = "turned off";
    if (!off && shx_contain_new(&made, parent, &why) != 0 && strcmp(parent, "auto") != 0)
        return shx_fail(s, SHEXEC_ESYS, "cannot hold commands in cgroups under %s: %s", parent,
                        why);
    /* "auto" where no cgroup can be made: process groups, and why */
    shx_contain_free(s->contain, SHX_CONTAIN_FREE_WAIT_MS);
    s->contain = made;
    s->contain_why = made ? NULL : why;
    return s->watchdog ? shx_watchdog_set_cgroup(s->watchdog, made ? shx_contain_dir(made) : NULL)
                       : SHEXEC_OK;
}
