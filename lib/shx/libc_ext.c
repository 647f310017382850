/*
 * libc_ext.c - the C library's extensions newer than the oldest glibc the
 * shared library must load on (2.28): posix_spawn's *_np file actions and
 * _Fork (see libc_ext.h).
 *
 * In the shared library on glibc they are not linked: glibc versions its
 * symbols, and a reference to posix_spawn_file_actions_addclosefrom_np
 * would make the library require GLIBC_2.34 to load at all (addchdir_np:
 * 2.29). They are looked up at run time instead, with the dlsym that every
 * glibc has (probe.sh: libdl's, bound by its first version), and used where
 * the running glibc has them. Other libcs (musl) do not version symbols,
 * and the static archive (built with SHX_ARCHIVE) is bound to the glibc it
 * is linked with, whose libc.a has no versioned dlsym: there, what the
 * probe found is linked directly.
 */
#include "shx/libc_ext.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#if SHX_HAVE_GLIBC && defined(SHX_GLIBC_DLSYM) && !defined(SHX_ARCHIVE)
#include <dlfcn.h>
#include <stdatomic.h>

extern void *shx_glibc_dlsym(void *handle, const char *name);
__asm__(".symver shx_glibc_dlsym, dlsym@" SHX_GLIBC_DLSYM);

typedef int (*closefrom_fn)(posix_spawn_file_actions_t *, int);
typedef int (*chdir_fn)(posix_spawn_file_actions_t *, const char *);

/* Looked up once; a race only looks up twice and stores the same value.
 * (void *)1 marks "looked up, absent". */
static void *lookup_once(_Atomic(void *) *cache, const char *name)
{
    void *f = atomic_load_explicit(cache, memory_order_acquire);
    if (!f) {
        f = shx_glibc_dlsym(RTLD_DEFAULT, name);
        if (!f)
            f = (void *)1;
        atomic_store_explicit(cache, f, memory_order_release);
    }
    return f == (void *)1 ? NULL : f;
}

static _Atomic(void *) closefrom_cache, chdir_cache;

int shx_fa_closefrom(posix_spawn_file_actions_t *fa, int from)
{
    closefrom_fn f;
    void *p = lookup_once(&closefrom_cache, "posix_spawn_file_actions_addclosefrom_np");
    if (!p)
        return ENOSYS;
    memcpy(&f, &p, sizeof f); /* a data pointer to a function pointer, as POSIX allows */
    return f(fa, from);
}

int shx_fa_chdir(posix_spawn_file_actions_t *fa, const char *dir)
{
    chdir_fn f;
    void *p = lookup_once(&chdir_cache, "posix_spawn_file_actions_addchdir_np");
    if (!p)
        return ENOSYS;
    memcpy(&f, &p, sizeof f);
    return f(fa, dir);
}

typedef pid_t (*bare_fork_fn)(void);
static _Atomic(void *) bare_fork_cache;

pid_t shx_fork_bare(void)
{
    bare_fork_fn f;
    void *p = lookup_once(&bare_fork_cache, "_Fork"); /* glibc 2.34 */
    if (!p)
        return fork();
    memcpy(&f, &p, sizeof f);
    return f();
}

#else

int shx_fa_closefrom(posix_spawn_file_actions_t *fa, int from)
{
#if SHX_HAVE_ADDCLOSEFROM_NP && (!SHX_HAVE_GLIBC || defined(SHX_ARCHIVE))
    return posix_spawn_file_actions_addclosefrom_np(fa, from);
#else
    (void)fa;
    (void)from;
    return ENOSYS;
#endif
}

int shx_fa_chdir(posix_spawn_file_actions_t *fa, const char *dir)
{
#if SHX_HAVE_ADDCHDIR_NP && (!SHX_HAVE_GLIBC || defined(SHX_ARCHIVE))
    return posix_spawn_file_actions_addchdir_np(fa, dir);
#else
    (void)fa;
    (void)dir;
    return ENOSYS;
#endif
}

pid_t shx_fork_bare(void)
{
#if SHX_HAVE_BARE_FORK && SHX_HAVE_GLIBC && defined(SHX_ARCHIVE)
    return _Fork();
#else
    return fork(); /* a shared library without the versioned dlsym, musl, POSIX.1-2008 */
#endif
}

#endif
