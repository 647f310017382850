/*
 * start.c - starting a run: everything it is set to resolved once into one
 * shx_launch (launch.c), then spawned, its streams set up, and handed to
 * the loop; the host's three ways to start one (shexec_run_start,
 * shexec_run_exec, shexec_run_start_task) are here, above the run, the task
 * and the session, which never call back up into a start.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contain/contain_hook.h"
#include "spawn/forkexec.h"
#include "run/launch.h"
#include "run/longrun.h"
#include "spawn/pty.h"
#include "shell/script.h"
#include "session/session.h"
#include "spawn/spawn.h"
#include "start.h"
#include "run/run.h"
#include "stream/stream.h"
#include "stream/fresh.h"
#include "loop/loop.h"
#include "session/task.h"

/* How long a report the shell can wait on stays unread while it runs. */
#define SIDE_DEFER_NS ((int64_t)50000000)

/* How long the probe of a wrapper program may take. */
#define PROBE_TIMEOUT_MS 10000

/*
 * Whether a wrapper program passes BASH_ENV on to bash (env, bwrap) or
 * clears it (env -i, sudo) is learnt once, before its first command, by a
 * run of the library's own: `:` through it, whose first line loads the
 * prelude only where BASH_ENV did not (script.h, the guard), and whose
 * report says which it was. So no command of the host's carries that guard
 * in its own text ($BASH_EXECUTION_STRING, a syntax error's quote of line
 * 1). A wrapper that passes neither reports nothing: its runs get the
 * loader, the one way left.
 */
static void probe_wrapper(shexec_session *s)
{
    shexec_run *p;
    if (shx_run_alloc(&p, s, ":", 1) != SHEXEC_OK)
        return;
    p->probe = 1;
    p->timeout_ms = PROBE_TIMEOUT_MS;
    p->cwd = strdup(s->cwd); /* a run with a cwd of its own never moves the session */
    if (p->cwd && shx_run_begin(p) == SHEXEC_OK) {
        p->held++;
        (void)shx_loop_run(&s->loop, &p->job, 0, -1, NULL);
        p->held--;
    }
    shx_run_release(p);
    if (!s->wrapper_known)
        s->wrapper_known = s->wrapper_drops_bash_env = 1;
}

int shx_run_begin(shexec_run *r)
{
    shexec_session *s = r->s;
    if (!s)
        return SHEXEC_ESTATE;
    if (r->state != SHEXEC_STATE_NEW)
        return shx_fail(s, SHEXEC_ESTATE, "the run has already been started");
    if (s->loop.in_loop)
        return shx_fail(s, SHEXEC_ESTATE, "cannot start a run from an output callback");
    if (!r->probe && !s->wrapper_known && s->shell_bash && s->wrapper_kind == SHEXEC_WRAPPER_LOCAL &&
        s->shell_argv && s->shell_argv[1])
        probe_wrapper(s);
    shx_ok(s); /* after the probe: what it met is not the caller's */
    /* everything it is set to, each attachment's part with it, in one step */
    shx_launch l;
    int rc;
again:
    rc = shx_launch_resolve(&l, r);
    if (rc != SHEXEC_OK)
        return rc;
    int remote = l.mode == SHX_LAUNCH_REMOTE;
    /* the descriptors the shell gets at fixed numbers: the report channel,
     * the prelude, a long command's file */
    int pass[3], at[3], n_pass = 0;
    if (!remote) {
        if (l.channel >= 0) {
            pass[n_pass] = l.channel;
            at[n_pass++] = l.channel_at;
        }
        if (l.prelude_fd >= 0) {
            pass[n_pass] = l.prelude_fd;
            at[n_pass++] = l.prelude_at;
        }
        if (l.script_fd >= 0) {
            pass[n_pass] = l.script_fd;
            at[n_pass++] = l.script_at;
        }
    }
    /* the command's cgroups, joined by the child itself before exec */
    char procs[1 + SHX_CTRLS][SHX_CGROUP_PATH_MAX + 16];
    const char *join[1 + SHX_CTRLS];
    int n_join = 0;
    for (int k = -1; l.cgroup && shx_forkexec_compiled() && k < SHX_CTRLS; k++) {
        const char *dir = k < 0 ? l.cgroup : l.cgroup_v1[k];
        if (!dir)
            continue;
        (void)snprintf(procs[n_join], sizeof procs[n_join], "%s/cgroup.procs", dir);
        join[n_join] = procs[n_join];
        n_join++;
    }
    shx_child child;
    shx_buf err = SHX_BUF_INIT;
    shx_spawn_req req = {.path = l.path,
                         .argv = (char *const *)l.argv,
                         .envp = l.envp,
                         .cwd = remote ? NULL : l.dir,
                         .pass_fds = pass,
                         .pass_at = at,
                         .n_pass = n_pass,
                         .join = join,
                         .n_join = n_join,
                         .into = n_join > 0 && l.cgroup ? l.cgroup : NULL,
                         .use_pidfd = s->loop.jobs.use_pidfd,
                         .stdin_pipe = r->want_stdin,
                         .big_pipes = r->task != NULL,
                         .pty = r->pty != SHEXEC_PTY_OFF,
                         .echo = r->pty == SHEXEC_PTY_ECHO,
                         .cols = r->cols ? r->cols : SHX_PTY_DEFAULT_COLS,
                         .rows = r->rows ? r->rows : SHX_PTY_DEFAULT_ROWS};
    /* the command's time counts from its spawn: the child runs while the
     * rest is set up, and its duration must cover all of it */
    int64_t spawned_ns = shx_now_ns();
    rc = shx_spawn(&req, &child, &err);
    int cwd_gone = rc == SHEXEC_ENOCWD && !r->cwd && !remote && !r->cwd_gone;
    if (rc != SHEXEC_OK && !cwd_gone)
        shx_fail(s, rc, "%s", err.data ? err.data : "spawn failed");
    shx_buf_free(&err);
    if (rc != SHEXEC_OK) {
        shx_launch_free(&l);
        if (!cwd_gone)
            return rc;
        /* the session's cwd is gone (its chdir said so): once more, from
         * its nearest existing ancestor */
        r->cwd_gone = 1;
        goto again;
    }
    /* the shell has its ends: the host keeps only its own end of the
     * report channel (a socket cannot be reopened through /proc) */
    if (l.channel >= 0)
        close(l.channel);
    if (l.prelude_fd >= 0 && !l.prelude_kept)
        close(l.prelude_fd);
    if (l.script_fd >= 0)
        close(l.script_fd);
    l.channel = l.prelude_fd = l.script_fd = -1;
    r->report = l.report;
    l.report.fd = -1;
    /* the shell is the child, or (through a wrapper) the first to speak */
    r->report.shell = l.marker ? 0 : child.pid;
    r->job.side_fd = r->report.fd;
    /* a report the shell can wait on (a pipe, or one that lists the
     * shell's state) is read while it runs, from SIDE_DEFER_NS on: only a
     * shell whose report outgrows the channel waits, and not for long,
     * and a short command's report, listing included, comes with its
     * exit in one wake-up instead of one for each of the shell's writes */
    r->job.side_from_ns = r->report.never_waits ? SHX_SIDE_AT_END : spawned_ns + SIDE_DEFER_NS;
    r->job.proc.may_exec = r->bare = l.mode == SHX_LAUNCH_BARE || l.quiet;
    r->prelude_marked = l.marker;
    r->wrapper_guard = l.guard;
    if (s->persist && !r->task && !r->probe && !remote) {
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
        /* joined before exec where the spawn can (spawn.h); elsewhere moved
         * now. A refusal other than "already gone" means the command's
         * processes cannot be held there: it runs with its group alone. */
        if (n_join > 0 || shx_cgroup_move(l.cgroup, child.pid) == 0 || errno == ESRCH) {
            r->job.proc.cgroup = l.cgroup;
            r->job.proc.cgroup_peak = shx_contain_has_peak(s->contain);
            l.cgroup = NULL;
        }
        for (int k = 0; k < SHX_CTRLS; k++) {
            if (l.cgroup_v1[k] && n_join == 0)
                (void)shx_cgroup_move(l.cgroup_v1[k], child.pid);
            r->cgroup_v1[k] = l.cgroup_v1[k];
            l.cgroup_v1[k] = NULL;
        }
    }
    memcpy(r->limits_in_force, l.limits, sizeof l.limits);
    shx_proc_started(&r->job.proc, child.pid, child.pidfd, child.start);
    /* only a remote wrapper's record comes in-band, on stdout */
    shx_stream_init(&r->job.out, SHEXEC_STDOUT, child.out_fd, remote ? s->tag : NULL, l.limit,
                    l.unit, l.keep, r->fn,
                    r->user);
    shx_stream_init(&r->job.err, SHEXEC_STDERR, child.err_fd, NULL, l.limit, l.unit, l.keep, r->fn,
                    r->user);
    r->job.out.held = child.out_held;
    r->job.err.held = child.err_held;
    r->notice_first = s->notice_first;
    shx_streams_attach(&r->job.out, &r->job.err, s->spill, l.redact);
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
    /* the terminal's flags as the spawn set them: read after the start, a
     * command quick to turn echo off (`read -s`) would be in them already */
    r->job.quiet.pty_lflag_known = r->job.pty;
    r->job.quiet.pty_lflag = child.pty_lflag;
    r->job.stdin_fd = child.in_fd;
    r->effective_timeout_ms = l.timeout_ms;
    r->job.proc.no_timeout = l.timeout_ms == 0;
    r->start_ns = spawned_ns;
    r->job.proc.deadline_ns = r->start_ns + (int64_t)l.timeout_ms * 1000000;
    shx_proc_looks_from(&r->job.proc, r->start_ns);
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
