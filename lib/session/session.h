/*
 * session.h - the session handle's layout, and session.c's one internal
 * call. The files that read the layout: session.c (its life and pumping),
 * settings.c, getters.c, limits.c and input.c (what it is set to), task.c
 * (its tasks), toolhook.c and testhook.c (the tool layer's and the tests'
 * doors), and run.c, start.c and launch.c (a run's settings over the
 * session's). base.c owns its first member (the error message) and needs
 * nothing else of it; the loop (loop.h) is embedded and knows nothing of
 * the session; the watchdog, the kept shell state and the containment
 * (contain_hook.h) are attachments, NULL when off; runs and tasks are pointers
 * here.
 */
#ifndef SHX_SESSION_H
#define SHX_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include "shx/base.h"
#include "shx/buf.h"
#include "shx/env.h"
#include "loop/loop.h"
#include "loop/proc.h"
#include "output/output_hook.h"
#include "stream/sentinel.h"
#include "shexec.h"

/* How many ids of tasks released unread a session remembers (task.c). */
#define SHX_RELEASED_IDS 64

struct shexec_session {
    shx_base base;                /* first: base.c's (the error message) */
    /* the loop and its jobs' shared state (loop.h): session.c sets its
     * callbacks, the leftovers policy (task.c's) and the end of a round
     * (shx_release_deferred); the kill grace is a setting (settings.c) */
    shx_loop loop;
    char *cwd;
    char **shell_argv;            /* NULL: the default shell */
    char *shell_path;             /* shell_argv[0] resolved, absolute */
    const char *default_shell;
    uint32_t default_timeout_ms, max_timeout_ms;
    uint64_t limit;
    int unit, keep;
    int env_inherit;
    shx_envlist env;
    struct shx_persist *persist;  /* pstate.c's kept shell state; NULL: persist_env off */
    int shell_bash;               /* the shell is bash, not in POSIX mode (settings.c) */
    int shell_plain;              /* it is bash or dash, started directly (settings.c) */
    int devfd;                    /* /dev/fd/N works here: 1, 0 unknown yet, -1 not (channels.c) */
    int wrapper_drops_bash_env;   /* the wrapper program clears BASH_ENV (launch.c) */
    int wrapper_known;            /* whether it does is known (its first run tells) */
    struct shx_prelude_kept *prelude_kept; /* the last prelude opened by path (channels.h) */
    struct shx_prelude_kept *prelude_quiet; /* the same for quiet preludes (launch.h) */
    char **env_view;              /* what shexec_session_getenv()/_environ() read */
    shx_env_memo env_memo;        /* the environment the last command was given (environment.c) */
    uint64_t env_gen;             /* changed by each setter the environment is built from */
    shx_globlist deny, allow;
    char tag[SHX_SENTINEL_TAG_MAX];
    int wrapper_kind;             /* SHEXEC_WRAPPER_*: how the record comes back */
    shx_buf test_script;          /* a sample prelude, for the tests' hook */
    shexec_run *runs;             /* every run not yet freed */
    shexec_task *tasks;           /* every task not yet freed */
    uint32_t max_tasks;
    int leftovers_policy;
    void *tools;                  /* tooldef.c's registry, NULL until made */
    void (*tools_free)(void *);   /* how it is freed */
    char released[SHX_RELEASED_IDS][16]; /* ids of tasks released unread, a ring */
    uint32_t released_next;
    struct shx_watchdog *watchdog; /* watchdog.c's; NULL: off */
    struct shx_contain *contain;  /* contain.c's cgroups; NULL: process groups alone */
    const char *contain_why;      /* why not (static text) */
    uint64_t limits[SHEXEC_LIMITS]; /* every command's, by SHEXEC_LIMIT_* (0: none) */
    shx_proc_observer proc_observer; /* told by every run's process: the watchdog */
    uint32_t idle_ms;             /* every run's idle timeout (0: none), and its action */
    int idle_action;
    uint32_t background_cap_ms;   /* background on timeout: the cap (0: off) */
    uint32_t input_look_ms;       /* silence before looking for a wait for input (0: never) */
    uint64_t input_queue_max;     /* input.c's bound on a command's queued input; 0: the
                                     default (the setter takes no 0) */
    unsigned agent_env;           /* agentenv.c's pipe-only variables still in force */
    struct shx_spill_dir *spill;  /* outputcfg.c's spill directory; NULL: none */
    shx_redact_cfg redact;        /* what output hides (outputcfg.c) */
    int notice_first;             /* the truncation notice goes first */
};




/* Release runs and tasks whose free was asked for from a callback and that
 * have finished, unless a frame still holds them (held). Called where no
 * loop round holds pointers to them. */
void shx_release_deferred(shexec_session *s);

#endif
