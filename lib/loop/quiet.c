/*
 * quiet.c - what a job's silence means (see quiet.h).
 *
 * Every deadline here counts from the last activity, so a command whose
 * output flows never wakes the loop for them: each read moves them on by
 * an assignment. Looks for input are made on a silent command only, the
 * first after look_after_ns, then once a second while it stays silent;
 * where /proc cannot tell, the first look says "unknown" and no more are
 * made.
 */
#include "loop/quiet.h"

#include "loop/inputwait.h"
#include "loop/job.h"
#include "shx/base.h"

/* While a command stays silent, how often it is looked at again. */
#define LOOK_EVERY_NS ((int64_t)1000000000)
/* The command's processes looked at, at most. */
#define LOOK_PIDS 64

/* The command runs (its shell, or the leftovers a task follows): a run
 * that drains what its shell left is no longer its own command, so no
 * silence of it counts (no idle timeout, yield or look for input). */
static int live(const shx_job *j)
{
    return shx_proc_live(&j->proc) && !j->draining;
}

void shx_quiet_start(shx_job *j, int64_t now)
{
    shx_quiet *q = &j->quiet;
    q->start_ns = q->active_ns = q->output_ns = now;
    q->input = SHEXEC_INPUT_NO;
    q->next_look_ns = q->look_after_ns ? now + q->look_after_ns : 0;
}

void shx_quiet_activity(shx_job *j, int64_t now)
{
    shx_quiet *q = &j->quiet;
    q->active_ns = now;
    if (q->input == SHEXEC_INPUT_UNKNOWN)
        return; /* no /proc: no looks */
    q->input = SHEXEC_INPUT_NO;
    q->echo_off = 0;
    q->next_look_ns = q->look_after_ns ? now + q->look_after_ns : 0;
}

void shx_quiet_output(shx_job *j, int64_t now)
{
    j->quiet.output_ns = now;
    shx_quiet_activity(j, now);
}

/* When a watch's quiet comes, if no more output does; -1: no watch. */
static int64_t watch_due(const shx_quiet *q)
{
    if (!q->watch_quiet_ns || q->watch_fired)
        return -1;
    int64_t from = q->output_ns > q->watch_from_ns ? q->output_ns : q->watch_from_ns;
    return from + q->watch_quiet_ns;
}

void shx_quiet_next(const shx_job *j, int64_t *next)
{
    const shx_quiet *q = &j->quiet;
    int64_t watch = watch_due(q);
    if (watch >= 0 && live(j) && (*next < 0 || watch < *next))
        *next = watch;
    if (j->proc.sent != SHX_SENT_NONE || q->yield || !live(j))
        return;
    int64_t due[3] = {-1, -1, -1};
    if (q->idle_ns && (!q->idle_yields || q->can_yield))
        due[0] = q->active_ns + q->idle_ns;
    if (q->next_look_ns)
        due[1] = q->next_look_ns;
    if (q->can_yield && q->yield_at_ns)
        due[2] = q->yield_at_ns;
    for (int i = 0; i < 3; i++)
        if (due[i] >= 0 && (*next < 0 || due[i] < *next))
            *next = due[i];
}

static void look_for_input(shx_job *j, int64_t now)
{
    shx_quiet *q = &j->quiet;
    q->looks++;
    q->next_look_ns = now + LOOK_EVERY_NS;
    /* a pipe run without stdin reads /dev/null: nothing can wait for us */
    if (!j->pty && j->stdin_fd < 0) {
        q->next_look_ns = 0;
        return;
    }
    shx_inputwait_target target = {.pty_master = j->pty ? j->out.fd : -1,
                                   .stdin_pipe = j->pty ? -1 : j->stdin_fd,
                                   .start_known = q->pty_lflag_known,
                                   .start_lflag = q->pty_lflag};
    if (j->pty && target.pty_master < 0)
        return;
    pid_t pids[LOOK_PIDS];
    size_t n = shx_proc_members(&j->proc, pids, LOOK_PIDS);
    int echo_off;
    int found = shx_inputwait_probe(pids, n, &target, &echo_off);
    int was = q->input;
    if (found < 0) {
        q->input = SHEXEC_INPUT_UNKNOWN;
        q->next_look_ns = 0;
        return;
    }
    q->input = found ? SHEXEC_INPUT_WAITING : SHEXEC_INPUT_NO;
    q->echo_off = found && echo_off;
    if (!found || was == SHEXEC_INPUT_WAITING)
        return;
    if (q->yield_on_input && q->can_yield)
        q->yield = SHEXEC_YIELD_INPUT;
    if (q->on_input)
        q->on_input(j->ctx);
}

/*
 * What the job's pipes already hold, read when a silence deadline has
 * come: a host that did not pump for a while comes back with its deadlines
 * passed and output waiting, which the loop would read only after acting
 * on them. A command that printed meanwhile is neither idle nor quiet, and
 * one that printed its answer and waits again is reported with the output
 * before the wait.
 */
int shx_quiet_read_held(shx_job *j)
{
    shx_stream *st[2] = {&j->out, &j->err};
    int came = 0;
    for (int i = 0; i < 2; i++) {
        if (st[i]->fd >= 0 && shx_stream_read(st[i]) == SHX_STREAM_DATA) {
            j->last_stream = st[i]->id;
            shx_quiet_output(j, shx_now_ns());
            came = 1;
        }
    }
    return came;
}

static void take_pending(shx_job *j, int64_t now)
{
    int64_t next = -1;
    shx_quiet_next(j, &next);
    if (next < 0 || next > now)
        return;
    (void)shx_quiet_read_held(j);
}

int shx_quiet_enforce(shx_job *j, int64_t now)
{
    shx_quiet *q = &j->quiet;
    take_pending(j, now);
    int64_t watch = watch_due(q);
    if (watch >= 0 && now >= watch)
        q->watch_fired = 1;
    if (j->proc.sent != SHX_SENT_NONE || q->yield || !live(j))
        return 0;
    if (q->can_yield && q->yield_at_ns && now >= q->yield_at_ns) {
        q->yield = SHEXEC_YIELD_TIME;
        return 0;
    }
    /* the timeout moves the command to the background, under its cap */
    if (q->lifetime_ns && q->can_yield && !j->proc.no_timeout && now >= j->proc.deadline_ns &&
        q->start_ns + q->lifetime_ns > now) {
        j->proc.deadline_ns = q->start_ns + q->lifetime_ns;
        q->yield = SHEXEC_YIELD_TIMEOUT;
        return 0;
    }
    if (q->idle_ns && now >= q->active_ns + q->idle_ns) {
        if (!q->idle_yields)
            return 1;
        if (q->can_yield) {
            q->yield = SHEXEC_YIELD_IDLE;
            return 0;
        }
    }
    if (q->next_look_ns && now >= q->next_look_ns)
        look_for_input(j, now);
    return 0;
}
