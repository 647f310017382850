/*
 * cgtree.c - a cgroup tree taken as one (see cgtree.h).
 *
 * The walk keeps no descriptor and no list: its stack is the path itself
 * (each level's length) and, per level, where that directory's listing is
 * to go on (the d_off of the last entry taken). Descending closes the
 * parent; coming back reopens it and seeks there. So the walk costs a fixed
 * few kilobytes of stack whatever the tree, and a hostile tree can only
 * make it stop at its bounds. Removing a child while its parent's listing
 * is between reads is what kernfs (the cgroup file system) allows: the
 * position is the next entry's name hash, which does not move.
 *
 * Every call here is async-signal-safe: system calls on the caller's
 * buffer and the stack. Where the build has no /proc (not Linux) each
 * fails with ENOSYS at its top, and the compiler drops the rest.
 */
#include "contain/cgtree.h"

#include "shx_config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if SHX_HAVE_PROCFS
#include <dirent.h>
#include <sys/syscall.h>
#endif

#include "contain/contain_hook.h"

/* Rounds of the kill without cgroup.kill: a member that was mid-fork when
 * a round listed the tree may leave a child listed only in the next one. */
#define KILL_ROUNDS 4

/* The smallest buffer that holds a listing's longest entry and a member
 * list of some length. */
#define BUF_MIN 1024

struct cg_dirent64 {
    // cppcheck-suppress unusedStructMember
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* One walk's state: the path of the cgroup it is at, and per level the
 * path's length there and where that level's listing goes on. */
typedef struct walk {
    char path[SHX_CGROUP_PATH_MAX];
    size_t len[SHX_CGTREE_DEPTH + 1];
    long long off[SHX_CGTREE_DEPTH + 1];
    int depth;
    int seen; /* cgroups met, entered or not */
    int cut;  /* some were not entered: beyond a bound */
} walk;

/* Called for each cgroup of a walk, children before their parent, with the
 * half of the caller's buffer the listings leave: nonzero stops the walk. */
typedef int (*visit_fn)(const char *dir, void *ctx, char *text, size_t cap);

static int fail(int err)
{
    errno = err;
    return -1;
}

/* dir/file into out; 0, or -1 when too long. */
static int path_of(char out[SHX_CGROUP_PATH_MAX], const char *dir, const char *file)
{
    size_t n = strlen(dir), f = strlen(file);
    if (n + 1 + f >= SHX_CGROUP_PATH_MAX)
        return fail(ENAMETOOLONG);
    memcpy(out, dir, n + 1);
    out[n] = '/';
    memcpy(out + n + 1, file, f + 1);
    return 0;
}

/* dir/file's first cap - 1 bytes into buf, NUL-terminated: its length, or -1. */
static ssize_t read_into(const char *dir, const char *file, char *buf, size_t cap)
{
    char path[SHX_CGROUP_PATH_MAX];
    if (path_of(path, dir, file) != 0)
        return -1;
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

/* text to dir/file in one write, as cgroup files want. 0, or -1. */
static int write_to(const char *dir, const char *file, const char *text)
{
    char path[SHX_CGROUP_PATH_MAX];
    if (path_of(path, dir, file) != 0)
        return -1;
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = strlen(text);
    ssize_t w;
    do
        w = write(fd, text, n);
    while (w < 0 && errno == EINTR);
    int err = w < 0 ? errno : 0;
    close(fd);
    return w == (ssize_t)n ? 0 : fail(err ? err : EIO);
}

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, ms % 1000 * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

#if SHX_HAVE_PROCFS
static int is_dots(const char *name)
{
    return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}
#endif

/* The next child cgroup of the walk's level from where its listing goes on:
 * 1 with the path extended to it, 0 when there is none, -1 when the
 * directory cannot be read. */
static int next_child(walk *w, char *dents, size_t dcap)
{
#if !SHX_HAVE_PROCFS /* not Linux: no getdents64, and no cgroups */
    (void)w, (void)dents, (void)dcap;
    return fail(ENOSYS);
#else
    int fd = open(w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    long long *off = &w->off[w->depth];
    if (*off && lseek(fd, (off_t)*off, SEEK_SET) < 0) {
        close(fd);
        return -1;
    }
    long n;
    while ((n = syscall(SYS_getdents64, fd, dents, dcap)) > 0) {
        for (long at = 0; at < n;) {
            const struct cg_dirent64 *d = (const void *)(dents + at);
            at += d->d_reclen;
            *off = d->d_off;
            if (d->d_type != DT_DIR || is_dots(d->d_name))
                continue;
            size_t here = w->len[w->depth], name = strlen(d->d_name);
            if (here + 1 + name >= sizeof w->path) { /* out of reach by path */
                w->cut = 1;
                continue;
            }
            w->path[here] = '/';
            memcpy(w->path + here + 1, d->d_name, name + 1);
            close(fd);
            return 1;
        }
    }
    close(fd);
    return n < 0 ? -1 : 0;
#endif
}

/* Walk the tree at top, children first, calling fn for each cgroup entered.
 * fn's nonzero result ends the walk and is returned; else 0, and *cut says
 * whether cgroups were left out at a bound. */
static int walk_tree(const char *top, char *buf, size_t cap, visit_fn fn, void *ctx, int *cut)
{
    if (cap < BUF_MIN)
        return fail(EINVAL);
    /* getdents64 writes 8-aligned records from the start it is given */
    size_t skew = (size_t)(-(uintptr_t)buf & 7);
    char *dents = buf + skew;
    size_t dcap = (cap - skew) / 2;
    char *text = dents + dcap;
    size_t tcap = cap - skew - dcap;
    walk w;
    size_t len = strlen(top);
    if (len >= sizeof w.path)
        return fail(ENAMETOOLONG);
    memcpy(w.path, top, len + 1);
    w.len[0] = len;
    w.off[0] = 0;
    w.depth = 0;
    w.seen = 1;
    w.cut = 0;
    for (;;) {
        int got = 0;
        if (w.seen < SHX_CGTREE_MAX)
            got = next_child(&w, dents, dcap);
        else
            w.cut = 1;
        if (got == 1) {
            w.seen++;
            if (w.depth < SHX_CGTREE_DEPTH) {
                w.depth++;
                w.len[w.depth] = strlen(w.path);
                w.off[w.depth] = 0;
            } else {
                w.cut = 1; /* too deep: not entered */
                w.path[w.len[w.depth]] = '\0';
            }
            continue;
        }
        int rc = fn(w.path, ctx, text, tcap);
        if (rc)
            return rc;
        if (w.depth == 0)
            break;
        w.path[w.len[--w.depth]] = '\0';
    }
    if (cut)
        *cut = w.cut;
    return 0;
}

/* ---- the visits ---------------------------------------------------------- */

typedef struct signal_ctx {
    int sig;
    pid_t except_pgid;
    long sent;
} signal_ctx;

/* Send the signal to each pid dir's cgroup.procs lists. */
static int signal_members(const char *dir, void *ctx, char *text, size_t cap)
{
    signal_ctx *s = ctx;
    if (read_into(dir, "cgroup.procs", text, cap) <= 0)
        return 0;
    for (const char *p = text; *p;) {
        long pid = 0;
        while (*p >= '0' && *p <= '9' && pid < 0x7fffffff)
            pid = pid * 10 + (*p++ - '0');
        if (pid > 0 && (s->except_pgid <= 0 || getpgid((pid_t)pid) != s->except_pgid) &&
            kill((pid_t)pid, s->sig) == 0)
            s->sent++;
        while (*p && (*p < '0' || *p > '9'))
            p++;
    }
    return 0;
}

/* 1 when dir's cgroup.procs lists a member: the walk stops there. */
static int has_member(const char *dir, void *ctx, char *text, size_t cap)
{
    (void)ctx;
    if (read_into(dir, "cgroup.procs", text, cap) <= 0)
        return 0;
    for (const char *p = text; *p; p++)
        if (*p >= '1' && *p <= '9')
            return 1;
    return 0;
}

/* rmdir dir; the first error kept. */
static int remove_one(const char *dir, void *ctx, char *text, size_t cap)
{
    int *err = ctx;
    (void)text, (void)cap;
    if (rmdir(dir) != 0 && errno != ENOENT && !*err)
        *err = errno;
    return 0;
}

/* ---- the calls ----------------------------------------------------------- */

long shx_cgtree_signal(const char *dir, int sig, pid_t except_pgid, char *buf, size_t cap)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS);
    if (access(dir, F_OK) != 0)
        return -1;
    signal_ctx s = {sig, except_pgid, 0};
    if (walk_tree(dir, buf, cap, signal_members, &s, NULL) < 0)
        return -1;
    return s.sent;
}

/* 1 when a member is listed anywhere in the tree. */
static int listed(const char *dir, char *buf, size_t cap)
{
    return walk_tree(dir, buf, cap, has_member, NULL, NULL) == 1;
}

int shx_cgtree_populated(const char *dir, char *buf, size_t cap)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS);
    char events[256];
    ssize_t n = read_into(dir, "cgroup.events", events, sizeof events);
    if (n >= 0) {
        const char *at = strstr(events, "populated ");
        return at && at[10] == '1';
    }
    /* no cgroup.events: a cgroup v1 directory, or none */
    if (errno != ENOENT || access(dir, F_OK) != 0)
        return -1;
    return listed(dir, buf, cap);
}

int shx_cgtree_wait_empty(const char *dir, int wait_ms, char *buf, size_t cap)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS);
    long long end = now_ms() + (wait_ms > 0 ? wait_ms : 0);
    /* the killed leave within a few milliseconds: looked at after 1 ms,
     * then less often (a v1 tree is walked each time) */
    for (long pause = 1; shx_cgtree_populated(dir, buf, cap) == 1; pause = pause < 8 ? pause * 2 : 10) {
        if (now_ms() >= end)
            return fail(ETIMEDOUT);
        sleep_ms(pause);
    }
    return 0;
}

/* Wait up to wait_ms for cgroup.events to say "frozen 1". */
static void wait_frozen(const char *dir, int wait_ms)
{
    long long end = now_ms() + wait_ms;
    char events[256];
    for (;;) {
        const char *at = read_into(dir, "cgroup.events", events, sizeof events) > 0
                             ? strstr(events, "frozen ") : NULL;
        if (!at || at[7] == '1' || now_ms() >= end)
            return;
        sleep_ms(1);
    }
}

int shx_cgtree_kill_listed(const char *dir, int wait_ms, char *buf, size_t cap)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS);
    if (cap < BUF_MIN)
        return fail(EINVAL);
    /* without the freezer (v1) members may fork between the listing and
     * the signal: the rounds after catch those */
    int freezer = write_to(dir, "cgroup.freeze", "1") == 0;
    for (int round = 0; round < KILL_ROUNDS; round++) {
        if (freezer && round > 0)
            (void)write_to(dir, "cgroup.freeze", "1");
        /* not settled in time (a member in uninterruptible sleep): killed
         * all the same, the next round catches what forked meanwhile */
        if (freezer)
            wait_frozen(dir, wait_ms);
        long sent = shx_cgtree_signal(dir, SIGKILL, 0, buf, cap);
        int err = errno;
        /* thawed, the killed run on to their exit */
        if (freezer)
            (void)write_to(dir, "cgroup.freeze", "0");
        if (sent < 0)
            return fail(err);
        long long end = now_ms() + wait_ms;
        int left;
        while ((left = listed(dir, buf, cap)) && now_ms() < end)
            sleep_ms(1);
        if (!left)
            return 0;
    }
    return fail(ETIMEDOUT);
}

int shx_cgtree_kill(const char *dir, int wait_ms, char *buf, size_t cap)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS);
    if (write_to(dir, "cgroup.kill", "1") == 0)
        return 0;
    return shx_cgtree_kill_listed(dir, wait_ms, buf, cap);
}

int shx_cgtree_remove(const char *dir, char *buf, size_t cap)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS);
    int err = 0, cut = 0;
    if (walk_tree(dir, buf, cap, remove_one, &err, &cut) < 0)
        return -1;
    if (access(dir, F_OK) != 0)
        return 0;
    return fail(err && !cut ? err : EBUSY);
}

int shx_cgtree_end(const char *dir, int wait_ms, char *buf, size_t cap)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS);
    if (rmdir(dir) == 0 || errno == ENOENT)
        return 0; /* the common case: an empty leaf */
    if (shx_cgtree_populated(dir, buf, cap) == 1) {
        (void)shx_cgtree_kill(dir, wait_ms, buf, cap);
        if (wait_ms > 0)
            (void)shx_cgtree_wait_empty(dir, wait_ms, buf, cap);
    }
    return shx_cgtree_remove(dir, buf, cap);
}
