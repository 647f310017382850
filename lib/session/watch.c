/*
 * watch.c - following a running command until it is quiet, ends, or waits
 * for input (see watch.h and shexec.h, shexec_task_watch()).
 *
 * A host that follows a long command ("no new output for N seconds") would
 * otherwise loop over waits and reads of its own, and the idle timeout
 * does not help once the command is in the background. The watch is the
 * job's quiet deadline, so the loop sleeps until it, the output or the end
 * comes, never in slices.
 */
#include "session/watch.h"

#include "shx/base.h"
#include "loop/loop.h"
#include "run/run.h"
#include "session/session.h"
#include "session/task.h"

#define MS ((int64_t)1000000)

int shx_run_watch(shexec_run *run, int64_t quiet_ns, int64_t max_ns)
{
    shexec_session *s = run->s;
    shx_quiet *q = &run->job.quiet;
    int rc = SHEXEC_OK;
    run->held++; /* a callback, or a release for room, may free its task meanwhile */
    q->watch_quiet_ns = quiet_ns;
    q->watch_from_ns = shx_now_ns();
    q->watch_fired = 0;
    q->stop_on_input = 1;
    /* what is there first: a wait found earlier stops the watch at once,
     * and output that came meanwhile must come with that answer */
    rc = shx_loop_run(&s->loop, NULL, 1, 0, NULL);
    if (rc == SHEXEC_OK && max_ns > 0 && run->state == SHEXEC_STATE_RUNNING)
        rc = shx_loop_run(&s->loop, &run->job, 0, max_ns, NULL);
    int why = run->state > SHEXEC_STATE_RUNNING          ? SHEXEC_WATCH_ENDED
              : q->input == SHEXEC_INPUT_WAITING ? SHEXEC_WATCH_INPUT
              : q->watch_fired                   ? SHEXEC_WATCH_QUIET
                                                 : SHEXEC_WATCH_TIME;
    q->watch_quiet_ns = 0;
    q->watch_fired = 0;
    q->stop_on_input = 0;
    run->held--;
    return rc != SHEXEC_OK ? rc : why;
}

SHEXEC_API int shexec_task_watch(shexec_task *t, uint32_t quiet_ms, uint32_t max_ms)
{
    if (!t || !t->s)
        return SHEXEC_EINVAL;
    shexec_session *s = t->s;
    if (s->loop.in_loop)
        return shx_fail(s, SHEXEC_ESTATE, "shexec_task_watch called from a callback");
    shx_ok(s);
    if (t->free_pending)
        return shx_fail(s, SHEXEC_ESTATE, "the task has been freed");
    int why = shx_run_watch(t->run, (int64_t)quiet_ms * MS, (int64_t)max_ms * MS);
    if (t->free_pending) {
        /* a callback freed it while we held it: its release happens now,
         * and the caller must not look at it again */
        shx_release_deferred(s);
        return shx_fail(s, SHEXEC_ESTATE, "the task was freed by a callback while it was watched");
    }
    return why;
}

SHEXEC_API uint64_t shexec_run_quiet_ms(const shexec_run *run)
{
    if (!run || run->state == SHEXEC_STATE_NEW)
        return 0;
    int64_t until = run->state == SHEXEC_STATE_RUNNING ? shx_now_ns() : run->end_ns;
    int64_t since = run->job.quiet.output_ns;
    return until > since ? (uint64_t)((until - since) / MS) : 0;
}
