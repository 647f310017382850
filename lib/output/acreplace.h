/*
 * acreplace.h - replacing many literal byte strings at once in a stream
 * (Aho-Corasick): every occurrence of any pattern becomes that pattern's
 * replacement, leftmost first and, among those starting at the same byte,
 * longest first, so a secret that is a prefix of another never leaves the
 * longer one's end behind. Occurrences split across feeds are found: the
 * stream holds back at most the longest pattern's length less one byte.
 *
 * Cost: the automaton is built in time linear in the patterns' bytes (times
 * a node's children); a stream costs a constant per byte for a given
 * pattern set. After an occurrence is replaced, what was read past its end
 * while a longer one was possible (less than the longest pattern) is read
 * again, so the bytes read stay within (1 + longest / shortest) times the
 * input. Pure: nothing here reads or writes outside its buffers.
 */
#ifndef SHX_ACREPLACE_H
#define SHX_ACREPLACE_H

#include <stddef.h>
#include <stdint.h>

#include "shx/buf.h"

typedef struct shx_acr shx_acr;

/* An empty pattern set; NULL on ENOMEM. */
shx_acr *shx_acr_new(void);
/*
 * Add a pattern (len >= 1) and what replaces it (copied). A pattern added
 * twice keeps its first replacement. 0, or -1 on ENOMEM or len 0 (the set
 * is unchanged). Only before shx_acr_build().
 */
int shx_acr_add(shx_acr *a, const void *pat, size_t len, const char *repl, size_t repl_len);
/* Finish the automaton; afterwards the set only serves streams. 0 or -1 (ENOMEM). */
int shx_acr_build(shx_acr *a);
/* How many distinct patterns the set holds. */
size_t shx_acr_count(const shx_acr *a);
void shx_acr_free(shx_acr *a);

/* One stream through a built set (which must outlive it). */
typedef struct shx_acr_stream {
    const shx_acr *a;
    uint32_t state;
    shx_buf pend;        /* bytes read and not yet handed out */
    uint64_t base;       /* stream position of pend's first byte */
    uint64_t done;       /* stream position up to which bytes are handed out */
    uint64_t pos;        /* stream position of the next byte to match */
    uint64_t floor;      /* occurrences start here or later (after the last replaced) */
    int has_cand;        /* an occurrence found, waiting for a longer or earlier one */
    uint64_t cand_start, cand_end;
    uint32_t cand_pat;
    uint64_t replaced;   /* occurrences replaced so far */
    int failed;          /* ENOMEM: bytes passed through unmatched since */
} shx_acr_stream;

void shx_acr_stream_init(shx_acr_stream *st, const shx_acr *a);
/* Match len bytes; what is settled is appended to out. 0 or -1 (ENOMEM:
 * the bytes are then appended unmatched, and st->failed is set). */
int shx_acr_feed(shx_acr_stream *st, const void *data, size_t len, shx_buf *out);
/* End of stream: append everything held back, replaced. 0 or -1. */
int shx_acr_finish(shx_acr_stream *st, shx_buf *out);
void shx_acr_stream_free(shx_acr_stream *st);

#endif
