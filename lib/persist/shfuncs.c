/*
 * shfuncs.c - bash's listing of its functions (`declare -f`), taken apart
 * (see shfuncs.h). Pure: text in, one function at a time out.
 */
#include "persist/shfuncs.h"

#include <string.h>

#include "shell/shstate.h"

/* The line at t (n bytes, no newline) is bash's header of a function,
 * "NAME () ": *name_len set. */
static int func_header(const char *t, size_t n, size_t *name_len)
{
    if (n < 5 || memcmp(t + n - 4, " () ", 4) != 0)
        return 0;
    size_t k = n - 4;
    for (size_t i = 0; i < k; i++)
        if (t[i] == ' ' || t[i] == '\t' || t[i] == '(' || t[i] == ')' || t[i] == '\0')
            return 0;
    *name_len = k;
    return 1;
}

/* The line at *p (len bytes in all): its length, and *next past its newline. */
static size_t line_at(const char *t, size_t len, size_t p, size_t *next)
{
    const char *nl = memchr(t + p, '\n', len - p);
    size_t e = nl ? (size_t)(nl - t) : len;
    *next = nl ? e + 1 : len;
    return e - p;
}

int shx_funcs_each(const char *t, size_t len, shx_func_fn fn, void *user)
{
    const char *name = NULL;
    size_t name_len = 0, body = 0, p = 0, body_end = 0;
    while (p < len) {
        size_t next, n = line_at(t, len, p, &next), nl2, after;
        /* a header is "NAME () " followed by a line "{ " */
        if (func_header(t + p, n, &nl2) && next < len &&
            line_at(t, len, next, &after) == 2 && memcmp(t + next, "{ ", 2) == 0) {
            if (name) {
                int rc = fn(user, name, name_len, t + body, body_end - body);
                if (rc != 0)
                    return rc;
            } else if (p != 0) {
                return SHX_DECL_MALFORMED; /* text before the first function */
            }
            name = t + p;
            name_len = nl2;
            body = next;
            body_end = next + 2;
            p = after;
            continue;
        }
        if (!name)
            return SHX_DECL_MALFORMED;
        body_end = p + n;
        p = next;
    }
    if (name)
        return fn(user, name, name_len, t + body, body_end - body);
    return SHX_DECL_OK;
}

int shx_func_needs_extglob(const char *t, size_t len)
{
    int cond = 0, arith = 0; /* inside [[ ]], inside (( )) */
    for (size_t i = 0; i < len; i++) {
        char c = t[i];
        if (c == '\\') {
            i++;
        } else if (c == '\'') {
            const char *q = memchr(t + i + 1, '\'', len - i - 1);
            if (!q)
                return 0;
            i = (size_t)(q - t);
        } else if (c == '"') {
            for (i++; i < len && t[i] != '"'; i++)
                if (t[i] == '\\')
                    i++;
        } else if (c == '[' && i + 1 < len && t[i + 1] == '[') {
            cond++;
            i++;
        } else if (c == ']' && i + 1 < len && t[i + 1] == ']' && cond > 0) {
            cond--;
            i++;
        } else if (c == '(' && i + 1 < len && t[i + 1] == '(') {
            arith++;
            i++;
        } else if (c == ')' && i + 1 < len && t[i + 1] == ')' && arith > 0) {
            arith--;
            i++;
        } else if ((c == '?' || c == '*' || c == '+' || c == '@' || c == '!') && i + 1 < len &&
                   t[i + 1] == '(' && !cond && !arith && !(i > 0 && t[i - 1] == '$')) {
            return 1;
        }
    }
    return 0;
}
