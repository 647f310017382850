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

#include "output/acreplace.h"
#include "fuzzutil.h"
#include "output/keyscan.h"
#include "output/pemscan.h"

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

/* Where a block's BEGIN boundary starting at s[i] (with the gap after it)
 * ends, its label in *label, *label_len; 0 when none starts there. As
 * pemscan.h says: "-----BEGIN ", a printable label of at most
 * SHX_PEM_LABEL_MAX bytes ending in "PRIVATE KEY", closed by the first five
 * dashes in a row; then at most SHX_PEM_GAP_MAX bytes of white space,
 * backslashes and an n, r or t after a backslash; then a base64 digit. */
static size_t pem_begins(const unsigned char *s, size_t n, size_t i, size_t *label,
                         size_t *label_len)
{
    if (n - i < 11 || memcmp(s + i, "-----BEGIN ", 11) != 0)
        return 0;
    size_t j = i + 11, dashes = 0;
    for (;; j++) {
        if (j == n || s[j] < 0x20 || s[j] > 0x7E)
            return 0;
        dashes = s[j] == '-' ? dashes + 1 : 0;
        if (dashes == 5)
            break;
        if (j + 1 - (i + 11) - dashes > SHX_PEM_LABEL_MAX)
            return 0;
    }
    *label = i + 11;
    *label_len = j + 1 - 5 - *label;
    if (*label_len < 11 || memcmp(s + j + 1 - 5 - 11, "PRIVATE KEY", 11) != 0)
        return 0;
    int escaped = 0;
    for (size_t gap = 1; j + gap < n && gap <= SHX_PEM_GAP_MAX + 1; gap++) {
        unsigned char c = s[j + gap];
        int b64 = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '+' || c == '/';
        if (escaped && (c == 'n' || c == 'r' || c == 't'))
            escaped = 0;
        else if (c == '\\')
            escaped = 1;
        else if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            escaped = 0;
        else
            return b64 && !escaped ? j + gap + 1 : 0;
    }
    return 0;
}

/* Each block from its BEGIN to the first "-----END <label>-----" after the
 * body's first byte (or the end) becomes the marker; the rest stays. */
static void pem_model(const unsigned char *s, size_t n, shx_buf *out)
{
    for (size_t i = 0; i < n;) {
        size_t label, label_len, body = pem_begins(s, n, i, &label, &label_len);
        if (!body) {
            FZ_CHECK(shx_buf_append(out, s + i, 1) == 0, "out of memory");
            i++;
            continue;
        }
        FZ_CHECK(shx_buf_puts(out, "[REDACTED:PRIVATE_KEY]") == 0, "out of memory");
        char end[SHX_PEM_END_MAX];
        memcpy(end, "-----END ", 9);
        memcpy(end + 9, s + label, label_len);
        memcpy(end + 9 + label_len, "-----", 5);
        const unsigned char *e = memmem(s + body, n - body, end, 9 + label_len + 5);
        if (!e)
            return;
        i = (size_t)(e - s) + 9 + label_len + 5;
    }
}

static void pem_chunked(const unsigned char *s, size_t n, fz_rng *rng, shx_buf *out)
{
    shx_pemscan k;
    shx_pemscan_init(&k);
    for (size_t i = 0; i < n;) {
        size_t c = fz_chunk(rng, n - i);
        FZ_CHECK(shx_pemscan_feed(&k, s + i, c, out) == 0, "pemscan feed");
        FZ_CHECK(k.held_len <= SHX_PEM_HOLD, "held %zu bytes", k.held_len);
        i += c;
    }
    FZ_CHECK(shx_pemscan_finish(&k, out) == 0, "pemscan finish");
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

    shx_buf pem_want = SHX_BUF_INIT, pem_got = SHX_BUF_INIT;
    pem_model(in.p, n, &pem_want);
    pem_chunked(in.p, n, &rng, &pem_got);
    FZ_CHECK(pem_got.len == pem_want.len &&
                 memcmp(pem_got.data ? pem_got.data : "", pem_want.data ? pem_want.data : "",
                        pem_got.len) == 0,
             "PEM blocks: %zu bytes out, the model %zu", pem_got.len, pem_want.len);
    shx_buf_free(&pem_want);
    shx_buf_free(&pem_got);
    shx_buf_free(&want);
    shx_buf_free(&got);
    free(s);
    return 0;
}
