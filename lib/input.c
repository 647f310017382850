/*
 * input.c - a command's input: the stdin pipe a run asks for, what the
 * host writes to it (queued until the loop can write it to the pipe:
 * loop.c), the session's bound on what may wait there, and the end of
 * input. The public calls of shexec.h; the queue itself is the job's
 * (job.h).
 */
#include <unistd.h>

#include "run.h"
#include "session.h"

SHEXEC_API int shexec_run_set_stdin(shexec_run *run, int enable)
{
    int rc = shx_run_configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    run->want_stdin = enable ? 1 : 0;
    return SHEXEC_OK;
}

/* The session's bound, read at each write, so that a host may raise it
 * for a command that runs already. */
static uint64_t queue_max(const shexec_session *s)
{
    return s && s->input_queue_max ? s->input_queue_max : SHEXEC_DEFAULT_INPUT_QUEUE_MAX;
}

/*
 * Queue input for the loop to write. Bounded, it is taken whole or not at
 * all: refused (SHEXEC_ELIMIT) when input already waits and this would take
 * it past the bound, so the caller may write the same bytes again once the
 * command has read. A command that never reads then pins the bound, not
 * every write the host (or a model through it) makes. A write into an
 * empty queue is always taken: input given all at once (a file fed to
 * `sort`) is a buffer the host holds itself, and its size the host's
 * choice. End of input is not bounded: it must always get through.
 */
static int queue_input(shexec_run *r, const void *data, size_t len, int bounded)
{
    shx_ok(r->s);
    if (!data && len)
        return shx_fail(r->s, SHEXEC_EINVAL, "input is NULL");
    if (!r->want_stdin && !r->pty)
        return shx_fail(r->s, SHEXEC_EPIPE, "stdin was not enabled for this command");
    if (r->state != SHEXEC_STATE_RUNNING || r->job.stdin_fd < 0 || r->job.stdin_close)
        return shx_fail(r->s, SHEXEC_EPIPE, "the command's stdin is closed");
    size_t queued = shx_job_input_left(&r->job);
    uint64_t max = queue_max(r->s);
    if (bounded && queued > 0 && (len > max || queued > max - len))
        return shx_fail(r->s, SHEXEC_ELIMIT,
                        "the command has not read the %zu bytes of input queued for it; %zu "
                        "more would pass the bound of %llu bytes, so none of them was queued "
                        "(write them again once it has read)",
                        queued, len, (unsigned long long)max);
    if (shx_buf_append(&r->job.stdin_buf, data, len) != 0)
        return shx_fail(r->s, SHEXEC_ENOMEM, "out of memory");
    shx_quiet_activity(&r->job, shx_now_ns()); /* answered: no longer waiting */
    return SHEXEC_OK;
}

static int end_input(shexec_run *r)
{
    shx_ok(r->s);
    if (!r->want_stdin && !r->pty)
        return shx_fail(r->s, SHEXEC_EPIPE, "stdin was not enabled for this command");
    if (r->pty) /* a terminal's end of input is ^D, not a closed descriptor */
        return queue_input(r, "\x04", 1, 0);
    r->job.stdin_close = 1;
    shx_quiet_activity(&r->job, shx_now_ns());
    if (r->job.stdin_fd >= 0 && shx_job_input_left(&r->job) == 0) {
        close(r->job.stdin_fd);
        r->job.stdin_fd = -1;
    }
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_write(shexec_run *run, const void *data, size_t len)
{
    return run ? queue_input(run, data, len, 1) : SHEXEC_EINVAL;
}

SHEXEC_API int shexec_run_close_stdin(shexec_run *run)
{
    return run ? end_input(run) : SHEXEC_EINVAL;
}

SHEXEC_API int shexec_session_set_input_queue_max(shexec_session *s, uint64_t bytes)
{
    if (!s)
        return SHEXEC_EINVAL;
    if (bytes == 0)
        return shx_fail(s, SHEXEC_EINVAL, "the bound on queued input is at least 1 byte");
    shx_ok(s);
    s->input_queue_max = bytes;
    return SHEXEC_OK;
}

SHEXEC_API uint64_t shexec_session_input_queue_max(const shexec_session *s)
{
    return queue_max(s);
}
