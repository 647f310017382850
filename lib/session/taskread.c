/*
 * taskread.c - reading what is new in a task's output (shexec_task_read(),
 * and through a yielded run's handle, shexec_run_read_new()), and what
 * that read kept of what it covered. The capture of what is new is
 * fresh.c's; a task keeps the text of its last read of each stream.
 */
#include "stream/fresh.h"
#include "session/task.h"

SHEXEC_API const char *shexec_task_read(shexec_task *t, int stream, size_t *len)
{
    if (len)
        *len = 0;
    if (!t || t->run->state == SHEXEC_STATE_NEW ||
        (stream != SHEXEC_STDOUT && stream != SHEXEC_STDERR))
        return "";
    shx_stream *st = stream == SHEXEC_STDOUT ? &t->run->job.out : &t->run->job.err;
    if (shexec_run_state(t->run) <= SHEXEC_STATE_RUNNING)
        shx_stream_flush_strip(st); /* show a pending prompt line */
    int i = stream == SHEXEC_STDOUT ? 0 : 1;
    shx_buf *out = &t->read_out[i];
    if (shx_stream_take_fresh(st, out, t->run->notice_first, &t->read_counts[i]) != 0)
        return "";
    if (len)
        *len = out->len;
    return out->data ? out->data : "";
}

SHEXEC_API const char *shexec_run_read_new(shexec_run *run, int stream, size_t *len)
{
    if (len)
        *len = 0;
    /* a run that is no task's (not yielded, or its task gone) has no mark */
    return run && run->task ? shexec_task_read(run->task, stream, len) : "";
}

SHEXEC_API int shexec_task_read_counts(const shexec_task *t, int stream, uint64_t *kept_chars,
                                       uint64_t *kept_bytes, uint64_t *total_chars,
                                       uint64_t *total_bytes)
{
    int ok = t && (stream == SHEXEC_STDOUT || stream == SHEXEC_STDERR);
    shx_capture_counts n = {0, 0, 0, 0};
    if (ok)
        n = t->read_counts[stream == SHEXEC_STDOUT ? 0 : 1];
    if (kept_chars)
        *kept_chars = n.kept_chars;
    if (kept_bytes)
        *kept_bytes = n.kept_bytes;
    if (total_chars)
        *total_chars = n.total_chars;
    if (total_bytes)
        *total_bytes = n.total_bytes;
    return ok ? SHEXEC_OK : SHEXEC_EINVAL;
}
