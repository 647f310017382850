/*
 * replay.h - the shell state a session keeps, given to the next bash in the
 * library's own words (replay.c). What a command's shell listed is
 * untrusted (the command can write the listing itself): a variable is
 * taken apart into its name, attributes and value, checked, and written
 * again as one `declare` line quoted by the library, never as the text the
 * shell printed; a function is handed to bash through its environment
 * (BASH_FUNC_NAME%%), whose import parses exactly one function
 * definition of that name and runs nothing. Pure: buffers in, buffers out.
 */
#ifndef SHX_REPLAY_H
#define SHX_REPLAY_H

#include <stddef.h>

#include "shx/buf.h"
#include "shell/shstate.h"

enum { SHX_REPLAY_OK = 0, SHX_REPLAY_SKIP = 1, SHX_REPLAY_NOMEM = -1 };

/* The longest function the environment can carry: one entry of it is at
 * most 128 KiB on Linux (MAX_ARG_STRLEN), with room for the name. */
#define SHX_REPLAY_FUNC_MAX ((size_t)120 << 10)

/*
 * Append to out the line that gives bash the (not exported) variable d:
 * `declare -FLAGS -- NAME=VALUE` and a newline, the value quoted
 * as $'...' (arrays: `([KEY]=$'...' ...)`, indexed keys in decimal).
 * Attributes replayed: a, A, i, l, u, n. Returns SHX_REPLAY_OK,
 * SHX_REPLAY_SKIP with *why set when the declaration is not replayed (a
 * readonly one; an integer whose value is not a decimal number; a nameref
 * to anything but a plain name; an array bash would not have listed), or
 * SHX_REPLAY_NOMEM. Nothing is appended unless SHX_REPLAY_OK.
 */
int shx_replay_var(shx_buf *out, const shx_decl *d, const char **why);

/*
 * 1 when a function of this name (n bytes) may be kept: not the name of a
 * builtin or keyword of bash or dash (a function of that name would take
 * over what the library's prelude and report call), not one of the
 * library's own (__shexec...), and made of [A-Za-z0-9_.:-] starting with
 * a letter or '_'. Else 0, with *why set.
 */
int shx_replay_func_name_ok(const char *name, size_t n, const char **why);

/*
 * Append the value of the environment entry that defines the function
 * (BASH_FUNC_NAME%%): "() " BODY, BODY as shx_funcs_each gives it (from
 * its "{ " line). SHX_REPLAY_OK, SHX_REPLAY_SKIP with *why (a body that is
 * not "{ ...}", holds a NUL, is larger than SHX_REPLAY_FUNC_MAX, or needs
 * extglob to parse), or SHX_REPLAY_NOMEM.
 */
int shx_replay_func_value(shx_buf *out, const char *body, size_t body_len, const char **why);

/* Append the name of that entry: "BASH_FUNC_" NAME "%%". 0 or -1. */
int shx_replay_func_env_name(shx_buf *out, const char *name);

#endif
