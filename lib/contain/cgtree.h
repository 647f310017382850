/*
 * cgtree.h - a cgroup and every cgroup below it, taken as one tree: its
 * members signalled or killed wherever they sit in it, its emptiness
 * awaited, the tree removed deepest first. A command may make cgroups below
 * its own, and a process of its uid may move into any cgroup of the tree, so
 * whoever ends a tree walks all of it (cgtree.c).
 *
 * A walk is depth first and bounded: at most SHX_CGTREE_DEPTH levels below
 * the top and SHX_CGTREE_MAX cgroups seen, so that no tree a command makes
 * can hold the caller in a loop or deepen its stack; what lies beyond the
 * bounds is not reached (a removal then leaves it, and the cgroups above
 * it). Nothing here allocates or takes a lock: the watchdog (a fork of a
 * host that may have threads) walks trees too. The caller gives a buffer,
 * at least SHX_CGTREE_BUF bytes, that holds one directory listing and one
 * member list at a time. Where the build has no /proc every call fails with
 * ENOSYS.
 */
#ifndef SHX_CGTREE_H
#define SHX_CGTREE_H

#include <stddef.h>
#include <sys/types.h>

#define SHX_CGTREE_DEPTH 32
#define SHX_CGTREE_MAX 4096
#define SHX_CGTREE_BUF 16384

/*
 * Send sig to each member (cgroup.procs) of dir and of every cgroup below
 * it, except those in process group except_pgid (> 0: signalled already,
 * by one kill of the group; 0: none excepted). The count signalled (a member gone already not counted), or -1 with
 * errno: ENOENT (no dir), EINVAL (buf too small), ENOSYS. A member forked
 * meanwhile may be missed, and a list longer than half of buf loses its
 * tail: shx_cgtree_kill is exact where the kernel has cgroup.kill, and
 * repeats until none is listed where not.
 */
long shx_cgtree_signal(const char *dir, int sig, pid_t except_pgid, char *buf, size_t cap);

/*
 * SIGKILL every member of dir and below: cgroup.kill, where the kernel has
 * it (Linux 5.14), reaches the whole tree in one write. Else rounds of:
 * freeze dir (cgroup.freeze, Linux 5.2: the tree below freezes with it, so
 * that no member forks between the listing and the signal), wait up to
 * wait_ms for the freeze to settle, SIGKILL each member listed anywhere in
 * the tree, thaw, wait up to wait_ms for them to leave; where dir has no
 * cgroup.freeze either (cgroup v1) the same without freezing. The members
 * are then dying, not gone: shx_cgtree_wait_empty. 0, or -1 with errno:
 * ETIMEDOUT (members still listed after the last round), EINVAL, ENOSYS.
 */
int shx_cgtree_kill(const char *dir, int wait_ms, char *buf, size_t cap);

/* The same without trying cgroup.kill (for kernels before Linux 5.14). */
int shx_cgtree_kill_listed(const char *dir, int wait_ms, char *buf, size_t cap);

/*
 * 1 while a process is in dir or below it (cgroup.events "populated"; in
 * cgroup v1, which has no such file, a member listed anywhere in the tree),
 * 0 when none, -1 with errno when dir cannot be read (ENOENT: gone).
 */
int shx_cgtree_populated(const char *dir, char *buf, size_t cap);

/* Wait up to wait_ms for no process to be in dir or below: 0 (also when
 * dir is gone), or -1 with errno ETIMEDOUT. */
int shx_cgtree_wait_empty(const char *dir, int wait_ms, char *buf, size_t cap);

/*
 * Remove every cgroup below dir, deepest first, then dir. Members are not
 * killed (shx_cgtree_kill first). 0 when dir is gone (or was not there), or
 * -1 with errno: EBUSY (a cgroup of the tree still has members, or lies
 * beyond the walk's bounds), EINVAL, ENOSYS, and rmdir's others (the first
 * met); what could be removed is.
 */
int shx_cgtree_remove(const char *dir, char *buf, size_t cap);

/*
 * The end of a tree no one uses any more: killed (shx_cgtree_kill) when
 * anything is in it, waited for up to wait_ms (0: not at all), removed.
 * 0 when dir is gone, else -1 with errno as shx_cgtree_remove's.
 */
int shx_cgtree_end(const char *dir, int wait_ms, char *buf, size_t cap);

#endif
