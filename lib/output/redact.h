/*
 * redact.h - how a run's set of what is hidden from its output is built
 * (redact.c): the default globs, and the set taken from an environment.
 * What the core holds and calls of redaction (the secrets, the session's
 * configuration, the set for a run about to start, a stream's stage) is
 * output_hook.h's, with how redaction works.
 */
#ifndef SHX_REDACT_H
#define SHX_REDACT_H

#include "output/output_hook.h"

/* The default globs: *KEY* *SECRET* *TOKEN* *PASSWORD* *CREDENTIAL*. */
extern const char *const shx_redact_default_globs[];
#define SHX_REDACT_DEFAULT_GLOBS 5

/*
 * The set for a run: the session's values, the values in `env` ("NAME=VALUE"
 * array, may be NULL) whose names match the session's globs (or, with
 * `run_env_globs_default` and no session globs, the defaults), the run's own
 * values (may be NULL), and the session's shapes. *out is NULL when nothing
 * is to be hidden, else a reference the caller releases. 0 or -1 (ENOMEM).
 */
int shx_redact_set_for(shx_redact_cfg *c, const char *const *env, int run_env_globs_default,
                       const shx_secrets *run_values, shx_redact_set **out);

#endif
