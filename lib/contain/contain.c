/*
 * contain.c - a session's containment by cgroup v2 (see contain_hook.h): its
 * cgroup, its commands' cgroups, and their removal once empty.
 *
 * A cgroup whose processes were just killed cannot be removed until the
 * kernel took them all out (EBUSY until "populated 0"): rather than wait in
 * the host's call, it is listed and removed by a later one (the next start,
 * or the session's end, which waits). Each goes as a tree (cgtree.h): a
 * command may have made cgroups below its own, and a process of the host's
 * uid may have moved into any of them, or into the session's own.
 */
#include "contain/contain_hook.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "shx/base.h"
#include "contain/cgroup.h"
#include "contain/cgroupfs.h"
#include "contain/cgtree.h"
#include "shx/procfs.h"

/* Cgroups awaiting removal, at most; past it the oldest is left to the
 * session's end, which removes its whole tree. */
#define DYING_MAX 256

/* The controllers limits need, by SHX_CTRL_*: names, SHX_CGROUP_* bits. */
static const char *const ctrl_name[SHX_CTRLS] = {"memory", "pids", "cpu"};
static const unsigned ctrl_bit[SHX_CTRLS] = {SHX_CGROUP_MEMORY, SHX_CGROUP_PIDS, SHX_CGROUP_CPU};

struct shx_contain {
    char dir[SHX_CGROUP_PATH_MAX]; /* the session's cgroup */
    unsigned v2;                   /* controllers its command cgroups have in v2 */
    /* a controller only cgroup v1 has (hybrid machines): the session's
     * cgroup in its hierarchy, made when a limit first needs it (NULL: not
     * yet, or not possible: v1_why says why) */
    char *v1[SHX_CTRLS];
    const char *v1_why[SHX_CTRLS];
    unsigned long next_run;        /* the next command's cgroup number */
    char *dying[DYING_MAX];        /* commands' cgroups to remove once empty */
    int n_dying;
};

/* How many taken names a new session's cgroup skips before it gives up. */
#define NAME_TRIES 64

/* Sessions made by this process so far: each one's cgroup name is unique. */
static atomic_ulong sessions_made;

/* Remove the cgroup tree at dir (cgtree.h), deepest first; with `until`
 * (shx_now_ns(); 0: none) whatever is in it is killed first and waited for
 * until then: a tree no one uses any more. 0 when it is gone. */
static int remove_tree(const char *dir, int64_t until)
{
    if (shx_cgroup_remove(dir) == 0 || errno == ENOENT)
        return 0; /* the common case, without a buffer */
    int64_t left = until ? (until - shx_now_ns()) / 1000000 : 0;
    char *buf = malloc(SHX_CGTREE_BUF);
    int rc = !buf    ? -1
             : until ? shx_cgtree_end(dir, left > 0 ? (int)left : 0, buf, SHX_CGTREE_BUF)
                     : shx_cgtree_remove(dir, buf, SHX_CGTREE_BUF);
    free(buf);
    return rc;
}

/* Sessions whose host died without ending them (killed, no watchdog) leave
 * cgroups, maybe with processes: a new session ends those beside its own
 * whose host's pid is gone (a reused pid keeps them), within
 * SHX_CONTAIN_FREE_WAIT_MS; judged only in the pid namespace the name gives
 * ("-pNS": elsewhere a live host looks dead); without one, removed empty. */
static void remove_stale(const char *parent)
{
    DIR *d = opendir(parent);
    if (!d)
        return;
    int64_t until = shx_now_ns() + SHX_CONTAIN_FREE_WAIT_MS * (int64_t)1000000;
    unsigned long long ns = shx_procfs_pidns();
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        if (strncmp(e->d_name, "shexec-", 7) != 0 || e->d_name[7] < '1' || e->d_name[7] > '9')
            continue;
        long pid = strtol(e->d_name + 7, &end, 10);
        if (*end != '-' || end[1] < '0' || end[1] > '9' || pid <= 0 || pid > 0x7fffffff)
            continue;
        (void)strtoul(end + 1, &end, 10);
        int has_ns = end[0] == '-' && end[1] == 'p' && end[2] >= '1' && end[2] <= '9';
        unsigned long long named_ns = has_ns ? strtoull(end + 2, &end, 10) : 0;
        if (*end || (named_ns && named_ns != ns) || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char dir[SHX_CGROUP_PATH_MAX];
        if (snprintf(dir, sizeof dir, "%s/%s", parent, e->d_name) < (int)sizeof dir)
            (void)remove_tree(dir, named_ns ? until : 0);
    }
    closedir(d);
}

int shx_contain_new(shx_contain **out, const char *parent, const char **reason)
{
    *out = NULL;
    char self[SHX_CGROUP_PATH_MAX];
    if (strcmp(parent, "auto") == 0) {
        if (shx_cgroup_self_dir(NULL, self, reason) != 0)
            return -1;
        parent = self;
    }
    shx_cgroup_probe probe;
    if (shx_cgroup_probe_dir(parent, &probe) != 0) {
        *reason = probe.reason;
        return -1;
    }
    shx_contain *c = calloc(1, sizeof *c);
    if (!c) {
        *reason = "out of memory";
        errno = ENOMEM;
        return -1;
    }
    remove_stale(parent);
    unsigned wanted = probe.subtree & (SHX_CGROUP_MEMORY | SHX_CGROUP_PIDS | SHX_CGROUP_CPU);
    /* a name taken (another copy of the library here, a dead host's) is skipped */
    char name[80], ns[24] = "";
    unsigned long long pidns = shx_procfs_pidns(); /* the pid's namespace: remove_stale */
    (void)(pidns && snprintf(ns, sizeof ns, "-p%llu", pidns));
    int made = -1;
    for (int tries = 0; made != 0 && tries < NAME_TRIES; tries++) {
        (void)snprintf(name, sizeof name, "shexec-%ld-%lu%s", (long)getpid(),
                       (unsigned long)atomic_fetch_add(&sessions_made, 1), ns);
        made = shx_cgroup_create(parent, name, c->dir);
        if (made != 0 && errno != EEXIST)
            break;
    }
    if (made != 0) {
        int err = errno;
        free(c);
        *reason = err == ENAMETOOLONG ? "the parent cgroup's path is too long"
                                      : "cannot make the session's cgroup";
        errno = err;
        return -1;
    }
    /* commands may make cgroups below theirs, but no deeper than the walks
     * that end them reach (against accidents: the host's uid may raise it) */
    char depth[16];
    (void)snprintf(depth, sizeof depth, "%d", SHX_CGTREE_DEPTH);
    (void)shx_cgroup_set_limit(c->dir, "cgroup.max.depth", depth, NULL);
    /* the controllers the parent gives its children, passed on to the
     * commands' cgroups (the session's own holds no process, so it may) */
    for (int i = 0; i < SHX_CTRLS; i++) {
        char enable[16];
        (void)snprintf(enable, sizeof enable, "+%s", ctrl_name[i]);
        if ((wanted & ctrl_bit[i]) &&
            shx_cgroup_set_limit(c->dir, "cgroup.subtree_control", enable, NULL) == 0)
            c->v2 |= ctrl_bit[i];
    }
    *out = c;
    return 0;
}

static int ctrl_of(int limit)
{
    return limit == SHEXEC_LIMIT_PIDS ? SHX_CTRL_PIDS
           : limit == SHEXEC_LIMIT_CPU ? SHX_CTRL_CPU : SHX_CTRL_MEMORY;
}

int shx_contain_can_limit(shx_contain *c, int limit, const char **reason)
{
    int k = ctrl_of(limit);
    if (c->v2 & ctrl_bit[k])
        return 0;
    if (c->v1[k])
        return 0;
    if (c->v1_why[k]) {
        *reason = c->v1_why[k];
        return -1;
    }
    /* not in v2 below this parent: the controller's v1 hierarchy, below
     * the host's own cgroup there */
    char self[SHX_CGROUP_PATH_MAX];
    const char *why = "not enabled for the parent cgroup's children, and no cgroup v1 hierarchy";
    if (shx_cgroup_self_dir(ctrl_name[k], self, &why) == 0) {
        const char *name = strrchr(c->dir, '/') + 1; /* the session's, as in v2 */
        char dir[SHX_CGROUP_PATH_MAX];
        remove_stale(self); /* as in v2, when this hierarchy is first used */
        if (shx_cgroup_create(self, name, dir) == 0 || errno == EEXIST) {
            if (!(c->v1[k] = strdup(dir))) {
                (void)shx_cgroup_remove(dir);
                *reason = "out of memory";
                return -1;
            }
            return 0;
        }
        why = errno == EROFS ? "its cgroup v1 hierarchy is read-only"
                             : "no cgroup can be made in its cgroup v1 hierarchy";
    }
    c->v1_why[k] = why;
    *reason = why;
    return -1;
}

const char *shx_contain_dir(const shx_contain *c)
{
    return c->dir;
}

int shx_contain_has_peak(const shx_contain *c)
{
    return c && (c->v2 & SHX_CGROUP_MEMORY);
}

/* Remove the dying cgroups that are empty by now (with what their commands
 * made below them); keep the rest in order. */
static void remove_emptied(shx_contain *c)
{
    int kept = 0;
    for (int i = 0; i < c->n_dying; i++) {
        if (remove_tree(c->dying[i], 0) == 0)
            free(c->dying[i]);
        else
            c->dying[kept++] = c->dying[i];
    }
    c->n_dying = kept;
}

/* A fresh cgroup for one command (see shx_contain_run_make). */
static int run_new(shx_contain *c, char **dir)
{
    *dir = NULL;
    if (c->n_dying)
        remove_emptied(c);
    char name[32], path[SHX_CGROUP_PATH_MAX];
    (void)snprintf(name, sizeof name, "run-%lu", c->next_run++);
    if (shx_cgroup_create(c->dir, name, path) != 0)
        return -1;
    *dir = strdup(path);
    if (!*dir) {
        (void)shx_cgroup_remove(path);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void shx_contain_run_done(shx_contain *c, char *dir)
{
    if (!dir)
        return;
    /* with the cgroups the command made below it; no kill: a v1 cgroup
     * may still hold leftovers another run adopted */
    if (remove_tree(dir, 0) == 0 || errno != EBUSY || !c) {
        free(dir);
        return;
    }
    if (c->n_dying == DYING_MAX)
        remove_emptied(c);
    if (c->n_dying == DYING_MAX) {
        free(c->dying[0]);
        memmove(c->dying, c->dying + 1, (DYING_MAX - 1) * sizeof *c->dying);
        c->n_dying--;
    }
    c->dying[c->n_dying++] = dir;
}

/* Write one limit's value, formatted for its cgroup version. */
static int write_limit(const char *dir, int limit, int v1, uint64_t value, uint64_t memory,
                       const char **reason)
{
    char text[48];
    const char *file;
    switch (limit) {
    case SHEXEC_LIMIT_MEMORY:
        file = v1 ? "memory.limit_in_bytes" : "memory.max";
        break;
    case SHEXEC_LIMIT_SWAP:
        /* v1 bounds memory and swap together */
        file = v1 ? "memory.memsw.limit_in_bytes" : "memory.swap.max";
        value = v1 ? memory + value : value;
        break;
    case SHEXEC_LIMIT_PIDS:
        file = "pids.max";
        break;
    default:
        /* thousandths of a CPU, as microseconds of each 100 ms period */
        file = v1 ? "cpu.cfs_quota_us" : "cpu.max";
        value *= 100;
        break;
    }
    (void)snprintf(text, sizeof text, limit == SHEXEC_LIMIT_CPU && !v1 ? "%llu 100000" : "%llu",
                   (unsigned long long)value);
    if (limit == SHEXEC_LIMIT_CPU && v1 &&
        shx_cgroup_set_limit(dir, "cpu.cfs_period_us", "100000", reason) != 0)
        return -1;
    return shx_cgroup_set_limit(dir, file, text, reason);
}

/* A command's limits written (see shx_contain_run_make). */
static int run_limit(shx_contain *c, const char *dir, const uint64_t limits[SHEXEC_LIMITS],
                     char *v1[SHX_CTRLS], const char **reason)
{
    for (int k = 0; k < SHX_CTRLS; k++)
        v1[k] = NULL;
    uint64_t want[SHEXEC_LIMITS];
    memcpy(want, limits, sizeof want);
    int implied_swap = want[SHEXEC_LIMIT_MEMORY] && !want[SHEXEC_LIMIT_SWAP];
    for (int limit = 0; limit < SHEXEC_LIMITS; limit++) {
        if (!want[limit] && !(limit == SHEXEC_LIMIT_SWAP && implied_swap))
            continue;
        if (shx_contain_can_limit(c, limit, reason) != 0)
            return -1;
        int k = ctrl_of(limit), in_v1 = !(c->v2 & ctrl_bit[k]);
        const char *at = dir;
        if (in_v1) {
            char path[SHX_CGROUP_PATH_MAX];
            if (!v1[k] && (shx_cgroup_create(c->v1[k], strrchr(dir, '/') + 1, path) != 0 ||
                           !(v1[k] = strdup(path)))) {
                *reason = "cannot make the command's cgroup in a cgroup v1 hierarchy";
                return -1;
            }
            at = v1[k];
        }
        /* with a memory limit and none for swap: none of it, so that the
         * limit bounds what the command holds (quietly skipped where the
         * kernel does not count swap) */
        if (limit == SHEXEC_LIMIT_SWAP && implied_swap) {
            (void)write_limit(at, limit, in_v1, 0, want[SHEXEC_LIMIT_MEMORY], reason);
            continue;
        }
        if (limit == SHEXEC_LIMIT_SWAP && in_v1 && !want[SHEXEC_LIMIT_MEMORY]) {
            *reason = "on cgroup v1 a swap limit needs a memory limit";
            return -1;
        }
        if (write_limit(at, limit, in_v1, want[limit], want[SHEXEC_LIMIT_MEMORY], reason) != 0)
            return -1;
    }
    return 0;
}

int shx_contain_run_make(shx_contain *c, const uint64_t limits[SHEXEC_LIMITS], char **dir,
                         char *v1[SHX_CTRLS], const char **reason)
{
    for (int k = 0; k < SHX_CTRLS; k++)
        v1[k] = NULL;
    if (run_new(c, dir) != 0) {
        *reason = errno == ENOMEM ? "out of memory" : "cannot make the command's cgroup";
        return -1;
    }
    if (run_limit(c, *dir, limits, v1, reason) == 0)
        return 0;
    int err = errno;
    for (int k = 0; k < SHX_CTRLS; k++) {
        shx_contain_run_done(c, v1[k]);
        v1[k] = NULL;
    }
    shx_contain_run_done(c, *dir);
    *dir = NULL;
    errno = err;
    return -1;
}

/* 1 when the counter key of dir's file is above 0. */
static int counted(const char *dir, const char *file, const char *key)
{
    unsigned long long v = 0;
    return dir && shx_cgroup_read_key(dir, file, key, &v) == 0 && v > 0;
}

int shx_contain_run_hits(shx_contain *c, const char *dir, char *v1[SHX_CTRLS],
                         const uint64_t limits[SHEXEC_LIMITS])
{
    int hits = 0;
    /* the counter of a limit not set is not read: no limit stopped the command there */
    const char *mem = c && (c->v2 & SHX_CGROUP_MEMORY) ? dir : v1[SHX_CTRL_MEMORY];
    const char *pids = c && (c->v2 & SHX_CGROUP_PIDS) ? dir : v1[SHX_CTRL_PIDS];
    if (!limits[SHEXEC_LIMIT_MEMORY] && !limits[SHEXEC_LIMIT_SWAP])
        mem = NULL;
    if (!limits[SHEXEC_LIMIT_PIDS])
        pids = NULL;
    if (counted(mem, v1[SHX_CTRL_MEMORY] == mem && mem ? "memory.oom_control" : "memory.events",
                "oom_kill"))
        hits |= 1 << SHEXEC_LIMIT_MEMORY;
    if (counted(pids, "pids.events", "max"))
        hits |= 1 << SHEXEC_LIMIT_PIDS;
    for (int k = 0; k < SHX_CTRLS; k++) {
        shx_contain_run_done(c, v1[k]);
        v1[k] = NULL;
    }
    return hits;
}

/* A size in the largest binary unit that divides it, for the notice. */
static void put_size(shx_buf *out, uint64_t bytes)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    shx_buf_printf(out, "%" PRIu64 " %s", bytes, unit[u]);
}

void shx_contain_hits_notice(int hits, const uint64_t limits[SHEXEC_LIMITS], shx_buf *notice)
{
    if (hits & (1 << SHEXEC_LIMIT_MEMORY)) {
        shx_buf_puts(notice, notice->len ? "; " : "");
        shx_buf_puts(notice, "killed: out of memory (limit ");
        put_size(notice, limits[SHEXEC_LIMIT_MEMORY]);
        shx_buf_puts(notice, ")");
    }
    if (hits & (1 << SHEXEC_LIMIT_PIDS))
        shx_buf_printf(notice, "%sthe process limit (%" PRIu64 ") was reached: a fork failed",
                       notice->len ? "; " : "", limits[SHEXEC_LIMIT_PIDS]);
}

void shx_contain_free(shx_contain *c, int wait_ms)
{
    if (!c)
        return;
    /* whatever is left anywhere in the session's tree goes: in dying
     * commands' cgroups, in those commands made below, and in the session's
     * own, where a process of the host's uid may have moved one */
    int64_t until = shx_now_ns() + wait_ms * (int64_t)1000000;
    (void)remove_tree(c->dir, until);
    for (int i = 0; i < c->n_dying; i++)
        free(c->dying[i]);
    for (int k = 0; k < SHX_CTRLS; k++) {
        if (c->v1[k])
            (void)remove_tree(c->v1[k], until);
        free(c->v1[k]);
    }
    free(c);
}
