/*
 * keyscan.h - finding secrets by their shape in a stream, where no value is
 * known beforehand: PEM private-key blocks wherever they stand (pemscan.h),
 * and tokens (runs of letters, digits, '_' and '-') that start with a known
 * key prefix and are long enough to be a key: github_pat_, ghp_/gho_/ghu_/
 * ghs_/ghr_ (GitHub), sk-ant- (Anthropic), sk- (OpenAI), AKIA (AWS access
 * key id), xoxa-/xoxb-/xoxp- (Slack). A token is replaced whole. An escape
 * sequence (ESC [ ... final, ESC + intermediates + final, ESC + one byte)
 * is no part of a token, so a key coloured by the codes just before or
 * after it ("ESC[32m" + key + "ESC[0m", as grep --color prints it) is
 * found; only a byte that may start a key is not taken as the final byte
 * of a lone ESC. A token is held back while it could still become a key (at
 * most 64 bytes), what may be a BEGIN boundary as pemscan.h says.
 * Pure, linear in the bytes fed, and the same output whatever the chunking.
 */
#ifndef SHX_KEYSCAN_H
#define SHX_KEYSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "shx/buf.h"
#include "output/pemscan.h"

enum { SHX_KEYSCAN_TOKENS = 1, SHX_KEYSCAN_PEM = 2 };

#define SHX_KEYSCAN_HOLD 64

typedef struct shx_keyscan {
    unsigned which;             /* SHX_KEYSCAN_* */
    /* tokens */
    int tok_mode;               /* outside a token, deciding, plain, a key, an escape */
    char hold[SHX_KEYSCAN_HOLD];
    size_t hold_len;
    shx_pemscan pem;            /* PEM blocks */
    shx_buf mid;                /* between the two stages */
    uint64_t replaced;          /* keys and blocks replaced */
} shx_keyscan;

void shx_keyscan_init(shx_keyscan *k, unsigned which);
/* Scan len bytes; what is settled is appended to out. 0 or -1 (ENOMEM). */
int shx_keyscan_feed(shx_keyscan *k, const void *data, size_t len, shx_buf *out);
/* End of stream: append what is held back. 0 or -1. */
int shx_keyscan_finish(shx_keyscan *k, shx_buf *out);
void shx_keyscan_free(shx_keyscan *k);

#endif
