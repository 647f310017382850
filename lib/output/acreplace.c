/*
 * acreplace.c - streaming multi-pattern replacement (see acreplace.h).
 *
 * The automaton is a trie with failure and dictionary links. The root's
 * transitions are one table (most bytes of most outputs leave it where it
 * is); other nodes keep their children in a list, as patterns are few per
 * node. A stream keeps one candidate occurrence: a new one replaces it if it
 * starts earlier, or at the same byte and ends later. The candidate is
 * settled once no occurrence can start at or before its first byte (the
 * automaton's depth says how far back the current partial match reaches).
 */
#include "output/acreplace.h"

#include <stdlib.h>
#include <string.h>

#define QUAD_BITS 18
#define SKIP_SPAN_MAX 64

static uint32_t quad_hash(const unsigned char *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
    return (w * 0x9E3779B1u) >> (32 - QUAD_BITS);
}

typedef struct acr_node {
    uint32_t fail, dict;       /* dict: nearest node down the failure chain ending a pattern */
    uint32_t child, sibling;   /* first child, next sibling (0: none; 0 is the root) */
    uint32_t depth;
    uint32_t parent;
    int32_t pat;               /* the pattern ending here, -1: none */
    unsigned char label;
} acr_node;

struct shx_acr {
    acr_node *nodes;
    size_t n, cap;
    uint32_t root_next[256];   /* the root's transitions, 0: stay */
    char **repl;
    size_t *repl_len;
    size_t pats, pats_cap;
    int built;
    /* Skipping what starts no pattern (when every pattern has four bytes
     * or more; `shortest` bytes, at most SKIP_SPAN_MAX, count here):
     * `quads` has a bit for a hash of every pattern's first four bytes, so
     * a position whose four bytes hash to a clear bit starts none; `blocks`
     * a bit for every four bytes at offsets 0 to shortest - 4, so a clear
     * bit for the four bytes at p + shortest - 4 means that no pattern
     * starts anywhere from p to p + shortest - 4 (one look skips that many
     * positions). */
    int skip_on;
    size_t shortest;
    unsigned char quads[(1u << QUAD_BITS) / 8];
    unsigned char blocks[(1u << QUAD_BITS) / 8];
};

shx_acr *shx_acr_new(void)
{
    shx_acr *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->nodes = calloc(16, sizeof *a->nodes);
    if (!a->nodes) {
        free(a);
        return NULL;
    }
    a->cap = 16;
    a->n = 1;
    a->nodes[0].pat = -1;
    return a;
}

static uint32_t child_of(const shx_acr *a, uint32_t s, unsigned char b)
{
    if (s == 0)
        return a->root_next[b];
    for (uint32_t c = a->nodes[s].child; c; c = a->nodes[c].sibling)
        if (a->nodes[c].label == b)
            return c;
    return 0;
}

static uint32_t add_child(shx_acr *a, uint32_t s, unsigned char b)
{
    if (a->n == a->cap) {
        if (a->cap > UINT32_MAX / 4)
            return 0;
        acr_node *grown = realloc(a->nodes, a->cap * 2 * sizeof *grown);
        if (!grown)
            return 0;
        a->nodes = grown;
        a->cap *= 2;
    }
    uint32_t c = (uint32_t)a->n++;
    acr_node *node = &a->nodes[c];
    memset(node, 0, sizeof *node);
    node->pat = -1;
    node->label = b;
    node->depth = a->nodes[s].depth + 1;
    node->parent = s;
    if (s == 0) {
        a->root_next[b] = c;
    } else {
        node->sibling = a->nodes[s].child;
        a->nodes[s].child = c;
    }
    return c;
}

int shx_acr_add(shx_acr *a, const void *pat, size_t len, const char *repl, size_t repl_len)
{
    if (!a || a->built || len == 0 || len > UINT32_MAX / 2)
        return -1;
    if (a->pats == a->pats_cap) {
        size_t cap = a->pats_cap ? a->pats_cap * 2 : 8;
        char **r = realloc(a->repl, cap * sizeof *r);
        if (!r)
            return -1;
        a->repl = r;
        size_t *rl = realloc(a->repl_len, cap * sizeof *rl);
        if (!rl)
            return -1;
        a->repl_len = rl;
        a->pats_cap = cap;
    }
    char *copy = malloc(repl_len + 1);
    if (!copy)
        return -1;
    memcpy(copy, repl, repl_len);
    copy[repl_len] = '\0';
    /* nodes made for a pattern that then fails stay as harmless inner nodes */
    const unsigned char *p = pat;
    uint32_t s = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t c = child_of(a, s, p[i]);
        if (!c && !(c = add_child(a, s, p[i]))) {
            free(copy);
            return -1;
        }
        s = c;
    }
    if (a->nodes[s].pat >= 0) {
        free(copy);
        return 0;
    }
    a->nodes[s].pat = (int32_t)a->pats;
    a->repl[a->pats] = copy;
    a->repl_len[a->pats] = repl_len;
    a->pats++;
    return 0;
}

static uint32_t step(const shx_acr *a, uint32_t s, unsigned char b)
{
    for (;;) {
        uint32_t c = child_of(a, s, b);
        if (c || s == 0)
            return c;
        s = a->nodes[s].fail;
    }
}

int shx_acr_build(shx_acr *a)
{
    if (!a)
        return -1;
    uint32_t *queue = malloc(a->n * sizeof *queue);
    if (!queue)
        return -1;
    size_t head = 0, tail = 0;
    for (int b = 0; b < 256; b++)
        if (a->root_next[b]) {
            uint32_t c = a->root_next[b];
            a->nodes[c].fail = 0;
            a->nodes[c].dict = 0;
            queue[tail++] = c;
        }
    while (head < tail) {
        uint32_t u = queue[head++];
        for (uint32_t v = a->nodes[u].child; v; v = a->nodes[v].sibling) {
            uint32_t f = step(a, a->nodes[u].fail, a->nodes[v].label);
            a->nodes[v].fail = f;
            a->nodes[v].dict = a->nodes[f].pat >= 0 ? f : a->nodes[f].dict;
            queue[tail++] = v;
        }
    }
    free(queue);
    a->shortest = SKIP_SPAN_MAX;
    for (uint32_t v = 1; v < a->n; v++)
        if (a->nodes[v].pat >= 0 && a->nodes[v].depth < a->shortest)
            a->shortest = a->nodes[v].depth;
    a->skip_on = a->pats > 0 && a->shortest >= 4;
    /* every node is a prefix of a pattern: its last four bytes are a block
     * at offset depth - 4 of that pattern */
    for (uint32_t v = 1; v < a->n && a->skip_on; v++) {
        uint32_t depth = a->nodes[v].depth;
        if (depth < 4 || depth > a->shortest)
            continue;
        unsigned char four[4];
        uint32_t u = v;
        for (int k = 3; k >= 0; k--) { /* up towards the root through the parents */
            four[k] = a->nodes[u].label;
            u = a->nodes[u].parent;
        }
        uint32_t h = quad_hash(four);
        a->blocks[h >> 3] |= (unsigned char)(1u << (h & 7));
        if (depth == 4)
            a->quads[h >> 3] |= (unsigned char)(1u << (h & 7));
    }
    a->built = 1;
    return 0;
}

size_t shx_acr_count(const shx_acr *a)
{
    return a ? a->pats : 0;
}

void shx_acr_free(shx_acr *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->pats; i++)
        free(a->repl[i]);
    free(a->repl);
    free(a->repl_len);
    free(a->nodes);
    free(a);
}

void shx_acr_stream_init(shx_acr_stream *st, const shx_acr *a)
{
    memset(st, 0, sizeof *st);
    st->a = a;
    st->pend = (shx_buf)SHX_BUF_INIT;
}

/* Hand out the held bytes before stream position `upto`. */
static int settle(shx_acr_stream *st, uint64_t upto, shx_buf *out)
{
    if (upto <= st->done)
        return 0;
    if (shx_buf_append(out, st->pend.data + (st->done - st->base), (size_t)(upto - st->done)) != 0)
        return -1;
    st->done = upto;
    return 0;
}

/* Drop what was handed out from the front of what is held: once a feed,
 * so that many occurrences in one feed cost no copy each. */
static void compact(shx_acr_stream *st)
{
    size_t n = (size_t)(st->done - st->base);
    if (n == 0)
        return;
    memmove(st->pend.data, st->pend.data + n, st->pend.len - n);
    st->pend.len -= n;
    st->base = st->done;
}

static int commit(shx_acr_stream *st, shx_buf *out)
{
    const shx_acr *a = st->a;
    if (settle(st, st->cand_start, out) != 0 ||
        shx_buf_append(out, a->repl[st->cand_pat], a->repl_len[st->cand_pat]) != 0)
        return -1;
    st->done = st->floor = st->pos = st->cand_end;
    st->state = 0;
    st->has_cand = 0;
    st->replaced++;
    return 0;
}

static int bit_set(const unsigned char *bits, uint32_t h)
{
    return (bits[h >> 3] >> (h & 7)) & 1;
}

/* From index i of held (n bytes), at the root: the first index where a
 * pattern may start (n when none may before the last three bytes, which
 * are then left to the automaton). */
static size_t skip(const shx_acr *a, const unsigned char *held, size_t i, size_t n)
{
    size_t m = a->shortest;
    while (i + m <= n) {
        if (!bit_set(a->blocks, quad_hash(held + i + m - 4))) {
            i += m - 3;
            continue;
        }
        if (bit_set(a->quads, quad_hash(held + i)))
            return i;
        i++;
    }
    while (i + 4 <= n && !bit_set(a->quads, quad_hash(held + i)))
        i++;
    return i;
}

/* Match what is held; with `final`, settle everything. */
static int run(shx_acr_stream *st, shx_buf *out, int final)
{
    const shx_acr *a = st->a;
    const acr_node *nodes = a->nodes;
    for (;;) {
        const unsigned char *held = (const unsigned char *)st->pend.data;
        uint64_t end = st->base + st->pend.len;
        while (st->pos < end) {
            if (st->state == 0 && !st->has_cand && a->skip_on) {
                st->pos = skip(a, held, st->pos - st->base, end - st->base) + st->base;
                if (st->pos >= end)
                    break;
            }
            uint32_t s = step(a, st->state, held[st->pos - st->base]);
            st->state = s;
            st->pos++;
            if (s == 0 && !st->has_cand)
                continue;
            uint32_t t = nodes[s].pat >= 0 ? s : nodes[s].dict;
            while (t && st->pos - nodes[t].depth < st->floor)
                t = nodes[t].dict;
            if (t) {
                uint64_t start = st->pos - nodes[t].depth;
                if (!st->has_cand || start < st->cand_start ||
                    (start == st->cand_start && st->pos > st->cand_end)) {
                    st->has_cand = 1;
                    st->cand_start = start;
                    st->cand_end = st->pos;
                    st->cand_pat = (uint32_t)nodes[t].pat;
                }
            }
            if (st->has_cand && st->pos - nodes[s].depth > st->cand_start && commit(st, out) != 0)
                return -1;
        }
        int rc = 0;
        if (!final) {
            /* what no occurrence can still start in: before the candidate
             * and before the partial match in progress */
            uint64_t upto = st->pos - nodes[st->state].depth;
            if (st->has_cand && st->cand_start < upto)
                upto = st->cand_start;
            rc = settle(st, upto, out);
        }
        else if (!st->has_cand)
            rc = settle(st, end, out);
        else if (commit(st, out) != 0)
            return -1;
        else
            continue;
        compact(st);
        return rc;
    }
}

/* Out of memory: stop matching, pass everything through. */
static int give_up(shx_acr_stream *st, const void *data, size_t len, shx_buf *out)
{
    st->failed = 1;
    st->has_cand = 0;
    uint64_t end = st->base + st->pend.len;
    if (end > st->done && shx_buf_append(out, st->pend.data + (st->done - st->base),
                                         (size_t)(end - st->done)) != 0)
        return -1;
    st->base = st->done = end;
    st->pend.len = 0;
    return len ? shx_buf_append(out, data, len) : 0;
}

int shx_acr_feed(shx_acr_stream *st, const void *data, size_t len, shx_buf *out)
{
    if (len == 0)
        return 0;
    if (st->failed || !st->a || st->a->pats == 0)
        return shx_buf_append(out, data, len);
    if (shx_buf_append(&st->pend, data, len) != 0)
        return give_up(st, data, len, out), -1;
    if (run(st, out, 0) != 0)
        return give_up(st, NULL, 0, out), -1;
    return 0;
}

int shx_acr_finish(shx_acr_stream *st, shx_buf *out)
{
    if (st->failed || !st->a)
        return give_up(st, NULL, 0, out);
    if (run(st, out, 1) != 0)
        return give_up(st, NULL, 0, out), -1;
    return 0;
}

void shx_acr_stream_free(shx_acr_stream *st)
{
    shx_buf_free(&st->pend);
}
