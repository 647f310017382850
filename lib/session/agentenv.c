/*
 * agentenv.c - the agent environment preset (see agentenv.h): what keeps a
 * command from stopping for a person (a pager, an editor, a credential or
 * installer prompt) or from filling its output with colour codes.
 */
#include "session/agentenv.h"

#include <stdlib.h>
#include <string.h>

#include "shexec.h"

static const char *const preset[][2] = {
    {"PAGER", "cat"},
    {"GIT_PAGER", "cat"},
    {"GH_PAGER", "cat"},
    {"MANPAGER", "cat"},
    {"SYSTEMD_PAGER", "cat"},
    {"GIT_TERMINAL_PROMPT", "0"},
    {"GIT_EDITOR", "false"},
    {"EDITOR", "false"},
    {"DEBIAN_FRONTEND", "noninteractive"},
    {"PIP_NO_INPUT", "1"},
    /* removed: it tells programs the host's terminal shows 24-bit colour,
     * which no command of an agent writes to (a pty run's terminal is
     * read by the library, not shown) */
    {"COLORTERM", NULL},
};

/* The pipe-only ones, by bit. */
static const char *const pipe_only[][2] = {{"TERM", "dumb"}, {"NO_COLOR", "1"}};
#define PIPE_ONLY (sizeof pipe_only / sizeof *pipe_only)

int shx_agent_env_preset(size_t i, const char **name, const char **value)
{
    if (i >= sizeof preset / sizeof *preset)
        return 0;
    *name = preset[i][0];
    *value = preset[i][1];
    return 1;
}

/* In the order that decides a command's character set: LC_ALL over
 * LC_CTYPE over LANG. */
static const char *const locale_vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};

const char *shx_agent_env_locale_var(size_t i)
{
    return i < sizeof locale_vars / sizeof *locale_vars ? locale_vars[i] : NULL;
}

/* Unset (or empty, which POSIX reads as unset), C or POSIX: ASCII only. */
static int plain(const char *v)
{
    return !v || !*v || strcmp(v, "C") == 0 || strcmp(v, "POSIX") == 0;
}

/* Whether the i-th locale variable is set to SHX_AGENT_UTF8_LOCALE, given
 * their values as a command would get them. */
static int locale_fix(size_t i, const char *const *values)
{
    const char *v = values[i];
    if (i < 2) /* LC_ALL, LC_CTYPE: only one set to C or POSIX, which would win */
        return v && *v && plain(v);
    /* LANG: unset or plain, and LC_ALL not naming another locale over it */
    return plain(v) && plain(values[0]);
}

unsigned shx_agent_env_locale(const shx_envlist *session_env, int inherit)
{
    const char *values[3];
    for (size_t i = 0; i < 3; i++)
        if (!shx_envlist_find(session_env, locale_vars[i], strlen(locale_vars[i]), &values[i]))
            values[i] = inherit ? getenv(locale_vars[i]) : NULL;
    /* all decided before any is set: setting one frees the value read for it */
    unsigned fix = 0;
    for (size_t i = 0; i < 3; i++)
        fix |= (unsigned)locale_fix(i, values) << i;
    return fix;
}

unsigned shx_agent_env_pipe_bits(void)
{
    return (1u << PIPE_ONLY) - 1;
}

static int names(const shx_envlist *l, const char *name)
{
    const char *value;
    return l && shx_envlist_find(l, name, strlen(name), &value);
}

int shx_agent_env_overlay(unsigned bits, const shx_envlist *session_env,
                          const shx_envlist *run_env, int pty, shx_envlist *scratch,
                          const shx_envlist **use)
{
    *use = run_env;
    if (pty || !bits)
        return SHEXEC_OK;
    *scratch = (shx_envlist)SHX_ENVLIST_INIT;
    for (size_t i = 0; i < PIPE_ONLY; i++) {
        const char *name = pipe_only[i][0];
        if (!(bits & (1u << i)) || names(session_env, name) || names(run_env, name))
            continue;
        if (shx_envlist_set(scratch, name, pipe_only[i][1]) != SHEXEC_OK)
            goto nomem;
    }
    for (size_t i = 0; run_env && i < run_env->n; i++)
        if (shx_envlist_set(scratch, run_env->names[i], run_env->values[i]) != SHEXEC_OK)
            goto nomem;
    *use = scratch;
    return SHEXEC_OK;
nomem:
    shx_envlist_free(scratch);
    *use = run_env;
    return SHEXEC_ENOMEM;
}

void shx_agent_env_done(shx_envlist *scratch, const shx_envlist *use)
{
    if (use == scratch)
        shx_envlist_free(scratch);
}
