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

#include "loop/group.h"

/* Why the library ended a command. */
enum { SHX_END_NONE = 0, SHX_END_TIMEOUT = 1, SHX_END_CANCEL = 2, SHX_END_KILL = 3, SHX_END_IDLE = 4 };

/*
 * Where the command's processes are. What holds the group id decides what
 * may be signalled: the shell's unreaped zombie (RUNNING, EXITED, PINNED),
 * members anchored through /proc (ANCHORED), or nothing (REAPED: the id may
 * be another program's by now, so nothing is sent to it).
 */
typedef enum shx_proc_phase {
    SHX_PROC_IDLE = 0,        /* not started */
    SHX_PROC_RUNNING,         /* the shell runs */
    SHX_PROC_EXITED,          /* the shell exited, its status known, its zombie kept */
    SHX_PROC_PINNED,          /* the shell exited, members remain and are followed;
                                 its zombie, kept, holds the group id (no /proc) */
    SHX_PROC_ANCHORED,        /* the shell exited and is reaped, members remain and
                                 are followed; anchored members hold the id (group) */
    SHX_PROC_REAPED           /* over, or handed on: the id is no longer ours */
} shx_proc_phase;

/* How far the ending has gone: TERM -> grace -> KILL. */
typedef enum shx_proc_sent { SHX_SENT_NONE = 0, SHX_SENT_TERM, SHX_SENT_KILL } shx_proc_sent;

/*
 * What the process object tells an observer (the watchdog): a group led
 * by the shell was started (its leader unreaped: its start time can be
 * read now), its group's remaining members were anchored (p->group), or
 * the command is over (before the leader is reaped), unless the group was
 * handed on to another process object.
 */
enum { SHX_PROC_EV_GROUP = 1, SHX_PROC_EV_ANCHORS = 2, SHX_PROC_EV_OVER = 3 };
struct shx_proc;
typedef struct shx_proc_observer {
    void (*fn)(void *ctx, int event, const struct shx_proc *p); /* NULL: nobody */
    void *ctx;
} shx_proc_observer;

/* What a command cost, read as it ends (shx_proc_finish). */
enum { SHX_COST_NONE = 0, SHX_COST_CGROUP = 1, SHX_COST_RUSAGE = 2 };
typedef struct shx_proc_cost {
    int source;               /* SHX_COST_*: the cgroup's whole tree, or the shell's wait */
    uint64_t user_usec, system_usec;
    uint64_t peak_bytes;      /* 0: unknown */
} shx_proc_cost;

typedef struct shx_proc {
    pid_t pid;                /* the shell's pid == the process group id */
    unsigned long long start; /* its start time where the spawn pinned it (/proc's clock
                                 ticks); 0: not known without /proc */
    /* the command's cgroup (contain_hook.h; malloc'd, the owner's to dispose of
     * after the finish), NULL: its process group alone. Its members are
     * the command's processes, whatever group or session they moved to:
     * they are signalled and killed through it, and while one lives the
     * command's processes are not over. */
    char *cgroup;
    int cgroup_emptied;       /* the shell reaped, the cgroup was seen empty */
    int cgroup_peak;          /* the cgroup counts its peak memory (memory.peak) */
    shx_proc_cost cost;       /* read by shx_proc_finish */
    const shx_proc_observer *observer; /* NULL: nobody (the owner's, shared) */
    int handed_on;            /* its group goes on in another process object */
    int pidfd;                /* -1 without pidfds */
    shx_proc_phase phase;     /* written only in proc.c */
    shx_proc_sent sent;       /* written only in proc.c */
    int status_lost;          /* the host reaped it (SIGCHLD ignored) */
    int exit_code;            /* -1 unless the shell exited normally */
    int term_signal;          /* 0 unless a signal ended the shell */
    int end_reason;           /* SHX_END_* */
    int no_timeout;           /* no deadline (a task without a timeout) */
    int64_t deadline_ns, kill_at_ns;
    /* looks for the shell's children that missed the SIGTERM (see
     * shx_proc_enforce): how many are left, when the next is due, and the
     * clock tick the SIGTERM went in (as /proc counts start times) */
    int term_looks;
    int may_exec;             /* the shell may have exec'd the command (a bare run) */
    int64_t term_look_ns;
    unsigned long long term_tick;
    int64_t next_check_ns;    /* no pidfd: when to look with waitid next */
    int64_t check_backoff_ns;
    shx_group group;
    shx_escapees escapees;    /* found while terminating: signalled with the group */
} shx_proc;

/* The shell's status is known (it may be unreaped). */
static inline int shx_proc_exited(const shx_proc *p)
{
    return p->phase >= SHX_PROC_EXITED;
}

/* The shell is reaped (or was never ours to reap): its pid is no proof. */
static inline int shx_proc_reaped(const shx_proc *p)
{
    return p->phase >= SHX_PROC_ANCHORED;
}

/* The shell exited and members left in its group are followed. */
static inline int shx_proc_following(const shx_proc *p)
{
    return p->phase == SHX_PROC_PINNED || p->phase == SHX_PROC_ANCHORED;
}

/* The command's processes are followed with nothing to wake the loop when
 * they end (a cgroup, or anchors without pidfds): looked at on a timer. */
static inline int shx_proc_unwatched(const shx_proc *p)
{
    return shx_proc_following(p) && (p->cgroup || shx_group_unwatched(&p->group));
}

/* The shell runs, or members it left are followed: the command's
 * processes may still change, and the loop watches them. */
static inline int shx_proc_live(const shx_proc *p)
{
    return !shx_proc_exited(p) || shx_proc_following(p);
}

/* The earlier of two times, -1 standing for none (the loop's deadlines
 * are taken the same way). */
static inline int64_t shx_proc_earlier(int64_t a, int64_t b)
{
    return a < 0 || (b >= 0 && b < a) ? b : a;
}

/*
 * When p next needs shx_proc_enforce() or a look (-1: nothing of its own
 * but the descriptors of shx_proc_pollfds): its timeout, the SIGKILL at
 * the grace's end or the next look for children that missed the SIGTERM
 * before it; a waitid look while the shell runs without a pidfd, or one
 * at members followed with nothing to wake the loop; and `now` when
 * signalling found every anchor gone, so that the loop settles at once to
 * look for other members or finish. A time already passed is returned as
 * it is: the caller wakes at once.
 */
static inline int64_t shx_proc_next_due(const shx_proc *p, int64_t now)
{
    if (!shx_proc_live(p))
        return -1;
    int64_t due = -1;
    if (p->sent == SHX_SENT_NONE && !p->no_timeout)
        due = p->deadline_ns;
    else if (p->sent == SHX_SENT_TERM)
        due = shx_proc_earlier(p->kill_at_ns, p->term_looks > 0 ? p->term_look_ns : -1);
    if ((!shx_proc_exited(p) && p->pidfd < 0) || shx_proc_unwatched(p))
        due = shx_proc_earlier(due, p->next_check_ns);
    if (p->phase == SHX_PROC_ANCHORED && p->group.n == 0 && !p->cgroup)
        due = shx_proc_earlier(due, now);
    return due;
}

/* The timed looks at a shell without a pidfd, or at members followed with
 * nothing to wake the loop: the first SHX_PROC_LOOK_FIRST_NS after the
 * start, each wait after that twice the last, at most SHX_PROC_LOOK_MAX_NS. */
#define SHX_PROC_LOOK_FIRST_NS ((int64_t)1000000)
#define SHX_PROC_LOOK_MAX_NS ((int64_t)50000000)

/* The timed looks start: the first SHX_PROC_LOOK_FIRST_NS after `from`. */
static inline void shx_proc_looks_from(shx_proc *p, int64_t from)
{
    p->check_backoff_ns = SHX_PROC_LOOK_FIRST_NS;
    p->next_check_ns = from + p->check_backoff_ns;
}

/* 1 when a timed look is due at `now`; the next one is then set. */
static inline int shx_proc_look_due(shx_proc *p, int64_t now)
{
    if (now < p->next_check_ns)
        return 0;
    p->check_backoff_ns = p->check_backoff_ns * 2 > SHX_PROC_LOOK_MAX_NS ? SHX_PROC_LOOK_MAX_NS
                                                                         : p->check_backoff_ns * 2;
    p->next_check_ns = now + p->check_backoff_ns;
    return 1;
}

/* At most this many descriptors wake the loop for one process object. */
#define SHX_PROC_POLLFDS (1 + SHX_GROUP_ANCHORS)

/*
 * The descriptors whose readiness says p changed, into fd, each with its
 * anchor's index in anchor (-1: the shell's pidfd, while it runs): the
 * shell's pidfd until its exit is known, then the anchors' pidfds while
 * members are followed. Returns how many (at most SHX_PROC_POLLFDS).
 */
static inline int shx_proc_pollfds(const shx_proc *p, int fd[SHX_PROC_POLLFDS],
                                   int anchor[SHX_PROC_POLLFDS])
{
    int n = 0;
    if (p->pidfd >= 0 && !shx_proc_exited(p)) {
        fd[n] = p->pidfd;
        anchor[n++] = -1;
    }
    if (shx_proc_following(p))
        for (int i = 0; i < p->group.n && n < SHX_PROC_POLLFDS; i++)
            if (p->group.pidfd[i] >= 0) {
                fd[n] = p->group.pidfd[i];
                anchor[n++] = i;
            }
    return n;
}

/* No process yet: every descriptor -1, exit code -1; events to observer. */
void shx_proc_init(shx_proc *p, const shx_proc_observer *observer);
/* Tell the observer again what it would have been told of p so far (a
 * watchdog started while p runs). */
void shx_proc_replay(const shx_proc *p);
/* The shell was spawned: pid leads the group (pidfd: -1 without; start:
 * its start time where the spawn knows it, else 0). */
void shx_proc_started(shx_proc *p, pid_t pid, int pidfd, unsigned long long start);
/* Follow the group of `from`, whose shell exited (leftovers adopted from
 * another run): ANCHORED on the members /proc shows, with no status and no
 * deadline; `from` has handed it on. */
void shx_proc_adopt_group(shx_proc *p, shx_proc *from, int use_pidfd);
/* The shell exited (unreaped) and members remain: follow the group with
 * its zombie kept to pin the id (PINNED: where /proc cannot list members). */
static inline void shx_proc_pin(shx_proc *p)
{
    p->phase = SHX_PROC_PINNED;
}
/* The shell is reaped: anchor the members /proc shows (ANCHORED, 1) or,
 * with none, stay REAPED (0). */
int shx_proc_anchor(shx_proc *p, int use_pidfd);
/* The shell's zombie, and with it the group id, passes from `from` (which
 * no longer holds it: REAPED, handed on) to `to` (PINNED). */
void shx_proc_hand_over(shx_proc *from, shx_proc *to);
/* 1 when kill() finds the group: a member lives, and while it does the id
 * cannot be reused. */
int shx_proc_group_alive(shx_proc *p);
/* The command's processes into out (room for cap): its cgroup's members
 * (the first cap of more), else, while the shell runs, the shell and its
 * descendants by the kernel's children lists. How many; 0 when they cannot
 * be listed, or when only leftovers outside a cgroup are left. */
size_t shx_proc_members(const shx_proc *p, pid_t *out, size_t cap);
/* SIGHUP to the group again after a terminal's hangup, while the shell's
 * zombie holds the id (else nothing). */
void shx_proc_hangup(shx_proc *p);
/* After a terminal's hangup: SIGHUP again to each member still in the
 * command's group with SIGHUP at its default action (it missed it; see
 * shx_group_signal_missed): the anchors, or with a cgroup its members. */
void shx_proc_hangup_missed(shx_proc *p);
/* SIGKILL to what is left of the group, right after shx_proc_group_alive()
 * saw members (they pin the id they were seen in); with find_escapees,
 * what left the group from inside it first. */
void shx_proc_kill_rest(shx_proc *p, int find_escapees, int use_pidfd);
/* Reap the shell, then SIGKILL what its group still holds (as
 * shx_proc_kill_rest): 1 when there was something. */
int shx_proc_reap_killing_rest(shx_proc *p);
/* A signal the host sends (shexec_run_send_signal): to the group while its
 * id provably is the command's, with a cgroup to every member; the
 * ending's machinery (deadlines, what was sent) is left as it is. 1 when
 * it went to processes of the command, 0 when none is left to get it. */
int shx_proc_signal(shx_proc *p, int sig, int use_pidfd);
/*
 * Begin terminating: SIGTERM (and SIGCONT) to the group and its escapees
 * now, SIGKILL after grace_ms (at once for 0). Terminating again only
 * brings a later SIGKILL forward to now + grace_ms.
 */
void shx_proc_terminate(shx_proc *p, int reason, int64_t now, uint32_t grace_ms, int use_pidfd);
/*
 * The deadline step: SIGTERM when the timeout passed, SIGKILL when the
 * grace passed, and in the grace the looks for children that missed the
 * SIGTERM. bash with an EXIT trap (the wrapper's) catches SIGTERM and
 * blocks it while it forks; a child forked as the SIGTERM comes starts
 * without it, or takes it in the shell's handler before it resets its
 * signals and execs, and so runs on until SIGKILL while the shell waits
 * for it. Plain `bash -c` dies at once and its child gets the signal. So a
 * child of the living shell, still in its group, born within the ticks
 * around the SIGTERM and with SIGTERM at its default action, gets SIGTERM
 * (SHX_TERM_LOOKS looks, the first SHX_TERM_LOOK_FIRST_NS after it, each
 * four times later). A process that took the SIGTERM with its default
 * action would be gone; one started earlier, whose own handler took it
 * and set it back to the default (node's `process.once`), is never sent
 * another. Signals nothing before its time.
 */
void shx_proc_enforce(shx_proc *p, int64_t now, uint32_t grace_ms, int use_pidfd);
/* Learn whether the shell exited (its zombie is left in place). */
void shx_proc_check(shx_proc *p);
/* Reap the shell (it has exited). */
void shx_proc_reap(shx_proc *p);
/* The command is over: whatever is still in its group, and the escapees
 * held, get SIGKILL; the shell is reaped, anchors and pidfd released. */
void shx_proc_finish(shx_proc *p, int use_pidfd);

#endif
