/*
 * pstate.h - the shell state a session keeps under
 * shexec_session_set_persist_env() (pstate.c): its life, and the state
 * given out (to the next command, to the host) and changed by the host.
 * The session holds it as an attachment, NULL when the setting is off;
 * persist.c takes it from a finished run. Every call takes NULL as "the
 * setting is off" and then does nothing.
 */
#ifndef SHX_PSTATE_H
#define SHX_PSTATE_H

#include <stddef.h>

#include "shx/buf.h"
#include "shx/env.h"
#include "shexec.h"

/* PERSIST=0 builds the library without persisted shell state (the Makefile
 * sets this): the calls below are then empty and a session cannot turn
 * the setting on. */
#ifndef SHX_WITH_PERSIST
#define SHX_WITH_PERSIST 1
#endif

struct shx_persist {
    int env_set;                  /* env holds the environment a run left (else: base + overrides) */
    shx_envlist env;              /* that environment, in the shell's order */
    shx_envlist vars;             /* bash: shell variables, name -> the `declare` line replaying it */
    shx_envlist funcs;            /* bash: functions, name -> "() { ...}" (NULL: dropped) */
    shx_buf listing;              /* the listing the state was last taken from */
    int listing_ok;               /* listing is what gave the state as it is now */
};
typedef struct shx_persist shx_persist;

#if SHX_WITH_PERSIST
/* A session's state, empty; NULL when out of memory. */
shx_persist *shx_persist_new(void);
void shx_persist_free(shx_persist *p);

/* bash: the `declare` lines the prelude replays before the command (the
 * kept shell variables not shadowed by a variable of the run's own,
 * run_env), appended to out. 0 or -1. */
int shx_persist_replay(const shx_persist *p, const shx_envlist *run_env, shx_buf *out);

/* bash: the names of the kept functions, each with its NUL, in out; their
 * count in *n. 0 or -1. */
int shx_persist_func_names(const shx_persist *p, shx_buf *out, size_t *n);

/* bash: the environment entries that give the shell the kept functions
 * ("BASH_FUNC_NAME%%=() { ...}"), each with its NUL. 0 or -1. */
int shx_persist_func_entries(const shx_persist *p, shx_buf *out);

/* Forget the shell's variables and functions (another shell: they are
 * its own); the environment stays. */
void shx_persist_drop_shell(shx_persist *p);

/* The rules a listing is taken by changed (the deny or allow list): the
 * next listing is taken in full even when it is the last one again. */
void shx_persist_rules_changed(shx_persist *p);

/* The host set (value) or removed (NULL) a session variable: the state
 * follows. SHEXEC_OK or SHEXEC_ENOMEM. */
int shx_persist_setenv(shx_persist *p, const char *name, const char *value);

/* The environment a run left, which the next command starts from; NULL
 * when none was taken yet (the session's base and overrides then). */
const shx_envlist *shx_persist_env(const shx_persist *p);
#else /* PERSIST=0: nothing is kept; a session cannot turn the setting on */
static inline shx_persist *shx_persist_new(void)
{
    return NULL;
}
static inline void shx_persist_free(shx_persist *p)
{
    (void)p;
}
static inline int shx_persist_replay(const shx_persist *p, const shx_envlist *run_env, shx_buf *out)
{
    (void)p, (void)run_env, (void)out;
    return 0;
}
static inline int shx_persist_func_names(const shx_persist *p, shx_buf *out, size_t *n)
{
    (void)p, (void)out;
    *n = 0;
    return 0;
}
static inline int shx_persist_func_entries(const shx_persist *p, shx_buf *out)
{
    (void)p, (void)out;
    return 0;
}
static inline void shx_persist_drop_shell(shx_persist *p)
{
    (void)p;
}
static inline void shx_persist_rules_changed(shx_persist *p)
{
    (void)p;
}
static inline int shx_persist_setenv(shx_persist *p, const char *name, const char *value)
{
    (void)p, (void)name, (void)value;
    return SHEXEC_OK;
}
static inline const shx_envlist *shx_persist_env(const shx_persist *p)
{
    (void)p;
    return NULL;
}
#endif

#endif
