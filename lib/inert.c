/*
 * inert.c - which commands cannot change the shell's state (see inert.h).
 *
 * A session that keeps the shell's state has bash list its variables and
 * functions after each command; for a command that cannot change them
 * (`ls`, `git status`, `make`) the listing would give the state it already
 * holds. The test is lexical and one-sided: a command it calls inert must
 * hold none of bash's ways to set a variable or define a function, so it
 * refuses whatever it does not read exactly. Calling a command inert by
 * mistake would lose a change; refusing one only costs the listing.
 *
 * The ways it shuts out: expansions ($, `), which assign (${v:=x},
 * $((v++))) or produce any word; a backslash, which joins lines and words;
 * parentheses and braces: subshells and arithmetic ((v++)), function
 * definitions, {fd}> redirections that assign fd; a bracket anywhere but a
 * `[` word of its own, since `[ -v 'a[i++]' ]` and [[ i++ -eq 0 ]]
 * evaluate; unquoted * and ?, and ~ at a word's start, which can turn a
 * word into a builtin's name; a word that starts as an assignment (NAME=,
 * NAME+=); and a word that, quotes removed, is a builtin or keyword that
 * sets variables, runs text as code, or changes directory (OLDPWD can be
 * exported), or a function the session keeps (it can do all of these).
 * Every word counts, not only a command's first: `command export`, `time
 * read` are caught without knowing bash's grammar.
 */
#include "inert.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "shexec.h"

/* Sorted for bsearch. */
static const char *const state_words[] = {
    ".",       "alias",    "bind",     "builtin",   "caller",   "cd",      "chdir",  "command",
    "compgen", "complete", "coproc",   "declare",   "enable",   "eval",    "exec",
    "export",  "fc",       "for",      "function",  "getopts",  "hash",    "history",
    "jobs",    "let",      "local",    "mapfile",   "popd",     "printf",  "pushd",
    "read",    "readarray", "readonly", "select",   "set",      "shift",   "shopt",
    "source",  "trap",     "typeset",  "unalias",   "unset",    "wait",
};
#define STATE_WORD_MAX 10 /* the longest, with room for its NUL */

static int cmp_word(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

static int is_state_word(const char *w, size_t n)
{
    char key[STATE_WORD_MAX];
    if (n == 0 || n >= sizeof key)
        return 0;
    memcpy(key, w, n);
    key[n] = '\0';
    return bsearch(key, state_words, sizeof state_words / sizeof *state_words,
                   sizeof *state_words, cmp_word) != NULL;
}

/* Ends a word where it stands unquoted. */
static int separates(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
           c == '>';
}

/* Shuts the command out wherever it stands, quoted or not. */
static int refused(char c)
{
    return c == '$' || c == '`' || c == '\\' || c == '(' || c == ')' || c == '{' || c == '}' ||
           c == '[' || c == '\0';
}

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The word at p (n bytes left) starts as an assignment: NAME= or NAME+=. */
static int starts_assignment(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && name_char(p[i]))
        i++;
    if (i == 0 || i == n)
        return 0;
    return p[i] == '=' || (p[i] == '+' && i + 1 < n && p[i + 1] == '=');
}

/*
 * Read the word at cmd[*at] into word, quotes removed; *at moves past it.
 * 1 when nothing in it is refused, 0 otherwise.
 */
static int read_word(const char *cmd, size_t len, size_t *at, shx_buf *word)
{
    size_t i = *at;
    char quote = 0;
    shx_buf_clear(word);
    if (cmd[i] == '[' && (i + 1 == len || separates(cmd[i + 1]))) {
        *at = i + 1; /* the `[` command: its arguments are words of their own */
        return shx_buf_putc(word, '[') == 0;
    }
    if (cmd[i] == '~' || starts_assignment(cmd + i, len - i))
        return 0;
    for (; i < len; i++) {
        char c = cmd[i];
        if (refused(c))
            return 0;
        if (quote) {
            if (c == quote)
                quote = 0;
            else
                shx_buf_putc(word, c);
            continue;
        }
        if (c == '\'' || c == '"') {
            quote = c;
            continue;
        }
        if (separates(c))
            break;
        if (c == '*' || c == '?')
            return 0; /* a pattern */
        shx_buf_putc(word, c);
    }
    *at = i;
    return !quote && !word->failed;
}

int shx_inert_command(const char *cmd, size_t len, const shx_envlist *funcs)
{
    shx_buf word = SHX_BUF_INIT;
    const char *value;
    int inert = 1;
    size_t i = 0;
    while (inert && i < len) {
        if (separates(cmd[i])) {
            i++;
            continue;
        }
        if (cmd[i] == '#') {
            /* a comment: to the line's end, read by bash as nothing */
            while (i < len && cmd[i] != '\n') {
                if (cmd[i] == '\0')
                    inert = 0;
                i++;
            }
            continue;
        }
        /* a word refused as it is spelled, or for what it names */
        inert = read_word(cmd, len, &i, &word) &&
                !(word.len && (is_state_word(word.data, word.len) ||
                               (funcs && shx_envlist_find(funcs, word.data, word.len, &value))));
    }
    shx_buf_free(&word);
    return inert;
}

/* The name a header line declares ("NAME () " or "function NAME () "), or
 * 0 when the line is no header. */
static size_t header_name(const char *line, size_t n, const char **name)
{
    static const char tail[] = " () ", kw[] = "function ";
    size_t tl = sizeof tail - 1, kl = sizeof kw - 1;
    if (n <= tl || memcmp(line + n - tl, tail, tl) != 0 || line[0] == ' ' || line[0] == '\t')
        return 0;
    n -= tl;
    if (n > kl && memcmp(line, kw, kl) == 0) {
        line += kl;
        n -= kl;
    }
    *name = line;
    return n;
}

int shx_func_names(shx_envlist *names, const char *listing, size_t len)
{
    shx_buf name = SHX_BUF_INIT;
    int rc = 0;
    size_t at = 0;
    while (rc == 0 && at < len) {
        const char *line = listing + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t n = nl ? (size_t)(nl - line) : len - at;
        at += n + 1;
        const char *p;
        size_t pn = header_name(line, n, &p);
        if (pn == 0)
            continue;
        shx_buf_clear(&name);
        if (shx_buf_append(&name, p, pn) != 0 || memchr(p, '\0', pn) ||
            shx_envlist_set(names, name.data, "") != SHEXEC_OK)
            rc = -1;
    }
    shx_buf_free(&name);
    return rc;
}
