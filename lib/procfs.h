/*
 * procfs.h - what Linux's /proc tells about processes, for group.c (members
 * of a group, descendants that left it) and platform.c (this process's
 * descriptors). Where /proc is compiled out (SHX_HAVE_PROCFS 0) or absent at
 * run time (a container, chroot or hardened system), every function reports
 * "nothing known", and the callers take their no-/proc path.
 */
#ifndef SHX_PROCFS_H
#define SHX_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

typedef struct shx_pstat {
    pid_t pid, ppid, pgrp;
    unsigned long long start; /* start time in clock ticks after boot */
} shx_pstat;

/* 1 when /proc lists processes. */
int shx_procfs_available(void);
/* pid's fields; -1 when it is gone, a zombie, or /proc cannot tell. */
int shx_procfs_stat(pid_t pid, shx_pstat *out);
/* 1 when pid lives (not a zombie) in process group pgid. */
int shx_procfs_in_group(pid_t pid, pid_t pgid);

/* Walking the process table: open (-1 without /proc), next pid (0 at the
 * end), close. */
typedef struct shx_procfs_walk {
    void *dir;
} shx_procfs_walk;
int shx_procfs_walk_open(shx_procfs_walk *w);
pid_t shx_procfs_walk_next(shx_procfs_walk *w);
void shx_procfs_walk_close(shx_procfs_walk *w);

/* This process's open descriptors >= from into a malloc'd array; 0, or -1
 * (no /proc: the caller checks descriptors one by one). */
int shx_procfs_fds(int from, int **fds, size_t *n);

#endif
