/*
 * persist.h - the session's shell state under shexec_session_set_persist_env()
 * (persist.c): what a finished foreground run reported (its exported
 * environment; with bash, its other variables and its functions) taken as
 * the session's, by the documented rules; the environment and the replay
 * text the next command starts with.
 */
#ifndef SHX_PERSIST_H
#define SHX_PERSIST_H

#include "buf.h"
#include "env.h"
#include "shexec.h"

/* Take what the run's record reports as the session's state (the run ended
 * by itself, in the foreground); a report that is not taken says why in
 * the run's notice. */
void shx_persist_adopt(shexec_run *r);

/* The text the wrapper replays before the command (bash: the shell
 * variables not shadowed by a name the run sets, then the functions),
 * appended to out; nothing when the session holds none. 0 or -1. */
int shx_persist_replay(const shexec_session *s, const shexec_run *r, shx_buf *out);

/* Whether the run's shell must list its state after the command: 0 when
 * the command cannot change it (inert.h) and the session holds what the
 * last listing gave, else 1. */
int shx_persist_lists(const shexec_session *s, const shexec_run *r);

/* Forget the shell state (variables and functions; with all, the
 * environment too). */
void shx_persist_drop(shexec_session *s, int all);

/* The rules a listing is taken by changed (the deny or allow list): the
 * next listing is taken in full even when it is the last one again. */
void shx_persist_rules_changed(shexec_session *s);

/* The host set (value) or removed (NULL) a session variable: the state
 * follows. SHEXEC_OK or SHEXEC_ENOMEM. */
int shx_persist_setenv(shexec_session *s, const char *name, const char *value);

/* Build the environment a command of the session starts with (before its
 * run's own variables when run_ov is NULL): shx_env_build over the
 * persisted environment when the session holds one, else over the base
 * and the session's overrides. */
int shx_persist_env_build(const shexec_session *s, char ***out, const shx_envlist *run_ov);

#endif
