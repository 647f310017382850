/*
 * libc_ext.h - the C library's extensions beyond POSIX.1-2008 that glibc
 * added after 2.28: used where the libc has them, the caller's plain POSIX
 * way where not (see libc_ext.c for how the shared library finds them).
 */
#ifndef SHX_LIBC_EXT_H
#define SHX_LIBC_EXT_H

#include <spawn.h>
#include <sys/types.h>

#include "shx_config.h"

/* Each adds its file action where the libc has it (probed at build time,
 * and on glibc present at run time); ENOSYS where not, for the caller's
 * plain POSIX way. Otherwise posix_spawn_file_actions_*'s result. */
int shx_fa_closefrom(posix_spawn_file_actions_t *fa, int from);
int shx_fa_chdir(posix_spawn_file_actions_t *fa, const char *dir);

/*
 * fork() without running the process's pthread_atfork handlers where the
 * libc offers it (glibc 2.34's _Fork), else fork().
 * For a child that runs only async-signal-safe code of the library's own.
 */
pid_t shx_fork_bare(void);

#endif
