/*
 * loop.c - the session's poll loop: one poll() over the output pipes and
 * pidfds of every live run, with the nearest deadline (timeout, kill grace)
 * on CLOCK_MONOTONIC as its timeout. No periodic wake-ups, no SIGCHLD
 * handler, no waitpid(-1): a run's shell is waited for by its own pid.
 *
 * Process groups are signalled only while the shell (the group leader) is
 * unreaped: its zombie keeps the group id from being reused. So a run is
 * reaped last, after the final SIGKILL to its group.
 *
 * Without pidfds (old kernels, or forced for testing) the shell's exit is
 * noticed by waitid(WNOHANG) at pipe EOF and on a backoff schedule (1 ms
 * doubling to 50 ms) while it runs.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session.h"

#define FALLBACK_FIRST_NS 1000000LL
#define FALLBACK_MAX_NS 50000000LL
/* After the shell exits, what its pipes still hold is read up to this much. */
#define FINAL_DRAIN_MAX (8u << 20)

void shx_loop_add(shexec_session *s, shexec_run *r)
{
    r->next_active = s->active;
    s->active = r;
}

static void signal_group(shexec_run *r, int sig)
{
    if (!r->reaped)
        kill(-r->pid, sig);
}

void shx_run_terminate(shexec_run *r, int reason, int64_t now)
{
    if (r->exited || r->term_sent)
        return;
    r->end_reason = reason;
    r->term_sent = 1;
    signal_group(r, SIGTERM);
    /* a stopped process would not act on SIGTERM until continued */
    signal_group(r, SIGCONT);
    uint32_t grace = r->s ? r->s->kill_grace_ms : 0;
    if (grace == 0) {
        signal_group(r, SIGKILL);
        r->kill_sent = 1;
    } else {
        r->kill_at_ns = now + (int64_t)grace * 1000000;
    }
}

static void check_exit(shexec_run *r)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    /* WNOWAIT: learn the status but leave the zombie, which holds the group id */
    int rc = waitid(P_PID, (id_t)r->pid, &si, WEXITED | WNOHANG | WNOWAIT);
    if (rc == 0 && si.si_pid == r->pid) {
        r->exited = 1;
        if (si.si_code == CLD_EXITED)
            r->exit_code = si.si_status;
        else
            r->term_signal = si.si_status;
    } else if (rc < 0 && errno == ECHILD) {
        /* the host reaped it (SIGCHLD ignored): the status is gone, and so
         * is our claim on the group id */
        r->exited = 1;
        r->reaped = 1;
        r->status_lost = 1;
    }
}

static void finish(shexec_run *r, int64_t now)
{
    shexec_session *s = r->s;
    /* leftovers (`server &`) still in the group go now, while the zombie
     * leader keeps the id ours */
    signal_group(r, SIGKILL);
    shx_stream_drain(&r->out, FINAL_DRAIN_MAX);
    shx_stream_drain(&r->err, FINAL_DRAIN_MAX);
    shx_stream_finish(&r->out);
    shx_stream_finish(&r->err);
    if (!r->reaped) {
        siginfo_t si;
        while (waitid(P_PID, (id_t)r->pid, &si, WEXITED) < 0 && errno == EINTR)
            ;
        r->reaped = 1;
    }
    if (r->pidfd >= 0) {
        close(r->pidfd);
        r->pidfd = -1;
    }
    if (r->end_reason == SHX_END_TIMEOUT)
        r->state = SHEXEC_STATE_TIMED_OUT;
    else if (r->end_reason == SHX_END_CANCEL)
        r->state = SHEXEC_STATE_CANCELLED;
    else if (r->term_signal)
        r->state = SHEXEC_STATE_SIGNALED;
    else
        r->state = SHEXEC_STATE_EXITED;
    if (s && !r->cwd && r->out.sentinel.found && r->out.sentinel.path.len > 0) {
        char *dir = malloc(r->out.sentinel.path.len + 1);
        if (dir) {
            memcpy(dir, r->out.sentinel.path.data, r->out.sentinel.path.len + 1);
            free(s->cwd);
            s->cwd = dir;
        }
    }
    r->end_ns = now;
}

enum { FD_OUT, FD_ERR, FD_PID };

typedef struct {
    shexec_run *run;
    int kind;
} fd_owner;

static void min_deadline(int64_t *next, int64_t t)
{
    if (*next < 0 || t < *next)
        *next = t;
}

int shx_loop(shexec_session *s, shexec_run *until, int stop_on_any, int64_t timeout_ns)
{
    struct pollfd small_fds[24];
    fd_owner small_own[24];
    struct pollfd *fds = small_fds;
    fd_owner *own = small_own;
    size_t cap = 24;
    int rc = SHEXEC_OK;
    int64_t end = timeout_ns >= 0 ? shx_now_ns() + timeout_ns : -1;

    s->in_loop = 1;
    for (;;) {
        if (until && until->state != SHEXEC_STATE_RUNNING)
            break;
        if (!s->active)
            break;

        int64_t now = shx_now_ns();
        int64_t next = end;
        size_t n = 0, nruns = 0;
        for (shexec_run *r = s->active; r; r = r->next_active)
            nruns++;
        if (nruns * 3 > cap) {
            size_t ncap = nruns * 3;
            struct pollfd *nf = malloc(ncap * sizeof *nf);
            fd_owner *no = malloc(ncap * sizeof *no);
            if (!nf || !no) {
                free(nf);
                free(no);
                rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
                break;
            }
            if (fds != small_fds) {
                free(fds);
                free(own);
            }
            fds = nf;
            own = no;
            cap = ncap;
        }
        for (shexec_run *r = s->active; r; r = r->next_active) {
            if (!r->exited) {
                if (!r->term_sent && now >= r->deadline_ns)
                    shx_run_terminate(r, SHX_END_TIMEOUT, now);
                else if (r->term_sent && !r->kill_sent && now >= r->kill_at_ns) {
                    signal_group(r, SIGKILL);
                    r->kill_sent = 1;
                }
                if (!r->term_sent)
                    min_deadline(&next, r->deadline_ns);
                else if (!r->kill_sent)
                    min_deadline(&next, r->kill_at_ns);
                if (r->pidfd < 0)
                    min_deadline(&next, r->next_check_ns);
            }
            if (r->out.fd >= 0) {
                fds[n] = (struct pollfd){.fd = r->out.fd, .events = POLLIN};
                own[n++] = (fd_owner){r, FD_OUT};
            }
            if (r->err.fd >= 0) {
                fds[n] = (struct pollfd){.fd = r->err.fd, .events = POLLIN};
                own[n++] = (fd_owner){r, FD_ERR};
            }
            if (r->pidfd >= 0 && !r->exited) {
                fds[n] = (struct pollfd){.fd = r->pidfd, .events = POLLIN};
                own[n++] = (fd_owner){r, FD_PID};
            }
        }

        int wait_ms = -1;
        if (next >= 0) {
            int64_t d = next - now;
            if (d <= 0)
                wait_ms = 0;
            else {
                int64_t ms = (d + 999999) / 1000000; /* round up: no early wake-up spin */
                wait_ms = ms > 1000000000 ? 1000000000 : (int)ms;
            }
        }
        int got = poll(fds, (nfds_t)n, wait_ms);
        if (got < 0) {
            if (errno == EINTR)
                continue; /* deadlines are absolute: the next round waits what remains */
            rc = shx_fail(s, SHEXEC_ESYS, "poll failed: %s", strerror(errno));
            break;
        }
        for (size_t i = 0; got > 0 && i < n; i++) {
            if (!fds[i].revents)
                continue;
            shexec_run *r = own[i].run;
            if (own[i].kind == FD_OUT)
                shx_stream_read(&r->out);
            else if (own[i].kind == FD_ERR)
                shx_stream_read(&r->err);
            else
                check_exit(r);
        }

        now = shx_now_ns();
        int finished = 0;
        for (shexec_run **pp = &s->active; *pp;) {
            shexec_run *r = *pp;
            if (!r->exited && r->pidfd < 0 &&
                (now >= r->next_check_ns || (r->out.fd < 0 && r->err.fd < 0))) {
                check_exit(r);
                r->check_backoff_ns = r->check_backoff_ns * 2 > FALLBACK_MAX_NS
                                          ? FALLBACK_MAX_NS
                                          : r->check_backoff_ns * 2;
                r->next_check_ns = now + r->check_backoff_ns;
            }
            if (r->exited) {
                finish(r, now);
                *pp = r->next_active;
                r->next_active = NULL;
                finished = 1;
                continue;
            }
            pp = &r->next_active;
        }
        if (finished && stop_on_any)
            break;
        if (end >= 0 && now >= end)
            break;
    }
    s->in_loop = 0;
    if (fds != small_fds) {
        free(fds);
        free(own);
    }
    return rc;
}
