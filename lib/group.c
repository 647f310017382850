/*
 * group.c - tracking the members left in a process group (see group.h).
 * Scanning /proc is linear in the number of processes, so it is done only
 * when a group outlives its leader (a command left `server &` behind) and
 * when every anchor of such a group has ended.
 */
#include "group.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

/* Process group of pid from /proc/PID/stat, or -1. */
static pid_t pgrp_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
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
    char state;
    int ppid, pgrp;
    if (!p || sscanf(p + 1, " %c %d %d", &state, &ppid, &pgrp) != 3)
        return -1;
    if (state == 'Z' || state == 'X')
        return -1;
    return (pid_t)pgrp;
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
        if (*end || pid <= 0 || pgrp_of((pid_t)pid) != pgid)
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
