/*
 * pstate.c - the shell state a session keeps (persist.c takes it from a
 * finished run), given out: to the next command (its environment, the
 * `declare` lines and function entries of its prelude), to the host
 * (shexec_session_getenv, shexec_session_environ), and changed by the
 * host (setenv, the deny list, turning the setting off).
 */
#include "pstate.h"

#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "session.h"
#include "run.h"

extern char **environ;

int shx_persist_replay(const shexec_session *s, const shexec_run *r, shx_buf *out)
{
    for (size_t i = 0; i < s->pvars.n; i++) {
        const char *name = s->pvars.names[i];
        const char *v;
        /* the run's own variable of that name is what the command gets */
        if (!s->pvars.values[i] || shx_envlist_find(&r->env, name, strlen(name), &v))
            continue;
        shx_buf_puts(out, s->pvars.values[i]); /* a line, with its newline */
    }
    return out->failed ? -1 : 0;
}

int shx_persist_func_names(const shexec_session *s, shx_buf *out, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < s->pfuncs.n; i++) {
        if (!s->pfuncs.values[i])
            continue;
        shx_buf_puts(out, s->pfuncs.names[i]);
        shx_buf_putc(out, '\0');
        (*n)++;
    }
    return out->failed ? -1 : 0;
}

int shx_persist_func_entries(const shexec_session *s, shx_buf *out)
{
    for (size_t i = 0; i < s->pfuncs.n; i++) {
        if (!s->pfuncs.values[i])
            continue;
        shx_replay_func_env_name(out, s->pfuncs.names[i]);
        shx_buf_putc(out, '=');
        shx_buf_puts(out, s->pfuncs.values[i]);
        shx_buf_putc(out, '\0');
    }
    return out->failed ? -1 : 0;
}

void shx_persist_rules_changed(shexec_session *s)
{
    s->plisting_ok = 0;
}

void shx_persist_drop(shexec_session *s, int all)
{
    shx_buf_free(&s->plisting);
    s->plisting_ok = 0;
    s->listing_kind = 0;
    shx_envlist_free(&s->pvars);
    shx_envlist_free(&s->pfuncs);
    if (all) {
        shx_envlist_free(&s->penv);
        s->penv_set = 0;
    }
    shx_env_free(s->env_view);
    s->env_view = NULL;
}

int shx_persist_setenv(shexec_session *s, const char *name, const char *value)
{
    s->plisting_ok = 0;
    if (!s->penv_set)
        return SHEXEC_OK;
    const char *v;
    if (shx_envlist_find(&s->pvars, name, strlen(name), &v) && v &&
        shx_envlist_set(&s->pvars, name, NULL) != SHEXEC_OK)
        return SHEXEC_ENOMEM;
    int rc = shx_envlist_set(&s->penv, name, value);
    return rc == SHEXEC_EINVAL ? SHEXEC_OK : rc;
}

int shx_persist_env_build(const shexec_session *s, char ***out, const shx_envlist *run_ov)
{
    if (s->penv_set)
        return shx_env_build(out, NULL, &s->penv, run_ov, &s->deny, &s->allow);
    return shx_env_build(out, s->env_inherit ? (const char *const *)environ : NULL, &s->env, run_ov,
                         &s->deny, &s->allow);
}

SHEXEC_API int shexec_session_set_persist_env(shexec_session *s, int on)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    if (on && s->wrapper_kind != SHEXEC_WRAPPER_LOCAL)
        return shx_fail(s, SHEXEC_ESTATE, "a remote wrapper cannot report the shell's state: "
                        "persisting it needs SHEXEC_WRAPPER_LOCAL");
    if (!on)
        shx_persist_drop(s, 1);
    s->persist_env = on ? 1 : 0;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_persist_env(const shexec_session *s)
{
    return s ? s->persist_env : 0;
}

/* The environment the session's next command starts with, before its run's
 * own variables, without PWD (always the session cwd): built anew. */
static int env_view(shexec_session *s)
{
    char **env = NULL;
    if (shx_persist_env_build(s, &env, NULL) != SHEXEC_OK)
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
