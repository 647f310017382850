/*
 * shstate.h - the parser for a shell's listing of its variables, as the
 * wrapper script reports it when the session keeps the shell's state:
 * bash's `declare -p` (every variable, with its attributes) and a POSIX
 * shell's `export -p` (dash: the exported ones). Pure: text in, one
 * declaration at a time out.
 *
 * A listing is a sequence of lines, one declaration each:
 *   KEYWORD [-FLAGS ...] [--] NAME[=WORD]
 * KEYWORD is declare, typeset, export or readonly; FLAGS are letters (x:
 * exported, r: readonly, a/A: an array); NAME is a shell identifier. WORD
 * is shell-quoted: '...', "..." (backslash before $ ` " \ newline),
 * $'...' (ANSI-C escapes), a backslash before one character, and plain
 * bytes; quoted text may span lines (a value with a newline). An array's
 * WORD is its "(...)" list, kept as text and not decoded. A line that does
 * not have this shape makes the whole listing malformed: a listing is
 * taken whole or not at all.
 */
#ifndef SHX_SHSTATE_H
#define SHX_SHSTATE_H

#include <stddef.h>

#include "shx/buf.h"

typedef struct shx_decl {
    const char *text;   /* the whole declaration, without its newline */
    size_t text_len;
    const char *name;   /* within text */
    size_t name_len;
    int exported;       /* export keyword or the x flag */
    int readonly;       /* readonly keyword or the r flag */
    int array;          /* the a or A flag, or a "(...)" value */
    int assoc;          /* the A flag */
    int integer, nameref, lower, upper; /* the i, n, l and u flags */
    int other_flags;    /* a flag letter not named above (t, ...) */
    const char *array_text; /* an array's "(...)" WORD as listed, within text, or NULL */
    size_t array_len;
    int has_value;      /* NAME=WORD, not a bare NAME */
    const char *value;  /* the decoded scalar value (NUL-terminated, may hold any byte
                           but NUL), or NULL for an array or a bare NAME */
    size_t value_len;
} shx_decl;

/* Called for each declaration, in order; non-zero stops the walk and is
 * returned by shx_decl_each. */
typedef int (*shx_decl_fn)(void *user, const shx_decl *d);

enum { SHX_DECL_OK = 0, SHX_DECL_MALFORMED = -1, SHX_DECL_NOMEM = -2 };

/*
 * Walk the listing (len bytes; NUL bytes make it malformed). scratch holds
 * the decoded values between calls (cleared and reused). Returns
 * SHX_DECL_OK, SHX_DECL_MALFORMED (*bad_at, if bad_at is non-NULL: the
 * offset of the line that is not a declaration; fn may have been called
 * for the lines before it), SHX_DECL_NOMEM, or what fn returned.
 */
int shx_decl_each(const char *text, size_t len, shx_buf *scratch, shx_decl_fn fn, void *user,
                  size_t *bad_at);

/* Called for each element of an array: its subscript and its value, both
 * decoded (NUL-terminated, no NUL inside); non-zero stops the walk. */
typedef int (*shx_elem_fn)(void *user, const char *key, size_t key_len, const char *value,
                           size_t value_len);

/*
 * Walk an array's "(...)" WORD as `declare -p` lists it (len bytes):
 * elements "[KEY]=VALUE" separated by spaces, KEY and VALUE shell-quoted.
 * key and val are scratch buffers. SHX_DECL_OK, SHX_DECL_MALFORMED (a
 * shape bash does not print, or a byte a shell would read as syntax
 * unquoted), SHX_DECL_NOMEM, or what fn returned.
 */
int shx_array_each(const char *text, size_t len, shx_buf *key, shx_buf *val, shx_elem_fn fn,
                   void *user);

/* Append s (n bytes, no NUL) as a bash $'...' word that spans no line:
 * backslash, quote and newline escaped, other bytes as they are. 0 or -1. */
int shx_ansi_c_quote(shx_buf *out, const char *s, size_t n);

#endif
