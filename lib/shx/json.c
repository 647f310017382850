/*
 * json.c - the strict JSON parser (iterative, bounded, arena-allocated DOM)
 * and the JSON writer (see json.h).
 */
#include "shx/json.h"

#include <inttypes.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shx/utf8.h"

/* ------------------------------------------------------------------------
 * Arena: a document is many small nodes and strings freed all at once, so
 * they are bump-allocated from a chain of blocks. That makes freeing O(blocks)
 * and non-recursive, and makes "nothing leaked on error" a single call.
 * ------------------------------------------------------------------------ */

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    max_align_t data[]; /* max_align_t so every bump offset rounded to its
                           alignment is aligned for any node or array */
} arena_block;

#define ARENA_FIRST_BLOCK 4096u
#define ARENA_MAX_BLOCK ((size_t)1 << 20)

static void *arena_alloc(arena_block **head, size_t n)
{
    const size_t al = alignof(max_align_t);
    if (n > SIZE_MAX - al)
        return NULL;
    n = (n + al - 1) & ~(al - 1);
    arena_block *b = *head;
    if (!b || b->cap - b->used < n) {
        size_t cap = b ? b->cap * 2 : ARENA_FIRST_BLOCK;
        if (cap > ARENA_MAX_BLOCK)
            cap = ARENA_MAX_BLOCK;
        if (cap < n)
            cap = n;
        if (cap > SIZE_MAX - sizeof(arena_block))
            return NULL;
        arena_block *nb = malloc(sizeof(arena_block) + cap);
        if (!nb)
            return NULL;
        nb->next = b;
        nb->used = 0;
        nb->cap = cap;
        *head = b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

static void arena_free(arena_block *b)
{
    while (b) {
        arena_block *next = b->next;
        free(b);
        b = next;
    }
}

/* ------------------------------------------------------------------------
 * Parser state
 * ------------------------------------------------------------------------ */

/* A finished value waiting for its container to close. */
typedef struct pending {
    const char *key; /* objects only */
    size_t key_len;
    size_t key_off; /* where the key's quote is, for the duplicate-key error */
    shx_json *value;
} pending;

/* An open container. */
typedef struct frame {
    int is_object;
    size_t start; /* its first entry in parser.pend */
    const char *key; /* object: the key of the value being parsed */
    size_t key_len, key_off;
} frame;

typedef struct parser {
    const unsigned char *s;
    size_t n, pos;
    size_t max_depth, max_items, items;
    arena_block *arena;
    shx_buf scratch; /* decoded string being built */
    /* Children of all open containers, innermost last: one shared stack
     * instead of a growing array per container. */
    pending *pend;
    size_t npend, cap_pend;
    frame *frames;
    size_t depth, cap_frames;
    const pending **sorted; /* scratch for the duplicate-key check */
    size_t cap_sorted;
    int keep_duplicates;
    size_t dup_index; /* check_duplicates' finding, when duplicates are kept */
    shx_buf *err;
} parser;

/* Grow the array whose pointer is at `slot` (any object pointer type: it is
 * read and written with memcpy, so no pointer is accessed through a
 * void ** of another type) to hold `need` elements of `elem` bytes. */
static int grow(void *slot, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2 / elem)
            return -1;
        c *= 2;
    }
    void *old;
    memcpy(&old, slot, sizeof old);
    void *np = realloc(old, c * elem);
    if (!np)
        return -1;
    memcpy(slot, &np, sizeof np);
    *cap = c;
    return 0;
}

static int oom(parser *p)
{
    if (p->err)
        shx_buf_puts(p->err, "out of memory");
    return SHEXEC_ENOMEM;
}

static int fail(parser *p, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(parser *p, size_t off, const char *fmt, ...)
{
    if (!p->err)
        return SHEXEC_EINVAL;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof msg, fmt, ap); /* a cut message is still a message */
    va_end(ap);
    shx_buf_printf(p->err, "invalid JSON at byte %zu: %s", off, msg);
    return SHEXEC_EINVAL;
}

/* What is at `off`, for "found ..." in messages; never echoes a raw
 * non-printable byte, so the message stays one clean line. */
static const char *describe(const parser *p, size_t off, char *tmp, size_t tmpsz)
{
    if (off >= p->n)
        return "end of input";
    unsigned char c = p->s[off];
    if (c > 0x20 && c < 0x7f)
        (void)snprintf(tmp, tmpsz, "'%c'", c);
    else
        (void)snprintf(tmp, tmpsz, "byte 0x%02X", c);
    return tmp;
}

static int fail_found(parser *p, const char *expected)
{
    char tmp[16];
    return fail(p, p->pos, "%s, found %s", expected, describe(p, p->pos, tmp, sizeof tmp));
}

static void skip_ws(parser *p)
{
    while (p->pos < p->n) {
        unsigned char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int hex_val(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Four hex digits at off, or -1. */
static long hex4(const parser *p, size_t off)
{
    if (off > p->n || p->n - off < 4)
        return -1;
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_val(p->s[off + (size_t)i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/*
 * Decode the string whose opening quote is at p->pos into p->scratch and
 * copy it into the arena. On return p->pos is past the closing quote.
 */
static int parse_string(parser *p, const char **out, size_t *out_len)
{
    size_t open = p->pos++;
    shx_buf_clear(&p->scratch);
    for (;;) {
        size_t run = p->pos;
        while (p->pos < p->n) {
            unsigned char c = p->s[p->pos];
            if (c < 0x20 || c == '"' || c == '\\')
                break;
            if (c < 0x80) {
                p->pos++;
                continue;
            }
            size_t k = shx_utf8_char_len(p->s + p->pos, p->n - p->pos, 1);
            if (k == 1)
                break;
            p->pos += k;
        }
        if (shx_buf_append(&p->scratch, p->s + run, p->pos - run) != 0)
            return oom(p);
        if (p->pos >= p->n)
            return fail(p, open, "unterminated string");
        unsigned char c = p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c >= 0x80)
            return fail(p, p->pos, "invalid UTF-8 in string (byte 0x%02X)", c);
        if (c < 0x20)
            return fail(p, p->pos, "control character U+%04X in string must be escaped", c);
        /* a backslash */
        size_t esc = p->pos;
        if (esc + 1 >= p->n)
            return fail(p, open, "unterminated string");
        unsigned char e = p->s[esc + 1];
        char simple = 0;
        switch (e) {
        case '"': simple = '"'; break;
        case '\\': simple = '\\'; break;
        case '/': simple = '/'; break;
        case 'b': simple = '\b'; break;
        case 'f': simple = '\f'; break;
        case 'n': simple = '\n'; break;
        case 'r': simple = '\r'; break;
        case 't': simple = '\t'; break;
        case 'u': break;
        default: {
            char tmp[16];
            return fail(p, esc, "invalid escape '\\' followed by %s",
                        describe(p, esc + 1, tmp, sizeof tmp));
        }
        }
        if (simple) {
            if (shx_buf_putc(&p->scratch, simple) != 0)
                return oom(p);
            p->pos = esc + 2;
            continue;
        }
        long cp = hex4(p, esc + 2);
        if (cp < 0)
            return fail(p, esc, "\\u must be followed by 4 hex digits");
        p->pos = esc + 6;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return fail(p, esc, "unpaired surrogate \\u%04lX", cp);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            long lo = -1;
            if (p->pos + 1 < p->n && p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u')
                lo = hex4(p, p->pos + 2);
            if (lo < 0xDC00 || lo > 0xDFFF)
                return fail(p, esc, "unpaired surrogate \\u%04lX", cp);
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p->pos += 6;
        }
        if (shx_buf_put_utf8(&p->scratch, (uint32_t)cp) != 0)
            return oom(p);
    }
    size_t len = p->scratch.len;
    if (len == 0) {
        *out = "";
        *out_len = 0;
        return SHEXEC_OK;
    }
    char *s = arena_alloc(&p->arena, len + 1);
    if (!s)
        return oom(p);
    memcpy(s, p->scratch.data, len);
    s[len] = '\0';
    *out = s;
    *out_len = len;
    return SHEXEC_OK;
}

/* Validate RFC 8259 number syntax at p->pos; the text is kept verbatim. */
static int parse_number(parser *p, const char **out, size_t *out_len)
{
    const unsigned char *s = p->s;
    size_t start = p->pos, i = start, n = p->n;
    if (s[i] == '-')
        i++;
    if (i >= n || !is_digit(s[i])) {
        p->pos = i;
        return fail_found(p, "expected a digit after '-'");
    }
    if (s[i] == '0') {
        i++;
        if (i < n && is_digit(s[i]))
            return fail(p, start, "leading zeros are not allowed");
    } else {
        while (i < n && is_digit(s[i]))
            i++;
    }
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || !is_digit(s[i])) {
            p->pos = i;
            return fail_found(p, "expected a digit after '.'");
        }
        while (i < n && is_digit(s[i]))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || !is_digit(s[i])) {
            p->pos = i;
            return fail_found(p, "expected a digit in the exponent");
        }
        while (i < n && is_digit(s[i]))
            i++;
    }
    size_t len = i - start;
    char *t = arena_alloc(&p->arena, len + 1);
    if (!t)
        return oom(p);
    memcpy(t, s + start, len);
    t[len] = '\0';
    p->pos = i;
    *out = t;
    *out_len = len;
    return SHEXEC_OK;
}

static shx_json *new_node(parser *p, shx_json_type type)
{
    shx_json *v = arena_alloc(&p->arena, sizeof *v);
    if (v)
        *v = (shx_json){.type = type};
    return v;
}

static int count_item(parser *p)
{
    if (++p->items > p->max_items)
        return fail(p, p->pos, "more than %zu values", p->max_items);
    return SHEXEC_OK;
}

/* A scalar value at p->pos. */
static int parse_scalar(parser *p, shx_json **out)
{
    int rc = count_item(p);
    if (rc)
        return rc;
    unsigned char c = p->s[p->pos];
    shx_json *v;
    if (c == '"' || c == '-' || is_digit(c)) {
        int is_str = c == '"';
        v = new_node(p, is_str ? SHX_JSON_STRING : SHX_JSON_NUMBER);
        if (!v)
            return oom(p);
        rc = is_str ? parse_string(p, &v->str, &v->len) : parse_number(p, &v->str, &v->len);
        if (rc)
            return rc;
        *out = v;
        return SHEXEC_OK;
    }
    static const struct {
        const char *word;
        size_t len;
        shx_json_type type;
        int boolean;
    } lits[] = {
        {"true", 4, SHX_JSON_BOOL, 1},
        {"false", 5, SHX_JSON_BOOL, 0},
        {"null", 4, SHX_JSON_NULL, 0},
    };
    for (size_t i = 0; i < sizeof lits / sizeof lits[0]; i++) {
        if (c != (unsigned char)lits[i].word[0])
            continue;
        if (p->n - p->pos < lits[i].len || memcmp(p->s + p->pos, lits[i].word, lits[i].len) != 0)
            return fail(p, p->pos, "invalid literal (expected '%s')", lits[i].word);
        v = new_node(p, lits[i].type);
        if (!v)
            return oom(p);
        v->boolean = lits[i].boolean;
        p->pos += lits[i].len;
        *out = v;
        return SHEXEC_OK;
    }
    return fail_found(p, "expected a value");
}

/* An object key at p->pos, then the ':' and the whitespace after it. */
static int parse_key(parser *p, const char *expected)
{
    frame *f = &p->frames[p->depth - 1];
    if (p->pos >= p->n || p->s[p->pos] != '"')
        return fail_found(p, expected);
    f->key_off = p->pos;
    int rc = parse_string(p, &f->key, &f->key_len);
    if (rc)
        return rc;
    skip_ws(p);
    if (p->pos >= p->n || p->s[p->pos] != ':')
        return fail_found(p, "expected ':' after an object key");
    p->pos++;
    skip_ws(p);
    return SHEXEC_OK;
}

static int cmp_key(const pending *a, const pending *b)
{
    size_t n = a->key_len < b->key_len ? a->key_len : b->key_len;
    int c = memcmp(a->key, b->key, n);
    if (c)
        return c;
    return a->key_len < b->key_len ? -1 : a->key_len > b->key_len;
}

static int cmp_pending(const void *x, const void *y)
{
    const pending *a = *(const pending *const *)x, *b = *(const pending *const *)y;
    int c = cmp_key(a, b);
    if (c)
        return c;
    return a->key_off < b->key_off ? -1 : a->key_off > b->key_off;
}

static int fail_duplicate(parser *p, const pending *dup)
{
    if (!p->err)
        return SHEXEC_EINVAL;
    /* The key is model-written: quote it through the writer and cap it so
     * the message stays one short valid-UTF-8 line. */
    size_t len = dup->key_len, cut = 64;
    int truncated = len > cut;
    if (truncated) {
        len = cut;
        while (len > 0 && ((unsigned char)dup->key[len] & 0xC0) == 0x80)
            len--;
    }
    shx_buf q = SHX_BUF_INIT;
    if (shx_json_put_string(&q, dup->key, len) == 0)
        shx_buf_printf(p->err, "invalid JSON at byte %zu: duplicate key %s%s", dup->key_off,
                       q.data, truncated ? "..." : "");
    shx_buf_free(&q);
    return SHEXEC_EINVAL;
}

/* Reject an object with a repeated key, naming the earliest repetition. The
 * entries are p->pend[start .. start + cnt): an index, not a second pointer
 * into the block, because with a const pointer to it passed alongside p the
 * static analyzer loses track of the block and reports it leaked. */
static int check_duplicates(parser *p, size_t start, size_t cnt)
{
    const pending *m = p->pend + start;
    const pending *dup = NULL;
    if (cnt <= 16) {
        /* The common case: a handful of tool arguments. */
        for (size_t j = 1; j < cnt && !dup; j++)
            for (size_t i = 0; i < j; i++)
                if (cmp_key(&m[i], &m[j]) == 0) {
                    dup = &m[j];
                    break;
                }
    } else {
        /* Sorting keeps a hostile object with many keys O(n log n). */
        // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers, sized per pointer
        if (grow(&p->sorted, &p->cap_sorted, cnt, sizeof *p->sorted) != 0)
            return oom(p);
        for (size_t i = 0; i < cnt; i++)
            p->sorted[i] = &m[i];
        // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers, sized per pointer
        qsort(p->sorted, cnt, sizeof *p->sorted, cmp_pending);
        for (size_t i = 1; i < cnt; i++) {
            const pending *a = p->sorted[i - 1], *b = p->sorted[i];
            /* within a run of equal keys the second is the first repetition */
            if (cmp_key(a, b) == 0 && (i < 2 || cmp_key(p->sorted[i - 2], a) != 0) &&
                (!dup || b->key_off < dup->key_off))
                dup = b;
        }
    }
    if (dup && p->keep_duplicates) {
        p->dup_index = (size_t)(dup - m) + 1;
        return SHEXEC_OK;
    }
    return dup ? fail_duplicate(p, dup) : SHEXEC_OK;
}

/* Close the innermost container: turn its pending entries into a node. */
static int close_container(parser *p, shx_json **out)
{
    frame *f = &p->frames[p->depth - 1];
    size_t cnt = p->npend - f->start;
    const pending *m = cnt ? p->pend + f->start : NULL; /* pend may still be NULL */
    p->dup_index = 0;
    if (f->is_object && cnt > 1) {
        int rc = check_duplicates(p, f->start, cnt);
        if (rc)
            return rc;
    }
    shx_json *v = new_node(p, f->is_object ? SHX_JSON_OBJECT : SHX_JSON_ARRAY);
    if (!v)
        return oom(p);
    v->dup_key = p->dup_index;
    if (cnt) {
        if (cnt > SIZE_MAX / sizeof(shx_json_str))
            return oom(p);
        // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers, sized per pointer
        v->items = arena_alloc(&p->arena, cnt * sizeof *v->items);
        if (!v->items)
            return oom(p);
        for (size_t i = 0; i < cnt; i++)
            v->items[i] = m[i].value;
        if (f->is_object) {
            v->keys = arena_alloc(&p->arena, cnt * sizeof *v->keys);
            if (!v->keys)
                return oom(p);
            for (size_t i = 0; i < cnt; i++)
                v->keys[i] = (shx_json_str){m[i].key, m[i].key_len};
        }
    }
    v->count = cnt;
    p->npend = f->start;
    p->depth--;
    *out = v;
    return SHEXEC_OK;
}

static int parse_document(parser *p, shx_json **root)
{
    int rc;
    skip_ws(p);
    for (;;) {
        /* A value starts at p->pos (whitespace already skipped). */
        shx_json *v = NULL;
        if (p->pos >= p->n)
            return fail_found(p, "expected a value");
        unsigned char c = p->s[p->pos];
        if (c == '[' || c == '{') {
            if ((rc = count_item(p)) != 0)
                return rc;
            if (p->depth >= p->max_depth)
                return fail(p, p->pos, "nesting deeper than %zu levels", p->max_depth);
            if (grow(&p->frames, &p->cap_frames, p->depth + 1, sizeof *p->frames) != 0)
                return oom(p);
            p->frames[p->depth++] = (frame){.is_object = c == '{', .start = p->npend};
            p->pos++;
            skip_ws(p);
            unsigned char close = c == '[' ? ']' : '}';
            if (p->pos < p->n && p->s[p->pos] == close) {
                p->pos++;
                if ((rc = close_container(p, &v)) != 0)
                    return rc;
            } else if (c == '[') {
                continue;
            } else {
                if ((rc = parse_key(p, "expected a string key or '}'")) != 0)
                    return rc;
                continue;
            }
        } else if ((rc = parse_scalar(p, &v)) != 0) {
            return rc;
        }
        /* v is complete: hand it to its container, closing as many as end here. */
        for (;;) {
            if (p->depth == 0) {
                *root = v;
                skip_ws(p);
                if (p->pos < p->n)
                    return fail_found(p, "expected end of input after the value");
                return SHEXEC_OK;
            }
            frame *f = &p->frames[p->depth - 1];
            if (grow(&p->pend, &p->cap_pend, p->npend + 1, sizeof *p->pend) != 0)
                return oom(p);
            p->pend[p->npend++] = (pending){f->key, f->key_len, f->key_off, v};
            skip_ws(p);
            unsigned char close = f->is_object ? '}' : ']';
            if (p->pos < p->n && p->s[p->pos] == ',') {
                p->pos++;
                skip_ws(p);
                if (f->is_object && (rc = parse_key(p, "expected a string key")) != 0)
                    return rc;
                break;
            }
            if (p->pos < p->n && p->s[p->pos] == close) {
                p->pos++;
                if ((rc = close_container(p, &v)) != 0)
                    return rc;
                continue;
            }
            return fail_found(p, f->is_object ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
}

int shx_json_parse(shx_json **out, const char *text, size_t len, const shx_json_limits *lim,
                   shx_buf *err)
{
    if (!out)
        return SHEXEC_EINVAL;
    *out = NULL;
    if (!text && len)
        return SHEXEC_EINVAL;
    parser p = {
        .s = (const unsigned char *)(text ? text : ""),
        .n = len,
        .max_depth = lim && lim->max_depth ? lim->max_depth : SHX_JSON_DEFAULT_MAX_DEPTH,
        .max_items = lim && lim->max_items ? lim->max_items : SHX_JSON_DEFAULT_MAX_ITEMS,
        .scratch = SHX_BUF_INIT,
        .err = err,
        .keep_duplicates = lim && lim->keep_duplicate_keys,
    };
    size_t max_size = lim && lim->max_size ? lim->max_size : SHX_JSON_DEFAULT_MAX_SIZE;
    if (len > max_size)
        return fail(&p, max_size, "document larger than the limit of %zu bytes", max_size);
    shx_json *root = NULL;
    int rc = parse_document(&p, &root);
    shx_buf_free(&p.scratch);
    free(p.pend);
    free(p.frames);
    free(p.sorted);
    /* parse_document sets root whenever it succeeds; the analyzer cannot
     * see that, because the failure paths return through variadic fail(). */
    if (rc == SHEXEC_OK && !root)
        rc = SHEXEC_EINVAL;
    if (rc) {
        arena_free(p.arena);
        return rc;
    }
    /* Blocks are chained newest first, so the head reaches all of them. */
    root->arena_ = p.arena;
    *out = root;
    return SHEXEC_OK;
}

void shx_json_free(shx_json *v)
{
    if (v && v->arena_)
        arena_free(v->arena_);
}

/* ------------------------------------------------------------------------
 * Accessors
 * ------------------------------------------------------------------------ */

int shx_json_is(const shx_json *v, shx_json_type t)
{
    return v && v->type == t;
}

int shx_json_bool(const shx_json *v, int *out)
{
    if (!shx_json_is(v, SHX_JSON_BOOL) || !out)
        return SHEXEC_EINVAL;
    *out = v->boolean;
    return SHEXEC_OK;
}

const char *shx_json_string(const shx_json *v, size_t *len)
{
    if (!shx_json_is(v, SHX_JSON_STRING))
        return NULL;
    if (len)
        *len = v->len;
    return v->str;
}

size_t shx_json_count(const shx_json *v)
{
    return v && (v->type == SHX_JSON_ARRAY || v->type == SHX_JSON_OBJECT) ? v->count : 0;
}

const shx_json *shx_json_item(const shx_json *v, size_t i)
{
    return i < shx_json_count(v) ? v->items[i] : NULL;
}

const char *shx_json_key(const shx_json *v, size_t i, size_t *len)
{
    if (!shx_json_is(v, SHX_JSON_OBJECT) || i >= v->count)
        return NULL;
    if (len)
        *len = v->keys[i].len;
    return v->keys[i].str;
}

const shx_json *shx_json_get(const shx_json *obj, const char *key)
{
    if (!shx_json_is(obj, SHX_JSON_OBJECT) || !key)
        return NULL;
    size_t n = strlen(key);
    for (size_t i = 0; i < obj->count; i++)
        if (obj->keys[i].len == n && memcmp(obj->keys[i].str, key, n) == 0)
            return obj->items[i];
    return NULL;
}

const char *shx_json_duplicate_key(const shx_json *v, int deep, size_t *len)
{
    if (len)
        *len = 0;
    if (!v)
        return NULL;
    if (v->type == SHX_JSON_OBJECT && v->dup_key) {
        if (len)
            *len = v->keys[v->dup_key - 1].len;
        return v->keys[v->dup_key - 1].str;
    }
    if (!deep || (v->type != SHX_JSON_OBJECT && v->type != SHX_JSON_ARRAY))
        return NULL;
    /* depth first, one (container, next item) pair per open container */
    typedef struct {
        const shx_json *c;
        size_t i;
    } level;
    size_t cap = 16, top = 0;
    level *st = malloc(cap * sizeof *st);
    if (!st)
        return NULL;
    st[top++] = (level){v, 0};
    const char *found = NULL;
    while (top && !found) {
        level *l = &st[top - 1];
        if (l->i == l->c->count) {
            top--;
            continue;
        }
        const shx_json *c = l->c->items[l->i++];
        if (c->type == SHX_JSON_OBJECT && c->dup_key) {
            found = c->keys[c->dup_key - 1].str;
            if (len)
                *len = c->keys[c->dup_key - 1].len;
        } else if ((c->type == SHX_JSON_OBJECT || c->type == SHX_JSON_ARRAY) && c->count) {
            if (top == cap) {
                level *grown = realloc(st, 2 * cap * sizeof *st);
                if (!grown)
                    break;
                st = grown;
                cap *= 2;
            }
            st[top++] = (level){c, 0};
        }
    }
    free(st);
    return found;
}

/*
 * The number's value is sig * 10^e where sig is its significant digits with
 * no leading or trailing zeros. It is an integer iff e >= 0, and fits in
 * int64 only with at most 19 digits in all, which also fits in uint64, so
 * the final check is exact integer arithmetic.
 */
int shx_json_int64(const shx_json *v, int64_t *out)
{
    if (!shx_json_is(v, SHX_JSON_NUMBER) || !out)
        return SHEXEC_EINVAL;
    const char *s = v->str, *end = v->str + v->len;
    int neg = *s == '-';
    if (neg)
        s++;
    const char *ip = s;
    while (s < end && is_digit((unsigned char)*s))
        s++;
    size_t ilen = (size_t)(s - ip);
    const char *fp = s;
    size_t flen = 0;
    if (s < end && *s == '.') {
        fp = ++s;
        while (s < end && is_digit((unsigned char)*s))
            s++;
        flen = (size_t)(s - fp);
    }
    /* Exponents beyond +-1e15 saturate: with at most SIZE_MAX digits of
     * input the answer no longer depends on the exact value. */
    const int64_t cap = INT64_C(1000000000000000);
    int64_t exp = 0;
    if (s < end && (*s == 'e' || *s == 'E')) {
        s++;
        int eneg = 0;
        if (s < end && (*s == '+' || *s == '-'))
            eneg = *s++ == '-';
        for (; s < end; s++)
            if (exp < cap)
                exp = exp * 10 + (*s - '0');
        if (eneg)
            exp = -exp;
    }
    size_t total = ilen + flen;
#define DIGIT(k) ((k) < ilen ? ip[(k)] : fp[(k) - ilen])
    size_t first = 0;
    while (first < total && DIGIT(first) == '0')
        first++;
    if (first == total) {
        *out = 0;
        return SHEXEC_OK;
    }
    size_t last = total - 1;
    while (DIGIT(last) == '0')
        last--;
    size_t sig = last - first + 1;
    if (sig > 19 || flen > (size_t)cap || total - 1 - last > (size_t)cap)
        return SHEXEC_EINVAL;
    int64_t e = exp + (int64_t)(total - 1 - last) - (int64_t)flen;
    if (e < 0 || (int64_t)sig + e > 19)
        return SHEXEC_EINVAL;
    uint64_t u = 0;
    for (size_t k = first; k <= last; k++)
        u = u * 10 + (uint64_t)(DIGIT(k) - '0');
#undef DIGIT
    for (int64_t k = 0; k < e; k++)
        u *= 10;
    uint64_t lim = neg ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1;
    if (u > lim)
        return SHEXEC_EINVAL;
    *out = neg ? (u == (uint64_t)1 << 63 ? INT64_MIN : -(int64_t)u) : (int64_t)u;
    return SHEXEC_OK;
}

/* ------------------------------------------------------------------------
 * Writer
 * ------------------------------------------------------------------------ */

static int put_string_raw(shx_buf *b, const char *str, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    if (shx_buf_putc(b, '"') != 0)
        return -1;
    size_t i = 0, run = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t k = shx_utf8_char_len(s + i, len - i, 1);
            if (k > 1) {
                i += k;
                continue;
            }
        }
        if (shx_buf_append(b, s + run, i - run) != 0)
            return -1;
        char esc[6] = {'\\', 0, '0', '0', 0, 0};
        size_t n = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\t': esc[1] = 't'; break;
        case '\n': esc[1] = 'n'; break;
        case '\f': esc[1] = 'f'; break;
        case '\r': esc[1] = 'r'; break;
        default:
            if (c < 0x20) {
                esc[1] = 'u';
                esc[4] = hex[c >> 4];
                esc[5] = hex[c & 15];
                n = 6;
            } else {
                memcpy(esc, "\xEF\xBF\xBD", 3); /* U+FFFD for an invalid byte */
                n = 3;
            }
        }
        if (shx_buf_append(b, esc, n) != 0)
            return -1;
        i++;
        run = i;
    }
    if (shx_buf_append(b, s + run, i - run) != 0)
        return -1;
    return shx_buf_putc(b, '"');
}

/* Run a writer and undo its partial output if it fails. */
static int restore(shx_buf *b, size_t len, int rc)
{
    if (rc != 0 && b->data) {
        b->len = len;
        b->data[len] = '\0';
    }
    return rc;
}

int shx_json_put_string(shx_buf *b, const char *s, size_t len)
{
    if (!b || (!s && len))
        return -1;
    size_t old = b->len;
    return restore(b, old, put_string_raw(b, s ? s : "", len));
}

int shx_json_put_int64(shx_buf *b, int64_t v)
{
    return shx_buf_printf(b, "%" PRId64, v);
}

int shx_json_put_uint64(shx_buf *b, uint64_t v)
{
    return shx_buf_printf(b, "%" PRIu64, v);
}

int shx_json_put_bool(shx_buf *b, int v)
{
    return shx_buf_puts(b, v ? "true" : "false");
}

/* One scalar, or the opening bracket of a container. */
static int put_node_head(shx_buf *b, const shx_json *v)
{
    switch (v->type) {
    case SHX_JSON_NULL: return shx_buf_puts(b, "null");
    case SHX_JSON_BOOL: return shx_json_put_bool(b, v->boolean);
    case SHX_JSON_NUMBER: return shx_buf_append(b, v->str, v->len);
    case SHX_JSON_STRING: return put_string_raw(b, v->str, v->len);
    case SHX_JSON_ARRAY: return shx_buf_putc(b, '[');
    case SHX_JSON_OBJECT: return shx_buf_putc(b, '{');
    }
    return -1;
}

static int write_tree(shx_buf *b, const shx_json *root, void **stackp)
{
    /* An explicit stack of (container, next child) instead of recursion:
     * the depth is whatever the parser's limit allowed. */
    struct wframe {
        const shx_json *node;
        size_t next;
    } *stack = NULL;
    size_t depth = 0, cap = 0;
    const shx_json *cur = root;
    for (;;) {
        if (cur) {
            if (put_node_head(b, cur) != 0)
                return -1;
            if (cur->type == SHX_JSON_ARRAY || cur->type == SHX_JSON_OBJECT) {
                if (grow(&stack, &cap, depth + 1, sizeof *stack) != 0)
                    return -1;
                *stackp = stack;
                stack[depth++] = (struct wframe){cur, 0};
            }
            cur = NULL;
        }
        if (depth == 0)
            return 0;
        struct wframe *f = &stack[depth - 1];
        int obj = f->node->type == SHX_JSON_OBJECT;
        if (f->next == f->node->count) {
            if (shx_buf_putc(b, obj ? '}' : ']') != 0)
                return -1;
            depth--;
            continue;
        }
        if (f->next > 0 && shx_buf_putc(b, ',') != 0)
            return -1;
        if (obj) {
            const shx_json_str *k = &f->node->keys[f->next];
            if (put_string_raw(b, k->str, k->len) != 0 || shx_buf_putc(b, ':') != 0)
                return -1;
        }
        cur = f->node->items[f->next++];
    }
}

int shx_json_write(shx_buf *b, const shx_json *v)
{
    if (!b || !v)
        return -1;
    size_t old = b->len;
    void *stack = NULL;
    int rc = write_tree(b, v, &stack);
    free(stack);
    return restore(b, old, rc);
}
