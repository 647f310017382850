/*
 * walk.c - a command's processes, found through the children lists the
 * kernel keeps (/proc/PID/task/TID/children) rather than by reading every
 * process on the machine (see walk.h): from roots down, each process once.
 */
#include "loop/walk.h"


#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Pids met in one walk: open addressing, 0 is a free slot. */
typedef struct pidset {
    pid_t *slot;
    size_t cap, n; /* cap a power of two */
} pidset;

/* 1 when pid was added, 0 when it was there already, -1 out of memory. */
static int pidset_add(pidset *set, pid_t pid)
{
    if ((set->n + 1) * 2 > set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 256;
        pid_t *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return -1;
        for (size_t i = 0; i < set->cap; i++) {
            if (!set->slot[i])
                continue;
            size_t j = (size_t)set->slot[i] & (cap - 1);
            while (slot[j])
                j = (j + 1) & (cap - 1);
            slot[j] = set->slot[i];
        }
        free(set->slot);
        set->slot = slot;
        set->cap = cap;
    }
    size_t j = (size_t)pid & (set->cap - 1);
    while (set->slot[j]) {
        if (set->slot[j] == pid)
            return 0;
        j = (j + 1) & (set->cap - 1);
    }
    set->slot[j] = pid;
    set->n++;
    return 1;
}

int shx_walk_push(shx_walk *q, pid_t pid, unsigned long long start)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        pid_t *p = realloc(q->pid, cap * sizeof *p);
        if (!p)
            return -1;
        q->pid = p;
        unsigned long long *st = realloc(q->start, cap * sizeof *st);
        if (!st)
            return -1;
        q->start = st;
        q->cap = cap;
    }
    q->pid[q->n] = pid;
    q->start[q->n] = start;
    q->n++;
    return 0;
}

/*
 * The reapers a member that lost its parent can have: this process, its
 * ancestors, init (see walk.h). They are listed once and kept while this
 * process is the one that listed them: a reaper only ever leaves the list
 * (when one dies, its orphans go to one further up, already in it), so the
 * list stays whole without reading each one's stat again.
 */
#define REAPERS_MAX 64
static pthread_mutex_t reapers_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t reapers_of; /* getpid() when they were listed; 0: not listed */
static pid_t reapers[REAPERS_MAX];
static int reapers_n;

static atomic_ulong reaper_listings; /* for the tests (testhook.c) */

unsigned long shx_walk_test_listings(void)
{
    return atomic_load_explicit(&reaper_listings, memory_order_relaxed);
}

/* 0, or -1 when one cannot be read (a dead one shows as a zombie: the stat
 * fails) or the chain is longer than the bound (a cycle of reused pids) */
static int list_reapers(void)
{
    atomic_fetch_add_explicit(&reaper_listings, 1, memory_order_relaxed);
    pid_t p = getpid();
    reapers_n = 0;
    while (reapers_n < REAPERS_MAX) {
        shx_pstat st;
        if (shx_procfs_stat(p, &st) != 0)
            return -1;
        reapers[reapers_n++] = p;
        if (p == 1)
            return 0;
        /* ancestors end at init, or at 0 where the parent is outside our
         * pid namespace: init last, also under a parent we cannot see */
        p = st.ppid > 0 ? st.ppid : 1;
    }
    return -1;
}

/* A copy of the reapers into v; how many, 0 when they cannot be listed. */
static int reapers_now(pid_t *v)
{
    int n = 0;
    pid_t self = getpid();
    pthread_mutex_lock(&reapers_lock);
    if (reapers_of != self)
        reapers_of = list_reapers() == 0 ? self : 0;
    if (reapers_of == self) {
        n = reapers_n;
        memcpy(v, reapers, (size_t)n * sizeof *v);
    }
    pthread_mutex_unlock(&reapers_lock);
    return n;
}

static void reapers_forget(void)
{
    pthread_mutex_lock(&reapers_lock);
    reapers_of = 0;
    pthread_mutex_unlock(&reapers_lock);
}

int shx_walk_push_orphans(shx_walk *q, pid_t pgid)
{
    pid_t chain[REAPERS_MAX];
    int n = reapers_now(chain);
    if (n == 0)
        return -1;
    pid_t *kids = NULL;
    size_t cap = 0;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        size_t nkids = 0;
        /* orphans are handed to the reaper's first live thread, its main
         * thread while that lives: one list, however many threads it has */
        if (shx_procfs_children(chain[i], 1, &kids, &nkids, &cap) != 0) {
            if (errno != ENOENT && errno != ESRCH) {
                rc = -1; /* unreadable or no memory: the caller scans /proc */
                break;
            }
            /* gone: what it held went further up the list; list again next time */
            reapers_forget();
            continue;
        }
        for (size_t k = 0; k < nkids && rc == 0; k++)
            if (getpgid(kids[k]) == pgid)
                rc = shx_walk_push(q, kids[k], 0);
    }
    free(kids);
    return rc;
}

int shx_walk_run(shx_walk *q, int (*visit)(void *ctx, const shx_pstat *st), void *ctx)
{
    pidset seen = {0};
    pid_t *kids = NULL;
    size_t kids_cap = 0;
    int rc = 0;
    for (size_t i = 0; i < q->n && rc == 0; i++) {
        int added = pidset_add(&seen, q->pid[i]);
        if (added <= 0) {
            rc = added;
            continue;
        }
        shx_pstat st;
        if (shx_procfs_stat(q->pid[i], &st) != 0)
            continue; /* gone, or a zombie: its children went to a reaper */
        if (q->start[i] && st.start != q->start[i])
            continue; /* the pid is someone else's now */
        rc = visit(ctx, &st);
        if (rc != 0)
            break;
        size_t n = 0;
        if (shx_procfs_children(st.pid, st.threads, &kids, &n, &kids_cap) != 0 &&
            errno == ENOMEM)
            rc = -1;
        for (size_t k = 0; k < n && rc == 0; k++)
            rc = shx_walk_push(q, kids[k], 0);
    }
    free(kids);
    free(seen.slot);
    return rc < 0 ? -1 : 0;
}

void shx_walk_free(shx_walk *q)
{
    free(q->pid);
    free(q->start);
}

size_t shx_walk_descendants(pid_t root, pid_t *out, size_t cap)
{
    size_t n = 0;
    if (cap > 0)
        out[n++] = root;
    for (size_t i = 0; i < n && n < cap; i++) {
        pid_t *kids = NULL;
        size_t k = 0, kcap = 0;
        if (shx_procfs_children(out[i], 1, &kids, &k, &kcap) == 0)
            for (size_t m = 0; m < k && n < cap; m++)
                out[n++] = kids[m];
        free(kids);
    }
    return n;
}
