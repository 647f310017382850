/*
 * persist.c - the session's shell state (see persist.h and, for the rules,
 * shexec_session_set_persist_env() in shexec.h).
 *
 * The state a run reports comes from inside the command, which can write
 * anything there: it is parsed whole (a listing that does not parse is not
 * taken), bounded (record.h), and filtered by name before anything of it
 * reaches the next command: the deny list, the wrapper's own names, and
 * the variables the shell keeps for itself.
 */
#if !defined(_GNU_SOURCE) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 700 /* realpath: the XSI part of POSIX */
#endif
#include "persist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inert.h"
#include "session.h"
#include "script.h"
#include "shstate.h"

extern char **environ;

_Static_assert(SHX_STATE_MAX + 0u == SHEXEC_MAX_PERSIST_BYTES,
               "the record's bound on the shell state is the documented one");

/* Variables bash sets or keeps up itself: never taken from a command's
 * shell (the next shell sets its own). Sorted for bsearch. */
static const char *const shell_own[] = {
    "BASH", "BASHOPTS", "BASHPID", "COLUMNS", "COMP_WORDBREAKS", "DIRSTACK", "EPOCHREALTIME",
    "EPOCHSECONDS", "EUID", "FUNCNAME", "GROUPS", "HISTCMD", "HISTFILE", "HISTFILESIZE",
    "HISTSIZE", "HOSTNAME", "HOSTTYPE", "IFS", "LINENO", "LINES", "MACHTYPE", "MAILCHECK",
    "OLDPWD", "OPTERR", "OPTIND", "OSTYPE", "PIPESTATUS", "PPID", "PS1", "PS2", "PS4", "PWD",
    "RANDOM", "SECONDS", "SHELL", "SHELLOPTS", "SHLVL", "SRANDOM", "TERM", "UID", "_",
};

static int cmp_name(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

/* A shell variable (not exported) that is the shell's own. */
static int shells_own(const char *name, size_t n)
{
    if (n >= 5 && memcmp(name, "BASH_", 5) == 0)
        return 1;
    char key[32];
    if (n >= sizeof key)
        return 0;
    memcpy(key, name, n);
    key[n] = '\0';
    return bsearch(key, shell_own, sizeof shell_own / sizeof *shell_own, sizeof *shell_own,
                   cmp_name) != NULL;
}

static int wrappers_own(const char *name, size_t n)
{
    return n >= 9 && memcmp(name, "__shexec_", 9) == 0;
}

/* SHLVL (each shell adds one) and _ (the shell's last argument) keep the
 * value the session had; PWD is always the session cwd. */
static int keeps_prior(const char *name, size_t n)
{
    return (n == 5 && memcmp(name, "SHLVL", 5) == 0) || (n == 1 && name[0] == '_');
}

static int is_pwd(const char *name, size_t n)
{
    return n == 3 && memcmp(name, "PWD", 3) == 0;
}


/* The session's shell, as its path resolves, is dash: a POSIX shell whose
 * ways to change its state inert.c knows (another one that lists by
 * `export -p`, zsh, ksh or busybox's sh, may have more). */
static int is_dash(const shexec_session *s)
{
    char *path = realpath(s->shell_path ? s->shell_path : s->default_shell, NULL);
    const char *base = path ? strrchr(path, '/') : NULL;
    int dash = base && strcmp(base, "/dash") == 0;
    free(path);
    return dash;
}

/* The value of name (n bytes) in a built environment, or NULL. */
static const char *env_value(char *const *env, const char *name, size_t n)
{
    if (!env)
        return NULL;
    for (; *env; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
            return *env + n + 1;
    return NULL;
}

typedef struct adopt_ctx {
    shexec_run *r;
    shx_envlist env, vars;
    shx_buf name;
    shx_namefilter filter; /* the session's deny and allow lists, compiled once */
    int from_decl; /* bash's declare -p: it lists shell variables too */
    int nomem;
} adopt_ctx;

static int set_n(adopt_ctx *c, shx_envlist *l, const char *name, size_t n, const char *value)
{
    shx_buf_clear(&c->name);
    if (shx_buf_append(&c->name, name, n) != 0 || shx_envlist_set(l, c->name.data, value) != SHEXEC_OK) {
        c->nomem = 1;
        return -1;
    }
    return 0;
}

static int take_decl(void *user, const shx_decl *d)
{
    adopt_ctx *c = user;
    if (wrappers_own(d->name, d->name_len))
        return 0;
    int den = shx_namefilter_drops(&c->filter, d->name, d->name_len);
    if (den < 0) {
        c->nomem = 1;
        return -1;
    }
    if (d->exported && !d->array) {
        if (!d->has_value || is_pwd(d->name, d->name_len) || den)
            return 0; /* exported but unset: nothing in the environment */
        if (keeps_prior(d->name, d->name_len)) {
            const char *prior = env_value(c->r->start_env, d->name, d->name_len);
            return prior ? set_n(c, &c->env, d->name, d->name_len, prior) : 0;
        }
        return set_n(c, &c->env, d->name, d->name_len, d->value);
    }
    if (!c->from_decl || d->readonly || den || shells_own(d->name, d->name_len))
        return 0;
    /* the declaration as the shell printed it, replayed as it is */
    shx_buf text = SHX_BUF_INIT;
    if (shx_buf_append(&text, d->text, d->text_len) != 0) {
        c->nomem = 1;
        return -1;
    }
    int rc = set_n(c, &c->vars, d->name, d->name_len, text.data);
    shx_buf_free(&text);
    return rc;
}

static void notice(shexec_run *r, const char *fmt, const char *detail)
{
    if (r->notice.len)
        shx_buf_puts(&r->notice, "; ");
    shx_buf_printf(&r->notice, fmt, detail);
}

/* What the start environment has that the shell could not list (names that
 * are not identifiers) or that keeps its value (SHLVL, _), carried over. */
static int carry_over(adopt_ctx *c)
{
    for (char **e = c->r->start_env; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t n = (size_t)(eq - *e);
        const char *have;
        if (shx_envlist_find(&c->env, *e, n, &have) || is_pwd(*e, n))
            continue;
        if ((!shx_shell_name(*e, n) || keeps_prior(*e, n)) && set_n(c, &c->env, *e, n, eq + 1))
            return -1;
    }
    return 0;
}

/* A run's own variables are the run's: a name it set that the command left
 * as it was, or removed and the command did not set, takes back the
 * session's value. */
static int revert_run_vars(adopt_ctx *c)
{
    const shx_envlist *rv = &c->r->env;
    char *const *prior_env = c->r->prior_env ? c->r->prior_env : c->r->start_env;
    for (size_t i = 0; i < rv->n; i++) {
        const char *name = rv->names[i];
        size_t n = strlen(name);
        const char *cur = NULL;
        int has = shx_envlist_find(&c->env, name, n, &cur) && cur;
        int untouched = rv->values[i] ? has && strcmp(cur, rv->values[i]) == 0 : !has;
        if (!untouched)
            continue;
        const char *prior = env_value(prior_env, name, n);
        if ((has || prior) && set_n(c, &c->env, name, n, prior))
            return -1;
    }
    return 0;
}

/*
 * What a state is taken from, as the key kept in s->plisting: a kind byte
 * ('d': bash's declare -p, 'e': export -p), the listing, then, with bash's
 * functions, a NUL (a listing holds none) and the functions.
 */
static const shx_buf *record_listing(const shx_record *rec)
{
    return rec->has_decl ? &rec->decl : &rec->env;
}

static int record_has_funcs(const shx_record *rec)
{
    return rec->has_decl && rec->has_funcs;
}

/* n bytes at p equal those of b (data NULL when empty)? */
static int same_bytes(const char *p, const shx_buf *b, size_t n)
{
    return n == 0 || memcmp(p, b->data, n) == 0;
}

/* Is the record's key the one kept? Compared piece by piece where it lies:
 * a listing can be MiBs, and most commands leave it as it was. */
static int listing_is_kept(const shexec_session *s, const shx_record *rec)
{
    const shx_buf *listing = record_listing(rec);
    int funcs = record_has_funcs(rec);
    const char *k = s->plisting.data;
    size_t len = 1 + listing->len + (funcs ? 1 + rec->funcs.len : 0);
    if (!s->plisting_ok || !k || s->plisting.len != len || k[0] != (rec->has_decl ? 'd' : 'e') ||
        !same_bytes(k + 1, listing, listing->len))
        return 0;
    k += 1 + listing->len;
    return !funcs || (k[0] == '\0' && same_bytes(k + 1, &rec->funcs, rec->funcs.len));
}

/* The record's key, built in key (empty). 0 or -1. */
static int listing_key(const shx_record *rec, shx_buf *key)
{
    const shx_buf *listing = record_listing(rec);
    shx_buf_putc(key, rec->has_decl ? 'd' : 'e');
    shx_buf_append(key, listing->data ? listing->data : "", listing->len);
    if (record_has_funcs(rec)) {
        shx_buf_putc(key, '\0');
        shx_buf_append(key, rec->funcs.data ? rec->funcs.data : "", rec->funcs.len);
    }
    return key->failed ? -1 : 0;
}

void shx_persist_adopt(shexec_run *r)
{
    shexec_session *s = r->s;
    const shx_record *rec = &r->record;
    if (!s || !s->persist_env)
        return;
    if (rec->over || rec->state_over) {
        char bound[64];
        (void)snprintf(bound, sizeof bound, "%u", SHEXEC_MAX_PERSIST_BYTES);
        notice(r, "the shell state the command left is larger than %s bytes "
                  "(SHEXEC_MAX_PERSIST_BYTES): the session's environment stays as it was", bound);
        return;
    }
    if (!shx_record_usable(rec) || (!rec->has_env && !rec->has_decl))
        return; /* nothing reported (the command ended in exec, or replaced the EXIT trap) */
    /* the session's shell lists this way from now on (another shell drops it) */
    int kind = rec->has_decl ? SHX_CAPTURE_DECL : SHX_CAPTURE_EXPORT;
    if (s->listing_kind != kind)
        s->words_known = kind == SHX_CAPTURE_DECL || is_dash(s);
    s->listing_kind = kind;
    /* Most commands change nothing: the same listing, taken by the same
     * rules from the state it gave, gives that state again. A run with
     * variables of its own is taken in full (they are reverted). */
    if (!r->env.n && s->penv_set && listing_is_kept(s, rec))
        return;
    s->plisting_ok = 0;
    adopt_ctx c = {.r = r, .env = SHX_ENVLIST_INIT, .vars = SHX_ENVLIST_INIT,
                   .name = SHX_BUF_INIT, .from_decl = rec->has_decl};
    c.env.max = c.vars.max = (size_t)1 << 24; /* the byte bound is the bound */
    shx_buf scratch = SHX_BUF_INIT;
    const shx_buf *listing = rec->has_decl ? &rec->decl : &rec->env;
    size_t bad_at = 0;
    int rc = shx_namefilter_init(&c.filter, &s->deny, &s->allow) != SHEXEC_OK
                 ? SHX_DECL_NOMEM
                 : shx_decl_each(listing->data ? listing->data : "", listing->len, &scratch,
                                 take_decl, &c, &bad_at);
    if (rc == SHX_DECL_OK && !c.nomem && (carry_over(&c) != 0 || revert_run_vars(&c) != 0))
        rc = SHX_DECL_NOMEM;
    shx_namefilter_free(&c.filter);
    shx_buf_free(&scratch);
    shx_buf_free(&c.name);
    if (rc != SHX_DECL_OK || c.nomem) {
        if (rc == SHX_DECL_MALFORMED && !c.nomem) {
            char where[96];
            (void)snprintf(where, sizeof where, "line at byte %zu", bad_at);
            notice(r, "the variables the shell listed could not be read (%s): the session's "
                      "environment stays as it was", where);
        } else {
            notice(r, "out of memory: the session's environment stays as it was%s", "");
        }
        shx_envlist_free(&c.env);
        shx_envlist_free(&c.vars);
        return;
    }
    shx_buf funcs = SHX_BUF_INIT;
    if (rec->has_decl && rec->has_funcs && rec->funcs.len &&
        shx_buf_append(&funcs, rec->funcs.data, rec->funcs.len) != 0) {
        notice(r, "out of memory: the session's environment stays as it was%s", "");
        shx_envlist_free(&c.env);
        shx_envlist_free(&c.vars);
        return;
    }
    shx_envlist_free(&s->penv);
    shx_envlist_free(&s->pvars);
    shx_buf_free(&s->pfuncs);
    s->penv = c.env;
    s->pvars = c.vars;
    s->pfuncs = funcs;
    s->penv_set = 1;
    shx_envlist_free(&s->pfunc_names);
    s->pfunc_names_ok = shx_func_names(&s->pfunc_names, funcs.data, funcs.len) == 0;
    /* kept to be compared with the next listing, when it gave the state by
     * itself (a run's own variables were reverted: taken in full again) */
    shx_buf_free(&s->plisting);
    s->plisting_ok = !r->env.n && listing_key(rec, &s->plisting) == 0;
    if (!s->plisting_ok)
        shx_buf_free(&s->plisting);
}

int shx_persist_replay(const shexec_session *s, const shexec_run *r, shx_buf *out)
{
    for (size_t i = 0; i < s->pvars.n; i++) {
        const char *name = s->pvars.names[i];
        const char *v;
        /* the run's own variable of that name is what the command gets */
        if (!s->pvars.values[i] || shx_envlist_find(&r->env, name, strlen(name), &v))
            continue;
        shx_buf_puts(out, s->pvars.values[i]);
        shx_buf_putc(out, '\n');
    }
    if (s->pfuncs.len)
        shx_buf_append(out, s->pfuncs.data, s->pfuncs.len);
    return out->failed ? -1 : 0;
}

int shx_persist_lists(const shexec_session *s, const shexec_run *r)
{
    /* A command that cannot change the state leaves the one the session
     * holds, when that is what the last listing gave (no host setenv, no
     * rule change since; the run has no variables of its own to revert),
     * and the shell is one whose words inert.c knows (bash, dash). */
    return !(s->listing_kind && s->words_known && s->penv_set && s->plisting_ok &&
             s->pfunc_names_ok && !r->env.n &&
             shx_inert_command(r->command, r->command_len, &s->pfunc_names));
}

void shx_persist_rules_changed(shexec_session *s)
{
    s->plisting_ok = 0;
}

void shx_persist_drop(shexec_session *s, int all)
{
    shx_buf_free(&s->plisting);
    s->plisting_ok = 0;
    s->listing_kind = 0;
    s->words_known = 0;
    shx_envlist_free(&s->pvars);
    shx_buf_free(&s->pfuncs);
    shx_envlist_free(&s->pfunc_names);
    s->pfunc_names_ok = 0;
    if (all) {
        shx_envlist_free(&s->penv);
        s->penv_set = 0;
    }
    shx_env_free(s->env_view);
    s->env_view = NULL;
}

int shx_persist_setenv(shexec_session *s, const char *name, const char *value)
{
    s->plisting_ok = 0;
    if (!s->penv_set)
        return SHEXEC_OK;
    const char *v;
    if (shx_envlist_find(&s->pvars, name, strlen(name), &v) && v &&
        shx_envlist_set(&s->pvars, name, NULL) != SHEXEC_OK)
        return SHEXEC_ENOMEM;
    int rc = shx_envlist_set(&s->penv, name, value);
    return rc == SHEXEC_EINVAL ? SHEXEC_OK : rc;
}

int shx_persist_env_build(const shexec_session *s, char ***out, const shx_envlist *run_ov)
{
    if (s->penv_set)
        return shx_env_build(out, NULL, &s->penv, run_ov, &s->deny, &s->allow);
    return shx_env_build(out, s->env_inherit ? (const char *const *)environ : NULL, &s->env, run_ov,
                         &s->deny, &s->allow);
}
