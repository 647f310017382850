/*
 * test_soak.c - long runs in one session: ten thousand commands and a
 * thousand task start/kill cycles must not grow the process's descriptors,
 * its resident memory or its children. Under valgrind and the sanitizers
 * (which are slow, and whose allocators make RSS meaningless) the counts are
 * smaller and memory is left to their leak checkers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shx/buf.h"
#include "shexec.h"
#include "testhook.h"
#include "testutil.h"

/* Full counts only where they are affordable and memory can be measured. */
static int full(void)
{
    return !TU_SANITIZED && !tu_under_valgrind();
}

/* Counts: full, under a sanitizer (a few times slower), under valgrind. */
static int scaled(int n, int sanitized, int valgrind)
{
    return tu_under_valgrind() ? valgrind : TU_SANITIZED ? sanitized : n;
}

/* RSS may grow this much over the soak (malloc's arenas settle in steps). */
#define RSS_SLACK_KIB 1024

/* /bin/sh as the session's shell (shexec_session_set_shell()). */
static const char *const sh_argv[] = {"/bin/sh", NULL};

typedef struct {
    size_t bytes;
    int calls;
} counted;

static void count_output(void *user, int stream, const char *data, size_t len)
{
    (void)stream;
    (void)data;
    counted *c = user;
    c->bytes += len;
    c->calls++;
}

/* One command of a varied mix; checks its results exactly. */
static void one_run(shexec_session *s, int i, const char *dir)
{
    char cmd[512], want[128];
    shexec_run *r = NULL;
    counted c = {0, 0};
    int code = i % 256;
    switch (i % 8) {
    case 0: /* the cwd moves and comes back */
        snprintf(cmd, sizeof cmd, "cd '%s' && echo %d", i % 16 ? dir : "/", i);
        break;
    case 1: /* stderr and a status */
        snprintf(cmd, sizeof cmd, "echo %d >&2; exit %d", i, code);
        break;
    case 2: /* more output than one read */
        snprintf(cmd, sizeof cmd, "i=0; while [ $i -lt 300 ]; do echo line-$i; i=$((i+1)); done; "
                                  "exit %d", code);
        break;
    default:
        snprintf(cmd, sizeof cmd, "echo %d; exit %d", i, code);
        break;
    }
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    if (i % 8 == 3)
        assert_int_equal(shexec_run_set_output_fn(r, count_output, &c), SHEXEC_OK);
    if (i % 8 == 4) {
        assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
        assert_int_equal(shexec_run_set_output_limit(r, 100, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD),
                         SHEXEC_OK);
    }
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    switch (i % 8) {
    case 0:
        assert_int_equal(shexec_run_exit_code(r), 0);
        snprintf(want, sizeof want, "%d\n", i);
        assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), want);
        assert_string_equal(shexec_session_cwd(s), i % 16 ? dir : "/");
        break;
    case 1:
        assert_int_equal(shexec_run_exit_code(r), code);
        snprintf(want, sizeof want, "%d\n", i);
        assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), want);
        assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "");
        break;
    case 2:
        assert_int_equal(shexec_run_exit_code(r), code);
        /* the default limit keeps it all: 300 lines of 8-9 bytes */
        assert_int_equal(shexec_run_output_total(r, SHEXEC_STDOUT), 10 * 7 + 90 * 8 + 200 * 9);
        assert_false(shexec_run_truncated(r, SHEXEC_STDOUT));
        break;
    default:
        assert_int_equal(shexec_run_exit_code(r), code);
        snprintf(want, sizeof want, "%d\n", i);
        assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), want);
        if (i % 8 == 3)
            assert_int_equal(c.bytes, strlen(want));
        break;
    }
    shexec_run_free(r);
}

/* Start a task and kill it; every tenth cycle the task is a command's leftovers. */
static void one_task_cycle(shexec_session *s, int i)
{
    shexec_task *t = NULL;
    shexec_run *r = NULL;
    if (i % 10 == 9) {
        assert_int_equal(shexec_run_new(&r, s, "sleep 100 & echo bg"), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
        assert_int_equal(shexec_session_take_task(&t, s, tu_leftover_id(r)), SHEXEC_OK);
    } else {
        shexec_run *tr = NULL;
        assert_int_equal(shexec_run_new(&tr, s, i % 2 ? "sleep 100" : "echo up; sleep 100"),
                         SHEXEC_OK);
        assert_int_equal(shexec_run_start_task(&t, tr), SHEXEC_OK);
        if (i % 4 == 0)
            assert_true(shexec_session_wait(s, 0) >= 0);
    }
    assert_int_equal(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK);
    int64_t end = tu_now_ms() + 20000;
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 1000) >= 0);
    }
    assert_int_equal(shexec_run_state(shexec_task_run(t)), SHEXEC_STATE_KILLED);
    shexec_task_free(t);
    shexec_run_free(r);
}

typedef struct {
    int fds, children;
    long rss;
} footprint;

static footprint measure(void)
{
    footprint f = {tu_count_fds(), tu_count_children(), tu_rss_kib()};
    return f;
}

static void expect_no_growth(footprint before, footprint after, const char *what)
{
    if (after.fds != before.fds)
        fail_msg("%s: descriptors %d -> %d", what, before.fds, after.fds);
    if (after.children != 0)
        fail_msg("%s: %d children left", what, after.children);
    if (full() && after.rss - before.rss > RSS_SLACK_KIB)
        fail_msg("%s: RSS grew from %ld to %ld KiB", what, before.rss, after.rss);
    print_message("%s: %d descriptors, RSS %ld -> %ld KiB\n", what, after.fds, before.rss,
                  after.rss);
}

static void test_soak_runs(void **state)
{
    (void)state;
    tu_leak_begin();
    const char *tmp = tu_mkdtemp();
    assert_non_null(tmp);
    char dir[256];
    snprintf(dir, sizeof dir, "%s", tmp);
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    /* /bin/sh starts in half the time of bash; the default shell gets its share below */
    assert_int_equal(shexec_session_set_shell(s, sh_argv, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    int total = scaled(10000, 1000, 300);
    int warm = scaled(200, 50, 30);
    int with_default = total / 5;

    int i = 0;
    for (; i < warm; i++)
        one_run(s, i, dir);
    footprint before = measure();
    for (; i < total; i++) {
        if (i == total - with_default)
            assert_int_equal(shexec_session_set_shell(s, NULL, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
        one_run(s, i, dir);
    }
    assert_int_equal(shx_test_active(s), 0);
    assert_int_equal(shx_test_runs(s), 0);
    expect_no_growth(before, measure(), "runs");
    shexec_session_free(s);
    tu_rmtree(dir);
    tu_leak_end();
}

static void test_soak_task_cycles(void **state)
{
    (void)state;
    tu_leak_begin();
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    assert_int_equal(shexec_session_set_shell(s, sh_argv, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    assert_int_equal(shexec_session_set_kill_grace_ms(s, 2000), SHEXEC_OK);
    int total = scaled(1000, 100, 50);
    int warm = scaled(50, 10, 10);

    int i = 0;
    for (; i < warm; i++)
        one_task_cycle(s, i);
    footprint before = measure();
    for (; i < total; i++) {
        if (i == total - total / 5)
            assert_int_equal(shexec_session_set_shell(s, NULL, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
        one_task_cycle(s, i);
    }
    assert_int_equal(shx_test_active(s), 0);
    assert_int_equal(shx_test_tasks(s), 0);
    expect_no_growth(before, measure(), "task cycles");
    shexec_session_free(s);
    tu_leak_end();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_soak_runs),
        cmocka_unit_test(test_soak_task_cycles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
