/*
 * test_trust.c - what a command's shell reports back is untrusted input:
 * the command can write whatever its shell can. A forged report gives it
 * nothing it could not get by running `cd` or `export` itself: state is
 * read only from a run the library asked to list it, variables are
 * replayed in the library's own quoting (no text of the listing runs),
 * functions are defined by bash's own import of one definition (no code
 * around it runs) and never under a builtin's name, nothing persisted or
 * host-supplied appears on a command line, one function that cannot be
 * replayed does not take the others with it, a host that closes the
 * library's descriptors loses nothing of its own, and the grace of a
 * timeout belongs to every process of the command, not only its shell.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shexec.h"
#include "testhook.h"
#include "testutil.h"

static const char *const g_shells[] = {"/bin/bash", "/bin/sh"};

/* Kept functions reach bash through its environment, which a /bin/sh
 * trampoline (no posix_spawn_file_actions_addchdir_np) that is dash drops:
 * there they are dropped with a notice (test_persist.c). */
static int functions_kept(void)
{
    return (shx_test_platform() & SHX_PLATFORM_CHDIR_NP) != 0;
}

typedef struct fixture {
    shexec_session *s;
    char dir[PATH_MAX];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    tu_leak_begin();
    assert_int_equal(shexec_session_new(&f->s), SHEXEC_OK);
    const char *d = tu_mkdtemp();
    assert_non_null(d);
    snprintf(f->dir, sizeof f->dir, "%s", d);
    assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    shexec_session_free(f->s);
    tu_rmtree(f->dir);
    tu_leak_end();
    free(f);
    return 0;
}

static void use_shell(shexec_session *s, const char *shell)
{
    const char *argv[] = {shell, NULL};
    assert_int_equal(shexec_session_set_shell(s, argv, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
}

static shexec_run *run(shexec_session *s, const char *cmd)
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

/* Run cmd; its stdout must be want. */
static void expect_out(shexec_session *s, const char *cmd, const char *want)
{
    shexec_run *r = run(s, cmd);
    if (strcmp(out_of(r), want) != 0)
        fail_msg("%s: stdout \"%s\", expected \"%s\" (stderr \"%s\", notice \"%s\")", cmd,
                 out_of(r), want, shexec_run_output(r, SHEXEC_STDERR, NULL), shexec_run_notice(r));
    shexec_run_free(r);
}

static void write_file(const char *dir, const char *name, const char *data, size_t len)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, len, fp), len);
    fclose(fp);
}

static int exists(const char *dir, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* A record as the shell writes it, with a listing of the command's choice:
 * variables whose text would run code if replayed as printed, the deny
 * list's first name, and functions with code around them. */
static const char forged[] =
    "\0status=0\0cwd=/etc\n\0decl="
    "declare -x LD_PRELOAD=\"/tmp/shexec-evil.so\"\n"
    "declare -- EVIL=\"$(touch PWNED1)\"\n"
    "declare -a ARR=([0]=\"x\" [1]=\"$(touch PWNED2)\")\n"
    "declare -i NUM=\"1+$(touch PWNED3)\"\n"
    "declare -n REF=\"ARR[$(touch PWNED4)]\"\n"
    "declare -ai IA=([0]=\"1\" [1]=\"a[$(touch PWNED5)]\")\n"
    "\0funcs="
    "trap () \n{ \n    :\n}\n"
    "builtin () \n{ \n    :\n}\n"
    "ok () \n{ \n    echo ok-ran\n}\n"
    "evil () \n{ \n    :\n}; touch PWNED6\n}\n"
    "\0";

/* Item: a command the library does not ask to list its state (a
 * background task) writes a listing into its channel: nothing of it is
 * taken, in bash or dash. */
static void test_state_read_only_when_asked(void **state)
{
    fixture *f = *state;
    if (!tu_platform_has(SHX_PLATFORM_PERSIST, "persisted shell state"))
        skip();
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
        write_file(f->dir, "forged.rec", forged, sizeof forged - 1);
        shexec_run_free(run(f->s, "export A=1"));
        /* a background task, whose shell is never asked to list, writes the
         * listing into its channel (173; in bash also 10, where an older
         * wrapper kept it) */
        shexec_run *r = NULL;
        shexec_task *t = NULL;
        assert_int_equal(shexec_run_new(&r, f->s, sh == 0 ? "cat forged.rec 2>/dev/null >&10; "
                                                            "cat forged.rec 2>/dev/null >&173"
                                                          : "cat forged.rec >>/dev/fd/173 2>/dev/null"),
                         SHEXEC_OK);
        assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
        while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
            assert_true(shexec_session_wait(f->s, -1) >= 0);
        assert_int_equal(shx_test_run_listed(r), 0);
        shexec_task_free(t);
        assert_null(shexec_session_getenv(f->s, "LD_PRELOAD"));
        assert_null(shexec_session_getenv(f->s, "EVIL"));
        expect_out(f->s, "echo \"[$A][$LD_PRELOAD][${EVIL-}]\"; command -v ok || echo none",
                   "[1][][]\nnone\n");
        assert_string_equal(shexec_session_cwd(f->s), f->dir);
        for (int i = 1; i <= 6; i++) {
            char name[32];
            snprintf(name, sizeof name, "PWNED%d", i);
            assert_false(exists(f->dir, name));
        }
        assert_int_equal(shexec_session_set_persist_env(f->s, 0), SHEXEC_OK);
    }
}

/* Item: a run asked to list writes a forged report in place of its shell's
 * (it removes the trap): what is taken is parsed and replayed in the
 * library's words, so no text of it runs; the deny list holds; functions
 * named like builtins are not kept; a function with code around it is not
 * defined (bash's import refuses it) and is dropped; the rest works. */
static void test_forged_listing_runs_nothing(void **state)
{
    fixture *f = *state;
    if (!tu_platform_has(SHX_PLATFORM_PERSIST, "persisted shell state"))
        skip();
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    write_file(f->dir, "forged.rec", forged, sizeof forged - 1);
    shexec_run *r = run(f->s, "trap - EXIT; cat forged.rec >&173; X=$X");
    assert_int_equal(shexec_run_exit_code(r), 0);
    const char *notice = shexec_run_notice(r);
    assert_non_null(strstr(notice, "trap (the name of a shell builtin"));
    assert_non_null(strstr(notice, "builtin (the name of a shell builtin"));
    assert_non_null(strstr(notice, "NUM"));
    assert_non_null(strstr(notice, "REF"));
    assert_non_null(strstr(notice, "IA"));
    shexec_run_free(r);
    assert_string_equal(shexec_session_cwd(f->s), "/etc"); /* as `cd /etc` could */
    assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
    assert_null(shexec_session_getenv(f->s, "LD_PRELOAD"));
    /* the values are data: printed as written, nothing ran */
    r = run(f->s, "printf '%s|' \"$EVIL\" \"${ARR[1]}\" \"${NUM-unset}\" \"$LD_PRELOAD\"; "
                  "ok 2>/dev/null || echo no-ok; type -t trap builtin");
    assert_string_equal(out_of(r), functions_kept()
                                       ? "$(touch PWNED1)|$(touch PWNED2)|unset||ok-ran\nbuiltin\nbuiltin\n"
                                       : "$(touch PWNED1)|$(touch PWNED2)|unset||no-ok\nbuiltin\nbuiltin\n");
    /* evil was refused by bash's import and is dropped, with a notice */
    assert_non_null(strstr(shexec_run_notice(r), "evil"));
    shexec_run_free(r);
    r = run(f->s, "command -v evil || echo gone; cd /usr");
    assert_string_equal(out_of(r), "gone\n");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "");
    assert_string_equal(shexec_session_cwd(f->s), "/usr");
    shexec_run_free(r);
    for (int i = 1; i <= 6; i++) {
        char name[32];
        snprintf(name, sizeof name, "PWNED%d", i);
        assert_false(exists(f->dir, name));
        assert_false(exists("/usr", name));
    }
}

/* Item: a function a command defines under a builtin's name is not kept: it
 * would take over the library's prelude and report in every later command.
 * A command that takes over `builtin` itself spoils only its own report. */
static void test_builtin_named_functions_not_kept(void **state)
{
    fixture *f = *state;
    if (!tu_platform_has(SHX_PLATFORM_PERSIST, "persisted shell state"))
        skip();
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    shexec_run *r = run(f->s, "builtin() { :; }; mine() { echo mine; }; cd /tmp");
    assert_non_null(strstr(shexec_run_notice(r), "reported no working directory"));
    assert_string_equal(shexec_session_cwd(f->s), f->dir);
    shexec_run_free(r);
    r = run(f->s, "trap() { :; }; pwd() { echo /etc; }; cd() { :; }; mine() { echo mine; }; "
                  "builtin cd /tmp");
    assert_non_null(strstr(shexec_run_notice(r), "trap (the name of a shell builtin"));
    assert_non_null(strstr(shexec_run_notice(r), "pwd (the name"));
    assert_string_equal(shexec_session_cwd(f->s), "/tmp"); /* builtin pwd, not its own */
    assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
    shexec_run_free(r);
    expect_out(f->s, "type -t builtin trap pwd cd mine; cd /usr",
               functions_kept() ? "builtin\nbuiltin\nbuiltin\nbuiltin\nfunction\n"
                                : "builtin\nbuiltin\nbuiltin\nbuiltin\n");
    assert_string_equal(shexec_session_cwd(f->s), "/usr");
    if (functions_kept())
        expect_out(f->s, "mine", "mine\n");
}

/* Item: nothing persisted or host-supplied appears on a command line: the
 * state travels in the environment and in the run's channel, which only
 * the user can read. */
static void test_nothing_on_the_command_line(void **state)
{
    fixture *f = *state;
    if (!tu_platform_has(SHX_PLATFORM_PERSIST, "persisted shell state"))
        skip();
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    shexec_run_free(run(f->s, "export DB_PASSWORD=s3cret-exported; SHELL_ONLY=s3cret-var; "
                              "fn() { echo s3cret-function; }"));
    const char *argv_of_shell = "tr '\\0' ' ' < /proc/$$/cmdline; echo; ps -o args= -p $$";
    for (int wrapped = 0; wrapped < 2; wrapped++) {
        if (wrapped) {
            const char *argv[] = {"env", "/bin/bash", NULL};
            assert_int_equal(shexec_session_set_shell(f->s, argv, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
            assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
            shexec_run_free(run(f->s, "export DB_PASSWORD=s3cret-exported; SHELL_ONLY=s3cret-var; "
                                      "fn() { echo s3cret-function; }"));
        }
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, f->s, argv_of_shell), SHEXEC_OK);
        assert_int_equal(shexec_run_setenv(r, "HOST_TOKEN", "s3cret-host"), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        if (strstr(out_of(r), "s3cret"))
            fail_msg("a secret on the command line (wrapped %d): %s", wrapped, out_of(r));
        shexec_run_free(r);
        /* and they are all there for the command */
        r = NULL;
        assert_int_equal(shexec_run_new(&r, f->s, "echo $DB_PASSWORD $SHELL_ONLY $HOST_TOKEN; fn"),
                         SHEXEC_OK);
        assert_int_equal(shexec_run_setenv(r, "HOST_TOKEN", "s3cret-host"), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        if (functions_kept())
            assert_string_equal(out_of(r), "s3cret-exported s3cret-var s3cret-host\ns3cret-function\n");
        else
            assert_string_equal(out_of(r), "s3cret-exported s3cret-var s3cret-host\n");
        shexec_run_free(r);
    }
}

/* Item: one function bash cannot define again as it starts (it needs
 * extglob) is dropped by name; the others stay. */
static void test_one_function_does_not_wipe_the_others(void **state)
{
    fixture *f = *state;
    if (!tu_platform_has(SHX_PLATFORM_PERSIST, "persisted shell state"))
        skip();
    if (!functions_kept())
        skip();
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    shexec_run *r = run(f->s, "shopt -s extglob\n"
                              "pick() { case $1 in @(a|b)) echo ab;; *) echo other;; esac; }\n"
                              "one() { echo one; }; two() { [[ x == @(x|y) ]] && echo two; }");
    assert_non_null(strstr(shexec_run_notice(r), "pick (it needs `shopt -s extglob`"));
    shexec_run_free(r);
    r = run(f->s, "one; two; command -v pick || echo no-pick");
    assert_string_equal(out_of(r), "one\ntwo\nno-pick\n");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "");
    shexec_run_free(r);
}

/* Item: a host that closes every descriptor it did not open (closefrom)
 * and opens its own at their numbers keeps its files intact, and its
 * commands keep running: the watchdog, whose channel the host closed while
 * alive, waits for the host's end instead of acting on the channel's, and
 * the library starts a new one. In a forked child: it closes descriptors. */
static void closefrom_case(const char *dir)
{
    shexec_session *s = NULL;
    if (shexec_session_new(&s) != SHEXEC_OK || shexec_session_set_watchdog(s, 1) != SHEXEC_OK)
        _exit(10);
    shexec_run *r = NULL;
    if (shexec_run_new(&r, s, "true") || shexec_run_exec(r))
        _exit(11);
    shexec_run_free(r);
    int64_t old_wd = shx_test_watchdog_pid(s);
    if (old_wd <= 0)
        _exit(12);
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    char path[PATH_MAX + 32];
    int mine[8];
    for (int i = 0; i < 8; i++) {
        snprintf(path, sizeof path, "%s/host%d", dir, i);
        mine[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (mine[i] < 0 || write(mine[i], "host data\n", 10) != 10)
            _exit(13);
    }
    shexec_task *t = NULL;
    if (shexec_run_new(&r, s, "sleep 30") || shexec_run_start_task(&t, r))
        _exit(14);
    r = NULL;
    if (shexec_run_new(&r, s, "echo ok") || shexec_run_exec(r) ||
        strcmp(shexec_run_output(r, SHEXEC_STDOUT, NULL), "ok\n") != 0)
        _exit(15);
    shexec_run_free(r);
    usleep(300 * 1000);
    shexec_session_wait(s, 0);
    if (shexec_run_state(shexec_task_run(t)) > SHEXEC_STATE_RUNNING)
        _exit(16); /* killed while the host lives */
    if (kill((pid_t)old_wd, 0) == 0 && waitpid((pid_t)old_wd, NULL, WNOHANG) == 0)
        _exit(17); /* the old watchdog is still ours to reap */
    if (shx_test_watchdog_pid(s) <= 0 || shx_test_watchdog_pid(s) == old_wd)
        _exit(18);
    for (int i = 0; i < 8; i++) {
        char buf[32];
        ssize_t n = pread(mine[i], buf, sizeof buf, 0);
        if (n != 10 || memcmp(buf, "host data\n", 10) != 0)
            _exit(19);
    }
    shexec_task_free(t);
    shexec_session_free(s);
    _exit(0);
}

static void test_host_closes_our_descriptors(void **state)
{
    fixture *f = *state;
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "the watchdog's /proc proof") ||
        !tu_platform_has(SHX_PLATFORM_WATCHDOG, "the watchdog"))
        skip();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        closefrom_case(f->dir);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("the case failed: status %d", st);
}

/* Item: `chdir` is dash's `cd`: a command using it is listed. */
static void test_dash_chdir_is_listed(void **state)
{
    fixture *f = *state;
    if (!tu_platform_has(SHX_PLATFORM_PERSIST, "persisted shell state"))
        skip();
    use_shell(f->s, "/bin/sh");
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    shexec_run_free(run(f->s, "export A=1"));
    shexec_run *r = run(f->s, "chdir /tmp");
    assert_int_equal(shx_test_run_listed(r), 1);
    shexec_run_free(r);
    assert_string_equal(shexec_session_getenv(f->s, "OLDPWD"), f->dir);
}

/* Item: the grace is every process's. A program that handles SIGTERM (the
 * usual shape: node or python under the shell, not a shell trap) gets its
 * grace: its cleanup output is captured and it is not SIGKILLed when its
 * shell dies of the SIGTERM; the run ends when it is done. */
static void test_grace_for_programs_that_handle_term(void **state)
{
    fixture *f = *state;
    if (access("/usr/bin/python3", X_OK) != 0)
        skip();
    const char *cmd = "/usr/bin/python3 -c 'import signal, sys, time\n"
                      "def h(*a):\n"
                      "    time.sleep(0.5); print(\"cleaned\", flush=True); sys.exit(0)\n"
                      "signal.signal(signal.SIGTERM, h)\n"
                      "print(\"ready\", flush=True); time.sleep(30)'";
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, f->s, cmd), SHEXEC_OK);
        assert_int_equal(shexec_run_set_timeout_ms(r, 1500), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
        assert_string_equal(out_of(r), "ready\ncleaned\n");
        shexec_run_free(r);
        /* one that ignores SIGTERM still ends at the grace's end */
        assert_int_equal(shexec_session_set_kill_grace_ms(f->s, 300), SHEXEC_OK);
        r = NULL;
        assert_int_equal(shexec_run_new(&r, f->s,
                                        "/usr/bin/python3 -c 'import signal, time\n"
                                        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                        "print(\"ready\", flush=True); time.sleep(30)'; echo never"),
                         SHEXEC_OK);
        assert_int_equal(shexec_run_set_timeout_ms(r, 1500), SHEXEC_OK);
        int64_t t0 = tu_now_ms();
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        assert_true(tu_now_ms() - t0 < 10000);
        assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
        assert_string_equal(out_of(r), "ready\n");
        shexec_run_free(r);
        assert_int_equal(shexec_session_set_kill_grace_ms(f->s, SHEXEC_DEFAULT_KILL_GRACE_MS),
                         SHEXEC_OK);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_state_read_only_when_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged_listing_runs_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_builtin_named_functions_not_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_on_the_command_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_function_does_not_wipe_the_others, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_closes_our_descriptors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dash_chdir_is_listed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grace_for_programs_that_handle_term, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
