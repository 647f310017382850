/*
 * test_json.c - the strict JSON parser and the writer (lib/shx/json.c): what is
 * accepted and rejected, error messages and offsets, limits, escapes, int64
 * exactness, round trips, and that the writer's output is always valid JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shx/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------
 * helpers
 * ------------------------------------------------------------------------ */

static int json_equal(const shx_json *a, const shx_json *b)
{
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case SHX_JSON_NULL: return 1;
    case SHX_JSON_BOOL: return a->boolean == b->boolean;
    case SHX_JSON_NUMBER:
    case SHX_JSON_STRING: return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    case SHX_JSON_ARRAY:
    case SHX_JSON_OBJECT:
        if (a->count != b->count)
            return 0;
        for (size_t i = 0; i < a->count; i++) {
            if (a->type == SHX_JSON_OBJECT &&
                (a->keys[i].len != b->keys[i].len ||
                 memcmp(a->keys[i].str, b->keys[i].str, a->keys[i].len) != 0))
                return 0;
            if (!json_equal(a->items[i], b->items[i]))
                return 0;
        }
        return 1;
    }
    return 0;
}

static shx_json *parse_ok(const char *text, size_t len)
{
    shx_json *v = NULL;
    shx_buf err = SHX_BUF_INIT;
    int rc = shx_json_parse(&v, text, len, NULL, &err);
    if (rc != SHEXEC_OK)
        fail_msg("rejected valid JSON <%.*s>: %s", (int)len, text, err.data ? err.data : "");
    assert_non_null(v);
    assert_null(err.data);
    shx_buf_free(&err);
    return v;
}

static shx_json *parse_str(const char *text)
{
    return parse_ok(text, strlen(text));
}

/* Parse, write, parse again: same tree; writing is a fixed point. */
static void check_round_trip(const char *text, size_t len)
{
    shx_json *v = parse_ok(text, len);
    shx_buf out = SHX_BUF_INIT;
    assert_int_equal(shx_json_write(&out, v), 0);
    shx_json *w = parse_ok(out.data, out.len);
    if (!json_equal(v, w))
        fail_msg("round trip changed <%.*s> -> <%s>", (int)len, text, out.data);
    shx_buf again = SHX_BUF_INIT;
    assert_int_equal(shx_json_write(&again, w), 0);
    assert_int_equal(again.len, out.len);
    assert_memory_equal(again.data, out.data, out.len);
    shx_buf_free(&again);
    shx_buf_free(&out);
    shx_json_free(w);
    shx_json_free(v);
}

/* Expect rejection; returns the message (caller frees). */
static char *parse_bad_lim(const char *text, size_t len, const shx_json_limits *lim)
{
    shx_json *v = (shx_json *)1;
    shx_buf err = SHX_BUF_INIT;
    int rc = shx_json_parse(&v, text, len, lim, &err);
    if (rc != SHEXEC_EINVAL)
        fail_msg("accepted invalid JSON <%.*s> (rc %d)", (int)(len > 80 ? 80 : len), text, rc);
    assert_null(v);
    assert_non_null(err.data);
    return shx_buf_steal(&err, NULL);
}

static long msg_offset(const char *msg)
{
    const char *prefix = "invalid JSON at byte ";
    if (strncmp(msg, prefix, strlen(prefix)) != 0)
        fail_msg("message has the wrong form: %s", msg);
    return strtol(msg + strlen(prefix), NULL, 10);
}

static char *repeat(const char *unit, size_t n, const char *middle, const char *tail_unit)
{
    size_t ul = strlen(unit), ml = strlen(middle), tl = strlen(tail_unit);
    char *s = malloc(n * (ul + tl) + ml + 1);
    assert_non_null(s);
    char *p = s;
    for (size_t i = 0; i < n; i++, p += ul)
        memcpy(p, unit, ul);
    memcpy(p, middle, ml);
    p += ml;
    for (size_t i = 0; i < n; i++, p += tl)
        memcpy(p, tail_unit, tl);
    *p = '\0';
    return s;
}

/* ------------------------------------------------------------------------
 * valid documents
 * ------------------------------------------------------------------------ */

#define T(s) {s, sizeof(s) - 1}
static const struct {
    const char *text;
    size_t len;
} valid_docs[] = {
    T("0"), T("-0"), T("1"), T("-1"), T("1.5"), T("-1.5e-7"), T("1e10"), T("1E+2"), T("1e-2"),
    T("-0.0e-0"), T("0.0"), T("123456789012345678901234567890"), T("1e999"), T("true"),
    T("false"), T("null"), T("\"\""), T("\"a\""), T("[]"), T("{}"), T("[[]]"), T("[{}]"),
    T(" \t\n\r[ 1 , 2 ]\r\n"), T("{\"a\":{\"b\":[1,{\"c\":null}]}}"),
    T("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\""), T("\"\\u0000\""), T("\"a\\u0000b\""),
    T("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""), /* é € 😀 */
    T("\"\xef\xbf\xbf\""),                         /* U+FFFF: a noncharacter, still valid */
    T("\"\xf4\x8f\xbf\xbf\""),                     /* U+10FFFF */
    T("\"\xed\x9f\xbf\xee\x80\x80\""),             /* U+D7FF U+E000, around the surrogates */
    T("\"\x7f\""), T("\"\xe2\x80\xa8\""),          /* DEL, U+2028 */
    T("{\"\":0}"), T("{\"a\":1,\"b\":1}"), T("{\"a\":{\"a\":1}}"),
    T("{\"a\":1,\"a\\u0000\":2}"), T("{\"k\":1,\"k1\":2,\"k10\":3}"),
    T("[\"\\ud83d\\ude00\",\"\\uD83D\\uDE00\"]"), T("{\"command\":\"ls -la\",\"timeout\":30}"),
    T("[1,[2,[3,[4]]]]"), T("[0,-0,0.0,1e0,1E-0,10.01]"), T("{\"a\" : 1 , \"b\" : [ ] }"),
    T("[true,false,null,\"\",[],{}]"), T("\"\\u00e9\\u20ac\\uFFFF\\u007f\\u001f\""),
    T("\"/ \\\\ \\/\""),
};

static void test_valid_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof valid_docs / sizeof valid_docs[0]; i++)
        check_round_trip(valid_docs[i].text, valid_docs[i].len);
}

static void test_write_compact_exact(void **state)
{
    (void)state;
    shx_json *v = parse_str(" { \"a\" : [1, 2.50, -0, 1E+3, true, null, \"x\\ny\", {} ,[ ]] ,"
                            " \"\\u00e9\":\"\\u00e9\\u0001\\/\" } ");
    shx_buf out = SHX_BUF_INIT;
    assert_int_equal(shx_json_write(&out, v), 0);
    /* numbers keep their exact text; '/' need not be escaped */
    assert_string_equal(out.data, "{\"a\":[1,2.50,-0,1E+3,true,null,\"x\\ny\",{},[]],"
                                  "\"\xc3\xa9\":\"\xc3\xa9\\u0001/\"}");
    /* a subtree writes on its own, appended */
    assert_int_equal(shx_json_write(&out, shx_json_get(v, "a")), 0);
    assert_non_null(strstr(out.data, "}[1,2.50,"));
    shx_buf_free(&out);
    shx_json_free(v);
}

/* ------------------------------------------------------------------------
 * invalid documents: each strictness rule, with the offset and the reason
 * ------------------------------------------------------------------------ */

#define B(s, off, what) {s, sizeof(s) - 1, off, what}
static const struct {
    const char *text;
    size_t len;
    long off;
    const char *what;
} invalid_docs[] = {
    /* structure */
    B("", 0, "expected a value, found end of input"),
    B("   ", 3, "expected a value, found end of input"),
    B("[", 1, "expected a value, found end of input"),
    B("{", 1, "expected a string key or '}', found end of input"),
    B("{\"a\":", 5, "expected a value, found end of input"),
    B("[1,2", 4, "expected ',' or ']', found end of input"),
    B("[1 2]", 3, "expected ',' or ']', found '2'"),
    B("{\"a\":1 \"b\":2}", 7, "expected ',' or '}', found '\"'"),
    B("{\"a\" 1}", 5, "expected ':' after an object key, found '1'"),
    B("{\"a\"}", 4, "expected ':' after an object key, found '}'"),
    B("{a:1}", 1, "expected a string key or '}', found 'a'"),
    B("{1:1}", 1, "expected a string key or '}', found '1'"),
    B("{,}", 1, "expected a string key or '}', found ','"),
    B("[,1]", 1, "expected a value, found ','"),
    B("[1,,2]", 3, "expected a value, found ','"),
    B("]", 0, "expected a value, found ']'"),
    B("{]", 1, "expected a string key or '}', found ']'"),
    B("[}", 1, "expected a value, found '}'"),
    B("{\"a\":1]", 6, "expected ',' or '}', found ']'"),
    B("[\"a\":1]", 4, "expected ',' or ']', found ':'"),
    B("{\"a\":1:2}", 6, "expected ',' or '}', found ':'"),
    B("[truefalse]", 5, "expected ',' or ']', found 'f'"),
    /* trailing commas */
    B("[1,]", 3, "expected a value, found ']'"),
    B("[\"a\",]", 5, "expected a value, found ']'"),
    B("[1,\n2,\n]", 7, "expected a value, found ']'"),
    B("{\"a\":1,}", 7, "expected a string key, found '}'"),
    /* exactly one value */
    B("1 2", 2, "expected end of input after the value, found '2'"),
    B("[1]]", 3, "expected end of input after the value, found ']'"),
    B("[] []", 3, "expected end of input after the value, found '['"),
    B("123abc", 3, "expected end of input after the value, found 'a'"),
    B("\"a\" \0", 4, "expected end of input after the value, found byte 0x00"),
    B("1\0", 1, "found byte 0x00"),
    B("\0", 0, "expected a value, found byte 0x00"),
    /* comments, quotes, literals */
    B("[1]// c", 3, "expected end of input after the value, found '/'"),
    B("/* c */ 1", 0, "expected a value, found '/'"),
    B("{'a':1}", 1, "expected a string key or '}', found '''"),
    B("['a']", 1, "expected a value, found '''"),
    B("NaN", 0, "expected a value, found 'N'"),
    B("Infinity", 0, "expected a value, found 'I'"),
    B("-Infinity", 1, "expected a digit after '-', found 'I'"),
    B("[nan]", 1, "invalid literal (expected 'null')"),
    B("tru", 0, "invalid literal (expected 'true')"),
    B("nul", 0, "invalid literal (expected 'null')"),
    B("[fals]", 1, "invalid literal (expected 'false')"),
    B("True", 0, "expected a value, found 'T'"),
    B("FALSE", 0, "expected a value, found 'F'"),
    B("undefined", 0, "expected a value, found 'u'"),
    /* numbers */
    B("01", 0, "leading zeros are not allowed"),
    B("-01", 0, "leading zeros are not allowed"),
    B("[00]", 1, "leading zeros are not allowed"),
    B("{\"a\":01}", 5, "leading zeros are not allowed"),
    B("+1", 0, "expected a value, found '+'"),
    B(".5", 0, "expected a value, found '.'"),
    B("-.5", 1, "expected a digit after '-', found '.'"),
    B("1.", 2, "expected a digit after '.', found end of input"),
    B("1.e3", 2, "expected a digit after '.', found 'e'"),
    B("1e", 2, "expected a digit in the exponent, found end of input"),
    B("1e+", 3, "expected a digit in the exponent, found end of input"),
    B("1.0e+", 5, "expected a digit in the exponent"),
    B("[1.5E]", 5, "expected a digit in the exponent, found ']'"),
    B("-", 1, "expected a digit after '-', found end of input"),
    B("--1", 1, "expected a digit after '-', found '-'"),
    B("[-]", 2, "expected a digit after '-', found ']'"),
    B("0x1F", 1, "expected end of input after the value, found 'x'"),
    B("[1e5.5]", 4, "expected ',' or ']', found '.'"),
    /* strings: termination and control characters */
    B("\"abc", 0, "unterminated string"),
    B("\"\\u0000", 0, "unterminated string"),
    B("\"\\\"", 0, "unterminated string"),
    B("\"\\", 0, "unterminated string"),
    B("\"a\nb\"", 2, "control character U+000A in string must be escaped"),
    B("\"\t\"", 1, "control character U+0009 in string must be escaped"),
    B("\"\x01\"", 1, "control character U+0001"),
    B("\"\0\"", 1, "control character U+0000"),
    B("\"\x1f\"", 1, "control character U+001F"),
    /* escapes */
    B("\"\\x41\"", 1, "invalid escape '\\' followed by 'x'"),
    B("\"\\a\"", 1, "invalid escape '\\' followed by 'a'"),
    B("\"\\'\"", 1, "invalid escape '\\' followed by '''"),
    B("\"\\U0041\"", 1, "invalid escape '\\' followed by 'U'"),
    B("\"\\u12\"", 1, "\\u must be followed by 4 hex digits"),
    B("\"\\u12G4\"", 1, "\\u must be followed by 4 hex digits"),
    B("\"\\u", 1, "\\u must be followed by 4 hex digits"),
    /* surrogate escapes */
    B("\"\\uD800\"", 1, "unpaired surrogate \\uD800"),
    B("\"\\uDC00\"", 1, "unpaired surrogate \\uDC00"),
    B("\"\\udbff\"", 1, "unpaired surrogate \\uDBFF"),
    B("\"\\uD800\\u0041\"", 1, "unpaired surrogate \\uD800"),
    B("\"\\uD800\\uD800\"", 1, "unpaired surrogate \\uD800"),
    B("\"\\uD800x\"", 1, "unpaired surrogate \\uD800"),
    B("\"\\uDE00\\uD83D\"", 1, "unpaired surrogate \\uDE00"),
    B("\"ab\\uD83D\\uDE0\"", 3, "unpaired surrogate \\uD83D"),
    /* UTF-8 in strings */
    B("\"\xc0\x80\"", 1, "invalid UTF-8 in string (byte 0xC0)"),     /* overlong NUL */
    B("\"\xc1\xbf\"", 1, "invalid UTF-8 in string (byte 0xC1)"),     /* overlong */
    B("\"\xe0\x80\x80\"", 1, "invalid UTF-8 in string (byte 0xE0)"), /* overlong */
    B("\"\xf0\x80\x80\x80\"", 1, "invalid UTF-8 in string (byte 0xF0)"),
    B("\"\xed\xa0\x80\"", 1, "invalid UTF-8 in string (byte 0xED)"), /* U+D800 */
    B("\"\xed\xbf\xbf\"", 1, "invalid UTF-8 in string (byte 0xED)"), /* U+DFFF */
    B("\"\xf4\x90\x80\x80\"", 1, "invalid UTF-8 in string (byte 0xF4)"), /* U+110000 */
    B("\"\xf5\x80\x80\x80\"", 1, "invalid UTF-8 in string (byte 0xF5)"),
    B("\"\xff\"", 1, "invalid UTF-8 in string (byte 0xFF)"),
    B("\"\x80\"", 1, "invalid UTF-8 in string (byte 0x80)"),         /* lone continuation */
    B("\"\xc3\"", 1, "invalid UTF-8 in string (byte 0xC3)"),         /* truncated */
    B("\"\xe2\x82\"", 1, "invalid UTF-8 in string (byte 0xE2)"),     /* truncated */
    B("\"a\xc3", 2, "invalid UTF-8 in string (byte 0xC3)"),          /* truncated by the end */
    B("\"\xe2\x82\xac\x80\"", 4, "invalid UTF-8 in string (byte 0x80)"),
    B("\"\\u00e9\xe9\"", 7, "invalid UTF-8 in string (byte 0xE9)"),   /* Latin-1 */
    /* bytes outside strings, whitespace */
    B("\xef\xbb\xbf{}", 0, "expected a value, found byte 0xEF"), /* a BOM */
    B("[\xc3\xa9]", 1, "expected a value, found byte 0xC3"),
    B("[1] \xc2\xa0", 4, "expected end of input after the value, found byte 0xC2"),
    B("\xc2\xa0" "1", 0, "expected a value, found byte 0xC2"),
    B("\f1", 0, "expected a value, found byte 0x0C"),
    B("[1,\v2]", 3, "expected a value, found byte 0x0B"),
    /* duplicate keys, after decoding, the first repetition named */
    B("{\"a\":1,\"a\":2}", 7, "duplicate key \"a\""),
    B("{\"a\":1,\"\\u0061\":2}", 7, "duplicate key \"a\""),
    B("{\"x\":{\"a\":1,\"b\":2,\"a\":3}}", 18, "duplicate key \"a\""),
    B("{\"a\":1,\"b\":2,\"a\":3,\"b\":4}", 13, "duplicate key \"a\""),
    B("{\"\":1,\"\":2}", 6, "duplicate key \"\""),
    B("{\"a\\u0000\":1,\"a\\u0000\":2}", 13, "duplicate key \"a\\u0000\""),
};

static void test_invalid_documents(void **state)
{
    (void)state;
    size_t n = sizeof invalid_docs / sizeof invalid_docs[0];
    assert_true(n >= 40);
    for (size_t i = 0; i < n; i++) {
        char *msg = parse_bad_lim(invalid_docs[i].text, invalid_docs[i].len, NULL);
        long off = msg_offset(msg);
        if (off != invalid_docs[i].off || !strstr(msg, invalid_docs[i].what))
            fail_msg("doc %zu: want byte %ld and \"%s\", got: %s", i, invalid_docs[i].off,
                     invalid_docs[i].what, msg);
        /* one printable line: safe to hand back to a model or a log */
        for (const char *c = msg; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
                fail_msg("doc %zu: message has byte 0x%02x: %s", i, (unsigned char)*c, msg);
        free(msg);
    }
}

static void test_error_message_exact(void **state)
{
    (void)state;
    shx_json *v = NULL;
    shx_buf err = SHX_BUF_INIT;
    /* appended after what the caller already has */
    shx_buf_puts(&err, "arguments: ");
    assert_int_equal(shx_json_parse(&v, "{\"a\":1 \"b\":2}", 13, NULL, &err), SHEXEC_EINVAL);
    assert_string_equal(err.data,
                        "arguments: invalid JSON at byte 7: expected ',' or '}', found '\"'");
    shx_buf_clear(&err);
    assert_int_equal(shx_json_parse(&v, "", 0, NULL, &err), SHEXEC_EINVAL);
    assert_string_equal(err.data, "invalid JSON at byte 0: expected a value, found end of input");
    shx_buf_clear(&err);
    assert_int_equal(shx_json_parse(&v, "{\"command\":\"ls\",\"command\":\"rm -rf /\"}", 37, NULL,
                                    &err),
                     SHEXEC_EINVAL);
    assert_string_equal(err.data, "invalid JSON at byte 16: duplicate key \"command\"");
    shx_buf_clear(&err);
    assert_int_equal(shx_json_parse(&v, "[1,]", 4, NULL, &err), SHEXEC_EINVAL);
    assert_string_equal(err.data, "invalid JSON at byte 3: expected a value, found ']'");
    shx_buf_free(&err);
    /* err is optional */
    assert_int_equal(shx_json_parse(&v, "[1,]", 4, NULL, NULL), SHEXEC_EINVAL);
    assert_null(v);
}

/* A hostile key in a duplicate-key message is escaped and cut short. */
static void test_error_message_hostile_key(void **state)
{
    (void)state;
    shx_buf doc = SHX_BUF_INIT;
    shx_buf_puts(&doc, "{\"");
    for (int i = 0; i < 100; i++)
        shx_buf_puts(&doc, "\xc3\xa9\\n");
    shx_buf_puts(&doc, "\":1,\"");
    size_t second = doc.len - 1;
    for (int i = 0; i < 100; i++)
        shx_buf_puts(&doc, "\xc3\xa9\\n");
    shx_buf_puts(&doc, "\":2}");
    char *msg = parse_bad_lim(doc.data, doc.len, NULL);
    assert_int_equal(msg_offset(msg), (long)second);
    assert_non_null(strstr(msg, "duplicate key \"\xc3\xa9\\n\xc3\xa9\\n"));
    assert_null(strchr(msg, '\n'));
    assert_true(strlen(msg) < 200);
    assert_string_equal(msg + strlen(msg) - 4, "\"...");
    /* the message itself is valid UTF-8: it survives the strict parser */
    shx_buf q = SHX_BUF_INIT;
    assert_int_equal(shx_json_put_string(&q, msg, strlen(msg)), 0);
    shx_json *v = parse_ok(q.data, q.len);
    assert_int_equal(v->len, strlen(msg));
    shx_json_free(v);
    shx_buf_free(&q);
    free(msg);
    shx_buf_free(&doc);
}

/* Objects past the small-object path check duplicates by sorting. */
/* Kept duplicate keys (a JSON-RPC server answers such a message, with its
 * id): the object is marked with its first repeated key, found shallow or
 * deep, small objects and large (sorted) ones alike. */
static void test_duplicate_keys_kept(void **state)
{
    (void)state;
    const shx_json_limits keep = {.keep_duplicate_keys = 1};
    shx_json *v = NULL;
    const char *doc = "{\"id\":1,\"p\":{\"a\":[{\"x\":1,\"y\":2,\"x\":3}]},\"id\":2}";
    assert_int_equal(shx_json_parse(&v, doc, strlen(doc), &keep, NULL), SHEXEC_OK);
    size_t len;
    assert_string_equal(shx_json_duplicate_key(v, 0, &len), "id");
    assert_int_equal(len, 2);
    assert_int_equal(v->dup_key, 3);
    const shx_json *p = shx_json_get(v, "p");
    assert_null(shx_json_duplicate_key(p, 0, &len));
    assert_string_equal(shx_json_duplicate_key(p, 1, &len), "x");
    shx_json_free(v);

    /* the strict parse refuses the same text */
    shx_buf err = SHX_BUF_INIT;
    assert_int_equal(shx_json_parse(&v, doc, strlen(doc), NULL, &err), SHEXEC_EINVAL);
    assert_non_null(strstr(err.data, "duplicate key \"x\""));
    shx_buf_free(&err);

    /* no repeat: nothing found, deep or not */
    doc = "[{\"a\":1,\"b\":[{\"a\":2}]},{\"a\":3}]";
    assert_int_equal(shx_json_parse(&v, doc, strlen(doc), &keep, NULL), SHEXEC_OK);
    assert_null(shx_json_duplicate_key(v, 1, &len));
    assert_int_equal(len, 0);
    shx_json_free(v);

    /* a large object, keys 0..99 then 50 again: found by the sorted check */
    shx_buf big = SHX_BUF_INIT;
    shx_buf_putc(&big, '{');
    for (int i = 0; i < 100; i++)
        shx_buf_printf(&big, "\"k%d\":%d,", i, i);
    shx_buf_puts(&big, "\"k50\":0,\"k7\":0}");
    assert_int_equal(shx_json_parse(&v, big.data, big.len, &keep, NULL), SHEXEC_OK);
    assert_string_equal(shx_json_duplicate_key(v, 0, &len), "k50");
    assert_int_equal(v->dup_key, 101);
    shx_json_free(v);
    shx_buf_free(&big);
}

static void test_duplicate_keys_large_object(void **state)
{
    (void)state;
    shx_buf doc = SHX_BUF_INIT;
    shx_buf_putc(&doc, '{');
    for (int i = 0; i < 1000; i++)
        shx_buf_printf(&doc, "%s\"k%d\":%d", i ? "," : "", i, i);
    shx_buf_putc(&doc, '}');
    shx_json *v = parse_ok(doc.data, doc.len);
    assert_int_equal(shx_json_count(v), 1000);
    int64_t n;
    assert_int_equal(shx_json_int64(shx_json_get(v, "k999"), &n), SHEXEC_OK);
    assert_int_equal(n, 999);
    size_t klen;
    assert_string_equal(shx_json_key(v, 10, &klen), "k10");
    assert_int_equal(klen, 3);
    shx_json_free(v);

    /* two repeated keys: the earlier repetition in the text is named */
    doc.len--;
    size_t first_dup = doc.len + 1;
    shx_buf_puts(&doc, ",\"k500\":0,\"k7\":0}");
    char *msg = parse_bad_lim(doc.data, doc.len, NULL);
    assert_int_equal(msg_offset(msg), (long)first_dup);
    assert_non_null(strstr(msg, "duplicate key \"k500\""));
    free(msg);
    shx_buf_free(&doc);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Tool-call arguments are model-written: the biggest objects that fit the
 * default limits (a million members; keys sharing a 16 KB prefix) must
 * parse in a fraction of a second, which rules out anything quadratic in
 * the duplicate-key check. The bound here is generous for loaded machines.
 */
static void test_huge_objects_parse_fast(void **state)
{
    (void)state;
    shx_buf doc = SHX_BUF_INIT;
    shx_buf_putc(&doc, '{');
    for (int i = 0; i < 999999; i++) /* the object itself is the millionth value */
        shx_buf_printf(&doc, "%s\"k%07d\":0", i ? "," : "", i);
    shx_buf_putc(&doc, '}');
    assert_non_null(doc.data);
    int64_t t0 = now_ms();
    shx_json *v = parse_ok(doc.data, doc.len);
    int64_t took = now_ms() - t0;
    assert_int_equal(shx_json_count(v), 999999);
    shx_json_free(v);
    /* linear: well under a second natively; a quadratic parse of this
     * takes hours. The bound is far from both, and scaled for valgrind and
     * a loaded machine under the sanitizers. */
    const char *vg = getenv("VALGRIND");
    int64_t bound = vg && strcmp(vg, "1") == 0 ? 600000 : 60000;
    if (took > bound)
        fail_msg("999,999 keys took %lld ms to parse", (long long)took);

    /* 1000 keys of 16 KB that differ only at the end, the last repeated */
    shx_buf_clear(&doc);
    char *prefix = malloc(16384 + 1);
    assert_non_null(prefix);
    memset(prefix, 'p', 16384);
    prefix[16384] = '\0';
    shx_buf_putc(&doc, '{');
    for (int i = 0; i < 1000; i++)
        shx_buf_printf(&doc, "%s\"%s%04d\":0", i ? "," : "", prefix, i == 999 ? 0 : i);
    shx_buf_putc(&doc, '}');
    t0 = now_ms();
    char *msg = parse_bad_lim(doc.data, doc.len, NULL);
    took = now_ms() - t0;
    assert_non_null(strstr(msg, "duplicate key \"pppp"));
    free(msg);
    free(prefix);
    shx_buf_free(&doc);
    if (took > 10000)
        fail_msg("1000 keys of 16 KB took %lld ms to parse", (long long)took);
}

/* ------------------------------------------------------------------------
 * \u escapes
 * ------------------------------------------------------------------------ */

static void test_unicode_escapes(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        const char *bytes;
        size_t len;
    } cases[] = {
        {"\"\\u0041\"", "A", 1},
        {"\"\\u00e9\"", "\xc3\xa9", 2},
        {"\"\\u00E9\"", "\xc3\xa9", 2},
        {"\"\\u07FF\"", "\xdf\xbf", 2},
        {"\"\\u0800\"", "\xe0\xa0\x80", 3},
        {"\"\\u20AC\"", "\xe2\x82\xac", 3},
        {"\"\\uFFFF\"", "\xef\xbf\xbf", 3},
        {"\"\\uD83D\\uDE00\"", "\xf0\x9f\x98\x80", 4},
        {"\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 4},
        {"\"\\uD800\\uDC00\"", "\xf0\x90\x80\x80", 4},
        {"\"\\uDBFF\\uDFFF\"", "\xf4\x8f\xbf\xbf", 4},
        {"\"\\u0000\"", "\0", 1},
        {"\"a\\u0000b\"", "a\0b", 3},
        {"\"\\u0000\\u0000\"", "\0\0", 2},
        {"\"x\\uD83D\\uDE00y\\u00e9\"", "x\xf0\x9f\x98\x80y\xc3\xa9", 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        shx_json *v = parse_str(cases[i].json);
        size_t len = 99;
        const char *s = shx_json_string(v, &len);
        assert_non_null(s);
        assert_int_equal(len, cases[i].len);
        assert_memory_equal(s, cases[i].bytes, len);
        assert_int_equal(s[len], '\0');
        /* and back: NUL is written as \u0000, the rest as UTF-8 */
        shx_buf out = SHX_BUF_INIT;
        assert_int_equal(shx_json_write(&out, v), 0);
        shx_json *w = parse_ok(out.data, out.len);
        assert_true(json_equal(v, w));
        shx_json_free(w);
        shx_buf_free(&out);
        shx_json_free(v);
    }
    /* a key with an embedded NUL is not found by its C-string prefix */
    shx_json *o = parse_str("{\"a\\u0000b\":1}");
    assert_null(shx_json_get(o, "a"));
    size_t klen;
    assert_memory_equal(shx_json_key(o, 0, &klen), "a\0b", 3);
    assert_int_equal(klen, 3);
    shx_json_free(o);
}

/* ------------------------------------------------------------------------
 * int64
 * ------------------------------------------------------------------------ */

/*
 * Decision: a number is an integer when its exact decimal value is one, so
 * 1.0, 1e3 and 100e-2 are integers (a model writing "timeout": 30.0 means
 * 30) while 1.5 and 1e-1 are not. Only range decides beyond that.
 */
static void test_int64(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int ok;
        int64_t value;
    } cases[] = {
        {"0", 1, 0},
        {"-0", 1, 0},
        {"1", 1, 1},
        {"-1", 1, -1},
        {"9223372036854775807", 1, INT64_MAX},
        {"-9223372036854775808", 1, INT64_MIN},
        {"9223372036854775808", 0, 0},
        {"-9223372036854775809", 0, 0},
        {"18446744073709551615", 0, 0},
        {"18446744073709551616", 0, 0},
        {"99999999999999999999", 0, 0},
        {"9007199254740993", 1, INT64_C(9007199254740993)},
        {"-9007199254740993", 1, -INT64_C(9007199254740993)},
        {"1e3", 1, 1000},
        {"1E3", 1, 1000},
        {"1e+3", 1, 1000},
        {"1.0", 1, 1},
        {"-0.0", 1, 0},
        {"1.000000000000000000000000000000", 1, 1},
        {"1.5", 0, 0},
        {"2.50e1", 1, 25},
        {"100e-2", 1, 1},
        {"1e-1", 0, 0},
        {"0.1e1", 1, 1},
        {"123.456e3", 1, 123456},
        {"123.4567e3", 0, 0},
        {"1e18", 1, INT64_C(1000000000000000000)},
        {"1e19", 0, 0},
        {"1e30", 0, 0},
        {"9.223372036854775807e18", 1, INT64_MAX},
        {"9.223372036854775808e18", 0, 0},
        {"-9.223372036854775808e18", 1, INT64_MIN},
        {"922337203685477580.7e1", 1, INT64_MAX},
        {"92233720368547758070e-1", 1, INT64_MAX},
        {"0.00000000000000000000000000001e29", 1, 1},
        {"10000000000000000000000e-21", 1, 10},
        {"10000000000000000000000e-22", 1, 1},
        {"10000000000000000000000e-23", 0, 0},
        {"0e999999999999999999999", 1, 0},
        {"0.000e-5", 1, 0},
        {"1e999999999999999999999", 0, 0},
        {"1e-999999999999999999999", 0, 0},
        {"-1E0", 1, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        shx_json *v = parse_str(cases[i].text);
        int64_t got = 42;
        int rc = shx_json_int64(v, &got);
        if (cases[i].ok) {
            if (rc != SHEXEC_OK || got != cases[i].value)
                fail_msg("%s: rc %d, got %lld", cases[i].text, rc, (long long)got);
        } else {
            if (rc != SHEXEC_EINVAL || got != 42)
                fail_msg("%s: accepted as %lld", cases[i].text, (long long)got);
        }
        shx_json_free(v);
    }
    /* only numbers */
    static const char *not_numbers[] = {"\"1\"", "true", "null", "[1]", "{}"};
    for (size_t i = 0; i < sizeof not_numbers / sizeof not_numbers[0]; i++) {
        shx_json *v = parse_str(not_numbers[i]);
        int64_t got = 42;
        assert_int_equal(shx_json_int64(v, &got), SHEXEC_EINVAL);
        assert_int_equal(got, 42);
        shx_json_free(v);
    }
    int64_t got;
    assert_int_equal(shx_json_int64(NULL, &got), SHEXEC_EINVAL);
}

/* ------------------------------------------------------------------------
 * limits
 * ------------------------------------------------------------------------ */

static void test_depth_limit(void **state)
{
    (void)state;
    /* the default is 64 containers open at once */
    char *ok = repeat("[", 64, "", "]");
    shx_json *v = parse_ok(ok, strlen(ok));
    shx_json_free(v);
    free(ok);
    char *deep = repeat("[", 65, "", "]");
    char *msg = parse_bad_lim(deep, strlen(deep), NULL);
    assert_string_equal(msg, "invalid JSON at byte 64: nesting deeper than 64 levels");
    free(msg);
    free(deep);
    /* a zeroed limits struct means the defaults */
    shx_json_limits zero = {0, 0, 0, 0};
    deep = repeat("{\"a\":", 65, "1", "}");
    msg = parse_bad_lim(deep, strlen(deep), &zero);
    assert_int_equal(msg_offset(msg), 64 * 5);
    free(msg);
    free(deep);

    shx_json_limits three = {.max_depth = 3};
    v = NULL;
    assert_int_equal(shx_json_parse(&v, "[[[1]]]", 7, &three, NULL), SHEXEC_OK);
    shx_json_free(v);
    assert_int_equal(shx_json_parse(&v, "{\"a\":[{\"b\":1}]}", 15, &three, NULL), SHEXEC_OK);
    shx_json_free(v);
    msg = parse_bad_lim("[[[[1]]]]", 9, &three);
    assert_int_equal(msg_offset(msg), 3);
    free(msg);
    msg = parse_bad_lim("{\"a\":[{\"b\":[]}]}", 16, &three);
    assert_string_equal(msg, "invalid JSON at byte 11: nesting deeper than 3 levels");
    free(msg);
    /* scalars are depth 0 */
    shx_json_limits one = {.max_depth = 1};
    assert_int_equal(shx_json_parse(&v, "[1,\"a\",null]", 12, &one, NULL), SHEXEC_OK);
    shx_json_free(v);
}

/* The parser, the writer and free never recurse: 100000 levels are fine
 * (when allowed) and a clean error (when not). */
static void test_depth_100000(void **state)
{
    (void)state;
    const size_t n = 100000;
    char *open = repeat("[", n, "", "");
    char *msg = parse_bad_lim(open, n, NULL);
    assert_string_equal(msg, "invalid JSON at byte 64: nesting deeper than 64 levels");
    free(msg);
    shx_json_limits big = {.max_depth = 1000000};
    msg = parse_bad_lim(open, n, &big);
    assert_int_equal(msg_offset(msg), (long)n);
    assert_non_null(strstr(msg, "expected a value, found end of input"));
    free(msg);
    free(open);

    char *arr = repeat("[", n, "", "]");
    shx_json_limits exact = {.max_depth = n};
    shx_json *v = NULL;
    assert_int_equal(shx_json_parse(&v, arr, 2 * n, &exact, NULL), SHEXEC_OK);
    shx_buf out = SHX_BUF_INIT;
    assert_int_equal(shx_json_write(&out, v), 0);
    assert_int_equal(out.len, 2 * n);
    assert_memory_equal(out.data, arr, 2 * n);
    shx_buf_free(&out);
    shx_json_free(v);
    free(arr);

    char *obj = repeat("{\"a\":", n, "1", "}");
    assert_int_equal(shx_json_parse(&v, obj, strlen(obj), &exact, NULL), SHEXEC_OK);
    const shx_json *c = v;
    for (size_t i = 0; i < n; i++)
        c = shx_json_get(c, "a");
    int64_t one;
    assert_int_equal(shx_json_int64(c, &one), SHEXEC_OK);
    assert_int_equal(one, 1);
    assert_int_equal(shx_json_write(&out, v), 0);
    assert_string_equal(out.data, obj);
    shx_buf_free(&out);
    shx_json_free(v);
    /* one level more than allowed */
    shx_json_limits less = {.max_depth = n - 1};
    msg = parse_bad_lim(obj, strlen(obj), &less);
    assert_int_equal(msg_offset(msg), (long)(5 * (n - 1)));
    free(msg);
    free(obj);
}

static void test_size_limit(void **state)
{
    (void)state;
    shx_json_limits ten = {.max_size = 10};
    shx_json *v = NULL;
    assert_int_equal(shx_json_parse(&v, "[1,2,3,45]", 10, &ten, NULL), SHEXEC_OK);
    shx_json_free(v);
    char *msg = parse_bad_lim("[1,2,3,456]", 11, &ten);
    assert_string_equal(msg, "invalid JSON at byte 10: document larger than the limit of 10 bytes");
    free(msg);

    /* the default is 16 MiB: checked before any parsing */
    size_t max = SHX_JSON_DEFAULT_MAX_SIZE;
    char *big = malloc(max + 1);
    assert_non_null(big);
    memset(big, ' ', max + 1);
    big[max - 1] = '0';
    assert_int_equal(shx_json_parse(&v, big, max, NULL, NULL), SHEXEC_OK);
    assert_true(shx_json_is(v, SHX_JSON_NUMBER));
    shx_json_free(v);
    msg = parse_bad_lim(big, max + 1, NULL);
    assert_non_null(strstr(msg, "document larger than the limit of 16777216 bytes"));
    free(msg);
    free(big);
}

static void test_items_limit(void **state)
{
    (void)state;
    shx_json_limits three = {.max_items = 3};
    shx_json *v = NULL;
    static const char *fits[] = {"[1,2]", "{\"a\":[1]}", "[[],[]]", "{\"a\":1,\"b\":2}", "7"};
    for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++) {
        assert_int_equal(shx_json_parse(&v, fits[i], strlen(fits[i]), &three, NULL), SHEXEC_OK);
        shx_json_free(v);
    }
    char *msg = parse_bad_lim("[1,2,3]", 7, &three);
    assert_string_equal(msg, "invalid JSON at byte 5: more than 3 values");
    free(msg);
    msg = parse_bad_lim("[[],[],[]]", 10, &three);
    assert_int_equal(msg_offset(msg), 7);
    free(msg);

    /* the default allows a million values */
    char *many = repeat("0,", 999999, "0", "");
    size_t len = strlen(many);
    char *doc = malloc(len + 3);
    assert_non_null(doc);
    snprintf(doc, len + 3, "[%s]", many);
    /* a million numbers and the array around them is one value too many */
    msg = parse_bad_lim(doc, len + 2, NULL);
    assert_non_null(strstr(msg, "more than 1000000 values"));
    free(msg);
    /* one number less fits exactly */
    doc[len - 1] = ']';
    doc[len] = '\0';
    assert_int_equal(shx_json_parse(&v, doc, len, NULL, NULL), SHEXEC_OK);
    assert_int_equal(shx_json_count(v), 999999);
    shx_json_free(v);
    free(doc);
    free(many);
}

/* ------------------------------------------------------------------------
 * accessors and API edges
 * ------------------------------------------------------------------------ */

static void test_accessors(void **state)
{
    (void)state;
    shx_json *v = parse_str("{\"s\":\"a\\u0000b\",\"n\":42,\"b\":true,\"f\":false,\"z\":null,"
                            "\"a\":[1,\"x\"],\"o\":{}}");
    assert_true(shx_json_is(v, SHX_JSON_OBJECT));
    assert_int_equal(shx_json_count(v), 7);
    size_t len;
    const char *s = shx_json_string(shx_json_get(v, "s"), &len);
    assert_int_equal(len, 3);
    assert_memory_equal(s, "a\0b", 3);
    assert_null(shx_json_string(shx_json_get(v, "n"), &len));
    int b = -1;
    assert_int_equal(shx_json_bool(shx_json_get(v, "b"), &b), SHEXEC_OK);
    assert_int_equal(b, 1);
    assert_int_equal(shx_json_bool(shx_json_get(v, "f"), &b), SHEXEC_OK);
    assert_int_equal(b, 0);
    assert_int_equal(shx_json_bool(shx_json_get(v, "z"), &b), SHEXEC_EINVAL);
    assert_true(shx_json_is(shx_json_get(v, "z"), SHX_JSON_NULL));
    assert_false(shx_json_is(shx_json_get(v, "missing"), SHX_JSON_NULL));
    assert_null(shx_json_get(v, "missing"));
    assert_null(shx_json_get(v, "S"));
    const shx_json *a = shx_json_get(v, "a");
    assert_int_equal(shx_json_count(a), 2);
    assert_true(shx_json_is(shx_json_item(a, 0), SHX_JSON_NUMBER));
    assert_string_equal(shx_json_string(shx_json_item(a, 1), NULL), "x");
    assert_null(shx_json_item(a, 2));
    assert_null(shx_json_key(a, 0, NULL));
    assert_null(shx_json_get(a, "0"));
    assert_string_equal(shx_json_key(v, 6, NULL), "o");
    assert_null(shx_json_key(v, 7, NULL));
    assert_true(shx_json_item(v, 1) == shx_json_get(v, "n"));
    assert_int_equal(shx_json_count(shx_json_get(v, "o")), 0);
    assert_int_equal(shx_json_count(shx_json_get(v, "n")), 0);
    assert_string_equal(shx_json_get(v, "n")->str, "42");
    /* NULL everywhere */
    assert_false(shx_json_is(NULL, SHX_JSON_NULL));
    assert_int_equal(shx_json_bool(NULL, &b), SHEXEC_EINVAL);
    assert_null(shx_json_string(NULL, &len));
    assert_int_equal(shx_json_count(NULL), 0);
    assert_null(shx_json_item(NULL, 0));
    assert_null(shx_json_key(NULL, 0, &len));
    assert_null(shx_json_get(NULL, "a"));
    assert_null(shx_json_get(v, NULL));
    /* freeing a child is a no-op; only the root owns memory */
    shx_json_free(v->items[5]);
    shx_json_free(NULL);
    shx_json_free(v);
}

static void test_parse_api_edges(void **state)
{
    (void)state;
    shx_json *v = (shx_json *)1;
    assert_int_equal(shx_json_parse(NULL, "1", 1, NULL, NULL), SHEXEC_EINVAL);
    assert_int_equal(shx_json_parse(&v, NULL, 3, NULL, NULL), SHEXEC_EINVAL);
    assert_null(v);
    char *msg = parse_bad_lim(NULL, 0, NULL);
    assert_string_equal(msg, "invalid JSON at byte 0: expected a value, found end of input");
    free(msg);
    /* the input need not be NUL-terminated: only len bytes are read */
    char exact[2] = {'[', ']'};
    v = parse_ok(exact, 2);
    shx_json_free(v);
    char *heap = malloc(4);
    memcpy(heap, "true", 4);
    v = parse_ok(heap, 4);
    free(heap);
    shx_json_free(v);
    heap = malloc(5);
    memcpy(heap, "\"abc", 4);
    msg = parse_bad_lim(heap, 4, NULL);
    free(msg);
    free(heap);
}

/* ------------------------------------------------------------------------
 * writer
 * ------------------------------------------------------------------------ */

static void check_put(const char *in, size_t len, const char *want)
{
    shx_buf b = SHX_BUF_INIT;
    assert_int_equal(shx_json_put_string(&b, in, len), 0);
    if (strcmp(b.data, want) != 0)
        fail_msg("put_string: want <%s>, got <%s>", want, b.data);
    /* always valid JSON, and its value re-escapes to the same text */
    shx_json *v = parse_ok(b.data, b.len);
    shx_buf again = SHX_BUF_INIT;
    assert_int_equal(shx_json_put_string(&again, v->str, v->len), 0);
    assert_string_equal(again.data, want);
    shx_buf_free(&again);
    shx_json_free(v);
    shx_buf_free(&b);
}

#define PUT(in, want) check_put(in, sizeof(in) - 1, want)
#define FFFD "\xef\xbf\xbd"

static void test_put_string_escapes(void **state)
{
    (void)state;
    char ctl[32];
    for (int i = 0; i < 32; i++)
        ctl[i] = (char)i;
    check_put(ctl, 32,
              "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r"
              "\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018"
              "\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\"");
    PUT("", "\"\"");
    PUT("plain text", "\"plain text\"");
    PUT("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
    PUT("line1\nline2\r\n\ttab", "\"line1\\nline2\\r\\n\\ttab\"");
    PUT("\x7f", "\"\x7f\"");
    PUT("\x1b[31mred\x1b[0m", "\"\\u001b[31mred\\u001b[0m\"");
    PUT("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\"");
    PUT("\xe2\x80\xa8", "\"\xe2\x80\xa8\"");
    PUT(FFFD, "\"" FFFD "\"");
    /* NULL with length 0 is the empty string */
    shx_buf b = SHX_BUF_INIT;
    assert_int_equal(shx_json_put_string(&b, NULL, 0), 0);
    assert_string_equal(b.data, "\"\"");
    assert_int_equal(shx_json_put_string(&b, NULL, 1), -1);
    assert_string_equal(b.data, "\"\"");
    shx_buf_free(&b);
}

/* Per utf8.h every byte outside a well-formed sequence is a character of its
 * own, so each becomes one U+FFFD (a truncated sequence gives one per byte). */
static void test_put_string_invalid_utf8(void **state)
{
    (void)state;
    PUT("\xff", "\"" FFFD "\"");
    PUT("\x80", "\"" FFFD "\"");
    PUT("\xc3", "\"" FFFD "\"");
    PUT("a\xc3", "\"a" FFFD "\"");
    PUT("\xe2\x82", "\"" FFFD FFFD "\"");
    PUT("\xe2\x82" "A", "\"" FFFD FFFD "A\"");
    PUT("\xf0\x9f\x98", "\"" FFFD FFFD FFFD "\"");
    PUT("\xc0\xaf", "\"" FFFD FFFD "\"");                  /* overlong '/' */
    PUT("\xc0\x80", "\"" FFFD FFFD "\"");                  /* overlong NUL */
    PUT("\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\"");         /* overlong */
    PUT("\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"");         /* U+D800 */
    PUT("\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""); /* U+110000 */
    PUT("\xf8\x88\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD FFFD "\"");
    PUT("a\xe2\x82\xac" "b\x80" "c", "\"a\xe2\x82\xac" "b" FFFD "c\"");
    PUT("\xc3\"", "\"" FFFD "\\\"\"");
    PUT("\xff\n\xfe", "\"" FFFD "\\n" FFFD "\"");
}

/* Random bytes in, always valid JSON out; writing what was read back is a
 * fixed point. */
static void test_put_string_fuzz(void **state)
{
    (void)state;
    uint32_t seed = 12345;
    unsigned char in[64];
    for (int iter = 0; iter < 5000; iter++) {
        size_t len = 0, n = (size_t)(iter % 64);
        for (; len < n; len++) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = (seed >> 16) & 0xff;
            /* bias towards the interesting bytes */
            static const unsigned char pick[] = {0x00, 0x1f, '"', '\\', 0x7f, 0x80, 0xbf,
                                                 0xc2, 0xe0, 0xed, 0xf0, 0xf4, 0xff, 'a'};
            in[len] = (r & 1) ? pick[(r >> 1) % sizeof pick] : (unsigned char)(r ^ (seed >> 8));
        }
        shx_buf b = SHX_BUF_INIT;
        assert_int_equal(shx_json_put_string(&b, (const char *)in, len), 0);
        shx_json *v = parse_ok(b.data, b.len);
        assert_true(shx_json_is(v, SHX_JSON_STRING));
        shx_buf again = SHX_BUF_INIT;
        assert_int_equal(shx_json_put_string(&again, v->str, v->len), 0);
        assert_int_equal(again.len, b.len);
        assert_memory_equal(again.data, b.data, b.len);
        shx_buf_free(&again);
        shx_json_free(v);
        shx_buf_free(&b);
    }
}

static void test_put_scalars(void **state)
{
    (void)state;
    shx_buf b = SHX_BUF_INIT;
    assert_int_equal(shx_json_put_int64(&b, INT64_MIN), 0);
    shx_buf_putc(&b, ',');
    assert_int_equal(shx_json_put_int64(&b, INT64_MAX), 0);
    shx_buf_putc(&b, ',');
    assert_int_equal(shx_json_put_int64(&b, 0), 0);
    shx_buf_putc(&b, ',');
    assert_int_equal(shx_json_put_uint64(&b, UINT64_MAX), 0);
    shx_buf_putc(&b, ',');
    assert_int_equal(shx_json_put_bool(&b, 1), 0);
    shx_buf_putc(&b, ',');
    assert_int_equal(shx_json_put_bool(&b, 0), 0);
    assert_string_equal(b.data, "-9223372036854775808,9223372036854775807,0,"
                                "18446744073709551615,true,false");
    /* building a result object by hand gives valid JSON */
    shx_buf_clear(&b);
    shx_buf_putc(&b, '{');
    shx_json_put_string(&b, "exit_code", 9);
    shx_buf_putc(&b, ':');
    shx_json_put_int64(&b, -1);
    shx_buf_putc(&b, ',');
    shx_json_put_string(&b, "stdout", 6);
    shx_buf_putc(&b, ':');
    shx_json_put_string(&b, "ok\n\xff", 4);
    shx_buf_putc(&b, ',');
    shx_json_put_string(&b, "truncated", 9);
    shx_buf_putc(&b, ':');
    shx_json_put_bool(&b, 0);
    shx_buf_putc(&b, '}');
    shx_json *v = parse_ok(b.data, b.len);
    int64_t code;
    assert_int_equal(shx_json_int64(shx_json_get(v, "exit_code"), &code), SHEXEC_OK);
    assert_int_equal(code, -1);
    assert_string_equal(shx_json_string(shx_json_get(v, "stdout"), NULL), "ok\n" FFFD);
    shx_json_free(v);
    /* write NULL fails and leaves the buffer alone */
    size_t before = b.len;
    assert_int_equal(shx_json_write(&b, NULL), -1);
    assert_int_equal(b.len, before);
    shx_buf_free(&b);
}

/* ------------------------------------------------------------------------
 * parser fuzz: mutated documents either parse (and round-trip) or fail
 * cleanly with a well-formed message
 * ------------------------------------------------------------------------ */

static void test_parse_fuzz(void **state)
{
    (void)state;
    static const char *seeds[] = {
        ("{\"command\":\"ls -la \\\"x\\\"\",\"timeout\":30,\"env\":{\"A\":\"\\u00e9\"},"
         "\"args\":[1,-2.5e3,true,false,null,[],{}]}"),
        "[\"\\ud83d\\ude00\",\"\xc3\xa9\",0,1e-5,{\"a\":[{\"b\":null}]}]",
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\"}}",
    };
    static const unsigned char alphabet[] = "{}[],:\"\\/ubfnrt0123456789-+.eE \t\n\r\x00\x1f\x7f"
                                            "\x80\xc3\xa9\xed\xa0\xf4\x90\xff" "axNI'";
    uint32_t seed = 777;
    char buf[256];
    for (int iter = 0; iter < 30000; iter++) {
        const char *src = seeds[iter % 3];
        size_t len = strlen(src);
        memcpy(buf, src, len);
        int muts = 1 + iter % 4;
        for (int m = 0; m < muts; m++) {
            seed = seed * 1103515245u + 12345u;
            uint32_t r = seed >> 8;
            size_t at = len ? r % len : 0;
            unsigned char c = alphabet[(r >> 12) % (sizeof alphabet - 1)];
            switch ((r >> 20) % 4) {
            case 0: buf[at] = (char)c; break; /* replace */
            case 1:                           /* insert */
                if (len < sizeof buf - 1) {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = (char)c;
                    len++;
                }
                break;
            case 2: /* delete */
                if (len) {
                    memmove(buf + at, buf + at + 1, len - at - 1);
                    len--;
                }
                break;
            default: len = at; break; /* truncate */
            }
        }
        shx_json *v = NULL;
        shx_buf err = SHX_BUF_INIT;
        int rc = shx_json_parse(&v, buf, len, NULL, &err);
        if (rc == SHEXEC_OK) {
            assert_null(err.data);
            shx_json_free(v);
            check_round_trip(buf, len);
        } else {
            assert_int_equal(rc, SHEXEC_EINVAL);
            assert_null(v);
            long off = msg_offset(err.data);
            assert_true(off >= 0 && (size_t)off <= len);
            assert_null(strchr(err.data, '\n'));
        }
        shx_buf_free(&err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_round_trip),
        cmocka_unit_test(test_write_compact_exact),
        cmocka_unit_test(test_invalid_documents),
        cmocka_unit_test(test_error_message_exact),
        cmocka_unit_test(test_error_message_hostile_key),
        cmocka_unit_test(test_huge_objects_parse_fast),
        cmocka_unit_test(test_duplicate_keys_large_object),
        cmocka_unit_test(test_unicode_escapes),
        cmocka_unit_test(test_int64),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_duplicate_keys_kept),
        cmocka_unit_test(test_depth_100000),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_items_limit),
        cmocka_unit_test(test_accessors),
        cmocka_unit_test(test_parse_api_edges),
        cmocka_unit_test(test_put_string_escapes),
        cmocka_unit_test(test_put_string_invalid_utf8),
        cmocka_unit_test(test_put_string_fuzz),
        cmocka_unit_test(test_put_scalars),
        cmocka_unit_test(test_parse_fuzz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
