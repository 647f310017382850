/*
 * proc.c - the process object (see proc.h): signalling a command's group
 * only while its id provably belongs to the command, the TERM -> grace ->
 * KILL state machine and its deadlines, learning the shell's status, and
 * reaping it last.
 *
 * While the shell (the group leader) is unreaped, its zombie keeps the
 * group id from being reused; after that, only while an anchored member
 * still lives in the group (group.c). Processes that left the group
 * (setsid, `set -m`) are found through their parents, which must still be
 * in the group: so they are looked for before the group is signalled.
 */
#include "loop/proc.h"

#include "shx_config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "contain/contain_hook.h"
#include "loop/walk.h"
#include "shx/platform.h"
#include "shx/procfs.h"

/* With a cgroup the command's processes are its members (see proc.h):
 * SIGKILL goes to all of them at once (cgroup.kill); another signal goes
 * to the group while the shell's zombie holds its id (one atomic kill,
 * forks included), then to each member outside that group, so that none
 * gets it twice. No /proc walk is needed for escapees. */

/* How long the freezer's kill (kernels without cgroup.kill) waits per round. */
#define FROZEN_KILL_WAIT_MS 20

/* Once the shell is reaped and the cgroup found empty it stays so (only a
 * member can bring a process in): the finish need not look again. */
static int cgroup_populated(shx_proc *p)
{
    if (p->cgroup_emptied)
        return 0;
    int populated = shx_cgroup_populated(p->cgroup) == 1;
    p->cgroup_emptied = !populated && shx_proc_reaped(p);
    return populated;
}

static void signal_cgroup(shx_proc *p, int sig)
{
    pid_t group = 0;
    if (!shx_proc_reaped(p) && kill(-p->pid, sig) == 0)
        group = p->pid;
    if (sig == SIGKILL)
        (void)shx_cgroup_kill(p->cgroup, FROZEN_KILL_WAIT_MS);
    else
        (void)shx_cgroup_signal(p->cgroup, sig, group);
}

/* What the command cost: the cgroup's whole tree, read as its processes
 * end (the killed may be finishing their exit: negligible). */
static void read_cgroup_cost(shx_proc *p)
{
    shx_cgroup_cpu cpu;
    if (!p->cgroup || shx_cgroup_read_cpu(p->cgroup, &cpu) != 0)
        return;
    p->cost.source = SHX_COST_CGROUP;
    p->cost.user_usec = cpu.user_usec;
    p->cost.system_usec = cpu.system_usec;
    unsigned long long peak; /* no memory controller: the wait's peak stays */
    if (p->cgroup_peak && shx_cgroup_read_peak(p->cgroup, &peak) == 0 && peak)
        p->cost.peak_bytes = peak;
}

void shx_proc_init(shx_proc *p, const shx_proc_observer *observer)
{
    memset(p, 0, sizeof *p);
    p->pid = -1;
    p->pidfd = -1;
    p->exit_code = -1;
    p->observer = observer;
}

static void tell(const shx_proc *p, int event)
{
    if (p->observer && p->observer->fn)
        p->observer->fn(p->observer->ctx, event, p);
}

void shx_proc_replay(const shx_proc *p)
{
    if (p->phase == SHX_PROC_IDLE)
        return;
    if (!shx_proc_reaped(p))
        tell(p, SHX_PROC_EV_GROUP);
    if (shx_proc_following(p))
        tell(p, SHX_PROC_EV_ANCHORS);
}

void shx_proc_started(shx_proc *p, pid_t pid, int pidfd, unsigned long long start)
{
    p->pid = pid;
    p->start = start;
    p->pidfd = pidfd;
    p->phase = SHX_PROC_RUNNING;
    tell(p, SHX_PROC_EV_GROUP);
}

void shx_proc_adopt_group(shx_proc *p, shx_proc *from, int use_pidfd)
{
    p->pid = from->pid;
    p->phase = SHX_PROC_ANCHORED;
    p->no_timeout = 1;
    p->exit_code = -1; /* the leftovers are not our children: no status */
    from->handed_on = 1;
    /* the cgroup goes with them; what it counted so far was the command's */
    read_cgroup_cost(from);
    p->cgroup = from->cgroup;
    p->cgroup_peak = from->cgroup_peak;
    from->cgroup = NULL;
    if (!p->cgroup)
        shx_group_anchor(&p->group, p->pid, use_pidfd);
    tell(p, SHX_PROC_EV_ANCHORS);
}

int shx_proc_anchor(shx_proc *p, int use_pidfd)
{
    if (p->cgroup ? !cgroup_populated(p) : shx_group_anchor(&p->group, p->pid, use_pidfd) == 0)
        return 0;
    if (p->cgroup && p->phase != SHX_PROC_ANCHORED) {
        /* no descriptor tells when the members are gone: looked at on a
         * timer, soon at first (the loop doubles the wait) */
        p->check_backoff_ns = 500000;
        p->next_check_ns = 0;
    }
    p->phase = SHX_PROC_ANCHORED;
    tell(p, SHX_PROC_EV_ANCHORS);
    return 1;
}

void shx_proc_hand_over(shx_proc *from, shx_proc *to)
{
    to->phase = SHX_PROC_PINNED;
    from->phase = SHX_PROC_REAPED;
    from->handed_on = 1;
    read_cgroup_cost(from);
    to->cgroup = from->cgroup;
    to->cgroup_peak = from->cgroup_peak;
    from->cgroup = NULL;
}

int shx_proc_group_alive(shx_proc *p)
{
    return p->cgroup ? cgroup_populated(p) : kill(-p->pid, 0) == 0;
}

void shx_proc_hangup(shx_proc *p)
{
    if (!shx_proc_reaped(p))
        kill(-p->pid, SIGHUP);
}

/* Members listed at most, per look for those that missed a signal: a bound on the stack. */
#define MEMBERS_LOOK_MAX 256

size_t shx_proc_members(const shx_proc *p, pid_t *out, size_t cap)
{
    if (p->cgroup) {
        long n = shx_cgroup_pids(p->cgroup, out, cap);
        if (n >= 0 || errno == ENOBUFS)
            return n >= 0 ? (size_t)n : cap;
    }
    if (shx_proc_exited(p))
        return 0; /* only leftovers, outside a cgroup: not listed */
    return shx_walk_descendants(p->pid, out, cap);
}

void shx_proc_hangup_missed(shx_proc *p)
{
    if (!p->cgroup) {
        shx_group_signal_missed(&p->group, SIGHUP);
        return;
    }
    /* the members still in the terminal's group, each just listed alive */
    pid_t pids[MEMBERS_LOOK_MAX];
    for (size_t i = 0, n = shx_proc_members(p, pids, MEMBERS_LOOK_MAX); i < n; i++)
        if (shx_procfs_signal_default(pids[i], p->pid, SIGHUP))
            (void)kill(pids[i], SIGHUP);
}

void shx_proc_kill_rest(shx_proc *p, int find_escapees, int use_pidfd)
{
    if (p->cgroup) {
        signal_cgroup(p, SIGKILL);
        return;
    }
    if (find_escapees) {
        shx_escapees_find(&p->escapees, p->pid, use_pidfd);
        shx_escapees_signal(&p->escapees, SIGKILL);
    }
    kill(-p->pid, SIGKILL);
}

int shx_proc_reap_killing_rest(shx_proc *p)
{
    shx_proc_reap(p);
    if (!shx_proc_group_alive(p))
        return 0;
    if (p->cgroup)
        signal_cgroup(p, SIGKILL);
    else
        kill(-p->pid, SIGKILL);
    return 1;
}

static void signal_group(shx_proc *p, int sig, int use_pidfd)
{
    if (!shx_proc_reaped(p))
        kill(-p->pid, sig);
    else if (shx_proc_following(p))
        shx_group_signal(&p->group, sig, use_pidfd);
}

/* 1 while the group id provably belongs to the command (see the top). */
static int group_is_ours(shx_proc *p, int use_pidfd)
{
    if (!shx_proc_reaped(p))
        return 1;
    return shx_proc_following(p) && (shx_group_prune(&p->group) > 0 ||
                              shx_group_anchor(&p->group, p->group.pgid, use_pidfd) > 0);
}

/* A dead shell's children pass to init and can no longer be told apart
 * from anyone else's: look while the group is still the command's. */
static void find_escapees(shx_proc *p, int use_pidfd)
{
    if (!p->cgroup && group_is_ours(p, use_pidfd))
        shx_escapees_find(&p->escapees, p->pid, use_pidfd);
}

static void signal_all(shx_proc *p, int sig, int use_pidfd)
{
    if (p->cgroup) {
        signal_cgroup(p, sig);
        return;
    }
    signal_group(p, sig, use_pidfd);
    shx_escapees_signal(&p->escapees, sig);
}

int shx_proc_signal(shx_proc *p, int sig, int use_pidfd)
{
    /* pid 1 and below: kill(-1) and kill(0) reach far more than the command */
    if (p->pid <= 1 || (p->cgroup ? !cgroup_populated(p) : !group_is_ours(p, use_pidfd)))
        return 0;
    if (p->cgroup)
        signal_cgroup(p, sig);
    else
        signal_group(p, sig, use_pidfd);
    return 1;
}

/* The looks for children that missed the SIGTERM (see proc.h): how many,
 * the first one's delay (past the exec of a child forked as it came), and
 * the ticks before the SIGTERM a child born that early may have been
 * forked in (a loaded machine stretches a fork; a program that sets a
 * handler, takes the signal and sets it back takes longer to start). */
#define TERM_LOOKS 4
#define TERM_LOOK_FIRST_NS ((int64_t)20000000)
#define TERM_BORN_BEFORE_MS 30

/* 1 when a process born at tick `start` may have been forked as the
 * SIGTERM of tick `term` came: within the ticks before it, or in the next
 * tick (the shell took the signal just before the fork). */
static int born_near_term(unsigned long long start, unsigned long long term)
{
    long hz = sysconf(_SC_CLK_TCK);
    unsigned long long before = hz > 0 ? (unsigned long long)hz * TERM_BORN_BEFORE_MS / 1000 + 1 : 3;
    return start + before >= term && start <= term + 1;
}

/* SIGTERM to pid if it missed it (see proc.h): born as it came, with
 * SIGTERM at its default action, in the command's group, and forked by the
 * shell or left by a parent that is no member (the shell died of the
 * SIGTERM): never a child a member's handler started for its cleanup. */
static void term_if_missed(shx_proc *p, pid_t pid, int use_pidfd)
{
    /* a pidfd first: what is checked next is then the process signalled */
    int fd = use_pidfd ? shx_pidfd_open(pid) : -1;
    if (use_pidfd && fd < 0 && errno == ESRCH)
        return;
    shx_pstat st, parent;
    if (shx_procfs_stat(pid, &st) == 0 && st.pgrp == p->pid && born_near_term(st.start, p->term_tick) &&
        shx_pstat_signal_default(&st, SIGTERM) &&
        (st.ppid == p->pid || shx_procfs_stat(st.ppid, &parent) != 0 || parent.pgrp != p->pid))
        (void)(fd >= 0 ? shx_pidfd_send_signal(fd, SIGTERM) : kill(pid, SIGTERM));
    if (fd >= 0)
        close(fd);
}

/* One look for processes that missed the SIGTERM: the living shell's
 * children (not where it may be the command, exec'd: what lives on after a
 * SIGTERM handles it, and started them); once it is gone, the members. */
static void signal_missed_term(shx_proc *p, int use_pidfd)
{
    if (p->phase == SHX_PROC_RUNNING) {
        shx_pstat shell;
        if (p->may_exec || !shx_procfs_children_available() || shx_procfs_stat(p->pid, &shell) != 0)
            return;
        pid_t *kids = NULL;
        size_t n = 0, cap = 0;
        (void)shx_procfs_children(p->pid, shell.threads, &kids, &n, &cap);
        for (size_t i = 0; i < n; i++)
            term_if_missed(p, kids[i], use_pidfd);
        free(kids);
    } else if (p->phase == SHX_PROC_ANCHORED && p->cgroup) {
        pid_t pids[MEMBERS_LOOK_MAX];
        for (size_t i = 0, n = shx_proc_members(p, pids, MEMBERS_LOOK_MAX); i < n; i++)
            term_if_missed(p, pids[i], use_pidfd);
    } else if (p->phase == SHX_PROC_ANCHORED) {
        for (int i = 0; i < p->group.n; i++)
            term_if_missed(p, p->group.pid[i], use_pidfd);
    }
}

void shx_proc_terminate(shx_proc *p, int reason, int64_t now, uint32_t grace_ms, int use_pidfd)
{
    if (shx_proc_exited(p) && !shx_proc_following(p))
        return;
    int64_t kill_at = now + (int64_t)grace_ms * 1000000;
    if (p->sent != SHX_SENT_NONE) {
        /* terminated already: a shorter grace set since (a host shutting
         * down) brings the SIGKILL forward, never back */
        if (p->sent != SHX_SENT_KILL && kill_at < p->kill_at_ns)
            p->kill_at_ns = kill_at;
        return;
    }
    p->end_reason = reason;
    p->sent = SHX_SENT_TERM;
    find_escapees(p, use_pidfd);
    signal_all(p, SIGTERM, use_pidfd);
    /* a stopped process would not act on SIGTERM until continued */
    signal_all(p, SIGCONT, use_pidfd);
    if (grace_ms == 0) {
        signal_all(p, SIGKILL, use_pidfd);
        p->sent = SHX_SENT_KILL;
        return;
    }
    p->kill_at_ns = kill_at;
    p->term_tick = shx_procfs_ticks_now();
    if (p->term_tick != 0) {
        p->term_looks = TERM_LOOKS;
        p->term_look_ns = now + TERM_LOOK_FIRST_NS;
    }
}

void shx_proc_enforce(shx_proc *p, int64_t now, uint32_t grace_ms, int use_pidfd)
{
    if (shx_proc_exited(p) && !shx_proc_following(p))
        return;
    if (!p->no_timeout && p->sent == SHX_SENT_NONE && now >= p->deadline_ns) {
        shx_proc_terminate(p, SHX_END_TIMEOUT, now, grace_ms, use_pidfd);
    } else if (p->sent == SHX_SENT_TERM && now >= p->kill_at_ns) {
        find_escapees(p, use_pidfd); /* also those started during the grace */
        signal_all(p, SIGKILL, use_pidfd);
        p->sent = SHX_SENT_KILL;
    } else if (p->sent == SHX_SENT_TERM && p->term_looks > 0 && now >= p->term_look_ns) {
        signal_missed_term(p, use_pidfd);
        p->term_looks--;
        /* the k-th look waits 4^k times the first */
        p->term_look_ns = now + (TERM_LOOK_FIRST_NS << (2 * (TERM_LOOKS - p->term_looks)));
    }
}

void shx_proc_check(shx_proc *p)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    /* WNOWAIT: learn the status but leave the zombie, which holds the group id */
    int rc = waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT);
    if (rc == 0 && si.si_pid == p->pid) {
        p->phase = SHX_PROC_EXITED;
        if (si.si_code == CLD_EXITED)
            p->exit_code = si.si_status;
        else
            p->term_signal = si.si_status;
    } else if (rc < 0 && errno == ECHILD) {
        /* the host reaped it (SIGCHLD ignored): the status is gone, and so
         * is our claim on the group id */
        p->phase = SHX_PROC_REAPED;
        p->status_lost = 1;
    }
}

void shx_proc_reap(shx_proc *p)
{
    if (shx_proc_reaped(p))
        return;
#if SHX_HAVE_PROCFS
    /* wait4's usage: the shell's and its waited-for children's CPU time */
    struct rusage ru;
    int status;
    pid_t got;
    while ((got = wait4(p->pid, &status, 0, &ru)) < 0 && errno == EINTR)
        ;
    if (got == p->pid && p->cost.source != SHX_COST_CGROUP) {
        p->cost.source = SHX_COST_RUSAGE;
        p->cost.user_usec = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec;
        p->cost.system_usec = (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
        p->cost.peak_bytes = (uint64_t)ru.ru_maxrss * 1024u; /* the largest one process, in KiB */
    }
#else
    siginfo_t si;
    while (waitid(P_PID, (id_t)p->pid, &si, WEXITED) < 0 && errno == EINTR)
        ;
#endif
    p->phase = SHX_PROC_REAPED;
}

void shx_proc_finish(shx_proc *p, int use_pidfd)
{
    if (!p->handed_on)
        tell(p, SHX_PROC_EV_OVER); /* while the leader, unreaped, holds the id */
    if (p->sent != SHX_SENT_NONE)
        find_escapees(p, use_pidfd); /* also those started during the grace period */
    if (p->cgroup) {
        if (cgroup_populated(p))
            signal_cgroup(p, SIGKILL); /* anything still in the cgroup goes now */
    } else if (!shx_proc_reaped(p)) {
        signal_group(p, SIGKILL, use_pidfd); /* anything still in the group goes now */
    } else if (p->status_lost && p->end_reason != SHX_END_NONE &&
               shx_group_anchor(&p->group, p->pid, use_pidfd) > 0) {
        /* the host reaped the shell, so its zombie no longer holds the group
         * id; members found and anchored now do, and a terminated command's
         * members (one that ignores SIGTERM) must not outlive it */
        shx_escapees_find(&p->escapees, p->pid, use_pidfd);
        kill(-p->pid, SIGKILL);
    }
    /* escapees are held only for a terminated or killed command */
    shx_escapees_signal(&p->escapees, SIGKILL);
    shx_escapees_release(&p->escapees);
    shx_proc_reap(p);
    read_cgroup_cost(p);
    shx_group_release(&p->group);
    if (p->pidfd >= 0) {
        close(p->pidfd);
        p->pidfd = -1;
    }
}
