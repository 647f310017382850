/*
 * fuzz_inert.c - libFuzzer target for the test of which commands cannot
 * change the shell's state (lib/inert.c).
 *
 * Input: a `declare -f` listing and a command, split at the first 0xff byte
 * (no split: the whole input is the command, no functions). Whatever they
 * are, the test ends without a fault; a command it calls inert holds none
 * of the bytes it refuses (outside comments); and an inert command followed by a line that
 * exports, or that calls one of the listed functions, is not inert.
 */
#include <stdint.h>
#include <string.h>

#include "buf.h"
#include "fuzzutil.h"
#include "inert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inert_after(const char *cmd, size_t len, const char *line, const shx_envlist *funcs)
{
    shx_buf b = SHX_BUF_INIT;
    shx_buf_append(&b, cmd, len);
    shx_buf_putc(&b, '\n');
    shx_buf_puts(&b, line);
    int inert = b.failed ? 0 : shx_inert_command(b.data, b.len, funcs);
    shx_buf_free(&b);
    return inert;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    const char *split = memchr(in, 0xff, size);
    const char *cmd = split ? split + 1 : in;
    size_t len = split ? size - (size_t)(cmd - in) : size;
    shx_envlist funcs = SHX_ENVLIST_INIT;
    int known = split ? shx_func_names(&funcs, in, (size_t)(split - in)) == 0 : 1;
    if (!known)
        goto out;
    if (!shx_inert_command(cmd, len, &funcs))
        goto out;
    /* a comment may hold anything but a NUL: bash reads none of it */
    if (!memchr(cmd, '#', len))
        for (size_t i = 0; i < len; i++)
            if (strchr("$`\\(){}", cmd[i]) || cmd[i] == '\0')
                __builtin_trap();
    if (inert_after(cmd, len, "export A=1", &funcs))
        __builtin_trap();
    for (size_t i = 0; i < funcs.n; i++) {
        const char *f = funcs.names[i];
        if (strpbrk(f, " \t\n;&|<>'\"#$`\\(){}[*?~") || f[0] == '\0')
            continue; /* not one plain word: it could not be called as written */
        if (inert_after(cmd, len, f, &funcs))
            __builtin_trap();
    }
out:
    shx_envlist_free(&funcs);
    return 0;
}
