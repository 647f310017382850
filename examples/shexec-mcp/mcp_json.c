/*
 * mcp_json.c - strict JSON parsing with source spans, and JSON output with
 * UTF-8 repair, for the shexec-mcp server. See mcp_json.h.
 */
#include "mcp_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MJ_MAX_DEPTH 64

typedef struct {
    const char *p, *end, *start;
    char *err;
    size_t errlen;
    int depth;
} parser;

static int fail(parser *ps, const char *what)
{
    if (ps->errlen)
        snprintf(ps->err, ps->errlen, "%s at byte %zu", what, (size_t)(ps->p - ps->start));
    return -1;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t len;
    unsigned cp;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        len = 2;
        cp = s[0] & 0x1F;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3;
        cp = s[0] & 0x0F;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    /* overlong forms, surrogates and code points past U+10FFFF are invalid */
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* Parse a string literal at ps->p (which is '"'); decoded into *out. */
static int parse_string(parser *ps, char **out, size_t *out_len)
{
    const char *p = ps->p + 1;
    /* the decoded text is never longer than the literal */
    const char *close = p;
    while (close < ps->end && *close != '"') {
        if (*close == '\\')
            close++;
        close++;
    }
    if (close >= ps->end)
        return fail(ps, "unterminated string");
    char *buf = malloc((size_t)(close - p) + 1);
    if (!buf)
        return fail(ps, "out of memory");
    size_t n = 0;
    while (p < close) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20) {
            free(buf);
            ps->p = p;
            return fail(ps, "control character in string");
        }
        if (c == '\\') {
            char e = p[1];
            p += 2;
            switch (e) {
            case '"': buf[n++] = '"'; break;
            case '\\': buf[n++] = '\\'; break;
            case '/': buf[n++] = '/'; break;
            case 'b': buf[n++] = '\b'; break;
            case 'f': buf[n++] = '\f'; break;
            case 'n': buf[n++] = '\n'; break;
            case 'r': buf[n++] = '\r'; break;
            case 't': buf[n++] = '\t'; break;
            case 'u': {
                unsigned cp, lo;
                if (close - p < 4 || hex4(p, &cp) != 0) {
                    free(buf);
                    ps->p = p;
                    return fail(ps, "bad \\u escape");
                }
                p += 4;
                if (cp >= 0xD800 && cp <= 0xDBFF && close - p >= 6 && p[0] == '\\' &&
                    p[1] == 'u' && hex4(p + 2, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                } else if (cp >= 0xD800 && cp <= 0xDFFF) {
                    cp = 0xFFFD; /* a lone surrogate has no UTF-8 form */
                }
                n += put_utf8(buf + n, cp);
                break;
            }
            default:
                free(buf);
                ps->p = p - 2;
                return fail(ps, "bad escape");
            }
            continue;
        }
        size_t len = utf8_seq((const unsigned char *)p, (size_t)(close - p));
        if (!len) {
            free(buf);
            ps->p = p;
            return fail(ps, "invalid UTF-8");
        }
        memcpy(buf + n, p, len);
        n += len;
        p += len;
    }
    buf[n] = '\0';
    ps->p = close + 1;
    *out = buf;
    *out_len = n;
    return 0;
}

static int parse_number(parser *ps, mj_value *v)
{
    const char *p = ps->p;
    if (p < ps->end && *p == '-')
        p++;
    if (p >= ps->end)
        return fail(ps, "bad number");
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < ps->end && *p >= '0' && *p <= '9')
            p++;
    } else {
        return fail(ps, "bad number");
    }
    if (p < ps->end && *p == '.') {
        p++;
        if (p >= ps->end || *p < '0' || *p > '9')
            return fail(ps, "bad number");
        while (p < ps->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < ps->end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < ps->end && (*p == '+' || *p == '-'))
            p++;
        if (p >= ps->end || *p < '0' || *p > '9')
            return fail(ps, "bad number");
        while (p < ps->end && *p >= '0' && *p <= '9')
            p++;
    }
    char tmp[64];
    size_t n = (size_t)(p - ps->p);
    if (n >= sizeof tmp) { /* a long literal: strtod needs it terminated */
        char *heap = malloc(n + 1);
        if (!heap)
            return fail(ps, "out of memory");
        memcpy(heap, ps->p, n);
        heap[n] = '\0';
        v->number = strtod(heap, NULL);
        free(heap);
    } else {
        memcpy(tmp, ps->p, n);
        tmp[n] = '\0';
        v->number = strtod(tmp, NULL);
    }
    v->type = MJ_NUMBER;
    ps->p = p;
    return 0;
}

static int parse_value(parser *ps, mj_value *v);

static int grow(parser *ps, mj_value *v, size_t *cap, int with_keys)
{
    if (v->count < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 4;
    mj_value *items = realloc(v->items, ncap * sizeof *items);
    if (!items)
        return fail(ps, "out of memory");
    v->items = items;
    if (with_keys) {
        char **keys = realloc(v->keys, ncap * sizeof *keys);
        if (!keys)
            return fail(ps, "out of memory");
        v->keys = keys;
        size_t *lens = realloc(v->key_lens, ncap * sizeof *lens);
        if (!lens)
            return fail(ps, "out of memory");
        v->key_lens = lens;
    }
    *cap = ncap;
    return 0;
}

/* Order keys by length, then bytes, then position: equal keys end up next
 * to each other, the earliest first. */
typedef struct {
    const char *key;
    size_t len, index;
} key_ref;

static int key_ref_cmp(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    int c = memcmp(x->key, y->key, x->len);
    if (c)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int same_key(const mj_value *v, size_t i, size_t j)
{
    return v->key_lens[i] == v->key_lens[j] && memcmp(v->keys[i], v->keys[j], v->key_lens[i]) == 0;
}

/* Set v->dup_key for a parsed object. A message may hold millions of keys,
 * so beyond a few the keys are sorted rather than compared pairwise. */
static int mark_duplicate(parser *ps, mj_value *v)
{
    v->dup_key = 0;
    if (v->count <= 16) {
        for (size_t i = 1; i < v->count && !v->dup_key; i++)
            for (size_t j = 0; j < i; j++)
                if (same_key(v, i, j)) {
                    v->dup_key = i + 1;
                    break;
                }
        return 0;
    }
    key_ref *refs = malloc(v->count * sizeof *refs);
    if (!refs)
        return fail(ps, "out of memory");
    for (size_t i = 0; i < v->count; i++)
        refs[i] = (key_ref){v->keys[i], v->key_lens[i], i};
    qsort(refs, v->count, sizeof *refs, key_ref_cmp);
    /* a key equal to its sorted predecessor repeats an earlier one; the
     * smallest such position is the first repeat in the text */
    for (size_t i = 1; i < v->count; i++)
        if (refs[i].len == refs[i - 1].len && memcmp(refs[i].key, refs[i - 1].key, refs[i].len) == 0 &&
            (!v->dup_key || refs[i].index < v->dup_key - 1))
            v->dup_key = refs[i].index + 1;
    free(refs);
    return 0;
}

static int parse_container(parser *ps, mj_value *v, int object)
{
    if (++ps->depth > MJ_MAX_DEPTH)
        return fail(ps, "nesting too deep");
    v->type = object ? MJ_OBJECT : MJ_ARRAY;
    char close = object ? '}' : ']';
    size_t cap = 0;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        if (grow(ps, v, &cap, object) != 0)
            return -1;
        mj_value *item = &v->items[v->count];
        memset(item, 0, sizeof *item);
        if (object) {
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != '"')
                return fail(ps, "expected a string key");
            if (parse_string(ps, &v->keys[v->count], &v->key_lens[v->count]) != 0)
                return -1;
            v->count++; /* counted now so mj_free releases the key on error */
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':')
                return fail(ps, "expected ':'");
            ps->p++;
            if (parse_value(ps, item) != 0)
                return -1;
        } else {
            v->count++;
            if (parse_value(ps, item) != 0)
                return -1;
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            ps->depth--;
            return object ? mark_duplicate(ps, v) : 0;
        }
        return fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int literal(parser *ps, const char *word, size_t n)
{
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return fail(ps, "unexpected character");
    ps->p += n;
    return 0;
}

static int parse_value(parser *ps, mj_value *v)
{
    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail(ps, "unexpected end of input");
    v->raw = ps->p;
    int rc;
    switch (*ps->p) {
    case '{': rc = parse_container(ps, v, 1); break;
    case '[': rc = parse_container(ps, v, 0); break;
    case '"':
        v->type = MJ_STRING;
        rc = parse_string(ps, &v->str, &v->str_len);
        break;
    case 't':
        v->type = MJ_BOOL;
        v->boolean = 1;
        rc = literal(ps, "true", 4);
        break;
    case 'f':
        v->type = MJ_BOOL;
        rc = literal(ps, "false", 5);
        break;
    case 'n':
        v->type = MJ_NULL;
        rc = literal(ps, "null", 4);
        break;
    default: rc = parse_number(ps, v); break;
    }
    v->raw_len = (size_t)(ps->p - v->raw);
    return rc;
}

static void free_inner(mj_value *v)
{
    for (size_t i = 0; i < v->count; i++) {
        if (v->items)
            free_inner(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->key_lens);
    free(v->str);
}

void mj_free(mj_value *v)
{
    if (!v)
        return;
    free_inner(v);
    free(v);
}

int mj_parse(const char *text, size_t len, mj_value **out, char *err, size_t errlen)
{
    *out = NULL;
    parser ps = {text, text + len, text, err, errlen, 0};
    mj_value *v = calloc(1, sizeof *v);
    if (!v) {
        if (errlen)
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (parse_value(&ps, v) != 0) {
        mj_free(v);
        return -1;
    }
    skip_ws(&ps);
    if (ps.p != ps.end) {
        fail(&ps, "trailing characters after the value");
        mj_free(v);
        return -1;
    }
    *out = v;
    return 0;
}

const mj_value *mj_get(const mj_value *obj, const char *key)
{
    if (!obj || obj->type != MJ_OBJECT)
        return NULL;
    size_t klen = strlen(key);
    for (size_t i = obj->count; i-- > 0;)
        if (obj->key_lens[i] == klen && memcmp(obj->keys[i], key, klen) == 0)
            return &obj->items[i];
    return NULL;
}

size_t mj_count(const mj_value *obj, const char *key)
{
    if (!obj || obj->type != MJ_OBJECT)
        return 0;
    size_t klen = strlen(key), n = 0;
    for (size_t i = 0; i < obj->count; i++)
        n += obj->key_lens[i] == klen && memcmp(obj->keys[i], key, klen) == 0;
    return n;
}

int mj_str_eq(const mj_value *v, const char *s)
{
    size_t n = strlen(s);
    return v && v->type == MJ_STRING && v->str_len == n && memcmp(v->str, s, n) == 0;
}

const char *mj_duplicate_key(const mj_value *v, int deep, size_t *len)
{
    if (!v || (v->type != MJ_OBJECT && v->type != MJ_ARRAY))
        return NULL;
    if (v->type == MJ_OBJECT && v->dup_key) {
        *len = v->key_lens[v->dup_key - 1];
        return v->keys[v->dup_key - 1];
    }
    for (size_t i = 0; deep && i < v->count; i++) {
        const char *key = mj_duplicate_key(&v->items[i], 1, len);
        if (key)
            return key;
    }
    return NULL;
}

int mj_int(const mj_value *v, int64_t min, int64_t max, int64_t *out)
{
    if (!v || v->type != MJ_NUMBER || !isfinite(v->number) || v->number != floor(v->number) ||
        v->number < (double)min || v->number > (double)max)
        return 0;
    *out = (int64_t)v->number;
    return 1;
}

/* ---- output ---------------------------------------------------------- */

void mj_buf_free(mj_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}

static int reserve(mj_buf *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void mj_putn(mj_buf *b, const char *s, size_t n)
{
    if (reserve(b, n) != 0)
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void mj_puts(mj_buf *b, const char *s)
{
    mj_putn(b, s, strlen(s));
}

void mj_printf(mj_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void mj_put_string(mj_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    /* worst case: every byte becomes \u00XX (6) or U+FFFD (3) */
    if (reserve(b, n * 6 + 2) != 0)
        return;
    char *o = b->data + b->len;
    *o++ = '"';
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        unsigned char c = *p;
        if (c >= 0x80) {
            size_t len = utf8_seq(p, (size_t)(end - p));
            if (len) {
                memcpy(o, p, len);
                o += len;
                p += len;
            } else {
                /* bytes into the middle of the output, not a string */
                memcpy(o, "\xEF\xBF\xBD", 3); // NOLINT(bugprone-not-null-terminated-result)
                o += 3;
                p++;
            }
            continue;
        }
        p++;
        switch (c) {
        case '"': *o++ = '\\'; *o++ = '"'; break;
        case '\\': *o++ = '\\'; *o++ = '\\'; break;
        case '\n': *o++ = '\\'; *o++ = 'n'; break;
        case '\r': *o++ = '\\'; *o++ = 'r'; break;
        case '\t': *o++ = '\\'; *o++ = 't'; break;
        case '\b': *o++ = '\\'; *o++ = 'b'; break;
        case '\f': *o++ = '\\'; *o++ = 'f'; break;
        default:
            if (c < 0x20 || c == 0x7F) {
                memcpy(o, "\\u00", 4); // NOLINT(bugprone-not-null-terminated-result): mid-output
                o[4] = hex[c >> 4];
                o[5] = hex[c & 15];
                o += 6;
            } else {
                *o++ = (char)c;
            }
        }
    }
    *o++ = '"';
    b->len = (size_t)(o - b->data);
    b->data[b->len] = '\0';
}

size_t mj_utf8_complete_prefix(const char *s, size_t n)
{
    /* look back at most 3 bytes for a lead byte whose sequence is cut */
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        unsigned char c = (unsigned char)s[n - back];
        if ((c & 0xC0) == 0x80)
            continue; /* continuation: keep looking for the lead */
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return need > back ? n - back : n;
    }
    return n;
}
