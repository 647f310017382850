/*
 * loop.h - the session's poll loop (loop.c): one round split for host
 * integration, the blocking pump, deadline enforcement, and the hooks it
 * reports through.
 */
#ifndef SHX_LOOP_H
#define SHX_LOOP_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "shexec.h"

/*
 * How the loop reports upward without calling up (loop.c knows processes
 * and streams, not what runs and tasks make of them); installed by
 * session.c, which hands each report to run.c's exit policy or to task.c.
 */
typedef struct shx_loop_hooks {
    /* A foreground run's shell exited and members of its group remain:
     * adopt them (1, *adopted receives the adopting task's run, which the
     * loop then drives) or not (0: the loop kills them). */
    int (*adopt)(shexec_session *s, shexec_run *r, shexec_run **adopted);
    /* The run's processes are done and its output read: make it final. */
    void (*ended)(shexec_session *s, shexec_run *r);
    /* After a round's walk, once per run that ended in it: callbacks. */
    void (*notify)(shexec_session *s, shexec_run *r);
    /* A round is over and nothing holds run or task pointers. */
    void (*round_end)(shexec_session *s);
} shx_loop_hooks;

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
