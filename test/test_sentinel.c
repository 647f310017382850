/*
 * test_sentinel.c - the stdout filter for cwd tracking (lib/stream/sentinel.c):
 * TAG + directory + NUL records are removed wherever the chunk boundaries
 * fall, everything else (other tags, TAG prefixes, forged over-long
 * records, NUL bytes, megabytes without a newline) passes through byte for
 * byte, and the memory held back stays bounded. A reference implementation
 * working on the whole input checks random inputs under random chunkings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stream/sentinel.h"
#include "shexec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONCE 0x0123456789abcdefull

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

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

static int emit_to_buf(void *ctx, const char *data, size_t len)
{
    return shx_buf_append(ctx, data, len);
}

static char g_tag[64];
static size_t g_taglen;

static int setup_tag(void **state)
{
    (void)state;
    shx_sentinel_make_tag(g_tag, NONCE);
    g_taglen = strlen(g_tag);
    return 0;
}

/* Append TAG + path + NUL. */
static void put_record(shx_buf *b, const char *tag, const char *path)
{
    assert_int_equal(shx_buf_puts(b, tag), 0);
    assert_int_equal(shx_buf_puts(b, path), 0);
    assert_int_equal(shx_buf_putc(b, '\0'), 0);
}

typedef struct run_result {
    shx_buf out;
    shx_buf path;
    int found;
} run_result;

/* Bounds that must hold between any two feeds. */
static void check_bounds(const shx_sentinel *f)
{
    if (f->record.len > SHX_SENTINEL_MAX_PATH)
        fail_msg("record.len %zu > %d", f->record.len, SHX_SENTINEL_MAX_PATH);
    if (f->heldlen >= f->taglen)
        fail_msg("heldlen %zu >= taglen %zu", f->heldlen, f->taglen);
    if (f->record.cap > 2 * SHX_SENTINEL_MAX_PATH + 64)
        fail_msg("record.cap %zu", f->record.cap);
}

/*
 * Filter in[0..len) through a fresh filter with tag `tag`, fed at the
 * given cut points (sorted offsets, ncuts of them), then finish.
 */
static void run_cuts(run_result *r, const char *tag, const void *in, size_t len,
                     const size_t *cuts, size_t ncuts)
{
    shx_sentinel f;
    shx_sentinel_init(&f, tag);
    memset(r, 0, sizeof *r);
    const char *p = in;
    size_t prev = 0;
    for (size_t k = 0; k <= ncuts; k++) {
        size_t end = k < ncuts ? cuts[k] : len;
        assert_true(end >= prev && end <= len);
        assert_int_equal(shx_sentinel_feed(&f, p + prev, end - prev, emit_to_buf, &r->out), 0);
        check_bounds(&f);
        prev = end;
    }
    assert_int_equal(shx_sentinel_finish(&f, emit_to_buf, &r->out), 0);
    assert_int_equal(f.heldlen, 0);
    assert_false(f.in_record);
    assert_int_equal(shx_buf_append(&r->path, f.path.data ? f.path.data : "", f.path.len), 0);
    assert_int_equal(shx_buf_append(&r->out, "", 0), 0); /* data non-NULL even when empty */
    r->found = f.found;
    shx_sentinel_free(&f);
}

/* chunk: 0 = all at once, n > 0 = n bytes at a time, -1 = random 1..max_rand. */
static void run_chunked(run_result *r, const char *tag, const void *in, size_t len, long chunk,
                        size_t max_rand)
{
    size_t *cuts = malloc((len + 1) * sizeof *cuts);
    assert_non_null(cuts);
    size_t ncuts = 0, pos = 0;
    if (chunk != 0) {
        for (;;) {
            size_t n = chunk > 0 ? (size_t)chunk : 1 + rng_below(max_rand);
            if (pos + n >= len)
                break;
            pos += n;
            cuts[ncuts++] = pos;
        }
    }
    run_cuts(r, tag, in, len, cuts, ncuts);
    free(cuts);
}

static void run_result_free(run_result *r)
{
    shx_buf_free(&r->out);
    shx_buf_free(&r->path);
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

static void assert_run(const run_result *r, const void *out, size_t out_len, const char *path,
                       int found)
{
    assert_bytes_equal("output", r->out.data, r->out.len, out, out_len);
    assert_bytes_equal("path", r->path.data, r->path.len, path, strlen(path));
    assert_int_equal(r->found, found);
}

/* Check in[0..len) gives (out, path, found) all at once, 1 byte at a time,
 * at every single split point and under random chunkings. */
static void check_all_chunkings(const void *in, size_t len, const void *out, size_t out_len,
                                const char *path, int found)
{
    run_result r;
    run_chunked(&r, g_tag, in, len, 0, 0);
    assert_run(&r, out, out_len, path, found);
    run_result_free(&r);
    run_chunked(&r, g_tag, in, len, 1, 0);
    assert_run(&r, out, out_len, path, found);
    run_result_free(&r);
    for (size_t k = 0; k <= len; k++) {
        run_cuts(&r, g_tag, in, len, &k, 1);
        assert_run(&r, out, out_len, path, found);
        run_result_free(&r);
    }
    for (int i = 0; i < 50; i++) {
        run_chunked(&r, g_tag, in, len, -1, 1 + (size_t)i % 40);
        assert_run(&r, out, out_len, path, found);
        run_result_free(&r);
    }
}

/*
 * Reference filter on the whole input: a record is TAG, then at most
 * SHX_SENTINEL_MAX_PATH non-NUL bytes, then NUL. A TAG not starting a
 * record is output, and the search resumes right after it.
 */
static void reference_filter(const char *tag, const char *in, size_t len, run_result *r)
{
    size_t tl = strlen(tag);
    memset(r, 0, sizeof *r);
    assert_int_equal(shx_buf_append(&r->out, "", 0), 0);
    assert_int_equal(shx_buf_append(&r->path, "", 0), 0);
    size_t i = 0;
    while (i < len) {
        const char *hit = memmem(in + i, len - i, tag, tl);
        if (!hit) {
            assert_int_equal(shx_buf_append(&r->out, in + i, len - i), 0);
            break;
        }
        size_t h = (size_t)(hit - in);
        assert_int_equal(shx_buf_append(&r->out, in + i, h - i), 0);
        size_t j = h + tl;
        const char *nul = memchr(in + j, '\0', len - j);
        if (nul && (size_t)(nul - (in + j)) <= SHX_SENTINEL_MAX_PATH) {
            shx_buf_clear(&r->path);
            assert_int_equal(shx_buf_append(&r->path, in + j, (size_t)(nul - (in + j))), 0);
            r->found++;
            i = (size_t)(nul - in) + 1;
        } else {
            assert_int_equal(shx_buf_append(&r->out, tag, tl), 0);
            i = j;
        }
    }
}

/* ------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------ */

static void test_make_tag_format(void **state)
{
    (void)state;
    char tag[64];
    shx_sentinel_make_tag(tag, NONCE);
    assert_string_equal(tag, "__SHEXEC_CWD_0123456789abcdef__");
    shx_sentinel_make_tag(tag, 0);
    assert_string_equal(tag, "__SHEXEC_CWD_0000000000000000__");
    shx_sentinel_make_tag(tag, ~0ull);
    assert_string_equal(tag, "__SHEXEC_CWD_ffffffffffffffff__");
    assert_true(strlen(tag) < 40);
    assert_true(strlen(tag) < SHX_SENTINEL_TAG_MAX);
}

static void test_plain_output_unchanged(void **state)
{
    (void)state;
    const char *s = "line one\nline two\n__SHEXEC but not a tag\n_\n__\n";
    check_all_chunkings(s, strlen(s), s, strlen(s), "", 0);
    check_all_chunkings("", 0, "", 0, "", 0);
}

static void test_record_after_output(void **state)
{
    (void)state;
    shx_buf in = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&in, "hello\n"), 0);
    put_record(&in, g_tag, "/home/user/project");
    /* all at once, 1-byte feeds, every split point, random chunkings */
    check_all_chunkings(in.data, in.len, "hello\n", 6, "/home/user/project", 1);
    shx_buf_free(&in);
}

static void test_record_split_at_every_pair_of_points(void **state)
{
    (void)state;
    shx_buf in = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&in, "ab\n"), 0);
    put_record(&in, g_tag, "/tmp/x y");
    assert_int_equal(shx_buf_puts(&in, "cd"), 0);
    for (size_t a = 0; a <= in.len; a++) {
        for (size_t b = a; b <= in.len; b++) {
            size_t cuts[2] = {a, b};
            run_result r;
            run_cuts(&r, g_tag, in.data, in.len, cuts, 2);
            assert_run(&r, "ab\ncd", 5, "/tmp/x y", 1);
            run_result_free(&r);
        }
    }
    shx_buf_free(&in);
}

static void test_output_without_newline_before_record(void **state)
{
    (void)state;
    shx_buf in = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&in, "foo"), 0);
    put_record(&in, g_tag, "/srv");
    check_all_chunkings(in.data, in.len, "foo", 3, "/srv", 1);
    /* the record alone */
    shx_buf_clear(&in);
    put_record(&in, g_tag, "/");
    check_all_chunkings(in.data, in.len, "", 0, "/", 1);
    shx_buf_free(&in);
}

static void test_text_after_record_passes(void **state)
{
    (void)state;
    shx_buf in = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&in, "before\n"), 0);
    put_record(&in, g_tag, "/a");
    assert_int_equal(shx_buf_puts(&in, "after\nmore"), 0);
    check_all_chunkings(in.data, in.len, "before\nafter\nmore", 17, "/a", 1);
    shx_buf_free(&in);
}

static void test_two_records_last_wins(void **state)
{
    (void)state;
    shx_buf in = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&in, "one\n"), 0);
    put_record(&in, g_tag, "/first/dir");
    assert_int_equal(shx_buf_puts(&in, "two\n"), 0);
    put_record(&in, g_tag, "/second");
    check_all_chunkings(in.data, in.len, "one\ntwo\n", 8, "/second", 2);
    /* back to back, the second shorter than the first */
    shx_buf_clear(&in);
    put_record(&in, g_tag, "/a/very/long/first/directory");
    put_record(&in, g_tag, "/b");
    check_all_chunkings(in.data, in.len, "", 0, "/b", 2);
    shx_buf_free(&in);
}

static void test_path_with_special_characters(void **state)
{
    (void)state;
    static const char *const paths[] = {
        "/tmp/with space",
        "/tmp/'single' \"double\"",
        "/tmp/new\nline\n",
        "/tmp/tab\there/$HOME/`x`/\\back",
        "/tmp/\xC3\xA9t\xC3\xA9/\xF0\x9F\x98\x80",
        "/tmp/__SHEXEC_CWD_", /* a tag prefix inside the path */
    };
    for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
        shx_buf in = SHX_BUF_INIT;
        assert_int_equal(shx_buf_puts(&in, "x\n"), 0);
        put_record(&in, g_tag, paths[k]);
        check_all_chunkings(in.data, in.len, "x\n", 2, paths[k], 1);
        shx_buf_free(&in);
    }
}

static void test_other_tags_pass_through(void **state)
{
    (void)state;
    char other[64];
    shx_sentinel_make_tag(other, NONCE ^ 1); /* differs in the last hex digit only */
    char other2[64];
    shx_sentinel_make_tag(other2, 0xfedcba9876543210ull);
    shx_buf in = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&in, "a"), 0);
    put_record(&in, "__SHEXEC_CWD__", "/old/style");
    assert_int_equal(shx_buf_puts(&in, "b"), 0);
    put_record(&in, other, "/other/session");
    put_record(&in, other2, "/third");
    assert_int_equal(shx_buf_puts(&in, "c"), 0);
    /* everything, NULs included, passes unchanged and nothing is found */
    check_all_chunkings(in.data, in.len, in.data, in.len, "", 0);

    /* followed by a real record: only that one is removed */
    shx_buf want = SHX_BUF_INIT;
    assert_int_equal(shx_buf_append(&want, in.data, in.len), 0);
    put_record(&in, g_tag, "/real");
    check_all_chunkings(in.data, in.len, want.data, want.len, "/real", 1);
    shx_buf_free(&want);
    shx_buf_free(&in);
}

static void test_tag_prefix_at_chunk_end_not_a_tag(void **state)
{
    (void)state;
    /* every proper prefix of the tag, held at a chunk end, then something else */
    for (size_t k = 1; k < g_taglen; k++) {
        shx_buf in = SHX_BUF_INIT;
        assert_int_equal(shx_buf_puts(&in, "out:"), 0);
        assert_int_equal(shx_buf_append(&in, g_tag, k), 0);
        size_t cut = in.len;
        assert_int_equal(shx_buf_puts(&in, "Z rest\n"), 0);
        run_result r;
        run_cuts(&r, g_tag, in.data, in.len, &cut, 1);
        assert_run(&r, in.data, in.len, "", 0);
        run_result_free(&r);

        /* the prefix then a NUL and a short feed that ends in a prefix again */
        shx_buf_clear(&in);
        assert_int_equal(shx_buf_append(&in, g_tag, k), 0);
        assert_int_equal(shx_buf_putc(&in, '\0'), 0);
        assert_int_equal(shx_buf_append(&in, g_tag, k), 0);
        check_all_chunkings(in.data, in.len, in.data, in.len, "", 0);

        /* a prefix right before a real record. For k >= taglen - 2 the
         * prefix ends in "...f_" or "...f" and the record's leading "__"
         * completes a TAG at offset 0 instead: the reference says so. */
        shx_buf_clear(&in);
        assert_int_equal(shx_buf_append(&in, g_tag, k), 0);
        put_record(&in, g_tag, "/p");
        run_result ref;
        reference_filter(g_tag, in.data, in.len, &ref);
        if (k < g_taglen - 2)
            assert_run(&ref, g_tag, k, "/p", 1);
        else
            assert_run(&ref, "", 0, in.data + g_taglen, 1);
        check_all_chunkings(in.data, in.len, ref.out.data, ref.out.len, ref.path.data, ref.found);
        run_result_free(&ref);
        shx_buf_free(&in);
    }

    /* overlapping: the tag begins with "__", preceded by more underscores */
    shx_buf in = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&in, "___"), 0);
    put_record(&in, g_tag, "/o");
    check_all_chunkings(in.data, in.len, "___", 3, "/o", 1);
    /* a near tag that breaks on the last character, then the real one */
    shx_buf_clear(&in);
    assert_int_equal(shx_buf_append(&in, g_tag, g_taglen - 1), 0);
    assert_int_equal(shx_buf_putc(&in, 'X'), 0);
    put_record(&in, g_tag, "/q");
    shx_buf want = SHX_BUF_INIT;
    assert_int_equal(shx_buf_append(&want, g_tag, g_taglen - 1), 0);
    assert_int_equal(shx_buf_putc(&want, 'X'), 0);
    check_all_chunkings(in.data, in.len, want.data, want.len, "/q", 1);
    shx_buf_free(&want);
    shx_buf_free(&in);
}

static void test_forged_tag_without_nul_bounded(void **state)
{
    (void)state;
    shx_buf in = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&in, "pre "), 0);
    assert_int_equal(shx_buf_puts(&in, g_tag), 0);
    for (int i = 0; i < SHX_SENTINEL_MAX_PATH + 1000; i++)
        assert_int_equal(shx_buf_putc(&in, (char)('a' + i % 26)), 0);

    /* fed one byte at a time: bounded, and emitted as output (TAG included)
     * as soon as it cannot be a record any more, before finish() */
    shx_sentinel f;
    shx_buf out = SHX_BUF_INIT;
    shx_sentinel_init(&f, g_tag);
    for (size_t i = 0; i < in.len; i++) {
        assert_int_equal(shx_sentinel_feed(&f, in.data + i, 1, emit_to_buf, &out), 0);
        check_bounds(&f);
    }
    assert_true(out.len >= in.len - SHX_SENTINEL_MAX_PATH);
    assert_memory_equal(out.data, in.data, out.len);
    assert_int_equal(shx_sentinel_finish(&f, emit_to_buf, &out), 0);
    assert_bytes_equal("output", out.data, out.len, in.data, in.len);
    assert_int_equal(f.found, 0);
    assert_int_equal(f.path.len, 0);
    shx_sentinel_free(&f);
    shx_buf_free(&out);

    /* any chunking: same */
    run_result r;
    static const long chunks[] = {0, 1, 2, 100, 4096, 4097};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        run_chunked(&r, g_tag, in.data, in.len, chunks[k], 0);
        assert_run(&r, in.data, in.len, "", 0);
        run_result_free(&r);
    }

    /* a real record after the forged one is still found */
    shx_buf want = SHX_BUF_INIT;
    assert_int_equal(shx_buf_append(&want, in.data, in.len), 0);
    assert_int_equal(shx_buf_puts(&in, "\nmid\n"), 0);
    assert_int_equal(shx_buf_puts(&want, "\nmid\n"), 0);
    put_record(&in, g_tag, "/after/forged");
    assert_int_equal(shx_buf_puts(&in, "end"), 0);
    assert_int_equal(shx_buf_puts(&want, "end"), 0);
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        run_chunked(&r, g_tag, in.data, in.len, chunks[k], 0);
        assert_run(&r, want.data, want.len, "/after/forged", 1);
        run_result_free(&r);
    }
    for (int i = 0; i < 20; i++) {
        run_chunked(&r, g_tag, in.data, in.len, -1, 3000);
        assert_run(&r, want.data, want.len, "/after/forged", 1);
        run_result_free(&r);
    }
    /* the real record straight after the forged bytes, no separator */
    shx_buf_clear(&in);
    assert_int_equal(shx_buf_puts(&in, g_tag), 0);
    for (int i = 0; i < SHX_SENTINEL_MAX_PATH - 6; i++)
        assert_int_equal(shx_buf_putc(&in, 'f'), 0);
    shx_buf_clear(&want);
    assert_int_equal(shx_buf_append(&want, in.data, in.len), 0);
    put_record(&in, g_tag, "/straight/after/a/forged/one");
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        run_chunked(&r, g_tag, in.data, in.len, chunks[k], 0);
        assert_run(&r, want.data, want.len, "/straight/after/a/forged/one", 1);
        run_result_free(&r);
    }
    shx_buf_free(&want);
    shx_buf_free(&in);
}

static void test_path_length_limit(void **state)
{
    (void)state;
    /* exactly SHX_SENTINEL_MAX_PATH bytes of directory is a record */
    char *path = malloc(SHX_SENTINEL_MAX_PATH + 2);
    assert_non_null(path);
    path[0] = '/';
    memset(path + 1, 'd', SHX_SENTINEL_MAX_PATH);
    path[SHX_SENTINEL_MAX_PATH] = '\0';
    assert_int_equal(strlen(path), SHX_SENTINEL_MAX_PATH);
    shx_buf in = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&in, "o"), 0);
    put_record(&in, g_tag, path);
    static const long chunks[] = {0, 1, 7, 4096};
    run_result r;
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        run_chunked(&r, g_tag, in.data, in.len, chunks[k], 0);
        assert_run(&r, "o", 1, path, 1);
        run_result_free(&r);
    }
    /* one byte more is not a record: all of it, NUL included, is output */
    path[SHX_SENTINEL_MAX_PATH] = 'd';
    path[SHX_SENTINEL_MAX_PATH + 1] = '\0';
    shx_buf_clear(&in);
    assert_int_equal(shx_buf_puts(&in, "o"), 0);
    put_record(&in, g_tag, path);
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        run_chunked(&r, g_tag, in.data, in.len, chunks[k], 0);
        assert_run(&r, in.data, in.len, "", 0);
        run_result_free(&r);
    }
    free(path);
    shx_buf_free(&in);
}

static void test_finish_emits_incomplete(void **state)
{
    (void)state;
    /* an incomplete record (no NUL yet) */
    shx_buf in = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&in, "out\n"), 0);
    assert_int_equal(shx_buf_puts(&in, g_tag), 0);
    assert_int_equal(shx_buf_puts(&in, "/partial/dir"), 0);
    check_all_chunkings(in.data, in.len, in.data, in.len, "", 0);

    /* only the TAG */
    shx_buf_clear(&in);
    assert_int_equal(shx_buf_puts(&in, g_tag), 0);
    check_all_chunkings(in.data, in.len, in.data, in.len, "", 0);

    /* a held prefix: nothing of it is emitted before finish() */
    shx_sentinel f;
    shx_buf out = SHX_BUF_INIT;
    shx_sentinel_init(&f, g_tag);
    assert_int_equal(shx_sentinel_feed(&f, "text__SHEXEC_CWD_01", 19, emit_to_buf, &out), 0);
    assert_bytes_equal("before finish", out.data, out.len, "text", 4);
    assert_int_equal(shx_sentinel_finish(&f, emit_to_buf, &out), 0);
    assert_bytes_equal("after finish", out.data, out.len, "text__SHEXEC_CWD_01", 19);
    assert_int_equal(f.found, 0);
    shx_sentinel_free(&f);
    shx_buf_clear(&out);

    /* an incomplete record after a complete one keeps the first path */
    shx_sentinel_init(&f, g_tag);
    shx_buf_clear(&in);
    put_record(&in, g_tag, "/done");
    assert_int_equal(shx_buf_puts(&in, "x"), 0);
    assert_int_equal(shx_buf_puts(&in, g_tag), 0);
    assert_int_equal(shx_buf_puts(&in, "/never"), 0);
    assert_int_equal(shx_sentinel_feed(&f, in.data, in.len, emit_to_buf, &out), 0);
    assert_bytes_equal("before finish", out.data, out.len, "x", 1);
    assert_int_equal(shx_sentinel_finish(&f, emit_to_buf, &out), 0);
    shx_buf want = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&want, "x"), 0);
    assert_int_equal(shx_buf_puts(&want, g_tag), 0);
    assert_int_equal(shx_buf_puts(&want, "/never"), 0);
    assert_bytes_equal("after finish", out.data, out.len, want.data, want.len);
    assert_int_equal(f.found, 1);
    assert_string_equal(f.path.data, "/done");
    shx_sentinel_free(&f);
    shx_buf_free(&want);
    shx_buf_free(&out);
    shx_buf_free(&in);
}

static void test_one_megabyte_without_newline(void **state)
{
    (void)state;
    size_t len = 1024 * 1024;
    char *in = malloc(len);
    assert_non_null(in);
    for (size_t i = 0; i < len; i++)
        in[i] = (char)('!' + (i * 31 + i / 977) % 90); /* printable, no newline, includes '_' */
    /* sprinkle tag prefixes (never the whole tag) */
    for (size_t i = 1000; i + g_taglen < len; i += 65537)
        memcpy(in + i, g_tag, g_taglen - 1 - (i / 65537) % (g_taglen - 1));
    assert_null(memmem(in, len, g_tag, g_taglen));
    static const long chunks[] = {0, 1, 4096, 65536, 65537};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        run_result r;
        run_chunked(&r, g_tag, in, len, chunks[k], 0);
        assert_run(&r, in, len, "", 0);
        run_result_free(&r);
    }
    /* with a record at the very end */
    shx_buf b = SHX_BUF_INIT;
    assert_int_equal(shx_buf_append(&b, in, len), 0);
    put_record(&b, g_tag, "/end");
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        run_result r;
        run_chunked(&r, g_tag, b.data, b.len, chunks[k], 0);
        assert_run(&r, in, len, "/end", 1);
        run_result_free(&r);
    }
    shx_buf_free(&b);
    free(in);
}

static void test_binary_with_nul_bytes(void **state)
{
    (void)state;
    /* every byte value, several times, NULs everywhere, no TAG */
    char bin[256 * 4];
    for (size_t i = 0; i < sizeof bin; i++)
        bin[i] = (char)(i * 37 % 256);
    check_all_chunkings(bin, sizeof bin, bin, sizeof bin, "", 0);
    static const char zeros[16] = {0};
    check_all_chunkings(zeros, sizeof zeros, zeros, sizeof zeros, "", 0);
    /* a NUL right after a partial tag, then a real record */
    shx_buf in = SHX_BUF_INIT, want = SHX_BUF_INIT;
    assert_int_equal(shx_buf_append(&in, bin, 300), 0);
    assert_int_equal(shx_buf_append(&in, "__SHEXEC_CWD_\0", 14), 0);
    assert_int_equal(shx_buf_append(&want, in.data, in.len), 0);
    put_record(&in, g_tag, "/bin");
    assert_int_equal(shx_buf_append(&in, bin, 300), 0);
    assert_int_equal(shx_buf_append(&want, bin, 300), 0);
    check_all_chunkings(in.data, in.len, want.data, want.len, "/bin", 1);
    shx_buf_free(&want);
    shx_buf_free(&in);
}

/* Random inputs against the reference, under many chunkings. */
static void test_random_against_reference(void **state)
{
    (void)state;
    char other[64];
    shx_sentinel_make_tag(other, NONCE + 1);
    rng_seed(424242);
    shx_buf in = SHX_BUF_INIT;
    for (int iter = 0; iter < 400; iter++) {
        shx_buf_clear(&in);
        int parts = 1 + (int)rng_below(12);
        for (int p = 0; p < parts; p++) {
            switch (rng_below(10)) {
            case 0: /* a real record */
                put_record(&in, g_tag, rng_below(2) ? "/r/one" : "/r/two two");
                break;
            case 1: /* a tag alone */
                assert_int_equal(shx_buf_puts(&in, g_tag), 0);
                break;
            case 2: /* a tag prefix */
                assert_int_equal(shx_buf_append(&in, g_tag, 1 + rng_below(g_taglen - 1)), 0);
                break;
            case 3:
                assert_int_equal(shx_buf_putc(&in, '\0'), 0);
                break;
            case 4:
                put_record(&in, other, "/other");
                break;
            case 5: /* a long run: may push a record over the limit */
                for (size_t n = 1000 + rng_below(4000); n > 0; n--)
                    assert_int_equal(shx_buf_putc(&in, (char)('a' + n % 26)), 0);
                break;
            case 6:
                for (size_t n = rng_below(8); n > 0; n--)
                    assert_int_equal(shx_buf_putc(&in, '_'), 0);
                break;
            default: /* random bytes, few NULs */
                for (size_t n = rng_below(20); n > 0; n--)
                    assert_int_equal(shx_buf_putc(&in, (char)(1 + rng_below(255))), 0);
                break;
            }
        }
        run_result ref;
        reference_filter(g_tag, in.data, in.len, &ref);
        for (int c = 0; c < 5; c++) {
            run_result r;
            if (c == 0)
                run_chunked(&r, g_tag, in.data, in.len, 0, 0);
            else if (c == 1 && in.len < 20000)
                run_chunked(&r, g_tag, in.data, in.len, 1, 0);
            else
                run_chunked(&r, g_tag, in.data, in.len, -1, c == 2 ? 5 : c == 3 ? 50 : 3000);
            if (r.out.len != ref.out.len || memcmp(r.out.data, ref.out.data, ref.out.len) != 0 ||
                r.path.len != ref.path.len || memcmp(r.path.data, ref.path.data, ref.path.len) != 0 ||
                r.found != ref.found)
                fail_msg("iter %d chunking %d: output %zu bytes (ref %zu), path \"%s\" (ref \"%s\"), "
                         "found %d (ref %d)",
                         iter, c, r.out.len, ref.out.len, r.path.data, ref.path.data, r.found,
                         ref.found);
            run_result_free(&r);
        }
        run_result_free(&ref);
    }
    shx_buf_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_make_tag_format),
        cmocka_unit_test(test_plain_output_unchanged),
        cmocka_unit_test(test_record_after_output),
        cmocka_unit_test(test_record_split_at_every_pair_of_points),
        cmocka_unit_test(test_output_without_newline_before_record),
        cmocka_unit_test(test_text_after_record_passes),
        cmocka_unit_test(test_two_records_last_wins),
        cmocka_unit_test(test_path_with_special_characters),
        cmocka_unit_test(test_other_tags_pass_through),
        cmocka_unit_test(test_tag_prefix_at_chunk_end_not_a_tag),
        cmocka_unit_test(test_forged_tag_without_nul_bounded),
        cmocka_unit_test(test_path_length_limit),
        cmocka_unit_test(test_finish_emits_incomplete),
        cmocka_unit_test(test_one_megabyte_without_newline),
        cmocka_unit_test(test_binary_with_nul_bytes),
        cmocka_unit_test(test_random_against_reference),
    };
    return cmocka_run_group_tests(tests, setup_tag, NULL);
}
