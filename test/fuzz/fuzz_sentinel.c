/*
 * fuzz_sentinel.c - libFuzzer target for the cwd sentinel filter
 * (lib/sentinel.c).
 *
 * Input: byte 0 picks the tag (the session's real format, short
 * self-overlapping ones such as "AA" or "ABA" that stress the held-prefix
 * logic, or one taken from the input), bytes 1-4 seed the chunking, the
 * rest is the stdout stream. The stream is filtered whole and in chunks;
 * both must give the same output, the same last directory and the same
 * record count as a model written from sentinel.h, and what the filter
 * holds back between chunks must stay within its stated bounds. A third
 * pass makes the emit callback fail part-way, which must stop the filter
 * without leaking.
 */
#include <stdint.h>
#include <string.h>

#include "fuzzutil.h"
#include "stream/sentinel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct result {
    shx_buf out;
    shx_buf path;
    int found;
} result;

static int emit_to_buf(void *ctx, const char *data, size_t len)
{
    FZ_CHECK(len > 0, "empty emit");
    return shx_buf_append(ctx, data, len);
}

/* The filter's meaning on the whole stream at once. */
static void model(const char *tag, const unsigned char *s, size_t n, result *r)
{
    size_t tl = strlen(tag), i = 0;
    while (i < n) {
        const unsigned char *hit = memmem(s + i, n - i, tag, tl);
        if (!hit) {
            shx_buf_append(&r->out, s + i, n - i);
            break;
        }
        shx_buf_append(&r->out, s + i, (size_t)(hit - (s + i)));
        size_t j = (size_t)(hit - s) + tl;
        const unsigned char *nul = memchr(s + j, '\0', n - j);
        size_t reclen = nul ? (size_t)(nul - (s + j)) : n - j;
        if (reclen > SHX_SENTINEL_MAX_PATH) {
            /* too long to be a directory: the tag was output, and another
             * tag may start right after it */
            shx_buf_append(&r->out, tag, tl);
            i = j;
            continue;
        }
        if (!nul) {
            /* cut by the end of the stream: it was output after all */
            shx_buf_append(&r->out, s + (j - tl), n - (j - tl));
            break;
        }
        shx_buf_clear(&r->path);
        shx_buf_append(&r->path, s + j, reclen);
        r->found++;
        i = j + reclen + 1;
    }
}

static void check_bounds(const shx_sentinel *f)
{
    FZ_CHECK(f->heldlen < f->taglen, "holding %zu bytes of a %zu-byte tag", f->heldlen,
             f->taglen);
    FZ_CHECK(f->record.len <= SHX_SENTINEL_MAX_PATH, "record of %zu bytes held",
             f->record.len);
    FZ_CHECK(!f->heldlen || !f->in_record, "a tag prefix held inside a record");
}

static void run(const char *tag, const unsigned char *s, size_t n, uint32_t seed, int whole,
                result *r)
{
    shx_sentinel f;
    shx_sentinel_init(&f, tag);
    if (whole) {
        FZ_CHECK(shx_sentinel_feed(&f, (const char *)s, n, emit_to_buf, &r->out) == 0, "feed");
        check_bounds(&f);
    } else {
        fz_rng rng;
        fz_rng_seed(&rng, seed);
        size_t i = 0;
        do {
            size_t k = fz_chunk(&rng, n - i);
            FZ_CHECK(shx_sentinel_feed(&f, (const char *)s + i, k, emit_to_buf, &r->out) == 0,
                     "feed");
            check_bounds(&f);
            i += k;
        } while (i < n);
    }
    FZ_CHECK(shx_sentinel_finish(&f, emit_to_buf, &r->out) == 0, "finish");
    FZ_CHECK(f.heldlen == 0 && !f.in_record, "state left after finish");
    shx_buf_append(&r->path, f.path.data ? f.path.data : "", f.path.len);
    r->found = f.found;
    shx_sentinel_free(&f);
}

typedef struct failing {
    shx_buf out;
    int calls_left;
} failing;

static int emit_then_fail(void *ctx, const char *data, size_t len)
{
    failing *fl = ctx;
    if (fl->calls_left-- <= 0)
        return -1;
    return shx_buf_append(&fl->out, data, len);
}

/* Once emit fails the filter reports it; what came out before is still a
 * prefix of the real output, and freeing releases everything. */
static void run_failing(const char *tag, const unsigned char *s, size_t n, uint32_t seed,
                        const result *ref)
{
    failing fl = {SHX_BUF_INIT, (int)(seed % 7)};
    shx_sentinel f;
    shx_sentinel_init(&f, tag);
    fz_rng rng;
    fz_rng_seed(&rng, seed);
    int rc = 0;
    size_t i = 0;
    do {
        size_t k = fz_chunk(&rng, n - i);
        rc = shx_sentinel_feed(&f, (const char *)s + i, k, emit_then_fail, &fl);
        i += k;
    } while (rc == 0 && i < n);
    if (rc == 0)
        rc = shx_sentinel_finish(&f, emit_then_fail, &fl);
    FZ_CHECK(rc == 0 || rc == -1, "feed returned %d", rc);
    FZ_CHECK(fl.out.len <= ref->out.len &&
                 (fl.out.len == 0 || memcmp(fl.out.data, ref->out.data, fl.out.len) == 0),
             "output before the failure is not a prefix of the real output");
    shx_sentinel_free(&f);
    shx_buf_free(&fl.out);
}

static void result_free(result *r)
{
    shx_buf_free(&r->out);
    shx_buf_free(&r->path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    unsigned kind = fz_u8(&in);
    uint32_t seed = fz_u32(&in);
    char tag[SHX_SENTINEL_TAG_MAX];
    static const char *const fixed[] = {"AA", "AB", "ABA", "AAB", "ABAB", "aaaa", "_"};
    unsigned pick = kind % 10;
    if (pick < 2) {
        shx_sentinel_make_tag(tag, 0x0123456789abcdefull);
    } else if (pick < 2 + sizeof fixed / sizeof fixed[0]) {
        strcpy(tag, fixed[pick - 2]);
    } else {
        /* a tag of 1-63 input bytes, ending early at a NUL */
        size_t want = 1 + (kind >> 4) % (SHX_SENTINEL_TAG_MAX - 1), k = 0;
        while (k < want && in.n && in.p[0])
            tag[k++] = (char)fz_u8(&in);
        if (k == 0)
            tag[k++] = 'A';
        tag[k] = '\0';
    }
    const unsigned char *s = in.p;
    size_t n = in.n;

    result want = {SHX_BUF_INIT, SHX_BUF_INIT, 0};
    result whole = {SHX_BUF_INIT, SHX_BUF_INIT, 0};
    result chunked = {SHX_BUF_INIT, SHX_BUF_INIT, 0};
    model(tag, s, n, &want);
    run(tag, s, n, seed, 1, &whole);
    run(tag, s, n, seed, 0, &chunked);

    FZ_CHECK(fz_mem_eq(whole.out.data, whole.out.len, chunked.out.data, chunked.out.len),
             "chunked output differs from one-shot (%zu vs %zu bytes)", chunked.out.len,
             whole.out.len);
    FZ_CHECK(fz_mem_eq(whole.path.data, whole.path.len, chunked.path.data, chunked.path.len),
             "chunked cwd differs from one-shot");
    FZ_CHECK(whole.found == chunked.found, "records: %d one-shot, %d chunked", whole.found,
             chunked.found);
    FZ_CHECK(fz_mem_eq(whole.out.data, whole.out.len, want.out.data, want.out.len),
             "output differs from the model (%zu vs %zu bytes)", whole.out.len, want.out.len);
    FZ_CHECK(fz_mem_eq(whole.path.data, whole.path.len, want.path.data, want.path.len),
             "cwd differs from the model");
    FZ_CHECK(whole.found == want.found, "records: %d, model %d", whole.found, want.found);

    run_failing(tag, s, n, seed, &want);

    result_free(&want);
    result_free(&whole);
    result_free(&chunked);
    return 0;
}
