/*
 * test_pty.c - commands on a pseudo-terminal, ANSI stripping of real
 * output, interactive input, and the engine's guarantees in PTY mode.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
    assert_int_equal(shexec_session_set_cwd(s, "/"), SHEXEC_OK);
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

/* Run cmd (pty and ansi as given) to completion; caller frees. */
static shexec_run *run_mode(shexec_session *s, const char *cmd, int pty, int ansi)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty(r, pty), SHEXEC_OK);
    assert_int_equal(shexec_run_set_ansi(r, ansi), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 20000), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    return r;
}

static const char *out_of(shexec_run *r)
{
    return shexec_run_output(r, SHEXEC_STDOUT, NULL);
}

/* Drive the session's loop, as a host does, until pid is gone or ms pass;
 * 1 when it is gone. */
static int drive_until_gone(shexec_session *s, pid_t pid, int ms)
{
    int64_t end = tu_now_ms() + ms;
    while (tu_pid_alive(pid) && tu_now_ms() < end)
        shexec_session_wait(s, 50);
    return !tu_pid_alive(pid);
}

static void test_tty_or_not(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = run_mode(s, "tty; test -t 0 && test -t 1 && test -t 2 && echo all-tty", 1, 0);
    regex_t re;
    assert_int_equal(regcomp(&re, "^/dev/pts/[0-9]+\nall-tty\n$", REG_EXTENDED), 0);
    assert_int_equal(regexec(&re, out_of(r), 0, NULL, 0), 0);
    regfree(&re);
    assert_int_equal(shexec_run_exit_code(r), 0);
    shexec_run_free(r);

    r = run_mode(s, "tty; test -t 1 || echo no-tty", 0, 0);
    assert_string_equal(out_of(r), "not a tty\nno-tty\n");
    shexec_run_free(r);

    /* the terminal is the controlling terminal of a new session led by the shell */
    if (!tu_platform_has(SHX_PLATFORM_SETSID, "POSIX_SPAWN_SETSID, for a controlling terminal"))
        return;
    r = run_mode(s, "echo $$ $(cut -d' ' -f6 /proc/$$/stat) $(ps -o sess= -p $$)", 1, 0);
    int pid = 0, sid = 0, sess = 0;
    assert_int_equal(sscanf(out_of(r), "%d %d %d", &pid, &sid, &sess), 3);
    assert_int_equal(pid, sess);
    assert_true(sid != 0); /* tty_nr: a controlling terminal is set */
    shexec_run_free(r);
}

static void test_window_size(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = run_mode(s, "stty size", 1, 0);
    assert_string_equal(out_of(r), "50 200\n");
    shexec_run_free(r);
    assert_int_equal(shexec_run_new(&r, s, "stty size; tput cols"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty(r, 1), SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty_size(r, 0, 10), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_set_pty_size(r, 120, 40), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(out_of(r), "40 120\n120\n");
    shexec_run_free(r);
}

static void test_colours_only_on_a_terminal(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = run_mode(s, "ls --color=auto -d /tmp /usr", 1, 0);
    assert_non_null(strchr(out_of(r), '\033'));
    shexec_run_free(r);
    r = run_mode(s, "ls --color=auto -d /tmp /usr", 0, 0);
    assert_null(strchr(out_of(r), '\033'));
    assert_string_equal(out_of(r), "/tmp\n/usr\n");
    shexec_run_free(r);
}

static void test_strip_equals_plain(void **state)
{
    shexec_session *s = *state;
    const char *pairs[][2] = {
        {"ls -1 --color=always -d /tmp /usr /etc", "ls -1 -d /tmp /usr /etc"},
        {"printf 'a\\033[1;31mred\\033[0m b\\n'", "printf 'ared b\\n'"},
        {"printf '\\033]0;title\\007x\\n'", "printf 'x\\n'"},
        {"grep --color=always root /etc/passwd", "grep --color=never root /etc/passwd"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        for (int pty = 0; pty <= 1; pty++) {
            shexec_run *coloured = run_mode(s, pairs[i][0], pty, SHEXEC_ANSI_STRIP);
            shexec_run *plain = run_mode(s, pairs[i][1], 0, SHEXEC_ANSI_KEEP);
            if (strcmp(out_of(coloured), out_of(plain)) != 0)
                fail_msg("%s (pty %d): [%s] vs [%s]", pairs[i][0], pty, out_of(coloured),
                         out_of(plain));
            shexec_run_free(coloured);
            shexec_run_free(plain);
        }
    }
    /* a progress bar resolves to its last state; stderr is stripped too */
    shexec_run *r = run_mode(s, "printf '10%%\\r50%%\\r100%%\\ndone\\n'; printf '\\033[33mwarn\\033[0m\\n' >&2",
                             0, SHEXEC_ANSI_STRIP);
    assert_string_equal(out_of(r), "100%\ndone\n");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "warn\n");
    shexec_run_free(r);
    assert_int_equal(shexec_run_new(&r, s, "true"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_ansi(r, 5), SHEXEC_EINVAL);
    shexec_run_free(r);
}

static void test_engine_guarantees_on_a_pty(void **state)
{
    shexec_session *s = *state;
    /* cwd tracking, exact exit codes, stderr merged into stdout */
    shexec_run *r = run_mode(s, "cd /tmp && echo in; echo err >&2; false", 1, 0);
    assert_string_equal(out_of(r), "in\nerr\n");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "");
    assert_int_equal(shexec_run_exit_code(r), 1);
    assert_string_equal(shexec_session_cwd(s), "/tmp");
    shexec_run_free(r);
    r = run_mode(s, "cd /usr; exit 3", 1, 0);
    assert_int_equal(shexec_run_exit_code(r), 3);
    assert_string_equal(shexec_session_cwd(s), "/usr"); /* `exit` reports too */
    shexec_run_free(r);

    /* truncation */
    r = run_mode(s, "head -c 50000 /dev/zero | tr '\\0' x", 1, 0);
    assert_true(shexec_run_truncated(r, SHEXEC_STDOUT));
    assert_non_null(strstr(out_of(r), "kept the first 30000 characters (30000 bytes) of 50000 "
                                      "(50000 bytes, 1 lines)"));
    shexec_run_free(r);

    /* a timeout kills the group; waiting for input that never comes ends too */
    assert_int_equal(shexec_run_new(&r, s, "echo waiting; sleep 30 & echo $!; cat"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty(r, 1), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 500), SHEXEC_OK);
    int64_t t0 = tu_now_ms();
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_true(tu_now_ms() - t0 < 4000);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    int child = 0;
    assert_int_equal(sscanf(out_of(r), "waiting\n%d", &child), 1);
    assert_true(tu_wait_pid_gone(child, 2000));
    shexec_run_free(r);

    /* leftovers: the run returns at once; the terminal's hangup ends them
     * (a hangup goes to the session of a controlling terminal) */
    if (!tu_platform_has(SHX_PLATFORM_SETSID, "POSIX_SPAWN_SETSID, for a controlling terminal"))
        return;
    t0 = tu_now_ms();
    r = run_mode(s, "sleep 30 & echo $!", 1, 0);
    assert_true(tu_now_ms() - t0 < 4000);
    child = atoi(out_of(r));
    assert_true(child > 0);
    shexec_run_free(r);
    /* the host drives the loop meanwhile: a child that lost the hangup
     * before its exec is sent it again from there */
    assert_true(drive_until_gone(s, child, 3000));
}

static void on_signal(int sig)
{
    (void)sig;
}

/* What /proc says a process does with a signal: only a signal neither
 * blocked, ignored nor caught counts as taking its default action. */
static void test_signal_default_read_from_proc(void **state)
{
    (void)state;
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "/proc, to read a process's signal dispositions"))
        skip();
    pid_t me = getpid(), group = getpgrp();
    /* valgrind catches every signal itself: a default action shows as caught */
    int native = !tu_under_valgrind();
    struct sigaction dfl, old;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    assert_int_equal(sigaction(SIGHUP, &dfl, &old), 0);
    assert_int_equal(shx_test_signal_default(me, group, SIGHUP), native);
    assert_int_equal(shx_test_signal_default(me, group + 1, SIGHUP), 0); /* not in that group */
    assert_int_equal(shx_test_signal_default(me, group, 0), 0);
    assert_int_equal(shx_test_signal_default(me, group, 32), 0);

    sigset_t hup, was;
    sigemptyset(&hup);
    sigaddset(&hup, SIGHUP);
    assert_int_equal(sigprocmask(SIG_BLOCK, &hup, &was), 0);
    assert_int_equal(shx_test_signal_default(me, group, SIGHUP), 0);
    assert_int_equal(shx_test_signal_default(me, group, SIGUSR2), native); /* the others stay */
    assert_int_equal(sigprocmask(SIG_SETMASK, &was, NULL), 0);

    struct sigaction other = dfl;
    other.sa_handler = SIG_IGN;
    assert_int_equal(sigaction(SIGHUP, &other, NULL), 0);
    assert_int_equal(shx_test_signal_default(me, group, SIGHUP), 0);
    other.sa_handler = on_signal;
    assert_int_equal(sigaction(SIGHUP, &other, NULL), 0);
    assert_int_equal(shx_test_signal_default(me, group, SIGHUP), 0);
    assert_int_equal(sigaction(SIGHUP, &old, NULL), 0);

    /* a zombie takes nothing */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    while (tu_pid_alive(child))
        usleep(1000);
    assert_int_equal(shx_test_signal_default(child, group, SIGHUP), 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
}

/*
 * A leftover that took the terminal's hangup in a handler and then set
 * SIGHUP back to its default, as a shell's child between its fork and its
 * exec does, is alive with a hangup that would end it: it is sent one
 * again while the host drives the loop.
 */
static void test_missed_hangup_is_sent_again(void **state)
{
    shexec_session *s = *state;
    if (!tu_platform_has(SHX_PLATFORM_SETSID, "POSIX_SPAWN_SETSID, for a controlling terminal") ||
        !tu_platform_has(SHX_PLATFORM_PROCFS, "/proc, to read what a member does with SIGHUP"))
        skip();
    const char *dir = tu_mkdtemp();
    assert_non_null(dir);
    char ready[300], cmd[1200];
    snprintf(ready, sizeof ready, "%s/ready", dir);
    snprintf(cmd, sizeof cmd, "'%s' '%s' & until [ -e '%s' ]; do sleep 0.01; done; echo $!",
             tu_helper("hup_late"), ready, ready);
    shexec_run *r = run_mode(s, cmd, 1, 0);
    int child = atoi(out_of(r));
    assert_true(child > 0);
    /* it outlived the hangup (its handler took it): the hangup sent again
     * ends it while the run drains its output, or later in the task that
     * adopted the group */
    int left = shexec_run_leftovers(r, NULL);
    assert_true(left == SHEXEC_LEFTOVERS_NONE || left == SHEXEC_LEFTOVERS_ADOPTED);
    shexec_run_free(r);
    int gone = drive_until_gone(s, child, 10000);
    if (!gone)
        kill(child, SIGKILL);
    unlink(ready);
    rmdir(dir);
    assert_true(gone);
}

/* A leftover that ignores SIGHUP outlives the hangup and every later look
 * (none of which signals it): it is adopted, and still runs after them. */
static void test_hangup_ignored_is_left_alone(void **state)
{
    shexec_session *s = *state;
    if (!tu_platform_has(SHX_PLATFORM_SETSID, "POSIX_SPAWN_SETSID, for a controlling terminal"))
        skip();
    shexec_run *r = run_mode(s, "trap '' HUP; sleep 30 & echo $!", 1, 0);
    int child = atoi(out_of(r));
    assert_true(child > 0);
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    shexec_run_free(r);
    /* past the last look, 1.7 s after the exit */
    int64_t end = tu_now_ms() + 2200;
    while (tu_now_ms() < end)
        shexec_session_wait(s, 100);
    int alive = tu_pid_alive(child);
    kill(child, SIGKILL);
    assert_true(alive);
}

static void wait_for(shexec_session *s, shexec_task *t, const char *text)
{
    shexec_run *tr = shexec_task_run(t);
    int64_t end = tu_now_ms() + 10000;
    while (!strstr(out_of(tr), text)) {
        if (tu_now_ms() > end || shexec_run_state(tr) > SHEXEC_STATE_RUNNING)
            fail_msg("never saw [%s]; output [%s]", text, out_of(tr));
        shexec_session_wait(s, 50);
    }
}

static void wait_done(shexec_session *s, shexec_task *t)
{
    int64_t end = tu_now_ms() + 10000;
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() < end);
        shexec_session_wait(s, 200);
    }
}

static shexec_task *pty_task(shexec_session *s, const char *cmd)
{
    shexec_run *r = NULL;
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty(r, 1), SHEXEC_OK);
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    return t;
}

static void test_answer_a_prompt(void **state)
{
    shexec_session *s = *state;
    shexec_task *t = pty_task(s, "read -p 'Name? ' n; echo \"hi $n\"");
    shexec_run *tr = shexec_task_run(t);
    wait_for(s, t, "Name? ");
    assert_int_equal(shexec_run_write(tr, "bob\n", 4), SHEXEC_OK);
    wait_done(s, t);
    /* the answer is not echoed back */
    assert_string_equal(out_of(tr), "Name? hi bob\n");
    assert_int_equal(shexec_run_exit_code(tr), 0);
    shexec_task_free(t);

    /* asked for: the terminal echoes what is typed */
    assert_int_equal(shexec_run_new(&tr, s, "read -p 'Name? ' n; echo \"hi $n\""), SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty(tr, 7), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_set_pty(tr, SHEXEC_PTY_ECHO), SHEXEC_OK);
    assert_int_equal(shexec_run_start_task(&t, tr), SHEXEC_OK);
    wait_for(s, t, "Name? ");
    assert_int_equal(shexec_run_write(tr, "bob\n", 4), SHEXEC_OK);
    wait_done(s, t);
    assert_string_equal(out_of(tr), "Name? bob\nhi bob\n");
    shexec_task_free(t);
}

static void test_drive_a_repl(void **state)
{
    shexec_session *s = *state;
    /* ^C is a signal only from a controlling terminal */
    if (!tu_platform_has(SHX_PLATFORM_SETSID, "POSIX_SPAWN_SETSID, for ^C"))
        skip();
    shexec_task *t = pty_task(s, "python3 -i -q");
    shexec_run *tr = shexec_task_run(t);
    wait_for(s, t, ">>> ");
    assert_int_equal(shexec_run_write(tr, "6*7\n", 4), SHEXEC_OK);
    wait_for(s, t, "42");
    /* ^C interrupts the statement, not the REPL */
    assert_int_equal(shexec_run_write(tr, "import time; time.sleep(30)\n", 28), SHEXEC_OK);
    shexec_session_wait(s, 300);
    assert_int_equal(shexec_run_write(tr, "\x03", 1), SHEXEC_OK);
    wait_for(s, t, "KeyboardInterrupt");
    assert_false(shexec_run_state(tr) > SHEXEC_STATE_RUNNING);
    /* ^D ends it (python reports the earlier interrupt when it exits, and
     * bash passes SIGINT on: either ending is the REPL's own) */
    assert_int_equal(shexec_run_close_stdin(tr), SHEXEC_OK);
    wait_done(s, t);
    assert_true((shexec_run_state(tr) == SHEXEC_STATE_EXITED && shexec_run_exit_code(tr) == 0) ||
                (shexec_run_state(tr) == SHEXEC_STATE_SIGNALED && shexec_run_signal(tr) == SIGINT));
    shexec_task_free(t);
}

static void test_interrupt_a_command(void **state)
{
    shexec_session *s = *state;
    if (!tu_platform_has(SHX_PLATFORM_SETSID, "POSIX_SPAWN_SETSID, for ^C"))
        skip();
    shexec_task *t = pty_task(s, "echo ready; sleep 30");
    shexec_run *tr = shexec_task_run(t);
    wait_for(s, t, "ready");
    int64_t t0 = tu_now_ms();
    assert_int_equal(shexec_run_write(tr, "\x03", 1), SHEXEC_OK);
    wait_done(s, t);
    assert_true(tu_now_ms() - t0 < 5000);
    assert_true(shexec_run_signal(tr) == SIGINT || shexec_run_exit_code(tr) == 130);
    shexec_task_free(t);
}

static void test_strip_streaming_and_prompt(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = NULL;
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_new(&r, s,
                                    "printf '\\033[1mName?\\033[0m '; read n; echo \"hi $n\""),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty(r, 1), SHEXEC_OK);
    assert_int_equal(shexec_run_set_ansi(r, SHEXEC_ANSI_STRIP), SHEXEC_OK);
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    /* the prompt has no newline, yet reading shows it */
    int64_t end = tu_now_ms() + 10000;
    shx_buf seen = SHX_BUF_INIT;
    while (!strstr(seen.data ? seen.data : "", "Name? ")) {
        assert_true(tu_now_ms() < end);
        shexec_session_wait(s, 50);
        shx_buf_puts(&seen, shexec_task_read(t, SHEXEC_STDOUT, NULL));
    }
    assert_string_equal(seen.data, "Name? ");
    shexec_run_write(r, "ann\n", 4);
    wait_done(s, t);
    shx_buf_puts(&seen, shexec_task_read(t, SHEXEC_STDOUT, NULL));
    assert_string_equal(seen.data, "Name? hi ann\n");
    shx_buf_free(&seen);
    shexec_task_free(t);
}

static void test_output_read_while_running_then_final(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "echo one; sleep 0.3; echo two"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    int64_t end = tu_now_ms() + 5000;
    while (strcmp(shexec_run_output(r, SHEXEC_STDOUT, NULL), "one\n") != 0 && tu_now_ms() < end)
        shexec_session_wait(s, 50);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "one\n");
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
        shexec_session_wait(s, 1000);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "one\ntwo\n");
    shexec_run_free(r);
}

/* A running terminal resized: a task's reads the new size; pipes and
 * ended runs cannot be; where the command has a controlling terminal, its
 * foreground group gets SIGWINCH. */
static void test_resize_while_running(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = NULL;
    /* a task's terminal, from its run */
    shexec_task *t = pty_task(s, "echo ready; read line; stty size");
    wait_for(s, t, "ready\n");
    assert_int_equal(shexec_run_set_pty_size(shexec_task_run(t), 0, 30), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_set_pty_size(shexec_task_run(t), 132, 43), SHEXEC_OK);
    assert_int_equal(shexec_run_write(shexec_task_run(t), "\n", 1), SHEXEC_OK);
    wait_done(s, t);
    assert_string_equal(out_of(shexec_task_run(t)), "ready\n43 132\n");
    /* ended: nothing to resize */
    assert_int_equal(shexec_run_set_pty_size(shexec_task_run(t), 80, 24), SHEXEC_ESTATE);
    shexec_task_free(t);

    /* a pipe run has no terminal */
    assert_int_equal(shexec_run_new(&r, s, "sleep 20"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty_size(r, 80, 24), SHEXEC_ESTATE);
    assert_non_null(strstr(shexec_session_errmsg(s), "pipes"));
    shexec_run_free(r);
    assert_int_equal(shexec_run_set_pty_size(NULL, 80, 24), SHEXEC_EINVAL);

    /* the command hears of it: SIGWINCH goes to the foreground process
     * group of its controlling terminal */
    if (!tu_platform_has(SHX_PLATFORM_SETSID, "POSIX_SPAWN_SETSID, for a controlling terminal"))
        return;
    assert_int_equal(shexec_run_new(&r, s, "trap 'echo WINCH $(stty size)' WINCH; stty size; "
                                           "echo ready; sleep 20 & wait $!; kill $!; stty size"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty(r, 1), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    int64_t end = tu_now_ms() + 10000;
    while (!strstr(out_of(r), "ready\n") && tu_now_ms() < end)
        shexec_session_wait(s, 50);
    assert_string_equal(out_of(r), "50 200\nready\n");
    shexec_session_wait(s, 100); /* `wait` is waiting */
    assert_int_equal(shexec_run_set_pty_size(r, 0, 30), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_set_pty_size(r, 100, 30), SHEXEC_OK);
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING && tu_now_ms() < end)
        shexec_session_wait(s, 100);
    assert_int_equal(shexec_run_exit_code(r), 0);
    assert_string_equal(out_of(r), "50 200\nready\nWINCH 30 100\n30 100\n");
    /* ended: nothing to resize */
    assert_int_equal(shexec_run_set_pty_size(r, 80, 24), SHEXEC_ESTATE);
    shexec_run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tty_or_not, setup, teardown),
        cmocka_unit_test_setup_teardown(test_window_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resize_while_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_colours_only_on_a_terminal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strip_equals_plain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_engine_guarantees_on_a_pty, setup, teardown),
        cmocka_unit_test(test_signal_default_read_from_proc),
        cmocka_unit_test_setup_teardown(test_missed_hangup_is_sent_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hangup_ignored_is_left_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_a_prompt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drive_a_repl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupt_a_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strip_streaming_and_prompt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_read_while_running_then_final, setup, teardown),
    };
    return cmocka_run_group_tests_name("pty", tests, NULL, NULL);
}
