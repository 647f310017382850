/*
 * inert.h - whether a command's text can move its shell (inert.c): a
 * command that cannot change the shell's working directory needs no
 * report of it, so its shell is started as `SHELL -c CMD` alone, with no
 * prelude, EXIT trap or channel (launch.c).
 *
 * The answer is read from the text alone, and errs one way only: "inert"
 * is said of a command only where neither bash nor dash, started
 * non-interactively with no startup file and no function from the
 * environment (the caller's part to make sure), could run a builtin that
 * changes directory, or source a file (which could). Anything the check
 * cannot follow without running the command makes it not inert:
 *   - any expansion that can make a word the text does not spell out:
 *     `$` and '`' (anywhere, single quotes too: a trap or eval string
 *     would expand them later), '\' (quoting, or a line's continuation),
 *     and `(` `)` (subshells, functions, extended patterns) outside quotes;
 *   - a pattern (unquoted `*`, `?`, `[`, `{`, `}`: pathname and brace
 *     expansion, which can make `cd` from the files there, and `{ }`
 *     groups) anywhere but among the arguments of a simple command whose
 *     first word is a plain command word: no pattern, no reserved word
 *     (after `time -p` or `if` the next word is a command), no assignment,
 *     not led by a redirection (in `2>f *` the `*` is the command);
 *   - a name that moves the shell or runs text as commands in it: cd,
 *     chdir, pushd, popd, source, eval, exec, command, builtin, trap,
 *     enable, alias, fc, mapfile, readarray, complete, compgen, bind,
 *     BASH_ALIASES, BASH_CMDS; looked for as whole names both with quotes
 *     taken out (`c''d`) and with quotes as boundaries (`'x'cd`), anywhere
 *     in the text (a name inside a string may be run later);
 *   - `.` as a word that may be the dot builtin: a standalone `.` is
 *     allowed only as an argument, after a word that is not an option,
 *     an assignment or a reserved word, on the same line with no operator
 *     between (`find . -name x`, `git add .`), and never inside quotes;
 *   - an unterminated quote or a NUL.
 * Linear in the text's length; no allocation. Functions need `(` or `{`,
 * so an inert command defines none.
 */
#ifndef SHX_INERT_H
#define SHX_INERT_H

#include <stddef.h>

/* 1: the command cannot change its shell's working directory (as above);
 * 0: it may, or the text is beyond the check. */
int shx_inert_command(const char *cmd, size_t len);

/* 1: the command is inert, and can set none of its shell's variables or
 * functions (what a session that keeps the shell's state takes from it):
 * no '=' outside quotes (an assignment, even a prefix one, which a special
 * builtin keeps), no `}` outside quotes right before `<` or `>` (`{fd}>f`
 * sets fd), no `[` anywhere (an array subscript is arithmetic, which can
 * assign: `test -v 'a[y=1]'`, `"[" -v ...`), and no name among export,
 * unset, readonly, read, getopts, set, shopt, local, declare, typeset,
 * let, printf (bash's -v), for, select, shift, wait (bash's -p), coproc
 * (COPROC) and test (its -v takes a subscript, or a nameref to one),
 * found as the moving names are; 0 otherwise. */
int shx_inert_stateless(const char *cmd, size_t len);

#endif
