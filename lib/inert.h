/*
 * inert.h - which commands cannot change the shell's state (inert.c): a
 * session that keeps that state need not have the shell list it after
 * them. Pure: text in, a verdict out.
 */
#ifndef SHX_INERT_H
#define SHX_INERT_H

#include <stddef.h>

#include "env.h"

/*
 * 1 when the command (len bytes) cannot change the shell's variables,
 * exports or functions: it holds no expansion, no backslash, no
 * parenthesis or brace, no bracket but a `[` word, no word that starts as
 * an assignment, and no word that (quotes removed) is a builtin or keyword
 * that sets variables or runs text as code in bash, dash, zsh or ksh, or
 * a name in funcs (the functions the session keeps; NULL: none). 0
 * otherwise, and whenever in doubt (an open quote, no memory).
 */
int shx_inert_command(const char *cmd, size_t len, const shx_envlist *funcs);

/*
 * Add to names (values "") the name of every function in bash's `declare
 * -f` listing (len bytes): each header line, "NAME () " or "function NAME
 * () ". A line of a function's body that looks like a header adds a name
 * that is none; no header is missed. 0, or -1 when a name could not be
 * added (out of memory, a name the list cannot hold): the names are then
 * not known.
 */
int shx_func_names(shx_envlist *names, const char *listing, size_t len);

#endif
