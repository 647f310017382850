/*
 * walk.h - a command's processes through the kernel's children lists
 * (procfs.h: shx_procfs_children), for group.c: the members of a group and
 * the processes that left it are found by walking down from the command's
 * own processes, so the cost follows the command's size, not the machine's.
 */
#ifndef SHX_WALK_H
#define SHX_WALK_H

#include <stddef.h>
#include <sys/types.h>

#include "shx/procfs.h"

/* What one walk has still to read: pids, with the start time each must
 * have (0: whoever it is, a child just listed under a process read). */
typedef struct shx_walk {
    pid_t *pid;
    unsigned long long *start;
    size_t n, cap;
} shx_walk;

/* Queue pid (a root, or a child found); 0, or -1 out of memory. */
int shx_walk_push(shx_walk *w, pid_t pid, unsigned long long start);
/*
 * Queue the members of pgid whose parent exited: they were passed to the
 * nearest subreaper among their ancestors, which are this process and its
 * ancestors, or else to init, so those lists are read and each child is
 * asked its group by getpgid() (a system call, no file). Who those reapers
 * are is read once per process and kept (one that dies is skipped, and
 * they are read again next time). 0, or -1 when they cannot be listed or a
 * list cannot be read (/proc mounted with hidepid, an ancestor exiting, no
 * memory): a walk would miss members, and the caller reads all of /proc.
 */
int shx_walk_push_orphans(shx_walk *w, pid_t pgid);
/*
 * Visit every process reachable from the queued roots down the children
 * lists, each once (a root queued with a start time only while it is still
 * that process). visit returns 0 to go on, 1 to end the walk, -1 on
 * failure. 0, or -1 when memory ran out or visit failed.
 */
int shx_walk_run(shx_walk *w, int (*visit)(void *ctx, const shx_pstat *st), void *ctx);
void shx_walk_free(shx_walk *w);
/* root and its descendants into out, breadth first, at most cap of them
 * (the first thread's children lists: a process's children as the shell
 * starts them); how many. */
size_t shx_walk_descendants(pid_t root, pid_t *out, size_t cap);

/* For the tests (testhook.c): how many times a reaper's children were listed. */
unsigned long shx_walk_test_listings(void);

#endif
