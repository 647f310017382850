/*
 * launch.c - what a run's shell is given, resolved once when the run
 * starts (launch.h): where it starts, its environment, the program and its
 * argv, its report channel and prelude, how the prelude reaches the shell
 * (script.h), what its output hides, output limits and timeout.
 */
#include "run/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;
#include "session/environment.h"
#include "shell/channels.h"
#include "contain/contain_hook.h"
#include "persist/persist_hook.h"
#include "shx/platform.h"
#include "shell/script.h"
#include "session/session.h"
#include "shell/shstate.h"
#include "shx/env.h"
#include "spawn/forkexec.h"
#include "spawn/program.h"
#include "session/settings.h"
#include "run/bare.h"
#include "run/cwd.h"
#include "run/run.h"

/* What one argument holds (Linux: 128 KiB with its NUL); a longer -c string is read from a file. */
#define ARGV_SCRIPT_MAX ((size_t)128 << 10)
/* What a remote wrapper's shell gets travels as one argument on the other
 * side (ssh joins them): below the 128 KiB Linux allows one. */
#define REMOTE_ARGS_MAX ((size_t)120 << 10)

/* The built environment with PWD set to the start directory (so a shell
 * keeps a logical path, through symlinks, from one command to the next),
 * the library's own entries added (in l->added, after PWD's), and for bash
 * the startup variables left to the prelude. */
static char **with_added(shx_launch *l, char **env)
{
    size_t n = 0, at = (size_t)-1, nadd = 0;
    int bash = l->mode == SHX_LAUNCH_BASH_ENV || l->mode == SHX_LAUNCH_BASH_LOAD;
    for (; env[n]; n++)
        if (at == (size_t)-1 && strncmp(env[n], "PWD=", 4) == 0)
            at = n;
    for (size_t off = 0; off < l->added.len; off += strlen(l->added.data + off) + 1)
        nadd++;
    char **v = malloc((n + nadd + 1) * sizeof *v);
    if (!v)
        return NULL;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == at)
            at = kept;
        if (!bash || !shx_script_startup_var(env[i]))
            v[kept++] = env[i];
    }
    n = kept;
    size_t off = 0;
    for (size_t i = 0; i < nadd; i++) {
        char *e = l->added.data + off;
        off += strlen(e) + 1;
        if (i == 0 && at != (size_t)-1)
            v[at] = e; /* PWD replaces the environment's own */
        else
            v[n++] = e;
    }
    v[n] = NULL;
    return v;
}

/*
 * The run's variables when a wrapper program stands between the library
 * and the shell: the wrapper gets the session's environment only (a
 * variable a tool call sets must not choose what the wrapper runs), and
 * the shell inside exports them. Locally they go into the prelude, in the
 * shell's syntax (never on a command line); through a remote wrapper, as
 * the line's arguments ("NAME=VALUE" to set, "NAME" to unset), the only
 * way across. The deny list applies here as it does to an environment.
 */
static int wrapper_vars(shexec_session *s, const shx_envlist *vars, int mode, shx_buf *prelude,
                        shx_buf *args, size_t *nargs)
{
    *nargs = 0;
    if (!vars->n)
        return SHEXEC_OK;
    shx_namefilter filter;
    if (shx_namefilter_init(&filter, &s->deny, &s->allow) != SHEXEC_OK)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    int bash = mode == SHX_LAUNCH_BASH_ENV || mode == SHX_LAUNCH_BASH_LOAD;
    int rc = SHEXEC_OK;
    for (size_t i = 0; i < vars->n; i++) {
        const char *name = vars->names[i], *value = vars->values[i];
        size_t len = strlen(name);
        int drops = shx_namefilter_drops(&filter, name, len);
        if (drops < 0) {
            rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
            break;
        }
        if (drops)
            continue;
        if (!shx_env_name_is_identifier(name, len)) {
            rc = shx_fail(s, SHEXEC_EINVAL,
                          "variable \"%s\" cannot be passed through the wrapper program: a shell "
                          "inside it can only export names of letters, digits and '_'",
                          name);
            break;
        }
        if (mode == SHX_LAUNCH_REMOTE) {
            shx_buf_puts(args, name);
            if (value) {
                shx_buf_putc(args, '=');
                shx_buf_puts(args, value);
            }
            shx_buf_putc(args, '\0');
            (*nargs)++;
        } else if (value) {
            shx_buf_puts(prelude, bash ? "export -- " : "export ");
            shx_buf_puts(prelude, name);
            shx_buf_putc(prelude, '=');
            if (bash)
                shx_ansi_c_quote(prelude, value, strlen(value));
            else
                shx_script_quote(prelude, value);
            shx_buf_putc(prelude, '\n');
        } else {
            shx_buf_puts(prelude, bash ? "unset -v -- " : "unset ");
            shx_buf_puts(prelude, name);
            shx_buf_putc(prelude, '\n');
        }
    }
    shx_namefilter_free(&filter);
    if (rc == SHEXEC_OK && (args->failed || prelude->failed))
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

/* Everything the shell is given besides its standard descriptors: the
 * report channel and the sealed prelude (channels.h), the argv tail (the
 * -c string with the command, or a file holding it), the library's
 * environment entries (BASH_ENV, kept functions). The mode follows from the
 * shell, a wrapper, and whether /dev/fd works (learnt on a first run). */
static int build_launch(shx_launch *l, shexec_session *s, shexec_run *r, const char *shell,
                        int wrapped)
{
    const char *name = shx_base_name(shell);
    int remote = s->wrapper_kind != SHEXEC_WRAPPER_LOCAL;
    int bash = !remote && s->shell_bash;
    shx_buf extra = SHX_BUF_INIT, funcs = SHX_BUF_INIT, args = SHX_BUF_INIT, prelude = SHX_BUF_INIT;
    size_t nargs = 0, nfuncs = 0;
    int rc = SHEXEC_OK;
    if (bash && (shx_persist_replay(s->persist, &r->env, &extra) != 0 ||
                 shx_persist_func_names(s->persist, &funcs, &nfuncs) != 0))
        rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    /* no report (bare.h): bare where no kept state is to be given or can
     * be read, else bash's prelude gives it and nothing else (quiet) */
    int quiet = r->command_len < ARGV_SCRIPT_MAX && shx_run_is_bare(s, r, l->env);
    int bare = quiet && ((!extra.len && !nfuncs) || shx_run_reads_no_state(s, r));
    quiet = quiet && !bare && bash && shx_run_is_given(s, r);
    bash = bash && !bare;
    int mode = remote ? SHX_LAUNCH_REMOTE : bare ? SHX_LAUNCH_BARE : bash ? SHX_LAUNCH_BASH_ENV
                                                                         : SHX_LAUNCH_POSIX;
    int k = bare ? SHX_CHANNEL_FD : shx_channel_number();
    shx_script_opts o = {.mode = mode, .channel_fd = k, .prelude_fd = k - 1, .nfuncs = nfuncs,
                         .marker = bash && wrapped, .quiet = l->quiet = quiet,
                         .start_word = wrapped ? NULL : shx_script_start_word(l->env, shell)};
    if (rc == SHEXEC_OK && !remote && k < 0)
        rc = shx_fail(s, SHEXEC_ESYS, "the limit on open descriptors is too low (below 12) "
                      "for the run's channel");
    /* a session that keeps the shell's state: every foreground run reports
     * it (but a bare or quiet one, which cannot change it), and every
     * command starts with what the last one left */
    o.capture = l->capture = s->persist && !r->task && !r->probe && !bare && !quiet;
    if (rc == SHEXEC_OK && wrapped)
        rc = wrapper_vars(s, &r->env, mode, &extra, &args, &nargs);
    if (rc == SHEXEC_OK && !remote && !bare && !quiet) {
        /* the report channel: first, so that /dev/fd is learnt on it */
        rc = shx_report_open(s, &l->report, &l->channel, bash, l->capture);
        if (rc == SHEXEC_OK && !s->devfd)
            s->devfd = shx_devfd_works() ? 1 : -1;
    }
    if (rc == SHEXEC_OK && !remote && !bare && !quiet) {
        /* through a wrapper BASH_ENV reaches bash unless it clears the
         * environment (env -i, sudo): a first run has both, and tells */
        if (bash && (s->devfd < 0 || (wrapped && s->wrapper_drops_bash_env)))
            mode = SHX_LAUNCH_BASH_LOAD;
        else if (!bash && s->devfd < 0)
            mode = SHX_LAUNCH_POSIX_FD9;
        if (mode == SHX_LAUNCH_POSIX_FD9 && extra.len)
            rc = shx_fail(s, SHEXEC_ESTATE, "the run's variables cannot be passed through the "
                          "wrapper program: /dev/fd does not work here");
        l->guard = o.guard = mode == SHX_LAUNCH_BASH_ENV && wrapped && !s->wrapper_known;
        o.mode = l->mode = mode;
        l->marker = o.marker;
        l->channel_at = mode == SHX_LAUNCH_POSIX_FD9 ? SHX_CHANNEL_FD_LOW : k;
    }
    l->mode = mode;
    if (rc == SHEXEC_OK && bash) /* bash's startup variables: the prelude's last lines */
        shx_script_startup_vars(l->env, &extra);
    o.funcs = funcs.data;
    o.extra = extra.data;
    o.extra_len = extra.len;
    if (rc == SHEXEC_OK && shx_script_prelude(&prelude, &o) != 0)
        rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    if (rc == SHEXEC_OK && !remote && prelude.len) {
        l->prelude_kept = mode == SHX_LAUNCH_POSIX || (mode == SHX_LAUNCH_BASH_ENV && !o.guard);
        rc = shx_prelude_kept_open(s, !l->prelude_kept ? NULL : quiet ? &s->prelude_quiet
                                                                       : &s->prelude_kept,
                                   &prelude, &l->prelude_fd);
        l->prelude_at = o.prelude_fd;
    }
    if (rc == SHEXEC_OK) {
        char hex[17];
        if (remote) {
            memcpy(hex, s->tag + strlen("__SHEXEC_CWD_"), 16);
            hex[16] = '\0';
            o.hex = hex;
        }
        /* the -c string: the mode's first-line prefix, then the command */
        shx_buf script = SHX_BUF_INIT;
        shx_script_line(&script, &o);
        shx_buf_append(&script, r->command, r->command_len);
        int quote = s->wrapper_kind == SHEXEC_WRAPPER_REMOTE_SHELL;
        if (script.failed) {
            rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        } else if (script.len < ARGV_SCRIPT_MAX || remote) {
            put_arg(&l->tail, "-c", quote);
            put_arg(&l->tail, script.data, quote);
            put_arg(&l->tail, name, quote);
            if (remote)
                put_arg(&l->tail, l->dir, quote);
        } else if (mode == SHX_LAUNCH_POSIX_FD9) {
            rc = shx_fail(s, SHEXEC_E2BIG, "the command (%zu bytes) is longer than one argument "
                          "can hold, and /dev/fd, through which the shell would read it from a "
                          "file, does not work here", r->command_len);
        } else {
            /* the shell reads the command as a script file */
            l->script_at = k - 2;
            rc = shx_prelude_open(s, &script, &l->script_fd);
            char path[32];
            (void)snprintf(path, sizeof path, "/dev/fd/%d", l->script_at);
            put_arg(&l->tail, path, 0);
        }
        shx_buf_free(&script);
        for (size_t i = 0, off = 0; rc == SHEXEC_OK && i < nargs; i++) {
            put_arg(&l->tail, args.data + off, quote);
            off += strlen(args.data + off) + 1;
        }
        if (rc == SHEXEC_OK && l->tail.failed)
            rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        /* ssh joins it all into the one argument of the remote shell's -c */
        if (rc == SHEXEC_OK && remote && l->tail.len > REMOTE_ARGS_MAX)
            rc = shx_fail(s, SHEXEC_E2BIG, "the command (%zu bytes) with the wrapper script and "
                          "the run's variables comes to %zu bytes: a remote wrapper takes at most "
                          "%zu, as one argument on the other side", r->command_len, l->tail.len,
                          REMOTE_ARGS_MAX);
    }
    /* the environment entries: PWD first (with_added), BASH_ENV, functions */
    if (rc == SHEXEC_OK) {
        shx_buf_printf(&l->added, "PWD=%s", l->dir);
        shx_buf_putc(&l->added, '\0');
        if (mode == SHX_LAUNCH_BASH_ENV && shx_buf_printf(&l->added, "BASH_ENV=/dev/fd/%d",
                                                          l->prelude_at) == 0)
            shx_buf_putc(&l->added, '\0');
        if (bash && shx_persist_func_entries(s->persist, &l->added) != 0)
            l->added.failed = 1;
        if (l->added.failed)
            rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    }
    shx_buf_free(&extra);
    shx_buf_free(&funcs);
    shx_buf_free(&args);
    shx_buf_free(&prelude);
    return rc;
}

void shx_launch_free(shx_launch *l)
{
    free(l->argv);
    shx_buf_free(&l->tail);
    shx_buf_free(&l->added);
    if (l->script_fd >= 0)
        close(l->script_fd);
    if (l->channel >= 0)
        close(l->channel);
    if (l->prelude_fd >= 0 && !l->prelude_kept)
        close(l->prelude_fd);
    shx_report_close(&l->report);
    free(l->envp);
    if (!l->env_shared)
        shx_env_free(l->env);
    free(l->dir);
    shx_redact_set_release(l->redact);
    l->redact = NULL;
    for (int k = -1; k < SHX_CTRLS; k++) {
        char *dir = k < 0 ? l->cgroup : l->cgroup_v1[k];
        if (dir) {
            (void)shx_cgroup_remove(dir);
            free(dir);
        }
    }
}

/*
 * Where a run starts: its own cwd (which must exist: SHEXEC_ENOCWD), or the
 * session's. A session cwd removed since (or a directory a forged report
 * named) does not lock the session: the run starts in the nearest existing
 * ancestor, the session moves there, and the run's notice says so. Where
 * the child's own chdir tells (forkexec.h), it is the look: start.c starts
 * the run again with cwd_gone set; elsewhere (a trampoline's cd) the
 * directory is looked at first.
 */
static int start_dir(shx_launch *l, shexec_run *r, int remote)
{
    shexec_session *s = r->s;
    if (r->cwd) {
        int rc = shx_session_resolve_dir(s, r->cwd, &l->dir);
        /* a remote wrapper's directory is on the other side: checked there */
        return rc == SHEXEC_OK && !remote ? shx_session_check_dir(s, l->dir) : rc;
    }
    if (!(l->dir = strdup(s->cwd)))
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    mode_t mode;
    int child_tells = shx_forkexec_reports_failure() && !r->cwd_gone;
    if (remote || child_tells || (shx_path_mode(l->dir, &mode) == 0 && S_ISDIR(mode)))
        return SHEXEC_OK;
    shx_cwd_nearest(l->dir);
    shx_buf_clear(&r->notice);
    shx_buf_printf(&r->notice, "the session's working directory \"%s\" no longer exists: the "
                   "command started in \"%s\"", s->cwd, l->dir);
    char *moved = strdup(l->dir);
    if (!moved)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    free(s->cwd);
    s->cwd = moved;
    return SHEXEC_OK;
}

/* Every setting the run starts with, the run's own over the session's. On
 * failure the message is set and nothing is left to free. */
int shx_launch_resolve(shx_launch *l, shexec_run *r)
{
    shexec_session *s = r->s;
    memset(l, 0, sizeof *l);
    l->script_fd = l->channel = l->prelude_fd = l->report.fd = -1;
    int remote = s->wrapper_kind != SHEXEC_WRAPPER_LOCAL;
    if (r->command_len > SHEXEC_MAX_COMMAND_BYTES)
        return shx_fail(s, SHEXEC_E2BIG, "the command is %zu bytes: above the %u-byte bound "
                        "(SHEXEC_MAX_COMMAND_BYTES)", r->command_len, SHEXEC_MAX_COMMAND_BYTES);
    /* what its output hides is known before anything runs */
    if (shx_redact_set_for_run(&s->redact, s->env_inherit ? (const char *const *)environ : NULL,
                               &s->env, &r->env, r->redact_own_env, &r->redact_values,
                               &l->redact) != 0)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    int rc = start_dir(l, r, remote);
    if (rc != SHEXEC_OK)
        goto fail;

    /* a wrapper program gets the session's environment; the run's variables go in by the prelude */
    int wrapped = s->shell_argv && s->shell_argv[1];
    rc = shx_session_env_for_run(s, wrapped ? NULL : &r->env, r->pty, &l->env, &l->env_shared);
    /* what a run that reports its state is compared with when it ends */
    if (rc == SHEXEC_OK && s->persist && !r->task && !wrapped && r->env.n) {
        shx_env_free(r->persist.prior_env);
        r->persist.prior_env = NULL;
        rc = shx_session_env_build(s, &r->persist.prior_env, NULL);
    }
    if (rc != SHEXEC_OK) {
        rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        goto fail;
    }

    const char *def[2] = {s->default_shell, NULL};
    const char *const *prefix = s->shell_argv ? (const char *const *)s->shell_argv : def;
    size_t np = 0;
    while (prefix[np])
        np++;
    if (np == 0) {
        rc = shx_fail(s, SHEXEC_ESPAWN, "no shell program is set");
        goto fail;
    }
    /* a contained session's command joins a cgroup of its own, bounded by
     * the run's limits over the session's */
    uint64_t limits[SHEXEC_LIMITS];
    int limited = 0;
    for (int i = 0; i < SHEXEC_LIMITS; i++)
        limited |= (limits[i] = (r->limits_set >> i & 1) ? r->limits[i] : s->limits[i]) != 0;
    const char *why = NULL;
    if (limited && !s->contain)
        rc = shx_fail(s, SHEXEC_ESTATE, "limits need containment by cgroup, which the session "
                      "does not have");
    else if (s->contain && shx_contain_run_make(s->contain, limits, &l->cgroup, l->cgroup_v1,
                                                &why) != 0)
        rc = shx_fail(s, errno == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS,
                      "cannot make the command's cgroup in %s: %s (%s)",
                      shx_contain_dir(s->contain), why, strerror(errno));
    if (rc != SHEXEC_OK)
        goto fail;
    memcpy(l->limits, limits, sizeof limits);
    rc = build_launch(l, s, r, prefix[np - 1], wrapped);
    if (rc != SHEXEC_OK)
        goto fail;
    if (!(l->envp = with_added(l, l->env))) {
        rc = shx_fail(s, SHEXEC_ENOMEM, "out of memory");
        goto fail;
    }
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
    shx_launch_free(l);
    return rc;
}

