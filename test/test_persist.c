/*
 * test_persist.c - a session that keeps the shell's state
 * (shexec_session_set_persist_env): exports and unsets carry to the next
 * command, a real virtual environment is activated in one command, used in
 * the next and deactivated in a third; any value round-trips exactly; the
 * deny list, the wrapper's own names and the shell's own variables never
 * persist; the replay leaves no trace under `set -x` and keeps the
 * command's line numbers; timed-out runs, tasks and oversized states change
 * nothing; off, nothing persists. Also the parser of the shells' listings
 * (shstate.c) on its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shexec.h"
#include "shell/shstate.h"
#include "testhook.h"
#include "testutil.h"

static const char *const g_shells[] = {"/bin/bash", "/bin/sh"};

/* Kept functions reach bash through its environment; where posix_spawn
 * cannot change directory, a /bin/sh trampoline starts the shell, and dash
 * drops entries that are not shell names (BASH_FUNC_f%%): functions are
 * then dropped, with a notice (the README says so). */
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

/* Run cmd to its end; its stdout (and stderr, notice) into the buffers. */
static int run_full(shexec_session *s, const char *cmd, char *out, size_t outsz, char *err,
                    size_t errsz, char *notice, size_t nsz)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    size_t n;
    const char *o = shexec_run_output(r, SHEXEC_STDOUT, &n);
    if (out)
        snprintf(out, outsz, "%.*s", (int)n, o);
    o = shexec_run_output(r, SHEXEC_STDERR, &n);
    if (err)
        snprintf(err, errsz, "%.*s", (int)n, o);
    if (notice)
        snprintf(notice, nsz, "%s", shexec_run_notice(r));
    int code = shexec_run_exit_code(r);
    shexec_run_free(r);
    return code;
}

static const char *out_of(shexec_session *s, const char *cmd)
{
    static char out[8192];
    char err[4096];
    run_full(s, cmd, out, sizeof out, err, sizeof err, NULL, 0);
    return out;
}

static void test_export_and_unset_persist(void **state)
{
    fixture *f = *state;
    for (size_t i = 0; i < 2; i++) {
        use_shell(f->s, g_shells[i]);
        assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
        assert_int_equal(shexec_session_persist_env(f->s), 1);
        assert_string_equal(out_of(f->s, "export A=1"), "");
        assert_string_equal(out_of(f->s, "echo $A"), "1\n");
        assert_string_equal(shexec_session_getenv(f->s, "A"), "1");
        assert_string_equal(out_of(f->s, "unset A"), "");
        assert_string_equal(out_of(f->s, "echo ${A-unset}"), "unset\n");
        assert_null(shexec_session_getenv(f->s, "A"));
        assert_int_equal(shexec_session_set_persist_env(f->s, 0), SHEXEC_OK);
    }
}

/* Most commands change nothing, and the same listing is not taken twice;
 * a change after a run of identical listings is taken, and so is a deny
 * rule the host adds between them (a shell variable kept for replay is
 * dropped at the next command, though its listing did not change), and so
 * is a change to bash's functions alone. */
static void test_repeated_listings(void **state)
{
    fixture *f = *state;
    for (size_t i = 0; i < 2; i++) {
        use_shell(f->s, g_shells[i]);
        assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
        assert_string_equal(out_of(f->s, "export A=1; MYVAR=kept"), "");
        for (int k = 0; k < 3; k++)
            assert_string_equal(out_of(f->s, "true"), "");
        assert_string_equal(out_of(f->s, "echo $A"), "1\n");
        assert_string_equal(out_of(f->s, "export A=2"), "");
        assert_string_equal(out_of(f->s, "echo $A"), "2\n");
        if (i == 0 && functions_kept()) { /* bash keeps shell variables and functions */
            assert_string_equal(out_of(f->s, "echo ${MYVAR-gone}"), "kept\n");
            assert_int_equal(shexec_session_env_deny(f->s, "MYVAR"), SHEXEC_OK);
            assert_string_equal(out_of(f->s, "true"), "");
            assert_string_equal(out_of(f->s, "echo ${MYVAR-gone}"), "gone\n");
            /* the functions are part of what is compared: one changed to a
             * body of the same length, the variables as they were */
            assert_string_equal(out_of(f->s, "greet() { echo one; }"), "");
            for (int k = 0; k < 2; k++)
                assert_string_equal(out_of(f->s, "true"), "");
            assert_string_equal(out_of(f->s, "greet() { echo two; }"), "");
            assert_string_equal(out_of(f->s, "greet"), "two\n");
        }
        assert_int_equal(shexec_session_set_persist_env(f->s, 0), SHEXEC_OK);
    }
}

/* The session learns from the first listing how its shell lists; another
 * shell is asked afresh (bash lists with declare, dash with export). */
static void test_shell_changed_between_runs(void **state)
{
    fixture *f = *state;
    use_shell(f->s, "/bin/bash");
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    assert_string_equal(out_of(f->s, "export A=1"), "");
    assert_string_equal(out_of(f->s, "echo $A"), "1\n");
    use_shell(f->s, "/bin/sh");
    assert_string_equal(out_of(f->s, "export B=2"), "");
    assert_string_equal(out_of(f->s, "echo $A $B"), "1 2\n");
    use_shell(f->s, "/bin/bash");
    assert_string_equal(out_of(f->s, "export C=3"), "");
    assert_string_equal(out_of(f->s, "echo $A $B $C"), "1 2 3\n");
}

static void test_off_nothing_persists(void **state)
{
    fixture *f = *state;
    for (size_t i = 0; i < 2; i++) {
        use_shell(f->s, g_shells[i]);
        assert_int_equal(shexec_session_persist_env(f->s), 0);
        out_of(f->s, "export OFF_A=1; OFF_B=2; offf() { :; }");
        assert_string_equal(out_of(f->s, "echo ${OFF_A-unset} ${OFF_B-unset}; command -v offf || echo nofunc"),
                            "unset unset\nnofunc\n");
        assert_null(shexec_session_getenv(f->s, "OFF_A"));
    }
    /* turning it off forgets what was kept */
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    out_of(f->s, "export GONE=1");
    assert_string_equal(shexec_session_getenv(f->s, "GONE"), "1");
    assert_int_equal(shexec_session_set_persist_env(f->s, 0), SHEXEC_OK);
    assert_string_equal(out_of(f->s, "echo ${GONE-unset}"), "unset\n");
}

/* python3 -m venv, for real: activate, use, deactivate across three runs */
static void test_virtualenv_across_commands(void **state)
{
    fixture *f = *state;
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    char out[8192], err[8192];
    int code = run_full(f->s, "python3 -m venv --without-pip .venv", out, sizeof out, err,
                        sizeof err, NULL, 0);
    if (code != 0)
        fail_msg("python3 -m venv failed (is python3-venv installed?): %s", err);
    char path_before[8192];
    snprintf(path_before, sizeof path_before, "%s", out_of(f->s, "printf '%s' \"$PATH\""));
    assert_int_equal(run_full(f->s, "source .venv/bin/activate", out, sizeof out, err, sizeof err,
                              NULL, 0), 0);
    assert_string_equal(err, "");
    char want[PATH_MAX + 8];
    snprintf(want, sizeof want, "%s/.venv\n", f->dir);
    /* the venv's directory may be reached through a symlink (/tmp): compare real paths */
    char real_dir[PATH_MAX];
    assert_non_null(realpath(f->dir, real_dir));
    snprintf(out, sizeof out, "%s", out_of(f->s, "python3 -c 'import sys; print(sys.prefix)'"));
    char want_real[PATH_MAX + 8];
    snprintf(want_real, sizeof want_real, "%s/.venv\n", real_dir);
    if (strcmp(out, want) != 0)
        assert_string_equal(out, want_real);
    assert_non_null(shexec_session_getenv(f->s, "VIRTUAL_ENV"));
    if (!functions_kept())
        return; /* deactivate is a function */
    assert_int_equal(run_full(f->s, "deactivate", out, sizeof out, err, sizeof err, NULL, 0), 0);
    assert_string_equal(err, "");
    assert_string_equal(out_of(f->s, "printf '%s' \"$PATH\""), path_before);
    assert_string_equal(out_of(f->s, "echo ${VIRTUAL_ENV-none}; declare -F deactivate || echo gone"),
                        "none\ngone\n");
}

/* Values a shell has to quote come back byte for byte, from bash and dash. */
static void test_values_round_trip(void **state)
{
    fixture *f = *state;
    static const char *const values[] = {"a\nb\n", "x=y=z", "\xff\xfe\x80 ok", "", "it's \"q\" $HOME `x` \\ \t end",
                                         "\n", "=", "\xc3\xa9t\xc3\xa9"};
    for (size_t i = 0; i < 2; i++) {
        use_shell(f->s, g_shells[i]);
        assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
        for (size_t k = 0; k < sizeof values / sizeof *values; k++) {
            /* the value reaches the command through a run variable, which the command exports
             * under another name (the run's own variables are the run's) */
            shexec_run *r = NULL;
            assert_int_equal(shexec_run_new(&r, f->s, "export RT=\"$RT_IN\""), SHEXEC_OK);
            assert_int_equal(shexec_run_setenv(r, "RT_IN", values[k]), SHEXEC_OK);
            assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
            assert_string_equal(shexec_run_notice(r), "");
            shexec_run_free(r);
            const char *got = shexec_session_getenv(f->s, "RT");
            assert_non_null(got);
            assert_string_equal(got, values[k]);
            assert_null(shexec_session_getenv(f->s, "RT_IN"));
            char out[256];
            run_full(f->s, "printf '%s' \"$RT\"", out, sizeof out, NULL, 0, NULL, 0);
            assert_string_equal(out, values[k]);
        }
        assert_int_equal(shexec_session_set_persist_env(f->s, 0), SHEXEC_OK);
    }
}

static void test_denied_names_do_not_persist(void **state)
{
    fixture *f = *state;
    for (size_t i = 0; i < 2; i++) {
        use_shell(f->s, g_shells[i]);
        assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
        assert_int_equal(shexec_session_env_deny(f->s, "MY_SECRET"), SHEXEC_OK);
        out_of(f->s, "export LD_PRELOAD=/x.so BASH_ENV=/tmp/evil MY_SECRET=1 KEPT=1");
        assert_string_equal(out_of(f->s, "echo ${LD_PRELOAD-none} ${BASH_ENV-none} ${MY_SECRET-none} $KEPT"),
                            "none none none 1\n");
        assert_null(shexec_session_getenv(f->s, "LD_PRELOAD"));
        assert_null(shexec_session_getenv(f->s, "BASH_ENV"));
        assert_int_equal(shexec_session_set_persist_env(f->s, 0), SHEXEC_OK);
    }
}

/* The wrapper's names, PWD, SHLVL and bash's own variables follow their rules. */
static void test_special_variables(void **state)
{
    fixture *f = *state;
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    char shlvl[8192];
    snprintf(shlvl, sizeof shlvl, "%s", out_of(f->s, "echo $SHLVL"));
    for (int k = 0; k < 3; k++)
        out_of(f->s, "export SHLVL=40 __shexec_x=1; __shexec_y=2; IFS=:; PS4='>> '; RANDOM=4; "
                     "readonly RO=1");
    assert_string_equal(out_of(f->s, "echo $SHLVL"), shlvl);
    assert_string_equal(out_of(f->s, "echo ${__shexec_x-no} ${__shexec_y-no} ${RO-no}; "
                                     "[ \"$IFS\" = $' \\t\\n' ] && echo ifs; echo \"$PS4\""),
                        "no no no\nifs\n+ \n");
    const char *const *env = NULL;
    assert_int_equal(shexec_session_environ(&env, f->s), SHEXEC_OK);
    for (size_t i = 0; env[i]; i++) {
        assert_true(strncmp(env[i], "__shexec_", 9) != 0);
        assert_true(strncmp(env[i], "PWD=", 4) != 0);
    }
    /* a cd moves the session and PWD with it; OLDPWD is kept, so `cd -` works */
    out_of(f->s, "mkdir -p sub && cd sub");
    char want[2 * PATH_MAX + 16];
    snprintf(want, sizeof want, "%s/sub\n%s\n", f->dir, f->dir);
    assert_string_equal(out_of(f->s, "echo \"$PWD\"; cd - >/dev/null; pwd"), want);
}

/* The prelude, replayed state and all, leaves no trace in $_ and
 * PIPESTATUS at the command's first line: $_ is what bash started with (the
 * environment's _ here, as the host's shell exported it), never the last
 * word of the previous command nor of the prelude, and PIPESTATUS is unset,
 * as in `bash -c`; the command's own pipelines set it as ever. */
static void test_first_line_state(void **state)
{
    fixture *f = *state;
    use_shell(f->s, "/bin/bash");
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    assert_int_equal(shexec_session_setenv(f->s, "_", "/usr/bin/agent-host"), SHEXEC_OK);
    const char *probe = "echo \"[${PIPESTATUS[@]-unset}] $_ $?\"; false | true; "
                        "echo \"${PIPESTATUS[@]}\"";
    for (int k = 0; k < 3; k++) {
        assert_string_equal(out_of(f->s, probe), "[unset] /usr/bin/agent-host 0\n1 0\n");
        out_of(f->s, "export KEPT=1; f() { :; }; true last words; false | true");
    }
    /* kept state and functions were replayed before it: still no trace */
    assert_string_equal(out_of(f->s, "echo \"$KEPT $(declare -F | wc -l)\""),
                        functions_kept() ? "1 1\n" : "1 0\n");
    assert_string_equal(out_of(f->s, probe), "[unset] /usr/bin/agent-host 0\n1 0\n");
    assert_string_equal(out_of(f->s, "declare -p __shexec_u 2>/dev/null; declare -F __shexec_r; "
                                     "echo end"),
                        "end\n");
    /* an _ that names a set variable: given back all the same, the variable
     * untouched */
    assert_int_equal(shexec_session_setenv(f->s, "_", "KEPT"), SHEXEC_OK);
    assert_string_equal(out_of(f->s, "echo \"$_ $KEPT\""), "KEPT 1\n");
}

/* bash: shell variables and functions persist; the replay is silent and
 * leaves the command's line numbers as they were */
static void test_bash_variables_and_functions(void **state)
{
    fixture *f = *state;
    use_shell(f->s, "/bin/bash");
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    out_of(f->s, "SV=$'two\\nlines'; declare -a ARR=(x 'y z'); declare -i N=41; "
                 "greet() { echo \"hi $1\"; }");
    assert_string_equal(out_of(f->s, "echo \"$SV\"; echo \"${ARR[1]}\"; N+=1; echo $N; "
                                     "greet you 2>/dev/null || echo no greet"),
                        functions_kept() ? "two\nlines\ny z\n42\nhi you\n"
                                         : "two\nlines\ny z\n42\nno greet\n");
    /* non-exported: the environment does not have it */
    assert_null(shexec_session_getenv(f->s, "SV"));
    char out[4096], err[4096];
    run_full(f->s, "set -x; echo $SV", out, sizeof out, err, sizeof err, NULL, 0);
    assert_string_equal(err, "+ echo two lines\n");
    run_full(f->s, "nosuchcommand_x\necho two; nosuchcommand_y", out, sizeof out, err, sizeof err,
             NULL, 0);
    assert_non_null(strstr(err, "line 1: nosuchcommand_x"));
    assert_non_null(strstr(err, "line 2: nosuchcommand_y"));
    /* unset and unset -f are honoured */
    out_of(f->s, "unset SV; unset -f greet");
    assert_string_equal(out_of(f->s, "echo ${SV-unset}; type greet >/dev/null 2>&1 || echo nofunc"),
                        "unset\nnofunc\n");
    /* another shell program: variables and functions go, the environment stays */
    out_of(f->s, "export KEEP=1; LOCAL=1");
    use_shell(f->s, "/bin/bash");
    assert_string_equal(out_of(f->s, "echo $KEEP ${LOCAL-gone}"), "1 gone\n");
}

/* Whether the command's shell listed its state; its output into out. */
static int listed_after(shexec_session *s, const char *cmd, char *out, size_t outsz)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    size_t n;
    const char *o = shexec_run_output(r, SHEXEC_STDOUT, &n);
    snprintf(out, outsz, "%.*s", (int)n, o);
    int listed = shx_test_run_listed(r);
    shexec_run_free(r);
    return listed;
}

/* With persist_env on, the shell lists its state after every foreground
 * command that could change it, and a change persists however it is
 * spelled; one that can change nothing runs bare (lib/run/bare.h) while
 * no kept variable or function must be given to bash in its prelude, and
 * after that with a quiet prelude that gives them and lists nothing,
 * unless its text names a kept function (which could change anything) */
static void test_every_command_listed(void **state)
{
    fixture *f = *state;
    char out[4096];
    use_shell(f->s, "/bin/bash");
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    assert_int_equal(listed_after(f->s, "true", out, sizeof out), 0);
    assert_int_equal(listed_after(f->s, "export K=1", out, sizeof out), 1);
    assert_int_equal(listed_after(f->s, "true", out, sizeof out), 0);
    assert_string_equal(out_of(f->s, "echo $K"), "1\n");
    assert_int_equal(listed_after(f->s, "export A=1; SV=2; g() { export B=$1; }", out,
                                  sizeof out), 1);
    assert_int_equal(listed_after(f->s, "ls -a >/dev/null && echo 'ok x=1' \"y\"", out,
                                  sizeof out), 0);
    assert_string_equal(out, "ok x=1 y\n");
    /* a quiet prelude gives the kept shell variables (TIMEFORMAT, read by
     * `time`) and keeps the kept functions from the command's children */
    assert_int_equal(listed_after(f->s, "TIMEFORMAT=kept-format", out, sizeof out), 1);
    shexec_run *q = NULL;
    assert_int_equal(shexec_run_new(&q, f->s, "time true"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(q), SHEXEC_OK);
    assert_int_equal(shx_test_run_listed(q), 0);
    size_t qn;
    const char *qe = shexec_run_output(q, SHEXEC_STDERR, &qn);
    assert_string_equal(qe, "kept-format\n");
    shexec_run_free(q);
    assert_int_equal(listed_after(f->s, "env | cut -d'=' -f1 | awk '/^BASH_FUNC/'", out,
                                  sizeof out), 0);
    assert_string_equal(out, "");
    /* nor does the command see the prelude's descriptor, or a channel */
    assert_int_equal(listed_after(f->s, "ls /proc/self/fd", out, sizeof out), 0);
    assert_null(strstr(out, "172"));
    assert_null(strstr(out, "173"));
    assert_non_null(strstr(out, "2\n"));
    assert_int_equal(listed_after(f->s, "echo \"$A $SV\"", out, sizeof out), 1);
    assert_string_equal(out, "1 2\n");
    if (functions_kept()) {
        /* stateless as text, but it names a kept function */
        assert_int_equal(listed_after(f->s, "g 3", out, sizeof out), 1);
        assert_string_equal(out_of(f->s, "echo $B"), "3\n");
    }
    /* the kept state changed by the host: the next command lists */
    assert_int_equal(shexec_session_setenv(f->s, "HOSTSET", "1"), SHEXEC_OK);
    assert_int_equal(listed_after(f->s, "true", out, sizeof out), 1);
    assert_int_equal(listed_after(f->s, "true", out, sizeof out), 0);
    static const struct {
        const char *cmd, *check, *want;
    } spelled[] = {
        {"x=0", "echo $x", "0\n"},
        {"[[ x++ -eq 0 ]]", "echo $x", "1\n"},
        {"declare -a a=(1); [ -v 'a[x++]' ]", "echo $x", "2\n"},
        {"true {fd}>/dev/null", "echo ${fd:+set}", "set\n"},
        {"test -v 'a[y=7]'", "echo $y", "7\n"},
        {"\"[\" -v 'a[y=8]' ]", "echo $y", "8\n"},
        {"ex\"port\" C=3", "echo $C", "3\n"},
        {"e''val D=4", "echo $D", "4\n"},
        {"E\\\n=5", "echo $E", "5\n"},
        {"F+=6", "echo $F", "6\n"},
        {"touch export && expor? G=7", "echo $G", "7\n"},
        {"true # ' \n. ./vars.sh", "echo $H", "8\n"},
    };
    FILE *fp = fopen(strcat(strcpy(out, f->dir), "/vars.sh"), "w");
    assert_non_null(fp);
    fputs("H=8\n", fp);
    fclose(fp);
    for (size_t i = 0; i < sizeof spelled / sizeof *spelled; i++) {
        assert_int_equal(listed_after(f->s, spelled[i].cmd, out, sizeof out), 1);
        assert_string_equal(out_of(f->s, spelled[i].check), spelled[i].want);
    }
    /* a run with variables of its own lists, and they are reverted after it */
    assert_int_equal(shexec_session_setenv(f->s, "HOSTVAR", "h"), SHEXEC_OK);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, f->s, "true"), SHEXEC_OK);
    assert_int_equal(shexec_run_setenv(r, "A", "9"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shx_test_run_listed(r), 1);
    shexec_run_free(r);
    assert_string_equal(out_of(f->s, "echo $A $HOSTVAR"), "1 h\n");
    /* a POSIX shell's state is its exported variables, given in its
     * environment: a command that can change none runs bare */
    use_shell(f->s, "/bin/sh");
    assert_int_equal(listed_after(f->s, "export A=5", out, sizeof out), 1);
    assert_int_equal(listed_after(f->s, "true", out, sizeof out), 0);
    assert_int_equal(listed_after(f->s, "e\"xport\" A=6", out, sizeof out), 1);
    assert_int_equal(listed_after(f->s, "echo $A", out, sizeof out), 1);
    assert_string_equal(out, "6\n");
}

/* Whether the bash of a run of cmd (a task where task is set) was started
 * with a prelude to read: BASH_ENV in the environment it started with,
 * read from /proc while cmd keeps it alive: cmd begins with `cat gate`, a
 * FIFO in the session's directory that is opened and closed here once the
 * environment is read (a command that is not bash's last, which it would
 * exec). Its standard output in out. */
static int started_with_prelude(shexec_session *s, const char *cmd, int task, char *out,
                                size_t outsz)
{
    char gate[PATH_MAX];
    snprintf(gate, sizeof gate, "%s/gate", shexec_session_cwd(s));
    assert_int_equal(mkfifo(gate, 0600), 0);
    shexec_run *r = NULL;
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    if (task)
        assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    else
        assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    shexec_run *run = task ? shexec_task_run(t) : r;
    char path[64], env[65536];
    size_t n = 0;
    /* the kernel names the process bash before it sets its environment's
     * place (exec): read until there is one */
    snprintf(path, sizeof path, "/proc/%lld/environ", (long long)shexec_run_pid(run));
    for (int64_t t0 = tu_now_ms(); n == 0 && tu_now_ms() - t0 < 5000;) {
        FILE *fp = fopen(path, "r");
        assert_non_null(fp);
        n = fread(env, 1, sizeof env, fp);
        fclose(fp);
    }
    assert_true(n > 0 && n < sizeof env);
    /* let cat end: open the gate once it reads (ENXIO until then) */
    int fd = -1;
    for (int64_t t0 = tu_now_ms(); fd < 0 && tu_now_ms() - t0 < 10000; usleep(1000))
        fd = open(gate, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    assert_true(fd >= 0);
    close(fd);
    unlink(gate);
    int given = 0;
    for (size_t i = 0; i < n; i += strlen(env + i) + 1)
        given |= strncmp(env + i, "BASH_ENV=", 9) == 0;
    while (shexec_run_state(run) <= SHEXEC_STATE_RUNNING)
        assert_true(shexec_session_wait(s, 10000) >= 0);
    const char *o = shexec_run_output(run, SHEXEC_STDOUT, &n);
    snprintf(out, outsz, "%.*s", (int)n, o);
    assert_int_equal(shexec_run_exit_code(run), 0);
    if (task)
        shexec_task_free(t);
    else
        shexec_run_free(r);
    return given;
}

/* Kept state that a command cannot read is not given to it: where bash
 * keeps only variables with a lower-case letter in their names (none of
 * bash's own but three), a stateless command runs bare, with no prelude;
 * a variable bash may read itself, a kept function, or a text that reads
 * state gets the quiet prelude, foreground or task */
static void test_unread_state_not_given(void **state)
{
    fixture *f = *state;
    char out[4096];
    use_shell(f->s, "/bin/bash");
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    assert_int_equal(listed_after(f->s, "x=1; myVar=2; declare -a arr=(3)", out, sizeof out), 1);
    for (int task = 0; task < 2; task++) {
        assert_int_equal(started_with_prelude(f->s, "cat gate; echo ok", task, out, sizeof out),
                         0);
        assert_string_equal(out, "ok\n");
        /* a text that reads state is given it (a task's too) */
        assert_int_equal(started_with_prelude(f->s, "cat gate; echo $x $myVar ${arr[0]}", task,
                                              out, sizeof out), 1);
        assert_string_equal(out, "1 2 3\n");
    }
    assert_int_equal(listed_after(f->s, "true", out, sizeof out), 0);
    assert_string_equal(out_of(f->s, "echo $x $myVar"), "1 2\n");
    /* bash's own names, and a kept function: the quiet prelude */
    static const char *const read[] = {"TIMEFORMAT=%R", "histchars=x", "ignoreeof=1",
                                       "auto_resume=1", "X_Y=1"};
    for (size_t i = 0; i < sizeof read / sizeof *read; i++) {
        char unset[64];
        assert_int_equal(listed_after(f->s, read[i], out, sizeof out), 1);
        assert_int_equal(started_with_prelude(f->s, "cat gate; echo ok", 0, out, sizeof out),
                         1);
        assert_string_equal(out, "ok\n");
        snprintf(unset, sizeof unset, "unset %.*s", (int)(strchr(read[i], '=') - read[i]),
                 read[i]);
        assert_int_equal(listed_after(f->s, unset, out, sizeof out), 1);
        assert_int_equal(started_with_prelude(f->s, "cat gate; echo ok", 0, out, sizeof out),
                         0);
    }
    if (functions_kept()) {
        assert_int_equal(listed_after(f->s, "f() { echo \"f $x\"; }", out, sizeof out), 1);
        assert_int_equal(started_with_prelude(f->s, "cat gate; echo ok", 1, out, sizeof out),
                         1);
        assert_int_equal(started_with_prelude(f->s, "cat gate; f", 0, out, sizeof out), 1);
        assert_string_equal(out, "f 1\n");
    }
}

/* timed out, cancelled, a task: nothing changes */
static void test_unfinished_runs_change_nothing(void **state)
{
    fixture *f = *state;
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    assert_int_equal(shexec_session_set_kill_grace_ms(f->s, 100), SHEXEC_OK);
    out_of(f->s, "export BASE=1");
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, f->s, "export BASE=2 T=1; sleep 30"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 300), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    /* bash runs the EXIT trap inside the command's group: its report stays quiet */
    assert_null(strstr(shexec_run_output(r, SHEXEC_STDERR, NULL), "Bad file descriptor"));
    shexec_run_free(r);
    assert_string_equal(out_of(f->s, "echo $BASE ${T-unset}"), "1 unset\n");
    /* a task starts with the session's state, and its end changes nothing */
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_new(&r, f->s, "echo $BASE; export BASE=3 TK=1"), SHEXEC_OK);
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING)
        assert_true(shexec_session_wait(f->s, 10000) >= 0);
    size_t n;
    assert_string_equal(shexec_run_output(shexec_task_run(t), SHEXEC_STDOUT, &n), "1\n");
    shexec_task_free(t);
    assert_string_equal(out_of(f->s, "echo $BASE ${TK-unset}"), "1 unset\n");
}

/* a run's own variables are the run's; what the command exports is kept */
static void test_run_variables(void **state)
{
    fixture *f = *state;
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    out_of(f->s, "export S=session");
    static const char *const cmds[] = {"true", "export MINE=mine S=changed"};
    for (size_t i = 0; i < 2; i++) {
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, f->s, cmds[i]), SHEXEC_OK);
        assert_int_equal(shexec_run_setenv(r, "S", "run"), SHEXEC_OK);
        assert_int_equal(shexec_run_setenv(r, "MINE", "run"), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        shexec_run_free(r);
    }
    assert_string_equal(out_of(f->s, "echo $S $MINE"), "changed mine\n");
    /* the host's setenv changes the kept environment */
    assert_int_equal(shexec_session_setenv(f->s, "S", "host"), SHEXEC_OK);
    assert_int_equal(shexec_session_setenv(f->s, "MINE", NULL), SHEXEC_OK);
    assert_string_equal(out_of(f->s, "echo $S ${MINE-unset}"), "host unset\n");
}

/* a state above SHEXEC_MAX_PERSIST_BYTES is not taken, and the run says so */
static void test_oversized_state_not_adopted(void **state)
{
    fixture *f = *state;
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    out_of(f->s, "export SMALL=1");
    char notice[1024];
    run_full(f->s, "export SMALL=2; BIG=$(head -c 1100000 /dev/zero | tr '\\0' x)", NULL, 0,
             NULL, 0, notice, sizeof notice);
    assert_non_null(strstr(notice, "SHEXEC_MAX_PERSIST_BYTES"));
    assert_string_equal(out_of(f->s, "echo $SMALL ${#BIG}"), "1 0\n");
}

/* a remote wrapper cannot report the state: refused either way round */
static void test_remote_wrapper_refused(void **state)
{
    fixture *f = *state;
    /* the program stays (the session's own argv passed back), the kind changes */
    const char *const *argv = shexec_session_shell_argv(f->s);
    assert_int_equal(shexec_session_set_shell(f->s, argv, SHEXEC_WRAPPER_REMOTE), SHEXEC_OK);
    argv = shexec_session_shell_argv(f->s);
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_ESTATE);
    assert_int_equal(shexec_session_persist_env(f->s), 0);
    assert_int_equal(shexec_session_set_shell(f->s, argv, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
    argv = shexec_session_shell_argv(f->s);
    assert_int_equal(shexec_session_set_shell(f->s, argv, SHEXEC_WRAPPER_REMOTE_SHELL),
                     SHEXEC_ESTATE);
    assert_int_equal(shexec_session_wrapper_kind(f->s), SHEXEC_WRAPPER_LOCAL);
    assert_true(shexec_session_shell_argv(f->s) == argv); /* unchanged: not even copied */
    assert_int_equal(shexec_session_set_persist_env(NULL, 1), SHEXEC_EINVAL);
    assert_null(shexec_session_getenv(f->s, "A=B"));
    assert_null(shexec_session_getenv(f->s, NULL));
    assert_null(shexec_session_getenv(NULL, "A"));
    const char *const *env = (const char *const *)1;
    assert_int_equal(shexec_session_environ(&env, NULL), SHEXEC_EINVAL);
    assert_null(env);
}

/* ---- the parser, on its own ---------------------------------------------- */

typedef struct collected {
    char names[16][64];
    char values[16][64];
    int exported[16], readonly[16], array[16], has_value[16];
    int n;
} collected;

static int collect(void *user, const shx_decl *d)
{
    collected *c = user;
    if (c->n >= 16)
        return 1;
    snprintf(c->names[c->n], 64, "%.*s", (int)d->name_len, d->name);
    snprintf(c->values[c->n], 64, "%.*s", (int)d->value_len, d->value ? d->value : "");
    c->exported[c->n] = d->exported;
    c->readonly[c->n] = d->readonly;
    c->array[c->n] = d->array;
    c->has_value[c->n] = d->has_value;
    c->n++;
    return 0;
}

static void test_parser_bash_and_dash(void **state)
{
    (void)state;
    static const char bash[] = "declare -x A=$'a\\nb'\n"
                               "declare -x B=\"x\\\"y\\$z\\`\\\\w\"\n"
                               "declare -x C=$'\\377\\376'\n"
                               "declare -x D=\"\"\n"
                               "declare -x OLDPWD\n"
                               "declare -ar V=([0]=\"5\" [1]=$'a\\nb')\n"
                               "declare -ir EUID=\"0\"\n"
                               "declare -- E=\"two\nlines\"\n";
    collected c = {0};
    shx_buf scratch = SHX_BUF_INIT;
    assert_int_equal(shx_decl_each(bash, sizeof bash - 1, &scratch, collect, &c, NULL), 0);
    assert_int_equal(c.n, 8);
    assert_string_equal(c.values[0], "a\nb");
    assert_string_equal(c.values[1], "x\"y$z`\\w");
    assert_string_equal(c.values[2], "\xff\xfe");
    assert_true(c.has_value[3] && c.values[3][0] == '\0');
    assert_true(c.exported[4] && !c.has_value[4]);
    assert_true(c.array[5] && c.readonly[5]);
    assert_true(c.readonly[6] && !c.exported[6]);
    assert_string_equal(c.values[7], "two\nlines");
    static const char dash[] = "export A='a\nb'\nexport E='it'\"'\"'s'\nexport U\n";
    memset(&c, 0, sizeof c);
    assert_int_equal(shx_decl_each(dash, sizeof dash - 1, &scratch, collect, &c, NULL), 0);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.values[0], "a\nb");
    assert_string_equal(c.values[1], "it's");
    assert_true(c.exported[2] && !c.has_value[2]);
    /* not a declaration: the whole listing is refused, and where says the line */
    static const char *const bad[] = {"echo hi\n", "declare -x A='open\n", "declare -x 1A=x\n",
                                      "declare -x A=$(id)\n", "declare -x A=x y\n",
                                      "declare -x A=$'\\0'\n", "export A=\"x\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t at = 99;
        memset(&c, 0, sizeof c);
        assert_int_equal(shx_decl_each(bad[i], strlen(bad[i]), &scratch, collect, &c, &at),
                         SHX_DECL_MALFORMED);
        assert_int_equal(at, 0);
    }
    shx_buf_free(&scratch);
}

/* what shx_ansi_c_quote writes, the parser reads back as it was, and bash too */
static void test_parser_quote_round_trip(void **state)
{
    (void)state;
    const char v[] = "a'b\\c\nd\"$e`\xff\t";
    shx_buf b = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&b, "declare -x V="), 0);
    assert_int_equal(shx_ansi_c_quote(&b, v, sizeof v - 1), 0);
    assert_null(memchr(b.data, '\n', b.len));
    collected c = {0};
    shx_buf scratch = SHX_BUF_INIT;
    assert_int_equal(shx_decl_each(b.data, b.len, &scratch, collect, &c, NULL), 0);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.values[0], v);
    shx_buf_free(&scratch);
    shx_buf_free(&b);
}

/* PERSIST=0: turning the setting on fails, clearly, and changes nothing;
 * an exported variable stays with its command. */
static void test_compiled_out(void **state)
{
    fixture *f = *state;
    assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_ESYS);
    assert_non_null(strstr(shexec_session_errmsg(f->s), "PERSIST=0"));
    assert_int_equal(shexec_session_persist_env(f->s), 0);
    assert_int_equal(shexec_session_set_persist_env(f->s, 0), SHEXEC_OK);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, f->s, "export KEPT=1; echo ok"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_exit_code(r), 0);
    shexec_run_free(r);
    assert_null(shexec_session_getenv(f->s, "KEPT"));
}

int main(void)
{
    if (!tu_platform_has(SHX_PLATFORM_PERSIST, "persisted shell state")) {
        const struct CMUnitTest compiled_out[] = {
            cmocka_unit_test_setup_teardown(test_compiled_out, setup, teardown),
            cmocka_unit_test(test_parser_bash_and_dash),
            cmocka_unit_test(test_parser_quote_round_trip),
        };
        return cmocka_run_group_tests(compiled_out, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_export_and_unset_persist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_off_nothing_persists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeated_listings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shell_changed_between_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_virtualenv_across_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_values_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_denied_names_do_not_persist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_special_variables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_line_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bash_variables_and_functions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unfinished_runs_change_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_variables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversized_state_not_adopted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remote_wrapper_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_command_listed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unread_state_not_given, setup, teardown),
        cmocka_unit_test(test_parser_bash_and_dash),
        cmocka_unit_test(test_parser_quote_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
