/*
 * contain.h - a session's containment by cgroup v2 (contain.c): the
 * session's own cgroup, made under a parent the host names (or, "auto",
 * under the host's own cgroup, so that whatever its supervisor set there
 * still applies), one child of it per command, and the removal of those
 * children once their processes are gone. A command's shell joins its
 * cgroup before any of the command runs (script.h); membership survives
 * setsid and double forks, so what a command started is found, signalled
 * and killed through it (proc.c). Nothing here knows of runs.
 *
 * Layout: PARENT/shexec-PID-N (the session's; no process of its own) and
 * below it run-M, one per command, and below those whatever cgroups the
 * commands make (at most SHX_CGTREE_DEPTH levels below the session's: its
 * cgroup.max.depth). Every removal here, and the watchdog's, takes a
 * cgroup's whole tree (cgtree.h), deepest first; the session's end, a dead
 * host's stale cgroups and the watchdog first kill the processes anywhere
 * in it.
 */
#ifndef SHX_CONTAIN_H
#define SHX_CONTAIN_H

#include <stdint.h>

#include "shx/buf.h"
#include "shexec.h"

typedef struct shx_contain shx_contain;

/* How long the end of a session waits for killed processes to leave its
 * cgroups, so that they can be removed. */
#define SHX_CONTAIN_FREE_WAIT_MS 1000

/*
 * Make the session's cgroup under parent ("auto": the cgroup the calling
 * process is in) into *out, after ending the trees that sessions of hosts
 * now dead left there (their pid gone: whatever is in them killed, within
 * SHX_CONTAIN_FREE_WAIT_MS for all). 0, or -1 with *reason (static
 * storage: no v2 mount, not writable, no cgroup.kill nor freezer, ...) and
 * errno; *out is then NULL and nothing was made.
 */
int shx_contain_new(shx_contain **out, const char *parent, const char **reason);

/* The session's cgroup directory. */
const char *shx_contain_dir(const shx_contain *c);

/*
 * A command's cgroup is no longer used (its processes were killed or
 * ended, or it holds adopted leftovers no more): removed now with the
 * cgroups the command made below it, or, while killed processes are still
 * on their way out, later (c NULL: now or never). Nothing in it is killed
 * here (a run's v1 cgroups go while another run may have adopted what is
 * in them); the session's end kills whatever is left. Takes dir
 * (malloc'd); NULL: nothing.
 */
void shx_contain_run_done(shx_contain *c, char *dir);

/* The controllers a limit needs (SHEXEC_LIMIT_* of shexec.h map to these). */
enum { SHX_CTRL_MEMORY = 0, SHX_CTRL_PIDS = 1, SHX_CTRL_CPU = 2, SHX_CTRLS = 3 };

/*
 * Whether limit (SHEXEC_LIMIT_*) can bound c's commands: its controller is
 * on for their cgroups in v2, or (hybrid machines) the session has a
 * cgroup in the controller's v1 hierarchy, made now if need be. 0, or -1
 * with *reason (static storage).
 */
int shx_contain_can_limit(shx_contain *c, int limit, const char **reason);

/* 0 when value is one limit (SHEXEC_LIMIT_*) may take, else -1 with
 * *reason: an unknown limit, a CPU limit below 10, a memory limit below 1
 * MiB (0, none, is always valid). */
int shx_contain_limit_valid(int limit, uint64_t value, const char **reason);

/*
 * A fresh cgroup for one command (PARENT/shexec-PID-N/run-M, a malloc'd
 * path into *dir) with its limits written (values by SHEXEC_LIMIT_*, 0:
 * none; a memory limit without a swap limit means no swap): into dir, or,
 * for a controller only v1 has, into a cgroup made for the command in that
 * hierarchy, its path into v1[SHX_CTRL_*] (malloc'd, NULL where none),
 * which the shell joins too (script.h). Cgroups of earlier commands that
 * waited for their last process are removed first where they can be. 0,
 * or -1 with *reason and errno, nothing left made.
 */
int shx_contain_run_make(shx_contain *c, const uint64_t limits[SHEXEC_LIMITS], char **dir,
                         char *v1[SHX_CTRLS], const char **reason);

/*
 * After a command: the limits it ran into (bits 1 << SHEXEC_LIMIT_*: an
 * out-of-memory kill, a fork refused at the process limit), read from its
 * cgroup dir (NULL: handed on) or its v1 cgroups, which are then disposed
 * of as by shx_contain_run_done (v1[] emptied). c NULL: nothing is read.
 */
int shx_contain_run_hits(shx_contain *c, const char *dir, char *v1[SHX_CTRLS]);

/* The limits hit (shx_contain_run_hits) in words, appended to notice
 * after "; " where it has text: "killed: out of memory (limit 64 MiB)". */
void shx_contain_hits_notice(int hits, const uint64_t limits[SHEXEC_LIMITS], shx_buf *notice);

/*
 * End the containment: every process anywhere in the session's cgroup tree
 * (its commands' cgroups, the cgroups below them, the session's own) is
 * killed (cgroup.kill), waited for (at most wait_ms) and the cgroups are
 * removed, deepest first; what cannot be removed in that time is left.
 * Frees c; NULL: nothing.
 */
void shx_contain_free(shx_contain *c, int wait_ms);

#endif
