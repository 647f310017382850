/*
 * result.c - what a run tells, while it runs and once it has ended: its
 * state, exit code and signal, its captured output (rendered once final),
 * totals and truncation, duration, pid and timeout, what became of its
 * leftovers, and what the library declined for it.
 */
#include "run/result.h"
#include "run/run.h"
#include "stream/stream.h"
#include "stream/capture.h"
#include "stream/notice.h"
#include "output/output_hook.h"
#include "shx/base.h"

/* the run has finished: every state after RUNNING is final */
static int finished(const shexec_run *run)
{
    return run && run->state != SHEXEC_STATE_NEW && run->state != SHEXEC_STATE_RUNNING;
}

SHEXEC_API int shexec_run_state(const shexec_run *run)
{
    return run ? run->state : SHEXEC_STATE_NEW;
}

SHEXEC_API int shexec_run_exit_code(const shexec_run *run)
{
    /* a shell that exited in its TERM trap after a timeout or cancel still
     * did not end the run by exiting: one rule, the state decides */
    return run && run->state == SHEXEC_STATE_EXITED ? run->job.proc.exit_code : -1;
}

SHEXEC_API int shexec_run_signal(const shexec_run *run)
{
    return run && finished(run) ? run->job.proc.term_signal : 0;
}

static shx_stream *stream_of(shexec_run *run, int stream)
{
    if (!run || run->state == SHEXEC_STATE_NEW)
        return NULL;
    if (stream == SHEXEC_STDOUT)
        return &run->job.out;
    if (stream == SHEXEC_STDERR)
        return &run->job.err;
    return NULL;
}

SHEXEC_API const char *shexec_run_output(shexec_run *run, int stream, size_t *len)
{
    return shx_run_rendered(run, stream, len);
}

const char *shx_run_rendered(shexec_run *run, int stream, size_t *len)
{
    shx_stream *st = stream_of(run, stream);
    if (len)
        *len = 0;
    if (!st)
        return "";
    int i = stream - 1;
    if (!finished(run))
        shx_stream_flush_strip(st); /* show a pending prompt line */
    /* while running the text keeps changing; once done it is rendered once */
    if (!run->rendered_valid[i]) {
        shx_buf full = SHX_BUF_INIT;
        shx_spill_describe(&st->spill, &full);
        int rc = shx_capture_render(&st->capture, &run->rendered[i], run->notice_first,
                                    full.len ? full.data : NULL);
        shx_buf_free(&full);
        if (rc != 0)
            return "";
        run->rendered_valid[i] = finished(run);
    }
    if (len)
        *len = run->rendered[i].len;
    return run->rendered[i].data ? run->rendered[i].data : "";
}

SHEXEC_API uint64_t shexec_run_output_total(const shexec_run *run, int stream)
{
    shx_stream *st = stream_of((shexec_run *)run, stream);
    return st ? st->capture.total_bytes : 0;
}

/* What the rendered output shows of a stream: with the notice inside the
 * limit, less than the capture kept (the notice, spill clause included,
 * decides how much less). */
static int shown(const shexec_run *run, shx_stream *st, shx_capture_view *v)
{
    shx_buf full = SHX_BUF_INIT;
    if (st->capture.within)
        shx_spill_describe(&st->spill, &full);
    int rc = shx_capture_view_of(&st->capture, run->notice_first, full.len ? full.data : NULL, v);
    shx_buf_free(&full);
    return rc;
}

SHEXEC_API int shexec_run_output_counts(const shexec_run *run, int stream, uint64_t *kept_chars,
                                        uint64_t *kept_bytes, uint64_t *total_chars,
                                        uint64_t *total_bytes)
{
    shx_stream *st = stream_of((shexec_run *)run, stream);
    const shx_capture *c = st ? &st->capture : NULL;
    shx_capture_view v = {0};
    if (c && shown(run, st, &v) != 0)
        return SHEXEC_ENOMEM;
    if (kept_chars)
        *kept_chars = c ? v.head_chars + v.tail_chars : 0;
    if (kept_bytes)
        *kept_bytes = c ? v.head_len + v.tail_len : 0;
    if (total_chars)
        *total_chars = c ? c->total_chars : 0;
    if (total_bytes)
        *total_bytes = c ? c->total_bytes : 0;
    return c ? SHEXEC_OK : SHEXEC_EINVAL;
}

SHEXEC_API uint64_t shexec_run_output_lines(const shexec_run *run, int stream)
{
    shx_stream *st = stream_of((shexec_run *)run, stream);
    return st ? shx_capture_lines(&st->capture) : 0;
}

SHEXEC_API int shexec_run_spill(const shexec_run *run, int stream, const char **path,
                                uint64_t *bytes, int *error)
{
    const shx_stream *st = stream_of((shexec_run *)run, stream);
    int state = st ? st->spill.state : SHEXEC_SPILL_NONE;
    if (path)
        *path = state == SHEXEC_SPILL_NONE || state == SHEXEC_SPILL_FAILED ? NULL : st->spill.path;
    if (bytes)
        *bytes = st && state != SHEXEC_SPILL_FAILED ? st->spill.written : 0;
    if (error) /* a CAPPED file's is EFBIG when the file-size limit cut it, else 0 */
        *error = state == SHEXEC_SPILL_FAILED || state == SHEXEC_SPILL_CAPPED ? st->spill.err : 0;
    return state;
}

SHEXEC_API uint64_t shexec_run_redactions(const shexec_run *run, int stream)
{
    const shx_stream *st = stream_of((shexec_run *)run, stream);
    return st ? shx_stream_redactions(st) : 0;
}

SHEXEC_API int shexec_run_truncated(const shexec_run *run, int stream)
{
    shx_stream *st = stream_of((shexec_run *)run, stream);
    return st ? shx_capture_truncated(&st->capture) : 0;
}

SHEXEC_API uint64_t shexec_run_duration_ms(const shexec_run *run)
{
    if (!run || run->state == SHEXEC_STATE_NEW)
        return 0;
    int64_t end = finished(run) ? run->end_ns : shx_now_ns();
    return (uint64_t)((end - run->start_ns) / 1000000);
}

SHEXEC_API int shexec_run_leftovers(const shexec_run *run, const char **task_id)
{
    if (task_id)
        *task_id = run ? run->leftover_task : NULL;
    return run ? run->leftovers : SHEXEC_LEFTOVERS_NONE;
}

SHEXEC_API const char *shexec_run_notice(const shexec_run *run)
{
    return run && run->notice.data ? run->notice.data : "";
}

SHEXEC_API uint32_t shexec_run_timeout_ms(const shexec_run *run)
{
    if (!run)
        return 0;
    if (run->state != SHEXEC_STATE_NEW || !run->s)
        return run->effective_timeout_ms;
    return shx_run_effective_timeout(run);
}

SHEXEC_API int64_t shexec_run_pid(const shexec_run *run)
{
    return run && run->state != SHEXEC_STATE_NEW ? (int64_t)run->job.proc.pid : 0;
}

SHEXEC_API int shexec_run_cost(const shexec_run *run, uint64_t *user_usec, uint64_t *system_usec,
                               uint64_t *peak_bytes)
{
    shx_proc_cost none = {0, 0, 0, 0};
    const shx_proc_cost *c = run && finished(run) ? &run->job.proc.cost : &none;
    if (user_usec)
        *user_usec = c->user_usec;
    if (system_usec)
        *system_usec = c->system_usec;
    if (peak_bytes)
        *peak_bytes = c->peak_bytes;
    return c->source == SHX_COST_CGROUP ? SHEXEC_COST_CGROUP
           : c->source == SHX_COST_RUSAGE ? SHEXEC_COST_RUSAGE : SHEXEC_COST_NONE;
}
