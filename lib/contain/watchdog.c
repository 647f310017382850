/*
 * watchdog.c - the host's side of the watchdog (see contain_hook.h): starting
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
 * The channel is a stream socket pair where send() takes MSG_NOSIGNAL (one
 * system call a message, no SIGPIPE to block around it, and no way in
 * through /proc/HOSTPID/fd), else a pipe. A packet socket would hold only
 * net.unix.max_dgram_qlen (10) messages unread, and the watchdog reads the
 * channel only every few milliseconds (watchdog_wait.c): a stream holds
 * hundreds of batches, and takes a batch this small whole or not at all (one
 * buffer; a pipe: below PIPE_BUF). Messages are written non-blocking; a
 * watchdog slow enough to fill the channel gets up to a second before a
 * batch is dropped. A command's end (FORGET) waits to go with the next
 * message, in one write. A group it has not yet been told is over can no
 * longer be proven (its leader and anchors are reaped: a pid used again has
 * another start time), so it is never signalled.
 */
#include "contain/contain_hook.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shx/base.h"
#include "shx/libc_ext.h"
#include "shx/platform.h"
#include "spawn/spawn.h"
#include "contain/watchdog_fork.h"
#include "contain/watchdog_proc.h"
#include "contain/watchdog_wait.h"
#include "loop/proc.h"

#define FORGET_BATCH 8

struct shx_watchdog {
    shexec_session *s;            /* whose message a failure sets */
    uint32_t grace_ms;
    shx_watchdog_replay_fn replay; /* tells a new watchdog what runs now */
    void *replay_ctx;
    int fd;                       /* write end of the channel, -1: none */
    unsigned long long id[2];     /* what it is (shx_fd_identity): a host may close it */
    pid_t pid;                    /* the watchdog, -1: none */
    pid_t forget[FORGET_BATCH];   /* ended groups not yet told */
    size_t nforget;
    char *cgroup;                 /* the session's cgroup (contain_hook.h), NULL: none */
};

static void reap(shx_watchdog *w, int patient)
{
    if (w->pid <= 0)
        return;
    /* it exits at once on QUIT or EOF: a second is plenty; then it is
     * killed (an unreaped child of ours: its pid is still its own) */
    for (int i = 0; patient && i < 1000; i++) {
        pid_t got = waitpid(w->pid, NULL, WNOHANG);
        if (got == w->pid || (got < 0 && errno == ECHILD)) {
            w->pid = -1;
            return;
        }
        poll(NULL, 0, 1);
    }
    kill(w->pid, SIGKILL);
    while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    w->pid = -1;
}

/* a socket where the system has one: no SIGPIPE to block around a write */
#if defined(MSG_NOSIGNAL) && defined(SOCK_CLOEXEC)
#define CHANNEL_SOCKET 1
#endif

static int channel(int fds[2])
{
#ifdef CHANNEL_SOCKET
    return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds);
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
static int channel_intact(shx_watchdog *w)
{
    if (w->fd < 0)
        return 0;
    unsigned long long id[2];
    if (shx_fd_identity(w->fd, id) == 0 && id[0] == w->id[0] &&
        id[1] == w->id[1])
        return 1;
    w->fd = -1;
    if (w->pid > 0)
        kill(w->pid, SIGKILL);
    reap(w, 0);
    return 0;
}

/* m, after the ends the watchdog has not been told of yet, in one write,
 * on a channel known intact. */
static void send_batch(shx_watchdog *w, const shx_wd_msg *m)
{
    shx_wd_msg batch[FORGET_BATCH + 1];
    size_t n = 0;
    for (; n < w->nforget; n++)
        batch[n] = (shx_wd_msg){.type = SHX_WD_FORGET, .pgid = w->forget[n]};
    w->nforget = 0;
    if (m)
        batch[n++] = *m;
    size_t len = n * sizeof *batch, off = 0;
    int err = 0;
    for (int waited = 0; off < len;) {
        ssize_t k = channel_write(w->fd, (const char *)batch + off, len - off);
        if (k > 0) {
            off += (size_t)k;
            continue;
        }
        err = k < 0 ? errno : EIO;
        if (err == EINTR)
            continue;
        if (err != EAGAIN || waited++)
            break;
        struct pollfd p = {.fd = w->fd, .events = POLLOUT};
        poll(&p, 1, 1000);
    }
    if (off == len || (off == 0 && err == EAGAIN))
        return; /* sent, or dropped whole: the watchdog is stuck, not gone */
    /* the watchdog is gone (killed from outside): nothing to tell any more;
     * or stuck with a batch cut short, after which it would read the stream
     * out of step: it is ended, and the next command starts another */
    close(w->fd);
    w->fd = -1;
    if (off && w->pid > 0)
        kill(w->pid, SIGKILL);
    reap(w, 1);
}

static void send_msg(shx_watchdog *w, const shx_wd_msg *m)
{
    if (channel_intact(w))
        send_batch(w, m);
}

/* A command started: its group, led by p's shell (our unreaped child). */
static void tell_group(shx_watchdog *w, const shx_proc *p)
{
    if (w->fd < 0 && w->pid <= 0)
        return;
    /* a channel the host closed: a new watchdog, told what runs now */
    if (!channel_intact(w) && shx_watchdog_start(w) != SHEXEC_OK)
        return;
    /* the spawn pins most start times (spawn.h); the others are read while
     * the leader is our unreaped child, whose pid is its own */
    shx_wd_msg m = {.type = SHX_WD_GROUP, .pgid = p->pid,
                    .start = p->start ? p->start : shx_wd_start_time(p->pid)};
    send_batch(w, &m);
}

/* The group's leader is gone: the members g anchors hold its id. */
static void tell_anchors(shx_watchdog *w, const shx_group *g)
{
    for (int i = 0; i < g->n && w->fd >= 0; i++) {
        uint64_t start = g->start[i];
        /* with a pidfd, proof that the start time read was the anchor's */
        struct pollfd p = {.fd = g->pidfd[i], .events = POLLIN};
        if (!start || (g->pidfd[i] >= 0 && poll(&p, 1, 0) != 0))
            continue;
        shx_wd_msg m = {.type = SHX_WD_ANCHOR, .pgid = g->pgid, .pid = g->pid[i], .start = start};
        send_msg(w, &m);
    }
}

/* The command of pgid is over (before its leader is reaped). */
static void tell_over(shx_watchdog *w, pid_t pgid)
{
    if (w->fd < 0)
        return;
    w->forget[w->nforget++] = pgid;
    if (w->nforget == FORGET_BATCH)
        send_msg(w, NULL);
}

void shx_watchdog_observe(void *ctx, int event, const shx_proc *p)
{
    shx_watchdog *w = ctx;
    if (event == SHX_PROC_EV_GROUP)
        tell_group(w, p);
    else if (event == SHX_PROC_EV_ANCHORS)
        tell_anchors(w, &p->group);
    else if (event == SHX_PROC_EV_OVER)
        tell_over(w, p->pid);
}

void shx_watchdog_set_grace(shx_watchdog *w, uint32_t grace_ms)
{
    if (!w)
        return;
    w->grace_ms = grace_ms;
    shx_wd_msg m = {.type = SHX_WD_GRACE, .grace_ms = grace_ms};
    send_msg(w, &m);
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

/* for the tests (testhook.c) */
static _Atomic uint32_t test_pause_ms;

void shx_watchdog_test_pause(uint32_t ms)
{
    test_pause_ms = ms;
}

shx_watchdog *shx_watchdog_new(shexec_session *s, uint32_t grace_ms, shx_watchdog_replay_fn replay,
                               void *ctx)
{
    shx_watchdog *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    *w = (shx_watchdog){.s = s, .grace_ms = grace_ms, .replay = replay, .replay_ctx = ctx,
                        .fd = -1, .pid = -1};
    return w;
}

int shx_watchdog_start(shx_watchdog *w)
{
    shexec_session *s = w->s;
    if (w->fd >= 0)
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
    a->grace_ms = w->grace_ms;
    if (w->cgroup)
        memcpy(a->cgroup, w->cgroup, strlen(w->cgroup) + 1); /* shorter than the arena's */
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
    if (shx_fd_identity(fds[1], w->id) != 0)
        w->id[0] = w->id[1] = 0;
    w->fd = fds[1];
    w->nforget = 0;
    w->pid = pid;
    /* commands already running are the session's too */
    w->replay(w->replay_ctx);
    return SHEXEC_OK;
}

/* Tell the watchdog process to exit without signalling, and reap it. */
static void stop(shx_watchdog *w)
{
    if (w->fd < 0 && w->pid <= 0)
        return;
    shx_wd_msg m = {.type = SHX_WD_QUIT};
    send_msg(w, &m); /* checks the channel: one the host closed is not ours to close */
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    reap(w, 1);
}

void shx_watchdog_free(shx_watchdog *w)
{
    if (!w)
        return;
    stop(w);
    free(w->cgroup);
    free(w);
}

int shx_watchdog_set_cgroup(shx_watchdog *w, const char *dir)
{
    char *copy = NULL;
    if (dir && (strlen(dir) >= SHX_CGROUP_PATH_MAX || !(copy = strdup(dir))))
        return shx_fail(w->s, SHEXEC_ENOMEM, "out of memory");
    free(w->cgroup);
    w->cgroup = copy;
    if (w->fd < 0 && w->pid <= 0)
        return SHEXEC_OK;
    /* its arena was filled as it started: a new one learns the cgroup (no
     * command runs while containment changes, so none is lost between) */
    stop(w);
    return shx_watchdog_start(w);
}

/* ---- for the tests (testhook.c) ----------------------------------------------- */

int64_t shx_watchdog_pid(const shx_watchdog *w)
{
    return w && w->fd >= 0 ? (int64_t)w->pid : -1;
}

void shx_watchdog_claim(shx_watchdog *w, int64_t pgid, uint64_t start)
{
    shx_wd_msg m = {.type = SHX_WD_GROUP, .pgid = (int32_t)pgid, .start = start};
    if (w)
        send_msg(w, &m);
}

uint64_t shx_watchdog_start_time(int64_t pid)
{
    return shx_wd_start_time((pid_t)pid);
}
