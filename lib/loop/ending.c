/*
 * ending.c - how a job ends, as the loop sees it: terminating it (the
 * process object, with the loop's grace), what its shell's exit leaves
 * behind (members still in its group are followed: anchored, or without
 * /proc held by the shell's zombie and its pipes; or, once their output
 * has been drained, handed off through the leftovers policy, or killed),
 * and finishing it (processes and streams drained, input closed, the
 * ending reported to the job's owner).
 */
#include <stddef.h>
#include <signal.h>

#include "loop/ending.h"
#include "loop/group.h"
#include "loop/job.h"
#include "loop/proc.h"
#include "stream/stream.h"

/* After the shell exits, what its pipes still hold is read up to this much. */
#define FINAL_DRAIN_MAX (8u << 20)

static int use_pidfd(const shx_job_policy *policy)
{
    return policy ? policy->use_pidfd : 0;
}

static uint32_t grace_ms(const shx_job_policy *policy)
{
    return policy ? policy->kill_grace_ms : 0;
}

/* What both pipes still hold, read up to FINAL_DRAIN_MAX each. */
static void drain_output(shx_job *j)
{
    shx_stream_drain(&j->out, FINAL_DRAIN_MAX);
    shx_stream_drain(&j->err, FINAL_DRAIN_MAX);
}

void shx_job_terminate(shx_job *j, const shx_job_policy *policy, int reason, int64_t now)
{
    shx_proc_terminate(&j->proc, reason, now, grace_ms(policy), use_pidfd(policy));
}

/* The job's processes and streams are done; it leaves the active list
 * after. What the ending means (the run's state, its record, the session
 * cwd) is the owner's: reported upward. */
void shx_job_finish(shx_job *j, const shx_job_policy *policy, int64_t now)
{
    shx_proc_finish(&j->proc, use_pidfd(policy));
    drain_output(j);
    shx_stream_finish(&j->out);
    shx_stream_finish(&j->err);
    shx_job_input_close(j);
    j->ended = 1;
    if (j->on_ended)
        j->on_ended(j->ctx, now);
}

/*
 * Processes the shell left may still print: `echo word &`, the reader of
 * `> >(tac)`, a server's first lines. `bash -c` read to the end of its
 * output has their lines, so the run reads on (the loop follows the group,
 * job.draining) until they are gone or stay quiet for the drain
 * (shx_job_drain_end). Also when they closed the output already: one that
 * wrote its last line as the shell exited is on its way out, a moment
 * before the group is seen empty, and is no leftover. Not for a task,
 * which follows its leftovers to their end anyway, nor after the shell was
 * ended.
 */
static int drain_wanted(const shx_job *j, const shx_job_policy *policy)
{
    return policy->drain_ms > 0 && !j->follows_leftovers && j->proc.end_reason == SHX_END_NONE;
}

static void drain_begin(shx_job *j, const shx_job_policy *policy, int64_t now)
{
    j->draining = 1;
    j->drain_from_ns = now;
    j->drain_quiet_ns = (int64_t)policy->drain_ms * 1000000;
    j->drain_end_ns = now + 10 * j->drain_quiet_ns;
    /* the shell is gone: its timeout is no longer the leftovers' (their
     * policy's, once the drain is over) */
    j->proc.no_timeout = 1;
}

/* Leftovers that closed the output are followed until the drain's quiet
 * too (see drain_wanted); where only the pipes can follow them (PINNED),
 * nothing is left to wait for. A quiet is judged on what the pipes hold
 * now: output that came after the loop's poll ends it. */
int shx_job_drain_over(shx_job *j, int64_t now)
{
    if (j->out.fd < 0 && j->err.fd < 0 && j->proc.phase == SHX_PROC_PINNED)
        return 1;
    return now >= shx_job_drain_due(j) && !shx_quiet_read_held(j);
}

int shx_job_drain_end(shx_job *j, shx_job_policy *policy, int64_t now, shx_job **born)
{
    j->draining = 0;
    if (j->proc.phase == SHX_PROC_PINNED && j->out.fd < 0 && j->err.fd < 0) {
        /* nothing can follow them now: as at the shell's exit without /proc */
        if (shx_proc_reap_killing_rest(&j->proc))
            j->leftovers_killed = 1;
        shx_job_finish(j, policy, now);
        return 1;
    }
    shx_job *adopted = policy->adopt_leftovers(policy->ctx, j);
    if (adopted) {
        if (j->proc.phase == SHX_PROC_PINNED) /* its zombie holds the group id */
            shx_proc_hand_over(&j->proc, &adopted->proc);
        adopted->next_active = *born;
        *born = adopted;
    } else {
        if (j->proc.phase != SHX_PROC_PINNED) /* else finish() kills the group */
            shx_proc_kill_rest(&j->proc, 1, policy->use_pidfd);
        j->leftovers_killed = 1;
    }
    shx_job_finish(j, policy, now);
    return 1;
}

/*
 * shell_exited() where /proc cannot list the group's members, so none can be
 * anchored: the shell's zombie is the only thing that can hold the group id,
 * so it is left unreaped while the group is followed. Members that still
 * hold the command's pipes are seen by them: the job (or the one adopting
 * them) stays in group_phase until both pipes are closed, and can be
 * signalled through the pinned id all the while. Members without the pipes
 * cannot be followed once the zombie goes: they are killed when it is
 * reaped (see finish()), since nothing could stop them later.
 */
static int shell_exited_unlisted(shx_job *j, shx_job_policy *policy, int64_t now, shx_job **born)
{
    if (j->out.fd < 0 && j->err.fd < 0) {
        /* nothing holds the pipes: anything left in the group goes now */
        if (shx_proc_reap_killing_rest(&j->proc) && !j->follows_leftovers)
            j->leftovers_killed = 1;
        shx_job_finish(j, policy, now);
        return 1;
    }
    if (j->follows_leftovers || drain_wanted(j, policy)) {
        if (!j->follows_leftovers)
            drain_begin(j, policy, now);
        shx_proc_pin(&j->proc);
        return 0;
    }
    shx_job *adopted = policy->adopt_leftovers(policy->ctx, j);
    if (adopted) {
        /* the zombie, and with it the group id, now belongs to the task */
        shx_proc_hand_over(&j->proc, &adopted->proc);
        adopted->next_active = *born;
        *born = adopted;
    } else {
        j->leftovers_killed = 1; /* finish() kills the group */
    }
    shx_job_finish(j, policy, now);
    return 1;
}

/*
 * The shell of a command being ended (timeout, cancel, kill) has exited
 * within the grace: the grace is every process's, not the shell's alone. A
 * program that handles SIGTERM (node, python under `npm test`) is still
 * cleaning up, its output still coming: the group is followed, as a task
 * follows its leftovers, until it is empty (1: the job is finished) or the
 * grace is over and SIGKILL ends it (shx_proc_enforce). Returns 0 while it
 * is followed.
 */
static int shell_exited_in_grace(shx_job *j, shx_job_policy *policy, int64_t now)
{
    drain_output(j);
    if (!shx_proc_reaped(&j->proc) && !policy->procfs_seen &&
        !(policy->procfs_seen = shx_group_can_list())) {
        /* without /proc the shell's zombie holds the group id, and the
         * group is followed through its pipes (loop.c: pinned) */
        if (j->out.fd < 0 && j->err.fd < 0)
            return 1;
        shx_proc_pin(&j->proc);
        return 0;
    }
    shx_proc_reap(&j->proc);
    (void)now;
    if (!shx_proc_group_alive(&j->proc) || !shx_proc_anchor(&j->proc, policy->use_pidfd))
        return 1;
    return 0;
}

/*
 * The shell has exited. Returns 1 when the job is finished, 0 when it stays
 * active to follow processes left in its group (a task's, or any command's
 * during the grace of its ending).
 */
int shx_job_shell_exited(shx_job *j, shx_job_policy *policy, int64_t now, shx_job **born)
{
    /* the pipes may hang up now: once what the shell left has closed them */
    shx_stream_let_go(&j->out);
    shx_stream_let_go(&j->err);
    int reaped_by_us = shx_proc_reaped(&j->proc) && !j->proc.status_lost;
    if (j->proc.end_reason != SHX_END_NONE && j->proc.sent != SHX_SENT_KILL &&
        !reaped_by_us) {
        if (!shell_exited_in_grace(j, policy, now))
            return 0;
        shx_job_finish(j, policy, now);
        return 1;
    }
    /* a status lost to the host (the shell reaped already) still leaves the group
     * to check: the members pin its id as they would after our own reap */
    if (j->proc.end_reason != SHX_END_NONE || reaped_by_us) {
        shx_job_finish(j, policy, now);
        return 1;
    }
    /* what the shell wrote is all in the pipes by now */
    drain_output(j);
    /* A terminal's hangup. The kernel sends SIGHUP to the terminal's group
     * as its session leader exits, but a shell with an EXIT trap (the
     * wrapper's) handles SIGHUP itself, and a child it has just forked can
     * take the signal in that handler before it resets its signals and
     * execs, and so lose it. The group gets it again from here, while the
     * shell's zombie still holds the group id; a child still short of its
     * exec loses that one too, so members left in the group are looked at
     * again later (loop.c). */
    if (j->pty && !shx_proc_reaped(&j->proc)) {
        shx_proc_hangup(&j->proc);
        j->hangup_checks = SHX_HANGUP_CHECKS;
        j->hangup_check_ns = now + SHX_HANGUP_FIRST_NS;
    }
    if (!shx_proc_reaped(&j->proc) && !policy->procfs_seen &&
        !(policy->procfs_seen = shx_group_can_list()))
        return shell_exited_unlisted(j, policy, now, born);
    shx_proc_reap(&j->proc);
    /* A shell the host reaped can still be on its way out of the pid table,
     * so kill() may yet find it in the group: then only members that /proc
     * shows alive, other than the shell, count. */
    if (!shx_proc_group_alive(&j->proc) ||
        (j->proc.status_lost && shx_group_anchor(&j->proc.group, j->proc.pid, policy->use_pidfd) == 0)) {
        shx_job_finish(j, policy, now); /* nothing left in the group */
        return 1;
    }
    if (j->follows_leftovers || drain_wanted(j, policy)) {
        if (shx_proc_anchor(&j->proc, policy->use_pidfd)) {
            if (!j->follows_leftovers)
                drain_begin(j, policy, now);
            return 0;
        }
        shx_job_finish(j, policy, now);
        return 1;
    }
    shx_job *adopted = policy->adopt_leftovers(policy->ctx, j);
    if (adopted) {
        adopted->next_active = *born;
        *born = adopted;
    } else {
        /* what left the group from inside it goes with it */
        shx_proc_kill_rest(&j->proc, 1, policy->use_pidfd);
        j->leftovers_killed = 1;
    }
    shx_job_finish(j, policy, now);
    return 1;
}

