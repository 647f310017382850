/*
 * fuzz_record.c - libFuzzer target for the parser of the wrapper's record
 * (lib/record.c), built with SHX_RECORD_MAX at 4096 so the bound is in
 * reach.
 *
 * Input: bytes 0-3 seed the chunking, the rest is what arrives on the
 * record channel: well-formed records, hostile ones (bad keys, bad
 * statuses, a cwd without its newline, megabytes of one field), records
 * cut short. It is parsed whole, in random chunks and one byte at a time;
 * all three must agree with each other and with a model written from
 * record.h, and what the parser holds between chunks stays within the
 * bound.
 */
#include <stdint.h>
#include <string.h>

#include "fuzzutil.h"
#include "shell/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct model {
    int over;
    int fields, malformed;
    int has_status, status;
    int has_cwd;
    const char *cwd;
    size_t cwd_len;
} model;

static int key_ok(const char *k, size_t n)
{
    if (n < 1 || n > SHX_RECORD_KEY_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)k[i];
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (i && c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

static void model_parse(const char *s, size_t n, model *m)
{
    memset(m, 0, sizeof *m);
    if (n > SHX_RECORD_MAX) {
        m->over = 1;
        return;
    }
    size_t i = 0;
    for (;;) {
        const char *nul = memchr(s + i, '\0', n - i);
        if (!nul)
            break; /* cut short: not a field */
        const char *f = s + i;
        size_t fl = (size_t)(nul - f);
        i += fl + 1;
        if (fl == 0)
            continue; /* an empty field: skipped (the report starts with a NUL) */
        const char *eq = memchr(f, '=', fl);
        if (!eq || !key_ok(f, (size_t)(eq - f))) {
            m->malformed++;
            continue;
        }
        size_t kl = (size_t)(eq - f), vl = fl - kl - 1;
        const char *v = eq + 1;
        if (kl == 6 && !memcmp(f, "status", 6)) {
            int x = 0, ok = vl >= 1 && vl <= 3 && !(vl > 1 && v[0] == '0');
            for (size_t j = 0; ok && j < vl; j++) {
                ok = v[j] >= '0' && v[j] <= '9';
                x = x * 10 + (v[j] - '0');
            }
            if (!ok || x > 255) {
                m->malformed++;
                continue;
            }
            m->has_status = 1;
            m->status = x;
        } else if (kl == 3 && !memcmp(f, "cwd", 3)) {
            if (vl == 0 || v[vl - 1] != '\n') {
                m->malformed++;
                continue;
            }
            m->has_cwd = 1;
            m->cwd = v;
            m->cwd_len = vl - 1;
        }
        m->fields++;
    }
}

static void check_same(const shx_record *r, const model *m, const char *how)
{
    FZ_CHECK((shx_record_usable(r) ? 0 : 1) == m->over, "%s: usable %d, model over %d", how,
             shx_record_usable(r), m->over);
    if (m->over)
        return;
    FZ_CHECK(r->fields == m->fields && r->malformed == m->malformed,
             "%s: fields %d/%d malformed %d/%d", how, r->fields, m->fields, r->malformed,
             m->malformed);
    FZ_CHECK(r->has_status == m->has_status && (!m->has_status || r->status == m->status),
             "%s: status", how);
    FZ_CHECK(r->has_cwd == m->has_cwd, "%s: has_cwd", how);
    if (m->has_cwd)
        FZ_CHECK(fz_mem_eq(r->cwd.data, r->cwd.len, m->cwd, m->cwd_len), "%s: cwd differs", how);
}

static void parse(const char *s, size_t n, uint32_t seed, int how, const model *m)
{
    shx_record r;
    shx_record_init(&r);
    if (how == 0) {
        shx_record_feed(&r, s, n);
    } else {
        fz_rng rng;
        fz_rng_seed(&rng, seed);
        size_t i = 0;
        while (i < n) {
            size_t k = how == 1 ? fz_chunk(&rng, n - i) : 1;
            shx_record_feed(&r, s + i, k);
            FZ_CHECK(r.field.len <= SHX_RECORD_MAX && r.total <= SHX_RECORD_MAX,
                     "holding %zu bytes", r.field.len);
            i += k;
        }
    }
    check_same(&r, m, how == 0 ? "whole" : how == 1 ? "chunked" : "bytewise");
    shx_record_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    uint32_t seed = fz_u32(&in);
    const char *s = (const char *)in.p;
    size_t n = in.n;
    model m;
    model_parse(s, n, &m);
    parse(s, n, seed, 0, &m);
    parse(s, n, seed, 1, &m);
    parse(s, n, seed, 2, &m);
    return 0;
}
