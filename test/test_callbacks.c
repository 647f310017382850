/*
 * test_callbacks.c - what output and done callbacks may call (see
 * shexec_output_fn in shexec.h), and that each such call is safe: freeing
 * runs and tasks (their own, another one, one the library is still waiting
 * for), and reading output, also with ANSI stripping, without re-entering
 * the callback or reordering what it receives.
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
#include <unistd.h>

#include "shx/buf.h"
#include "shexec.h"
#include <shexec_tool.h>
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

static pid_t pid_in(const char *text)
{
    return (pid_t)strtol(text, NULL, 10);
}

/* Start cmd as a task, with an output callback when fn is not NULL. */
static shexec_task *start_task(shexec_session *s, const char *cmd, shexec_output_fn fn, void *user)
{
    shexec_run *r = NULL;
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    if (fn)
        assert_int_equal(shexec_run_set_output_fn(r, fn, user), SHEXEC_OK);
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    return t;
}

/* The task's stdout so far. */
static const char *task_stdout(shexec_task *t)
{
    return shexec_run_output(shexec_task_run(t), SHEXEC_STDOUT, NULL);
}

/* ---- freeing from an output callback ------------------------------------- */

typedef struct {
    shexec_run *run;     /* the run to free */
    shexec_task *task;   /* or the task to free */
    int calls;           /* output callbacks seen */
    int calls_after;     /* callbacks of the run after it was freed */
    int freed;
    shx_buf seen;
} freer;

/* Frees its own run once it sees the first line (the shell's pid). */
static void free_own_run(void *user, int stream, const char *data, size_t len)
{
    freer *f = user;
    if (stream != SHEXEC_STDOUT)
        return;
    f->calls++;
    if (f->freed) {
        f->calls_after++;
        return;
    }
    shx_buf_append(&f->seen, data, len);
    if (memchr(f->seen.data, '\n', f->seen.len)) {
        f->freed = 1;
        shexec_run_free(f->run);
    }
}

static void test_free_own_run_during_exec(void **state)
{
    shexec_session *s = *state;
    freer f = {.seen = SHX_BUF_INIT};
    /* after SIGTERM the command still writes: no callback may see it */
    assert_int_equal(shexec_run_new(&f.run, s,
                                     "trap 'echo cleanup; exit 3' TERM; echo $$; sleep 300 & wait"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(f.run, free_own_run, &f), SHEXEC_OK);
    int64_t t0 = tu_now_ms();
    /* the run is gone when exec returns: ESTATE says so, and the handle is
     * not touched again (not even freed) */
    assert_int_equal(shexec_run_exec(f.run), SHEXEC_ESTATE);
    assert_non_null(strstr(shexec_session_errmsg(s), "freed"));
    assert_true(tu_now_ms() - t0 < 10000);
    assert_int_equal(f.freed, 1);
    assert_int_equal(f.calls_after, 0);
    pid_t pid = pid_in(f.seen.data);
    assert_true(pid > 0);
    assert_false(tu_pid_alive(pid));
    shx_buf_free(&f.seen);
    /* the session carries on */
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "echo next"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "next\n");
    shexec_run_free(r);
}

/* Frees whatever f names, once: twice in a row (the second free of a handle
 * already being freed must do nothing), never again after. */
static void free_other(void *user, int stream, const char *data, size_t len)
{
    (void)stream;
    (void)data;
    (void)len;
    freer *f = user;
    f->calls++;
    if (f->freed)
        return;
    f->freed = 1;
    for (int i = 0; i < 2; i++) {
        if (f->run)
            shexec_run_free(f->run);
        if (f->task)
            shexec_task_free(f->task);
    }
}

static void test_free_other_run_and_task_from_callback(void **state)
{
    shexec_session *s = *state;
    shexec_run *victim = NULL, *never_started = NULL;
    assert_int_equal(shexec_run_new(&victim, s, "echo $$; exec sleep 300"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(victim), SHEXEC_OK);
    shexec_task *victim_task = start_task(s, "echo $$; exec sleep 300", NULL, NULL);
    /* a task is always started: what is never started is a run */
    assert_int_equal(shexec_run_new(&never_started, s, "true"), SHEXEC_OK);
    while (shexec_run_output_total(victim, SHEXEC_STDOUT) == 0 ||
           shexec_run_output_total(shexec_task_run(victim_task), SHEXEC_STDOUT) == 0)
        assert_true(shexec_session_wait(s, 1000) >= 0);
    pid_t rpid = pid_in(shexec_run_output(victim, SHEXEC_STDOUT, NULL));
    pid_t tpid = pid_in(task_stdout(victim_task));

    freer f1 = {.run = victim}, f2 = {.task = victim_task}, f3 = {.run = never_started};
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "echo a; sleep 0.2; echo b; echo c >&2; sleep 0.5"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(r, free_other, &f1), SHEXEC_OK);
    shexec_task *t = start_task(s, "echo x; sleep 0.2; echo y", free_other, &f2);
    shexec_task *t3 = start_task(s, "echo z", free_other, &f3);

    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "a\nb\n");
    assert_true(f1.calls >= 3 && f2.calls >= 1 && f3.calls == 1);
    /* the victims were terminated; they are released as soon as they end */
    assert_true(tu_wait_pid_gone(rpid, 5000));
    assert_true(tu_wait_pid_gone(tpid, 5000));
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING)
        assert_true(shexec_session_wait(s, 1000) >= 0);
    assert_string_equal(task_stdout(t), "x\ny\n");
    shexec_run_free(r);
    shexec_task_free(t);
    shexec_task_free(t3);
    /* every task and run of the session has been released */
    assert_int_equal(shx_test_tasks(s), 0);
    assert_int_equal(shx_test_runs(s), 0);
}

/*
 * The host frees a run (or task) that is still running, so the library
 * waits for it to end; meanwhile another command's callback frees the same
 * handle. The second free must do nothing: the first one owns the release.
 */
static void test_free_while_being_freed(void **state)
{
    shexec_session *s = *state;
    shexec_session_set_kill_grace_ms(s, 1000); /* the victims ignore SIGTERM */
    freer f = {.freed = 1}; /* armed below */
    shexec_run *ticker_run = NULL;
    assert_int_equal(shexec_run_new(&ticker_run, s, "while :; do echo tick; sleep 0.05; done"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(ticker_run, free_other, &f), SHEXEC_OK);

    shexec_run *victim = NULL;
    assert_int_equal(shexec_run_new(&victim, s, "trap '' TERM; echo $$; sleep 300"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(victim), SHEXEC_OK);
    shexec_task *ticker = NULL;
    assert_int_equal(shexec_run_start_task(&ticker, ticker_run), SHEXEC_OK);
    while (shexec_run_output_total(victim, SHEXEC_STDOUT) == 0)
        assert_true(shexec_session_wait(s, 1000) >= 0);
    pid_t pid = pid_in(shexec_run_output(victim, SHEXEC_STDOUT, NULL));
    f.run = victim;
    f.calls = 0;
    f.freed = 0;
    shexec_run_free(victim); /* waits out the grace: the ticker ticks meanwhile */
    assert_true(f.calls > 0);
    assert_false(tu_pid_alive(pid));
    f.run = NULL;

    shexec_task *victim_task = start_task(s, "trap '' TERM; echo $$; sleep 300", NULL, NULL);
    while (shexec_run_output_total(shexec_task_run(victim_task), SHEXEC_STDOUT) == 0)
        assert_true(shexec_session_wait(s, 1000) >= 0);
    pid = pid_in(task_stdout(victim_task));
    f.task = victim_task;
    f.calls = 0;
    f.freed = 0;
    shexec_task_free(victim_task);
    assert_true(f.calls > 0);
    assert_false(tu_pid_alive(pid));
    f.task = NULL;
    shexec_task_free(ticker);
}

/* ---- freeing from a done callback ----------------------------------------- */

typedef struct {
    int calls;
    shexec_task *also; /* freed too, still running */
} done_rec;

static void free_on_done(void *user, shexec_task *t)
{
    done_rec *d = user;
    d->calls++;
    assert_true(shexec_run_state(shexec_task_run(t)) > SHEXEC_STATE_RUNNING);
    shexec_task_free(t);
    shexec_task_free(t); /* twice: harmless */
    if (d->also)
        shexec_task_free(d->also);
}

static void test_done_callback_frees_tasks(void **state)
{
    shexec_session *s = *state;
    shexec_task *other = start_task(s, "echo $$; exec sleep 300", NULL, NULL);
    while (shexec_run_output_total(shexec_task_run(other), SHEXEC_STDOUT) == 0)
        assert_true(shexec_session_wait(s, 1000) >= 0);
    pid_t pid = pid_in(task_stdout(other));

    done_rec d = {.also = other};
    /* the done callback is set right after the start: none is missed */
    shexec_task *t = start_task(s, "echo done", NULL, NULL);
    assert_int_equal(shexec_task_set_done_fn(t, free_on_done, &d), SHEXEC_OK);
    int64_t end = tu_now_ms() + 10000;
    while (d.calls == 0 || shx_test_tasks(s)) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 200) >= 0);
    }
    assert_int_equal(d.calls, 1);
    assert_true(tu_wait_pid_gone(pid, 5000));

    /* the same through the host's own loop (pollfds/process) */
    d = (done_rec){0};
    t = start_task(s, "echo done", NULL, NULL);
    assert_int_equal(shexec_task_set_done_fn(t, free_on_done, &d), SHEXEC_OK);
    end = tu_now_ms() + 10000;
    while (shx_test_tasks(s)) {
        assert_true(tu_now_ms() < end);
        struct pollfd fds[16];
        int32_t tmo;
        int n = shexec_session_pollfds(fds, 16, &tmo, s);
        assert_true(n >= 0 && n <= 16);
        assert_true(poll(fds, (nfds_t)n, tmo < 0 || tmo > 200 ? 200 : tmo) >= 0);
        assert_true(shexec_session_process(s, fds, (uint32_t)n) >= 0);
    }
    assert_int_equal(d.calls, 1);
}

#ifndef SHX_TEST_NO_TOOLS /* TOOLS=0: the library has no tool layer */
/* ---- freeing what a tool call is waiting for ------------------------------- */

typedef struct {
    shexec_session *s;
    char id[32];
    int frees;
} tool_victim;

static void free_by_id(void *user, int stream, const char *data, size_t len)
{
    (void)stream;
    (void)data;
    (void)len;
    tool_victim *v = user;
    shexec_task *t = NULL;
    if (v->id[0] && shexec_session_take_task(&t, v->s, v->id) == SHEXEC_OK) {
        shexec_task_free(t);
        v->frees++;
    }
}

static void test_free_task_a_tool_waits_for(void **state)
{
    shexec_session *s = *state;
    shexec_session_set_kill_grace_ms(s, 1000);
    assert_int_equal(shexec_tool_set_enabled(s, "bash", 1), SHEXEC_OK);
    assert_int_equal(shexec_tool_set_enabled(s, "task_kill", 1), SHEXEC_OK);
    char *out = NULL;
    assert_int_equal(shexec_tool_call(&out, s, "bash",
                                      "{\"command\":\"trap '' TERM; echo ready; sleep 300\","
                                      "\"run_in_background\":true}"),
                     SHEXEC_OK);
    const char *id = strstr(out, "\"task_id\":\"");
    assert_non_null(id);
    tool_victim v = {.s = s};
    memcpy(v.id, id + 11, 13);
    v.id[13] = '\0';
    shexec_free(out);
    /* the trap must be set before the kill, or TERM ends it at once */
    shexec_task *victim = NULL;
    assert_int_equal(shexec_session_take_task(&victim, s, v.id), SHEXEC_OK);
    while (!strstr(task_stdout(victim), "ready"))
        assert_true(shexec_session_wait(s, 50) >= 0);

    shexec_task *ticker = start_task(s, "while :; do echo tick; sleep 0.05; done", free_by_id, &v);
    /* task_kill waits out the grace; the ticker's callback frees the task */
    char args[64];
    snprintf(args, sizeof args, "{\"task_id\":\"%s\"}", v.id);
    assert_int_equal(shexec_tool_call(&out, s, "task_kill", args), SHEXEC_OK);
    assert_non_null(strstr(out, "\"status\":\"killed\""));
    shexec_free(out);
    assert_true(v.frees >= 1);
    shexec_task *gone = NULL;
    assert_int_equal(shexec_session_take_task(&gone, s, v.id), SHEXEC_ENOTASK);
    shexec_task_free(ticker);
}
#else
static void test_free_task_a_tool_waits_for(void **state)
{
    (void)state;
    tu_compiled_out("the tool layer");
}
#endif

/* ---- reading output from a callback ------------------------------------- */

/* A line, then a prompt longer than the stripper's buffer, then the rest. */
#define PROMPT_200                                                                              \
    "PPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPP" \
    "PPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPP" \
    "PPPPPPPPPPPP> "
#define PROMPT_CMD "printf 'line1\\n" PROMPT_200 "'; sleep 0.3; printf 'more\\n\\033[1mend\\033[0m\\n'"
#define PROMPT_OUT "line1\n" PROMPT_200 "more\nend\n"

typedef struct {
    shexec_run *run;
    shexec_task *task;
    int depth, max_depth, calls;
    shx_buf chunks;  /* what the callback received, in order */
    shx_buf reads;   /* what shexec_task_read returned, in order */
    int view_ok;     /* every view of the output began with what was received */
    int intact;      /* the chunk being delivered survived the reads */
} reader;

static void check_view(reader *rd, const char *view, size_t n)
{
    /* what was captured includes at least everything the callback has
     * received, this chunk too, in the same order */
    if (n < rd->chunks.len || memcmp(view, rd->chunks.data, rd->chunks.len) != 0)
        rd->view_ok = 0;
}

static void read_in_callback(void *user, int stream, const char *data, size_t len)
{
    reader *rd = user;
    if (stream != SHEXEC_STDOUT)
        return;
    rd->calls++;
    if (++rd->depth > rd->max_depth)
        rd->max_depth = rd->depth;
    shx_buf_append(&rd->chunks, data, len);
    size_t n;
    const char *view;
    if (rd->run) {
        view = shexec_run_output(rd->run, SHEXEC_STDOUT, &n);
        check_view(rd, view, n);
    } else {
        view = shexec_run_output(shexec_task_run(rd->task), SHEXEC_STDOUT, &n);
        check_view(rd, view, n);
        view = shexec_task_read(rd->task, SHEXEC_STDOUT, &n);
        shx_buf_append(&rd->reads, view, n);
    }
    /* the chunk is still intact after the reads */
    if (memcmp(data, rd->chunks.data + rd->chunks.len - len, len) != 0)
        rd->intact = 0;
    rd->depth--;
}

static void test_run_output_in_callback_with_strip(void **state)
{
    shexec_session *s = *state;
    reader rd = {.chunks = SHX_BUF_INIT, .reads = SHX_BUF_INIT, .view_ok = 1, .intact = 1};
    assert_int_equal(shexec_run_new(&rd.run, s, PROMPT_CMD), SHEXEC_OK);
    assert_int_equal(shexec_run_set_ansi(rd.run, SHEXEC_ANSI_STRIP), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(rd.run, read_in_callback, &rd), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(rd.run), SHEXEC_OK);
    assert_int_equal(rd.max_depth, 1); /* never re-entered */
    assert_true(rd.intact);
    assert_true(rd.view_ok);
    size_t n;
    const char *out = shexec_run_output(rd.run, SHEXEC_STDOUT, &n);
    assert_string_equal(out, PROMPT_OUT);
    assert_int_equal(rd.chunks.len, n);
    assert_memory_equal(rd.chunks.data, out, n);
    shx_buf_free(&rd.chunks);
    shexec_run_free(rd.run);
}

static void test_task_read_in_callback_with_strip(void **state)
{
    shexec_session *s = *state;
    reader rd = {.chunks = SHX_BUF_INIT, .reads = SHX_BUF_INIT, .view_ok = 1, .intact = 1};
    /* rd.run stays NULL: the callback reads through the task */
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, PROMPT_CMD), SHEXEC_OK);
    assert_int_equal(shexec_run_set_ansi(r, SHEXEC_ANSI_STRIP), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(r, read_in_callback, &rd), SHEXEC_OK);
    /* no callback runs before the loop is pumped: rd.task is set by then */
    assert_int_equal(shexec_run_start_task(&rd.task, r), SHEXEC_OK);
    int64_t end = tu_now_ms() + 10000;
    while (shexec_run_state(shexec_task_run(rd.task)) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 1000) >= 0);
    }
    assert_int_equal(rd.max_depth, 1);
    assert_true(rd.intact);
    assert_true(rd.view_ok);
    size_t n;
    const char *rest = shexec_task_read(rd.task, SHEXEC_STDOUT, &n);
    shx_buf_append(&rd.reads, rest, n);
    const char *out = shexec_run_output(shexec_task_run(rd.task), SHEXEC_STDOUT, &n);
    assert_string_equal(out, PROMPT_OUT);
    /* the callback's chunks and the reads both add up to the output */
    assert_int_equal(rd.chunks.len, n);
    assert_memory_equal(rd.chunks.data, out, n);
    assert_int_equal(rd.reads.len, n);
    assert_memory_equal(rd.reads.data, out, n);
    shx_buf_free(&rd.chunks);
    shx_buf_free(&rd.reads);
    shexec_task_free(rd.task);
}

/* Reading a stripped stream outside the loop pushes out the pending prompt,
 * but the callback gets it only from the loop, after what came before it. */
static int reading_outside;

static void not_from_a_getter(void *user, int stream, const char *data, size_t len)
{
    reader *rd = user;
    if (stream != SHEXEC_STDOUT)
        return;
    if (reading_outside)
        rd->view_ok = 0;
    shx_buf_append(&rd->chunks, data, len);
}

static void test_output_outside_loop_never_calls_back(void **state)
{
    shexec_session *s = *state;
    reader rd = {.chunks = SHX_BUF_INIT, .view_ok = 1};
    /* the command waits at its prompt until it is given a line */
    assert_int_equal(shexec_run_new(&rd.run, s,
                                     "printf 'line1\\n" PROMPT_200 "'; read -r x; "
                                     "printf '%s\\n\\033[1mend\\033[0m\\n' \"$x\""),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_ansi(rd.run, SHEXEC_ANSI_STRIP), SHEXEC_OK);
    assert_int_equal(shexec_run_set_stdin(rd.run, 1), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(rd.run, not_from_a_getter, &rd), SHEXEC_OK);
    assert_int_equal(shexec_run_start(rd.run), SHEXEC_OK);
    /* until the first line arrived; the prompt is then pending in the stripper */
    int64_t end = tu_now_ms() + 10000;
    while (rd.chunks.len == 0) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 20) >= 0);
    }
    assert_string_equal(rd.chunks.data, "line1\n");
    reading_outside = 1;
    size_t n;
    const char *out = shexec_run_output(rd.run, SHEXEC_STDOUT, &n);
    reading_outside = 0;
    assert_string_equal(out, "line1\n" PROMPT_200);
    assert_true(rd.view_ok);
    /* the next round hands the prompt to the callback, without waiting for
     * more output */
    struct pollfd fds[16];
    int32_t tmo = -1;
    int nfds = shexec_session_pollfds(fds, 16, &tmo, s);
    assert_true(nfds >= 0 && nfds <= 16);
    assert_int_equal(tmo, 0);
    for (int i = 0; i < nfds; i++)
        fds[i].revents = 0;
    assert_int_equal(shexec_session_process(s, fds, (uint32_t)nfds), 0); /* nothing finished */
    assert_string_equal(rd.chunks.data, "line1\n" PROMPT_200);
    assert_int_equal(shexec_run_write(rd.run, "more\n", 5), SHEXEC_OK);
    assert_int_equal(shexec_run_close_stdin(rd.run), SHEXEC_OK);
    while (shexec_run_state(rd.run) <= SHEXEC_STATE_RUNNING)
        assert_true(shexec_session_wait(s, 1000) >= 0);
    out = shexec_run_output(rd.run, SHEXEC_STDOUT, &n);
    assert_string_equal(out, PROMPT_OUT);
    assert_int_equal(rd.chunks.len, n);
    assert_memory_equal(rd.chunks.data, out, n);
    shx_buf_free(&rd.chunks);
    shexec_run_free(rd.run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_free_own_run_during_exec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_other_run_and_task_from_callback, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_free_while_being_freed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_done_callback_frees_tasks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_task_a_tool_waits_for, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_output_in_callback_with_strip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_task_read_in_callback_with_strip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_outside_loop_never_calls_back, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("callbacks", tests, NULL, NULL);
}
