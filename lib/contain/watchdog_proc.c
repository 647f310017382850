/*
 * watchdog_proc.c - the watchdog process (see contain_hook.h). It is a fork of
 * the host, perhaps of one thread of a multithreaded one: from the fork on
 * it makes only async-signal-safe calls (system calls, no malloc, no stdio,
 * no locale), on tables the host allocated before the fork. That is why it
 * reads /proc with its own few lines here rather than group.c's, which
 * allocate, sort and format.
 *
 * It learns the session's groups from the host and waits (watchdog_wait.c).
 * At EOF (the host is gone: every copy of the write end is closed) it
 * terminates them: SIGTERM and SIGCONT, the grace, SIGKILL, each step after
 * a fresh look at /proc. A group is signalled only while it is proven the
 * command's: its leader (alive or a zombie) has the start time the host read
 * while the leader was its unreaped child, or a member the host or an
 * earlier look anchored (pid and start time) is still alive in it; a pid
 * whose start time differs is someone else's and is never signalled.
 * Descendants of a proven group's members that left the group (setsid,
 * `set -m`) are signalled one by one, each after checking its start time
 * again, and remembered: a SIGTERM that ends its parent unlinks it from the
 * command.
 *
 * Without /proc (or off Linux) nothing can be proven after the host is
 * gone, only until then: while the host lives, the library keeps every
 * followed group's leader unreaped (the zombie holds the id). So the groups
 * are sent SIGTERM, SIGCONT and SIGKILL the moment EOF is read, with no
 * grace, before the leaders can be reaped and their ids reused; processes
 * that left their group cannot be found. A session whose commands are in
 * cgroups is ended through them instead (watchdog_cgroup.c).
 */
#include "shx_config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shx/base.h" /* shx_now_ns: clock_gettime alone, async-signal-safe */
#include "contain/watchdog_proc.h"
#include "contain/watchdog_cgroup.h"
#include "loop/group.h"

/* ---- reading /proc without allocating ------------------------------------ */

#if SHX_HAVE_PROCFS

static char *put_uint(char *p, unsigned long long v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* The unsigned number at *p (leading spaces skipped); *p moves past it. */
static int take_uint(const char **p, unsigned long long *out)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long v = 0;
    while (*s >= '0' && *s <= '9')
        v = v * 10 + (unsigned long long)(*s++ - '0');
    *out = v;
    *p = s;
    return 0;
}

/* Skip one space-separated field (it may be negative: nice, priority). */
static void skip_field(const char **p)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    while (*s && *s != ' ')
        s++;
    *p = s;
}

/* /proc/PID/stat's pid, ppid, pgrp, state and start time; zombies too. */
static int read_stat(pid_t pid, shx_wd_proc *out)
{
    char path[48] = "/proc/";
    char *p = put_uint(path + 6, (unsigned long long)pid);
    memcpy(p, "/stat", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[512];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf - 1)) < 0 && errno == EINTR)
        ;
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* the command name may hold spaces and parentheses: the last ')' ends it */
    const char *s = NULL;
    for (ssize_t i = n - 1; i >= 0 && !s; i--)
        if (buf[i] == ')')
            s = buf + i + 1;
    if (!s || s[0] != ' ' || !s[1])
        return -1;
    char state = s[1];
    s += 2;
    unsigned long long ppid, pgrp, start;
    if (take_uint(&s, &ppid) != 0 || take_uint(&s, &pgrp) != 0)
        return -1;
    /* session .. itrealvalue: 16 fields, then the start time (field 22) */
    for (int i = 0; i < 16; i++)
        skip_field(&s);
    if (take_uint(&s, &start) != 0)
        return -1;
    out->pid = pid;
    out->ppid = (pid_t)ppid;
    out->pgrp = (pid_t)pgrp;
    out->zombie = state == 'Z' || state == 'X';
    out->mark = 0;
    out->start = start;
    return 0;
}

uint64_t shx_wd_start_time(pid_t pid)
{
    shx_wd_proc st;
    return read_stat(pid, &st) == 0 ? st.start : 0;
}
#else
/* No /proc in this build: no start times (the groups are sent without one,
 * and nothing reads them). */
uint64_t shx_wd_start_time(pid_t pid)
{
    (void)pid;
    return 0;
}
#endif

/* ---- the snapshot of every process ---------------------------------------- */

static size_t slot_of(pid_t pid)
{
    return (size_t)((uint32_t)pid * 2654435761u) % SHX_WD_SLOTS;
}

static shx_wd_proc *lookup(shx_wd_arena *a, pid_t pid)
{
    for (size_t i = slot_of(pid);; i = (i + 1) % SHX_WD_SLOTS) {
        int32_t k = a->index[i];
        if (k == 0)
            return NULL;
        if (a->procs[k - 1].pid == pid)
            return &a->procs[k - 1];
    }
}

#if SHX_HAVE_PROCFS
/* The kernel's record layout: every member is there to place d_reclen and
 * d_name, though only those two are read. */
struct linux_dirent64 {
    // cppcheck-suppress unusedStructMember
    uint64_t d_ino;
    // cppcheck-suppress unusedStructMember
    int64_t d_off;
    unsigned short d_reclen;
    // cppcheck-suppress unusedStructMember
    unsigned char d_type;
    char d_name[];
};

/* Every process /proc lists, hashed by pid; -1 when /proc cannot be read. */
static int scan(shx_wd_arena *a)
{
    int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return -1;
    memset(a->index, 0, sizeof a->index);
    a->nprocs = 0;
    long n;
    while ((n = syscall(SYS_getdents64, dir, a->dents, sizeof a->dents)) > 0) {
        for (long off = 0; off < n;) {
            const struct linux_dirent64 *d = (const void *)(a->dents + off);
            off += d->d_reclen;
            const char *name = d->d_name;
            unsigned long long pid;
            if (take_uint(&name, &pid) != 0 || *name || pid == 0 || pid > 0x7fffffff ||
                a->nprocs >= SHX_WD_PROCS)
                continue;
            shx_wd_proc *p = &a->procs[a->nprocs];
            if (read_stat((pid_t)pid, p) != 0)
                continue;
            size_t i = slot_of(p->pid);
            while (a->index[i])
                i = (i + 1) % SHX_WD_SLOTS;
            a->index[i] = (int32_t)++a->nprocs;
        }
    }
    close(dir);
    return 0;
}
#else
static int scan(shx_wd_arena *a)
{
    (void)a;
    return -1;
}
#endif

static int matches(shx_wd_arena *a, pid_t pid, uint64_t start, pid_t pgid, int zombie_ok)
{
    const shx_wd_proc *p = lookup(a, pid);
    return p && start && p->start == start && p->pgrp == pgid && (zombie_ok || !p->zombie);
}

/*
 * Prove each group (its leader, or an anchor, is still the same process in
 * it), mark its members and their descendants, and anchor each proven group
 * anew on the members seen now; mark too the processes signalled on their
 * own in an earlier round that still live, and their descendants. Returns
 * how many processes are marked.
 */
static size_t look(shx_wd_arena *a)
{
    for (int i = 0; i < a->nsent; i++) {
        shx_wd_proc *p = lookup(a, a->sent[i].pid);
        if (p && p->start == a->sent[i].start && !p->zombie)
            p->mark = 2;
    }
    for (int g = 0; g < a->ngroups; g++) {
        shx_wd_group *gr = &a->groups[g];
        gr->proven = 0;
        if (!gr->pgid)
            continue;
        gr->proven = matches(a, gr->pgid, gr->start, gr->pgid, 1);
        for (int i = 0; i < gr->n && !gr->proven; i++)
            gr->proven = matches(a, gr->a[i].pid, gr->a[i].start, gr->pgid, 0);
        if (!gr->proven)
            continue;
        gr->n = 0;
        for (size_t i = 0; i < a->nprocs; i++) {
            shx_wd_proc *p = &a->procs[i];
            if (p->pgrp != gr->pgid || p->zombie)
                continue;
            p->mark = 1;
            if (gr->n < SHX_WD_ANCHORS)
                gr->a[gr->n++] = (shx_wd_anchor){p->pid, p->start};
        }
    }
    /* one pass per generation: process trees are shallow */
    for (int changed = 1, pass = 0; changed && pass < 256; pass++) {
        changed = 0;
        for (size_t i = 0; i < a->nprocs; i++) {
            shx_wd_proc *p = &a->procs[i];
            if (p->mark || p->zombie)
                continue;
            const shx_wd_proc *parent = lookup(a, p->ppid);
            if (parent && parent->mark) {
                p->mark = 1;
                changed = 1;
            }
        }
    }
    size_t marked = 0;
    for (size_t i = 0; i < a->nprocs; i++)
        marked += a->procs[i].mark != 0;
    return marked;
}

static int in_proven_group(shx_wd_arena *a, pid_t pgrp)
{
    for (int g = 0; g < a->ngroups; g++)
        if (a->groups[g].proven && a->groups[g].pgid == pgrp)
            return 1;
    return 0;
}

static void signal_marked(shx_wd_arena *a, int sig)
{
    for (int g = 0; g < a->ngroups; g++)
        if (a->groups[g].proven)
            kill(-a->groups[g].pgid, sig);
    for (size_t i = 0; i < a->nprocs; i++) {
        shx_wd_proc *p = &a->procs[i];
        if (!p->mark)
            continue;
        /* a member the group's signal reached, unless it left the group
         * (setsid, setpgid) since the snapshot: then it goes on its own */
        if (in_proven_group(a, p->pgrp) && getpgid(p->pid) == p->pgrp)
            continue;
        /* the same process still: its start time, read once more */
        if (shx_wd_start_time(p->pid) != p->start)
            continue;
        kill(p->pid, sig);
        if (p->mark == 1 && a->nsent < SHX_WD_SENT) {
            a->sent[a->nsent++] = (shx_wd_anchor){p->pid, p->start};
            p->mark = 2;
        }
    }
}

/* The host is gone: end every command of the session, then exit. */
void shx_wd_terminate_all(shx_wd_arena *a)
{
    if (a->cgroup[0]) /* the members, whatever their group */
        shx_wd_cgroup_terminate(a->cgroup, a->grace_ms, a->test_pause_ms, a->dents, sizeof a->dents);
    if (scan(a) != 0) {
        /* no /proc: the groups are still pinned by their leaders' zombies
         * for a moment, so signal them all at once (see the top) */
        static const int sigs[] = {SIGTERM, SIGCONT, SIGKILL};
        for (int k = 0; k < 3; k++)
            for (int g = 0; g < a->ngroups; g++)
                if (a->groups[g].pgid)
                    kill(-a->groups[g].pgid, sigs[k]);
        _exit(0);
    }
    if (look(a) == 0)
        _exit(0);
    if (a->test_pause_ms)
        poll(NULL, 0, (int)a->test_pause_ms);
    signal_marked(a, SIGTERM);
    signal_marked(a, SIGCONT); /* a stopped process acts on SIGTERM only when continued */
    int64_t kill_at = shx_now_ns() / 1000000 + a->grace_ms;
    while (shx_now_ns() / 1000000 < kill_at) {
        poll(NULL, 0, 20);
        if (scan(a) != 0 || look(a) == 0)
            _exit(0); /* all gone */
    }
    if (scan(a) == 0 && look(a) > 0)
        signal_marked(a, SIGKILL);
    _exit(0);
}
