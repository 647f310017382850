/*
 * glob.h - lists of variable-name globs (the environment's deny and allow
 * lists) and matching names against them. The two lists are compiled
 * together, once per use, into a shx_namefilter: literal and NAME_PREFIX*
 * globs are hashed by their literal part, the rest tried one by one.
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

/* Free every glob; the list is SHX_GLOBLIST_INIT afterwards. NULL ok. */
void shx_globlist_free(shx_globlist *g);

/* ---- compiled, to be asked about many names ---- */

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
    uint32_t hash; /* LITERAL, PREFIX: name_hash of lit */
} shx_cglob;

/* A name's NUL-terminated copy for fnmatch, made on first need. buf has room
 * for the name and its NUL; ready is 0 for each new name. */
typedef struct shx_zname {
    char *buf;
    int ready;
} shx_zname;

/*
 * A glob list, compiled. LITERAL and PREFIX globs ("keyed") are in a hash
 * table by their literal part (a literal "AB" and a prefix "AB*" share a
 * hash and are told apart by kind); plen lists the distinct prefix
 * lengths, ascending, so a name is looked up once per length. The others
 * are tried one by one.
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

/*
 * A deny list and its allow list compiled once, to be asked about many
 * names (an environment being built, a run's variables, a shell's whole
 * listing). The one rule every filtered name goes by: a name is dropped
 * when a deny glob matches it and no allow glob does.
 */
typedef struct shx_namefilter {
    shx_globset deny, allow;
    void *owned;  /* the storage shx_namefilter_init allocated, or NULL */
    int active;   /* 0: the deny list is empty, nothing is dropped */
    int need_z;   /* a glob needs fnmatch: matching needs a shx_zname */
} shx_namefilter;

/* Bytes of storage the filter for these lists takes (either may be NULL,
 * an empty list): 0 when the deny list is empty, SIZE_MAX when the lists
 * are too long to compile (count it as out of memory). */
size_t shx_namefilter_size(const shx_globlist *deny, const shx_globlist *allow);

/* Compile the lists into mem: shx_namefilter_size() bytes, aligned for a
 * pointer and a size_t (NULL when that is 0). Nothing to free; the lists
 * and mem must outlive f. */
void shx_namefilter_init_at(shx_namefilter *f, void *mem, const shx_globlist *deny,
                            const shx_globlist *allow);

/* The same in storage of its own: SHEXEC_OK or SHEXEC_ENOMEM (then f drops
 * nothing and needs no free). The lists must outlive f. */
int shx_namefilter_init(shx_namefilter *f, const shx_globlist *deny, const shx_globlist *allow);

/* Does a glob of s match the nlen bytes at name, whose shx_name_hash is h?
 * (The filter's part; ask the filter.) */
int shx_globset_match(const shx_globset *s, const char *name, size_t nlen, uint32_t h,
                      shx_zname *z);

/*
 * 1 when f drops the n bytes at name (not NUL-terminated), else 0. h is
 * shx_name_hash(name, n); z, when f->need_z, has room for n + 1 bytes and
 * ready 0. For a caller that has both already, per name: inline, so an
 * environment build (once per spawn, every variable) pays no more than
 * the matching itself. A filter that is not active has empty sets: 0.
 */
static inline int shx_namefilter_drops_hashed(const shx_namefilter *f, const char *name, size_t n,
                                              uint32_t h, shx_zname *z)
{
    return shx_globset_match(&f->deny, name, n, h, z) &&
           !shx_globset_match(&f->allow, name, n, h, z);
}

/* 1 when f drops the n bytes at name, 0 when not, SHEXEC_ENOMEM (negative:
 * a name of 256 bytes or more needed a copy for fnmatch and malloc failed). */
int shx_namefilter_drops(const shx_namefilter *f, const char *name, size_t n);

/* Free what shx_namefilter_init allocated; f drops nothing afterwards. */
void shx_namefilter_free(shx_namefilter *f);

#endif
