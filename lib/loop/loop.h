/*
 * loop.h - the poll loop (loop.c) and its state: one round split for host
 * integration, the blocking pump, deadline enforcement. The loop drives
 * jobs (job.h) and knows nothing of runs, tasks or the session that embeds
 * it: each job reports its ending through its own callbacks, the end of a
 * round goes through the loop's, set by its owner.
 */
#ifndef SHX_LOOP_H
#define SHX_LOOP_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "loop/job.h"
#include "shexec.h"

typedef struct shx_loop {
    shx_job *active;              /* jobs with a live process */
    int in_loop;                  /* inside the loop (callbacks run there) */
    uint64_t output_spins;        /* rounds that looked again before sleeping */
    shx_job_policy jobs;          /* what its jobs share: pidfds, grace, leftovers */
    /* a round is over and nothing holds job pointers: the owner's deferred
     * frees can happen (with round_end_ctx) */
    void (*round_end)(void *ctx);
    void *round_end_ctx;
    shexec_session *errs;         /* whose message a failure of the loop sets */
} shx_loop;

typedef struct shx_fd_owner {
    shx_job *job;
    int kind;
    int index;
} shx_fd_owner;
/*
 * One round of the loop, split for host integration: list the descriptors
 * to watch (returns how many are needed; fills at most cap) with the
 * nearest deadline in *next_ns (-1: none; a past one when it is due); then
 * handle what poll() reported (returns 1 when a stream read output); then
 * enforce deadlines (shx_loop_enforce); then finish what ended (returns how
 * many jobs finished).
 */
size_t shx_loop_collect(shx_loop *l, struct pollfd *fds, shx_fd_owner *own, size_t cap,
                        int64_t *next_ns);
int shx_loop_dispatch(shx_loop *l, const struct pollfd *fds, const shx_fd_owner *own,
                      size_t n);
/* look_now: also ask, without a pidfd, whether shells not yet known to
 * have exited have (otherwise only as their backed-off checks fall due) */
int shx_loop_settle(shx_loop *l, int look_now);
/*
 * Pump until `until` has ended (if non-NULL), or until any job finished
 * (stop_on_any), or until timeout_ns passed (negative: none). SHEXEC_OK or
 * SHEXEC_ESYS.
 */
int shx_loop_run(shx_loop *l, const shx_job *until, int stop_on_any, int64_t timeout_ns,
                 int *finished);
/* Act on every deadline that has passed: SIGTERM on timeout, SIGKILL after
 * the grace. The one step that signals on time; listing never does. */
void shx_loop_enforce(shx_loop *l);
void shx_loop_add(shx_loop *l, shx_job *j);

#endif
