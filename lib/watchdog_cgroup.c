/*
 * watchdog_cgroup.c - the watchdog's way through a session's cgroups (see
 * watchdog_cgroup.h). The texts are read with read(2) into the caller's
 * buffer and parsed by hand: nothing here allocates or takes a lock.
 */
#include "watchdog_cgroup.h"

#include "shx_config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h" /* shx_now_ns: clock_gettime alone, async-signal-safe */
#include "cgroupfs.h"

#if SHX_HAVE_PROCFS

struct wd_dirent64 {
    // cppcheck-suppress unusedStructMember
    unsigned long long d_ino;
    // cppcheck-suppress unusedStructMember
    long long d_off;
    unsigned short d_reclen;
    // cppcheck-suppress unusedStructMember
    unsigned char d_type;
    char d_name[];
};

/* dir/a/b (b may be NULL) into out; 0, or -1 when too long. */
static int path_of(char out[SHX_CGROUP_PATH_MAX], const char *dir, const char *a, const char *b)
{
    size_t n = strlen(dir), na = strlen(a), nb = b ? strlen(b) : 0;
    if (n + 1 + na + 1 + nb >= SHX_CGROUP_PATH_MAX)
        return -1;
    memcpy(out, dir, n);
    out[n++] = '/';
    memcpy(out + n, a, na);
    n += na;
    if (b) {
        out[n++] = '/';
        memcpy(out + n, b, nb);
        n += nb;
    }
    out[n] = '\0';
    return 0;
}

/* The file's first cap - 1 bytes into buf, NUL-terminated: its length, or -1. */
static ssize_t read_into(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = 0;
    while (len + 1 < cap) {
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    return (ssize_t)len;
}

/* Send sig to each pid of a cgroup.procs text (one decimal per line). A
 * list longer than the buffer loses its tail: the next round finds it. */
static void signal_listed(const char *procs, int sig, char *buf, size_t cap)
{
    if (read_into(procs, buf, cap) <= 0)
        return;
    for (const char *p = buf; *p;) {
        long pid = 0;
        while (*p >= '0' && *p <= '9' && pid < 0x7fffffff)
            pid = pid * 10 + (*p++ - '0');
        if (pid > 0)
            (void)kill((pid_t)pid, sig);
        while (*p && (*p < '0' || *p > '9'))
            p++;
    }
}

void shx_wd_cgroup_signal(const char *dir, int sig, char *buf, size_t cap)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    /* the listing's names go in the buffer's first half, each member list
     * in its second */
    size_t half = cap / 2;
    long n;
    char procs[SHX_CGROUP_PATH_MAX];
    while ((n = syscall(SYS_getdents64, fd, buf, half)) > 0) {
        for (long off = 0; off < n;) {
            const struct wd_dirent64 *d = (const void *)(buf + off);
            off += d->d_reclen;
            if (strncmp(d->d_name, "run-", 4) == 0 &&
                path_of(procs, dir, d->d_name, "cgroup.procs") == 0)
                signal_listed(procs, sig, buf + half, cap - half);
        }
    }
    close(fd);
}

int shx_wd_cgroup_populated(const char *dir)
{
    char path[SHX_CGROUP_PATH_MAX], text[256];
    if (path_of(path, dir, "cgroup.events", NULL) != 0 ||
        read_into(path, text, sizeof text) < 0)
        return -1;
    const char *at = strstr(text, "populated ");
    return at && at[10] == '1';
}

void shx_wd_cgroup_kill(const char *dir, char *buf, size_t cap)
{
    char path[SHX_CGROUP_PATH_MAX];
    if (path_of(path, dir, "cgroup.kill", NULL) == 0) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            ssize_t w = write(fd, "1", 1);
            close(fd);
            if (w == 1)
                return;
        }
    }
    shx_wd_cgroup_signal(dir, SIGKILL, buf, cap);
}

/* Remove dir's command cgroups and dir, waiting up to a second for the
 * killed to leave them; what is still busy then is left. */
static void remove_all(const char *dir, char *buf, size_t cap)
{
    for (int i = 0; i < 100 && shx_wd_cgroup_populated(dir) == 1; i++)
        poll(NULL, 0, 10);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        long n;
        char sub[SHX_CGROUP_PATH_MAX];
        while ((n = syscall(SYS_getdents64, fd, buf, cap)) > 0) {
            for (long off = 0; off < n;) {
                const struct wd_dirent64 *d = (const void *)(buf + off);
                off += d->d_reclen;
                if (strncmp(d->d_name, "run-", 4) == 0 && path_of(sub, dir, d->d_name, NULL) == 0)
                    (void)rmdir(sub);
            }
        }
        close(fd);
    }
    (void)rmdir(dir);
}

void shx_wd_cgroup_terminate(const char *dir, uint32_t grace_ms, uint32_t pause_ms, char *buf,
                             size_t cap)
{
    if (shx_wd_cgroup_populated(dir) != 1) {
        remove_all(dir, buf, cap);
        _exit(0);
    }
    if (pause_ms)
        poll(NULL, 0, (int)pause_ms);
    shx_wd_cgroup_signal(dir, SIGTERM, buf, cap);
    shx_wd_cgroup_signal(dir, SIGCONT, buf, cap); /* a stopped process acts on it when continued */
    int64_t kill_at = shx_now_ns() / 1000000 + grace_ms;
    while (shx_now_ns() / 1000000 < kill_at) {
        poll(NULL, 0, 20);
        if (shx_wd_cgroup_populated(dir) != 1)
            break; /* all gone */
    }
    if (shx_wd_cgroup_populated(dir) == 1)
        shx_wd_cgroup_kill(dir, buf, cap);
    remove_all(dir, buf, cap);
    _exit(0);
}

#else /* no /proc: no cgroups in this build */

void shx_wd_cgroup_signal(const char *dir, int sig, char *buf, size_t cap)
{
    (void)dir, (void)sig, (void)buf, (void)cap;
}

int shx_wd_cgroup_populated(const char *dir)
{
    (void)dir;
    return -1;
}

void shx_wd_cgroup_kill(const char *dir, char *buf, size_t cap)
{
    (void)dir, (void)buf, (void)cap;
}

void shx_wd_cgroup_terminate(const char *dir, uint32_t grace_ms, uint32_t pause_ms, char *buf,
                             size_t cap)
{
    (void)dir, (void)grace_ms, (void)pause_ms, (void)buf, (void)cap;
    _exit(0);
}

#endif
