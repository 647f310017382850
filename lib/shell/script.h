/*
 * script.h - what a command's shell is given besides the command itself
 * (script.c): the prelude it runs first, out of the command's way, and the
 * report its EXIT trap writes on the run's channel.
 *
 * The command's text is never edited. How the prelude reaches the shell
 * depends on the shell and on what carries it (shx_launch_mode):
 *   BASH_ENV   bash started directly: `bash -c CMD bash`, the prelude read
 *              by bash itself before the command, from BASH_ENV=/dev/fd/P
 *              (P = K - 1: the sealed prelude file, which the prelude
 *              closes); the report goes to descriptor K (a socket). The
 *              command is exactly bash's -c string; through a wrapper not
 *              yet known to pass BASH_ENV, a guarded loader comes first.
 *   BASH_LOAD  bash through a local wrapper that clears the environment,
 *              or where /dev/fd does not work: the -c string is a loader
 *              (`read` of the prelude from descriptor P, `eval`) on the
 *              command's first line, then the command.
 *   POSIX      any other shell: the trap (and, when the run has variables
 *              to pass through a wrapper, `. /dev/fd/P`) on the first line,
 *              then the command; the report is appended to /dev/fd/K (a
 *              pipe: a socket cannot be opened through /dev/fd).
 *   POSIX_FD9  the same where /dev/fd does not work: the report goes to
 *              descriptor 9 (a POSIX shell addresses 0-9 only).
 *   REMOTE     through a remote wrapper (only stdin, stdout and stderr
 *              cross): the first line takes the directory and the run's
 *              variables from its arguments, keeps a copy of stdout on
 *              descriptor 9, and its trap writes the record there, tagged.
 *   BARE       bash or dash started directly for a run that needs no
 *              report (bare.h): `SHELL -c CMD` and nothing else, no
 *              prelude, trap or channel.
 *              Where bash must be given kept state, BASH_ENV instead,
 *              quiet: the prelude gives it and nothing else (no trap, no
 *              channel).
 * Everything is on the command's first line (or before it), so the shell
 * parses and runs the command as `SHELL -c CMD` would: line by line, with
 * its own line numbers, aliases and options in force from the line after
 * the one that set them, and a syntax error ending the command where it
 * stands.
 */
#ifndef SHX_SCRIPT_H
#define SHX_SCRIPT_H

#include <stddef.h>

#include "shx/buf.h"

/* The channel's descriptor in the shell: one no ordinary script uses (a
 * POSIX shell cannot address it at all); lowered below the open-files
 * limit where that is smaller. POSIX_FD9 uses 9. */
#define SHX_CHANNEL_FD 173
#define SHX_CHANNEL_FD_LOW 9

enum shx_launch_mode {
    SHX_LAUNCH_BASH_ENV = 1,
    SHX_LAUNCH_BASH_LOAD = 2,
    SHX_LAUNCH_POSIX = 3,
    SHX_LAUNCH_POSIX_FD9 = 4,
    SHX_LAUNCH_REMOTE = 5,
    SHX_LAUNCH_BARE = 6
};

typedef struct shx_script_opts {
    int mode;               /* SHX_LAUNCH_* */
    int channel_fd;         /* K: the channel's number in the shell */
    int capture;            /* the report also lists the shell's state */
    int quiet;              /* BASH_ENV with no channel: the prelude gives the kept state
                               and sets no trap (a run that needs no report: bare.h) */
    int marker;             /* bash: the prelude's first act says it ran ("prelude=1") */
    const char *hex;        /* REMOTE: the session's nonce (16 hex digits) */
    int prelude_fd;         /* the prelude's number in the shell (BASH_*, POSIX with extra) */
    int guard;              /* BASH_ENV through a wrapper not known to pass it: the first
                               line loads the prelude unless BASH_ENV did ("loaded=1") */
    /* bash: functions given through the environment, NUL-separated names
     * (n of them): made unexported, and each one bash did not define is
     * reported ("lost") */
    const char *funcs;
    size_t nfuncs;
    /* what else the prelude runs: bash's replayed variables, a wrapped run's
     * exports (bash or POSIX syntax, as the mode), built by the caller */
    const char *extra;
    size_t extra_len;
    /* BASH_ENV: what $_ is as bash starts, when the caller knows it (bash
     * started directly: shx_script_start_word); NULL: the prelude keeps it
     * at run time */
    const char *start_word;
} shx_script_opts;

/* Append the prelude file's text (BASH_ENV, BASH_LOAD; POSIX when extra is
 * not empty: the exports), to be read by the shell from the channel. 0 or -1. */
int shx_script_prelude(shx_buf *out, const shx_script_opts *o);

/* Append what goes before the command on its first line (every mode but
 * BASH_ENV: nothing). 0 or -1. */
int shx_script_line(shx_buf *out, const shx_script_opts *o);

/* The length of an environment entry's name when it is one of the
 * variables that change how bash starts (POSIXLY_CORRECT, POSIX_PEDANTIC,
 * SHELLOPTS, BASHOPTS: kept out of bash's exec environment), else 0. */
size_t shx_script_startup_var(const char *entry);

/* Append the prelude's last lines for bash: each startup variable of the
 * NULL-terminated env set as bash would have had it at its start. */
void shx_script_startup_vars(char *const *env, shx_buf *out);

/* Append s as one single-quoted word for a POSIX shell. 0 or -1. */
int shx_script_quote(shx_buf *out, const char *s);

/*
 * What $_ is as bash starts, given the environment (built, so each name is
 * in it once: shx_env_build) and argv[0] it is executed with: the
 * environment's _, else argv[0]. The prelude gives it back as a word of
 * its own, with no run-time test and no variable of its own.
 */
const char *shx_script_start_word(char *const *env, const char *argv0);

#endif
