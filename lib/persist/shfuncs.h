/*
 * shfuncs.h - bash's listing of its functions (`declare -f`) taken apart
 * (shfuncs.c): one function at a time, and a guess at whether bash can
 * define it again with its options as they are when it starts. Pure.
 */
#ifndef SHX_SHFUNCS_H
#define SHX_SHFUNCS_H

#include <stddef.h>


/* Called for each function of a `declare -f` listing: its name and its
 * body, from the "{ " line after the header to the end of its last line. */
typedef int (*shx_func_fn)(void *user, const char *name, size_t name_len, const char *body,
                           size_t body_len);

/*
 * Split bash's `declare -f` listing (len bytes) into its functions: each
 * starts at a header line "NAME () " followed by a line "{ ". The split is
 * textual: a function whose here-document holds such a pair of lines is
 * cut there (each piece is then a function of its own, or fails to be
 * defined). SHX_DECL_OK, SHX_DECL_MALFORMED (text before the first
 * header), or what fn returned.
 */
int shx_funcs_each(const char *text, size_t len, shx_func_fn fn, void *user);

/* 1 when a function's text (len bytes) holds what looks like an extended
 * pattern (?(...), *(...), +(...), @(...), !(...)) outside quotes, [[ ]]
 * and (( )): bash parses it only with `shopt -s extglob` on, which is off
 * when the shell starts. A guess, on the safe side of the cost. */
int shx_func_needs_extglob(const char *text, size_t len);

#endif
