/*
 * env.h - building a command's environment: the session/run override lists,
 * the deny/allow glob lists, and the NULL-terminated "NAME=VALUE" array that
 * is handed to exec. Pure: the host's environ is only ever read, and only
 * when the caller passes it in as the base.
 */
#ifndef SHX_ENV_H
#define SHX_ENV_H

#include <stddef.h>

#include "shx/glob.h"
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

/* 1 when the len bytes at name are a shell identifier, [A-Za-z_][A-Za-z0-9_]*:
 * a name the shell can expand and `export` can take; else 0. */
int shx_env_name_is_identifier(const char *name, size_t len);

/*
 * Set name to a copy of value (NULL: the removal marker). An existing entry
 * of that name is replaced in place, keeping its position. Amortized O(1).
 * SHEXEC_OK, SHEXEC_EINVAL (l NULL or bad name; list unchanged),
 * SHEXEC_ELIMIT (name is new and the list already holds its maximum of
 * names, l->max or SHEXEC_MAX_ENV_VARS; list unchanged), SHEXEC_ENOMEM
 * (list unchanged).
 */
int shx_envlist_set(shx_envlist *l, const char *name, const char *value);

/* The entry named name (n bytes): 1 and *value (NULL for a removal
 * marker), or 0 when the list has no such entry. */
int shx_envlist_find(const shx_envlist *l, const char *name, size_t n, const char **value);

/* Free every entry; the list is SHX_ENVLIST_INIT afterwards. NULL ok. */
void shx_envlist_free(shx_envlist *l);

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

/* A NULL-terminated array of strings (an environment, an argv) copied,
 * pointers and strings, into one block that free() releases. NULL on
 * ENOMEM. */
char **shx_strv_copy(const char *const *v);

/*
 * A built environment kept for the next command while what it was built
 * from stays the same, so that commands in a row do not each pay for the
 * build. The base (the host's environ, which setenv and putenv change
 * under the library, also in place) is compared by content; the rest of
 * the inputs by a key that the owner changes whenever one of them does.
 */
typedef struct shx_env_memo {
    char **env;  /* the kept array (shx_env_build's), NULL when none */
    char **base; /* a copy of the base it was built from, NULL for none */
    uint64_t key;
} shx_env_memo;

#define SHX_ENV_MEMO_INIT {NULL, NULL, 0}

/* The kept array when it was built from this base (NULL: none) under this
 * key, else NULL. The memo keeps owning it. Costs one comparison of the
 * base's bytes. */
char *const *shx_env_memo_find(const shx_env_memo *m, const char *const *base, uint64_t key);

/* Keep env, built from base under key, in place of what m kept (freed).
 * m owns env afterwards, also on failure, when it is freed: SHEXEC_OK or
 * SHEXEC_ENOMEM (m then keeps nothing). */
int shx_env_memo_keep(shx_env_memo *m, char **env, const char *const *base, uint64_t key);

/* Forget what m keeps; it is SHX_ENV_MEMO_INIT afterwards. */
void shx_env_memo_free(shx_env_memo *m);

/* The value of name in a built array (NULL-terminated "NAME=VALUE"
 * strings), or NULL when absent, env is NULL, or name is not valid. */
const char *shx_env_get(char *const *env, const char *name);

#endif
