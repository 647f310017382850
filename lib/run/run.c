/*
 * run.c - the run handle: one command (foreground, or the engine of a
 * task), its settings, its results, and its exit policy (the final state,
 * the working directory it reported). Starting it is start.c's; driving
 * it, the loop's; its input, input.c's.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "persist/persist_hook.h"
#include "shx/platform.h"
#include "spawn/pty.h"
#include "session/session.h"
#include "session/settings.h"
#include "shell/channels.h"
#include "contain/contain_hook.h"
#include "run/cwd.h"
#include "loop/ending.h"
#include "run/run.h"
#include "loop/proc.h"
#include "shell/record.h"
#include "stream/stream.h"
#include "loop/loop.h"
#include "loop/group.h"

void shx_run_link(shexec_session *s, shexec_run *r)
{
    r->next = s->runs;
    if (s->runs)
        s->runs->prev = r;
    s->runs = r;
}

void shx_run_unlink(shexec_session *s, shexec_run *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else if (s->runs == r)
        s->runs = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

/* The report channel is readable: the shell's report goes to its record
 * as it comes (a round reads 1 MiB at most), so it never waits for long;
 * once the job ended, the rest, and the channel is closed (what follows
 * the report came from processes the shell left, read only to reach it). */
static void report_readable(void *ctx)
{
    shexec_run *r = ctx;
    int ended = r->job.ended;
    if (shx_report_take(&r->report, &r->record, ended ? (size_t)SHX_RECORD_MAX + (32u << 20)
                                                       : (size_t)1 << 20) || ended) {
        shx_report_close(&r->report);
        r->job.side_fd = -1;
    }
}

/* The one rule for a run's timeout: a task has its own or none, a
 * foreground run its own or the session's, clamped to the maximum. */
uint32_t shx_run_effective_timeout(const shexec_run *r)
{
    if (r->task)
        return r->timeout_ms;
    const shexec_session *s = r->s;
    uint32_t t = r->timeout_ms ? r->timeout_ms : s->default_timeout_ms;
    return t > s->max_timeout_ms ? s->max_timeout_ms : t;
}

/* The run's job ended (its processes done, its output read): what is left
 * of its report, and the run made final. */
static void job_ended(void *ctx, int64_t now)
{
    shexec_run *r = ctx;
    if (r->report.fd >= 0)
        report_readable(r);
    r->end_ns = now;
    /* the limits it ran into; then the command's cgroups, its processes
     * over, go (now, or once the killed have left them) */
    r->limit_hits = shx_contain_run_hits(r->s ? r->s->contain : NULL, r->job.proc.cgroup,
                                         r->cgroup_v1, r->limits_in_force);
    shx_contain_hits_notice(r->limit_hits, r->limits_in_force, &r->notice);
    if (r->job.proc.cgroup) {
        shx_contain_run_done(r->s ? r->s->contain : NULL, r->job.proc.cgroup);
        r->job.proc.cgroup = NULL;
    }
    if (r->job.leftovers_killed)
        r->leftovers = SHEXEC_LEFTOVERS_KILLED;
    if (r->s)
        shx_run_ended(r);
}

void shx_run_terminate(shexec_run *r, int reason, int64_t now)
{
    shx_job_terminate(&r->job, r->s ? &r->s->loop.jobs : NULL, reason, now);
}

int shx_run_alloc(shexec_run **out, shexec_session *s, const char *command, size_t len)
{
    *out = NULL;
    if (!command)
        return shx_fail(s, SHEXEC_EINVAL, "command is NULL");
    if (len == 0)
        return shx_fail(s, SHEXEC_EINVAL, "command is empty");
    if (memchr(command, '\0', len))
        return shx_fail(s, SHEXEC_EINVAL, "command contains a NUL byte");
    shexec_run *r = calloc(1, sizeof *r);
    if (!r)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    r->command = malloc(len + 1);
    if (!r->command) {
        free(r);
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    }
    memcpy(r->command, command, len);
    r->command[len] = '\0';
    r->command_len = len;
    r->s = s;
    shx_job_init(&r->job, &s->proc_observer);
    r->job.on_ended = job_ended;
    r->job.on_side = report_readable;
    r->job.ctx = r;
    r->report.fd = -1;
    shx_record_init(&r->record);
    r->state = SHEXEC_STATE_NEW;
    *out = r;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_new_bytes(shexec_run **out, shexec_session *s, const char *command,
                                    size_t len)
{
    if (out)
        *out = NULL;
    if (!out || !s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    int rc = shx_run_alloc(out, s, command, len);
    if (*out) /* set exactly when rc is SHEXEC_OK */
        shx_run_link(s, *out);
    return rc;
}

SHEXEC_API int shexec_run_new(shexec_run **out, shexec_session *s, const char *command)
{
    if (out)
        *out = NULL;
    if (!out || !s)
        return SHEXEC_EINVAL;
    if (!command) {
        shx_ok(s);
        return shx_fail(s, SHEXEC_EINVAL, "command is NULL");
    }
    return shexec_run_new_bytes(out, s, command, strlen(command));
}

/* Setters share this: a run can only be configured before it starts. */
int shx_run_configurable(shexec_run *r)
{
    if (!r)
        return SHEXEC_EINVAL;
    shx_ok(r->s);
    if (r->state != SHEXEC_STATE_NEW)
        return shx_fail(r->s, SHEXEC_ESTATE, "the run has already been started");
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_set_timeout_ms(shexec_run *run, uint32_t ms)
{
    int rc = shx_run_configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    if (ms == 0)
        return shx_fail(run->s, SHEXEC_EINVAL, "timeout must be at least 1 ms");
    run->timeout_ms = ms;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_set_cwd(shexec_run *run, const char *dir)
{
    int rc = shx_run_configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    if (!dir || !*dir)
        return shx_fail(run->s, SHEXEC_EINVAL, "working directory is empty");
    char *copy = strdup(dir);
    if (!copy)
        return shx_fail(run->s, SHEXEC_ENOMEM, "out of memory");
    free(run->cwd);
    run->cwd = copy;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_setenv(shexec_run *run, const char *name, const char *value)
{
    int rc = shx_run_configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    return shx_env_error(run->s, shx_envlist_set(&run->env, name, value), name);
}

SHEXEC_API int shexec_run_set_output_limit(shexec_run *run, uint64_t limit, int unit, int keep)
{
    int rc = shx_run_configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    rc = shx_check_limit(run->s, limit, unit, keep);
    if (rc != SHEXEC_OK)
        return rc;
    run->limit_set = 1;
    run->limit = limit;
    run->unit = unit;
    run->keep = keep;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_set_output_fn(shexec_run *run, shexec_output_fn fn, void *user)
{
    if (!run)
        return SHEXEC_EINVAL;
    shx_ok(run->s);
    if (run->free_pending || (run->state != SHEXEC_STATE_NEW && run->state != SHEXEC_STATE_RUNNING))
        return shx_fail(run->s, SHEXEC_ESTATE, "the run has finished");
    run->fn = fn;
    run->user = user;
    if (run->state == SHEXEC_STATE_RUNNING) {
        /* from the next chunk read on */
        shx_stream_set_fn(&run->job.out, fn, user);
        shx_stream_set_fn(&run->job.err, fn, user);
    }
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_cancel(shexec_run *run)
{
    if (!run)
        return SHEXEC_EINVAL;
    shx_ok(run->s);
    if (run->state == SHEXEC_STATE_NEW)
        return shx_fail(run->s, SHEXEC_ESTATE, "the run has not been started");
    if (run->state == SHEXEC_STATE_RUNNING) /* a task's run ends KILLED */
        shx_run_terminate(run, run->task ? SHX_END_KILL : SHX_END_CANCEL, shx_now_ns());
    return SHEXEC_OK;
}

void shx_run_detach(shexec_run *run)
{
    run->fn = NULL;
    run->user = NULL;
    run->input_fn = NULL;
    run->input_user = NULL;
    shx_stream_detach(&run->job.out);
    shx_stream_detach(&run->job.err);
}

SHEXEC_API void shexec_run_free(shexec_run *run)
{
    /* free_pending: a free is under way already (deferred from a callback,
     * or the one below, waiting for the run to end while callbacks run) */
    /* a task's run goes with its task; a yielded one's handle is let go:
     * no callback of the host's after this */
    if (run && run->task && run->task_run_held) {
        run->task_run_held = 0;
        shx_run_detach(run);
    }
    if (!run || run->free_pending || run->task)
        return;
    run->free_pending = 1;
    shx_run_detach(run); /* the host is done with it: no callback after this */
    if (run->s && run->s->loop.in_loop) {
        /* from a callback: the loop round, or a frame waiting for this run,
         * may still hold it; released by shx_release_deferred once it ended
         * (or by the frame holding it) */
        if (run->state == SHEXEC_STATE_RUNNING)
            shx_run_terminate(run, SHX_END_CANCEL, shx_now_ns());
        return;
    }
    if (run->s)
        shx_run_unlink(run->s, run);
    shx_run_release(run);
}

void shx_run_end(shexec_run *run)
{
    shexec_session *s = run->s;
    if (s && run->state == SHEXEC_STATE_RUNNING) {
        shx_run_terminate(run, run->task ? SHX_END_KILL : SHX_END_CANCEL, shx_now_ns());
        run->held++; /* frees from callbacks meanwhile wait */
        shx_loop_run(&s->loop, &run->job, 0, -1, NULL);
        run->held--;
    }
}

void shx_run_release(shexec_run *run)
{
    shx_run_end(run);
    free(run->leftover_task);
    shx_escapees_release(&run->job.proc.escapees);
    shx_buf_free(&run->job.stdin_buf);
    if (run->job.stdin_fd >= 0)
        close(run->job.stdin_fd);
    shx_report_close(&run->report);
    shx_record_free(&run->record);
    shx_env_free(run->persist.start_env);
    shx_env_free(run->persist.prior_env);
    if (run->state != SHEXEC_STATE_NEW) {
        shx_stream_free(&run->job.out);
        shx_stream_free(&run->job.err);
        shx_secrets_free(&run->redact_values);
    }
    shx_buf_free(&run->rendered[0]);
    shx_buf_free(&run->rendered[1]);
    shx_buf_free(&run->notice);
    shx_envlist_free(&run->env);
    free(run->cwd);
    free(run->command);
    free(run);
}

void shx_run_ended(shexec_run *r)
{
    if (r->job.proc.end_reason == SHX_END_TIMEOUT || r->job.proc.end_reason == SHX_END_IDLE)
        r->state = SHEXEC_STATE_TIMED_OUT;
    else if (r->job.proc.end_reason == SHX_END_CANCEL)
        r->state = SHEXEC_STATE_CANCELLED;
    else if (r->job.proc.end_reason == SHX_END_KILL)
        r->state = SHEXEC_STATE_KILLED;
    else if (r->job.proc.term_signal)
        r->state = SHEXEC_STATE_SIGNALED;
    else
        r->state = SHEXEC_STATE_EXITED;
    int usable = shx_record_usable(&r->record);
    if (r->wrapper_guard && r->s && usable && r->record.has_prelude)
        r->s->wrapper_known = 1, r->s->wrapper_drops_bash_env = r->record.loaded; /* guard */
    /* the status the shell reported stands in for one the host took away */
    if (r->state == SHEXEC_STATE_EXITED && r->job.proc.status_lost && usable && r->record.has_status)
        r->job.proc.exit_code = r->record.status;
    shexec_session *s = r->s;
    if (!s)
        return; /* the session is gone: nothing of it to change */
    /* any run's shell may say it could not define a function it was given
     * (first: the state a foreground shell that exited by itself may adopt
     * next, also with its own cwd, no longer has it) */
    if (usable)
        shx_persist_forget_lost(s->persist, &r->record.lost, &r->notice);
    if (r->persist.on && !r->task && r->state == SHEXEC_STATE_EXITED) {
        shx_persist_report in = {.record = &r->record, .run_env = &r->env, .run = &r->persist,
                                 .deny = &s->deny, .allow = &s->allow,
                                 .shell_bash = s->shell_bash, .notice = &r->notice};
        shx_persist_adopt(s->persist, &in);
    }
    /* a run with its own cwd, and a task, never move the session; nor does a
     * shell that a signal ended (a timeout: bash's EXIT trap may still have
     * reported where it was) */
    if (r->cwd || r->task || r->state != SHEXEC_STATE_EXITED)
        return;
    if (r->job.out.filter) {
        if (r->job.out.sentinel.found)
            shx_cwd_adopt_remote(&s->cwd, &r->notice,
                                 r->job.out.sentinel.path.data ? r->job.out.sentinel.path.data : "",
                                 r->job.out.sentinel.path.len);
    } else if (usable && r->record.has_cwd) {
        shx_cwd_adopt(&s->cwd, &r->notice, r->record.cwd.data ? r->record.cwd.data : "",
                      r->record.cwd.len);
    } else if (usable && !r->bare) {
        if (r->notice.len)
            shx_buf_puts(&r->notice, "; ");
        shx_buf_printf(&r->notice, "the shell reported no working directory (the command "
                       "replaced the EXIT trap, ended in exec, or closed the report's descriptor "
                       "%d): the session stays in %s", shx_channel_number(), s->cwd);
    }
}

SHEXEC_API int shexec_run_set_pty(shexec_run *run, int mode)
{
    int rc = shx_run_configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    if (mode != SHEXEC_PTY_OFF && mode != SHEXEC_PTY_ON && mode != SHEXEC_PTY_ECHO)
        return shx_fail(run->s, SHEXEC_EINVAL, "unknown terminal mode %d", mode);
    run->pty = mode;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_pty(const shexec_run *run)
{
    return run ? run->pty : SHEXEC_PTY_OFF;
}

/* A running command's terminal resized, as a person resizes a window: the
 * master is either of the run's two descriptors of it (stdin's, or the
 * output's once input is closed). */
static int resize_running(shexec_run *run, uint16_t cols, uint16_t rows)
{
    if (!run->pty)
        return shx_fail(run->s, SHEXEC_ESTATE, "the command runs on pipes, not on a terminal");
    int fd = run->job.stdin_fd >= 0 ? run->job.stdin_fd : run->job.out.fd;
    if (fd < 0)
        return shx_fail(run->s, SHEXEC_ESTATE, "the command's terminal is closed");
    if (shx_pty_resize(fd, cols, rows) != 0)
        return shx_fail(run->s, SHEXEC_ESYS, "cannot resize the terminal: %s", strerror(errno));
    run->cols = cols;
    run->rows = rows;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_set_pty_size(shexec_run *run, uint32_t cols, uint32_t rows)
{
    if (!run)
        return SHEXEC_EINVAL;
    shx_ok(run->s);
    if (run->state != SHEXEC_STATE_NEW && run->state != SHEXEC_STATE_RUNNING)
        return shx_fail(run->s, SHEXEC_ESTATE, "the command has ended");
    if (cols == 0 || rows == 0 || cols > 65535 || rows > 65535)
        return shx_fail(run->s, SHEXEC_EINVAL, "window size %ux%u out of range 1-65535",
                        cols, rows);
    if (run->state == SHEXEC_STATE_RUNNING)
        return resize_running(run, (uint16_t)cols, (uint16_t)rows);
    run->cols = (uint16_t)cols;
    run->rows = (uint16_t)rows;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_set_ansi(shexec_run *run, int mode)
{
    int rc = shx_run_configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    if (mode != SHEXEC_ANSI_KEEP && mode != SHEXEC_ANSI_STRIP)
        return shx_fail(run->s, SHEXEC_EINVAL, "unknown ANSI mode %d", mode);
    run->ansi = mode;
    return SHEXEC_OK;
}
