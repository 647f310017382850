/*
 * test_watchdog.c - shexec_session_set_watchdog(): a host that dies
 * (SIGKILL, a crash in its own callback, exit without freeing) takes every
 * process of its session's runs, tasks and adopted leftovers with it, also
 * those that left their group (setsid); with the setting off they live on.
 * The watchdog never outlives its work, never signals a process it cannot
 * prove the session's (a claim with the wrong start time), and neither
 * keeps nor hurts what the host fork()+exec()s. The host is a real program
 * on the library (helpers/watch_host.c), killed for real.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shexec.h"
#include "testhook.h"
#include "testutil.h"

extern char **environ;

/* The goal: all gone within 1 s of the host's death. The check polls
 * longer, so a miss reports the time it took rather than a stray process. */
#define GOAL_MS 1000
#define POLL_MS 10000

static int slow_build(void)
{
    return tu_under_valgrind() || TU_SANITIZED;
}

static long long read_num(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    long long v = -1;
    if (f) {
        if (fscanf(f, "%lld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static int read_pids(const char *dir, pid_t *pids, int cap)
{
    char path[512];
    snprintf(path, sizeof path, "%s/pids", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int n = 0, pid;
    while (n < cap && fscanf(f, "%d", &pid) == 1)
        pids[n++] = pid;
    fclose(f);
    return n;
}

/* Tell a host that ends by itself to go on (it waits for DIR/go). */
static void write_go(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/go", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("1\n", f);
    assert_int_equal(fclose(f), 0);
}

/* Start the host in mode; returns its pid once DIR/ready exists. */
static pid_t start_host(const char *mode, const char *dir)
{
    char *argv[] = {(char *)tu_helper("watch_host"), (char *)mode, (char *)dir, NULL};
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, argv[0], NULL, NULL, argv, environ), 0);
    int64_t end = tu_now_ms() + 30000;
    while (read_num(dir, "ready") != 1) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            fail_msg("watch_host %s ended before it was ready (status 0x%x)", mode, st);
        if (tu_now_ms() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            fail_msg("watch_host %s was not ready in 30 s", mode);
        }
        usleep(5000);
    }
    return pid;
}

/* Wait for the host's end; *status its wait status. Returns the time of death. */
static int64_t host_dead(pid_t host, int *status)
{
    while (waitpid(host, status, 0) < 0)
        assert_int_equal(errno, EINTR);
    return tu_now_ms();
}

/* Kill each pid still alive (a failed case must not leave sleeps behind). */
static void kill_all(const pid_t *pids, int n)
{
    for (int i = 0; i < n; i++)
        if (pids[i] > 0 && tu_pid_alive(pids[i]))
            kill(pids[i], SIGKILL);
    for (int i = 0; i < n; i++)
        if (pids[i] > 0)
            tu_wait_pid_gone(pids[i], 5000);
}

/* Every pid is gone; returns how long after `dead` the last one went. */
static int64_t all_gone(const pid_t *pids, int n, int64_t dead)
{
    int64_t last = 0;
    for (int i = 0; i < n; i++) {
        if (!tu_wait_pid_gone(pids[i], POLL_MS)) {
            kill_all(pids, n);
            fail_msg("pid %d is still running %d ms after the host died", (int)pids[i], POLL_MS);
        }
        int64_t t = tu_now_ms() - dead;
        if (t > last)
            last = t;
    }
    return last;
}

/* The setsid child of the host's foreground command, when this build can
 * find it (/proc: through its parent); else it is left alone by the
 * watchdog, as documented, and the test ends it. Returns its pid. */
static pid_t escapee_of(const char *dir, int *checked)
{
    pid_t pid = (pid_t)read_num(dir, "escapee");
    assert_true(pid > 0);
    *checked = tu_platform_has(SHX_PLATFORM_PROCFS,
                               "/proc, to find the processes that left their group (setsid)");
    return pid;
}

/*
 * Start the host in mode, end it (SIGKILL unless it ends by itself), and
 * check that its commands' processes and its watchdog are gone; returns
 * the watchdog's pid. The measured time is printed; the 1 s goal is
 * asserted on the plain build only (valgrind and sanitizers slow the host
 * and its shells several-fold).
 */
static pid_t host_dies(const char *mode, int self, int expect_signal, int expect_exit,
                       char *dir_out)
{
    const char *dir = tu_mkdtemp();
    assert_non_null(dir);
    strcpy(dir_out, dir);
    pid_t host = start_host(mode, dir);
    pid_t pids[16];
    int n = read_pids(dir, pids, 14);
    assert_int_equal(n, 8);
    int escapee_checked;
    pid_t escapee = escapee_of(dir, &escapee_checked);
    if (escapee_checked)
        pids[n++] = escapee;
    pid_t wd = (pid_t)read_num(dir, "watchdog");
    assert_true(wd > 0);
    assert_true(tu_pid_alive(wd));
    pids[n++] = wd; /* it never outlives its work */
    if (self)
        write_go(dir);
    else
        kill(host, SIGKILL);
    int st;
    int64_t dead = host_dead(host, &st);
    if (expect_signal) {
        /* a sanitizer reports the crash and exits instead */
        assert_true((WIFSIGNALED(st) && WTERMSIG(st) == expect_signal) ||
                    (TU_SANITIZED && WIFEXITED(st) && WEXITSTATUS(st) != 0));
    } else {
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), expect_exit);
    }
    if (!escapee_checked)
        kill_all(&escapee, 1);
    int64_t took = all_gone(pids, n, dead);
    print_message("watchdog (%s): %d processes and the watchdog gone %lld ms after the host\n",
                  mode, n - 1, (long long)took);
    if (!slow_build())
        assert_true(took <= GOAL_MS);
    return wd;
}

static void test_sigkill_ends_everything(void **state)
{
    (void)state;
    char dir[256];
    host_dies("kill", 0, SIGKILL, 0, dir);
    tu_rmtree(dir);
}

static void test_crash_in_callback_ends_everything(void **state)
{
    (void)state;
    char dir[256];
    host_dies("segv", 1, SIGSEGV, 0, dir);
    tu_rmtree(dir);
}

static void test_exit_without_free_ends_everything(void **state)
{
    (void)state;
    char dir[256];
    host_dies("exit", 1, 0, 0, dir);
    tu_rmtree(dir);
}

/* Turned on after the commands started: they are the session's too. */
static void test_turned_on_late_ends_everything(void **state)
{
    (void)state;
    char dir[256];
    host_dies("late", 0, SIGKILL, 0, dir);
    tu_rmtree(dir);
}

/* Off (the default): today's behaviour, everything outlives the host (a
 * host on process groups: a dead host's cgroups are ended by the next
 * session made beside them, which a suite running alongside may make). */
static void test_off_everything_survives(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    assert_non_null(dir);
    char d[256];
    strcpy(d, dir);
    pid_t host = start_host("off", d);
    assert_int_equal(read_num(d, "watchdog"), -1);
    pid_t pids[16];
    int n = read_pids(d, pids, 15);
    assert_int_equal(n, 8);
    pids[n++] = (pid_t)read_num(d, "escapee");
    assert_true(pids[n - 1] > 0);
    kill(host, SIGKILL);
    int st;
    host_dead(host, &st);
    usleep(1500 * 1000);
    for (int i = 0; i < n; i++)
        if (!tu_pid_alive(pids[i])) {
            kill_all(pids, n);
            fail_msg("pid %d ended with the host although the watchdog is off", (int)pids[i]);
        }
    kill_all(pids, n);
    tu_rmtree(d);
}

/* What the host fork()+exec()s holds no copy of the pipe (the watchdog
 * still sees the host's end) and is not the session's (never signalled). */
static void test_fork_exec_of_host_neither_kept_nor_killed(void **state)
{
    (void)state;
    char dir[256];
    pid_t wd = host_dies("forkexec", 0, SIGKILL, 0, dir);
    pid_t unrelated = (pid_t)read_num(dir, "unrelated");
    assert_true(unrelated > 0);
    assert_false(tu_pid_alive(wd));
    int alive = tu_pid_alive(unrelated);
    kill(unrelated, SIGKILL);
    tu_wait_pid_gone(unrelated, 5000);
    assert_true(alive);
    tu_rmtree(dir);
}

/* A group claimed with a start time that is not its leader's (as a reused
 * pid would be) is never signalled; the same claim with the right start
 * time is, which shows the claim reached the watchdog. Without /proc there
 * are no start times to check after the host's death: there the library's
 * own pin (the leader kept unreaped while the group is followed) is all the
 * proof, and a claim past it is taken as it is. */
static void test_pid_reuse_never_signalled(void **state)
{
    (void)state;
    int can_prove = tu_platform_has(SHX_PLATFORM_PROCFS,
                                    "/proc, to tell a reused pid by its start time");
    for (int right = !can_prove; right < 2; right++) {
        char dir[256];
        pid_t wd = host_dies(right ? "claim-right" : "claim-wrong", 0, SIGKILL, 0, dir);
        assert_false(tu_pid_alive(wd));
        pid_t unrelated = (pid_t)read_num(dir, "unrelated");
        assert_true(unrelated > 0);
        /* a signal sent is not yet a process gone: on a loaded machine the
         * sleep may take a moment to be scheduled and die */
        int alive = right ? !tu_wait_pid_gone(unrelated, 3000) : tu_pid_alive(unrelated);
        kill(unrelated, SIGKILL);
        tu_wait_pid_gone(unrelated, 5000);
        if (right)
            assert_false(alive);
        else
            assert_true(alive);
        tu_rmtree(dir);
    }
}

/* ---- in this process: the setting's life ------------------------------------ */

static void test_setting_errors_and_life(void **state)
{
    (void)state;
    tu_leak_begin();
    assert_int_equal(shexec_session_set_watchdog(NULL, 1), SHEXEC_EINVAL);
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    assert_int_equal(shx_test_watchdog_pid(s), -1);
    assert_int_equal(shexec_session_set_watchdog(s, 0), SHEXEC_OK); /* off already */
    assert_int_equal(shexec_session_set_watchdog(s, 1), SHEXEC_OK);
    int64_t wd = shx_test_watchdog_pid(s);
    assert_true(wd > 0);
    assert_int_equal(shexec_session_set_watchdog(s, 1), SHEXEC_OK); /* on already: the same one */
    assert_int_equal(shx_test_watchdog_pid(s), wd);
    assert_int_equal(tu_count_children(), 1);

    /* commands run as ever, and a task outlives the watchdog turned off */
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "echo hi; exit 3"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_exit_code(r), 3);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "hi\n");
    shexec_run_free(r);
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_new(&r, s, "sleep 1000"), SHEXEC_OK);
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    pid_t task_pid = (pid_t)shexec_run_pid(r);
    assert_int_equal(shexec_session_set_watchdog(s, 0), SHEXEC_OK);
    assert_int_equal(shx_test_watchdog_pid(s), -1);
    assert_false(tu_pid_alive((pid_t)wd)); /* reaped: not even a zombie */
    usleep(100 * 1000);
    assert_true(tu_pid_alive(task_pid));
    assert_false(shexec_run_state(r) > SHEXEC_STATE_RUNNING);

    /* on again, then a normal free: the watchdog is reaped, nothing leaks */
    assert_int_equal(shexec_session_set_watchdog(s, 1), SHEXEC_OK);
    wd = shx_test_watchdog_pid(s);
    assert_true(wd > 0 && tu_pid_alive((pid_t)wd));
    shexec_session_free(s);
    assert_false(tu_pid_alive((pid_t)wd));
    assert_false(tu_pid_alive(task_pid));
    tu_leak_end();
}

/* Start times come from /proc, and only where this build has it: the
 * plain path reads none (every command's group is sent without one). */
static void test_start_times_only_with_proc(void **state)
{
    (void)state;
    int have_proc = (shx_test_platform() & SHX_PLATFORM_PROCFS) != 0;
    uint64_t start = shx_test_start_time((int64_t)getpid());
    print_message("start time of this process: %llu (/proc in this build: %d)\n",
                  (unsigned long long)start, have_proc);
    assert_int_equal(start != 0, have_proc);
}

/* watch_host MODE runs one process of interest (DIR/pids); the host is
 * killed, and that process must be gone. */
static void one_process_ends_with_host(const char *mode)
{
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "/proc, to find what left the group"))
        skip();
    const char *dir = tu_mkdtemp();
    assert_non_null(dir);
    pid_t host = start_host(mode, dir);
    pid_t pid;
    assert_int_equal(read_pids(dir, &pid, 1), 1);
    kill(host, SIGKILL);
    int st;
    host_dead(host, &st);
    int gone = tu_wait_pid_gone(pid, POLL_MS);
    if (!gone)
        kill_all(&pid, 1);
    tu_rmtree(dir);
    assert_true(gone);
}

/* A member that leaves its group (setsid) after the watchdog has looked at
 * the processes, and before it signals them, is signalled on its own: the
 * group's signal no longer reaches it. */
static void test_member_leaving_late_is_signalled(void **state)
{
    (void)state;
    one_process_ends_with_host("late-setsid");
}

/* A process that left the group and ignores SIGTERM, whose parent the
 * SIGTERM ends: nothing links it to the command in the later looks, but
 * the watchdog remembers it signalled it and sends it SIGKILL too. */
static void test_orphan_ignoring_term_is_killed(void **state)
{
    (void)state;
    one_process_ends_with_host("term-ignored");
}

/* A watchdog killed from outside: the session goes on without one, and can
 * start a new one. */
static void test_watchdog_killed_from_outside(void **state)
{
    (void)state;
    tu_leak_begin();
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    assert_int_equal(shexec_session_set_watchdog(s, 1), SHEXEC_OK);
    int64_t wd = shx_test_watchdog_pid(s);
    assert_int_equal(kill((pid_t)wd, SIGKILL), 0);
    assert_true(tu_wait_pid_gone((pid_t)wd, 5000)); /* a zombie of ours now */
    for (int i = 0; i < 3; i++) {
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, s, "true"), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        assert_int_equal(shexec_run_exit_code(r), 0);
        shexec_run_free(r);
    }
    assert_int_equal(shx_test_watchdog_pid(s), -1); /* noticed and reaped */
    assert_int_equal(shexec_session_set_watchdog(s, 1), SHEXEC_OK);
    assert_true(shx_test_watchdog_pid(s) > 0);
    shexec_session_free(s);
    tu_leak_end();
}

/* Commands on process groups each tell the watchdog of their group; it
 * drains those messages every few milliseconds instead of waking for each,
 * and learns every one (the group of the last is ended when the session
 * ends its command: nothing is lost or left behind). */
static void test_drained_in_periods(void **state)
{
    (void)state;
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "/proc, to count the watchdog's wake-ups"))
        return;
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    assert_int_equal(shexec_session_set_containment(s, "off"), SHEXEC_OK);
    assert_int_equal(shexec_session_set_watchdog(s, 1), SHEXEC_OK);
    int64_t wd = shx_test_watchdog_pid(s);
    long long before = tu_proc_status((pid_t)wd, "voluntary_ctxt_switches");
    assert_true(before >= 0);
    enum { RUNS = 100 };
    int64_t t0 = tu_now_ms();
    for (int i = 0; i < RUNS; i++) {
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, s, "true"), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        assert_int_equal(shexec_run_exit_code(r), 0);
        shexec_run_free(r);
    }
    int64_t took = tu_now_ms() - t0;
    long long woke = tu_proc_status((pid_t)wd, "voluntary_ctxt_switches") - before;
    print_message("watchdog: woke %lld times for %d commands in %lld ms\n", woke, RUNS,
                  (long long)took);
    /* a wake-up at most each 20 ms period while messages come, two where a
     * period brought only one: measured where a period holds four commands
     * or more (about 25 wake-ups at most, against 100 for one each); a build
     * slower than that is not (valgrind: each command alone in its period) */
    if (took < RUNS * 20 / 4)
        assert_true(woke < RUNS / 2);
    assert_int_equal(shx_test_watchdog_pid(s), wd); /* the same one all along */
    shexec_session_free(s);
    assert_true(tu_wait_pid_gone((pid_t)wd, 5000)); /* told to go, it went */
}

/* WATCHDOG=0: turning it on fails, clearly, and changes nothing. */
static void test_compiled_out(void **state)
{
    (void)state;
    tu_leak_begin();
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    assert_int_equal(shexec_session_set_watchdog(s, 1), SHEXEC_ESYS);
    assert_non_null(strstr(shexec_session_errmsg(s), "no watchdog"));
    assert_int_equal(shx_test_watchdog_pid(s), -1);
    assert_int_equal(shexec_session_set_watchdog(s, 0), SHEXEC_OK);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "echo ok"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_exit_code(r), 0);
    shexec_run_free(r);
    shexec_session_free(s);
    tu_leak_end();
}

int main(void)
{
    if (!tu_platform_has(SHX_PLATFORM_WATCHDOG, "the watchdog")) {
        const struct CMUnitTest compiled_out[] = {cmocka_unit_test(test_compiled_out)};
        return cmocka_run_group_tests(compiled_out, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_setting_errors_and_life),
        cmocka_unit_test(test_watchdog_killed_from_outside),
        cmocka_unit_test(test_drained_in_periods),
        cmocka_unit_test(test_start_times_only_with_proc),
        cmocka_unit_test(test_sigkill_ends_everything),
        cmocka_unit_test(test_member_leaving_late_is_signalled),
        cmocka_unit_test(test_orphan_ignoring_term_is_killed),
        cmocka_unit_test(test_crash_in_callback_ends_everything),
        cmocka_unit_test(test_exit_without_free_ends_everything),
        cmocka_unit_test(test_turned_on_late_ends_everything),
        cmocka_unit_test(test_off_everything_survives),
        cmocka_unit_test(test_fork_exec_of_host_neither_kept_nor_killed),
        cmocka_unit_test(test_pid_reuse_never_signalled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
