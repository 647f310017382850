/*
 * env.h - building a command's environment: the session/run override lists,
 * the deny/allow glob lists, and the NULL-terminated "NAME=VALUE" array that
 * is handed to exec. Pure: the host's environ is only ever read, and only
 * when the caller passes it in as the base.
 */
#ifndef SHX_ENV_H
#define SHX_ENV_H

#include <stddef.h>

/*
 * Ordered overrides (shexec_session_setenv / shexec_run_setenv). Each name
 * appears at most once; values[i] == NULL marks "remove this variable".
 * Order matters: names that are new to the base are appended in list order.
 */
typedef struct shx_envlist {
    char **names;
    char **values;
    size_t n, cap;
} shx_envlist;

#define SHX_ENVLIST_INIT {NULL, NULL, 0, 0}

/* 1 when name is non-NULL, non-empty and contains no '=', else 0. */
int shx_env_name_valid(const char *name);

/*
 * Set name to a copy of value (NULL: the removal marker). An existing entry
 * of that name is replaced in place, keeping its position.
 * SHEXEC_OK, SHEXEC_EINVAL (l NULL or bad name; list unchanged),
 * SHEXEC_ENOMEM (list unchanged).
 */
int shx_envlist_set(shx_envlist *l, const char *name, const char *value);

/* Free every entry; the list is SHX_ENVLIST_INIT afterwards. NULL ok. */
void shx_envlist_free(shx_envlist *l);

/* fnmatch(3) patterns matched against whole variable names. */
typedef struct shx_globlist {
    char **globs;
    size_t n, cap;
} shx_globlist;

#define SHX_GLOBLIST_INIT {NULL, 0, 0}

/* Append a copy of glob; an identical glob already present is ignored.
 * SHEXEC_OK, SHEXEC_EINVAL (g NULL, glob NULL or empty), SHEXEC_ENOMEM. */
int shx_globlist_add(shx_globlist *g, const char *glob);

/*
 * Add the default deny list: LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH, DYLD_*,
 * BASH_ENV, ENV, BASH_FUNC_*, SHELLOPTS, BASHOPTS, PROMPT_COMMAND, IFS,
 * CDPATH, GLOBIGNORE. All or nothing: on SHEXEC_ENOMEM g is unchanged.
 */
int shx_globlist_add_default_deny(shx_globlist *g);

/*
 * 1 when any glob of g (NULL: empty list) matches the namelen bytes at name,
 * else 0. name need not be NUL-terminated (it may point into "NAME=VALUE").
 * Returns SHEXEC_ENOMEM (negative) only when a name of 256 bytes or more
 * has to be copied for an fnmatch pattern and malloc fails: compare with 1,
 * not for truth, where a failure must not count as "no match".
 */
int shx_globlist_match(const shx_globlist *g, const char *name, size_t namelen);

/* Free every glob; the list is SHX_GLOBLIST_INIT afterwards. NULL ok. */
void shx_globlist_free(shx_globlist *g);

/*
 * Build a command's environment into *out: a NULL-terminated array of
 * "NAME=VALUE" strings, allocated as one block (free it with shx_env_free
 * only; its strings must not be freed or reallocated one by one).
 *
 *   1. base (NULL: empty), e.g. the host's environ. Entries without '=' or
 *      with an empty name are skipped; when a name repeats, the first
 *      occurrence wins (as getenv does).
 *   2. session_ov, then 3. run_ov (either may be NULL); later wins, a NULL
 *      value removes the variable.
 *   4. every variable whose name matches deny and does not match allow
 *      (either may be NULL: empty) is removed, whichever step supplied it.
 *
 * Order: surviving base entries in base order (an overridden one keeps its
 * base position), then names new to the base in the order they were set
 * (session list, then run list). Nothing in the result points into the
 * inputs. Cost is linear in the number of entries (hashed name lookups);
 * fnmatch is called only for globs that are not of the forms LITERAL,
 * PREFIX*, *SUFFIX or *INFIX*.
 *
 * SHEXEC_OK, SHEXEC_EINVAL (out NULL), SHEXEC_ENOMEM (*out is NULL and
 * nothing is leaked).
 */
int shx_env_build(char ***out, const char *const *base, const shx_envlist *session_ov,
                  const shx_envlist *run_ov, const shx_globlist *deny,
                  const shx_globlist *allow);

/* Free an array made by shx_env_build. NULL ok. */
void shx_env_free(char **env);

/* The value of name in a built array (NULL-terminated "NAME=VALUE"
 * strings), or NULL when absent, env is NULL, or name is not valid. */
const char *shx_env_get(char *const *env, const char *name);

#endif
