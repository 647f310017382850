/*
 * test_longrun.c - commands that outlive their call: yield, background on
 * timeout, the idle timeout, finding a command that waits for input (real
 * programs: bash's read, Python's input() and REPL, sudo, git over http,
 * less), following a task (shexec_task_watch: quiet, its end, a wait for
 * input), reading a yielded run's new output, what a host that did not
 * pump comes back to, and the agent environment preset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "loop/inputwait.h"
#include "shexec.h"
#include "testutil.h"

#define PY "/usr/bin/python3"

static int setup(void **state)
{
    tu_leak_begin();
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    shexec_session_set_kill_grace_ms(s, 500);
    /* looks after 300 ms of silence: the tests' commands wait a second or two */
    assert_int_equal(shexec_session_set_input_look_ms(s, 300), SHEXEC_OK);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    shexec_session_free(*state);
    tu_leak_end();
    return 0;
}

static shexec_run *new_run(shexec_session *s, const char *cmd)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    return r;
}

static const char *out_of(shexec_run *r)
{
    size_t n;
    return shexec_run_output(r, SHEXEC_STDOUT, &n);
}

/* Pump the loop until r has finished. */
static void wait_end(shexec_session *s, shexec_run *r)
{
    int64_t end = tu_now_ms() + 30000;
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 1000) >= 0);
    }
}

/* The task a yielded run goes on as, taken by the host. */
static shexec_task *task_of(shexec_session *s, shexec_run *r)
{
    const char *id = NULL;
    assert_int_not_equal(shexec_run_yielded(r, &id), SHEXEC_YIELD_NONE);
    assert_non_null(id);
    shexec_task *t = NULL;
    assert_int_equal(shexec_session_take_task(&t, s, id), SHEXEC_OK);
    assert_ptr_equal(shexec_task_run(t), r);
    return t;
}

static void test_yield_returns_running_then_task_finishes(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = new_run(s, "echo a; sleep 2; echo b; exit 3");
    assert_int_equal(shexec_run_set_yield_ms(r, 300), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    /* back with the command still running, the output so far kept */
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_RUNNING);
    assert_string_equal(out_of(r), "a\n");
    const char *id = NULL;
    assert_int_equal(shexec_run_yielded(r, &id), SHEXEC_YIELD_TIME);
    assert_non_null(strstr(shexec_run_notice(r), id));
    shexec_task *t = task_of(s, r);
    wait_end(s, r);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(r), 3);
    size_t n;
    /* the task reads what came after the yield */
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, &n), "b\n");
    assert_string_equal(out_of(r), "a\nb\n");
    /* the run handle stays the host's until freed; the task owns the run */
    shexec_run_free(r);
    shexec_task_free(t);
}

static void test_yield_keeps_timeout_as_lifetime_cap(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = new_run(s, "sleep 30");
    assert_int_equal(shexec_run_set_yield_ms(r, 200), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 1200), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_RUNNING);
    pid_t pid = (pid_t)shexec_run_pid(r);
    wait_end(s, r);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    assert_int_equal(shexec_run_deadline(r), SHEXEC_DEADLINE_TIMEOUT);
    assert_false(tu_pid_alive(pid));
    /* the handle freed first, the session's task goes with the session */
    shexec_run_free(r);
}

static void test_yield_does_not_move_the_session(void **state)
{
    shexec_session *s = *state;
    char before[4096];
    snprintf(before, sizeof before, "%s", shexec_session_cwd(s));
    shexec_run *r = new_run(s, "sleep 0.6; cd /tmp");
    assert_int_equal(shexec_run_set_yield_ms(r, 100), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    shexec_task *t = task_of(s, r);
    wait_end(s, r);
    assert_int_equal(shexec_run_exit_code(r), 0);
    assert_string_equal(shexec_session_cwd(s), before);
    assert_non_null(strstr(shexec_run_notice(r), "not taken"));
    shexec_task_free(t);
    shexec_run_free(r);
}

/* Started in the host's loop: the run becomes a task at a round's end. */
static void test_started_run_yields_in_host_loop(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = new_run(s, "echo a; sleep 3; echo b");
    assert_int_equal(shexec_run_set_yield_ms(r, 200), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    int64_t end = tu_now_ms() + 20000;
    while (shexec_run_yielded(r, NULL) == SHEXEC_YIELD_NONE &&
           shexec_run_state(r) == SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 1000) >= 0);
    }
    assert_int_equal(shexec_run_yielded(r, NULL), SHEXEC_YIELD_TIME);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_RUNNING);
    wait_end(s, r);
    assert_string_equal(out_of(r), "a\nb\n");
    shexec_run_free(r);
}

/* The same in a host's own poll() loop (pollfds, process). */
static void test_started_run_yields_in_own_poll_loop(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = new_run(s, "echo a; sleep 3; echo b");
    assert_int_equal(shexec_run_set_yield_ms(r, 200), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    int64_t end = tu_now_ms() + 20000;
    while (shexec_run_state(r) == SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() < end);
        struct pollfd fds[16];
        int32_t timeout = -1;
        int n = shexec_session_pollfds(fds, 16, &timeout, s);
        assert_true(n >= 0 && n <= 16);
        assert_true(poll(fds, (nfds_t)n, timeout) >= 0);
        assert_true(shexec_session_process(s, fds, (uint32_t)n) >= 0);
    }
    assert_int_equal(shexec_run_yielded(r, NULL), SHEXEC_YIELD_TIME);
    assert_string_equal(out_of(r), "a\nb\n");
    shexec_run_free(r);
}

static void test_quick_command_does_not_yield(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = new_run(s, "cd /tmp && echo ok");
    assert_int_equal(shexec_run_set_yield_ms(r, 10000), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_yielded(r, NULL), SHEXEC_YIELD_NONE);
    assert_string_equal(shexec_session_cwd(s), "/tmp");
    shexec_run_free(r);
}

static void test_background_on_timeout(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = new_run(s, "sleep 0.8; echo done");
    assert_int_equal(shexec_run_set_timeout_ms(r, 200), SHEXEC_OK);
    assert_int_equal(shexec_run_set_background_on_timeout(r, 20000), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_RUNNING);
    assert_int_equal(shexec_run_yielded(r, NULL), SHEXEC_YIELD_TIMEOUT);
    assert_non_null(strstr(shexec_run_notice(r), "its timeout passed"));
    wait_end(s, r);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_string_equal(out_of(r), "done\n");
    shexec_run_free(r);

    /* the cap ends it in the background */
    r = new_run(s, "sleep 30");
    assert_int_equal(shexec_run_set_timeout_ms(r, 200), SHEXEC_OK);
    assert_int_equal(shexec_run_set_background_on_timeout(r, 900), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_yielded(r, NULL), SHEXEC_YIELD_TIMEOUT);
    wait_end(s, r);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    shexec_run_free(r);

    /* a session default, and without it the timeout ends the command */
    assert_int_equal(shexec_session_set_background_on_timeout(s, 5000), SHEXEC_OK);
    assert_int_equal(shexec_session_background_on_timeout(s), 5000);
    r = new_run(s, "sleep 30");
    assert_int_equal(shexec_run_set_timeout_ms(r, 200), SHEXEC_OK);
    assert_int_equal(shexec_run_set_background_on_timeout(r, 0), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    assert_int_equal(shexec_run_yielded(r, NULL), SHEXEC_YIELD_NONE);
    shexec_run_free(r);
}

static void test_idle_timeout_ends_silent_command(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = new_run(s, "echo a; sleep 30");
    assert_int_equal(shexec_run_set_idle_timeout_ms(r, 500, SHEXEC_IDLE_END), SHEXEC_OK);
    int64_t t0 = tu_now_ms();
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_true(tu_now_ms() - t0 < 20000);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    assert_int_equal(shexec_run_deadline(r), SHEXEC_DEADLINE_IDLE);
    assert_string_equal(out_of(r), "a\n");
    shexec_run_free(r);
}

static void test_idle_timeout_spares_steady_output(void **state)
{
    shexec_session *s = *state;
    /* output every 0.1 s for 1.5 s under a 700 ms idle timeout */
    assert_int_equal(shexec_session_set_idle_timeout_ms(s, 700, SHEXEC_IDLE_END), SHEXEC_OK);
    int action = -1;
    assert_int_equal(shexec_session_idle_timeout_ms(s, &action), 700);
    assert_int_equal(action, SHEXEC_IDLE_END);
    shexec_run *r = new_run(s, "i=0; while [ $i -lt 15 ]; do echo x; sleep 0.1; i=$((i+1)); done");
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_deadline(r), SHEXEC_DEADLINE_NONE);
    shexec_run_free(r);
    assert_int_equal(shexec_session_set_idle_timeout_ms(s, 10, 7), SHEXEC_EINVAL);
}

static void test_idle_timeout_yields(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = new_run(s, "echo a; sleep 1; echo b");
    assert_int_equal(shexec_run_set_idle_timeout_ms(r, 300, SHEXEC_IDLE_YIELD), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_yielded(r, NULL), SHEXEC_YIELD_IDLE);
    /* in the background the idle timeout no longer applies */
    wait_end(s, r);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_string_equal(out_of(r), "a\nb\n");
    shexec_run_free(r);
}

static void test_yield_without_room_runs_to_the_end(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_set_max_tasks(s, 1), SHEXEC_OK);
    shexec_run *other = new_run(s, "sleep 30");
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_start_task(&t, other), SHEXEC_OK);
    shexec_run *r = new_run(s, "sleep 0.5; echo end");
    assert_int_equal(shexec_run_set_yield_ms(r, 100), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_yielded(r, NULL), SHEXEC_YIELD_NONE);
    assert_non_null(strstr(shexec_run_notice(r), "not moved to the background"));
    assert_string_equal(out_of(r), "end\n");
    shexec_run_free(r);
    shexec_task_free(t);
}

/* A yielded run the host still holds outlives the session's end. */
static void test_held_run_outlives_session(void **state)
{
    (void)state;
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    shexec_session_set_kill_grace_ms(s, 300);
    shexec_run *r = new_run(s, "echo a; sleep 30");
    assert_int_equal(shexec_run_set_yield_ms(r, 200), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_yielded(r, NULL), SHEXEC_YIELD_TIME);
    pid_t pid = (pid_t)shexec_run_pid(r);
    shexec_session_free(s);
    assert_false(tu_pid_alive(pid));
    assert_true(shexec_run_state(r) > SHEXEC_STATE_RUNNING);
    assert_string_equal(out_of(r), "a\n");
    shexec_run_free(r);
}

/* ---- waiting for input ----------------------------------------------- */

typedef struct {
    int calls;
} input_seen;

static void on_input(void *user, shexec_run *r)
{
    (void)r;
    ((input_seen *)user)->calls++;
}

/*
 * Run cmd with a long yield time: it must come back found waiting for
 * input, the prompt containing want. The run is returned, yielded.
 */
static shexec_run *expect_waiting(shexec_session *s, const char *cmd, int pty, const char *want,
                                  input_seen *seen)
{
    shexec_run *r = new_run(s, cmd);
    if (pty)
        assert_int_equal(shexec_run_set_pty(r, pty), SHEXEC_OK);
    else
        assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    assert_int_equal(shexec_run_set_yield_ms(r, 30000), SHEXEC_OK);
    assert_int_equal(shexec_run_set_input_fn(r, on_input, seen), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_yielded(r, NULL), SHEXEC_YIELD_INPUT);
    assert_int_equal(seen->calls, 1);
    const char *prompt = NULL;
    size_t len = 0;
    assert_int_equal(shexec_run_input_wait(r, &prompt, &len, NULL), SHEXEC_INPUT_WAITING);
    char text[300];
    snprintf(text, sizeof text, "%.*s", (int)len, prompt ? prompt : "");
    if (!strstr(text, want))
        fail_msg("prompt \"%s\" lacks \"%s\" (%s)", text, want, cmd);
    return r;
}

static int has_procfs(void)
{
    return tu_platform_has(SHX_PLATFORM_PROCFS, "/proc/PID/syscall");
}

/* ---- following a task; what a host that did not pump comes back to ---- */

/* A task the host started, with room for it. */
static shexec_task *start_task(shexec_session *s, const char *cmd, int with_stdin)
{
    shexec_run *r = new_run(s, cmd);
    if (with_stdin)
        assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    return t;
}

/* quiet: no output for quiet_ms, counted from the later of the last output
 * and the call; it outlives output that keeps coming only up to max_ms */
static void test_watch_returns_when_quiet(void **state)
{
    shexec_session *s = *state;
    shexec_task *t = start_task(s, "echo a; sleep 0.4; echo b; sleep 30", 0);
    int64_t t0 = tu_now_ms();
    assert_int_equal(shexec_task_watch(t, 800, 20000), SHEXEC_WATCH_QUIET);
    int64_t took = tu_now_ms() - t0;
    /* b came at ~0.4 s: quiet 0.8 s after it, not 0.8 s after the call */
    if (took < 1100 || took > 8000)
        fail_msg("quiet after %lld ms", (long long)took);
    size_t n;
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, &n), "a\nb\n");
    assert_true(shexec_run_quiet_ms(shexec_task_run(t)) >= 800);

    /* silent before the call: quiet_ms more from the call, not at once */
    t0 = tu_now_ms();
    assert_int_equal(shexec_task_watch(t, 500, 20000), SHEXEC_WATCH_QUIET);
    took = tu_now_ms() - t0;
    if (took < 450 || took > 5000)
        fail_msg("quiet again after %lld ms", (long long)took);
    assert_int_equal(shexec_run_state(shexec_task_run(t)), SHEXEC_STATE_RUNNING);
    shexec_task_free(t);

    /* output every 0.1 s never leaves 600 ms of quiet: max_ms ends the watch */
    t = start_task(s, "while :; do echo x; sleep 0.1; done", 0);
    t0 = tu_now_ms();
    assert_int_equal(shexec_task_watch(t, 600, 1200), SHEXEC_WATCH_TIME);
    took = tu_now_ms() - t0;
    if (took < 1150 || took > 8000)
        fail_msg("max after %lld ms", (long long)took);
    assert_true(shexec_run_quiet_ms(shexec_task_run(t)) < 600);
    shexec_task_free(t);
}

static void test_watch_returns_at_the_end_and_at_input(void **state)
{
    shexec_session *s = *state;
    shexec_task *t = start_task(s, "echo x; sleep 0.3; exit 5", 0);
    int64_t t0 = tu_now_ms();
    assert_int_equal(shexec_task_watch(t, 5000, 20000), SHEXEC_WATCH_ENDED);
    assert_true(tu_now_ms() - t0 < 5000);
    assert_int_equal(shexec_run_exit_code(shexec_task_run(t)), 5);
    /* ended: at once, however long it was asked to wait */
    assert_int_equal(shexec_task_watch(t, 5000, 20000), SHEXEC_WATCH_ENDED);
    shexec_task_free(t);

    /* max_ms 0: one round */
    t = start_task(s, "sleep 30", 0);
    assert_int_equal(shexec_task_watch(t, 0, 0), SHEXEC_WATCH_TIME);
    shexec_task_free(t);

    if (!has_procfs())
        return;
    t = start_task(s, "read -r x; echo got $x", 1);
    t0 = tu_now_ms();
    assert_int_equal(shexec_task_watch(t, 0, 20000), SHEXEC_WATCH_INPUT);
    assert_true(tu_now_ms() - t0 < 10000);
    assert_int_equal(shexec_run_input_wait(shexec_task_run(t), NULL, NULL, NULL),
                     SHEXEC_INPUT_WAITING);
    /* still waiting: at once again */
    assert_int_equal(shexec_task_watch(t, 0, 20000), SHEXEC_WATCH_INPUT);
    assert_int_equal(shexec_run_write(shexec_task_run(t), "y\n", 2), SHEXEC_OK);
    assert_int_equal(shexec_task_watch(t, 0, 20000), SHEXEC_WATCH_ENDED);
    size_t n;
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, &n), "got y\n");
    shexec_task_free(t);
}

typedef struct {
    shexec_task *t;
    int rc;
} watch_from_callback;

static void watch_in_callback(void *user, int stream, const char *data, size_t len)
{
    (void)stream;
    (void)data;
    (void)len;
    watch_from_callback *w = user;
    w->rc = shexec_task_watch(w->t, 10, 10);
}

static void test_watch_refuses_bad_calls(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_task_watch(NULL, 10, 10), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_quiet_ms(NULL), 0);
    shexec_run *r = new_run(s, "true");
    assert_int_equal(shexec_run_quiet_ms(r), 0); /* not started */
    shexec_run_free(r);
    watch_from_callback w = {NULL, 0};
    w.t = start_task(s, "sleep 30", 0);
    r = new_run(s, "echo x");
    assert_int_equal(shexec_run_set_output_fn(r, watch_in_callback, &w), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(w.rc, SHEXEC_ESTATE);
    shexec_run_free(r);
    shexec_task_free(w.t);
}

/* A yielded run's handle reads what is new without taking the task; the
 * task's reads and its share the mark. */
static void test_yielded_run_reads_what_is_new(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = new_run(s, "echo a; sleep 0.6; echo b; sleep 0.6; echo c");
    size_t n = 9;
    assert_string_equal(shexec_run_read_new(r, SHEXEC_STDOUT, &n), "");
    assert_int_equal(n, 0);
    assert_int_equal(shexec_run_set_yield_ms(r, 300), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_yielded(r, NULL), SHEXEC_YIELD_TIME);
    assert_string_equal(out_of(r), "a\n");
    /* what came after the yield, and only that */
    int64_t end = tu_now_ms() + 20000;
    while (shexec_run_output_total(r, SHEXEC_STDOUT) < 4) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 100) >= 0);
    }
    assert_string_equal(shexec_run_read_new(r, SHEXEC_STDOUT, &n), "b\n");
    assert_int_equal(n, 2);
    assert_string_equal(shexec_run_read_new(r, SHEXEC_STDOUT, &n), "");
    wait_end(s, r);
    const char *c = shexec_run_read_new(r, SHEXEC_STDOUT, &n);
    if (strcmp(c, "c\n") != 0)
        fail_msg("read [%s] out [%s] state %d", c, out_of(r), shexec_run_state(r));
    assert_string_equal(shexec_run_read_new(r, SHEXEC_STDERR, &n), "");
    assert_string_equal(shexec_run_read_new(r, 7, &n), "");
    shexec_run_free(r);

    /* a run that was never moved has no mark */
    r = new_run(s, "echo z");
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(shexec_run_read_new(r, SHEXEC_STDOUT, &n), "");
    assert_int_equal(n, 0);
    shexec_run_free(r);
}

/* A character written in two halves is read whole: not split between two
 * new-only reads, not cut at a yield. */
static void test_character_split_between_reads(void **state)
{
    shexec_session *s = *state;
    shexec_task *t = start_task(s, "printf 'A\\303'; sleep 0.6; printf '\\251B\\n'", 0);
    int64_t end = tu_now_ms() + 20000;
    while (shexec_run_output_total(shexec_task_run(t), SHEXEC_STDOUT) < 2) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 50) >= 0);
    }
    size_t n;
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, &n), "A");
    uint64_t kept, total;
    assert_int_equal(shexec_task_read_counts(t, SHEXEC_STDOUT, NULL, &kept, NULL, &total),
                     SHEXEC_OK);
    assert_int_equal(kept, 1);
    assert_int_equal(total, 1);
    assert_int_equal(shexec_task_watch(t, 0, 20000), SHEXEC_WATCH_ENDED);
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, &n), "\xc3\xa9" "B\n");
    assert_int_equal(shexec_task_read_counts(t, SHEXEC_STDOUT, NULL, &kept, NULL, &total),
                     SHEXEC_OK);
    assert_int_equal(kept, 4);
    assert_int_equal(total, 4);
    shexec_task_free(t);

    /* an end inside a character: its bytes are read, as invalid ones */
    t = start_task(s, "printf 'A\\303'", 0);
    assert_int_equal(shexec_task_watch(t, 0, 20000), SHEXEC_WATCH_ENDED);
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, &n), "A\xc3");
    shexec_task_free(t);

    /* across a yield: the run's output, then the task's first read */
    shexec_run *r = new_run(s, "printf 'A\\303'; sleep 0.8; printf '\\251B\\n'");
    assert_int_equal(shexec_run_set_yield_ms(r, 300), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(out_of(r), "A");
    t = task_of(s, r);
    wait_end(s, r);
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, &n), "\xc3\xa9" "B\n");
    assert_string_equal(out_of(r), "A\xc3\xa9" "B\n");
    shexec_task_free(t);
    shexec_run_free(r);
}

/* A host that did not pump for a while: the output its task printed
 * meanwhile counts before the idle timeout looks at the silence. */
static void test_idle_timeout_counts_unread_output(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_set_idle_timeout_ms(s, 1000, SHEXEC_IDLE_END), SHEXEC_OK);
    shexec_task *t = start_task(s, "i=0; while [ $i -lt 20 ]; do echo $i; sleep 0.2; "
                                   "i=$((i+1)); done", 0);
    assert_true(shexec_session_wait(s, 100) >= 0);
    usleep(2000 * 1000); /* the host thinks: nothing pumps */
    assert_int_equal(shexec_task_watch(t, 0, 30000), SHEXEC_WATCH_ENDED);
    assert_int_equal(shexec_run_state(shexec_task_run(t)), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_deadline(shexec_task_run(t)), SHEXEC_DEADLINE_NONE);
    shexec_task_free(t);
}

/* What an input callback saw when it was called: did the output so far
 * hold the answer to the line typed. */
typedef struct {
    int calls;
    int first_had_answer; /* -1: not called yet */
} answer_seen;

static void on_input_answer(void *user, shexec_run *r)
{
    answer_seen *a = user;
    size_t n;
    if (a->calls++ == 0)
        a->first_had_answer = strstr(shexec_run_output(r, SHEXEC_STDOUT, &n), "hello-var") != NULL;
}

/* A shell in a terminal answers after the host stopped pumping: the output
 * is read before the look that finds it waiting again, and comes with it
 * (the input callback, the watch and the read all see the answer first). */
static void test_output_before_a_wait_found_late(void **state)
{
    shexec_session *s = *state;
    if (!has_procfs())
        skip();
    shexec_run *r = new_run(s, "bash --norc --noprofile -i");
    assert_int_equal(shexec_run_set_pty(r, SHEXEC_PTY_ON), SHEXEC_OK);
    assert_int_equal(shexec_run_setenv(r, "VAR", "hello-var"), SHEXEC_OK);
    answer_seen seen = {0, -1};
    assert_int_equal(shexec_run_set_input_fn(r, on_input_answer, &seen), SHEXEC_OK);
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    assert_int_equal(shexec_task_watch(t, 0, 20000), SHEXEC_WATCH_INPUT);
    size_t n;
    (void)shexec_task_read(t, SHEXEC_STDOUT, &n);
    const char *line = "sleep 1.5 && echo $VAR\n";
    assert_int_equal(shexec_run_write(r, line, strlen(line)), SHEXEC_OK);
    assert_int_equal(shexec_task_watch(t, 0, 10), SHEXEC_WATCH_TIME);
    seen = (answer_seen){0, -1};
    usleep(2500 * 1000); /* the model thinks: nothing pumps */
    assert_true(shexec_session_wait(s, 0) >= 0);
    assert_int_equal(shexec_task_watch(t, 0, 20000), SHEXEC_WATCH_INPUT);
    assert_true(seen.calls >= 1);
    assert_int_equal(seen.first_had_answer, 1);
    const char *got = shexec_task_read(t, SHEXEC_STDOUT, &n);
    if (!strstr(got, "hello-var"))
        fail_msg("the answer before the prompt was not read: \"%s\"", got);
    const char *prompt = NULL;
    assert_int_equal(shexec_run_input_wait(r, &prompt, &n, NULL), SHEXEC_INPUT_WAITING);
    /* its prompt again (whatever it looks like: bracketed paste, # for root) */
    assert_true(n > 0 && prompt[n - 1] == ' ');
    shexec_task_free(t);
}

static void test_read_prompt_answered(void **state)
{
    shexec_session *s = *state;
    if (!has_procfs())
        skip();
    for (int pty = 0; pty <= 1; pty++) {
        input_seen seen = {0};
        /* bash prints read's prompt only on a terminal */
        shexec_run *r = expect_waiting(s, "read -p 'Name: ' n; echo hi $n", pty ? SHEXEC_PTY_ON : 0,
                                       pty ? "Name: " : "", &seen);
        int echo_off = -1;
        shexec_run_input_wait(r, NULL, NULL, &echo_off);
        assert_int_equal(echo_off, 0);
        shexec_task *t = task_of(s, r);
        assert_int_equal(shexec_run_write(r, "Ada\n", 4), SHEXEC_OK);
        wait_end(s, r);
        assert_int_equal(shexec_run_exit_code(r), 0);
        assert_non_null(strstr(out_of(r), "hi Ada"));
        assert_int_equal(shexec_run_input_wait(r, NULL, NULL, NULL), SHEXEC_INPUT_NO);
        shexec_task_free(t);
        shexec_run_free(r);
    }
}

/* The prompt is the last line's end, after bulk output too. */
static void test_prompt_after_bulk_output(void **state)
{
    shexec_session *s = *state;
    if (!has_procfs())
        skip();
    input_seen seen = {0};
    shexec_run *r = expect_waiting(s, "head -c 100000 /dev/zero | tr '\\0' a; printf '\\nQuestion? '; "
                                      "read x; echo got $x",
                                   0, "Question? ", &seen);
    const char *prompt;
    size_t len;
    shexec_run_input_wait(r, &prompt, &len, NULL);
    assert_int_equal(len, strlen("Question? "));
    shexec_run_write(r, "y\n", 2);
    wait_end(s, r);
    shexec_run_free(r);
    /* a line longer than the kept end: its last 256 bytes */
    memset(&seen, 0, sizeof seen);
    r = expect_waiting(s, "head -c 1000 /dev/zero | tr '\\0' b; read x", 0, "bbb", &seen);
    shexec_run_input_wait(r, &prompt, &len, NULL);
    assert_int_equal(len, 256);
    assert_int_equal(prompt[0], 'b');
    assert_int_equal(prompt[255], 'b');
    shexec_run_close_stdin(r);
    wait_end(s, r);
    shexec_run_free(r);
}

static void test_python_input_and_repl(void **state)
{
    shexec_session *s = *state;
    if (!has_procfs())
        skip();
    input_seen seen = {0};
    shexec_run *r = expect_waiting(s, PY " -c 'x = input(\"> \"); print(\"got\", x)'", 0, "> ",
                                   &seen);
    shexec_run_write(r, "7\n", 2);
    wait_end(s, r);
    assert_non_null(strstr(out_of(r), "got 7"));
    shexec_run_free(r);

    memset(&seen, 0, sizeof seen);
    r = expect_waiting(s, PY " -q", SHEXEC_PTY_ECHO, ">>> ", &seen);
    int echo_off = -1;
    shexec_run_input_wait(r, NULL, NULL, &echo_off);
    assert_int_equal(echo_off, 0); /* readline echoes itself: not a password */
    shexec_run_write(r, "print(6*7)\nexit()\n", 18);
    wait_end(s, r);
    assert_non_null(strstr(out_of(r), "42"));
    shexec_run_free(r);
}

/* On a terminal that never echoes (SHEXEC_PTY_ON) a password reader is
 * told by the echo details it clears: bash's `read -s` clears ECHOK, at
 * once, before the library could have read the flags after the start;
 * a plain question is not a password. */
static void test_silent_read_on_quiet_pty(void **state)
{
    shexec_session *s = *state;
    if (!has_procfs())
        skip();
    for (int i = 0; i < 3; i++) {
        input_seen seen = {0};
        shexec_run *r = expect_waiting(s, "read -s -p 'Password: ' x", SHEXEC_PTY_ON, "Password: ",
                                       &seen);
        int echo_off = 0;
        assert_int_equal(shexec_run_input_wait(r, NULL, NULL, &echo_off), SHEXEC_INPUT_WAITING);
        assert_int_equal(echo_off, 1);
        shexec_task *t = task_of(s, r);
        shexec_run_cancel(r);
        wait_end(s, r);
        shexec_task_free(t);
        shexec_run_free(r);
    }
    input_seen seen = {0};
    shexec_run *r = expect_waiting(s, "read -p 'Name: ' x", SHEXEC_PTY_ON, "Name: ", &seen);
    int echo_off = 1;
    shexec_run_input_wait(r, NULL, NULL, &echo_off);
    assert_int_equal(echo_off, 0);
    shexec_task *t = task_of(s, r);
    shexec_run_cancel(r);
    wait_end(s, r);
    shexec_task_free(t);
    shexec_run_free(r);
}

static void test_sudo_password_prompt(void **state)
{
    shexec_session *s = *state;
    if (!has_procfs())
        skip();
    if (access("/usr/bin/sudo", X_OK) != 0 || access("/usr/bin/setpriv", X_OK) != 0) {
        print_message("sudo or setpriv is not installed: skipped\n");
        skip();
    }
    input_seen seen = {0};
    /* as nobody, on the run's terminal: sudo asks for a password, echo off */
    shexec_run *r = expect_waiting(s, "setpriv --reuid=65534 --regid=65534 --clear-groups "
                                      "sudo -k true",
                                   SHEXEC_PTY_ECHO, "password", &seen);
    int echo_off = 0;
    assert_int_equal(shexec_run_input_wait(r, NULL, NULL, &echo_off), SHEXEC_INPUT_WAITING);
    /* the prompt may be seen a moment before sudo has turned echo off */
    for (int64_t end = tu_now_ms() + 3000; !echo_off && tu_now_ms() < end;) {
        assert_true(shexec_session_wait(s, 50) >= 0);
        (void)shexec_run_input_wait(r, NULL, NULL, &echo_off);
    }
    assert_int_equal(echo_off, 1);
    shexec_run_cancel(r);
    wait_end(s, r);
    shexec_run_free(r);
}

static const char http_401[] =
    "import http.server, sys\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def do_GET(self):\n"
    "        self.send_response(401)\n"
    "        self.send_header('WWW-Authenticate', 'Basic realm=\"x\"')\n"
    "        self.send_header('Content-Length', '0')\n"
    "        self.end_headers()\n"
    "    def log_message(self, *a):\n"
    "        pass\n"
    "s = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
    "open(sys.argv[1] + '.tmp', 'w').write(str(s.server_port))\n"
    "__import__('os').rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
    "s.serve_forever()\n";

static void test_git_credential_prompt(void **state)
{
    shexec_session *s = *state;
    if (!has_procfs())
        skip();
    if (access("/usr/bin/git", X_OK) != 0) {
        print_message("git is not installed: skipped\n");
        skip();
    }
    const char *dir = tu_mkdtemp();
    char path[4096], cmd[8192];
    snprintf(path, sizeof path, "%s/srv.py", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(http_401, f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             PY " %s/srv.py %s/port & while [ ! -s %s/port ]; do sleep 0.05; done; "
                "GIT_TERMINAL_PROMPT=1 GIT_ASKPASS= SSH_ASKPASS= git -c credential.helper= "
                "clone http://127.0.0.1:$(cat %s/port)/r.git %s/clone",
             dir, dir, dir, dir, dir);
    input_seen seen = {0};
    shexec_run *r = expect_waiting(s, cmd, SHEXEC_PTY_ECHO, "Username for", &seen);
    shexec_run_cancel(r);
    wait_end(s, r);
    shexec_run_free(r);
    tu_rmtree(dir);
}

static void test_less_in_a_terminal(void **state)
{
    shexec_session *s = *state;
    if (!has_procfs())
        skip();
    if (access("/usr/bin/less", X_OK) != 0) {
        print_message("less is not installed: skipped\n");
        skip();
    }
    input_seen seen = {0};
    shexec_run *r = expect_waiting(s, "seq 1 5000 > lr.txt; less lr.txt; rm -f lr.txt",
                                   SHEXEC_PTY_ON, "", &seen);
    shexec_run_write(r, "q", 1);
    wait_end(s, r);
    assert_int_equal(shexec_run_exit_code(r), 0);
    shexec_run_free(r);
}

/* Not waiting for the host: sleeping, computing, reading another pipe. */
static void test_busy_or_sleeping_is_not_waiting(void **state)
{
    shexec_session *s = *state;
    static const char *const cmds[] = {
        "sleep 1.5",
        PY " -c 'import time\nt = time.time()\nwhile time.time() - t < 1.5: pass'",
        "(sleep 0.5; echo a; sleep 0.5; echo b; sleep 0.5) | (cat > /dev/null)",
        "sleep 1.5 | cat",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        for (int pty = 0; pty <= 1; pty++) {
            input_seen seen = {0};
            shexec_run *r = new_run(s, cmds[i]);
            if (pty)
                assert_int_equal(shexec_run_set_pty(r, SHEXEC_PTY_ON), SHEXEC_OK);
            else
                assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
            assert_int_equal(shexec_run_set_yield_ms(r, 30000), SHEXEC_OK);
            assert_int_equal(shexec_run_set_input_fn(r, on_input, &seen), SHEXEC_OK);
            assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
            if (seen.calls || shexec_run_yielded(r, NULL) != SHEXEC_YIELD_NONE)
                fail_msg("\"%s\" (pty %d) was taken for a wait for input", cmds[i], pty);
            assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
            shexec_run_free(r);
        }
    }
}

static void test_looks_can_be_turned_off(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_set_input_look_ms(s, 0), SHEXEC_OK);
    assert_int_equal(shexec_session_input_look_ms(s), 0);
    input_seen seen = {0};
    shexec_run *r = new_run(s, "read -t 1 n; echo $?");
    assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    assert_int_equal(shexec_run_set_input_fn(r, on_input, &seen), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(seen.calls, 0);
    shexec_run_free(r);
    assert_int_equal(shexec_session_input_look_ms(NULL), SHEXEC_DEFAULT_INPUT_LOOK_MS);
}

/* ---- the pure parts --------------------------------------------------- */

static void test_parse_syscall_text(void **state)
{
    (void)state;
    int fd;
    uint64_t addr;
    char text[128];
#if defined(__x86_64__)
    snprintf(text, sizeof text, "0 0x3 0x7ffd1000 0x1 0x0 0x0 0x0 0x7ffd0ff8 0x7f001234\n");
    assert_int_equal(shx_inputwait_parse(text, strlen(text), &fd, &addr), SHX_WAIT_FD);
    assert_int_equal(fd, 3);
    /* select of descriptor 0 alone, then of three */
    snprintf(text, sizeof text, "23 0x1 0x7ffd1000 0x0 0x0 0x0 0x0 0x7ffd0ff8 0x7f001234\n");
    assert_int_equal(shx_inputwait_parse(text, strlen(text), &fd, &addr), SHX_WAIT_FD);
    assert_int_equal(fd, 0);
    snprintf(text, sizeof text, "23 0x3 0x7ffd1000 0x0 0x0 0x0 0x0 0x7ffd0ff8 0x7f001234\n");
    assert_int_equal(shx_inputwait_parse(text, strlen(text), &fd, &addr), SHX_WAIT_NONE);
    /* poll of one descriptor: where its pollfd is */
    snprintf(text, sizeof text, "7 0x7ffd2000 0x1 0xffffffff 0x0 0x0 0x0 0x7ffd0ff8 0x7f0012\n");
    assert_int_equal(shx_inputwait_parse(text, strlen(text), &fd, &addr), SHX_WAIT_POLL1);
    assert_int_equal(addr, 0x7ffd2000);
    /* nanosleep, wait4 */
    snprintf(text, sizeof text, "35 0x7ffd1000 0x0 0x0 0x0 0x0 0x0 0x7ffd0ff8 0x7f001234\n");
    assert_int_equal(shx_inputwait_parse(text, strlen(text), &fd, &addr), SHX_WAIT_NONE);
#endif
    static const char *const junk[] = {"running\n",
                                       "-1 0x7ffd0ff8 0x7f001234\n",
                                       "",
                                       "0",
                                       "0 0x3",
                                       "0 0xzz 0 0 0 0 0",
                                       "99999999999999999999999 1 2 3 4 5 6"};
    for (size_t i = 0; i < sizeof junk / sizeof *junk; i++)
        assert_int_equal(shx_inputwait_parse(junk[i], strlen(junk[i]), &fd, &addr),
                         SHX_WAIT_NONE);
}

static void test_password_flags(void **state)
{
    (void)state;
#if defined(__linux__)
    unsigned long canon = ICANON | ECHO | ECHOE | ECHOK | ISIG;
    /* a terminal that echoes: a password reader turns ECHO off, keeps ICANON */
    assert_true(shx_inputwait_password(canon & ~(unsigned long)ECHO, 1, canon));
    assert_false(shx_inputwait_password(canon, 1, canon));
    /* a line editor turns off both */
    assert_false(shx_inputwait_password(canon & ~(unsigned long)(ECHO | ICANON), 1, canon));
    /* a terminal opened without echo (its echo details stay set): only
     * another change tells */
    unsigned long quiet = canon & ~(unsigned long)ECHO;
    assert_false(shx_inputwait_password(quiet, 1, quiet));
    assert_true(shx_inputwait_password(quiet & ~(unsigned long)(ECHOE | ECHOK), 1, quiet));
    assert_true(shx_inputwait_password(quiet & ~(unsigned long)ECHOK, 1, quiet)); /* read -s */
    assert_true(shx_inputwait_password(quiet & ~(unsigned long)ISIG, 1, quiet));  /* getpass() */
    /* clearing what is off already (ECHO, ECHONL: sudo, ssh) cannot tell */
    assert_false(shx_inputwait_password(quiet & ~(unsigned long)ECHONL, 1, quiet));
#else
    skip();
#endif
}

/* ---- the agent environment preset ------------------------------------- */

static char *env_of(shexec_session *s, const char *names, int pty, const char *run_var)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "for v in %s; do eval \"echo $v=\\${$v-unset}\"; done", names);
    shexec_run *r = new_run(s, cmd);
    if (pty)
        assert_int_equal(shexec_run_set_pty(r, SHEXEC_PTY_ON), SHEXEC_OK);
    if (run_var)
        assert_int_equal(shexec_run_setenv(r, run_var, "mine"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    char *out = strdup(out_of(r));
    shexec_run_free(r);
    return out;
}

static void test_agent_env_preset(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_setenv(s, "LANG", NULL), SHEXEC_OK);
    assert_int_equal(shexec_session_setenv(s, "LC_ALL", NULL), SHEXEC_OK);
    assert_int_equal(shexec_session_apply_agent_env(s), SHEXEC_OK);
    char *out = env_of(s, "PAGER GIT_PAGER GH_PAGER MANPAGER SYSTEMD_PAGER GIT_TERMINAL_PROMPT "
                          "GIT_EDITOR EDITOR DEBIAN_FRONTEND PIP_NO_INPUT LANG NO_COLOR TERM",
                       0, NULL);
    assert_string_equal(out, "PAGER=cat\nGIT_PAGER=cat\nGH_PAGER=cat\nMANPAGER=cat\n"
                             "SYSTEMD_PAGER=cat\nGIT_TERMINAL_PROMPT=0\nGIT_EDITOR=false\n"
                             "EDITOR=false\nDEBIAN_FRONTEND=noninteractive\nPIP_NO_INPUT=1\n"
                             "LANG=C.UTF-8\nNO_COLOR=1\nTERM=dumb\n");
    free(out);
    /* a pty run keeps its terminal's type (the host's), and gets no NO_COLOR */
    out = env_of(s, "NO_COLOR TERM", 1, NULL);
    assert_non_null(strstr(out, "NO_COLOR=unset\n"));
    assert_null(strstr(out, "TERM=dumb"));
    free(out);
    /* a run's own variable wins; so does one the session sets itself */
    out = env_of(s, "TERM", 0, "TERM");
    assert_string_equal(out, "TERM=mine\n");
    free(out);
    assert_int_equal(shexec_session_setenv(s, "NO_COLOR", NULL), SHEXEC_OK);
    assert_int_equal(shexec_session_setenv(s, "TERM", "xterm"), SHEXEC_OK);
    assert_int_equal(shexec_session_setenv(s, "PAGER", "less"), SHEXEC_OK);
    out = env_of(s, "NO_COLOR PAGER TERM", 0, NULL);
    assert_string_equal(out, "NO_COLOR=unset\nPAGER=less\nTERM=xterm\n");
    free(out);
    /* a locale already chosen stays */
    assert_int_equal(shexec_session_setenv(s, "LANG", "de_DE.UTF-8"), SHEXEC_OK);
    assert_int_equal(shexec_session_apply_agent_env(s), SHEXEC_OK);
    out = env_of(s, "LANG", 0, NULL);
    assert_string_equal(out, "LANG=de_DE.UTF-8\n");
    free(out);
    assert_int_equal(shexec_session_apply_agent_env(NULL), SHEXEC_EINVAL);
}

/* The preset's locale and COLORTERM: a command that would run in the plain
 * C locale gets C.UTF-8 in the variable that decides; a locale chosen is
 * kept; COLORTERM, the host's terminal's, is gone. Host and session alike. */
static void test_agent_env_locale_and_colorterm(void **state)
{
    (void)state;
    static const struct {
        const char *lc_all, *lc_ctype, *lang; /* NULL: unset */
        const char *want;
    } cases[] = {
        {NULL, NULL, NULL, "LC_ALL=unset LC_CTYPE=unset LANG=C.UTF-8 COLORTERM=unset\n"},
        {NULL, NULL, "C", "LC_ALL=unset LC_CTYPE=unset LANG=C.UTF-8 COLORTERM=unset\n"},
        {NULL, NULL, "POSIX", "LC_ALL=unset LC_CTYPE=unset LANG=C.UTF-8 COLORTERM=unset\n"},
        {NULL, NULL, "", "LC_ALL=unset LC_CTYPE=unset LANG=C.UTF-8 COLORTERM=unset\n"},
        {"C", NULL, NULL, "LC_ALL=C.UTF-8 LC_CTYPE=unset LANG=C.UTF-8 COLORTERM=unset\n"},
        {"POSIX", NULL, "de_DE.UTF-8",
         "LC_ALL=C.UTF-8 LC_CTYPE=unset LANG=de_DE.UTF-8 COLORTERM=unset\n"},
        {NULL, "C", "de_DE.UTF-8",
         "LC_ALL=unset LC_CTYPE=C.UTF-8 LANG=de_DE.UTF-8 COLORTERM=unset\n"},
        {"en_US.UTF-8", NULL, NULL,
         "LC_ALL=en_US.UTF-8 LC_CTYPE=unset LANG=unset COLORTERM=unset\n"},
        {NULL, "en_US.ISO-8859-1", "C",
         "LC_ALL=unset LC_CTYPE=en_US.ISO-8859-1 LANG=C.UTF-8 COLORTERM=unset\n"},
        {NULL, NULL, "de_DE.UTF-8",
         "LC_ALL=unset LC_CTYPE=unset LANG=de_DE.UTF-8 COLORTERM=unset\n"},
    };
    static const char *const names[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (int host = 0; host <= 1; host++)
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
            const char *values[] = {cases[k].lc_all, cases[k].lc_ctype, cases[k].lang};
            shexec_session *s;
            assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
            /* from the host's environment, or set on the session over it */
            setenv("COLORTERM", "truecolor", 1);
            for (int i = 0; i < 3; i++) {
                if (host && values[i])
                    setenv(names[i], values[i], 1);
                else
                    unsetenv(names[i]);
                if (!host)
                    assert_int_equal(shexec_session_setenv(s, names[i], values[i]), SHEXEC_OK);
            }
            assert_int_equal(shexec_session_apply_agent_env(s), SHEXEC_OK);
            shexec_run *r;
            assert_int_equal(shexec_run_new(&r, s, "echo LC_ALL=${LC_ALL-unset} "
                                                   "LC_CTYPE=${LC_CTYPE-unset} LANG=${LANG-unset} "
                                                   "COLORTERM=${COLORTERM-unset}"),
                             SHEXEC_OK);
            assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
            const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
            if (strcmp(out, cases[k].want) != 0)
                fail_msg("host %d, case %zu: %s, want %s", host, k, out, cases[k].want);
            shexec_run_free(r);
            /* removed on the session: a pty run has it no more than a pipe run */
            assert_null(shexec_session_getenv(s, "COLORTERM"));
            shexec_session_free(s);
        }
    unsetenv("COLORTERM");
    unsetenv("LC_ALL");
    unsetenv("LC_CTYPE");
    unsetenv("LANG");
}

static void test_setters_refuse_bad_calls(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_run_set_yield_ms(NULL, 1), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_set_idle_timeout_ms(NULL, 1, SHEXEC_IDLE_END), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_set_background_on_timeout(NULL, 1), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_set_input_fn(NULL, NULL, NULL), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_input_look_ms(NULL, 1), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_background_on_timeout(NULL, 1), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_yielded(NULL, NULL), SHEXEC_YIELD_NONE);
    assert_int_equal(shexec_run_deadline(NULL), SHEXEC_DEADLINE_NONE);
    assert_int_equal(shexec_run_input_wait(NULL, NULL, NULL, NULL), SHEXEC_INPUT_NO);
    shexec_run *r = new_run(s, "true");
    assert_int_equal(shexec_run_set_idle_timeout_ms(r, 1, 2), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_set_yield_ms(r, 1), SHEXEC_ESTATE);
    assert_int_equal(shexec_run_set_idle_timeout_ms(r, 1, SHEXEC_IDLE_END), SHEXEC_ESTATE);
    assert_int_equal(shexec_run_set_background_on_timeout(r, 1), SHEXEC_ESTATE);
    shexec_run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_yield_returns_running_then_task_finishes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_yield_keeps_timeout_as_lifetime_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_yield_does_not_move_the_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_started_run_yields_in_host_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_started_run_yields_in_own_poll_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quick_command_does_not_yield, setup, teardown),
        cmocka_unit_test_setup_teardown(test_background_on_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_timeout_ends_silent_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_timeout_spares_steady_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_timeout_yields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_yield_without_room_runs_to_the_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_held_run_outlives_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_prompt_answered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prompt_after_bulk_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_python_input_and_repl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silent_read_on_quiet_pty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sudo_password_prompt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_git_credential_prompt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_less_in_a_terminal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy_or_sleeping_is_not_waiting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_looks_can_be_turned_off, setup, teardown),
        cmocka_unit_test(test_parse_syscall_text),
        cmocka_unit_test(test_password_flags),
        cmocka_unit_test_setup_teardown(test_agent_env_preset, setup, teardown),
        cmocka_unit_test(test_agent_env_locale_and_colorterm),
        cmocka_unit_test_setup_teardown(test_setters_refuse_bad_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_returns_when_quiet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_returns_at_the_end_and_at_input, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_watch_refuses_bad_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_yielded_run_reads_what_is_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_split_between_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_timeout_counts_unread_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_before_a_wait_found_late, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
