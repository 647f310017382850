/*
 * getters.c - a session's settings read back: timeouts, kill grace, output
 * limit, environment base, shell program, task limit, leftovers policy,
 * watchdog and persisted state; and the environment the next command gets.
 * A NULL session reads as a new session's defaults.
 */
#include <string.h>

#include "session/session.h"
#include "session/environment.h"
#include "contain/contain_hook.h"

SHEXEC_API int shexec_session_timeouts_ms(const shexec_session *s, uint32_t *default_ms,
                                          uint32_t *max_ms)
{
    if (default_ms)
        *default_ms = s ? s->default_timeout_ms : SHEXEC_DEFAULT_TIMEOUT_MS;
    if (max_ms)
        *max_ms = s ? s->max_timeout_ms : SHEXEC_DEFAULT_MAX_TIMEOUT_MS;
    return s ? SHEXEC_OK : SHEXEC_EINVAL;
}

SHEXEC_API uint32_t shexec_session_kill_grace_ms(const shexec_session *s)
{
    return s ? s->loop.jobs.kill_grace_ms : SHEXEC_DEFAULT_KILL_GRACE_MS;
}

SHEXEC_API uint32_t shexec_session_leftovers_drain_ms(const shexec_session *s)
{
    return s ? s->loop.jobs.drain_ms : SHEXEC_DEFAULT_LEFTOVERS_DRAIN_MS;
}

SHEXEC_API int shexec_session_output_limit(const shexec_session *s, uint64_t *limit, int *unit,
                                           int *keep)
{
    if (limit)
        *limit = s ? s->limit : SHEXEC_DEFAULT_OUTPUT_LIMIT;
    if (unit)
        *unit = s ? s->unit : SHEXEC_UNIT_CHARS;
    if (keep)
        *keep = s ? s->keep : SHEXEC_KEEP_HEAD;
    return s ? SHEXEC_OK : SHEXEC_EINVAL;
}

SHEXEC_API int shexec_session_env_inherit(const shexec_session *s)
{
    return s ? s->env_inherit : 1;
}

SHEXEC_API uint32_t shexec_session_max_tasks(const shexec_session *s)
{
    return s ? s->max_tasks : SHEXEC_DEFAULT_MAX_TASKS;
}

SHEXEC_API int shexec_session_on_leftovers(const shexec_session *s)
{
    return s ? s->leftovers_policy : SHEXEC_ON_LEFTOVERS_ADOPT;
}

SHEXEC_API int shexec_session_watchdog(const shexec_session *s)
{
    return s && shx_watchdog_pid(s->watchdog) > 0;
}

SHEXEC_API const char *const *shexec_session_shell_argv(const shexec_session *s)
{
    return s ? (const char *const *)s->shell_argv : NULL;
}

SHEXEC_API int shexec_session_persist_env(const shexec_session *s)
{
    return s && s->persist;
}

/* The environment the session's next command starts with, before its run's
 * own variables, without PWD (always the session cwd): built anew. */
static int env_view(shexec_session *s)
{
    char **env = NULL;
    if (shx_session_env_build(s, &env, NULL) != SHEXEC_OK)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; env[i]; i++)
        if (strncmp(env[i], "PWD=", 4) != 0)
            env[k++] = env[i];
    env[k] = NULL;
    shx_env_free(s->env_view);
    s->env_view = env;
    return SHEXEC_OK;
}

SHEXEC_API const char *shexec_session_getenv(shexec_session *s, const char *name)
{
    if (!s)
        return NULL;
    shx_ok(s);
    if (!shx_env_name_valid(name)) {
        shx_fail(s, SHEXEC_EINVAL, "invalid environment variable name \"%s\"",
                 name ? name : "(null)");
        return NULL;
    }
    if (env_view(s) != SHEXEC_OK)
        return NULL;
    return shx_env_get(s->env_view, name);
}

SHEXEC_API int shexec_session_environ(const char *const **out, shexec_session *s)
{
    if (out)
        *out = NULL;
    if (!out || !s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    int rc = env_view(s);
    if (rc == SHEXEC_OK)
        *out = (const char *const *)s->env_view;
    return rc;
}

SHEXEC_API int shexec_session_containment(const shexec_session *s, const char **detail)
{
    if (detail)
        *detail = !s ? "no session" : s->contain ? shx_contain_dir(s->contain)
                                    : s->contain_why ? s->contain_why : "turned off";
    return s && s->contain ? SHEXEC_CONTAIN_CGROUP : SHEXEC_CONTAIN_GROUP;
}
