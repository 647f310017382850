/*
 * launch.h - what a run's shell is given (launch.c), resolved once when the
 * run starts, for start.c to spawn.
 */
#ifndef SHX_LAUNCH_H
#define SHX_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "shx/buf.h"
#include "shell/channels.h"
#include "contain/contain_hook.h"
#include "output/output_hook.h"
#include "shexec.h"

typedef struct shx_launch {
    char *dir;                /* absolute working directory, checked to exist */
    char **env;               /* the built environment (shx_env_build) */
    int env_shared;           /* it is the session's (shx_session_env_for_run): not freed */
    char **envp;              /* the same with PWD set to dir, and the library's entries */
    shx_buf added;            /* those entries, NUL-separated: PWD, BASH_ENV, functions */
    const char *path;         /* the program: the resolved shell or wrapper */
    const char **argv;        /* its argv: prefix, then tail */
    shx_buf tail;             /* what follows the prefix, NUL-separated */
    int mode;                 /* SHX_LAUNCH_* (script.h) */
    int capture;              /* the shell lists its state in its report */
    int quiet;                /* bash's prelude gives kept state, and no report is made */
    int marker;               /* its prelude says it ran (bash through a wrapper) */
    int channel;              /* the report channel's shell end (local modes), -1: none */
    int channel_at;           /* its number in the shell */
    shx_report report;        /* its host end, and whom it hears */
    int prelude_fd;           /* the sealed prelude (local modes that have one), -1: none */
    int prelude_at;
    int prelude_kept;         /* prelude_fd is the session's (passed, never closed here): the
                                 modes whose shell opens it by path, not a loader's */
    int script_fd;            /* a command too long for an argument, -1: none */
    int script_at;
    int guard;                /* a wrapped bash's first run: BASH_ENV, and the loader
                                 behind a guard in case the wrapper dropped it */
    uint64_t limit;           /* output limit, unit, keep */
    int unit, keep;
    uint32_t timeout_ms;      /* 0: none */
    char *cgroup;             /* the command's cgroup (contain_hook.h), NULL: none */
    char *cgroup_v1[SHX_CTRLS]; /* its cgroups in v1 hierarchies, for limits; NULL: none */
    uint64_t limits[SHEXEC_LIMITS]; /* its limits, by SHEXEC_LIMIT_* (0: none) */
    shx_redact_set *redact;   /* what its output hides (output_hook.h), NULL: nothing */
} shx_launch;

/* Every setting the run starts with, the run's own over the session's,
 * into l: the one step that prepares a run, where each attachment adds
 * its part through its hook (the redaction set, the agent preset, the kept
 * state, the cgroup). SHEXEC_OK, or an error with the session's message
 * set and nothing left to free. */
int shx_launch_resolve(shx_launch *l, shexec_run *r);
/* Close and free what l holds (its channel too, unless taken: -1; its
 * cgroups, unless taken: NULL, are removed; its reference to the
 * redaction set). */
void shx_launch_free(shx_launch *l);

#endif
