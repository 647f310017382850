/*
 * glob.c - the deny and allow lists of variable-name globs: the lists
 * themselves (hashed, so adding thousands costs thousands of steps) and
 * the name filter they make, compiled once per use (an environment build,
 * a run's wrapper variables, a shell's listing).
 */
#include "shx/glob.h"

#include "shexec.h"
#include "shx/strindex.h"

#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Glob list
 * ------------------------------------------------------------------------ */

static int globlist_grow(shx_globlist *g)
{
    if (g->n < g->cap && g->index)
        return SHEXEC_OK;
    size_t cap = g->cap ? g->cap * 2 : 16;
    if (cap > SHX_LIST_MAX_ENTRIES)
        return SHEXEC_ENOMEM;
    char **ng = realloc(g->globs, cap * sizeof *ng);
    if (!ng)
        return SHEXEC_ENOMEM;
    g->globs = ng;
    size_t mask;
    uint32_t *index = shx_index_new(cap, g->globs, g->n, &mask);
    if (!index)
        return SHEXEC_ENOMEM;
    free(g->index);
    g->index = index;
    g->index_mask = mask;
    g->cap = cap;
    return SHEXEC_OK;
}

int shx_globlist_add(shx_globlist *g, const char *glob)
{
    if (!g || !glob || !glob[0])
        return SHEXEC_EINVAL;
    uint32_t h = shx_name_hash(glob, strlen(glob));
    if (g->index && *shx_index_slot(g->index, g->index_mask, g->globs, glob, h))
        return SHEXEC_OK;
    int rc = globlist_grow(g);
    if (rc != SHEXEC_OK)
        return rc;
    uint32_t *slot = shx_index_slot(g->index, g->index_mask, g->globs, glob, h);
    char *c = strdup(glob);
    if (!c)
        return SHEXEC_ENOMEM;
    g->globs[g->n] = c;
    *slot = (uint32_t)++g->n;
    return SHEXEC_OK;
}

/*
 * Variables that act before the command's own text runs: the dynamic
 * loader's injection hooks (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH, DYLD_*),
 * startup files and exported functions a shell executes (BASH_ENV, ENV,
 * BASH_FUNC_*, PROMPT_COMMAND), options that change how the wrapper script
 * parses and expands (SHELLOPTS, BASHOPTS, IFS, GLOBIGNORE), and CDPATH,
 * which makes `cd` print and go elsewhere, corrupting cwd tracking.
 */
static const char *const default_deny[] = {
    "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "DYLD_*",
    "BASH_ENV", "ENV", "BASH_FUNC_*",
    "SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND", "IFS",
    "CDPATH", "GLOBIGNORE",
};

int shx_globlist_add_default_deny(shx_globlist *g)
{
    if (!g)
        return SHEXEC_EINVAL;
    size_t n0 = g->n;
    for (size_t i = 0; i < sizeof default_deny / sizeof default_deny[0]; i++) {
        int rc = shx_globlist_add(g, default_deny[i]);
        if (rc != SHEXEC_OK) {
            /* add only appends, so everything past n0 is ours to undo. */
            for (size_t j = n0; j < g->n; j++)
                free(g->globs[j]);
            g->n = n0;
            if (g->index) {
                memset(g->index, 0, (g->index_mask + 1) * sizeof *g->index);
                shx_index_fill(g->index, g->index_mask, g->globs, g->n);
            }
            return rc;
        }
    }
    return SHEXEC_OK;
}

void shx_globlist_free(shx_globlist *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        free(g->globs[i]);
    free(g->globs);
    free(g->index);
    *g = (shx_globlist)SHX_GLOBLIST_INIT;
}

/* ------------------------------------------------------------------------
 * Glob matching
 *
 * Nearly every real glob is a literal name or NAME_PREFIX*. A build hashes
 * those by their literal part, so a name is checked against all of them
 * with one lookup for itself and one per distinct prefix length, however
 * many there are. The rest (*SUFFIX, *INFIX*, fnmatch patterns) are few in
 * practice and tried one by one. LITERAL, PREFIX, SUFFIX and INFIX are
 * decided with memcmp on the unterminated name, which gives exactly what
 * fnmatch(glob, name, 0) would: without flags '*' matches any bytes, '/'
 * and a leading '.' included. Anything else with '*', '?', '[' or '\\' goes
 * to fnmatch, but only for names that start with the pattern's literal lead
 * (a literal byte can only match itself), which also spares the
 * NUL-terminated copy fnmatch needs.
 * ------------------------------------------------------------------------ */

static size_t literal_run(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] != '*' && s[i] != '?' && s[i] != '[' && s[i] != '\\')
        i++;
    return i;
}

static shx_cglob glob_compile(const char *pat)
{
    size_t len = strlen(pat);
    size_t lead = literal_run(pat, len);
    shx_cglob c = {pat, pat, lead, SHX_GK_FNMATCH, 0};
    if (lead == len) {
        c.kind = SHX_GK_LITERAL;
    } else if (lead == len - 1 && pat[lead] == '*') {
        c.kind = SHX_GK_PREFIX;
    } else if (lead == 0 && pat[0] == '*') {
        size_t mid = literal_run(pat + 1, len - 1);
        if (mid == len - 1) {
            c.kind = SHX_GK_SUFFIX;
            c.lit = pat + 1;
            c.litlen = mid;
        } else if (mid == len - 2 && pat[len - 1] == '*') {
            c.kind = SHX_GK_INFIX;
            c.lit = pat + 1;
            c.litlen = mid;
        }
    }
    return c;
}

/* Is needle inside hay? glibc's memmem sets up a two-way search that costs
 * more than the whole scan of a 10-30 byte variable name. */
static int contains(const char *hay, size_t hn, const char *needle, size_t nn)
{
    if (nn == 0)
        return 1;
    if (hn < nn)
        return 0;
    const char *end = hay + (hn - nn) + 1; /* candidate starts are below end */
    for (const char *p = hay; (p = memchr(p, needle[0], (size_t)(end - p))) != NULL; p++)
        if (memcmp(p + 1, needle + 1, nn - 1) == 0)
            return 1;
    return 0;
}

static int cglob_match(const shx_cglob *c, const char *name, size_t nlen, shx_zname *z)
{
    switch (c->kind) {
    case SHX_GK_LITERAL:
        return nlen == c->litlen && memcmp(name, c->lit, nlen) == 0;
    case SHX_GK_PREFIX:
        return nlen >= c->litlen && memcmp(name, c->lit, c->litlen) == 0;
    case SHX_GK_SUFFIX:
        return nlen >= c->litlen && memcmp(name + nlen - c->litlen, c->lit, c->litlen) == 0;
    case SHX_GK_INFIX:
        return contains(name, nlen, c->lit, c->litlen);
    default:
        if (nlen < c->litlen || memcmp(name, c->lit, c->litlen) != 0)
            return 0;
        if (!z->ready) {
            memcpy(z->buf, name, nlen);
            z->buf[nlen] = '\0';
            z->ready = 1;
        }
        return fnmatch(c->pat, z->buf, 0) == 0;
    }
}

/* Slots for a table of n keyed globs: a power of two, at least 2n. */
static size_t glob_table_slots(size_t n)
{
    size_t slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    return slots;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * Compile the n globs of l into dst (room for n), plen (room for n) and tab
 * (glob_table_slots(n) slots). 1 when one of them needs fnmatch (then
 * matching needs a shx_zname buffer).
 */
static int globset_init(shx_globset *s, shx_cglob *dst, size_t *plen, uint32_t *tab,
                        const shx_globlist *l, size_t n)
{
    size_t slots = glob_table_slots(n);
    memset(tab, 0, slots * sizeof *tab);
    size_t front = 0, back = n, np = 0;
    int need_z = 0;
    for (size_t i = 0; i < n; i++) {
        shx_cglob c = glob_compile(l->globs[i]);
        if (c.kind == SHX_GK_LITERAL || c.kind == SHX_GK_PREFIX) {
            c.hash = shx_name_hash(c.lit, c.litlen);
            size_t k = c.hash & (slots - 1);
            while (tab[k])
                k = (k + 1) & (slots - 1);
            tab[k] = (uint32_t)(front + 1);
            if (c.kind == SHX_GK_PREFIX)
                plen[np++] = c.litlen;
            dst[front++] = c;
        } else {
            need_z |= c.kind == SHX_GK_FNMATCH;
            dst[--back] = c; /* order does not matter: any match decides */
        }
    }
    qsort(plen, np, sizeof *plen, cmp_size);
    size_t u = 0;
    for (size_t i = 0; i < np; i++)
        if (u == 0 || plen[u - 1] != plen[i])
            plen[u++] = plen[i];
    *s = (shx_globset){dst, front, tab, slots - 1, plen, u, dst + back, n - back};
    return need_z;
}

static int keyed_find(const shx_globset *s, const char *name, size_t len, uint32_t h, int kind)
{
    for (size_t i = h & s->mask; s->tab[i]; i = (i + 1) & s->mask) {
        const shx_cglob *c = &s->keyed[s->tab[i] - 1];
        if (c->hash == h && c->kind == kind && c->litlen == len && memcmp(c->lit, name, len) == 0)
            return 1;
    }
    return 0;
}

/* Does a glob of s match the nlen bytes at name, whose name_hash is h? */
int shx_globset_match(const shx_globset *s, const char *name, size_t nlen, uint32_t h,
                      shx_zname *z)
{
    if (s->nkeyed) {
        if (keyed_find(s, name, nlen, h, SHX_GK_LITERAL))
            return 1;
        /* FNV-1a runs byte by byte, so the hash of each prefix comes on the way */
        uint32_t ph = SHX_FNV_OFFSET;
        size_t hashed = 0;
        for (size_t k = 0; k < s->nplen && s->plen[k] <= nlen; k++) {
            for (; hashed < s->plen[k]; hashed++) {
                ph ^= (unsigned char)name[hashed];
                ph *= SHX_FNV_PRIME;
            }
            if (keyed_find(s, name, hashed, shx_fnv_fold(ph), SHX_GK_PREFIX))
                return 1;
        }
    }
    for (size_t i = 0; i < s->nother; i++)
        if (cglob_match(&s->other[i], name, nlen, z))
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------
 * Name filter: the deny list and the allow list, compiled into one block
 * (the globs, their prefix lengths, then the two uint32_t tables, so every
 * part is aligned for its type).
 * ------------------------------------------------------------------------ */

/* How many globs of each list are compiled: allow only matters against deny. */
static void filter_counts(const shx_globlist *deny, const shx_globlist *allow, size_t *nd,
                          size_t *na)
{
    *nd = deny ? deny->n : 0;
    *na = *nd && allow ? allow->n : 0;
}

size_t shx_namefilter_size(const shx_globlist *deny, const shx_globlist *allow)
{
    size_t nd, na;
    filter_counts(deny, allow, &nd, &na);
    if (!nd)
        return 0;
    /* Each count is an array length, so their sum cannot wrap. The bound
     * keeps glob indices in uint32_t and each part under a quarter of
     * SIZE_MAX (a table has < 4 * count + 16 slots). */
    size_t max = SIZE_MAX / 4 / sizeof(shx_cglob);
    if (max > ((size_t)1 << 28))
        max = (size_t)1 << 28;
    if (nd + na > max)
        return SIZE_MAX;
    return (nd + na) * (sizeof(shx_cglob) + sizeof(size_t)) +
           (glob_table_slots(nd) + glob_table_slots(na)) * sizeof(uint32_t);
}

void shx_namefilter_init_at(shx_namefilter *f, void *mem, const shx_globlist *deny,
                            const shx_globlist *allow)
{
    *f = (shx_namefilter){0};
    size_t nd, na;
    filter_counts(deny, allow, &nd, &na);
    if (!nd)
        return;
    size_t sz_globs = (nd + na) * sizeof(shx_cglob), sz_plen = (nd + na) * sizeof(size_t);
    shx_cglob *cg = mem;
    size_t *plen = (size_t *)((unsigned char *)mem + sz_globs);
    uint32_t *tab = (uint32_t *)((unsigned char *)mem + sz_globs + sz_plen);
    f->need_z = globset_init(&f->deny, cg, plen, tab, deny, nd);
    f->need_z |= globset_init(&f->allow, cg + nd, plen + nd, tab + glob_table_slots(nd), allow, na);
    f->active = 1;
}

int shx_namefilter_init(shx_namefilter *f, const shx_globlist *deny, const shx_globlist *allow)
{
    *f = (shx_namefilter){0};
    size_t size = shx_namefilter_size(deny, allow);
    if (size == 0)
        return SHEXEC_OK;
    void *mem = size == SIZE_MAX ? NULL : malloc(size);
    if (!mem)
        return SHEXEC_ENOMEM;
    shx_namefilter_init_at(f, mem, deny, allow);
    f->owned = mem;
    return SHEXEC_OK;
}

int shx_namefilter_drops(const shx_namefilter *f, const char *name, size_t n)
{
    if (!f->active)
        return 0;
    char small[SHX_ZBUF_STACK];
    char *heap = NULL;
    shx_zname z = {small, 0}; /* used only by fnmatch globs (need_z) */
    if (f->need_z && n >= sizeof small && !(z.buf = heap = malloc(n + 1)))
        return SHEXEC_ENOMEM;
    int drops = shx_namefilter_drops_hashed(f, name, n, shx_name_hash(name, n), &z);
    free(heap);
    return drops;
}

void shx_namefilter_free(shx_namefilter *f)
{
    free(f->owned);
    *f = (shx_namefilter){0};
}
