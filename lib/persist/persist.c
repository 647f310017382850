/*
 * persist.c - the session's shell state (see persist_hook.h and, for the rules,
 * shexec_session_set_persist_env() in shexec.h).
 *
 * The state a run reports comes from inside the command, which can write
 * anything there: it is read only from a run whose shell was asked to list
 * it, parsed whole (a listing that does not parse is not taken), bounded
 * (record.h), and filtered by name before anything of it reaches the next
 * command: the deny list, the library's own names, the variables the shell
 * keeps for itself, functions named like builtins. What is kept is what the
 * next shell gets in the library's own words (replay.h): exported
 * variables as its environment, other variables as `declare` lines the
 * library quoted, functions through the environment bash imports them
 * from. Nothing of it goes on a command line.
 */
#include "persist/persist_hook.h"
#include "persist/pstate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "persist/replay.h"
#include "persist/shfuncs.h"
#include "shell/shstate.h"
#include "shx/env.h"

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
    const shx_persist_report *in;
    shx_envlist env, vars;
    shx_buf name;
    shx_namefilter filter; /* the session's deny and allow lists, compiled once */
    int from_decl; /* bash's declare -p: it lists shell variables too */
    shx_buf skipped; /* "NAME (why)" of what is not kept, for the notice */
    int nskipped;
    int nomem;
} adopt_ctx;

/* Note a name that is not kept (the first few, for the notice). */
static void skip_note(adopt_ctx *c, const char *name, size_t n, const char *why)
{
    if (c->nskipped++ >= 8)
        return;
    if (c->skipped.len)
        shx_buf_puts(&c->skipped, ", ");
    shx_buf_printf(&c->skipped, "%.*s (%s)", n > 64 ? 64 : (int)n, name, why);
}

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
            const char *prior = env_value(c->in->run->start_env, d->name, d->name_len);
            return prior ? set_n(c, &c->env, d->name, d->name_len, prior) : 0;
        }
        return set_n(c, &c->env, d->name, d->name_len, d->value);
    }
    if (!c->from_decl || den || shells_own(d->name, d->name_len))
        return 0;
    if (d->readonly)
        return 0; /* the documented rule: readonly shell variables stay with their shell */
    /* the declaration in the library's own words, never the listing's text */
    shx_buf line = SHX_BUF_INIT;
    const char *why = NULL;
    int rc = shx_replay_var(&line, d, &why);
    if (rc == SHX_REPLAY_NOMEM || (rc == SHX_REPLAY_OK && !line.data)) {
        shx_buf_free(&line);
        c->nomem = 1;
        return -1;
    }
    if (rc == SHX_REPLAY_SKIP) {
        skip_note(c, d->name, d->name_len, why);
        return 0;
    }
    rc = set_n(c, &c->vars, d->name, d->name_len, line.data);
    shx_buf_free(&line);
    return rc;
}

typedef struct funcs_ctx {
    adopt_ctx *c;
    shx_envlist *funcs;
    shx_buf name, value;
} funcs_ctx;

static int take_func(void *user, const char *name, size_t n, const char *body, size_t blen)
{
    funcs_ctx *f = user;
    const char *why = NULL;
    if (!shx_replay_func_name_ok(name, n, &why)) {
        skip_note(f->c, name, n, why);
        return 0;
    }
    shx_buf_clear(&f->value);
    int rc = shx_replay_func_value(&f->value, body, blen, &why);
    if (rc == SHX_REPLAY_SKIP) {
        skip_note(f->c, name, n, why);
        return 0;
    }
    shx_buf_clear(&f->name);
    if (rc != SHX_REPLAY_OK || shx_buf_append(&f->name, name, n) != 0 ||
        shx_envlist_set(f->funcs, f->name.data, f->value.data) != SHEXEC_OK) {
        f->c->nomem = 1;
        return -1;
    }
    return 0;
}

static void notice(shx_buf *to, const char *fmt, const char *detail)
{
    if (to->len)
        shx_buf_puts(to, "; ");
    shx_buf_printf(to, fmt, detail);
}

/* What the start environment has that the shell could not list (names that
 * are not identifiers) or that keeps its value (SHLVL, _), carried over. */
static int carry_over(adopt_ctx *c)
{
    for (char **e = c->in->run->start_env; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t n = (size_t)(eq - *e);
        const char *have;
        if (shx_envlist_find(&c->env, *e, n, &have) || is_pwd(*e, n))
            continue;
        if ((!shx_env_name_is_identifier(*e, n) || keeps_prior(*e, n)) && set_n(c, &c->env, *e, n, eq + 1))
            return -1;
    }
    return 0;
}

/* A run's own variables are the run's: a name it set that the command left
 * as it was, or removed and the command did not set, takes back the
 * session's value. */
static int revert_run_vars(adopt_ctx *c)
{
    const shx_envlist *rv = c->in->run_env;
    char *const *prior_env = c->in->run->prior_env ? c->in->run->prior_env : c->in->run->start_env;
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
 * What a state is taken from, as the key kept in p->listing: a kind byte
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
static int listing_is_kept(const shx_persist *p, const shx_record *rec)
{
    const shx_buf *listing = record_listing(rec);
    int funcs = record_has_funcs(rec);
    const char *k = p->listing.data;
    size_t len = 1 + listing->len + (funcs ? 1 + rec->funcs.len : 0);
    if (!p->listing_ok || !k || p->listing.len != len || k[0] != (rec->has_decl ? 'd' : 'e') ||
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

/* A decl listing bash could have printed: bash always has variables. */
static int listing_possible(const shx_record *rec)
{
    return !rec->has_decl || rec->decl.len > 0;
}

void shx_persist_adopt(shx_persist *p, const shx_persist_report *in)
{
    const shx_record *rec = in->record;
    shx_buf *to = in->notice;
    if (!p || !rec->want_state)
        return; /* state is read only from a run whose shell was asked to list it */
    if (rec->over || rec->state_over) {
        char bound[64];
        (void)snprintf(bound, sizeof bound, "%u", SHEXEC_MAX_PERSIST_BYTES);
        notice(to, "the shell state the command left is larger than %s bytes "
                  "(SHEXEC_MAX_PERSIST_BYTES): the session's environment stays as it was", bound);
        return;
    }
    if (!shx_record_usable(rec) || (!rec->has_env && !rec->has_decl))
        return; /* nothing reported (the command ended in exec, or replaced the EXIT trap) */
    /* a listing of the other kind than the session's shell gives is not
     * one its shell wrote */
    if ((rec->has_decl && !in->shell_bash) || (!rec->has_decl && in->shell_bash) ||
        !listing_possible(rec)) {
        notice(to, "the shell state the command reported is not one its shell lists: the "
                  "session's environment stays as it was%s", "");
        return;
    }
    /* Most commands change nothing: the same listing, taken by the same
     * rules from the state it gave, gives that state again. A run with
     * variables of its own is taken in full (they are reverted). */
    if (!in->run_env->n && p->env_set && listing_is_kept(p, rec))
        return;
    p->listing_ok = 0;
    adopt_ctx c = {.in = in, .env = SHX_ENVLIST_INIT, .vars = SHX_ENVLIST_INIT,
                   .name = SHX_BUF_INIT, .skipped = SHX_BUF_INIT, .from_decl = rec->has_decl};
    c.env.max = c.vars.max = (size_t)1 << 24; /* the byte bound is the bound */
    shx_envlist funcs = SHX_ENVLIST_INIT;
    funcs.max = (size_t)1 << 24;
    shx_buf scratch = SHX_BUF_INIT;
    const shx_buf *listing = rec->has_decl ? &rec->decl : &rec->env;
    size_t bad_at = 0;
    int rc = shx_namefilter_init(&c.filter, in->deny, in->allow) != SHEXEC_OK
                 ? SHX_DECL_NOMEM
                 : shx_decl_each(listing->data ? listing->data : "", listing->len, &scratch,
                                 take_decl, &c, &bad_at);
    if (rc == SHX_DECL_OK && !c.nomem && (carry_over(&c) != 0 || revert_run_vars(&c) != 0))
        rc = SHX_DECL_NOMEM;
    int funcs_bad = 0;
    if (rc == SHX_DECL_OK && !c.nomem && rec->has_decl && rec->has_funcs && rec->funcs.len) {
        funcs_ctx f = {.c = &c, .funcs = &funcs, .name = SHX_BUF_INIT, .value = SHX_BUF_INIT};
        int frc = shx_funcs_each(rec->funcs.data, rec->funcs.len, take_func, &f);
        shx_buf_free(&f.name);
        shx_buf_free(&f.value);
        if (frc == SHX_DECL_MALFORMED) {
            funcs_bad = 1; /* not a listing of functions: none is taken */
            shx_envlist_free(&funcs);
        } else if (frc != SHX_DECL_OK) {
            c.nomem = 1;
        }
    }
    shx_namefilter_free(&c.filter);
    shx_buf_free(&scratch);
    shx_buf_free(&c.name);
    if (rc != SHX_DECL_OK || c.nomem) {
        if (rc == SHX_DECL_MALFORMED && !c.nomem) {
            char where[96];
            (void)snprintf(where, sizeof where, "line at byte %zu", bad_at);
            notice(to, "the variables the shell listed could not be read (%s): the session's "
                      "environment stays as it was", where);
        } else {
            notice(to, "out of memory: the session's environment stays as it was%s", "");
        }
        shx_envlist_free(&c.env);
        shx_envlist_free(&c.vars);
        shx_envlist_free(&funcs);
        shx_buf_free(&c.skipped);
        return;
    }
    if (funcs_bad)
        notice(to, "the functions the shell listed could not be read: none is kept%s", "");
    if (c.nskipped) {
        if (c.nskipped > 8)
            shx_buf_printf(&c.skipped, " and %d more", c.nskipped - 8);
        notice(to, "not kept for the next commands: %s", c.skipped.data ? c.skipped.data : "");
    }
    shx_buf_free(&c.skipped);
    shx_envlist_free(&p->env);
    shx_envlist_free(&p->vars);
    shx_envlist_free(&p->funcs);
    p->env = c.env;
    p->vars = c.vars;
    p->funcs = funcs;
    p->env_set = 1;
    /* kept to be compared with the next listing, when it gave the state by
     * itself (a run's own variables were reverted: taken in full again) */
    shx_buf_free(&p->listing);
    p->listing_ok = !in->run_env->n && listing_key(rec, &p->listing) == 0;
    if (!p->listing_ok)
        shx_buf_free(&p->listing);
}

void shx_persist_forget_lost(shx_persist *p, const shx_buf *lost, shx_buf *to)
{
    if (!p || !lost->len)
        return;
    shx_buf names = SHX_BUF_INIT;
    int n = 0;
    for (size_t off = 0; off < lost->len; off += strlen(lost->data + off) + 1) {
        const char *name = lost->data + off, *v;
        /* only a function the session gave this shell: the report is untrusted */
        if (!shx_envlist_find(&p->funcs, name, strlen(name), &v) || !v)
            continue;
        if (shx_envlist_set(&p->funcs, name, NULL) != SHEXEC_OK)
            continue;
        if (n++ < 8)
            shx_buf_printf(&names, "%s%.64s", names.len ? ", " : "", name);
    }
    if (n) {
        /* the next listing is taken in full: the state it was compared
         * with is not the session's any more */
        p->listing_ok = 0;
        notice(to, "bash could not define the kept function(s) %s: they are dropped",
               names.data ? names.data : "");
    }
    shx_buf_free(&names);
}
