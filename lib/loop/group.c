/*
 * group.c - tracking the members left in a process group, and the
 * descendants that left it (see group.h). Both are found by walking the
 * children lists the kernel keeps (/proc/PID/task/TID/children) from the
 * command's own processes, so the cost follows the command's size; only
 * where those lists are missing is every process in /proc read. Members
 * are looked for when a group outlives its leader (a command left `server
 * &` behind) and when every anchor of such a group has ended; escapees when
 * a command is being terminated or its leftovers killed.
 *
 * The platform stays behind two headers: processes are listed and read
 * through procfs.h (Linux's /proc) and held through pidfds (platform.h).
 * Where /proc is compiled out or missing nothing is found (anchor and find
 * return 0, can_list says so) and ending.c keeps the shell's zombie as the
 * group's pin instead; without pidfds an anchor's end is looked for and an
 * escapee is told apart from a process reusing its pid by its start time.
 */
#include "loop/group.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "shx/platform.h"
#include "shx/procfs.h"
#include "loop/walk.h"

void shx_group_drop(shx_group *g, int i)
{
    if (g->pidfd[i] >= 0)
        close(g->pidfd[i]);
    g->n--;
    g->pid[i] = g->pid[g->n];
    g->pidfd[i] = g->pidfd[g->n];
    g->start[i] = g->start[g->n];
}

/* ---- members ---------------------------------------------------------------- */

/* Anchor pid, a member of g's group other than its leader, unless held already. */
static void anchor_one(shx_group *g, pid_t pid, int use_pidfd)
{
    for (int i = 0; i < g->n; i++)
        if (g->pid[i] == pid)
            return;
    int fd = -1;
    if (use_pidfd) {
        fd = shx_pidfd_open(pid);
        if (fd < 0 && errno == ESRCH)
            return; /* it just ended */
        /* no pidfds here: its end is looked for */
    }
    /* re-check after taking the pidfd: the pid is now pinned to that
     * process, and the start time read is its own (the watchdog's proof) */
    if (!shx_procfs_in_group(pid, g->pgid, &g->start[g->n])) {
        if (fd >= 0)
            close(fd);
        return;
    }
    g->pid[g->n] = pid;
    g->pidfd[g->n] = fd;
    g->n++;
}

/* Every process in /proc is read: the way without children lists. */
static void anchor_by_scan(shx_group *g, int use_pidfd)
{
    shx_procfs_walk w;
    if (shx_procfs_walk_open(&w) != 0)
        return;
    pid_t pid;
    while (g->n < SHX_GROUP_ANCHORS && (pid = shx_procfs_walk_next(&w)) > 0) {
        /* the leader is the command's shell, which has exited by the time
         * anyone anchors: seen dying, it is not a member to hold on to */
        shx_pstat st;
        if (pid == g->pgid || shx_procfs_stat(pid, &st) != 0 || st.pgrp != g->pgid)
            continue;
        anchor_one(g, pid, use_pidfd);
    }
    shx_procfs_walk_close(&w);
}

typedef struct anchoring {
    shx_group *g;
    int use_pidfd;
} anchoring;

static int anchor_visit(void *ctx, const shx_pstat *st)
{
    anchoring *a = ctx;
    if (st->pid != a->g->pgid && st->pgrp == a->g->pgid)
        anchor_one(a->g, st->pid, a->use_pidfd);
    return a->g->n >= SHX_GROUP_ANCHORS;
}

/*
 * With the leader gone, every member lost its parent or descends from one
 * that did: the walk starts at the members among the reapers' children.
 * -1 without children lists (or memory): the caller scans /proc.
 */
static int anchor_by_children(shx_group *g, int use_pidfd)
{
    if (!shx_procfs_children_available())
        return -1;
    shx_walk q = {0};
    anchoring a = {g, use_pidfd};
    int rc = shx_walk_push_orphans(&q, g->pgid);
    if (rc == 0)
        rc = shx_walk_run(&q, anchor_visit, &a);
    shx_walk_free(&q);
    return rc;
}

int shx_group_anchor(shx_group *g, pid_t pgid, int use_pidfd)
{
    g->pgid = pgid;
    if (g->n < SHX_GROUP_ANCHORS && anchor_by_children(g, use_pidfd) != 0)
        anchor_by_scan(g, use_pidfd);
    return g->n;
}

static int ended(const shx_group *g, int i)
{
    if (g->pidfd[i] >= 0) {
        struct pollfd p = {.fd = g->pidfd[i], .events = POLLIN};
        if (poll(&p, 1, 0) > 0)
            return 1;
    }
    return !shx_procfs_in_group(g->pid[i], g->pgid, NULL);
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

int shx_group_signal_missed(shx_group *g, int sig)
{
    int sent = 0;
    for (int i = 0; i < g->n; i++) {
        if (!shx_procfs_signal_default(g->pid[i], g->pgid, sig))
            continue;
        /* a pidfd reaches only the process it was taken on; without one the
         * pid was just seen alive in the group, which pins the id */
        int rc = g->pidfd[i] >= 0 ? shx_pidfd_send_signal(g->pidfd[i], sig) : kill(g->pid[i], sig);
        sent += rc == 0;
    }
    return sent;
}

int shx_group_can_list(void)
{
    return shx_procfs_available();
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

typedef struct node {
    shx_pstat st;
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
    shx_procfs_walk w;
    if (shx_procfs_walk_open(&w) != 0)
        return NULL;
    size_t n = 0, cap = 256;
    node *v = malloc(cap * sizeof *v);
    pid_t pid;
    while (v && (pid = shx_procfs_walk_next(&w)) > 0) {
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
        if (shx_procfs_stat(pid, &v[n].st) == 0) {
            v[n].mark = 0;
            n++;
        }
    }
    shx_procfs_walk_close(&w);
    if (v)
        qsort(v, n, sizeof *v, by_pid);
    *count = n;
    return v;
}

static int held(const shx_escapees *x, const shx_pstat *st)
{
    for (int i = 0; i < x->n; i++)
        if (x->e[i].pid == st->pid && x->e[i].start == st->start)
            return 1;
    return 0;
}

static void hold(shx_escapees *x, const shx_pstat *st, int use_pidfd)
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
        fd = shx_pidfd_open(st->pid);
        if (fd < 0 && errno == ESRCH)
            return; /* it just ended */
    }
    /* the same start time after taking the pidfd: the pidfd is on that process */
    shx_pstat now;
    if (shx_procfs_stat(st->pid, &now) != 0 || now.start != st->start) {
        if (fd >= 0)
            close(fd);
        return;
    }
    x->e[x->n++] = (shx_escapee){st->pid, fd, st->start};
}

/* Every process in /proc is read: the way without children lists. */
static void find_by_scan(shx_escapees *x, pid_t pgid, int use_pidfd)
{
    size_t n = 0;
    node *v = snapshot(&n);
    if (!v)
        return;
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
}

/* The group's members this walk met, for the next one. */
static int remember(shx_escapees *x, const shx_pstat *st)
{
    if (x->members_n >= SHX_ESCAPEES_MAX)
        return 0;
    if (x->members_n == x->members_cap) {
        int cap = x->members_cap ? x->members_cap * 2 : 16;
        shx_escapee *bigger = realloc(x->members, (size_t)cap * sizeof *bigger);
        if (!bigger)
            return -1;
        x->members = bigger;
        x->members_cap = cap;
    }
    x->members[x->members_n++] = (shx_escapee){st->pid, -1, st->start};
    return 0;
}

typedef struct searching {
    shx_escapees *x;
    pid_t pgid;
    int use_pidfd;
} searching;

/* every process the walk meets is the command's: a member, or one that
 * descends from a member and so escaped */
static int search_visit(void *ctx, const shx_pstat *st)
{
    searching *f = ctx;
    if (st->pgrp == f->pgid)
        return remember(f->x, st);
    hold(f->x, st, f->use_pidfd);
    return 0;
}

/*
 * Walk from the command's processes down their children lists. -1 when
 * the lists cannot be read (or memory ran out): the caller scans /proc.
 */
static int find_by_children(shx_escapees *x, pid_t pgid, int use_pidfd)
{
    if (!shx_procfs_children_available())
        return -1;
    shx_walk q = {0};
    int rc = shx_walk_push(&q, pgid, 0); /* the shell: while the group is ours, its pid is too */
    for (int i = 0; i < x->n && rc == 0; i++)
        rc = shx_walk_push(&q, x->e[i].pid, x->e[i].start);
    for (int i = 0; i < x->members_n && rc == 0; i++)
        rc = shx_walk_push(&q, x->members[i].pid, x->members[i].start);
    if (rc == 0)
        rc = shx_walk_push_orphans(&q, pgid);
    x->members_n = 0; /* met again below while they live */
    searching f = {x, pgid, use_pidfd};
    if (rc == 0)
        rc = shx_walk_run(&q, search_visit, &f);
    shx_walk_free(&q);
    return rc;
}

int shx_escapees_find(shx_escapees *x, pid_t pgid, int use_pidfd)
{
    if (find_by_children(x, pgid, use_pidfd) != 0)
        find_by_scan(x, pgid, use_pidfd);
    return x->n;
}

void shx_escapees_signal(const shx_escapees *x, int sig)
{
    for (int i = 0; i < x->n; i++) {
        const shx_escapee *e = &x->e[i];
        if (e->pidfd >= 0) {
            shx_pidfd_send_signal(e->pidfd, sig);
            continue;
        }
        shx_pstat now;
        if (shx_procfs_stat(e->pid, &now) == 0 && now.start == e->start)
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
    free(x->members);
    x->members = NULL;
    x->members_n = x->members_cap = 0;
}
