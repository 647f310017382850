/*
 * notice.h - a capture as shown: the kept text, the marker between a kept
 * head and tail, and the truncation notice that says what was left out
 * (its wording is shexec.h's, above shexec_session_set_output_limit()).
 * With SHEXEC_KEEP_WITHIN_LIMIT the limit holds all of that: the kept text
 * is cut, when shown, to the room the notice leaves. Pure: a capture in,
 * text out.
 */
#ifndef SHX_NOTICE_H
#define SHX_NOTICE_H

#include <stddef.h>
#include <stdint.h>

#include "shx/buf.h"
#include "stream/capture.h"

/* What a render shows: the kept text's part of the head (from its start)
 * and of the tail (from skip bytes into it, to its end), what that leaves
 * out, and which notice goes with it. Without SHEXEC_KEEP_WITHIN_LIMIT
 * all that was kept and the full notice; with it, as much as fits in the
 * limit together with the notice and the marker. */
enum { SHX_NOTICE_NONE = 0, SHX_NOTICE_FULL = 1, SHX_NOTICE_SHORT = 2 };
typedef struct shx_capture_view {
    size_t head_len, tail_skip, tail_len;
    uint64_t head_chars, tail_chars;
    uint64_t dropped_chars, dropped_bytes;
    int notice; /* SHX_NOTICE_* */
} shx_capture_view;

/* What shx_capture_render() shows with the same arguments. 0 or -1. */
int shx_capture_view_of(const shx_capture *c, int notice_first, const char *full,
                        shx_capture_view *v);
/*
 * Replace `out` with the kept text and, when some was left out, the notice
 * (see shexec.h for its wording): first or last, with `full` (NULL: none)
 * as its last clause (where the whole text is); with head and tail, the
 * marker between them says what was left out there. 0 or -1.
 */
int shx_capture_render(const shx_capture *c, shx_buf *out, int notice_first, const char *full);

#endif
