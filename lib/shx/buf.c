/*
 * buf.c - the growable byte buffer (see buf.h).
 */
#include "shx/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int shx_buf_reserve(shx_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len - 1) {
        b->failed = 1;
        return -1;
    }
    size_t need = b->len + extra + 1;
    /* data is NULL only while cap is 0; testing it as well states that a
     * successful reserve always leaves an allocated buffer. */
    if (b->data && need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

int shx_buf_append(shx_buf *b, const void *data, size_t len)
{
    if (shx_buf_reserve(b, len) != 0)
        return -1;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

int shx_buf_puts(shx_buf *b, const char *s)
{
    return shx_buf_append(b, s, strlen(s));
}

int shx_buf_putc(shx_buf *b, char c)
{
    if (b->data && b->cap - b->len >= 2) { /* parsers call this per byte */
        b->data[b->len++] = c;
        b->data[b->len] = '\0';
        return 0;
    }
    return shx_buf_append(b, &c, 1);
}

int shx_buf_printf(shx_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if ((size_t)n < sizeof small)
        return shx_buf_append(b, small, (size_t)n);
    if (shx_buf_reserve(b, (size_t)n) != 0)
        return -1;
    va_start(ap, fmt);
    /* Cannot truncate: the first pass measured n and the room is reserved. */
    (void)vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void shx_buf_clear(shx_buf *b)
{
    b->len = 0;
    b->failed = 0;
    if (b->data)
        b->data[0] = '\0';
}

void shx_buf_free(shx_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}

char *shx_buf_steal(shx_buf *b, size_t *len)
{
    if (b->failed) {
        shx_buf_free(b);
        return NULL;
    }
    if (!b->data && shx_buf_reserve(b, 0) != 0)
        return NULL;
    char *p = b->data;
    p[b->len] = '\0';
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

int shx_buf_put_utf8(shx_buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | ((cp >> 18) & 0x07));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return shx_buf_append(b, u, n);
}
