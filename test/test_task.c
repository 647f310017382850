/*
 * test_task.c - background tasks, adopted leftovers, stdin input, and host
 * event-loop integration (pollfds/process).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shx/buf.h"
#include "shexec.h"
#include "testhook.h"
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

static shexec_task *start_task(shexec_session *s, const char *cmd)
{
    shexec_run *r = NULL;
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    assert_ptr_equal(shexec_task_run(t), r);
    return t;
}

/* A configured, unstarted run of cmd (the caller's until it is started). */
static shexec_run *new_run(shexec_session *s, const char *cmd)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    return r;
}

/* Start r as a task, which must work. */
static shexec_task *as_task(shexec_run *r)
{
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    assert_non_null(t);
    return t;
}

/* The task's results are its run's. */
static shexec_run *run_of(shexec_task *t)
{
    return shexec_task_run(t);
}

static void wait_done(shexec_session *s, shexec_task *t)
{
    int64_t end = tu_now_ms() + 20000;
    while (shexec_run_state(run_of(t)) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 1000) >= 0);
    }
}

static void test_background_returns_at_once(void **state)
{
    shexec_session *s = *state;
    int64_t t0 = tu_now_ms();
    shexec_task *t = start_task(s, "sleep 60");
    assert_true(tu_now_ms() - t0 < 2000);
    assert_int_equal(shexec_run_state(run_of(t)), SHEXEC_STATE_RUNNING);
    assert_false(shexec_run_state(run_of(t)) > SHEXEC_STATE_RUNNING);
    regex_t re;
    assert_int_equal(regcomp(&re, "^t[0-9a-f]{12}$", REG_EXTENDED), 0);
    assert_int_equal(regexec(&re, shexec_task_id(t), 0, NULL, 0), 0);
    regfree(&re);

    shexec_task *u = start_task(s, "sleep 60");
    assert_string_not_equal(shexec_task_id(t), shexec_task_id(u));
    shexec_task *found = NULL;
    assert_int_equal(shexec_session_take_task(&found, s, shexec_task_id(u)), SHEXEC_OK);
    assert_ptr_equal(found, u);
    assert_int_equal(shexec_session_take_task(&found, s, "t000000000000"), SHEXEC_ENOTASK);
    assert_null(found);
    assert_non_null(strstr(shexec_session_errmsg(s), "t000000000000"));
    assert_int_equal(shexec_session_take_task(&found, s, NULL), SHEXEC_EINVAL);
    /* freeing a running task kills and reaps it */
    pid_t pid = (pid_t)shexec_run_pid(run_of(t));
    assert_true(pid > 0);
    shexec_task_free(t);
    assert_false(tu_pid_alive(pid));
    shexec_task_free(u);
}

static void test_task_limit(void **state)
{
    shexec_session *s = *state;
    shexec_task *t[10];
    for (int i = 0; i < 10; i++)
        t[i] = start_task(s, "sleep 60");
    shexec_run *extra_run = new_run(s, "sleep 60");
    shexec_task *extra = NULL;
    assert_int_equal(shexec_run_start_task(&extra, extra_run), SHEXEC_ELIMIT);
    assert_non_null(strstr(shexec_session_errmsg(s), "10"));
    assert_null(extra);
    assert_int_equal(shexec_run_state(extra_run), SHEXEC_STATE_NEW);
    /* a finished task keeps its slot until it is freed */
    shexec_run_cancel(shexec_task_run(t[0]));
    wait_done(s, t[0]);
    assert_int_equal(shexec_run_start_task(&extra, extra_run), SHEXEC_ELIMIT);
    assert_null(extra);
    shexec_task_free(t[0]);
    t[0] = NULL;
    extra = as_task(extra_run);
    /* and the limit is a setting */
    assert_int_equal(shexec_session_set_max_tasks(s, 12), SHEXEC_OK);
    shexec_task *more = start_task(s, "sleep 60");
    shexec_task_free(more);
    shexec_task_free(extra);
    for (int i = 0; i < 10; i++)
        shexec_task_free(t[i]);
}

/*
 * What a session retains is bounded: a finished task the host has not freed
 * still holds its slot (its output is still there to read), so finished
 * tasks cannot pile up beyond the limit. The library never frees a task
 * the host holds: the host frees it, then the slot is free.
 */
static void test_finished_tasks_hold_their_slot(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_set_max_tasks(s, 2), SHEXEC_OK);
    shexec_task *a = start_task(s, "echo a");
    shexec_task *b = start_task(s, "echo b");
    wait_done(s, a);
    wait_done(s, b);
    shexec_run *c_run = new_run(s, "echo c");
    shexec_task *c = NULL;
    assert_int_equal(shexec_run_start_task(&c, c_run), SHEXEC_ELIMIT);
    assert_string_equal(shexec_session_errmsg(s),
                        "the session already holds its maximum of 2 tasks (0 running, 2 finished "
                        "but not yet freed)");
    assert_null(c);
    assert_int_equal(shexec_run_state(c_run), SHEXEC_STATE_NEW);
    /* nothing was released behind the host's back */
    assert_string_equal(shexec_run_output(run_of(a), SHEXEC_STDOUT, NULL), "a\n");
    assert_string_equal(shexec_run_output(run_of(b), SHEXEC_STDOUT, NULL), "b\n");
    shexec_task *found = NULL;
    assert_int_equal(shexec_session_take_task(&found, s, shexec_task_id(a)), SHEXEC_OK);
    assert_ptr_equal(found, a);
    shexec_task_free(a);
    c = as_task(c_run);
    wait_done(s, c);
    assert_string_equal(shexec_run_output(run_of(c), SHEXEC_STDOUT, NULL), "c\n");
    shexec_task_free(b);
    shexec_task_free(c);
}

static int count_tasks(const shexec_session *s)
{
    return (int)shx_test_tasks(s);
}

/*
 * Leftovers the host never looked up are the session's: once finished they
 * are released to make room (oldest first), and their id then says so.
 * One the host looked up with shexec_session_take_task() is the host's and
 * is never released for it.
 */
static void test_unclaimed_leftovers_released(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_set_max_tasks(s, 2), SHEXEC_OK);
    /* the leftovers adopted at the shell's exit, not after a drain of
     * their output (which would take their line into the run) */
    assert_int_equal(shexec_session_set_leftovers_drain_ms(s, 0), SHEXEC_OK);
    char ids[6][32];
    shexec_task *kept = NULL;
    for (int i = 0; i < 6; i++) {
        shexec_run *r = NULL;
        char cmd[64];
        snprintf(cmd, sizeof cmd, "(sleep 0.1; echo late%d) &", i);
        assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
        snprintf(ids[i], sizeof ids[i], "%s", tu_leftover_id(r));
        shexec_run_free(r);
        if (i == 1) /* the host takes this one */
            assert_int_equal(shexec_session_take_task(&kept, s, ids[i]), SHEXEC_OK);
        while (shx_test_active(s))
            assert_true(shexec_session_wait(s, 1000) >= 0);
        assert_true(count_tasks(s) <= 2);
    }
    /* kept and the newest one remain; the others were released */
    shexec_task *t = NULL;
    for (int i = 0; i < 5; i++) {
        if (i == 1)
            continue;
        assert_int_equal(shexec_session_take_task(&t, s, ids[i]), SHEXEC_ENOTASK);
        char want[128];
        snprintf(want, sizeof want,
                 "task \"%s\" finished and was released unread (retention limit)", ids[i]);
        assert_string_equal(shexec_session_errmsg(s), want);
    }
    assert_string_equal(shexec_run_output(run_of(kept), SHEXEC_STDOUT, NULL), "late1\n");
    assert_int_equal(shexec_session_take_task(&t, s, ids[5]), SHEXEC_OK);
    assert_string_equal(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), "late5\n");
    /* both are the host's now: a new task finds no room, none is released */
    shexec_run *u_run = new_run(s, "true");
    shexec_task *u = NULL;
    assert_int_equal(shexec_run_start_task(&u, u_run), SHEXEC_ELIMIT);
    assert_null(u);
    shexec_task_free(t);
    u = as_task(u_run);
    wait_done(s, u);
    shexec_task_free(u);
    shexec_task_free(kept);
    assert_int_equal(count_tasks(s), 0);
    /* an id never issued is still just unknown */
    assert_int_equal(shexec_session_take_task(&t, s, "t000000000000"), SHEXEC_ENOTASK);
    assert_string_equal(shexec_session_errmsg(s), "no task with id \"t000000000000\"");
}

static int done_calls;

static void on_done(void *user, shexec_task *t)
{
    (void)t;
    done_calls++;
    *(int *)user = shexec_run_state(run_of(t));
}

static void test_status_and_exit_code(void **state)
{
    shexec_session *s = *state;
    int seen = -1;
    done_calls = 0;
    shexec_task *t = start_task(s, "echo out; echo err >&2; sleep 0.3; exit 3");
    /* set after the start: callbacks run only when the loop is pumped */
    assert_int_equal(shexec_task_set_done_fn(t, on_done, &seen), SHEXEC_OK);
    assert_int_equal(shexec_run_state(run_of(t)), SHEXEC_STATE_RUNNING);
    assert_int_equal(shexec_run_exit_code(run_of(t)), -1);
    wait_done(s, t);
    assert_int_equal(shexec_run_state(run_of(t)), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(run_of(t)), 3);
    assert_string_equal(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), "out\n");
    assert_string_equal(shexec_run_output(run_of(t), SHEXEC_STDERR, NULL), "err\n");
    assert_int_equal(done_calls, 1);
    assert_int_equal(seen, SHEXEC_STATE_EXITED);
    assert_true(shexec_run_duration_ms(run_of(t)) >= 250);
    /* the run is started once: not again as a task, nor in the foreground */
    shexec_task *again = NULL;
    assert_int_equal(shexec_run_start_task(&again, run_of(t)), SHEXEC_ESTATE);
    assert_null(again);
    assert_int_equal(shexec_run_start(run_of(t)), SHEXEC_ESTATE);
    assert_int_equal(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK); /* finished: nothing to do */
    assert_int_equal(shexec_run_state(run_of(t)), SHEXEC_STATE_EXITED);
    shexec_task_free(t);
}

static void test_task_does_not_move_cwd(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_set_cwd(s, "/"), SHEXEC_OK);
    shexec_task *t = start_task(s, "cd /tmp && pwd");
    wait_done(s, t);
    assert_string_equal(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), "/tmp\n");
    assert_string_equal(shexec_session_cwd(s), "/");
    shexec_task_free(t);
}

static void test_kill_and_timeout(void **state)
{
    shexec_session *s = *state;
    shexec_task *t = start_task(s, "trap '' TERM; sleep 60 & echo $!; wait");
    assert_int_equal(shexec_run_timeout_ms(run_of(t)), 0); /* none unless set */
    while (shexec_run_output_total(run_of(t), SHEXEC_STDOUT) == 0)
        shexec_session_wait(s, 100);
    int child = atoi(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL));
    assert_true(child > 0);
    assert_int_equal(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK);
    wait_done(s, t);
    assert_int_equal(shexec_run_state(run_of(t)), SHEXEC_STATE_KILLED);
    assert_int_equal(shexec_run_signal(run_of(t)), SIGKILL); /* TERM was ignored */
    assert_true(tu_wait_pid_gone(child, 2000));
    shexec_task_free(t);

    /* no timeout by default; an optional safety net, not clamped to the
     * session maximum (which is for foreground runs); 0 is not "none" */
    assert_int_equal(shexec_session_set_timeouts_ms(s, 100, 200), SHEXEC_OK);
    shexec_run *nr = new_run(s, "sleep 60");
    assert_int_equal(shexec_run_set_timeout_ms(nr, 0), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_set_timeout_ms(nr, 300), SHEXEC_OK);
    assert_int_equal(shexec_run_timeout_ms(nr), 200); /* what a foreground start would get */
    shexec_task *n = as_task(nr);
    assert_int_equal(shexec_run_set_timeout_ms(run_of(n), 5), SHEXEC_ESTATE);
    assert_int_equal(shexec_run_timeout_ms(run_of(n)), 300);
    wait_done(s, n);
    assert_int_equal(shexec_run_state(run_of(n)), SHEXEC_STATE_TIMED_OUT);
    assert_true(shexec_run_duration_ms(run_of(n)) >= 250);
    shexec_task_free(n);

    /* there is no unstarted task to kill any more: the unstarted run is
     * refused by its cancel, and a NULL task by kill */
    shexec_run *fresh = new_run(s, "true");
    assert_int_equal(shexec_run_cancel(fresh), SHEXEC_ESTATE);
    assert_int_equal(shexec_run_state(fresh), SHEXEC_STATE_NEW);
    shexec_run_free(fresh);
    assert_int_equal(shexec_run_cancel(shexec_task_run(NULL)), SHEXEC_EINVAL);
}

static void test_read_only_new_output(void **state)
{
    shexec_session *s = *state;
    shexec_task *t = start_task(s, "echo one; sleep 0.3; echo two; sleep 0.3; echo three");
    while (shexec_run_output_total(run_of(t), SHEXEC_STDOUT) < 4)
        shexec_session_wait(s, 50);
    size_t n;
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, &n), "one\n");
    assert_int_equal(n, 4);
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, &n), "");
    assert_int_equal(n, 0);
    wait_done(s, t);
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, NULL), "two\nthree\n");
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, NULL), "");
    /* the whole output stays available */
    assert_string_equal(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), "one\ntwo\nthree\n");
    assert_string_equal(shexec_task_read(t, 9, &n), "");
    shexec_task_free(t);
}

/* A stdout read stays valid across a stderr read: each stream keeps its own
 * last result, so reading both streams in turn is not a use after free. */
static void test_read_both_streams_in_turn(void **state)
{
    shexec_session *s = *state;
    shexec_task *t = start_task(s, "echo out; echo err >&2");
    wait_done(s, t);
    size_t on, en;
    const char *out = shexec_task_read(t, SHEXEC_STDOUT, &on);
    const char *err = shexec_task_read(t, SHEXEC_STDERR, &en);
    assert_int_equal(on, 4);
    assert_memory_equal(out, "out\n", 4);
    assert_int_equal(en, 4);
    assert_memory_equal(err, "err\n", 4);
    shexec_task_free(t);
}

typedef struct {
    shx_buf out;
} sink;

static void to_sink(void *user, int stream, const char *data, size_t len)
{
    if (stream == SHEXEC_STDOUT)
        shx_buf_append(&((sink *)user)->out, data, len);
}

static void expected_seq(shx_buf *b, int tag, int lines)
{
    for (int i = 1; i <= lines; i++)
        shx_buf_printf(b, "task%d line %d\n", tag, i);
}

static void test_five_tasks_stream_concurrently(void **state)
{
    shexec_session *s = *state;
    sink sinks[5];
    shexec_task *t[5];
    for (int i = 0; i < 5; i++) {
        sinks[i].out = (shx_buf)SHX_BUF_INIT;
        char cmd[128];
        snprintf(cmd, sizeof cmd, "for i in $(seq 1 3000); do echo \"task%d line $i\"; done", i);
        shexec_run *r = new_run(s, cmd);
        assert_int_equal(shexec_run_set_output_fn(r, to_sink, &sinks[i]), SHEXEC_OK);
        assert_int_equal(shexec_run_set_output_limit(r, 1 << 20, SHEXEC_UNIT_BYTES,
                                                     SHEXEC_KEEP_HEAD),
                         SHEXEC_OK);
        t[i] = as_task(r);
    }
    for (int i = 0; i < 5; i++)
        wait_done(s, t[i]);
    for (int i = 0; i < 5; i++) {
        shx_buf want = SHX_BUF_INIT;
        expected_seq(&want, i, 3000);
        assert_int_equal(sinks[i].out.len, want.len);
        assert_memory_equal(sinks[i].out.data, want.data, want.len);
        size_t n;
        const char *out = shexec_run_output(run_of(t[i]), SHEXEC_STDOUT, &n);
        assert_int_equal(n, want.len);
        assert_memory_equal(out, want.data, want.len);
        assert_int_equal(shexec_run_exit_code(run_of(t[i])), 0);
        shx_buf_free(&want);
        shx_buf_free(&sinks[i].out);
        shexec_task_free(t[i]);
    }
}

static void test_unpumped_task_blocks_without_loss(void **state)
{
    shexec_session *s = *state;
    sink k = {SHX_BUF_INIT};
    /* ~3.4 MB, more than even a raised pipe capacity */
    shexec_run *r = new_run(s, "seq 1 500000; echo end");
    assert_int_equal(shexec_run_set_output_fn(r, to_sink, &k), SHEXEC_OK);
    shexec_task *t = as_task(r);
    int cap = fcntl(shx_test_run_fd(run_of(t), SHEXEC_STDOUT), F_GETPIPE_SZ);
    assert_true(cap >= 65536);
    print_message("task pipe capacity %d bytes\n", cap);
    usleep(400000); /* nobody pumps: the writer fills the pipe and blocks */
    assert_false(shexec_run_state(run_of(t)) > SHEXEC_STATE_RUNNING);
    wait_done(s, t);
    shx_buf want = SHX_BUF_INIT;
    for (int i = 1; i <= 500000; i++)
        shx_buf_printf(&want, "%d\n", i);
    shx_buf_puts(&want, "end\n");
    assert_int_equal(k.out.len, want.len);
    assert_memory_equal(k.out.data, want.data, want.len);
    assert_int_equal(shexec_run_output_total(run_of(t), SHEXEC_STDOUT), want.len);
    assert_true(shexec_run_truncated(run_of(t), SHEXEC_STDOUT));
    shx_buf_free(&want);
    shx_buf_free(&k.out);
    shexec_task_free(t);
}

static void test_stdin_input(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = new_run(s, "while read -r line; do echo \"got $line\"; done; echo eof");
    assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    shexec_task *t = as_task(r);
    assert_int_equal(shexec_run_write(run_of(t), "hello\n", 6), SHEXEC_OK);
    while (shexec_run_output_total(run_of(t), SHEXEC_STDOUT) < 10)
        shexec_session_wait(s, 100);
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, NULL), "got hello\n");
    assert_int_equal(shexec_run_write(run_of(t), "a\nb\n", 4), SHEXEC_OK);
    assert_int_equal(shexec_run_close_stdin(run_of(t)), SHEXEC_OK);
    assert_int_equal(shexec_run_write(run_of(t), "late\n", 5), SHEXEC_EPIPE);
    wait_done(s, t);
    assert_string_equal(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL),
                        "got hello\ngot a\ngot b\neof\n");
    assert_int_equal(shexec_run_write(run_of(t), "x", 1), SHEXEC_EPIPE);
    shexec_task_free(t);

    /* stdin not enabled: /dev/null, and writing is refused */
    t = start_task(s, "cat; echo done");
    assert_int_equal(shexec_run_write(run_of(t), "x", 1), SHEXEC_EPIPE);
    assert_non_null(strstr(shexec_session_errmsg(s), "not enabled"));
    wait_done(s, t);
    assert_string_equal(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), "done\n");
    shexec_task_free(t);

    /* a reader that goes away: the write fails inside, the host gets no SIGPIPE
     * (its disposition is the default, which would kill this test) */
    struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
    sigaction(SIGPIPE, &dfl, &old);
    r = new_run(s, "exec 0<&-; sleep 0.3");
    assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    t = as_task(r);
    usleep(100000);
    assert_int_equal(shexec_run_write(run_of(t), "into the void\n", 14), SHEXEC_OK);
    wait_done(s, t);
    assert_int_equal(shexec_run_exit_code(run_of(t)), 0);
    shexec_task_free(t);
    sigset_t pending;
    sigpending(&pending);
    assert_false(sigismember(&pending, SIGPIPE));
    sigaction(SIGPIPE, &old, NULL);

    /* a foreground run with input, driven without blocking */
    r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "tr a-z A-Z"), SHEXEC_OK);
    assert_int_equal(shexec_run_write(r, "x", 1), SHEXEC_EPIPE); /* not enabled, not started */
    assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    assert_int_equal(shexec_run_write(r, "shout\n", 6), SHEXEC_OK);
    assert_int_equal(shexec_run_close_stdin(r), SHEXEC_OK);
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
        shexec_session_wait(s, 1000);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "SHOUT\n");
    shexec_run_free(r);
}

/* Input queued in pieces while the task reads it through a one-page pipe
 * (pipe_sink): every byte is queued once and written once, in linear time
 * (see test_stdin_large_input_linear in test_run.c for the numbers). */
static void test_stdin_large_input_interleaved(void **state)
{
    shexec_session *s = *state;
    const char *v = getenv("VALGRIND");
    size_t total = v && strcmp(v, "1") == 0 ? (4u << 20) : (96u << 20), piece = 64 * 1024;
    shexec_run *r = new_run(s, tu_helper("pipe_sink"));
    assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    shexec_task *t = as_task(r);
    char *buf = malloc(piece);
    assert_non_null(buf);
    memset(buf, 'y', piece);
    int64_t t0 = tu_now_ms();
    for (size_t done = 0; done < total; done += piece) {
        /* past the bound on queued input a write is refused whole: pump
         * (the sink reads) and write the same piece again */
        int rc;
        while ((rc = shexec_run_write(run_of(t), buf, piece)) == SHEXEC_ELIMIT)
            assert_true(shexec_session_wait(s, 10) >= 0);
        assert_int_equal(rc, SHEXEC_OK);
        assert_true(shexec_session_wait(s, 0) >= 0);
    }
    free(buf);
    assert_int_equal(shexec_run_close_stdin(run_of(t)), SHEXEC_OK);
    while (shexec_run_state(run_of(t)) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() - t0 < 30000);
        assert_true(shexec_session_wait(s, 1000) >= 0);
    }
    int64_t ms = tu_now_ms() - t0;
    print_message("%zu MiB written to a task: %lld ms\n", total >> 20, (long long)ms);
    char want[32];
    snprintf(want, sizeof want, "%zu\n", total);
    assert_string_equal(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), want);
    assert_true(ms < 30000); /* it used to take about 2 minutes */
    shexec_task_free(t);
}

/*
 * Input a command has not read waits in a bounded queue (1 MiB by default):
 * 400 MiB written in pieces to a command that never reads are refused past
 * the bound (SHEXEC_ELIMIT, the message saying how much waits and the
 * bound), and the host's memory stays as it was. A write is taken whole or
 * not at all: what a command reads is exactly what was taken, up to the
 * bound to the byte; a write into an empty queue is taken whatever its
 * size.
 */
static void test_stdin_queue_bounded(void **state)
{
    shexec_session *s = *state;
    const size_t piece = 64 * 1024, bound = 1u << 20;
    size_t total = tu_under_valgrind() ? (40u << 20) : (400u << 20);
    char *buf = malloc(piece);
    assert_non_null(buf);
    memset(buf, 'q', piece);
    shexec_run *r = new_run(s, "sleep 30");
    assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    shexec_task *t = as_task(r);
    long before = tu_rss_kib();
    assert_true(before > 0);
    size_t taken = 0;
    for (size_t done = 0; done < total; done += piece) {
        int rc = shexec_run_write(run_of(t), buf, piece);
        if (rc == SHEXEC_OK)
            taken += piece;
        else
            assert_int_equal(rc, SHEXEC_ELIMIT);
    }
    long grew = tu_rss_kib() - before;
    print_message("%zu MiB written to a command that never reads: %zu KiB taken, RSS +%ld "
                  "KiB\n", total >> 20, taken >> 10, grew);
    assert_int_equal(taken, bound); /* the loop did not run: nothing went to the pipe */
    assert_true(grew < 8 * 1024);
    char want[256];
    snprintf(want, sizeof want, "the command has not read the %zu bytes of input queued for "
             "it; %zu more would pass the bound of %zu bytes", bound, piece, bound);
    assert_non_null(strstr(shexec_session_errmsg(s), want));
    shexec_task_free(t);
    free(buf);

    /* all or nothing: the command reads what was taken, to the byte */
    static char big[3 << 20];
    memset(big, 'w', sizeof big);
    r = new_run(s, "wc -c");
    assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    t = as_task(r);
    assert_int_equal(shexec_run_write(run_of(t), big, 600000), SHEXEC_OK);
    assert_int_equal(shexec_run_write(run_of(t), big, 500000), SHEXEC_ELIMIT);
    assert_int_equal(shexec_run_write(run_of(t), big, bound - 600000), SHEXEC_OK);
    assert_int_equal(shexec_run_write(run_of(t), big, 1), SHEXEC_ELIMIT);
    assert_int_equal(shexec_run_write(run_of(t), big, 0), SHEXEC_OK); /* nothing: no more */
    assert_int_equal(shexec_run_close_stdin(run_of(t)), SHEXEC_OK);
    wait_done(s, t);
    snprintf(want, sizeof want, "%zu\n", bound);
    assert_string_equal(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), want);
    shexec_task_free(t);

    /* into an empty queue, any size: input given all at once */
    r = new_run(s, "wc -c");
    assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    t = as_task(r);
    assert_int_equal(shexec_run_write(run_of(t), big, sizeof big), SHEXEC_OK);
    assert_int_equal(shexec_run_write(run_of(t), big, 1), SHEXEC_ELIMIT);
    assert_int_equal(shexec_run_close_stdin(run_of(t)), SHEXEC_OK);
    wait_done(s, t);
    snprintf(want, sizeof want, "%zu\n", sizeof big);
    assert_string_equal(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), want);
    shexec_task_free(t);
}

/* The session's bound on queued input: set, read back, refused at 0, in
 * force for a command already running; a terminal's end of input (^D)
 * gets through a full queue. */
static void test_stdin_queue_bound_setting(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_input_queue_max(s), SHEXEC_DEFAULT_INPUT_QUEUE_MAX);
    assert_int_equal(shexec_session_input_queue_max(NULL), SHEXEC_DEFAULT_INPUT_QUEUE_MAX);
    assert_int_equal(SHEXEC_DEFAULT_INPUT_QUEUE_MAX, 1u << 20);
    assert_int_equal(shexec_session_set_input_queue_max(NULL, 10), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_input_queue_max(s, 0), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_input_queue_max(s), SHEXEC_DEFAULT_INPUT_QUEUE_MAX);
    assert_int_equal(shexec_session_set_input_queue_max(s, 10), SHEXEC_OK);
    assert_int_equal(shexec_session_input_queue_max(s), 10);

    shexec_run *r = new_run(s, "wc -c");
    assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    shexec_task *t = as_task(r);
    assert_int_equal(shexec_run_write(run_of(t), "123456", 6), SHEXEC_OK);
    assert_int_equal(shexec_run_write(run_of(t), "78901", 5), SHEXEC_ELIMIT);
    assert_non_null(strstr(shexec_session_errmsg(s), "the 6 bytes of input queued for it; 5 more "
                                                     "would pass the bound of 10 bytes"));
    /* raised: the running command's next write is measured against it */
    assert_int_equal(shexec_session_set_input_queue_max(s, 11), SHEXEC_OK);
    assert_int_equal(shexec_run_write(run_of(t), "78901", 5), SHEXEC_OK);
    assert_int_equal(shexec_run_close_stdin(run_of(t)), SHEXEC_OK);
    wait_done(s, t);
    assert_string_equal(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), "11\n");
    shexec_task_free(t);

    /* a terminal: the queue full, ^D still ends the input */
    assert_int_equal(shexec_session_set_input_queue_max(s, 10), SHEXEC_OK);
    r = new_run(s, "wc -c");
    assert_int_equal(shexec_run_set_pty(r, SHEXEC_PTY_ON), SHEXEC_OK);
    t = as_task(r);
    assert_int_equal(shexec_run_write(run_of(t), "abcdefghi\n", 10), SHEXEC_OK);
    assert_int_equal(shexec_run_write(run_of(t), "k", 1), SHEXEC_ELIMIT);
    assert_int_equal(shexec_run_close_stdin(run_of(t)), SHEXEC_OK);
    wait_done(s, t);
    assert_int_equal(shexec_run_exit_code(run_of(t)), 0);
    assert_non_null(strstr(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), "10"));
    shexec_task_free(t);
}

static void test_leftovers_adopted(void **state)
{
    shexec_session *s = *state;
    /* without /proc, leftovers that let go of the pipes are killed, not
     * adopted (test_hostile's test_leftovers_without_proc) */
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "/proc, to adopt leftovers that leave the pipes"))
        skip();
    /* a server that logs nothing to our pipes */
    int64_t t0 = tu_now_ms();
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "python3 -m http.server 0 --bind 127.0.0.1 >/dev/null 2>&1 & echo $!"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_true(tu_now_ms() - t0 < 5000);
    int server = atoi(shexec_run_output(r, SHEXEC_STDOUT, NULL));
    assert_true(server > 0);
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    shexec_task *srv = NULL;
    assert_int_equal(shexec_session_take_task(&srv, s, tu_leftover_id(r)), SHEXEC_OK);
    shexec_run_free(r);
    shexec_session_wait(s, 200);
    assert_int_equal(shexec_run_state(run_of(srv)), SHEXEC_STATE_RUNNING);
    assert_true(tu_pid_alive(server));

    /* late output of a leftover is read from its task: the run returns
     * once the leftover is quiet for the drain, long before it prints */
    assert_int_equal(shexec_run_new(&r, s, "(sleep 1.5; echo late; echo err-late >&2) & echo now"),
                     SHEXEC_OK);
    t0 = tu_now_ms();
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_true(tu_now_ms() - t0 < 1200);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "now\n");
    shexec_task *late = NULL;
    assert_int_equal(shexec_session_take_task(&late, s, tu_leftover_id(r)), SHEXEC_OK);
    shexec_run_free(r);
    wait_done(s, late);
    assert_string_equal(shexec_run_output(run_of(late), SHEXEC_STDOUT, NULL), "late\n");
    assert_string_equal(shexec_run_output(run_of(late), SHEXEC_STDERR, NULL), "err-late\n");
    assert_int_equal(shexec_run_state(run_of(late)), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(run_of(late)), -1); /* not our child: no status */
    shexec_task_free(late);

    /* killing the adopted server */
    assert_int_equal(shexec_run_cancel(shexec_task_run(srv)), SHEXEC_OK);
    wait_done(s, srv);
    assert_int_equal(shexec_run_state(run_of(srv)), SHEXEC_STATE_KILLED);
    assert_true(tu_wait_pid_gone(server, 2000));
    shexec_task_free(srv);
}

static void test_leftovers_killed_when_table_full(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_set_max_tasks(s, 1), SHEXEC_OK);
    shexec_task *busy = start_task(s, "sleep 60");
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "sleep 60 & echo $!"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    int pid = atoi(shexec_run_output(r, SHEXEC_STDOUT, NULL));
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_KILLED);
    assert_null(tu_leftover_id(r));
    assert_true(tu_wait_pid_gone(pid, 2000));
    shexec_run_free(r);
    shexec_task_free(busy);
}

static void test_task_keeps_its_own_leftovers(void **state)
{
    shexec_session *s = *state;
    shexec_task *t = start_task(s, "sleep 60 & echo $!");
    int64_t end = tu_now_ms() + 3000;
    while (shexec_run_output_total(run_of(t), SHEXEC_STDOUT) == 0 && tu_now_ms() < end)
        shexec_session_wait(s, 100);
    int pid = atoi(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL));
    shexec_session_wait(s, 300);
    /* the shell is gone, its child is not: the task is still running */
    assert_int_equal(shexec_run_state(run_of(t)), SHEXEC_STATE_RUNNING);
    assert_true(tu_pid_alive(pid));
    shexec_run_cancel(shexec_task_run(t));
    wait_done(s, t);
    assert_true(tu_wait_pid_gone(pid, 2000));
    shexec_task_free(t);
}

static void test_session_free_stops_everything(void **state)
{
    (void)state;
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    shexec_session_set_kill_grace_ms(s, 300);
    shexec_task *t = start_task(s, "trap '' TERM; sleep 60");
    shexec_task *u = start_task(s, "sleep 60 & sleep 60 & wait");
    (void)u;
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "sleep 60 >/dev/null & echo $!"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    int leftover = atoi(shexec_run_output(r, SHEXEC_STDOUT, NULL));
    pid_t tp = (pid_t)shexec_run_pid(run_of(t)), up = (pid_t)shexec_run_pid(run_of(u));
    assert_true(tp > 0 && up > 0);
    shexec_session_free(s); /* tasks freed with it */
    assert_false(tu_pid_alive(tp));
    assert_false(tu_pid_alive(up));
    assert_true(tu_wait_pid_gone(leftover, 2000));
    shexec_run_free(r);
}

/* ---- host event loop ------------------------------------------------------ */

static void test_host_poll_loop(void **state)
{
    shexec_session *s = *state;
    int host_pipe[2];
    assert_int_equal(pipe(host_pipe), 0);
    sink k[3];
    shexec_task *t[3];
    for (int i = 0; i < 3; i++) {
        k[i].out = (shx_buf)SHX_BUF_INIT;
        char cmd[128];
        snprintf(cmd, sizeof cmd, "for i in $(seq 1 20); do echo \"task%d line $i\"; sleep 0.01; done", i);
        shexec_run *r = new_run(s, cmd);
        assert_int_equal(shexec_run_set_output_fn(r, to_sink, &k[i]), SHEXEC_OK);
        t[i] = as_task(r);
    }
    int32_t tmo;
    assert_int_equal(shexec_session_pollfds(NULL, 0, NULL, s), SHEXEC_EINVAL);
    int need = shexec_session_pollfds(NULL, 0, &tmo, s);
    assert_true(need >= 6); /* stdout, stderr (and pidfds) of three tasks */

    int host_events = 0, rounds = 0, finished = 0;
    while (shexec_run_state(run_of(t[0])) <= SHEXEC_STATE_RUNNING ||
           shexec_run_state(run_of(t[1])) <= SHEXEC_STATE_RUNNING ||
           shexec_run_state(run_of(t[2])) <= SHEXEC_STATE_RUNNING) {
        assert_true(++rounds < 100000);
        struct pollfd fds[64];
        fds[0] = (struct pollfd){.fd = host_pipe[0], .events = POLLIN};
        int n = shexec_session_pollfds(fds + 1, 63, &tmo, s);
        assert_true(n >= 0 && n <= 63);
        if (rounds == 5)
            assert_int_equal(write(host_pipe[1], "!", 1), 1); /* the host's own event */
        int got = poll(fds, (nfds_t)n + 1, tmo);
        assert_true(got >= 0);
        if (fds[0].revents & POLLIN) {
            char c;
            assert_int_equal(read(host_pipe[0], &c, 1), 1);
            host_events++;
        }
        /* every other round the host hands over its whole array, its own
         * entry too, in the reverse order: entries are matched by descriptor */
        int rc;
        if (rounds % 2) {
            for (int i = 0, j = n; i < j; i++, j--) {
                struct pollfd tmp = fds[i];
                fds[i] = fds[j];
                fds[j] = tmp;
            }
            rc = shexec_session_process(s, fds, (uint32_t)n + 1);
        } else {
            rc = shexec_session_process(s, fds + 1, (uint32_t)n);
        }
        assert_true(rc >= 0);
        finished += rc;
    }
    assert_int_equal(host_events, 1);
    assert_int_equal(finished, 3); /* process counts what finished in it */
    for (int i = 0; i < 3; i++) {
        shx_buf want = SHX_BUF_INIT;
        expected_seq(&want, i, 20);
        assert_int_equal(k[i].out.len, want.len);
        assert_memory_equal(k[i].out.data, want.data, want.len);
        shx_buf_free(&want);
        shx_buf_free(&k[i].out);
        shexec_task_free(t[i]);
    }
    /* nothing running: nothing to watch, no deadline */
    assert_int_equal(shexec_session_pollfds(NULL, 0, &tmo, s), 0);
    assert_int_equal(tmo, -1);
    close(host_pipe[0]);
    close(host_pipe[1]);
}

static void test_foreground_and_tasks_together(void **state)
{
    shexec_session *s = *state;
    shexec_task *bg = start_task(s, "for i in 1 2 3; do echo bg$i; sleep 0.1; done");
    /* a blocking foreground run pumps the task too */
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "sleep 0.6; echo fg"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "fg\n");
    assert_string_equal(shexec_run_output(run_of(bg), SHEXEC_STDOUT, NULL), "bg1\nbg2\nbg3\n");
    shexec_run_free(r);
    shexec_session_wait(s, 2000);
    assert_true(shexec_run_state(run_of(bg)) > SHEXEC_STATE_RUNNING);
    shexec_task_free(bg);
}

/* ---- a task is a run started in the background ---------------------------- */

/* shexec_run_start_task() must fail with `code`: no task (*out written
 * NULL), and the run not started. */
static void start_task_fails(shexec_run *r, int code)
{
    static char not_a_task;
    shexec_task *t = (shexec_task *)(void *)&not_a_task; /* anything but NULL */
    assert_int_equal(shexec_run_start_task(&t, r), code);
    assert_null(t);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_NEW);
    assert_int_equal(shexec_run_pid(r), 0);
    assert_false(shexec_run_state(r) > SHEXEC_STATE_RUNNING);
}

/*
 * A start that fails leaves the run the caller's: no task, the run still
 * NEW, and it can be freed or started again once the cause is gone.
 */
static void test_start_task_failure_leaves_run_to_caller(void **state)
{
    shexec_session *s = *state;
    /* no slot free */
    assert_int_equal(shexec_session_set_max_tasks(s, 1), SHEXEC_OK);
    shexec_task *busy = start_task(s, "sleep 60");
    shexec_run *r = new_run(s, "echo second");
    start_task_fails(r, SHEXEC_ELIMIT);
    /* still configurable: nothing of it was started */
    assert_int_equal(shexec_run_set_timeout_ms(r, 10000), SHEXEC_OK);
    shexec_task_free(busy);
    /* started again, once there is room */
    shexec_task *t = as_task(r);
    assert_ptr_equal(shexec_task_run(t), r);
    wait_done(s, t);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "second\n");
    shexec_task_free(t);

    /* a failure of the start itself: the working directory is gone */
    const char *tmp = tu_mkdtemp();
    assert_non_null(tmp);
    char dir[256];
    snprintf(dir, sizeof dir, "%s", tmp);
    r = new_run(s, "pwd");
    assert_int_equal(shexec_run_set_cwd(r, dir), SHEXEC_OK);
    assert_int_equal(rmdir(dir), 0);
    start_task_fails(r, SHEXEC_ENOCWD);
    assert_non_null(strstr(shexec_session_errmsg(s), dir));
    /* the directory is back: the same run starts */
    assert_int_equal(mkdir(dir, 0700), 0);
    t = as_task(r);
    wait_done(s, t);
    char want[300];
    snprintf(want, sizeof want, "%s\n", dir);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), want);
    shexec_task_free(t);

    /* or it is simply freed: the caller's to free, nothing left behind */
    r = new_run(s, "pwd");
    assert_int_equal(shexec_run_set_cwd(r, dir), SHEXEC_OK);
    assert_int_equal(rmdir(dir), 0);
    start_task_fails(r, SHEXEC_ENOCWD);
    shexec_run_free(r);
    assert_int_equal(shx_test_tasks(s), 0);
    assert_int_equal(shx_test_runs(s), 0);
}

/*
 * The task owns its run: shexec_run_free() on it is ignored, running or
 * finished, and the task keeps working; freeing the task frees both (the
 * sanitizer build and the leak guard see to "both").
 */
static void test_run_free_on_task_run_ignored(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = new_run(s, "read -r x; echo \"got $x\"; exit 5");
    assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    shexec_task *t = as_task(r);
    pid_t pid = (pid_t)shexec_run_pid(r);
    assert_true(pid > 0);
    shexec_run_free(r); /* ignored: not freed, not terminated */
    shexec_run_free(shexec_task_run(t));
    assert_ptr_equal(shexec_task_run(t), r);
    assert_true(shexec_session_wait(s, 100) >= 0);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_RUNNING);
    assert_true(tu_pid_alive(pid));
    /* input, output and the result still go through the run */
    assert_int_equal(shexec_run_write(r, "in\n", 3), SHEXEC_OK);
    wait_done(s, t);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(r), 5);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "got in\n");
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, NULL), "got in\n");
    shexec_run_free(r); /* finished: still ignored */
    assert_int_equal(shexec_run_exit_code(shexec_task_run(t)), 5);
    shexec_task *found = NULL;
    assert_int_equal(shexec_session_take_task(&found, s, shexec_task_id(t)), SHEXEC_OK);
    assert_ptr_equal(found, t);
    shexec_task_free(t); /* frees the task and its run */
    assert_int_equal(shx_test_tasks(s), 0);
    assert_int_equal(shx_test_runs(s), 0);

    /* a running task freed with its run ignored before: killed and reaped */
    t = start_task(s, "sleep 60");
    pid = (pid_t)shexec_run_pid(shexec_task_run(t));
    shexec_run_free(shexec_task_run(t));
    shexec_task_free(t);
    assert_false(tu_pid_alive(pid));
    assert_int_equal(shx_test_tasks(s), 0);
}

/* Cancelling a task's run is killing the task: state KILLED, not CANCELLED.
 * The shell is past its start first: bash, which runs an EXIT trap, catches
 * a SIGTERM that comes while it starts and then waits for its first
 * command, which the group signal came too early to reach. */
static void test_run_cancel_on_task_run_kills(void **state)
{
    shexec_session *s = *state;
    int seen = -1;
    done_calls = 0;
    shexec_task *t = start_task(s, "echo go; sleep 60");
    while (!strstr(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), "go"))
        assert_true(shexec_session_wait(s, 100) >= 0);
    assert_int_equal(shexec_task_set_done_fn(t, on_done, &seen), SHEXEC_OK);
    assert_int_equal(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK);
    wait_done(s, t);
    assert_int_equal(shexec_run_state(run_of(t)), SHEXEC_STATE_KILLED);
    assert_int_equal(shexec_run_signal(run_of(t)), SIGTERM);
    assert_int_equal(shexec_run_exit_code(run_of(t)), -1);
    assert_int_equal(done_calls, 1);
    assert_int_equal(seen, SHEXEC_STATE_KILLED);
    /* finished: cancel and kill do nothing more */
    assert_int_equal(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK);
    assert_int_equal(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK);
    assert_int_equal(shexec_run_state(run_of(t)), SHEXEC_STATE_KILLED);
    shexec_task_free(t);
}

static int other_done_calls;

static void on_done_other(void *user, shexec_task *t)
{
    (void)user;
    (void)t;
    other_done_calls++;
}

/*
 * The done callback is set after the start and called exactly once, also
 * when the command ended before it was set (nothing is missed: the task is
 * finished only once the loop has seen it end). Replacing it while the task
 * runs replaces it; once the task has finished it is SHEXEC_ESTATE.
 */
static void test_done_fn_set_after_start(void **state)
{
    shexec_session *s = *state;
    int seen = -1;
    done_calls = other_done_calls = 0;
    assert_int_equal(shexec_task_set_done_fn(NULL, on_done, &seen), SHEXEC_EINVAL);

    /* the shell has exited before the callback is set; the loop was not pumped */
    shexec_task *t = start_task(s, "exit 4");
    pid_t pid = (pid_t)shexec_run_pid(run_of(t));
    assert_true(tu_wait_pid_gone(pid, 10000));
    assert_false(shexec_run_state(run_of(t)) > SHEXEC_STATE_RUNNING);
    assert_int_equal(shexec_task_set_done_fn(t, on_done, &seen), SHEXEC_OK);
    wait_done(s, t);
    assert_int_equal(done_calls, 1);
    assert_int_equal(seen, SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(run_of(t)), 4);
    /* once finished it cannot be set, and it is not called again */
    assert_int_equal(shexec_task_set_done_fn(t, on_done_other, NULL), SHEXEC_ESTATE);
    assert_non_null(strstr(shexec_session_errmsg(s), "finished"));
    assert_int_equal(shexec_session_wait(s, 0), 0);
    assert_int_equal(done_calls, 1);
    assert_int_equal(other_done_calls, 0);
    shexec_task_free(t);

    /* replaced while running: only the last one set is called */
    t = start_task(s, "sleep 0.2");
    assert_int_equal(shexec_task_set_done_fn(t, on_done_other, NULL), SHEXEC_OK);
    assert_int_equal(shexec_task_set_done_fn(t, on_done, &seen), SHEXEC_OK);
    wait_done(s, t);
    assert_int_equal(done_calls, 2);
    assert_int_equal(other_done_calls, 0);
    shexec_task_free(t);
}

typedef struct {
    shx_buf out;
    int calls;
} tagged_sink;

static void to_tagged_sink(void *user, int stream, const char *data, size_t len)
{
    tagged_sink *k = user;
    if (stream == SHEXEC_STDOUT) {
        shx_buf_append(&k->out, data, len);
        k->calls++;
    }
}

/* Wait until the task's stdout holds `text`. */
static void wait_output(shexec_session *s, shexec_task *t, const char *text)
{
    int64_t end = tu_now_ms() + 20000;
    while (!strstr(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), text)) {
        assert_true(tu_now_ms() < end);
        assert_false(shexec_run_state(run_of(t)) > SHEXEC_STATE_RUNNING);
        assert_true(shexec_session_wait(s, 100) >= 0);
    }
}

/*
 * An output callback set on a running task's run gets the output read
 * from then on (not what was read before), and can be changed again; set
 * right after the start it misses nothing; once finished it is refused.
 */
static void test_output_fn_set_while_running(void **state)
{
    shexec_session *s = *state;
    tagged_sink a = {SHX_BUF_INIT, 0}, b = {SHX_BUF_INIT, 0};
    shexec_run *r = new_run(s, "echo one; read -r x; echo two; read -r y; echo three");
    assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    shexec_task *t = as_task(r);
    wait_output(s, t, "one\n"); /* read with no callback */
    assert_int_equal(shexec_run_set_output_fn(r, to_tagged_sink, &a), SHEXEC_OK);
    assert_int_equal(shexec_run_write(r, "\n", 1), SHEXEC_OK);
    wait_output(s, t, "two\n");
    assert_string_equal(a.out.data, "two\n");
    /* changed: the new one gets what follows, the old one nothing more */
    assert_int_equal(shexec_run_set_output_fn(r, to_tagged_sink, &b), SHEXEC_OK);
    assert_int_equal(shexec_run_write(r, "\n", 1), SHEXEC_OK);
    wait_done(s, t);
    assert_string_equal(a.out.data, "two\n");
    assert_string_equal(b.out.data, "three\n");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "one\ntwo\nthree\n");
    assert_int_equal(shexec_run_set_output_fn(r, to_tagged_sink, &a), SHEXEC_ESTATE);
    shexec_task_free(t);
    shx_buf_free(&a.out);
    shx_buf_free(&b.out);

    /* set right after the start, even once the command has written and
     * exited: it gets everything */
    tagged_sink c = {SHX_BUF_INIT, 0};
    t = start_task(s, "echo first; echo second");
    assert_true(tu_wait_pid_gone((pid_t)shexec_run_pid(run_of(t)), 10000));
    assert_int_equal(shexec_run_set_output_fn(run_of(t), to_tagged_sink, &c), SHEXEC_OK);
    wait_done(s, t);
    assert_string_equal(c.out.data, "first\nsecond\n");
    shexec_task_free(t);
    shx_buf_free(&c.out);

    /* the task that adopted a command's leftovers has a run too: its later
     * output reaches a callback set there */
    tagged_sink d = {SHX_BUF_INIT, 0};
    r = new_run(s, "(sleep 0.3; echo late; echo later) & echo now");
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "now\n");
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    shexec_task *left = NULL;
    assert_int_equal(shexec_session_take_task(&left, s, tu_leftover_id(r)), SHEXEC_OK);
    shexec_run_free(r);
    assert_int_equal(shexec_run_set_output_fn(shexec_task_run(left), to_tagged_sink, &d),
                     SHEXEC_OK);
    wait_done(s, left);
    assert_string_equal(d.out.data, "late\nlater\n");
    shexec_task_free(left);
    shx_buf_free(&d.out);
}

/* shexec_session_wait() returns how many runs and tasks finished in it. */
static void test_session_wait_counts_finished(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_wait(NULL, 0), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_wait(s, 0), 0); /* nothing runs */

    /* one task finishes: 1, over however many calls it takes */
    shexec_task *t = start_task(s, "true");
    int finished = 0, last = -1;
    int64_t end = tu_now_ms() + 20000;
    while (shexec_run_state(run_of(t)) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() < end);
        last = shexec_session_wait(s, 1000);
        assert_true(last >= 0);
        finished += last;
    }
    assert_int_equal(finished, 1);
    assert_int_equal(last, 1);
    assert_int_equal(shexec_session_wait(s, 0), 0); /* finished tasks are not counted again */
    shexec_task_free(t);

    /* time running out with nothing finished: 0 */
    shexec_task *sleeper = start_task(s, "sleep 60");
    assert_int_equal(shexec_session_wait(s, 50), 0);

    /* a foreground run and a task counted together */
    shexec_run *r = new_run(s, "true");
    t = start_task(s, "true");
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    finished = 0;
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING || shexec_run_state(run_of(t)) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() < end);
        int rc = shexec_session_wait(s, 1000);
        assert_true(rc >= 0);
        finished += rc;
    }
    assert_int_equal(finished, 2);
    assert_false(shexec_run_state(run_of(sleeper)) > SHEXEC_STATE_RUNNING);
    shexec_run_free(r);
    shexec_task_free(t);
    shexec_task_free(sleeper);
}

/* A host shutting down shortens the grace: a task already being killed
 * gets its SIGKILL sooner, not after the grace it was killed with. */
static void test_shorter_grace_brings_kill_forward(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_set_kill_grace_ms(s, 5000), SHEXEC_OK);
    shexec_task *t = start_task(s, "trap '' TERM; echo ready; sleep 300");
    while (!strstr(shexec_run_output(run_of(t), SHEXEC_STDOUT, NULL), "ready"))
        assert_true(shexec_session_wait(s, 50) >= 0);
    assert_int_equal(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK);
    assert_true(shexec_session_wait(s, 100) >= 0); /* TERM ignored: still running */
    assert_false(shexec_run_state(run_of(t)) > SHEXEC_STATE_RUNNING);
    assert_int_equal(shexec_session_set_kill_grace_ms(s, 100), SHEXEC_OK);
    int64_t t0 = tu_now_ms();
    shexec_task_free(t); /* terminates again: the SIGKILL moves forward */
    assert_true(tu_now_ms() - t0 < 2500); /* the old grace would take 5 s */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_background_returns_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_task_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finished_tasks_hold_their_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unclaimed_leftovers_released, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_and_exit_code, setup, teardown),
        cmocka_unit_test_setup_teardown(test_task_does_not_move_cwd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill_and_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only_new_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_both_streams_in_turn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_five_tasks_stream_concurrently, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpumped_task_blocks_without_loss, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stdin_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stdin_large_input_interleaved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stdin_queue_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stdin_queue_bound_setting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leftovers_adopted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leftovers_killed_when_table_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_task_keeps_its_own_leftovers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_free_stops_everything, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_poll_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreground_and_tasks_together, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_task_failure_leaves_run_to_caller, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_run_free_on_task_run_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_cancel_on_task_run_kills, setup, teardown),
        cmocka_unit_test_setup_teardown(test_done_fn_set_after_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_fn_set_while_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_wait_counts_finished, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shorter_grace_brings_kill_forward, setup, teardown),
    };
    return cmocka_run_group_tests_name("task", tests, NULL, NULL);
}
