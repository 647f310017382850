/*
 * environment.h - environment.c: the environment a command of the session
 * starts with, built from the session's settings (settings.c), the host's
 * environ and the agent preset (agentenv.h), and kept from one command to
 * the next while none of them changes.
 */
#ifndef SHX_ENVIRONMENT_H
#define SHX_ENVIRONMENT_H

#include "shx/env.h"
#include "shexec.h"

/* The environment a command of the session starts with, built in *out:
 * the one the last run left when the session keeps the shell's state and
 * has taken one, else the base (the host's environ, or none) with the
 * session's overrides; then run_ov (NULL: none), the deny and allow
 * lists. SHEXEC_OK or SHEXEC_ENOMEM. */
int shx_session_env_build(const shexec_session *s, char ***out, const shx_envlist *run_ov);

/* The environment a run starts with, its own variables run_env (NULL: they
 * go another way, a wrapper's prelude) and the agent preset's pipe-only
 * ones (not on a terminal, pty) in it. *shared says whose it is: 0, the
 * caller's to free (shx_env_free); 1, the session's, kept for the next
 * command, which the caller must neither free nor keep past the call that
 * starts the command. It is the session's when the run sets no variable
 * and the session does not keep the shell's state (its runs own theirs).
 * SHEXEC_OK or SHEXEC_ENOMEM (*out NULL). */
int shx_session_env_for_run(shexec_session *s, const shx_envlist *run_env, int pty, char ***out,
                            int *shared);

#endif
