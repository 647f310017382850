/*
 * fuzz_json.c - libFuzzer target for the strict JSON parser and the writer
 * (lib/json.c).
 *
 * A second reader, written here from RFC 8259 and the contract in json.h
 * rather than from json.c, decides for each input whether it must be
 * accepted, at which byte the first error is, and what the document
 * decodes to. The parser has to agree on all three, under the default
 * limits and under small ones. A parsed document must then survive
 * write -> parse -> write unchanged (a fixed point, never longer than the
 * input); every number shx_json_int64 accepts must be exactly that integer
 * and every exact int64 it refuses must have been out of reach; and the
 * string writer must turn the raw input bytes into JSON that reads back as
 * those bytes with each invalid one replaced by U+FFFD. Parsed with
 * duplicate keys kept, exactly the documents refused only for a repeated
 * key are accepted besides the valid ones, each object marked with its
 * first repeated key.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "shx/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------------------------
 * Token trace: both readers describe a document as the same byte string,
 * so "decodes to the same thing" is one comparison.
 * ------------------------------------------------------------------------ */

static void trace_bytes(shx_buf *t, char kind, const void *p, size_t n)
{
    shx_buf_putc(t, kind);
    shx_buf_append(t, &n, sizeof n);
    shx_buf_append(t, p, n);
}

/* ------------------------------------------------------------------------
 * The reference reader
 * ------------------------------------------------------------------------ */

#define NO_ERROR SIZE_MAX

typedef struct ref {
    const unsigned char *s;
    size_t n, pos;
    size_t max_depth, max_items, items, depth;
    size_t err; /* offset of the first error, NO_ERROR while there is none */
    shx_buf *trace;
} ref;

static int ref_fail(ref *r, size_t off)
{
    r->err = off;
    return -1;
}

static void ref_ws(ref *r)
{
    while (r->pos < r->n && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' ||
                             r->s[r->pos] == '\n' || r->s[r->pos] == '\r'))
        r->pos++;
}

static int hexdig(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static long ref_hex4(const ref *r, size_t at)
{
    if (at > r->n || r->n - at < 4)
        return -1;
    long v = 0;
    for (size_t i = 0; i < 4; i++) {
        int h = hexdig(r->s[at + i]);
        if (h < 0)
            return -1;
        v = v << 4 | h;
    }
    return v;
}

static void put_cp(shx_buf *b, uint32_t cp)
{
    unsigned char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (unsigned char)(0xC0 | cp >> 6);
        u[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (unsigned char)(0xE0 | cp >> 12);
        u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (unsigned char)(0xF0 | cp >> 18);
        u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        u[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    shx_buf_append(b, u, n);
}

/* The string whose quote is at r->pos, decoded into out. */
static int ref_string(ref *r, shx_buf *out)
{
    size_t open = r->pos, i = open + 1;
    shx_buf_clear(out);
    for (;;) {
        if (i >= r->n)
            return ref_fail(r, open);
        unsigned char c = r->s[i];
        if (c == '"')
            break;
        if (c < 0x20)
            return ref_fail(r, i);
        if (c >= 0x80) {
            size_t k = fz_utf8_len(r->s + i, r->n - i);
            if (!k)
                return ref_fail(r, i);
            shx_buf_append(out, r->s + i, k);
            i += k;
            continue;
        }
        if (c != '\\') {
            shx_buf_putc(out, (char)c);
            i++;
            continue;
        }
        if (i + 1 >= r->n)
            return ref_fail(r, open);
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *hit = r->s[i + 1] ? strchr(from, r->s[i + 1]) : NULL;
        if (hit) {
            shx_buf_putc(out, to[hit - from]);
            i += 2;
            continue;
        }
        if (r->s[i + 1] != 'u')
            return ref_fail(r, i);
        long cp = ref_hex4(r, i + 2);
        if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
            return ref_fail(r, i);
        size_t used = 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            long lo = -1;
            if (i + 7 < r->n && r->s[i + 6] == '\\' && r->s[i + 7] == 'u')
                lo = ref_hex4(r, i + 8);
            if (lo < 0xDC00 || lo > 0xDFFF)
                return ref_fail(r, i);
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            used = 12;
        }
        put_cp(out, (uint32_t)cp);
        i += used;
    }
    r->pos = i + 1;
    return 0;
}

static int isdig(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int ref_number(ref *r)
{
    size_t start = r->pos, i = start, n = r->n;
    if (r->s[i] == '-')
        i++;
    if (i >= n || !isdig(r->s[i]))
        return ref_fail(r, i);
    if (r->s[i] == '0') {
        if (++i < n && isdig(r->s[i]))
            return ref_fail(r, start);
    } else {
        while (i < n && isdig(r->s[i]))
            i++;
    }
    if (i < n && r->s[i] == '.') {
        if (++i >= n || !isdig(r->s[i]))
            return ref_fail(r, i);
        while (i < n && isdig(r->s[i]))
            i++;
    }
    if (i < n && (r->s[i] | 0x20) == 'e') {
        i++;
        if (i < n && (r->s[i] == '+' || r->s[i] == '-'))
            i++;
        if (i >= n || !isdig(r->s[i]))
            return ref_fail(r, i);
        while (i < n && isdig(r->s[i]))
            i++;
    }
    trace_bytes(r->trace, 'd', r->s + start, i - start);
    r->pos = i;
    return 0;
}

typedef struct key {
    size_t off;
    char *bytes;
    size_t len;
} key;

static int ref_value(ref *r);

static int ref_object(ref *r)
{
    key *keys = NULL;
    size_t nkeys = 0, cap = 0;
    int rc = -1;
    shx_buf k = SHX_BUF_INIT;
    r->pos++;
    ref_ws(r);
    if (r->pos < r->n && r->s[r->pos] == '}') {
        r->pos++;
        rc = 0;
        goto out;
    }
    for (;;) {
        if (r->pos >= r->n || r->s[r->pos] != '"') {
            ref_fail(r, r->pos);
            goto out;
        }
        size_t off = r->pos;
        if (ref_string(r, &k) != 0)
            goto out;
        trace_bytes(r->trace, 'k', k.data, k.len);
        if (nkeys == cap) {
            cap = cap ? 2 * cap : 8;
            keys = realloc(keys, cap * sizeof *keys);
            FZ_CHECK(keys, "out of memory");
        }
        keys[nkeys].off = off;
        keys[nkeys].len = k.len;
        keys[nkeys].bytes = malloc(k.len + 1);
        FZ_CHECK(keys[nkeys].bytes, "out of memory");
        if (k.len)
            memcpy(keys[nkeys].bytes, k.data, k.len);
        nkeys++;
        ref_ws(r);
        if (r->pos >= r->n || r->s[r->pos] != ':') {
            ref_fail(r, r->pos);
            goto out;
        }
        r->pos++;
        ref_ws(r);
        if (ref_value(r) != 0)
            goto out;
        ref_ws(r);
        if (r->pos < r->n && r->s[r->pos] == ',') {
            r->pos++;
            ref_ws(r);
            continue;
        }
        if (r->pos < r->n && r->s[r->pos] == '}') {
            r->pos++;
            break;
        }
        ref_fail(r, r->pos);
        goto out;
    }
    /* Duplicates are judged once the object is complete; the one named is
     * the earliest key that repeats an earlier one. */
    for (size_t j = 1; j < nkeys; j++)
        for (size_t i = 0; i < j; i++)
            if (fz_mem_eq(keys[i].bytes, keys[i].len, keys[j].bytes, keys[j].len)) {
                ref_fail(r, keys[j].off);
                goto out;
            }
    rc = 0;
out:
    for (size_t i = 0; i < nkeys; i++)
        free(keys[i].bytes);
    free(keys);
    shx_buf_free(&k);
    if (rc == 0)
        shx_buf_putc(r->trace, '}');
    return rc;
}

static int ref_array(ref *r)
{
    r->pos++;
    ref_ws(r);
    if (r->pos < r->n && r->s[r->pos] == ']') {
        r->pos++;
        shx_buf_putc(r->trace, ']');
        return 0;
    }
    for (;;) {
        if (ref_value(r) != 0)
            return -1;
        ref_ws(r);
        if (r->pos < r->n && r->s[r->pos] == ',') {
            r->pos++;
            ref_ws(r);
            continue;
        }
        if (r->pos < r->n && r->s[r->pos] == ']') {
            r->pos++;
            shx_buf_putc(r->trace, ']');
            return 0;
        }
        return ref_fail(r, r->pos);
    }
}

/* A value at r->pos (whitespace skipped). */
static int ref_value(ref *r)
{
    if (r->pos >= r->n)
        return ref_fail(r, r->pos);
    unsigned char c = r->s[r->pos];
    int scalar = !(c == '[' || c == '{');
    if (++r->items > r->max_items)
        return ref_fail(r, r->pos);
    if (!scalar) {
        if (r->depth >= r->max_depth)
            return ref_fail(r, r->pos);
        r->depth++;
        shx_buf_putc(r->trace, (char)c);
        int rc = c == '[' ? ref_array(r) : ref_object(r);
        r->depth--;
        return rc;
    }
    if (c == '"') {
        shx_buf s = SHX_BUF_INIT;
        int rc = ref_string(r, &s);
        if (rc == 0)
            trace_bytes(r->trace, 's', s.data, s.len);
        shx_buf_free(&s);
        return rc;
    }
    if (c == '-' || isdig(c))
        return ref_number(r);
    static const char *const words[] = {"true", "false", "null"};
    for (size_t i = 0; i < 3; i++) {
        size_t wl = strlen(words[i]);
        if (c != (unsigned char)words[i][0])
            continue;
        if (r->n - r->pos < wl || memcmp(r->s + r->pos, words[i], wl) != 0)
            return ref_fail(r, r->pos);
        shx_buf_putc(r->trace, words[i][0]);
        r->pos += wl;
        return 0;
    }
    return ref_fail(r, r->pos);
}

/* NO_ERROR when the text is a document within the limits, else the offset
 * the parser has to name. */
static size_t ref_parse(const uint8_t *s, size_t n, size_t max_depth, size_t max_items,
                        shx_buf *trace)
{
    ref r = {.s = s, .n = n, .max_depth = max_depth, .max_items = max_items,
             .err = NO_ERROR, .trace = trace};
    ref_ws(&r);
    if (ref_value(&r) == 0) {
        ref_ws(&r);
        if (r.pos < r.n)
            ref_fail(&r, r.pos);
    }
    return r.err;
}

/* ------------------------------------------------------------------------
 * Checks on a parsed document
 * ------------------------------------------------------------------------ */

/*
 * shx_json_int64 against strtold. x86 long double has a 64-bit significand,
 * so every int64 is exact in it and correct rounding of an exact integer
 * gives that integer. The other direction holds when the text has at most
 * 18 significant digits and a short exponent: then a non-integer value is
 * further from the nearest integer than rounding can move it.
 */
static void check_int64(const shx_json *v)
{
    int64_t got = 0;
    int rc = shx_json_int64(v, &got);
    long double x = strtold(v->str, NULL);
    if (rc == SHEXEC_OK) {
        FZ_CHECK(x == (long double)got, "number %s read as int64 %lld", v->str, (long long)got);
        return;
    }
    FZ_CHECK(rc == SHEXEC_EINVAL, "shx_json_int64 returned %d", rc);
    size_t sig = 0, exp_digits = 0;
    int seen_nonzero = 0, in_exp = 0;
    size_t zeros_run = 0;
    for (const char *p = v->str; *p; p++) {
        if (*p == 'e' || *p == 'E') {
            in_exp = 1;
            continue;
        }
        if (!isdig((unsigned char)*p))
            continue;
        if (in_exp) {
            if (exp_digits || *p != '0')
                exp_digits++;
            continue;
        }
        if (*p == '0') {
            if (seen_nonzero)
                zeros_run++;
            continue;
        }
        seen_nonzero = 1;
        sig += zeros_run + 1;
        zeros_run = 0;
    }
    if (sig <= 18 && exp_digits <= 3)
        FZ_CHECK(!(x == floorl(x) && x >= -0x1p63L && x < 0x1p63L),
                 "number %s is an int64 but was refused", v->str);
}

/* The DOM's token trace, plus the per-node contract of json.h. */
static void dom_trace(const shx_json *v, shx_buf *t)
{
    switch (v->type) {
    case SHX_JSON_NULL: shx_buf_putc(t, 'n'); break;
    case SHX_JSON_BOOL:
        FZ_CHECK(v->boolean == 0 || v->boolean == 1, "boolean %d", v->boolean);
        shx_buf_putc(t, v->boolean ? 't' : 'f');
        break;
    case SHX_JSON_NUMBER:
        FZ_CHECK(v->str && v->str[v->len] == '\0' && strlen(v->str) == v->len,
                 "number text not NUL-terminated at its length");
        trace_bytes(t, 'd', v->str, v->len);
        check_int64(v);
        break;
    case SHX_JSON_STRING:
        FZ_CHECK(v->str && v->str[v->len] == '\0', "string not NUL-terminated");
        FZ_CHECK(fz_utf8_valid(v->str, v->len), "decoded string is not valid UTF-8");
        trace_bytes(t, 's', v->str, v->len);
        FZ_CHECK(shx_json_string(v, NULL) == v->str, "shx_json_string");
        break;
    case SHX_JSON_ARRAY:
        shx_buf_putc(t, '[');
        for (size_t i = 0; i < v->count; i++)
            dom_trace(v->items[i], t);
        FZ_CHECK(shx_json_item(v, v->count) == NULL, "item past the end");
        shx_buf_putc(t, ']');
        break;
    case SHX_JSON_OBJECT:
        shx_buf_putc(t, '{');
        for (size_t i = 0; i < v->count; i++) {
            size_t klen;
            const char *k = shx_json_key(v, i, &klen);
            FZ_CHECK(k && k[klen] == '\0', "key not NUL-terminated");
            trace_bytes(t, 'k', k, klen);
            /* keys are unique, so a NUL-free key finds exactly its own value */
            if (!memchr(k, '\0', klen))
                FZ_CHECK(shx_json_get(v, k) == v->items[i], "shx_json_get(\"%s\")", k);
            dom_trace(v->items[i], t);
        }
        shx_buf_putc(t, '}');
        break;
    default:
        FZ_CHECK(0, "node type %d", (int)v->type);
    }
}

/* One line, "invalid JSON at byte N: WHAT", naming `want`. */
static void check_error(const shx_buf *err, size_t want, size_t len)
{
    static const char prefix[] = "invalid JSON at byte ";
    FZ_CHECK(err->len > 0, "no error message");
    FZ_CHECK(strncmp(err->data, prefix, sizeof prefix - 1) == 0, "message: %s", err->data);
    char *end;
    unsigned long long at = strtoull(err->data + sizeof prefix - 1, &end, 10);
    FZ_CHECK(end[0] == ':' && end[1] == ' ' && end[2], "message: %s", err->data);
    FZ_CHECK(at <= len, "offset %llu past the input (%zu bytes)", at, len);
    FZ_CHECK(at == want, "parser names byte %llu, the first error is at byte %zu: %s", at,
             want, err->data);
    for (size_t i = 0; i < err->len; i++)
        FZ_CHECK((unsigned char)err->data[i] >= 0x20,
                 "control byte in the message: %s", err->data);
    FZ_CHECK(fz_utf8_valid(err->data, err->len), "message is not UTF-8: %s", err->data);
}

/* Parse under lim and compare with the reference; returns the document. */
static shx_json *parse_and_compare(const uint8_t *data, size_t size, const shx_json_limits *lim)
{
    shx_buf rtrace = SHX_BUF_INIT, err = SHX_BUF_INIT;
    size_t want = ref_parse(data, size, lim && lim->max_depth ? lim->max_depth : 64,
                            lim && lim->max_items ? lim->max_items : 1000000, &rtrace);
    shx_json *doc = (shx_json *)1;
    int rc = shx_json_parse(&doc, (const char *)data, size, lim, &err);
    if (want == NO_ERROR) {
        FZ_CHECK(rc == SHEXEC_OK, "valid document refused: %s", err.data ? err.data : "");
        FZ_CHECK(err.len == 0, "message on success: %s", err.data);
        shx_buf t = SHX_BUF_INIT;
        dom_trace(doc, &t);
        FZ_CHECK(fz_mem_eq(t.data, t.len, rtrace.data, rtrace.len),
                 "the document decodes differently from the reference");
        shx_buf_free(&t);
    } else {
        FZ_CHECK(rc == SHEXEC_EINVAL, "invalid document (error at byte %zu) gave %d", want, rc);
        FZ_CHECK(doc == NULL, "*out not NULL on failure");
        check_error(&err, want, size);
    }
    shx_buf_free(&rtrace);
    shx_buf_free(&err);
    return doc;
}

/* ------------------------------------------------------------------------
 * The writer
 * ------------------------------------------------------------------------ */

static void check_round_trip(const shx_json *doc, size_t insize)
{
    shx_buf w1 = SHX_BUF_INIT, w2 = SHX_BUF_INIT, t1 = SHX_BUF_INIT, t2 = SHX_BUF_INIT;
    FZ_CHECK(shx_json_write(&w1, doc) == 0, "write failed");
    /* compact, and escapes never grow: \uXXXX and \X only ever shrink or stay */
    FZ_CHECK(w1.len <= insize, "written %zu bytes from %zu", w1.len, insize);
    FZ_CHECK(fz_utf8_valid(w1.data, w1.len), "writer output is not UTF-8");
    shx_json *again = NULL;
    shx_buf err = SHX_BUF_INIT;
    FZ_CHECK(shx_json_parse(&again, w1.data, w1.len, NULL, &err) == SHEXEC_OK,
             "writer output does not parse: %s\n  %s", err.data, w1.data);
    dom_trace(doc, &t1);
    dom_trace(again, &t2);
    FZ_CHECK(fz_mem_eq(t1.data, t1.len, t2.data, t2.len), "re-parsed document differs");
    FZ_CHECK(shx_json_write(&w2, again) == 0, "second write failed");
    FZ_CHECK(fz_mem_eq(w1.data, w1.len, w2.data, w2.len), "write is not a fixed point:\n  %s\n  %s",
             w1.data, w2.data);
    shx_json_free(again);
    shx_buf_free(&w1);
    shx_buf_free(&w2);
    shx_buf_free(&t1);
    shx_buf_free(&t2);
    shx_buf_free(&err);
}

/* Any bytes as a JSON string read back as themselves, invalid bytes as U+FFFD. */
static void check_put_string(const uint8_t *data, size_t size)
{
    shx_buf out = SHX_BUF_INIT, want = SHX_BUF_INIT;
    const char *junk = "x";
    shx_buf_puts(&out, junk);
    FZ_CHECK(shx_json_put_string(&out, (const char *)data, size) == 0, "put_string failed");
    for (size_t i = 0; i < size;) {
        size_t k = fz_utf8_len(data + i, size - i);
        if (k) {
            shx_buf_append(&want, data + i, k);
            i += k;
        } else {
            shx_buf_puts(&want, "\xEF\xBF\xBD");
            i++;
        }
    }
    shx_json *v = NULL;
    shx_buf err = SHX_BUF_INIT;
    FZ_CHECK(shx_json_parse(&v, out.data + 1, out.len - 1, NULL, &err) == SHEXEC_OK,
             "put_string output does not parse: %s", err.data);
    FZ_CHECK(v->type == SHX_JSON_STRING, "put_string output is not a string");
    FZ_CHECK(fz_mem_eq(v->str, v->len, want.data, want.len),
             "put_string did not read back as the input with U+FFFD substitutions");
    shx_json_free(v);
    shx_buf_free(&out);
    shx_buf_free(&want);
    shx_buf_free(&err);
}

/* ------------------------------------------------------------------------
 * Duplicate keys kept (keep_duplicate_keys, as a JSON-RPC server parses)
 * ------------------------------------------------------------------------ */

/* Each object's dup_key against the obvious pairwise search, and
 * shx_json_duplicate_key, shallow and deep, against those; 1 when some
 * object in v repeats a key. Recursive: the fuzzer's depth is bounded. */
static int check_kept_dups(const shx_json *v)
{
    if (v->type != SHX_JSON_ARRAY && v->type != SHX_JSON_OBJECT)
        return 0;
    int any = 0;
    if (v->type == SHX_JSON_OBJECT) {
        size_t first = 0;
        for (size_t i = 1; i < v->count && !first; i++)
            for (size_t j = 0; j < i && !first; j++)
                if (fz_mem_eq(v->keys[i].str, v->keys[i].len, v->keys[j].str, v->keys[j].len))
                    first = i + 1;
        FZ_CHECK(v->dup_key == first, "dup_key %zu, the first repeat is %zu", v->dup_key, first);
        any = first != 0;
        size_t len = 0;
        const char *key = shx_json_duplicate_key(v, 0, &len);
        FZ_CHECK(!key == !first, "shx_json_duplicate_key disagrees with dup_key");
        if (key)
            FZ_CHECK(fz_mem_eq(key, len, v->keys[first - 1].str, v->keys[first - 1].len),
                     "shx_json_duplicate_key names another key");
    }
    for (size_t i = 0; i < v->count; i++)
        any |= check_kept_dups(v->items[i]);
    size_t len;
    FZ_CHECK(!shx_json_duplicate_key(v, 1, &len) == !any, "deep shx_json_duplicate_key disagrees");
    return any;
}

/* With duplicates kept, exactly the documents refused only for a repeated
 * key are accepted besides the valid ones, and marked. */
static void check_keep_duplicates(const uint8_t *data, size_t size, int strict_ok)
{
    shx_json_limits keep = {.keep_duplicate_keys = 1};
    shx_buf err = SHX_BUF_INIT;
    shx_json *v = NULL;
    int rc = shx_json_parse(&v, (const char *)data, size, &keep, &err);
    if (strict_ok) {
        FZ_CHECK(rc == SHEXEC_OK && !check_kept_dups(v), "a valid document changed when kept");
    } else if (rc == SHEXEC_OK) {
        FZ_CHECK(check_kept_dups(v), "a refused document without a repeated key was kept");
        shx_buf strict = SHX_BUF_INIT;
        shx_json *w = NULL;
        FZ_CHECK(shx_json_parse(&w, (const char *)data, size, NULL, &strict) == SHEXEC_EINVAL &&
                     strict.data && strstr(strict.data, "duplicate key"),
                 "kept a document refused for another reason");
        shx_buf_free(&strict);
    }
    shx_json_free(v);
    shx_buf_free(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    shx_json *doc = parse_and_compare(data, size, NULL);
    check_keep_duplicates(data, size, doc != NULL);
    if (doc) {
        check_round_trip(doc, size);
        shx_json_free(doc);
    }

    /* Small limits, drawn from the input so a run is reproducible. */
    unsigned sum = 0;
    for (size_t i = 0; i < size; i++)
        sum = sum * 31 + data[i];
    shx_json_limits lim = {.max_depth = 1 + sum % 5, .max_items = 1 + (sum >> 3) % 24};
    shx_json_free(parse_and_compare(data, size, &lim));

    /* (max_size 0 would mean the default) */
    if (size > 1) {
        shx_json_limits tight = {.max_size = size - 1};
        shx_buf err = SHX_BUF_INIT;
        shx_json *v = (shx_json *)1;
        FZ_CHECK(shx_json_parse(&v, (const char *)data, size, &tight, &err) == SHEXEC_EINVAL &&
                     !v,
                 "a document over max_size was not refused");
        check_error(&err, size - 1, size);
        shx_buf_free(&err);
    }

    check_put_string(data, size);
    return 0;
}
