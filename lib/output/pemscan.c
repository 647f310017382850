/*
 * pemscan.c - PEM private-key blocks wherever they stand (see pemscan.h).
 *
 * Outside a block the bytes go out in runs up to the next five dashes in
 * a row (memchr finds the dashes); from there on, what may be a BEGIN
 * boundary is held until it is one or cannot be. Of what was held, only
 * the dashes it ends with can begin another boundary (a label's own dashes
 * come fewer than five in a row, and five close it), so a start that fails
 * gives back everything before those dashes and keeps them (five at most):
 * no other byte is looked at twice.
 * Inside a block its END boundary is matched with a border table (Knuth-
 * Morris-Pratt), so every byte is read once whatever the label holds.
 */
#include "output/pemscan.h"

#include <string.h>

enum { PEM_SEEK, PEM_LABEL, PEM_GAP, PEM_BLOCK };

#define BEGIN_WORD "-----BEGIN "
#define BEGIN_LEN (sizeof BEGIN_WORD - 1)
#define END_WORD "-----END "
#define END_LEN (sizeof END_WORD - 1)
#define DASHES 5
#define PRIVATE "PRIVATE KEY"
#define MARKER "[REDACTED:PRIVATE_KEY]"

void shx_pemscan_init(shx_pemscan *k)
{
    memset(k, 0, sizeof *k);
    k->phase = PEM_SEEK;
}

/* What was held is no boundary: out with it, but for the dashes it ends
 * with (five at most), which may still begin one. */
static int give_back(shx_pemscan *k, shx_buf *out)
{
    size_t keep = 0;
    while (keep < k->held_len && keep < DASHES && k->held[k->held_len - 1 - keep] == '-')
        keep++;
    if (shx_buf_append(out, k->held, k->held_len - keep) != 0)
        return -1;
    memset(k->held, '-', keep);
    k->held_len = keep;
    k->phase = PEM_SEEK;
    return 0;
}

static int private_label(const char *label, size_t len)
{
    size_t p = sizeof PRIVATE - 1;
    return len >= p && memcmp(label + len - p, PRIVATE, p) == 0;
}

static int base64_digit(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '+' || c == '/';
}

/* The held bytes open a block: the marker goes out in their place, and the
 * END boundary of the same label is made ready to match. */
static int open_block(shx_pemscan *k, shx_buf *out)
{
    size_t label_len = k->label_end - DASHES - BEGIN_LEN;
    memcpy(k->end, END_WORD, END_LEN);
    memcpy(k->end + END_LEN, k->held + BEGIN_LEN, label_len);
    memset(k->end + END_LEN + label_len, '-', DASHES);
    k->end_len = END_LEN + label_len + DASHES;
    /* border[j]: the longest proper prefix of end[0..j] that also ends it */
    k->border[0] = 0;
    for (size_t j = 1, b = 0; j < k->end_len; j++) {
        while (b && k->end[j] != k->end[b])
            b = k->border[b - 1];
        if (k->end[j] == k->end[b])
            b++;
        k->border[j] = (unsigned char)b;
    }
    k->end_at = 0;
    k->held_len = 0;
    k->phase = PEM_BLOCK;
    k->replaced++;
    return shx_buf_puts(out, MARKER);
}

/* One more byte of what may be a BEGIN boundary and the gap after it. */
static int hold(shx_pemscan *k, unsigned char c, shx_buf *out)
{
    k->held[k->held_len++] = (char)c;
    switch (k->phase) {
    case PEM_SEEK:
        if (c != (unsigned char)BEGIN_WORD[k->held_len - 1])
            return give_back(k, out);
        if (k->held_len == BEGIN_LEN) {
            k->phase = PEM_LABEL;
            k->dashes = 0;
        }
        return 0;
    case PEM_LABEL:
        if (c < 0x20 || c > 0x7E)
            return give_back(k, out);
        k->dashes = c == '-' ? k->dashes + 1 : 0;
        if (k->dashes == DASHES) {
            if (!private_label(k->held + BEGIN_LEN, k->held_len - BEGIN_LEN - DASHES))
                return give_back(k, out);
            k->label_end = k->held_len;
            k->escaped = 0;
            k->phase = PEM_GAP;
            return 0;
        }
        return k->held_len - BEGIN_LEN - k->dashes > SHX_PEM_LABEL_MAX ? give_back(k, out) : 0;
    default: /* PEM_GAP: white space and written-out breaks, then a body or not */
        if (c == '\\' || c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
            (k->escaped && (c == 'n' || c == 'r' || c == 't')))
            k->escaped = c == '\\';
        else if (base64_digit(c) && !k->escaped)
            return open_block(k, out);
        else
            return give_back(k, out);
        return k->held_len - k->label_end > SHX_PEM_GAP_MAX ? give_back(k, out) : 0;
    }
}

/* Bytes of a block from p[i]: all dropped, up to the end of its END
 * boundary. The index after that boundary, or n while the block goes on. */
static size_t in_block(shx_pemscan *k, const unsigned char *p, size_t i, size_t n)
{
    while (i < n) {
        if (k->end_at == 0) { /* a boundary begins with a dash: skip to one */
            const unsigned char *dash = memchr(p + i, '-', n - i);
            if (!dash)
                return n;
            i = (size_t)(dash - p);
        }
        char c = (char)p[i++];
        while (k->end_at && c != k->end[k->end_at])
            k->end_at = k->border[k->end_at - 1];
        if (c == k->end[k->end_at])
            k->end_at++;
        if (k->end_at == k->end_len) {
            k->end_at = 0;
            k->phase = PEM_SEEK;
            return i;
        }
    }
    return n;
}

int shx_pemscan_feed(shx_pemscan *k, const void *data, size_t n, shx_buf *out)
{
    const unsigned char *p = data;
    size_t i = 0, pass = 0; /* p[pass..i) goes out unchanged */
    while (i < n) {
        if (k->phase == PEM_BLOCK) {
            i = pass = in_block(k, p, i, n);
            continue;
        }
        if (k->held_len == 0) {
            const unsigned char *dash = memchr(p + i, '-', n - i);
            if (!dash) {
                i = n;
                break;
            }
            i = (size_t)(dash - p);
            /* fewer than five dashes in a row begin nothing: the dashes of
             * ordinary text ("rw-r--r--", "a-b") go out without being held;
             * of a longer run only the last five may begin a boundary */
            size_t run_end = i;
            while (run_end < n && p[run_end] == '-')
                run_end++;
            if (run_end < n && run_end - i < DASHES) {
                i = run_end;
                continue;
            }
            if (run_end - i > DASHES)
                i = run_end - DASHES;
            if (shx_buf_append(out, p + pass, i - pass) != 0)
                return -1;
        }
        if (hold(k, p[i++], out) != 0)
            return -1;
        pass = i;
    }
    return i > pass ? shx_buf_append(out, p + pass, i - pass) : 0;
}

int shx_pemscan_finish(shx_pemscan *k, shx_buf *out)
{
    if (k->phase == PEM_BLOCK)
        return 0;
    int rc = k->held_len ? shx_buf_append(out, k->held, k->held_len) : 0;
    k->held_len = 0;
    k->phase = PEM_SEEK;
    return rc;
}
