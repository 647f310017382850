/*
 * test_redact.c - hiding secrets in a stream, without spawning anything:
 * the multi-pattern replacement (lib/output/acreplace.c) against a reference that
 * scans position by position, whatever the chunking; a secret that is a
 * prefix of another, overlapping secrets, secrets split across feeds; the
 * shapes of known keys and PEM blocks (lib/output/keyscan.c, lib/output/pemscan.c),
 * also where they stand in real output: keys in escape codes' colours, PEM
 * blocks indented or inside a JSON string, each fed whole, cut in two at
 * every byte and byte by byte; the sets a session builds (lib/output/redact.c):
 * environment globs, reuse while nothing changed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "output/acreplace.h"
#include "output/keyscan.h"
#include "output/redact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

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

typedef struct pattern {
    char text[40];
    size_t len;
    char repl[16];
} pattern;

/* The reference: at each position the longest pattern starting there is
 * replaced and the scan goes on after it; else the byte is kept. */
static void reference(const pattern *p, size_t np, const char *in, size_t len, shx_buf *out)
{
    size_t i = 0;
    while (i < len) {
        size_t best = 0, which = 0;
        for (size_t k = 0; k < np; k++)
            if (p[k].len > best && p[k].len <= len - i && memcmp(in + i, p[k].text, p[k].len) == 0) {
                /* a pattern added twice keeps its first replacement */
                int first = 1;
                for (size_t j = 0; j < k; j++)
                    if (p[j].len == p[k].len && memcmp(p[j].text, p[k].text, p[k].len) == 0)
                        first = 0;
                if (first) {
                    best = p[k].len;
                    which = k;
                }
            }
        if (best) {
            assert_int_equal(shx_buf_puts(out, p[which].repl), 0);
            i += best;
        } else {
            assert_int_equal(shx_buf_append(out, in + i, 1), 0);
            i++;
        }
    }
}

static shx_acr *build(const pattern *p, size_t np)
{
    shx_acr *a = shx_acr_new();
    assert_non_null(a);
    for (size_t k = 0; k < np; k++)
        assert_int_equal(shx_acr_add(a, p[k].text, p[k].len, p[k].repl, strlen(p[k].repl)), 0);
    assert_int_equal(shx_acr_build(a), 0);
    return a;
}

/* Feed in chunks of `chunk` bytes (0: random sizes), finish. */
static void through(const shx_acr *a, const char *in, size_t len, size_t chunk, shx_buf *out,
                    uint64_t *replaced)
{
    shx_acr_stream st;
    shx_acr_stream_init(&st, a);
    size_t i = 0;
    while (i < len) {
        size_t n = chunk ? chunk : 1 + rng_below(9);
        if (n > len - i)
            n = len - i;
        assert_int_equal(shx_acr_feed(&st, in + i, n, out), 0);
        i += n;
    }
    assert_int_equal(shx_acr_finish(&st, out), 0);
    if (replaced)
        *replaced = st.replaced;
    shx_acr_stream_free(&st);
}

static void expect(const shx_buf *got, const char *want)
{
    if (got->len != strlen(want) || memcmp(got->data ? got->data : "", want, got->len) != 0)
        fail_msg("got \"%.*s\", expected \"%s\"", (int)got->len, got->data ? got->data : "",
                 want);
}

static void test_whole_and_split(void **state)
{
    (void)state;
    pattern p[] = {{"hunter2hunter2", 14, "[A]"}};
    shx_acr *a = build(p, 1);
    const char *in = "x hunter2hunter2 y hunter2hunter2";
    for (size_t chunk = 1; chunk <= strlen(in); chunk++) {
        shx_buf out = SHX_BUF_INIT;
        uint64_t n;
        through(a, in, strlen(in), chunk, &out, &n);
        expect(&out, "x [A] y [A]");
        assert_int_equal(n, 2);
        shx_buf_free(&out);
    }
    shx_acr_free(a);
}

static void test_prefix_of_another(void **state)
{
    (void)state;
    /* the shorter one first and last: the order of registration does not decide */
    pattern p[] = {{"secretvalue1", 12, "[S]"}, {"secretvalue123", 14, "[L]"},
                   {"secretvalue12345", 16, "[XL]"}};
    shx_acr *a = build(p, 3);
    const char *cases[][2] = {
        {"secretvalue1", "[S]"},
        {"secretvalue12", "[S]2"},
        {"secretvalue123", "[L]"},
        {"secretvalue1234", "[L]4"},
        {"secretvalue12345", "[XL]"},
        {"secretvalue123secretvalue1", "[L][S]"},
        {"ssecretvalue1234secretvalue12345!", "s[L]4[XL]!"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t chunk = 0; chunk <= 3; chunk++) {
            shx_buf out = SHX_BUF_INIT;
            through(a, cases[c][0], strlen(cases[c][0]), chunk, &out, NULL);
            expect(&out, cases[c][1]);
            shx_buf_free(&out);
        }
    shx_acr_free(a);
}

static void test_overlaps_leftmost_first(void **state)
{
    (void)state;
    pattern p[] = {{"abcdef", 6, "[1]"}, {"defghi", 6, "[2]"}, {"ghijkl", 6, "[3]"},
                   {"bcdefghijklmnop", 15, "[4]"}, {"xyz", 3, "[5]"}};
    shx_acr *a = build(p, 5);
    const char *cases[][2] = {
        {"abcdefghi", "[1]ghi"},           /* [1] starts first; [2] overlaps it */
        {"abcdefghijkl", "[1][3]"},        /* after [1], [3] starts at g */
        {"zbcdefghijklmnopq", "z[4]q"},    /* the long one starting at b */
        {"abcdefghijklmnop", "[1][3]mnop"}, /* [1] at a beats [4] at b; then [3] */
        {"xyzxyzxy", "[5][5]xy"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t chunk = 0; chunk <= 4; chunk++) {
            shx_buf out = SHX_BUF_INIT;
            through(a, cases[c][0], strlen(cases[c][0]), chunk, &out, NULL);
            expect(&out, cases[c][1]);
            shx_buf_free(&out);
        }
    shx_acr_free(a);
}

/* A longer pattern in progress while a shorter, later one completes: the
 * later one is still found once the longer one fails. */
static void test_match_inside_a_failed_longer_one(void **state)
{
    (void)state;
    pattern p[] = {{"abcdefgh", 8, "[A]"}, {"abcdefghijklmnop", 16, "[L]"}, {"ijklm", 5, "[I]"}};
    shx_acr *a = build(p, 3);
    for (size_t chunk = 0; chunk <= 5; chunk++) {
        shx_buf out = SHX_BUF_INIT;
        through(a, "abcdefghijklmX", 14, chunk, &out, NULL);
        expect(&out, "[A][I]X");
        shx_buf_free(&out);
    }
    shx_acr_free(a);
}

/* Random pattern sets over a small alphabet (many overlaps and prefixes)
 * against the reference, in random chunks. */
static void test_random_against_reference(void **state)
{
    (void)state;
    for (int round = 0; round < 3000; round++) {
        pattern p[12];
        size_t np = 1 + rng_below(12);
        /* every other round all patterns have four bytes or more: the
         * automaton then skips what starts none */
        size_t min_len = round % 2 ? 4 : 1;
        for (size_t k = 0; k < np; k++) {
            p[k].len = min_len + rng_below(min_len == 4 ? 12 : 8);
            for (size_t i = 0; i < p[k].len; i++)
                p[k].text[i] = (char)('a' + rng_below(3));
            snprintf(p[k].repl, sizeof p[k].repl, "<%zu>", k);
        }
        char in[300];
        size_t len = rng_below(sizeof in);
        for (size_t i = 0; i < len; i++)
            in[i] = (char)('a' + rng_below(4));
        shx_acr *a = build(p, np);
        shx_buf want = SHX_BUF_INIT, got = SHX_BUF_INIT;
        reference(p, np, in, len, &want);
        through(a, in, len, (size_t)(round % 3 == 0 ? 0 : round % 7 + 1), &got, NULL);
        const char *g = got.data ? got.data : "", *w = want.data ? want.data : "";
        if (got.len != want.len || memcmp(g, w, got.len) != 0)
            fail_msg("round %d: got \"%.*s\", want \"%.*s\" for \"%.*s\"", round, (int)got.len,
                     g, (int)want.len, w, (int)len, in);
        shx_buf_free(&want);
        shx_buf_free(&got);
        shx_acr_free(a);
    }
}

/* A thousand secrets over a long output: one pass, and every one found. */
static void test_many_secrets(void **state)
{
    (void)state;
    enum { N = 1000 };
    shx_acr *a = shx_acr_new();
    assert_non_null(a);
    char (*secret)[24] = malloc(N * sizeof *secret);
    assert_non_null(secret);
    for (int k = 0; k < N; k++) {
        snprintf(secret[k], sizeof secret[k], "tok%04d-%08llx", k,
                 (unsigned long long)(rng_next() & 0xffffffffu));
        char repl[32];
        snprintf(repl, sizeof repl, "[R%d]", k);
        assert_int_equal(shx_acr_add(a, secret[k], strlen(secret[k]), repl, strlen(repl)), 0);
    }
    assert_int_equal(shx_acr_build(a), 0);
    assert_int_equal(shx_acr_count(a), N);
    shx_buf in = SHX_BUF_INIT, want = SHX_BUF_INIT, got = SHX_BUF_INIT;
    for (int line = 0; line < 20000; line++) {
        int k = (int)rng_below(N);
        assert_int_equal(shx_buf_printf(&in, "line %d: value=%s;\n", line, secret[k]), 0);
        assert_int_equal(shx_buf_printf(&want, "line %d: value=[R%d];\n", line, k), 0);
    }
    uint64_t n;
    through(a, in.data, in.len, 65536, &got, &n);
    assert_int_equal(n, 20000);
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.data, want.data, got.len);
    shx_buf_free(&in);
    shx_buf_free(&want);
    shx_buf_free(&got);
    free(secret);
    shx_acr_free(a);
}

static void test_bad_patterns(void **state)
{
    (void)state;
    shx_acr *a = shx_acr_new();
    assert_int_equal(shx_acr_add(a, "", 0, "x", 1), -1);
    assert_int_equal(shx_acr_add(a, "same", 4, "[1]", 3), 0);
    assert_int_equal(shx_acr_add(a, "same", 4, "[2]", 3), 0); /* the first stays */
    assert_int_equal(shx_acr_count(a), 1);
    assert_int_equal(shx_acr_build(a), 0);
    assert_int_equal(shx_acr_add(a, "late", 4, "x", 1), -1); /* built: closed */
    shx_buf out = SHX_BUF_INIT;
    through(a, "same", 4, 1, &out, NULL);
    expect(&out, "[1]");
    shx_buf_free(&out);
    shx_acr_free(a);
}

/* ---- key shapes and PEM blocks ---- */

static void scan(unsigned which, const char *in, size_t chunk, shx_buf *out, uint64_t *n)
{
    shx_keyscan k;
    shx_keyscan_init(&k, which);
    size_t len = strlen(in), i = 0;
    while (i < len) {
        size_t c = chunk ? chunk : 1 + rng_below(7);
        if (c > len - i)
            c = len - i;
        assert_int_equal(shx_keyscan_feed(&k, in + i, c, out), 0);
        i += c;
    }
    assert_int_equal(shx_keyscan_finish(&k, out), 0);
    if (n)
        *n = k.replaced;
    shx_keyscan_free(&k);
}

static void test_key_shapes(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"token ghp_0123456789abcdefghijklmnopqrstuvwxyz end",
         "token [REDACTED:GITHUB_TOKEN] end"},
        {"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
         "[REDACTED:GITHUB_TOKEN]"},
        {"key=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD\n",
         "key=[REDACTED:ANTHROPIC_API_KEY]\n"},
        {"OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx\n",
         "OPENAI_API_KEY=[REDACTED:OPENAI_API_KEY]\n"},
        {"id AKIAIOSFODNN7EXAMPLE.", "id [REDACTED:AWS_ACCESS_KEY_ID]."},
        {"xoxb-123456789012-abcdefghij", "[REDACTED:SLACK_TOKEN]"},
        /* not keys: too short, or the prefix is inside a word */
        {"risk-taking task-oriented desk-abcdefghijklmnopqrstuvwxyz",
         "risk-taking task-oriented desk-abcdefghijklmnopqrstuvwxyz"},
        {"ghp_short sk-tooshort AKIA123", "ghp_short sk-tooshort AKIA123"},
        {"git status; grep -r something .", "git status; grep -r something ."},
        /* sk-ant- too short for itself is still long enough for sk-, and
         * named as what it is, not as an OpenAI key */
        {"sk-ant-abcdefghijklmnopqrstu", "[REDACTED:ANTHROPIC_API_KEY]"},
        {"key=sk-ant-abcdefghijklmnopqrstuvwx.", "key=[REDACTED:ANTHROPIC_API_KEY]."},
        {"sk-ant-abcdefghijklmno sk-ant-x", "sk-ant-abcdefghijklmno sk-ant-x"}, /* too short */
        {"", ""},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t chunk = 0; chunk <= 3; chunk++) {
            shx_buf out = SHX_BUF_INIT;
            scan(SHX_KEYSCAN_TOKENS, cases[c][0], chunk, &out, NULL);
            expect(&out, cases[c][1]);
            shx_buf_free(&out);
        }
}

static void test_pem_blocks(void **state)
{
    (void)state;
    const char *key = "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
                      "QyNTUxOQAAACBm\n-----END OPENSSH PRIVATE KEY-----\nafter\n";
    const char *crlf = "-----BEGIN RSA PRIVATE KEY-----\r\nMIIEpAIBAAKCAQEA\r\n"
                       "-----END RSA PRIVATE KEY-----\r\nok";
    const char *public_key = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYI\n"
                             "-----END PUBLIC KEY-----\n";
    const char *no_end = "a\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\nmore\n";
    for (size_t chunk = 0; chunk <= 5; chunk++) {
        shx_buf out = SHX_BUF_INIT;
        uint64_t n;
        scan(SHX_KEYSCAN_PEM, key, chunk, &out, &n);
        expect(&out, "before\n[REDACTED:PRIVATE_KEY]\nafter\n");
        assert_int_equal(n, 1);
        shx_buf_clear(&out);
        scan(SHX_KEYSCAN_PEM, crlf, chunk, &out, NULL);
        expect(&out, "[REDACTED:PRIVATE_KEY]\r\nok"); /* what follows the END stays */
        shx_buf_clear(&out);
        scan(SHX_KEYSCAN_PEM | SHX_KEYSCAN_TOKENS, public_key, chunk, &out, &n);
        expect(&out, public_key);
        assert_int_equal(n, 0);
        shx_buf_clear(&out);
        scan(SHX_KEYSCAN_PEM, no_end, chunk, &out, NULL);
        expect(&out, "a\n[REDACTED:PRIVATE_KEY]");
        shx_buf_free(&out);
    }
}

/* Ordinary text goes through both stages unchanged, in any chunks. */
static void test_shapes_leave_text_alone(void **state)
{
    (void)state;
    shx_buf in = SHX_BUF_INIT;
    for (int i = 0; i < 3000; i++) {
        char c = (char)(" \n-_gsAxkph0123456789abcdefghijklmnopqrstuvwxyz\r\t"[rng_below(48)]);
        assert_int_equal(shx_buf_putc(&in, c), 0);
    }
    /* no run of token bytes long enough to be a key */
    for (size_t i = 0, run = 0; i < in.len; i++) {
        char c = in.data[i];
        int tok = c == '-' || c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                  (c >= 'A' && c <= 'Z');
        run = tok ? run + 1 : 0;
        if (run == 12) {
            in.data[i] = ' ';
            run = 0;
        }
    }
    for (size_t chunk = 0; chunk <= 2; chunk++) {
        shx_buf out = SHX_BUF_INIT;
        scan(SHX_KEYSCAN_PEM | SHX_KEYSCAN_TOKENS, in.data, chunk, &out, NULL);
        assert_int_equal(out.len, in.len);
        assert_memory_equal(out.data, in.data, in.len);
        shx_buf_free(&out);
    }
    shx_buf_free(&in);
}

/* ---- the sets and the stage ---- */

static void redact_all(shx_redact_set *set, const char *in, size_t chunk, shx_buf *out,
                       uint64_t *count)
{
    shx_redactor r;
    shx_redactor_init(&r, set);
    size_t len = strlen(in), i = 0;
    while (i < len) {
        size_t c = chunk ? chunk : 1 + rng_below(5);
        if (c > len - i)
            c = len - i;
        assert_int_equal(shx_redactor_feed(&r, in + i, c, out), 0);
        i += c;
    }
    assert_int_equal(shx_redactor_finish(&r, out), 0);
    if (count)
        *count = shx_redactor_count(&r);
    shx_redactor_free(&r);
}

static void test_sets_from_env_and_values(void **state)
{
    (void)state;
    shx_redact_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    assert_int_equal(shx_secrets_add(&cfg.values, "DB", "p4ssw0rd!", 9), 0);
    assert_int_equal(shx_redact_cfg_set_globs(&cfg, NULL, 0), 0); /* the defaults */
    const char *env[] = {"GITHUB_TOKEN=abcdefgh12345678",
                         "api_key=lowercase-name-value", /* globs ignore case */
                         "SHORT_TOKEN=1234567",          /* under 8 bytes: not taken */
                         "PATH=/usr/bin:/bin",
                         "MY_PASSWORD_FILE=/etc/secret/path",
                         "weird name\x01_KEY=value-with-odd-name",
                         NULL};
    shx_redact_set *set = NULL;
    assert_int_equal(shx_redact_set_for(&cfg, env, 0, NULL, &set), 0);
    assert_non_null(set);
    shx_buf out = SHX_BUF_INIT;
    uint64_t n;
    redact_all(set, "t=abcdefgh12345678 k=lowercase-name-value s=1234567 p=p4ssw0rd! "
                    "f=/etc/secret/path o=value-with-odd-name /usr/bin:/bin",
               0, &out, &n);
    expect(&out, "t=[REDACTED:GITHUB_TOKEN] k=[REDACTED:api_key] s=1234567 p=[REDACTED:DB] "
                 "f=[REDACTED:MY_PASSWORD_FILE] o=[REDACTED:SECRET] /usr/bin:/bin");
    assert_int_equal(n, 5);
    /* nothing changed: the same set again */
    shx_redact_set *again = NULL;
    assert_int_equal(shx_redact_set_for(&cfg, env, 0, NULL, &again), 0);
    assert_ptr_equal(again, set);
    shx_redact_set_release(again);
    /* a run's own value: a new set */
    shx_secrets own = {0};
    assert_int_equal(shx_secrets_add(&own, "RUN", "run-only-value", 14), 0);
    shx_redact_set *with_own = NULL;
    assert_int_equal(shx_redact_set_for(&cfg, env, 0, &own, &with_own), 0);
    assert_ptr_not_equal(with_own, set);
    shx_buf_clear(&out);
    redact_all(with_own, "x run-only-value p4ssw0rd!", 1, &out, NULL);
    expect(&out, "x [REDACTED:RUN] [REDACTED:DB]");
    shx_redact_set_release(with_own);
    shx_redact_set_release(set);
    shx_secrets_free(&own);
    /* env off, no values, no shapes: no set at all */
    shx_redact_cfg_free(&cfg);
    memset(&cfg, 0, sizeof cfg);
    set = (shx_redact_set *)&cfg; /* must be overwritten */
    assert_int_equal(shx_redact_set_for(&cfg, env, 0, NULL, &set), 0);
    assert_null(set);
    /* a run asking for its own env with the session's globs off: the defaults */
    assert_int_equal(shx_redact_set_for(&cfg, env, 1, NULL, &set), 0);
    assert_non_null(set);
    shx_buf_clear(&out);
    redact_all(set, "abcdefgh12345678", 3, &out, NULL);
    expect(&out, "[REDACTED:GITHUB_TOKEN]");
    shx_redact_set_release(set);
    shx_redact_cfg_free(&cfg);
    shx_buf_free(&out);
}

static void test_values_then_shapes(void **state)
{
    (void)state;
    shx_redact_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    /* a registered value that is itself key-shaped gets its own name */
    assert_int_equal(shx_secrets_add(&cfg.values, "MINE", "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 40),
                     0);
    cfg.shapes = SHX_KEYSCAN_TOKENS | SHX_KEYSCAN_PEM;
    shx_redact_set *set = NULL;
    assert_int_equal(shx_redact_set_for(&cfg, NULL, 0, NULL, &set), 0);
    for (size_t chunk = 0; chunk <= 7; chunk++) {
        shx_buf out = SHX_BUF_INIT;
        uint64_t n;
        redact_all(set, "a ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n",
                   chunk, &out, &n);
        expect(&out, "a [REDACTED:MINE] b [REDACTED:GITHUB_TOKEN]\n");
        assert_int_equal(n, 2);
        shx_buf_free(&out);
    }
    shx_redact_set_release(set);
    shx_redact_cfg_free(&cfg);
}

/* ---- shapes wherever they stand, in any chunks ---- */

static void feed_piece(shx_redactor *r, const char *p, size_t n, shx_buf *out)
{
    if (n)
        assert_int_equal(shx_redactor_feed(r, p, n, out), 0);
}

/*
 * `in` through a stage that hides every shape: fed whole, in two pieces cut
 * at every byte, and byte by byte. Each time the output is exactly `want`
 * (so the text around the secret is kept as it was) and holds no trace of
 * `body`, a part of the secret that only the secret has.
 */
static void every_split(const char *in, const char *want, const char *body)
{
    shx_redact_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.shapes = SHX_KEYSCAN_TOKENS | SHX_KEYSCAN_PEM;
    shx_redact_set *set = NULL;
    assert_int_equal(shx_redact_set_for(&cfg, NULL, 0, NULL, &set), 0);
    size_t len = strlen(in);
    /* cut 0: whole; 1 to len - 1: two pieces; len + 1: byte by byte */
    for (size_t cut = 0; cut <= len + 1; cut++) {
        if (cut == len && cut)
            continue; /* the same as whole */
        shx_redactor r;
        shx_redactor_init(&r, set);
        shx_buf out = SHX_BUF_INIT;
        if (cut <= len) {
            feed_piece(&r, in, cut, &out);
            feed_piece(&r, in + cut, len - cut, &out);
        } else {
            for (size_t i = 0; i < len; i++)
                feed_piece(&r, in + i, 1, &out);
        }
        assert_int_equal(shx_redactor_finish(&r, &out), 0);
        const char *got = out.data ? out.data : "";
        if (out.len != strlen(want) || memcmp(got, want, out.len) != 0)
            fail_msg("cut %zu of %zu: got \"%.*s\", expected \"%s\"", cut, len, (int)out.len, got,
                     want);
        if (body && memmem(got, out.len, body, strlen(body)))
            fail_msg("cut %zu of %zu: \"%s\" left in \"%.*s\"", cut, len, body, (int)out.len, got);
        shx_redactor_free(&r);
        shx_buf_free(&out);
    }
    shx_redact_set_release(set);
    shx_redact_cfg_free(&cfg);
}

/* Private keys not at the start of a line: indented in YAML (a Kubernetes
 * Secret's stringData), after a diff's '+', tab-indented with CRLF. Text
 * that only names the boundary (code, documentation) stays as it is. */
static void test_pem_indented(void **state)
{
    (void)state;
    every_split("apiVersion: v1\nkind: Secret\nstringData:\n  tls.key: |\n"
                "    -----BEGIN RSA PRIVATE KEY-----\n"
                "    MIIEpAIBAAKCAQEAyamlSecretBodyLine1\n"
                "    Zm9vYmFyeWFtbFNlY3JldEJvZHkyCg==\n"
                "    -----END RSA PRIVATE KEY-----\n"
                "  tls.crt: plain\n",
                "apiVersion: v1\nkind: Secret\nstringData:\n  tls.key: |\n"
                "    [REDACTED:PRIVATE_KEY]\n"
                "  tls.crt: plain\n",
                "yamlSecretBody");
    every_split("+++ b/deploy/key.pem\n@@ -0,0 +1,3 @@\n"
                "+-----BEGIN EC PRIVATE KEY-----\n"
                "+MHcCAQEEIBdiffSecretBody0123456789abcdef\n"
                "+-----END EC PRIVATE KEY-----\n",
                "+++ b/deploy/key.pem\n@@ -0,0 +1,3 @@\n+[REDACTED:PRIVATE_KEY]\n",
                "diffSecretBody");
    every_split("\t-----BEGIN OPENSSH PRIVATE KEY-----\r\n"
                "\tb3BlbnNzaC1rZXktdjEAAAAAtabSecretBody\r\n"
                "\t-----END OPENSSH PRIVATE KEY-----\r\nnext\r\n",
                "\t[REDACTED:PRIVATE_KEY]\r\nnext\r\n", "tabSecretBody");
    /* a dash before the boundary, or a boundary that is no key's just before one */
    every_split("------BEGIN PRIVATE KEY-----\nMIIEvQIBADANdashSecretBody\n"
                "-----END PRIVATE KEY-----",
                "-[REDACTED:PRIVATE_KEY]", "dashSecretBody");
    every_split("-----BEGIN X-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANnextSecretBody\n"
                "-----END PRIVATE KEY-----.",
                "-----BEGIN X[REDACTED:PRIVATE_KEY].", "nextSecretBody");
    /* named, not printed: no key follows the boundary */
    const char *named[] = {
        "    if (strstr(line, \"-----BEGIN RSA PRIVATE KEY-----\"))\n        return 1;\n",
        "assert pem.startswith(\"-----BEGIN PRIVATE KEY-----\\n\")\nok\n",
        "docs: from a `-----BEGIN ... PRIVATE KEY-----` line to its `-----END ` line\n",
        "  -----BEGIN PUBLIC KEY-----\n  MFkwEwYHKoZIzj0CAQYI\n  -----END PUBLIC KEY-----\n",
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        every_split(named[i], named[i], NULL);
}

/* Private keys inside a line, their line breaks written out: a JSON string
 * (a service-account key file, pretty and compact, and one escaped twice),
 * and the breaks turned into spaces (an unquoted `echo $KEY`). */
static void test_pem_in_one_line(void **state)
{
    (void)state;
    every_split("{\n  \"type\": \"service_account\",\n  \"project_id\": \"demo-project\",\n"
                "  \"private_key_id\": \"0123456789abcdef\",\n"
                "  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEF"
                "\\nAASCBKcwggSjjsonSecretBody01234567\\n-----END PRIVATE KEY-----\\n\",\n"
                "  \"client_email\": \"svc@demo-project.iam.gserviceaccount.com\"\n}\n",
                "{\n  \"type\": \"service_account\",\n  \"project_id\": \"demo-project\",\n"
                "  \"private_key_id\": \"0123456789abcdef\",\n"
                "  \"private_key\": \"[REDACTED:PRIVATE_KEY]\\n\",\n"
                "  \"client_email\": \"svc@demo-project.iam.gserviceaccount.com\"\n}\n",
                "jsonSecretBody");
    every_split("{\"type\":\"service_account\",\"private_key\":\"-----BEGIN PRIVATE KEY-----\\n"
                "MIIEvgIBADANcompactSecretBody\\n-----END PRIVATE KEY-----\\n\","
                "\"client_id\":\"1\"}",
                "{\"type\":\"service_account\",\"private_key\":\"[REDACTED:PRIVATE_KEY]\\n\","
                "\"client_id\":\"1\"}",
                "compactSecretBody");
    every_split("{\"data\":\"{\\\"key\\\":\\\"-----BEGIN RSA PRIVATE KEY-----\\\\n"
                "MIIEowIBAAKCtwiceSecretBody\\\\n-----END RSA PRIVATE KEY-----\\\\n\\\"}\"}",
                "{\"data\":\"{\\\"key\\\":\\\"[REDACTED:PRIVATE_KEY]\\\\n\\\"}\"}",
                "twiceSecretBody");
    every_split("KEY=-----BEGIN RSA PRIVATE KEY----- MIIEowIBAAKCspacedSecretBody "
                "-----END RSA PRIVATE KEY----- done\n",
                "KEY=[REDACTED:PRIVATE_KEY] done\n", "spacedSecretBody");
}

/* A key of every kind the scanner knows, in colour: an escape sequence just
 * before it (grep --color=always, tput's "ESC ( B", a hyperlink's OSC, a
 * stray ESC) or just after it. Codes around other words change nothing. */
static void test_tokens_in_colour(void **state)
{
    (void)state;
    static const char *const keys[][2] = {
        {"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv", "GITHUB_TOKEN"},
        {"ghp_0123456789abcdefghijklmnopqrstuvwxyz", "GITHUB_TOKEN"},
        {"gho_0123456789abcdefghijklmnopqrstuvwxyz", "GITHUB_TOKEN"},
        {"ghu_0123456789abcdefghijklmnopqrstuvwxyz", "GITHUB_TOKEN"},
        {"ghs_0123456789abcdefghijklmnopqrstuvwxyz", "GITHUB_TOKEN"},
        {"ghr_0123456789abcdefghijklmnopqrstuvwxyz", "GITHUB_TOKEN"},
        {"sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "ANTHROPIC_API_KEY"},
        {"sk-proj-abcdefghijklmnopqrstuvwx", "OPENAI_API_KEY"},
        {"AKIAIOSFODNN7EXAMPLE", "AWS_ACCESS_KEY_ID"},
        {"xoxa-123456789012-abcdefghij", "SLACK_TOKEN"},
        {"xoxb-123456789012-abcdefghij", "SLACK_TOKEN"},
        {"xoxp-123456789012-abcdefghij", "SLACK_TOKEN"},
    };
    /* the text before the key and after it */
    static const char *const around[][2] = {
        {"app.env:3:TOKEN=\033[01;31m\033[K", "\033[m\033[K\n"}, /* grep --color=always */
        {"\033[32m", "\033[0m done"},
        {"\033(B\033[m", ""},                                  /* tput sgr0, then the key */
        {"\033]8;;https://example.com/\033\\", "\033]8;;\033\\"}, /* a hyperlink's text */
        {"x \033", " y"},                                       /* a stray ESC */
        {"", "\033[0m"},
        {"\033[1;32m", ""},
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        /* what only the key has: its bytes past the prefix */
        const char *body = keys[k][0] + (keys[k][0][0] == 'A' ? 4 : 8);
        for (size_t a = 0; a < sizeof around / sizeof around[0]; a++) {
            char in[200], want[200];
            snprintf(in, sizeof in, "%s%s%s", around[a][0], keys[k][0], around[a][1]);
            snprintf(want, sizeof want, "%s[REDACTED:%s]%s", around[a][0], keys[k][1],
                     around[a][1]);
            every_split(in, want, body);
        }
    }
    const char *plain = "\033[1mrisk-taking\033[0m \033[31mdesk-abcdefghijklmnopqrstuvwxyz\033[m "
                        "\033[32mghp_short\033[0m \033[Kdone";
    every_split(plain, plain, NULL);
}

static void test_names(void **state)
{
    (void)state;
    assert_true(shx_redact_name_valid("GITHUB_TOKEN"));
    assert_true(shx_redact_name_valid("a1_"));
    assert_false(shx_redact_name_valid(""));
    assert_false(shx_redact_name_valid(NULL));
    assert_false(shx_redact_name_valid("has space"));
    assert_false(shx_redact_name_valid("close]bracket"));
    char longest[66];
    memset(longest, 'N', 65);
    longest[65] = '\0';
    assert_false(shx_redact_name_valid(longest));
    longest[64] = '\0';
    assert_true(shx_redact_name_valid(longest));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_and_split),
        cmocka_unit_test(test_prefix_of_another),
        cmocka_unit_test(test_overlaps_leftmost_first),
        cmocka_unit_test(test_match_inside_a_failed_longer_one),
        cmocka_unit_test(test_random_against_reference),
        cmocka_unit_test(test_many_secrets),
        cmocka_unit_test(test_bad_patterns),
        cmocka_unit_test(test_key_shapes),
        cmocka_unit_test(test_pem_blocks),
        cmocka_unit_test(test_shapes_leave_text_alone),
        cmocka_unit_test(test_sets_from_env_and_values),
        cmocka_unit_test(test_values_then_shapes),
        cmocka_unit_test(test_pem_indented),
        cmocka_unit_test(test_pem_in_one_line),
        cmocka_unit_test(test_tokens_in_colour),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
