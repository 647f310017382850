/*
 * test_drain.c - the output of what a command leaves behind: after the
 * shell exits, processes it left that still hold its output are read as
 * the command's own until they end or stay quiet for the drain
 * (shexec_session_set_leftovers_drain_ms), as `bash -c` read to the end of
 * its output has them; what still runs is then adopted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shexec.h"
#include "testutil.h"

static int setup(void **state)
{
    tu_leak_begin();
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    shexec_session_set_kill_grace_ms(s, 500);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    shexec_session_free(*state);
    tu_leak_end();
    return 0;
}

/* Run cmd to its end; the caller frees the run. */
static shexec_run *exec_cmd(shexec_session *s, const char *cmd)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    return r;
}

static const char *out_of(shexec_run *r)
{
    return shexec_run_output(r, SHEXEC_STDOUT, NULL);
}

/* The adopted task of r's leftovers (taken by the caller), or NULL. */
static shexec_task *take_leftovers(shexec_session *s, shexec_run *r)
{
    shexec_task *t = NULL;
    const char *id = tu_leftover_id(r);
    if (id)
        assert_int_equal(shexec_session_take_task(&t, s, id), SHEXEC_OK);
    return t;
}

static void test_setting(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_leftovers_drain_ms(s), SHEXEC_DEFAULT_LEFTOVERS_DRAIN_MS);
    assert_int_equal(shexec_session_leftovers_drain_ms(NULL), SHEXEC_DEFAULT_LEFTOVERS_DRAIN_MS);
    assert_int_equal(shexec_session_set_leftovers_drain_ms(s, SHEXEC_MAX_LEFTOVERS_DRAIN_MS + 1),
                     SHEXEC_EINVAL);
    assert_non_null(strstr(shexec_session_errmsg(s), "at most"));
    assert_int_equal(shexec_session_leftovers_drain_ms(s), SHEXEC_DEFAULT_LEFTOVERS_DRAIN_MS);
    assert_int_equal(shexec_session_set_leftovers_drain_ms(s, 0), SHEXEC_OK);
    assert_int_equal(shexec_session_leftovers_drain_ms(s), 0);
    assert_int_equal(shexec_session_set_leftovers_drain_ms(s, SHEXEC_MAX_LEFTOVERS_DRAIN_MS), SHEXEC_OK);
    assert_int_equal(shexec_session_set_leftovers_drain_ms(NULL, 5), SHEXEC_EINVAL);
}

/*
 * What a command's short-lived background processes print just after the
 * shell exits is the command's output, every time: a background echo, a
 * process substitution's reader, a subshell a moment late.
 */
static void test_late_lines_are_the_commands(void **state)
{
    shexec_session *s = *state;
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "/proc, to follow the group after the shell"))
        skip();
    static const struct {
        const char *cmd, *want;
    } cases[] = {
        {"echo word &", "word\n"},
        {"seq 3 > >(tac)", "3\n2\n1\n"},
        {"{ sleep 0.05; echo late; } &", "late\n"},
        {"echo first; (sleep 0.02; echo second >&2) &", "first\n"},
    };
    /* The processes end within milliseconds, and the run with them: the
     * drain only bounds how long one may be held back. A machine loaded
     * by other suites can keep a process from the processor for longer
     * than the default 100 ms, which would hand its exit to a task. */
    assert_int_equal(shexec_session_set_leftovers_drain_ms(s, 1000), SHEXEC_OK);
    int rounds = tu_under_valgrind() ? 5 : 100;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        for (int i = 0; i < rounds; i++) {
            int64_t t0 = tu_now_ms();
            shexec_run *r = exec_cmd(s, cases[c].cmd);
            int64_t took = tu_now_ms() - t0;
            if (strcmp(out_of(r), cases[c].want) != 0)
                fail_msg("%s, round %d: stdout \"%s\", not \"%s\"", cases[c].cmd, i, out_of(r),
                         cases[c].want);
            assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
            assert_int_equal(shexec_run_exit_code(r), 0);
            /* nothing was left to adopt: they ended within the drain */
            if (shexec_run_leftovers(r, NULL) != SHEXEC_LEFTOVERS_NONE)
                fail_msg("%s, round %d: leftovers %d after %lld ms", cases[c].cmd, i,
                         shexec_run_leftovers(r, NULL), (long long)took);
            if (c == 3)
                assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "second\n");
            shexec_run_free(r);
        }
    }
}

/* Without a drain the run ends at the shell's exit and the late line is
 * the adopted task's, as before. */
static void test_no_drain(void **state)
{
    shexec_session *s = *state;
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "/proc, to adopt leftovers"))
        skip();
    assert_int_equal(shexec_session_set_leftovers_drain_ms(s, 0), SHEXEC_OK);
    shexec_run *r = exec_cmd(s, "{ sleep 1; echo late; } & echo now");
    assert_string_equal(out_of(r), "now\n");
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    shexec_task *t = take_leftovers(s, r);
    assert_non_null(t);
    shexec_run_free(r);
    int64_t end = tu_now_ms() + 20000;
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 100) >= 0);
    }
    assert_string_equal(shexec_run_output(shexec_task_run(t), SHEXEC_STDOUT, NULL), "late\n");
    shexec_task_free(t);
}

/*
 * What stays running returns within the drain, adopted: `sleep 30 &` (no
 * output at all) and a server (its first lines, once it has printed them
 * within the drain, are the run's). The run's timeout, shorter than the
 * drain, does not end it: its shell exited in time.
 */
static void test_what_runs_on_is_adopted(void **state)
{
    shexec_session *s = *state;
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "/proc, to adopt leftovers"))
        skip();
    /* a drain of 2 s after a shell that exits within its 1 s timeout: the
     * run goes on past the timeout, which no longer applies */
    assert_int_equal(shexec_session_set_leftovers_drain_ms(s, 2000), SHEXEC_OK);
    int64_t t0 = tu_now_ms();
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "sleep 30 & echo $!"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 1000), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    int64_t took = tu_now_ms() - t0;
    assert_true(took >= 1000 && took < 25000); /* past the timeout; not the sleep's 30 s */
    int pid = atoi(out_of(r));
    assert_true(pid > 0);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(r), 0);
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    shexec_task *t = take_leftovers(s, r);
    assert_non_null(t);
    shexec_run_free(r);
    assert_true(tu_pid_alive(pid));
    shexec_task_free(t); /* ends it */
    assert_true(tu_wait_pid_gone(pid, 5000));

    assert_int_equal(shexec_session_set_leftovers_drain_ms(s, SHEXEC_DEFAULT_LEFTOVERS_DRAIN_MS),
                     SHEXEC_OK);
    t0 = tu_now_ms();
    r = exec_cmd(s, "python3 -u -m http.server 0 --bind 127.0.0.1 & echo started");
    assert_true(tu_now_ms() - t0 < 10000);
    assert_int_equal(strncmp(out_of(r), "started\n", 8), 0);
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    t = take_leftovers(s, r);
    assert_non_null(t);
    /* the server's first line is in the run's output or, if it came after
     * the drain, in its task's: never lost between the two */
    int64_t end = tu_now_ms() + 20000;
    while (!strstr(out_of(r), "Serving HTTP") &&
           !strstr(shexec_run_output(shexec_task_run(t), SHEXEC_STDOUT, NULL), "Serving HTTP")) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 100) >= 0);
    }
    shexec_run_free(r);
    shexec_task_free(t);
}

/* A leftover that never stops printing does not hold the run past ten
 * drains: it is adopted, what it printed until then the run's. */
static void test_chatty_leftover_capped(void **state)
{
    shexec_session *s = *state;
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "/proc, to adopt leftovers"))
        skip();
    assert_int_equal(shexec_session_set_leftovers_drain_ms(s, 50), SHEXEC_OK);
    int64_t t0 = tu_now_ms();
    shexec_run *r = exec_cmd(s, "while :; do echo tick; sleep 0.01; done &");
    assert_true(tu_now_ms() - t0 < 10000);
    assert_non_null(strstr(out_of(r), "tick\n"));
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    shexec_task *t = take_leftovers(s, r);
    assert_non_null(t);
    shexec_run_free(r);
    shexec_task_free(t);
}

/* With the leftovers policy set to kill, what runs on after the drain is
 * killed, what it printed first kept. */
static void test_killed_after_the_drain(void **state)
{
    shexec_session *s = *state;
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "/proc, to follow the group after the shell"))
        skip();
    assert_int_equal(shexec_session_set_on_leftovers(s, SHEXEC_ON_LEFTOVERS_KILL), SHEXEC_OK);
    shexec_run *r = exec_cmd(s, "{ echo early; exec sleep 30; } & echo $! >&2");
    assert_string_equal(out_of(r), "early\n");
    int pid = atoi(shexec_run_output(r, SHEXEC_STDERR, NULL));
    assert_true(pid > 0);
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_KILLED);
    assert_true(tu_wait_pid_gone(pid, 5000));
    shexec_run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_setting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_lines_are_the_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_drain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_what_runs_on_is_adopted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chatty_leftover_capped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_after_the_drain, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
