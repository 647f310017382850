/*
 * pstate.c - the shell state a session keeps (persist.c takes it from a
 * finished run), given out: to the next command (its environment, the
 * `declare` lines and function entries of its prelude), and changed by the
 * host (setenv, the deny list, another shell). The session holds it while
 * shexec_session_set_persist_env() is on.
 */
#include "persist/pstate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "persist/replay.h"
#include "shx/platform.h"

shx_persist *shx_persist_new(void)
{
    return calloc(1, sizeof(shx_persist)); /* SHX_ENVLIST_INIT and SHX_BUF_INIT are all zeros */
}

void shx_persist_free(shx_persist *p)
{
    if (!p)
        return;
    shx_persist_drop_shell(p);
    shx_envlist_free(&p->env);
    free(p);
}

int shx_persist_replay(const shx_persist *p, const shx_envlist *run_env, shx_buf *out)
{
    if (!p)
        return 0;
    for (size_t i = 0; i < p->vars.n; i++) {
        const char *name = p->vars.names[i];
        const char *v;
        /* the run's own variable of that name is what the command gets */
        if (!p->vars.values[i] || shx_envlist_find(run_env, name, strlen(name), &v))
            continue;
        shx_buf_puts(out, p->vars.values[i]); /* a line, with its newline */
    }
    return out->failed ? -1 : 0;
}

int shx_persist_func_names(const shx_persist *p, shx_buf *out, size_t *n)
{
    *n = 0;
    if (!p)
        return 0;
    for (size_t i = 0; i < p->funcs.n; i++) {
        if (!p->funcs.values[i])
            continue;
        shx_buf_puts(out, p->funcs.names[i]);
        shx_buf_putc(out, '\0');
        (*n)++;
    }
    return out->failed ? -1 : 0;
}

int shx_persist_func_entries(const shx_persist *p, shx_buf *out)
{
    if (!p)
        return 0;
    for (size_t i = 0; i < p->funcs.n; i++) {
        if (!p->funcs.values[i])
            continue;
        shx_replay_func_env_name(out, p->funcs.names[i]);
        shx_buf_putc(out, '=');
        shx_buf_puts(out, p->funcs.values[i]);
        shx_buf_putc(out, '\0');
    }
    return out->failed ? -1 : 0;
}

void shx_persist_rules_changed(shx_persist *p)
{
    if (p)
        p->listing_ok = 0;
}

/* The most text times kept functions shx_persist_settled() reads: a few
 * milliseconds at worst, a model's many functions and long text included */
#define SETTLED_SCAN_MAX ((uint64_t)1 << 22)

int shx_persist_settled(const shx_persist *p, const char *cmd, size_t len)
{
    if (!p || !p->listing_ok || (uint64_t)p->funcs.n * len > SETTLED_SCAN_MAX)
        return 0;
    for (size_t i = 0; i < p->funcs.n; i++) {
        const char *name = p->funcs.names[i];
        if (!p->funcs.values[i])
            continue;
        if (shx_memmem(cmd, len, name, strlen(name)))
            return 0;
    }
    return 1;
}

/* Does bash read a variable of this name by itself? All its own are upper
 * case (PATH, IFS, HOME, TIMEFORMAT, LC_ALL, ...) but three that only an
 * interactive shell reads; those are taken as read all the same. A name
 * with a lower-case letter is none of them. */
static int read_by_bash(const char *name)
{
    static const char *const lower_case_own[] = {"auto_resume", "histchars", "ignoreeof"};
    for (size_t i = 0; i < sizeof lower_case_own / sizeof *lower_case_own; i++)
        if (strcmp(name, lower_case_own[i]) == 0)
            return 1;
    for (const char *c = name; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            return 0;
    return 1;
}

int shx_persist_unread(const shx_persist *p)
{
    if (!p)
        return 1;
    for (size_t i = 0; i < p->funcs.n; i++)
        if (p->funcs.values[i])
            return 0;
    for (size_t i = 0; i < p->vars.n; i++)
        if (p->vars.values[i] && read_by_bash(p->vars.names[i]))
            return 0;
    return 1;
}

void shx_persist_drop_shell(shx_persist *p)
{
    if (!p)
        return;
    shx_buf_free(&p->listing);
    p->listing_ok = 0;
    shx_envlist_free(&p->vars);
    shx_envlist_free(&p->funcs);
}

int shx_persist_setenv(shx_persist *p, const char *name, const char *value)
{
    if (!p)
        return SHEXEC_OK;
    p->listing_ok = 0;
    if (!p->env_set)
        return SHEXEC_OK;
    const char *v;
    if (shx_envlist_find(&p->vars, name, strlen(name), &v) && v &&
        shx_envlist_set(&p->vars, name, NULL) != SHEXEC_OK)
        return SHEXEC_ENOMEM;
    int rc = shx_envlist_set(&p->env, name, value);
    return rc == SHEXEC_EINVAL ? SHEXEC_OK : rc;
}

const shx_envlist *shx_persist_env(const shx_persist *p)
{
    return p && p->env_set ? &p->env : NULL;
}
