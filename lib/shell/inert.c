/*
 * inert.c - whether a command's text can move its shell (inert.h): four
 * linear passes over the text, each saying "not inert" as soon as it can.
 */
#include "shell/inert.h"

#include <string.h>

/* Names that change the shell's directory, or run text as commands in it */
static const char *const moving_names[] = {
    "cd",       "chdir",     "pushd",    "popd",    "source", "eval",         "exec",
    "command",  "builtin",   "trap",     "enable",  "alias",  "fc",           "mapfile",
    "readarray", "complete", "compgen",  "bind",    "BASH_ALIASES", "BASH_CMDS", NULL};
#define NAME_MAX_LEN 16

/* Names that set the shell's variables (or, in bash, list them under
 * other names): what a session that keeps the state would have to read */
static const char *const setting_names[] = {
    "export", "unset",  "readonly", "read",  "getopts", "set",    "shopt", "local",  "declare",
    "typeset", "let",   "printf",   "for",   "select",  "shift",  "wait",  "coproc", "test",
    NULL};

/* Reserved words (and `!`) after which the next word is a command */
static const char *const command_before[] = {"if",    "then", "else", "elif", "do",
                                             "while", "until", "time", "!",   NULL};

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int is_quote(char c)
{
    return c == '\'' || c == '"';
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* an operator character: it ends a word, and a simple command at ; & | and newline */
static int is_operator(char c)
{
    return c == ';' || c == '&' || c == '|' || c == '<' || c == '>' || c == '\n';
}

static int in_list(const char *const *list, const char *word, size_t n)
{
    for (; *list; list++)
        if (strlen(*list) == n && memcmp(*list, word, n) == 0)
            return 1;
    return 0;
}

/* Pass 1: no expansion the check cannot follow (patterns: pass 4), quotes
 * closed. */
static int plain_characters(const char *s, size_t n)
{
    char quote = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '$' || c == '`' || c == '\\' || c == '\0')
            return 0;
        if (quote) {
            if (c == quote)
                quote = 0;
        } else if (is_quote(c)) {
            quote = c;
        } else if (c == '(' || c == ')') {
            return 0;
        }
    }
    return quote == 0;
}

/* A name run, as far as it is kept: past NAME_MAX_LEN it matches nothing. */
typedef struct {
    char text[NAME_MAX_LEN];
    size_t len;
} name_run;

static int run_ends_listed(name_run *r, const char *const *names)
{
    int listed = r->len > 0 && r->len <= NAME_MAX_LEN && in_list(names, r->text, r->len);
    r->len = 0;
    return listed;
}

static void run_add(name_run *r, char c)
{
    if (r->len < NAME_MAX_LEN)
        r->text[r->len] = c;
    if (r->len <= NAME_MAX_LEN)
        r->len++;
}

/* Pass 2: no name of the list, read with quotes taken out and with quotes
 * as boundaries. */
static int no_name_of(const char *s, size_t n, const char *const *names)
{
    name_run joined = {{0}, 0}, split = {{0}, 0};
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (is_name_char(c)) {
            run_add(&joined, c);
            run_add(&split, c);
            continue;
        }
        if (run_ends_listed(&split, names))
            return 0;
        if (!is_quote(c) && run_ends_listed(&joined, names))
            return 0;
    }
    return !run_ends_listed(&split, names) && !run_ends_listed(&joined, names);
}

/* The character next to i, quotes skipped (step -1 or 1); 0 past either end. */
static char neighbour(const char *s, size_t n, size_t i, int step)
{
    for (size_t j = i;;) {
        if (step < 0 ? j == 0 : j + 1 >= n)
            return 0;
        j = step < 0 ? j - 1 : j + 1;
        if (!is_quote(s[j]))
            return s[j];
    }
}

static int ends_word(char c)
{
    return c == 0 || is_blank(c) || is_operator(c);
}

/* A word as pass 3 reads it, quotes taken out. */
typedef struct {
    const char *raw;  /* where it starts in the text */
    size_t len;       /* its length there, quotes included */
    char first;       /* its first character that is not a quote; 0: none yet */
    size_t chars;     /* characters that are not quotes */
    int quoted;       /* it holds a quote */
    int assigns;      /* it holds a '=' */
    int target;       /* it follows a redirection operator: its file */
} word;

/* May the word `.` that follows prev (NULL: it is the first of its simple
 * command) be an argument, never the dot builtin? Only after a word that
 * is no option, assignment, reserved word (unquoted) or redirection's file. */
static int dot_follows_argument(const word *prev)
{
    if (!prev || prev->target || prev->first == '-' || prev->assigns)
        return 0;
    return prev->quoted || !in_list(command_before, prev->raw, prev->len);
}

/* Pass 3: no `.` that may be the dot builtin. A `.` standing alone inside
 * quotes (text a later eval could run) is refused too. */
static int no_dot_command(const char *s, size_t n)
{
    char quote = 0;
    word cur = {0}, prev = {0};
    int have_prev = 0, redirected = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = '\0';
        if (i < n)
            c = s[i];
        if (!quote && ends_word(c)) {
            if (cur.raw) { /* a word ends here */
                if (cur.chars == 1 && cur.first == '.' &&
                    (cur.quoted || !dot_follows_argument(have_prev ? &prev : NULL)))
                    return 0;
                prev = cur;
                have_prev = 1;
                cur = (word){0};
            }
            if (c == '<' || c == '>') {
                redirected = 1;
                prev.target = have_prev = 1; /* no word after it is a command's argument */
            } else if (is_operator(c)) {
                have_prev = 0;
            }
            continue;
        }
        if (!cur.raw) {
            cur = (word){.raw = s + i, .target = redirected};
            redirected = 0;
        }
        cur.len = (size_t)(s + i + 1 - cur.raw);
        if (quote ? c == quote : is_quote(c)) {
            if (quote)
                quote = '\0';
            else
                quote = c;
            cur.quoted = 1;
            continue;
        }
        if (quote && c == '.' && ends_word(neighbour(s, n, i, -1)) &&
            ends_word(neighbour(s, n, i, 1)))
            return 0;
        if (!cur.first)
            cur.first = c;
        cur.chars++;
        cur.assigns |= c == '=';
    }
    return 1;
}

static int is_pattern_char(char c)
{
    return c == '*' || c == '?' || c == '[' || c == '{' || c == '}';
}

/*
 * Pass 4: a pattern (`*`, `?`, `[`, braces, outside quotes) only among the
 * arguments of a plain command word. Pathname and brace expansion can make
 * any word, `cd` too, from the files there: harmless as an argument, never
 * as the command. So every simple command (between `;`, `&`, `|` and
 * newlines) whose words hold a pattern must start with a word that holds
 * none, is no reserved word (after which the next word is a command, as
 * after `time -p`), no assignment, and is not led by a redirection (`2>f
 * *` runs `*`: its `2` is no command word).
 */
static int no_pattern_command(const char *s, size_t n)
{
    char quote = 0;
    int words = 0;         /* words of this simple command so far */
    int plain_command = 0; /* its first word is a plain command word */
    int in_word = 0, pattern = 0, assigns = 0, quoted = 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = '\0';
        if (i < n)
            c = s[i];
        if (quote || (i < n && !ends_word(c))) {
            if (!in_word) {
                in_word = 1;
                start = i;
                pattern = assigns = quoted = 0;
            }
            if (quote && c == quote) {
                quote = '\0';
            } else if (!quote && is_quote(c)) {
                quote = c;
                quoted = 1;
            } else if (!quote) {
                pattern |= is_pattern_char(c);
                assigns |= c == '=';
            }
            continue;
        }
        if (in_word) { /* the word s[start, i) ends */
            in_word = 0;
            if (words == 0) {
                if (pattern)
                    return 0;
                plain_command = !assigns && c != '<' && c != '>' &&
                                (quoted || !in_list(command_before, s + start, i - start));
            } else if (pattern && !plain_command) {
                return 0;
            }
            words++;
        }
        if (c == '<' || c == '>') {
            if (words == 0) { /* led by a redirection */
                plain_command = 0;
                words = 1;
            }
        } else if (is_operator(c)) {
            words = 0;
        }
    }
    return 1;
}

int shx_inert_command(const char *cmd, size_t len)
{
    return cmd && plain_characters(cmd, len) && no_name_of(cmd, len, moving_names) &&
           no_dot_command(cmd, len) && no_pattern_command(cmd, len);
}

/* No assignment, nor anything that could be one: no '=' outside quotes,
 * no `}` outside quotes before a redirection (`{fd}>f` sets fd), and no
 * `[` at all (a subscript is arithmetic: `test -v 'a[y=1]'` sets y). */
static int no_bare_assignment(const char *s, size_t n)
{
    char quote = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '[')
            return 0;
        if (quote == s[i])
            quote = '\0';
        else if (!quote && is_quote(s[i]))
            quote = s[i];
        else if (!quote && (s[i] == '=' || (s[i] == '}' && i + 1 < n &&
                                            (s[i + 1] == '<' || s[i + 1] == '>'))))
            return 0;
    }
    return 1;
}

int shx_inert_stateless(const char *cmd, size_t len)
{
    return shx_inert_command(cmd, len) && no_bare_assignment(cmd, len) &&
           no_name_of(cmd, len, setting_names);
}
