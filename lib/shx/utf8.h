/*
 * utf8.h - how the library splits bytes into characters. One rule everywhere
 * (capture, truncation, JSON escaping): a character is a well-formed UTF-8
 * sequence (Unicode table 3-7: no overlongs, no surrogates, <= U+10FFFF);
 * any other byte is a character of its own. Decoding greedily from any
 * character boundary gives the same split as decoding from the start.
 */
#ifndef SHX_UTF8_H
#define SHX_UTF8_H

#include <stddef.h>

/*
 * Length of the character at p (1-4), given `avail` bytes. When the bytes are
 * the valid start of a longer sequence that `avail` cuts short: 0 if more
 * input may follow (final == 0), else 1 (the lead byte is then invalid).
 * avail must be >= 1.
 */
static inline size_t shx_utf8_char_len(const unsigned char *p, size_t avail, int final)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the 2nd byte */
    if (c >= 0xC2 && c <= 0xDF)
        need = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 1;
    for (size_t i = 1; i < need; i++) {
        if (i >= avail)
            return final ? 1 : 0;
        unsigned char b = p[i];
        if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF))
            return 1;
    }
    return need;
}

#endif
