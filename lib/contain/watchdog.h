/*
 * watchdog.h - the helper process that ends a session's commands when the
 * host dies without freeing the session (shexec_session_set_watchdog()).
 *
 * The host side (watchdog.c) forks it and tells it, over a channel whose host
 * end is close-on-exec, which process groups the session's commands lead
 * and which members hold a group once its leader is gone; the host's death
 * closes that end, and the watchdog reads EOF. The process side
 * (watchdog_proc.c) then proves each group still the command's before it
 * signals it, finds the processes that left the groups through their live
 * parents, and terminates them all as a timeout would (TERM, the grace,
 * KILL); then it exits. A normal free tells it to exit without signalling.
 */
#ifndef SHX_WATCHDOG_H
#define SHX_WATCHDOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/proc.h"
#include "shexec.h"

/* WATCHDOG=0 builds the library without it (the Makefile sets this). */
#ifndef SHX_WITH_WATCHDOG
#define SHX_WITH_WATCHDOG 1
#endif

typedef struct shx_watchdog shx_watchdog;

/* Tells a watchdog the processes running as it starts (a restarted one
 * too): shx_proc_replay() of each, which reaches shx_watchdog_observe(). */
typedef void (*shx_watchdog_replay_fn)(void *ctx);

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
void shx_watchdog_observe(void *ctx, int event, const shx_proc *p);

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
static inline void shx_watchdog_observe(void *ctx, int event, const shx_proc *p)
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
