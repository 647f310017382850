/*
 * glob.h - lists of variable-name globs (the environment's deny and allow
 * lists) and matching names against them. A list is compiled once per
 * environment build into a shx_globset: literal and NAME_PREFIX* globs are
 * hashed by their literal part, the rest tried one by one.
 */
#ifndef SHX_GLOB_H
#define SHX_GLOB_H

#include <stddef.h>
#include <stdint.h>

/* fnmatch(3) patterns matched against whole variable names. */
typedef struct shx_globlist {
    char **globs;
    size_t n, cap;
    uint32_t *index; /* as shx_envlist's: finds a glob already present */
    size_t index_mask;
} shx_globlist;

#define SHX_GLOBLIST_INIT {NULL, 0, 0, NULL, 0}

/* Append a copy of glob; an identical glob already present is ignored.
 * Amortized O(1). SHEXEC_OK, SHEXEC_EINVAL (g NULL, glob NULL or empty),
 * SHEXEC_ENOMEM. */
int shx_globlist_add(shx_globlist *g, const char *glob);

/*
 * Add the default deny list: LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH, DYLD_*,
 * BASH_ENV, ENV, BASH_FUNC_*, SHELLOPTS, BASHOPTS, PROMPT_COMMAND, IFS,
 * CDPATH, GLOBIGNORE. All or nothing: on SHEXEC_ENOMEM g is unchanged.
 */
int shx_globlist_add_default_deny(shx_globlist *g);

/*
 * 1 when any glob of g (NULL: empty list) matches the namelen bytes at name,
 * else 0. name need not be NUL-terminated (it may point into "NAME=VALUE").
 * Returns SHEXEC_ENOMEM (negative) only when a name of 256 bytes or more
 * has to be copied for an fnmatch pattern and malloc fails: compare with 1,
 * not for truth, where a failure must not count as "no match".
 */
int shx_globlist_match(const shx_globlist *g, const char *name, size_t namelen);

/* Free every glob; the list is SHX_GLOBLIST_INIT afterwards. NULL ok. */
void shx_globlist_free(shx_globlist *g);

/* ---- compiled for one build (env.c) ---- */

/* How a glob is matched: by its literal text, as a prefix, suffix or
 * infix, or by fnmatch. */
enum { SHX_GK_LITERAL, SHX_GK_PREFIX, SHX_GK_SUFFIX, SHX_GK_INFIX, SHX_GK_FNMATCH };

/* One glob, classified. */
typedef struct shx_cglob {
    const char *pat; /* the whole pattern, NUL-terminated, for fnmatch */
    const char *lit; /* LITERAL, PREFIX, FNMATCH: the lead any match starts
                        with; SUFFIX, INFIX: the part between the stars */
    size_t litlen;
    int kind;
    uint32_t hash; /* LITERAL, PREFIX: name_hash of lit (set by shx_globset_init) */
} shx_cglob;

/* A name's NUL-terminated copy for fnmatch, made on first need. buf has room
 * for the name and its NUL. */
typedef struct shx_zname {
    char *buf;
    int ready;
} shx_zname;

/*
 * A glob list compiled for one build. LITERAL and PREFIX globs ("keyed")
 * are in a hash table by their literal part (a literal "AB" and a prefix
 * "AB*" share a hash and are told apart by kind); plen lists the distinct
 * prefix lengths, ascending, so a name is looked up once per length. The
 * others are tried one by one.
 */
typedef struct shx_globset {
    const shx_cglob *keyed;
    size_t nkeyed;
    const uint32_t *tab; /* keyed[i] stored as i + 1; mask + 1 slots, at most half full */
    size_t mask;
    const size_t *plen;
    size_t nplen;
    const shx_cglob *other;
    size_t nother;
} shx_globset;

/* Names up to this long get their NUL-terminated copy on the stack. */
#define SHX_ZBUF_STACK 256

/* Slots for a table of n keyed globs: a power of two, at least 2n. */
size_t shx_glob_table_slots(size_t n);
/*
 * Compile the n globs of l into dst (room for n), plen (room for n) and tab
 * (shx_glob_table_slots(n) slots). 1 when one of them needs fnmatch (then
 * matching needs a shx_zname buffer).
 */
int shx_globset_init(shx_globset *s, shx_cglob *dst, size_t *plen, uint32_t *tab,
                     const shx_globlist *l, size_t n);
/* Does a glob of s match the nlen bytes at name, whose shx_name_hash is h? */
int shx_globset_match(const shx_globset *s, const char *name, size_t nlen, uint32_t h,
                      shx_zname *z);

/*
 * A deny list and its allow list compiled once, to be asked about many
 * names (a shell's whole listing): a name is denied when a deny glob
 * matches it and no allow glob does, as in an environment build.
 */
typedef struct shx_namefilter {
    shx_globset deny, allow;
    void *mem; /* NULL: nothing is denied */
    int need_z;
} shx_namefilter;

/* SHEXEC_OK or SHEXEC_ENOMEM (then f denies nothing and needs no free). The
 * lists must outlive f. */
int shx_namefilter_init(shx_namefilter *f, const shx_globlist *deny, const shx_globlist *allow);
/* 1 when f denies the n bytes at name, 0 when not, SHEXEC_ENOMEM (a name of
 * 256 bytes or more needing a copy for fnmatch). */
int shx_namefilter_denies(const shx_namefilter *f, const char *name, size_t n);
void shx_namefilter_free(shx_namefilter *f);

#endif
