/*
 * fuzz_redact.c - libFuzzer target for hiding secrets in a stream
 * (lib/acreplace.c, lib/keyscan.c).
 *
 * Input: byte 0 the number of patterns (1-8), then for each a length byte
 * (1-8, or 4-11 when byte 0 has bit 6: the automaton then skips what
 * starts no pattern) and its bytes folded onto a four-letter alphabet (so that patterns
 * overlap and prefix each other), then four bytes seeding the chunking; the
 * rest is the stream, folded the same way unless byte 0's high bit is set.
 * The replacement, fed in chunks, must equal a model that at each position
 * replaces the longest pattern starting there; the key shapes, fed in
 * chunks, must give what they give fed whole.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acreplace.h"
#include "fuzzutil.h"
#include "keyscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct pat {
    unsigned char text[12];
    size_t len;
    char repl[8];
} pat;

static void model(const pat *p, size_t np, const unsigned char *s, size_t n, shx_buf *out)
{
    for (size_t i = 0; i < n;) {
        size_t best = 0, which = 0;
        for (size_t k = 0; k < np; k++) {
            if (p[k].len <= best || p[k].len > n - i || memcmp(s + i, p[k].text, p[k].len) != 0)
                continue;
            int first = 1; /* a pattern added twice keeps its first replacement */
            for (size_t j = 0; j < k && first; j++)
                first = !(p[j].len == p[k].len && memcmp(p[j].text, p[k].text, p[k].len) == 0);
            if (first) {
                best = p[k].len;
                which = k;
            }
        }
        if (best) {
            FZ_CHECK(shx_buf_puts(out, p[which].repl) == 0, "out of memory");
            i += best;
        } else {
            FZ_CHECK(shx_buf_append(out, s + i, 1) == 0, "out of memory");
            i++;
        }
    }
}

static void keys_chunked(const unsigned char *s, size_t n, fz_rng *rng, shx_buf *out, int whole)
{
    shx_keyscan k;
    shx_keyscan_init(&k, SHX_KEYSCAN_TOKENS | SHX_KEYSCAN_PEM);
    for (size_t i = 0; i < n;) {
        size_t c = whole ? n : fz_chunk(rng, n - i);
        FZ_CHECK(shx_keyscan_feed(&k, s + i, c, out) == 0, "keyscan feed");
        i += c;
    }
    FZ_CHECK(shx_keyscan_finish(&k, out) == 0, "keyscan finish");
    shx_keyscan_free(&k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    unsigned head = fz_u8(&in);
    size_t np = 1 + (head & 7);
    int raw = head & 0x80;
    pat p[8];
    for (size_t k = 0; k < np; k++) {
        p[k].len = (head & 0x40 ? 4 : 1) + (fz_u8(&in) & 7);
        for (size_t i = 0; i < p[k].len; i++)
            p[k].text[i] = (unsigned char)('a' + (fz_u8(&in) & 3));
        snprintf(p[k].repl, sizeof p[k].repl, "<%zu>", k);
    }
    fz_rng rng;
    fz_rng_seed(&rng, fz_u32(&in));
    unsigned char *s = malloc(in.n ? in.n : 1);
    FZ_CHECK(s, "out of memory");
    size_t n = in.n;
    for (size_t i = 0; i < n; i++)
        s[i] = raw ? in.p[i] : (unsigned char)('a' + (in.p[i] & 3));

    shx_acr *a = shx_acr_new();
    FZ_CHECK(a, "out of memory");
    for (size_t k = 0; k < np; k++)
        FZ_CHECK(shx_acr_add(a, p[k].text, p[k].len, p[k].repl, strlen(p[k].repl)) == 0, "add");
    FZ_CHECK(shx_acr_build(a) == 0, "build");
    shx_buf want = SHX_BUF_INIT, got = SHX_BUF_INIT;
    model(p, np, s, n, &want);
    shx_acr_stream st;
    shx_acr_stream_init(&st, a);
    for (size_t i = 0; i < n;) {
        size_t c = fz_chunk(&rng, n - i);
        FZ_CHECK(shx_acr_feed(&st, s + i, c, &got) == 0, "feed");
        /* held back: less than the longest pattern */
        FZ_CHECK(st.pend.len <= 11 + c, "held %zu bytes", st.pend.len);
        i += c;
    }
    FZ_CHECK(shx_acr_finish(&st, &got) == 0, "finish");
    FZ_CHECK(got.len == want.len && memcmp(got.data ? got.data : "", want.data ? want.data : "",
                                           got.len) == 0,
             "replaced %zu bytes, the model %zu", got.len, want.len);
    shx_acr_stream_free(&st);
    shx_acr_free(a);

    shx_buf whole = SHX_BUF_INIT, chunked = SHX_BUF_INIT;
    keys_chunked(in.p, n, &rng, &whole, 1);
    keys_chunked(in.p, n, &rng, &chunked, 0);
    FZ_CHECK(whole.len == chunked.len &&
                 memcmp(whole.data ? whole.data : "", chunked.data ? chunked.data : "",
                        whole.len) == 0,
             "key shapes depend on the chunking");
    shx_buf_free(&whole);
    shx_buf_free(&chunked);
    shx_buf_free(&want);
    shx_buf_free(&got);
    free(s);
    return 0;
}
