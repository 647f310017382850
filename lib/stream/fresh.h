/*
 * fresh.h - what is new in a stream since the last read: a task's second
 * capture of its output (the stream's `fresh`, fed beside its capture by
 * stream.c), bounded by the same limit, taken and started again at each
 * read. A read never splits a UTF-8 character, at a yield neither.
 */
#ifndef SHX_FRESH_H
#define SHX_FRESH_H

#include "shx/buf.h"
#include "stream/capture.h"
#include "stream/stream.h"

/* Keep a second capture of what is new since the last shx_stream_take_fresh()
 * (from now on: a character the capture has begun is the new one's). */
void shx_stream_enable_fresh(shx_stream *st);
/* Render what is new into out, its counts into *counts (NULL: not
 * wanted; kept: what the render shows), and start a new "fresh" capture. A character cut short by the
 * last read is not cut here: while the stream goes on its bytes are the
 * next take's. 0 or -1. */
int shx_stream_take_fresh(shx_stream *st, shx_buf *out, int notice_first,
                          shx_capture_counts *counts);

#endif
