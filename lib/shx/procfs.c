/*
 * procfs.c - Linux's /proc (see procfs.h). The whole file is Linux-only;
 * without SHX_HAVE_PROCFS it is the "nothing known" stubs at the end.
 */
#include "shx/procfs.h"

#include "shx_config.h"

#include <stdatomic.h>

/* per-process files read, for the tests (testhook.c) */
static atomic_ulong procfs_reads;

unsigned long shx_procfs_test_reads(void)
{
    return atomic_load_explicit(&procfs_reads, memory_order_relaxed);
}

static inline void count_read(void)
{
    atomic_fetch_add_explicit(&procfs_reads, 1, memory_order_relaxed);
}

/* 0: children lists ignored, for the tests (testhook.c) */
static atomic_int children_on = 1;

void shx_procfs_test_children(int on)
{
    atomic_store_explicit(&children_on, on, memory_order_relaxed);
}

int shx_pstat_signal_default(const shx_pstat *st, int sig)
{
    return sig >= 1 && sig <= 31 && !(st->held & (1ull << (sig - 1)));
}

#if SHX_HAVE_PROCFS

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A decimal int after optional white space at *s; *s moves past it. 0 or -1. */
static int parse_int(const char **s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(*s, &end, 10);
    if (end == *s || errno == ERANGE || v < INT_MIN || v > INT_MAX)
        return -1;
    *out = (int)v;
    *s = end;
    return 0;
}

int shx_procfs_available(void)
{
    return access("/proc/self/stat", R_OK) == 0;
}

/* pid's stat line into buf; a pointer just past the command name's last ')'
 * (the name may contain spaces and parentheses), or NULL. */
static const char *read_stat(pid_t pid, char *buf, size_t cap)
{
    char path[64];
    (void)snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    count_read();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p ? p + 1 : NULL;
}

/* Past n more single spaces (stat's fields after the name are separated
 * by one): from field k to field k + n. NULL if the line is shorter. */
static const char *skip_fields(const char *f, int n)
{
    while (n-- > 0 && f)
        if ((f = strchr(f, ' ')))
            f++;
    return f;
}

int shx_procfs_stat(pid_t pid, shx_pstat *out)
{
    char buf[512];
    const char *p = read_stat(pid, buf, sizeof buf);
    if (!p)
        return -1;
    const char *q = p;
    while (isspace((unsigned char)*q))
        q++;
    char state = *q;
    if (state == '\0')
        return -1;
    q++;
    int ppid, pgrp;
    if (parse_int(&q, &ppid) != 0 || parse_int(&q, &pgrp) != 0)
        return -1;
    if (state == 'Z' || state == 'X')
        return -1;
    /* the thread count is field 20, the start time field 22 (the text after
     * the name starts with the space before field 3) */
    const char *f = skip_fields(p, 18);
    long threads = f ? strtol(f, NULL, 10) : 0;
    f = skip_fields(f, 2);
    char *end;
    unsigned long long start = f ? strtoull(f, &end, 10) : 0;
    if (!f || end == f)
        return -1;
    out->pid = pid;
    out->ppid = (pid_t)ppid;
    out->pgrp = (pid_t)pgrp;
    out->start = start;
    out->threads = threads > 0 && threads <= INT_MAX ? (int)threads : 1;
    /* fields 32 to 34: the blocked, ignored and caught signals, as decimal
     * masks of the first 32 signals; any missing, none is taken for default */
    unsigned long long held = 0;
    f = skip_fields(f, 10);
    for (int i = 0; i < 3 && f; i++) {
        held |= strtoull(f, &end, 10);
        f = end == f ? NULL : skip_fields(f, 1);
    }
    out->held = f ? held : ~0ull;
    return 0;
}

unsigned long long shx_procfs_ticks_now(void)
{
    /* the kernel's start times count from boot, suspend included (and
     * shifted alike inside a time namespace): CLOCK_BOOTTIME, truncated */
    struct timespec ts;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
        return 0;
    return (unsigned long long)ts.tv_sec * (unsigned long long)hz +
           (unsigned long long)ts.tv_nsec / (1000000000ull / (unsigned long long)hz);
}

int shx_procfs_signal_default(pid_t pid, pid_t pgid, int sig)
{
    shx_pstat st;
    return shx_procfs_stat(pid, &st) == 0 && st.pgrp == pgid && shx_pstat_signal_default(&st, sig);
}

int shx_procfs_in_group(pid_t pid, pid_t pgid, unsigned long long *start)
{
    /* getpgid() first: one system call rules most processes out */
    shx_pstat st;
    if (getpgid(pid) != pgid || shx_procfs_stat(pid, &st) != 0 || st.pgrp != pgid)
        return 0;
    if (start)
        *start = st.start;
    return 1;
}

int shx_procfs_children_available(void)
{
    return atomic_load_explicit(&children_on, memory_order_relaxed) &&
           access("/proc/thread-self/children", R_OK) == 0;
}

static int push_pid(pid_t **v, size_t *n, size_t *cap, pid_t pid)
{
    if (*n == *cap) {
        size_t bigger = *cap ? *cap * 2 : 64;
        pid_t *nv = realloc(*v, bigger * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = bigger;
    }
    (*v)[(*n)++] = pid;
    return 0;
}

/* The pids in one children file ("12 34 56 "), read in pieces. */
static int read_children(const char *path, pid_t **v, size_t *n, size_t *cap)
{
    count_read();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[4096];
    long pid = 0;
    int rc = 0;
    for (;;) {
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            rc = got < 0 ? -1 : 0;
            break;
        }
        /* a number may go on in the next piece: pid carries over */
        for (ssize_t i = 0; i < got && rc == 0; i++) {
            if (buf[i] >= '0' && buf[i] <= '9') {
                pid = pid * 10 + (buf[i] - '0');
                if (pid > INT_MAX)
                    rc = -1;
            } else if (pid > 0) {
                rc = push_pid(v, n, cap, (pid_t)pid);
                pid = 0;
            }
        }
        /* a short read is not the end: the kernel hands the list over a
         * page at a time, whole pids only */
        if (rc != 0)
            break;
    }
    if (rc == 0 && pid > 0)
        rc = push_pid(v, n, cap, (pid_t)pid);
    close(fd);
    return rc;
}

int shx_procfs_children(pid_t pid, int threads, pid_t **v, size_t *n, size_t *cap)
{
    char path[96];
    if (threads <= 1) {
        (void)snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
        return read_children(path, v, n, cap);
    }
    /* children belong to the thread that forked them: every thread's list */
    (void)snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || tid <= 0 || tid > INT_MAX)
            continue;
        (void)snprintf(path, sizeof path, "/proc/%d/task/%ld/children", (int)pid, tid);
        /* a thread that just exited has no list to read: not an error */
        if (read_children(path, v, n, cap) != 0 && errno == ENOMEM) {
            rc = -1;
            break;
        }
    }
    closedir(d);
    return rc;
}

int shx_procfs_walk_open(shx_procfs_walk *w)
{
    w->dir = opendir("/proc");
    return w->dir ? 0 : -1;
}

pid_t shx_procfs_walk_next(shx_procfs_walk *w)
{
    struct dirent *e;
    while ((e = readdir((DIR *)w->dir))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end == '\0' && pid > 0 && pid <= INT_MAX)
            return (pid_t)pid;
    }
    return 0;
}

void shx_procfs_walk_close(shx_procfs_walk *w)
{
    if (w->dir)
        closedir((DIR *)w->dir);
    w->dir = NULL;
}

int shx_procfs_fds(int from, int **fds, size_t *n)
{
    *fds = NULL;
    *n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int self = dirfd(d);
    size_t cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || fd < from || fd > INT_MAX || fd == self)
            continue;
        if (*n == cap) {
            size_t bigger = cap ? cap * 2 : 16;
            int *v = realloc(*fds, bigger * sizeof *v);
            if (!v) {
                rc = -1;
                break;
            }
            *fds = v;
            cap = bigger;
        }
        (*fds)[(*n)++] = (int)fd;
    }
    closedir(d);
    if (rc != 0) {
        free(*fds);
        *fds = NULL;
        *n = 0;
        errno = ENOMEM;
    }
    return rc;
}

unsigned long long shx_procfs_pidns(void)
{
    /* the link reads "pid:[INODE]" (no stat(): its symbol is newer than the
     * oldest glibc supported, platform.h) */
    char link[64];
    ssize_t n = readlink("/proc/self/ns/pid", link, sizeof link - 1);
    if (n <= 6 || memcmp(link, "pid:[", 5) != 0)
        return 0;
    link[n] = '\0';
    return strtoull(link + 5, NULL, 10);
}

#else /* no /proc in this build: nothing is known */

int shx_procfs_available(void)
{
    return 0;
}

int shx_procfs_stat(pid_t pid, shx_pstat *out)
{
    (void)pid;
    (void)out;
    return -1;
}

unsigned long long shx_procfs_ticks_now(void)
{
    return 0;
}

int shx_procfs_signal_default(pid_t pid, pid_t pgid, int sig)
{
    (void)pid;
    (void)pgid;
    (void)sig;
    return 0;
}

int shx_procfs_in_group(pid_t pid, pid_t pgid, unsigned long long *start)
{
    (void)pid;
    (void)pgid;
    (void)start;
    return 0;
}

int shx_procfs_children_available(void)
{
    return 0;
}

int shx_procfs_children(pid_t pid, int threads, pid_t **v, size_t *n, size_t *cap)
{
    (void)pid;
    (void)threads;
    (void)v;
    (void)n;
    (void)cap;
    return -1;
}

int shx_procfs_walk_open(shx_procfs_walk *w)
{
    w->dir = NULL;
    return -1;
}

pid_t shx_procfs_walk_next(shx_procfs_walk *w)
{
    (void)w;
    return 0;
}

void shx_procfs_walk_close(shx_procfs_walk *w)
{
    w->dir = NULL;
}

int shx_procfs_fds(int from, int **fds, size_t *n)
{
    (void)from;
    *fds = NULL;
    *n = 0;
    return -1;
}

unsigned long long shx_procfs_pidns(void)
{
    return 0;
}

#endif
