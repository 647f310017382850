/*
 * notice.c - a capture as shown (see notice.h): the kept text, the marker
 * between head and tail, the truncation notice; with
 * SHEXEC_KEEP_WITHIN_LIMIT, the kept text cut so that all of it fits the
 * limit.
 */
#include "stream/notice.h"

#include <stdint.h>
#include <string.h>

#include "shexec.h"
#include "shx/utf8.h"

static uint64_t units_of(const shx_capture *c, size_t char_len)
{
    return c->unit == SHEXEC_UNIT_BYTES ? char_len : 1;
}

static unsigned char ring_at(const shx_capture *c, size_t i)
{
    return c->ring[(c->ring_start + i) % c->ring_cap];
}

/* The notice when the limit has no room for the whole one (and what parts
 * a head and a tail then). */
#define SHORT_NOTICE "[output truncated]"

/* "[output truncated: ...]" without its newlines. */
static int put_notice(const shx_capture *c, const shx_capture_view *v, shx_buf *out,
                      const char *full)
{
    if (v->notice == SHX_NOTICE_SHORT)
        return shx_buf_puts(out, SHORT_NOTICE);
    unsigned long long chars = c->total_chars, bytes = c->total_bytes;
    unsigned long long lines = shx_capture_lines(c);
    unsigned long long dchars = v->dropped_chars, dbytes = v->dropped_bytes;
    int rc;
    if (c->keep == SHEXEC_KEEP_HEAD_TAIL)
        rc = shx_buf_printf(out,
                            "[output truncated: kept the first %llu and the last %llu characters "
                            "(%llu + %llu bytes) of %llu (%llu bytes, %llu lines); %llu characters "
                            "(%llu bytes) omitted in the middle",
                            (unsigned long long)v->head_chars, (unsigned long long)v->tail_chars,
                            (unsigned long long)v->head_len, (unsigned long long)v->tail_len,
                            chars, bytes, lines, dchars, dbytes);
    else
        rc = shx_buf_printf(out,
                            "[output truncated: kept the first %llu characters (%llu bytes) of "
                            "%llu (%llu bytes, %llu lines); %llu characters (%llu bytes) omitted",
                            (unsigned long long)v->head_chars, (unsigned long long)v->head_len,
                            chars, bytes, lines, dchars, dbytes);
    if (rc == 0 && full)
        rc = shx_buf_printf(out, "; %s", full);
    return rc == 0 ? shx_buf_putc(out, ']') : -1;
}

/* The line between a kept head and tail, newlines included. */
static int put_marker(const shx_capture_view *v, shx_buf *out)
{
    if (v->notice == SHX_NOTICE_SHORT)
        return shx_buf_puts(out, "\n[...]\n");
    return shx_buf_printf(out, "\n[... %llu characters (%llu bytes) omitted ...]\n",
                          (unsigned long long)v->dropped_chars,
                          (unsigned long long)v->dropped_bytes);
}

/* Units of n bytes of text, characters as the capture counts them. */
static uint64_t text_units(const shx_capture *c, const unsigned char *p, size_t n)
{
    if (c->unit == SHEXEC_UNIT_BYTES)
        return n;
    uint64_t chars = 0;
    for (size_t i = 0; i < n; chars++)
        i += shx_utf8_char_len(p + i, n - i, 1);
    return chars;
}

/* Everything kept, and the notice when some was left out. */
static void view_all(const shx_capture *c, shx_capture_view *v)
{
    v->head_len = c->head.len;
    v->head_chars = c->head_chars;
    v->tail_skip = 0;
    v->tail_len = c->ring_len;
    v->tail_chars = c->tail_chars;
    v->dropped_chars = c->dropped_chars;
    v->dropped_bytes = shx_capture_dropped_bytes(c);
    v->notice = shx_capture_truncated(c) && c->limit > 0 ? SHX_NOTICE_FULL : SHX_NOTICE_NONE;
}

/* The longest start of the head within `room` units. */
static void head_within(const shx_capture *c, uint64_t room, shx_capture_view *v)
{
    const unsigned char *p = (const unsigned char *)(c->head.data ? c->head.data : "");
    size_t n = c->head.len, i = 0;
    uint64_t chars = 0;
    /* the bulk stepped over fast, stopping short enough that its last
     * character cannot pass the room; then one character at a time */
    if (room > 4)
        i = shx_capture_skip(c, p, n, room - 4, &chars);
    uint64_t units = c->unit == SHEXEC_UNIT_BYTES ? i : chars;
    while (i < n) {
        size_t len = shx_utf8_char_len(p + i, n - i, 1);
        uint64_t u = units_of(c, len);
        if (units + u > room)
            break;
        i += len;
        units += u;
        chars++;
    }
    v->head_len = i;
    v->head_chars = chars;
}

/* The longest end of the tail within `room` units: its oldest characters
 * stepped over (one at a time: the ring may wrap inside one). */
static void tail_within(const shx_capture *c, uint64_t room, shx_capture_view *v)
{
    size_t skip = 0;
    uint64_t units = c->tail_units, chars = c->tail_chars;
    while (units > room && skip < c->ring_len) {
        unsigned char seq[4];
        size_t avail = c->ring_len - skip; /* an if: cppcheck 2.10 misreads the ?: */
        if (avail > sizeof seq)
            avail = sizeof seq;
        seq[0] = ring_at(c, skip); /* skip < ring_len: at least one byte */
        for (size_t i = 1; i < avail; i++)
            seq[i] = ring_at(c, skip + i);
        size_t len = shx_utf8_char_len(seq, avail, 1);
        skip += len;
        units -= units_of(c, len);
        chars--;
    }
    v->tail_skip = skip;
    v->tail_len = c->ring_len - skip;
    v->tail_chars = chars;
}

/* Kept text within `room` units: head and tail share it as the limit
 * does (the tail half, rounded down), and what the head does not use (it
 * kept less, or a character did not fit) the tail may. What this leaves
 * out is counted as omitted. */
static void view_within(const shx_capture *c, uint64_t room, shx_capture_view *v)
{
    uint64_t tail = 0;
    if (c->keep == SHEXEC_KEEP_HEAD_TAIL)
        tail = c->tail_units < room / 2 ? c->tail_units : room / 2;
    head_within(c, room - tail, v);
    tail_within(c, room - (c->unit == SHEXEC_UNIT_BYTES ? v->head_len : v->head_chars), v);
    v->dropped_chars = c->dropped_chars + (c->head_chars - v->head_chars) +
                       (c->tail_chars - v->tail_chars);
    v->dropped_bytes = shx_capture_dropped_bytes(c) + (c->head.len - v->head_len) + v->tail_skip;
}

/* What the notice, the marker and their newlines take, in units. */
static int overhead(const shx_capture *c, const shx_capture_view *v, int notice_first,
                    const char *full, shx_buf *scratch, uint64_t *units)
{
    shx_buf_clear(scratch);
    if (put_notice(c, v, scratch, full) != 0)
        return -1;
    if (c->keep == SHEXEC_KEEP_HEAD_TAIL && put_marker(v, scratch) != 0)
        return -1;
    *units = text_units(c, (const unsigned char *)scratch->data, scratch->len) +
             (notice_first ? 1 : 2);
    return 0;
}

/* The view of `room` units of text with notice `form`: 1 when it fits in
 * the limit with its notice, 0 when not, -1 on ENOMEM. *over gets what
 * the notice, the marker and their newlines take. */
static int try_room(const shx_capture *c, uint64_t room, int form, int notice_first,
                    const char *full, shx_buf *scratch, shx_capture_view *v, uint64_t *over)
{
    view_within(c, room, v);
    v->notice = form;
    if (overhead(c, v, notice_first, full, scratch, over) != 0)
        return -1;
    uint64_t kept = c->unit == SHEXEC_UNIT_BYTES ? v->head_len + v->tail_len
                                                  : v->head_chars + v->tail_chars;
    return kept + *over <= c->limit;
}

/*
 * Within the limit, notice included: the kept text is cut to the room the
 * notice leaves. The notice's numbers change with the cut (what is
 * omitted grows, a count may gain or lose a digit), so the room is
 * measured again on the cut view: it shrinks until both fit (it only
 * shrinks, so this ends), then grows while the notice of the cut view,
 * shorter than the first one measured, leaves more; two or three rounds in
 * practice. A limit too small for the notice at all takes the short one
 * ("[output truncated]", a marker "[...]"), and one too small even for
 * that keeps text alone.
 */
static int view_budget(const shx_capture *c, int notice_first, const char *full,
                       shx_capture_view *v)
{
    shx_buf scratch = SHX_BUF_INIT;
    int rc = 0;
    for (int form = SHX_NOTICE_FULL; form <= SHX_NOTICE_SHORT; form++) {
        uint64_t room = c->limit, over;
        while ((rc = try_room(c, room, form, notice_first, full, &scratch, v, &over)) == 0 &&
               room > 0) {
            uint64_t fits = c->limit > over ? c->limit - over : 0;
            room = fits < room ? fits : room - 1;
        }
        if (rc < 0)
            goto done;
        if (rc == 0)
            continue;
        for (;;) {
            uint64_t more = c->limit > over ? c->limit - over : 0;
            shx_capture_view bigger;
            if (more <= room)
                break;
            rc = try_room(c, more, form, notice_first, full, &scratch, &bigger, &over);
            if (rc < 0)
                goto done;
            if (rc == 0)
                break;
            room = more;
            *v = bigger;
        }
        rc = 0;
        goto done;
    }
    view_within(c, c->limit, v);
    v->notice = SHX_NOTICE_NONE;
done:
    shx_buf_free(&scratch);
    return rc;
}

int shx_capture_view_of(const shx_capture *c, int notice_first, const char *full,
                        shx_capture_view *v)
{
    view_all(c, v);
    if (!c->within || v->notice == SHX_NOTICE_NONE)
        return 0;
    return view_budget(c, notice_first, full, v);
}

int shx_capture_render(const shx_capture *c, shx_buf *out, int notice_first, const char *full)
{
    shx_buf_clear(out);
    shx_capture_view v;
    if (shx_capture_view_of(c, notice_first, full, &v) != 0)
        return -1;
    if (shx_buf_reserve(out, v.head_len + v.tail_len + 512) != 0)
        return -1;
    int notice = v.notice != SHX_NOTICE_NONE;
    if (notice && notice_first &&
        (put_notice(c, &v, out, full) != 0 || shx_buf_putc(out, '\n') != 0))
        return -1;
    shx_buf_append(out, c->head.data ? c->head.data : "", v.head_len);
    if (notice && c->keep == SHEXEC_KEEP_HEAD_TAIL && put_marker(&v, out) != 0)
        return -1;
    if (v.tail_len) {
        if (shx_buf_reserve(out, v.tail_len) != 0)
            return -1;
        const unsigned char *a, *b;
        size_t a_len, b_len;
        shx_capture_tail_pieces(c, &a, &a_len, &b, &b_len);
        size_t skip = v.tail_skip;
        if (skip < a_len) {
            shx_buf_append(out, a + skip, a_len - skip);
            shx_buf_append(out, b, b_len);
        } else {
            shx_buf_append(out, b + (skip - a_len), b_len - (skip - a_len));
        }
    }
    if (notice && !notice_first &&
        (shx_buf_putc(out, '\n') != 0 || put_notice(c, &v, out, full) != 0 ||
         shx_buf_putc(out, '\n') != 0))
        return -1;
    return 0;
}

