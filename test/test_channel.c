/*
 * test_channel.c - what the shell reports back (its working directory and
 * the command's status) travels on a channel of its own, never on the
 * command's output: stdout and stderr carry exactly what the command wrote
 * whatever it does with its descriptors, the wrapper leaves no trace under
 * `set -x`, the record cannot be forged by output, `exit N` still reports,
 * any directory the kernel can hold is reported without leaking, and
 * commands of any size up to the documented bound run. Each case runs
 * under bash and under a POSIX sh, with pipes and with a terminal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shell/script.h"
#include "shx/buf.h"
#include "shexec.h"
#include "testhook.h"
#include "testutil.h"

static const char *const g_shells[] = {"/bin/bash", "/bin/sh"};

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

static shexec_run *run_mode(shexec_session *s, const char *cmd, int pty)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    if (pty)
        assert_int_equal(shexec_run_set_pty(r, SHEXEC_PTY_ON), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    return r;
}

static shexec_run *run(shexec_session *s, const char *cmd)
{
    return run_mode(s, cmd, 0);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    shx_buf b = SHX_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
        shx_buf_append(&b, chunk, n);
    fclose(fp);
    return shx_buf_steal(&b, len);
}

/* `exec >file` and `exec 1>&-` take stdout away from the command's shell:
 * the record must not land in the user's file, and the cwd still moves. */
static void test_redirected_stdout_keeps_the_record_out(void **state)
{
    fixture *f = *state;
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        for (int pty = 0; pty < 2; pty++) {
            char sub[PATH_MAX + 32], cmd[3 * PATH_MAX + 128], file[PATH_MAX + 32];
            snprintf(sub, sizeof sub, "%s/d%d%d", f->dir, sh, pty);
            assert_int_equal(mkdir(sub, 0700), 0);
            snprintf(file, sizeof file, "%s/out%d%d.txt", f->dir, sh, pty);
            assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
            snprintf(cmd, sizeof cmd, "exec >'%s'; echo into-file; cd '%s'", file, sub);
            shexec_run *r = run_mode(f->s, cmd, pty);
            assert_int_equal(shexec_run_exit_code(r), 0);
            size_t len = 0;
            char *content = slurp(file, &len);
            assert_non_null(content);
            assert_int_equal(len, 10);
            assert_memory_equal(content, "into-file\n", 10);
            free(content);
            assert_string_equal(shexec_session_cwd(f->s), sub);
            shexec_run_free(r);

            assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
            snprintf(cmd, sizeof cmd, "exec 1>&-; cd '%s'", sub);
            r = run_mode(f->s, cmd, pty);
            assert_string_equal(shexec_session_cwd(f->s), sub);
            assert_string_equal(shexec_run_notice(r), "");
            shexec_run_free(r);
        }
    }
}

/* Under `set -x` the trace is the command's own: no line from the wrapper,
 * and the command's lines read "+ cmd" as they would in `bash -xc`. */
static void test_xtrace_shows_only_the_command(void **state)
{
    fixture *f = *state;
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        shexec_run *r = run(f->s, "set -x; echo hi");
        assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "hi\n");
        assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "+ echo hi\n");
        shexec_run_free(r);

        r = run(f->s, "set -eux\ntrue\nfalse\necho never");
        assert_int_equal(shexec_run_exit_code(r), 1);
        assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "+ true\n+ false\n");
        shexec_run_free(r);

        char cmd[PATH_MAX + 64];
        snprintf(cmd, sizeof cmd, "set -x; cd '%s'; exit 3", f->dir);
        r = run(f->s, cmd);
        assert_int_equal(shexec_run_exit_code(r), 3);
        char want[2 * PATH_MAX];
        snprintf(want, sizeof want, "+ cd %s\n+ exit 3\n", f->dir);
        assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), want);
        assert_string_equal(shexec_session_cwd(f->s), f->dir);
        shexec_run_free(r);
        assert_int_equal(shexec_session_set_cwd(f->s, "/"), SHEXEC_OK);
    }
    use_shell(f->s, "/bin/bash");
    shexec_run *r = run(f->s, "set -euxo pipefail; true | true");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "+ true\n+ true\n");
    shexec_run_free(r);
}

/* A directory deeper than the kernel's path limit: the shell can be there
 * (reached step by step), the record says so, and nothing of it reaches
 * the output; the session cannot use it, so it stays and says why. */
static void test_any_directory_length(void **state)
{
    fixture *f = *state;
    /* bash can go there (dash's cd takes absolute paths, which the kernel
     * refuses beyond its limit) */
    {
        use_shell(f->s, "/bin/bash");
        assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
        /* 60 levels of 100 bytes: about 6 KB */
        const char *cmd = "n=0; d=$(printf '%0100d' 0); while [ $n -lt 60 ]; do "
                          "mkdir -p \"$d$n\" && cd \"$d$n\" || exit 9; n=$((n+1)); done; echo deep";
        shexec_run *r = run(f->s, cmd);
        assert_int_equal(shexec_run_exit_code(r), 0);
        size_t len = 0;
        const char *out = shexec_run_output(r, SHEXEC_STDOUT, &len);
        assert_int_equal(len, 5);
        assert_memory_equal(out, "deep\n", 5);
        assert_string_equal(shexec_session_cwd(f->s), f->dir);
        assert_non_null(strstr(shexec_run_notice(r), "path limit"));
        shexec_run_free(r);
    }
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
        /* just under the limit: adopted */
        char sub[PATH_MAX];
        size_t dl = strlen(f->dir);
        memcpy(sub, f->dir, dl);
        size_t at = dl;
        int level = 0;
        while (at + 201 < PATH_MAX - 2) {
            sub[at++] = '/';
            memset(sub + at, 'a' + level % 26, 200);
            at += 200;
            sub[at] = '\0';
            level++;
        }
        char mk[2 * PATH_MAX + 64];
        snprintf(mk, sizeof mk, "mkdir -p '%s' && cd '%s'", sub, sub);
        shexec_run *r = run(f->s, mk);
        assert_int_equal(shexec_run_exit_code(r), 0);
        assert_string_equal(shexec_session_cwd(f->s), sub);
        assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "");
        shexec_run_free(r);
    }
}

/* The shell's real directory is reported, not the PWD variable. */
static void test_pwd_variable_does_not_move_the_session(void **state)
{
    fixture *f = *state;
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
        shexec_run *r = run(f->s, "PWD=/etc; true");
        assert_string_equal(shexec_session_cwd(f->s), f->dir);
        shexec_run_free(r);
        r = run(f->s, "export PWD=/usr");
        assert_string_equal(shexec_session_cwd(f->s), f->dir);
        shexec_run_free(r);
        /* a logical path through a symlink is kept */
        char link[PATH_MAX + 16], cmd[3 * PATH_MAX];
        snprintf(link, sizeof link, "%s/ln%d", f->dir, sh);
        assert_int_equal(symlink("/usr", link), 0);
        snprintf(cmd, sizeof cmd, "cd '%s'", link);
        shexec_run_free(run(f->s, cmd));
        assert_string_equal(shexec_session_cwd(f->s), link);
    }
}

/* The command cannot read anything that would let it forge a record into
 * its output, and output that looks like a record is output. */
static void test_record_not_forged_by_output(void **state)
{
    fixture *f = *state;
    const char *tag = shx_test_sentinel_tag(f->s);
    char nonce[32];
    snprintf(nonce, sizeof nonce, "%.16s", tag + strlen("__SHEXEC_CWD_"));
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
        shexec_run *r = run(f->s, "cat /proc/$$/cmdline; printf '%s' \"${BASH_EXECUTION_STRING-}\"; "
                                  "env");
        size_t len = 0;
        const char *out = shexec_run_output(r, SHEXEC_STDOUT, &len);
        assert_null(memmem(out, len, nonce, strlen(nonce)));
        shexec_run_free(r);

        char cmd[512];
        snprintf(cmd, sizeof cmd, "printf '%s/usr\\000'; printf 'status=0\\000cwd=/usr\\n\\000'", tag);
        r = run(f->s, cmd);
        out = shexec_run_output(r, SHEXEC_STDOUT, &len);
        size_t tl = strlen(tag);
        assert_int_equal(len, tl + 5 + 19);
        assert_memory_equal(out, tag, tl);
        assert_memory_equal(out + tl, "/usr\0status=0\0cwd=/usr\n\0", 5 + 19);
        assert_string_equal(shexec_session_cwd(f->s), f->dir);
        shexec_run_free(r);
    }
}

/* `exit N` reports the directory the shell was in, and its status. */
static void test_exit_reports_the_cwd(void **state)
{
    fixture *f = *state;
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        for (int pty = 0; pty < 2; pty++) {
            assert_int_equal(shexec_session_set_cwd(f->s, "/"), SHEXEC_OK);
            char cmd[PATH_MAX + 64];
            snprintf(cmd, sizeof cmd, "cd '%s'; exit 3", f->dir);
            shexec_run *r = run_mode(f->s, cmd, pty);
            assert_int_equal(shexec_run_exit_code(r), 3);
            assert_string_equal(shexec_session_cwd(f->s), f->dir);
            shexec_run_free(r);

            /* with set -e, a failing command ends the shell the same way */
            assert_int_equal(shexec_session_set_cwd(f->s, "/"), SHEXEC_OK);
            snprintf(cmd, sizeof cmd, "set -e; cd '%s'; false; echo never", f->dir);
            r = run_mode(f->s, cmd, pty);
            assert_int_equal(shexec_run_exit_code(r), 1);
            assert_string_equal(shexec_session_cwd(f->s), f->dir);
            shexec_run_free(r);

            /* the command's own EXIT trap replaces the library's (the shell
             * has one): it runs as in a plain shell, with the command's
             * status and its own stdout and stderr; the shell then reports
             * nothing, so the cwd stays, and the notice says why */
            assert_int_equal(shexec_session_set_cwd(f->s, "/"), SHEXEC_OK);
            snprintf(cmd, sizeof cmd, "trap 'echo bye $?; echo err >&2' EXIT; cd '%s'; false",
                     f->dir);
            r = run_mode(f->s, cmd, pty);
            assert_int_equal(shexec_run_exit_code(r), 1);
            assert_string_equal(shexec_session_cwd(f->s), "/");
            assert_non_null(strstr(shexec_run_notice(r), "EXIT trap"));
            if (pty) {
                assert_non_null(strstr(shexec_run_output(r, SHEXEC_STDOUT, NULL), "bye 1"));
            } else {
                assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "bye 1\n");
                assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "err\n");
            }
            shexec_run_free(r);
        }
    }
}

/* Large commands (agents write files with big here-documents) run. */
static void test_large_commands(void **state)
{
    fixture *f = *state;
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
        size_t body = 200 * 1000;
        shx_buf cmd = SHX_BUF_INIT;
        shx_buf_puts(&cmd, "set -x; cat > big.txt <<'EOF'\n");
        for (size_t i = 0; i < body / 50; i++)
            shx_buf_printf(&cmd, "%049zu\n", i);
        shx_buf_puts(&cmd, "EOF\nwc -c < big.txt; echo \"$0\"; cd /");
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, f->s, cmd.data), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        assert_int_equal(shexec_run_exit_code(r), 0);
        const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
        assert_int_equal(atol(out), (long)body);
        assert_string_equal(shexec_session_cwd(f->s), "/");
        shexec_run_free(r);
        shx_buf_free(&cmd);
    }
    /* up to the documented bound */
    use_shell(f->s, "/bin/bash");
    size_t n = 16u << 20;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, ' ', n);
    memcpy(big, "echo ok\n", 8);
    memcpy(big + n - 6, "exit 7", 6);
    big[n] = '\0';
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, f->s, big), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_exit_code(r), 7);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "ok\n");
    shexec_run_free(r);
    free(big);
}

/* Each run has a channel of its own, made for it and closed once read:
 * after a run the session holds none. bash's is a socket: the command
 * cannot open it through /proc (nor can anything else), and a process an
 * earlier run left behind is not heard on a later one's (it has none) nor
 * on its own once its shell is gone. A POSIX shell's is a pipe of its own. */
static void test_channel_per_run(void **state)
{
    fixture *f = *state;
    if (access("/proc/self/fd", F_OK) != 0)
        skip();
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
        shexec_run *r = run(f->s, "export HOST_TOKEN=secret-1; cd /usr");
        shexec_run_free(r);
        assert_int_equal(tu_count_record_files(), 0);
        if (sh == 0) {
            /* a socket is not reopened through /proc */
            r = run(f->s, "cat /proc/self/fd/173 2>/dev/null || echo refused; cd /");
            assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "refused\n");
            assert_string_equal(shexec_session_cwd(f->s), "/");
            shexec_run_free(r);
        }
        /* a leftover writes a forged report into its own run's channel, late */
        r = run(f->s, sh == 0 ? "(sleep 0.3; printf '\\0status=0\\0cwd=/etc\\n\\0' >&173) & cd /tmp"
                              : "(sleep 0.3; printf '\\0status=0\\0cwd=/etc\\n\\0' >>/dev/fd/173) & cd /tmp");
        assert_string_equal(shexec_session_cwd(f->s), "/tmp");
        shexec_task *left = NULL;
        if (shexec_run_leftovers(r, NULL) == SHEXEC_LEFTOVERS_ADOPTED)
            assert_int_equal(shexec_session_take_task(&left, f->s, tu_leftover_id(r)),
                             SHEXEC_OK);
        shexec_run_free(r);
        for (int i = 0; i < 4; i++) {
            r = run(f->s, "sleep 0.2; cd /usr");
            assert_string_equal(shexec_session_cwd(f->s), "/usr");
            shexec_run_free(r);
        }
        shexec_task_free(left);
        assert_int_equal(tu_count_record_files(), 0);
    }
}

/* The prelude bash reads by path is made once per session and given to
 * every run while its bytes stay the same: one file, the same run after
 * run, replaced when the kept state changes it, gone with the session. A
 * host that closed it (closefrom) and opened another file at its number
 * gets a new one, and its own file is left open, untouched. */
static void test_prelude_kept(void **state)
{
    fixture *f = *state;
    if (access("/proc/self/fd", F_OK) != 0)
        skip();
    use_shell(f->s, "/bin/bash");
    assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
    const char *const dirs[] = {"/usr", "/tmp", "/"};
    ino_t first = 0, ino = 0;
    int fd = -1;
    for (int i = 0; i < 3; i++) {
        char cmd[64];
        (void)snprintf(cmd, sizeof cmd, "cd %s", dirs[i]);
        shexec_run_free(run(f->s, cmd));
        assert_string_equal(shexec_session_cwd(f->s), dirs[i]);
        int now = tu_kept_prelude_fd(&ino);
        assert_true(now >= 0);
        if (i == 0) {
            fd = now;
            first = ino;
        }
        assert_int_equal(now, fd);
        assert_true(ino == first);
    }
    /* the host closes it, and another file takes its number */
    assert_int_equal(close(fd), 0);
    int other = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(other >= 0);
    if (other != fd) {
        assert_int_equal(dup2(other, fd), fd);
        close(other);
    }
    struct stat host_file, still;
    assert_int_equal(fstat(fd, &host_file), 0);
    shexec_run_free(run(f->s, "cd /usr"));
    assert_string_equal(shexec_session_cwd(f->s), "/usr");
    int fresh = tu_kept_prelude_fd(&ino);
    assert_true(fresh >= 0 && fresh != fd);
    assert_int_equal(fstat(fd, &still), 0);
    assert_true(still.st_ino == host_file.st_ino && still.st_dev == host_file.st_dev);
    close(fd);
    /* kept state changes the prelude: the kept file is replaced, not added to */
    if (tu_platform_has(SHX_PLATFORM_PERSIST, "kept shell state")) {
        assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
        shexec_run_free(run(f->s, "export KEPT_ONE=1"));
        shexec_run *r = run(f->s, "echo \"$KEPT_ONE\"");
        assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "1\n");
        shexec_run_free(r);
        assert_true(tu_kept_prelude_fd(&ino) >= 0);
    }
    shexec_session_free(f->s);
    f->s = NULL;
    assert_int_equal(tu_kept_prelude_fd(&ino), -1);
}

/* What $_ is as bash starts: the environment's _, else argv[0]. */
static void test_start_word(void **state)
{
    (void)state;
    char *with[] = {"A=1", "_=/usr/bin/x", NULL};
    char *without[] = {"A=1", "_x=/y", NULL};
    char *named[] = {"_=bash", NULL};
    char *empty[] = {"_=", NULL};
    assert_string_equal(shx_script_start_word(with, "/bin/bash"), "/usr/bin/x");
    assert_string_equal(shx_script_start_word(without, "/bin/bash"), "/bin/bash");
    assert_string_equal(shx_script_start_word(empty, "/bin/bash"), "");
    assert_string_equal(shx_script_start_word(named, "/bin/bash"), "bash");
    assert_string_equal(shx_script_start_word(NULL, "bash"), "bash");
}

/* Whether bash's $_ is known to the library or left to the prelude's test
 * at run time, the command's first line sees it as bash started, with
 * PIPESTATUS unset and $? 0. */
static void test_first_line_as_bash_starts(void **state)
{
    fixture *f = *state;
    use_shell(f->s, "/bin/bash");
    const char *const words[] = {"/opt/tool", "bash",    "./rel", "x y", "it's", "",
                                 "PATH",      "/a[0]",   "/x y",  "/*",  "/it's"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        assert_int_equal(shexec_session_setenv(f->s, "_", words[i]), SHEXEC_OK);
        shexec_run *r = run(f->s, "builtin echo \"$?[$_]\"; declare -p PIPESTATUS 2>&1 | wc -l; "
                                  "echo \"${PATH:+path}\"");
        char want[64];
        (void)snprintf(want, sizeof want, "0[%s]\n1\npath\n", words[i]);
        assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), want);
        shexec_run_free(r);
    }
}

/* A command that writes into its own channel (it can: it runs in the shell
 * that holds it) forges nothing the shell's report does not cover: the
 * report comes last, and its fields are the ones taken. */
static void test_record_written_by_the_command(void **state)
{
    fixture *f = *state;
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
        shexec_run *r = run(f->s, sh == 0 ? "printf '\\0status=7\\0cwd=/etc\\n\\0' >&173; cd /tmp"
                                          : "printf '\\0status=7\\0cwd=/etc\\n\\0' >>/dev/fd/173; cd /tmp");
        assert_int_equal(shexec_run_exit_code(r), 0);
        assert_string_equal(shexec_session_cwd(f->s), "/tmp");
        shexec_run_free(r);
        for (int i = 0; i < 2; i++) {
            r = run(f->s, i ? "cd /" : "cd /usr");
            assert_string_equal(shexec_session_cwd(f->s), i ? "/" : "/usr");
            shexec_run_free(r);
        }
    }
}

/* A command that fills its channel before its shell reports: bash's end of
 * the socket does not wait (its report is read once the shell is gone), so
 * the write fails and the report with it, and the session stays where it
 * was, said in the notice; a POSIX shell's pipe is read from shortly after
 * the start, so the writer goes on and the report comes after it. Neither
 * waits for the run's timeout. */
static void test_filled_channel_holds_no_shell(void **state)
{
    fixture *f = *state;
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, f->s,
                                        sh == 0 ? "head -c 4000000 /dev/zero 2>/dev/null >&173; "
                                                  "echo \"w=$?\"; cd /tmp"
                                                : "head -c 4000000 /dev/zero >>/dev/fd/173; "
                                                  "echo \"w=$?\"; cd /tmp"),
                         SHEXEC_OK);
        assert_int_equal(shexec_run_set_timeout_ms(r, 30000), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
        assert_int_equal(shexec_run_exit_code(r), 0);
        if (sh == 0) {
            assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "w=1\n");
            assert_string_equal(shexec_session_cwd(f->s), f->dir);
            assert_non_null(strstr(shexec_run_notice(r), "reported no working directory"));
        } else {
            assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "w=0\n");
        }
        shexec_run_free(r);
        /* the next run has a channel of its own */
        r = run(f->s, "cd /usr");
        assert_string_equal(shexec_session_cwd(f->s), "/usr");
        shexec_run_free(r);
    }
}

/* Whether the loop watches a running run's report channel (the host's own
 * loop sees the same set through shexec_session_pollfds). */
static int report_watched(shexec_session *s, const shexec_run *r, int32_t *timeout_ms)
{
    struct pollfd fds[16];
    int n = shexec_session_pollfds(fds, 16, timeout_ms, s);
    assert_true(n > 0 && n <= 16);
    int rep = shx_test_run_fd(r, 0);
    assert_true(rep >= 0);
    int watched = 0;
    for (int i = 0; i < n; i++)
        watched |= fds[i].fd == rep;
    /* the round handed back, with nothing seen */
    assert_true(shexec_session_process(s, fds, 0) >= 0);
    return watched;
}

static void finish(shexec_session *s, shexec_run *r)
{
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
        assert_true(shexec_session_wait(s, -1) >= 0);
}

/* A report that cannot make its shell wait costs the host no wake-up of
 * its own: bash's small report (its end of the socket does not wait) is
 * not watched while the shell runs, only taken when it is gone; a POSIX
 * shell's pipe, and a report of the shell's state (which can be larger
 * than the channel holds), are watched from 50 ms on (the poll's timeout
 * says when). Each still arrives whole. */
static void test_report_watched_only_when_it_can_wait(void **state)
{
    fixture *f = *state;
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        assert_int_equal(shexec_session_set_cwd(f->s, f->dir), SHEXEC_OK);
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, f->s, "sleep 0.3; cd /usr"), SHEXEC_OK);
        assert_int_equal(shexec_run_start(r), SHEXEC_OK);
        int32_t timeout = -1;
        assert_int_equal(report_watched(f->s, r, &timeout), 0);
        if (sh == 1) {
            assert_true(timeout >= 0 && timeout <= 50);
            usleep(80 * 1000);
            assert_int_equal(report_watched(f->s, r, &timeout), 1);
        }
        finish(f->s, r);
        assert_int_equal(shexec_run_exit_code(r), 0);
        assert_string_equal(shexec_session_cwd(f->s), "/usr");
        shexec_run_free(r);
    }
    if (!tu_platform_has(SHX_PLATFORM_PERSIST, "persisted shell state"))
        return;
    for (int sh = 0; sh < 2; sh++) {
        use_shell(f->s, g_shells[sh]);
        assert_int_equal(shexec_session_set_persist_env(f->s, 1), SHEXEC_OK);
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, f->s, "export KEPT=1; sleep 0.3; cd /"), SHEXEC_OK);
        assert_int_equal(shexec_run_start(r), SHEXEC_OK);
        int32_t timeout = -1;
        assert_int_equal(report_watched(f->s, r, &timeout), 0);
        assert_true(timeout >= 0 && timeout <= 50);
        usleep(80 * 1000);
        assert_int_equal(report_watched(f->s, r, &timeout), 1);
        finish(f->s, r);
        assert_string_equal(shexec_session_cwd(f->s), "/");
        assert_string_equal(shexec_session_getenv(f->s, "KEPT"), "1");
        shexec_run_free(r);
        /* a listing larger than the channel holds (bash's socket; a
         * variable for the environment is bounded by exec at 128 KiB): the
         * shell waits until the host reads, from 50 ms on, and the state
         * comes whole */
        r = run(f->s, sh == 0 ? "BIG=$(head -c 600000 /dev/zero | tr '\\0' x); cd /usr"
                              : "export BIG=$(head -c 100000 /dev/zero | tr '\\0' x); cd /usr");
        assert_int_equal(shexec_run_exit_code(r), 0);
        assert_string_equal(shexec_session_cwd(f->s), "/usr");
        shexec_run_free(r);
        r = run(f->s, "echo ${#BIG}");
        assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), sh == 0 ? "600000\n" : "100000\n");
        shexec_run_free(r);
        assert_int_equal(shexec_session_set_persist_env(f->s, 0), SHEXEC_OK);
    }
}

/* A short command that prints nothing wakes its host once: its report is
 * taken with its exit, and its pipes do not hang up before it (the host
 * holds their write ends until the pidfd says the shell exited), so one
 * poll round sees it all. bash: a POSIX shell's report pipe is watched
 * from 50 ms on, which a slow machine (valgrind) reaches. */
static void test_short_command_one_round(void **state)
{
    fixture *f = *state;
    use_shell(f->s, g_shells[0]);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, f->s, "cd /usr; exit 3"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    if (shx_test_run_pidfd(r) < 0) {
        /* no pidfd (an old kernel, valgrind): the pipes' end shows the exit */
        finish(f->s, r);
        shexec_run_free(r);
        skip();
    }
    int rounds = 0;
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING) {
        struct pollfd fds[16];
        int32_t timeout = -1;
        int n = shexec_session_pollfds(fds, 16, &timeout, f->s);
        assert_true(n > 0 && n <= 16);
        int got = poll(fds, (nfds_t)n, timeout);
        assert_true(got >= 0);
        assert_true(shexec_session_process(f->s, fds, (uint32_t)n) >= 0);
        rounds++;
    }
    assert_int_equal(rounds, 1);
    assert_int_equal(shexec_run_exit_code(r), 3);
    assert_string_equal(shexec_session_cwd(f->s), "/usr");
    shexec_run_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_redirected_stdout_keeps_the_record_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_xtrace_shows_only_the_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_any_directory_length, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pwd_variable_does_not_move_the_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_not_forged_by_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_reports_the_cwd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_channel_per_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_written_by_the_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filled_channel_holds_no_shell, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_watched_only_when_it_can_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_command_one_round, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prelude_kept, setup, teardown),
        cmocka_unit_test(test_start_word),
        cmocka_unit_test_setup_teardown(test_first_line_as_bash_starts, setup, teardown),
    };
    return cmocka_run_group_tests_name("channel", tests, NULL, NULL);
}
