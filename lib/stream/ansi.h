/*
 * ansi.h - the streaming ANSI escape stripper behind "strip" mode: turns what
 * a program wrote to a terminal (colours, cursor moves, progress bars redrawn
 * with \r) into the plain text a person would have seen, line by line.
 *
 * What it does with the input:
 *   - removes CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), DCS, SOS,
 *     PM, APC (ESC P/X/^/_ ... ESC \) and every other ESC sequence
 *     (ESC + 0x20-0x2F* + final 0x30-0x7E). 8-bit C1 bytes are not controls:
 *     the input is UTF-8, so 0x9B is a continuation byte, passed through.
 *   - keeps a model of the current line with a cursor, so that \r, backspace
 *     and the horizontal CSI moves (CHA/HPA "G" "`", CUF "C" "a", CUB "D")
 *     and erases (EL "K", ECH "X") overwrite the way a terminal would:
 *     "10%\r50%\r100%\n" gives "100%\n". A column is one UTF-8 character or
 *     one invalid byte (the rule of utf8.h). Cursor moves into blank space
 *     are filled with spaces if text is then written there.
 *   - keeps \n and \t; drops every other C0 control and DEL.
 *   - a malformed sequence ends where it stops being valid and the byte that
 *     broke it is processed as ordinary input, so no text after it is lost.
 *
 * Chunking never matters: feeding the input in any pieces, then finishing,
 * gives exactly the output of feeding it whole. Only flush() is a deliberate
 * exception (it gives up the right to overwrite what it pushed out).
 *
 * Memory is bounded: the current line is at most SHX_ANSI_LINE_MAX columns
 * (4 bytes each); a string sequence (OSC, DCS...) is never stored, only
 * counted, and abandoned after SHX_ANSI_STR_MAX bytes without terminator.
 */
#ifndef SHX_ANSI_H
#define SHX_ANSI_H

#include <stddef.h>
#include <stdint.h>

#include "shx/buf.h"

/*
 * The most columns the current line holds. Writing past it emits the line
 * as it is (no newline added) and continues on a fresh one, so a long line
 * reaches the output intact but \r can no longer reach back into the part
 * already emitted.
 */
#define SHX_ANSI_LINE_MAX 16384
/* Body bytes an OSC/DCS/SOS/PM/APC may have before it is taken for garbage:
 * its bytes so far are dropped and the rest is ordinary input again. */
#define SHX_ANSI_STR_MAX 4096
/* How far right of the text a cursor move may go; bounds the spaces that a
 * few bytes of "ESC[9999C" can turn into. */
#define SHX_ANSI_MOVE_MAX 512

typedef struct shx_ansi {
    uint32_t *cells;   /* the current line: one character's bytes per cell */
    size_t cap;        /* cells allocated */
    size_t len;        /* cells in use */
    size_t cur;        /* cursor column; may be past len (blank columns) */
    size_t slen;       /* body bytes of the current string sequence */
    uint32_t param;    /* first CSI parameter (saturating) */
    unsigned char state;
    unsigned char csi;      /* flags of the CSI being read (see ansi.c) */
    unsigned char u8[4];    /* start of a UTF-8 character split across feeds */
    unsigned char u8n;
} shx_ansi;

void shx_ansi_init(shx_ansi *a);
/*
 * Strip `n` bytes of input, appending finished lines (with their "\n") to
 * out; the partial current line is kept. Returns 0, or -1 on ENOMEM: then
 * the input was consumed up to some byte and out may have part of its
 * output, but `a` is still valid to feed, finish or free.
 */
int shx_ansi_feed(shx_ansi *a, const char *in, size_t n, shx_buf *out);
/*
 * Append the partial current line (e.g. a prompt that has no newline) now.
 * The cursor goes to column 0 of a fresh line, so a later \r overwrites
 * only what comes after this point. An escape sequence or a UTF-8 character
 * cut by the end of the last feed stays pending. 0 or -1 (ENOMEM).
 */
int shx_ansi_flush(shx_ansi *a, shx_buf *out);
/*
 * End of stream: append the partial line (with a cut UTF-8 character's
 * bytes as they are), drop an unfinished escape sequence, release memory and
 * re-initialise `a`. No newline is added. 0 or -1 (ENOMEM; `a` is then
 * still re-initialised and holds no memory).
 */
int shx_ansi_finish(shx_ansi *a, shx_buf *out);
/* Release memory; `a` is as after shx_ansi_init(). NULL is a no-op. */
void shx_ansi_free(shx_ansi *a);

#endif
