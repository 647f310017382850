/*
 * cgroupfs.h - the text of Linux's cgroup v2 files (and where a v1
 * hierarchy of a controller is), parsed: where the host's
 * own cgroup is (from /proc/self/mountinfo and /proc/self/cgroup) and what a
 * cgroup's interface files say (cgroup.events, cgroup.procs, cpu.stat,
 * memory.events, pids.events, cgroup.controllers). Pure: buffers in, values
 * out, no system call, so every case is tested on text; cgroup.c reads the
 * files and calls these. Every function takes (text, len): text need not be
 * NUL-terminated, and a text over SHX_CGROUPFS_MAX_TEXT is refused, so no
 * input makes a parse slow (each is one pass over the text).
 */
#ifndef SHX_CGROUPFS_H
#define SHX_CGROUPFS_H

#include <stddef.h>
#include <sys/types.h>

#include "contain/contain_hook.h"
/* The longest file text parsed (a mountinfo of some 50,000 mounts). */
#define SHX_CGROUPFS_MAX_TEXT (8u << 20)

/*
 * The cgroup2 mount in mountinfo text: its mount point to mount and the
 * path of the hierarchy it shows (mountinfo's root field) to root, both
 * with mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134
 * backslash) decoded. Of several cgroup2 mounts, the first whose root
 * contains self (the process's cgroup path from /proc/self/cgroup; NULL:
 * none preferred), else the first. 0, or -1 with *reason: no cgroup2 mount,
 * a malformed line (of a cgroup2 mount), a text too long, a path too long.
 */
int shx_cgroupfs_mount(const char *text, size_t len, const char *self,
                       char mount[SHX_CGROUP_PATH_MAX], char root[SHX_CGROUP_PATH_MAX],
                       const char **reason);

/*
 * The process's cgroup v2 path from /proc/self/cgroup text: the path of its
 * "0::PATH" line (the cgroup v1 lines "N:controllers:path" are skipped).
 * 0, or -1 with *reason: no 0:: line (no cgroup v2 here), a path marked
 * " (deleted)", one that does not start with '/', a text too long, a path
 * too long.
 */
int shx_cgroupfs_self(const char *text, size_t len, char path[SHX_CGROUP_PATH_MAX],
                      const char **reason);

/*
 * The same for a cgroup v1 hierarchy (machines in "hybrid" mode keep the
 * memory, pids and cpu controllers there): the mount of fstype "cgroup"
 * whose options name controller ("memory"), and the process's path in it
 * (the /proc/self/cgroup line "N:LIST:PATH" whose LIST names it). NULL
 * controller: cgroup v2, as above. Errors as above.
 */
int shx_cgroupfs_v1_mount(const char *text, size_t len, const char *controller, const char *self,
                          char mount[SHX_CGROUP_PATH_MAX], char root[SHX_CGROUP_PATH_MAX],
                          const char **reason);
int shx_cgroupfs_v1_self(const char *text, size_t len, const char *controller,
                         char path[SHX_CGROUP_PATH_MAX], const char **reason);

/*
 * The directory of cgroup path self, seen through a cgroup2 mount of
 * hierarchy path root at mount: mount followed by self's part below root.
 * 0, or -1 with *reason: self is not root nor below it, or holds a ".."
 * (the cgroup lies outside what the mount shows, as in a cgroup namespace
 * entered from outside), or the result is too long.
 */
int shx_cgroupfs_join(const char *mount, const char *root, const char *self,
                      char dir[SHX_CGROUP_PATH_MAX], const char **reason);

/*
 * The value of key in a flat-keyed file ("key value" lines: cgroup.events,
 * cpu.stat, memory.events, pids.events) to *value. 1 when found, 0 when the
 * text has no such key, -1 when the value is no decimal number.
 */
int shx_cgroupfs_key(const char *text, size_t len, const char *key, unsigned long long *value);

/* A file that holds one number (memory.peak, memory.current) to *value:
 * 0, or -1 (no number, or "max"). */
int shx_cgroupfs_number(const char *text, size_t len, unsigned long long *value);

/* The controllers the library uses, as bits. */
enum {
    SHX_CGROUP_CPU = 1 << 0,
    SHX_CGROUP_MEMORY = 1 << 1,
    SHX_CGROUP_PIDS = 1 << 2,
};
/* The SHX_CGROUP_* a space-separated controller list names
 * (cgroup.controllers, cgroup.subtree_control); other names are ignored. */
unsigned shx_cgroupfs_controllers(const char *text, size_t len);

/*
 * The pids of cgroup.procs text (one decimal a line) into out, at most cap
 * of them. The count stored, or -1: a line that is no pid (EINVAL), more
 * than cap pids (ENOBUFS; the first cap are stored), a text too long (E2BIG).
 */
long shx_cgroupfs_pids(const char *text, size_t len, pid_t *out, size_t cap);

#endif
