/*
 * capture.h - bounded capture of one output stream: keeps the head (or the
 * head and the tail) up to a limit in characters or bytes, never splitting
 * a UTF-8 sequence, and counts the total (characters, bytes, lines).
 * Memory is bounded by the limit whatever is fed. How it is shown, with
 * its notice, is notice.h's.
 */
#ifndef SHX_CAPTURE_H
#define SHX_CAPTURE_H

#include <stdint.h>

#include "shx/buf.h"

typedef struct shx_capture {
    uint64_t limit;
    int unit; /* SHEXEC_UNIT_* */
    int keep; /* SHEXEC_KEEP_HEAD or SHEXEC_KEEP_HEAD_TAIL */
    int keep_arg; /* keep as given, flags included: what a copy is made with */
    int within; /* SHEXEC_KEEP_WITHIN_LIMIT: the notice counts toward the limit */
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
    /* newlines fed, and whether the last byte fed before a sequence still
     * cut short (pend) was one: the lines count the same however the
     * stream is cut into feeds, and a sequence taken back is not counted */
    uint64_t newlines;
    int ends_in_newline;
    unsigned char pend[4]; /* the valid start of a sequence a feed's end cut */
    size_t pend_len;
    int finished;
} shx_capture;

/* What a capture kept of what it was fed, and what it was fed. */
typedef struct shx_capture_counts {
    uint64_t kept_chars, kept_bytes, total_chars, total_bytes;
} shx_capture_counts;

/* Set up for `limit` units (0: keep nothing); unit/keep are SHEXEC_UNIT_/KEEP_
 * (keep with SHEXEC_KEEP_WITHIN_LIMIT or'ed in, or not). */
void shx_capture_init(shx_capture *c, uint64_t limit, int unit, int keep);
/* Its counts so far (a sequence still cut short is in total_bytes only);
 * what it kept, which with SHEXEC_KEEP_WITHIN_LIMIT may be more than a
 * render shows (notice.h: shx_capture_view_of()). */
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
/* Lines fed: the newlines, and one more when the last byte is not one
 * (a sequence taken back with shx_capture_take_pending() is not fed). */
uint64_t shx_capture_lines(const shx_capture *c);
/* Step over whole characters from p while fewer than `target` units are
 * behind (UINT64_MAX: all of them), fast over ASCII; stops before a
 * sequence cut by the end. Returns the bytes stepped over; the characters
 * go to *chars. */
size_t shx_capture_skip(const shx_capture *c, const unsigned char *p, size_t n, uint64_t target,
                        uint64_t *chars);
void shx_capture_free(shx_capture *c);

#endif
