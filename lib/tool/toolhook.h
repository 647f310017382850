/*
 * toolhook.h - the tool layer's one door into the library's internals.
 * tool.c and tooldef.c are a front end: they configure, start and read runs
 * and tasks through the public API (shexec.h) and format JSON with the pure
 * helpers (json.h, buf.h). What they need beyond that is here, in one place,
 * and each item says why it is not public:
 *
 * - Session-owned tasks. A task the tool layer starts is the session's, not
 *   the host's: when finished it may be released for room, and once the
 *   model has read it to the end its id is spent. Publishing that would put
 *   the retention rules into the ABI, which hosts should not build on.
 * - Holding a run across a wait, so an output callback that frees the task
 *   cannot free it under the tool layer (hosts never need this: they own
 *   their pointers).
 * - The settings the tool descriptions quote to the model, and whether the
 *   call comes from inside a callback: read-only, copied out.
 * - The session's slot for the tool registry, and the per-session error
 *   message, which every entry point of the library writes.
 */
#ifndef SHX_TOOLHOOK_H
#define SHX_TOOLHOOK_H

#include <stdint.h>

#include "shx/buf.h"
#include "shexec.h"

typedef struct shx_tool_settings {
    uint32_t default_timeout_ms, max_timeout_ms;
    uint64_t limit;
    int unit;
    uint32_t max_tasks;
    int persist_env; /* exports persist between commands (the description says so) */
    const char *shell; /* the word the shell runs by (its $0's path: the last word of the
                          program's argv, or the default shell), owned by the session */
    int shell_bash;  /* it is bash, not in POSIX mode: shell variables and functions
                        persist too, and the model may write bash */
    int in_callback; /* called from an output or done callback */
} shx_tool_settings;

/* A copy of what the tool layer quotes and checks. */
void shx_hook_settings(const shexec_session *s, shx_tool_settings *out);
/* The session's slot for the tool registry (NULL until tooldef.c makes
 * one); free_fn frees what the slot holds when the session is freed. */
void **shx_hook_tools(shexec_session *s, void (*free_fn)(void *));
/* The session of a run; *is_task says whether a task owns the run. */
shexec_session *shx_hook_run_session(const shexec_run *run, int *is_task);
/* Hold (1) or let go of (0) a run across a wait that may run callbacks. */
void shx_hook_run_hold(shexec_run *run, int hold);
/*
 * The task with that id, without making it the host's (unlike
 * shexec_session_take_task()). NULL if there is none; then *released says
 * whether the id is of a task released unread for room.
 */
shexec_task *shx_hook_task_lookup(shexec_session *s, const char *id, int *released);
/* Pump the session's loop until run has finished, waits for input, has
 * printed nothing for quiet_ms (0: not watched for), or ms passed (0: one
 * round, taking in what is there); run held meanwhile. Returns why
 * (SHEXEC_WATCH_*; SHEXEC_WATCH_TIME from inside a callback, where it does
 * not pump). A run, not a task: a bash call's run may have no task yet. */
int shx_hook_run_wait(shexec_session *s, shexec_run *run, int64_t ms, int64_t quiet_ms);
/*
 * Room for one more task (finished tasks the session holds released for
 * it, as for any start): 1, else 0 with what holds the slots in *why (the
 * running tasks' ids and the start of their commands), for the model.
 */
int shx_hook_task_room(shexec_session *s, shx_buf *why);
/* The tool layer's run with a yield time keeps a task slot from its start
 * until it yields or ends, so that its yield never finds the table full
 * and runs on past the time the model was promised. */
void shx_hook_run_reserve_slot(shexec_run *run);
/* 1 when data is what the last shexec_task_read() of stream returned. */
int shx_hook_task_is_last_read(const shexec_task *t, int stream, const char *data);
/* The tool layer started t and never hands out its pointer: the session owns it. */
void shx_hook_task_disown(shexec_task *t);
/* The model read t to its end: its id is spent. Freed if the session owns
 * it; withdrawn (no longer found, freed by the host) if the host holds it. */
void shx_hook_task_spent(shexec_task *t);

#endif
