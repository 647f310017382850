/*
 * fuzz_inert.c - libFuzzer target for the check of whether a command's
 * text can move its shell (lib/shell/inert.c).
 *
 * Input: the command's text, as is. The check must never fault, and must
 * refuse what inert.h says it refuses, checked by a model written from the
 * header: a `$`, '`', '\' or NUL anywhere; an unterminated quote; a
 * parenthesis outside quotes; a pattern character in the text's first word
 * (before any quote); a moving name as a whole word with every quote taken
 * out, or with quotes as boundaries; a `.` standing alone at the start of
 * the text or right after `;`, `&`, `|` or a newline. Where it says inert,
 * the same text with any one of those added at its end is refused.
 * What the stateless check allows is inert, holds no `[` and no '=' outside
 * quotes, and is refused once an assignment, a `[`, a `{fd}>` redirection
 * or a setting name is added.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shell/inert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const moving[] = {"cd",       "chdir",    "pushd",   "popd",         "source",
                                     "eval",     "exec",     "command", "builtin",      "trap",
                                     "enable",   "alias",    "fc",      "mapfile",      "readarray",
                                     "complete", "compgen",  "bind",    "BASH_ALIASES", "BASH_CMDS",
                                     NULL};

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Does text (n bytes) hold a moving name as a whole word of name characters? */
static int has_moving_word(const char *t, size_t n)
{
    for (size_t i = 0; i < n;) {
        if (!name_char(t[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && name_char(t[j]))
            j++;
        for (const char *const *m = moving; *m; m++)
            if (strlen(*m) == j - i && memcmp(*m, t + i, j - i) == 0)
                return 1;
        i = j;
    }
    return 0;
}

/* What the header says is always refused. */
static int must_refuse(const char *t, size_t n)
{
    char quote = 0;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (c == '$' || c == '`' || c == '\\' || c == '\0')
            return 1;
        if (quote) {
            if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '(' || c == ')') {
            return 1;
        }
    }
    if (quote)
        return 1;
    /* a pattern in the text's first word, a command word */
    for (size_t i = 0; i < n && !strchr(" \t;&|<>\n", t[i]); i++)
        if (t[i] == '\'' || t[i] == '"')
            break;
        else if (strchr("*?[{}", t[i]))
            return 1;
    if (has_moving_word(t, n))
        return 1;
    char *joined = malloc(n + 1);
    if (!joined)
        abort();
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i] != '\'' && t[i] != '"')
            joined[k++] = t[i];
    int found = has_moving_word(joined, k);
    free(joined);
    if (found)
        return 1;
    /* a `.` word where a command starts */
    for (size_t i = 0; i < n; i++) {
        if (t[i] != '.' || (i + 1 < n && !strchr(" \t;&|<>\n", t[i + 1])))
            continue;
        size_t j = i;
        while (j > 0 && (t[j - 1] == ' ' || t[j - 1] == '\t'))
            j--;
        if (j == 0 || strchr(";&|\n", t[j - 1]))
            return 1;
    }
    return 0;
}

/* What the header says the stateless check refuses besides: a `[`
 * anywhere, a '=' outside quotes. */
static int stateless_must_refuse(const char *t, size_t n)
{
    char quote = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i] == '[')
            return 1;
        if (quote) {
            if (t[i] == quote)
                quote = 0;
        } else if (t[i] == '\'' || t[i] == '"') {
            quote = t[i];
        } else if (t[i] == '=') {
            return 1;
        }
    }
    return 0;
}

/* Abort unless check refuses t (size bytes) with each of the tails
 * (NULL-terminated) added at its end. */
static void refused_with_tails(int (*check)(const char *, size_t), const char *t, size_t size,
                               const char *const *tails)
{
    size_t longest = 0;
    for (const char *const *tail = tails; *tail; tail++)
        if (strlen(*tail) > longest)
            longest = strlen(*tail);
    char *more = malloc(size + longest);
    if (!more)
        abort();
    memcpy(more, t, size);
    for (const char *const *tail = tails; *tail; tail++) {
        size_t len = strlen(*tail);
        memcpy(more + size, *tail, len);
        if (check(more, size + len))
            abort();
    }
    free(more);
}

static void check_stateless(const char *t, size_t size, int inert)
{
    if (!shx_inert_stateless(t, size))
        return;
    if (!inert || stateless_must_refuse(t, size))
        abort();
    static const char *const tails[] = {";x=1", ";[", " {f}>g", ";test", ";wait", ";coproc", NULL};
    refused_with_tails(shx_inert_stateless, t, size, tails);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *t = (const char *)data;
    int inert = shx_inert_command(t, size);
    check_stateless(t, size, inert);
    if (inert && must_refuse(t, size))
        abort();
    if (inert) {
        static const char *const tails[] = {"$", "`", "\\", ";*", "(", ";cd", ";.", "'", NULL};
        refused_with_tails(shx_inert_command, t, size, tails);
    }
    return 0;
}
