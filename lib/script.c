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
 * command calls `exit` (or `set -e` ends the shell); whichever comes first
 * writes it, once. The trap and the epilogue first turn tracing off inside
 * a group whose stderr is closed (cheaper than opening /dev/null), so
 * `set -x` shows nothing of theirs.
 * A command that replaces the EXIT trap and then calls `exit`, and a
 * command that ends in `exec` (the shell is replaced), report nothing: the
 * session's directory stays.
 *
 * Local wrappers write the record ("status=N\0cwd=<pwd output>\0", see
 * record.h) to SHX_RECORD_FD. Remote wrappers carry only stdin, stdout and
 * stderr: the script keeps a copy of the original stdout on the same
 * descriptor number and writes the tagged record there (TAG + directory +
 * NUL), after checking on the remote side that the directory exists.
 * `command` keeps user functions named printf, pwd, cd or exit from taking
 * over; the tag is written in two pieces so it never appears whole in the
 * shell's argv.
 */
#include "script.h"

#include <string.h>

/* The run's variables, passed as arguments, exported inside. */
static const char vars_prologue[] =
    "for __shexec_v do case $__shexec_v in *=*) command export \"$__shexec_v\";; "
    "*) command unset \"$__shexec_v\";; esac 2>&-; done; set --; unset __shexec_v; ";

/*
 * The record in one write where it can be: when PWD is absolute and names
 * the directory the shell is in (`test -ef`: the same file), it is what
 * `pwd` would print, and one printf writes the whole record (the library
 * wakes once per write, and this runs for every command). Otherwise (the
 * command assigned PWD, or unset it) `pwd` itself reports the real
 * directory. Its stderr is closed: when bash runs the EXIT trap for a
 * signal (a timeout's SIGTERM) inside the command's group, descriptor 3 is
 * still closed, and the failed write must not print.
 */
static const char local_report[] =
    "__shexec_rec() { case ${__shexec_done-} in 1) return;; esac; __shexec_done=1; "
    "case ${PWD-} in /*) if command [ \"$PWD\" -ef . ]; then "
    "command printf 'status=%s\\0cwd=%s\\n\\0' \"$1\" \"$PWD\" >&3; return; fi;; esac; "
    "{ command printf 'status=%s\\0cwd=' \"$1\"; command pwd; command printf '\\0'; } >&3; } 2>&-; ";

static const char remote_report_fmt[] =
    "exec 3>&1; __shexec_dir=$1; shift; "
    "__shexec_rec() { case ${__shexec_done-} in 1) return;; esac; __shexec_done=1; "
    "__shexec_d=$(command pwd) && [ -d \"$__shexec_d\" ] && "
    "command printf '__SHEXEC_CWD_%%s__%%s\\0' %s \"$__shexec_d\" >&3; } 2>&-; "
    "case $__shexec_dir in '') ;; *) command cd -- \"$__shexec_dir\" 2>/dev/null || { "
    "__shexec_done=1; command printf 'shexec: working directory \"%%s\" does not exist on the "
    "remote side\\n' \"$__shexec_dir\" >&2; command exit 1; };; esac; unset __shexec_dir; ";

static const char trap_line[] =
    "trap '{ __shexec_s=$?; set +x; } 2>&-; __shexec_rec \"$__shexec_s\"' EXIT; { ";

static const char epilogue[] =
    "\n} 3>&-\n"
    "{ __shexec_s=$?; set +x; } 2>&-; __shexec_rec \"$__shexec_s\"; "
    "command exit \"$__shexec_s\"\n";

int shx_script_build(shx_buf *out, const char *cmd, size_t len, const shx_script_opts *o)
{
    if (o->from_fd)
        shx_buf_puts(out, "exec 4<&-; ");
    if (o->remote)
        shx_buf_printf(out, remote_report_fmt, o->hex);
    else
        shx_buf_puts(out, local_report);
    if (o->with_vars)
        shx_buf_puts(out, vars_prologue);
    shx_buf_puts(out, trap_line);
    shx_buf_append(out, cmd, len);
    shx_buf_puts(out, epilogue);
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
