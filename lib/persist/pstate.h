/*
 * pstate.h - the layout of the shell state a session keeps (pstate.c),
 * which persist.c fills from a finished run; the calls that make, give out
 * and change it are the core's (persist_hook.h).
 */
#ifndef SHX_PSTATE_H
#define SHX_PSTATE_H

#include "shx/buf.h"
#include "shx/env.h"
#include "persist/persist_hook.h"

struct shx_persist {
    int env_set;                  /* env holds the environment a run left (else: base + overrides) */
    shx_envlist env;              /* that environment, in the shell's order */
    shx_envlist vars;             /* bash: shell variables, name -> the `declare` line replaying it */
    shx_envlist funcs;            /* bash: functions, name -> "() { ...}" (NULL: dropped) */
    shx_buf listing;              /* the listing the state was last taken from */
    int listing_ok;               /* listing is what gave the state as it is now */
};

#endif
