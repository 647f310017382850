/*
 * loop.h - the session's poll loop (loop.c): one round split for host
 * integration, the blocking pump, deadline enforcement. Each run reports
 * its ending through its own callbacks (run.h), the round's end through
 * the session's (session.h).
 */
#ifndef SHX_LOOP_H
#define SHX_LOOP_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "shexec.h"

typedef struct shx_fd_owner {
    shexec_run *run;
    int kind;
    int index;
} shx_fd_owner;
/*
 * One round of the loop, split for host integration: list the descriptors
 * to watch (returns how many are needed; fills at most cap) with the
 * nearest deadline in *next_ns (-1: none; a past one when it is due); then
 * handle what poll() reported (returns 1 when a stream read output); then
 * enforce deadlines (shx_loop_enforce); then finish what ended (returns how
 * many runs finished).
 */
size_t shx_loop_collect(shexec_session *s, struct pollfd *fds, shx_fd_owner *own, size_t cap,
                        int64_t *next_ns);
int shx_loop_dispatch(shexec_session *s, const struct pollfd *fds, const shx_fd_owner *own,
                      size_t n);
/* look_now: also ask, without a pidfd, whether shells not yet known to
 * have exited have (otherwise only as their backed-off checks fall due) */
int shx_loop_settle(shexec_session *s, int look_now);
/*
 * Pump until `until` is done (if non-NULL), or until any run finished
 * (stop_on_any), or until timeout_ns passed (negative: none). SHEXEC_OK or
 * SHEXEC_ESYS.
 */
int shx_loop(shexec_session *s, shexec_run *until, int stop_on_any, int64_t timeout_ns,
             int *finished);
/* Act on every deadline that has passed: SIGTERM on timeout, SIGKILL after
 * the grace. The one step that signals on time; listing never does. */
void shx_loop_enforce(shexec_session *s);
void shx_loop_add(shexec_session *s, shexec_run *r);


/* Queued input not yet written. */
size_t shx_run_input_left(const shexec_run *r);

/* After writes (stdin_off moved on): drop written bytes, amortized linear. */
void shx_run_input_written(shexec_run *r);

#endif
