/*
 * json.h - strict, bounded JSON: a DOM parser for untrusted input (tool-call
 * arguments written by a model, JSON-RPC messages) and a writer for results.
 *
 * The parser accepts exactly RFC 8259 and nothing more: one value, optional
 * space/tab/LF/CR around it, valid UTF-8, no duplicate keys in an object.
 * Anything lenient parsers tolerate (trailing commas, comments, NaN, single
 * quotes, leading zeros, a BOM, lone surrogates) is an error, so that what
 * the host validated is what the model meant. It never recurses: nesting is
 * limited only by shx_json_limits, never by the C stack.
 *
 * The writer always produces valid UTF-8 JSON, whatever bytes it is given.
 */
#ifndef SHX_JSON_H
#define SHX_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "shx/buf.h"
#include "shexec.h"

typedef enum {
    SHX_JSON_NULL,
    SHX_JSON_BOOL,
    SHX_JSON_NUMBER,
    SHX_JSON_STRING,
    SHX_JSON_ARRAY,
    SHX_JSON_OBJECT
} shx_json_type;

typedef struct shx_json_str {
    const char *str; /* decoded, NUL-terminated; may contain NUL (use len) */
    size_t len;
} shx_json_str;

/*
 * A parsed value. Read-only for callers; every node of a document lives in
 * one allocation arena owned by the root.
 */
typedef struct shx_json shx_json;
struct shx_json {
    shx_json_type type;
    int boolean;       /* BOOL: 0 or 1 */
    const char *str;   /* STRING: the decoded bytes, NUL-terminated, may contain
                          NUL (from \u0000): use len. NUMBER: the number exactly
                          as written (valid RFC 8259 number syntax). */
    size_t len;        /* STRING, NUMBER: bytes in str */
    size_t count;      /* ARRAY: items; OBJECT: members */
    shx_json **items;  /* ARRAY: the items; OBJECT: the values, in document order */
    shx_json_str *keys; /* OBJECT: keys[i] names items[i]; keys are unique
                           unless the parse kept duplicate keys */
    size_t dup_key;    /* OBJECT parsed with keep_duplicate_keys: 1 + the index
                          of the first key that repeats an earlier one, 0 when
                          all differ */
    void *arena_;      /* private: non-NULL on the root only */
};

/*
 * Parser limits. A field left 0 takes its default. Depth counts containers
 * open at once (a scalar document has depth 0, "[[]]" depth 2); size is the
 * input length in bytes; items counts values (containers and scalars, not
 * keys).
 */
typedef struct shx_json_limits {
    size_t max_depth; /* default 64 */
    size_t max_size;  /* default 16 MiB */
    size_t max_items; /* default 1,000,000 */
    /* 1: an object that repeats a key is kept (RFC 8259 allows it) and
     * marked in dup_key, for a caller that must still answer such a
     * message (a JSON-RPC server echoes its id); 0: it is an error */
    int keep_duplicate_keys;
} shx_json_limits;

#define SHX_JSON_DEFAULT_MAX_DEPTH 64u
#define SHX_JSON_DEFAULT_MAX_SIZE ((size_t)16 << 20)
#define SHX_JSON_DEFAULT_MAX_ITEMS 1000000u

/*
 * Parse `len` bytes of `text` (need not be NUL-terminated; NUL bytes are
 * errors outside strings). lim NULL: all defaults.
 *
 * SHEXEC_OK: *out is the document; free it with shx_json_free().
 * SHEXEC_EINVAL: the text is not valid JSON or exceeds a limit; one line is
 *   appended to err (when err is non-NULL), always of the form
 *   "invalid JSON at byte N: WHAT", e.g.
 *   "invalid JSON at byte 12: expected ',' or '}', found 'x'".
 *   N is the 0-based offset of the offending byte (of the opening quote for
 *   an unterminated string, of the second key for a duplicate key). Also for
 *   out NULL, or text NULL with len > 0 (nothing appended).
 * SHEXEC_ENOMEM: out of memory ("out of memory" appended when possible).
 * On failure *out is NULL and nothing is left allocated.
 *
 * Duplicate keys are detected when their object closes, so a syntax error
 * later in the same object is reported in preference to them.
 */
int shx_json_parse(shx_json **out, const char *text, size_t len, const shx_json_limits *lim,
                   shx_buf *err);

/* Free a document. Only the root frees anything; NULL or any other node is a no-op. */
void shx_json_free(shx_json *v);

/* Accessors. All accept NULL (and then report "absent"/"wrong type"). */

/* 1 when v is non-NULL and of type t, else 0. */
int shx_json_is(const shx_json *v, shx_json_type t);
/* SHEXEC_OK with *out 0 or 1 when v is a bool, else SHEXEC_EINVAL. */
int shx_json_bool(const shx_json *v, int *out);
/* The decoded bytes of a string (len may be NULL), or NULL when v is not a string. */
const char *shx_json_string(const shx_json *v, size_t *len);
/* Items of an array or members of an object; 0 for anything else. */
size_t shx_json_count(const shx_json *v);
/* Item i of an array or value i of an object, NULL when out of range. */
const shx_json *shx_json_item(const shx_json *v, size_t i);
/* Key i of an object (len may be NULL), NULL when out of range or not an object. */
const char *shx_json_key(const shx_json *v, size_t i, size_t *len);
/*
 * The member `key` (a C string, compared byte for byte with the decoded key)
 * of an object; NULL when absent or obj is not an object. Linear in the
 * number of members. With duplicate keys kept: the first of them.
 */
const shx_json *shx_json_get(const shx_json *obj, const char *key);
/*
 * A key that an object names twice (documents parsed with
 * keep_duplicate_keys): in v itself (v an object) and, with `deep`, in any
 * object nested in v at any depth, arrays included. The key (decoded,
 * NUL-terminated, may contain NUL) with its length in *len, or NULL when
 * every object looked at has distinct keys. Not recursive; for deep, it
 * allocates a stack of the document's depth (NULL when that fails).
 */
const char *shx_json_duplicate_key(const shx_json *v, int deep, size_t *len);
/*
 * SHEXEC_OK when v is a number whose value is an exact integer in int64
 * range, judged on the exact decimal text (never through a double): 1, -0,
 * 1e3, 1.0, 2.50e1 and 100e-2 are integers; 1.5, 1e-1 and 1e30 are not.
 * Else SHEXEC_EINVAL and *out is untouched.
 */
int shx_json_int64(const shx_json *v, int64_t *out);

/*
 * Writer. Every function appends to b and returns 0, or -1 on ENOMEM with b
 * left exactly as it was.
 */

/*
 * Append `len` bytes of s as a quoted JSON string. '"', '\' and control
 * characters are escaped (\b \t \n \f \r, the others as \u00xx); DEL and
 * all of Unicode pass through as UTF-8. Every byte that is not part of a
 * well-formed UTF-8 sequence (see utf8.h: each such byte is a character of
 * its own, a truncated sequence included) becomes U+FFFD, so the result is
 * always valid UTF-8 JSON.
 */
int shx_json_put_string(shx_buf *b, const char *s, size_t len);
int shx_json_put_int64(shx_buf *b, int64_t v);
int shx_json_put_uint64(shx_buf *b, uint64_t v);
/* "true" or "false". */
int shx_json_put_bool(shx_buf *b, int v);
/*
 * Serialize a document (or any node of one) compactly: no whitespace,
 * members in document order, numbers exactly as they were written. Also -1
 * for v NULL. Not recursive.
 */
int shx_json_write(shx_buf *b, const shx_json *v);

#endif
