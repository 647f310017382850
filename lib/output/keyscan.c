/*
 * keyscan.c - secrets found by their shape (see keyscan.h).
 *
 * Two stages in a row: PEM blocks first (pemscan.c; a block's base64 lines
 * would otherwise be looked at as tokens), then key tokens. Each passes the
 * bytes it has no doubt about in runs, so ordinary output costs a table
 * lookup a byte and a copy.
 */
#include "output/keyscan.h"

#include <string.h>

/* TOK_ESC: after an ESC; TOK_ESC_INTER: after ESC and intermediate bytes;
 * TOK_CSI: in an ESC [ sequence. Each waits for its final byte. */
enum { TOK_OUT, TOK_DECIDING, TOK_PLAIN, TOK_KEY, TOK_ESC, TOK_ESC_INTER, TOK_CSI };

typedef struct key_shape {
    const char *prefix;
    size_t min_tail; /* token bytes after the prefix that make it a key */
    const char *marker;
} key_shape;

/* A prefix that starts another comes before it (sk-ant- before sk-). */
static const key_shape shapes[] = {
    {"github_pat_", 22, "[REDACTED:GITHUB_TOKEN]"},
    {"ghp_", 30, "[REDACTED:GITHUB_TOKEN]"},
    {"gho_", 30, "[REDACTED:GITHUB_TOKEN]"},
    {"ghu_", 30, "[REDACTED:GITHUB_TOKEN]"},
    {"ghs_", 30, "[REDACTED:GITHUB_TOKEN]"},
    {"ghr_", 30, "[REDACTED:GITHUB_TOKEN]"},
    {"sk-ant-", 32, "[REDACTED:ANTHROPIC_API_KEY]"},
    {"sk-", 20, "[REDACTED:OPENAI_API_KEY]"},
    {"AKIA", 16, "[REDACTED:AWS_ACCESS_KEY_ID]"},
    {"xoxa-", 10, "[REDACTED:SLACK_TOKEN]"},
    {"xoxb-", 10, "[REDACTED:SLACK_TOKEN]"},
    {"xoxp-", 10, "[REDACTED:SLACK_TOKEN]"},
};
#define SHAPES (sizeof shapes / sizeof shapes[0])

/* Byte classes, a table so that no byte costs a branch: IN_TOKEN is in a
 * token; KEY_START is in one and may start a key (the prefixes' first
 * bytes); ESCAPE (ESC) ends a token and starts a sequence that is no part
 * of one, so that the sequence's final byte ('m' of ESC [ 3 2 m) is not
 * read as the first byte of the token after it. */
enum { NOT_TOKEN = 0, IN_TOKEN = 1, KEY_START = 3, ESCAPE = 4 };
static const unsigned char byte_class[256] = {
    [0x1B] = ESCAPE,
    ['-'] = 1, ['_'] = 1,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1,
    ['A'] = KEY_START, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1,
    ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1,
    ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1,
    ['X'] = 1, ['Y'] = 1, ['Z'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = KEY_START,
    ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1,
    ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = KEY_START, ['t'] = 1, ['u'] = 1, ['v'] = 1,
    ['w'] = 1, ['x'] = KEY_START,
    ['y'] = 1, ['z'] = 1,
};
#define TOKEN_BYTE(c) (byte_class[c] & IN_TOKEN)

void shx_keyscan_init(shx_keyscan *k, unsigned which)
{
    memset(k, 0, sizeof *k);
    k->which = which;
    shx_pemscan_init(&k->pem);
    k->mid = (shx_buf)SHX_BUF_INIT;
}

enum { DECIDE_WAIT = -1, DECIDE_PLAIN = -2 };

/* Which shape the held token is (its index: the one whose marker names
 * it), or wait, or plain. At the token's end (`ended`) there is no
 * waiting. A token too short for its own prefix's rule but long enough for
 * a shorter prefix's (an sk-ant- word of 20 bytes after "sk-") is hidden
 * by that rule and still named by its own prefix: it is no OpenAI key. */
static int decide(const shx_keyscan *k, int ended)
{
    int named = -1; /* the longest prefix the token has whole */
    for (size_t i = 0; i < SHAPES; i++) {
        if (shapes[i].prefix[0] != k->hold[0])
            continue; /* most tokens: one comparison each */
        size_t plen = strlen(shapes[i].prefix);
        size_t common = k->hold_len < plen ? k->hold_len : plen;
        if (memcmp(k->hold, shapes[i].prefix, common) != 0)
            continue;
        if (k->hold_len >= plen && named < 0)
            named = (int)i;
        if (k->hold_len >= plen && k->hold_len - plen >= shapes[i].min_tail)
            return named;
        if (!ended)
            return DECIDE_WAIT; /* this one, or a longer prefix, may still come */
    }
    return DECIDE_PLAIN;
}

/* The held token, settled: a key's marker, or its bytes. */
static int settle_token(shx_keyscan *k, int d, shx_buf *out)
{
    if (d >= 0) {
        k->replaced++;
        return shx_buf_puts(out, shapes[d].marker);
    }
    return shx_buf_append(out, k->hold, k->hold_len);
}

/* One byte of an escape sequence: the mode it leaves the scan in, and
 * *taken 0 when the byte is not the sequence's (it broke the sequence off
 * and is read as if the sequence had not been there, as a terminal does). */
static int escape_step(int mode, unsigned char c, int *taken)
{
    *taken = 1;
    switch (mode) {
    case TOK_ESC:
        if (c == '[')
            return TOK_CSI;
        if (c >= 0x20 && c <= 0x2F)
            return TOK_ESC_INTER;
        /* ESC and one byte (ESC 7, ESC =, ESC \): no program writes ESC
         * before a byte that starts a key (g s x A), while a key right
         * after a stray ESC must still be found */
        if (c >= 0x30 && c <= 0x7E && byte_class[c] != KEY_START)
            return TOK_OUT;
        break;
    case TOK_ESC_INTER: /* ESC ( B and the like */
        if (c >= 0x20 && c <= 0x2F)
            return TOK_ESC_INTER;
        if (c >= 0x30 && c <= 0x7E)
            return TOK_OUT;
        break;
    default: /* TOK_CSI: parameters and intermediates, then the final byte */
        if (c >= 0x20 && c <= 0x3F)
            return TOK_CSI;
        if (c >= 0x40 && c <= 0x7E)
            return TOK_OUT;
        break;
    }
    *taken = 0;
    return TOK_OUT;
}

static int tokens(shx_keyscan *k, const unsigned char *p, size_t n, shx_buf *out)
{
    size_t pass = 0; /* bytes from here to i are passed unchanged */
    size_t i = 0;
    while (i < n) {
        switch (k->tok_mode) {
        case TOK_PLAIN: /* the rest of a token that is no key */
            while (i < n && TOKEN_BYTE(p[i]))
                i++;
            if (i < n)
                k->tok_mode = TOK_OUT;
            break;
        case TOK_KEY: /* the rest of a key: dropped */
            while (i < n && TOKEN_BYTE(p[i]))
                i++;
            pass = i;
            if (i < n)
                k->tok_mode = TOK_OUT;
            break;
        case TOK_OUT: /* between tokens */
            while (i < n && !byte_class[p[i]])
                i++;
            if (i == n)
                break;
            if (byte_class[p[i]] == ESCAPE) {
                k->tok_mode = TOK_ESC;
                i++;
                break;
            }
            if (byte_class[p[i]] != KEY_START) {
                k->tok_mode = TOK_PLAIN;
                break;
            }
            if (shx_buf_append(out, p + pass, i - pass) != 0)
                return -1;
            k->tok_mode = TOK_DECIDING;
            k->hold_len = 0;
            break;
        case TOK_ESC:
        case TOK_ESC_INTER:
        case TOK_CSI: { /* passed unchanged, and no part of a token */
            int taken;
            k->tok_mode = escape_step(k->tok_mode, p[i], &taken);
            i += (size_t)taken;
            break;
        }
        default: { /* TOK_DECIDING: held until it is a key or cannot be one */
            unsigned char c = p[i];
            if (!TOKEN_BYTE(c)) {
                if (settle_token(k, decide(k, 1), out) != 0)
                    return -1;
                pass = i;
                k->tok_mode = TOK_OUT;
                break;
            }
            k->hold[k->hold_len++] = (char)c;
            i++;
            pass = i;
            int d = decide(k, 0);
            if (d == DECIDE_WAIT && k->hold_len < SHX_KEYSCAN_HOLD)
                break;
            if (settle_token(k, d, out) != 0)
                return -1;
            k->tok_mode = d >= 0 ? TOK_KEY : TOK_PLAIN;
            break;
        }
        }
    }
    if (k->tok_mode == TOK_DECIDING)
        return 0; /* held */
    return shx_buf_append(out, p + pass, n - pass);
}

/* The PEM stage; the blocks it finds count with the keys. */
static int pem(shx_keyscan *k, const unsigned char *p, size_t n, shx_buf *out)
{
    uint64_t before = k->pem.replaced;
    int rc = shx_pemscan_feed(&k->pem, p, n, out);
    k->replaced += k->pem.replaced - before;
    return rc;
}

int shx_keyscan_feed(shx_keyscan *k, const void *data, size_t len, shx_buf *out)
{
    const unsigned char *p = data;
    if (len == 0)
        return 0;
    if (!(k->which & SHX_KEYSCAN_PEM))
        return k->which & SHX_KEYSCAN_TOKENS ? tokens(k, p, len, out)
                                             : shx_buf_append(out, p, len);
    if (!(k->which & SHX_KEYSCAN_TOKENS))
        return pem(k, p, len, out);
    shx_buf_clear(&k->mid);
    if (pem(k, p, len, &k->mid) != 0)
        return -1;
    return tokens(k, (const unsigned char *)k->mid.data, k->mid.len, out);
}

int shx_keyscan_finish(shx_keyscan *k, shx_buf *out)
{
    shx_buf *into = (k->which & SHX_KEYSCAN_TOKENS) ? &k->mid : out;
    shx_buf_clear(&k->mid);
    if ((k->which & SHX_KEYSCAN_PEM) && shx_pemscan_finish(&k->pem, into) != 0)
        return -1;
    if (!(k->which & SHX_KEYSCAN_TOKENS))
        return 0;
    /* a space ends a token being decided; it is then taken back off */
    if (shx_buf_putc(&k->mid, ' ') != 0 ||
        tokens(k, (const unsigned char *)k->mid.data, k->mid.len, out) != 0)
        return -1;
    out->len--;
    out->data[out->len] = '\0';
    return 0;
}

void shx_keyscan_free(shx_keyscan *k)
{
    shx_buf_free(&k->mid);
}
