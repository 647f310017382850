/*
 * persist_hook.h - the core's one door into persist/: the shell state a
 * session keeps under shexec_session_set_persist_env(), as the core holds
 * and calls it. The session holds the state (pstate.c) as an attachment,
 * NULL when the setting is off, and gives it out (to the next command, to
 * the host) or changes it (the host's setenv, the deny and allow lists,
 * another shell); a run that reports its state carries a shx_persist_run,
 * and what a finished run reported is taken as the session's (persist.c),
 * by the rules of shexec_session_set_persist_env(). Neither sees the
 * session nor the run: the caller hands over what they need. Every call
 * takes NULL as "the setting is off" and then does nothing. The types are
 * here whatever the build; the calls are declared while the folder is
 * built (SHX_WITH_PERSIST) and are static inline stubs otherwise.
 */
#ifndef SHX_PERSIST_HOOK_H
#define SHX_PERSIST_HOOK_H

#include <stddef.h>

#include "shx/buf.h"
#include "shx/env.h"
#include "shx/glob.h"
#include "shell/record.h"
#include "shexec.h"

/* PERSIST=0 builds the library without persisted shell state (the Makefile
 * sets this): the calls below are then stubs and a session cannot turn
 * the setting on. */
#ifndef SHX_WITH_PERSIST
#define SHX_WITH_PERSIST 1
#endif

/* The state a session keeps (its layout: pstate.h). */
typedef struct shx_persist shx_persist;

/* What a run that reports its state carries (run.h holds one): set when it
 * starts, read when it ends. */
typedef struct shx_persist_run {
    int on;                       /* its shell reports its state (a foreground local run) */
    char **start_env;             /* the environment the shell got */
    char **prior_env;             /* the same without the run's own variables;
                                     NULL when the run has none (start_env then) */
} shx_persist_run;

/* A finished run's report, and what judging it needs. */
typedef struct shx_persist_report {
    const shx_record *record;     /* what the shell reported */
    const shx_envlist *run_env;   /* the run's own variables */
    const shx_persist_run *run;   /* what it started with */
    const shx_globlist *deny, *allow; /* the session's name rules */
    int shell_bash;               /* the session's shell is bash (lists with declare -p) */
    shx_buf *notice;              /* the run's notice: what is not taken, and why */
} shx_persist_report;

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

/* 1 when a run of cmd (len bytes), which can set nothing itself, may be
 * given the kept state without listing it after: that state is what the
 * last listing gave under the session's rules now (no rule, setenv or lost
 * function since), and the text names none of the kept functions (looked
 * for anywhere in it, as any part of a word: a function can do what the
 * text cannot; bash calls none by itself, as its command_not_found_handle
 * runs in a subshell). 0 otherwise, and where looking would cost more than
 * a bound (many functions, a long text): the run then lists, which is
 * always right. */
int shx_persist_settled(const shx_persist *p, const char *cmd, size_t len);

/* bash: 1 when what the prelude would give bash is nothing a command
 * that is stateless (inert.h) can read, so such a command runs as it would
 * with it, and is given none of it: no kept function, and no kept
 * variable that bash reads by itself (a name with a lower-case letter is
 * none: bash's own are upper case, but auto_resume, histchars and
 * ignoreeof, which are taken as read). A stateless text reads no variable:
 * it expands nothing (`$`), evaluates no arithmetic (`(`, `[`, let, test)
 * and lists none (set, declare, typeset, compgen, ...). 0 otherwise. */
int shx_persist_unread(const shx_persist *p);

/* The rules a listing is taken by changed (the deny or allow list): the
 * next listing is taken in full even when it is the last one again. */
void shx_persist_rules_changed(shx_persist *p);

/* The host set (value) or removed (NULL) a session variable: the state
 * follows. SHEXEC_OK or SHEXEC_ENOMEM. */
int shx_persist_setenv(shx_persist *p, const char *name, const char *value);

/* The environment a run left, which the next command starts from; NULL
 * when none was taken yet (the session's base and overrides then). */
const shx_envlist *shx_persist_env(const shx_persist *p);

/* Take what the report says as p's state (the run ended by itself, in the
 * foreground); a report that is not taken says why in the notice. */
void shx_persist_adopt(shx_persist *p, const shx_persist_report *in);

/* The run's shell could not define some of the functions it was given (lost:
 * their names, each with its NUL): p forgets them, and the notice says so. */
void shx_persist_forget_lost(shx_persist *p, const shx_buf *lost, shx_buf *notice);
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
static inline int shx_persist_unread(const shx_persist *p)
{
    (void)p;
    return 1;
}
static inline void shx_persist_rules_changed(shx_persist *p)
{
    (void)p;
}
static inline int shx_persist_settled(const shx_persist *p, const char *cmd, size_t len)
{
    (void)p, (void)cmd, (void)len;
    return 0;
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
static inline void shx_persist_adopt(shx_persist *p, const shx_persist_report *in)
{
    (void)p, (void)in;
}
static inline void shx_persist_forget_lost(shx_persist *p, const shx_buf *lost, shx_buf *notice)
{
    (void)p, (void)lost, (void)notice;
}
#endif

#endif
