/*
 * script.c - the prelude a command's shell runs before the command, and
 * the report its EXIT trap writes (see script.h for the launch modes).
 *
 * The report is an EXIT trap, set by the prelude: it runs however the
 * command ends by itself (its last line, `exit N`, `set -e`), after the
 * command's own traps of other signals, and writes the record (record.h):
 * "\0status=N\0cwd=" then the `pwd` builtin's output (the shell's own idea
 * of where it is, logical where valid; not the PWD variable, which a
 * command can assign), "\0", and when asked the shell's state (bash:
 * `declare -p` and `declare -f`; a POSIX shell: `export -p`). The leading
 * NUL ends anything written before it. Everything the trap runs is inside
 * one group with stderr closed, so `set -x` traces none of it, and builtins
 * are called as builtins. In bash the trap first removes a DEBUG trap (which
 * so runs once more, for that first command, where a plain shell would not
 * run it at exit) and takes the status in the arithmetic expansion that
 * gives the channel's number, expanded with the group's redirections
 * before any command of the group runs (any command would change $?; a
 * here-string would cost bash a pipe and a read).
 *
 * A command that replaces the EXIT trap, or that ends in `exec`, reports
 * nothing: the session's directory then stays where it was (the library
 * says so in the run's notice). The report is untrusted input all the
 * same: the command runs in the same shell and can write the channel.
 *
 * Each prelude runs out of sight: its commands' errors go nowhere, and it
 * sets no variable the command can see (the loader's one is unset before
 * the command starts). Nor does it leave $_ changed: bash sets it to the
 * last word of each command, so the value bash started with (the
 * environment's _, else its argv[0]) is given back as the last word of the
 * last command the shell runs before the command's own (written there when
 * the library knows it, shx_script_start_word; else kept first and tested
 * at the end), and PIPESTATUS, which every command sets, is left unset as
 * bash starts (RESTORE_LAST_WORD).
 */
#include "shell/script.h"

#include <string.h>

#include "shx/env.h"

/* bash: the report's body, between its head and tail */
#define BASH_REPORT_HEAD                                                                          \
    "{ builtin trap - DEBUG; builtin set +e +u; "                                                \
    "builtin printf \"\\0status=%s\\0cwd=\" \"$__shexec_s\"; builtin pwd; "
#define BASH_REPORT_STATE                                                                         \
    "builtin unset BASH_EXECUTION_STRING; builtin printf \"\\0decl=\"; builtin declare -p; "      \
    "builtin printf \"\\0funcs=\"; builtin declare -f; "
#define BASH_REPORT_TAIL "builtin printf \"\\0\"; } 2>&- >&$((__shexec_s=$?,%d))"

/* bash: $_ as the shell started, kept before anything ran (a loader keeps it
 * before the prelude: then the prelude's own line keeps that one) */
#define KEEP_LAST_WORD "__shexec_u=${__shexec_u-$_}"
/* ... and given back as the last word of the last command, and PIPESTATUS
 * left unset, as bash starts. Every command that completes sets
 * PIPESTATUS, `unset PIPESTATUS` too, unless a PIPESTATUS that is no
 * array is found then: the temporary one each of these commands is given,
 * gone with the command, so that the real one, once unset, stays unset.
 * The value kept is removed in the command that gives it back: `unset`
 * takes it as a name too, which an absolute path (the environment's _, a
 * shell's path) never is; where it could name a variable that is set
 * (`bash` as argv[0]), a function that removes itself is called instead
 * (PIPESTATUS then stays (0)). Traced by no `set -x` the prelude's last
 * lines may have turned on; no status that `set -e` would end the shell
 * on. No '%': it is part of printf formats too. */
#define RESTORE_LAST_WORD                                                                         \
    "{ if [[ $__shexec_u == [A-Za-z_]* ]] && builtin declare -p -- \"${__shexec_u/[[]*}\" "     \
    ">/dev/null; then __shexec_r() { builtin unset -v __shexec_u; builtin unset -f "              \
    "__shexec_r; }; __shexec_r \"$__shexec_u\"; else PIPESTATUS= builtin unset -v PIPESTATUS "    \
    "__shexec_u \"$__shexec_u\" || PIPESTATUS= builtin : \"$_\"; fi; } 2>&-"


#define POSIX_REPORT_HEAD                                                                         \
    "{ command printf \"\\0status=%s\\0cwd=\" \"$?\"; command set +e +u; command pwd; "
#define POSIX_REPORT_STATE "command printf \"\\0env=\"; command export -p; "
#define POSIX_REPORT_TAIL "command printf \"\\0\"; } 2>&- "

static void bash_trap(shx_buf *out, const shx_script_opts *o)
{
    shx_buf_puts(out, "builtin trap '" BASH_REPORT_HEAD);
    if (o->capture)
        shx_buf_puts(out, BASH_REPORT_STATE);
    shx_buf_printf(out, BASH_REPORT_TAIL "' EXIT\n", o->channel_fd);
}

static void posix_trap(shx_buf *out, const shx_script_opts *o)
{
    shx_buf_puts(out, "trap '" POSIX_REPORT_HEAD);
    if (o->capture)
        shx_buf_puts(out, POSIX_REPORT_STATE);
    shx_buf_puts(out, POSIX_REPORT_TAIL);
    if (o->mode == SHX_LAUNCH_POSIX_FD9)
        shx_buf_printf(out, ">&%d", SHX_CHANNEL_FD_LOW);
    else
        shx_buf_printf(out, ">>/dev/fd/%d", o->channel_fd);
    shx_buf_puts(out, "' EXIT; ");
}

int shx_script_prelude(shx_buf *out, const shx_script_opts *o)
{
    if (o->mode == SHX_LAUNCH_POSIX) {
        /* only what a wrapped run exports, sourced by the first line */
        if (o->extra_len)
            shx_buf_append(out, o->extra, o->extra_len);
        return out->failed ? -1 : 0;
    }
    if (o->mode != SHX_LAUNCH_BASH_ENV && o->mode != SHX_LAUNCH_BASH_LOAD)
        return 0;
    /* $_ known (no loader, no wrapper): given back at the end as a word */
    const char *known = o->mode == SHX_LAUNCH_BASH_ENV && !o->guard ? o->start_word : NULL;
    if (!known)
        shx_buf_puts(out, KEEP_LAST_WORD "\n");
    /* BASH_ENV must not reach the command's own bash scripts; the trap
     * comes first, so that the report works whatever follows */
    if (o->mode == SHX_LAUNCH_BASH_ENV)
        shx_buf_puts(out, "builtin unset BASH_ENV\n");
    if (o->marker)
        shx_buf_printf(out, "builtin printf '\\0prelude=1\\0' >&%d\n", o->channel_fd);
    if (!o->quiet)
        bash_trap(out, o);
    if (o->nfuncs || o->extra_len) {
        shx_buf_puts(out, "{\n");
        /* functions bash took from its environment: for the shell only, as
         * if defined by a command (children do not inherit them); one it
         * refused is reported, and the session forgets it */
        const char *name = o->funcs;
        for (size_t i = 0; i < o->nfuncs; i++) {
            shx_buf_puts(out, "builtin declare -F -- ");
            shx_script_quote(out, name);
            shx_buf_puts(out, " >/dev/null && builtin export -nf -- ");
            shx_script_quote(out, name);
            if (!o->quiet) { /* quiet: no channel; the next listing tells */
                shx_buf_puts(out, " || builtin printf '\\0lost=%s\\0' ");
                shx_script_quote(out, name);
                shx_buf_printf(out, " >&%d", o->channel_fd);
            }
            shx_buf_putc(out, '\n');
            name += strlen(name) + 1;
        }
        /* the library's own lines (declare, export): no user function can
         * take these names (replay.h) */
        if (o->extra_len)
            shx_buf_append(out, o->extra, o->extra_len);
        shx_buf_puts(out, "} 2>&-\n");
    }
    /* the prelude's descriptor is the shell's no longer (bash read the
     * file through its own); the command never sees it. `command exec`:
     * the redirection of a `builtin exec` would last for that command
     * alone, and no kept function may be named command or exec (replay.h) */
    shx_buf_printf(out, "command exec %d<&-\n", o->prelude_fd);
    if (o->guard) {
        shx_buf_puts(out, "__shexec_in=1\n");
    } else if (known) {
        /* PIPESTATUS unset as in RESTORE_LAST_WORD, the word given back as
         * the last word of the last command. An absolute path is never a
         * name, so there it is the same command's: `unset -v` leaves it
         * (and functions) alone and fails on it, which `!` turns into the
         * status 0 bash starts with (and no `set -e` acts on). One command
         * with an assignment before it, not two: bash rebuilds its
         * exported environment after each (dispose_used_env_vars), a cost
         * that grows with the environment. Any other word: a `:` of its own */
        shx_buf_puts(out, known[0] == '/' ? "{ ! PIPESTATUS= builtin unset -v PIPESTATUS "
                                          : "{ PIPESTATUS= builtin unset -v PIPESTATUS; "
                                            "PIPESTATUS= builtin : ");
        shx_script_quote(out, known);
        shx_buf_puts(out, "; } 2>&-\n");
    } else if (o->mode == SHX_LAUNCH_BASH_ENV) { /* a loader's line gives it back after itself */
        shx_buf_puts(out, RESTORE_LAST_WORD "\n");
    }
    return out->failed ? -1 : 0;
}

const char *shx_script_start_word(char *const *env, const char *argv0)
{
    const char *word = env ? shx_env_get(env, "_") : NULL;
    return word ? word : argv0;
}

/* remote: $1 the directory, then the run's variables; the directory (or,
 * gone, its nearest existing ancestor) is entered with OLDPWD left as the
 * shell had it; the trap drops a DEBUG trap first (bash; dash refuses it:
 * `command` and `|| :` keep that from ending the trap under `set -e`),
 * with what that DEBUG trap prints, once, thrown away; and it reports the
 * directory without a newline (a terminal on the way would turn it into
 * CRLF); $_ is kept first and given back last, and in bash PIPESTATUS
 * left unset, as the prelude does (RESTORE_LAST_WORD: a POSIX shell parses
 * it, and takes the other branch) */
static const char remote_line_fmt[] =
    "__shexec_u=$_; exec 9>&1; __shexec_d=$1; shift; for __shexec_v do case $__shexec_v in *=*) "
    "command export \"$__shexec_v\";; *) command unset \"$__shexec_v\";; esac 2>&-; done; set --; "
    "__shexec_x=${OLDPWD+x}; __shexec_p=${OLDPWD-}; "
    "case $__shexec_d in '') ;; *) command cd -- \"$__shexec_d\" 2>/dev/null || { "
    "__shexec_o=$__shexec_d; while :; do __shexec_d=${__shexec_d%%/" "*}; case $__shexec_d in '') "
    "__shexec_d=/;; esac; command cd -- \"$__shexec_d\" 2>/dev/null && break; "
    "case $__shexec_d in /) break;; esac; done; command printf 'shexec: working directory "
    "\"%%s\" does not exist on the remote side: starting in \"%%s\"\\n' \"$__shexec_o\" "
    "\"$PWD\" >&2; }; case $__shexec_x in x) OLDPWD=$__shexec_p;; *) unset OLDPWD;; esac;; esac; "
    "unset __shexec_d __shexec_v __shexec_o __shexec_x __shexec_p; "
    "trap '{ { command trap - DEBUG || :; } >/dev/null; __shexec_p=$(command pwd) && "
    "command printf \"__SHEXEC_CWD_%%s__%%s\\0\" %s \"$__shexec_p\"; } 2>&- >&9' EXIT; "
    "case ${BASH_VERSION-} in '') __shexec_r() { unset __shexec_u; unset -f __shexec_r; }; "
    "__shexec_r \"$__shexec_u\";; *) " RESTORE_LAST_WORD ";; esac; ";

int shx_script_line(shx_buf *out, const shx_script_opts *o)
{
    switch (o->mode) {
    case SHX_LAUNCH_BASH_ENV:
        if (!o->guard)
            break;
        /* the prelude ran from BASH_ENV (and set __shexec_in), or it is
         * loaded here, and the report says it was */
        shx_buf_printf(out,
                       KEEP_LAST_WORD "; builtin test -n \"${__shexec_in-}\" || { IFS= builtin "
                       "read -r -d '' -u %d __shexec_p; builtin eval \"$__shexec_p\"; builtin "
                       "unset __shexec_p; builtin printf '\\0loaded=1\\0' >&%d; } 2>&-; builtin "
                       "unset __shexec_in; " RESTORE_LAST_WORD "; ",
                       o->prelude_fd, o->channel_fd);
        break;
    case SHX_LAUNCH_BASH_LOAD:
        /* the prelude closes its own descriptor (its last line) */
        shx_buf_printf(out,
                       KEEP_LAST_WORD "; IFS= builtin read -r -d '' -u %d __shexec_p; builtin eval "
                       "\"$__shexec_p\"; builtin unset __shexec_p; " RESTORE_LAST_WORD "; ",
                       o->prelude_fd);
        break;
    case SHX_LAUNCH_POSIX:
    case SHX_LAUNCH_POSIX_FD9:
        posix_trap(out, o);
        if (o->mode == SHX_LAUNCH_POSIX && o->extra_len)
            shx_buf_printf(out, ". /dev/fd/%d; ", o->prelude_fd);
        break;
    case SHX_LAUNCH_REMOTE:
        shx_buf_printf(out, remote_line_fmt, o->hex ? o->hex : "0");
        break;
    default:
        break;
    }
    return out->failed ? -1 : 0;
}

/*
 * Variables that change how bash starts: POSIXLY_CORRECT and POSIX_PEDANTIC
 * (POSIX mode, which skips BASH_ENV: no prelude, no report), SHELLOPTS and
 * BASHOPTS (options in force before the prelude runs: xtrace would trace
 * it, errexit could end it, posix would skip it). They are kept out of a
 * bash's exec environment and set by the prelude's last lines instead, so
 * the command finds them, and their effect, as `bash -c` would give them.
 */
size_t shx_script_startup_var(const char *entry)
{
    static const char *const names[] = {"POSIXLY_CORRECT", "POSIX_PEDANTIC", "SHELLOPTS",
                                        "BASHOPTS", NULL};
    for (const char *const *n = names; *n; n++) {
        size_t len = strlen(*n);
        if (strncmp(entry, *n, len) == 0 && entry[len] == '=')
            return len;
    }
    return 0;
}

/* An option list's words of [a-z_] (others are skipped: the value is the
 * model's to choose), each as `builtin CMD WORD`. */
static void restore_options(shx_buf *out, const char *list, const char *cmd)
{
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ":");
        size_t ok = 0;
        while (ok < n && ((p[ok] >= 'a' && p[ok] <= 'z') || p[ok] == '_'))
            ok++;
        if (n > 0 && ok == n && n < 32) {
            shx_buf_printf(out, "builtin %s ", cmd);
            shx_buf_append(out, p, n);
            shx_buf_putc(out, '\n');
        }
        p += n;
        if (*p == ':')
            p++;
    }
}

void shx_script_startup_vars(char *const *env, shx_buf *out)
{
    for (size_t i = 0; env[i]; i++) {
        size_t n = shx_script_startup_var(env[i]);
        if (!n)
            continue;
        const char *value = env[i] + n + 1;
        if (n == strlen("SHELLOPTS") && strncmp(env[i], "SHELLOPTS", n) == 0) {
            restore_options(out, value, "set -o");
            shx_buf_puts(out, "builtin export SHELLOPTS\n");
        } else if (n == strlen("BASHOPTS") && strncmp(env[i], "BASHOPTS", n) == 0) {
            restore_options(out, value, "shopt -s");
            shx_buf_puts(out, "builtin export BASHOPTS\n");
        } else {
            shx_buf_puts(out, "builtin export ");
            shx_buf_append(out, env[i], n);
            shx_buf_putc(out, '=');
            shx_script_quote(out, value);
            shx_buf_putc(out, '\n');
        }
    }
}

int shx_script_quote(shx_buf *out, const char *s)
{
    shx_buf_putc(out, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            shx_buf_puts(out, "'\\''");
        else
            shx_buf_putc(out, *s);
    }
    shx_buf_putc(out, '\'');
    return out->failed ? -1 : 0;
}
