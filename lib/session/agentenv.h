/*
 * agentenv.h - the agent environment preset (shexec_session_apply_agent_env,
 * settings.c): the session variables it sets, and the two it adds to pipe
 * runs only (TERM=dumb, NO_COLOR=1: a pty run keeps its terminal's), each
 * given up where the host sets that name itself, on the session or the run.
 * Pure: lists in, lists out.
 */
#ifndef SHX_AGENTENV_H
#define SHX_AGENTENV_H

#include <stddef.h>

#include "shx/env.h"

/* The i-th variable the preset sets on the session (name, value), or 0
 * past the last. LANG is not among them: set only where no locale is. */
int shx_agent_env_preset(size_t i, const char **name, const char **value);

/* The bits of a session's pipe-only variables, all of them in force. */
unsigned shx_agent_env_pipe_bits(void);

/*
 * The list a run's environment is built with over the session's: run_env
 * (NULL: none), with, for a pipe run (pty 0) of a session whose preset
 * bits are set, its pipe-only variables that neither the session's own
 * list (session_env) nor run_env names. *use is run_env when nothing is
 * added, else scratch (free it with shx_agent_env_done). SHEXEC_OK, or
 * SHEXEC_ENOMEM (nothing to free).
 */
int shx_agent_env_overlay(unsigned bits, const shx_envlist *session_env,
                          const shx_envlist *run_env, int pty, shx_envlist *scratch,
                          const shx_envlist **use);
/* Free scratch if the overlay used it. */
void shx_agent_env_done(shx_envlist *scratch, const shx_envlist *use);

#endif
