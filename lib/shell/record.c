/*
 * record.c - the parser for the wrapper's record (see record.h).
 */
#include "shell/record.h"

#include <string.h>

void shx_record_init(shx_record *r)
{
    memset(r, 0, sizeof *r);
    r->field = (shx_buf)SHX_BUF_INIT;
    r->cwd = (shx_buf)SHX_BUF_INIT;
    r->env = r->decl = r->funcs = r->lost = (shx_buf)SHX_BUF_INIT;
}

/* One of the state fields (env, decl, funcs): kept when asked for, within
 * the bound on all three together. */
static void take_state(shx_record *r, int *has, shx_buf *into, const char *v, size_t vl)
{
    if (!r->want_state || r->state_over)
        return;
    size_t before = *has ? into->len : 0;
    if (vl > SHX_STATE_MAX || r->state_bytes - before > SHX_STATE_MAX - vl) {
        r->state_over = 1;
        r->has_env = r->has_decl = r->has_funcs = 0;
        shx_buf_free(&r->env);
        shx_buf_free(&r->decl);
        shx_buf_free(&r->funcs);
        return;
    }
    shx_buf_clear(into);
    if (shx_buf_append(into, v, vl) != 0) {
        r->nomem = 1;
        *has = 0;
        return;
    }
    r->state_bytes = r->state_bytes - before + vl;
    *has = 1;
}

static int key_valid(const char *k, size_t n)
{
    if (n == 0 || n > SHX_RECORD_KEY_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = k[i];
        int ok = (c >= 'a' && c <= 'z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

/* 0-255 in plain decimal (no sign, no leading zeros but "0"), or -1. */
static int parse_status(const char *v, size_t n)
{
    if (n == 0 || n > 3 || (n > 1 && v[0] == '0'))
        return -1;
    int x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        x = x * 10 + (v[i] - '0');
    }
    return x <= 255 ? x : -1;
}

/* One complete field (its NUL not included). */
static void take_field(shx_record *r, const char *f, size_t n)
{
    if (n == 0)
        return; /* between two NULs: the report's start */
    const char *eq = memchr(f, '=', n);
    if (!eq || !key_valid(f, (size_t)(eq - f))) {
        r->malformed++;
        return;
    }
    size_t kl = (size_t)(eq - f);
    const char *v = eq + 1;
    size_t vl = n - kl - 1;
    if (kl == 6 && memcmp(f, "status", 6) == 0) {
        int st = parse_status(v, vl);
        if (st < 0) {
            r->malformed++;
            return;
        }
        r->status = st;
        r->has_status = 1;
    } else if (kl == 3 && memcmp(f, "cwd", 3) == 0) {
        /* pwd ends its line with one newline; a directory name may end with more */
        if (vl == 0 || v[vl - 1] != '\n') {
            r->malformed++;
            return;
        }
        shx_buf_clear(&r->cwd);
        if (shx_buf_append(&r->cwd, v, vl - 1) != 0) {
            r->nomem = 1;
            r->has_cwd = 0;
            return;
        }
        r->has_cwd = 1;
    } else if (kl == 3 && memcmp(f, "env", 3) == 0) {
        take_state(r, &r->has_env, &r->env, v, vl);
    } else if (kl == 4 && memcmp(f, "decl", 4) == 0) {
        take_state(r, &r->has_decl, &r->decl, v, vl);
    } else if (kl == 5 && memcmp(f, "funcs", 5) == 0) {
        take_state(r, &r->has_funcs, &r->funcs, v, vl);
    } else if (kl == 7 && memcmp(f, "prelude", 7) == 0) {
        r->has_prelude = 1;
    } else if (kl == 6 && memcmp(f, "loaded", 6) == 0) {
        r->loaded = 1;
    } else if (kl == 4 && memcmp(f, "lost", 4) == 0) {
        if (vl && (shx_buf_append(&r->lost, v, vl) != 0 || shx_buf_putc(&r->lost, '\0') != 0))
            r->nomem = 1;
    }
    r->fields++;
}

void shx_record_feed(shx_record *r, const char *data, size_t len)
{
    if (r->over || r->nomem)
        return;
    if (len > SHX_RECORD_MAX - r->total) {
        r->over = 1;
        shx_buf_free(&r->field);
        return;
    }
    r->total += len;
    while (len > 0) {
        const char *nul = memchr(data, '\0', len);
        size_t take = nul ? (size_t)(nul - data) : len;
        if (!nul) {
            if (shx_buf_append(&r->field, data, take) != 0)
                r->nomem = 1;
            return;
        }
        if (r->field.len == 0) {
            take_field(r, data, take); /* the whole field is in this chunk */
        } else {
            if (shx_buf_append(&r->field, data, take) != 0) {
                r->nomem = 1;
                return;
            }
            take_field(r, r->field.data, r->field.len);
            shx_buf_clear(&r->field);
        }
        data += take + 1;
        len -= take + 1;
    }
}

int shx_record_usable(const shx_record *r)
{
    return !r->over && !r->nomem;
}

void shx_record_free(shx_record *r)
{
    shx_buf_free(&r->field);
    shx_buf_free(&r->cwd);
    shx_buf_free(&r->env);
    shx_buf_free(&r->decl);
    shx_buf_free(&r->funcs);
    shx_buf_free(&r->lost);
}
