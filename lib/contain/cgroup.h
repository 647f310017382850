/*
 * cgroup.h - cgroup v2 directories, for holding a command's every process:
 * finding the host's own cgroup, probing what a parent cgroup allows,
 * making and removing a child cgroup, moving a process into it, listing
 * its members, signalling and killing them and those of the cgroups below
 * it (membership survives setsid and double forks), reading its accounting
 * and writing its limits. The texts are parsed by cgroupfs.h. A cgroup is named by its directory path (at
 * most SHX_CGROUP_PATH_MAX - 1 bytes); every descriptor opened here is
 * close-on-exec and closed before the call returns.
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

#include "contain/cgroupfs.h"

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

/* Remove the cgroup dir. 0, or -1 with errno: EBUSY (it still has members
 * or children), ENOENT, ENOSYS, and rmdir's others. */
int shx_cgroup_remove(const char *dir);

/*
 * Move process pid into dir (0: the calling process; a child between fork
 * and exec moves itself, so that nothing it starts is outside). 0, or -1
 * with errno: ESRCH (no such process), ENOENT, EACCES, EBUSY (dir has
 * children with controllers enabled), EOPNOTSUPP, ENOSYS.
 * Async-signal-safe: a child calls it between fork and exec.
 */
int shx_cgroup_move(const char *dir, pid_t pid);

/* 1 when dir has a live member (below it too; cgroup.events "populated"),
 * 0 when not, -1 with errno: ENOENT, EINVAL (unreadable events), ENOSYS. */
int shx_cgroup_populated(const char *dir);

/*
 * dir's member pids (cgroup.procs, not its children's) into out, at most
 * cap: their count, or -1 with errno: ENOBUFS (more than cap: the first cap
 * are stored), ENOENT, EINVAL, E2BIG, ENOMEM, ENOSYS. A member forked or
 * gone while the list is read may be missed or listed.
 */
long shx_cgroup_pids(const char *dir, pid_t *out, size_t cap);

/*
 * Send sig to every member listed in dir and in the cgroups below it (a
 * command may make some: cgtree.h) (e.g. SIGTERM before a grace period; a
 * process forked meanwhile is missed: shx_cgroup_kill is exact), except
 * those in process group except_pgid (> 0: signalled already, by one kill
 * of the group; 0: none excepted). The count signalled (a member gone
 * already not counted), or -1 with errno: ENOENT, ENOMEM, ENOSYS.
 */
long shx_cgroup_signal(const char *dir, int sig, pid_t except_pgid);

/*
 * SIGKILL every member of dir and of the cgroups below it at once: cgroup.kill
 * where the kernel has it, else shx_cgroup_kill_frozen. The members are
 * then dying, not gone: wait for shx_cgroup_populated() == 0. 0, or -1
 * with errno as shx_cgroup_kill_frozen's.
 */
int shx_cgroup_kill(const char *dir, int wait_ms);

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

/* cpu.stat's times, in microseconds (present without any controller). */
typedef struct shx_cgroup_cpu {
    unsigned long long usage_usec, user_usec, system_usec;
} shx_cgroup_cpu;
/* dir's CPU times. 0, or -1 with errno: ENOENT (not available), EINVAL,
 * ENOSYS. */
int shx_cgroup_read_cpu(const char *dir, shx_cgroup_cpu *out);

/* Memory accounting (the memory controller enabled for the cgroup). */
typedef struct shx_cgroup_memory {
    unsigned long long peak;     /* memory.peak in bytes; 0 where absent (Linux < 5.19) */
    unsigned long long max;      /* times memory.max was hit */
    unsigned long long oom;      /* times the cgroup ran out of memory */
    unsigned long long oom_kill; /* processes the OOM killer killed in it */
} shx_cgroup_memory;
/* dir's memory accounting. 0, or -1 with errno: ENOENT (not available: the
 * memory controller is not enabled for it), EINVAL, ENOSYS. */
int shx_cgroup_read_memory(const char *dir, shx_cgroup_memory *out);

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
