/*
 * limits.c - the limits on a command's processes as the host sets and
 * reads them (shexec_session_set_limit() and the like, in shexec.h): set on
 * the session or the run, refused at once where the session's cgroups
 * cannot honour them (never ignored), and what a finished run ran into.
 * Where the limits are written and read is contain.c's; whether a value is
 * one a limit may take is checked here, as it needs no cgroup (a build
 * without cgroups checks a run's limits all the same).
 */
#include "contain/contain_hook.h"
#include "run/run.h"
#include "session/session.h"

static const char *const controller[SHEXEC_LIMITS] = {"memory", "memory", "pids", "cpu"};

/* 0 when value is one limit (SHEXEC_LIMIT_*) may take, else -1 with
 * *reason: an unknown limit, a CPU limit below 10, a memory limit below 1
 * MiB (0, none, is always valid). */
static int limit_valid(int limit, uint64_t value, const char **reason)
{
    if (limit < 0 || limit >= SHEXEC_LIMITS)
        *reason = "unknown limit";
    else if (limit == SHEXEC_LIMIT_CPU && value && value < 10)
        *reason = "a CPU limit below 10 thousandths of a CPU";
    else if (limit == SHEXEC_LIMIT_CPU && value > UINT64_MAX / 100)
        *reason = "a CPU limit too large";
    else if (limit == SHEXEC_LIMIT_MEMORY && value && value < ((uint64_t)1 << 20))
        *reason = "a memory limit below 1 MiB";
    else
        return 0;
    return -1;
}

/* The value is valid, and, when not 0, the session can honour it now. */
static int check(shexec_session *s, int limit, uint64_t value)
{
    const char *why = NULL;
    if (limit_valid(limit, value, &why) != 0)
        return shx_fail(s, SHEXEC_EINVAL, "%s", why);
    if (!value)
        return SHEXEC_OK;
    if (!s->contain)
        return shx_fail(s, SHEXEC_ESTATE, "limits need containment by cgroup "
                        "(shexec_session_set_containment), which the session does not have");
    if (shx_contain_can_limit(s->contain, limit, &why) != 0)
        return shx_fail(s, SHEXEC_ESYS, "the %s controller is not available for the commands' "
                        "cgroups: %s", controller[limit], why);
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_set_limit(shexec_session *s, int limit, uint64_t value)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    int rc = check(s, limit, value);
    if (rc == SHEXEC_OK)
        s->limits[limit] = value;
    return rc;
}

SHEXEC_API uint64_t shexec_session_limit(const shexec_session *s, int limit)
{
    return s && limit >= 0 && limit < SHEXEC_LIMITS ? s->limits[limit] : 0;
}

SHEXEC_API int shexec_run_set_limit(shexec_run *run, int limit, uint64_t value)
{
    int rc = shx_run_configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    const char *why = NULL;
    if (limit_valid(limit, value, &why) != 0)
        return shx_fail(run->s, SHEXEC_EINVAL, "%s", why);
    run->limits[limit] = value;
    run->limits_set |= 1u << limit;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_limit_hit(const shexec_run *run)
{
    return run && run->state > SHEXEC_STATE_RUNNING ? run->limit_hits : 0;
}
