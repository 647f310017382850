/*
 * fuzz_capture.c - libFuzzer target for bounded output capture
 * (lib/capture.c) and the UTF-8 character rule it counts by (lib/utf8.h).
 *
 * Input: byte 0 picks the unit (characters or bytes) and the mode (head or
 * head+tail), bytes 1-2 the limit, bytes 3-6 seed the chunking, the rest is
 * the stream. A model splits the stream into characters with an
 * independent decoder and derives what must be kept: the longest prefix
 * that fits the head, then the longest suffix of the rest that fits the
 * tail. The capture, fed whole and in chunks, must keep exactly that
 * (so no UTF-8 sequence is ever split and the kept size is within the
 * limit), count the exact totals (in units, and in characters and bytes
 * kept and left out, which the notice gives whatever the unit), and render
 * head, marker and tail with the notice first or last, with and without a
 * `full` clause, in the documented wording.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "stream/capture.h"
#include "stream/notice.h"
#include "fuzzutil.h"
#include "shexec.h"
#include "shx/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct expect {
    size_t head_bytes;    /* the head is s[0, head_bytes) */
    size_t tail_from;     /* the tail is s[tail_from, n); tail_from == n: none */
    uint64_t head_units, tail_units, total_units;
    uint64_t head_chars, tail_chars, total_chars; /* whatever the unit */
} expect;

/* What capture.h promises, from the whole stream. */
static expect model(const unsigned char *s, size_t n, uint64_t limit, int unit, int keep)
{
    expect e = {0, n, 0, 0, 0, 0, 0, 0};
    /* character boundaries and sizes */
    size_t nch = 0;
    size_t *start = malloc((n + 1) * sizeof *start);
    FZ_CHECK(start, "out of memory");
    for (size_t i = 0; i < n; nch++) {
        start[nch] = i;
        i += fz_char_len(s + i, n - i);
    }
    start[nch] = n;
    e.total_chars = nch;
#define UNITS(c) (unit == SHEXEC_UNIT_BYTES ? (uint64_t)(start[(c) + 1] - start[(c)]) : 1u)
    for (size_t c = 0; c < nch; c++)
        e.total_units += UNITS(c);
    uint64_t head_cap = keep == SHEXEC_KEEP_HEAD_TAIL ? limit - limit / 2 : limit;
    size_t c = 0;
    while (c < nch && e.head_units + UNITS(c) <= head_cap) {
        e.head_units += UNITS(c);
        c++;
    }
    e.head_bytes = start[c];
    e.head_chars = c;
    if (keep == SHEXEC_KEEP_HEAD_TAIL && c < nch) {
        /* head room a too-big character left unused goes to the tail */
        uint64_t tail_cap = limit - e.head_units;
        size_t t = nch;
        while (t > c && e.tail_units + UNITS(t - 1) <= tail_cap) {
            t--;
            e.tail_units += UNITS(t);
        }
        e.tail_from = start[t];
        e.tail_chars = nch - t;
    }
#undef UNITS
    free(start);
    return e;
}

static void feed(shx_capture *c, const unsigned char *s, size_t n, uint32_t seed, int whole)
{
    if (whole) {
        FZ_CHECK(shx_capture_feed(c, (const char *)s, n) == 0, "feed");
    } else {
        fz_rng rng;
        fz_rng_seed(&rng, seed);
        size_t i = 0;
        do {
            size_t k = fz_chunk(&rng, n - i);
            FZ_CHECK(shx_capture_feed(c, (const char *)s + i, k) == 0, "feed");
            i += k;
            FZ_CHECK(c->pend_len < 4, "%zu bytes pending", c->pend_len);
        } while (i < n);
    }
    FZ_CHECK(shx_capture_finish(c) == 0, "finish");
}

static void tail_bytes(const shx_capture *c, shx_buf *out)
{
    for (size_t i = 0; i < c->ring_len; i++) {
        unsigned char b = c->ring[(c->ring_start + i) % c->ring_cap];
        shx_buf_append(out, &b, 1);
    }
}

static void check(const shx_capture *c, const unsigned char *s, size_t n, uint64_t limit,
                  int unit, int keep, const expect *e)
{
    const char *what = unit == SHEXEC_UNIT_BYTES ? "bytes" : "characters";
    FZ_CHECK(c->total_bytes == n, "total_bytes %" PRIu64 " of %zu", c->total_bytes, n);
    FZ_CHECK(c->total_units == e->total_units, "total %" PRIu64 " %s, want %" PRIu64,
             c->total_units, what, e->total_units);
    if (unit == SHEXEC_UNIT_BYTES)
        FZ_CHECK(c->total_units == n, "byte total %" PRIu64 " of %zu", c->total_units, n);
    else
        FZ_CHECK(c->total_units == fz_char_count(s, n), "character total");
    FZ_CHECK(fz_mem_eq(c->head.data, c->head.len, s, e->head_bytes),
             "head of %zu bytes, want the first %zu", c->head.len, e->head_bytes);
    FZ_CHECK(c->head_units == e->head_units, "head units %" PRIu64 ", want %" PRIu64,
             c->head_units, e->head_units);
    shx_buf tail = SHX_BUF_INIT;
    tail_bytes(c, &tail);
    FZ_CHECK(fz_mem_eq(tail.data, tail.len, s + e->tail_from, n - e->tail_from),
             "tail of %zu bytes, want the last %zu", tail.len, n - e->tail_from);
    FZ_CHECK(c->tail_units == e->tail_units, "tail units %" PRIu64 ", want %" PRIu64,
             c->tail_units, e->tail_units);
    FZ_CHECK(c->head_units + c->tail_units <= limit, "kept %" PRIu64 " + %" PRIu64
             " units over the limit %" PRIu64, c->head_units, c->tail_units, limit);
    if (keep == SHEXEC_KEEP_HEAD)
        FZ_CHECK(c->ring_len == 0, "a tail in head mode");
    uint64_t dropped = e->total_units - e->head_units - e->tail_units;
    FZ_CHECK(c->dropped_units == dropped, "dropped %" PRIu64 ", want %" PRIu64,
             c->dropped_units, dropped);
    FZ_CHECK(shx_capture_truncated(c) == (dropped > 0), "truncated flag");
    /* the notice counts characters and bytes whatever the unit */
    uint64_t dropped_chars = e->total_chars - e->head_chars - e->tail_chars;
    uint64_t dropped_bytes = (uint64_t)(e->tail_from - e->head_bytes);
    FZ_CHECK(c->total_chars == e->total_chars, "total %" PRIu64 " characters, want %" PRIu64,
             c->total_chars, e->total_chars);
    FZ_CHECK(c->head_chars == e->head_chars && c->tail_chars == e->tail_chars,
             "kept %" PRIu64 " + %" PRIu64 " characters, want %" PRIu64 " + %" PRIu64,
             c->head_chars, c->tail_chars, e->head_chars, e->tail_chars);
    FZ_CHECK(c->dropped_chars == dropped_chars, "dropped %" PRIu64 " characters, want %" PRIu64,
             c->dropped_chars, dropped_chars);
    FZ_CHECK(shx_capture_dropped_bytes(c) == dropped_bytes,
             "dropped %" PRIu64 " bytes, want %" PRIu64, shx_capture_dropped_bytes(c),
             dropped_bytes);
    /* valid UTF-8 in, valid UTF-8 kept: a cut never lands inside a sequence */
    if (fz_utf8_valid(s, n))
        FZ_CHECK(fz_utf8_valid(c->head.data, c->head.len) && fz_utf8_valid(tail.data, tail.len),
                 "kept text of valid input is not valid UTF-8");

    /* lines: the newlines, and a last one without */
    uint64_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += s[i] == '\n';
    lines += n > 0 && s[n - 1] != '\n';
    FZ_CHECK(shx_capture_lines(c) == lines, "%" PRIu64 " lines, want %" PRIu64,
             shx_capture_lines(c), lines);

    /* every placement of the notice, with and without a `full` clause */
    static const char *const fulls[] = {NULL, "full output (99 bytes) in /tmp/x%s.txt"};
    for (int first = 0; first <= 1; first++) {
        for (size_t f = 0; f < sizeof fulls / sizeof fulls[0]; f++) {
            shx_buf r = SHX_BUF_INIT, want = SHX_BUF_INIT, notice = SHX_BUF_INIT;
            shx_buf_puts(&r, "stale");
            FZ_CHECK(shx_capture_render(c, &r, first, fulls[f]) == 0, "render");
            int truncated = dropped > 0 && limit > 0;
            if (truncated) {
                if (keep == SHEXEC_KEEP_HEAD_TAIL)
                    shx_buf_printf(&notice,
                                   "[output truncated: kept the first %" PRIu64 " and the last %"
                                   PRIu64 " characters (%zu + %zu bytes) of %" PRIu64 " (%zu "
                                   "bytes, %" PRIu64 " lines); %" PRIu64 " characters (%" PRIu64
                                   " bytes) omitted in the middle",
                                   e->head_chars, e->tail_chars, e->head_bytes, n - e->tail_from,
                                   e->total_chars, n, lines, dropped_chars, dropped_bytes);
                else
                    shx_buf_printf(&notice,
                                   "[output truncated: kept the first %" PRIu64 " characters (%zu "
                                   "bytes) of %" PRIu64 " (%zu bytes, %" PRIu64 " lines); %" PRIu64
                                   " characters (%" PRIu64 " bytes) omitted",
                                   e->head_chars, e->head_bytes, e->total_chars, n, lines,
                                   dropped_chars, dropped_bytes);
                if (fulls[f])
                    shx_buf_printf(&notice, "; %s", fulls[f]);
                shx_buf_putc(&notice, ']');
            }
            if (truncated && first) {
                shx_buf_append(&want, notice.data, notice.len);
                shx_buf_putc(&want, '\n');
            }
            shx_buf_append(&want, s, e->head_bytes);
            if (truncated && keep == SHEXEC_KEEP_HEAD_TAIL)
                shx_buf_printf(&want, "\n[... %" PRIu64 " characters (%" PRIu64 " bytes) omitted "
                                      "...]\n", dropped_chars, dropped_bytes);
            shx_buf_append(&want, s + e->tail_from, n - e->tail_from);
            if (truncated && !first) {
                shx_buf_putc(&want, '\n');
                shx_buf_append(&want, notice.data, notice.len);
                shx_buf_putc(&want, '\n');
            }
            FZ_CHECK(fz_mem_eq(r.data, r.len, want.data, want.len),
                     "rendered (notice %s, full %s):\n%s\nwant:\n%s", first ? "first" : "last",
                     fulls[f] ? "given" : "none", r.data, want.data);
            shx_buf_free(&r);
            shx_buf_free(&want);
            shx_buf_free(&notice);
        }
    }
    shx_buf_free(&tail);
}

/* With the notice within the limit: whatever the input and its chunks,
 * the text, marker and notice take at most `limit` units together, the
 * same for both feeds, and valid input stays valid. */
static void check_within(const unsigned char *s, size_t n, uint64_t limit, int unit, int keep,
                         uint32_t seed)
{
    shx_capture whole, chunked;
    shx_capture_init(&whole, limit, unit, keep | SHEXEC_KEEP_WITHIN_LIMIT);
    shx_capture_init(&chunked, limit, unit, keep | SHEXEC_KEEP_WITHIN_LIMIT);
    feed(&whole, s, n, seed, 1);
    feed(&chunked, s, n, seed, 0);
    static const char *const fulls[] = {NULL, "full output (99 bytes) in /tmp/x\xC3\xA9.txt"};
    for (int first = 0; first <= 1; first++)
        for (size_t f = 0; f < sizeof fulls / sizeof fulls[0]; f++) {
            shx_buf a = SHX_BUF_INIT, b = SHX_BUF_INIT;
            FZ_CHECK(shx_capture_render(&whole, &a, first, fulls[f]) == 0, "render");
            FZ_CHECK(shx_capture_render(&chunked, &b, first, fulls[f]) == 0, "render");
            FZ_CHECK(fz_mem_eq(a.data, a.len, b.data, b.len), "chunking changed the render");
            uint64_t units = 0;
            for (size_t i = 0; i < a.len; units++)
                i += unit == SHEXEC_UNIT_BYTES ? 1 : fz_char_len((const unsigned char *)a.data + i,
                                                                 a.len - i);
            FZ_CHECK(units <= limit,
                     "%" PRIu64 " units within a limit of %" PRIu64, units, limit);
            if (fz_utf8_valid(s, n))
                FZ_CHECK(fz_utf8_valid(a.data, a.len), "render of valid input is not valid");
            shx_buf_free(&a);
            shx_buf_free(&b);
        }
    shx_capture_free(&whole);
    shx_capture_free(&chunked);
}

/* utf8.h's own promise, checked at every offset: the character length
 * agrees with the independent decoder, and decoding greedily from any
 * character boundary gives the same split as from the start. */
static void check_utf8_rule(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t mine = fz_char_len(s + i, n - i);
        FZ_CHECK(shx_utf8_char_len(s + i, n - i, 1) == mine, "char_len at %zu", i);
        size_t partial = shx_utf8_char_len(s + i, n - i, 0);
        /* without `final` only a valid start cut by the end may say "wait" */
        if (partial == 0)
            FZ_CHECK(mine == 1 && s[i] >= 0xC2 && n - i < 4, "char_len(final=0) 0 at %zu", i);
        else
            FZ_CHECK(partial == mine, "char_len(final=0) at %zu", i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    unsigned mode = fz_u8(&in);
    unsigned lraw = fz_u8(&in) << 8;
    lraw |= fz_u8(&in);
    uint32_t seed = fz_u32(&in);
    int unit = mode & 1 ? SHEXEC_UNIT_BYTES : SHEXEC_UNIT_CHARS;
    int keep = mode & 2 ? SHEXEC_KEEP_HEAD_TAIL : SHEXEC_KEEP_HEAD;
    /* Mostly limits near the stream's size, where the cuts are; sometimes
     * the 1 GiB maximum, which must cost nothing up front. */
    uint64_t limit = mode & 4 ? lraw % 64 : lraw % (2 * in.n + 8);
    if ((mode & 0x18) == 0x18)
        limit = (uint64_t)1 << 30;
    const unsigned char *s = in.p;
    size_t n = in.n;

    expect e = model(s, n, limit, unit, keep);
    shx_capture whole, chunked;
    shx_capture_init(&whole, limit, unit, keep);
    shx_capture_init(&chunked, limit, unit, keep);
    feed(&whole, s, n, seed, 1);
    feed(&chunked, s, n, seed, 0);
    check(&whole, s, n, limit, unit, keep, &e);
    check(&chunked, s, n, limit, unit, keep, &e);
    shx_capture_free(&whole);
    shx_capture_free(&chunked);
    if (limit < ((uint64_t)1 << 20))
        check_within(s, n, limit, unit, keep, seed);

    check_utf8_rule(s, n);
    return 0;
}
