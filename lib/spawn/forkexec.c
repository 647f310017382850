/*
 * forkexec.c - a child started with the library's own steps between fork
 * and exec (forkexec.h).
 *
 * posix_spawn cannot put its child into a cgroup before exec (glibc 2.39's
 * posix_spawnattr_setcgroup_np is newer than the libcs supported), and a
 * move made after it returns races the shell's first fork: whatever the
 * shell forks before the move is born outside, and a shell that skips the
 * library's prelude (POSIX mode) never moves itself. So the child is born
 * in its cgroup v2 where the kernel can (clone3.h), and joins the rest (or
 * that one, elsewhere) itself, as its first act, before exec: the shell and
 * all it ever starts are in them by construction.
 *
 * The child shares the host's memory (CLONE_VM) and the host waits until it
 * has exec'd or failed (CLONE_VFORK), which keeps a spawn's cost
 * independent of the host's size, as posix_spawn's. Sharing memory is why
 * the child's side is written the way it is:
 *   - every signal is blocked in the calling thread across the clone, so no
 *     host handler can run in the child on the host's memory; the child
 *     sets every disposition back to the default before it unblocks them;
 *   - the child calls only raw system calls (no libc state, no
 *     interceptors of a sanitizer that would book the call to the host),
 *     on a stack of its own inside the host's frame, uninstrumented;
 *   - its error goes back through the shared memory; where the clone was
 *     turned into a plain fork (valgrind does that), through a pipe that
 *     exec closes, from the second spawn on (the first shows which holds,
 *     and so costs no descriptors in the common case).
 */
#include "spawn/forkexec.h"
#include "spawn/clone3.h"

#include "shx/platform.h"

#if SHX_HAVE_CLONE_VFORK

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* ThreadSanitizer intercepts clone() and books it as a fork in this
 * process's memory, which the child shares: the host would then be taken
 * for a forked child and die at its next thread. glibc's __clone is the
 * same call without the interceptor. */
#if defined(__SANITIZE_THREAD__)
#define SHX_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHX_UNDER_TSAN 1
#endif
#endif
#if defined(SHX_UNDER_TSAN) && defined(__GLIBC__)
extern int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);
#define CLONE_CALL __clone
#else
#define CLONE_CALL clone
#endif

/* The kernel's signal set: 64 signals on every architecture but MIPS. */
#define KSIGSET_BYTES ((_NSIG - 1) / 8)
#define CHILD_STACK (16 * 1024)

#if defined(__clang__) || defined(__GNUC__)
#define CHILD_SIDE __attribute__((no_sanitize("address", "undefined", "thread"), noinline))
#else
#define CHILD_SIDE
#endif

typedef struct child_ctx {
    const shx_fx_plan *plan;
    int born_in;              /* the clone put it in plan->into: join[0] is done */
    int report_fd;            /* the error pipe's write end, or -1 */
    volatile int reached;     /* the child ran in the host's memory */
    volatile int step;        /* SHX_FX_*: where it failed */
    volatile int err;         /* and why */
} child_ctx;

/* 1 once a child was seen to share the host's memory, -1 once one was
 * seen not to (atomic) */
static int clone_shares_memory;

/* The clone gives the child's pidfd (Linux 5.2): one system call fewer
 * than a pidfd_open after it. 1 once the kernel refused the flag (atomic). */
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
static int clone_pidfd_refused;

/* Everything below up to shx_forkexec_compiled runs in the child. */

static CHILD_SIDE void child_fail(child_ctx *c, int step, int err)
{
    c->step = step;
    c->err = err ? err : EINVAL;
    if (c->report_fd >= 0) {
        int msg[2] = {step, err ? err : EINVAL};
        (void)syscall(SYS_write, c->report_fd, msg, sizeof msg);
    }
    for (;;)
        (void)syscall(SYS_exit, 127);
}

/* fd at number `to`, inherited by exec (dup3 refuses from == to). */
static CHILD_SIDE int place(int from, int to)
{
    if (from == to)
        return (int)syscall(SYS_fcntl, to, F_SETFD, 0);
    return syscall(SYS_dup3, from, to, 0) < 0 ? -1 : 0;
}

static CHILD_SIDE int digits(const char *s)
{
    int v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000000)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

/* Every descriptor from `from` up close-on-exec: close_range where the
 * kernel has its CLOEXEC flag (5.11), else the listing of /proc/self/fd,
 * else every number up to 65536. */
static CHILD_SIDE void cloexec_from(int from)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)from, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
        return;
#endif
    long d = syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d >= 0) {
        char buf[2048] __attribute__((aligned(8)));
        long n;
        while ((n = syscall(SYS_getdents64, (int)d, buf, sizeof buf)) > 0) {
            for (long off = 0; off < n;) {
                /* struct linux_dirent64: ino, off, reclen, type, name */
                unsigned short reclen;
                memcpy(&reclen, buf + off + 16, sizeof reclen);
                int fd = digits(buf + off + 19);
                if (fd >= from && fd != d)
                    (void)syscall(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);
                off += reclen ? reclen : n;
            }
        }
        (void)syscall(SYS_close, (int)d);
        return;
    }
    for (int fd = from; fd < 65536; fd++)
        (void)syscall(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);
}

static CHILD_SIDE int child_main(void *arg)
{
    child_ctx *c = arg;
    const shx_fx_plan *p = c->plan;
    c->reached = 1;
    /* the default action for every signal (SIG_DFL is zero in the kernel's
     * struct sigaction on every architecture; exec would keep SIG_IGN) */
    static const unsigned long dfl[8];
    for (int sig = 1; sig < _NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            (void)syscall(SYS_rt_sigaction, sig, dfl, NULL, KSIGSET_BYTES);
    /* into the command's cgroups, before anything of the command runs */
    for (int i = c->born_in; i < p->n_join; i++) {
        long fd = syscall(SYS_openat, AT_FDCWD, p->join[i], O_WRONLY | O_CLOEXEC);
        if (fd < 0 || syscall(SYS_write, (int)fd, "0", 1) != 1)
            child_fail(c, SHX_FX_JOIN, errno);
        (void)syscall(SYS_close, (int)fd);
    }
    /* a session of its own: no controlling terminal (the host's /dev/tty
     * is not the command's), its own process group */
    if (syscall(SYS_setsid) < 0)
        child_fail(c, SHX_FX_SETSID, errno);
    /* descriptor 0 is the host's (the child's copy): closed first, the
     * file opened onto it takes no descriptor beyond the host's, which may
     * have none left */
    if (p->tty || p->in_fd < 0)
        (void)syscall(SYS_close, 0);
    if (p->tty) {
        /* a session leader opening a terminal without O_NOCTTY makes it
         * its controlling terminal */
        long t = syscall(SYS_openat, AT_FDCWD, p->tty, O_RDWR | O_CLOEXEC);
        if (t < 0 || place((int)t, 0) != 0 || place(0, 1) != 0 || place(0, 2) != 0)
            child_fail(c, SHX_FX_STDIO, errno);
    } else {
        long in = p->in_fd;
        if (in < 0 && (in = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
            child_fail(c, SHX_FX_STDIO, errno);
        if (place((int)in, 0) != 0 || place(p->out_fd, 1) != 0 || place(p->err_fd, 2) != 0)
            child_fail(c, SHX_FX_STDIO, errno);
    }
    /* the passed descriptors: parked at 3, 4, 5 (their sources are at 10 or
     * above), everything from there up made close-on-exec (the host may
     * hold descriptors without O_CLOEXEC: none may leak), then each put at
     * its number and its parking place closed */
    for (int i = 0; i < p->n_pass; i++)
        if (syscall(SYS_dup3, p->pass_fds[i], 3 + i, O_CLOEXEC) < 0)
            child_fail(c, SHX_FX_FDS, errno);
    cloexec_from(3 + p->n_pass);
    for (int i = 0; i < p->n_pass; i++) {
        if (syscall(SYS_dup3, 3 + i, p->pass_at[i], 0) < 0)
            child_fail(c, SHX_FX_FDS, errno);
        (void)syscall(SYS_close, 3 + i);
    }
    if (p->cwd && syscall(SYS_chdir, p->cwd) < 0)
        child_fail(c, SHX_FX_CWD, errno);
    static const unsigned long none[8];
    (void)syscall(SYS_rt_sigprocmask, SIG_SETMASK, none, NULL, KSIGSET_BYTES);
    (void)syscall(SYS_execve, p->path, p->argv, p->envp);
    child_fail(c, SHX_FX_EXEC, errno);
    return 127;
}

int shx_forkexec_compiled(void)
{
    return 1;
}

int shx_forkexec_reports_failure(void)
{
    return __atomic_load_n(&clone_shares_memory, __ATOMIC_RELAXED) != 0;
}

/* fd moved to a number none of the plan's targets uses; -1 with errno. */
static int clear_of_targets(int fd, const shx_fx_plan *p)
{
    for (;;) {
        int hit = fd < 10;
        for (int i = 0; i < p->n_pass; i++)
            hit |= p->pass_at[i] == fd;
        if (!hit)
            return fd;
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, fd < 10 ? 10 : fd + 1);
        int e = errno;
        close(fd);
        if (moved < 0) {
            errno = e;
            return -1;
        }
        fd = moved;
    }
}

void shx_forkexec_test_clone_pidfd(int on)
{
    __atomic_store_n(&clone_pidfd_refused, !on, __ATOMIC_RELAXED);
}

/* The child born in plan->into where the kernel can (clone3.h): its pid,
 * or 0 (the caller clones as before: the child then joins by writing
 * join[0], which says why where the cgroup is the cause). */
static pid_t clone_into(child_ctx *c, char *stack, size_t size, int *pidfd)
{
    if (!c->plan->into)
        return 0;
    c->born_in = 1;
    pid_t child = shx_clone3_into(c->plan->into, stack, size, pidfd, child_main, c);
    c->born_in = child > 0;
    return child;
}

int shx_forkexec(const shx_fx_plan *plan, pid_t *pid, int *pidfd, int *failed_step)
{
    *pid = -1;
    *failed_step = SHX_FX_OK;
    if (pidfd)
        *pidfd = -1;
    child_ctx c = {.plan = plan, .report_fd = -1};
    int rp[2] = {-1, -1};
    if (__atomic_load_n(&clone_shares_memory, __ATOMIC_RELAXED) < 0) {
        if (shx_pipe_cloexec(rp) != 0)
            return errno;
        if ((rp[1] = clear_of_targets(rp[1], plan)) < 0) {
            int e = errno;
            close(rp[0]);
            return e;
        }
        c.report_fd = rp[1];
    }
    /* the child's stack: in this frame, which waits for it */
    char stack[CHILD_STACK] __attribute__((aligned(16)));
    sigset_t all, old;
    sigfillset(&all);
    shx_thread_sigmask(SIG_BLOCK, &all, &old);
    int flags = CLONE_VM | CLONE_VFORK | SIGCHLD, fd = -1;
    int with_fd = pidfd && !__atomic_load_n(&clone_pidfd_refused, __ATOMIC_RELAXED);
    pid_t child = clone_into(&c, stack, sizeof stack, with_fd ? &fd : NULL);
    if (child == 0)
        child = CLONE_CALL(child_main, stack + sizeof stack, flags | (with_fd ? CLONE_PIDFD : 0),
                           &c, &fd);
    if (child < 0 && with_fd && errno == EINVAL) {
        /* a kernel before 5.2: no child was made; the caller opens one */
        __atomic_store_n(&clone_pidfd_refused, 1, __ATOMIC_RELAXED);
        fd = -1;
        child = CLONE_CALL(child_main, stack + sizeof stack, flags, &c);
    }
    int e = errno;
    shx_thread_sigmask(SIG_SETMASK, &old, NULL);
    if (rp[1] >= 0)
        close(rp[1]);
    if (child < 0) {
        if (rp[0] >= 0)
            close(rp[0]);
        return e;
    }
    int err = 0, step = SHX_FX_OK;
    if (c.reached) {
        __atomic_store_n(&clone_shares_memory, 1, __ATOMIC_RELAXED);
        err = c.err;
        step = c.step;
    } else if (rp[0] < 0) {
        /* the first plain fork: its failure, if any, shows only as its exit
         * status 127, as posix_spawn's does there; later ones have the pipe */
        __atomic_store_n(&clone_shares_memory, -1, __ATOMIC_RELAXED);
    } else {
        /* a plain fork: exec closes the pipe, a failure writes to it */
        int msg[2];
        ssize_t n;
        while ((n = read(rp[0], msg, sizeof msg)) < 0 && errno == EINTR)
            ;
        if (n == (ssize_t)sizeof msg) {
            step = msg[0];
            err = msg[1];
        }
    }
    if (rp[0] >= 0)
        close(rp[0]);
    if (err) {
        if (fd >= 0)
            close(fd);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
            ;
        *failed_step = step;
        return err;
    }
    *pid = child;
    if (pidfd)
        *pidfd = fd;
    return 0;
}

#else

#include <errno.h>

int shx_forkexec_compiled(void)
{
    return 0;
}

int shx_forkexec_reports_failure(void)
{
    return 0;
}

void shx_forkexec_test_clone_pidfd(int on)
{
    (void)on;
}


int shx_forkexec(const shx_fx_plan *plan, pid_t *pid, int *pidfd, int *failed_step)
{
    (void)plan;
    *pid = -1;
    if (pidfd)
        *pidfd = -1;
    *failed_step = SHX_FX_OK;
    return ENOSYS;
}

#endif
