/*
 * redact.c - secrets hidden from output (see output_hook.h and redact.h).
 */
#include "output/redact.h"

#include <stdlib.h>
#include <string.h>

const char *const shx_redact_default_globs[] = {"*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*",
                                               "*CREDENTIAL*"};

/* name (len bytes) is fit for a marker. */
static int name_fits(const char *name, size_t len)
{
    if (len == 0 || len > SHX_REDACT_NAME_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_'))
            return 0;
    }
    return 1;
}

int shx_redact_name_valid(const char *name)
{
    return name && name_fits(name, strnlen(name, SHX_REDACT_NAME_MAX + 1));
}

int shx_secrets_add(shx_secrets *l, const char *name, const void *value, size_t len)
{
    if (l->n == l->cap) {
        if (l->n >= SHX_REDACT_MAX_VALUES)
            return -1;
        size_t cap = l->cap ? l->cap * 2 : 8;
        shx_secret *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    shx_secret *e = &l->v[l->n];
    e->name = strdup(name);
    e->value = malloc(len ? len : 1);
    if (!e->name || !e->value) {
        free(e->name);
        free(e->value);
        return -1;
    }
    memcpy(e->value, value, len);
    e->len = len;
    l->n++;
    return 0;
}

void shx_secrets_free(shx_secrets *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].name);
        free(l->v[i].value);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

static void free_globs(char **globs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(globs[i]);
    free(globs);
}

int shx_redact_cfg_set_globs(shx_redact_cfg *c, const char *const *globs, size_t n)
{
    if (!globs) {
        globs = shx_redact_default_globs;
        n = SHX_REDACT_DEFAULT_GLOBS;
    }
    char **copy = n ? calloc(n, sizeof *copy) : NULL;
    if (n && !copy)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!(copy[i] = strdup(globs[i]))) {
            free_globs(copy, i);
            return -1;
        }
    free_globs(c->globs, c->nglobs);
    c->globs = copy;
    c->nglobs = n;
    c->env_on = n > 0;
    return 0;
}

void shx_redact_cfg_free(shx_redact_cfg *c)
{
    shx_secrets_free(&c->values);
    free_globs(c->globs, c->nglobs);
    shx_redact_set_release(c->last);
    memset(c, 0, sizeof *c);
}

static unsigned char upper(char ch)
{
    unsigned char c = (unsigned char)ch;
    return c >= 'a' && c <= 'z' ? (unsigned char)(c - ('a' - 'A')) : c;
}

/* Glob match of `name` (n bytes) against g ('*' and '?'), ignoring case:
 * an environment's names are not all upper case. Backtracks to the last
 * star only, so it is linear in the name for each star. */
static int glob_match(const char *g, const char *name, size_t n)
{
    size_t i = 0;
    const char *star = NULL;
    size_t star_i = 0;
    while (i < n) {
        if (*g == '*') {
            star = ++g;
            star_i = i;
        } else if (*g && (*g == '?' || upper(*g) == upper(name[i]))) {
            g++;
            i++;
        } else if (star) {
            g = star;
            i = ++star_i;
        } else {
            return 0;
        }
    }
    while (*g == '*')
        g++;
    return *g == '\0';
}

typedef struct pick {
    const char *name;
    size_t name_len;
    const char *value;
    size_t len;
} pick;

typedef struct picks {
    pick *v;
    size_t n, cap;
} picks;

static int pick_add(picks *p, const char *name, size_t name_len, const char *value, size_t len)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        pick *v = realloc(p->v, cap * sizeof *v);
        if (!v)
            return -1;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = (pick){name, name_len, value, len};
    return 0;
}

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    h ^= (uint64_t)len; /* "ab"+"c" and "a"+"bc" differ */
    return h * 1099511628211ull;
}

static int collect(shx_redact_cfg *c, const char *const *env, int globs_default,
                   const shx_secrets *run_values, picks *p)
{
    for (size_t i = 0; i < c->values.n; i++)
        if (pick_add(p, c->values.v[i].name, strlen(c->values.v[i].name), c->values.v[i].value,
                     c->values.v[i].len) != 0)
            return -1;
    const char *const *globs = (const char *const *)c->globs;
    size_t nglobs = c->env_on ? c->nglobs : 0;
    if (!nglobs && globs_default) {
        globs = shx_redact_default_globs;
        nglobs = SHX_REDACT_DEFAULT_GLOBS;
    }
    for (size_t e = 0; env && nglobs && env[e]; e++) {
        const char *eq = strchr(env[e], '=');
        if (!eq || strlen(eq + 1) < SHX_REDACT_ENV_MIN)
            continue;
        size_t nlen = (size_t)(eq - env[e]);
        for (size_t g = 0; g < nglobs; g++)
            if (glob_match(globs[g], env[e], nlen)) {
                if (pick_add(p, env[e], nlen, eq + 1, strlen(eq + 1)) != 0)
                    return -1;
                break;
            }
    }
    for (size_t i = 0; run_values && i < run_values->n; i++)
        if (pick_add(p, run_values->v[i].name, strlen(run_values->v[i].name),
                     run_values->v[i].value, run_values->v[i].len) != 0)
            return -1;
    return 0;
}

static int build(const picks *p, unsigned shapes, uint64_t fingerprint, shx_redact_set **out)
{
    shx_redact_set *set = calloc(1, sizeof *set);
    if (!set)
        return -1;
    set->refs = 1;
    set->shapes = shapes;
    set->fingerprint = fingerprint;
    shx_buf marker = SHX_BUF_INIT;
    if (p->n) {
        set->literals = shx_acr_new();
        if (!set->literals)
            goto fail;
        for (size_t i = 0; i < p->n; i++) {
            shx_buf_clear(&marker);
            /* names from the environment may hold any byte: only a valid
             * one goes into the marker */
            int named = name_fits(p->v[i].name, p->v[i].name_len);
            if (shx_buf_puts(&marker, "[REDACTED:") != 0 ||
                (named ? shx_buf_append(&marker, p->v[i].name, p->v[i].name_len)
                       : shx_buf_puts(&marker, "SECRET")) != 0 ||
                shx_buf_putc(&marker, ']') != 0 ||
                shx_acr_add(set->literals, p->v[i].value, p->v[i].len, marker.data, marker.len) != 0)
                goto fail;
        }
        if (shx_acr_build(set->literals) != 0)
            goto fail;
    }
    shx_buf_free(&marker);
    *out = set;
    return 0;
fail:
    shx_buf_free(&marker);
    shx_redact_set_release(set);
    return -1;
}

int shx_redact_set_for(shx_redact_cfg *c, const char *const *env, int run_env_globs_default,
                       const shx_secrets *run_values, shx_redact_set **out)
{
    *out = NULL;
    picks p = {0};
    if (collect(c, env, run_env_globs_default, run_values, &p) != 0) {
        free(p.v);
        return -1;
    }
    if (p.n == 0 && !c->shapes) {
        free(p.v);
        return 0;
    }
    uint64_t h = fnv(14695981039346656037ull, &c->shapes, sizeof c->shapes);
    for (size_t i = 0; i < p.n; i++) {
        h = fnv(h, p.v[i].name, p.v[i].name_len);
        h = fnv(h, p.v[i].value, p.v[i].len);
    }
    if (c->last && c->last->fingerprint == h) {
        free(p.v);
        c->last->refs++;
        *out = c->last;
        return 0;
    }
    shx_redact_set *set;
    int rc = build(&p, c->shapes, h, &set);
    free(p.v);
    if (rc != 0)
        return -1;
    shx_redact_set_release(c->last);
    c->last = set;
    set->refs++;
    *out = set;
    return 0;
}

int shx_redact_set_for_run(shx_redact_cfg *c, const char *const *base,
                           const shx_envlist *session_env, const shx_envlist *run_env,
                           int own_env, const shx_secrets *run_values, shx_redact_set **out)
{
    char **env = NULL;
    *out = NULL;
    if ((c->env_on || own_env) &&
        shx_env_build(&env, base, session_env, own_env ? run_env : NULL, NULL, NULL) != 0)
        return -1;
    int rc = shx_redact_set_for(c, (const char *const *)env, own_env, run_values, out);
    shx_env_free(env);
    return rc;
}

void shx_redact_set_release(shx_redact_set *set)
{
    if (!set || --set->refs > 0)
        return;
    shx_acr_free(set->literals);
    free(set);
}

void shx_redactor_init(shx_redactor *r, shx_redact_set *set)
{
    memset(r, 0, sizeof *r);
    r->set = set;
    set->refs++;
    shx_acr_stream_init(&r->literals, set->literals);
    shx_keyscan_init(&r->keys, set->shapes);
    r->mid = (shx_buf)SHX_BUF_INIT;
}

int shx_redactor_feed(shx_redactor *r, const char *data, size_t len, shx_buf *out)
{
    if (!r->set->shapes)
        return shx_acr_feed(&r->literals, data, len, out);
    shx_buf_clear(&r->mid);
    int rc = shx_acr_feed(&r->literals, data, len, &r->mid);
    if (shx_keyscan_feed(&r->keys, r->mid.data, r->mid.len, out) != 0)
        rc = -1;
    return rc;
}

int shx_redactor_finish(shx_redactor *r, shx_buf *out)
{
    if (!r->set->shapes)
        return shx_acr_finish(&r->literals, out);
    shx_buf_clear(&r->mid);
    int rc = shx_acr_finish(&r->literals, &r->mid);
    if (shx_keyscan_feed(&r->keys, r->mid.data, r->mid.len, out) != 0 ||
        shx_keyscan_finish(&r->keys, out) != 0)
        rc = -1;
    return rc;
}

uint64_t shx_redactor_count(const shx_redactor *r)
{
    return r->literals.replaced + r->keys.replaced;
}

void shx_redactor_free(shx_redactor *r)
{
    shx_acr_stream_free(&r->literals);
    shx_keyscan_free(&r->keys);
    shx_buf_free(&r->mid);
    shx_redact_set_release(r->set);
    r->set = NULL;
}
