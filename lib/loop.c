/*
 * loop.c - the session's poll loop: one poll() over the output pipes, stdin
 * pipes and pidfds of every live run and task, with the nearest deadline
 * (timeout, kill grace) on CLOCK_MONOTONIC as its timeout. No periodic
 * wake-ups, no SIGCHLD handler, no waitpid(-1): a shell is waited for by its
 * own pid. The same round is exposed to hosts that run their own loop
 * (shexec_session_pollfds / shexec_session_process).
 *
 * The loop drives processes (proc.c: signals, deadlines, reaping) and
 * streams (stream.c); a shell's exit's leftovers and a command's finish are
 * ending.c's. What an ending means (run state, session cwd, leftovers as a
 * task, task callbacks, releasing what callbacks freed) is reported through
 * each run's own callbacks (run.h) and the session's round end. Without pidfds (old kernels,
 * valgrind, or forced for testing) an exit is noticed by waitid(WNOHANG)
 * at pipe EOF and on a backoff (1 ms doubling to 50 ms); anchors likewise.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform.h"
#include "session.h"
#include "spawn.h"
#include "ending.h"
#include "run.h"
#include "loop.h"
#include "proc.h"
#include "stream.h"

#define FALLBACK_MAX_NS 50000000LL
/* At most this much queued input is written to one command per round, so
 * that a reader as fast as the writer cannot keep the loop from its
 * deadlines and from the other commands. */
#define STDIN_ROUND_MAX (1u << 20)

enum { FD_OUT, FD_ERR, FD_PID, FD_IN, FD_ANCHOR };

void shx_loop_add(shexec_session *s, shexec_run *r)
{
    r->next_active = s->active;
    s->active = r;
}

static void min_deadline(int64_t *next, int64_t t)
{
    if (*next < 0 || t < *next)
        *next = t;
}

static void add_fd(struct pollfd *fds, shx_fd_owner *own, size_t cap, size_t *n, int fd,
                   short events, shexec_run *r, int kind, int index)
{
    if (*n < cap) {
        fds[*n] = (struct pollfd){.fd = fd, .events = events, .revents = 0};
        if (own)
            own[*n] = (shx_fd_owner){r, kind, index};
    }
    (*n)++;
}

void shx_loop_enforce(shexec_session *s)
{
    int64_t now = shx_now_ns();
    for (shexec_run *r = s->active; r; r = r->next_active)
        shx_proc_enforce(&r->proc, now, s->kill_grace_ms, s->use_pidfd);
}

size_t shx_loop_collect(shexec_session *s, struct pollfd *fds, shx_fd_owner *own, size_t cap,
                        int64_t *next_ns)
{
    int64_t now = shx_now_ns();
    int64_t next = -1;
    size_t n = 0;
    for (shexec_run *r = s->active; r; r = r->next_active) {
        int live = !shx_proc_exited(&r->proc) || shx_proc_following(&r->proc);
        if (live) {
            /* a deadline already passed wakes the host at once: the
             * enforcing is shx_loop_enforce()'s, never a listing's */
            if (r->proc.sent == SHX_SENT_NONE && !r->proc.no_timeout)
                min_deadline(&next, r->proc.deadline_ns);
            else if (r->proc.sent == SHX_SENT_TERM)
                min_deadline(&next, r->proc.kill_at_ns);
            if ((!shx_proc_exited(&r->proc) && r->proc.pidfd < 0) || (shx_proc_following(&r->proc) && shx_group_unwatched(&r->proc.group)))
                min_deadline(&next, r->proc.next_check_ns);
            /* signalling may have found every anchor gone: with no pidfd
             * or deadline left to wake the loop, settle must run now to
             * look for other members or finish the run */
            if (shx_proc_following(&r->proc) && r->proc.phase != SHX_PROC_PINNED && r->proc.group.n == 0)
                min_deadline(&next, now);
            if (shx_proc_following(&r->proc) && r->proc.phase != SHX_PROC_PINNED && r->hangup_checks > 0)
                min_deadline(&next, r->hangup_check_ns);
        }
        if (r->out.fd >= 0)
            add_fd(fds, own, cap, &n, r->out.fd, POLLIN, r, FD_OUT, 0);
        if (r->err.fd >= 0)
            add_fd(fds, own, cap, &n, r->err.fd, POLLIN, r, FD_ERR, 0);
        if (r->proc.pidfd >= 0 && !shx_proc_exited(&r->proc))
            add_fd(fds, own, cap, &n, r->proc.pidfd, POLLIN, r, FD_PID, 0);
        if (r->stdin_fd >= 0 && (shx_run_input_left(r) > 0 || r->stdin_close))
            add_fd(fds, own, cap, &n, r->stdin_fd, POLLOUT, r, FD_IN, 0);
        /* output a read pushed out (ANSI stripping) waits for the callback:
         * the next round hands it over, without waiting for more */
        if (shx_stream_has_queued(&r->out) || shx_stream_has_queued(&r->err))
            min_deadline(&next, now);
        if (shx_proc_following(&r->proc))
            for (int i = 0; i < r->proc.group.n; i++)
                if (r->proc.group.pidfd[i] >= 0)
                    add_fd(fds, own, cap, &n, r->proc.group.pidfd[i], POLLIN, r, FD_ANCHOR, i);
    }
    *next_ns = next;
    return n;
}

/* A drained queue bigger than this is given back rather than kept. */
#define STDIN_KEEP_MAX (1u << 20)

size_t shx_run_input_left(const shexec_run *r)
{
    return r->stdin_buf.len - r->stdin_off;
}

/*
 * Written bytes stay in front of the queue until they are at least as many
 * as those left, and only then are the rest moved to the front: each move
 * is paid for by the writes since the last one, so the bytes moved never
 * exceed the bytes written, and the buffer never holds more than twice
 * what is left (plus what is appended).
 */
void shx_run_input_written(shexec_run *r)
{
    size_t left = shx_run_input_left(r);
    if (left == 0) {
        r->stdin_off = 0;
        if (r->stdin_buf.cap > STDIN_KEEP_MAX)
            shx_buf_free(&r->stdin_buf);
        else
            shx_buf_clear(&r->stdin_buf);
    } else if (r->stdin_off >= left) {
        memmove(r->stdin_buf.data, r->stdin_buf.data + r->stdin_off, left);
        r->stdin_buf.len = left;
        r->stdin_buf.data[left] = '\0';
        r->stdin_off = 0;
    }
}

/*
 * Write queued input, at most STDIN_ROUND_MAX bytes this round; on EPIPE
 * the reader is gone and the rest is dropped. Written bytes are only
 * counted here (stdin_off): the queue drops them in amortized linear time
 * (shx_run_input_written), never by moving the rest after each write.
 */
static void flush_stdin(shexec_run *r)
{
    size_t budget = STDIN_ROUND_MAX;
    while (r->stdin_fd >= 0 && budget > 0) {
        size_t left = shx_run_input_left(r);
        if (left == 0)
            break;
        ssize_t w = shx_write_nosigpipe(r->stdin_fd, r->stdin_buf.data + r->stdin_off,
                                        left < budget ? left : budget);
        if (w > 0) {
            r->stdin_off += (size_t)w;
            budget -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        shx_run_input_close(r);
        return;
    }
    shx_run_input_written(r);
    if (r->stdin_fd >= 0 && r->stdin_close && shx_run_input_left(r) == 0)
        shx_run_input_close(r);
}

int shx_loop_dispatch(shexec_session *s, const struct pollfd *fds, const shx_fd_owner *own,
                      size_t n)
{
    int output = 0;
    /* what reads pushed out since the last round goes to the callbacks
     * first: it came before anything read now */
    for (shexec_run *r = s->active; r; r = r->next_active) {
        shx_stream_give_queued(&r->out);
        shx_stream_give_queued(&r->err);
    }
    for (size_t i = 0; i < n; i++) {
        if (!fds[i].revents)
            continue;
        shexec_run *r = own[i].run;
        switch (own[i].kind) {
        case FD_OUT:
            output |= shx_stream_read(&r->out) == SHX_STREAM_DATA;
            break;
        case FD_ERR:
            output |= shx_stream_read(&r->err) == SHX_STREAM_DATA;
            break;
        case FD_PID:
            shx_proc_check(&r->proc);
            break;
        case FD_IN:
            if (fds[i].revents & (POLLERR | POLLHUP | POLLNVAL))
                shx_run_input_close(r);
            else
                flush_stdin(r);
            break;
        case FD_ANCHOR:
            /* the anchor index may have moved if an earlier one was dropped */
            for (int a = 0; a < r->proc.group.n; a++)
                if (r->proc.group.pidfd[a] == fds[i].fd) {
                    shx_group_drop(&r->proc.group, a);
                    break;
                }
            break;
        }
    }
    return output;
}

/*
 * The shell's pipes hang up as it closes its descriptors on its way out, a
 * few microseconds before it is a zombie and its pidfd turns readable, so a
 * loop that went back to poll() would sleep and be woken again for the
 * exit. Yielding the processor for that while is cheaper, once per run and
 * bounded: a shell that closed its output and runs on is left to poll().
 * Only for a run alone in the loop: with others, their events come first.
 */
#define EXIT_AWAIT_NS 50000

static void await_exit_briefly(shx_proc *p)
{
    p->exit_awaited = 1;
    int64_t until = shx_now_ns() + EXIT_AWAIT_NS;
    do {
        sched_yield();
        shx_proc_check(p);
    } while (!shx_proc_exited(p) && shx_now_ns() < until);
}

int shx_loop_settle(shexec_session *s, int look_now)
{
    int64_t now = shx_now_ns();
    int finished = 0;
    shexec_run *done = NULL, *born = NULL;
    for (shexec_run **pp = &s->active; *pp;) {
        shexec_run *r = *pp;
        int due = now >= r->proc.next_check_ns;
        if (due) {
            r->proc.check_backoff_ns = r->proc.check_backoff_ns * 2 > FALLBACK_MAX_NS
                                      ? FALLBACK_MAX_NS
                                      : r->proc.check_backoff_ns * 2;
            r->proc.next_check_ns = now + r->proc.check_backoff_ns;
        }
        if (!shx_proc_exited(&r->proc) && r->proc.pidfd < 0 &&
            (due || look_now || (r->out.fd < 0 && r->err.fd < 0)))
            shx_proc_check(&r->proc);
        else if (!shx_proc_exited(&r->proc) && !r->proc.exit_awaited && r->out.fd < 0 && r->err.fd < 0 &&
                 s->active == r && !r->next_active)
            await_exit_briefly(&r->proc);
        int end = 0;
        if (r->proc.phase == SHX_PROC_PINNED) {
            /* followed by its pipes; once SIGKILL is sent nothing in the
             * group runs on, whatever still holds a pipe (an escapee) */
            if ((r->out.fd < 0 && r->err.fd < 0) || r->proc.sent == SHX_SENT_KILL) {
                shx_run_finish(r, now);
                end = 1;
            }
        } else if (shx_proc_following(&r->proc)) {
            if (due && shx_group_unwatched(&r->proc.group))
                shx_group_prune(&r->proc.group);
            if (r->hangup_checks > 0 && now >= r->hangup_check_ns) {
                shx_group_signal_missed(&r->proc.group, SIGHUP);
                /* the k-th look waits 4^k times the first */
                if (--r->hangup_checks > 0)
                    r->hangup_check_ns = now + (SHX_HANGUP_FIRST_NS << (2 * (SHX_HANGUP_CHECKS - r->hangup_checks)));
            }
            /* every anchor ended: look for members they left behind */
            if (r->proc.group.n == 0) {
                if (!shx_proc_anchor(&r->proc, s->use_pidfd)) {
                    shx_run_finish(r, now);
                    end = 1;
                }
            }
        } else if (shx_proc_exited(&r->proc)) {
            end = shx_run_shell_exited(s, r, now, &born);
        }
        if (end) {
            *pp = r->next_active;
            r->next_active = done;
            done = r;
            finished++;
            continue;
        }
        pp = &r->next_active;
    }
    /* tasks adopted in this round join the loop once the walk is over */
    while (born) {
        shexec_run *r = born;
        born = r->next_active;
        shx_loop_add(s, r);
    }
    /* completion callbacks last, when the active list is consistent again */
    while (done) {
        shexec_run *r = done;
        done = r->next_active;
        r->next_active = NULL;
        if (r->on_finished)
            r->on_finished(r);
    }
    return finished;
}

/* After a round: nothing holds run pointers, deferred frees can happen. */
static void end_round(shexec_session *s, int outer)
{
    if (!outer) {
        s->in_loop = 0;
        s->round_end(s);
        s->in_loop = 1;
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
static int poll_briefly(shexec_session *s, struct pollfd *fds, nfds_t n, int64_t wait_ns)
{
    int64_t spin = wait_ns >= 0 && wait_ns < OUTPUT_SPIN_NS ? wait_ns : OUTPUT_SPIN_NS;
    int64_t until = shx_now_ns() + spin;
    int got;
    s->output_spins++;
    while ((got = shx_poll_ns(fds, n, 0)) == 0 && shx_now_ns() < until)
        sched_yield();
    return got;
}

/*
 * `until` is held for the whole call: a callback may free it (or the run
 * of a task being waited for), and its release must wait until nothing
 * looks at it any more; the caller then finds free_pending set.
 */
int shx_loop(shexec_session *s, shexec_run *until, int stop_on_any, int64_t timeout_ns,
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

    int outer = s->in_loop;
    s->in_loop = 1;
    if (until)
        until->held++;
    /* without a pidfd, an exit is otherwise seen only when its backed-off
     * check falls due: a call made after the shell ended sees it ended */
    int look_now = 1;
    int output = 0; /* the last round read output */
    for (;;) {
        if (until && until->state != SHEXEC_STATE_RUNNING)
            break;
        if (!s->active)
            break;

        shx_loop_enforce(s);
        int64_t next;
        size_t n = shx_loop_collect(s, fds, own, cap, &next);
        if (n > cap) {
            struct pollfd *nf = malloc(n * sizeof *nf);
            shx_fd_owner *no = malloc(n * sizeof *no);
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
            cap = n;
            continue;
        }
        if (end >= 0)
            min_deadline(&next, end);
        int64_t wait_ns = wait_for(next);
        int got = output && wait_ns != 0 ? poll_briefly(s, fds, (nfds_t)n, wait_ns) : 0;
        if (got == 0)
            got = shx_poll_ns(fds, (nfds_t)n, output ? wait_for(next) : wait_ns);
        if (got < 0) {
            if (errno == EINTR)
                continue; /* deadlines are absolute: the next round waits what remains */
            rc = shx_fail(s, SHEXEC_ESYS, "poll failed: %s", strerror(errno));
            break;
        }
        /* also without events: queued output may wait for a callback */
        output = shx_loop_dispatch(s, fds, own, got > 0 ? n : 0);
        int finished = shx_loop_settle(s, look_now);
        look_now = 0;
        finished_total += finished;
        end_round(s, outer);
        if (finished && stop_on_any)
            break;
        if (end >= 0 && shx_now_ns() >= end)
            break;
    }
    if (until)
        until->held--;
    s->in_loop = outer;
    if (fds != small_fds) {
        free(fds);
        free(own);
    }
    if (finished_out)
        *finished_out = finished_total;
    return rc;
}
