/*
 * capture.h - bounded capture of one output stream: keeps the head (or the
 * head and the tail) up to a limit in characters or bytes, never splitting
 * a UTF-8 sequence, counts the total, and renders the kept text with the
 * truncation notice. Memory is bounded by the limit whatever is fed.
 */
#ifndef SHX_CAPTURE_H
#define SHX_CAPTURE_H

#include <stdint.h>

#include "shx/buf.h"

typedef struct shx_capture {
    uint64_t limit;
    int unit; /* SHEXEC_UNIT_* */
    int keep; /* SHEXEC_KEEP_* */
    uint64_t head_cap, tail_cap; /* in units */
    shx_buf head;
    uint64_t head_units;
    int head_closed;
    /* tail ring (HEAD_TAIL only), sized for tail_cap units of up to 4 bytes */
    unsigned char *ring;
    size_t ring_cap, ring_start, ring_len;
    uint64_t tail_units, dropped_units;
    uint64_t total_units, total_bytes;
    /* characters, whatever the unit: kept in the head, in the tail, in all, left out */
    uint64_t head_chars, tail_chars, total_chars, dropped_chars;
    unsigned char pend[4]; /* a sequence cut by the end of a feed */
    size_t pend_len;
    int finished;
} shx_capture;

/* What a capture kept of what it was fed, and what it was fed. */
typedef struct shx_capture_counts {
    uint64_t kept_chars, kept_bytes, total_chars, total_bytes;
} shx_capture_counts;

/* Set up for `limit` units (0: keep nothing); unit/keep are SHEXEC_UNIT_/KEEP_. */
void shx_capture_init(shx_capture *c, uint64_t limit, int unit, int keep);
/* Its counts so far (a sequence still cut short is in total_bytes only). */
static inline void shx_capture_counts_of(const shx_capture *c, shx_capture_counts *out)
{
    *out = (shx_capture_counts){c->head_chars + c->tail_chars, c->head.len + c->ring_len,
                                c->total_chars, c->total_bytes};
}
/* Feed bytes. 0, or -1 on ENOMEM (what was kept so far stays valid). */
int shx_capture_feed(shx_capture *c, const char *data, size_t len);
/* End of stream: a sequence left incomplete counts as invalid bytes. */
int shx_capture_finish(shx_capture *c);
/* Take back the bytes of a sequence cut short by the end of the last feed
 * (into seq, at most 4; returns how many): they are no longer counted, and
 * are the next capture's to feed. */
size_t shx_capture_take_pending(shx_capture *c, unsigned char seq[4]);
/* 1 when some output was not kept. */
int shx_capture_truncated(const shx_capture *c);
/* The tail's bytes, oldest first, in the ring's two pieces (*b_len 0 when
 * it does not wrap). */
void shx_capture_tail_pieces(const shx_capture *c, const unsigned char **a, size_t *a_len,
                             const unsigned char **b, size_t *b_len);
/* Bytes fed and not kept (a sequence still cut short is neither). */
uint64_t shx_capture_dropped_bytes(const shx_capture *c);
/*
 * Replace `out` with the kept text and, when some was left out, the notice
 * (see shexec.h for its wording): first or last, with `full` (NULL: none)
 * as its last clause (where the whole text is); with head and tail, the
 * marker between them says what was left out there. 0 or -1.
 */
int shx_capture_render(const shx_capture *c, shx_buf *out, int notice_first, const char *full);
void shx_capture_free(shx_capture *c);

#endif
