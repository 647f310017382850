/*
 * fuzz_mcp_json.c - the shexec-mcp server's own JSON code
 * (examples/shexec-mcp/mcp_json.c), which parses every message an MCP
 * client sends.
 *
 * Invariants checked:
 *   - parsing never crashes, and every value's source span lies inside the
 *     input (ids and progress tokens are echoed from those spans);
 *   - a parsed tree written back out (strings through mj_put_string) parses
 *     again to the same tree: types, counts, keys, string bytes, numbers;
 *   - every object's dup_key is the first key that repeats an earlier one,
 *     byte for byte (NULs included), as a pairwise comparison finds it, and
 *     mj_duplicate_key(deep) finds a repeat exactly when some object has one;
 *   - mj_put_string of arbitrary bytes is always valid JSON whose decoded
 *     text is the input when the input was valid UTF-8 (no NUL-free
 *     assumption: NULs round-trip too);
 *   - mj_utf8_complete_prefix never cuts more than an incomplete final
 *     character (at most 3 bytes) and never leaves one behind.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzzutil.h"
#include "mcp_json.h"

static void write_value(mj_buf *b, const mj_value *v)
{
    switch (v->type) {
    case MJ_NULL: mj_puts(b, "null"); break;
    case MJ_BOOL: mj_puts(b, v->boolean ? "true" : "false"); break;
    case MJ_NUMBER: mj_putn(b, v->raw, v->raw_len); break;
    case MJ_STRING: mj_put_string(b, v->str, v->str_len); break;
    case MJ_ARRAY:
    case MJ_OBJECT:
        mj_puts(b, v->type == MJ_ARRAY ? "[" : "{");
        for (size_t i = 0; i < v->count; i++) {
            if (i)
                mj_puts(b, ",");
            if (v->type == MJ_OBJECT) {
                mj_put_string(b, v->keys[i], v->key_lens[i]);
                mj_puts(b, ":");
            }
            write_value(b, &v->items[i]);
        }
        mj_puts(b, v->type == MJ_ARRAY ? "]" : "}");
        break;
    }
}

static void check_spans(const mj_value *v, const char *text, size_t len)
{
    FZ_CHECK(v->raw >= text && v->raw + v->raw_len <= text + len && v->raw_len > 0,
             "span outside the input");
    for (size_t i = 0; (v->type == MJ_ARRAY || v->type == MJ_OBJECT) && i < v->count; i++)
        check_spans(&v->items[i], text, len);
}

/* Checks every object's dup_key against the obvious quadratic search;
 * returns 1 when some object in v repeats a key. */
static int check_dups(const mj_value *v)
{
    if (v->type != MJ_ARRAY && v->type != MJ_OBJECT)
        return 0;
    int any = 0;
    if (v->type == MJ_OBJECT) {
        size_t first = 0;
        for (size_t i = 1; i < v->count && !first; i++)
            for (size_t j = 0; j < i && !first; j++)
                if (v->key_lens[i] == v->key_lens[j] &&
                    memcmp(v->keys[i], v->keys[j], v->key_lens[i]) == 0)
                    first = i + 1;
        FZ_CHECK(v->dup_key == first, "dup_key %zu, the first repeat is %zu", v->dup_key, first);
        any = first != 0;
        size_t len = 0;
        const char *key = mj_duplicate_key(v, 0, &len);
        FZ_CHECK(!key == !first, "mj_duplicate_key disagrees with dup_key");
        if (key && strlen(key) == len) /* mj_count takes a C string */
            FZ_CHECK(mj_count(v, key) >= 2, "a repeated key counted less than twice");
    }
    for (size_t i = 0; i < v->count; i++)
        any |= check_dups(&v->items[i]);
    size_t len;
    FZ_CHECK(!mj_duplicate_key(v, 1, &len) == !any, "deep mj_duplicate_key disagrees");
    return any;
}

static void check_same(const mj_value *a, const mj_value *b)
{
    FZ_CHECK(a->type == b->type, "type %d became %d", (int)a->type, (int)b->type);
    switch (a->type) {
    case MJ_BOOL: FZ_CHECK(a->boolean == b->boolean, "bool changed"); break;
    case MJ_NUMBER:
        FZ_CHECK(a->number == b->number || (a->number != a->number && b->number != b->number),
                 "number changed");
        break;
    case MJ_STRING:
        FZ_CHECK(a->str_len == b->str_len && memcmp(a->str, b->str, a->str_len) == 0,
                 "string changed");
        break;
    case MJ_ARRAY:
    case MJ_OBJECT:
        FZ_CHECK(a->count == b->count, "count changed");
        for (size_t i = 0; i < a->count; i++) {
            if (a->type == MJ_OBJECT)
                FZ_CHECK(a->key_lens[i] == b->key_lens[i] &&
                             memcmp(a->keys[i], b->keys[i], a->key_lens[i]) == 0,
                         "key changed");
            check_same(&a->items[i], &b->items[i]);
        }
        break;
    default: break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char err[128];

    /* 1. parse, spans, round trip */
    mj_value *v = NULL;
    if (mj_parse(text, size, &v, err, sizeof err) == 0) {
        check_spans(v, text, size);
        check_dups(v);
        if (v->type == MJ_STRING) /* mj_str_eq compares every byte, NULs too */
            FZ_CHECK(mj_str_eq(v, v->str) == (strlen(v->str) == v->str_len),
                     "mj_str_eq stopped at a NUL");
        mj_buf out = {0};
        write_value(&out, v);
        FZ_CHECK(!out.failed, "out of memory writing");
        mj_value *again = NULL;
        FZ_CHECK(mj_parse(out.data, out.len, &again, err, sizeof err) == 0,
                 "own output does not parse: %s", err);
        check_same(v, again);
        mj_free(again);
        mj_buf_free(&out);
        mj_free(v);
    } else {
        FZ_CHECK(v == NULL, "failed parse left a tree");
        FZ_CHECK(err[0] != '\0', "failed parse without a message");
    }

    /* 2. any bytes as a string literal */
    mj_buf lit = {0};
    mj_put_string(&lit, text, size);
    FZ_CHECK(!lit.failed, "out of memory");
    mj_value *s = NULL;
    FZ_CHECK(mj_parse(lit.data, lit.len, &s, err, sizeof err) == 0 && s->type == MJ_STRING,
             "string literal does not parse: %s", err);
    if (fz_utf8_valid(data, size))
        FZ_CHECK(s->str_len == size && memcmp(s->str, text, size) == 0, "valid text changed");
    mj_free(s);
    mj_buf_free(&lit);

    /* 3. the UTF-8 hold-back used for streamed output */
    size_t keep = mj_utf8_complete_prefix(text, size);
    FZ_CHECK(keep <= size && size - keep <= 3, "kept %zu of %zu", keep, size);
    if (keep < size) {
        unsigned char lead = (unsigned char)text[keep];
        FZ_CHECK(lead >= 0xC0, "held back from a non-lead byte 0x%02x", lead);
        for (size_t i = keep + 1; i < size; i++)
            FZ_CHECK(((unsigned char)text[i] & 0xC0) == 0x80, "held back a complete character");
    }
    return 0;
}
