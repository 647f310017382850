/*
 * session.h - the session handle's layout, shared by session.c (its life
 * and pumping), settings.c (what it is set to), base.c (errors) and
 * toolhook.c (the tool layer's door); it includes the run, task and loop
 * headers, since a session holds all three.
 */
#ifndef SHX_SESSION_H
#define SHX_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include "base.h"
#include "buf.h"
#include "env.h"
#include "loop.h"
#include "run.h"
#include "sentinel.h"
#include "shexec.h"
#include "task.h"
#include "tool.h"

struct shexec_session {
    const shx_loop_hooks *hooks;
    char *cwd;
    char **shell_argv;            /* NULL: the default shell */
    char *shell_path;             /* shell_argv[0] resolved, absolute */
    const char *default_shell;
    uint32_t default_timeout_ms, max_timeout_ms, kill_grace_ms;
    uint64_t limit;
    int unit, keep;
    int env_inherit;
    shx_envlist env;
    int persist_env;              /* shexec_session_set_persist_env() */
    int penv_set;                 /* penv holds the environment a run left (else: base + env) */
    shx_envlist penv;             /* that environment, in the shell's order */
    shx_envlist pvars;            /* bash: shell variables, name -> the `declare` line replaying it */
    shx_envlist pfuncs;           /* bash: functions, name -> "() { ...}" (NULL: dropped) */
    shx_buf plisting;             /* the listing the state was last taken from */
    int plisting_ok;              /* plisting is what gave the state as it is now */
    int listing_kind;             /* once the shell has listed: 1 declare -p, 2 export -p */
    int shell_bash;               /* the shell is bash, not in POSIX mode (settings.c) */
    int devfd;                    /* /dev/fd/N works here: 1, 0 unknown yet, -1 not (channels.c) */
    int wrapper_drops_bash_env;   /* the wrapper program cleared BASH_ENV once (launch.c) */
    char **env_view;              /* what shexec_session_getenv()/_environ() read */
    shx_globlist deny, allow;
    char tag[SHX_SENTINEL_TAG_MAX];
    int wrapper_kind;             /* SHEXEC_WRAPPER_*: how the record comes back */
    shx_buf test_script;          /* a sample prelude, for the tests' hook */
    shx_buf errmsg;
    shexec_run *runs;             /* every run not yet freed */
    shexec_run *active;           /* runs with a live process */
    shexec_task *tasks;           /* every task not yet freed */
    uint32_t max_tasks;
    int leftovers_policy;
    int in_loop;                  /* inside the loop (callbacks run there) */
    int use_pidfd;
    uint64_t output_spins;        /* rounds that looked again before sleeping (loop.c) */
    int procfs_seen;              /* /proc listed processes once: not asked again */
    shx_tool_registry tools;      /* tooldef.c's */
    char released[SHX_RELEASED_IDS][16]; /* ids of tasks released unread, a ring */
    uint32_t released_next;
    int watchdog_fd;              /* write end of the watchdog's pipe, -1: none (watchdog.c) */
    unsigned long long watchdog_id[2]; /* what it is (shx_fd_identity): a host may close it */
    pid_t watchdog_pid;
#define SHX_WD_FORGET_BATCH 8
    pid_t watchdog_forget[SHX_WD_FORGET_BATCH]; /* ended groups not yet told */
    size_t watchdog_nforget;
};


int shx_settings_init(shexec_session *s);
void shx_settings_free(shexec_session *s);

/* The session's hand-off of a foreground run's leftovers: per policy and
 * room, adopted as a task (1, *adopted: its run) or not (0). */
int shx_task_adopt_leftovers(shexec_session *s, shexec_run *r, shexec_run **adopted);

/* Release runs and tasks whose free was asked for from a callback and that
 * have finished, unless a frame still holds them (held). Called where no
 * loop round holds pointers to them. */
void shx_release_deferred(shexec_session *s);
int shx_check_limit(shexec_session *s, uint64_t limit, int unit, int keep);
int shx_env_error(shexec_session *s, int rc, const char *name);
int shx_session_resolve_dir(shexec_session *s, const char *dir, char **out);
int shx_session_check_dir(shexec_session *s, const char *dir);

#endif
