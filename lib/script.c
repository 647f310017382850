/*
 * script.c - the wrapper script around one command.
 *
 * The command's text goes into the script verbatim, inside a brace group
 * that starts on the script's first line (so the shell's messages give the
 * command's own line numbers) and closes the record descriptor for the
 * command: while the group runs, the shell keeps its copy on a descriptor
 * of its own that is close-on-exec, so nothing the command starts inherits
 * it, and after the group (or before an EXIT trap, on `exit`) the shell
 * restores it. The command runs at the script's top level, not through
 * `eval`, so bash's trace shows its lines as "+ cmd". The group is parsed
 * whole before it runs: a command with a syntax error runs none of it, as
 * `eval` would; a command can end its own group early with a stray "}",
 * which changes only its own meaning.
 *
 * The record is written after the group, or by the EXIT trap when the
 * command calls `exit` (or `set -e` ends the shell). Both run inside a
 * group whose stderr is closed (cheaper than opening /dev/null), so
 * `set -x` shows nothing of theirs; the epilogue's `exit` is inside its
 * group too, and the shell (bash, dash) undoes the group's redirections
 * before it runs an EXIT trap, so a command's own trap runs with its
 * stdout and stderr, traced if it turned tracing on.
 * A command that replaces the EXIT trap and then calls `exit`, and a
 * command that ends in `exec` (the shell is replaced), report nothing: the
 * session's directory stays.
 *
 * Local wrappers write the record (see record.h) to SHX_RECORD_FD, a file
 * the library reads once the shell has exited: the shell writes in as many
 * pieces as it likes without waking the host. The record's first key,
 * "cwd=", the library puts before what it reads, so the shell's part is
 * `pwd`'s output, then "\0status=N\0" and, with capture, the state's
 * fields.
 *
 * Remote wrappers carry only stdin, stdout and
 * stderr: the script keeps a copy of the original stdout on the same
 * descriptor number and writes the tagged record there (TAG + directory +
 * NUL), after checking on the remote side that the directory exists.
 * `command` keeps user functions named printf, pwd, cd or exit from taking
 * over; the tag is written in two pieces so it never appears whole in the
 * shell's argv.
 *
 * A session that keeps the shell's state (local wrappers only) has the
 * record also carry it, listed by builtins (no process is started): bash's
 * `declare -p` (decl) and `declare -f` (funcs), a POSIX shell's `export
 * -p` (env). The report code is a variable, not a function, so that
 * `declare -f` lists the command's functions and nothing of the wrapper's.
 * The state the last command left (bash: its variables and
 * functions; the environment comes as the environment) is replayed first
 * on line 1, as one $'...' word that spans no line, inside a group whose
 * stderr is closed: no trace under `set -x`, no message, and the command's
 * line numbers stay its own.
 */
#include "script.h"

#include "shstate.h"

#include <string.h>

/* The run's variables, passed as arguments, exported inside. */
static const char vars_prologue[] =
    "for __shexec_v do case $__shexec_v in *=*) command export \"$__shexec_v\";; "
    "*) command unset \"$__shexec_v\";; esac 2>&-; done; set --; unset __shexec_v; ";

/*
 * Local wrappers. The report is kept in a variable, run by the EXIT trap
 * through `eval`; the epilogue after the group (reached when the command
 * ends normally) reports itself and empties the variable, so a command that
 * set an EXIT trap of its own still reports, and its trap still runs after.
 * The trap is the last thing the shell runs, so it moves stdout to the
 * record with `exec` (nothing to save or restore); that fails quietly, and
 * writes nothing, when bash runs it for a signal inside the group, where
 * descriptor 3 is closed. The trap's text is only that `eval`, in a group
 * with stderr closed (no trace under `set -x`, and the least to parse when
 * the epilogue has already reported); the status is taken first inside.
 * The directory is what the `pwd` builtin prints:
 * the shell's own idea of where it is (logical where valid), not the PWD
 * variable, which a command can assign.
 */
/* After the directory (the "cwd=" that heads the record is the library's:
 * one command fewer here), the status, and with
 * capture the state listed by builtins: bash's variables and functions
 * (its -c text, the whole script, left out), a POSIX shell's exports; which
 * one, the shell decides until the session has seen its first listing. Each
 * printf ends one field and opens the next. */
#define REPORT_CWD "command pwd; "
#define STATUS_THEN(next) "command printf \"\\0status=%s\\0" next "\" \"$__shexec_s\"; "
#define STATE_DECL                                                                                 \
    STATUS_THEN("decl=") "builtin unset BASH_EXECUTION_STRING; builtin declare -p; "              \
                         "command printf \"\\0funcs=\"; builtin declare -f; command printf \"\\0\"; "
#define STATE_EXPORT STATUS_THEN("env=") "command export -p; command printf \"\\0\"; "
static const char *const report_tail[] = {
    [SHX_CAPTURE_NONE] = STATUS_THEN(""),
    [SHX_CAPTURE_ANY] = "case ${BASH_VERSION-} in \"\") " STATE_EXPORT ";; *) " STATE_DECL ";; esac; ",
    [SHX_CAPTURE_DECL] = STATE_DECL,
    [SHX_CAPTURE_EXPORT] = STATE_EXPORT,
};

#define LOCAL_TRAP_HEAD "__shexec_r='__shexec_s=$?; exec >&3 && { "
#define LOCAL_TRAP_TAIL "}'; "
#define LOCAL_EPILOGUE_HEAD "\n} 3>&-\n{ __shexec_s=$? __shexec_r=; "
#define LOCAL_EPILOGUE_TAIL "command exit \"$__shexec_s\"; } 2>&- >&3\n"

static const char local_trap_line[] = "trap '{ command eval \"$__shexec_r\"; } 2>&-' EXIT; { ";

/* The report's body between head and tail: the status, the directory and,
 * with capture, the state. */
static void local_report(shx_buf *out, const char *head, const char *tail, int capture)
{
    shx_buf_puts(out, head);
    shx_buf_puts(out, REPORT_CWD);
    shx_buf_puts(out, report_tail[capture]);
    shx_buf_puts(out, tail);
}

static const char remote_report_fmt[] =
    "exec 3>&1; __shexec_dir=$1; shift; "
    "__shexec_rec() { case ${__shexec_done-} in 1) return;; esac; __shexec_done=1; "
    "__shexec_d=$(command pwd) && [ -d \"$__shexec_d\" ] && "
    "command printf '__SHEXEC_CWD_%%s__%%s\\0' %s \"$__shexec_d\" >&3; } 2>&-; "
    "case $__shexec_dir in '') ;; *) command cd -- \"$__shexec_dir\" 2>/dev/null || { "
    "__shexec_done=1; command printf 'shexec: working directory \"%%s\" does not exist on the "
    "remote side\\n' \"$__shexec_dir\" >&2; command exit 1; };; esac; unset __shexec_dir; ";

/* remote: the report is a function, called by the trap or the epilogue,
 * whichever comes first (a done flag) */
static const char remote_trap_line[] =
    "trap '{ __shexec_s=$?; set +x; } 2>&-; __shexec_rec \"$__shexec_s\"' EXIT; { ";
static const char remote_epilogue[] =
    "\n} 3>&-\n"
    "{ __shexec_s=$?; set +x; } 2>&-; __shexec_rec \"$__shexec_s\"; "
    "command exit \"$__shexec_s\"\n";

int shx_script_build(shx_buf *out, const char *cmd, size_t len, const shx_script_opts *o)
{
    if (o->from_fd)
        shx_buf_puts(out, "exec 4<&-; ");
    if (o->replay && o->replay_len) {
        shx_buf_puts(out, "{ command eval ");
        shx_ansi_c_quote(out, o->replay, o->replay_len);
        shx_buf_puts(out, "; } 2>&-; ");
    }
    int capture = o->remote || o->capture < 0 || o->capture > SHX_CAPTURE_EXPORT ? 0 : o->capture;
    if (o->remote)
        shx_buf_printf(out, remote_report_fmt, o->hex);
    else
        local_report(out, LOCAL_TRAP_HEAD, LOCAL_TRAP_TAIL, capture);
    if (o->with_vars)
        shx_buf_puts(out, vars_prologue);
    shx_buf_puts(out, o->remote ? remote_trap_line : local_trap_line);
    shx_buf_append(out, cmd, len);
    if (o->remote)
        shx_buf_puts(out, remote_epilogue);
    else
        local_report(out, LOCAL_EPILOGUE_HEAD, LOCAL_EPILOGUE_TAIL, capture);
    return out->failed ? -1 : 0;
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
