/*
 * mcp_json.h - the JSON the MCP server needs: a strict parser (RFC 8259,
 * bounded depth) that keeps each value's source span so ids and progress
 * tokens can be echoed byte for byte, and an output buffer with a string
 * writer that always emits valid UTF-8 JSON.
 *
 * Part of the shexec-mcp example: it uses only the public libshexec API, so
 * it carries its own small JSON code rather than the library's internals.
 */
#ifndef MCP_JSON_H
#define MCP_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum { MJ_NULL, MJ_BOOL, MJ_NUMBER, MJ_STRING, MJ_ARRAY, MJ_OBJECT } mj_type;

typedef struct mj_value mj_value;
struct mj_value {
    mj_type type;
    const char *raw; /* the value's text in the parsed input (not NUL-terminated) */
    size_t raw_len;
    int boolean;     /* MJ_BOOL */
    double number;   /* MJ_NUMBER */
    char *str;       /* MJ_STRING: decoded, NUL-terminated, may contain NUL */
    size_t str_len;
    size_t count;    /* MJ_ARRAY, MJ_OBJECT */
    mj_value *items;
    char **keys;     /* MJ_OBJECT: decoded keys, NUL-terminated, may contain NUL */
    size_t *key_lens;
    size_t dup_key;  /* MJ_OBJECT: 1 + the index of the first key that repeats an
                        earlier one (byte for byte), 0 when all keys differ */
};

/*
 * Parse `len` bytes of `text` as exactly one JSON value (surrounding
 * whitespace allowed). The tree points into `text` (raw spans): keep text
 * alive while using it. Returns 0 and *out on success; -1 with a message in
 * err on a syntax error, invalid UTF-8, nesting deeper than 64, or no memory.
 * Repeated keys are kept (RFC 8259 allows them) and marked in dup_key: a
 * caller that needs unique names refuses them (mj_duplicate_key).
 */
int mj_parse(const char *text, size_t len, mj_value **out, char *err, size_t errlen);
void mj_free(mj_value *v);

/* Member `key` of an object (the last one if repeated), or NULL. Keys are
 * compared with their full length: "id\u0000x" is not "id". */
const mj_value *mj_get(const mj_value *obj, const char *key);
/* How many members of an object are named `key` (0 for a non-object). */
size_t mj_count(const mj_value *obj, const char *key);
/* 1 when v is a string of exactly the bytes of `s`: a NUL inside v's text
 * makes it differ, where strcmp would stop at the NUL and match. */
int mj_str_eq(const mj_value *v, const char *s);
/*
 * A key that an object names twice: in v itself (v an object), and with
 * `deep` also in any object nested in v at any depth (through arrays too).
 * Returns the key (NUL-terminated, may contain NUL) with its length in *len,
 * or NULL when every object looked at has distinct keys.
 */
const char *mj_duplicate_key(const mj_value *v, int deep, size_t *len);
/* 1 when v is a number with an integral value in [min, max]; *out set. */
int mj_int(const mj_value *v, int64_t min, int64_t max, int64_t *out);

/* Output buffer. On allocation failure `failed` is set and writes stop. */
typedef struct {
    char *data;
    size_t len, cap;
    int failed;
} mj_buf;

void mj_buf_free(mj_buf *b);
void mj_putn(mj_buf *b, const char *s, size_t n);
void mj_puts(mj_buf *b, const char *s);
void mj_printf(mj_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A JSON string literal of n bytes of s: escaped; invalid UTF-8 bytes
 * become U+FFFD, so the result is always valid JSON text. */
void mj_put_string(mj_buf *b, const char *s, size_t n);

/* Length of the longest prefix of s[0..n) that does not end inside a UTF-8
 * sequence which the following bytes could still complete. */
size_t mj_utf8_complete_prefix(const char *s, size_t n);

#endif
