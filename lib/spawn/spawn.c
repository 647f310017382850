/*
 * spawn.c - starting one command (see spawn.h).
 *
 * On Linux forkexec.c starts the child (clone with vfork semantics, the
 * library's own steps: the cgroups joined before exec). Elsewhere
 * posix_spawn's file actions and attributes do, a spawn's cost independent
 * of the host's size and exec failures reported, not turned into 127; the
 * platform's choices each in one function (spawnfa.c: the working
 * directory, the hygiene; here: detach_flags, open_pidfd).
 */
#include "spawn/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shx/platform.h"
#include "shx/procfs.h"
#include "spawn/forkexec.h"
#include "spawn/pty.h"
#include "shexec.h"
#include "spawn/spawnfa.h"

/* A task's output may sit unread while the host is busy: give the writer room. */
#define BIG_PIPE_SIZE (1 << 20)

ssize_t shx_write_nosigpipe(int fd, const void *data, size_t len)
{
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    shx_thread_sigmask(SIG_BLOCK, &pipe_set, &old);
    ssize_t w = write(fd, data, len);
    int e = errno;
    if (w < 0 && e == EPIPE && !was_pending) {
        /* the write's SIGPIPE is pending on this thread, blocked: sigwait
         * takes it at once (sigtimedwait would too, but macOS lacks it) */
        sigpending(&pending);
        int sig;
        if (sigismember(&pending, SIGPIPE))
            sigwait(&pipe_set, &sig);
    }
    shx_thread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return w;
}

/* Make a pipe whose ends are >= 3, so dup2 onto 0-2 never clobbers one of ours
 * even in a host that closed its own standard descriptors. */
static int make_pipe(int fds[2])
{
    if (shx_pipe_cloexec(fds) != 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        if (fds[i] < 3) {
            int moved = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
            if (moved < 0) {
                int e = errno;
                close(fds[0]);
                close(fds[1]);
                errno = e;
                return -1;
            }
            close(fds[i]);
            fds[i] = moved;
        }
    }
    return 0;
}

static void close_pair(int fds[2])
{
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    fds[0] = fds[1] = -1;
}

/* Everything shx_spawn opened for the child, on a failure path. */
static void close_ends(int outp[2], int errp[2], int inp[2], int master, int master_in)
{
    close_pair(outp);
    close_pair(errp);
    close_pair(inp);
    if (master >= 0)
        close(master);
    if (master_in >= 0)
        close(master_in);
}

/* Passed descriptors go to 3, 4, ... first (their sources are at 10 or
 * above), every one above is closed (the hygiene), then each goes to its
 * number (9 and up) and its parking place is closed. */
static int park_passed_fds(posix_spawn_file_actions_t *fa, const shx_spawn_req *req)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < req->n_pass; i++)
        rc = posix_spawn_file_actions_adddup2(fa, req->pass_fds[i], 3 + i);
    return rc;
}

static int place_passed_fds(posix_spawn_file_actions_t *fa, const shx_spawn_req *req)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < req->n_pass; i++) {
        rc = posix_spawn_file_actions_adddup2(fa, 3 + i, req->pass_at[i]);
        if (rc == 0)
            rc = posix_spawn_file_actions_addclose(fa, 3 + i);
    }
    return rc;
}

static int sys_error(shx_buf *err, const char *what, int e)
{
    shx_buf_clear(err);
    shx_buf_printf(err, "%s: %s", what, strerror(e));
    return e == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS;
}

/* posix_spawn's error rc, as the library reports it. */
static int spawn_error(const shx_spawn_req *req, int rc, shx_buf *err)
{
    shx_buf_clear(err);
    mode_t mode;
    if (req->cwd && (shx_path_mode(req->cwd, &mode) != 0 || !S_ISDIR(mode))) {
        shx_buf_printf(err, "working directory \"%s\" does not exist", req->cwd);
        return SHEXEC_ENOCWD;
    }
    if (rc == E2BIG) {
        shx_buf_printf(err, "command too long for the kernel (E2BIG): arguments and "
                            "environment exceed the exec limit");
        return SHEXEC_E2BIG;
    }
    if (rc == ENOENT || rc == EACCES || rc == ENOEXEC || rc == ENOTDIR || rc == ELOOP ||
        rc == EPERM || rc == ETXTBSY) {
        shx_buf_printf(err, "cannot execute \"%s\": %s", req->path, strerror(rc));
        return SHEXEC_ESPAWN;
    }
    shx_buf_printf(err, "cannot start \"%s\": %s", req->path, strerror(rc));
    return rc == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS;
}

/* ---- the platform's choices (the rest are in spawnfa.c) ----------------- */

/*
 * The command leads a new session, and so its own process group: it and
 * everything it starts can be signalled as one, and it has no controlling
 * terminal (a command must not read the host's /dev/tty); with a pty, the
 * pty becomes its controlling terminal (^C, job control, /dev/tty). Without
 * POSIX_SPAWN_SETSID (POSIX.1-2024; older BSDs) it gets its own group only:
 * a pty command still runs on a terminal (isatty, window size, echo), but
 * the terminal is nobody's controlling terminal, and a pipe command shares
 * the host's.
 */
static short detach_flags(const shx_spawn_req *req)
{
    (void)req;
#if SHX_HAVE_SPAWN_SETSID
    return POSIX_SPAWN_SETSID;
#else
    return POSIX_SPAWN_SETPGROUP;
#endif
}

/* The clock tick (as /proc counts start times) now, where the kernel's
 * conversion is a plain division (USER_HZ divides a second: 100 wherever
 * Linux runs); 0 elsewhere, or without /proc's clock. */
static unsigned long long tick_now(void)
{
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 && 1000000000L % hz == 0 ? shx_procfs_ticks_now() : 0;
}

/* A pidfd to wait on where the kernel has them; -1 means waitid polling. */
static int open_pidfd(const shx_spawn_req *req, pid_t pid)
{
    /* pidfds are close-on-exec by definition */
    return req->use_pidfd ? shx_pidfd_open(pid) : -1;
}

/* Opening the pty's slave in the child: without O_NOCTTY by a session
 * leader, it becomes the controlling terminal. */
static int slave_open_flags(void)
{
    return SHX_HAVE_SPAWN_SETSID ? O_RDWR : O_RDWR | O_NOCTTY;
}

/* What the child's failed step means, as the library reports it. */
static int forkexec_error(const shx_spawn_req *req, int step, int e, shx_buf *err)
{
    if (step != SHX_FX_JOIN && step != SHX_FX_CWD)
        return spawn_error(req, e, err);
    shx_buf_clear(err);
    shx_buf_printf(err, step == SHX_FX_JOIN ? "cannot put the command into its cgroup%.0s: %s"
                                            : "working directory \"%s\" cannot be entered: %s",
                   req->cwd ? req->cwd : "", strerror(e));
    return step == SHX_FX_CWD && (e == ENOENT || e == ENOTDIR) ? SHEXEC_ENOCWD : SHEXEC_ESYS;
}

/* The child, started by the library's own steps (forkexec.h). */
static int start_forkexec(const shx_spawn_req *req, const char *slave, const int outp[2],
                          const int errp[2], const int inp[2], pid_t *pid, int *pidfd,
                          shx_buf *err)
{
    shx_fx_plan plan = {.path = req->path,
                        .argv = req->argv,
                        .envp = req->envp,
                        .join = req->join,
                        .n_join = req->n_join,
                        .into = req->into,
                        .tty = req->pty ? slave : NULL,
                        .in_fd = req->stdin_pipe ? inp[0] : -1,
                        .out_fd = outp[1],
                        .err_fd = errp[1],
                        .pass_fds = req->pass_fds,
                        .pass_at = req->pass_at,
                        .n_pass = req->n_pass,
                        .cwd = req->cwd};
    int step;
    int e = shx_forkexec(&plan, pid, req->use_pidfd ? pidfd : NULL, &step);
    return e == 0 ? SHEXEC_OK : forkexec_error(req, step, e, err);
}

int shx_spawn(const shx_spawn_req *req, shx_child *out, shx_buf *err)
{
    int outp[2] = {-1, -1}, errp[2] = {-1, -1}, inp[2] = {-1, -1};
    int master = -1, master_in = -1;
    char slave[128];
    *out = (shx_child){.pid = -1, .pidfd = -1, .out_fd = -1, .err_fd = -1, .in_fd = -1,
                       .out_held = -1, .err_held = -1};

    if (req->pty) {
        master = shx_pty_open(req->cols, req->rows, req->echo, slave, sizeof slave,
                              &out->pty_lflag, err);
        if (master < 0)
            return errno == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS;
        master_in = fcntl(master, F_DUPFD_CLOEXEC, 3);
        if (master_in < 0) {
            int e = errno;
            close(master);
            return sys_error(err, "cannot duplicate the pty master", e);
        }
    } else {
        if (make_pipe(outp) != 0)
            return sys_error(err, "cannot create a pipe", errno);
        if (make_pipe(errp) != 0) {
            int e = errno;
            close_pair(outp);
            return sys_error(err, "cannot create a pipe", e);
        }
        if (req->stdin_pipe && make_pipe(inp) != 0) {
            int e = errno;
            close_pair(outp);
            close_pair(errp);
            return sys_error(err, "cannot create a pipe", e);
        }
        if (req->big_pipes) {
            shx_pipe_grow(outp[0], BIG_PIPE_SIZE);
            shx_pipe_grow(errp[0], BIG_PIPE_SIZE);
        }
    }

    pid_t pid;
    int rc;
    unsigned long long before = tick_now();
    if (shx_forkexec_compiled()) {
        rc = start_forkexec(req, slave, outp, errp, inp, &pid, &out->pidfd, err);
        goto started;
    }
    if (req->n_join > 0) {
        close_ends(outp, errp, inp, master, master_in);
        shx_buf_clear(err);
        shx_buf_puts(err, "this build cannot put a command into a cgroup before it runs");
        return SHEXEC_ESYS;
    }

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    rc = posix_spawn_file_actions_init(&fa);
    int fa_ok = rc == 0;
    if (rc == 0) {
        rc = posix_spawnattr_init(&attr);
        if (rc != 0)
            posix_spawn_file_actions_destroy(&fa);
    }
    if (rc != 0) {
        close_ends(outp, errp, inp, master, master_in);
        return sys_error(err, fa_ok ? "posix_spawnattr_init" : "posix_spawn_file_actions_init", rc);
    }

    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    /* SETSIGDEF matters for signals the host ignores (SIGPIPE): SIG_IGN
     * survives exec, and `yes | head -1` would then never end. */
    short detach = detach_flags(req);
    rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | detach);
    if (rc == 0 && (detach & POSIX_SPAWN_SETPGROUP))
        rc = posix_spawnattr_setpgroup(&attr, 0);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(&attr, &all);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(&attr, &none);
    if (req->pty) {
        if (rc == 0)
            rc = posix_spawn_file_actions_addopen(&fa, 0, slave, slave_open_flags(), 0);
        if (rc == 0)
            rc = posix_spawn_file_actions_adddup2(&fa, 0, 1);
        if (rc == 0)
            rc = posix_spawn_file_actions_adddup2(&fa, 0, 2);
    } else {
        if (rc == 0)
            rc = req->stdin_pipe
                     ? posix_spawn_file_actions_adddup2(&fa, inp[0], 0)
                     : posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        if (rc == 0)
            rc = posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
        if (rc == 0)
            rc = posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    }
    if (rc == 0)
        rc = park_passed_fds(&fa, req);
    /* the host may hold descriptors without O_CLOEXEC; none may leak (after
     * the dup2s: a closefrom would take their sources with it) */
    if (rc == 0)
        rc = shx_spawn_add_hygiene(&fa, 3 + req->n_pass);
    if (rc == 0)
        rc = place_passed_fds(&fa, req);
    shx_workdir_plan wd = {0};
    int wd_rc = 0;
    shx_workdir_req where = {req->path, req->argv, req->envp, req->cwd};
    if (rc == 0)
        rc = wd_rc = shx_spawn_add_workdir(&fa, &where, &wd);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        close_ends(outp, errp, inp, master, master_in);
        if (wd_rc != 0 && wd_rc != ENOMEM)
            return spawn_error(req, wd_rc, err);
        return sys_error(err, "cannot prepare the spawn", rc);
    }

    rc = posix_spawn(&pid, wd.path, &fa, &attr, wd.argv, req->envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    shx_workdir_plan_free(&wd);
    if (rc != 0)
        rc = spawn_error(req, rc, err);
started:
    /* forked between the two readings: in their tick where they agree (a
     * spawn that straddles a tick of 10 ms leaves it to /proc) */
    out->start = before && before == tick_now() ? before : 0;
    if (rc == SHEXEC_OK && out->pidfd < 0)
        out->pidfd = open_pidfd(req, pid);
    /* the child's ends are the child's now, but the output's where a pidfd
     * will show the exit: the caller holds those (shx_child) */
    if (out->pidfd >= 0 && !req->pty) {
        out->out_held = outp[1];
        out->err_held = errp[1];
        outp[1] = errp[1] = -1;
    }
    if (outp[1] >= 0)
        close(outp[1]);
    if (errp[1] >= 0)
        close(errp[1]);
    if (inp[0] >= 0)
        close(inp[0]);
    outp[1] = errp[1] = inp[0] = -1;
    if (rc != SHEXEC_OK) {
        close_ends(outp, errp, inp, master, master_in);
        return rc;
    }

    out->pid = pid;
    if (req->pty) {
        out->out_fd = master;
        out->in_fd = master_in;
    } else {
        fcntl(outp[0], F_SETFL, O_NONBLOCK);
        fcntl(errp[0], F_SETFL, O_NONBLOCK);
        out->out_fd = outp[0];
        out->err_fd = errp[0];
        if (inp[1] >= 0) {
            fcntl(inp[1], F_SETFL, O_NONBLOCK);
            out->in_fd = inp[1];
        }
    }
    return SHEXEC_OK;
}
