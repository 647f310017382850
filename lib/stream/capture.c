/*
 * capture.c - bounded capture of one output stream (see capture.h).
 *
 * Characters are fed one at a time through take_char() except on the three
 * paths that carry almost all bytes of a big output: an ASCII run while the
 * head is still filling (one memcpy), counting once nothing more is kept
 * (64 bytes at a time while they are ASCII), and the tail once the head is
 * full (only a piece's last tail_cap units are copied, the rest counted the
 * same way). That keeps a 1 GiB stream cheap with or without a tail.
 */
#include "stream/capture.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shexec.h"
#include "shx/utf8.h"

void shx_capture_init(shx_capture *c, uint64_t limit, int unit, int keep)
{
    memset(c, 0, sizeof *c);
    c->limit = limit;
    c->unit = unit;
    c->keep_arg = keep;
    c->within = (keep & SHEXEC_KEEP_WITHIN_LIMIT) != 0;
    keep &= ~SHEXEC_KEEP_WITHIN_LIMIT;
    c->keep = keep;
    if (keep == SHEXEC_KEEP_HEAD_TAIL) {
        c->tail_cap = limit / 2;
        c->head_cap = limit - c->tail_cap;
    } else {
        c->head_cap = limit;
    }
}

static uint64_t units_of(const shx_capture *c, size_t char_len)
{
    return c->unit == SHEXEC_UNIT_BYTES ? char_len : 1;
}

static unsigned char ring_at(const shx_capture *c, size_t i)
{
    return c->ring[(c->ring_start + i) % c->ring_cap];
}

/* Drop the oldest character of the tail. 0 when the ring is empty: units are
 * only counted for bytes held, so ring_push never gets there, but an empty
 * ring must end its loop rather than be read. */
static int ring_drop_front(shx_capture *c)
{
    if (c->ring_len == 0)
        return 0;
    unsigned char seq[4];
    /* an if, not `len < 4 ? len : 4`, which cppcheck 2.10 evaluates as < 1 */
    size_t avail = c->ring_len;
    if (avail > sizeof seq)
        avail = sizeof seq;
    seq[0] = ring_at(c, 0);
    for (size_t i = 1; i < avail; i++)
        seq[i] = ring_at(c, i);
    size_t n = shx_utf8_char_len(seq, avail, 1);
    uint64_t u = units_of(c, n);
    c->ring_start = (c->ring_start + n) % c->ring_cap;
    c->ring_len -= n;
    c->tail_units -= u;
    c->dropped_units += u;
    c->tail_chars--;
    c->dropped_chars++;
    return 1;
}

static int ring_alloc(shx_capture *c)
{
    if (c->ring)
        return 0;
    /* tail_cap units of at most 4 bytes, plus room for the one being added */
    uint64_t cap = (c->unit == SHEXEC_UNIT_BYTES ? c->tail_cap : c->tail_cap * 4) + 4;
    c->ring = malloc((size_t)cap);
    if (!c->ring)
        return -1;
    c->ring_cap = (size_t)cap;
    return 0;
}

/* Append n bytes after the ring's last (there is room: see the callers). */
static void ring_append(shx_capture *c, const unsigned char *p, size_t n)
{
    size_t at = (c->ring_start + c->ring_len) % c->ring_cap;
    size_t first = c->ring_cap - at < n ? c->ring_cap - at : n;
    memcpy(c->ring + at, p, first);
    memcpy(c->ring, p + first, n - first);
    c->ring_len += n;
}

static int ring_push(shx_capture *c, const unsigned char *p, size_t n)
{
    if (ring_alloc(c) != 0)
        return -1;
    ring_append(c, p, n);
    c->tail_units += units_of(c, n);
    c->tail_chars++;
    while (c->tail_units > c->tail_cap)
        if (!ring_drop_front(c))
            break;
    return 0;
}

static int take_char(shx_capture *c, const unsigned char *p, size_t n)
{
    uint64_t u = units_of(c, n);
    c->total_units += u;
    c->total_chars++;
    if (!c->head_closed) {
        if (c->head_units + u <= c->head_cap) {
            c->head_units += u;
            c->head_chars++;
            return shx_buf_append(&c->head, p, n);
        }
        c->head_closed = 1;
        /* a character that did not fit leaves head room unused: the tail
         * gets it, so output within the limit is never truncated */
        if (c->keep == SHEXEC_KEEP_HEAD_TAIL)
            c->tail_cap = c->limit - c->head_units;
    }
    if (c->keep == SHEXEC_KEEP_HEAD_TAIL && c->tail_cap > 0)
        return ring_push(c, p, n);
    c->dropped_units += u;
    c->dropped_chars++;
    return 0;
}

/* 1 when none of the 64 bytes at p has its high bit set (all ASCII). One
 * test per 64 bytes, in a form compilers turn into vector ORs: counting is
 * then far cheaper than the read that brought the bytes. */
static int ascii64(const unsigned char *p)
{
    uint64_t w0, w1, w2, w3, w4, w5, w6, w7;
    memcpy(&w0, p, 8);
    memcpy(&w1, p + 8, 8);
    memcpy(&w2, p + 16, 8);
    memcpy(&w3, p + 24, 8);
    memcpy(&w4, p + 32, 8);
    memcpy(&w5, p + 40, 8);
    memcpy(&w6, p + 48, 8);
    memcpy(&w7, p + 56, 8);
    return !(((w0 | w1) | (w2 | w3) | (w4 | w5) | (w6 | w7)) & 0x8080808080808080ull);
}

/*
 * Step over whole characters from p while fewer than `target` units are
 * behind (UINT64_MAX: all of them): ASCII 64 bytes, then eight, at a time.
 * Stops before a sequence cut by the end. Returns the bytes stepped over;
 * the characters go to *chars.
 */
static size_t skip_units(const shx_capture *c, const unsigned char *p, size_t n, uint64_t target,
                         uint64_t *chars_out)
{
    int bytes = c->unit == SHEXEC_UNIT_BYTES;
    size_t i = 0;
    uint64_t chars = 0;
    while (i < n && (bytes ? i : chars) < target) {
        /* ASCII: a unit per byte either way, so the room left is in bytes */
        uint64_t room = target - (bytes ? i : chars);
        size_t from = i;
        while (i + 64 <= n && room - (i - from) >= 64 && ascii64(p + i))
            i += 64;
        while (i + 8 <= n && room - (i - from) >= 8) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (w & 0x8080808080808080ull)
                break;
            i += 8;
        }
        chars += i - from;
        if (i >= n || (bytes ? i : chars) >= target)
            break;
        size_t len = p[i] < 0x80 ? 1 : shx_utf8_char_len(p + i, n - i, 0);
        if (len == 0)
            break; /* incomplete at the end: the caller keeps it pending */
        i += len;
        chars++;
    }
    *chars_out = chars;
    return i;
}

size_t shx_capture_skip(const shx_capture *c, const unsigned char *p, size_t n, uint64_t target,
                        uint64_t *chars)
{
    return skip_units(c, p, n, target, chars);
}

/* Count characters when nothing more is kept. Returns the bytes taken: all,
 * but a sequence cut by the end. */
static size_t count_only(shx_capture *c, const unsigned char *p, size_t n)
{
    uint64_t chars;
    size_t i = skip_units(c, p, n, UINT64_MAX, &chars);
    uint64_t units = c->unit == SHEXEC_UNIT_BYTES ? i : chars;
    c->total_units += units;
    c->dropped_units += units;
    c->total_chars += chars;
    c->dropped_chars += chars;
    return i;
}

/* Drop the tail's oldest characters until it holds at most `budget` units:
 * stepped over where they lie in one piece, one by one across the wrap. */
static void ring_trim(shx_capture *c, uint64_t budget)
{
    while (c->tail_units > budget && c->ring_len > 0) {
        size_t piece = c->ring_cap - c->ring_start;
        if (piece >= c->ring_len)
            piece = c->ring_len;
        else
            piece = piece > 3 ? piece - 3 : 0; /* no character read across the wrap */
        uint64_t chars = 0;
        size_t got = piece ? skip_units(c, c->ring + c->ring_start, piece, c->tail_units - budget, &chars)
                           : 0;
        if (got == 0) {
            (void)ring_drop_front(c);
            continue;
        }
        uint64_t units = c->unit == SHEXEC_UNIT_BYTES ? got : chars;
        c->ring_start = (c->ring_start + got) % c->ring_cap;
        c->ring_len -= got;
        c->tail_units -= units;
        c->tail_chars -= chars;
        c->dropped_units += units;
        c->dropped_chars += chars;
    }
}

/*
 * The head is full and the tail takes what comes: of p's whole characters
 * only the last tail_cap units can stay. A piece at least that long
 * replaces the tail (what was in it and the piece's front are dropped,
 * counted, never copied); a shorter one goes after what the tail keeps of
 * itself. Returns the bytes taken: all, but a sequence cut by the end.
 */
static size_t tail_bulk(shx_capture *c, const unsigned char *p, size_t n)
{
    int bytes = c->unit == SHEXEC_UNIT_BYTES;
    uint64_t chars;
    size_t whole = skip_units(c, p, n, UINT64_MAX, &chars);
    uint64_t units = bytes ? whole : chars;
    c->total_units += units;
    c->total_chars += chars;
    if (units >= c->tail_cap) {
        uint64_t front_chars;
        size_t front = skip_units(c, p, whole, units - c->tail_cap, &front_chars);
        uint64_t front_units = bytes ? front : front_chars;
        c->dropped_units += c->tail_units + front_units;
        c->dropped_chars += c->tail_chars + front_chars;
        c->ring_start = c->ring_len = 0;
        memcpy(c->ring, p + front, whole - front);
        c->ring_len = whole - front;
        c->tail_units = units - front_units;
        c->tail_chars = chars - front_chars;
    } else {
        ring_trim(c, c->tail_cap - units);
        ring_append(c, p, whole);
        c->tail_units += units;
        c->tail_chars += chars;
    }
    return whole;
}

static int feed_bytes(shx_capture *c, const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (c->head_closed && (c->keep == SHEXEC_KEEP_HEAD || c->tail_cap == 0)) {
            i += count_only(c, p + i, n - i);
            if (i >= n)
                return 0;
        } else if (c->head_closed) {
            if (ring_alloc(c) != 0)
                return -1;
            i += tail_bulk(c, p + i, n - i);
            if (i >= n)
                return 0;
        } else if (p[i] < 0x80) {
            /* ASCII run into the head in one copy */
            uint64_t room = c->head_cap - c->head_units;
            size_t run = 1; /* no further than the head has room for */
            while (i + run < n && run < room && p[i + run] < 0x80)
                run++;
            size_t take = run < room ? run : (size_t)room;
            if (take > 0) {
                if (shx_buf_append(&c->head, p + i, take) != 0)
                    return -1;
                c->head_units += take;
                c->head_chars += take;
                c->total_units += take;
                c->total_chars += take;
                i += take;
                continue;
            }
        }
        size_t len = shx_utf8_char_len(p + i, n - i, 0);
        if (len == 0) {
            memcpy(c->pend, p + i, n - i);
            c->pend_len = n - i;
            return 0;
        }
        if (take_char(c, p + i, len) != 0)
            return -1;
        i += len;
    }
    return 0;
}

/* Newlines in n bytes at p, counted 64 at a time (a loop compilers turn
 * into vector compares) in the 4 KiB from each one memchr() finds: output
 * without newlines, or with few, passes at memchr's speed, and any other
 * at several bytes a cycle, with no cost per line. */
static uint64_t count_newlines(const unsigned char *p, size_t n)
{
    uint64_t count = 0;
    const unsigned char *end = p + n;
    while (p < end) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        size_t span = (size_t)(end - nl); /* an if: cppcheck 2.10 misreads the ?: */
        if (span > 4096)
            span = 4096;
        size_t i = 0;
        for (; i + 64 <= span; i += 64) {
            unsigned char in_block = 0;
            for (int j = 0; j < 64; j++)
                in_block += nl[i + j] == '\n';
            count += in_block;
        }
        for (; i < span; i++)
            count += nl[i] == '\n';
        p = nl + span;
    }
    return count;
}

/* Feed bytes, a sequence the last feed cut short finished first. */
static int feed_pending(shx_capture *c, const unsigned char *p, size_t len)
{
    if (c->pend_len) {
        /* finish the sequence cut by the previous feed */
        unsigned char tmp[8];
        size_t t = c->pend_len;
        memcpy(tmp, c->pend, t);
        size_t more = len < 4 ? len : 4;
        memcpy(tmp + t, p, more);
        size_t tl = t + more, off = 0;
        while (off < t) {
            size_t n = shx_utf8_char_len(tmp + off, tl - off, 0);
            if (n == 0) {
                memmove(c->pend, tmp + off, tl - off);
                c->pend_len = tl - off;
                return 0;
            }
            if (take_char(c, tmp + off, n) != 0)
                return -1;
            off += n;
        }
        c->pend_len = 0;
        c->ends_in_newline = 0; /* its bytes are counted now: none a newline */
        p += off - t;
        len -= off - t;
    }
    return feed_bytes(c, p, len);
}

int shx_capture_feed(shx_capture *c, const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    c->total_bytes += len;
    if (len == 0)
        return 0;
    c->newlines += count_newlines(p, len);
    int rc = feed_pending(c, p, len);
    /* a sequence cut short is the last pend_len bytes fed, none of them a
     * newline: the line ends at the byte before it (when this feed has
     * one; else that byte was an earlier feed's, already looked at) */
    if (c->pend_len < len)
        c->ends_in_newline = p[len - c->pend_len - 1] == '\n';
    return rc;
}

int shx_capture_finish(shx_capture *c)
{
    /* what is pending is the valid start of a sequence the end cut short:
     * each of its bytes is a character of its own (utf8.h, final) */
    for (size_t off = 0; off < c->pend_len; off++)
        if (take_char(c, c->pend + off, 1) != 0)
            return -1;
    if (c->pend_len)
        c->ends_in_newline = 0; /* its bytes end the stream, none a newline */
    c->pend_len = 0;
    c->finished = 1;
    return 0;
}

size_t shx_capture_take_pending(shx_capture *c, unsigned char seq[4])
{
    size_t n = c->pend_len;
    memcpy(seq, c->pend, n);
    c->total_bytes -= n;
    c->pend_len = 0;
    return n;
}

int shx_capture_truncated(const shx_capture *c)
{
    return c->dropped_units > 0;
}

void shx_capture_tail_pieces(const shx_capture *c, const unsigned char **a, size_t *a_len,
                             const unsigned char **b, size_t *b_len)
{
    size_t first = c->ring_len ? c->ring_cap - c->ring_start : 0;
    if (first > c->ring_len)
        first = c->ring_len;
    *a = c->ring ? c->ring + c->ring_start : NULL;
    *a_len = first;
    *b = c->ring;
    *b_len = c->ring_len - first;
}

uint64_t shx_capture_dropped_bytes(const shx_capture *c)
{
    return c->total_bytes - c->head.len - c->ring_len - c->pend_len;
}

uint64_t shx_capture_lines(const shx_capture *c)
{
    return c->newlines + (c->total_bytes > 0 && (c->pend_len > 0 || !c->ends_in_newline));
}

void shx_capture_free(shx_capture *c)
{
    shx_buf_free(&c->head);
    free(c->ring);
    c->ring = NULL;
    c->ring_len = c->ring_cap = 0;
}
