/*
 * env.c - the environment a command starts with: override lists and
 * shx_env_build (see env.h); the deny/allow lists and their filter are
 * glob.c's. Runs once per spawn, so the build is linear (hashed lookups,
 * globs classified once per build, in the build's own scratch block) and its
 * result is a single allocation; the lists are hashed too, so a tool call
 * that sets thousands of variables costs thousands of steps, not millions.
 */
#include "shx/env.h"

#include "shexec.h"
#include "shx/strindex.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int shx_env_name_valid(const char *name)
{
    return name != NULL && name[0] != '\0' && strchr(name, '=') == NULL;
}

/* Spelled out, not isalpha(): the locale must not widen what passes. */
static int ident_char(char c, int first)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
}

int shx_env_name_is_identifier(const char *name, size_t len)
{
    if (!name || len == 0)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!ident_char(name[i], i == 0))
            return 0;
    return 1;
}

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
    if (cap > SHX_LIST_MAX_ENTRIES)
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
    uint32_t *index = shx_index_new(cap, l->names, l->n, &mask);
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
    uint32_t h = shx_name_hash(name, strlen(name));
    uint32_t *slot = l->index ? shx_index_slot(l->index, l->index_mask, l->names, name, h) : NULL;
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
    slot = shx_index_slot(l->index, l->index_mask, l->names, name, h);
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

int shx_envlist_find(const shx_envlist *l, const char *name, size_t n, const char **value)
{
    if (!l->index || n == 0)
        return 0;
    /* the index compares NUL-terminated keys: look at the slots by hand */
    uint32_t h = shx_name_hash(name, n);
    for (size_t i = h & l->index_mask;; i = (i + 1) & l->index_mask) {
        uint32_t v = l->index[i];
        if (v == 0)
            return 0;
        const char *have = l->names[v - 1];
        if (strncmp(have, name, n) == 0 && have[n] == '\0') {
            *value = l->values[v - 1];
            return 1;
        }
    }
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
        uint32_t h = shx_name_hash(name, nlen);
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

    /* Each count is an array length, so their sum cannot wrap. The limit
     * keeps entry indices in uint32_t and each part of the scratch block
     * under a quarter of SIZE_MAX (the table has < 4 * count + 16 slots);
     * the filter's size is bounded the same way. */
    size_t tot = nb + ns + nr;
    size_t max_tot = SIZE_MAX / 4 / sizeof(ent);
    if (max_tot > ((size_t)1 << 28))
        max_tot = (size_t)1 << 28;
    if (tot > max_tot)
        return SHEXEC_ENOMEM;
    size_t hcap = 16;
    while (hcap < 2 * tot)
        hcap *= 2;
    size_t sz_ents = tot * sizeof(ent);
    size_t sz_tab = hcap * sizeof(uint32_t);
    size_t sz_filter = shx_namefilter_size(deny, allow);
    if (sz_filter > SIZE_MAX - sz_ents - sz_tab)
        return SHEXEC_ENOMEM;

    /* One scratch block: entries, the deny and allow lists compiled, then
     * the table of names (uint32_t, the least aligned part, last). */
    unsigned char *scratch = malloc(sz_ents + sz_filter + sz_tab);
    if (!scratch)
        return SHEXEC_ENOMEM;
    ent *ents = (ent *)scratch;
    uint32_t *tab = (uint32_t *)(scratch + sz_ents + sz_filter);
    memset(tab, 0, sz_tab);
    size_t mask = hcap - 1;

    size_t ne = 0;
    for (size_t i = 0; i < nb; i++) {
        const char *s = base[i];
        const char *eq = strchr(s, '=');
        if (!eq || eq == s)
            continue;
        size_t nlen = (size_t)(eq - s);
        uint32_t h = shx_name_hash(s, nlen);
        uint32_t *slot = slot_for(tab, mask, ents, s, nlen, h);
        if (*slot)
            continue;
        ents[ne] = (ent){s, eq + 1, nlen, 0, h};
        *slot = (uint32_t)++ne;
    }
    apply_overrides(session_ov, ents, &ne, tab, mask);
    apply_overrides(run_ov, ents, &ne, tab, mask);

    /* The filter's rule, asked with the hash each entry already has and one
     * fnmatch buffer sized for the longest name. */
    shx_namefilter filter;
    shx_namefilter_init_at(&filter, sz_filter ? scratch + sz_ents : NULL, deny, allow);
    char small[SHX_ZBUF_STACK];
    char *zheap = NULL;
    if (filter.active) {
        shx_zname z = {small, 0};
        if (filter.need_z) {
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
            if (shx_namefilter_drops_hashed(&filter, e->name, e->nlen, e->hash, &z))
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

char *const *shx_env_memo_find(const shx_env_memo *m, const char *const *base, uint64_t key)
{
    if (!m->env || m->key != key || !base != !m->base)
        return NULL;
    if (!base)
        return m->env;
    size_t i = 0;
    for (; base[i] && m->base[i]; i++)
        if (strcmp(base[i], m->base[i]) != 0)
            return NULL;
    return !base[i] && !m->base[i] ? m->env : NULL;
}

char **shx_strv_copy(const char *const *v)
{
    size_t n = 0, bytes = 0;
    for (; v[n]; n++) {
        size_t len = strlen(v[n]) + 1;
        if (bytes > SIZE_MAX - len)
            return NULL;
        bytes += len;
    }
    if (n >= (SIZE_MAX - bytes) / sizeof(char *))
        return NULL;
    char **copy = malloc((n + 1) * sizeof(char *) + bytes);
    if (!copy)
        return NULL;
    char *p = (char *)(copy + n + 1);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(v[i]) + 1;
        copy[i] = memcpy(p, v[i], len);
        p += len;
    }
    copy[n] = NULL;
    return copy;
}

int shx_env_memo_keep(shx_env_memo *m, char **env, const char *const *base, uint64_t key)
{
    shx_env_memo_free(m);
    char **copy = base ? shx_strv_copy(base) : NULL;
    if (base && !copy) {
        shx_env_free(env);
        return SHEXEC_ENOMEM;
    }
    m->env = env;
    m->base = copy;
    m->key = key;
    return SHEXEC_OK;
}

void shx_env_memo_free(shx_env_memo *m)
{
    shx_env_free(m->env);
    free(m->base);
    *m = (shx_env_memo)SHX_ENV_MEMO_INIT;
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
