/*
 * record.h - the parser for what a command's shell reports back on the
 * run's channel (the record; script.h writes it). Pure: bytes in, fields
 * out, any chunking. The record comes from inside the command, which can
 * write it too: every field is checked here or where it is used.
 *
 * The record is a sequence of fields, each "key=value" followed by a NUL:
 *   key   one to 32 of [a-z0-9_], starting with a letter or '_'
 *   value any bytes but NUL
 * Keys the parser does not know are skipped (so later versions can add
 * fields, such as the exported environment, without changing the framing);
 * when a key comes more than once the last one counts (the wrapper writes
 * its record last). Known keys:
 *   status  the command's exit status, decimal 0-255
 *   cwd     the output of the shell's `pwd`: the directory and one newline
 *   env     `export -p` of a POSIX shell (dash): the exported variables
 *   decl    bash's `declare -p`: every variable, with its attributes
 *   funcs   bash's `declare -f`: every function
 *   lost    the name of a function given to bash that it did not define
 *           (one field each; kept in `lost`, NUL-separated)
 *   prelude the prelude ran (written first, where the library asks)
 *   loaded  it ran from the command's first line, not from BASH_ENV
 * Empty fields (the report starts with a NUL, ending whatever came
 * before) are skipped.
 * env, decl and funcs (the shell's state) are kept only when asked for
 * (want_state), and together only up to SHX_STATE_MAX bytes: past it they
 * are dropped and state_over is set (the state is not adopted).
 * A malformed field (no '=', a bad key, a bad status) is skipped and
 * counted; bytes after the last NUL (a record cut short) are not a field.
 * The whole record is bounded by SHX_RECORD_MAX: past it nothing more is
 * taken and the record is marked over (and not believed).
 */
#ifndef SHX_RECORD_H
#define SHX_RECORD_H

#include <stddef.h>

#include "shx/buf.h"

#ifndef SHX_RECORD_MAX /* the fuzz target builds with a small one */
#define SHX_RECORD_MAX (16u << 20)
#endif
#define SHX_RECORD_KEY_MAX 32
#ifndef SHX_STATE_MAX /* SHEXEC_MAX_PERSIST_BYTES; the fuzz target builds with a small one */
#define SHX_STATE_MAX (1u << 20)
#endif

typedef struct shx_record {
    shx_buf field;   /* the field being read, up to its NUL */
    size_t total;    /* bytes taken so far */
    int over;        /* more than SHX_RECORD_MAX bytes came: the record is not believed */
    int nomem;       /* an allocation failed: the record is not believed */
    int fields;      /* complete, well-formed fields */
    int malformed;   /* complete fields that were skipped as malformed */
    int has_status;
    int status;
    int has_cwd;
    shx_buf cwd;     /* the directory, without pwd's newline */
    int want_state;  /* keep env, decl and funcs (set before the first feed) */
    int state_over;  /* they came to more than SHX_STATE_MAX bytes: dropped */
    size_t state_bytes;
    int has_env, has_decl, has_funcs;
    shx_buf env, decl, funcs;
    shx_buf lost;    /* names, each with its NUL */
    int has_prelude;
    int loaded;      /* the prelude was loaded by the command's first line */
} shx_record;

void shx_record_init(shx_record *r);
/* Take more bytes of the record. */
void shx_record_feed(shx_record *r, const char *data, size_t len);
/* 1 when the record can be believed: not over the bound, no allocation failed. */
int shx_record_usable(const shx_record *r);
void shx_record_free(shx_record *r);

#endif
