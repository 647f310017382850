/*
 * settings.c - what a session is set to: the tracked working directory, the
 * shell or wrapper program (resolved once, on the host's terms) and the
 * wrapper scripts, timeouts and kill grace, output limits, the environment
 * policy (environment.c builds from it), whether the shell's state is kept
 * (persist_hook.h), task limits and the leftovers policy. Runs read these
 * when they start; nothing here starts or waits for anything.
 */
#include "session/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/agentenv.h"
#include "persist/persist_hook.h"
#include "shx/platform.h"
#include "spawn/program.h"
#include "contain/contain_hook.h"
#include "session/settings.h"

static const char *const default_shells[] = {"/bin/bash", "/bin/sh", NULL};

/* What the session's shell is (spawn.h): the last word of the program's
 * argv, or the default shell, as its path resolves where it runs
 * directly. */
static void learn_shell(shexec_session *s)
{
    size_t n = 0;
    while (s->shell_argv && s->shell_argv[n])
        n++;
    /* a wrapper that is a script would run the prelude in its own shell:
     * bash gets it on its first line; others are learnt on a first run */
    s->wrapper_known = s->wrapper_drops_bash_env = n > 1 && shx_is_script(s->shell_path);
    s->shell_bash = shx_shell_is_bash(n ? s->shell_argv[n - 1] : s->default_shell,
                                      n <= 1 ? (s->shell_path ? s->shell_path : s->default_shell)
                                             : NULL,
                                      &s->shell_plain);
}

/* Every setting at its default, the nonce and wrapper scripts drawn, the
 * cwd taken from the host. On failure what was made is freed by
 * shx_settings_free(). */
int shx_settings_init(shexec_session *s)
{
    s->default_timeout_ms = SHEXEC_DEFAULT_TIMEOUT_MS;
    s->max_timeout_ms = SHEXEC_DEFAULT_MAX_TIMEOUT_MS;
    s->loop.jobs.kill_grace_ms = SHEXEC_DEFAULT_KILL_GRACE_MS;
    s->loop.jobs.drain_ms = SHEXEC_DEFAULT_LEFTOVERS_DRAIN_MS;
    s->limit = SHEXEC_DEFAULT_OUTPUT_LIMIT;
    s->unit = SHEXEC_UNIT_CHARS;
    s->keep = SHEXEC_KEEP_HEAD;
    s->env_inherit = 1;
    s->max_tasks = SHEXEC_DEFAULT_MAX_TASKS;
    s->input_look_ms = SHEXEC_DEFAULT_INPUT_LOOK_MS;
    s->leftovers_policy = SHEXEC_ON_LEFTOVERS_ADOPT;
    s->default_shell = shx_pick_shell(default_shells);
    if (!s->default_shell)
        s->default_shell = "/bin/sh";
    unsigned long long nonce;
    if (shx_random64(&nonce) != 0)
        return SHEXEC_ESYS;
    shx_sentinel_make_tag(s->tag, nonce);
    learn_shell(s);
    s->cwd = getcwd(NULL, 0);
    if (!s->cwd)
        return errno == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ENOCWD;
    return shx_globlist_add_default_deny(&s->deny);
}

void shx_settings_free(shexec_session *s)
{
    if (s->tools)
        s->tools_free(s->tools);
    free(s->cwd);
    shx_buf_free(&s->test_script);
    free(s->shell_argv);
    free(s->shell_path);
    shx_envlist_free(&s->env);
    shx_persist_free(s->persist);
    s->persist = NULL;
    shx_env_free(s->env_view);
    s->env_view = NULL;
    shx_env_memo_free(&s->env_memo);
    shx_globlist_free(&s->deny);
    shx_globlist_free(&s->allow);
}

int shx_session_resolve_dir(shexec_session *s, const char *dir, char **out)
{
    *out = NULL;
    shx_buf b = SHX_BUF_INIT;
    /* Every append is checked: a relative dir whose prefix failed to append
     * would otherwise resolve against the process's cwd, not the session's. */
    int ok = 1;
    if (dir[0] != '/' && s->cwd[0]) {
        ok = shx_buf_puts(&b, s->cwd) == 0;
        if (ok && b.len && b.data[b.len - 1] != '/')
            ok = shx_buf_putc(&b, '/') == 0;
    }
    if (ok && shx_buf_puts(&b, dir) == 0)
        *out = shx_buf_steal(&b, NULL);
    if (*out)
        return SHEXEC_OK;
    shx_buf_free(&b);
    /* The code is returned directly, not through shx_fail, so that callers
     * (and the analyzer) see that SHEXEC_OK always comes with *out set. */
    shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    return SHEXEC_ENOMEM;
}

int shx_session_check_dir(shexec_session *s, const char *dir)
{
    if (s->wrapper_kind != SHEXEC_WRAPPER_LOCAL)
        return SHEXEC_OK; /* a directory on the other side: the wrapper script checks it */
    mode_t mode;
    if (shx_path_mode(dir, &mode) != 0)
        return shx_fail(s, SHEXEC_ENOCWD, "working directory \"%s\" does not exist", dir);
    if (!S_ISDIR(mode))
        return shx_fail(s, SHEXEC_ENOCWD, "working directory \"%s\" is not a directory", dir);
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_set_cwd(shexec_session *s, const char *dir)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    if (!dir || !*dir)
        return shx_fail(s, SHEXEC_EINVAL, "working directory is empty");
    char *full;
    int rc = shx_session_resolve_dir(s, dir, &full);
    if (rc != SHEXEC_OK)
        return rc;
    rc = shx_session_check_dir(s, full);
    if (rc != SHEXEC_OK) {
        free(full);
        return rc;
    }
    free(s->cwd);
    s->cwd = full;
    return SHEXEC_OK;
}

SHEXEC_API const char *shexec_session_cwd(const shexec_session *s)
{
    return s ? s->cwd : NULL;
}

/*
 * The program that starts every command is the host's choice, so it is found
 * here, once, the way the host's own execvp() would find it, and kept as an
 * absolute path: neither a run's environment (whose PATH a model may choose)
 * nor a run's working directory (which a relative path or an empty PATH
 * element would be taken against at spawn time) can change which program
 * runs on the host.
 */
static int resolve_program(shexec_session *s, const char *name, char **out)
{
    shx_buf path = SHX_BUF_INIT;
    if (shx_find_program(name, getenv("PATH"), &path) != 0) {
        int nomem = path.failed;
        shx_buf_free(&path);
        if (nomem)
            return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        return shx_fail(s, SHEXEC_ESPAWN, "cannot execute \"%s\": not found in the host's PATH",
                        name);
    }
    if (path.data[0] != '/') {
        char *here = getcwd(NULL, 0);
        if (!here) {
            shx_buf_free(&path);
            return shx_fail(s, errno == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS,
                            "cannot make \"%s\" absolute: the host's cwd is unknown", name);
        }
        shx_buf abs = SHX_BUF_INIT;
        shx_buf_printf(&abs, "%s/%s", here, path.data);
        free(here);
        shx_buf_free(&path);
        path = abs;
    }
    *out = shx_buf_steal(&path, NULL);
    return *out ? SHEXEC_OK : shx_fail(s, SHEXEC_ENOMEM, "out of memory");
}

SHEXEC_API int shexec_session_set_shell(shexec_session *s, const char *const *argv,
                                        int wrapper_kind)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    if (wrapper_kind != SHEXEC_WRAPPER_LOCAL && wrapper_kind != SHEXEC_WRAPPER_REMOTE &&
        wrapper_kind != SHEXEC_WRAPPER_REMOTE_SHELL)
        return shx_fail(s, SHEXEC_EINVAL, "unknown wrapper kind %d", wrapper_kind);
    if (wrapper_kind != SHEXEC_WRAPPER_LOCAL && s->persist)
        return shx_fail(s, SHEXEC_ESTATE, "the session keeps the shell's state "
                        "(shexec_session_set_persist_env), which a remote wrapper cannot report");
    if (argv && (!argv[0] || !argv[0][0]))
        return shx_fail(s, SHEXEC_EINVAL, "the shell program is empty");
    /* everything that can fail comes first: on error nothing changes */
    char *path = NULL;
    char **copy = NULL;
    if (argv) {
        int rc = resolve_program(s, argv[0], &path);
        if (rc != SHEXEC_OK)
            return rc;
        copy = shx_strv_copy(argv);
        if (!copy) {
            free(path);
            return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        }
    }
    char *cwd = NULL;
    if ((wrapper_kind == SHEXEC_WRAPPER_LOCAL) != (s->wrapper_kind == SHEXEC_WRAPPER_LOCAL)) {
        /* the cwd changes sides: the other side's starting directory ("")
         * until a command reports one, or the host's own */
        cwd = wrapper_kind == SHEXEC_WRAPPER_LOCAL ? getcwd(NULL, 0) : strdup("");
        if (!cwd) {
            int nocwd = wrapper_kind == SHEXEC_WRAPPER_LOCAL && errno != ENOMEM;
            free(copy);
            free(path);
            return nocwd ? shx_fail(s, SHEXEC_ENOCWD, "the host's working directory cannot be read")
                         : shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        }
    }
    free(s->shell_argv);
    s->shell_argv = copy;
    free(s->shell_path);
    s->shell_path = path;
    if (cwd) {
        free(s->cwd);
        s->cwd = cwd;
    }
    s->wrapper_kind = wrapper_kind;
    shx_persist_drop_shell(s->persist); /* another shell: its variables and functions are its own */
    learn_shell(s);
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_wrapper_kind(const shexec_session *s)
{
    return s ? s->wrapper_kind : SHEXEC_WRAPPER_LOCAL;
}

SHEXEC_API int shexec_session_set_timeouts_ms(shexec_session *s, uint32_t default_ms, uint32_t max_ms)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    if (default_ms == 0 || max_ms == 0)
        return shx_fail(s, SHEXEC_EINVAL, "timeouts must be at least 1 ms");
    if (default_ms > max_ms)
        return shx_fail(s, SHEXEC_EINVAL, "default timeout %u ms is above the maximum %u ms",
                        default_ms, max_ms);
    s->default_timeout_ms = default_ms;
    s->max_timeout_ms = max_ms;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_set_kill_grace_ms(shexec_session *s, uint32_t ms)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    s->loop.jobs.kill_grace_ms = ms;
    shx_watchdog_set_grace(s->watchdog, ms);
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_apply_agent_env(shexec_session *s)
{
    if (!s)
        return SHEXEC_EINVAL;
    const char *name, *value;
    for (size_t i = 0; shx_agent_env_preset(i, &name, &value); i++)
        if (shexec_session_setenv(s, name, value) != SHEXEC_OK)
            return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    /* a UTF-8 locale where commands would run in the plain C one */
    unsigned fix = shx_agent_env_locale(&s->env, s->env_inherit);
    for (size_t i = 0; (name = shx_agent_env_locale_var(i)); i++)
        if ((fix >> i & 1) && shexec_session_setenv(s, name, SHX_AGENT_UTF8_LOCALE) != SHEXEC_OK)
            return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    s->agent_env = shx_agent_env_pipe_bits();
    s->env_gen++;
    return SHEXEC_OK;
}

int shx_check_limit(shexec_session *s, uint64_t limit, int unit, int keep)
{
    if (unit != SHEXEC_UNIT_CHARS && unit != SHEXEC_UNIT_BYTES)
        return shx_fail(s, SHEXEC_EINVAL, "unknown output limit unit %d", unit);
    if (keep & ~(SHEXEC_KEEP_HEAD_TAIL | SHEXEC_KEEP_WITHIN_LIMIT)) /* HEAD is 0 */
        return shx_fail(s, SHEXEC_EINVAL, "unknown output keep mode %d", keep);
    if (limit > (1ull << 30))
        return shx_fail(s, SHEXEC_EINVAL, "output limit %llu is above 1 GiB",
                        (unsigned long long)limit);
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_set_output_limit(shexec_session *s, uint64_t limit, int unit, int keep)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    int rc = shx_check_limit(s, limit, unit, keep);
    if (rc != SHEXEC_OK)
        return rc;
    s->limit = limit;
    s->unit = unit;
    s->keep = keep;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_set_env_inherit(shexec_session *s, int inherit)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    s->env_inherit = inherit ? 1 : 0;
    s->env_gen++;
    return SHEXEC_OK;
}

int shx_env_error(shexec_session *s, int rc, const char *name)
{
    if (rc == SHEXEC_EINVAL)
        return shx_fail(s, rc, "invalid environment variable name \"%s\"", name ? name : "(null)");
    if (rc == SHEXEC_ELIMIT)
        return shx_fail(s, rc, "too many environment variables: at most %u per session or run "
                               "(SHEXEC_MAX_ENV_VARS)", SHEXEC_MAX_ENV_VARS);
    if (rc == SHEXEC_ENOMEM)
        return shx_fail(s, rc, "out of memory");
    return rc;
}

SHEXEC_API int shexec_session_setenv(shexec_session *s, const char *name, const char *value)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    int rc = shx_env_error(s, shx_envlist_set(&s->env, name, value), name);
    s->env_gen++;
    if (rc == SHEXEC_OK && shx_persist_setenv(s->persist, name, value) != SHEXEC_OK)
        rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    return rc;
}

static int add_glob(shexec_session *s, shx_globlist *g, const char *glob)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    int rc = shx_globlist_add(g, glob);
    shx_persist_rules_changed(s->persist);
    s->env_gen++;
    if (rc == SHEXEC_EINVAL)
        return shx_fail(s, rc, "empty environment glob");
    if (rc == SHEXEC_ENOMEM)
        return shx_fail(s, rc, "out of memory");
    return rc;
}

SHEXEC_API int shexec_session_env_deny(shexec_session *s, const char *glob)
{
    return add_glob(s, s ? &s->deny : NULL, glob);
}

SHEXEC_API int shexec_session_env_allow(shexec_session *s, const char *glob)
{
    return add_glob(s, s ? &s->allow : NULL, glob);
}

SHEXEC_API int shexec_session_set_max_tasks(shexec_session *s, uint32_t max)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    s->max_tasks = max;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_set_persist_env(shexec_session *s, int on)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    if (!on) {
        shx_persist_free(s->persist); /* what was kept is forgotten, the environment too */
        s->persist = NULL;
        return SHEXEC_OK;
    }
    if (s->wrapper_kind != SHEXEC_WRAPPER_LOCAL)
        return shx_fail(s, SHEXEC_ESTATE, "a remote wrapper cannot report the shell's state: "
                        "persisting it needs SHEXEC_WRAPPER_LOCAL");
    if (!SHX_WITH_PERSIST)
        return shx_fail(s, SHEXEC_ESYS, "this build has no persisted shell state (PERSIST=0)");
    if (!s->persist && !(s->persist = shx_persist_new()))
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    return SHEXEC_OK;
}
