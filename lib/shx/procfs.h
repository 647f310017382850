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
    int threads;              /* how many threads it has */
    unsigned long long start; /* start time in clock ticks after boot */
    unsigned long long held;  /* signals 1 to 32 blocked, ignored or caught (signal n at
                                 bit n - 1); all ones when the line did not say */
} shx_pstat;

/* 1 when /proc lists processes. */
int shx_procfs_available(void);
/* pid's fields; -1 when it is gone, a zombie, or /proc cannot tell. */
int shx_procfs_stat(pid_t pid, shx_pstat *out);
/* 1 when pid lives (not a zombie) in process group pgid; its start time
 * then goes to *start unless start is NULL. */
int shx_procfs_in_group(pid_t pid, pid_t pgid, unsigned long long *start);
/* 1 when pid lives in process group pgid and signal sig (1 to 31) would
 * take its default action there: neither blocked, ignored nor caught. */
int shx_procfs_signal_default(pid_t pid, pid_t pgid, int sig);
/* The same of a process already read (shx_procfs_stat), for a caller that
 * checks its other fields too: one read of its stat line. Pure. */
int shx_pstat_signal_default(const shx_pstat *st, int sig);

/* Now, in the clock ticks after boot that shx_pstat.start counts in (0
 * where /proc is not compiled in). */
unsigned long long shx_procfs_ticks_now(void);

/* 1 when the kernel lists each thread's children
 * (/proc/PID/task/TID/children, CONFIG_PROC_CHILDREN). */
int shx_procfs_children_available(void);
/*
 * Append pid's children (of every one of its threads; threads is its
 * thread count from shx_procfs_stat, 1 reads only the main thread's list)
 * to the malloc'd array *v of *n entries and capacity *cap. 0, or -1 when
 * pid is gone or memory ran out (what was appended stays). A child forked
 * or exiting while the list is read may be missed: callers that must see
 * every child read again after signalling.
 */
int shx_procfs_children(pid_t pid, int threads, pid_t **v, size_t *n, size_t *cap);

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

/* For the tests (testhook.c): per-process files read so far; whether the
 * kernel's children lists are used (1) or ignored (0). */
unsigned long shx_procfs_test_reads(void);

/* This process's pid namespace, as the inode of /proc/self/ns/pid: 0 where
 * that cannot be read. Two processes see each other's pids the same way
 * only when theirs is the same. */
unsigned long long shx_procfs_pidns(void);
void shx_procfs_test_children(int on);

#endif
