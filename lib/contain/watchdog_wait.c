/*
 * watchdog_wait.c - the watchdog while its host lives (see watchdog_wait.h):
 * the table of the session's groups kept from the host's messages, the
 * channel drained every few milliseconds rather than read as each message
 * comes, and the host's end awaited; then watchdog_proc.c ends the
 * commands. Async-signal-safe calls only, as in watchdog_proc.c.
 */
#include "contain/watchdog_wait.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "shx/platform.h"
#include "contain/watchdog_proc.h"

/* ---- the table of groups --------------------------------------------------- */

static shx_wd_group *find_group(shx_wd_arena *a, pid_t pgid, int create)
{
    shx_wd_group *free_slot = NULL;
    for (int g = 0; g < a->ngroups; g++) {
        if (a->groups[g].pgid == pgid)
            return &a->groups[g];
        if (!a->groups[g].pgid && !free_slot)
            free_slot = &a->groups[g];
    }
    if (!create)
        return NULL;
    if (!free_slot && a->ngroups < SHX_WD_GROUPS)
        free_slot = &a->groups[a->ngroups++];
    if (free_slot) {
        memset(free_slot, 0, sizeof *free_slot);
        free_slot->pgid = pgid;
    }
    return free_slot;
}

static void handle(shx_wd_arena *a, const shx_wd_msg *m)
{
    shx_wd_group *g;
    switch (m->type) {
    case SHX_WD_GROUP:
        if (m->pgid > 0 && (g = find_group(a, m->pgid, 1))) {
            memset(g, 0, sizeof *g); /* a new command: the id was freed since */
            g->pgid = m->pgid;
            g->start = m->start;
        }
        break;
    case SHX_WD_ANCHOR:
        if (m->pgid > 0 && m->start && (g = find_group(a, m->pgid, 1))) {
            for (int i = 0; i < g->n; i++)
                if (g->a[i].pid == m->pid && g->a[i].start == m->start)
                    return;
            if (g->n == SHX_WD_ANCHORS) /* the oldest goes */
                memmove(g->a, g->a + 1, (SHX_WD_ANCHORS - 1) * sizeof g->a[0]);
            else
                g->n++;
            g->a[g->n - 1] = (shx_wd_anchor){m->pid, m->start};
        }
        break;
    case SHX_WD_FORGET:
        if ((g = find_group(a, m->pgid, 0)))
            g->pgid = 0;
        while (a->ngroups > 0 && !a->groups[a->ngroups - 1].pgid)
            a->ngroups--;
        break;
    case SHX_WD_GRACE:
        a->grace_ms = m->grace_ms;
        break;
    case SHX_WD_QUIT:
        _exit(0);
    default:
        break;
    }
}

/*
 * The channel ended but the host is still our parent: it is dying (the
 * kernel closes its descriptors before it hands its children to init) or
 * it closed the descriptor itself (closefrom) and lives on. A dying host is
 * gone within milliseconds: looked for every 2 ms for 100 ms, so the groups
 * are still signalled at once. One still there closed the channel: its end
 * is what ends the commands (a pidfd of our parent is its own; without
 * pidfds, a look every 100 ms, only in this case).
 */
static void await_host(shx_wd_arena *a)
{
    for (int i = 0; i < 50 && getppid() == a->host; i++)
        poll(NULL, 0, 2);
    int fd = getppid() == a->host ? shx_pidfd_open(a->host) : -1;
    if (fd >= 0 && getppid() == a->host) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        while (poll(&p, 1, -1) < 0 && errno == EINTR)
            ;
        return;
    }
    while (getppid() == a->host)
        poll(NULL, 0, 100);
}

/*
 * How long a message may wait in the channel while commands come and go.
 * Woken for each message, the watchdog took the processor from the host or
 * its command once per command; it drains the channel this often instead,
 * and waits for the next message only after a period that brought none.
 * The host's death is not a message: its end of the channel hangs up, and
 * the hang-up wakes the watchdog at once, queued messages or not (poll
 * reports it with no event asked for). At 1,000 commands a second a period
 * queues about 20 messages: the channel holds hundreds (watchdog.c).
 */
#define DRAIN_MS 20

/* Every message queued, handled; 1 when there was one. At the channel's
 * end (the host is gone) it does not return. */
static int drain(shx_wd_arena *a)
{
    int got = 0;
    for (;;) {
        ssize_t n = read(a->fd, a->inbuf + a->inlen, sizeof a->inbuf - a->inlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return got;
        if (n <= 0) {
            await_host(a);
            shx_wd_terminate_all(a);
        }
        got = 1;
        a->inlen += (size_t)n;
        size_t off = 0;
        for (; a->inlen - off >= sizeof(shx_wd_msg); off += sizeof(shx_wd_msg)) {
            shx_wd_msg m;
            memcpy(&m, a->inbuf + off, sizeof m);
            handle(a, &m);
        }
        memmove(a->inbuf, a->inbuf + off, a->inlen - off);
        a->inlen -= off;
    }
}

void shx_wd_main(shx_wd_arena *a)
{
    /* our end only (a socket pair's or a pipe's ends are apart): read until empty */
    int flags = fcntl(a->fd, F_GETFL);
    if (flags < 0 || fcntl(a->fd, F_SETFL, flags | O_NONBLOCK) < 0)
        _exit(1);
    int busy = 0;
    for (;;) {
        struct pollfd p = {.fd = a->fd, .events = busy ? 0 : POLLIN};
        (void)poll(&p, 1, busy ? DRAIN_MS : -1); /* EINTR: drained early */
        busy = drain(a);
    }
}
