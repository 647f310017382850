/*
 * fuzz_env.c - libFuzzer target for environment building (lib/env.c).
 *
 * Input: NUL-separated records, each an operation byte and its text:
 * base entries ("NAME=VALUE", or malformed), session and run overrides
 * (NAME=VALUE sets, NAME alone removes), deny and allow globs, and the
 * default deny list. A model written from env.h replays them with plain
 * lists and fnmatch(3), and the library has to agree exactly: the override
 * and glob lists it keeps, which names a glob list matches (the library
 * decides most globs without fnmatch, so any disagreement in its fast
 * paths shows), and the built array entry for entry and in order. The
 * array is also checked on its own terms: NAME=VALUE entries, no name
 * twice, every denied name absent, every surviving override present with
 * its value.
 */
#include <fnmatch.h>
#include <stdint.h>
#include <string.h>

#include "shx/env.h"
#include "fuzzutil.h"
#include "shexec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Records of one kind the model takes; the rest of the input is ignored. */
#define PER_KIND 256

/* The model's ordered name -> value list; value NULL: removed. Room for
 * the built result too: base, session and run names together. */
typedef struct mlist {
    const char *name[3 * PER_KIND];
    const char *value[3 * PER_KIND];
    size_t n;
} mlist;

static long mlist_find(const mlist *l, const char *name, size_t nlen)
{
    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->name[i]) == nlen && memcmp(l->name[i], name, nlen) == 0)
            return (long)i;
    return -1;
}

static void mlist_set(mlist *l, const char *name, const char *value)
{
    long at = mlist_find(l, name, strlen(name));
    if (at >= 0) {
        l->value[at] = value;
    } else {
        l->name[l->n] = name;
        l->value[l->n++] = value;
    }
}

typedef struct mglobs {
    const char *g[PER_KIND];
    size_t n;
} mglobs;

static void mglobs_add(mglobs *m, const char *g)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->g[i], g) == 0)
            return;
    m->g[m->n++] = g;
}

static int mglobs_match(const mglobs *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (fnmatch(m->g[i], name, 0) == 0)
            return 1;
    return 0;
}

/* env.h's default deny list, as documented there. */
static const char *const default_deny[] = {
    "LD_PRELOAD", "LD_AUDIT",  "LD_LIBRARY_PATH", "DYLD_*", "BASH_ENV", "ENV", "BASH_FUNC_*",
    "SHELLOPTS",  "BASHOPTS", "PROMPT_COMMAND",  "IFS",    "CDPATH",   "GLOBIGNORE",
};

static int name_ok(const char *s)
{
    return s[0] && !strchr(s, '=');
}

/* Split a record "NAME=VALUE" in place; value NULL when there is no '='. */
static void split(char *rec, const char **name, const char **value)
{
    char *eq = strchr(rec, '=');
    *name = rec;
    *value = NULL;
    if (eq) {
        *eq = '\0';
        *value = eq + 1;
    }
}

static void check_envlist(const shx_envlist *l, const mlist *m)
{
    FZ_CHECK(l->n == m->n, "override list of %zu, model %zu", l->n, m->n);
    for (size_t i = 0; i < m->n; i++) {
        FZ_CHECK(strcmp(l->names[i], m->name[i]) == 0, "override %zu is %s, model %s", i,
                 l->names[i], m->name[i]);
        FZ_CHECK(m->value[i] ? l->values[i] && strcmp(l->values[i], m->value[i]) == 0
                             : l->values[i] == NULL,
                 "override %s has the wrong value", m->name[i]);
    }
}

static void check_globlist(const shx_globlist *g, const mglobs *m)
{
    FZ_CHECK(g->n == m->n, "glob list of %zu, model %zu", g->n, m->n);
    for (size_t i = 0; i < m->n; i++)
        FZ_CHECK(strcmp(g->globs[i], m->g[i]) == 0, "glob %zu is %s, model %s", i, g->globs[i],
                 m->g[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a private NUL-terminated copy: records become C strings in place */
    char *text = malloc(size + 1);
    FZ_CHECK(text, "out of memory");
    if (size)
        memcpy(text, data, size);
    text[size] = '\0';

    const char *base[PER_KIND + 1];
    size_t nbase = 0;
    int base_null = 1;
    static mlist sess, run; /* static: too big for the stack */
    static mglobs deny, allow;
    sess.n = run.n = deny.n = allow.n = 0;
    shx_envlist lsess = SHX_ENVLIST_INIT, lrun = SHX_ENVLIST_INIT;
    shx_globlist ldeny = SHX_GLOBLIST_INIT, lallow = SHX_GLOBLIST_INIT;

    for (char *p = text, *next; p < text + size; p = next) {
        next = p + strlen(p) + 1; /* before split() cuts the record at its '=' */
        if (!*p)
            continue;
        unsigned op = (unsigned char)*p % 8;
        char *arg = p + 1;
        const char *name, *value;
        switch (op) {
        case 0: case 1: case 2:
            base_null = 0;
            if (nbase < PER_KIND)
                base[nbase++] = arg;
            break;
        case 3: case 4: {
            mlist *m = op == 3 ? &sess : &run;
            shx_envlist *l = op == 3 ? &lsess : &lrun;
            split(arg, &name, &value);
            if (name_ok(name) && m->n == PER_KIND && mlist_find(m, name, strlen(name)) < 0)
                goto stop; /* the model is full */
            int rc = shx_envlist_set(l, name, value);
            if (!name_ok(name)) {
                FZ_CHECK(rc == SHEXEC_EINVAL, "bad name \"%s\" accepted", name);
            } else {
                FZ_CHECK(rc == SHEXEC_OK, "set %s: %d", name, rc);
                mlist_set(m, name, value);
            }
            break;
        }
        case 5: case 6: {
            mglobs *m = op == 5 ? &deny : &allow;
            shx_globlist *g = op == 5 ? &ldeny : &lallow;
            if (m->n >= PER_KIND - sizeof default_deny / sizeof *default_deny)
                goto stop;
            int rc = shx_globlist_add(g, arg);
            if (!*arg) {
                FZ_CHECK(rc == SHEXEC_EINVAL, "empty glob accepted");
            } else {
                FZ_CHECK(rc == SHEXEC_OK, "add glob %s: %d", arg, rc);
                mglobs_add(m, arg);
            }
            break;
        }
        default:
            if (deny.n >= PER_KIND - sizeof default_deny / sizeof *default_deny)
                goto stop;
            FZ_CHECK(shx_globlist_add_default_deny(&ldeny) == SHEXEC_OK, "default deny");
            for (size_t i = 0; i < sizeof default_deny / sizeof *default_deny; i++)
                mglobs_add(&deny, default_deny[i]);
            break;
        }
    }
stop:
    base[nbase] = NULL;
    check_envlist(&lsess, &sess);
    check_envlist(&lrun, &run);
    check_globlist(&ldeny, &deny);
    check_globlist(&lallow, &allow);

    /* the model's build: base (first occurrence wins), session, run, deny */
    static mlist want;
    want.n = 0;
    for (size_t i = 0; i < nbase; i++) {
        const char *eq = strchr(base[i], '=');
        if (!eq || eq == base[i])
            continue;
        size_t nlen = (size_t)(eq - base[i]);
        if (mlist_find(&want, base[i], nlen) >= 0)
            continue;
        /* the name is copied so the model can treat it as a C string */
        char *nm = strndup(base[i], nlen);
        FZ_CHECK(nm, "out of memory");
        want.name[want.n] = nm;
        want.value[want.n++] = eq + 1;
    }
    size_t nbase_names = want.n;
    for (int pass = 0; pass < 2; pass++) {
        const mlist *m = pass ? &run : &sess;
        for (size_t i = 0; i < m->n; i++) {
            long at = mlist_find(&want, m->name[i], strlen(m->name[i]));
            if (at >= 0) {
                want.value[at] = m->value[i];
            } else if (m->value[i]) {
                want.name[want.n] = m->name[i];
                want.value[want.n++] = m->value[i];
            }
        }
    }
    /* each list alone (as a deny list, nothing allowed: dropped = matched),
     * and the two together */
    shx_namefilter fdeny, fallow, fboth;
    FZ_CHECK(shx_namefilter_init(&fdeny, &ldeny, NULL) == SHEXEC_OK &&
             shx_namefilter_init(&fallow, &lallow, NULL) == SHEXEC_OK &&
             shx_namefilter_init(&fboth, &ldeny, &lallow) == SHEXEC_OK, "out of memory");
    for (size_t i = 0; i < want.n; i++) {
        int denied = mglobs_match(&deny, want.name[i]);
        int allowed = mglobs_match(&allow, want.name[i]);
        /* the filter on a name that is not NUL-terminated */
        size_t nlen = strlen(want.name[i]);
        char *unterminated = malloc(nlen + 2);
        FZ_CHECK(unterminated, "out of memory");
        memcpy(unterminated, want.name[i], nlen);
        memcpy(unterminated + nlen, "=x", 2);
        FZ_CHECK(shx_namefilter_drops(&fdeny, unterminated, nlen) == denied,
                 "deny list match of %s: model says %d", want.name[i], denied);
        FZ_CHECK(shx_namefilter_drops(&fallow, unterminated, nlen) == allowed,
                 "allow list match of %s: model says %d", want.name[i], allowed);
        FZ_CHECK(shx_namefilter_drops(&fboth, unterminated, nlen) == (denied && !allowed),
                 "filter on %s: model says denied %d, allowed %d", want.name[i], denied, allowed);
        free(unterminated);
        if (want.value[i] && denied && !allowed)
            want.value[i] = NULL;
    }
    shx_namefilter_free(&fdeny);
    shx_namefilter_free(&fallow);
    shx_namefilter_free(&fboth);

    char **env = NULL;
    int rc = shx_env_build(&env, base_null ? NULL : base, &lsess, &lrun, &ldeny, &lallow);
    FZ_CHECK(rc == SHEXEC_OK && env, "build: %d", rc);

    size_t k = 0;
    for (size_t i = 0; i < want.n; i++) {
        if (!want.value[i])
            continue;
        const char *e = env[k];
        FZ_CHECK(e, "the array ends after %zu entries; %s=%s is missing", k, want.name[i],
                 want.value[i]);
        size_t nlen = strlen(want.name[i]);
        FZ_CHECK(strncmp(e, want.name[i], nlen) == 0 && e[nlen] == '=' &&
                     strcmp(e + nlen + 1, want.value[i]) == 0,
                 "entry %zu is \"%s\", model \"%s=%s\"", k, e, want.name[i], want.value[i]);
        FZ_CHECK(shx_env_get(env, want.name[i]) == e + nlen + 1, "shx_env_get(%s)",
                 want.name[i]);
        k++;
    }
    FZ_CHECK(env[k] == NULL, "extra entry \"%s\"", env[k]);

    /* the same facts, stated without the model's ordering */
    for (size_t i = 0; env[i]; i++) {
        const char *eq = strchr(env[i], '=');
        FZ_CHECK(eq && eq != env[i], "entry \"%s\" is not NAME=VALUE", env[i]);
        size_t nlen = (size_t)(eq - env[i]);
        for (size_t j = 0; j < i; j++)
            FZ_CHECK(strncmp(env[j], env[i], nlen + 1) != 0, "name of \"%s\" twice", env[i]);
        char *nm = strndup(env[i], nlen);
        FZ_CHECK(nm, "out of memory");
        FZ_CHECK(!mglobs_match(&deny, nm) || mglobs_match(&allow, nm), "denied %s present", nm);
        free(nm);
        /* nothing may point into the inputs */
        FZ_CHECK(!(env[i] >= text && env[i] <= text + size), "entry points into the input");
    }
    for (int pass = 0; pass < 2; pass++) {
        const mlist *m = pass ? &run : &sess;
        for (size_t i = 0; i < m->n; i++) {
            const char *got = shx_env_get(env, m->name[i]);
            /* the last list to name a variable decides it, unless denied */
            const mlist *later = pass ? NULL : &run;
            if (later && mlist_find(later, m->name[i], strlen(m->name[i])) >= 0)
                continue;
            if (!m->value[i] || (mglobs_match(&deny, m->name[i]) && !mglobs_match(&allow, m->name[i])))
                FZ_CHECK(!got, "%s removed but present", m->name[i]);
            else
                FZ_CHECK(got && strcmp(got, m->value[i]) == 0, "override %s lost", m->name[i]);
        }
    }

    shx_env_free(env);
    for (size_t i = 0; i < nbase_names; i++)
        free((char *)want.name[i]);
    shx_envlist_free(&lsess);
    shx_envlist_free(&lrun);
    shx_globlist_free(&ldeny);
    shx_globlist_free(&lallow);
    FZ_CHECK(lsess.n == 0 && lsess.names == NULL && ldeny.n == 0 && ldeny.globs == NULL,
             "lists not reset by free");
    free(text);
    return 0;
}
