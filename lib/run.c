/*
 * run.c - the run handle: one foreground command, its settings, how it is
 * started (cwd check, environment, wrapper argv, spawn) and its results.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pty.h"
#include "session.h"
#include "spawn.h"

extern char **environ;

static void link_run(shexec_session *s, shexec_run *r)
{
    r->next = s->runs;
    if (s->runs)
        s->runs->prev = r;
    s->runs = r;
}

void shx_run_unlink(shexec_session *s, shexec_run *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else if (s->runs == r)
        s->runs = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

int shx_run_alloc(shexec_run **out, shexec_session *s, const char *command, size_t len)
{
    *out = NULL;
    shx_ok(s);
    if (!command)
        return shx_fail(s, SHEXEC_EINVAL, "command is NULL");
    if (len == 0)
        return shx_fail(s, SHEXEC_EINVAL, "command is empty");
    if (memchr(command, '\0', len))
        return shx_fail(s, SHEXEC_EINVAL, "command contains a NUL byte");
    shexec_run *r = calloc(1, sizeof *r);
    if (!r)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    r->command = malloc(len + 1);
    if (!r->command) {
        free(r);
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    }
    memcpy(r->command, command, len);
    r->command[len] = '\0';
    r->command_len = len;
    r->s = s;
    shx_proc_init(&r->proc);
    r->out.fd = r->err.fd = -1;
    r->stdin_fd = -1;
    r->state = SHEXEC_STATE_NEW;
    *out = r;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_new_bytes(shexec_run **out, shexec_session *s, const char *command,
                                    size_t len)
{
    if (out)
        *out = NULL;
    if (!out || !s)
        return SHEXEC_EINVAL;
    int rc = shx_run_alloc(out, s, command, len);
    if (*out) /* set exactly when rc is SHEXEC_OK */
        link_run(s, *out);
    return rc;
}

SHEXEC_API int shexec_run_new(shexec_run **out, shexec_session *s, const char *command)
{
    if (out)
        *out = NULL;
    if (!out || !s)
        return SHEXEC_EINVAL;
    if (!command) {
        shx_ok(s);
        return shx_fail(s, SHEXEC_EINVAL, "command is NULL");
    }
    return shexec_run_new_bytes(out, s, command, strlen(command));
}

/* Setters share this: a run can only be configured before it starts. */
static int configurable(shexec_run *r)
{
    if (!r)
        return SHEXEC_EINVAL;
    shx_ok(r->s);
    if (r->state != SHEXEC_STATE_NEW)
        return shx_fail(r->s, SHEXEC_ESTATE, "the run has already been started");
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_set_timeout_ms(shexec_run *run, uint32_t ms)
{
    int rc = configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    if (ms == 0)
        return shx_fail(run->s, SHEXEC_EINVAL, "timeout must be at least 1 ms");
    run->timeout_ms = ms;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_set_cwd(shexec_run *run, const char *dir)
{
    int rc = configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    if (!dir || !*dir)
        return shx_fail(run->s, SHEXEC_EINVAL, "working directory is empty");
    char *copy = strdup(dir);
    if (!copy)
        return shx_fail(run->s, SHEXEC_ENOMEM, "out of memory");
    free(run->cwd);
    run->cwd = copy;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_setenv(shexec_run *run, const char *name, const char *value)
{
    int rc = configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    return shx_env_error(run->s, shx_envlist_set(&run->env, name, value), name);
}

SHEXEC_API int shexec_run_set_output_limit(shexec_run *run, uint64_t limit, int unit, int keep)
{
    int rc = configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    rc = shx_check_limit(run->s, limit, unit, keep);
    if (rc != SHEXEC_OK)
        return rc;
    run->limit_set = 1;
    run->limit = limit;
    run->unit = unit;
    run->keep = keep;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_set_output_fn(shexec_run *run, shexec_output_fn fn, void *user)
{
    if (!run)
        return SHEXEC_EINVAL;
    shx_ok(run->s);
    if (run->free_pending || (run->state != SHEXEC_STATE_NEW && run->state != SHEXEC_STATE_RUNNING))
        return shx_fail(run->s, SHEXEC_ESTATE, "the run has finished");
    run->fn = fn;
    run->user = user;
    if (run->state == SHEXEC_STATE_RUNNING) {
        /* from the next chunk read on */
        shx_stream_set_fn(&run->out, fn, user);
        shx_stream_set_fn(&run->err, fn, user);
    }
    return SHEXEC_OK;
}

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
static uint32_t effective_timeout(const shexec_run *r)
{
    if (r->task)
        return r->timeout_ms;
    const shexec_session *s = r->s;
    uint32_t t = r->timeout_ms ? r->timeout_ms : s->default_timeout_ms;
    return t > s->max_timeout_ms ? s->max_timeout_ms : t;
}

SHEXEC_API uint32_t shexec_run_timeout_ms(const shexec_run *run)
{
    if (!run)
        return 0;
    if (run->state != SHEXEC_STATE_NEW || !run->s)
        return run->effective_timeout_ms;
    return effective_timeout(run);
}

SHEXEC_API int64_t shexec_run_pid(const shexec_run *run)
{
    return run && run->state != SHEXEC_STATE_NEW ? (int64_t)run->proc.pid : 0;
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

    char *dir = NULL;
    int rc = SHEXEC_OK;
    if (r->cwd)
        rc = shx_session_resolve_dir(s, r->cwd, &dir);
    else if (!(dir = strdup(s->cwd)))
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    if (rc != SHEXEC_OK)
        return rc;
    rc = shx_session_check_dir(s, dir);
    if (rc != SHEXEC_OK) {
        free(dir);
        return rc;
    }

    /* a wrapper program (more than the shell alone) gets the session's
     * environment; the run's variables go inside it, through the script */
    int wrapped = s->shell_argv && s->shell_argv[1];
    const char **argv = NULL;
    char **env = NULL, **envp = NULL, *pwd_entry = NULL;
    rc = shx_env_build(&env, s->env_inherit ? (const char *const *)environ : NULL, &s->env,
                       wrapped ? NULL : &r->env, &s->deny, &s->allow);
    if (rc == SHEXEC_OK && !(envp = with_pwd(env, dir, &pwd_entry)))
        rc = SHEXEC_ENOMEM;
    if (rc != SHEXEC_OK) {
        shx_env_free(env);
        free(dir);
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    }

    const char *def[2] = {s->default_shell, NULL};
    const char *const *prefix = s->shell_argv ? (const char *const *)s->shell_argv : def;
    size_t np = 0;
    while (prefix[np])
        np++;
    shx_buf err = SHX_BUF_INIT, vars = SHX_BUF_INIT;
    size_t nvars = 0;
    /* Cannot happen (set_shell_argv refuses an empty argv, default_shell is
     * never NULL), but prefix[np - 1] below needs it. */
    if (np == 0) {
        rc = shx_fail(s, SHEXEC_ESPAWN, "no shell program is set");
        goto out;
    }
    if (wrapped) {
        rc = wrapper_vars(s, &r->env, &vars, &nvars);
        if (rc != SHEXEC_OK)
            goto out;
    }
    argv = malloc((np + 5 + nvars) * sizeof *argv);
    if (!argv) {
        rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(argv, prefix, np * sizeof *argv);
    argv[np] = "-c";
    argv[np + 1] = wrapped ? s->wrapper_script : s->script;
    argv[np + 2] = base_name(prefix[np - 1]);
    argv[np + 3] = r->command;
    for (size_t i = 0, off = 0; i < nvars; i++) {
        argv[np + 4 + i] = vars.data + off;
        off += strlen(vars.data + off) + 1;
    }
    argv[np + 4 + nvars] = NULL;

    shx_child child;
    shx_spawn_req req = {.path = s->shell_path ? s->shell_path : s->default_shell,
                         .argv = (char *const *)argv,
                         .envp = envp,
                         .cwd = dir,
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
        goto out;
    }

    r->proc.pid = child.pid;
    r->proc.pidfd = child.pidfd;
    uint64_t limit = r->limit_set ? r->limit : s->limit;
    int unit = r->limit_set ? r->unit : s->unit;
    int keep = r->limit_set ? r->keep : s->keep;
    shx_stream_init(&r->out, SHEXEC_STDOUT, child.out_fd, s->tag, limit, unit, keep, r->fn, r->user);
    shx_stream_init(&r->err, SHEXEC_STDERR, child.err_fd, NULL, limit, unit, keep, r->fn, r->user);
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
    r->effective_timeout_ms = effective_timeout(r);
    r->proc.no_timeout = r->effective_timeout_ms == 0;
    uint32_t t = r->effective_timeout_ms;
    r->start_ns = shx_now_ns();
    r->proc.deadline_ns = r->start_ns + (int64_t)t * 1000000;
    r->proc.check_backoff_ns = 1000000;
    r->proc.next_check_ns = r->start_ns + r->proc.check_backoff_ns;
    r->state = SHEXEC_STATE_RUNNING;
    shx_loop_add(s, r);
out:
    free(argv);
    shx_buf_free(&vars);
    shx_buf_free(&err);
    free(envp);
    free(pwd_entry);
    shx_env_free(env);
    free(dir);
    return rc;
}

SHEXEC_API int shexec_run_start(shexec_run *run)
{
    if (!run)
        return SHEXEC_EINVAL;
    return shx_run_begin(run);
}

SHEXEC_API int shexec_run_exec(shexec_run *run)
{
    if (!run)
        return SHEXEC_EINVAL;
    int rc = shx_run_begin(run);
    if (rc != SHEXEC_OK)
        return rc;
    shexec_session *s = run->s;
    rc = shx_loop(s, run, 0, -1, NULL); /* holds run: a callback's free waits for us */
    if (run->free_pending) {
        /* a callback freed it: the release it asked for happens now, and
         * the caller must not look at the run again */
        shx_run_unlink(s, run);
        shx_run_release(run);
        return shx_fail(s, SHEXEC_ESTATE, "the run was freed by a callback while it ran");
    }
    return rc;
}

SHEXEC_API int shexec_run_done(const shexec_run *run)
{
    return run && run->state != SHEXEC_STATE_NEW && run->state != SHEXEC_STATE_RUNNING;
}

SHEXEC_API int shexec_run_cancel(shexec_run *run)
{
    if (!run)
        return SHEXEC_EINVAL;
    shx_ok(run->s);
    if (run->state == SHEXEC_STATE_NEW)
        return shx_fail(run->s, SHEXEC_ESTATE, "the run has not been started");
    if (run->state == SHEXEC_STATE_RUNNING) /* a task's run: as shexec_task_kill() */
        shx_run_terminate(run, run->task ? SHX_END_KILL : SHX_END_CANCEL, shx_now_ns());
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_state(const shexec_run *run)
{
    return run ? run->state : SHEXEC_STATE_NEW;
}

SHEXEC_API int shexec_run_exit_code(const shexec_run *run)
{
    /* a shell that exited in its TERM trap after a timeout or cancel still
     * did not end the run by exiting: one rule, the state decides */
    return run && run->state == SHEXEC_STATE_EXITED ? run->proc.exit_code : -1;
}

SHEXEC_API int shexec_run_signal(const shexec_run *run)
{
    return run && shexec_run_done(run) ? run->proc.term_signal : 0;
}

static shx_stream *stream_of(shexec_run *run, int stream)
{
    if (!run || run->state == SHEXEC_STATE_NEW)
        return NULL;
    if (stream == SHEXEC_STDOUT)
        return &run->out;
    if (stream == SHEXEC_STDERR)
        return &run->err;
    return NULL;
}

SHEXEC_API const char *shexec_run_output(shexec_run *run, int stream, size_t *len)
{
    return shx_run_rendered(run, stream, len);
}

const char *shx_run_rendered(shexec_run *run, int stream, size_t *len)
{
    shx_stream *st = stream_of(run, stream);
    if (len)
        *len = 0;
    if (!st)
        return "";
    int i = stream - 1;
    if (!shexec_run_done(run))
        shx_stream_flush_strip(st); /* show a pending prompt line */
    /* while running the text keeps changing; once done it is rendered once */
    if (!run->rendered_valid[i]) {
        if (shx_capture_render(&st->capture, &run->rendered[i]) != 0)
            return "";
        run->rendered_valid[i] = shexec_run_done(run);
    }
    if (len)
        *len = run->rendered[i].len;
    return run->rendered[i].data ? run->rendered[i].data : "";
}

SHEXEC_API uint64_t shexec_run_output_total(const shexec_run *run, int stream)
{
    shx_stream *st = stream_of((shexec_run *)run, stream);
    return st ? st->capture.total_bytes : 0;
}

SHEXEC_API int shexec_run_truncated(const shexec_run *run, int stream)
{
    shx_stream *st = stream_of((shexec_run *)run, stream);
    return st ? shx_capture_truncated(&st->capture) : 0;
}

SHEXEC_API uint64_t shexec_run_duration_ms(const shexec_run *run)
{
    if (!run || run->state == SHEXEC_STATE_NEW)
        return 0;
    int64_t end = shexec_run_done(run) ? run->end_ns : shx_now_ns();
    return (uint64_t)((end - run->start_ns) / 1000000);
}

void shx_run_detach(shexec_run *run)
{
    run->fn = NULL;
    run->user = NULL;
    shx_stream_detach(&run->out);
    shx_stream_detach(&run->err);
}

SHEXEC_API void shexec_run_free(shexec_run *run)
{
    /* free_pending: a free is under way already (deferred from a callback,
     * or the one below, waiting for the run to end while callbacks run) */
    /* a task's run goes with its task */
    if (!run || run->free_pending || run->task)
        return;
    run->free_pending = 1;
    shx_run_detach(run); /* the host is done with it: no callback after this */
    if (run->s && run->s->in_loop) {
        /* from a callback: the loop round, or a frame waiting for this run,
         * may still hold it; released by shx_release_deferred once it ended
         * (or by the frame holding it) */
        if (run->state == SHEXEC_STATE_RUNNING)
            shx_run_terminate(run, SHX_END_CANCEL, shx_now_ns());
        return;
    }
    if (run->s)
        shx_run_unlink(run->s, run);
    shx_run_release(run);
}


void shx_run_release(shexec_run *run)
{
    shexec_session *s = run->s;
    if (s && run->state == SHEXEC_STATE_RUNNING) {
        shx_run_terminate(run, run->task ? SHX_END_KILL : SHX_END_CANCEL, shx_now_ns());
        shx_loop(s, run, 0, -1, NULL); /* holds run: frees from callbacks meanwhile wait */
    }
    free(run->leftover_task);
    shx_escapees_release(&run->proc.escapees);
    shx_buf_free(&run->stdin_buf);
    if (run->stdin_fd >= 0)
        close(run->stdin_fd);
    if (run->state != SHEXEC_STATE_NEW) {
        shx_stream_free(&run->out);
        shx_stream_free(&run->err);
    }
    shx_buf_free(&run->rendered[0]);
    shx_buf_free(&run->rendered[1]);
    shx_buf_free(&run->notice);
    shx_envlist_free(&run->env);
    free(run->cwd);
    free(run->command);
    free(run);
}

SHEXEC_API int shexec_run_set_stdin(shexec_run *run, int enable)
{
    int rc = configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    run->want_stdin = enable ? 1 : 0;
    return SHEXEC_OK;
}

int shx_run_queue_input(shexec_run *r, const void *data, size_t len)
{
    shx_ok(r->s);
    if (!data && len)
        return shx_fail(r->s, SHEXEC_EINVAL, "input is NULL");
    if (!r->want_stdin && !r->pty)
        return shx_fail(r->s, SHEXEC_EPIPE, "stdin was not enabled for this command");
    if (r->state != SHEXEC_STATE_RUNNING || r->stdin_fd < 0 || r->stdin_close)
        return shx_fail(r->s, SHEXEC_EPIPE, "the command's stdin is closed");
    if (shx_buf_append(&r->stdin_buf, data, len) != 0)
        return shx_fail(r->s, SHEXEC_ENOMEM, "out of memory");
    return SHEXEC_OK;
}

int shx_run_end_input(shexec_run *r)
{
    shx_ok(r->s);
    if (!r->want_stdin && !r->pty)
        return shx_fail(r->s, SHEXEC_EPIPE, "stdin was not enabled for this command");
    if (r->pty) /* a terminal's end of input is ^D, not a closed descriptor */
        return shx_run_queue_input(r, "\x04", 1);
    r->stdin_close = 1;
    if (r->stdin_fd >= 0 && shx_run_input_left(r) == 0) {
        close(r->stdin_fd);
        r->stdin_fd = -1;
    }
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_write(shexec_run *run, const void *data, size_t len)
{
    if (!run)
        return SHEXEC_EINVAL;
    return shx_run_queue_input(run, data, len);
}

SHEXEC_API int shexec_run_close_stdin(shexec_run *run)
{
    if (!run)
        return SHEXEC_EINVAL;
    return shx_run_end_input(run);
}

SHEXEC_API int shexec_run_leftovers(const shexec_run *run)
{
    return run ? run->leftovers : SHEXEC_LEFTOVERS_NONE;
}

SHEXEC_API const char *shexec_run_leftover_task(const shexec_run *run)
{
    return run ? run->leftover_task : NULL;
}

SHEXEC_API const char *shexec_run_notice(const shexec_run *run)
{
    return run && run->notice.data ? run->notice.data : "";
}

/*
 * The record comes from inside the command, which can forge it (it runs in
 * the same shell): a directory that does not exist, or a relative path that
 * would be taken against the host's own cwd, would break every later
 * command, so neither is adopted.
 */
void shx_run_adopt_cwd(shexec_run *r, const char *dir, size_t len)
{
    shexec_session *s = r->s;
    struct stat st;
    const char *why = NULL;
    if (len == 0 || dir[0] != '/')
        why = "is not an absolute path";
    else if (strlen(dir) != len)
        why = "contains a NUL byte";
    else if (stat(dir, &st) != 0)
        why = "does not exist";
    else if (!S_ISDIR(st.st_mode))
        why = "is not a directory";
    if (why) {
        shx_buf_clear(&r->notice);
        shx_buf_printf(&r->notice, "the working directory the shell reported (\"%.*s\") %s: "
                       "the session stays in %s", len > 512 ? 512 : (int)len, dir, why, s->cwd);
        return;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        shx_buf_clear(&r->notice);
        shx_buf_puts(&r->notice, "out of memory: the working directory the shell reported was not adopted");
        return;
    }
    memcpy(copy, dir, len + 1);
    free(s->cwd);
    s->cwd = copy;
}

void shx_run_ended(shexec_run *r)
{
    if (r->proc.end_reason == SHX_END_TIMEOUT)
        r->state = SHEXEC_STATE_TIMED_OUT;
    else if (r->proc.end_reason == SHX_END_CANCEL)
        r->state = SHEXEC_STATE_CANCELLED;
    else if (r->proc.end_reason == SHX_END_KILL)
        r->state = SHEXEC_STATE_KILLED;
    else if (r->proc.term_signal)
        r->state = SHEXEC_STATE_SIGNALED;
    else
        r->state = SHEXEC_STATE_EXITED;
    /* a run with its own cwd, and a task, never move the session */
    if (!r->cwd && !r->task && r->out.filter && r->out.sentinel.found)
        shx_run_adopt_cwd(r, r->out.sentinel.path.data ? r->out.sentinel.path.data : "",
                          r->out.sentinel.path.len);
}

SHEXEC_API int shexec_run_set_pty(shexec_run *run, int mode)
{
    int rc = configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    if (mode != SHEXEC_PTY_OFF && mode != SHEXEC_PTY_ON && mode != SHEXEC_PTY_ECHO)
        return shx_fail(run->s, SHEXEC_EINVAL, "unknown terminal mode %d", mode);
    run->pty = mode;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_set_pty_size(shexec_run *run, uint32_t cols, uint32_t rows)
{
    int rc = configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    if (cols == 0 || rows == 0 || cols > 65535 || rows > 65535)
        return shx_fail(run->s, SHEXEC_EINVAL, "window size %ux%u out of range 1-65535",
                        cols, rows);
    run->cols = (uint16_t)cols;
    run->rows = (uint16_t)rows;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_set_ansi(shexec_run *run, int mode)
{
    int rc = configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    if (mode != SHEXEC_ANSI_KEEP && mode != SHEXEC_ANSI_STRIP)
        return shx_fail(run->s, SHEXEC_EINVAL, "unknown ANSI mode %d", mode);
    run->ansi = mode;
    return SHEXEC_OK;
}
