/*
 * loop.c - the poll loop: one poll() over the output pipes, stdin pipes and
 * pidfds of every job it drives (runs and tasks), with the nearest deadline
 * (timeout, kill grace) on CLOCK_MONOTONIC as its timeout. No periodic
 * wake-ups, no SIGCHLD handler, no waitpid(-1): a shell is waited for by its
 * own pid. The same round is exposed to hosts that run their own loop
 * (shexec_session_pollfds / shexec_session_process).
 *
 * The loop drives jobs: processes (proc.c: signals, deadlines, reaping),
 * streams (stream.c) and stdin queues (job.c); a shell's exit's leftovers
 * and a command's finish are ending.c's. What an ending means (run state,
 * session cwd, leftovers as a task, task callbacks, releasing what
 * callbacks freed) is reported through each job's own callbacks (job.h)
 * and the loop's round end, set by their owners. Without pidfds (old
 * kernels, valgrind, or forced for testing) an exit is noticed by
 * waitid(WNOHANG) at pipe EOF and on a backoff (1 ms doubling to 50 ms);
 * anchors likewise.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shx/base.h"
#include "loop/ending.h"
#include "loop/group.h"
#include "loop/job.h"
#include "loop/loop.h"
#include "shx/platform.h"
#include "loop/proc.h"
#include "spawn/spawn.h"
#include "stream/stream.h"

enum { FD_OUT, FD_ERR, FD_PID, FD_IN, FD_ANCHOR, FD_SIDE };

void shx_loop_add(shx_loop *l, shx_job *j)
{
    j->next_active = l->active;
    l->active = j;
}

/* t, when it is earlier than *next (-1 stands for none in both) */
static void min_deadline(int64_t *next, int64_t t)
{
    *next = shx_proc_earlier(*next, t);
}

static void add_fd(struct pollfd *fds, shx_fd_owner *own, size_t cap, size_t *n, int fd,
                   short events, shx_job *j, int kind, int index)
{
    if (*n < cap) {
        fds[*n] = (struct pollfd){.fd = fd, .events = events, .revents = 0};
        if (own)
            own[*n] = (shx_fd_owner){j, kind, index};
    }
    (*n)++;
}

void shx_loop_enforce(shx_loop *l)
{
    int64_t now = shx_now_ns();
    for (shx_job *j = l->active; j; j = j->next_active) {
        if (shx_quiet_enforce(j, now))
            shx_job_terminate(j, &l->jobs, SHX_END_IDLE, now);
        shx_proc_enforce(&j->proc, now, l->jobs.kill_grace_ms, l->jobs.use_pidfd);
    }
}

size_t shx_loop_collect(shx_loop *l, struct pollfd *fds, shx_fd_owner *own, size_t cap,
                        int64_t *next_ns)
{
    int64_t now = shx_now_ns();
    int64_t next = -1;
    size_t n = 0;
    for (shx_job *j = l->active; j; j = j->next_active) {
        if (shx_proc_live(&j->proc)) {
            /* a deadline already passed wakes the host at once: the
             * enforcing is shx_loop_enforce()'s, never a listing's */
            shx_quiet_next(j, &next);
            min_deadline(&next, shx_proc_next_due(&j->proc, now));
            if (j->proc.phase == SHX_PROC_ANCHORED && j->hangup_checks > 0)
                min_deadline(&next, j->hangup_check_ns);
            if (j->draining)
                min_deadline(&next, shx_job_drain_due(j));
        }
        if (j->out.fd >= 0)
            add_fd(fds, own, cap, &n, j->out.fd, POLLIN, j, FD_OUT, 0);
        if (j->err.fd >= 0)
            add_fd(fds, own, cap, &n, j->err.fd, POLLIN, j, FD_ERR, 0);
        int pfd[SHX_PROC_POLLFDS], anchor[SHX_PROC_POLLFDS];
        for (int i = 0, k = shx_proc_pollfds(&j->proc, pfd, anchor); i < k; i++)
            add_fd(fds, own, cap, &n, pfd[i], POLLIN, j, anchor[i] < 0 ? FD_PID : FD_ANCHOR,
                   anchor[i] < 0 ? 0 : anchor[i]);
        /* the owner's side channel, while the shell runs and from the time
         * its owner asked (once the shell is gone, what is left there is
         * taken when the job ends) */
        if (j->side_fd >= 0 && !shx_proc_exited(&j->proc)) {
            if (now >= j->side_from_ns)
                add_fd(fds, own, cap, &n, j->side_fd, POLLIN, j, FD_SIDE, 0);
            else if (j->side_from_ns != SHX_SIDE_AT_END)
                min_deadline(&next, j->side_from_ns);
        }
        if (j->stdin_fd >= 0 && (shx_job_input_left(j) > 0 || j->stdin_close))
            add_fd(fds, own, cap, &n, j->stdin_fd, POLLOUT, j, FD_IN, 0);
        /* output a read pushed out (ANSI stripping) waits for the callback:
         * the next round hands it over, without waiting for more */
        if (shx_stream_has_queued(&j->out) || shx_stream_has_queued(&j->err))
            min_deadline(&next, now);
    }
    *next_ns = next;
    return n;
}

int shx_loop_dispatch(shx_loop *l, const struct pollfd *fds, const shx_fd_owner *own,
                      size_t n)
{
    int output = 0;
    /* what reads pushed out since the last round goes to the callbacks
     * first: it came before anything read now */
    for (shx_job *j = l->active; j; j = j->next_active) {
        shx_stream_give_queued(&j->out);
        shx_stream_give_queued(&j->err);
    }
    for (size_t i = 0; i < n; i++) {
        if (!fds[i].revents)
            continue;
        shx_job *j = own[i].job;
        switch (own[i].kind) {
        case FD_OUT:
        case FD_ERR: {
            shx_stream *st = own[i].kind == FD_OUT ? &j->out : &j->err;
            if (shx_stream_read(st) == SHX_STREAM_DATA) {
                output = 1;
                j->last_stream = st->id;
                shx_quiet_output(j, shx_now_ns()); /* not idle, not waiting, not quiet */
            }
            break;
        }
        case FD_PID:
            shx_proc_check(&j->proc);
            break;
        case FD_SIDE:
            if (j->on_side)
                j->on_side(j->ctx);
            break;
        case FD_IN:
            shx_job_input_flush(j, (fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0);
            shx_quiet_activity(j, shx_now_ns()); /* input went: not waiting */
            break;
        case FD_ANCHOR:
            /* the anchor index may have moved if an earlier one was dropped */
            for (int a = 0; a < j->proc.group.n; a++)
                if (j->proc.group.pidfd[a] == fds[i].fd) {
                    shx_group_drop(&j->proc.group, a);
                    break;
                }
            break;
        }
    }
    return output;
}

int shx_loop_settle(shx_loop *l, int look_now)
{
    int64_t now = shx_now_ns();
    int finished = 0;
    shx_job *done = NULL, *born = NULL;
    for (shx_job **pp = &l->active; *pp;) {
        shx_job *j = *pp;
        int due = shx_proc_look_due(&j->proc, now);
        if (!shx_proc_exited(&j->proc) && j->proc.pidfd < 0 &&
            (due || look_now || (j->out.fd < 0 && j->err.fd < 0)))
            shx_proc_check(&j->proc);
        int end = 0;
        if (j->draining && j->proc.sent == SHX_SENT_NONE && shx_job_drain_over(j, now)) {
            end = shx_job_drain_end(j, &l->jobs, now, &born);
        } else if (j->proc.phase == SHX_PROC_PINNED) {
            /* followed by its pipes; once SIGKILL is sent nothing in the
             * group runs on, whatever still holds a pipe (an escapee) */
            if ((j->out.fd < 0 && j->err.fd < 0) || j->proc.sent == SHX_SENT_KILL) {
                shx_job_finish(j, &l->jobs, now);
                end = 1;
            }
        } else if (shx_proc_following(&j->proc)) {
            if (due && shx_group_unwatched(&j->proc.group))
                shx_group_prune(&j->proc.group);
            int look = j->proc.cgroup ? due : j->proc.group.n == 0;
            if (j->hangup_checks > 0 && now >= j->hangup_check_ns) {
                shx_proc_hangup_missed(&j->proc);
                /* the k-th look waits 4^k times the first */
                if (--j->hangup_checks > 0)
                    j->hangup_check_ns = now + (SHX_HANGUP_FIRST_NS << (2 * (SHX_HANGUP_CHECKS - j->hangup_checks)));
            }
            /* every anchor ended (or, with a cgroup, the look is due): look
             * for members left behind */
            if (look) {
                if (!shx_proc_anchor(&j->proc, l->jobs.use_pidfd)) {
                    shx_job_finish(j, &l->jobs, now);
                    end = 1;
                }
            }
        } else if (shx_proc_exited(&j->proc)) {
            end = shx_job_shell_exited(j, &l->jobs, now, &born);
        }
        if (end) {
            *pp = j->next_active;
            j->next_active = done;
            done = j;
            finished++;
            continue;
        }
        pp = &j->next_active;
    }
    /* tasks adopted in this round join the loop once the walk is over */
    while (born) {
        shx_job *j = born;
        born = j->next_active;
        shx_loop_add(l, j);
    }
    /* completion callbacks last, when the active list is consistent again */
    while (done) {
        shx_job *j = done;
        done = j->next_active;
        j->next_active = NULL;
        if (j->on_finished)
            j->on_finished(j->ctx);
    }
    return finished;
}

/* After a round: nothing holds job pointers, deferred frees can happen. */
static void end_round(shx_loop *l, int outer)
{
    if (!outer) {
        l->in_loop = 0;
        l->round_end(l->round_end_ctx);
        l->in_loop = 1;
    }
}

/*
 * Output that has just come is likely to go on: a writer filling its pipe
 * in small writes (coreutils writes 8 KiB at a time) would wake this thread
 * for each one, and waking a processor that went idle costs more than the
 * read, most of all on a virtual machine. So after a round that read
 * output, the loop looks again without sleeping, yielding the processor in
 * between (a writer on this one runs), for at most OUTPUT_SPIN_NS before it
 * sleeps in poll(). Rounds that read nothing never spin: an idle command
 * wakes the host no more often.
 */
#define OUTPUT_SPIN_NS 10000

/* How long until next (-1: no deadline), to the nanosecond where the
 * platform can: a deadline rounded up to whole milliseconds would be kept
 * up to 1 ms late. */
static int64_t wait_for(int64_t next)
{
    int64_t wait_ns = next >= 0 ? next - shx_now_ns() : -1;
    return next >= 0 && wait_ns < 0 ? 0 : wait_ns;
}

/* poll() without sleeping until an event, for OUTPUT_SPIN_NS or wait_ns if shorter */
static int poll_briefly(shx_loop *l, struct pollfd *fds, nfds_t n, int64_t wait_ns)
{
    int64_t spin = wait_ns >= 0 && wait_ns < OUTPUT_SPIN_NS ? wait_ns : OUTPUT_SPIN_NS;
    int64_t until = shx_now_ns() + spin;
    int got;
    l->output_spins++;
    while ((got = shx_poll_ns(fds, n, 0)) == 0 && shx_now_ns() < until)
        sched_yield();
    return got;
}

/*
 * `until` must outlive the call: a callback may ask to free what owns it,
 * and the caller holds it so that the release waits until nothing looks at
 * it any more.
 */
int shx_loop_run(shx_loop *l, const shx_job *until, int stop_on_any, int64_t timeout_ns,
                 int *finished_out)
{
    int finished_total = 0;
    struct pollfd small_fds[24];
    shx_fd_owner small_own[24];
    struct pollfd *fds = small_fds;
    shx_fd_owner *own = small_own;
    size_t cap = 24;
    int rc = SHEXEC_OK;
    int64_t end = timeout_ns >= 0 ? shx_now_ns() + timeout_ns : -1;

    int outer = l->in_loop;
    l->in_loop = 1;
    /* without a pidfd, an exit is otherwise seen only when its backed-off
     * check falls due: a call made after the shell ended sees it ended */
    int look_now = 1;
    int output = 0; /* the last round read output */
    for (;;) {
        if (until && (until->ended || shx_quiet_stops(&until->quiet)))
            break;
        if (!l->active)
            break;

        shx_loop_enforce(l);
        if (until && shx_quiet_stops(&until->quiet))
            break; /* its caller hands it to the background, or reports the wait */
        int64_t next;
        size_t n = shx_loop_collect(l, fds, own, cap, &next);
        if (n > cap) {
            struct pollfd *nf = malloc(n * sizeof *nf);
            shx_fd_owner *no = malloc(n * sizeof *no);
            if (!nf || !no) {
                free(nf);
                free(no);
                rc = shx_fail(l->errs, SHEXEC_ENOMEM, "out of memory");
                break;
            }
            if (fds != small_fds) {
                free(fds);
                free(own);
            }
            fds = nf;
            own = no;
            cap = n;
            continue;
        }
        if (end >= 0)
            min_deadline(&next, end);
        int64_t wait_ns = wait_for(next);
        int got = output && wait_ns != 0 ? poll_briefly(l, fds, (nfds_t)n, wait_ns) : 0;
        if (got == 0)
            got = shx_poll_ns(fds, (nfds_t)n, output ? wait_for(next) : wait_ns);
        if (got < 0) {
            if (errno == EINTR)
                continue; /* deadlines are absolute: the next round waits what remains */
            rc = shx_fail(l->errs, SHEXEC_ESYS, "poll failed: %s", strerror(errno));
            break;
        }
        /* also without events: queued output may wait for a callback */
        output = shx_loop_dispatch(l, fds, own, got > 0 ? n : 0);
        int finished = shx_loop_settle(l, look_now);
        look_now = 0;
        finished_total += finished;
        end_round(l, outer);
        if (finished && stop_on_any)
            break;
        if (end >= 0 && shx_now_ns() >= end)
            break;
    }
    l->in_loop = outer;
    if (fds != small_fds) {
        free(fds);
        free(own);
    }
    if (finished_out)
        *finished_out = finished_total;
    return rc;
}
