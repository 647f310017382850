/*
 * ending.c - how a command ends, as the loop sees it: terminating it (the
 * process object, with the session's grace), what its shell's exit leaves
 * behind (members still in its group are followed: anchored, or without
 * /proc held by the shell's zombie and its pipes; or handed off through the
 * adopt hook, or killed), and finishing it (processes, streams and the
 * shell's record channel drained, input closed, the ending reported upward).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channels.h"
#include "session.h"
#include "ending.h"
#include "proc.h"
#include "stream.h"
#include "run.h"

/* After the shell exits, what its pipes still hold is read up to this much. */
#define FINAL_DRAIN_MAX (8u << 20)

static int use_pidfd(const shexec_run *r)
{
    return r->s ? r->s->use_pidfd : 0;
}

static uint32_t grace_ms(const shexec_run *r)
{
    return r->s ? r->s->kill_grace_ms : 0;
}

void shx_run_terminate(shexec_run *r, int reason, int64_t now)
{
    shx_proc_terminate(&r->proc, reason, now, grace_ms(r), use_pidfd(r));
}

void shx_run_input_close(shexec_run *r)
{
    if (r->stdin_fd >= 0) {
        close(r->stdin_fd);
        r->stdin_fd = -1;
    }
    shx_buf_free(&r->stdin_buf);
    r->stdin_off = 0;
}

/* The run's final state and results; the run leaves the active list after. */
void shx_run_finish(shexec_run *r, int64_t now)
{
    shx_proc_finish(&r->proc, use_pidfd(r));
    shx_stream_drain(&r->out, FINAL_DRAIN_MAX);
    shx_stream_drain(&r->err, FINAL_DRAIN_MAX);
    shx_stream_finish(&r->out);
    shx_stream_finish(&r->err);
    shx_run_read_record(r); /* the shell wrote it before it exited */
    shx_run_input_close(r);
    r->end_ns = now;
    /* what the ending means for the run (its state, the session cwd) is the
     * run's own policy: reported upward */
    if (r->s)
        r->on_ended(r);
}

/*
 * shell_exited() where /proc cannot list the group's members, so none can be
 * anchored: the shell's zombie is the only thing that can hold the group id,
 * so it is left unreaped while the group is followed. Members that still
 * hold the command's pipes are seen by them: the run (or the task adopting
 * them) stays in group_phase until both pipes are closed, and can be
 * signalled through the pinned id all the while. Members without the pipes
 * cannot be followed once the zombie goes: they are killed when it is
 * reaped (see finish()), since nothing could stop them later.
 */
static int shell_exited_unlisted(shexec_session *s, shexec_run *r, int64_t now, shexec_run **born)
{
    if (r->out.fd < 0 && r->err.fd < 0) {
        /* nothing holds the pipes: anything left in the group goes now */
        if (shx_proc_reap_killing_rest(&r->proc) && !r->task)
            r->leftovers = SHEXEC_LEFTOVERS_KILLED;
        shx_run_finish(r, now);
        return 1;
    }
    if (r->task) {
        shx_proc_pin(&r->proc);
        return 0;
    }
    shexec_run *adopted = NULL;
    if (s->adopt_leftovers(s, r, &adopted)) {
        /* the zombie, and with it the group id, now belongs to the task */
        shx_proc_hand_over(&r->proc, &adopted->proc);
        adopted->next_active = *born;
        *born = adopted;
    } else {
        r->leftovers = SHEXEC_LEFTOVERS_KILLED; /* finish() kills the group */
    }
    shx_run_finish(r, now);
    return 1;
}

/*
 * The shell of a command being ended (timeout, cancel, kill) has exited
 * within the grace: the grace is every process's, not the shell's alone. A
 * program that handles SIGTERM (node, python under `npm test`) is still
 * cleaning up, its output still coming: the group is followed, as a task
 * follows its leftovers, until it is empty (1: the run is finished) or the
 * grace is over and SIGKILL ends it (shx_proc_enforce). Returns 0 while it
 * is followed.
 */
static int shell_exited_in_grace(shexec_session *s, shexec_run *r, int64_t now)
{
    shx_stream_drain(&r->out, FINAL_DRAIN_MAX);
    shx_stream_drain(&r->err, FINAL_DRAIN_MAX);
    if (!shx_proc_reaped(&r->proc) && !s->procfs_seen &&
        !(s->procfs_seen = shx_group_can_list())) {
        /* without /proc the shell's zombie holds the group id, and the
         * group is followed through its pipes (loop.c: pinned) */
        if (r->out.fd < 0 && r->err.fd < 0)
            return 1;
        shx_proc_pin(&r->proc);
        return 0;
    }
    shx_proc_reap(&r->proc);
    (void)now;
    if (!shx_proc_group_alive(&r->proc) || !shx_proc_anchor(&r->proc, s->use_pidfd))
        return 1;
    return 0;
}

/*
 * The shell has exited. Returns 1 when the run is finished, 0 when it stays
 * active to follow processes left in its group (a task's, or any command's
 * during the grace of its ending).
 */
int shx_run_shell_exited(shexec_session *s, shexec_run *r, int64_t now, shexec_run **born)
{
    int reaped_by_us = shx_proc_reaped(&r->proc) && !r->proc.status_lost;
    if (s && r->proc.end_reason != SHX_END_NONE && r->proc.sent != SHX_SENT_KILL &&
        !reaped_by_us) {
        if (!shell_exited_in_grace(s, r, now))
            return 0;
        shx_run_finish(r, now);
        return 1;
    }
    /* a status lost to the host (the shell reaped already) still leaves the group
     * to check: the members pin its id as they would after our own reap */
    if (r->proc.end_reason != SHX_END_NONE || reaped_by_us || !s) {
        shx_run_finish(r, now);
        return 1;
    }
    /* what the shell wrote is all in the pipes by now */
    shx_stream_drain(&r->out, FINAL_DRAIN_MAX);
    shx_stream_drain(&r->err, FINAL_DRAIN_MAX);
    /* A terminal's hangup. The kernel sends SIGHUP to the terminal's group
     * as its session leader exits, but a shell with an EXIT trap (the
     * wrapper's) handles SIGHUP itself, and a child it has just forked can
     * take the signal in that handler before it resets its signals and
     * execs, and so lose it. The group gets it again from here, while the
     * shell's zombie still holds the group id; a child still short of its
     * exec loses that one too, so members left in the group are looked at
     * again later (loop.c). */
    if (r->pty && !shx_proc_reaped(&r->proc)) {
        shx_proc_hangup(&r->proc);
        r->hangup_checks = SHX_HANGUP_CHECKS;
        r->hangup_check_ns = now + SHX_HANGUP_FIRST_NS;
    }
    if (!shx_proc_reaped(&r->proc) && !s->procfs_seen &&
        !(s->procfs_seen = shx_group_can_list()))
        return shell_exited_unlisted(s, r, now, born);
    shx_proc_reap(&r->proc);
    /* A shell the host reaped can still be on its way out of the pid table,
     * so kill() may yet find it in the group: then only members that /proc
     * shows alive, other than the shell, count. */
    if (!shx_proc_group_alive(&r->proc) ||
        (r->proc.status_lost && shx_group_anchor(&r->proc.group, r->proc.pid, s->use_pidfd) == 0)) {
        shx_run_finish(r, now); /* nothing left in the group */
        return 1;
    }
    if (r->task) {
        if (shx_proc_anchor(&r->proc, s->use_pidfd))
            return 0;
        shx_run_finish(r, now);
        return 1;
    }
    shexec_run *adopted = NULL;
    if (s->adopt_leftovers(s, r, &adopted)) {
        adopted->next_active = *born;
        *born = adopted;
    } else {
        /* what left the group from inside it goes with it */
        shx_proc_kill_rest(&r->proc, 1, s->use_pidfd);
        r->leftovers = SHEXEC_LEFTOVERS_KILLED;
    }
    shx_run_finish(r, now);
    return 1;
}

/* Take what the shell reported on the run's channel (after the prelude),
 * up to the record's bound, and close it: the run's channel is never used
 * again. */
void shx_run_read_record(shexec_run *r)
{
    if (r->rec_fd < 0)
        return;
    if (shx_channel_read(r->rec_fd, r->rec_from, &r->record) != 0)
        r->record.nomem = 1; /* unread: not believed */
    close(r->rec_fd);
    r->rec_fd = -1;
}
