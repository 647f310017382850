/*
 * redact.h - what is hidden from a command's output, and the stage of a
 * stream that hides it. A session (and a run) names secrets: literal values
 * under a name, the values of environment variables whose names match
 * globs, and the shapes of known keys (keyscan.h). Before a run starts they
 * become one immutable set, shared by reference (a session reuses its last
 * set while nothing in it changed); each stream then replaces every literal
 * with "[REDACTED:NAME]" (acreplace.h, one pass whatever the number of
 * secrets), then every key shape.
 */
#ifndef SHX_REDACT_H
#define SHX_REDACT_H

#include <stddef.h>
#include <stdint.h>

#include "output/acreplace.h"
#include "shx/buf.h"
#include "shx/env.h"
#include "output/keyscan.h"

/* Values shorter than this are not taken from the environment (too common
 * to hide without hiding ordinary text), and the host may not register
 * shorter ones. */
#define SHX_REDACT_ENV_MIN 8
#define SHX_REDACT_VALUE_MIN 4
#define SHX_REDACT_VALUE_MAX 65536
#define SHX_REDACT_NAME_MAX 64
#define SHX_REDACT_MAX_VALUES 100000

typedef struct shx_secret {
    char *name;
    char *value;
    size_t len;
} shx_secret;

/* Literal secrets, in the order registered. */
typedef struct shx_secrets {
    shx_secret *v;
    size_t n, cap;
} shx_secrets;

/* A name fit for a marker: [A-Za-z0-9_], 1 to SHX_REDACT_NAME_MAX bytes. */
int shx_redact_name_valid(const char *name);
/* Add a copy. 0, -1 on ENOMEM or a full list (SHX_REDACT_MAX_VALUES). */
int shx_secrets_add(shx_secrets *l, const char *name, const void *value, size_t len);
void shx_secrets_free(shx_secrets *l);

/* An immutable set, built for runs. */
typedef struct shx_redact_set {
    shx_acr *literals;   /* NULL: none */
    unsigned shapes;     /* SHX_KEYSCAN_* */
    unsigned refs;
    uint64_t fingerprint;
} shx_redact_set;

/* What a session asks for. */
typedef struct shx_redact_cfg {
    shx_secrets values;
    char **globs;        /* env names to take values of; NULL with env_on: none yet */
    size_t nglobs;
    int env_on;
    unsigned shapes;
    shx_redact_set *last; /* the set last built, reused while nothing changed */
} shx_redact_cfg;

/* The default globs: *KEY* *SECRET* *TOKEN* *PASSWORD* *CREDENTIAL*. */
extern const char *const shx_redact_default_globs[];
#define SHX_REDACT_DEFAULT_GLOBS 5

/* Take the env globs (copied; NULL: the defaults; n 0: env values off).
 * 0 or -1 (ENOMEM: the previous globs stay). */
int shx_redact_cfg_set_globs(shx_redact_cfg *c, const char *const *globs, size_t n);
void shx_redact_cfg_free(shx_redact_cfg *c);

/*
 * The set for a run: the session's values, the values in `env` ("NAME=VALUE"
 * array, may be NULL) whose names match the session's globs (or, with
 * `run_env_globs_default` and no session globs, the defaults), the run's own
 * values (may be NULL), and the session's shapes. *out is NULL when nothing
 * is to be hidden, else a reference the caller releases. 0 or -1 (ENOMEM).
 */
int shx_redact_set_for(shx_redact_cfg *c, const char *const *env, int run_env_globs_default,
                       const shx_secrets *run_values, shx_redact_set **out);
void shx_redact_set_release(shx_redact_set *set);
/*
 * shx_redact_set_for() for a run about to start, its environment built
 * here: the base (NULL: none) with the session's variables and, with
 * `own_env`, the run's (then the default globs stand in for none).
 * 0 or -1 (ENOMEM).
 */
int shx_redact_set_for_run(shx_redact_cfg *c, const char *const *base,
                           const shx_envlist *session_env, const shx_envlist *run_env,
                           int own_env, const shx_secrets *run_values, shx_redact_set **out);

/* One stream's stage. */
typedef struct shx_redactor {
    shx_redact_set *set;  /* a reference */
    shx_acr_stream literals;
    shx_keyscan keys;
    shx_buf mid;          /* between literals and shapes */
} shx_redactor;

/* Start a stream's stage with a reference of its own to set. */
void shx_redactor_init(shx_redactor *r, shx_redact_set *set);
/* Hide what is in data; the settled bytes are appended to out. 0 or -1
 * (ENOMEM: some bytes may have passed unhidden, never been lost). */
int shx_redactor_feed(shx_redactor *r, const char *data, size_t len, shx_buf *out);
/* End of stream: what was held back is appended to out. */
int shx_redactor_finish(shx_redactor *r, shx_buf *out);
/* Occurrences hidden so far. */
uint64_t shx_redactor_count(const shx_redactor *r);
void shx_redactor_free(shx_redactor *r);

#endif
