/*
 * shstate.c - the parser for a shell's listing of its variables (see
 * shstate.h): `declare -p` from bash, `export -p` from a POSIX shell.
 */
#include "shell/shstate.h"

#include <string.h>

#include "shx/env.h"

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The body of $'...' from *p (past the opening quote) to its closing quote,
 * decoded into b. 0, SHX_DECL_MALFORMED (unterminated, or a NUL byte),
 * SHX_DECL_NOMEM. */
static int ansi_c(const char *t, size_t end, size_t *p, shx_buf *b)
{
    size_t i = *p;
    while (i < end && t[i] != '\'') {
        if (t[i] != '\\' || i + 1 >= end) {
            if (shx_buf_putc(b, t[i++]) != 0)
                return SHX_DECL_NOMEM;
            continue;
        }
        char e = t[i + 1];
        i += 2;
        unsigned long v = 0;
        int byte = -1, nd = 0, cp = 0;
        switch (e) {
        case 'a': byte = 7; break;
        case 'b': byte = 8; break;
        case 'e': case 'E': byte = 27; break;
        case 'f': byte = 12; break;
        case 'n': byte = 10; break;
        case 'r': byte = 13; break;
        case 't': byte = 9; break;
        case 'v': byte = 11; break;
        case '\\': case '\'': case '"': case '?': byte = (unsigned char)e; break;
        case 'c':
            if (i >= end)
                return SHX_DECL_MALFORMED;
            byte = t[i++] & 0x1f;
            break;
        case 'x': case 'u': case 'U': {
            int max = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            while (nd < max && i < end && hexval(t[i]) >= 0)
                v = v * 16 + (unsigned long)hexval(t[i++]), nd++;
            if (nd == 0) { /* not an escape: the text as it is */
                if (shx_buf_putc(b, '\\') != 0 || shx_buf_putc(b, e) != 0)
                    return SHX_DECL_NOMEM;
                continue;
            }
            if (e == 'x')
                byte = (int)v;
            else
                cp = 1;
            break;
        }
        default:
            if (e >= '0' && e <= '7') {
                v = (unsigned long)(e - '0');
                for (nd = 1; nd < 3 && i < end && t[i] >= '0' && t[i] <= '7'; nd++)
                    v = v * 8 + (unsigned long)(t[i++] - '0');
                byte = (int)(v & 0xff);
                break;
            }
            if (shx_buf_putc(b, '\\') != 0 || shx_buf_putc(b, e) != 0)
                return SHX_DECL_NOMEM;
            continue;
        }
        if (cp) {
            if (v == 0 || v > 0x10ffff)
                return SHX_DECL_MALFORMED;
            if (shx_buf_put_utf8(b, (uint32_t)v) != 0)
                return SHX_DECL_NOMEM;
            continue;
        }
        if (byte == 0)
            return SHX_DECL_MALFORMED; /* a value cannot hold a NUL byte */
        if (shx_buf_putc(b, (char)byte) != 0)
            return SHX_DECL_NOMEM;
    }
    if (i >= end)
        return SHX_DECL_MALFORMED;
    *p = i + 1;
    return SHX_DECL_OK;
}

/* The body of "..." from *p (past the opening quote), decoded into b. */
static int double_quoted(const char *t, size_t end, size_t *p, shx_buf *b)
{
    size_t i = *p;
    while (i < end && t[i] != '"') {
        size_t run = i; /* plain bytes go over in one piece */
        while (run < end && t[run] != '"' && t[run] != '\\')
            run++;
        if (run > i) {
            if (shx_buf_append(b, t + i, run - i) != 0)
                return SHX_DECL_NOMEM;
            i = run;
            continue;
        }
        if (t[i] == '\\' && i + 1 < end) {
            char e = t[i + 1];
            if (e == '\n') { /* a line continuation */
                i += 2;
                continue;
            }
            if (e == '$' || e == '`' || e == '"' || e == '\\') {
                if (shx_buf_putc(b, e) != 0)
                    return SHX_DECL_NOMEM;
                i += 2;
                continue;
            }
        }
        if (shx_buf_putc(b, t[i++]) != 0)
            return SHX_DECL_NOMEM;
    }
    if (i >= end)
        return SHX_DECL_MALFORMED;
    *p = i + 1;
    return SHX_DECL_OK;
}

/* A scalar WORD from *p to the end of its line, decoded into b; *p is left
 * on the newline (or at end). */
static int scalar_word(const char *t, size_t end, size_t *p, shx_buf *b)
{
    size_t i = *p;
    int rc = SHX_DECL_OK;
    while (i < end && t[i] != '\n' && rc == SHX_DECL_OK) {
        char c = t[i];
        if (c == '\'') {
            const char *q = memchr(t + i + 1, '\'', end - i - 1);
            if (!q)
                return SHX_DECL_MALFORMED;
            if (shx_buf_append(b, t + i + 1, (size_t)(q - t) - i - 1) != 0)
                return SHX_DECL_NOMEM;
            i = (size_t)(q - t) + 1;
        } else if (c == '$' && i + 1 < end && t[i + 1] == '\'') {
            i += 2;
            rc = ansi_c(t, end, &i, b);
        } else if (c == '"') {
            i++;
            rc = double_quoted(t, end, &i, b);
        } else if (c == '\\') {
            if (i + 1 >= end)
                return SHX_DECL_MALFORMED;
            if (t[i + 1] != '\n' && shx_buf_putc(b, t[i + 1]) != 0)
                return SHX_DECL_NOMEM;
            i += 2;
        } else if (c == ' ' || c == '\t' || c == ';' || c == '&' || c == '|' || c == '<' ||
                   c == '>' || c == '(' || c == ')' || c == '`' || c == '$') {
            /* a shell would not take this as one literal word */
            return SHX_DECL_MALFORMED;
        } else {
            if (shx_buf_putc(b, c) != 0)
                return SHX_DECL_NOMEM;
            i++;
        }
    }
    *p = i;
    return rc;
}

/* An array's "(...)" WORD: skipped to the end of its line, quotes followed
 * so that a newline inside one does not end it. */
static int array_word(const char *t, size_t end, size_t *p, shx_buf *scratch)
{
    size_t i = *p;
    while (i < end && t[i] != '\n') {
        char c = t[i];
        int rc = SHX_DECL_OK;
        if (c == '\'') {
            const char *q = memchr(t + i + 1, '\'', end - i - 1);
            if (!q)
                return SHX_DECL_MALFORMED;
            i = (size_t)(q - t) + 1;
        } else if (c == '$' && i + 1 < end && t[i + 1] == '\'') {
            i += 2;
            rc = ansi_c(t, end, &i, scratch);
        } else if (c == '"') {
            i++;
            rc = double_quoted(t, end, &i, scratch);
        } else if (c == '\\') {
            i += 2;
        } else {
            i++;
        }
        if (rc != SHX_DECL_OK)
            return rc;
    }
    if (i > end)
        return SHX_DECL_MALFORMED;
    *p = i;
    return SHX_DECL_OK;
}

static int is_keyword(const char *w, size_t n, int *exported, int *readonly)
{
    if (n == 7 && memcmp(w, "declare", 7) == 0)
        return 1;
    if (n == 7 && memcmp(w, "typeset", 7) == 0)
        return 1;
    if (n == 6 && memcmp(w, "export", 6) == 0) {
        *exported = 1;
        return 1;
    }
    if (n == 8 && memcmp(w, "readonly", 8) == 0) {
        *readonly = 1;
        return 1;
    }
    return 0;
}

/* One declaration starting at *p; *p is left past its newline. */
static int one_decl(const char *t, size_t end, size_t *p, shx_buf *scratch, shx_decl *d)
{
    size_t i = *p;
    memset(d, 0, sizeof *d);
    d->text = t + i;
    size_t w = i;
    while (i < end && t[i] != ' ' && t[i] != '\n')
        i++;
    if (!is_keyword(t + w, i - w, &d->exported, &d->readonly))
        return SHX_DECL_MALFORMED;
    for (;;) {
        if (i >= end || t[i] != ' ')
            return SHX_DECL_MALFORMED;
        i++;
        if (i < end && t[i] == '-') {
            size_t f = i;
            while (i < end && t[i] != ' ' && t[i] != '\n')
                i++;
            for (size_t k = f + 1; k < i; k++) {
                char c = t[k];
                if (c == 'x')
                    d->exported = 1;
                else if (c == 'r')
                    d->readonly = 1;
                else if (c == 'a' || c == 'A')
                    d->array = 1;
                else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-'))
                    return SHX_DECL_MALFORMED;
                if (c == 'A')
                    d->assoc = 1;
                else if (c == 'i')
                    d->integer = 1;
                else if (c == 'n')
                    d->nameref = 1;
                else if (c == 'l')
                    d->lower = 1;
                else if (c == 'u')
                    d->upper = 1;
                else if (c != 'x' && c != 'r' && c != 'a' && c != '-')
                    d->other_flags = 1;
            }
            continue;
        }
        break;
    }
    size_t n = i;
    while (n < end && t[n] != '=' && t[n] != '\n')
        n++;
    if (!shx_env_name_is_identifier(t + i, n - i))
        return SHX_DECL_MALFORMED;
    d->name = t + i;
    d->name_len = n - i;
    i = n;
    shx_buf_clear(scratch);
    if (i < end && t[i] == '=') {
        d->has_value = 1;
        i++;
        int rc;
        if (d->array || (i < end && t[i] == '(')) {
            d->array = 1;
            size_t from = i;
            rc = array_word(t, end, &i, scratch);
            d->array_text = t + from;
            d->array_len = i - from;
        } else {
            rc = scalar_word(t, end, &i, scratch);
            if (rc == SHX_DECL_OK && shx_buf_putc(scratch, '\0') == 0) {
                d->value = scratch->data;
                d->value_len = scratch->len - 1;
                scratch->len--;
            } else if (rc == SHX_DECL_OK) {
                rc = SHX_DECL_NOMEM;
            }
        }
        if (rc != SHX_DECL_OK)
            return rc;
    }
    if (i < end && t[i] != '\n')
        return SHX_DECL_MALFORMED;
    d->text_len = (size_t)(t + i - d->text);
    *p = i < end ? i + 1 : i;
    return SHX_DECL_OK;
}

int shx_decl_each(const char *text, size_t len, shx_buf *scratch, shx_decl_fn fn, void *user,
                  size_t *bad_at)
{
    if (len && memchr(text, '\0', len)) {
        if (bad_at)
            *bad_at = (size_t)((const char *)memchr(text, '\0', len) - text);
        return SHX_DECL_MALFORMED;
    }
    size_t p = 0;
    while (p < len) {
        shx_decl d;
        size_t at = p;
        int rc = one_decl(text, len, &p, scratch, &d);
        if (rc == SHX_DECL_MALFORMED && bad_at)
            *bad_at = at;
        if (rc != SHX_DECL_OK)
            return rc;
        rc = fn(user, &d);
        if (rc != 0)
            return rc;
    }
    return SHX_DECL_OK;
}

int shx_ansi_c_quote(shx_buf *out, const char *s, size_t n)
{
    if (shx_buf_puts(out, "$'") != 0)
        return -1;
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        const char *esc = s[i] == '\\' ? "\\\\" : s[i] == '\'' ? "\\'" : s[i] == '\n' ? "\\n" : NULL;
        if (!esc)
            continue;
        if (shx_buf_append(out, s + from, i - from) != 0 || shx_buf_puts(out, esc) != 0)
            return -1;
        from = i + 1;
    }
    if (shx_buf_append(out, s + from, n - from) != 0 || shx_buf_putc(out, '\'') != 0)
        return -1;
    return 0;
}

/* ---- array elements ------------------------------------------------------ */

/* One word of an array element (a subscript or a value) from *p, decoded
 * into b, up to an unquoted byte of stop; *p is left on it. Bash quotes
 * what needs it; a byte a shell would read as syntax is refused. */
static int elem_word(const char *t, size_t end, size_t *p, shx_buf *b, const char *stop)
{
    size_t i = *p;
    while (i < end && (t[i] == '\0' || !strchr(stop, t[i]))) {
        char c = t[i];
        int rc = SHX_DECL_OK;
        if (c == '\'') {
            const char *q = memchr(t + i + 1, '\'', end - i - 1);
            if (!q)
                return SHX_DECL_MALFORMED;
            if (shx_buf_append(b, t + i + 1, (size_t)(q - t) - i - 1) != 0)
                return SHX_DECL_NOMEM;
            i = (size_t)(q - t) + 1;
        } else if (c == '$' && i + 1 < end && t[i + 1] == '\'') {
            i += 2;
            rc = ansi_c(t, end, &i, b);
        } else if (c == '"') {
            i++;
            rc = double_quoted(t, end, &i, b);
        } else if (c == '\\') {
            if (i + 1 >= end || t[i + 1] == '\n')
                return SHX_DECL_MALFORMED;
            if (shx_buf_putc(b, t[i + 1]) != 0)
                return SHX_DECL_NOMEM;
            i += 2;
        } else if (c == '\0' || strchr(" \t\n;&|<>()`$[]", c)) {
            return SHX_DECL_MALFORMED;
        } else {
            if (shx_buf_putc(b, c) != 0)
                return SHX_DECL_NOMEM;
            i++;
        }
        if (rc != SHX_DECL_OK)
            return rc;
    }
    if (i >= end)
        return SHX_DECL_MALFORMED;
    *p = i;
    return SHX_DECL_OK;
}

int shx_array_each(const char *t, size_t len, shx_buf *key, shx_buf *val, shx_elem_fn fn,
                   void *user)
{
    if (len < 2 || t[0] != '(' || t[len - 1] != ')')
        return SHX_DECL_MALFORMED;
    size_t i = 1, end = len - 1;
    for (;;) {
        while (i < end && t[i] == ' ')
            i++;
        if (i == end)
            return SHX_DECL_OK;
        if (t[i] != '[')
            return SHX_DECL_MALFORMED;
        i++;
        shx_buf_clear(key);
        shx_buf_clear(val);
        int rc = elem_word(t, end, &i, key, "]");
        if (rc != SHX_DECL_OK)
            return rc;
        if (i + 1 >= end || t[i] != ']' || t[i + 1] != '=')
            return SHX_DECL_MALFORMED;
        i += 2;
        /* the value runs to a space or the closing parenthesis */
        rc = elem_word(t, len, &i, val, " )");
        if (rc != SHX_DECL_OK)
            return rc;
        if (i > end)
            return SHX_DECL_MALFORMED;
        if (shx_buf_putc(key, '\0') != 0 || shx_buf_putc(val, '\0') != 0)
            return SHX_DECL_NOMEM;
        key->len--;
        val->len--;
        rc = fn(user, key->data, key->len, val->data, val->len);
        if (rc != 0)
            return rc;
    }
}
