/*
 * sentinel.h - the stdout filter for cwd tracking through a remote wrapper
 * (one that carries only stdin, stdout and stderr; a local wrapper's record
 * has a channel of its own). The wrapper script ends
 * each command by printing TAG + directory + NUL, where TAG is the
 * session's `__SHEXEC_CWD_<16 hex>__`. The filter passes every other byte
 * through in order, removes each complete TAG...NUL record and remembers the
 * directory of the last one. It holds back only what could still become a
 * record: a TAG prefix at the end of a chunk, or a TAG and up to
 * SHX_SENTINEL_MAX_PATH bytes of directory; a "record" longer than that is
 * not one and is passed through as output.
 */
#ifndef SHX_SENTINEL_H
#define SHX_SENTINEL_H

#include <stddef.h>

#include "shx/buf.h"

#ifndef SHX_SENTINEL_MAX_PATH /* the fuzz target builds with a small one */
#define SHX_SENTINEL_MAX_PATH 65536
#endif
#define SHX_SENTINEL_TAG_MAX 64

/* Receives filtered output; returns 0, or -1 to stop (ENOMEM). */
typedef int (*shx_emit_fn)(void *ctx, const char *data, size_t len);

typedef struct shx_sentinel {
    char tag[SHX_SENTINEL_TAG_MAX];
    size_t taglen;
    char held[SHX_SENTINEL_TAG_MAX]; /* a TAG prefix seen at the end of a chunk */
    size_t heldlen;
    int in_record;   /* TAG seen, collecting the directory until NUL */
    shx_buf record;  /* directory bytes of the record being collected */
    shx_buf path;    /* directory of the last complete record */
    int found;       /* number of complete records seen */
} shx_sentinel;

/* tag must be shorter than SHX_SENTINEL_TAG_MAX and non-empty. */
void shx_sentinel_init(shx_sentinel *f, const char *tag);
int shx_sentinel_feed(shx_sentinel *f, const char *data, size_t len, shx_emit_fn emit, void *ctx);
/* End of stream: whatever is held back was not a record; emit it. */
int shx_sentinel_finish(shx_sentinel *f, shx_emit_fn emit, void *ctx);
void shx_sentinel_free(shx_sentinel *f);

/* Write the session tag for a 64-bit nonce into tag (>= 40 bytes). */
void shx_sentinel_make_tag(char *tag, unsigned long long nonce);

#endif
