/*
 * env.c - the environment a command starts with: override lists, deny/allow
 * glob lists and shx_env_build (see env.h). Runs once per spawn, so the
 * build is linear (hashed lookups, globs classified once per build) and its
 * result is a single allocation; the lists are hashed too, so a tool call
 * that sets thousands of variables costs thousands of steps, not millions.
 */
#include "env.h"

#include "shexec.h"

#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int shx_env_name_valid(const char *name)
{
    return name != NULL && name[0] != '\0' && strchr(name, '=') == NULL;
}

/* ------------------------------------------------------------------------
 * Hashing. Every lookup on the way from a variable to the built array is a
 * hash lookup, so the cost is linear in the input however many variables
 * or globs it names: model-written tool calls choose the variables.
 * ------------------------------------------------------------------------ */

#define FNV_OFFSET 2166136261u
#define FNV_PRIME 16777619u

/* The table index uses the low bits: fold the high ones in. */
static uint32_t fnv_fold(uint32_t h)
{
    return h ^ (h >> 15);
}

/* FNV-1a of n bytes, folded. */
static uint32_t name_hash(const char *s, size_t n)
{
    uint32_t h = FNV_OFFSET;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= FNV_PRIME;
    }
    return fnv_fold(h);
}

/*
 * The index of a list of strings (override names, globs): open addressing,
 * at most half full, slot value i + 1 for strs[i], 0 for empty. Returns the
 * slot holding key or the empty one where it belongs.
 */
static uint32_t *index_slot(uint32_t *index, size_t mask, char *const *strs, const char *key,
                            uint32_t h)
{
    size_t i = h & mask;
    while (index[i] != 0 && strcmp(strs[index[i] - 1], key) != 0)
        i = (i + 1) & mask;
    return &index[i];
}

/* Enter strs[0 .. n) into an index of mask + 1 slots, all empty before. */
static void index_fill(uint32_t *index, size_t mask, char *const *strs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t *slot = index_slot(index, mask, strs, strs[i], name_hash(strs[i], strlen(strs[i])));
        *slot = (uint32_t)(i + 1);
    }
}

/* A new index for cap entries (2 * cap slots or more), holding strs[0 .. n).
 * NULL on ENOMEM. */
static uint32_t *index_new(size_t cap, char *const *strs, size_t n, size_t *mask)
{
    size_t slots = 16;
    while (slots < 2 * cap) {
        if (slots > SIZE_MAX / 2 / sizeof(uint32_t))
            return NULL;
        slots *= 2;
    }
    uint32_t *index = calloc(slots, sizeof *index);
    if (!index)
        return NULL;
    *mask = slots - 1;
    index_fill(index, *mask, strs, n);
    return index;
}

/* Entries are stored as uint32_t index + 1: lists stop well short of that. */
#define LIST_MAX_ENTRIES ((size_t)1 << 30)

/* ------------------------------------------------------------------------
 * Override list
 * ------------------------------------------------------------------------ */

/* Room for one more entry: arrays and index grown together. Nothing changes
 * unless all of it succeeds (arrays grown beyond cap are harmless). */
static int envlist_grow(shx_envlist *l)
{
    if (l->n < l->cap && l->index)
        return SHEXEC_OK;
    size_t cap = l->cap ? l->cap * 2 : 8;
    if (cap > LIST_MAX_ENTRIES)
        return SHEXEC_ENOMEM;
    char **nn = realloc(l->names, cap * sizeof *nn);
    if (!nn)
        return SHEXEC_ENOMEM;
    l->names = nn;
    char **nv = realloc(l->values, cap * sizeof *nv);
    if (!nv)
        return SHEXEC_ENOMEM;
    l->values = nv;
    size_t mask;
    uint32_t *index = index_new(cap, l->names, l->n, &mask);
    if (!index)
        return SHEXEC_ENOMEM;
    free(l->index);
    l->index = index;
    l->index_mask = mask;
    l->cap = cap;
    return SHEXEC_OK;
}

int shx_envlist_set(shx_envlist *l, const char *name, const char *value)
{
    if (!l || !shx_env_name_valid(name))
        return SHEXEC_EINVAL;
    uint32_t h = name_hash(name, strlen(name));
    uint32_t *slot = l->index ? index_slot(l->index, l->index_mask, l->names, name, h) : NULL;
    char *v = NULL;
    if (slot && *slot) {
        if (value && !(v = strdup(value)))
            return SHEXEC_ENOMEM;
        free(l->values[*slot - 1]);
        l->values[*slot - 1] = v;
        return SHEXEC_OK;
    }
    size_t max = l->max ? l->max : SHEXEC_MAX_ENV_VARS;
    if (l->n >= max)
        return SHEXEC_ELIMIT;
    int rc = envlist_grow(l);
    if (rc != SHEXEC_OK)
        return rc;
    /* growing rebuilt the index: look again */
    slot = index_slot(l->index, l->index_mask, l->names, name, h);
    if (value && !(v = strdup(value)))
        return SHEXEC_ENOMEM;
    char *nm = strdup(name);
    if (!nm) {
        free(v);
        return SHEXEC_ENOMEM;
    }
    l->names[l->n] = nm;
    l->values[l->n] = v;
    *slot = (uint32_t)++l->n;
    return SHEXEC_OK;
}

void shx_envlist_free(shx_envlist *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->names[i]);
        free(l->values[i]);
    }
    free(l->names);
    free(l->values);
    free(l->index);
    *l = (shx_envlist)SHX_ENVLIST_INIT;
}

/* ------------------------------------------------------------------------
 * Glob list
 * ------------------------------------------------------------------------ */

static int globlist_grow(shx_globlist *g)
{
    if (g->n < g->cap && g->index)
        return SHEXEC_OK;
    size_t cap = g->cap ? g->cap * 2 : 16;
    if (cap > LIST_MAX_ENTRIES)
        return SHEXEC_ENOMEM;
    char **ng = realloc(g->globs, cap * sizeof *ng);
    if (!ng)
        return SHEXEC_ENOMEM;
    g->globs = ng;
    size_t mask;
    uint32_t *index = index_new(cap, g->globs, g->n, &mask);
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
    uint32_t h = name_hash(glob, strlen(glob));
    if (g->index && *index_slot(g->index, g->index_mask, g->globs, glob, h))
        return SHEXEC_OK;
    int rc = globlist_grow(g);
    if (rc != SHEXEC_OK)
        return rc;
    uint32_t *slot = index_slot(g->index, g->index_mask, g->globs, glob, h);
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
                index_fill(g->index, g->index_mask, g->globs, g->n);
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

enum { GK_LITERAL, GK_PREFIX, GK_SUFFIX, GK_INFIX, GK_FNMATCH };

typedef struct cglob {
    const char *pat; /* the whole pattern, NUL-terminated, for fnmatch */
    const char *lit; /* LITERAL, PREFIX, FNMATCH: the lead any match starts
                        with; SUFFIX, INFIX: the part between the stars */
    size_t litlen;
    int kind;
    uint32_t hash; /* LITERAL, PREFIX: name_hash of lit (set by globset_init) */
} cglob;

static size_t literal_run(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] != '*' && s[i] != '?' && s[i] != '[' && s[i] != '\\')
        i++;
    return i;
}

static cglob glob_compile(const char *pat)
{
    size_t len = strlen(pat);
    size_t lead = literal_run(pat, len);
    cglob c = {pat, pat, lead, GK_FNMATCH, 0};
    if (lead == len) {
        c.kind = GK_LITERAL;
    } else if (lead == len - 1 && pat[lead] == '*') {
        c.kind = GK_PREFIX;
    } else if (lead == 0 && pat[0] == '*') {
        size_t mid = literal_run(pat + 1, len - 1);
        if (mid == len - 1) {
            c.kind = GK_SUFFIX;
            c.lit = pat + 1;
            c.litlen = mid;
        } else if (mid == len - 2 && pat[len - 1] == '*') {
            c.kind = GK_INFIX;
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

/* A name's NUL-terminated copy for fnmatch, made on first need. buf has room
 * for the name and its NUL. */
typedef struct zname {
    char *buf;
    int ready;
} zname;

static int cglob_match(const cglob *c, const char *name, size_t nlen, zname *z)
{
    switch (c->kind) {
    case GK_LITERAL:
        return nlen == c->litlen && memcmp(name, c->lit, nlen) == 0;
    case GK_PREFIX:
        return nlen >= c->litlen && memcmp(name, c->lit, c->litlen) == 0;
    case GK_SUFFIX:
        return nlen >= c->litlen && memcmp(name + nlen - c->litlen, c->lit, c->litlen) == 0;
    case GK_INFIX:
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

/*
 * A glob list compiled for one build. LITERAL and PREFIX globs ("keyed")
 * are in a hash table by their literal part (a literal "AB" and a prefix
 * "AB*" share a hash and are told apart by kind); plen lists the distinct
 * prefix lengths, ascending, so a name is looked up once per length. The
 * others are tried one by one.
 */
typedef struct globset {
    const cglob *keyed;
    size_t nkeyed;
    const uint32_t *tab; /* keyed[i] stored as i + 1; mask + 1 slots, at most half full */
    size_t mask;
    const size_t *plen;
    size_t nplen;
    const cglob *other;
    size_t nother;
} globset;

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
 * (glob_table_slots(n) slots). 1 when one of them needs fnmatch.
 */
static int globset_init(globset *s, cglob *dst, size_t *plen, uint32_t *tab,
                        const shx_globlist *l, size_t n)
{
    size_t slots = glob_table_slots(n);
    memset(tab, 0, slots * sizeof *tab);
    size_t front = 0, back = n, np = 0;
    int need_z = 0;
    for (size_t i = 0; i < n; i++) {
        cglob c = glob_compile(l->globs[i]);
        if (c.kind == GK_LITERAL || c.kind == GK_PREFIX) {
            c.hash = name_hash(c.lit, c.litlen);
            size_t k = c.hash & (slots - 1);
            while (tab[k])
                k = (k + 1) & (slots - 1);
            tab[k] = (uint32_t)(front + 1);
            if (c.kind == GK_PREFIX)
                plen[np++] = c.litlen;
            dst[front++] = c;
        } else {
            need_z |= c.kind == GK_FNMATCH;
            dst[--back] = c; /* order does not matter: any match decides */
        }
    }
    qsort(plen, np, sizeof *plen, cmp_size);
    size_t u = 0;
    for (size_t i = 0; i < np; i++)
        if (u == 0 || plen[u - 1] != plen[i])
            plen[u++] = plen[i];
    *s = (globset){dst, front, tab, slots - 1, plen, u, dst + back, n - back};
    return need_z;
}

static int keyed_find(const globset *s, const char *name, size_t len, uint32_t h, int kind)
{
    for (size_t i = h & s->mask; s->tab[i]; i = (i + 1) & s->mask) {
        const cglob *c = &s->keyed[s->tab[i] - 1];
        if (c->hash == h && c->kind == kind && c->litlen == len && memcmp(c->lit, name, len) == 0)
            return 1;
    }
    return 0;
}

/* Does a glob of s match the nlen bytes at name, whose name_hash is h? */
static int globset_match(const globset *s, const char *name, size_t nlen, uint32_t h, zname *z)
{
    if (s->nkeyed) {
        if (keyed_find(s, name, nlen, h, GK_LITERAL))
            return 1;
        /* FNV-1a runs byte by byte, so the hash of each prefix comes on the way */
        uint32_t ph = FNV_OFFSET;
        size_t hashed = 0;
        for (size_t k = 0; k < s->nplen && s->plen[k] <= nlen; k++) {
            for (; hashed < s->plen[k]; hashed++) {
                ph ^= (unsigned char)name[hashed];
                ph *= FNV_PRIME;
            }
            if (keyed_find(s, name, hashed, fnv_fold(ph), GK_PREFIX))
                return 1;
        }
    }
    for (size_t i = 0; i < s->nother; i++)
        if (cglob_match(&s->other[i], name, nlen, z))
            return 1;
    return 0;
}

#define ZBUF_STACK 256

int shx_globlist_match(const shx_globlist *g, const char *name, size_t namelen)
{
    if (!g || !name)
        return 0;
    char small[ZBUF_STACK];
    char *heap = NULL;
    zname z = {NULL, 0};
    int hit = 0;
    for (size_t i = 0; i < g->n && !hit; i++) {
        cglob c = glob_compile(g->globs[i]);
        if (c.kind == GK_FNMATCH && !z.buf) {
            if (namelen < sizeof small)
                z.buf = small;
            else if (!(z.buf = heap = malloc(namelen + 1)))
                return SHEXEC_ENOMEM;
        }
        hit = cglob_match(&c, name, namelen, &z);
    }
    free(heap);
    return hit;
}

/* ------------------------------------------------------------------------
 * Building
 * ------------------------------------------------------------------------ */

typedef struct ent {
    const char *name; /* not NUL-terminated at nlen when it comes from base */
    const char *val;  /* NUL-terminated; NULL: removed */
    size_t nlen;
    size_t vlen; /* known only once the value is final (sizing pass) */
    uint32_t hash;
} ent;

/*
 * The table slot for name: either the one holding it (value = entry index
 * + 1) or the empty one where it belongs. The table is at most half full,
 * so the probe ends.
 */
static uint32_t *slot_for(uint32_t *tab, size_t mask, const ent *ents, const char *name,
                          size_t nlen, uint32_t h)
{
    size_t i = h & mask;
    for (;;) {
        uint32_t v = tab[i];
        if (v == 0)
            return &tab[i];
        const ent *e = &ents[v - 1];
        /* A nonzero slot always holds the index + 1 of an entry already
         * written (the table starts zeroed); the analyzer does not track what
         * is stored at computed indices and takes *e for uninitialized. */
        // NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): see above
        if (e->hash == h && e->nlen == nlen && memcmp(e->name, name, nlen) == 0)
            return &tab[i];
        i = (i + 1) & mask;
    }
}

static void apply_overrides(const shx_envlist *l, ent *ents, size_t *ne, uint32_t *tab,
                            size_t mask)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        const char *name = l->names[i];
        /* shx_envlist_set never stores such names; a hand-filled list might. */
        if (!shx_env_name_valid(name))
            continue;
        size_t nlen = strlen(name);
        uint32_t h = name_hash(name, nlen);
        uint32_t *slot = slot_for(tab, mask, ents, name, nlen, h);
        if (*slot) {
            ents[*slot - 1].val = l->values[i];
        } else if (l->values[i]) {
            /* Removing a name nobody set needs no entry; if a later list sets
             * it, it is new there and is appended in that list's order. */
            ents[*ne] = (ent){name, l->values[i], nlen, 0, h};
            *slot = (uint32_t)++*ne;
        }
    }
}

int shx_env_build(char ***out, const char *const *base, const shx_envlist *session_ov,
                  const shx_envlist *run_ov, const shx_globlist *deny,
                  const shx_globlist *allow)
{
    if (!out)
        return SHEXEC_EINVAL;
    *out = NULL;

    size_t nb = 0;
    if (base)
        while (base[nb])
            nb++;
    size_t ns = session_ov ? session_ov->n : 0;
    size_t nr = run_ov ? run_ov->n : 0;
    size_t nd = deny ? deny->n : 0;
    size_t na = nd && allow ? allow->n : 0; /* allow only matters against deny */

    /* Each count is an array length, so their sums cannot wrap. The limits
     * keep entry and glob indices in uint32_t and each part of the scratch
     * block under a quarter of SIZE_MAX (a table has < 4 * count + 16
     * slots). */
    size_t tot = nb + ns + nr;
    size_t ngl = nd + na;
    /* Which of the two entry limits is lower depends on the width of size_t. */
    size_t max_tot = SIZE_MAX / 4 / sizeof(ent);
    if (max_tot > ((size_t)1 << 28))
        max_tot = (size_t)1 << 28;
    size_t max_gl = SIZE_MAX / 4 / sizeof(cglob);
    if (max_gl > ((size_t)1 << 28))
        max_gl = (size_t)1 << 28;
    if (tot > max_tot || ngl > max_gl)
        return SHEXEC_ENOMEM;
    size_t hcap = 16;
    while (hcap < 2 * tot)
        hcap *= 2;
    size_t dslots = nd ? glob_table_slots(nd) : 0;
    size_t aslots = nd ? glob_table_slots(na) : 0;
    size_t sz_ents = tot * sizeof(ent);
    size_t sz_globs = ngl * sizeof(cglob);
    size_t sz_plen = ngl * sizeof(size_t);
    size_t sz_tab = (hcap + dslots + aslots) * sizeof(uint32_t);

    /* One scratch block: entries, compiled globs, prefix lengths, then the
     * uint32_t tables (names, deny globs, allow globs), so every part is
     * aligned for its type. */
    unsigned char *scratch = malloc(sz_ents + sz_globs + sz_plen + sz_tab);
    if (!scratch)
        return SHEXEC_ENOMEM;
    ent *ents = (ent *)scratch;
    cglob *cg = (cglob *)(scratch + sz_ents);
    size_t *plen = (size_t *)(scratch + sz_ents + sz_globs);
    uint32_t *tab = (uint32_t *)(scratch + sz_ents + sz_globs + sz_plen);
    memset(tab, 0, hcap * sizeof *tab);
    size_t mask = hcap - 1;

    size_t ne = 0;
    for (size_t i = 0; i < nb; i++) {
        const char *s = base[i];
        const char *eq = strchr(s, '=');
        if (!eq || eq == s)
            continue;
        size_t nlen = (size_t)(eq - s);
        uint32_t h = name_hash(s, nlen);
        uint32_t *slot = slot_for(tab, mask, ents, s, nlen, h);
        if (*slot)
            continue;
        ents[ne] = (ent){s, eq + 1, nlen, 0, h};
        *slot = (uint32_t)++ne;
    }
    apply_overrides(session_ov, ents, &ne, tab, mask);
    apply_overrides(run_ov, ents, &ne, tab, mask);

    char small[ZBUF_STACK];
    char *zheap = NULL;
    if (nd) {
        globset dset, aset;
        int need_z = globset_init(&dset, cg, plen, tab + hcap, deny, nd);
        need_z |= globset_init(&aset, cg + nd, plen + nd, tab + hcap + dslots, allow, na);
        zname z = {small, 0};
        if (need_z) {
            size_t maxn = 0;
            for (size_t i = 0; i < ne; i++)
                if (ents[i].val && ents[i].nlen > maxn)
                    maxn = ents[i].nlen;
            if (maxn >= sizeof small && !(z.buf = zheap = malloc(maxn + 1))) {
                free(scratch);
                return SHEXEC_ENOMEM;
            }
        }
        for (size_t i = 0; i < ne; i++) {
            ent *e = &ents[i];
            if (!e->val)
                continue;
            z.ready = 0;
            if (globset_match(&dset, e->name, e->nlen, e->hash, &z) &&
                !globset_match(&aset, e->name, e->nlen, e->hash, &z))
                e->val = NULL;
        }
    }

    size_t cnt = 0, strbytes = 0;
    for (size_t i = 0; i < ne; i++) {
        if (!ents[i].val)
            continue;
        size_t vlen = ents[i].vlen = strlen(ents[i].val);
        size_t add = ents[i].nlen + vlen + 2;
        if (add < vlen || strbytes > SIZE_MAX - add)
            goto nomem;
        strbytes += add;
        cnt++;
    }
    size_t ptrbytes = (cnt + 1) * sizeof(char *);
    if (strbytes > SIZE_MAX - ptrbytes)
        goto nomem;
    char **env = malloc(ptrbytes + strbytes);
    if (!env)
        goto nomem;
    char *p = (char *)env + ptrbytes;
    size_t k = 0;
    for (size_t i = 0; i < ne; i++) {
        const ent *e = &ents[i];
        if (!e->val)
            continue;
        size_t vlen = e->vlen;
        env[k++] = p;
        memcpy(p, e->name, e->nlen);
        p += e->nlen;
        *p++ = '=';
        memcpy(p, e->val, vlen + 1);
        p += vlen + 1;
    }
    env[k] = NULL;
    free(zheap);
    free(scratch);
    *out = env;
    return SHEXEC_OK;

nomem:
    free(zheap);
    free(scratch);
    return SHEXEC_ENOMEM;
}

void shx_env_free(char **env)
{
    free(env);
}

const char *shx_env_get(char *const *env, const char *name)
{
    if (!env || !shx_env_name_valid(name))
        return NULL;
    size_t n = strlen(name);
    for (; *env; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
            return *env + n + 1;
    return NULL;
}
