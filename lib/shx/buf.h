/*
 * buf.h - a growable byte buffer, the currency of the pure modules
 * (sentinel filter, capture, ANSI stripping, env building, JSON): they take
 * bytes in and append bytes to a shx_buf, so they can be tested without
 * spawning anything.
 */
#ifndef SHX_BUF_H
#define SHX_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct shx_buf {
    char *data; /* NUL-terminated when non-NULL; may contain NUL bytes */
    size_t len;
    size_t cap;
    int failed; /* an append failed: the content has a hole, steal refuses it */
} shx_buf;

#define SHX_BUF_INIT {NULL, 0, 0, 0}

/* Make room for `extra` more bytes (plus the terminating NUL). 0 or -1 (ENOMEM). */
int shx_buf_reserve(shx_buf *b, size_t extra);
/* Append bytes / a C string / one byte. 0 or -1 (ENOMEM); on failure b is unchanged. */
int shx_buf_append(shx_buf *b, const void *data, size_t len);
int shx_buf_puts(shx_buf *b, const char *s);
int shx_buf_putc(shx_buf *b, char c);
/* A code point (at most 0x10FFFF) as UTF-8. */
int shx_buf_put_utf8(shx_buf *b, uint32_t cp);
/* printf-style append. 0 or -1. */
int shx_buf_printf(shx_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empty the buffer, keeping its memory. */
void shx_buf_clear(shx_buf *b);
/* Release the memory; the buffer is SHX_BUF_INIT afterwards. */
void shx_buf_free(shx_buf *b);
/* Hand the bytes to the caller (malloc'd, NUL-terminated, never NULL on
 * success: an empty buffer gives ""); the buffer is reset. NULL on ENOMEM,
 * also when any earlier append failed: text built piecewise (JSON) is never
 * handed out with a piece missing. */
char *shx_buf_steal(shx_buf *b, size_t *len);

#endif
