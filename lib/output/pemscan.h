/*
 * pemscan.h - PEM private-key blocks found in a stream wherever they stand:
 * at the start of a line, indented (YAML, a diff's '+'), or inside a line
 * whose breaks are written out ("\n" in a JSON string, as in a cloud
 * service-account key file) or were turned into spaces (an unquoted
 * `echo $KEY`).
 *
 * A block starts at "-----BEGIN <label>-----" whose label (printable, at
 * most SHX_PEM_LABEL_MAX bytes) ends in "PRIVATE KEY", when the first byte
 * after it, past white space and written-out breaks (backslashes, and the
 * n, r or t after one; at most SHX_PEM_GAP_MAX bytes), is a base64 digit:
 * a key's body begins there, while a boundary only named in code or prose
 * ("...KEY-----\")", "...KEY-----`") is followed by something else and
 * starts nothing. The block ends with its "-----END <label>-----", the same
 * label; the whole of it becomes "[REDACTED:PRIVATE_KEY]" and what stands
 * before and after it on its lines is kept. A block whose END never comes
 * hides the rest of the stream.
 *
 * What may still be a block's start is held back, at most SHX_PEM_HOLD
 * bytes. Pure, linear in the bytes fed, and the output is the same however
 * the stream is cut into feeds.
 */
#ifndef SHX_PEMSCAN_H
#define SHX_PEMSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "shx/buf.h"

#define SHX_PEM_LABEL_MAX 64
#define SHX_PEM_GAP_MAX 64
/* "-----BEGIN ", the label, "-----", the gap and the body's first byte */
#define SHX_PEM_HOLD (11 + SHX_PEM_LABEL_MAX + 5 + SHX_PEM_GAP_MAX + 1)
/* "-----END ", the label, "-----" */
#define SHX_PEM_END_MAX (9 + SHX_PEM_LABEL_MAX + 5)

typedef struct shx_pemscan {
    int phase;                  /* seeking a BEGIN, its label, the gap, in a block */
    char held[SHX_PEM_HOLD];    /* from the first dash of what may be a BEGIN */
    size_t held_len;
    size_t label_end;           /* in the gap: where the BEGIN's closing dashes end */
    unsigned dashes;            /* in the label: the dashes it ends with */
    int escaped;                /* in the gap: a backslash just before */
    /* in a block: its END boundary, the border table that matches it in one
     * pass, and how much of it the bytes last read match */
    char end[SHX_PEM_END_MAX];
    unsigned char border[SHX_PEM_END_MAX];
    size_t end_len, end_at;
    uint64_t replaced;          /* blocks found */
} shx_pemscan;

void shx_pemscan_init(shx_pemscan *k);
/* Scan n bytes; what is settled is appended to out. 0 or -1 (ENOMEM). */
int shx_pemscan_feed(shx_pemscan *k, const void *data, size_t n, shx_buf *out);
/* End of stream: what was held back is appended (inside a block nothing
 * is). 0 or -1. */
int shx_pemscan_finish(shx_pemscan *k, shx_buf *out);

#endif
