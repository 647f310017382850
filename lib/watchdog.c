/*
 * watchdog.c - the host's side of the watchdog (see watchdog.h): starting
 * it, telling it about the session's groups, stopping it.
 *
 * It is a fork() of the host, not a helper program: a host that loads only
 * the shared library (any FFI) has nothing else to execute, and a fork needs
 * no path. The host may be multithreaded, so the child runs only
 * async-signal-safe code (watchdog_proc.c) on an arena mapped before the
 * fork; the host unmaps its own view of the arena right after. The
 * channel's host end is close-on-exec and every command is spawned with
 * only 0-2 open, so neither the commands nor programs the host runs hold
 * it: the host's death (or its exit) is its last close.
 *
 * The channel is a packet socket pair where send() takes MSG_NOSIGNAL (one
 * system call a message, no SIGPIPE to block around it), else a pipe;
 * either takes a small write whole or not at all. Messages are written
 * non-blocking; a watchdog slow enough to fill the channel (thousands of
 * messages behind) gets up to a second before a message is dropped. A
 * command's end (FORGET) waits to go with the next message, in one write:
 * one wake-up of the watchdog per command, not two. A group it has not yet
 * been told is over can no longer be proven (its leader and anchors are
 * reaped: a pid used again has another start time), so it is never
 * signalled.
 */
#include "watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libc_ext.h"
#include "platform.h"
#include "session.h"
#include "spawn.h"
#include "testhook.h"
#include "watchdog_fork.h"
#include "watchdog_proc.h"
#include "run.h"

static void reap(shexec_session *s, int patient)
{
    if (s->watchdog_pid <= 0)
        return;
    /* it exits at once on QUIT or EOF: a second is plenty; then it is
     * killed (an unreaped child of ours: its pid is still its own) */
    for (int i = 0; patient && i < 1000; i++) {
        pid_t w = waitpid(s->watchdog_pid, NULL, WNOHANG);
        if (w == s->watchdog_pid || (w < 0 && errno == ECHILD)) {
            s->watchdog_pid = -1;
            return;
        }
        poll(NULL, 0, 1);
    }
    kill(s->watchdog_pid, SIGKILL);
    while (waitpid(s->watchdog_pid, NULL, 0) < 0 && errno == EINTR)
        ;
    s->watchdog_pid = -1;
}

/* packets: a write is whole or not at all, as a pipe's small writes are */
#if defined(MSG_NOSIGNAL) && defined(SOCK_CLOEXEC) && defined(SOCK_SEQPACKET)
#define CHANNEL_SOCKET 1
#endif

static int channel(int fds[2])
{
#ifdef CHANNEL_SOCKET
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds);
#else
    return shx_pipe_cloexec(fds);
#endif
}

static ssize_t channel_write(int fd, const void *data, size_t len)
{
#ifdef CHANNEL_SOCKET
    return send(fd, data, len, MSG_NOSIGNAL);
#else
    return shx_write_nosigpipe(fd, data, len);
#endif
}

/*
 * The channel is still the one the watchdog reads. A host may close every
 * descriptor it did not open itself (closefrom) and open files of its own
 * at their numbers: the library then must neither write to nor close that
 * number. The watchdog, whose parent the host still is, waits for the
 * host's end instead of acting on the channel's (watchdog_proc.c); it is
 * told to go (it is our unreaped child: its pid is its own), and the next
 * command starts a new one.
 */
static int channel_intact(shexec_session *s)
{
    if (s->watchdog_fd < 0)
        return 0;
    unsigned long long id[2];
    if (shx_fd_identity(s->watchdog_fd, id) == 0 && id[0] == s->watchdog_id[0] &&
        id[1] == s->watchdog_id[1])
        return 1;
    s->watchdog_fd = -1;
    if (s->watchdog_pid > 0)
        kill(s->watchdog_pid, SIGKILL);
    reap(s, 0);
    return 0;
}

/* m, after the ends the watchdog has not been told of yet, in one write. */
static void send_msg(shexec_session *s, const shx_wd_msg *m)
{
    if (!channel_intact(s))
        return;
    shx_wd_msg batch[SHX_WD_FORGET_BATCH + 1];
    size_t n = 0;
    for (; n < s->watchdog_nforget; n++)
        batch[n] = (shx_wd_msg){.type = SHX_WD_FORGET, .pgid = s->watchdog_forget[n]};
    s->watchdog_nforget = 0;
    if (m)
        batch[n++] = *m;
    size_t len = n * sizeof *batch;
    for (int tries = 0; tries < 2 && n; tries++) {
        ssize_t w = channel_write(s->watchdog_fd, batch, len);
        if (w == (ssize_t)len)
            return;
        if (w < 0 && errno == EINTR) {
            tries--;
            continue;
        }
        if (w < 0 && errno == EAGAIN) {
            struct pollfd p = {.fd = s->watchdog_fd, .events = POLLOUT};
            poll(&p, 1, 1000);
            continue;
        }
        break;
    }
    if (errno == EAGAIN)
        return; /* dropped: the watchdog is stuck, not gone */
    /* the watchdog is gone (killed from outside): nothing to tell any more */
    close(s->watchdog_fd);
    s->watchdog_fd = -1;
    reap(s, 1);
}

void shx_watchdog_group(shexec_session *s, pid_t pgid)
{
    if (s->watchdog_fd < 0 && s->watchdog_pid <= 0)
        return;
    /* a channel the host closed: a new watchdog, told what runs now */
    if (!channel_intact(s) && shx_watchdog_start(s) != SHEXEC_OK)
        return;
    /* read while the leader is our unreaped child, whose pid is its own */
    shx_wd_msg m = {.type = SHX_WD_GROUP, .pgid = pgid, .start = shx_wd_start_time(pgid)};
    send_msg(s, &m);
}

void shx_watchdog_anchors(shexec_session *s, const shx_group *g)
{
    for (int i = 0; i < g->n && s->watchdog_fd >= 0; i++) {
        uint64_t start = g->start[i];
        /* with a pidfd, proof that the start time read was the anchor's */
        struct pollfd p = {.fd = g->pidfd[i], .events = POLLIN};
        if (!start || (g->pidfd[i] >= 0 && poll(&p, 1, 0) != 0))
            continue;
        shx_wd_msg m = {.type = SHX_WD_ANCHOR, .pgid = g->pgid, .pid = g->pid[i], .start = start};
        send_msg(s, &m);
    }
}

void shx_watchdog_forget(shexec_session *s, pid_t pgid)
{
    if (s->watchdog_fd < 0)
        return;
    s->watchdog_forget[s->watchdog_nforget++] = pgid;
    if (s->watchdog_nforget == SHX_WD_FORGET_BATCH)
        send_msg(s, NULL);
}

void shx_watchdog_grace(shexec_session *s)
{
    shx_wd_msg m = {.type = SHX_WD_GRACE, .grace_ms = s->kill_grace_ms};
    send_msg(s, &m);
}

/* A descriptor >= 3, close-on-exec, in place of fd. */
static int above_stdio(int fd)
{
    if (fd >= 3)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return moved;
}

/*
 * A fork that runs no pthread_atfork handlers (platform.c: _Fork where the
 * running glibc has it), so none of the host's code runs in the watchdog.
 * Sanitizers keep their own state across fork() only, so they get fork().
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define USE_PLAIN_FORK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define USE_PLAIN_FORK 1
#endif
#endif

static pid_t fork_watchdog(void)
{
#ifdef USE_PLAIN_FORK
    return fork();
#else
    return shx_fork_bare();
#endif
}

/* for the tests (testhook.h) */
static _Atomic uint32_t test_pause_ms;

void shx_test_watchdog_pause(uint32_t ms)
{
    test_pause_ms = ms;
}

int shx_watchdog_start(shexec_session *s)
{
    if (s->watchdog_fd >= 0)
        return SHEXEC_OK;
    shx_wd_arena *a = shx_map_zeroed(sizeof *a);
    if (a == MAP_FAILED)
        return shx_fail(s, SHEXEC_ENOMEM, "cannot map the watchdog's tables: %s",
                        strerror(errno));
    int fds[2];
    if (channel(fds) != 0) {
        int e = errno;
        munmap(a, sizeof *a);
        return shx_fail(s, SHEXEC_ESYS, "cannot create the watchdog's channel: %s", strerror(e));
    }
    fds[0] = above_stdio(fds[0]);
    fds[1] = above_stdio(fds[1]);
    struct rlimit rl;
    a->fd = fds[0];
    a->max_fd = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur
                                                                           : 65536;
    a->grace_ms = s->kill_grace_ms;
    a->host = getpid();
    a->test_pause_ms = test_pause_ms;
    pid_t pid = fds[0] < 0 || fds[1] < 0 ? -1 : fork_watchdog();
    if (pid == 0) {
        shx_wd_become(a);
        shx_wd_main(a);
    }
    int e = errno;
    munmap(a, sizeof *a);
    if (fds[0] >= 0)
        close(fds[0]);
    if (pid < 0) {
        if (fds[1] >= 0)
            close(fds[1]);
        return shx_fail(s, SHEXEC_ESYS, "cannot start the watchdog: %s", strerror(e));
    }
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    if (shx_fd_identity(fds[1], s->watchdog_id) != 0)
        s->watchdog_id[0] = s->watchdog_id[1] = 0;
    s->watchdog_fd = fds[1];
    s->watchdog_nforget = 0;
    s->watchdog_pid = pid;
    /* commands already running are the session's too */
    for (shexec_run *r = s->active; r; r = r->next_active) {
        if (!shx_proc_reaped(&r->proc))
            shx_watchdog_group(s, r->proc.pid);
        if (shx_proc_following(&r->proc))
            shx_watchdog_anchors(s, &r->proc.group);
    }
    return SHEXEC_OK;
}

void shx_watchdog_stop(shexec_session *s)
{
    if (s->watchdog_fd < 0 && s->watchdog_pid <= 0)
        return;
    shx_wd_msg m = {.type = SHX_WD_QUIT};
    send_msg(s, &m); /* checks the channel: one the host closed is not ours to close */
    if (s->watchdog_fd >= 0)
        close(s->watchdog_fd);
    s->watchdog_fd = -1;
    reap(s, 1);
}

/* ---- test hooks (testhook.h) ------------------------------------------------ */

int64_t shx_test_watchdog_pid(const shexec_session *s)
{
    return s->watchdog_fd >= 0 ? (int64_t)s->watchdog_pid : -1;
}

void shx_test_watchdog_claim(shexec_session *s, int64_t pgid, uint64_t start)
{
    shx_wd_msg m = {.type = SHX_WD_GROUP, .pgid = (int32_t)pgid, .start = start};
    send_msg(s, &m);
}

uint64_t shx_test_start_time(int64_t pid)
{
    return shx_wd_start_time((pid_t)pid);
}
