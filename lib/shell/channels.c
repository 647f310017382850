/*
 * channels.c - what a run's shell gets besides its standard descriptors:
 * the prelude and the report socket (channels.h).
 *
 * The prelude is a file the shell reads (bash opens /dev/fd/K for
 * BASH_ENV), sealed once written: whoever reaches it later, through the
 * shell's descriptor or /proc, reads what the library wrote and can change
 * nothing. The host closes its copy once the shell has it.
 *
 * The report comes on a Unix stream socket, not a file:
 *   - a socket cannot be reopened through /proc/PID/fd, so no process but
 *     those that inherited the shell's end can write it;
 *   - SO_PASSCRED makes the kernel name the sender of every message, and
 *     Linux never joins the bytes of two senders in one read, so what the
 *     command's children write on the descriptor they inherited is told
 *     from what the shell writes, and dropped;
 *   - writing a socket is not writing a file: a command's `ulimit -f 0`
 *     raises no SIGXFSZ in its shell's report.
 * A report that lists the shell's state can be larger than the socket
 * holds: the shell's end blocks, and the host reads it while the shell
 * runs (the loop watches it from 50 ms into the run, start.c). Any other
 * report is status and directory, a few hundred bytes: the shell's end is
 * non-blocking and the host takes it once the shell is gone, so the report
 * costs the host no wake-up of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#if defined(__linux__) && defined(_GNU_SOURCE)
#include <sys/mman.h>
#endif

#include "shell/channels.h"
#include "shell/script.h"

#include "shx/platform.h"
#include "shx/base.h"

#if defined(SO_PASSCRED) && defined(SCM_CREDENTIALS)
#define HAVE_PASSCRED 1
#else
#define HAVE_PASSCRED 0
#endif

/* A pipe for a report that lists the shell's state: room for most listings
 * before the host reads it (start.c reads it from 50 ms on). */
#define BIG_REPORT_PIPE (1 << 20)

/* fd, moved to 10 or above when it is lower (it is closed either way), in
 * *out. A limit on open descriptors of 10 or less leaves no such number. */
static int move_high(shexec_session *s, int fd, int *out)
{
    if (fd >= 10) {
        *out = fd;
        return SHEXEC_OK;
    }
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    int e = errno;
    close(fd);
    if (high < 0)
        return shx_fail(s, SHEXEC_ESYS, "cannot move a descriptor to 10 or above: %s",
                        e == EINVAL ? "the limit on open descriptors is 10 or less" : strerror(e));
    *out = high;
    return SHEXEC_OK;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : ENOSPC;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* An anonymous file named `name` holding data that no one can change any
 * more, its offset at 0; -1 with errno. */
static int sealed_file(const char *name, const char *data, size_t len)
{
#if defined(MFD_ALLOW_SEALING) && defined(F_ADD_SEALS)
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd >= 0) {
        int e = write_all(fd, data, len);
        if (e == 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK |
                                                  F_SEAL_SEAL) != 0)
            e = errno;
        if (e == 0 && lseek(fd, 0, SEEK_SET) != 0)
            e = errno;
        if (e == 0)
            return fd;
        close(fd);
        errno = e;
        return -1;
    }
    if (errno != ENOSYS && errno != EINVAL)
        return -1;
#endif
    /* no sealing here: a file only its owner may read, and nobody write
     * (a process of the same user reopening it is refused write access) */
    char path[64];
    (void)snprintf(path, sizeof path, "/tmp/%s-XXXXXX", name);
    int tmp = mkstemp(path); /* mkostemp is POSIX.1-2024 */
    if (tmp < 0)
        return -1;
    int e = fchmod(tmp, 0400) != 0 ? errno : 0;
    unlink(path);
    if (e == 0)
        e = write_all(tmp, data, len);
    if (e == 0 && lseek(tmp, 0, SEEK_SET) != 0)
        e = errno;
    if (e == 0 && fcntl(tmp, F_SETFD, FD_CLOEXEC) != 0)
        e = errno;
    if (e == 0)
        return tmp;
    close(tmp);
    errno = e;
    return -1;
}

/* shx_prelude_open's file, named `name`. */
static int open_named(shexec_session *s, const shx_buf *prelude, const char *name, int *out)
{
    *out = -1;
    size_t len = prelude->len;
    struct rlimit rl;
    /* a write past the file-size limit raises SIGXFSZ in the writer: the
     * host. It is a bound, checked before anything is written. */
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)len > rl.rlim_cur)
        return shx_fail(s, SHEXEC_E2BIG, "the shell's prelude (%zu bytes, the kept shell state "
                        "with it) is larger than the process's file-size limit (%llu bytes)",
                        len, (unsigned long long)rl.rlim_cur);
    int fd = sealed_file(name, prelude->data ? prelude->data : "", len);
    if (fd < 0)
        return shx_fail(s, errno == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS,
                        "cannot make the shell's prelude: %s", strerror(errno));
    /* passed from 10 up, like every descriptor the child gets at a fixed number */
    return move_high(s, fd, out);
}

int shx_prelude_open(shexec_session *s, const shx_buf *prelude, int *out)
{
    return open_named(s, prelude, "shexec-prelude", out);
}

struct shx_prelude_kept {
    int fd;
    unsigned long long id[2]; /* the file made, known by its identity (shx_fd_identity) */
    shx_buf text;             /* what it holds */
};

/* Whether fd is still the file that was made. */
static int still_kept(const struct shx_prelude_kept *k)
{
    unsigned long long id[2];
    return k->fd >= 0 && shx_fd_identity(k->fd, id) == 0 && id[0] == k->id[0] && id[1] == k->id[1];
}

int shx_prelude_kept_open(shexec_session *s, struct shx_prelude_kept **kept,
                          const shx_buf *prelude, int *out)
{
    if (!kept)
        return shx_prelude_open(s, prelude, out);
    struct shx_prelude_kept *k = *kept;
    /* a descriptor that is no longer the kept file is not the library's to close */
    int held = k && still_kept(k);
    if (held && k->text.len == prelude->len && prelude->len &&
        memcmp(k->text.data, prelude->data, prelude->len) == 0) {
        *out = k->fd;
        return SHEXEC_OK;
    }
    if (!k) {
        k = calloc(1, sizeof *k);
        if (!k)
            return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        *kept = k;
    }
    if (held)
        close(k->fd);
    k->fd = -1;
    shx_buf_clear(&k->text);
    int fd;
    int rc = open_named(s, prelude, "shexec-kept-prelude", &fd);
    if (rc != SHEXEC_OK)
        return rc;
    int e = 0;
    if (shx_fd_identity(fd, k->id) != 0)
        e = errno;
    else if (shx_buf_append(&k->text, prelude->data, prelude->len) != 0)
        e = ENOMEM;
    if (e) {
        close(fd);
        shx_buf_clear(&k->text);
        return shx_fail(s, e == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS,
                        "cannot keep the shell's prelude: %s", strerror(e));
    }
    k->fd = fd;
    *out = fd;
    return SHEXEC_OK;
}

void shx_prelude_kept_free(struct shx_prelude_kept *k)
{
    if (!k)
        return;
    if (still_kept(k))
        close(k->fd);
    shx_buf_free(&k->text);
    free(k);
}

int shx_report_open(shexec_session *s, shx_report *rep, int *shell_end, int sock, int big)
{
    rep->fd = -1;
    rep->shell = 0;
    rep->sock = sock;
    rep->checked = 0;
    rep->refused = 0;
    rep->never_waits = 0;
    *shell_end = -1;
    int sv[2];
    if (!sock) {
        if (shx_pipe_cloexec(sv) != 0)
            return shx_fail(s, errno == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS,
                            "cannot make the run's report channel: %s", strerror(errno));
        (void)fcntl(sv[0], F_SETFL, O_NONBLOCK);
        if (big)
            shx_pipe_grow(sv[0], BIG_REPORT_PIPE); /* best effort: the listing rarely waits */
        rep->fd = sv[0];
        int rc = move_high(s, sv[1], shell_end);
        if (rc != SHEXEC_OK)
            shx_report_close(rep);
        return rc;
    }
    /* a small report's pair is non-blocking at both ends (the host's end
     * is read without waiting either way) */
#if defined(SOCK_CLOEXEC) && defined(SOCK_NONBLOCK)
    int made = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (big ? 0 : SOCK_NONBLOCK), 0, sv);
#else
    int made = socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    if (made == 0) {
        (void)fcntl(sv[0], F_SETFD, FD_CLOEXEC);
        (void)fcntl(sv[1], F_SETFD, FD_CLOEXEC);
        if (!big)
            (void)fcntl(sv[1], F_SETFL, O_NONBLOCK);
    }
#endif
    if (made != 0)
        return shx_fail(s, errno == ENOMEM || errno == ENOBUFS ? SHEXEC_ENOMEM : SHEXEC_ESYS,
                        "cannot make the run's report socket: %s", strerror(errno));
    /* the shell only writes: its end's receiving side is shut, so nothing
     * the host would send can wait there */
    (void)shutdown(sv[1], SHUT_RD);
#if HAVE_PASSCRED
    int on = 1;
    rep->checked = setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on) == 0;
#endif
    /* every read of the host's end passes MSG_DONTWAIT (read_one) */
    rep->never_waits = !big;
    rep->fd = sv[0];
    int rc = move_high(s, sv[1], shell_end);
    if (rc != SHEXEC_OK)
        shx_report_close(rep);
    return rc;
}

void shx_report_close(shx_report *rep)
{
    if (rep->fd >= 0)
        close(rep->fd);
    rep->fd = -1;
}

/* One read: its bytes in buf, its sender in *from (0 where unknown).
 * Returns the count, 0 at the end, -1 when nothing is there now. */
static ssize_t read_one(shx_report *rep, char *buf, size_t cap, pid_t *from)
{
    *from = 0;
#if HAVE_PASSCRED
    if (rep->checked) {
        union {
            struct cmsghdr h;
            char space[CMSG_SPACE(sizeof(struct ucred))];
        } ctl;
        struct iovec iov = {buf, cap};
        struct msghdr msg = {0};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = ctl.space;
        msg.msg_controllen = sizeof ctl.space;
        ssize_t n;
        while ((n = recvmsg(rep->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) < 0 &&
               errno == EINTR)
            ;
        if (n <= 0)
            return n;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
                c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
                struct ucred cred;
                memcpy(&cred, CMSG_DATA(c), sizeof cred);
                *from = cred.pid;
            } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                /* descriptors sent to the host are closed at once */
                size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < nfd; i++) {
                    int fd;
                    memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                    close(fd);
                }
            }
        }
        /* a sender the kernel did not name is no one's shell */
        if (*from == 0)
            *from = -1;
        return n;
    }
#endif
    ssize_t n;
    while ((n = rep->sock ? recv(rep->fd, buf, cap, MSG_DONTWAIT) : read(rep->fd, buf, cap)) < 0 &&
           errno == EINTR)
        ;
    return n;
}

int shx_report_take(shx_report *rep, shx_record *rec, size_t budget)
{
    char buf[16384];
    while (rep->fd >= 0 && budget > 0) {
        pid_t from;
        ssize_t n = read_one(rep, buf, budget < sizeof buf ? budget : sizeof buf, &from);
        if (n == 0)
            return 1;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : 1;
        budget -= (size_t)n;
        if (rep->checked && rep->shell == 0 && from > 0)
            rep->shell = from; /* a wrapped shell: the first to speak, before any command */
        if (rep->checked && from != rep->shell) {
            rep->refused += (size_t)n;
            continue;
        }
        shx_record_feed(rec, buf, (size_t)n);
    }
    return 0;
}

int shx_devfd_works(void)
{
    int p[2];
    if (shx_pipe_cloexec(p) != 0)
        return 0;
    char path[32];
    (void)snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
    int again = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    close(p[0]);
    close(p[1]);
    if (again < 0)
        return 0;
    close(again);
    return 1;
}

/* The channel's number in the shell: SHX_CHANNEL_FD, or lower where the
 * limit on open descriptors is lower (a dup2 above it fails). */
int shx_channel_number(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur <= (rlim_t)SHX_CHANNEL_FD + 1)
        return rl.rlim_cur >= 12 ? (int)rl.rlim_cur - 1 : -1;
    return SHX_CHANNEL_FD;
}
