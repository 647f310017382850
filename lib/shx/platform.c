/*
 * platform.c - the C library's half of the platform seam (see platform.h).
 * Each function is the Linux or libc extension where shx_config.h says the
 * build has it, and the POSIX.1-2008 way otherwise.
 */
#if !defined(_GNU_SOURCE) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 700 /* ptsname: the XSI part of POSIX */
#endif
#include "shx/platform.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shx/libc_ext.h"
#include "shx/procfs.h"

#if SHX_HAVE_GLIBC && SHX_HAVE_STATX
#include <sys/sysmacros.h> /* makedev */
#endif

#if SHX_HAVE_PIDFD
#include <sys/syscall.h>
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#endif

/* ---- waiting ------------------------------------------------------------ */

int shx_poll_ns(struct pollfd *fds, nfds_t n, int64_t timeout_ns)
{
#if SHX_HAVE_PPOLL
    struct timespec ts, *tp = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000);
        ts.tv_nsec = (long)(timeout_ns % 1000000000);
        tp = &ts;
    }
    return ppoll(fds, n, tp, NULL);
#else
    int ms = -1;
    if (timeout_ns >= 0) {
        int64_t up = (timeout_ns + 999999) / 1000000; /* round up: no early wake-up spin */
        ms = up > 1000000000 ? 1000000000 : (int)up;
    }
    return poll(fds, n, ms);
#endif
}

/* ---- processes ------------------------------------------------------------ */

int shx_pidfd_open(pid_t pid)
{
#if SHX_HAVE_PIDFD
    /* a raw system call: glibc's pidfd_open() wrapper is 2.36 and newer */
    long fd = syscall(SYS_pidfd_open, pid, 0);
    return fd >= 0 ? (int)fd : -1;
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

int shx_pidfd_send_signal(int pidfd, int sig)
{
#if SHX_HAVE_PIDFD
    return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) == 0 ? 0 : -1;
#else
    (void)pidfd;
    (void)sig;
    errno = ENOSYS;
    return -1;
#endif
}

int shx_pidfd_compiled(void)
{
    return SHX_HAVE_PIDFD;
}

/* ---- descriptors and files ------------------------------------------------ */

int shx_pipe_cloexec(int fds[2])
{
#if SHX_HAVE_PIPE2
    return pipe2(fds, O_CLOEXEC);
#else
    if (pipe(fds) != 0)
        return -1;
    if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) != 0 || fcntl(fds[1], F_SETFD, FD_CLOEXEC) != 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        errno = e;
        return -1;
    }
    return 0;
#endif
}

void shx_pipe_grow(int fd, int bytes)
{
#if SHX_HAVE_F_SETPIPE_SZ
    /* best effort: the per-user pipe budget may refuse it */
    (void)fcntl(fd, F_SETPIPE_SZ, bytes);
#else
    (void)fd;
    (void)bytes;
#endif
}

int shx_path_mode(const char *path, mode_t *mode)
{
#if SHX_HAVE_GLIBC && SHX_HAVE_STATX
    /* glibc 2.33 turned stat() into a symbol of that version; statx() is
     * 2.28's, and falls back to fstatat on kernels without it */
    struct statx sx;
    if (statx(AT_FDCWD, path, 0, STATX_TYPE | STATX_MODE, &sx) != 0)
        return -1;
    *mode = (mode_t)sx.stx_mode;
    return 0;
#else
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    *mode = st.st_mode;
    return 0;
#endif
}

int shx_file_id_of(const char *path, int fd, shx_file_id *out)
{
#if SHX_HAVE_GLIBC && SHX_HAVE_STATX
    struct statx sx;
    if (statx(path ? AT_FDCWD : fd, path ? path : "", path ? 0 : AT_EMPTY_PATH,
              STATX_TYPE | STATX_MODE | STATX_INO, &sx) != 0)
        return -1;
    out->mode = (mode_t)sx.stx_mode;
    out->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    out->ino = sx.stx_ino;
    out->rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
#else
    struct stat st;
    if ((path ? stat(path, &st) : fstat(fd, &st)) != 0)
        return -1;
    out->mode = st.st_mode;
    out->dev = (unsigned long long)st.st_dev;
    out->ino = (unsigned long long)st.st_ino;
    out->rdev = (unsigned long long)st.st_rdev;
#endif
    return 0;
}

int shx_fd_identity(int fd, unsigned long long id[2])
{
#if SHX_HAVE_GLIBC && SHX_HAVE_STATX
    struct statx sx = {0};
    int rc = statx(fd, "", AT_EMPTY_PATH, STATX_INO, &sx);
    id[0] = ((unsigned long long)sx.stx_dev_major << 32) | sx.stx_dev_minor;
    id[1] = sx.stx_ino;
#else
    struct stat st = {0};
    int rc = fstat(fd, &st);
    id[0] = (unsigned long long)st.st_dev;
    id[1] = (unsigned long long)st.st_ino;
#endif
    return rc == 0 ? 0 : -1;
}

/* Append fd to the malloc'd list; -1 (ENOMEM). */
static int push_fd(int **fds, size_t *n, size_t *cap, int fd)
{
    if (*n == *cap) {
        size_t bigger = *cap ? *cap * 2 : 16;
        int *v = realloc(*fds, bigger * sizeof *v);
        if (!v) {
            errno = ENOMEM;
            return -1;
        }
        *fds = v;
        *cap = bigger;
    }
    (*fds)[(*n)++] = fd;
    return 0;
}

/*
 * Every descriptor below the open-files limit, 1024 to a poll() call: poll
 * marks each one that is not open POLLNVAL, so a thousand closed
 * descriptors cost one system call, and only open ones get an fcntl. A
 * descriptor above the current limit (opened before the host lowered it)
 * is not seen.
 */
static int scan_fds(int from, int **fds, size_t *n)
{
    enum { BATCH = 1024 };
    struct pollfd p[BATCH];
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > INT32_MAX)
        max = 1 << 20;
    size_t cap = 0;
    for (long base = from; base < max; base += BATCH) {
        int count = max - base < BATCH ? (int)(max - base) : BATCH;
        for (int i = 0; i < count; i++)
            p[i] = (struct pollfd){.fd = (int)(base + i), .events = 0, .revents = 0};
        if (poll(p, (nfds_t)count, 0) < 0 && errno != EINTR) {
            /* cannot batch: ask each one */
            for (int i = 0; i < count; i++)
                p[i].revents = fcntl(p[i].fd, F_GETFD) < 0 ? POLLNVAL : 0;
        }
        for (int i = 0; i < count; i++) {
            if (p[i].revents & POLLNVAL)
                continue;
            int flags = fcntl(p[i].fd, F_GETFD);
            if (flags >= 0 && !(flags & FD_CLOEXEC) && push_fd(fds, n, &cap, p[i].fd) != 0)
                return -1;
        }
    }
    return 0;
}

int shx_inheritable_fds(int from, int **fds, size_t *n)
{
    int *open_fds = NULL;
    size_t count = 0;
    *fds = NULL;
    *n = 0;
    if (shx_procfs_fds(from, &open_fds, &count) != 0) {
        if (scan_fds(from, fds, n) == 0)
            return 0;
        free(*fds);
        *fds = NULL;
        *n = 0;
        return -1;
    }
    /* the listed ones that an exec would pass on (kept in place) */
    for (size_t i = 0; i < count; i++) {
        int flags = fcntl(open_fds[i], F_GETFD);
        if (flags >= 0 && !(flags & FD_CLOEXEC))
            open_fds[(*n)++] = open_fds[i];
    }
    if (*n == 0) {
        free(open_fds);
        open_fds = NULL;
    }
    *fds = open_fds;
    return 0;
}

int shx_anon_file(void)
{
#ifdef MFD_CLOEXEC
    int fd = memfd_create("shexec", MFD_CLOEXEC);
    if (fd >= 0 || errno != ENOSYS)
        return fd;
#endif
    char path[] = "/tmp/shexec-XXXXXX";
    int fd2 = mkstemp(path); /* mkostemp is POSIX.1-2024 */
    if (fd2 < 0)
        return -1;
    unlink(path);
    if (fcntl(fd2, F_SETFD, FD_CLOEXEC) != 0) {
        int e = errno;
        close(fd2);
        errno = e;
        return -1;
    }
    return fd2;
}

void *shx_map_zeroed(size_t len)
{
#if defined(MAP_ANONYMOUS) || defined(MAP_ANON)
#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif
#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif
    return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                -1, 0);
#else
    int fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return MAP_FAILED;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    errno = e;
    return p;
#endif
}

/* ---- signals, strings, terminals ----------------------------------------- */

int shx_thread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
#if SHX_HAVE_GLIBC
    /* glibc 2.32 moved pthread_sigmask into libc under that version. On
     * Linux, sigprocmask is the same rt_sigprocmask call on the calling
     * thread, linked at glibc's first version. */
    return sigprocmask(how, set, old) == 0 ? 0 : errno;
#else
    return pthread_sigmask(how, set, old);
#endif
}

int shx_ptsname(int fd, char *buf, size_t cap)
{
#if SHX_HAVE_PTSNAME_R
    int rc = ptsname_r(fd, buf, cap);
    if (rc != 0) {
        errno = rc > 0 ? rc : errno;
        return -1;
    }
    return 0;
#else
    /* ptsname()'s buffer is static: one caller at a time */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    const char *name = ptsname(fd);
    int rc = -1;
    if (!name) {
        /* errno from ptsname */
    } else if (strlen(name) >= cap) {
        errno = ERANGE;
    } else {
        memcpy(buf, name, strlen(name) + 1);
        rc = 0;
    }
    int e = errno;
    pthread_mutex_unlock(&lock);
    errno = e;
    return rc;
#endif
}

/* ---- what this build has -------------------------------------------------- */

unsigned shx_platform_features(void)
{
    unsigned f = 0;
    if (SHX_HAVE_PIDFD)
        f |= SHX_PLATFORM_PIDFD;
    if (SHX_HAVE_PROCFS)
        f |= SHX_PLATFORM_PROCFS;
    if (SHX_HAVE_SPAWN_SETSID)
        f |= SHX_PLATFORM_SETSID;
    if (SHX_HAVE_F_SETPIPE_SZ)
        f |= SHX_PLATFORM_BIG_PIPES;
    if (SHX_HAVE_PPOLL)
        f |= SHX_PLATFORM_PPOLL;
    if (SHX_HAVE_CLONE_VFORK)
        f |= SHX_PLATFORM_OWN_SPAWN;
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) == 0) {
        if (shx_fa_closefrom(&fa, 3) == 0)
            f |= SHX_PLATFORM_CLOSEFROM;
        if (shx_fa_chdir(&fa, "/") == 0)
            f |= SHX_PLATFORM_CHDIR_NP;
        posix_spawn_file_actions_destroy(&fa);
    }
    return f;
}
