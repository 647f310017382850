/*
 * watchdog_cgroup.c - the watchdog's way through a session's cgroups (see
 * watchdog_cgroup.h). The walks are cgtree.c's, which allocate nothing and
 * take no lock.
 */
#include "contain/watchdog_cgroup.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "shx/base.h" /* shx_now_ns: clock_gettime alone, async-signal-safe */
#include "contain/cgtree.h"

/* How long the kill without cgroup.kill waits for a freeze to settle and
 * for the killed to leave, each round. */
#define KILL_WAIT_MS 20

/* How long the killed get to leave the cgroups before their removal. */
#define LEAVE_WAIT_MS 1000

void shx_wd_cgroup_terminate(const char *dir, uint32_t grace_ms, uint32_t pause_ms, char *buf,
                             size_t cap)
{
    if (shx_cgtree_populated(dir, buf, cap) == 1) {
        if (pause_ms)
            poll(NULL, 0, (int)pause_ms);
        (void)shx_cgtree_signal(dir, SIGTERM, 0, buf, cap);
        /* a stopped process acts on it when continued */
        (void)shx_cgtree_signal(dir, SIGCONT, 0, buf, cap);
        int64_t kill_at = shx_now_ns() / 1000000 + grace_ms;
        while (shx_now_ns() / 1000000 < kill_at) {
            poll(NULL, 0, 20);
            if (shx_cgtree_populated(dir, buf, cap) != 1)
                break; /* all gone */
        }
        if (shx_cgtree_populated(dir, buf, cap) == 1)
            (void)shx_cgtree_kill(dir, KILL_WAIT_MS, buf, cap);
    }
    (void)shx_cgtree_wait_empty(dir, LEAVE_WAIT_MS, buf, cap);
    (void)shx_cgtree_remove(dir, buf, cap);
    _exit(0);
}
