/*
 * fresh.c - what is new in a stream since the last read (see fresh.h).
 *
 * A character the command wrote in two pieces, between two reads, must
 * come whole in one of them: the capture holds back an incomplete trailing
 * sequence (capture.h), and a read hands those bytes on to the next
 * capture instead of ending them as invalid bytes.
 */
#include "stream/fresh.h"
#include "stream/notice.h"

void shx_stream_enable_fresh(shx_stream *st)
{
    st->fresh_on = 1;
    shx_capture_init(&st->fresh, st->capture.limit, st->capture.unit, st->capture.keep_arg);
    /* a yield hands the run over between two reads: the first bytes of a
     * character the run's capture holds back are the fresh capture's too,
     * or its first read would start with the character's tail */
    if (st->capture.pend_len &&
        shx_capture_feed(&st->fresh, (const char *)st->capture.pend, st->capture.pend_len) != 0)
        st->failed = 1;
}

int shx_stream_take_fresh(shx_stream *st, shx_buf *out, int notice_first,
                          shx_capture_counts *counts)
{
    if (!st->fresh_on) {
        shx_buf_clear(out);
        if (counts)
            *counts = (shx_capture_counts){0, 0, 0, 0};
        return 0;
    }
    /* Until the stream has ended, the bytes of a character not yet whole
     * wait for the rest in the next capture: finished here, they would
     * each be an invalid byte, in this read and the next. */
    unsigned char carry[4];
    size_t carry_len = st->capture.finished ? 0 : shx_capture_take_pending(&st->fresh, carry);
    shx_capture_finish(&st->fresh);
    int rc = shx_capture_render(&st->fresh, out, notice_first, NULL);
    if (counts) {
        shx_capture_counts_of(&st->fresh, counts);
        /* with the notice inside the limit, what the read shows is kept */
        shx_capture_view v;
        if (st->fresh.within && shx_capture_view_of(&st->fresh, notice_first, NULL, &v) == 0) {
            counts->kept_chars = v.head_chars + v.tail_chars;
            counts->kept_bytes = v.head_len + v.tail_len;
        }
    }
    shx_capture_free(&st->fresh);
    shx_capture_init(&st->fresh, st->capture.limit, st->capture.unit, st->capture.keep_arg);
    if (carry_len && shx_capture_feed(&st->fresh, (const char *)carry, carry_len) != 0)
        st->failed = 1;
    return rc;
}
