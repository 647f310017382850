/*
 * longrun.c - the settings of a run that outlives its call (see longrun.h
 * and shexec.h, LONG-RUNNING AND INTERACTIVE COMMANDS), and what its
 * results say of it: whether it was yielded, which deadline ended it,
 * whether it waits for input and with what prompt.
 */
#include "run/longrun.h"

#include "run/run.h"
#include "session/session.h"
#include "session/task.h"

#define MS ((int64_t)1000000)

static int check_action(shexec_session *s, int action)
{
    if (action != SHEXEC_IDLE_END && action != SHEXEC_IDLE_YIELD)
        return shx_fail(s, SHEXEC_EINVAL, "unknown idle timeout action %d", action);
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_set_yield_ms(shexec_run *run, uint32_t ms)
{
    int rc = shx_run_configurable(run);
    if (rc == SHEXEC_OK)
        run->yield_ms = ms;
    return rc;
}

SHEXEC_API int shexec_session_set_idle_timeout_ms(shexec_session *s, uint32_t ms, int action)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    int rc = check_action(s, action);
    if (rc == SHEXEC_OK) {
        s->idle_ms = ms;
        s->idle_action = action;
    }
    return rc;
}

SHEXEC_API int shexec_run_set_idle_timeout_ms(shexec_run *run, uint32_t ms, int action)
{
    int rc = shx_run_configurable(run);
    if (rc == SHEXEC_OK)
        rc = check_action(run->s, action);
    if (rc == SHEXEC_OK) {
        run->idle_set = 1;
        run->idle_ms = ms;
        run->idle_action = action;
    }
    return rc;
}

SHEXEC_API uint32_t shexec_session_idle_timeout_ms(const shexec_session *s, int *action)
{
    if (action)
        *action = s ? s->idle_action : SHEXEC_IDLE_END;
    return s ? s->idle_ms : 0;
}

SHEXEC_API int shexec_session_set_background_on_timeout(shexec_session *s, uint32_t cap_ms)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    s->background_cap_ms = cap_ms;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_set_background_on_timeout(shexec_run *run, uint32_t cap_ms)
{
    int rc = shx_run_configurable(run);
    if (rc == SHEXEC_OK) {
        run->background_set = 1;
        run->background_cap_ms = cap_ms;
    }
    return rc;
}

SHEXEC_API uint32_t shexec_session_background_on_timeout(const shexec_session *s)
{
    return s ? s->background_cap_ms : 0;
}

SHEXEC_API int shexec_session_set_input_look_ms(shexec_session *s, uint32_t ms)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    s->input_look_ms = ms;
    return SHEXEC_OK;
}

SHEXEC_API uint32_t shexec_session_input_look_ms(const shexec_session *s)
{
    return s ? s->input_look_ms : SHEXEC_DEFAULT_INPUT_LOOK_MS;
}

SHEXEC_API int shexec_run_set_input_fn(shexec_run *run, shexec_input_fn fn, void *user)
{
    if (!run)
        return SHEXEC_EINVAL;
    shx_ok(run->s);
    run->input_fn = fn;
    run->input_user = user;
    return SHEXEC_OK;
}

/* The job found its command waiting for input: the host's callback. */
static void input_found(void *ctx)
{
    shexec_run *r = ctx;
    if (r->input_fn && !r->free_pending)
        r->input_fn(r->input_user, r);
}

void shx_longrun_start(shexec_run *r)
{
    shexec_session *s = r->s;
    shx_quiet *q = &r->job.quiet;
    uint32_t idle = r->idle_set ? r->idle_ms : s->idle_ms;
    q->idle_ns = idle * MS;
    q->idle_yields = (r->idle_set ? r->idle_action : s->idle_action) == SHEXEC_IDLE_YIELD;
    uint32_t cap = r->background_set ? r->background_cap_ms : s->background_cap_ms;
    q->lifetime_ns = cap * MS;
    q->yield_on_input = r->yield_ms > 0;
    q->can_yield = !r->task; /* a task is in the background already */
    q->yield_at_ns = r->yield_ms ? r->start_ns + (int64_t)r->yield_ms * MS : 0;
    /* a pipe run without stdin reads /dev/null: nothing of it can wait for
     * the host, and no look is due (nor the wake-up one would cost) */
    q->look_after_ns = r->job.pty || r->job.stdin_fd >= 0 ? s->input_look_ms * MS : 0;
    q->on_input = input_found;
    shx_quiet_start(&r->job, r->start_ns);
}

SHEXEC_API int shexec_run_input_wait(const shexec_run *run, const char **prompt,
                                     size_t *prompt_len, int *echo_off)
{
    int state = run ? run->job.quiet.input : SHEXEC_INPUT_NO;
    int waiting = state == SHEXEC_INPUT_WAITING;
    if (prompt) {
        size_t len = 0;
        *prompt = waiting ? shx_stream_tail(run->job.last_stream == SHEXEC_STDERR ? &run->job.err
                                                                                  : &run->job.out,
                                            &len)
                          : NULL;
        if (prompt_len)
            *prompt_len = len;
    } else if (prompt_len) {
        *prompt_len = 0;
    }
    if (echo_off)
        *echo_off = waiting && run->job.quiet.echo_off;
    return state;
}

SHEXEC_API int shexec_run_yielded(const shexec_run *run, const char **task_id)
{
    int why = run ? run->yielded : SHEXEC_YIELD_NONE;
    if (task_id)
        *task_id = why && run->task ? run->task->id : NULL;
    return why;
}

SHEXEC_API int shexec_run_deadline(const shexec_run *run)
{
    if (!run || run->state != SHEXEC_STATE_TIMED_OUT)
        return SHEXEC_DEADLINE_NONE;
    return run->job.proc.end_reason == SHX_END_IDLE ? SHEXEC_DEADLINE_IDLE
                                                     : SHEXEC_DEADLINE_TIMEOUT;
}
