/*
 * contain_hook.h - the core's one door into contain/: a session's
 * containment by cgroup v2 (contain.c, cgroup.c) and the watchdog
 * (watchdog.c), as the core holds and calls them. The types are here
 * whatever the build; the calls are declared while their part is built
 * (SHX_WITH_CONTAIN, SHX_WITH_WATCHDOG) and are static inline stubs when a
 * switch leaves it out, so that no call site of the core needs an #if. The
 * rest of the folder (cgroupfs.h's parsers, cgtree.h's walks, the
 * watchdog's process) is the folder's own.
 *
 * Containment: the session's own cgroup, made under a parent the host
 * names (or, "auto", under the host's own cgroup, so that whatever its
 * supervisor set there still applies), one child of it per command, and
 * the removal of those children once their processes are gone. A
 * command's shell joins its cgroup before any of the command runs
 * (script.h); membership survives setsid and double forks, so what a
 * command started is found, signalled and killed through it (proc.c).
 * Nothing here knows of runs.
 *
 * Layout: PARENT/shexec-PID-N (the session's; no process of its own) and
 * below it run-M, one per command, and below those whatever cgroups the
 * commands make (at most SHX_CGTREE_DEPTH levels below the session's: its
 * cgroup.max.depth). Every removal here, and the watchdog's, takes a
 * cgroup's whole tree (cgtree.h), deepest first; the session's end, a dead
 * host's stale cgroups and the watchdog first kill the processes anywhere
 * in it.
 *
 * The watchdog: the helper process that ends a session's commands when
 * the host dies without freeing the session (shexec_session_set_watchdog()).
 * The host side (watchdog.c) forks it and tells it, over a channel whose host
 * end is close-on-exec, which process groups the session's commands lead
 * and which members hold a group once its leader is gone; the host's death
 * closes that end, and the watchdog reads EOF. The process side
 * (watchdog_proc.c) then proves each group still the command's before it
 * signals it, finds the processes that left the groups through their live
 * parents, and terminates them all as a timeout would (TERM, the grace,
 * KILL); then it exits. A normal free tells it to exit without signalling.
 */
#ifndef SHX_CONTAIN_HOOK_H
#define SHX_CONTAIN_HOOK_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include "shx/buf.h"
#include "shexec.h"

/* CONTAIN=0 builds a library that never makes a cgroup (contain.c,
 * cgroup.c and cgroupfs.c left out): every session keeps process groups,
 * as on a machine without cgroup v2. WATCHDOG=0 builds it without the
 * watchdog (watchdog*.c left out). The Makefile sets these. */
#ifndef SHX_WITH_CONTAIN
#define SHX_WITH_CONTAIN 1
#endif
#ifndef SHX_WITH_WATCHDOG
#define SHX_WITH_WATCHDOG 1
#endif

typedef struct shx_contain shx_contain;

/* How long the end of a session waits for killed processes to leave its
 * cgroups, so that they can be removed. */
#define SHX_CONTAIN_FREE_WAIT_MS 1000

/* The controllers a limit needs (SHEXEC_LIMIT_* of shexec.h map to these). */
enum { SHX_CTRL_MEMORY = 0, SHX_CTRL_PIDS = 1, SHX_CTRL_CPU = 2, SHX_CTRLS = 3 };

/* The longest path handled (Linux's PATH_MAX, terminating NUL included). */
#define SHX_CGROUP_PATH_MAX 4096

/* cpu.stat's times, in microseconds (present without any controller). */
typedef struct shx_cgroup_cpu {
    unsigned long long usage_usec, user_usec, system_usec;
} shx_cgroup_cpu;

typedef struct shx_watchdog shx_watchdog;

/* Tells a watchdog the processes running as it starts (a restarted one
 * too): shx_proc_replay() of each, which reaches shx_watchdog_observe(). */
typedef void (*shx_watchdog_replay_fn)(void *ctx);

/* The process object the watchdog observes (proc.h). */
struct shx_proc;

#if SHX_WITH_CONTAIN
/*
 * Make the session's cgroup under parent ("auto": the cgroup the calling
 * process is in) into *out, after ending the trees that sessions of hosts
 * now dead left there (their pid gone: whatever is in them killed, within
 * SHX_CONTAIN_FREE_WAIT_MS for all). 0, or -1 with *reason (static
 * storage: no v2 mount, not writable, no cgroup.kill nor freezer, ...) and
 * errno; *out is then NULL and nothing was made.
 */
int shx_contain_new(shx_contain **out, const char *parent, const char **reason);

/* The session's cgroup directory. */
const char *shx_contain_dir(const shx_contain *c);

/* 1 when the commands' cgroups have cgroup v2's memory controller, so that
 * their peak memory can be read (shx_cgroup_read_peak); else 0, and no
 * command's cost looks for a file that cannot be there. */
int shx_contain_has_peak(const shx_contain *c);

/*
 * A command's cgroup is no longer used (its processes were killed or
 * ended, or it holds adopted leftovers no more): removed now with the
 * cgroups the command made below it, or, while killed processes are still
 * on their way out, later (c NULL: now or never). Nothing in it is killed
 * here (a run's v1 cgroups go while another run may have adopted what is
 * in them); the session's end kills whatever is left. Takes dir
 * (malloc'd); NULL: nothing.
 */
void shx_contain_run_done(shx_contain *c, char *dir);

/*
 * Whether limit (SHEXEC_LIMIT_*) can bound c's commands: its controller is
 * on for their cgroups in v2, or (hybrid machines) the session has a
 * cgroup in the controller's v1 hierarchy, made now if need be. 0, or -1
 * with *reason (static storage).
 */
int shx_contain_can_limit(shx_contain *c, int limit, const char **reason);

/*
 * A fresh cgroup for one command (PARENT/shexec-PID-N/run-M, a malloc'd
 * path into *dir) with its limits written (values by SHEXEC_LIMIT_*, 0:
 * none; a memory limit without a swap limit means no swap): into dir, or,
 * for a controller only v1 has, into a cgroup made for the command in that
 * hierarchy, its path into v1[SHX_CTRL_*] (malloc'd, NULL where none),
 * which the shell joins too (script.h). Cgroups of earlier commands that
 * waited for their last process are removed first where they can be. 0,
 * or -1 with *reason and errno, nothing left made.
 */
int shx_contain_run_make(shx_contain *c, const uint64_t limits[SHEXEC_LIMITS], char **dir,
                         char *v1[SHX_CTRLS], const char **reason);

/*
 * After a command: the limits it ran into (bits 1 << SHEXEC_LIMIT_*: an
 * out-of-memory kill, a fork refused at the process limit), among those in
 * force (limits[], 0: none; a limit not set is never read for), from its
 * cgroup dir (NULL: handed on) or its v1 cgroups, which are then disposed
 * of as by shx_contain_run_done (v1[] emptied). c NULL: nothing is read.
 */
int shx_contain_run_hits(shx_contain *c, const char *dir, char *v1[SHX_CTRLS],
                         const uint64_t limits[SHEXEC_LIMITS]);

/* The limits hit (shx_contain_run_hits) in words, appended to notice
 * after "; " where it has text: "killed: out of memory (limit 64 MiB)". */
void shx_contain_hits_notice(int hits, const uint64_t limits[SHEXEC_LIMITS], shx_buf *notice);

/*
 * End the containment: every process anywhere in the session's cgroup tree
 * (its commands' cgroups, the cgroups below them, the session's own) is
 * killed (cgroup.kill), waited for (at most wait_ms) and the cgroups are
 * removed, deepest first; what cannot be removed in that time is left.
 * Frees c; NULL: nothing.
 */
void shx_contain_free(shx_contain *c, int wait_ms);

/* What the core does with a command's cgroup itself (cgroup.c; the rest of
 * cgroup.h is the folder's). A cgroup is named by its directory path (at
 * most SHX_CGROUP_PATH_MAX - 1 bytes). */

/* Remove the cgroup dir. 0, or -1 with errno: EBUSY (it still has members
 * or children), ENOENT, ENOSYS, and rmdir's others. */
int shx_cgroup_remove(const char *dir);

/*
 * Move process pid into dir (0: the calling process; a child between fork
 * and exec moves itself, so that nothing it starts is outside). 0, or -1
 * with errno: ESRCH (no such process), ENOENT, EACCES, EBUSY (dir has
 * children with controllers enabled), EOPNOTSUPP, ENOSYS.
 * Async-signal-safe: a child calls it between fork and exec.
 */
int shx_cgroup_move(const char *dir, pid_t pid);

/* 1 when dir has a live member (below it too; cgroup.events "populated"),
 * 0 when not, -1 with errno: ENOENT, EINVAL (unreadable events), ENOSYS. */
int shx_cgroup_populated(const char *dir);

/*
 * dir's member pids (cgroup.procs, not its children's) into out, at most
 * cap: their count, or -1 with errno: ENOBUFS (more than cap: the first cap
 * are stored), ENOENT, EINVAL, E2BIG, ENOMEM, ENOSYS. A member forked or
 * gone while the list is read may be missed or listed.
 */
long shx_cgroup_pids(const char *dir, pid_t *out, size_t cap);

/*
 * Send sig to every member listed in dir and in the cgroups below it (a
 * command may make some: cgtree.h) (e.g. SIGTERM before a grace period; a
 * process forked meanwhile is missed: shx_cgroup_kill is exact), except
 * those in process group except_pgid (> 0: signalled already, by one kill
 * of the group; 0: none excepted). The count signalled (a member gone
 * already not counted), or -1 with errno: ENOENT, ENOMEM, ENOSYS.
 */
long shx_cgroup_signal(const char *dir, int sig, pid_t except_pgid);

/*
 * SIGKILL every member of dir and of the cgroups below it at once: cgroup.kill
 * where the kernel has it, else shx_cgroup_kill_frozen. The members are
 * then dying, not gone: wait for shx_cgroup_populated() == 0. 0, or -1
 * with errno as shx_cgroup_kill_frozen's.
 */
int shx_cgroup_kill(const char *dir, int wait_ms);

/* dir's CPU times. 0, or -1 with errno: ENOENT (not available), EINVAL,
 * ENOSYS. */
int shx_cgroup_read_cpu(const char *dir, shx_cgroup_cpu *out);

/* dir's peak memory (memory.peak, bytes). 0, or -1 with errno: ENOENT (not
 * available: the memory controller is not enabled for it, or Linux < 5.19),
 * EINVAL, ENOSYS. */
int shx_cgroup_read_peak(const char *dir, unsigned long long *peak);
#else /* CONTAIN=0: no cgroup is ever made, so no command has one */
static inline int shx_contain_new(shx_contain **out, const char *parent, const char **reason)
{
    (void)parent;
    *out = NULL;
    *reason = "this build makes no cgroups (CONTAIN=0)";
    errno = ENOTSUP;
    return -1;
}
static inline const char *shx_contain_dir(const shx_contain *c)
{
    (void)c;
    return "";
}
static inline int shx_contain_has_peak(const shx_contain *c)
{
    (void)c;
    return 0;
}
static inline void shx_contain_run_done(shx_contain *c, char *dir)
{
    (void)c;
    free(dir);
}
static inline int shx_contain_can_limit(shx_contain *c, int limit, const char **reason)
{
    (void)c, (void)limit;
    *reason = "this build makes no cgroups (CONTAIN=0)";
    return -1;
}
static inline int shx_contain_run_make(shx_contain *c, const uint64_t limits[SHEXEC_LIMITS],
                                       char **dir, char *v1[SHX_CTRLS], const char **reason)
{
    (void)c, (void)limits;
    *dir = NULL;
    for (int k = 0; k < SHX_CTRLS; k++)
        v1[k] = NULL;
    *reason = "this build makes no cgroups (CONTAIN=0)";
    errno = ENOTSUP;
    return -1;
}
static inline int shx_contain_run_hits(shx_contain *c, const char *dir, char *v1[SHX_CTRLS],
                                       const uint64_t limits[SHEXEC_LIMITS])
{
    (void)c, (void)dir, (void)limits;
    for (int k = 0; k < SHX_CTRLS; k++) {
        free(v1[k]);
        v1[k] = NULL;
    }
    return 0;
}
static inline void shx_contain_hits_notice(int hits, const uint64_t limits[SHEXEC_LIMITS],
                                           shx_buf *notice)
{
    (void)hits, (void)limits, (void)notice;
}
static inline void shx_contain_free(shx_contain *c, int wait_ms)
{
    (void)c, (void)wait_ms;
}
static inline int shx_cgroup_remove(const char *dir)
{
    (void)dir;
    errno = ENOSYS;
    return -1;
}
static inline int shx_cgroup_move(const char *dir, pid_t pid)
{
    (void)dir, (void)pid;
    errno = ENOSYS;
    return -1;
}
static inline int shx_cgroup_populated(const char *dir)
{
    (void)dir;
    errno = ENOSYS;
    return -1;
}
static inline long shx_cgroup_pids(const char *dir, pid_t *out, size_t cap)
{
    (void)dir, (void)out, (void)cap;
    errno = ENOSYS;
    return -1;
}
static inline long shx_cgroup_signal(const char *dir, int sig, pid_t except_pgid)
{
    (void)dir, (void)sig, (void)except_pgid;
    errno = ENOSYS;
    return -1;
}
static inline int shx_cgroup_kill(const char *dir, int wait_ms)
{
    (void)dir, (void)wait_ms;
    errno = ENOSYS;
    return -1;
}
static inline int shx_cgroup_read_cpu(const char *dir, shx_cgroup_cpu *out)
{
    (void)dir, (void)out;
    errno = ENOSYS;
    return -1;
}
static inline int shx_cgroup_read_peak(const char *dir, unsigned long long *peak)
{
    (void)dir, (void)peak;
    errno = ENOSYS;
    return -1;
}
#endif

#if SHX_WITH_WATCHDOG
/* A watchdog for session s (whose message a failure sets), not started
 * yet; NULL when out of memory. */
shx_watchdog *shx_watchdog_new(shexec_session *s, uint32_t grace_ms, shx_watchdog_replay_fn replay,
                               void *ctx);
/* Start its process (SHEXEC_OK when it runs already) and tell it what runs
 * now. SHEXEC_ENOMEM or SHEXEC_ESYS, with the session's message. */
int shx_watchdog_start(shx_watchdog *w);
/* Tell it to exit without signalling, reap it, free w. NULL: nothing. */
void shx_watchdog_free(shx_watchdog *w);
/* The time between SIGTERM and SIGKILL changed. NULL: nothing. */
void shx_watchdog_set_grace(shx_watchdog *w, uint32_t grace_ms);
/* The session's commands are held in cgroups below dir (NULL: no longer):
 * at the host's death they are ended through it (TERM to each member, the
 * grace, cgroup.kill). A running watchdog is replaced by one that knows.
 * SHEXEC_OK, or as shx_watchdog_start (the watchdog is then off). */
int shx_watchdog_set_cgroup(shx_watchdog *w, const char *dir);
/* The process objects' events (a shx_proc_observer's fn; ctx: the
 * watchdog): groups started, anchored, over. */
void shx_watchdog_observe(void *ctx, int event, const struct shx_proc *p);

/* The watchdog's pid while its channel is in place, else -1 (NULL: -1);
 * for the tests (testhook.c), a forged claim that group pgid, whose leader
 * started at `start`, is a command's. */
int64_t shx_watchdog_pid(const shx_watchdog *w);
void shx_watchdog_claim(shx_watchdog *w, int64_t pgid, uint64_t start);
/* For the tests: a pause between a watchdog's look and its signals; the
 * start time (clock ticks after boot) it would read for pid, 0 unknown. */
void shx_watchdog_test_pause(uint32_t ms);
uint64_t shx_watchdog_start_time(int64_t pid);
#else /* WATCHDOG=0: no watchdog; a session cannot turn one on */
static inline shx_watchdog *shx_watchdog_new(shexec_session *s, uint32_t grace_ms,
                                             shx_watchdog_replay_fn replay, void *ctx)
{
    (void)s, (void)grace_ms, (void)replay, (void)ctx;
    return NULL;
}
static inline int shx_watchdog_start(shx_watchdog *w)
{
    (void)w;
    return SHEXEC_ESYS;
}
static inline void shx_watchdog_free(shx_watchdog *w)
{
    (void)w;
}
static inline void shx_watchdog_set_grace(shx_watchdog *w, uint32_t grace_ms)
{
    (void)w, (void)grace_ms;
}
static inline int shx_watchdog_set_cgroup(shx_watchdog *w, const char *dir)
{
    (void)w, (void)dir;
    return SHEXEC_OK;
}
static inline void shx_watchdog_observe(void *ctx, int event, const struct shx_proc *p)
{
    (void)ctx, (void)event, (void)p;
}
static inline int64_t shx_watchdog_pid(const shx_watchdog *w)
{
    (void)w;
    return -1;
}
static inline void shx_watchdog_claim(shx_watchdog *w, int64_t pgid, uint64_t start)
{
    (void)w, (void)pgid, (void)start;
}
static inline void shx_watchdog_test_pause(uint32_t ms)
{
    (void)ms;
}
static inline uint64_t shx_watchdog_start_time(int64_t pid)
{
    (void)pid;
    return 0;
}
#endif

#endif
