/*
 * start.c - starting a run: everything it is set to (its own settings over
 * the session's) resolved once, by shx_launch_resolve(), into one
 * shx_launch (working directory, environment, program and argv with the
 * wrapper script, output limits, timeout); then spawned, its streams set
 * up, and handed to the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "persist.h"
#include "platform.h"
#include "pty.h"
#include "script.h"
#include "session.h"
#include "shstate.h"
#include "spawn.h"
#include "watchdog.h"

/* A script up to this size goes on the shell's argv (the fast path); a
 * larger one is read from a descriptor (Linux caps one argument at 128 KiB). */
#define ARGV_SCRIPT_MAX ((size_t)64 << 10)
/* What a remote wrapper's shell gets travels as one argument on the other
 * side (ssh joins them): below the 128 KiB Linux allows one. */
#define REMOTE_ARGS_MAX ((size_t)120 << 10)

extern char **environ;

typedef struct shx_launch {
    char *dir;                /* absolute working directory, checked to exist */
    char **env;               /* the built environment (shx_env_build) */
    char **envp;              /* the same with PWD set to dir */
    char *pwd_entry;          /* envp's "PWD=..." */
    const char *path;         /* the program: the resolved shell or wrapper */
    const char **argv;        /* its argv: prefix, then tail */
    shx_buf tail;             /* what follows the prefix, NUL-separated: -c, the script,
                                 $0 (remote: the directory), wrapper vars; or the
                                 script's descriptor path and the vars */
    int remote;               /* a remote wrapper: the record comes in-band */
    int script_fd;            /* a large script, to pass at SHX_SCRIPT_FD; -1: none */
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

/*
 * The run's variables as the wrapper script's arguments, NUL-separated in
 * out: "NAME=VALUE" to set, "NAME" to unset. The deny list applies here as
 * it does to an environment (the same filter). The shell inside exports
 * them, so a name must be one a shell can export.
 */
static int wrapper_vars(shexec_session *s, const shx_envlist *vars, shx_buf *out, size_t *n)
{
    *n = 0;
    if (!vars->n)
        return SHEXEC_OK;
    shx_namefilter filter;
    if (shx_namefilter_init(&filter, &s->deny, &s->allow) != SHEXEC_OK)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    int rc = SHEXEC_OK;
    for (size_t i = 0; i < vars->n; i++) {
        const char *name = vars->names[i];
        size_t len = strlen(name);
        int drops = shx_namefilter_drops(&filter, name, len);
        if (drops < 0) {
            rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
            break;
        }
        if (drops)
            continue;
        if (!shx_shell_name(name, len)) {
            rc = shx_fail(s, SHEXEC_EINVAL,
                          "variable \"%s\" cannot be passed through the wrapper program: a shell "
                          "inside it can only export names of letters, digits and '_'",
                          name);
            break;
        }
        shx_buf_puts(out, name);
        if (vars->values[i]) {
            shx_buf_putc(out, '=');
            shx_buf_puts(out, vars->values[i]);
        }
        shx_buf_putc(out, '\0');
        (*n)++;
    }
    shx_namefilter_free(&filter);
    if (rc == SHEXEC_OK && out->failed)
        rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    return rc;
}

/* One argument of the tail; quoted for a wrapper that joins its arguments
 * into a string for a remote shell to parse again (ssh). */
static void put_arg(shx_buf *tail, const char *arg, int quote)
{
    if (quote)
        shx_script_quote(tail, arg);
    else
        shx_buf_puts(tail, arg);
    shx_buf_putc(tail, '\0');
}

/*
 * What follows the prefix: the script (built around the command) as "-c
 * SCRIPT NAME" or, when too long for one argument, as "/dev/fd/4" with the
 * script in a file passed there; a remote wrapper's directory; the wrapper
 * variables.
 */
static int build_script_tail(shx_launch *l, shexec_session *s, shexec_run *r, const char *name,
                             const shx_buf *vars, size_t nvars, const shx_script_opts *opts);

static int build_tail(shx_launch *l, shexec_session *s, shexec_run *r, const char *name,
                      const shx_buf *vars, size_t nvars, int wrapped)
{
    shx_script_opts o = {.remote = l->remote, .hex = NULL, .with_vars = wrapped};
    /* a session that keeps the shell's state: a foreground run reports it
     * (unless its command cannot change it), and every command starts
     * with what the last one left */
    if (s->persist_env && !r->task && shx_persist_lists(s, r))
        o.capture = s->listing_kind ? s->listing_kind : SHX_CAPTURE_ANY;
    shx_buf replay = SHX_BUF_INIT;
    if (s->persist_env && shx_persist_replay(s, r, &replay) != 0) {
        shx_buf_free(&replay);
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    }
    o.replay = replay.data;
    o.replay_len = replay.len;
    int rc = build_script_tail(l, s, r, name, vars, nvars, &o);
    shx_buf_free(&replay);
    return rc;
}

static int build_script_tail(shx_launch *l, shexec_session *s, shexec_run *r, const char *name,
                             const shx_buf *vars, size_t nvars, const shx_script_opts *opts)
{
    shx_script_opts o = *opts;
    char hex[17];
    if (l->remote) {
        memcpy(hex, s->tag + strlen("__SHEXEC_CWD_"), 16);
        hex[16] = '\0';
        o.hex = hex;
    }
    shx_buf script = SHX_BUF_INIT;
    if (shx_script_build(&script, r->command, r->command_len, &o) != 0) {
        shx_buf_free(&script);
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    }
    int quote = s->wrapper_kind == SHEXEC_WRAPPER_REMOTE_SHELL;
    if (!l->remote && script.len > ARGV_SCRIPT_MAX) {
        shx_buf_clear(&script);
        o.from_fd = 1;
        int rc = shx_script_build(&script, r->command, r->command_len, &o) != 0
                     ? shx_fail(s, SHEXEC_ENOMEM, "out of memory")
                     : shx_script_file(s, &script, &l->script_fd);
        shx_buf_free(&script);
        if (rc != SHEXEC_OK)
            return rc;
        put_arg(&l->tail, "/dev/fd/4", 0);
    } else {
        put_arg(&l->tail, "-c", quote);
        put_arg(&l->tail, script.data, quote);
        put_arg(&l->tail, name, quote);
        if (l->remote)
            put_arg(&l->tail, l->dir, quote);
        shx_buf_free(&script);
    }
    for (size_t i = 0, off = 0; i < nvars; i++) {
        put_arg(&l->tail, vars->data + off, quote);
        off += strlen(vars->data + off) + 1;
    }
    if (l->tail.failed)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    /* ssh joins it all into the one argument of the remote shell's -c */
    if (l->remote && l->tail.len > REMOTE_ARGS_MAX)
        return shx_fail(s, SHEXEC_E2BIG, "the command (%zu bytes) with the wrapper script and "
                        "the run's variables comes to %zu bytes: a remote wrapper takes at most "
                        "%zu, as one argument on the other side", r->command_len, l->tail.len,
                        REMOTE_ARGS_MAX);
    return SHEXEC_OK;
}

static void launch_free(shx_launch *l)
{
    free(l->argv);
    shx_buf_free(&l->tail);
    if (l->script_fd >= 0)
        close(l->script_fd);
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
    l->script_fd = -1;
    l->remote = s->wrapper_kind != SHEXEC_WRAPPER_LOCAL;
    int rc = SHEXEC_OK;
    if (r->command_len > SHEXEC_MAX_COMMAND_BYTES)
        return shx_fail(s, SHEXEC_E2BIG, "the command is %zu bytes: above the %u-byte bound "
                        "(SHEXEC_MAX_COMMAND_BYTES)", r->command_len, SHEXEC_MAX_COMMAND_BYTES);
    if (r->cwd)
        rc = shx_session_resolve_dir(s, r->cwd, &l->dir);
    else if (!(l->dir = strdup(s->cwd)))
        rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    /* a remote wrapper's directory is on the other side: checked there */
    if (rc == SHEXEC_OK && !l->remote)
        rc = shx_session_check_dir(s, l->dir);
    if (rc != SHEXEC_OK)
        goto fail;

    /* a wrapper program (more than the shell alone) gets the session's
     * environment; the run's variables go inside it, through the script */
    int wrapped = s->shell_argv && s->shell_argv[1];
    rc = shx_persist_env_build(s, &l->env, wrapped ? NULL : &r->env);
    /* what a run that reports its state is compared with when it ends */
    if (rc == SHEXEC_OK && s->persist_env && !r->task && !wrapped && r->env.n) {
        shx_env_free(r->prior_env);
        r->prior_env = NULL;
        rc = shx_persist_env_build(s, &r->prior_env, NULL);
    }
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
    shx_buf vars = SHX_BUF_INIT;
    if (wrapped && (rc = wrapper_vars(s, &r->env, &vars, &nvars)) != SHEXEC_OK) {
        shx_buf_free(&vars);
        goto fail;
    }
    rc = build_tail(l, s, r, base_name(prefix[np - 1]), &vars, nvars, wrapped);
    shx_buf_free(&vars);
    if (rc != SHEXEC_OK)
        goto fail;
    size_t ntail = 0;
    for (size_t off = 0; off < l->tail.len; off += strlen(l->tail.data + off) + 1)
        ntail++;
    l->argv = malloc((np + ntail + 1) * sizeof *l->argv);
    if (!l->argv) {
        rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        goto fail;
    }
    memcpy(l->argv, prefix, np * sizeof *l->argv);
    for (size_t i = 0, off = 0; i < ntail; i++) {
        l->argv[np + i] = l->tail.data + off;
        off += strlen(l->tail.data + off) + 1;
    }
    l->argv[np + ntail] = NULL;
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

    /* the private channel: a file the shell gets at SHX_RECORD_FD */
    int rec = -1;
    if (!l.remote && (rc = shx_record_file(s, &rec)) != SHEXEC_OK) {
        launch_free(&l);
        return rc;
    }
    int pass[2] = {rec, l.script_fd};
    shx_child child;
    shx_buf err = SHX_BUF_INIT;
    shx_spawn_req req = {.path = l.path,
                         .argv = (char *const *)l.argv,
                         .envp = l.envp,
                         .cwd = l.remote ? NULL : l.dir,
                         .pass_fds = pass,
                         .n_pass = l.remote ? 0 : l.script_fd >= 0 ? 2 : 1,
                         .use_pidfd = s->use_pidfd,
                         .stdin_pipe = r->want_stdin,
                         .big_pipes = r->task != NULL,
                         .pty = r->pty != SHEXEC_PTY_OFF,
                         .echo = r->pty == SHEXEC_PTY_ECHO,
                         .cols = r->cols ? r->cols : SHX_PTY_DEFAULT_COLS,
                         .rows = r->rows ? r->rows : SHX_PTY_DEFAULT_ROWS};
    rc = shx_spawn(&req, &child, &err);
    if (rc != SHEXEC_OK) {
        shx_record_file_put(s, rec, 0); /* unwritten */
        shx_fail(s, rc, "%s", err.data ? err.data : "spawn failed");
        shx_buf_free(&err);
        launch_free(&l);
        return rc;
    }
    shx_buf_free(&err);
    shx_watchdog_group(s, child.pid, child.start);
    r->rec_fd = rec;
    if (s->persist_env && !r->task && !l.remote) {
        r->persist = 1;
        r->record.want_state = 1;
        r->start_env = l.env; /* the run's now */
        l.env = NULL;
    } else {
        shx_env_free(r->prior_env);
        r->prior_env = NULL;
    }

    r->proc.pid = child.pid;
    r->proc.start = child.start;
    r->proc.pidfd = child.pidfd;
    /* only a remote wrapper's record comes in-band, on stdout */
    shx_stream_init(&r->out, SHEXEC_STDOUT, child.out_fd, l.remote ? s->tag : NULL, l.limit,
                    l.unit, l.keep, r->fn,
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
