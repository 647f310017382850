/*
 * env.h - building a command's environment: the session/run override lists,
 * the deny/allow glob lists, and the NULL-terminated "NAME=VALUE" array that
 * is handed to exec. Pure: the host's environ is only ever read, and only
 * when the caller passes it in as the base.
 */
#ifndef SHX_ENV_H
#define SHX_ENV_H

#include <stddef.h>
#include <stdint.h>

/*
 * Ordered overrides (shexec_session_setenv / shexec_run_setenv). Each name
 * appears at most once; values[i] == NULL marks "remove this variable".
 * Order matters: names that are new to the base are appended in list order.
 * Names are also hashed into `index`, so setting a variable costs the same
 * however long the list is.
 */
typedef struct shx_envlist {
    char **names;
    char **values;
    size_t n, cap;
    uint32_t *index; /* open addressing, entry i stored as i + 1, 0: empty;
                        index_mask + 1 slots, at least 2 * cap; NULL while cap is 0 */
    size_t index_mask;
    size_t max; /* most names the list takes; 0: SHEXEC_MAX_ENV_VARS */
} shx_envlist;

#define SHX_ENVLIST_INIT {NULL, NULL, 0, 0, NULL, 0, 0}

/* 1 when name is non-NULL, non-empty and contains no '=', else 0. */
int shx_env_name_valid(const char *name);

/*
 * Set name to a copy of value (NULL: the removal marker). An existing entry
 * of that name is replaced in place, keeping its position. Amortized O(1).
 * SHEXEC_OK, SHEXEC_EINVAL (l NULL or bad name; list unchanged),
 * SHEXEC_ELIMIT (name is new and the list already holds its maximum of
 * names, l->max or SHEXEC_MAX_ENV_VARS; list unchanged), SHEXEC_ENOMEM
 * (list unchanged).
 */
int shx_envlist_set(shx_envlist *l, const char *name, const char *value);

/* Free every entry; the list is SHX_ENVLIST_INIT afterwards. NULL ok. */
void shx_envlist_free(shx_envlist *l);

/* fnmatch(3) patterns matched against whole variable names. */
typedef struct shx_globlist {
    char **globs;
    size_t n, cap;
    uint32_t *index; /* as shx_envlist's: finds a glob already present */
    size_t index_mask;
} shx_globlist;

#define SHX_GLOBLIST_INIT {NULL, 0, 0, NULL, 0}

/* Append a copy of glob; an identical glob already present is ignored.
 * Amortized O(1). SHEXEC_OK, SHEXEC_EINVAL (g NULL, glob NULL or empty),
 * SHEXEC_ENOMEM. */
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
 * inputs. Cost is linear in the bytes of the entries: names are looked up
 * by hash, and so are LITERAL and PREFIX* globs (a name costs one lookup per
 * distinct PREFIX length up to its own length, whatever the number of
 * globs). Only the other globs (*SUFFIX, *INFIX*, and fnmatch patterns) are
 * tried one by one against each name; fnmatch runs only for the last kind,
 * and only on names that start with the pattern's literal lead.
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
