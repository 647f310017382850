/*
 * test_env.c - environment building (lib/shx/env.c): name validation, override
 * and glob lists, and a table of shx_env_build cases compared against the
 * exact expected array (contents and order).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shx/env.h"
#include "shexec.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------
 * Table-driven shx_env_build cases
 * ------------------------------------------------------------------------ */

typedef struct kv {
    const char *name;
    const char *value; /* NULL: removal */
} kv;

typedef struct env_case {
    int base_null;            /* pass NULL as base (replace mode) */
    const char *base[32];     /* NULL-terminated */
    kv session[8];            /* ends at name NULL */
    kv run[8];
    int default_deny;         /* add the default deny list first */
    const char *deny[8];      /* NULL-terminated, added after the defaults */
    const char *allow[8];
    const char *expect[32];   /* exact result, in order, NULL-terminated */
} env_case;

/* Bounds that tell linear from quadratic (minutes at 100k), far above the
 * linear time: under valgrind everything runs 20-50 times slower, under
 * the sanitizers a few times, on a loaded machine more, so they scale. */
#define SANITIZER_SLOWDOWN (TU_SANITIZED ? 6 : 1)
static double time_bound(double seconds)
{
    return (tu_under_valgrind() ? seconds * 20 : seconds) * SANITIZER_SLOWDOWN;
}

static void fill_envlist(shx_envlist *l, const kv *kvs)
{
    for (; kvs->name; kvs++)
        assert_int_equal(shx_envlist_set(l, kvs->name, kvs->value), SHEXEC_OK);
}

static void fill_globlist(shx_globlist *g, const char *const *globs)
{
    for (; *globs; globs++)
        assert_int_equal(shx_globlist_add(g, *globs), SHEXEC_OK);
}

static void assert_env_equal(char *const *got, const char *const *want)
{
    size_t i = 0;
    for (; want[i]; i++) {
        if (!got[i])
            fail_msg("result ends at %zu, expected \"%s\"", i, want[i]);
        if (strcmp(got[i], want[i]) != 0)
            fail_msg("entry %zu is \"%s\", expected \"%s\"", i, got[i], want[i]);
    }
    if (got[i])
        fail_msg("unexpected extra entry %zu: \"%s\"", i, got[i]);
}

static void run_case(void **state)
{
    const env_case *c = *state;
    shx_envlist sess = SHX_ENVLIST_INIT, run = SHX_ENVLIST_INIT;
    shx_globlist deny = SHX_GLOBLIST_INIT, allow = SHX_GLOBLIST_INIT;
    fill_envlist(&sess, c->session);
    fill_envlist(&run, c->run);
    if (c->default_deny)
        assert_int_equal(shx_globlist_add_default_deny(&deny), SHEXEC_OK);
    fill_globlist(&deny, c->deny);
    fill_globlist(&allow, c->allow);

    char **env = (char **)1;
    int rc = shx_env_build(&env, c->base_null ? NULL : c->base, &sess, &run, &deny, &allow);
    assert_int_equal(rc, SHEXEC_OK);
    assert_non_null(env);
    assert_env_equal(env, c->expect);

    /* The same build with the lists passed as NULL when they are empty. */
    char **env2 = NULL;
    rc = shx_env_build(&env2, c->base_null ? NULL : c->base, sess.n ? &sess : NULL,
                       run.n ? &run : NULL, deny.n ? &deny : NULL, allow.n ? &allow : NULL);
    assert_int_equal(rc, SHEXEC_OK);
    assert_env_equal(env2, c->expect);

    shx_env_free(env);
    shx_env_free(env2);
    shx_envlist_free(&sess);
    shx_envlist_free(&run);
    shx_globlist_free(&deny);
    shx_globlist_free(&allow);
}

static const env_case inherit_only = {
    .base = {"PATH=/usr/bin:/bin", "HOME=/home/u", "EMPTY=", "EQ=a=b=c"},
    .expect = {"PATH=/usr/bin:/bin", "HOME=/home/u", "EMPTY=", "EQ=a=b=c"},
};

static const env_case run_beats_session_beats_base = {
    .base = {"A=base", "B=base", "C=base"},
    .session = {{"A", "sess"}, {"B", "sess"}, {"N", "sess"}},
    .run = {{"A", "run"}, {"N", "run"}, {"M", "run"}},
    .expect = {"A=run", "B=sess", "C=base", "N=run", "M=run"},
};

static const env_case removal_marker = {
    .base = {"A=1", "B=2", "C=3", "D=4"},
    /* session removes B and D (inherited) and adds X; run removes X, and
     * brings D back, which keeps its base position */
    .session = {{"B", NULL}, {"X", "1"}, {"D", NULL}},
    .run = {{"X", NULL}, {"D", "again"}},
    .expect = {"A=1", "C=3", "D=again"},
};

static const env_case removed_name_set_later_is_appended_then = {
    .base = {"A=1"},
    .session = {{"S1", "1"}, {"GONE", NULL}, {"S2", "2"}},
    .run = {{"GONE", "back"}},
    .expect = {"A=1", "S1=1", "S2=2", "GONE=back"},
};

static const env_case base_duplicates_first_wins = {
    .base = {"A=first", "B=1", "A=second", "B=", "A=third", "C=3"},
    .expect = {"A=first", "B=1", "C=3"},
};

static const env_case base_duplicate_overridden_once = {
    .base = {"A=1", "A=2", "B=b"},
    .session = {{"A", "x"}},
    .expect = {"A=x", "B=b"},
};

static const env_case base_malformed_entries_skipped = {
    .base = {"NOEQUALS", "=nameless", "=", "A=1", "", "B==2", "C=", "=x=y"},
    .expect = {"A=1", "B==2", "C="},
};

static const env_case default_deny_removes_every_name = {
    .base = {"PATH=/bin",
             "LD_PRELOAD=/evil.so",
             "LD_AUDIT=/a.so",
             "LD_LIBRARY_PATH=/lib",
             "DYLD_INSERT_LIBRARIES=/x.dylib",
             "DYLD_=bare-prefix",
             "BASH_ENV=/rc",
             "ENV=/rc",
             "BASH_FUNC_foo%%=() { :; }",
             "BASH_FUNC_=bare-prefix",
             "SHELLOPTS=xtrace",
             "BASHOPTS=extglob",
             "PROMPT_COMMAND=evil",
             "IFS=x",
             "CDPATH=/tmp",
             "GLOBIGNORE=*",
             /* lookalikes that must survive */
             "LD_PRELOADX=keep1",
             "LD_PRELOA=keep2",
             "MYENV=keep3",
             "ENVX=keep4",
             "XIFS=keep5",
             "DYLD=keep6",
             "BASH_FUNC=keep7",
             "ld_preload=keep8",
             "XLD_PRELOAD=keep9",
             "HOME=/h"},
    .default_deny = 1,
    .expect = {"PATH=/bin", "LD_PRELOADX=keep1", "LD_PRELOA=keep2", "MYENV=keep3",
               "ENVX=keep4", "XIFS=keep5", "DYLD=keep6", "BASH_FUNC=keep7",
               "ld_preload=keep8", "XLD_PRELOAD=keep9", "HOME=/h"},
};

static const env_case deny_applies_to_overrides = {
    .base = {"PATH=/bin"},
    .session = {{"LD_PRELOAD", "/evil.so"}, {"OK1", "1"}, {"PATH", "/usr/bin"}},
    .run = {{"BASH_ENV", "/rc"}, {"OK2", "2"}, {"DYLD_LIBRARY_PATH", "/x"}},
    .default_deny = 1,
    .deny = {"PATH"},
    .expect = {"OK1=1", "OK2=2"},
};

static const env_case allow_readmits = {
    .base = {"LD_LIBRARY_PATH=/opt/lib", "LD_PRELOAD=/evil.so", "DYLD_FOO=1",
             "DYLD_KEEP_ME=2", "A=1"},
    .default_deny = 1,
    .allow = {"LD_LIBRARY_PATH", "DYLD_KEEP_*"},
    .expect = {"LD_LIBRARY_PATH=/opt/lib", "DYLD_KEEP_ME=2", "A=1"},
};

static const env_case allow_without_deny_changes_nothing = {
    .base = {"A=1", "B=2"},
    .allow = {"A"},
    .expect = {"A=1", "B=2"},
};

static const env_case fnmatch_fallback_patterns = {
    .base = {"AWS_ACCESS_KEY=d1",      /* AWS_[A-Z]*_KEY */
             "AWS_X_KEY=d2",           /* AWS_[A-Z]*_KEY */
             "AWS_1_KEY=k1",           /* digit after AWS_: no */
             "AWS_KEY=k2",             /* nothing left for *_KEY: no */
             "AWS_ACCESS_KEYS=k3",     /* must end in _KEY: no */
             "AWS_REGION=k4",
             "MY_SECRET_TOKEN=d3",     /* *SECRET* */
             "SECRET=d4",              /* *SECRET*: star matches empty */
             "secret=k5",              /* case-sensitive */
             "GH_TOKEN=d5",            /* *_TOKEN */
             "TOKENS=k6",
             "XAZ=d6",                 /* X?Z */
             "XAAZ=k7",
             "*LIT=d7",                /* \\*LIT is the literal name "*LIT" */
             "ALIT=k8",
             "ESC_X=d8",               /* "ESC\\_*" is ESC_* */
             "AB=d9",                  /* "A\\B" denies the name AB ... */
             "A\\B=k9",                /* ... not the name A\\B */
             "K10=k10"},
    .deny = {"AWS_[A-Z]*_KEY", "*SECRET*", "*_TOKEN", "X?Z", "\\*LIT", "ESC\\_*", "A\\B"},
    .expect = {"AWS_1_KEY=k1", "AWS_KEY=k2", "AWS_ACCESS_KEYS=k3", "AWS_REGION=k4",
               "secret=k5", "TOKENS=k6", "XAAZ=k7", "ALIT=k8", "A\\B=k9", "K10=k10"},
};

static const env_case infix_and_leading_specials = {
    .base = {"ENDSECRET=d1",   /* *SECRET* at the end */
             "SSSECRETS=d2",   /* repeated first byte before the match */
             "ALMOSTSECRE=k1", /* cut short; [A-C]* denies, AL* re-admits */
             "SECRE_T=k2",
             "PATH=d3",        /* ?ATH */
             "MATH=d4",
             "XPATH=k3",
             "BOB=d5",         /* [A-C]* */
             "DAN=k4",
             "\xff\xfeHI=d6",  /* literal glob keyed on byte 0xff */
             "\xff\xfeHO=k5",
             "\xffHI=k6",
             "Z=k7",
             "\x01Q=d7",       /* literal glob keyed on byte 0x01 */
             "QA=d8",          /* Q? is not the prefix glob Q* */
             "QAB=k8",
             "XMIDY=d9",       /* *MID? is not the infix glob *MID* */
             "XMID=k9",
             "XMIDYZ=k10"},
    .deny = {"*SECRET*", "?ATH", "[A-C]*", "\xff\xfeHI", "\x01Q", "Q?", "*MID?"},
    .allow = {"AL*"},
    .expect = {"ALMOSTSECRE=k1", "SECRE_T=k2", "XPATH=k3", "DAN=k4", "\xff\xfeHO=k5",
               "\xffHI=k6", "Z=k7", "QAB=k8", "XMID=k9", "XMIDYZ=k10"},
};

static const env_case fnmatch_allow_over_fast_deny = {
    .base = {"DYLD_A=1", "DYLD_7=2", "DYLD_b=3"},
    .deny = {"DYLD_*"},
    .allow = {"DYLD_[0-9]", "DYLD_[[:lower:]]"},
    .expect = {"DYLD_7=2", "DYLD_b=3"},
};

static const env_case star_denies_everything = {
    .base = {"A=1", "B=2"},
    .session = {{"C", "3"}},
    .deny = {"*"},
    .allow = {"B"},
    .expect = {"B=2"},
};

static const env_case replace_mode_null_base = {
    .base_null = 1,
    .base = {"IGNORED=1"},
    .session = {{"PATH", "/usr/bin"}, {"LD_PRELOAD", "/evil.so"}, {"NOPE", NULL}},
    .run = {{"HOME", "/tmp"}},
    .default_deny = 1,
    .expect = {"PATH=/usr/bin", "HOME=/tmp"},
};

static const env_case replace_mode_empty_base = {
    .base = {NULL},
    .run = {{"ONLY", "x"}},
    .expect = {"ONLY=x"},
};

static const env_case empty_everything = {
    .base_null = 1,
    .expect = {NULL},
};

static const env_case order_guarantees = {
    .base = {"Z=1", "A=2", "M=3", "B=4"},
    .session = {{"NEW2", "s"}, {"A", "x"}, {"NEW1", "s"}},
    .run = {{"NEW0", "r"}, {"Z", "y"}, {"NEW1", "r"}, {"B", NULL}},
    .expect = {"Z=y", "A=x", "M=3", "NEW2=s", "NEW1=r", "NEW0=r"},
};

static const env_case odd_values_copied_verbatim = {
    .base = {"A=", "B= spaced  ", "C=\x01\xff"},
    .session = {{"E", ""}, {"Q", "a=b"}, {"U", "\xc3\xa9t\xc3\xa9"}},
    .expect = {"A=", "B= spaced  ", "C=\x01\xff", "E=", "Q=a=b", "U=\xc3\xa9t\xc3\xa9"},
};

/* ------------------------------------------------------------------------
 * Unit tests
 * ------------------------------------------------------------------------ */

static void test_name_valid(void **state)
{
    (void)state;
    assert_false(shx_env_name_valid(NULL));
    assert_false(shx_env_name_valid(""));
    assert_false(shx_env_name_valid("="));
    assert_false(shx_env_name_valid("A=B"));
    assert_false(shx_env_name_valid("=A"));
    assert_false(shx_env_name_valid("A="));
    assert_true(shx_env_name_valid("A"));
    assert_true(shx_env_name_valid("_x1"));
    assert_true(shx_env_name_valid("BASH_FUNC_f%%"));
    assert_true(shx_env_name_valid("with space"));
}

static void test_envlist_set_replaces_in_place(void **state)
{
    (void)state;
    shx_envlist l = SHX_ENVLIST_INIT;
    char name[8], value[8];
    strcpy(name, "A");
    strcpy(value, "1");
    assert_int_equal(shx_envlist_set(&l, name, value), SHEXEC_OK);
    /* the list holds copies */
    name[0] = 'Q';
    value[0] = '9';
    assert_int_equal(shx_envlist_set(&l, "B", "2"), SHEXEC_OK);
    assert_int_equal(shx_envlist_set(&l, "C", "3"), SHEXEC_OK);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.names[0], "A");
    assert_string_equal(l.values[0], "1");

    assert_int_equal(shx_envlist_set(&l, "B", "new"), SHEXEC_OK);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.names[1], "B");
    assert_string_equal(l.values[1], "new");

    /* removal marker, also in place */
    assert_int_equal(shx_envlist_set(&l, "B", NULL), SHEXEC_OK);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.names[1], "B");
    assert_null(l.values[1]);
    /* and back */
    assert_int_equal(shx_envlist_set(&l, "B", ""), SHEXEC_OK);
    assert_string_equal(l.values[1], "");

    /* a removal marker for a name never set is an entry too */
    assert_int_equal(shx_envlist_set(&l, "D", NULL), SHEXEC_OK);
    assert_int_equal(l.n, 4);
    assert_null(l.values[3]);

    /* bad names leave the list unchanged */
    assert_int_equal(shx_envlist_set(&l, "", "x"), SHEXEC_EINVAL);
    assert_int_equal(shx_envlist_set(&l, NULL, "x"), SHEXEC_EINVAL);
    assert_int_equal(shx_envlist_set(&l, "A=B", "x"), SHEXEC_EINVAL);
    assert_int_equal(shx_envlist_set(&l, "=", NULL), SHEXEC_EINVAL);
    assert_int_equal(shx_envlist_set(NULL, "A", "x"), SHEXEC_EINVAL);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.values[0], "1");

    /* growth past the initial capacity keeps earlier entries */
    for (int i = 0; i < 100; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "V%d", i);
        assert_int_equal(shx_envlist_set(&l, nm, nm), SHEXEC_OK);
    }
    assert_int_equal(l.n, 104);
    assert_string_equal(l.names[2], "C");
    assert_string_equal(l.values[103], "V99");

    shx_envlist_free(&l);
    assert_null(l.names);
    assert_null(l.values);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.cap, 0);
    shx_envlist_free(&l); /* twice is fine */
    shx_envlist_free(NULL);
}

static void test_globlist_add(void **state)
{
    (void)state;
    shx_globlist g = SHX_GLOBLIST_INIT;
    assert_int_equal(shx_globlist_add(&g, NULL), SHEXEC_EINVAL);
    assert_int_equal(shx_globlist_add(&g, ""), SHEXEC_EINVAL);
    assert_int_equal(shx_globlist_add(NULL, "A"), SHEXEC_EINVAL);
    assert_int_equal(g.n, 0);
    assert_int_equal(shx_globlist_add(&g, "FOO_*"), SHEXEC_OK);
    assert_int_equal(shx_globlist_add(&g, "FOO_*"), SHEXEC_OK);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.globs[0], "FOO_*");

    assert_int_equal(shx_globlist_add_default_deny(&g), SHEXEC_OK);
    assert_int_equal(g.n, 14);
    assert_int_equal(shx_globlist_add_default_deny(&g), SHEXEC_OK); /* idempotent */
    assert_int_equal(g.n, 14);
    static const char *const want[] = {
        "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "DYLD_*", "BASH_ENV",
        "ENV", "BASH_FUNC_*", "SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND",
        "IFS", "CDPATH", "GLOBIGNORE"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_string_equal(g.globs[i + 1], want[i]);

    shx_globlist_free(&g);
    assert_null(g.globs);
    assert_int_equal(g.n, 0);
    assert_int_equal(g.cap, 0);
    shx_globlist_free(NULL);
}

/* Does a glob of g match the n bytes at name? A filter with g as its deny
 * list and no allow list drops exactly those. */
static int deny_matches(const shx_globlist *g, const char *name, size_t n)
{
    shx_namefilter f;
    assert_int_equal(shx_namefilter_init(&f, g, NULL), SHEXEC_OK);
    int drops = shx_namefilter_drops(&f, name, n);
    shx_namefilter_free(&f);
    return drops;
}

static void test_namefilter_match_unterminated(void **state)
{
    (void)state;
    shx_globlist g = SHX_GLOBLIST_INIT;
    assert_int_equal(deny_matches(&g, "A", 1), 0); /* empty list */
    assert_int_equal(deny_matches(NULL, "A", 1), 0);
    assert_int_equal(shx_globlist_add(&g, "LD_PRELOAD"), SHEXEC_OK);
    assert_int_equal(shx_globlist_add(&g, "DYLD_*"), SHEXEC_OK);
    assert_int_equal(shx_globlist_add(&g, "AWS_[A-Z]*_KEY"), SHEXEC_OK);
    assert_int_equal(shx_globlist_add(&g, "*_TOKEN"), SHEXEC_OK);
    assert_int_equal(shx_globlist_add(&g, "*SECRET*"), SHEXEC_OK);

    const char *e1 = "LD_PRELOADX=1";
    assert_int_equal(deny_matches(&g, e1, 10), 1); /* "LD_PRELOAD" */
    assert_int_equal(deny_matches(&g, e1, 11), 0); /* "LD_PRELOADX" */
    assert_int_equal(deny_matches(&g, e1, 9), 0);  /* "LD_PRELOA" */

    const char *e2 = "DYLD_=x";
    assert_int_equal(deny_matches(&g, e2, 5), 1);
    assert_int_equal(deny_matches(&g, e2, 4), 0);

    /* the fnmatch pattern must see the name cut at namelen, not "..._KEY=v_KEY" */
    const char *e3 = "AWS_X_KEY=v_KEY";
    assert_int_equal(deny_matches(&g, e3, 9), 1);
    const char *e4 = "AWS_X_KEYS=_KEY";
    assert_int_equal(deny_matches(&g, e4, 10), 0);

    /* *SUFFIX and *INFIX* look only inside the name */
    const char *e5 = "GH=x_TOKEN";
    assert_int_equal(deny_matches(&g, e5, 2), 0);
    const char *e6 = "ABC=SECRET";
    assert_int_equal(deny_matches(&g, e6, 3), 0);
    const char *e7 = "ASECRETB=1";
    assert_int_equal(deny_matches(&g, e7, 8), 1);
    assert_int_equal(deny_matches(&g, e7, 6), 0); /* "ASECRE" */

    /* a name longer than the stack copy goes through the heap copy */
    size_t n = 5000;
    char *big = malloc(n + 3);
    assert_non_null(big);
    memcpy(big, "AWS_", 4);
    memset(big + 4, 'Q', n - 8);
    memcpy(big + n - 4, "_KEY", 4);
    memcpy(big + n, "=v", 3);
    assert_int_equal(deny_matches(&g, big, n), 1);
    big[4] = '9';
    assert_int_equal(deny_matches(&g, big, n), 0);

    /* with an allow list: dropped when denied and not allowed, the allow
     * globs also matched against the name cut at its length */
    shx_globlist allow = SHX_GLOBLIST_INIT;
    assert_int_equal(shx_globlist_add(&allow, "AWS_Q*"), SHEXEC_OK);
    assert_int_equal(shx_globlist_add(&allow, "*SECRET"), SHEXEC_OK);
    shx_namefilter f;
    assert_int_equal(shx_namefilter_init(&f, &g, &allow), SHEXEC_OK);
    assert_int_equal(shx_namefilter_drops(&f, e3, 9), 1);  /* "AWS_X_KEY": not allowed */
    big[4] = 'Q';
    assert_int_equal(shx_namefilter_drops(&f, big, n), 0); /* allowed */
    assert_int_equal(shx_namefilter_drops(&f, e7, 8), 1);  /* "ASECRETB" */
    assert_int_equal(shx_namefilter_drops(&f, e7, 7), 0);  /* "ASECRET": allowed */
    assert_int_equal(shx_namefilter_drops(&f, e5, 2), 0);  /* "GH": not denied */
    shx_namefilter_free(&f);
    /* an empty deny list drops nothing, whatever is allowed */
    shx_globlist none = SHX_GLOBLIST_INIT;
    assert_int_equal(shx_namefilter_size(&none, &allow), 0);
    assert_int_equal(shx_namefilter_init(&f, &none, &allow), SHEXEC_OK);
    assert_int_equal(shx_namefilter_drops(&f, e1, 10), 0);
    shx_namefilter_free(&f);
    shx_globlist_free(&allow);
    free(big);

    shx_globlist_free(&g);
}

static void test_env_get(void **state)
{
    (void)state;
    const char *base[] = {"AB=long", "A=short", "EMPTY=", "EQ=x=y", "GONE=1", NULL};
    shx_envlist run = SHX_ENVLIST_INIT;
    assert_int_equal(shx_envlist_set(&run, "GONE", NULL), SHEXEC_OK);
    assert_int_equal(shx_envlist_set(&run, "NEW", "n"), SHEXEC_OK);
    char **env = NULL;
    assert_int_equal(shx_env_build(&env, base, NULL, &run, NULL, NULL), SHEXEC_OK);
    assert_string_equal(shx_env_get(env, "A"), "short");
    assert_string_equal(shx_env_get(env, "AB"), "long");
    assert_string_equal(shx_env_get(env, "EMPTY"), "");
    assert_string_equal(shx_env_get(env, "EQ"), "x=y");
    assert_string_equal(shx_env_get(env, "NEW"), "n");
    assert_null(shx_env_get(env, "GONE"));
    assert_null(shx_env_get(env, "ABC"));
    assert_null(shx_env_get(env, "E"));
    assert_null(shx_env_get(env, "EQ=x"));
    assert_null(shx_env_get(env, ""));
    assert_null(shx_env_get(env, NULL));
    assert_null(shx_env_get(NULL, "A"));
    shx_env_free(env);
    shx_env_free(NULL);
    shx_envlist_free(&run);
}

static void test_build_copies_inputs(void **state)
{
    (void)state;
    char b0[] = "A=base";
    char b1[] = "B=base";
    const char *base[] = {b0, b1, NULL};
    shx_envlist sess = SHX_ENVLIST_INIT;
    assert_int_equal(shx_envlist_set(&sess, "B", "sess"), SHEXEC_OK);
    assert_int_equal(shx_envlist_set(&sess, "C", "sess"), SHEXEC_OK);
    char **env = NULL;
    assert_int_equal(shx_env_build(&env, base, &sess, NULL, NULL, NULL), SHEXEC_OK);
    /* scribble over every input; the result must not change */
    memset(b0, 'x', sizeof b0 - 1);
    memset(b1, 'x', sizeof b1 - 1);
    shx_envlist_free(&sess);
    const char *want[] = {"A=base", "B=sess", "C=sess", NULL};
    assert_env_equal(env, want);
    shx_env_free(env);
}

static void test_memo_matches_by_content(void **state)
{
    (void)state;
    char a[] = "A=1", b[] = "B=2";
    const char *base[] = {a, b, NULL};
    shx_env_memo m = SHX_ENV_MEMO_INIT;
    assert_null(shx_env_memo_find(&m, base, 0));
    char **env = NULL;
    assert_int_equal(shx_env_build(&env, base, NULL, NULL, NULL, NULL), SHEXEC_OK);
    assert_int_equal(shx_env_memo_keep(&m, env, base, 6), SHEXEC_OK);
    assert_ptr_equal(shx_env_memo_find(&m, base, 6), env);
    assert_null(shx_env_memo_find(&m, base, 7));
    assert_null(shx_env_memo_find(&m, NULL, 6));
    /* the same strings changed in place, one fewer, one more */
    b[2] = '3';
    assert_null(shx_env_memo_find(&m, base, 6));
    b[2] = '2';
    const char *fewer[] = {a, NULL};
    assert_null(shx_env_memo_find(&m, fewer, 6));
    const char *more[] = {a, b, "C=3", NULL};
    assert_null(shx_env_memo_find(&m, more, 6));
    const char *copy[] = {"A=1", "B=2", NULL};
    assert_ptr_equal(shx_env_memo_find(&m, copy, 6), env);

    /* without a base; a new one replaces the old (freed: the leak checks) */
    char **bare = NULL;
    assert_int_equal(shx_env_build(&bare, NULL, NULL, NULL, NULL, NULL), SHEXEC_OK);
    assert_int_equal(shx_env_memo_keep(&m, bare, NULL, 6), SHEXEC_OK);
    assert_ptr_equal(shx_env_memo_find(&m, NULL, 6), bare);
    assert_null(shx_env_memo_find(&m, copy, 6));
    shx_env_memo_free(&m);
    assert_null(shx_env_memo_find(&m, NULL, 6));
    shx_env_memo_free(&m);
}

static void test_build_bad_args(void **state)
{
    (void)state;
    const char *base[] = {"A=1", NULL};
    assert_int_equal(shx_env_build(NULL, base, NULL, NULL, NULL, NULL), SHEXEC_EINVAL);

    /* a hand-filled list with bad names: those entries are skipped */
    char *names[] = {"", "X=Y", "OK"};
    char *values[] = {"1", "2", "3"};
    shx_envlist hand = {.names = names, .values = values, .n = 3, .cap = 3};
    char **env = NULL;
    assert_int_equal(shx_env_build(&env, base, &hand, NULL, NULL, NULL), SHEXEC_OK);
    const char *want[] = {"A=1", "OK=3", NULL};
    assert_env_equal(env, want);
    shx_env_free(env);
}

static void test_long_names_with_fnmatch(void **state)
{
    (void)state;
    /* names past the 256-byte stack copy, against an fnmatch pattern */
    size_t n = 3000;
    char *deny_me = malloc(n + 8), *keep_me = malloc(n + 8);
    assert_non_null(deny_me);
    assert_non_null(keep_me);
    memset(deny_me, 'A', n);
    deny_me[n - 1] = '7';
    memcpy(deny_me + n, "=d", 3);
    memset(keep_me, 'A', n);
    memcpy(keep_me + n, "=k", 3);
    const char *base[] = {deny_me, keep_me, "SHORT9=d", "SHORT=k", NULL};
    shx_globlist deny = SHX_GLOBLIST_INIT;
    assert_int_equal(shx_globlist_add(&deny, "*[0-9]"), SHEXEC_OK);
    char **env = NULL;
    assert_int_equal(shx_env_build(&env, base, NULL, NULL, &deny, NULL), SHEXEC_OK);
    assert_non_null(env[0]);
    assert_string_equal(env[0], keep_me);
    assert_non_null(env[1]);
    assert_string_equal(env[1], "SHORT=k");
    assert_null(env[2]);
    shx_env_free(env);
    shx_globlist_free(&deny);
    free(deny_me);
    free(keep_me);
}

/* 5,000 names, each given twice in base, 1,000 overridden, some removed,
 * 1,000 new ones, and a deny glob: checks dedup and lookups at scale. */
static void test_build_at_scale(void **state)
{
    (void)state;
    enum { N = 5000 };
    char **base = calloc(2 * N + 1, sizeof *base);
    assert_non_null(base);
    for (int i = 0; i < N; i++) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "VAR_%d=first%d", i, i);
        base[i] = strdup(tmp);
        snprintf(tmp, sizeof tmp, "VAR_%d=second%d", N - 1 - i, i);
        base[N + i] = strdup(tmp);
        assert_non_null(base[i]);
        assert_non_null(base[N + i]);
    }
    shx_envlist sess = SHX_ENVLIST_INIT, run = SHX_ENVLIST_INIT;
    for (int i = 0; i < N; i += 5) { /* every 5th overridden by the session */
        char nm[32], val[32];
        snprintf(nm, sizeof nm, "VAR_%d", i);
        snprintf(val, sizeof val, "sess%d", i);
        assert_int_equal(shx_envlist_set(&sess, nm, val), SHEXEC_OK);
    }
    for (int i = 0; i < N; i += 10) { /* every 10th removed by the run */
        char nm[32];
        snprintf(nm, sizeof nm, "VAR_%d", i);
        assert_int_equal(shx_envlist_set(&run, nm, NULL), SHEXEC_OK);
    }
    for (int i = 0; i < 1000; i++) {
        char nm[32], val[32];
        snprintf(nm, sizeof nm, "NEW_%d", i);
        snprintf(val, sizeof val, "new%d", i);
        assert_int_equal(shx_envlist_set(&run, nm, val), SHEXEC_OK);
    }
    shx_globlist deny = SHX_GLOBLIST_INIT;
    assert_int_equal(shx_globlist_add_default_deny(&deny), SHEXEC_OK);
    assert_int_equal(shx_globlist_add(&deny, "VAR_?3"), SHEXEC_OK); /* fnmatch */

    char **env = NULL;
    assert_int_equal(shx_env_build(&env, (const char *const *)base, &sess, &run, &deny, NULL),
                     SHEXEC_OK);
    size_t k = 0;
    char want[64];
    for (int i = 0; i < N; i++) {
        if (i % 10 == 0)
            continue; /* removed */
        if (i >= 13 && i <= 93 && i % 10 == 3)
            continue; /* VAR_?3: VAR_13 .. VAR_93 */
        if (i % 5 == 0)
            snprintf(want, sizeof want, "VAR_%d=sess%d", i, i);
        else
            snprintf(want, sizeof want, "VAR_%d=first%d", i, i);
        assert_non_null(env[k]);
        assert_string_equal(env[k], want);
        k++;
    }
    for (int i = 0; i < 1000; i++) {
        snprintf(want, sizeof want, "NEW_%d=new%d", i, i);
        assert_non_null(env[k]);
        assert_string_equal(env[k], want);
        k++;
    }
    assert_null(env[k]);
    assert_int_equal(k, N - N / 10 - 9 + 1000);
    assert_string_equal(shx_env_get(env, "VAR_4999"), "first4999");
    assert_null(shx_env_get(env, "VAR_23"));

    shx_env_free(env);
    shx_globlist_free(&deny);
    shx_envlist_free(&sess);
    shx_envlist_free(&run);
    for (int i = 0; i < 2 * N; i++)
        free(base[i]);
    free(base);
}

/* ------------------------------------------------------------------------
 * Bounds and scale
 * ------------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An override list takes SHEXEC_MAX_ENV_VARS names; one more new name is
 * SHEXEC_ELIMIT and changes nothing, while names already there can still
 * be replaced or removed. */
static void test_envlist_bounded(void **state)
{
    (void)state;
    shx_envlist l = SHX_ENVLIST_INIT;
    char nm[32];
    for (unsigned i = 0; i < SHEXEC_MAX_ENV_VARS; i++) {
        snprintf(nm, sizeof nm, "V%u", i);
        assert_int_equal(shx_envlist_set(&l, nm, "x"), SHEXEC_OK);
    }
    assert_int_equal(l.n, SHEXEC_MAX_ENV_VARS);
    assert_int_equal(shx_envlist_set(&l, "ONE_MORE", "x"), SHEXEC_ELIMIT);
    assert_int_equal(shx_envlist_set(&l, "ONE_MORE", NULL), SHEXEC_ELIMIT); /* a marker is an entry */
    assert_int_equal(l.n, SHEXEC_MAX_ENV_VARS);
    assert_int_equal(shx_envlist_set(&l, "V7", "replaced"), SHEXEC_OK);
    assert_int_equal(shx_envlist_set(&l, "V8", NULL), SHEXEC_OK);
    assert_int_equal(l.n, SHEXEC_MAX_ENV_VARS);
    assert_string_equal(l.names[7], "V7");
    assert_string_equal(l.values[7], "replaced");
    assert_null(l.values[8]);
    /* a bad name is still EINVAL, not ELIMIT */
    assert_int_equal(shx_envlist_set(&l, "A=B", "x"), SHEXEC_EINVAL);
    shx_envlist_free(&l);

    /* the bound is per list and can be set lower (or higher) */
    l.max = 2;
    assert_int_equal(shx_envlist_set(&l, "A", "1"), SHEXEC_OK);
    assert_int_equal(shx_envlist_set(&l, "B", "2"), SHEXEC_OK);
    assert_int_equal(shx_envlist_set(&l, "C", "3"), SHEXEC_ELIMIT);
    assert_int_equal(shx_envlist_set(&l, "A", "again"), SHEXEC_OK);
    shx_envlist_free(&l);
    assert_int_equal(l.max, 0); /* free leaves SHX_ENVLIST_INIT */
}

/*
 * 100,000 variables through every step: base, session overrides with
 * replacements and removals, run overrides, a deny list of 10,000 literal
 * names and prefixes with an allow list. The result is checked entry by
 * entry against the documented rules, and the whole of it has to finish in
 * a few seconds: a linear search per variable makes this take minutes.
 */
enum { BIG = 100000 };

static int big_denied(int i)
{
    /* deny: literal B<i> for i % 10 == 3, prefix "B00012*" (B000120 ..
     * B000129); allow: literal B<i> for i % 30 == 3, which readmits 1 in 3
     * of the denied literals, B000123 among them */
    int denied = (i >= 120 && i <= 129) || i % 10 == 3;
    int allowed = i % 30 == 3;
    return denied && !allowed;
}

static void test_envlist_and_build_at_100k(void **state)
{
    (void)state;
    double t0 = now_s();
    char **base = calloc(BIG + 1, sizeof *base);
    assert_non_null(base);
    char nm[32], val[48];
    for (int i = 0; i < BIG; i++) {
        snprintf(val, sizeof val, "B%06d=base%d", i, i);
        base[i] = strdup(val);
        assert_non_null(base[i]);
    }
    shx_envlist sess = SHX_ENVLIST_INIT, run = SHX_ENVLIST_INIT;
    sess.max = run.max = 2 * BIG; /* above SHEXEC_MAX_ENV_VARS on purpose */
    for (int i = 0; i < BIG; i++) {
        snprintf(nm, sizeof nm, "S%06d", i); /* new names, appended in this order */
        snprintf(val, sizeof val, "s%d", i);
        assert_int_equal(shx_envlist_set(&sess, nm, val), SHEXEC_OK);
        if (i % 4 == 0) { /* every 4th base name overridden */
            snprintf(nm, sizeof nm, "B%06d", i);
            snprintf(val, sizeof val, "sess%d", i);
            assert_int_equal(shx_envlist_set(&sess, nm, val), SHEXEC_OK);
        }
    }
    for (int i = 0; i < BIG; i += 8) { /* replaced in place */
        snprintf(nm, sizeof nm, "B%06d", i);
        snprintf(val, sizeof val, "sess2-%d", i);
        assert_int_equal(shx_envlist_set(&sess, nm, val), SHEXEC_OK);
    }
    for (int i = 1; i < BIG; i += 10) { /* inherited ones removed */
        snprintf(nm, sizeof nm, "B%06d", i);
        assert_int_equal(shx_envlist_set(&sess, nm, NULL), SHEXEC_OK);
    }
    assert_int_equal(sess.n, BIG + BIG / 4 + BIG / 10);
    for (int i = 0; i < BIG; i++) {
        if (i % 5 == 0) { /* session names removed again */
            snprintf(nm, sizeof nm, "S%06d", i);
            assert_int_equal(shx_envlist_set(&run, nm, NULL), SHEXEC_OK);
        }
        if (i % 7 == 0) {
            snprintf(nm, sizeof nm, "B%06d", i);
            snprintf(val, sizeof val, "run%d", i);
            assert_int_equal(shx_envlist_set(&run, nm, val), SHEXEC_OK);
        }
        snprintf(nm, sizeof nm, "R%06d", i);
        snprintf(val, sizeof val, "r%d", i);
        assert_int_equal(shx_envlist_set(&run, nm, val), SHEXEC_OK);
    }
    shx_globlist deny = SHX_GLOBLIST_INIT, allow = SHX_GLOBLIST_INIT;
    assert_int_equal(shx_globlist_add_default_deny(&deny), SHEXEC_OK);
    for (int i = 3; i < BIG; i += 10) {
        snprintf(nm, sizeof nm, "B%06d", i);
        assert_int_equal(shx_globlist_add(&deny, nm), SHEXEC_OK);
        assert_int_equal(shx_globlist_add(&deny, nm), SHEXEC_OK); /* dedup */
        if (i % 30 == 3)
            assert_int_equal(shx_globlist_add(&allow, nm), SHEXEC_OK);
    }
    assert_int_equal(shx_globlist_add(&deny, "B00012*"), SHEXEC_OK);
    assert_int_equal(shx_globlist_add(&deny, "R0*Z"), SHEXEC_OK); /* fnmatch, matches nothing */
    assert_int_equal(deny.n, 13 + BIG / 10 + 2);

    char **env = NULL;
    assert_int_equal(shx_env_build(&env, (const char *const *)base, &sess, &run, &deny, &allow),
                     SHEXEC_OK);
    double took = now_s() - t0;

    size_t k = 0;
    char want[64];
    for (int i = 0; i < BIG; i++) { /* base order, overridden ones in place */
        if ((i % 10 == 1 && i % 7 != 0) || big_denied(i))
            continue; /* removed by the session, unless the run sets it again */
        if (i % 7 == 0)
            snprintf(want, sizeof want, "B%06d=run%d", i, i);
        else if (i % 8 == 0)
            snprintf(want, sizeof want, "B%06d=sess2-%d", i, i);
        else if (i % 4 == 0)
            snprintf(want, sizeof want, "B%06d=sess%d", i, i);
        else
            snprintf(want, sizeof want, "B%06d=base%d", i, i);
        if (!env[k] || strcmp(env[k], want) != 0)
            fail_msg("entry %zu is \"%s\", expected \"%s\"", k, env[k] ? env[k] : "(end)", want);
        k++;
    }
    for (int i = 0; i < BIG; i++) { /* then the session's new names */
        if (i % 5 == 0)
            continue;
        snprintf(want, sizeof want, "S%06d=s%d", i, i);
        if (!env[k] || strcmp(env[k], want) != 0)
            fail_msg("entry %zu is \"%s\", expected \"%s\"", k, env[k] ? env[k] : "(end)", want);
        k++;
    }
    for (int i = 0; i < BIG; i++) { /* then the run's */
        snprintf(want, sizeof want, "R%06d=r%d", i, i);
        if (!env[k] || strcmp(env[k], want) != 0)
            fail_msg("entry %zu is \"%s\", expected \"%s\"", k, env[k] ? env[k] : "(end)", want);
        k++;
    }
    assert_null(env[k]);
    if (took > time_bound(5.0))
        fail_msg("100,000 variables took %.1f s to set and build (bound: %.0f s)", took,
                 time_bound(5.0));

    shx_env_free(env);
    shx_globlist_free(&deny);
    shx_globlist_free(&allow);
    shx_envlist_free(&sess);
    shx_envlist_free(&run);
    for (int i = 0; i < BIG; i++)
        free(base[i]);
    free(base);
}

/* Literal and prefix globs are looked up, not tried one by one: 20,000 of
 * each against 100,000 names, prefixes of every length from 1 to 8, with
 * "*" special cases, all decided exactly as fnmatch would. */
static void test_many_globs_at_scale(void **state)
{
    (void)state;
    double t0 = now_s();
    char **base = calloc(BIG + 1, sizeof *base);
    assert_non_null(base);
    char nm[48];
    for (int i = 0; i < BIG; i++) {
        snprintf(nm, sizeof nm, "N%07d=v", i);
        base[i] = strdup(nm);
        assert_non_null(base[i]);
    }
    shx_globlist deny = SHX_GLOBLIST_INIT, allow = SHX_GLOBLIST_INIT;
    for (int i = 0; i < 20000; i++) {
        /* literals: N<i> for i % 5 == 0 below 100,000 */
        snprintf(nm, sizeof nm, "N%07d", i * 5);
        assert_int_equal(shx_globlist_add(&deny, nm), SHEXEC_OK);
        /* prefixes that match nothing, of many lengths */
        snprintf(nm, sizeof nm, "X%d*", i);
        assert_int_equal(shx_globlist_add(&deny, nm), SHEXEC_OK);
    }
    /* one prefix that matches names 99,990 .. 99,999, and a full-length one */
    assert_int_equal(shx_globlist_add(&deny, "N009999*"), SHEXEC_OK);
    assert_int_equal(shx_globlist_add(&deny, "N0050001*"), SHEXEC_OK);
    /* an allow prefix readmits 1000 .. 1999 (the denied literals among them) */
    assert_int_equal(shx_globlist_add(&allow, "N0001*"), SHEXEC_OK);
    assert_int_equal(shx_globlist_add(&allow, "N0002000"), SHEXEC_OK);
    char **env = NULL;
    assert_int_equal(shx_env_build(&env, (const char *const *)base, NULL, NULL, &deny, &allow),
                     SHEXEC_OK);
    double took = now_s() - t0;
    size_t k = 0;
    for (int i = 0; i < BIG; i++) {
        int denied = i % 5 == 0 || i >= 99990 || i == 50001;
        int allowed = (i >= 1000 && i <= 1999) || i == 2000;
        if (denied && !allowed)
            continue;
        snprintf(nm, sizeof nm, "N%07d=v", i);
        if (!env[k] || strcmp(env[k], nm) != 0)
            fail_msg("entry %zu is \"%s\", expected \"%s\"", k, env[k] ? env[k] : "(end)", nm);
        k++;
    }
    assert_null(env[k]);
    shx_env_free(env);

    /* "*" denies everything; an allow "*" readmits everything */
    shx_globlist all = SHX_GLOBLIST_INIT;
    assert_int_equal(shx_globlist_add(&all, "*"), SHEXEC_OK);
    assert_int_equal(shx_env_build(&env, (const char *const *)base, NULL, NULL, &all, NULL),
                     SHEXEC_OK);
    assert_null(env[0]);
    shx_env_free(env);
    assert_int_equal(shx_env_build(&env, (const char *const *)base, NULL, NULL, &deny, &all),
                     SHEXEC_OK);
    assert_string_equal(env[BIG - 1], "N0099999=v");
    assert_null(env[BIG]);
    shx_env_free(env);
    if (took > time_bound(5.0))
        fail_msg("40,000 globs over 100,000 names took %.1f s (bound: %.0f s)", took,
                 time_bound(5.0));

    shx_globlist_free(&all);
    shx_globlist_free(&deny);
    shx_globlist_free(&allow);
    for (int i = 0; i < BIG; i++)
        free(base[i]);
    free(base);
}

#define CASE(c) {#c, run_case, NULL, NULL, (void *)&c}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_valid),
        cmocka_unit_test(test_envlist_set_replaces_in_place),
        cmocka_unit_test(test_globlist_add),
        cmocka_unit_test(test_namefilter_match_unterminated),
        cmocka_unit_test(test_env_get),
        cmocka_unit_test(test_build_copies_inputs),
        cmocka_unit_test(test_build_bad_args),
        cmocka_unit_test(test_memo_matches_by_content),
        cmocka_unit_test(test_long_names_with_fnmatch),
        cmocka_unit_test(test_build_at_scale),
        cmocka_unit_test(test_envlist_bounded),
        cmocka_unit_test(test_envlist_and_build_at_100k),
        cmocka_unit_test(test_many_globs_at_scale),
        CASE(inherit_only),
        CASE(run_beats_session_beats_base),
        CASE(removal_marker),
        CASE(removed_name_set_later_is_appended_then),
        CASE(base_duplicates_first_wins),
        CASE(base_duplicate_overridden_once),
        CASE(base_malformed_entries_skipped),
        CASE(default_deny_removes_every_name),
        CASE(deny_applies_to_overrides),
        CASE(allow_readmits),
        CASE(allow_without_deny_changes_nothing),
        CASE(fnmatch_fallback_patterns),
        CASE(infix_and_leading_specials),
        CASE(fnmatch_allow_over_fast_deny),
        CASE(star_denies_everything),
        CASE(replace_mode_null_base),
        CASE(replace_mode_empty_base),
        CASE(empty_everything),
        CASE(order_guarantees),
        CASE(odd_values_copied_verbatim),
    };
    return cmocka_run_group_tests_name("env", tests, NULL, NULL);
}
