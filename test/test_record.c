/*
 * test_record.c - the parser of the wrapper's record (lib/shell/record.c):
 * fields "key=value\0", any chunking, the last value of a key counting,
 * unknown keys skipped, malformed and cut-short fields not believed, and
 * the whole bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "shell/record.h"

static void feed_chunked(shx_record *r, const char *data, size_t len, size_t chunk)
{
    for (size_t i = 0; i < len; i += chunk)
        shx_record_feed(r, data + i, len - i < chunk ? len - i : chunk);
}

#define REC(s) s, sizeof s - 1

static void test_record_whole_and_chunked(void **state)
{
    (void)state;
    static const char in[] = "status=3\0cwd=/tmp/a b\n\0";
    for (size_t chunk = 1; chunk <= sizeof in; chunk++) {
        shx_record r;
        shx_record_init(&r);
        feed_chunked(&r, REC(in), chunk);
        assert_true(shx_record_usable(&r));
        assert_int_equal(r.has_status, 1);
        assert_int_equal(r.status, 3);
        assert_int_equal(r.has_cwd, 1);
        assert_string_equal(r.cwd.data, "/tmp/a b");
        assert_int_equal(r.fields, 2);
        assert_int_equal(r.malformed, 0);
        shx_record_free(&r);
    }
}

static void test_record_cwd_keeps_its_own_newlines(void **state)
{
    (void)state;
    shx_record r;
    shx_record_init(&r);
    shx_record_feed(&r, REC("cwd=/tmp/x\n\n\0"));
    assert_int_equal(r.cwd.len, 7);
    assert_memory_equal(r.cwd.data, "/tmp/x\n", 7);
    shx_record_free(&r);
}

static void test_record_last_wins_unknown_skipped(void **state)
{
    (void)state;
    shx_record r;
    shx_record_init(&r);
    shx_record_feed(&r, REC("cwd=/forged\n\0status=9\0env=A=1\0future_key=x\0status=0\0cwd=/real\n\0"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.cwd.data, "/real");
    assert_int_equal(r.fields, 6);
    assert_int_equal(r.malformed, 0);
    shx_record_free(&r);
}

static void test_record_hostile_fields(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "noequals", "=value", "Status=1", "sta tus=1", "9key=1", "status=", "status=256",
        "status=-1", "status=01", "status=1a", "cwd=/no/newline", "cwd=",
        "a_key_that_is_far_too_long_to_be_one=1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        shx_record r;
        shx_record_init(&r);
        shx_record_feed(&r, bad[i], strlen(bad[i]) + 1); /* with its NUL */
        assert_int_equal(r.malformed, 1);
        assert_int_equal(r.has_status, 0);
        assert_int_equal(r.has_cwd, 0);
        assert_true(shx_record_usable(&r));
        shx_record_free(&r);
    }
    /* status bounds that are fine */
    shx_record r;
    shx_record_init(&r);
    shx_record_feed(&r, REC("status=255\0"));
    assert_int_equal(r.status, 255);
    shx_record_feed(&r, REC("status=0\0"));
    assert_int_equal(r.status, 0);
    shx_record_free(&r);
}

static void test_record_cut_short(void **state)
{
    (void)state;
    shx_record r;
    shx_record_init(&r);
    shx_record_feed(&r, REC("status=2\0cwd=/somewhere\n"));
    assert_int_equal(r.has_status, 1);
    assert_int_equal(r.has_cwd, 0); /* no NUL: not a field */
    shx_record_free(&r);
}

static void test_record_bounded(void **state)
{
    (void)state;
    shx_record r;
    shx_record_init(&r);
    size_t chunk = 1 << 20;
    char *junk = malloc(chunk);
    assert_non_null(junk);
    memset(junk, 'x', chunk);
    for (size_t i = 0; i < SHX_RECORD_MAX / chunk; i++)
        shx_record_feed(&r, junk, chunk);
    assert_true(shx_record_usable(&r));
    assert_true(r.field.len <= SHX_RECORD_MAX);
    shx_record_feed(&r, junk, 1);
    assert_false(shx_record_usable(&r));
    assert_int_equal(r.field.cap, 0); /* what was held is given back */
    shx_record_feed(&r, REC("status=1\0"));
    assert_int_equal(r.has_status, 0);
    shx_record_free(&r);
    free(junk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_whole_and_chunked),
        cmocka_unit_test(test_record_cwd_keeps_its_own_newlines),
        cmocka_unit_test(test_record_last_wins_unknown_skipped),
        cmocka_unit_test(test_record_hostile_fields),
        cmocka_unit_test(test_record_cut_short),
        cmocka_unit_test(test_record_bounded),
    };
    return cmocka_run_group_tests_name("record", tests, NULL, NULL);
}
