/*
 * ansi.c - the streaming ANSI escape stripper (see ansi.h): an escape
 * sequence recogniser in the manner of a VT parser, feeding a one-line
 * terminal model whose finished lines are the output.
 */
#include "stream/ansi.h"

#include <stdlib.h>
#include <string.h>

#include "shx/utf8.h"

enum {
    ST_GROUND = 0,
    ST_ESC,       /* after ESC */
    ST_ESC_INTER, /* ESC + intermediates, waiting for the final byte */
    ST_CSI,       /* ESC [ ..., waiting for the final byte */
    ST_STR,       /* body of OSC / DCS / SOS / PM / APC */
    ST_STR_ESC    /* ESC inside a string body: ST if "\" follows */
};

/* CSI flags. A sequence we do not fully understand is removed but never
 * acted on: moving the cursor on a misread sequence would overwrite text. */
#define CSI_ODD 0x01   /* private marker, sub-parameter or intermediate byte */
#define CSI_NEXT 0x02  /* past the first parameter */

#define PARAM_MAX 65535u

static int grow(shx_ansi *a, size_t need)
{
    if (need <= a->cap)
        return 0;
    size_t cap = a->cap ? a->cap : 256;
    while (cap < need)
        cap *= 2;
    if (cap > SHX_ANSI_LINE_MAX)
        cap = SHX_ANSI_LINE_MAX;
    uint32_t *p = realloc(a->cells, cap * sizeof *p);
    if (!p)
        return -1;
    a->cells = p;
    a->cap = cap;
    return 0;
}

/* Append the line's cells (and "\n" when nl) to out; the line is then empty
 * with the cursor at column 0. On failure nothing changes. */
static int emit_line(shx_ansi *a, shx_buf *out, int nl)
{
    if (shx_buf_reserve(out, a->len * 4 + 1) != 0)
        return -1;
    char *w = out->data + out->len;
    for (size_t i = 0; i < a->len; i++) {
        /* Cells never hold a NUL byte (NUL is a dropped control), so the
         * packed bytes end at the first zero. */
        for (uint32_t c = a->cells[i]; c; c >>= 8)
            *w++ = (char)(c & 0xFF);
    }
    if (nl)
        *w++ = '\n';
    out->len = (size_t)(w - out->data);
    out->data[out->len] = '\0';
    a->len = a->cur = 0;
    return 0;
}

/* Write one character at the cursor, as a terminal would: overwrite or
 * append, filling blank columns before it with spaces. On failure nothing
 * changes. */
static int put_cell(shx_ansi *a, uint32_t cell, shx_buf *out)
{
    /* No pad here: a line forced out by the bound is emitted as it is. */
    if (a->cur >= SHX_ANSI_LINE_MAX && emit_line(a, out, 0) != 0)
        return -1;
    if (grow(a, a->cur + 1) != 0)
        return -1;
    while (a->len < a->cur)
        a->cells[a->len++] = ' ';
    a->cells[a->cur++] = cell;
    if (a->cur > a->len)
        a->len = a->cur;
    return 0;
}

/* Turn the pending UTF-8 bytes into characters. Without `final` a valid but
 * incomplete start stays pending; with it, its bytes become one column each. */
static int drain_u8(shx_ansi *a, shx_buf *out, int final)
{
    while (a->u8n) {
        size_t r = shx_utf8_char_len(a->u8, a->u8n, final);
        if (r == 0)
            return 0;
        uint32_t cell = 0;
        for (size_t i = 0; i < r; i++)
            cell |= (uint32_t)a->u8[i] << (8 * i);
        if (put_cell(a, cell, out) != 0)
            return -1;
        memmove(a->u8, a->u8 + r, a->u8n - r);
        a->u8n = (unsigned char)(a->u8n - r);
    }
    return 0;
}

/* Act on the CSI sequences that only move along or blank the current line;
 * everything else (SGR, vertical moves, screen erase, modes) just vanishes. */
static void csi_exec(shx_ansi *a, unsigned char final)
{
    size_t p = a->param;
    size_t n = p ? p : 1;
    /* Moves may reach any column that has text, or a little into blank
     * space: far enough for aligned columns, not so far that a few input
     * bytes become kilobytes of spaces. */
    size_t lim = a->len > SHX_ANSI_MOVE_MAX ? a->len : SHX_ANSI_MOVE_MAX;

    switch (final) {
    case 'G': /* CHA */
    case '`': /* HPA */
        a->cur = n - 1 < lim ? n - 1 : lim;
        break;
    case 'C': /* CUF */
    case 'a': /* HPR */
        if (a->cur < lim)
            a->cur = n < lim - a->cur ? a->cur + n : lim;
        break;
    case 'D': /* CUB */
        a->cur -= n < a->cur ? n : a->cur;
        break;
    case 'K': /* EL: blank columns are trailing spaces, so cut them */
        if (p == 0) {
            if (a->cur < a->len)
                a->len = a->cur;
        } else if (p == 1) {
            if (a->cur + 1 >= a->len)
                a->len = 0;
            else
                for (size_t i = 0; i <= a->cur; i++)
                    a->cells[i] = ' ';
        } else if (p == 2) {
            a->len = 0;
        }
        break;
    case 'X': /* ECH */
        if (a->cur < a->len) {
            if (n >= a->len - a->cur)
                a->len = a->cur;
            else
                for (size_t i = a->cur; i < a->cur + n; i++)
                    a->cells[i] = ' ';
        }
        break;
    default:
        break;
    }
}

static int ground(shx_ansi *a, unsigned char c, shx_buf *out)
{
    if (c >= 0x80) {
        /* Pending bytes are a valid incomplete start (at most 3), so there
         * is always room for one more. */
        a->u8[a->u8n++] = c;
        return drain_u8(a, out, 0);
    }
    if (a->u8n && drain_u8(a, out, 1) != 0)
        return -1;
    if (c >= 0x20 && c < 0x7F)
        return put_cell(a, c, out);
    switch (c) {
    case '\n':
        return emit_line(a, out, 1);
    case '\r':
        a->cur = 0;
        return 0;
    case '\b':
        if (a->cur)
            a->cur--;
        return 0;
    case '\t':
        return put_cell(a, c, out);
    case 0x1B:
        a->state = ST_ESC;
        return 0;
    default: /* BEL, NUL, SO/SI, DEL...: nothing visible */
        return 0;
    }
}

static int step(shx_ansi *a, unsigned char c, shx_buf *out)
{
    for (;;) {
        switch (a->state) {
        case ST_GROUND:
            return ground(a, c, out);

        case ST_ESC:
            if (c >= 0x20 && c <= 0x2F) {
                a->state = ST_ESC_INTER;
                return 0;
            }
            if (c == '[') {
                a->state = ST_CSI;
                a->param = 0;
                a->csi = 0;
                return 0;
            }
            if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
                a->state = ST_STR;
                a->slen = 0;
                return 0;
            }
            a->state = ST_GROUND;
            if (c >= 0x30 && c <= 0x7E) /* two-byte sequence: ESC 7, ESC c... */
                return 0;
            continue; /* cannot continue a sequence: plain input */

        case ST_ESC_INTER:
            if (c >= 0x20 && c <= 0x2F)
                return 0;
            a->state = ST_GROUND;
            if (c >= 0x30 && c <= 0x7E) /* charset select ESC ( B, ESC # 8... */
                return 0;
            continue;

        case ST_CSI:
            if (c >= '0' && c <= '9') {
                if (!(a->csi & CSI_NEXT)) {
                    a->param = a->param * 10 + (uint32_t)(c - '0');
                    if (a->param > PARAM_MAX)
                        a->param = PARAM_MAX;
                }
                return 0;
            }
            if (c == ';') {
                a->csi |= CSI_NEXT;
                return 0;
            }
            if (c >= 0x20 && c <= 0x3F) { /* ':' '<' '=' '>' '?' or intermediates */
                a->csi |= CSI_ODD;
                return 0;
            }
            if (c >= 0x40 && c <= 0x7E) {
                a->state = ST_GROUND;
                if (!(a->csi & CSI_ODD))
                    csi_exec(a, c);
                return 0;
            }
            if (c == 0x7F) /* terminals ignore DEL inside a CSI */
                return 0;
            /* A control, ESC or non-ASCII byte: the CSI was broken; the
             * byte is handled as if the CSI had not been there. */
            a->state = ST_GROUND;
            continue;

        case ST_STR:
            if (c == 0x07) { /* BEL: xterm's terminator, used by most OSCs */
                a->state = ST_GROUND;
                return 0;
            }
            if (c == 0x18 || c == 0x1A) { /* CAN, SUB: abort */
                a->state = ST_GROUND;
                return 0;
            }
            if (c == 0x1B) {
                a->state = ST_STR_ESC;
                return 0;
            }
            if (a->slen >= SHX_ANSI_STR_MAX &&
                ((c & 0xC0) != 0x80 || a->slen >= SHX_ANSI_STR_MAX + 3)) {
                /* Too long to be real: a stray introducer must not swallow
                 * the rest of the output. The limit may fall inside a UTF-8
                 * character: its continuation bytes are swallowed with it, so
                 * that what is printed never starts with half a character. */
                a->state = ST_GROUND;
                continue;
            }
            a->slen++;
            return 0;

        case ST_STR_ESC:
            if (c == '\\') { /* ST */
                a->state = ST_GROUND;
                return 0;
            }
            /* The string ends here; the ESC starts the next sequence. */
            a->state = ST_ESC;
            continue;

        default:
            a->state = ST_GROUND;
            continue;
        }
    }
}

void shx_ansi_init(shx_ansi *a)
{
    memset(a, 0, sizeof *a);
    a->state = ST_GROUND;
}

int shx_ansi_feed(shx_ansi *a, const char *in, size_t n, shx_buf *out)
{
    const unsigned char *p = (const unsigned char *)in;
    for (size_t i = 0; i < n; i++) {
        if (step(a, p[i], out) != 0)
            return -1;
    }
    return 0;
}

int shx_ansi_flush(shx_ansi *a, shx_buf *out)
{
    return emit_line(a, out, 0);
}

int shx_ansi_finish(shx_ansi *a, shx_buf *out)
{
    int rc = 0;
    if (a->state == ST_GROUND && drain_u8(a, out, 1) != 0)
        rc = -1;
    if (rc == 0 && emit_line(a, out, 0) != 0)
        rc = -1;
    shx_ansi_free(a);
    return rc;
}

void shx_ansi_free(shx_ansi *a)
{
    if (!a)
        return;
    free(a->cells);
    shx_ansi_init(a);
}
