/*
 * pstate.h - the kept shell state given out (pstate.c): to the next
 * command, to the host, and changed by the host.
 */
#ifndef SHX_PSTATE_H
#define SHX_PSTATE_H

#include <stddef.h>

#include "buf.h"
#include "env.h"
#include "shexec.h"

/* bash: the `declare` lines the prelude replays before the command (the
 * kept shell variables not shadowed by a name the run sets), appended to
 * out. 0 or -1. */
int shx_persist_replay(const shexec_session *s, const shexec_run *r, shx_buf *out);

/* bash: the names of the kept functions, each with its NUL, in out; their
 * count in *n. 0 or -1. */
int shx_persist_func_names(const shexec_session *s, shx_buf *out, size_t *n);

/* bash: the environment entries that give the shell the kept functions
 * ("BASH_FUNC_NAME%%=() { ...}"), each with its NUL. 0 or -1. */
int shx_persist_func_entries(const shexec_session *s, shx_buf *out);

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
