/*
 * replay.c - the shell state a session keeps, in the library's own words
 * (see replay.h).
 */
#include "persist/replay.h"
#include "persist/shfuncs.h"
#include "shx/env.h"

#include <stdlib.h>
#include <string.h>

/* Builtins and keywords of bash and dash that are names a function could
 * take (sorted for bsearch). A function of such a name would run instead
 * of the builtin, in the library's prelude and report as in the command. */
static const char *const reserved[] = {
    "alias",   "bg",       "bind",     "break",   "builtin", "caller",   "case",    "cd",
    "chdir",   "command",  "compgen",  "complete", "compopt", "continue", "coproc",  "declare",
    "dirs",    "disown",   "do",       "done",    "echo",    "elif",     "else",    "enable",
    "esac",    "eval",     "exec",     "exit",    "export",  "false",    "fc",      "fg",
    "fi",      "for",      "function", "getopts", "hash",    "help",     "history", "if",
    "in",      "jobs",     "kill",     "let",     "local",   "logout",   "mapfile", "popd",
    "printf",  "pushd",    "pwd",      "read",    "readarray", "readonly", "return", "select",
    "set",     "shift",    "shopt",    "source",  "suspend", "test",     "then",    "time",
    "times",   "trap",     "true",     "type",    "typeset", "ulimit",   "umask",   "unalias",
    "unset",   "until",    "wait",     "while",
};

static int cmp_name(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

static int is_reserved(const char *name, size_t n)
{
    char key[16];
    if (n >= sizeof key)
        return 0;
    memcpy(key, name, n);
    key[n] = '\0';
    return bsearch(key, reserved, sizeof reserved / sizeof *reserved, sizeof *reserved,
                   cmp_name) != NULL;
}

/* -?[0-9]{1,19}: what bash lists for an integer variable. */
static int decimal(const char *v, size_t n)
{
    size_t i = n && v[0] == '-' ? 1 : 0;
    if (n - i == 0 || n - i > 19)
        return 0;
    for (; i < n; i++)
        if (v[i] < '0' || v[i] > '9')
            return 0;
    return 1;
}

typedef struct elems {
    shx_buf *out;
    int assoc, integer;
    const char *why;
} elems;

static int put_elem(void *user, const char *key, size_t kl, const char *val, size_t vl)
{
    elems *e = user;
    if (e->integer && !decimal(val, vl)) {
        e->why = "an integer array element that is not a decimal number";
        return 1;
    }
    if (e->assoc) {
        if (kl == 0) {
            e->why = "an empty subscript";
            return 1;
        }
        shx_buf_putc(e->out, '[');
        shx_ansi_c_quote(e->out, key, kl);
    } else {
        if (!decimal(key, kl) || key[0] == '-') {
            e->why = "an index that is not a decimal number";
            return 1;
        }
        shx_buf_putc(e->out, '[');
        shx_buf_append(e->out, key, kl);
    }
    shx_buf_puts(e->out, "]=");
    shx_ansi_c_quote(e->out, val, vl);
    shx_buf_putc(e->out, ' ');
    return 0;
}

int shx_replay_var(shx_buf *out, const shx_decl *d, const char **why)
{
    *why = NULL;
    if (d->readonly) {
        *why = "readonly";
        return SHX_REPLAY_SKIP;
    }
    if (d->nameref && (d->array || (d->value && !shx_env_name_is_identifier(d->value, d->value_len)))) {
        *why = "a reference to something other than a variable's name";
        return SHX_REPLAY_SKIP;
    }
    if (d->integer && !d->array && d->value && !decimal(d->value, d->value_len)) {
        *why = "an integer whose value is not a decimal number";
        return SHX_REPLAY_SKIP;
    }
    shx_buf line = SHX_BUF_INIT;
    /* declare itself, not `builtin declare`: only a declaration command
     * takes a compound (array) assignment; no kept function has its name */
    shx_buf_puts(&line, "declare ");
    char flags[8];
    size_t nf = 0;
    flags[nf++] = '-';
    if (d->assoc)
        flags[nf++] = 'A';
    else if (d->array)
        flags[nf++] = 'a';
    if (d->integer)
        flags[nf++] = 'i';
    if (d->lower)
        flags[nf++] = 'l';
    if (d->upper)
        flags[nf++] = 'u';
    if (d->nameref)
        flags[nf++] = 'n';
    if (nf > 1) {
        shx_buf_append(&line, flags, nf);
        shx_buf_putc(&line, ' ');
    }
    shx_buf_puts(&line, "-- ");
    shx_buf_append(&line, d->name, d->name_len);
    int rc = SHX_REPLAY_OK;
    if (d->array && d->array_text) {
        shx_buf_puts(&line, "=(");
        elems e = {.out = &line, .assoc = d->assoc, .integer = d->integer};
        shx_buf key = SHX_BUF_INIT, val = SHX_BUF_INIT;
        int arc = shx_array_each(d->array_text, d->array_len, &key, &val, put_elem, &e);
        shx_buf_free(&key);
        shx_buf_free(&val);
        if (arc == SHX_DECL_NOMEM) {
            rc = SHX_REPLAY_NOMEM;
        } else if (arc != SHX_DECL_OK) {
            *why = e.why ? e.why : "an array bash would not have listed";
            rc = SHX_REPLAY_SKIP;
        }
        if (line.len && line.data[line.len - 1] == ' ')
            line.len--;
        shx_buf_putc(&line, ')');
    } else if (d->value) {
        shx_buf_putc(&line, '=');
        shx_ansi_c_quote(&line, d->value, d->value_len);
    }
    shx_buf_putc(&line, '\n');
    if (rc == SHX_REPLAY_OK && line.failed)
        rc = SHX_REPLAY_NOMEM;
    if (rc == SHX_REPLAY_OK && shx_buf_append(out, line.data, line.len) != 0)
        rc = SHX_REPLAY_NOMEM;
    shx_buf_free(&line);
    return rc;
}

int shx_replay_func_name_ok(const char *name, size_t n, const char **why)
{
    *why = NULL;
    if (n == 0 || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
                    name[0] == '_')) {
        *why = "a name that does not start with a letter or '_'";
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == ':' || c == '-')) {
            *why = "a name with a character other than letters, digits, '_', '.', ':' and '-'";
            return 0;
        }
    }
    if (n >= 8 && memcmp(name, "__shexec", 8) == 0) {
        *why = "a name of the library's own";
        return 0;
    }
    if (is_reserved(name, n)) {
        *why = "the name of a shell builtin or keyword";
        return 0;
    }
    return 1;
}

int shx_replay_func_value(shx_buf *out, const char *body, size_t body_len, const char **why)
{
    *why = NULL;
    if (body_len < 3 || memcmp(body, "{ ", 2) != 0 || body[body_len - 1] != '}') {
        *why = "a body bash would not have listed";
        return SHX_REPLAY_SKIP;
    }
    if (memchr(body, '\0', body_len)) {
        *why = "a NUL byte";
        return SHX_REPLAY_SKIP;
    }
    if (body_len > SHX_REPLAY_FUNC_MAX) {
        *why = "larger than the environment can carry (120 KiB)";
        return SHX_REPLAY_SKIP;
    }
    if (shx_func_needs_extglob(body, body_len)) {
        *why = "it needs `shopt -s extglob` to be defined";
        return SHX_REPLAY_SKIP;
    }
    shx_buf_puts(out, "() ");
    shx_buf_append(out, body, body_len);
    return out->failed ? SHX_REPLAY_NOMEM : SHX_REPLAY_OK;
}

int shx_replay_func_env_name(shx_buf *out, const char *name)
{
    shx_buf_puts(out, "BASH_FUNC_");
    shx_buf_puts(out, name);
    shx_buf_puts(out, "%%");
    return out->failed ? -1 : 0;
}
