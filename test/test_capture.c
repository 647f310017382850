/*
 * test_capture.c - bounded capture of one output stream (lib/stream/capture.c):
 * HEAD and HEAD_TAIL in characters and bytes, the exact truncation notice
 * (its counts in characters and bytes whatever the unit, first or last,
 * with or without the clause that says where the full output is),
 * UTF-8 sequences never split at a cut, invalid bytes counted one per byte,
 * limit 0, exact totals, results independent of how the input is chunked
 * (checked against an independent reference model), and memory bounded by
 * the limit whatever is fed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stream/capture.h"
#include "stream/notice.h"
#include "shexec.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

/* Deterministic xorshift64* generator (fixed seeds: reproducible failures). */
static uint64_t rng_state;

static void rng_seed(uint64_t s)
{
    rng_state = s ? s : 0x9E3779B97F4A7C15ull;
}

static uint64_t rng_next(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static size_t rng_below(size_t n)
{
    return n ? (size_t)(rng_next() % n) : 0;
}

/* Lines as the notice counts them: newlines, and a last line without one. */
static uint64_t ref_count_lines(const void *text, size_t len)
{
    const unsigned char *p = text;
    uint64_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += p[i] == '\n';
    return n + (len > 0 && p[len - 1] != '\n');
}

/*
 * Reference segmentation, written independently of lib/utf8.h from Unicode
 * table 3-7: the length of the character at p when no more input follows
 * (a sequence that is not well formed, or cut short, is one invalid byte).
 */
static size_t ref_char_len(const unsigned char *p, size_t avail)
{
    unsigned char c = p[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c <= 0x7F)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c == 0xE0) {
        need = 3;
        lo = 0xA0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
        need = 3;
    } else if (c == 0xED) {
        need = 3;
        hi = 0x9F;
    } else if (c == 0xF0) {
        need = 4;
        lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3) {
        need = 4;
    } else if (c == 0xF4) {
        need = 4;
        hi = 0x8F;
    } else {
        return 1; /* 80..C1, F5..FF */
    }
    if (avail < need)
        return 1;
    if (p[1] < lo || p[1] > hi)
        return 1;
    for (size_t i = 2; i < need; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 1;
    return need;
}

/* Number of characters in p[0..n) under the reference segmentation. */
static uint64_t ref_count_chars(const unsigned char *p, size_t n)
{
    uint64_t chars = 0;
    for (size_t i = 0; i < n; i += ref_char_len(p + i, n - i))
        chars++;
    return chars;
}

/* 1 when p[0..n) is entirely well-formed UTF-8. */
static int is_valid_utf8(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t l = ref_char_len(p + i, n - i);
        if (l == 1 && p[i] >= 0x80)
            return 0;
        i += l;
    }
    return 1;
}

/*
 * Reference model of the capture, computed on the whole input at once:
 * the head is the longest prefix of whole characters within ceil(limit/2)
 * (HEAD_TAIL) or limit (HEAD) units; the tail (HEAD_TAIL) is the longest
 * suffix of the remaining characters within limit - (head units) units,
 * i.e. floor(limit/2) plus whatever the head could not use. Every count of
 * the notice is derived here from the model's own character offsets.
 */
typedef struct model {
    shx_buf out; /* rendered with the notice last, no `full` clause */
    int keep;
    uint64_t limit;
    /* where the kept text starts in the input: the head at its start, the
     * tail (tail_bytes of it) at the start of its last tail_chars characters */
    const unsigned char *head_text, *tail_text;
    uint64_t total_units;
    uint64_t head_chars, tail_chars, total_chars, dropped_chars;
    uint64_t head_bytes, tail_bytes, total_bytes, dropped_bytes;
    uint64_t total_lines;
    int truncated;
} model;

/* The notice line, without its newlines, from the model's counts. */
static void model_notice(const model *m, shx_buf *out, const char *full)
{
    if (m->keep == SHEXEC_KEEP_HEAD_TAIL)
        assert_int_equal(
            shx_buf_printf(out,
                           "[output truncated: kept the first %llu and the last %llu characters "
                           "(%llu + %llu bytes) of %llu (%llu bytes, %llu lines); %llu characters "
                           "(%llu bytes) omitted in the middle",
                           (unsigned long long)m->head_chars, (unsigned long long)m->tail_chars,
                           (unsigned long long)m->head_bytes, (unsigned long long)m->tail_bytes,
                           (unsigned long long)m->total_chars, (unsigned long long)m->total_bytes,
                           (unsigned long long)m->total_lines,
                           (unsigned long long)m->dropped_chars,
                           (unsigned long long)m->dropped_bytes),
            0);
    else
        assert_int_equal(
            shx_buf_printf(out,
                           "[output truncated: kept the first %llu characters (%llu bytes) of %llu "
                           "(%llu bytes, %llu lines); %llu characters (%llu bytes) omitted",
                           (unsigned long long)m->head_chars, (unsigned long long)m->head_bytes,
                           (unsigned long long)m->total_chars, (unsigned long long)m->total_bytes,
                           (unsigned long long)m->total_lines,
                           (unsigned long long)m->dropped_chars,
                           (unsigned long long)m->dropped_bytes),
            0);
    if (full)
        assert_int_equal(shx_buf_printf(out, "; %s", full), 0);
    assert_int_equal(shx_buf_putc(out, ']'), 0);
}

/* What render(notice_first, full) must give for the input the model ran on
 * (which must still be there: the kept text is read from it). */
static void model_render(const model *m, shx_buf *out, int notice_first, const char *full)
{
    shx_buf_clear(out);
    assert_int_equal(shx_buf_append(out, "", 0), 0);
    int notice = m->truncated && m->limit > 0;
    if (notice && notice_first) {
        model_notice(m, out, full);
        assert_int_equal(shx_buf_putc(out, '\n'), 0);
    }
    assert_int_equal(shx_buf_append(out, m->head_text, m->head_bytes), 0);
    if (notice && m->keep == SHEXEC_KEEP_HEAD_TAIL)
        assert_int_equal(shx_buf_printf(out, "\n[... %llu characters (%llu bytes) omitted ...]\n",
                                        (unsigned long long)m->dropped_chars,
                                        (unsigned long long)m->dropped_bytes),
                         0);
    assert_int_equal(shx_buf_append(out, m->tail_text, m->tail_bytes), 0);
    if (notice && !notice_first) {
        assert_int_equal(shx_buf_putc(out, '\n'), 0);
        model_notice(m, out, full);
        assert_int_equal(shx_buf_putc(out, '\n'), 0);
    }
}

static void model_run(model *m, const unsigned char *in, size_t len, uint64_t limit, int unit,
                      int keep)
{
    memset(m, 0, sizeof *m);
    size_t nchars = 0;
    size_t *off = malloc((len + 1) * sizeof *off);
    assert_non_null(off);
    for (size_t i = 0; i < len; i += ref_char_len(in + i, len - i))
        off[nchars++] = i;
    off[nchars] = len;
#define UNITS(k) (unit == SHEXEC_UNIT_BYTES ? (uint64_t)(off[(k) + 1] - off[k]) : 1u)
    uint64_t total = 0;
    for (size_t k = 0; k < nchars; k++)
        total += UNITS(k);
    uint64_t tail_cap = keep == SHEXEC_KEEP_HEAD_TAIL ? limit / 2 : 0;
    uint64_t head_cap = limit - tail_cap;
    size_t h = 0;
    uint64_t head_units = 0;
    while (h < nchars && head_units + UNITS(h) <= head_cap) {
        head_units += UNITS(h);
        h++;
    }
    /* room the head left unused (a character that did not fit, BYTES only)
     * goes to the tail: what is kept never exceeds the limit, and output
     * within the limit is kept whole */
    if (keep == SHEXEC_KEEP_HEAD_TAIL)
        tail_cap = limit - head_units;
    size_t t = nchars; /* tail is chars [t, nchars) */
    uint64_t tail_units = 0;
    while (t > h && tail_units + UNITS(t - 1) <= tail_cap) {
        tail_units += UNITS(t - 1);
        t--;
    }
#undef UNITS
    assert_true(head_units + tail_units <= limit);
    m->keep = keep;
    m->limit = limit;
    m->head_text = in;
    m->tail_text = in + off[t];
    m->total_units = total;
    m->head_chars = h;
    m->tail_chars = nchars - t;
    m->total_chars = nchars;
    m->dropped_chars = t - h;
    m->head_bytes = off[h];
    m->tail_bytes = len - off[t];
    m->total_bytes = len;
    m->total_lines = ref_count_lines(in, len);
    m->dropped_bytes = off[t] - off[h];
    m->truncated = total - head_units - tail_units > 0;
    assert_int_equal(m->truncated, m->dropped_chars > 0);
    model_render(m, &m->out, 0, NULL);
    free(off);
}

/* The `full` clause the differential tests render with (any text will do). */
#define FULL_CLAUSE "full output (123 bytes) in /tmp/shexec-1-1-stdout.txt"

/* What one capture produced. */
typedef struct result {
    shx_buf out;        /* render(0, NULL) */
    shx_buf out_first;  /* render(1, NULL) */
    shx_buf out_full;   /* render(0, FULL_CLAUSE) */
    shx_buf out_both;   /* render(1, FULL_CLAUSE) */
    uint64_t total_units, total_bytes;
    uint64_t head_chars, tail_chars, total_chars, dropped_chars;
    uint64_t head_bytes, tail_bytes, dropped_bytes;
    uint64_t total_lines;
    int truncated;
} result;

/*
 * Capture in[0..len) with the given chunking, finish, render into r.
 * chunk: 0 = all at once, 1 = one byte at a time, -1 = random sizes 1..max_rand.
 */
static void capture_run(result *r, const void *in, size_t len, uint64_t limit, int unit, int keep,
                        int chunk, size_t max_rand)
{
    shx_capture c;
    const char *p = in;
    shx_capture_init(&c, limit, unit, keep);
    size_t i = 0;
    while (i < len) {
        size_t n;
        if (chunk == 0)
            n = len;
        else if (chunk > 0)
            n = (size_t)chunk;
        else
            n = 1 + rng_below(max_rand);
        if (n > len - i)
            n = len - i;
        assert_int_equal(shx_capture_feed(&c, p + i, n), 0);
        if (chunk < 0 && rng_below(4) == 0)
            assert_int_equal(shx_capture_feed(&c, p + i, 0), 0); /* empty feeds change nothing */
        i += n;
    }
    assert_int_equal(shx_capture_finish(&c), 0);
    memset(r, 0, sizeof *r);
    assert_int_equal(shx_capture_render(&c, &r->out, 0, NULL), 0);
    assert_int_equal(shx_capture_render(&c, &r->out_first, 1, NULL), 0);
    assert_int_equal(shx_capture_render(&c, &r->out_full, 0, FULL_CLAUSE), 0);
    assert_int_equal(shx_capture_render(&c, &r->out_both, 1, FULL_CLAUSE), 0);
    assert_non_null(r->out.data);
    r->total_units = c.total_units;
    r->total_bytes = c.total_bytes;
    r->head_chars = c.head_chars;
    r->tail_chars = c.tail_chars;
    r->total_chars = c.total_chars;
    r->dropped_chars = c.dropped_chars;
    r->head_bytes = c.head.len;
    r->tail_bytes = c.ring_len;
    r->dropped_bytes = shx_capture_dropped_bytes(&c);
    r->total_lines = shx_capture_lines(&c);
    r->truncated = shx_capture_truncated(&c);
    shx_capture_free(&c);
}

static void assert_bytes_equal(const char *what, const void *got, size_t got_len, const void *want,
                               size_t want_len)
{
    if (got_len == want_len && memcmp(got, want, got_len) == 0)
        return;
    size_t i = 0;
    size_t min = got_len < want_len ? got_len : want_len;
    while (i < min && ((const unsigned char *)got)[i] == ((const unsigned char *)want)[i])
        i++;
    fail_msg("%s: got %zu bytes, expected %zu; first difference at byte %zu", what, got_len,
             want_len, i);
}

static void assert_result_is(const result *r, const void *want, size_t want_len)
{
    assert_bytes_equal("render()", r->out.data, r->out.len, want, want_len);
}

static void result_free(result *r)
{
    shx_buf_free(&r->out);
    shx_buf_free(&r->out_first);
    shx_buf_free(&r->out_full);
    shx_buf_free(&r->out_both);
}

static int buf_is(const shx_buf *b, const shx_buf *want)
{
    return b->len == want->len && memcmp(b->data, want->data, want->len) == 0;
}

/*
 * What in a capture's result differs from the model of the same input (the
 * first thing found), or NULL when nothing does: every count, and the four
 * renderings (notice last or first, with and without a `full` clause).
 */
static const char *result_mismatch(const result *r, const model *m)
{
    if (r->total_units != m->total_units)
        return "total_units";
    if (r->total_bytes != m->total_bytes)
        return "total_bytes";
    if (r->truncated != m->truncated)
        return "truncated";
    if (r->head_chars != m->head_chars)
        return "head_chars";
    if (r->tail_chars != m->tail_chars)
        return "tail_chars";
    if (r->total_chars != m->total_chars)
        return "total_chars";
    if (r->dropped_chars != m->dropped_chars)
        return "dropped_chars";
    if (r->head_bytes != m->head_bytes)
        return "head bytes";
    if (r->tail_bytes != m->tail_bytes)
        return "tail bytes";
    if (r->dropped_bytes != m->dropped_bytes)
        return "shx_capture_dropped_bytes()";
    if (r->total_lines != m->total_lines)
        return "shx_capture_lines()";
    if (!buf_is(&r->out, &m->out))
        return "render(notice last)";
    const char *what = NULL;
    shx_buf want = SHX_BUF_INIT;
    model_render(m, &want, 1, NULL);
    if (!buf_is(&r->out_first, &want))
        what = "render(notice first)";
    model_render(m, &want, 0, FULL_CLAUSE);
    if (!what && !buf_is(&r->out_full, &want))
        what = "render(notice last, full)";
    model_render(m, &want, 1, FULL_CLAUSE);
    if (!what && !buf_is(&r->out_both, &want))
        what = "render(notice first, full)";
    shx_buf_free(&want);
    return what;
}

/* Build "X" repeated: len bytes of a pattern so positions can be told apart. */
static char *ascii_text(size_t len)
{
    char *s = malloc(len + 1);
    assert_non_null(s);
    for (size_t i = 0; i < len; i++)
        s[i] = (char)('a' + (i * 7 + i / 26) % 26);
    s[len] = '\0';
    return s;
}

/* Expected kept + notice (HEAD, notice last): the first kept_chars
 * characters (kept_len bytes) of total_chars (total_bytes), `kept` the
 * start of the whole input (its lines are counted). */
static void expect_head(shx_buf *want, const void *kept, size_t kept_len,
                        unsigned long long kept_chars, unsigned long long total_chars,
                        unsigned long long total_bytes)
{
    shx_buf_clear(want);
    assert_int_equal(shx_buf_append(want, kept, kept_len), 0);
    assert_int_equal(shx_buf_printf(want,
                                    "\n[output truncated: kept the first %llu characters (%llu "
                                    "bytes) of %llu (%llu bytes, %llu lines); %llu characters "
                                    "(%llu bytes) omitted]\n",
                                    kept_chars, (unsigned long long)kept_len, total_chars,
                                    total_bytes,
                                    (unsigned long long)ref_count_lines(kept, (size_t)total_bytes),
                                    total_chars - kept_chars,
                                    total_bytes - kept_len),
                     0);
}

/* ------------------------------------------------------------------------
 * HEAD, characters
 * ------------------------------------------------------------------------ */

static void test_head_chars_under_limit_kept_whole(void **state)
{
    (void)state;
    char *in = ascii_text(10000);
    static const int chunks[] = {0, 1, 4096};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        result r;
        capture_run(&r, in, 10000, SHEXEC_DEFAULT_OUTPUT_LIMIT, SHEXEC_UNIT_CHARS,
                    SHEXEC_KEEP_HEAD, chunks[k], 0);
        assert_result_is(&r, in, 10000);
        assert_false(r.truncated);
        assert_int_equal(r.total_units, 10000);
        assert_int_equal(r.total_bytes, 10000);
        result_free(&r);
    }
    free(in);
}

static void test_head_chars_exactly_limit_not_truncated(void **state)
{
    (void)state;
    char *in = ascii_text(30000);
    result r;
    capture_run(&r, in, 30000, 30000, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, 0, 0);
    assert_result_is(&r, in, 30000);
    assert_false(r.truncated);
    result_free(&r);
    /* one more character truncates */
    char *in2 = ascii_text(30001);
    capture_run(&r, in2, 30001, 30000, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, 1000, 0);
    shx_buf want = SHX_BUF_INIT;
    expect_head(&want, in2, 30000, 30000, 30001, 30001);
    assert_result_is(&r, want.data, want.len);
    assert_true(r.truncated);
    result_free(&r);
    shx_buf_free(&want);
    free(in);
    free(in2);
}

static void test_head_chars_50000_exact_notice(void **state)
{
    (void)state;
    char *in = ascii_text(50000);
    static const int chunks[] = {0, 1, 7, 65536};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        result r;
        capture_run(&r, in, 50000, 30000, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, chunks[k], 0);
        assert_true(r.out.len > 30000);
        assert_memory_equal(r.out.data, in, 30000);
        const char *notice = "\n[output truncated: kept the first 30000 characters (30000 bytes) "
                             "of 50000 (50000 bytes, 1 lines); 20000 characters (20000 bytes) "
                             "omitted]\n";
        assert_int_equal(r.out.len, 30000 + strlen(notice));
        assert_memory_equal(r.out.data + 30000, notice, strlen(notice));
        assert_true(r.truncated);
        assert_int_equal(r.total_units, 50000);
        assert_int_equal(r.total_bytes, 50000);
        assert_int_equal(r.head_chars, 30000);
        assert_int_equal(r.tail_chars, 0);
        assert_int_equal(r.total_chars, 50000);
        assert_int_equal(r.dropped_chars, 20000);
        assert_int_equal(r.dropped_bytes, 20000);
        result_free(&r);
    }
    free(in);
}

/* 2-, 3- and 4-byte characters count as one and are never split at the cut. */
static void test_head_chars_multibyte_counted_and_never_split(void **state)
{
    (void)state;
    static const char *const pieces[] = {"a", "\xC3\xA9" /* é */, "\xE2\x82\xAC" /* € */,
                                         "\xF0\x9F\x98\x80" /* 😀 */};
    /* 50000 characters cycling through the four widths: 125000 bytes */
    shx_buf in = SHX_BUF_INIT;
    for (int i = 0; i < 50000; i++)
        assert_int_equal(shx_buf_puts(&in, pieces[i % 4]), 0);
    assert_int_equal(in.len, 12500u * (1 + 2 + 3 + 4));

    static const int chunks[] = {0, 1, 3, 4093};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        result r;
        capture_run(&r, in.data, in.len, 30000, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, chunks[k], 0);
        /* the first 30000 characters are 7500 full cycles = 75000 bytes */
        shx_buf want = SHX_BUF_INIT;
        expect_head(&want, in.data, 75000, 30000, 50000, 125000);
        assert_result_is(&r, want.data, want.len);
        assert_int_equal(r.dropped_chars, 20000);
        assert_int_equal(r.dropped_bytes, 50000);
        assert_true(is_valid_utf8((const unsigned char *)r.out.data, 75000));
        assert_int_equal(ref_count_chars((const unsigned char *)r.out.data, 75000), 30000);
        assert_int_equal(r.total_units, 50000);
        assert_int_equal(r.total_bytes, in.len);
        shx_buf_free(&want);
        result_free(&r);
    }

    /* every cut position of a short text: exactly `limit` whole characters */
    const char *s = "h\xC3\xA9llo \xE2\x82\xAC\xF0\x9F\x98\x80x\xF0\x9F\x98\x80\xC3\xA9\xE2\x82\xAC!";
    size_t slen = strlen(s);
    uint64_t nchars = ref_count_chars((const unsigned char *)s, slen);
    assert_int_equal(nchars, 13);
    for (uint64_t limit = 1; limit <= nchars + 1; limit++) {
        result r;
        capture_run(&r, s, slen, limit, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, 1, 0);
        size_t kept = 0;
        for (uint64_t c = 0; c < limit && kept < slen; c++)
            kept += ref_char_len((const unsigned char *)s + kept, slen - kept);
        if (limit >= nchars) {
            assert_result_is(&r, s, slen);
            assert_false(r.truncated);
        } else {
            shx_buf want = SHX_BUF_INIT;
            expect_head(&want, s, kept, limit, nchars, slen);
            assert_result_is(&r, want.data, want.len);
            assert_true(is_valid_utf8((const unsigned char *)r.out.data, kept));
            assert_int_equal(ref_count_chars((const unsigned char *)r.out.data, kept), limit);
            shx_buf_free(&want);
        }
        assert_int_equal(r.total_units, nchars);
        result_free(&r);
    }
    shx_buf_free(&in);
}

/* Invalid bytes count one character each, as shx_utf8_char_len defines. */
static void test_chars_invalid_bytes_one_per_byte(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t len;
        uint64_t chars;
    } cases[] = {
        {"\xFF", 1, 1},
        {"\x80", 1, 1},                  /* lone continuation byte */
        {"\xC0\xAF", 2, 2},              /* overlong '/' */
        {"\xC1\xBF", 2, 2},              /* overlong */
        {"\xE0\x80\xAF", 3, 3},          /* overlong 3-byte */
        {"\xED\xA0\x80", 3, 3},          /* surrogate U+D800 */
        {"\xF4\x90\x80\x80", 4, 4},      /* above U+10FFFF */
        {"\xF5\x80\x80\x80", 4, 4},
        {"\xE2\x82", 2, 2},              /* truncated € at the very end */
        {"\xF0\x9F\x98", 3, 3},          /* truncated 😀 at the very end */
        {"\xE2\x82" "A", 3, 3},          /* truncated € followed by ASCII */
        {"\xC3", 1, 1},
        {"\xC3\xA9", 2, 1},              /* control: valid é is one */
        {"\xED\x9F\xBF", 3, 1},          /* control: U+D7FF is valid */
        {"\xF4\x8F\xBF\xBF", 4, 1},      /* control: U+10FFFF is valid */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        assert_int_equal(ref_count_chars((const unsigned char *)cases[k].bytes, cases[k].len),
                         cases[k].chars);
        for (int chunk = 0; chunk <= 1; chunk++) {
            /* under the limit: kept whole, counted exactly */
            result r;
            capture_run(&r, cases[k].bytes, cases[k].len, 100, SHEXEC_UNIT_CHARS,
                        SHEXEC_KEEP_HEAD, chunk, 0);
            assert_result_is(&r, cases[k].bytes, cases[k].len);
            if (r.total_units != cases[k].chars)
                fail_msg("case %zu: %llu characters, expected %llu", k,
                         (unsigned long long)r.total_units, (unsigned long long)cases[k].chars);
            assert_int_equal(r.total_bytes, cases[k].len);
            assert_false(r.truncated);
            result_free(&r);

            /* limit 1: exactly the first character kept */
            capture_run(&r, cases[k].bytes, cases[k].len, 1, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD,
                        chunk, 0);
            if (cases[k].chars == 1) {
                assert_result_is(&r, cases[k].bytes, cases[k].len);
            } else {
                shx_buf want = SHX_BUF_INIT;
                /* every case of more than one character starts with an invalid byte */
                expect_head(&want, cases[k].bytes, 1, 1, cases[k].chars, cases[k].len);
                assert_result_is(&r, want.data, want.len);
                shx_buf_free(&want);
            }
            result_free(&r);
        }
    }

    /* a truncated sequence at the end, cut across feeds and never completed */
    shx_capture c;
    shx_capture_init(&c, 100, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD);
    assert_int_equal(shx_capture_feed(&c, "ab\xF0", 3), 0);
    assert_int_equal(shx_capture_feed(&c, "\x9F", 1), 0);
    assert_int_equal(shx_capture_feed(&c, "\x98", 1), 0);
    assert_int_equal(shx_capture_finish(&c), 0);
    assert_int_equal(c.total_units, 5);
    assert_int_equal(c.total_bytes, 5);
    assert_int_equal(c.total_chars, 5);
    shx_buf out = SHX_BUF_INIT;
    assert_int_equal(shx_capture_render(&c, &out, 0, NULL), 0);
    assert_bytes_equal("render()", out.data, out.len, "ab\xF0\x9F\x98", 5);
    shx_buf_free(&out);
    shx_capture_free(&c);

    /* a truncated sequence broken by a following invalid byte in a later feed */
    shx_capture_init(&c, 100, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD);
    assert_int_equal(shx_capture_feed(&c, "\xF0\x9F\x98", 3), 0);
    assert_int_equal(shx_capture_feed(&c, "Z\xE2\x82\xAC", 4), 0);
    assert_int_equal(shx_capture_finish(&c), 0);
    assert_int_equal(c.total_units, 5); /* F0 9F 98 Z € */
    shx_capture_free(&c);
}

/* ------------------------------------------------------------------------
 * BYTES unit
 * ------------------------------------------------------------------------ */

static void test_head_bytes_ascii(void **state)
{
    (void)state;
    char *in = ascii_text(100000);
    static const int chunks[] = {0, 1, 65536};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        result r;
        capture_run(&r, in, 100000, 51200, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD, chunks[k], 0);
        shx_buf want = SHX_BUF_INIT;
        expect_head(&want, in, 51200, 51200, 100000, 100000);
        assert_result_is(&r, want.data, want.len);
        /* in the BYTES unit the notice still counts characters too */
        assert_non_null(strstr(r.out.data + 51200,
                               "kept the first 51200 characters (51200 bytes) of 100000 (100000 "
                               "bytes, 1 lines); 48800 characters (48800 bytes) omitted]"));
        assert_true(r.truncated);
        assert_int_equal(r.total_units, 100000);
        assert_int_equal(r.total_bytes, 100000);
        shx_buf_free(&want);
        result_free(&r);
    }
    free(in);
}

static void test_head_bytes_never_splits_sequence(void **state)
{
    (void)state;
    /* 25000 x 😀 = 100000 bytes; 51200 is a multiple of 4: kept exactly */
    shx_buf in = SHX_BUF_INIT;
    for (int i = 0; i < 25000; i++)
        assert_int_equal(shx_buf_puts(&in, "\xF0\x9F\x98\x80"), 0);
    result r;
    shx_buf want = SHX_BUF_INIT;
    capture_run(&r, in.data, in.len, 51200, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD, 3, 0);
    expect_head(&want, in.data, 51200, 12800, 25000, 100000);
    assert_result_is(&r, want.data, want.len);
    assert_int_equal(r.head_chars, 12800);
    assert_int_equal(r.dropped_chars, 12200);
    assert_int_equal(r.dropped_bytes, 48800);
    result_free(&r);

    /* "a" + 😀...: 51200 would cut the 12800th emoji: 51197 bytes kept */
    shx_buf_clear(&in);
    assert_int_equal(shx_buf_puts(&in, "a"), 0);
    for (int i = 0; i < 25000; i++)
        assert_int_equal(shx_buf_puts(&in, "\xF0\x9F\x98\x80"), 0);
    static const int chunks[] = {0, 1, 5};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        capture_run(&r, in.data, in.len, 51200, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD, chunks[k], 0);
        /* "a" and 12799 emoji */
        expect_head(&want, in.data, 51197, 12800, 25001, 100001);
        assert_result_is(&r, want.data, want.len);
        assert_true(is_valid_utf8((const unsigned char *)r.out.data, 51197));
        assert_int_equal(r.total_units, 100001);
        assert_int_equal(r.total_bytes, 100001);
        result_free(&r);
    }

    /* every limit over a mixed text: the longest whole-character prefix */
    const char *s = "x\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80y\xE2\x82\xAC\xC3\xA9z";
    size_t slen = strlen(s);
    assert_int_equal(ref_count_chars((const unsigned char *)s, slen), 8);
    for (uint64_t limit = 1; limit <= slen; limit++) {
        size_t kept = 0;
        for (;;) {
            size_t l = ref_char_len((const unsigned char *)s + kept, slen - kept);
            if (kept >= slen || kept + l > limit)
                break;
            kept += l;
        }
        capture_run(&r, s, slen, limit, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD, 1, 0);
        if (limit == slen) {
            assert_result_is(&r, s, slen);
            assert_false(r.truncated);
        } else {
            expect_head(&want, s, kept, ref_count_chars((const unsigned char *)s, kept), 8, slen);
            assert_result_is(&r, want.data, want.len);
            assert_true(r.truncated);
        }
        assert_int_equal(r.total_units, slen);
        result_free(&r);
    }
    shx_buf_free(&want);
    shx_buf_free(&in);
}

/* ------------------------------------------------------------------------
 * HEAD_TAIL
 * ------------------------------------------------------------------------ */

static void test_head_tail_chars_exact(void **state)
{
    (void)state;
    char *in = ascii_text(50000);
    static const int chunks[] = {0, 1, 4099};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        result r;
        capture_run(&r, in, 50000, 30000, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL, chunks[k], 0);
        shx_buf want = SHX_BUF_INIT;
        assert_int_equal(shx_buf_append(&want, in, 15000), 0);
        assert_int_equal(
            shx_buf_puts(&want, "\n[... 20000 characters (20000 bytes) omitted ...]\n"), 0);
        assert_int_equal(shx_buf_append(&want, in + 35000, 15000), 0);
        assert_int_equal(shx_buf_puts(&want,
                                      "\n[output truncated: kept the first 15000 and the last "
                                      "15000 characters (15000 + 15000 bytes) of 50000 (50000 "
                                      "bytes, 1 lines); 20000 characters (20000 bytes) omitted in "
                                      "the "
                                      "middle]\n"),
                         0);
        assert_result_is(&r, want.data, want.len);
        assert_true(r.truncated);
        assert_int_equal(r.total_units, 50000);
        assert_int_equal(r.head_chars, 15000);
        assert_int_equal(r.tail_chars, 15000);
        assert_int_equal(r.total_chars, 50000);
        assert_int_equal(r.dropped_chars, 20000);
        assert_int_equal(r.dropped_bytes, 20000);
        shx_buf_free(&want);
        result_free(&r);
    }
    free(in);

    /* odd limit: ceil(7/2) = 4 first, floor(7/2) = 3 last */
    for (int chunk = 0; chunk <= 1; chunk++) {
        result r;
        capture_run(&r, "abcdefghijklmnop", 16, 7, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL, chunk,
                    0);
        const char *want = "abcd"
                           "\n[... 9 characters (9 bytes) omitted ...]\n"
                           "nop"
                           "\n[output truncated: kept the first 4 and the last 3 characters "
                           "(4 + 3 bytes) of 16 (16 bytes, 1 lines); 9 characters (9 bytes) "
                           "omitted in the "
                           "middle]\n";
        assert_result_is(&r, want, strlen(want));
        result_free(&r);
    }

    /* limit 1: one character of head, no tail (the marker still parts the
     * head from the empty tail, and the notice follows) */
    result r;
    capture_run(&r, "abc", 3, 1, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL, 1, 0);
    const char *w1 = "a"
                     "\n[... 2 characters (2 bytes) omitted ...]\n"
                     "\n[output truncated: kept the first 1 and the last 0 characters (1 + 0 "
                     "bytes) of 3 (3 bytes, 1 lines); 2 characters (2 bytes) omitted in the "
                     "middle]\n";
    assert_result_is(&r, w1, strlen(w1));
    result_free(&r);
}

static void test_head_tail_multibyte(void **state)
{
    (void)state;
    /* 9 characters: é € 😀 a b c 😀 € é, limit 4: first 2, last 2, 5 omitted */
    const char *s = "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80" "abc"
                    "\xF0\x9F\x98\x80\xE2\x82\xAC\xC3\xA9";
    for (int chunk = 0; chunk <= 1; chunk++) {
        result r;
        capture_run(&r, s, strlen(s), 4, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL, chunk, 0);
        const char *want = "\xC3\xA9\xE2\x82\xAC"
                           "\n[... 5 characters (11 bytes) omitted ...]\n"
                           "\xE2\x82\xAC\xC3\xA9"
                           "\n[output truncated: kept the first 2 and the last 2 characters "
                           "(5 + 5 bytes) of 9 (21 bytes, 1 lines); 5 characters (11 bytes) "
                           "omitted in the "
                           "middle]\n";
        assert_result_is(&r, want, strlen(want));
        result_free(&r);

        /* bytes, limit 9: head 5 bytes (é€, 😀 would split), tail 4 bytes (é + ... €é is 5) */
        capture_run(&r, s, strlen(s), 9, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD_TAIL, chunk, 0);
        /* total 2+3+4+3+4+3+2 = 21 bytes; head "é€" 5, tail: é(2) fits, €(3) would make 5 > 4 */
        const char *want_b = "\xC3\xA9\xE2\x82\xAC"
                             "\n[... 6 characters (14 bytes) omitted ...]\n"
                             "\xC3\xA9"
                             "\n[output truncated: kept the first 2 and the last 1 characters "
                             "(5 + 2 bytes) of 9 (21 bytes, 1 lines); 6 characters (14 bytes) "
                             "omitted in "
                             "the middle]\n";
        assert_result_is(&r, want_b, strlen(want_b));
        assert_int_equal(r.total_units, 21);
        result_free(&r);
    }
}

static void test_head_tail_under_limit_identical(void **state)
{
    (void)state;
    static const char *const inputs[] = {
        "",
        "a",
        "abcdefghij", /* exactly the limit in characters */
        "abcdefghi",
        "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80xyz\xF0\x9F\x98\x80\xE2\x82\xAC\xC3\xA9", /* 9 chars */
        "\xFF\x80\xC0\xAF\xED\xA0\x80\xE2\x82", /* 9 invalid bytes */
    };
    for (size_t k = 0; k < sizeof inputs / sizeof inputs[0]; k++) {
        size_t len = strlen(inputs[k]);
        for (int chunk = 0; chunk <= 1; chunk++) {
            result r;
            capture_run(&r, inputs[k], len, 10, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL, chunk, 0);
            assert_result_is(&r, inputs[k], len);
            assert_false(r.truncated);
            result_free(&r);
        }
    }
    /* big: 29999 and 30000 characters with limit 30000 */
    char *in = ascii_text(30000);
    for (size_t len = 29999; len <= 30000; len++) {
        result r;
        capture_run(&r, in, len, 30000, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL, 1000, 0);
        assert_result_is(&r, in, len);
        assert_false(r.truncated);
        result_free(&r);
    }
    /* bytes, ASCII only, total == limit */
    {
        result r;
        capture_run(&r, in, 30000, 30000, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD_TAIL, 1000, 0);
        assert_result_is(&r, in, 30000);
        assert_false(r.truncated);
        result_free(&r);
    }
    free(in);
}

/*
 * BYTES + HEAD_TAIL with total <= limit, where a multi-byte character
 * straddles ceil(limit/2): the head stops short of it, and the rest
 * (more than floor(limit/2) bytes) must still all be kept, since the whole
 * output fits the limit.
 */
static void test_head_tail_bytes_under_limit_multibyte_at_cut(void **state)
{
    (void)state;
    char msg[2][256] = {"", ""};
    int bad = 0;

    /* "a€" = 4 bytes, limit 4: head_cap 2 holds "a", € (3 bytes) exceeds tail_cap 2 */
    result r;
    capture_run(&r, "a\xE2\x82\xAC", 4, 4, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD_TAIL, 0, 0);
    if (r.truncated || r.out.len != 4 || memcmp(r.out.data, "a\xE2\x82\xAC", 4) != 0) {
        bad++;
        snprintf(msg[0], sizeof msg[0],
                 "limit 4 bytes HEAD_TAIL, input \"a\\xE2\\x82\\xAC\" (4 bytes): expected it "
                 "unchanged; got truncated=%d, %zu bytes", r.truncated, r.out.len);
    }
    result_free(&r);

    /* 14999 'x' + € + 14998 'y' = 30000 bytes, limit 30000 */
    shx_buf in = SHX_BUF_INIT;
    for (int i = 0; i < 14999; i++)
        assert_int_equal(shx_buf_putc(&in, 'x'), 0);
    assert_int_equal(shx_buf_puts(&in, "\xE2\x82\xAC"), 0);
    for (int i = 0; i < 14998; i++)
        assert_int_equal(shx_buf_putc(&in, 'y'), 0);
    assert_int_equal(in.len, 30000);
    capture_run(&r, in.data, in.len, 30000, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD_TAIL, 0, 0);
    if (r.truncated || r.out.len != in.len || memcmp(r.out.data, in.data, in.len) != 0) {
        bad++;
        snprintf(msg[1], sizeof msg[1],
                 "limit 30000 bytes HEAD_TAIL, 30000-byte input with a 3-byte char at offset "
                 "14999: expected it unchanged; got truncated=%d, %zu bytes", r.truncated,
                 r.out.len);
    }
    result_free(&r);
    shx_buf_free(&in);
    if (bad)
        fail_msg("%s%s%s", msg[0], msg[0][0] && msg[1][0] ? " | " : "", msg[1]);
}

/* BYTES + HEAD_TAIL over the limit: head room left by a character that did
 * not fit goes to the tail, so exactly `limit` bytes can still be kept. */
static void test_head_tail_bytes_unused_head_room_to_tail(void **state)
{
    (void)state;
    /* limit 4: head "a" (€ would make 4 > 2), tail gets 4 - 1 = 3 bytes */
    for (int chunk = 0; chunk <= 1; chunk++) {
        result r;
        capture_run(&r, "a\xE2\x82\xAC" "bcdef", 9, 4, SHEXEC_UNIT_BYTES,
                    SHEXEC_KEEP_HEAD_TAIL, chunk, 0);
        const char *want = "a"
                           "\n[... 3 characters (5 bytes) omitted ...]\n"
                           "def"
                           "\n[output truncated: kept the first 1 and the last 3 characters (1 + 3 "
                           "bytes) of 7 (9 bytes, 1 lines); 3 characters (5 bytes) omitted in the "
                           "middle]\n";
        assert_result_is(&r, want, strlen(want));
        result_free(&r);
        /* the tail still never splits a character: "😀" (4 bytes) > 3 */
        capture_run(&r, "a\xE2\x82\xAC" "b\xF0\x9F\x98\x80", 9, 4, SHEXEC_UNIT_BYTES,
                    SHEXEC_KEEP_HEAD_TAIL, chunk, 0);
        const char *want2 = "a"
                            "\n[... 3 characters (8 bytes) omitted ...]\n"
                            "\n[output truncated: kept the first 1 and the last 0 characters (1 + "
                            "0 bytes) of 4 (9 bytes, 1 lines); 3 characters (8 bytes) omitted in "
                            "the "
                            "middle]\n";
        assert_result_is(&r, want2, strlen(want2));
        result_free(&r);
    }
}

/* ------------------------------------------------------------------------
 * Limit 0, totals, render
 * ------------------------------------------------------------------------ */

static void test_limit_zero_keeps_nothing(void **state)
{
    (void)state;
    for (int unit = SHEXEC_UNIT_CHARS; unit <= SHEXEC_UNIT_BYTES; unit++) {
        for (int keep = SHEXEC_KEEP_HEAD; keep <= SHEXEC_KEEP_HEAD_TAIL; keep++) {
            result r;
            capture_run(&r, "", 0, 0, unit, keep, 0, 0);
            assert_int_equal(r.out.len, 0);
            assert_false(r.truncated);
            assert_int_equal(r.total_units, 0);
            result_free(&r);

            const char *s = "h\xC3\xA9llo\xFF";
            capture_run(&r, s, strlen(s), 0, unit, keep, 1, 0);
            assert_int_equal(r.out.len, 0);
            assert_string_equal(r.out.data, "");
            assert_true(r.truncated);
            assert_int_equal(r.total_units, unit == SHEXEC_UNIT_BYTES ? 7 : 6);
            assert_int_equal(r.total_bytes, 7);
            assert_int_equal(r.total_chars, 6);
            assert_int_equal(r.dropped_chars, 6);
            assert_int_equal(r.dropped_bytes, 7);
            /* no notice at limit 0, wherever it would go and whatever its clause */
            assert_int_equal(r.out_first.len, 0);
            assert_int_equal(r.out_full.len, 0);
            assert_int_equal(r.out_both.len, 0);
            result_free(&r);

            /* a big input too (the fast counting paths) */
            char *big = ascii_text(100000);
            capture_run(&r, big, 100000, 0, unit, keep, 4096, 0);
            assert_int_equal(r.out.len, 0);
            assert_true(r.truncated);
            assert_int_equal(r.total_units, 100000);
            assert_int_equal(r.dropped_chars, 100000);
            assert_int_equal(r.dropped_bytes, 100000);
            assert_int_equal(r.out_both.len, 0);
            result_free(&r);
            free(big);
        }
    }
}

static void test_totals_and_render_replaces(void **state)
{
    (void)state;
    /* a -> 1, é -> 2, invalid FF -> 1, € -> 3, truncated F0 9F at end -> 2 */
    const char *s = "a\xC3\xA9\xFF\xE2\x82\xAC\xF0\x9F";
    size_t len = strlen(s);
    for (int unit = SHEXEC_UNIT_CHARS; unit <= SHEXEC_UNIT_BYTES; unit++) {
        for (int keep = SHEXEC_KEEP_HEAD; keep <= SHEXEC_KEEP_HEAD_TAIL; keep++) {
            for (int chunk = 0; chunk <= 1; chunk++) {
                result r;
                capture_run(&r, s, len, 3, unit, keep, chunk, 0);
                assert_int_equal(r.total_bytes, len);
                assert_int_equal(r.total_units, unit == SHEXEC_UNIT_BYTES ? 9 : 6);
                assert_int_equal(r.total_chars, 6);
                assert_int_equal(r.head_chars + r.tail_chars + r.dropped_chars, 6);
                assert_int_equal(r.head_bytes + r.tail_bytes + r.dropped_bytes, len);
                assert_true(r.truncated);
                result_free(&r);
            }
        }
    }

    /* render replaces what the buffer held, and can be called again */
    shx_capture c;
    shx_capture_init(&c, 3, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD);
    assert_int_equal(shx_capture_feed(&c, "abcdef", 6), 0);
    assert_int_equal(shx_capture_finish(&c), 0);
    shx_buf out = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&out, "previous content that must go"), 0);
    assert_int_equal(shx_capture_render(&c, &out, 0, NULL), 0);
    const char *want = "abc\n[output truncated: kept the first 3 characters (3 bytes) of 6 (6 "
                       "bytes, 1 lines); 3 characters (3 bytes) omitted]\n";
    assert_bytes_equal("render()", out.data, out.len, want, strlen(want));
    assert_int_equal(shx_capture_render(&c, &out, 0, NULL), 0);
    assert_bytes_equal("second render()", out.data, out.len, want, strlen(want));
    shx_buf_free(&out);
    shx_capture_free(&c);

    /* full head, nothing more: not truncated, even after an empty feed */
    shx_capture_init(&c, 3, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD);
    assert_int_equal(shx_capture_feed(&c, "abc", 3), 0);
    assert_int_equal(shx_capture_feed(&c, "", 0), 0);
    assert_int_equal(shx_capture_finish(&c), 0);
    assert_false(shx_capture_truncated(&c));
    assert_int_equal(shx_capture_dropped_bytes(&c), 0);
    assert_int_equal(shx_capture_render(&c, &out, 0, NULL), 0);
    assert_bytes_equal("render()", out.data, out.len, "abc", 3);
    shx_buf_free(&out);
    shx_capture_free(&c);
}

/* ------------------------------------------------------------------------
 * The notice: first or last, the `full` clause, exact counts
 * ------------------------------------------------------------------------ */

static void test_notice_first_head(void **state)
{
    (void)state;
    for (int chunk = 0; chunk <= 1; chunk++) {
        result r;
        capture_run(&r, "abcdef", 6, 3, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, chunk, 0);
        /* the notice is the first line, the kept text follows it as it was */
        const char *want = "[output truncated: kept the first 3 characters (3 bytes) of 6 (6 "
                           "bytes, 1 lines); 3 characters (3 bytes) omitted]\n"
                           "abc";
        assert_bytes_equal("render(notice first)", r.out_first.data, r.out_first.len, want,
                           strlen(want));
        result_free(&r);

        /* BYTES: the limit counts bytes, the notice still gives both */
        capture_run(&r, "h\xC3\xA9llo", 6, 3, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD, chunk, 0);
        const char *want_b = "[output truncated: kept the first 2 characters (3 bytes) of 5 (6 "
                             "bytes, 1 lines); 3 characters (3 bytes) omitted]\n"
                             "h\xC3\xA9";
        assert_bytes_equal("render(notice first)", r.out_first.data, r.out_first.len, want_b,
                           strlen(want_b));
        result_free(&r);

        /* nothing left out: no notice, first or last */
        capture_run(&r, "abc", 3, 3, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, chunk, 0);
        assert_bytes_equal("render(notice first)", r.out_first.data, r.out_first.len, "abc", 3);
        assert_bytes_equal("render(notice first, full)", r.out_both.data, r.out_both.len, "abc",
                           3);
        result_free(&r);
    }
}

static void test_notice_first_head_tail(void **state)
{
    (void)state;
    for (int chunk = 0; chunk <= 1; chunk++) {
        result r;
        capture_run(&r, "abcdefghijklmnop", 16, 7, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL,
                    chunk, 0);
        /* the notice moves to the front; the marker stays between head and tail */
        const char *want = "[output truncated: kept the first 4 and the last 3 characters (4 + 3 "
                           "bytes) of 16 (16 bytes, 1 lines); 9 characters (9 bytes) omitted in "
                           "the "
                           "middle]\n"
                           "abcd"
                           "\n[... 9 characters (9 bytes) omitted ...]\n"
                           "nop";
        assert_bytes_equal("render(notice first)", r.out_first.data, r.out_first.len, want,
                           strlen(want));
        result_free(&r);

        /* within the limit: the text alone */
        capture_run(&r, "abcdefg", 7, 7, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL, chunk, 0);
        assert_bytes_equal("render(notice first)", r.out_first.data, r.out_first.len, "abcdefg",
                           7);
        result_free(&r);
    }
}

static void test_notice_full_clause(void **state)
{
    (void)state;
    result r;
    capture_run(&r, "abcdef", 6, 3, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, 1, 0);
    const char *want = "abc\n[output truncated: kept the first 3 characters (3 bytes) of 6 (6 "
                       "bytes, 1 lines); 3 characters (3 bytes) omitted; " FULL_CLAUSE "]\n";
    assert_bytes_equal("render(notice last, full)", r.out_full.data, r.out_full.len, want,
                       strlen(want));
    const char *want_first = "[output truncated: kept the first 3 characters (3 bytes) of 6 (6 "
                             "bytes, 1 lines); 3 characters (3 bytes) omitted; " FULL_CLAUSE "]\n"
                             "abc";
    assert_bytes_equal("render(notice first, full)", r.out_both.data, r.out_both.len, want_first,
                       strlen(want_first));
    result_free(&r);

    capture_run(&r, "abcdefghijklmnop", 16, 7, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL, 1, 0);
    const char *want_ht = "abcd"
                          "\n[... 9 characters (9 bytes) omitted ...]\n"
                          "nop"
                          "\n[output truncated: kept the first 4 and the last 3 characters (4 + "
                          "3 bytes) of 16 (16 bytes, 1 lines); 9 characters (9 bytes) omitted in "
                          "the "
                          "middle; " FULL_CLAUSE "]\n";
    assert_bytes_equal("render(notice last, full)", r.out_full.data, r.out_full.len, want_ht,
                       strlen(want_ht));
    result_free(&r);

    /* nothing left out: no notice, so no clause either */
    capture_run(&r, "abc", 3, 3, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL, 0, 0);
    assert_bytes_equal("render(notice last, full)", r.out_full.data, r.out_full.len, "abc", 3);
    result_free(&r);

    /* the clause is text, not a format: a path may hold '%' */
    shx_capture c;
    shx_capture_init(&c, 3, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD);
    assert_int_equal(shx_capture_feed(&c, "abcdef", 6), 0);
    assert_int_equal(shx_capture_finish(&c), 0);
    shx_buf out = SHX_BUF_INIT;
    const char *full_pct = "full output (6 bytes) in /tmp/%s%n%%d.txt";
    assert_int_equal(shx_capture_render(&c, &out, 0, full_pct), 0);
    const char *want_pct = "abc\n[output truncated: kept the first 3 characters (3 bytes) of 6 (6 "
                           "bytes, 1 lines); 3 characters (3 bytes) omitted; full output (6 "
                           "bytes) in "
                           "/tmp/%s%n%%d.txt]\n";
    assert_bytes_equal("render(full with '%')", out.data, out.len, want_pct, strlen(want_pct));
    shx_buf_free(&out);
    shx_capture_free(&c);
}

/*
 * One capture of `in`, every chunking, against a notice written out by hand
 * (want) and against the model. The counts of the notice are the point:
 * characters of 1 to 4 bytes and invalid bytes, in both units.
 */
static void check_exact_render(const char *in, size_t len, uint64_t limit, int unit, int keep,
                               const char *want)
{
    model m;
    model_run(&m, (const unsigned char *)in, len, limit, unit, keep);
    assert_bytes_equal("model", m.out.data, m.out.len, want, strlen(want));
    static const int chunks[] = {0, 1, 2, 3, 5};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        result r;
        capture_run(&r, in, len, limit, unit, keep, chunks[k], 0);
        assert_result_is(&r, want, strlen(want));
        const char *differs = result_mismatch(&r, &m);
        if (differs)
            fail_msg("limit %llu, unit %d, keep %d, chunks of %d: %s differs from the model",
                     (unsigned long long)limit, unit, keep, chunks[k], differs);
        result_free(&r);
    }
    shx_buf_free(&m.out);
}

static void test_notice_counts_mixed_width(void **state)
{
    (void)state;
    /* 13 characters in 23 bytes: a é € 😀, an invalid FF, a 3-byte lead and
     * continuation cut short by 'b' (two invalid bytes), b é 😀, an overlong
     * C0 AF (two invalid bytes), c */
    const char *s = "a"
                    "\xC3\xA9"
                    "\xE2\x82\xAC"
                    "\xF0\x9F\x98\x80"
                    "\xFF"
                    "\xE2\x82"
                    "b"
                    "\xC3\xA9"
                    "\xF0\x9F\x98\x80"
                    "\xC0\xAF"
                    "c";
    size_t len = strlen(s);
    assert_int_equal(len, 23);
    assert_int_equal(ref_count_chars((const unsigned char *)s, len), 13);

    /* characters, first 5: a é € 😀 FF (11 bytes) */
    check_exact_render(s, len, 5, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD,
                       "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xFF"
                       "\n[output truncated: kept the first 5 characters (11 bytes) of 13 (23 "
                       "bytes, 1 lines); 8 characters (12 bytes) omitted]\n");
    /* bytes, 12: a é € 😀 FF E2 (6 characters), the lone lead byte kept */
    check_exact_render(s, len, 12, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD,
                       "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xFF\xE2"
                       "\n[output truncated: kept the first 6 characters (12 bytes) of 13 (23 "
                       "bytes, 1 lines); 7 characters (11 bytes) omitted]\n");
    /* bytes, 8: a é € (6 bytes): 😀 would split */
    check_exact_render(s, len, 8, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD,
                       "a\xC3\xA9\xE2\x82\xAC"
                       "\n[output truncated: kept the first 3 characters (6 bytes) of 13 (23 "
                       "bytes, 1 lines); 10 characters (17 bytes) omitted]\n");
    /* characters, 4 + 4: a é € 😀 | 😀 C0 AF c; FF E2 82 b é left out */
    check_exact_render(s, len, 8, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL,
                       "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"
                       "\n[... 5 characters (6 bytes) omitted ...]\n"
                       "\xF0\x9F\x98\x80\xC0\xAF"
                       "c"
                       "\n[output truncated: kept the first 4 and the last 4 characters (10 + 7 "
                       "bytes) of 13 (23 bytes, 1 lines); 5 characters (6 bytes) omitted in the "
                       "middle]\n");
    /* bytes, 16: head a é € (6 of its 8 bytes: 😀 would split), the tail
     * gets the 10 left: b é 😀 C0 AF c; 😀 FF E2 82 left out */
    check_exact_render(s, len, 16, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD_TAIL,
                       "a\xC3\xA9\xE2\x82\xAC"
                       "\n[... 4 characters (7 bytes) omitted ...]\n"
                       "b\xC3\xA9\xF0\x9F\x98\x80\xC0\xAF"
                       "c"
                       "\n[output truncated: kept the first 3 and the last 6 characters (6 + 10 "
                       "bytes) of 13 (23 bytes, 1 lines); 4 characters (7 bytes) omitted in the "
                       "middle]\n");

    /* a sequence cut by the end of the stream is three invalid bytes */
    const char *cut = "ab\xF0\x9F\x98";
    check_exact_render(cut, 5, 1, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD,
                       "a"
                       "\n[output truncated: kept the first 1 characters (1 bytes) of 5 (5 "
                       "bytes, 1 lines); 4 characters (4 bytes) omitted]\n");
    /* ... which the tail may keep in part */
    check_exact_render(cut, 5, 4, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD_TAIL,
                       "ab"
                       "\n[... 1 characters (1 bytes) omitted ...]\n"
                       "\x9F\x98"
                       "\n[output truncated: kept the first 2 and the last 2 characters (2 + 2 "
                       "bytes) of 5 (5 bytes, 1 lines); 1 characters (1 bytes) omitted in the "
                       "middle]\n");
}

/* Bytes of a sequence still cut short by the end of a feed are neither kept
 * nor dropped until the next feed (or finish) decides what they are. */
static void test_dropped_bytes_while_pending(void **state)
{
    (void)state;
    shx_capture c;
    shx_capture_init(&c, 1, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD);
    assert_int_equal(shx_capture_feed(&c, "ab\xF0\x9F", 4), 0);
    assert_int_equal(c.total_bytes, 4);
    assert_int_equal(c.total_chars, 2);
    assert_int_equal(c.dropped_chars, 1);
    assert_int_equal(shx_capture_dropped_bytes(&c), 1);
    assert_int_equal(shx_capture_feed(&c, "\x98\x80", 2), 0); /* 😀 completed */
    assert_int_equal(c.total_chars, 3);
    assert_int_equal(c.dropped_chars, 2);
    assert_int_equal(shx_capture_dropped_bytes(&c), 5);
    assert_int_equal(shx_capture_feed(&c, "\xE2", 1), 0);
    assert_int_equal(c.total_chars, 3);
    assert_int_equal(shx_capture_dropped_bytes(&c), 5);
    assert_int_equal(shx_capture_finish(&c), 0); /* a lone E2: one invalid byte */
    assert_int_equal(c.total_chars, 4);
    assert_int_equal(c.dropped_chars, 3);
    assert_int_equal(shx_capture_dropped_bytes(&c), 6);
    shx_buf out = SHX_BUF_INIT;
    assert_int_equal(shx_capture_render(&c, &out, 0, NULL), 0);
    const char *want = "a\n[output truncated: kept the first 1 characters (1 bytes) of 4 (7 "
                       "bytes, 1 lines); 3 characters (6 bytes) omitted]\n";
    assert_bytes_equal("render()", out.data, out.len, want, strlen(want));
    shx_buf_free(&out);
    shx_capture_free(&c);
}

/*
 * Counts stay exact over a big stream: `mib` MiB of a repeated pattern of
 * mixed widths and invalid bytes, fed in 64 KiB chunks that cut its
 * sequences at every offset (64 KiB is 64 more than a multiple of the
 * pattern's 93 bytes, and 64 and 93 are coprime). The head and tail are
 * those of a short stream of the same pattern (same start, same end); the
 * totals and what was left out are the big stream's.
 */
static void check_counts_big(int unit, int keep, uint64_t limit, uint64_t mib)
{
    static const char mixed[] = "a"
                                "\xC3\xA9"
                                "\xE2\x82\xAC"
                                "\xF0\x9F\x98\x80"
                                "\xFF"
                                "\xE2\x82"
                                "b"
                                "\xC3\xA9"
                                "\xF0\x9F\x98\x80"
                                "\xC0\xAF"
                                "c";
    /* 70 ASCII bytes first, so the fast ASCII paths run too */
    enum { ascii_run = 70, pattern_len = ascii_run + sizeof mixed - 1 };
    const uint64_t pattern_chars = ascii_run + 13;
    const size_t chunk = 64 * 1024;
    const uint64_t reps = (mib << 20) / pattern_len;
    const uint64_t total_bytes = reps * pattern_len;

    /* the pattern repeated over a chunk and one pattern more, so a chunk
     * can start at any offset of the pattern */
    size_t span = chunk + pattern_len;
    unsigned char *rep = malloc(span);
    assert_non_null(rep);
    for (size_t i = 0; i < span; i++) {
        size_t at = i % pattern_len;
        rep[i] = at < ascii_run ? (unsigned char)('A' + at % 26)
                                : (unsigned char)mixed[at - ascii_run];
    }
    assert_int_equal(ref_count_chars(rep, pattern_len), pattern_chars);

    /* the short stream: 2000 patterns, far more than the limit */
    const size_t short_reps = 2000;
    unsigned char *small = malloc(short_reps * pattern_len);
    assert_non_null(small);
    for (size_t k = 0; k < short_reps; k++)
        memcpy(small + k * pattern_len, rep, pattern_len);
    model m;
    model_run(&m, small, short_reps * pattern_len, limit, unit, keep);
    assert_true(m.truncated);

    shx_capture c;
    shx_capture_init(&c, limit, unit, keep);
    for (uint64_t pos = 0; pos < total_bytes;) {
        size_t n = total_bytes - pos < chunk ? (size_t)(total_bytes - pos) : chunk;
        assert_int_equal(shx_capture_feed(&c, (const char *)rep + pos % pattern_len, n), 0);
        pos += n;
    }
    assert_int_equal(shx_capture_finish(&c), 0);

    /* the short stream's model, with the big stream's totals */
    model big = m;
    big.out = (shx_buf)SHX_BUF_INIT;
    big.total_chars = reps * pattern_chars;
    big.total_bytes = total_bytes;
    big.total_units = unit == SHEXEC_UNIT_BYTES ? total_bytes : big.total_chars;
    big.dropped_chars = big.total_chars - m.head_chars - m.tail_chars;
    big.dropped_bytes = total_bytes - m.head_bytes - m.tail_bytes;

    if (c.total_bytes != big.total_bytes || c.total_chars != big.total_chars ||
        c.total_units != big.total_units || c.head_chars != big.head_chars ||
        c.tail_chars != big.tail_chars || c.dropped_chars != big.dropped_chars ||
        shx_capture_dropped_bytes(&c) != big.dropped_bytes)
        fail_msg("unit %d keep %d: bytes %llu (want %llu), characters %llu (want %llu), kept "
                 "%llu + %llu (want %llu + %llu), dropped %llu characters (want %llu), %llu bytes "
                 "(want %llu)",
                 unit, keep, (unsigned long long)c.total_bytes,
                 (unsigned long long)big.total_bytes, (unsigned long long)c.total_chars,
                 (unsigned long long)big.total_chars, (unsigned long long)c.head_chars,
                 (unsigned long long)c.tail_chars, (unsigned long long)big.head_chars,
                 (unsigned long long)big.tail_chars, (unsigned long long)c.dropped_chars,
                 (unsigned long long)big.dropped_chars,
                 (unsigned long long)shx_capture_dropped_bytes(&c),
                 (unsigned long long)big.dropped_bytes);
    shx_buf out = SHX_BUF_INIT, want = SHX_BUF_INIT;
    assert_int_equal(shx_capture_render(&c, &out, 0, NULL), 0);
    model_render(&big, &want, 0, NULL);
    assert_bytes_equal("render()", out.data, out.len, want.data, want.len);
    shx_buf_free(&out);
    shx_buf_free(&want);
    shx_capture_free(&c);
    shx_buf_free(&m.out);
    free(small);
    free(rep);
}

/* The big stream's MiB: 200, or 16 where every byte costs many times more
 * (a sanitizer, valgrind: ThreadSanitizer took 7 minutes over 800 MiB).
 * 16 MiB is still thousands of times the limits, every sequence cut at
 * every offset many times over. */
static uint64_t big_mib(void)
{
    return TU_SANITIZED || tu_under_valgrind() ? 16 : 200;
}

static void test_counts_exact_big_stream(void **state)
{
    (void)state;
    uint64_t mib = big_mib();
    check_counts_big(SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, 30000, mib);
    check_counts_big(SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD, 51200, mib);
    /* the tail copies only a piece's last units: as big a stream */
    check_counts_big(SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL, 30001, mib);
    check_counts_big(SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD_TAIL, 51201, mib);
}

/* ------------------------------------------------------------------------
 * Chunking invariance against the reference model
 * ------------------------------------------------------------------------ */

static size_t random_text(unsigned char *buf, size_t max)
{
    static const char *const frags[] = {
        "a", "b", " ", "\n", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF",
        "\xFF", "\x80", "\xC0\xAF", "\xED\xA0\x80", "\xE2\x82", "\xF0\x9F\x98", "\xE0\x80",
        "\xF5", "\xC3", "\xBF\xBF", "hello world ",
    };
    size_t n = 0;
    size_t target = rng_below(max);
    while (n < target) {
        const char *f = frags[rng_below(sizeof frags / sizeof frags[0])];
        size_t fl = strlen(f);
        if (rng_below(3) == 0) { /* raw random byte */
            buf[n++] = (unsigned char)rng_next();
            continue;
        }
        if (n + fl > max)
            break;
        memcpy(buf + n, f, fl);
        n += fl;
    }
    return n;
}

static void test_chunking_invariance(void **state)
{
    (void)state;
    static const uint64_t limits[] = {0, 1, 2, 3, 4, 5, 7, 8, 13, 31, 64, 100, 257, 1000};
    unsigned char *buf = malloc(600);
    assert_non_null(buf);
    rng_seed(20240601);
    for (int iter = 0; iter < 300; iter++) {
        size_t len = random_text(buf, 600);
        for (int unit = SHEXEC_UNIT_CHARS; unit <= SHEXEC_UNIT_BYTES; unit++) {
            for (int keep = SHEXEC_KEEP_HEAD; keep <= SHEXEC_KEEP_HEAD_TAIL; keep++) {
                for (size_t li = 0; li < sizeof limits / sizeof limits[0]; li++) {
                    uint64_t limit = limits[li];
                    model m;
                    model_run(&m, buf, len, limit, unit, keep);
                    result all, one, rnd, rnd_big;
                    capture_run(&all, buf, len, limit, unit, keep, 0, 0);
                    capture_run(&one, buf, len, limit, unit, keep, 1, 0);
                    capture_run(&rnd, buf, len, limit, unit, keep, -1, 6);
                    capture_run(&rnd_big, buf, len, limit, unit, keep, -1, 64);
                    const result *rs[] = {&all, &one, &rnd, &rnd_big};
                    static const char *const names[] = {"all at once", "1 byte at a time",
                                                        "random 1..6", "random 1..64"};
                    for (int k = 0; k < 4; k++) {
                        const result *r = rs[k];
                        const char *differs = result_mismatch(r, &m);
                        if (differs)
                            fail_msg("iter %d, unit %d, keep %d, limit %llu, %s: %s differs from "
                                     "the model (render %zu bytes, model %zu; characters %llu + "
                                     "%llu kept of %llu, model %llu + %llu of %llu)",
                                     iter, unit, keep, (unsigned long long)limit, names[k], differs,
                                     r->out.len, m.out.len, (unsigned long long)r->head_chars,
                                     (unsigned long long)r->tail_chars,
                                     (unsigned long long)r->total_chars,
                                     (unsigned long long)m.head_chars,
                                     (unsigned long long)m.tail_chars,
                                     (unsigned long long)m.total_chars);
                    }
                    result_free(&all);
                    result_free(&one);
                    result_free(&rnd);
                    result_free(&rnd_big);
                    shx_buf_free(&m.out);
                }
            }
        }
    }
    free(buf);
}

/* Large inputs crossing the fast paths (ASCII memcpy, 8-byte counting). */
static void test_chunking_invariance_large(void **state)
{
    (void)state;
    size_t len = 200000;
    unsigned char *buf = malloc(len);
    assert_non_null(buf);
    rng_seed(77);
    /* long ASCII runs interrupted by multibyte and invalid bytes */
    for (size_t i = 0; i < len; i++) {
        uint64_t r = rng_below(1000);
        if (r < 990)
            buf[i] = (unsigned char)('A' + r % 26);
        else
            buf[i] = (unsigned char)(0x80 + rng_below(128));
    }
    for (size_t i = 0; i + 4 <= len; i += 997)
        memcpy(buf + i, "\xF0\x9F\x98\x80", 4);
    static const uint64_t limits[] = {0, 1, 1000, 30000, 99999, 199999, 200000, 400000};
    for (int unit = SHEXEC_UNIT_CHARS; unit <= SHEXEC_UNIT_BYTES; unit++) {
        for (int keep = SHEXEC_KEEP_HEAD; keep <= SHEXEC_KEEP_HEAD_TAIL; keep++) {
            for (size_t li = 0; li < sizeof limits / sizeof limits[0]; li++) {
                model m;
                model_run(&m, buf, len, limits[li], unit, keep);
                result all, one, rnd;
                capture_run(&all, buf, len, limits[li], unit, keep, 0, 0);
                capture_run(&one, buf, len, limits[li], unit, keep, 1, 0);
                capture_run(&rnd, buf, len, limits[li], unit, keep, -1, 20000);
                const result *rs[] = {&all, &one, &rnd};
                for (int k = 0; k < 3; k++) {
                    const char *differs = result_mismatch(rs[k], &m);
                    if (differs)
                        fail_msg("unit %d keep %d limit %llu chunking %d: %s differs from the "
                                 "model",
                                 unit, keep, (unsigned long long)limits[li], k, differs);
                }
                result_free(&all);
                result_free(&one);
                result_free(&rnd);
                shx_buf_free(&m.out);
            }
        }
    }
    free(buf);
}

/* ------------------------------------------------------------------------
 * Memory bound
 * ------------------------------------------------------------------------ */

static void feed_100mb(int unit, int keep, uint64_t total_mb)
{
    const uint64_t limit = 30000;
    const size_t chunk = 64 * 1024;
    char *buf = malloc(chunk);
    assert_non_null(buf);
    /* whole characters only, so each chunk has the same count */
    static const char *const pieces[] = {"line of text ", "\xC3\xA9", "\xE2\x82\xAC",
                                         "\xF0\x9F\x98\x80", "\n"};
    size_t n = 0;
    uint64_t chars_per_chunk = 0;
    for (int i = 0;; i++) {
        const char *p = pieces[i % 5];
        size_t pl = strlen(p);
        if (n + pl > chunk)
            break;
        memcpy(buf + n, p, pl);
        n += pl;
        chars_per_chunk += ref_count_chars((const unsigned char *)p, pl);
    }
    while (n < chunk) {
        buf[n++] = '.';
        chars_per_chunk++;
    }
    shx_capture c;
    shx_capture_init(&c, limit, unit, keep);
    uint64_t chunks = total_mb * 1024 * 1024 / chunk;
    const size_t slack = 4096;
    size_t max_head_cap = 0, max_ring_cap = 0;
    for (uint64_t k = 0; k < chunks; k++) {
        assert_int_equal(shx_capture_feed(&c, buf, chunk), 0);
        if (c.head.cap > max_head_cap)
            max_head_cap = c.head.cap;
        if (c.ring_cap > max_ring_cap)
            max_ring_cap = c.ring_cap;
        if (c.ring_len > c.ring_cap)
            fail_msg("ring_len %zu > ring_cap %zu", c.ring_len, c.ring_cap);
    }
    assert_int_equal(shx_capture_finish(&c), 0);
    if (max_head_cap > 4 * limit + slack)
        fail_msg("head.cap reached %zu for limit %llu", max_head_cap, (unsigned long long)limit);
    if (max_ring_cap > 4 * (limit / 2) + slack)
        fail_msg("ring_cap reached %zu for limit %llu", max_ring_cap, (unsigned long long)limit);
    if (keep == SHEXEC_KEEP_HEAD)
        assert_int_equal(c.ring_cap, 0);
    assert_int_equal(c.total_bytes, chunks * chunk);
    assert_int_equal(c.total_units,
                     unit == SHEXEC_UNIT_BYTES ? chunks * chunk : chunks * chars_per_chunk);
    assert_int_equal(c.total_chars, chunks * chars_per_chunk);
    assert_int_equal(c.head_chars + c.tail_chars + c.dropped_chars, c.total_chars);
    assert_int_equal(shx_capture_dropped_bytes(&c), c.total_bytes - c.head.len - c.ring_len);
    assert_true(shx_capture_truncated(&c));
    shx_buf out = SHX_BUF_INIT;
    assert_int_equal(shx_capture_render(&c, &out, 0, NULL), 0);
    /* the kept text, the notice and (head and tail) the marker between them */
    assert_true(out.len <= 4 * limit + 512);
    /* the kept text is the start of the stream */
    assert_memory_equal(out.data, buf, 100);
    shx_buf_free(&out);
    shx_capture_free(&c);
    free(buf);
}

/* The streams' MiB: as given, or a tenth where every byte costs many times
 * more (big_mib()): still thousands of times the limit. */
static uint64_t bound_mib(uint64_t mib)
{
    return big_mib() < 200 && mib >= 10 ? mib / 10 : mib;
}

static void test_memory_bound_head_chars(void **state)
{
    (void)state;
    feed_100mb(SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, bound_mib(100));
}

static void test_memory_bound_head_bytes(void **state)
{
    (void)state;
    feed_100mb(SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD, bound_mib(100));
}

static void test_memory_bound_head_tail(void **state)
{
    (void)state;
    /* every character after the head goes through the ring: smaller total */
    feed_100mb(SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL, bound_mib(16));
    feed_100mb(SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD_TAIL, bound_mib(16));
}

/* ------------------------------------------------------------------------
 * Lines
 * ------------------------------------------------------------------------ */

/* Lines of a big stream, however it is cut: runs without a newline, a
 * newline every byte, every few bytes, every few thousand (the counting
 * steps 4 KiB from each newline it finds). */
static void test_lines_any_chunking(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t len;
        uint64_t lines;
    } small[] = {{"", 0, 0}, {"\n", 1, 1}, {"a", 1, 1}, {"a\n", 2, 1}, {"a\nb", 3, 2},
                 {"\n\n\n", 3, 3}, {"a\n\nb\n", 5, 3}};
    for (size_t k = 0; k < sizeof small / sizeof small[0]; k++)
        for (int chunk = 0; chunk <= 1; chunk++) {
            result r;
            capture_run(&r, small[k].in, small[k].len, 2, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD,
                        chunk, 0);
            assert_int_equal(r.total_lines, small[k].lines);
            result_free(&r);
        }
    size_t len = 3u << 20;
    unsigned char *in = malloc(len);
    assert_non_null(in);
    rng_seed(7);
    for (size_t i = 0; i < len;) {
        size_t run = 1 + rng_below(20000), gap = 1 + rng_below(6000);
        int kind = (int)rng_below(4);
        for (size_t j = 0; j < run && i < len; j++, i++)
            in[i] = kind == 0 ? 'x' : kind == 1 ? '\n' : kind == 2 ? (j % 3 ? 'y' : '\n')
                                                                  : (j % gap ? 'z' : '\n');
    }
    uint64_t want = ref_count_lines(in, len);
    assert_true(want > 100000);
    static const int chunks[] = {0, 1, 63, 4095, 4097, 65536, -1};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        result r;
        capture_run(&r, in, len, 1000, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD_TAIL, chunks[k], 9000);
        assert_int_equal(r.total_lines, want);
        char num[64];
        snprintf(num, sizeof num, "bytes, %llu lines); ", (unsigned long long)want);
        assert_non_null(strstr(r.out.data, num));
        result_free(&r);
    }
    in[len - 1] = '\n'; /* a last newline ends the last line: no line more */
    result r;
    capture_run(&r, in, len, 1000, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, 65536, 0);
    assert_int_equal(r.total_lines, ref_count_lines(in, len));
    result_free(&r);
    free(in);
}

/* ------------------------------------------------------------------------
 * The notice within the limit (SHEXEC_KEEP_WITHIN_LIMIT)
 * ------------------------------------------------------------------------ */

/* Numbered lines of characters of every width: the kept head and tail can
 * only be the input's start and end. */
static char *mixed_text(size_t lines, size_t *len)
{
    shx_buf b = SHX_BUF_INIT;
    for (size_t i = 0; i < lines; i++)
        assert_int_equal(shx_buf_printf(&b, "%zu: a \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\n", i),
                         0);
    *len = b.len;
    return shx_buf_steal(&b, NULL);
}

static uint64_t units_in(int unit, const char *p, size_t n)
{
    return unit == SHEXEC_UNIT_BYTES ? n : ref_count_chars((const unsigned char *)p, n);
}

/*
 * Capture `in` with the notice within `limit`, render, and check: the whole
 * text, notice and marker included, is at most `limit` units and at
 * least limit - 8 (the room is used), valid UTF-8, the kept text is the
 * input's start (and end), and the notice counts exactly what is shown.
 */
static void check_within(const char *in, size_t len, uint64_t limit, int unit, int keep,
                         int first, const char *full, int chunk)
{
    shx_capture c;
    shx_capture_init(&c, limit, unit, keep | SHEXEC_KEEP_WITHIN_LIMIT);
    for (size_t i = 0; i < len;) {
        size_t n = chunk == 0 ? len - i : 1 + rng_below((size_t)chunk);
        if (n > len - i)
            n = len - i;
        assert_int_equal(shx_capture_feed(&c, in + i, n), 0);
        i += n;
    }
    assert_int_equal(shx_capture_finish(&c), 0);
    shx_buf out = SHX_BUF_INIT;
    assert_int_equal(shx_capture_render(&c, &out, first, full), 0);
    assert_non_null(out.data);
    uint64_t units = units_in(unit, out.data, out.len);
    if (units > limit || units + 8 < limit)
        fail_msg("limit %llu, unit %d, keep %d, first %d, full %d: %llu units: %s",
                 (unsigned long long)limit, unit, keep, first, full != NULL,
                 (unsigned long long)units, out.data);
    assert_true(is_valid_utf8((const unsigned char *)out.data, out.len));
    /* the notice and the text around it */
    const char *notice = strstr(out.data, "[output truncated: ");
    if (!notice)
        fail_msg("limit %llu, unit %d, keep %d, first %d, full %d: no notice: %s",
                 (unsigned long long)limit, unit, keep, first, full != NULL, out.data);
    const char *end = strchr(notice, '\n');
    assert_non_null(end);
    const char *text = first ? end + 1 : out.data;
    const char *text_end = first ? out.data + out.len : notice - 1;
    assert_true(first ? notice == out.data
                      : out.data[out.len - 1] == '\n' && end == out.data + out.len - 1);
    unsigned long long k1, k2 = 0, b1, b2 = 0, n, nb, lines, d, db;
    const char *head_end = text_end, *tail = text_end;
    if (keep == SHEXEC_KEEP_HEAD_TAIL) {
        assert_int_equal(sscanf(notice, "[output truncated: kept the first %llu and the last %llu "
                                "characters (%llu + %llu bytes) of %llu (%llu bytes, %llu lines); "
                                "%llu characters (%llu bytes) omitted in the middle",
                                &k1, &k2, &b1, &b2, &n, &nb, &lines, &d, &db),
                         9);
        char marker[128];
        snprintf(marker, sizeof marker, "\n[... %llu characters (%llu bytes) omitted ...]\n", d,
                 db);
        head_end = strstr(text, marker);
        assert_non_null(head_end);
        tail = head_end + strlen(marker);
    } else {
        assert_int_equal(sscanf(notice, "[output truncated: kept the first %llu characters (%llu "
                                "bytes) of %llu (%llu bytes, %llu lines); %llu characters (%llu "
                                "bytes) omitted",
                                &k1, &b1, &n, &nb, &lines, &d, &db),
                         7);
    }
    size_t head_len = (size_t)(head_end - text), tail_len = (size_t)(text_end - tail);
    assert_int_equal(head_len, b1);
    assert_int_equal(tail_len, b2);
    assert_memory_equal(text, in, head_len);
    assert_memory_equal(tail, in + len - tail_len, tail_len);
    assert_int_equal(ref_count_chars((const unsigned char *)text, head_len), k1);
    assert_int_equal(ref_count_chars((const unsigned char *)tail, tail_len), k2);
    uint64_t chars = ref_count_chars((const unsigned char *)in, len);
    assert_int_equal(n, chars);
    assert_int_equal(nb, len);
    assert_int_equal(lines, ref_count_lines(in, len));
    assert_int_equal(d, chars - k1 - k2);
    assert_int_equal(db, len - b1 - b2);
    if (full)
        assert_non_null(strstr(notice, full));
    shx_buf_free(&out);
    shx_capture_free(&c);
}

static void test_within_limit_holds_notice(void **state)
{
    (void)state;
    size_t len;
    char *in = mixed_text(3000, &len);
    static const uint64_t limits[] = {600, 999, 1000, 1001, 330, 30000};
    rng_seed(11);
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++)
        for (int unit = SHEXEC_UNIT_CHARS; unit <= SHEXEC_UNIT_BYTES; unit++)
            for (int keep = SHEXEC_KEEP_HEAD; keep <= SHEXEC_KEEP_HEAD_TAIL; keep++)
                for (int first = 0; first <= 1; first++) {
                    check_within(in, len, limits[l], unit, keep, first, NULL, 0);
                    check_within(in, len, limits[l], unit, keep, first, FULL_CLAUSE, 4099);
                    /* a path of multi-byte characters: its characters count */
                    check_within(in, len, limits[l], unit, keep, first,
                                 "full output (9 bytes) in /tmp/\xC3\xA9\xE2\x82\xAC.txt", 7);
                }
    /* every limit over a range: each cut of a character, each count of digits */
    for (uint64_t limit = 230; limit <= 480; limit++)
        for (int unit = SHEXEC_UNIT_CHARS; unit <= SHEXEC_UNIT_BYTES; unit++)
            for (int keep = SHEXEC_KEEP_HEAD; keep <= SHEXEC_KEEP_HEAD_TAIL; keep++)
                check_within(in, len, limit, unit, keep, (int)(limit & 1), NULL, 0);
    free(in);
}

/* The same limit without the flag: the notice on top, as before. */
static void test_within_limit_off_by_default(void **state)
{
    (void)state;
    size_t len;
    char *in = mixed_text(3000, &len);
    result r;
    capture_run(&r, in, len, 600, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, 0, 0);
    assert_true(ref_count_chars((const unsigned char *)r.out.data, r.out.len) > 700);
    assert_memory_equal(r.out.data, in, 600 + 0 * len);
    result_free(&r);
    free(in);
}

static void render_within(const char *in, size_t len, uint64_t limit, int unit, int keep,
                          int first, shx_buf *out)
{
    shx_capture c;
    shx_capture_init(&c, limit, unit, keep | SHEXEC_KEEP_WITHIN_LIMIT);
    assert_int_equal(shx_capture_feed(&c, in, len), 0);
    assert_int_equal(shx_capture_finish(&c), 0);
    assert_int_equal(shx_capture_render(&c, out, first, NULL), 0);
    shx_capture_free(&c);
}


/* A sequence cut short at the end of a feed and taken back (a read of
 * what is new hands it to the next capture) is no part of the lines: the
 * stream ends where it was before it, and the next capture's line holds
 * the whole character. A sequence the end leaves cut short is a last line. */
static void test_lines_of_a_sequence_taken_back(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        uint64_t before, lines;
    } cases[] = {{"abc\n\xE2\x82", 2, 1}, {"abc\xE2", 1, 1}, {"\xE2\x82", 1, 0},
                 {"a\n\n\xF0", 3, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int split = 0; split <= 1; split++) {
            shx_capture c;
            shx_capture_init(&c, 100, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD);
            size_t len = strlen(cases[k].in), half = split ? len - 1 : len;
            assert_int_equal(shx_capture_feed(&c, cases[k].in, half), 0);
            assert_int_equal(shx_capture_feed(&c, cases[k].in + half, len - half), 0);
            /* while it is cut short, it is the last line */
            assert_int_equal(shx_capture_lines(&c), cases[k].before);
            unsigned char seq[4];
            size_t n = shx_capture_take_pending(&c, seq);
            assert_true(n > 0);
            assert_int_equal(shx_capture_lines(&c), cases[k].lines);
            shx_capture_finish(&c);
            assert_int_equal(shx_capture_lines(&c), cases[k].lines);
            shx_capture_free(&c);
        }
    /* the next capture: the character whole, on the line it ends */
    shx_capture c;
    shx_capture_init(&c, 100, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD);
    assert_int_equal(shx_capture_feed(&c, "\xE2", 1), 0);
    assert_int_equal(shx_capture_lines(&c), 1);
    assert_int_equal(shx_capture_feed(&c, "\x82\xAC\n", 3), 0);
    assert_int_equal(shx_capture_lines(&c), 1);
    shx_capture_finish(&c);
    assert_int_equal(shx_capture_lines(&c), 1);
    assert_int_equal(c.total_chars, 2);
    shx_capture_free(&c);
    /* cut short at the end: its bytes are the last line, after a newline too */
    shx_capture_init(&c, 100, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD);
    assert_int_equal(shx_capture_feed(&c, "a\n\xE2", 3), 0);
    assert_int_equal(shx_capture_feed(&c, "\xE2", 1), 0);
    shx_capture_finish(&c);
    assert_int_equal(shx_capture_lines(&c), 2);
    shx_capture_free(&c);
}
/* Limits too small for the notice: the short one, then text alone; output
 * within the limit is never cut. */
static void test_within_limit_small(void **state)
{
    (void)state;
    const char *in = "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"
                     "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij";
    shx_buf out = SHX_BUF_INIT;
    render_within(in, 100, 30, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, 0, &out);
    assert_bytes_equal("short, last", out.data, out.len, "abcdefghij\n[output truncated]\n", 30);
    render_within(in, 100, 30, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD, 1, &out);
    assert_bytes_equal("short, first", out.data, out.len, "[output truncated]\nabcdefghija", 30);
    render_within(in, 100, 40, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL, 0, &out);
    const char *ht = "abcdefg\n[...]\nefghij\n[output truncated]\n";
    assert_bytes_equal("short, head and tail", out.data, out.len, ht, strlen(ht));
    render_within(in, 100, 20, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, 0, &out);
    assert_bytes_equal("short, no text", out.data, out.len, "\n[output truncated]\n", 20);
    render_within(in, 100, 15, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, 0, &out);
    assert_bytes_equal("text alone", out.data, out.len, "abcdefghijabcde", 15);
    render_within(in, 100, 100, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, 0, &out);
    assert_bytes_equal("within the limit", out.data, out.len, in, 100);
    render_within(in, 100, 100, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD_TAIL, 1, &out);
    assert_bytes_equal("within the limit", out.data, out.len, in, 100);
    /* room for the whole notice and a little text */
    char in3[301];
    for (int i = 0; i < 3; i++)
        memcpy(in3 + 100 * i, in, 100);
    render_within(in3, 300, 140, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD, 0, &out);
    assert_true(out.len <= 140 && out.len >= 132);
    assert_true(out.len > 0 && out.data[0] == 'a');
    assert_non_null(strstr(out.data, "\n[output truncated: kept the first "));
    shx_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head_chars_under_limit_kept_whole),
        cmocka_unit_test(test_head_chars_exactly_limit_not_truncated),
        cmocka_unit_test(test_head_chars_50000_exact_notice),
        cmocka_unit_test(test_head_chars_multibyte_counted_and_never_split),
        cmocka_unit_test(test_chars_invalid_bytes_one_per_byte),
        cmocka_unit_test(test_head_bytes_ascii),
        cmocka_unit_test(test_head_bytes_never_splits_sequence),
        cmocka_unit_test(test_head_tail_chars_exact),
        cmocka_unit_test(test_head_tail_multibyte),
        cmocka_unit_test(test_head_tail_under_limit_identical),
        cmocka_unit_test(test_head_tail_bytes_under_limit_multibyte_at_cut),
        cmocka_unit_test(test_head_tail_bytes_unused_head_room_to_tail),
        cmocka_unit_test(test_limit_zero_keeps_nothing),
        cmocka_unit_test(test_totals_and_render_replaces),
        cmocka_unit_test(test_notice_first_head),
        cmocka_unit_test(test_notice_first_head_tail),
        cmocka_unit_test(test_notice_full_clause),
        cmocka_unit_test(test_notice_counts_mixed_width),
        cmocka_unit_test(test_dropped_bytes_while_pending),
        cmocka_unit_test(test_counts_exact_big_stream),
        cmocka_unit_test(test_chunking_invariance),
        cmocka_unit_test(test_chunking_invariance_large),
        cmocka_unit_test(test_memory_bound_head_chars),
        cmocka_unit_test(test_memory_bound_head_bytes),
        cmocka_unit_test(test_memory_bound_head_tail),
        cmocka_unit_test(test_lines_any_chunking),
        cmocka_unit_test(test_lines_of_a_sequence_taken_back),
        cmocka_unit_test(test_within_limit_holds_notice),
        cmocka_unit_test(test_within_limit_off_by_default),
        cmocka_unit_test(test_within_limit_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
