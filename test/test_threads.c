/*
 * test_threads.c - sessions used by many threads at once: each thread owns
 * a session and runs hundreds of commands, tasks, timeouts and leftovers in
 * it while the others do the same. Every result must be exact (no output or
 * status crosses from one run to another), and nothing may be left behind.
 * Built into the ThreadSanitizer variant (make check TSAN=1) as well.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shx/buf.h"
#include "shexec.h"
#include "testutil.h"

#define THREADS 8

/* 0 under valgrind: it runs threads one at a time, slowly */
static int heavy_ok(void)
{
    const char *v = getenv("VALGRIND");
    return !(v && strcmp(v, "1") == 0);
}

typedef struct worker {
    pthread_t thread;
    int id;
    int runs;
    int done;
    char dir[128];   /* a directory of its own to cd into */
    char error[512]; /* the first failure, if any: only the main thread may fail the test */
} worker;

#define EXPECT(w, cond, ...)                                                            \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            if (!(w)->error[0]) {                                                       \
                int at_ = snprintf((w)->error, sizeof (w)->error, "thread %d line %d: ", \
                                   (w)->id, __LINE__);                                  \
                snprintf((w)->error + at_, sizeof (w)->error - (size_t)at_, __VA_ARGS__);  \
            }                                                                           \
            goto out;                                                                   \
        }                                                                               \
    } while (0)

static void collect(void *user, int stream, const char *data, size_t len)
{
    if (stream == SHEXEC_STDOUT)
        shx_buf_append(user, data, len);
}

static void *work(void *arg)
{
    worker *w = arg;
    shexec_session *s = NULL;
    shexec_run *r = NULL;
    shexec_task *t = NULL;
    shx_buf streamed = SHX_BUF_INIT;
    EXPECT(w, shexec_session_new(&s) == SHEXEC_OK, "session_new failed");
    shexec_session_set_kill_grace_ms(s, 200);
    if (w->id % 2) { /* half the threads on the lighter shell */
        const char *const sh[] = {"/bin/sh", NULL};
        EXPECT(w, shexec_session_set_shell(s, sh, SHEXEC_WRAPPER_LOCAL) == SHEXEC_OK, "set_shell: %s",
               shexec_session_errmsg(s));
    }

    for (int i = 0; i < w->runs; i++) {
        char cmd[256], want[128];
        int code = (w->id * 37 + i) % 256;
        snprintf(want, sizeof want, "thread-%d-run-%d-%08x\n", w->id, i,
                 (unsigned)(w->id * 100003 + i * 7919));
        snprintf(cmd, sizeof cmd, "printf '%%s' '%s'; echo err-%d-%d >&2; exit %d", want, w->id,
                 i, code);
        EXPECT(w, shexec_run_new(&r, s, cmd) == SHEXEC_OK, "run_new: %s",
               shexec_session_errmsg(s));
        if (i % 10 == 0) {
            shx_buf_clear(&streamed);
            shexec_run_set_output_fn(r, collect, &streamed);
        }
        int rc = shexec_run_exec(r);
        EXPECT(w, rc == SHEXEC_OK, "run %d: %d %s", i, rc, shexec_session_errmsg(s));
        EXPECT(w, shexec_run_state(r) == SHEXEC_STATE_EXITED, "run %d state %d", i,
               shexec_run_state(r));
        EXPECT(w, shexec_run_exit_code(r) == code, "run %d exit %d, expected %d", i,
               shexec_run_exit_code(r), code);
        const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
        EXPECT(w, strcmp(out, want) == 0, "run %d output \"%s\", expected \"%s\"", i, out, want);
        char want_err[64];
        snprintf(want_err, sizeof want_err, "err-%d-%d\n", w->id, i);
        out = shexec_run_output(r, SHEXEC_STDERR, NULL);
        EXPECT(w, strcmp(out, want_err) == 0, "run %d stderr \"%s\"", i, out);
        if (i % 10 == 0)
            EXPECT(w, streamed.len == strlen(want) && memcmp(streamed.data, want, streamed.len) == 0,
                   "run %d streamed output differs", i);
        shexec_run_free(r);
        r = NULL;

        if (i % 50 == 25) {
            /* the cwd of each session is its own */
            snprintf(cmd, sizeof cmd, "cd '%s' && pwd", w->dir);
            EXPECT(w, shexec_run_new(&r, s, cmd) == SHEXEC_OK, "run_new");
            EXPECT(w, shexec_run_exec(r) == SHEXEC_OK, "cd run");
            EXPECT(w, strcmp(shexec_session_cwd(s), w->dir) == 0, "cwd %s, expected %s",
                   shexec_session_cwd(s), w->dir);
            shexec_run_free(r);
            r = NULL;
            EXPECT(w, shexec_session_set_cwd(s, "/") == SHEXEC_OK, "set_cwd");

            /* a timeout */
            EXPECT(w, shexec_run_new(&r, s, "sleep 10") == SHEXEC_OK, "run_new");
            shexec_run_set_timeout_ms(r, 100);
            EXPECT(w, shexec_run_exec(r) == SHEXEC_OK, "timeout run");
            EXPECT(w, shexec_run_state(r) == SHEXEC_STATE_TIMED_OUT, "timeout state %d",
                   shexec_run_state(r));
            shexec_run_free(r);
            r = NULL;

            /* a task to completion, and one killed */
            snprintf(cmd, sizeof cmd, "echo task-%d-%d; exit 3", w->id, i);
            EXPECT(w, shexec_run_new(&r, s, cmd) == SHEXEC_OK, "run_new");
            EXPECT(w, shexec_run_start_task(&t, r) == SHEXEC_OK, "start_task: %s",
                   shexec_session_errmsg(s));
            r = NULL; /* the task's now */
            while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING)
                EXPECT(w, shexec_session_wait(s, 1000) >= 0, "wait");
            snprintf(want, sizeof want, "task-%d-%d\n", w->id, i);
            shexec_run *tr = shexec_task_run(t);
            EXPECT(w, strcmp(shexec_run_output(tr, SHEXEC_STDOUT, NULL), want) == 0,
                   "task output \"%s\"", shexec_run_output(tr, SHEXEC_STDOUT, NULL));
            EXPECT(w, shexec_run_exit_code(tr) == 3, "task exit %d", shexec_run_exit_code(tr));
            shexec_task_free(t);
            t = NULL;
            EXPECT(w, shexec_run_new(&r, s, "sleep 100") == SHEXEC_OK, "run_new");
            EXPECT(w, shexec_run_start_task(&t, r) == SHEXEC_OK, "start_task");
            r = NULL;
            EXPECT(w, shexec_run_cancel(shexec_task_run(t)) == SHEXEC_OK, "task_kill");
            while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING)
                EXPECT(w, shexec_session_wait(s, 1000) >= 0, "wait");
            tr = shexec_task_run(t);
            EXPECT(w, shexec_run_state(tr) == SHEXEC_STATE_KILLED, "killed state %d",
                   shexec_run_state(tr));
            shexec_task_free(t);
            t = NULL;

            /* leftovers, adopted and left to the session's free */
            EXPECT(w, shexec_run_new(&r, s, "sleep 100 & echo bg") == SHEXEC_OK, "run_new");
            EXPECT(w, shexec_run_exec(r) == SHEXEC_OK, "leftover run");
            EXPECT(w, shexec_run_leftovers(r, NULL) == SHEXEC_LEFTOVERS_ADOPTED, "leftovers %d",
                   shexec_run_leftovers(r, NULL));
            shexec_run_free(r);
            r = NULL;
        }
    }
    w->done = 1;
out:
    shexec_task_free(t);
    shexec_run_free(r);
    shexec_session_free(s);
    shx_buf_free(&streamed);
    return NULL;
}

static void run_workers(int runs)
{
    tu_leak_begin();
    worker w[THREADS];
    memset(w, 0, sizeof w);
    char base[64];
    snprintf(base, sizeof base, "%s", tu_mkdtemp());
    for (int i = 0; i < THREADS; i++) {
        w[i].id = i;
        w[i].runs = runs;
        snprintf(w[i].dir, sizeof w[i].dir, "%s/w%d", base, i);
        assert_int_equal(mkdir(w[i].dir, 0700), 0);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&w[i].thread, NULL, work, &w[i]), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(w[i].thread, NULL), 0);
    tu_rmtree(base);
    for (int i = 0; i < THREADS; i++) {
        if (w[i].error[0])
            fail_msg("%s", w[i].error);
        assert_true(w[i].done);
    }
    assert_int_equal(tu_count_children_all(), 0);
    tu_leak_end();
}

static void test_threads_each_with_a_session(void **state)
{
    (void)state;
    run_workers(heavy_ok() ? 200 : 30);
}

/* Sessions made and freed concurrently, with commands left running. */
static void *churn(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < w->runs; i++) {
        shexec_session *s = NULL;
        shexec_run *r = NULL;
        shexec_task *t = NULL;
        EXPECT(w, shexec_session_new(&s) == SHEXEC_OK, "session_new");
        shexec_session_set_kill_grace_ms(s, 100);
        shexec_run *tr = NULL;
        EXPECT(w, shexec_run_new(&tr, s, "sleep 100") == SHEXEC_OK, "run_new");
        EXPECT(w, shexec_run_start_task(&t, tr) == SHEXEC_OK, "start_task");
        EXPECT(w, shexec_run_new(&r, s, "echo x; sleep 100") == SHEXEC_OK, "run_new");
        EXPECT(w, shexec_run_start(r) == SHEXEC_OK, "run_start");
        shexec_session_wait(s, 5);
        shexec_session_free(s); /* ends both */
        EXPECT(w, shexec_run_state(r) == SHEXEC_STATE_CANCELLED, "state %d",
               shexec_run_state(r));
        shexec_run_free(r);
    }
    w->done = 1;
out:
    return NULL;
}

static void test_sessions_created_and_freed_concurrently(void **state)
{
    (void)state;
    tu_leak_begin();
    worker w[THREADS];
    memset(w, 0, sizeof w);
    for (int i = 0; i < THREADS; i++) {
        w[i].id = i;
        w[i].runs = heavy_ok() ? 25 : 5;
        assert_int_equal(pthread_create(&w[i].thread, NULL, churn, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(w[i].thread, NULL), 0);
    for (int i = 0; i < THREADS; i++) {
        if (w[i].error[0])
            fail_msg("%s", w[i].error);
        assert_true(w[i].done);
    }
    assert_int_equal(tu_count_children_all(), 0);
    tu_leak_end();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_each_with_a_session),
        cmocka_unit_test(test_sessions_created_and_freed_concurrently),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
