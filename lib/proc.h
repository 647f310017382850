/*
 * proc.h - the process object: one command's shell and its process group,
 * from spawn to reap. It knows whether the shell has exited (and how),
 * whether its zombie still holds the group id, what is left in the group
 * (anchors, escapees), and the SIGTERM/SIGKILL deadlines; it signals only
 * while the group id provably belongs to the command. It knows nothing of
 * runs, tasks, output or policy. This is also the platform seam: pidfds and
 * /proc where Linux has them, waitid polling and the zombie pin where not.
 */
#ifndef SHX_PROC_H
#define SHX_PROC_H

#include <stdint.h>
#include <sys/types.h>

#include "group.h"

/* Why the library ended a command. */
enum { SHX_END_NONE = 0, SHX_END_TIMEOUT = 1, SHX_END_CANCEL = 2, SHX_END_KILL = 3 };

typedef struct shx_proc {
    pid_t pid;                /* the shell's pid == the process group id */
    int pidfd;                /* -1 without pidfds */
    int exited;               /* the shell's status is known (it may be unreaped) */
    int exit_awaited;         /* the loop yielded once for its exit (loop.c) */
    int reaped;               /* the pid may be reused: never signal the group by it */
    int status_lost;          /* the host reaped it (SIGCHLD ignored) */
    int exit_code;            /* -1 unless the shell exited normally */
    int term_signal;          /* 0 unless a signal ended the shell */
    int end_reason;           /* SHX_END_* */
    int term_sent, kill_sent;
    int no_timeout;           /* no deadline (a task without a timeout) */
    int64_t deadline_ns, kill_at_ns;
    int64_t next_check_ns;    /* no pidfd: when to look with waitid next */
    int64_t check_backoff_ns;
    int group_phase;          /* the shell exited, members remain: see group */
    int pinned;               /* in group_phase without /proc: the shell's unreaped
                                 zombie holds the group id */
    shx_group group;
    shx_escapees escapees;    /* found while terminating: signalled with the group */
} shx_proc;

/* No process yet: every descriptor -1, exit code -1. */
void shx_proc_init(shx_proc *p);
/*
 * Begin terminating: SIGTERM (and SIGCONT) to the group and its escapees
 * now, SIGKILL after grace_ms (at once for 0). Terminating again only
 * brings a later SIGKILL forward to now + grace_ms.
 */
void shx_proc_terminate(shx_proc *p, int reason, int64_t now, uint32_t grace_ms, int use_pidfd);
/* The deadline step: SIGTERM when the timeout passed, SIGKILL when the
 * grace passed. Signals nothing before its time. */
void shx_proc_enforce(shx_proc *p, int64_t now, uint32_t grace_ms, int use_pidfd);
/* Learn whether the shell exited (its zombie is left in place). */
void shx_proc_check(shx_proc *p);
/* Reap the shell (it has exited). */
void shx_proc_reap(shx_proc *p);
/* The command is over: whatever is still in its group, and the escapees
 * held, get SIGKILL; the shell is reaped, anchors and pidfd released. */
void shx_proc_finish(shx_proc *p, int use_pidfd);

#endif
