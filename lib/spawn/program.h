/*
 * program.h - which program a command runs: the session's shell picked and
 * told apart, a script told from a binary, a name found on a PATH. Pure but
 * for the looks at the file system.
 */
#ifndef SHX_PROGRAM_H
#define SHX_PROGRAM_H

#include "shx/buf.h"

/* The first of the NULL-terminated candidate paths that is an executable file, or NULL. */
const char *shx_pick_shell(const char *const *candidates);

/*
 * Whether shell `name` (the word a program's argv runs it by; path: its
 * file, resolved through symlinks, when known here, else NULL) is bash not
 * in POSIX mode (not run as "sh"), which reads a prelude from BASH_ENV: 1
 * or 0. With plain, *plain says whether the file at path is bash or dash,
 * which, started with -c and not interactive, run no startup file but
 * BASH_ENV's (bare.h): 1 or 0 (path NULL or unresolved, or another shell).
 * The path is resolved once for both.
 */
int shx_shell_is_bash(const char *name, const char *path, int *plain);

/* The last component of path (path itself when it ends in '/'). */
const char *shx_base_name(const char *path);

/* 1 when the file at path starts with "#!" (an interpreter runs it). */
int shx_is_script(const char *path);

/*
 * Resolve a program name the way execvp would, using `path_var` (the PATH of
 * the child's environment; NULL means "/usr/bin:/bin"). A name containing a
 * slash is returned as is. Result in out; 0, or -1 when not found.
 */
int shx_find_program(const char *name, const char *path_var, shx_buf *out);

#endif
