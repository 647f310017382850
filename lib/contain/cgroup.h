/*
 * cgroup.h - cgroup v2 directories, for holding a command's every process:
 * finding the host's own cgroup, probing what a parent cgroup allows,
 * making and removing a child cgroup, moving a process into it, listing
 * its members, signalling and killing them and those of the cgroups below
 * it (membership survives setsid and double forks), reading its accounting
 * and writing its limits. The texts are parsed by cgroupfs.h. A cgroup is named by its directory path (at
 * most SHX_CGROUP_PATH_MAX - 1 bytes); every descriptor opened here is
 * close-on-exec and closed before the call returns. What the core calls
 * (removing, moving into, listing, signalling, killing, reading the cost)
 * is declared in contain_hook.h, the rest here.
 *
 * Errors: -1 with errno, as each function lists; where a host would show a
 * message, also a short reason (static storage). Where the build has no
 * /proc (SHX_HAVE_PROCFS 0: not Linux, make check PORTABLE=1) every
 * function fails with ENOSYS, reason "cgroups are not in this build".
 */
#ifndef SHX_CGROUP_H
#define SHX_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

#include "contain/contain_hook.h"

/*
 * The directory of the calling process's cgroup v2 (controller NULL), or
 * of its cgroup in the v1 hierarchy of controller ("memory", "pids",
 * "cpu": hybrid machines), from /proc/self/cgroup and /proc/self/mountinfo,
 * into dir. 0, or -1 with errno and *reason (reason may be NULL): ENOSYS
 * (compiled out), ENOENT (no /proc, no such mount, no such line, the cgroup
 * removed or outside the mount), the errors of open() and read().
 */
int shx_cgroup_self_dir(const char *controller, char dir[SHX_CGROUP_PATH_MAX],
                        const char **reason);

/* What a parent cgroup allows (shx_cgroup_probe). */
typedef struct shx_cgroup_probe {
    int writable;         /* a child cgroup can be made and removed here */
    int kill;             /* children have cgroup.kill (Linux 5.14) */
    int freeze;           /* children have cgroup.freeze (Linux 5.2), the kill fallback */
    unsigned controllers; /* SHX_CGROUP_* available here (cgroup.controllers) */
    unsigned subtree;     /* SHX_CGROUP_* enabled for children (cgroup.subtree_control) */
    const char *reason;   /* why it is unusable, or what it lacks; NULL: nothing */
} shx_cgroup_probe;

/*
 * Probe parent by making a child cgroup (named for this process) and
 * removing it again. 0 when children can be made there and killed (by
 * cgroup.kill, or by the freezer: then reason says so); else -1 with errno
 * and out->reason: ENOENT (parent is no cgroup2 directory), EROFS, EACCES,
 * EPERM (not writable), ENOTSUP (neither cgroup.kill nor cgroup.freeze),
 * ENAMETOOLONG, ENOSYS. out is filled as far as the probe got.
 */
int shx_cgroup_probe_dir(const char *parent, shx_cgroup_probe *out);

/*
 * Make the child cgroup parent/name (mode 0755), its path into dir. name is
 * one path component, unique to the caller. 0, or -1 with errno: EEXIST
 * (name is taken), EINVAL (name empty, ".", ".." or holding '/'),
 * ENAMETOOLONG, and mkdir's (EACCES, EROFS, ENOENT, ENOSPC: too many
 * cgroups, cgroup.max.descendants), ENOSYS.
 */
int shx_cgroup_create(const char *parent, const char *name, char dir[SHX_CGROUP_PATH_MAX]);

/*
 * The kill for kernels without cgroup.kill: freeze dir (the cgroups below
 * it freeze with it; no member can fork while frozen), wait up to wait_ms
 * for the freeze to settle, SIGKILL each member listed in dir or below it,
 * thaw, wait up to wait_ms for them to leave; again while any is listed (a
 * bounded number of rounds; the tree walked within cgtree.h's bounds): on
 * return none is listed (the killed may still be finishing their exit). 0,
 * or -1 with errno: ETIMEDOUT (members still listed after the last round),
 * ENOENT (no cgroup.freeze: Linux before 5.2), ENOMEM, ENOSYS.
 */
int shx_cgroup_kill_frozen(const char *dir, int wait_ms);

/* dir's flat-keyed file's ("key value" lines: memory.events, v1's
 * memory.oom_control) key to *value. 0, or -1 with errno: EINVAL (no such
 * key, or no number), ENOENT, ENOSYS. */
int shx_cgroup_read_key(const char *dir, const char *file, const char *key,
                        unsigned long long *value);

/* Times a fork failed in dir on pids.max (pids.events "max") to *max.
 * 0, or -1 with errno: ENOENT (the pids controller not enabled), EINVAL,
 * ENOSYS. */
int shx_cgroup_read_pids_max(const char *dir, unsigned long long *max);

/*
 * Write value to dir's limit file (memory.max, memory.swap.max, pids.max,
 * cpu.max; one file name). 0, or -1 with errno and *reason: ENOENT (the
 * controller is not enabled for this cgroup), EINVAL (the kernel refused
 * the value, or file is no plain name), EACCES, ENOSYS.
 */
int shx_cgroup_set_limit(const char *dir, const char *file, const char *value,
                         const char **reason);

#endif
