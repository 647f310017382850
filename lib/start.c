/*
 * start.c - starting a run: everything it is set to resolved once into one
 * shx_launch (launch.c), then spawned, its streams set up, and handed to
 * the loop; the host's three ways to start one (shexec_run_start,
 * shexec_run_exec, shexec_run_start_task) are here, above the run, the task
 * and the session, which never call back up into a start.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

#include "cgroup.h"
#include "launch.h"
#include "longrun.h"
#include "pty.h"
#include "script.h"
#include "session.h"
#include "spawn.h"
#include "start.h"
#include "run.h"
#include "stream.h"
#include "loop.h"
#include "task.h"

int shx_run_begin(shexec_run *r)
{
    shexec_session *s = r->s;
    if (!s)
        return SHEXEC_ESTATE;
    shx_ok(s);
    if (r->state != SHEXEC_STATE_NEW)
        return shx_fail(s, SHEXEC_ESTATE, "the run has already been started");
    if (s->loop.in_loop)
        return shx_fail(s, SHEXEC_ESTATE, "cannot start a run from an output callback");
    /* what its output hides is known before anything runs */
    shx_redact_set *redact;
    if (shx_redact_set_for_run(&s->redact, s->env_inherit ? (const char *const *)environ : NULL,
                               &s->env, &r->env, r->redact_own_env, &r->redact_values,
                               &redact) != 0)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    shx_launch l;
    int rc = shx_launch_resolve(&l, r);
    if (rc != SHEXEC_OK) {
        shx_redact_set_release(redact);
        return rc;
    }
    int remote = l.mode == SHX_LAUNCH_REMOTE;
    int pass[2] = {l.channel, l.script_fd}, at[2] = {l.channel_at, l.script_at};
    shx_child child;
    shx_buf err = SHX_BUF_INIT;
    shx_spawn_req req = {.path = l.path,
                         .argv = (char *const *)l.argv,
                         .envp = l.envp,
                         .cwd = remote ? NULL : l.dir,
                         .pass_fds = pass,
                         .pass_at = at,
                         .n_pass = remote ? 0 : l.script_fd >= 0 ? 2 : 1,
                         .use_pidfd = s->loop.jobs.use_pidfd,
                         .stdin_pipe = r->want_stdin,
                         .big_pipes = r->task != NULL,
                         .pty = r->pty != SHEXEC_PTY_OFF,
                         .echo = r->pty == SHEXEC_PTY_ECHO,
                         .cols = r->cols ? r->cols : SHX_PTY_DEFAULT_COLS,
                         .rows = r->rows ? r->rows : SHX_PTY_DEFAULT_ROWS};
    rc = shx_spawn(&req, &child, &err);
    if (rc != SHEXEC_OK) {
        shx_fail(s, rc, "%s", err.data ? err.data : "spawn failed");
        shx_buf_free(&err);
        shx_launch_free(&l);
        shx_redact_set_release(redact);
        return rc;
    }
    shx_buf_free(&err);
    r->rec_fd = l.channel;
    r->rec_from = l.prelude_len;
    r->prelude_marked = l.marker;
    l.channel = -1;
    if (s->persist && !r->task && !remote) {
        r->persist.on = 1;
        /* state is read only from a run whose shell was asked to list it */
        r->record.want_state = l.capture;
        r->persist.start_env = l.env; /* the run's now */
        l.env = NULL;
    } else {
        shx_env_free(r->persist.prior_env);
        r->persist.prior_env = NULL;
    }

    if (l.cgroup) {
        /* the shell moves itself first thing (script.h); this move is for
         * what runs before it (a remote wrapper, a wrapper program). A
         * refusal other than "already gone" means the command's processes
         * cannot be held there: it runs with its process group alone. */
        if (shx_cgroup_move(l.cgroup, child.pid) == 0 || errno == ESRCH) {
            r->job.proc.cgroup = l.cgroup;
            l.cgroup = NULL;
        }
        for (int k = 0; k < SHX_CTRLS; k++) {
            if (l.cgroup_v1[k])
                (void)shx_cgroup_move(l.cgroup_v1[k], child.pid);
            r->cgroup_v1[k] = l.cgroup_v1[k];
            l.cgroup_v1[k] = NULL;
        }
    }
    memcpy(r->limits_in_force, l.limits, sizeof l.limits);
    shx_proc_started(&r->job.proc, child.pid, child.pidfd);
    /* only a remote wrapper's record comes in-band, on stdout */
    shx_stream_init(&r->job.out, SHEXEC_STDOUT, child.out_fd, remote ? s->tag : NULL, l.limit,
                    l.unit, l.keep, r->fn,
                    r->user);
    shx_stream_init(&r->job.err, SHEXEC_STDERR, child.err_fd, NULL, l.limit, l.unit, l.keep, r->fn,
                    r->user);
    r->notice_first = s->notice_first;
    shx_streams_attach(&r->job.out, &r->job.err, s->spill, redact);
    shx_redact_set_release(redact);
    if (r->ansi == SHEXEC_ANSI_STRIP) {
        shx_stream_enable_strip(&r->job.out);
        shx_stream_enable_strip(&r->job.err);
    }
    if (r->task) {
        shx_stream_enable_fresh(&r->job.out);
        shx_stream_enable_fresh(&r->job.err);
    }
    if (r->pty)
        r->want_stdin = 1; /* the terminal is the input too */
    r->job.pty = r->pty != SHEXEC_PTY_OFF;
    r->job.stdin_fd = child.in_fd;
    r->effective_timeout_ms = l.timeout_ms;
    r->job.proc.no_timeout = l.timeout_ms == 0;
    r->start_ns = shx_now_ns();
    r->job.proc.deadline_ns = r->start_ns + (int64_t)l.timeout_ms * 1000000;
    r->job.proc.check_backoff_ns = 1000000;
    r->job.proc.next_check_ns = r->start_ns + r->job.proc.check_backoff_ns;
    r->state = SHEXEC_STATE_RUNNING;
    shx_longrun_start(r);
    shx_loop_add(&s->loop, &r->job);
    shx_launch_free(&l);
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_start(shexec_run *run)
{
    if (!run)
        return SHEXEC_EINVAL;
    return shx_run_begin(run);
}

SHEXEC_API int shexec_run_exec(shexec_run *run)
{
    if (!run)
        return SHEXEC_EINVAL;
    int rc = shx_run_begin(run);
    if (rc != SHEXEC_OK)
        return rc;
    shexec_session *s = run->s;
    run->held++; /* a callback's free waits for us */
    /* with a yield time, or a deadline that yields, the call may return
     * with the command going on as a task (task.c); without room for one,
     * it runs on to the end as without */
    do
        rc = shx_loop_run(&s->loop, &run->job, 0, -1, NULL);
    while (rc == SHEXEC_OK && !run->job.ended && !run->free_pending && run->job.quiet.yield &&
           shx_task_from_yield(s, run) != SHEXEC_OK);
    run->held--;
    if (run->free_pending) {
        /* a callback freed it: the release it asked for happens now, and
         * the caller must not look at the run again */
        shx_run_unlink(s, run);
        shx_run_release(run);
        return shx_fail(s, SHEXEC_ESTATE, "the run was freed by a callback while it ran");
    }
    return rc;
}

SHEXEC_API int shexec_run_start_task(shexec_task **out, shexec_run *run)
{
    if (out)
        *out = NULL;
    if (!out || !run)
        return SHEXEC_EINVAL;
    shexec_session *s = run->s;
    if (!s)
        return SHEXEC_ESTATE;
    shx_ok(s);
    shexec_task *t;
    int rc = shx_task_prepare(&t, s, run);
    if (rc != SHEXEC_OK)
        return rc;
    rc = shx_run_begin(run);
    if (rc != SHEXEC_OK) {
        shx_task_abandon(t);
        return rc;
    }
    shx_task_started(t);
    *out = t;
    return SHEXEC_OK;
}
