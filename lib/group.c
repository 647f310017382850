/*
 * group.c - tracking the members left in a process group, and the
 * descendants that left it (see group.h). Scanning /proc is linear in the
 * number of processes, so it is done only when a group outlives its leader
 * (a command left `server &` behind), when every anchor of such a group has
 * ended, and when a command is being terminated or its leftovers killed.
 */
#include "group.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

typedef struct proc_stat {
    pid_t pid, ppid, pgrp;
    unsigned long long start;
} proc_stat;

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

/* The fields of /proc/PID/stat we use; -1 when pid is gone or a zombie. */
static int read_stat(pid_t pid, proc_stat *out)
{
    char path[64], buf[512];
    (void)snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* the command name may contain spaces and parentheses: skip to the last ')' */
    const char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    const char *q = p + 1;
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
    /* the start time is field 22: twenty single spaces after the ')' */
    const char *f = p + 1;
    for (int i = 0; i < 20 && f; i++)
        if ((f = strchr(f, ' ')))
            f++;
    char *end;
    unsigned long long start = f ? strtoull(f, &end, 10) : 0;
    if (!f || end == f)
        return -1;
    out->pid = pid;
    out->ppid = (pid_t)ppid;
    out->pgrp = (pid_t)pgrp;
    out->start = start;
    return 0;
}

/* Process group of pid from /proc/PID/stat, or -1. */
static pid_t pgrp_of(pid_t pid)
{
    proc_stat st;
    return read_stat(pid, &st) == 0 ? st.pgrp : -1;
}

static int alive_in_group(pid_t pid, pid_t pgid)
{
    return getpgid(pid) == pgid && pgrp_of(pid) == pgid;
}

void shx_group_drop(shx_group *g, int i)
{
    if (g->pidfd[i] >= 0)
        close(g->pidfd[i]);
    g->n--;
    g->pid[i] = g->pid[g->n];
    g->pidfd[i] = g->pidfd[g->n];
}

int shx_group_anchor(shx_group *g, pid_t pgid, int use_pidfd)
{
    g->pgid = pgid;
    DIR *d = opendir("/proc");
    if (!d)
        return g->n;
    struct dirent *e;
    while (g->n < SHX_GROUP_ANCHORS && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        /* the leader is the command's shell, which has exited by the time
         * anyone anchors: seen dying, it is not a member to hold on to */
        if (*end || pid <= 0 || (pid_t)pid == pgid || pgrp_of((pid_t)pid) != pgid)
            continue;
        int dup = 0;
        for (int i = 0; i < g->n; i++)
            dup |= g->pid[i] == (pid_t)pid;
        if (dup)
            continue;
        int fd = -1;
        if (use_pidfd) {
            long r = syscall(SYS_pidfd_open, (pid_t)pid, 0);
            if (r < 0 && errno == ESRCH)
                continue; /* it just ended */
            fd = r >= 0 ? (int)r : -1; /* no pidfds here: its end is looked for */
        }
        /* re-check after taking the pidfd: the pid is now pinned to that process */
        if (!alive_in_group((pid_t)pid, pgid)) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        g->pid[g->n] = (pid_t)pid;
        g->pidfd[g->n] = fd;
        g->n++;
    }
    closedir(d);
    return g->n;
}

static int ended(const shx_group *g, int i)
{
    if (g->pidfd[i] >= 0) {
        struct pollfd p = {.fd = g->pidfd[i], .events = POLLIN};
        if (poll(&p, 1, 0) > 0)
            return 1;
    }
    return !alive_in_group(g->pid[i], g->pgid);
}

int shx_group_prune(shx_group *g)
{
    for (int i = 0; i < g->n;) {
        if (ended(g, i))
            shx_group_drop(g, i);
        else
            i++;
    }
    return g->n;
}

int shx_group_signal(shx_group *g, int sig, int use_pidfd)
{
    if (shx_group_prune(g) == 0 && shx_group_anchor(g, g->pgid, use_pidfd) == 0)
        return 0;
    kill(-g->pgid, sig);
    return 1;
}

int shx_group_can_list(void)
{
    return access("/proc/self/stat", R_OK) == 0;
}

int shx_group_unwatched(const shx_group *g)
{
    for (int i = 0; i < g->n; i++)
        if (g->pidfd[i] < 0)
            return 1;
    return 0;
}

void shx_group_release(shx_group *g)
{
    while (g->n > 0)
        shx_group_drop(g, g->n - 1);
}

/* ---- escapees ------------------------------------------------------------ */

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

typedef struct node {
    proc_stat st;
    int mark; /* 1: a member of the group or one of their descendants */
} node;

static int by_pid(const void *a, const void *b)
{
    pid_t x = ((const node *)a)->st.pid, y = ((const node *)b)->st.pid;
    return (x > y) - (x < y);
}

static node *find_node(node *v, size_t n, pid_t pid)
{
    node key = {.st = {.pid = pid}};
    return bsearch(&key, v, n, sizeof *v, by_pid);
}

/* A snapshot of every live process in /proc; NULL when it cannot be taken. */
static node *snapshot(size_t *count)
{
    DIR *d = opendir("/proc");
    if (!d)
        return NULL;
    size_t n = 0, cap = 256;
    node *v = malloc(cap * sizeof *v);
    struct dirent *e;
    while (v && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        if (n == cap) {
            node *bigger = realloc(v, cap * 2 * sizeof *v);
            if (!bigger) {
                free(v);
                v = NULL;
                break;
            }
            v = bigger;
            cap *= 2;
        }
        if (read_stat((pid_t)pid, &v[n].st) == 0) {
            v[n].mark = 0;
            n++;
        }
    }
    closedir(d);
    if (v)
        qsort(v, n, sizeof *v, by_pid);
    *count = n;
    return v;
}

static int held(const shx_escapees *x, const proc_stat *st)
{
    for (int i = 0; i < x->n; i++)
        if (x->e[i].pid == st->pid && x->e[i].start == st->start)
            return 1;
    return 0;
}

static void hold(shx_escapees *x, const proc_stat *st, int use_pidfd)
{
    if (x->n >= SHX_ESCAPEES_MAX || held(x, st))
        return;
    if (x->n == x->cap) {
        int cap = x->cap ? x->cap * 2 : 8;
        shx_escapee *bigger = realloc(x->e, (size_t)cap * sizeof *bigger);
        if (!bigger)
            return;
        x->e = bigger;
        x->cap = cap;
    }
    int fd = -1;
    if (use_pidfd) {
        long r = syscall(SYS_pidfd_open, st->pid, 0);
        if (r < 0 && errno == ESRCH)
            return; /* it just ended */
        fd = r >= 0 ? (int)r : -1;
    }
    /* the same start time after taking the pidfd: the pidfd is on that process */
    proc_stat now;
    if (read_stat(st->pid, &now) != 0 || now.start != st->start) {
        if (fd >= 0)
            close(fd);
        return;
    }
    x->e[x->n++] = (shx_escapee){st->pid, fd, st->start};
}

int shx_escapees_find(shx_escapees *x, pid_t pgid, int use_pidfd)
{
    size_t n = 0;
    node *v = snapshot(&n);
    if (!v)
        return x->n;
    for (size_t i = 0; i < n; i++)
        v[i].mark = v[i].st.pgrp == pgid;
    /* mark children of marked processes until nothing changes: one pass per
     * generation, and process trees are shallow */
    for (int changed = 1, pass = 0; changed && pass < 256; pass++) {
        changed = 0;
        for (size_t i = 0; i < n; i++) {
            if (v[i].mark)
                continue;
            node *parent = find_node(v, n, v[i].st.ppid);
            if (parent && parent->mark) {
                v[i].mark = 1;
                changed = 1;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        if (v[i].mark && v[i].st.pgrp != pgid)
            hold(x, &v[i].st, use_pidfd);
    free(v);
    return x->n;
}

void shx_escapees_signal(const shx_escapees *x, int sig)
{
    for (int i = 0; i < x->n; i++) {
        const shx_escapee *e = &x->e[i];
        if (e->pidfd >= 0) {
            syscall(SYS_pidfd_send_signal, e->pidfd, sig, NULL, 0);
            continue;
        }
        proc_stat now;
        if (read_stat(e->pid, &now) == 0 && now.start == e->start)
            kill(e->pid, sig);
    }
}

void shx_escapees_release(shx_escapees *x)
{
    for (int i = 0; i < x->n; i++)
        if (x->e[i].pidfd >= 0)
            close(x->e[i].pidfd);
    free(x->e);
    x->e = NULL;
    x->n = x->cap = 0;
}
