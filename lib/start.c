/*
 * start.c - starting a run: everything it is set to (its own settings over
 * the session's) resolved once, by shx_launch_resolve(), into one
 * shx_launch (working directory, environment, program and argv with the
 * wrapper script, output limits, timeout); then spawned, its streams set
 * up, and handed to the loop.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "pty.h"
#include "session.h"
#include "spawn.h"
#include "watchdog.h"

extern char **environ;

typedef struct shx_launch {
    char *dir;                /* absolute working directory, checked to exist */
    char **env;               /* the built environment (shx_env_build) */
    char **envp;              /* the same with PWD set to dir */
    char *pwd_entry;          /* envp's "PWD=..." */
    const char *path;         /* the program: the resolved shell or wrapper */
    const char **argv;        /* its argv: prefix, -c, script, $0, command, wrapper vars */
    shx_buf vars;             /* the wrapper vars' storage */
    uint64_t limit;           /* output limit, unit, keep */
    int unit, keep;
    uint32_t timeout_ms;      /* 0: none */
} shx_launch;

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* The built environment with PWD set to the start directory, so a shell keeps
 * a logical path (through symlinks) from one command to the next. */
static char **with_pwd(char **env, const char *dir, char **pwd_entry)
{
    size_t n = 0, at = (size_t)-1;
    for (; env[n]; n++)
        if (at == (size_t)-1 && strncmp(env[n], "PWD=", 4) == 0)
            at = n;
    char **v = malloc((n + 2) * sizeof *v);
    size_t dl = strlen(dir);
    *pwd_entry = malloc(dl + 5);
    if (!v || !*pwd_entry) {
        free(v);
        free(*pwd_entry);
        *pwd_entry = NULL;
        return NULL;
    }
    memcpy(*pwd_entry, "PWD=", 4);
    memcpy(*pwd_entry + 4, dir, dl + 1);
    memcpy(v, env, n * sizeof *v);
    if (at != (size_t)-1)
        v[at] = *pwd_entry;
    else
        v[n++] = *pwd_entry;
    v[n] = NULL;
    return v;
}

/* The one rule for a run's timeout: a task has its own or none, a
 * foreground run its own or the session's, clamped to the maximum. */
uint32_t shx_run_effective_timeout(const shexec_run *r)
{
    if (r->task)
        return r->timeout_ms;
    const shexec_session *s = r->s;
    uint32_t t = r->timeout_ms ? r->timeout_ms : s->default_timeout_ms;
    return t > s->max_timeout_ms ? s->max_timeout_ms : t;
}

static int shell_name_valid(const char *name)
{
    if (!(isalpha((unsigned char)name[0]) || name[0] == '_'))
        return 0;
    for (const char *p = name + 1; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return 0;
    return 1;
}

/*
 * The run's variables as the wrapper script's arguments, NUL-separated in
 * out: "NAME=VALUE" to set, "NAME" to unset. The deny list applies here as
 * it does to an environment. The shell inside exports them, so a name must
 * be one a shell can export.
 */
static int wrapper_vars(shexec_session *s, const shx_envlist *vars, shx_buf *out, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < vars->n; i++) {
        const char *name = vars->names[i];
        size_t len = strlen(name);
        int denied = shx_globlist_match(&s->deny, name, len);
        int allowed = shx_globlist_match(&s->allow, name, len);
        if (denied < 0 || allowed < 0)
            return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        if (denied == 1 && allowed != 1)
            continue;
        if (!shell_name_valid(name))
            return shx_fail(s, SHEXEC_EINVAL,
                            "variable \"%s\" cannot be passed through the wrapper program: a shell "
                            "inside it can only export names of letters, digits and '_'",
                            name);
        shx_buf_puts(out, name);
        if (vars->values[i]) {
            shx_buf_putc(out, '=');
            shx_buf_puts(out, vars->values[i]);
        }
        shx_buf_putc(out, '\0');
        (*n)++;
    }
    return out->failed ? shx_fail(s, SHEXEC_ENOMEM, "out of memory") : SHEXEC_OK;
}

static void launch_free(shx_launch *l)
{
    free(l->argv);
    shx_buf_free(&l->vars);
    free(l->envp);
    free(l->pwd_entry);
    shx_env_free(l->env);
    free(l->dir);
}

/* Every setting the run starts with, the run's own over the session's. On
 * failure the message is set and nothing is left to free. */
static int launch_resolve(shx_launch *l, shexec_run *r)
{
    shexec_session *s = r->s;
    memset(l, 0, sizeof *l);
    int rc = SHEXEC_OK;
    if (r->cwd)
        rc = shx_session_resolve_dir(s, r->cwd, &l->dir);
    else if (!(l->dir = strdup(s->cwd)))
        rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    if (rc == SHEXEC_OK)
        rc = shx_session_check_dir(s, l->dir);
    if (rc != SHEXEC_OK)
        goto fail;

    /* a wrapper program (more than the shell alone) gets the session's
     * environment; the run's variables go inside it, through the script */
    int wrapped = s->shell_argv && s->shell_argv[1];
    rc = shx_env_build(&l->env, s->env_inherit ? (const char *const *)environ : NULL, &s->env,
                       wrapped ? NULL : &r->env, &s->deny, &s->allow);
    if (rc == SHEXEC_OK && !(l->envp = with_pwd(l->env, l->dir, &l->pwd_entry)))
        rc = SHEXEC_ENOMEM;
    if (rc != SHEXEC_OK) {
        rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        goto fail;
    }

    const char *def[2] = {s->default_shell, NULL};
    const char *const *prefix = s->shell_argv ? (const char *const *)s->shell_argv : def;
    size_t np = 0;
    while (prefix[np])
        np++;
    size_t nvars = 0;
    /* Cannot happen (set_shell_argv refuses an empty argv, default_shell is
     * never NULL), but prefix[np - 1] below needs it. */
    if (np == 0) {
        rc = shx_fail(s, SHEXEC_ESPAWN, "no shell program is set");
        goto fail;
    }
    if (wrapped && (rc = wrapper_vars(s, &r->env, &l->vars, &nvars)) != SHEXEC_OK)
        goto fail;
    l->argv = malloc((np + 5 + nvars) * sizeof *l->argv);
    if (!l->argv) {
        rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        goto fail;
    }
    memcpy(l->argv, prefix, np * sizeof *l->argv);
    l->argv[np] = "-c";
    l->argv[np + 1] = wrapped ? s->wrapper_script : s->script;
    l->argv[np + 2] = base_name(prefix[np - 1]);
    l->argv[np + 3] = r->command;
    for (size_t i = 0, off = 0; i < nvars; i++) {
        l->argv[np + 4 + i] = l->vars.data + off;
        off += strlen(l->vars.data + off) + 1;
    }
    l->argv[np + 4 + nvars] = NULL;
    l->path = s->shell_path ? s->shell_path : s->default_shell;

    l->limit = r->limit_set ? r->limit : s->limit;
    l->unit = r->limit_set ? r->unit : s->unit;
    l->keep = r->limit_set ? r->keep : s->keep;
    l->timeout_ms = shx_run_effective_timeout(r);
    return SHEXEC_OK;
fail:
    launch_free(l);
    return rc;
}

int shx_run_begin(shexec_run *r)
{
    shexec_session *s = r->s;
    if (!s)
        return SHEXEC_ESTATE;
    shx_ok(s);
    if (r->state != SHEXEC_STATE_NEW)
        return shx_fail(s, SHEXEC_ESTATE, "the run has already been started");
    if (s->in_loop)
        return shx_fail(s, SHEXEC_ESTATE, "cannot start a run from an output callback");
    shx_launch l;
    int rc = launch_resolve(&l, r);
    if (rc != SHEXEC_OK)
        return rc;

    shx_child child;
    shx_buf err = SHX_BUF_INIT;
    shx_spawn_req req = {.path = l.path,
                         .argv = (char *const *)l.argv,
                         .envp = l.envp,
                         .cwd = l.dir,
                         .use_pidfd = s->use_pidfd,
                         .stdin_pipe = r->want_stdin,
                         .big_pipes = r->task != NULL,
                         .pty = r->pty != SHEXEC_PTY_OFF,
                         .echo = r->pty == SHEXEC_PTY_ECHO,
                         .cols = r->cols ? r->cols : SHX_PTY_DEFAULT_COLS,
                         .rows = r->rows ? r->rows : SHX_PTY_DEFAULT_ROWS};
    rc = shx_spawn(&req, &child, &err);
    if (rc != SHEXEC_OK) {
        shx_fail(s, rc, "%s", err.data ? err.data : "spawn failed");
        shx_buf_free(&err);
        launch_free(&l);
        return rc;
    }
    shx_buf_free(&err);
    shx_watchdog_group(s, child.pid);

    r->proc.pid = child.pid;
    r->proc.pidfd = child.pidfd;
    shx_stream_init(&r->out, SHEXEC_STDOUT, child.out_fd, s->tag, l.limit, l.unit, l.keep, r->fn,
                    r->user);
    shx_stream_init(&r->err, SHEXEC_STDERR, child.err_fd, NULL, l.limit, l.unit, l.keep, r->fn,
                    r->user);
    if (r->ansi == SHEXEC_ANSI_STRIP) {
        shx_stream_enable_strip(&r->out);
        shx_stream_enable_strip(&r->err);
    }
    if (r->task) {
        shx_stream_enable_fresh(&r->out);
        shx_stream_enable_fresh(&r->err);
    }
    if (r->pty)
        r->want_stdin = 1; /* the terminal is the input too */
    r->stdin_fd = child.in_fd;
    r->effective_timeout_ms = l.timeout_ms;
    r->proc.no_timeout = l.timeout_ms == 0;
    r->start_ns = shx_now_ns();
    r->proc.deadline_ns = r->start_ns + (int64_t)l.timeout_ms * 1000000;
    r->proc.check_backoff_ns = 1000000;
    r->proc.next_check_ns = r->start_ns + r->proc.check_backoff_ns;
    r->state = SHEXEC_STATE_RUNNING;
    shx_loop_add(s, r);
    launch_free(&l);
    return SHEXEC_OK;
}
