/*
 * fuzz_shstate.c - libFuzzer target for the parser of a shell's listing of
 * its variables (lib/shstate.c).
 *
 * Input: a listing as a command could forge it (any bytes). Whatever it
 * is, the walk ends without a fault; each declaration lies inside the
 * input and names an identifier; and every decoded value, quoted again by
 * shx_ansi_c_quote() (as the wrapper replays it), parses back to itself.
 */
#include <stdint.h>
#include <string.h>

#include "fuzzutil.h"
#include "shell/shstate.h"
#include "shx/env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct ctx {
    const char *text;
    size_t len;
} ctx;

static int expect_value(void *user, const shx_decl *d)
{
    const shx_buf *want = user;
    if (!d->value || d->value_len != want->len || memcmp(d->value, want->data, want->len) != 0)
        __builtin_trap();
    return 0;
}

static int check(void *user, const shx_decl *d)
{
    ctx *c = user;
    if (d->text < c->text || d->text + d->text_len > c->text + c->len)
        __builtin_trap();
    if (d->name < d->text || d->name + d->name_len > d->text + d->text_len)
        __builtin_trap();
    if (!shx_env_name_is_identifier(d->name, d->name_len))
        __builtin_trap();
    if (!d->value)
        return 0;
    if (memchr(d->value, '\0', d->value_len))
        __builtin_trap();
    shx_buf want = SHX_BUF_INIT, again = SHX_BUF_INIT, scratch = SHX_BUF_INIT;
    if (shx_buf_append(&want, d->value, d->value_len) == 0 &&
        shx_buf_puts(&again, "declare -x V=") == 0 &&
        shx_ansi_c_quote(&again, d->value, d->value_len) == 0) {
        if (memchr(again.data, '\n', again.len))
            __builtin_trap(); /* the replay must stay on one line */
        if (shx_decl_each(again.data, again.len, &scratch, expect_value, &want, NULL) != 0)
            __builtin_trap();
    }
    shx_buf_free(&want);
    shx_buf_free(&again);
    shx_buf_free(&scratch);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ctx c = {(const char *)data, size};
    shx_buf scratch = SHX_BUF_INIT;
    size_t bad = 0;
    int rc = shx_decl_each(c.text, size, &scratch, check, &c, &bad);
    if (rc == SHX_DECL_MALFORMED && bad > size)
        __builtin_trap();
    shx_buf_free(&scratch);
    return 0;
}
