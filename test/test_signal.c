/*
 * test_signal.c - signals the host sends to a running command
 * (shexec_run_send_signal), ^C typed on a pipe (shexec_run_type_input),
 * signal names (shexec_signal_from_name) and the interrupted mark
 * (shexec_run_interrupted): a Python http.server interrupted in pipe mode
 * takes its KeyboardInterrupt path, a shell that dies of the SIGINT is
 * SIGNALED 2, the signal reaches the command's processes and nothing else
 * (with a cgroup, also those that left its group), and what is refused is
 * refused with nothing sent.
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

/* Python's http.server on a port of its own choosing, on the loopback; -u
 * so that its lines come as it prints them. */
#define HTTP_SERVER "/usr/bin/python3 -u -m http.server 0 --bind 127.0.0.1"
#define SERVING "Serving HTTP on"
#define KEYBOARD_INTERRUPT "Keyboard interrupt received, exiting."
/* A loaded machine of two shared cores starts Python slowly: the bound on
 * every wait here is generous, the usual wait is well under a second. */
#define WAIT_MS 60000

static int setup(void **state)
{
    tu_leak_begin();
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    assert_int_equal(shexec_session_set_kill_grace_ms(s, 500), SHEXEC_OK);
    *state = s;
    return 0;
}

/* The same, holding its commands in process groups alone (no cgroup). */
static int setup_groups(void **state)
{
    setup(state);
    assert_int_equal(shexec_session_set_containment(*state, "off"), SHEXEC_OK);
    return 0;
}

static int teardown(void **state)
{
    shexec_session_free(*state);
    tu_leak_end();
    return 0;
}

static int has_python(void)
{
    if (access("/usr/bin/python3", X_OK) == 0)
        return 1;
    print_message("no /usr/bin/python3: skipped\n");
    return 0;
}

static shexec_task *start_task(shexec_session *s, const char *cmd, int with_stdin)
{
    shexec_run *r = NULL;
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    if (with_stdin)
        assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    return t;
}

/* Pump until the stream's output holds `text` (fails after WAIT_MS). */
static void wait_for_text(shexec_session *s, shexec_run *r, int stream, const char *text)
{
    int64_t end = tu_now_ms() + WAIT_MS;
    while (!strstr(shexec_run_output(r, stream, NULL), text)) {
        if (shexec_run_state(r) > SHEXEC_STATE_RUNNING || tu_now_ms() > end)
            fail_msg("no \"%s\" in [%s] [%s] (state %d)", text,
                     shexec_run_output(r, SHEXEC_STDOUT, NULL),
                     shexec_run_output(r, SHEXEC_STDERR, NULL), shexec_run_state(r));
        assert_true(shexec_session_wait(s, 50) >= 0);
    }
}

/*
 * Wait until the server serves: its "Serving" line, then one request
 * answered. Only inside serve_forever() does a SIGINT take the server's
 * KeyboardInterrupt path; the line is printed just before it, and a SIGINT
 * that comes as print() returns would end Python with a traceback.
 */
static void wait_serving(shexec_session *s, shexec_run *r)
{
    wait_for_text(s, r, SHEXEC_STDOUT, SERVING);
    /* the server answers while the loop is not pumped: it writes to its own
     * socket, and its log line fits in the stderr pipe */
    assert_true(tu_http_get(shexec_run_output(r, SHEXEC_STDOUT, NULL), WAIT_MS));
}

static void wait_done(shexec_session *s, shexec_run *r)
{
    int64_t end = tu_now_ms() + WAIT_MS;
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING) {
        if (tu_now_ms() > end)
            fail_msg("still running: [%s] [%s]", shexec_run_output(r, SHEXEC_STDOUT, NULL),
                     shexec_run_output(r, SHEXEC_STDERR, NULL));
        assert_true(shexec_session_wait(s, 200) >= 0);
    }
}

/* The server, interrupted in pipe mode, exits by its KeyboardInterrupt
 * path, as at a terminal; cancel (SIGTERM) would have killed it outright. */
static void check_server_interrupted(shexec_session *s, shexec_task *t)
{
    shexec_run *r = shexec_task_run(t);
    wait_done(s, r);
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
    if (!strstr(out, KEYBOARD_INTERRUPT))
        fail_msg("state %d, exit %d, signal %d: [%s] [%s]", shexec_run_state(r),
                 shexec_run_exit_code(r), shexec_run_signal(r), out,
                 shexec_run_output(r, SHEXEC_STDERR, NULL));
    /* http.server exits 0 after it; bash, whose child handled the SIGINT,
     * goes on and exits with it */
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(r), 0);
    assert_int_equal(shexec_run_interrupted(r), 1);
    /* over: nothing more is sent */
    assert_int_equal(shexec_run_send_signal(r, SIGINT), SHEXEC_ESTATE);
    assert_non_null(strstr(shexec_session_errmsg(s), "finished"));
}

static void test_interrupt_http_server(void **state)
{
    shexec_session *s = *state;
    if (!has_python())
        skip();
    shexec_task *t = start_task(s, HTTP_SERVER, 0);
    shexec_run *r = shexec_task_run(t);
    wait_serving(s, r);
    assert_int_equal(shexec_run_interrupted(r), 0);
    assert_int_equal(shexec_run_send_signal(r, SIGINT), SHEXEC_OK);
    check_server_interrupted(s, t);
    shexec_task_free(t);
}

/* ^C typed on a pipe: a SIGINT, also to a command that has no stdin. */
static void test_typed_interrupt_http_server(void **state)
{
    shexec_session *s = *state;
    if (!has_python())
        skip();
    for (int with_stdin = 0; with_stdin <= 1; with_stdin++) {
        shexec_task *t = start_task(s, HTTP_SERVER, with_stdin);
        shexec_run *r = shexec_task_run(t);
        wait_serving(s, r);
        assert_int_equal(shexec_run_type_input(r, "\x03", 1), SHEXEC_OK);
        check_server_interrupted(s, t);
        /* nothing is typed at a command that ended */
        assert_int_equal(shexec_run_type_input(r, "\x03", 1), SHEXEC_EPIPE);
        shexec_task_free(t);
    }
}

/* The ^C of a pipe is no byte of the input: the text around it reaches the
 * command, in order, and the ^C is a SIGINT its handler saw. */
static void test_typed_interrupt_is_not_input(void **state)
{
    shexec_session *s = *state;
    if (!has_python())
        skip();
    shexec_task *t = start_task(
        s,
        "/usr/bin/python3 -c 'import signal, sys\n"
        "signal.signal(signal.SIGINT, lambda *a: print(\"SIGINT\", flush=True))\n"
        "print(\"ready\", flush=True)\n"
        "print(repr(sys.stdin.buffer.read()))'",
        1);
    shexec_run *r = shexec_task_run(t);
    wait_for_text(s, r, SHEXEC_STDOUT, "ready");
    assert_int_equal(shexec_run_type_input(r, "ab\x03" "cd\n", 6), SHEXEC_OK);
    /* (a SIGINT that comes as Python enters read(2) waits for the read to
     * return before its handler runs: the end of input lets it) */
    assert_int_equal(shexec_run_close_stdin(r), SHEXEC_OK);
    wait_done(s, r);
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
    assert_non_null(strstr(out, "SIGINT\n"));
    assert_non_null(strstr(out, "b'abcd\\n'"));
    assert_null(strstr(out, "x03"));
    assert_int_equal(shexec_run_exit_code(r), 0);
    assert_int_equal(shexec_run_interrupted(r), 1);
    shexec_task_free(t);

    /* shexec_run_write() passes the byte on as it is */
    t = start_task(s, "od -An -tx1", 1);
    r = shexec_task_run(t);
    assert_int_equal(shexec_run_write(r, "\x03", 1), SHEXEC_OK);
    assert_int_equal(shexec_run_close_stdin(r), SHEXEC_OK);
    wait_done(s, r);
    assert_non_null(strstr(shexec_run_output(r, SHEXEC_STDOUT, NULL), "03"));
    assert_int_equal(shexec_run_interrupted(r), 0);
    shexec_task_free(t);
}

/* A command whose "ready" comes from the process that will get the
 * signal: the shell has forked it already (a child bash forks as a signal
 * comes starts without it, and bash waits for it), and sh, without traps,
 * dies of the signal at once, as the sleep it execs does. */
#define READY_SLEEP "sh -c 'echo ready; exec sleep 60'"

/* A shell whose command dies of the SIGINT dies of it too: SIGNALED 2, not
 * one of the library's endings (cancelled, killed, timed out). */
static void test_shell_dies_of_interrupt(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, READY_SLEEP "; echo after"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    wait_for_text(s, r, SHEXEC_STDOUT, "ready");
    int64_t t0 = tu_now_ms();
    assert_int_equal(shexec_run_send_signal(r, SIGINT), SHEXEC_OK);
    wait_done(s, r);
    assert_true(tu_now_ms() - t0 < 30000); /* not the sleep's 60 s */
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_SIGNALED);
    assert_int_equal(shexec_run_signal(r), SIGINT);
    assert_int_equal(shexec_run_exit_code(r), -1);
    assert_int_equal(shexec_run_interrupted(r), 1);
    assert_null(strstr(shexec_run_output(r, SHEXEC_STDOUT, NULL), "after"));
    shexec_run_free(r);

    /* a shell that handles it and exits 130, as shells do */
    r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "trap 'exit 130' INT; echo ready; "
                                           "while :; do sleep 0.1; done"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    wait_for_text(s, r, SHEXEC_STDOUT, "ready");
    assert_int_equal(shexec_run_send_signal(r, SIGINT), SHEXEC_OK);
    wait_done(s, r);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(r), 130);
    assert_int_equal(shexec_run_interrupted(r), 1);
    shexec_run_free(r);
}

/* Other signals pass as they are: SIGSTOP pauses the command (and nothing
 * ends it for that), SIGCONT resumes it, SIGUSR1 reaches its trap; none of
 * them marks it interrupted. */
static void test_stop_cont_usr1(void **state)
{
    shexec_session *s = *state;
    shexec_task *t = start_task(s, "trap 'echo usr1; exit 7' USR1; echo ready; "
                                   "while :; do echo tick; sleep 0.05; done", 0);
    shexec_run *r = shexec_task_run(t);
    wait_for_text(s, r, SHEXEC_STDOUT, "tick");
    assert_int_equal(shexec_run_send_signal(r, SIGSTOP), SHEXEC_OK);
    /* what it wrote before it stopped arrives; then nothing for a while */
    assert_true(shexec_session_wait(s, 300) >= 0);
    uint64_t paused = shexec_run_output_total(r, SHEXEC_STDOUT);
    int64_t end = tu_now_ms() + 700;
    while (tu_now_ms() < end)
        assert_true(shexec_session_wait(s, 100) >= 0);
    assert_int_equal(shexec_run_output_total(r, SHEXEC_STDOUT), paused);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_RUNNING);
    assert_int_equal(shexec_run_send_signal(r, SIGCONT), SHEXEC_OK);
    end = tu_now_ms() + WAIT_MS;
    while (shexec_run_output_total(r, SHEXEC_STDOUT) == paused) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 50) >= 0);
    }
    assert_int_equal(shexec_run_send_signal(r, SIGUSR1), SHEXEC_OK);
    wait_done(s, r);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(r), 7);
    assert_non_null(strstr(shexec_run_output(r, SHEXEC_STDOUT, NULL), "usr1"));
    assert_int_equal(shexec_run_interrupted(r), 0);
    shexec_task_free(t);
}

/* The signal reaches the command's processes only: not another task's, not
 * the host (whose SIGUSR1 is at its default action, death, here). */
static void test_only_the_command(void **state)
{
    shexec_session *s = *state;
    struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
    sigemptyset(&dfl.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &dfl, &old), 0);
    const char *cmd = "trap 'echo usr1; exit 7' USR1; echo ready; while :; do sleep 0.1; done";
    shexec_task *a = start_task(s, cmd, 0);
    shexec_task *b = start_task(s, cmd, 0);
    wait_for_text(s, shexec_task_run(a), SHEXEC_STDOUT, "ready");
    wait_for_text(s, shexec_task_run(b), SHEXEC_STDOUT, "ready");
    assert_int_equal(shexec_run_send_signal(shexec_task_run(a), SIGUSR1), SHEXEC_OK);
    wait_done(s, shexec_task_run(a));
    assert_int_equal(shexec_run_exit_code(shexec_task_run(a)), 7);
    /* b, the host: untouched */
    assert_true(shexec_session_wait(s, 300) >= 0);
    assert_int_equal(shexec_run_state(shexec_task_run(b)), SHEXEC_STATE_RUNNING);
    assert_null(strstr(shexec_run_output(shexec_task_run(b), SHEXEC_STDOUT, NULL), "usr1"));
    sigset_t pending;
    sigpending(&pending);
    assert_false(sigismember(&pending, SIGUSR1));
    shexec_task_free(a);
    shexec_task_free(b);
    sigaction(SIGUSR1, &old, NULL);
}

/* With containment by cgroup the signal reaches every process of the
 * command's cgroup, one that left its process group (setsid) too. */
static void test_cgroup_members_outside_the_group(void **state)
{
    shexec_session *s = *state;
    if (shexec_session_containment(s, NULL) != SHEXEC_CONTAIN_CGROUP) {
        print_message("no containment by cgroup here: skipped\n");
        skip();
    }
    shexec_task *t = start_task(
        s,
        "setsid bash -c 'trap \"echo away-usr1; exit 0\" USR1; echo away-ready; "
        "while :; do sleep 0.1; done' & "
        "trap 'echo shell-usr1' USR1; wait; wait; echo shell-done",
        0);
    shexec_run *r = shexec_task_run(t);
    wait_for_text(s, r, SHEXEC_STDOUT, "away-ready");
    assert_int_equal(shexec_run_send_signal(r, SIGUSR1), SHEXEC_OK);
    wait_done(s, r);
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
    assert_non_null(strstr(out, "away-usr1"));
    assert_non_null(strstr(out, "shell-usr1"));
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    shexec_task_free(t);
}

/* What is refused is refused with nothing sent. */
static void test_refused(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_run_send_signal(NULL, SIGINT), SHEXEC_EINVAL);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "echo ready; sleep 60"), SHEXEC_OK);
    assert_int_equal(shexec_run_send_signal(r, SIGINT), SHEXEC_ESTATE);
    assert_non_null(strstr(shexec_session_errmsg(s), "not been started"));
    assert_int_equal(shexec_run_type_input(r, "\x03", 1), SHEXEC_EPIPE);
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    wait_for_text(s, r, SHEXEC_STDOUT, "ready");
    const int bad[] = {0, -1, SIGSEGV, SIGABRT, SIGALRM, SIGTSTP, SIGTTIN, SIGCHLD, 999};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(shexec_run_send_signal(r, bad[i]), SHEXEC_EINVAL);
        assert_non_null(strstr(shexec_session_errmsg(s), "not one a command may be sent"));
        assert_non_null(strstr(shexec_session_errmsg(s), "SIGINT"));
    }
    /* text for a command without stdin: refused whole, the ^C not sent */
    assert_int_equal(shexec_run_type_input(r, "y\x03", 2), SHEXEC_EPIPE);
    assert_int_equal(shexec_run_type_input(r, NULL, 1), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_type_input(NULL, "\x03", 1), SHEXEC_EINVAL);
    assert_true(shexec_session_wait(s, 200) >= 0);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_RUNNING);
    assert_int_equal(shexec_run_interrupted(r), 0);
    shexec_task_free(t);

    /* past the bound on queued input: refused whole before any signal */
    assert_int_equal(shexec_session_set_input_queue_max(s, 4), SHEXEC_OK);
    t = start_task(s, "echo ready; sleep 60", 1);
    r = shexec_task_run(t);
    wait_for_text(s, r, SHEXEC_STDOUT, "ready");
    assert_int_equal(shexec_run_write(r, "12", 2), SHEXEC_OK); /* never read */
    assert_int_equal(shexec_run_type_input(r, "\x03" "345", 4), SHEXEC_ELIMIT);
    assert_true(shexec_session_wait(s, 200) >= 0);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_RUNNING);
    assert_int_equal(shexec_run_interrupted(r), 0);
    shexec_task_free(t);
    assert_int_equal(shexec_run_interrupted(NULL), 0);
}

static void test_signal_names(void **state)
{
    (void)state;
    assert_int_equal(shexec_signal_from_name("SIGINT"), SIGINT);
    assert_int_equal(shexec_signal_from_name("INT"), SIGINT);
    assert_int_equal(shexec_signal_from_name("int"), SIGINT);
    assert_int_equal(shexec_signal_from_name("sigint"), SIGINT);
    assert_int_equal(shexec_signal_from_name("SigTerm"), SIGTERM);
    assert_int_equal(shexec_signal_from_name("KILL"), SIGKILL);
    assert_int_equal(shexec_signal_from_name("hup"), SIGHUP);
    assert_int_equal(shexec_signal_from_name("SIGQUIT"), SIGQUIT);
    assert_int_equal(shexec_signal_from_name("usr1"), SIGUSR1);
    assert_int_equal(shexec_signal_from_name("USR2"), SIGUSR2);
    assert_int_equal(shexec_signal_from_name("STOP"), SIGSTOP);
    assert_int_equal(shexec_signal_from_name("SIGCONT"), SIGCONT);
    const char *bad[] = {"", "SIG", "SIGSEGV", "SEGV", "TSTP", "2", "SIGINT ", " INT",
                         "INTX", "SIGSIGINT", "ctrl-c"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(shexec_signal_from_name(bad[i]), SHEXEC_EINVAL);
    assert_int_equal(shexec_signal_from_name(NULL), SHEXEC_EINVAL);
}

/* On a terminal the ^C goes as it is, and the terminal makes it SIGINT. */
static void test_pty_interrupt(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, READY_SLEEP "; echo after"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty(r, SHEXEC_PTY_ON), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    wait_for_text(s, r, SHEXEC_STDOUT, "ready");
    assert_int_equal(shexec_run_type_input(r, "\x03", 1), SHEXEC_OK);
    wait_done(s, r);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_SIGNALED);
    assert_int_equal(shexec_run_signal(r), SIGINT);
    assert_int_equal(shexec_run_interrupted(r), 1);
    shexec_run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_interrupt_http_server, setup, teardown),
        cmocka_unit_test_setup_teardown(test_typed_interrupt_http_server, setup, teardown),
        cmocka_unit_test_setup_teardown(test_typed_interrupt_is_not_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shell_dies_of_interrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_cont_usr1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_the_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cgroup_members_outside_the_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signal_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pty_interrupt, setup, teardown),
        {"test_interrupt_http_server (process groups)", test_interrupt_http_server,
         setup_groups, teardown, NULL},
        {"test_shell_dies_of_interrupt (process groups)", test_shell_dies_of_interrupt,
         setup_groups, teardown, NULL},
        {"test_only_the_command (process groups)", test_only_the_command, setup_groups,
         teardown, NULL},
    };
    return cmocka_run_group_tests_name("signal", tests, NULL, NULL);
}
