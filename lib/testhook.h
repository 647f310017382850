/*
 * testhook.h - the few internals the engine's test suites need, and
 * nothing else: which wait path a session takes (to test the one without
 * pidfds on a kernel that has them), the sentinel tag and wrapper script (to
 * forge records), and how many runs and tasks a session still holds (to
 * prove nothing is left). Not part of the API; the tests link the static
 * library, so these need no export.
 */
#ifndef SHX_TESTHOOK_H
#define SHX_TESTHOOK_H

#include <stddef.h>
#include <stdint.h>

#include "shexec.h"

/* Wait with pidfds (1, when the build and the kernel have them) or without (0). */
void shx_test_use_pidfd(shexec_session *s, int on);
int shx_test_uses_pidfd(const shexec_session *s);
/* The run's pidfd, -1 when it has none. */
int shx_test_run_pidfd(const shexec_run *r);
/* Take the shell's pidfd from the clone (1, where the kernel gives it) or
 * open it after, as on a kernel before 5.2 (0). For the whole process. */
void shx_test_clone_pidfd(int on);
/* 0: a contained child joins its cgroup by writing cgroup.procs, as on a
 * kernel without clone3's CLONE_INTO_CGROUP; 1: it is born in it again. */
void shx_test_clone_into_cgroup(int on);
/* The start time the spawn pinned for the run's shell (/proc's clock ticks
 * after boot), 0 where it did not. */
unsigned long long shx_test_run_start(const shexec_run *r);
/* The read end of a running run's stream (SHEXEC_STDOUT/STDERR), or -1;
 * stream 0: the host's end of its report channel. */
int shx_test_run_fd(const shexec_run *r, int stream);
/* Whether the run's shell listed its state after the command (a session
 * that keeps it), or was not asked to (a task, persist_env off). */
int shx_test_run_listed(const shexec_run *r);
/* The session's cwd sentinel tag, and the prelude and first line a command
 * of it gets (its launch mode as the session's shell gives it). */
const char *shx_test_sentinel_tag(const shexec_session *s);
const char *shx_test_wrapper_script(shexec_session *s);
/* Runs not yet freed, tasks not yet released, commands the loop drives. */
size_t shx_test_runs(const shexec_session *s);
size_t shx_test_tasks(const shexec_session *s);
size_t shx_test_active(const shexec_session *s);
/* The session's watchdog process, -1 without one. */
int64_t shx_test_watchdog_pid(const shexec_session *s);
/* Tell the watchdog that the group pgid is a command's, its leader started
 * at `start` (a forged claim: the watchdog must prove it before signalling). */
void shx_test_watchdog_claim(shexec_session *s, int64_t pgid, uint64_t start);
/* Watchdogs started from now on wait ms between finding what to signal at
 * the host's death and signalling it (0: not at all). */
void shx_test_watchdog_pause(uint32_t ms);
/* The start time /proc gives pid (clock ticks after boot), 0 when unknown. */
uint64_t shx_test_start_time(int64_t pid);

/* How many loop rounds of s looked for more output without sleeping, each
 * after a round that read some (loop.c). */
uint64_t shx_test_output_spins(const shexec_session *s);

/* How many per-process /proc files (a stat, a children list) the library
 * has read in this process: what finding a command's processes costs. */
unsigned long shx_test_procfs_reads(void);
/* How many times this process listed the reapers an orphaned member can
 * have (itself, its ancestors, init): once, unless one of them died. */
unsigned long shx_test_reaper_listings(void);
/* 1 when /proc shows pid alive in group pgid with signal sig taking its
 * default action (neither blocked, ignored nor caught). */
int shx_test_signal_default(int64_t pid, int64_t pgid, int sig);
/* Whether the kernel's children lists are used (1, where there are any) or
 * ignored (0), to test the way that reads every /proc entry instead. */
void shx_test_procfs_children(int on);

/* What this build has: SHX_PLATFORM_* (platform.h), for tests that need a
 * Linux-only feature to say so and skip where it is compiled out. */
unsigned shx_test_platform(void);

#endif
