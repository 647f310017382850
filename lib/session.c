/*
 * session.c - the session handle: settings (shell, limits, timeouts), the
 * tracked working directory, the environment policy, the sentinel nonce and
 * the per-session error message. Also the library-wide calls (version,
 * strerror).
 */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "spawn.h"

SHEXEC_API const char *shexec_version(void)
{
    return SHEXEC_VERSION_STRING;
}

SHEXEC_API const char *shexec_strerror(int code)
{
    switch (code) {
    case SHEXEC_OK: return "success";
    case SHEXEC_EINVAL: return "invalid argument";
    case SHEXEC_ENOMEM: return "out of memory";
    case SHEXEC_ENOCWD: return "working directory not found";
    case SHEXEC_ESPAWN: return "the shell could not be executed";
    case SHEXEC_ESYS: return "system call failed";
    case SHEXEC_ESTATE: return "wrong state for this call";
    case SHEXEC_E2BIG: return "command or environment too long";
    case SHEXEC_ELIMIT: return "a limit was reached (tasks held, environment variables)";
    case SHEXEC_ENOTASK: return "no such task";
    case SHEXEC_EPIPE: return "input cannot be written";
    case SHEXEC_ENOTOOL: return "tool not available";
    default: return "unknown error";
    }
}

int64_t shx_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int shx_fail(shexec_session *s, int code, const char *fmt, ...)
{
    if (!s)
        return code;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof msg, fmt, ap); /* a long message is cut, not lost */
    va_end(ap);
    shx_buf_clear(&s->errmsg);
    shx_buf_puts(&s->errmsg, msg);
    return code;
}

void shx_ok(shexec_session *s)
{
    if (s)
        shx_buf_clear(&s->errmsg);
}

static const char *const default_shells[] = {"/bin/bash", "/bin/sh", NULL};

/*
 * The wrapper: the command arrives as $1 and is eval-ed, so its text is never
 * parsed as part of this script. The eval is on line 1 so the shell's error
 * messages give the command's own line numbers ("bash: line 1: ..."). `command` keeps user functions named printf
 * or exit from taking over. The tag is written in two pieces so that it
 * never appears whole in the shell's argv (where `ps` could print it).
 */
static char *make_script(const char *hex, int with_env)
{
    /* With a wrapper program, the run's own variables must not reach it (it
     * runs on the host: docker, ssh, bwrap): they follow the command as
     * NAME=VALUE (set) or NAME (unset) arguments and are applied here, inside. */
    static const char env_prologue[] =
        "for __shexec_v do case $__shexec_v in *=*) command export \"$__shexec_v\";; "
        "*) command unset \"$__shexec_v\";; esac 2>/dev/null; done; set --; unset __shexec_v; ";
    static const char fmt[] =
        "__shexec_cmd=$1; shift; %seval \"$__shexec_cmd\"\n"
        "__shexec_status=$?\n"
        "command printf '__SHEXEC_CWD_%%s__%%s\\0' %s \"$PWD\"\n"
        "command exit $__shexec_status\n";
    size_t n = sizeof fmt + sizeof env_prologue + strlen(hex);
    char *s = malloc(n);
    if (s)
        (void)snprintf(s, n, fmt, with_env ? env_prologue : "", hex); /* n leaves room */
    return s;
}

int shx_random64(unsigned long long *out)
{
    ssize_t n = getrandom(out, sizeof *out, 0);
    if (n == (ssize_t)sizeof *out)
        return 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = read(fd, out, sizeof *out);
    close(fd);
    return n == (ssize_t)sizeof *out ? 0 : -1;
}

SHEXEC_API int shexec_session_new(shexec_session **out)
{
    if (!out)
        return SHEXEC_EINVAL;
    *out = NULL;
    shexec_session *s = calloc(1, sizeof *s);
    if (!s)
        return SHEXEC_ENOMEM;
    s->default_timeout_ms = SHEXEC_DEFAULT_TIMEOUT_MS;
    s->max_timeout_ms = SHEXEC_DEFAULT_MAX_TIMEOUT_MS;
    s->kill_grace_ms = SHEXEC_DEFAULT_KILL_GRACE_MS;
    s->limit = SHEXEC_DEFAULT_OUTPUT_LIMIT;
    s->unit = SHEXEC_UNIT_CHARS;
    s->keep = SHEXEC_KEEP_HEAD;
    s->env_inherit = 1;
    s->use_pidfd = 1;
    s->max_tasks = SHEXEC_DEFAULT_MAX_TASKS;
    s->leftovers_policy = SHEXEC_ON_LEFTOVERS_ADOPT;
    s->default_shell = shx_pick_shell(default_shells);
    if (!s->default_shell)
        s->default_shell = "/bin/sh";

    int rc = SHEXEC_ENOMEM;
    unsigned long long nonce;
    if (shx_random64(&nonce) != 0) {
        rc = SHEXEC_ESYS;
        goto fail;
    }
    shx_sentinel_make_tag(s->tag, nonce);
    char hex[17];
    (void)snprintf(hex, sizeof hex, "%016llx", nonce);
    s->script = make_script(hex, 0);
    s->wrapper_script = make_script(hex, 1);
    if (!s->script || !s->wrapper_script)
        goto fail;
    s->cwd = getcwd(NULL, 0);
    if (!s->cwd) {
        rc = errno == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ENOCWD;
        goto fail;
    }
    if (shx_globlist_add_default_deny(&s->deny) != SHEXEC_OK)
        goto fail;
    *out = s;
    return SHEXEC_OK;
fail:
    shx_globlist_free(&s->deny);
    free(s->cwd);
    free(s->script);
    free(s->wrapper_script);
    free(s);
    return rc;
}

static void free_argv(char **argv)
{
    if (!argv)
        return;
    for (char **p = argv; *p; p++)
        free(*p);
    free(argv);
}

SHEXEC_API void shexec_session_free(shexec_session *s)
{
    if (!s || s->in_loop) /* from a callback: refused, the loop still uses s */
        return;
    int64_t now = shx_now_ns();
    for (shexec_run *r = s->active; r; r = r->next_active)
        shx_run_terminate(r, r->task ? SHX_END_KILL : SHX_END_CANCEL, now);
    while (s->active)
        if (shx_loop(s, NULL, 0, -1, NULL) != SHEXEC_OK)
            break;
    while (s->tasks)
        shexec_task_free(s->tasks);
    for (shexec_run *r = s->runs, *next; r; r = next) {
        next = r->next;
        if (r->free_pending) { /* freed from a callback: its free was deferred */
            r->s = NULL;
            shx_run_release(r);
        } else {
            r->s = NULL;
        }
    }
    for (int i = 0; i < SHX_TOOL_COUNT; i++)
        free(s->tool_name[i]);
    free(s->cwd);
    free(s->script);
    free(s->wrapper_script);
    free_argv(s->shell_argv);
    free(s->shell_path);
    shx_envlist_free(&s->env);
    shx_globlist_free(&s->deny);
    shx_globlist_free(&s->allow);
    shx_buf_free(&s->errmsg);
    free(s);
}

SHEXEC_API const char *shexec_session_errmsg(const shexec_session *s)
{
    if (!s || !s->errmsg.data)
        return "";
    return s->errmsg.data;
}

int shx_session_resolve_dir(shexec_session *s, const char *dir, char **out)
{
    *out = NULL;
    shx_buf b = SHX_BUF_INIT;
    /* Every append is checked: a relative dir whose prefix failed to append
     * would otherwise resolve against the process's cwd, not the session's. */
    int ok = 1;
    if (dir[0] != '/') {
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
    struct stat st;
    if (stat(dir, &st) != 0)
        return shx_fail(s, SHEXEC_ENOCWD, "working directory \"%s\" does not exist", dir);
    if (!S_ISDIR(st.st_mode))
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

SHEXEC_API int shexec_session_set_shell_argv(shexec_session *s, const char *const *argv)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    if (!argv) {
        free_argv(s->shell_argv);
        s->shell_argv = NULL;
        free(s->shell_path);
        s->shell_path = NULL;
        return SHEXEC_OK;
    }
    if (!argv[0] || !argv[0][0])
        return shx_fail(s, SHEXEC_EINVAL, "the shell program is empty");
    char *path = NULL;
    int rc = resolve_program(s, argv[0], &path);
    if (rc != SHEXEC_OK)
        return rc;
    size_t n = 0;
    while (argv[n])
        n++;
    char **copy = calloc(n + 1, sizeof *copy);
    if (!copy) {
        free(path);
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        copy[i] = strdup(argv[i]);
        if (!copy[i]) {
            free_argv(copy);
            free(path);
            return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        }
    }
    free_argv(s->shell_argv);
    s->shell_argv = copy;
    free(s->shell_path);
    s->shell_path = path;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_set_timeouts(shexec_session *s, uint32_t default_ms, uint32_t max_ms)
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
    s->kill_grace_ms = ms;
    return SHEXEC_OK;
}

int shx_check_limit(shexec_session *s, uint64_t limit, int unit, int keep)
{
    if (unit != SHEXEC_UNIT_CHARS && unit != SHEXEC_UNIT_BYTES)
        return shx_fail(s, SHEXEC_EINVAL, "unknown output limit unit %d", unit);
    if (keep != SHEXEC_KEEP_HEAD && keep != SHEXEC_KEEP_HEAD_TAIL)
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
    return shx_env_error(s, shx_envlist_set(&s->env, name, value), name);
}

static int add_glob(shexec_session *s, shx_globlist *g, const char *glob)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    int rc = shx_globlist_add(g, glob);
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

SHEXEC_API int shexec_session_wait(shexec_session *s, int32_t timeout_ms)
{
    if (!s)
        return SHEXEC_EINVAL;
    if (s->in_loop)
        return shx_fail(s, SHEXEC_ESTATE, "shexec_session_wait called from a callback");
    shx_ok(s);
    if (!s->active)
        return 0;
    int finished = 0;
    int rc = shx_loop(s, NULL, 1, timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000, &finished);
    return rc != SHEXEC_OK ? rc : finished;
}

SHEXEC_API int shexec_session_set_max_tasks(shexec_session *s, uint32_t max)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    s->max_tasks = max;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_set_on_leftovers(shexec_session *s, int policy)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    if (policy != SHEXEC_ON_LEFTOVERS_ADOPT && policy != SHEXEC_ON_LEFTOVERS_KILL)
        return shx_fail(s, SHEXEC_EINVAL, "unknown leftovers policy %d", policy);
    s->leftovers_policy = policy;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_pollfds(struct pollfd *fds, uint32_t cap, int32_t *timeout_ms,
                                      shexec_session *s)
{
    if (!s || !timeout_ms || (!fds && cap))
        return SHEXEC_EINVAL;
    if (s->in_loop)
        return shx_fail(s, SHEXEC_ESTATE, "shexec_session_pollfds called from a callback");
    shx_ok(s);
    int64_t next;
    size_t n = shx_loop_collect(s, fds, NULL, cap, &next);
    if (next < 0)
        *timeout_ms = -1;
    else {
        int64_t d = next - shx_now_ns();
        int64_t ms = d <= 0 ? 0 : (d + 999999) / 1000000;
        *timeout_ms = ms > INT32_MAX ? INT32_MAX : (int32_t)ms;
    }
    return n > INT32_MAX ? INT32_MAX : (int)n;
}

SHEXEC_API int shexec_session_process(shexec_session *s, const struct pollfd *fds, uint32_t n)
{
    if (!s || (!fds && n))
        return SHEXEC_EINVAL;
    if (s->in_loop)
        return shx_fail(s, SHEXEC_ESTATE, "shexec_session_process called from a callback");
    shx_ok(s);
    s->in_loop = 1;
    /* match the host's entries against the current set by descriptor */
    int64_t next;
    size_t have = shx_loop_collect(s, NULL, NULL, 0, &next);
    struct pollfd *cur = have ? malloc(have * sizeof *cur) : NULL;
    shx_fd_owner *own = have ? malloc(have * sizeof *own) : NULL;
    if (have && (!cur || !own)) {
        free(cur);
        free(own);
        s->in_loop = 0;
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    }
    if (have)
        have = shx_loop_collect(s, cur, own, have, &next);
    for (size_t i = 0; i < have; i++) {
        cur[i].revents = 0;
        for (uint32_t j = 0; j < n; j++)
            if (fds[j].fd == cur[i].fd && fds[j].revents) {
                cur[i].revents = fds[j].revents;
                break;
            }
    }
    shx_loop_dispatch(s, cur, own, have);
    shx_loop_enforce(s);
    int finished = shx_loop_settle(s);
    free(cur);
    free(own);
    s->in_loop = 0;
    shx_release_deferred(s);
    return finished;
}
