/*
 * environment.c - the environment a command starts with (environment.h).
 * Building it is most of a short command's own cost to the host, so the
 * last one is kept (shx_env_memo) and given again while the session's
 * settings (their generation, env_gen) and the host's environ (compared by
 * content: setenv and putenv change it under the library) stay the same.
 */
#include "session/environment.h"

#include "session/agentenv.h"
#include "persist/persist_hook.h"
#include "session/session.h"

extern char **environ;

int shx_session_env_build(const shexec_session *s, char ***out, const shx_envlist *run_ov)
{
    const shx_envlist *kept = shx_persist_env(s->persist);
    if (kept)
        return shx_env_build(out, NULL, kept, run_ov, &s->deny, &s->allow);
    return shx_env_build(out, s->env_inherit ? (const char *const *)environ : NULL, &s->env, run_ov,
                         &s->deny, &s->allow);
}

/* The kept one, or one built and kept in its place. The overlay is the
 * agent preset's alone: whether there is one is all of it that env_gen
 * does not cover. */
static int shared(shexec_session *s, const shx_envlist *over, char ***out)
{
    const char *const *base = s->env_inherit ? (const char *const *)environ : NULL;
    uint64_t key = s->env_gen << 1 | (over && over->n > 0);
    char *const *kept = shx_env_memo_find(&s->env_memo, base, key);
    if (!kept) {
        char **env;
        if (shx_session_env_build(s, &env, over) != SHEXEC_OK ||
            shx_env_memo_keep(&s->env_memo, env, base, key) != SHEXEC_OK)
            return SHEXEC_ENOMEM;
        kept = env;
    }
    *out = (char **)kept;
    return SHEXEC_OK;
}

int shx_session_env_for_run(shexec_session *s, const shx_envlist *run_env, int pty, char ***out,
                            int *is_shared)
{
    *out = NULL;
    *is_shared = !s->persist && (!run_env || !run_env->n);
    shx_envlist scratch;
    const shx_envlist *over;
    int rc = shx_agent_env_overlay(s->agent_env, &s->env, run_env, pty, &scratch, &over);
    if (rc == SHEXEC_OK)
        rc = *is_shared ? shared(s, over, out) : shx_session_env_build(s, out, over);
    shx_agent_env_done(&scratch, over);
    return rc;
}
