/*
 * testutil.h - helpers shared by the test suites: leak checks on the test
 * process (descriptors, children) and process liveness by pid.
 */
#ifndef SHEXEC_TESTUTIL_H
#define SHEXEC_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shx/platform.h"

/* 1 in a build under AddressSanitizer or ThreadSanitizer (gcc's and
 * clang's ways of saying so), where everything runs several times slower. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TU_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TU_SANITIZED 1
#endif
#endif
#ifndef TU_SANITIZED
#define TU_SANITIZED 0
#endif

/* Number of open descriptors of this process. */
int tu_count_fds(void);
/* Descriptors of record files (a session keeps its runs' for the next ones). */
int tu_count_record_files(void);
/* The descriptor of the prelude a session keeps for its runs, its inode in
 * *ino: -1 when there is none, -2 when there are several. */
int tu_kept_prelude_fd(ino_t *ino);
/* Number of live (unreaped) children of this process's main thread. */
int tu_count_children(void);
/* 1 when pid exists and is not a zombie. */
int tu_pid_alive(pid_t pid);
/* From /proc/PID/stat: the state letter, the process group and the start
 * time (clock ticks since boot). 0, or -1 where pid has no such file. */
int tu_proc_stat(pid_t pid, char *state, pid_t *pgrp, unsigned long long *start);
/* The number after "key:" in /proc/PID/status (pid 0: this process), such
 * as VmHWM (kB) or voluntary_ctxt_switches; -1 where there is none. */
long long tu_proc_status(pid_t pid, const char *key);
/* The number after "key:" on a line of the file at path (a /proc file's
 * "Key:\tvalue" lines); -1 when there is none. */
long long tu_file_field(const char *path, const char *key);
/* Wait up to ms for pid to be gone (dead or zombie); 1 when gone. */
int tu_wait_pid_gone(pid_t pid, int ms);
/* Monotonic clock in ms. */
int64_t tu_now_ms(void);
/* 1 when the suite runs under valgrind (make check VALGRIND=1): everything
 * is 20-50 times slower, and pidfd_open is unknown to valgrind 3.19. */
int tu_under_valgrind(void);
/* Path of a helper program built from test/helpers (static storage). */
const char *tu_helper(const char *name);
/* Make a fresh temporary directory (static storage until the next call). */
const char *tu_mkdtemp(void);
/* rm -rf a directory tree made by tu_mkdtemp. */
void tu_rmtree(const char *dir);

/*
 * Leak guard: call tu_leak_begin() at the start of a test and
 * tu_leak_end() at its end; it fails the test when descriptors or children
 * were left behind.
 */
void tu_leak_begin(void);
void tu_leak_end(void);

/*
 * 1 when this build of the library has `feature` (SHX_PLATFORM_*, see
 * lib/shx/platform.h); else says that the test needs `what`, which is Linux-only
 * and compiled out of this build (make check PORTABLE=1), and returns 0 for
 * the test to skip().
 */
int tu_platform_has(unsigned feature, const char *what);
/* Skip the calling test: `what` is compiled out of this build (TOOLS=0). */
void tu_compiled_out(const char *what);

/* Number of live (unreaped) children of all threads of this process. */
int tu_count_children_all(void);
/* Resident set size of this process in KiB (VmRSS), or -1. */
long tu_rss_kib(void);
/* GET / from the HTTP server on the loopback whose port follows " port " in
 * `text` (Python's http.server says "Serving HTTP on 127.0.0.1 port N"),
 * its reply read to its end, each read bounded by ms: 1 when it answered
 * 200, else 0. */
int tu_http_get(const char *text, int ms);
/* The id of the task that adopted a run's leftovers (shexec_run_leftovers()), or NULL. */
struct shexec_run;
const char *tu_leftover_id(const struct shexec_run *run);

#endif

/*
 * Sharding, for a suite that spends its time waiting: with
 * SHEXEC_TEST_SHARD=K/N in the environment (test/run-tests.sh runs such a
 * suite as N processes at once), a group runs only its tests K, K+N,
 * K+2N, ... (counted from 1); without it, all of them. Declared where
 * cmocka.h came first (this block is outside the guard above, so a file
 * may include this header again after cmocka.h): every suite's
 * cmocka_run_group_tests() goes through it.
 */
#if defined(cmocka_run_group_tests) && !defined(TU_SHARDS_DECLARED)
#define TU_SHARDS_DECLARED 1
int tu_run_group_tests(const char *group, const struct CMUnitTest *tests, size_t n,
                       CMFixtureFunction setup, CMFixtureFunction teardown);
#undef cmocka_run_group_tests
#define cmocka_run_group_tests(group_tests, group_setup, group_teardown)                            \
    tu_run_group_tests(#group_tests, group_tests, sizeof(group_tests) / sizeof((group_tests)[0]), \
                       group_setup, group_teardown)
#endif
