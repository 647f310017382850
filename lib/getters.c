/*
 * getters.c - a session's settings read back: timeouts, kill grace, output
 * limit, environment base, shell program, task limit, leftovers policy and
 * watchdog. A NULL session reads as a new session's defaults.
 */
#include "session.h"
#include "watchdog.h"

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
