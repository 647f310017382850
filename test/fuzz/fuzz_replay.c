/*
 * fuzz_replay.c - libFuzzer target for what the library gives the next bash
 * of a state a command listed (lib/replay.c), with the parsers it comes
 * from (lib/shstate.c: declarations and arrays, lib/shfuncs.c: functions).
 *
 * Input: a `declare -p` listing, then a NUL, then a `declare -f` listing,
 * as a command could forge them (any bytes). Whatever they are: every
 * declaration replayed is one line that parses back, as the listing's
 * parser reads it, to the same name and value (so the text bash is given
 * holds the value as data, quoted by the library); an array's elements
 * come back the same; every function value kept starts as bash's import
 * requires ("() {") and holds no NUL; nothing faults.
 */
#include <stdint.h>
#include <string.h>

#include "fuzzutil.h"
#include "persist/replay.h"
#include "persist/shfuncs.h"
#include "shell/shstate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An array's elements as "key NUL value NUL ...", for comparison. */
static int collect(void *user, const char *k, size_t kl, const char *v, size_t vl)
{
    shx_buf *b = user;
    shx_buf_append(b, k, kl);
    shx_buf_putc(b, '\0');
    shx_buf_append(b, v, vl);
    shx_buf_putc(b, '\0');
    return 0;
}

static void elements(const shx_decl *d, shx_buf *out)
{
    shx_buf k = SHX_BUF_INIT, v = SHX_BUF_INIT;
    (void)shx_array_each(d->array_text, d->array_len, &k, &v, collect, out);
    shx_buf_free(&k);
    shx_buf_free(&v);
}

typedef struct want {
    const shx_decl *d;
    int seen;
} want;

static int same_back(void *user, const shx_decl *got)
{
    want *w = user;
    const shx_decl *d = w->d;
    w->seen++;
    FZ_CHECK(got->name_len == d->name_len && !memcmp(got->name, d->name, d->name_len),
             "name changed");
    FZ_CHECK(got->array == d->array && got->assoc == d->assoc && got->integer == d->integer,
             "attributes changed");
    if (d->value)
        FZ_CHECK(got->value && fz_mem_eq(got->value, got->value_len, d->value, d->value_len),
                 "value changed");
    if (d->array && d->array_text) {
        shx_buf a = SHX_BUF_INIT, b = SHX_BUF_INIT;
        elements(d, &a);
        FZ_CHECK(got->array_text != NULL, "an array replayed as an array");
        elements(got, &b);
        FZ_CHECK(fz_mem_eq(a.data, a.len, b.data, b.len), "elements changed");
        shx_buf_free(&a);
        shx_buf_free(&b);
    }
    return 0;
}

static int replay_one(void *user, const shx_decl *d)
{
    (void)user;
    shx_buf line = SHX_BUF_INIT, scratch = SHX_BUF_INIT;
    const char *why = NULL;
    int rc = shx_replay_var(&line, d, &why);
    FZ_CHECK(rc == SHX_REPLAY_OK || rc == SHX_REPLAY_SKIP, "rc %d", rc);
    if (rc == SHX_REPLAY_SKIP) {
        FZ_CHECK(why != NULL && line.len == 0, "a skip says why and writes nothing");
    } else {
        FZ_CHECK(line.len > 0 && line.data[line.len - 1] == '\n', "a line");
        FZ_CHECK(memchr(line.data, '\n', line.len) == line.data + line.len - 1, "one line");
        FZ_CHECK(!memchr(line.data, '\0', line.len), "no NUL");
        want w = {d, 0};
        int back = shx_decl_each(line.data, line.len, &scratch, same_back, &w, NULL);
        FZ_CHECK(back == SHX_DECL_OK && w.seen == 1, "does not parse back: %.*s",
                 (int)line.len, line.data);
    }
    shx_buf_free(&line);
    shx_buf_free(&scratch);
    return 0;
}

static int func_one(void *user, const char *name, size_t n, const char *body, size_t len)
{
    (void)user;
    const char *why = NULL;
    (void)shx_replay_func_name_ok(name, n, &why);
    shx_buf v = SHX_BUF_INIT;
    int rc = shx_replay_func_value(&v, body, len, &why);
    if (rc == SHX_REPLAY_OK)
        FZ_CHECK(v.len >= 4 && !memcmp(v.data, "() {", 4) && !memchr(v.data, '\0', v.len),
                 "an import value bash takes");
    shx_buf_free(&v);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const char *nul = memchr(s, '\0', size);
    size_t dl = nul ? (size_t)(nul - s) : size;
    shx_buf scratch = SHX_BUF_INIT;
    (void)shx_decl_each(s, dl, &scratch, replay_one, NULL, NULL);
    shx_buf_free(&scratch);
    if (nul)
        (void)shx_funcs_each(nul + 1, size - dl - 1, func_one, NULL);
    return 0;
}
