/*
 * fuzz_ansi.c - libFuzzer target for the streaming ANSI stripper
 * (lib/ansi.c).
 *
 * Input: byte 0 holds flags, bytes 1-4 seed the chunking, the rest is what
 * a program wrote to its terminal. What must hold (ansi.h):
 *   - feeding it in chunks gives exactly the one-shot output;
 *   - the output has no ESC and no control byte but \n and \t;
 *   - it grows past the input only by the spaces cursor moves may pad a
 *     line with: at most SHX_ANSI_MOVE_MAX per emitted line;
 *   - text with no controls at all passes through byte for byte, invalid
 *     UTF-8 and overlong lines included (checked on the input itself when
 *     it is such text, else on the input with its controls removed);
 *   - valid UTF-8 in gives valid UTF-8 out;
 *   - the current line never holds more than SHX_ANSI_LINE_MAX columns.
 * With flag 1 another pass calls flush() between chunks, which may change
 * the text (so it is not compared) but not the kind of bytes it is made of.
 *
 * With flags 2, 4 and 8 all set the stream is amplified: its first
 * (flags >> 4) % 8 bytes, then the rest repeated to a little past
 * SHX_ANSI_STR_MAX, or with flag 0x80 past SHX_ANSI_LINE_MAX. A few input
 * bytes then reach the bounds that take kilobytes without making every
 * input that long and every run that slow; amplified streams skip the
 * controls-removed and flush passes for the same reason.
 */
#include <stdint.h>
#include <string.h>

#include "stream/ansi.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is_control(unsigned char c)
{
    return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
}

static void strip(const unsigned char *s, size_t n, uint32_t seed, int whole, int flush,
                  shx_buf *out)
{
    shx_ansi a;
    shx_ansi_init(&a);
    fz_rng rng;
    fz_rng_seed(&rng, seed);
    size_t i = 0;
    do {
        size_t k = whole ? n : fz_chunk(&rng, n - i);
        FZ_CHECK(shx_ansi_feed(&a, (const char *)s + i, k, out) == 0, "feed");
        FZ_CHECK(a.cap <= SHX_ANSI_LINE_MAX && a.len <= a.cap, "line of %zu cells in %zu",
                 a.len, a.cap);
        FZ_CHECK(a.u8n < 4, "%u bytes of UTF-8 pending", a.u8n);
        if (flush && (fz_rng_next(&rng) & 3) == 0)
            FZ_CHECK(shx_ansi_flush(&a, out) == 0, "flush");
        i += k;
    } while (i < n);
    FZ_CHECK(shx_ansi_finish(&a, out) == 0, "finish");
    FZ_CHECK(a.cells == NULL && a.len == 0 && a.cur == 0 && a.u8n == 0 && a.state == 0,
             "finish did not re-initialise");
    shx_ansi_free(&a);
}

static void check_output(const unsigned char *s, size_t n, const shx_buf *out, int flushed)
{
    size_t lines = 1 + n / (SHX_ANSI_LINE_MAX - SHX_ANSI_MOVE_MAX);
    for (size_t i = 0; i < out->len; i++) {
        unsigned char c = (unsigned char)out->data[i];
        FZ_CHECK(!is_control(c), "control byte 0x%02x at %zu of the output", c, i);
        lines += c == '\n';
    }
    /* flush() ends a line early; the chunked run flushes at most once per chunk */
    if (!flushed)
        FZ_CHECK(out->len <= n + SHX_ANSI_MOVE_MAX * lines,
                 "%zu bytes out of %zu in, over %zu lines", out->len, n, lines);
    if (fz_utf8_valid(s, n))
        FZ_CHECK(fz_utf8_valid(out->data, out->len), "valid UTF-8 in, invalid UTF-8 out");
}

/* The stream to strip: the input, or its amplification (see above). */
static unsigned char *make_stream(const fz_in *in, unsigned flags, size_t *n, int *amplified)
{
    size_t big = flags & 0x80 ? SHX_ANSI_LINE_MAX + 512 : SHX_ANSI_STR_MAX + 512;
    int amplify = *amplified = (flags & 0x0e) == 0x0e && in->n > 0 && in->n < big;
    size_t len = amplify ? big : in->n;
    unsigned char *s = malloc(len + 1);
    FZ_CHECK(s, "out of memory");
    if (!amplify) {
        if (in->n)
            memcpy(s, in->p, in->n);
    } else {
        size_t lead = (flags >> 4) % 8;
        if (lead > in->n)
            lead = in->n;
        memcpy(s, in->p, lead);
        size_t unit = in->n - lead, at = lead;
        if (unit == 0) { /* nothing after the lead: repeat the lead */
            unit = lead;
            lead = 0;
        }
        while (at < len) {
            size_t k = len - at < unit ? len - at : unit;
            memcpy(s + at, in->p + lead, k);
            at += k;
        }
    }
    *n = len;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    unsigned flags = fz_u8(&in);
    uint32_t seed = fz_u32(&in);
    size_t n;
    int amplified;
    unsigned char *s = make_stream(&in, flags, &n, &amplified);

    shx_buf whole = SHX_BUF_INIT, chunked = SHX_BUF_INIT;
    strip(s, n, seed, 1, 0, &whole);
    strip(s, n, seed, 0, 0, &chunked);
    FZ_CHECK(fz_mem_eq(whole.data, whole.len, chunked.data, chunked.len),
             "chunked output (%zu bytes) differs from one-shot (%zu bytes)", chunked.len,
             whole.len);
    check_output(s, n, &whole, 0);

    /* the same text without its controls must come out untouched */
    size_t cn = 0;
    for (size_t i = 0; i < n; i++)
        cn += !is_control(s[i]);
    if (cn == n)
        FZ_CHECK(fz_mem_eq(whole.data, whole.len, s, n), "plain text did not pass through");
    if (!amplified && cn < n) {
        unsigned char *clean = malloc(n + 1);
        FZ_CHECK(clean, "out of memory");
        cn = 0;
        for (size_t i = 0; i < n; i++)
            if (!is_control(s[i]))
                clean[cn++] = s[i];
        shx_buf plain = SHX_BUF_INIT;
        strip(clean, cn, seed, 0, flags & 1, &plain);
        FZ_CHECK(fz_mem_eq(plain.data, plain.len, clean, cn),
                 "plain text did not pass through (%zu bytes in, %zu out)", cn, plain.len);
        shx_buf_free(&plain);
        free(clean);
    }

    if ((flags & 1) && !amplified) {
        shx_buf flushed = SHX_BUF_INIT;
        strip(s, n, seed, 0, 1, &flushed);
        check_output(s, n, &flushed, 1);
        shx_buf_free(&flushed);
    }

    free(s);
    shx_buf_free(&whole);
    shx_buf_free(&chunked);
    return 0;
}
