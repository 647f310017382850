/*
 * test_session.c - a session as an agent's terminal: cwd tracking by
 * sentinel across every shape of command, exit-code fidelity, output
 * policies, environment filtering, shell wrappers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <locale.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shx/buf.h"
#include "shexec.h"
#include <shexec_tool.h>
#include "testhook.h"
#include "testutil.h"

extern char **environ;

typedef struct {
    shx_buf out, err;
} collected;

static void collect(void *user, int stream, const char *data, size_t len)
{
    collected *c = user;
    shx_buf_append(stream == SHEXEC_STDOUT ? &c->out : &c->err, data, len);
}

static shexec_run *run_cmd(shexec_session *s, const char *cmd)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    return r;
}

/* Run, check the callback saw exactly the captured stdout, return the run. */
static shexec_run *run_streamed(shexec_session *s, const char *cmd)
{
    collected c = {SHX_BUF_INIT, SHX_BUF_INIT};
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(r, collect, &c), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    if (!shexec_run_truncated(r, SHEXEC_STDOUT)) {
        size_t n;
        const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
        assert_int_equal(c.out.len, n);
        if (n)
            assert_memory_equal(c.out.data, out, n);
    }
    if (c.out.len)
        assert_null(memmem(c.out.data, c.out.len, shx_test_sentinel_tag(s), strlen(shx_test_sentinel_tag(s))));
    shx_buf_free(&c.out);
    shx_buf_free(&c.err);
    return r;
}

static void expect(shexec_session *s, const char *cmd, const char *out, int code, const char *cwd)
{
    shexec_run *r = run_streamed(s, cmd);
    size_t n;
    const char *got = shexec_run_output(r, SHEXEC_STDOUT, &n);
    if (out && (n != strlen(out) || memcmp(got, out, n) != 0))
        fail_msg("%s: stdout [%.*s], expected [%s]", cmd, (int)n, got, out);
    if (shexec_run_exit_code(r) != code)
        fail_msg("%s: exit %d, expected %d (stderr: %s)", cmd, shexec_run_exit_code(r), code,
                 shexec_run_output(r, SHEXEC_STDERR, NULL));
    if (cwd && strcmp(shexec_session_cwd(s), cwd) != 0)
        fail_msg("%s: cwd %s, expected %s", cmd, shexec_session_cwd(s), cwd);
    shexec_run_free(r);
}

static int setup(void **state)
{
    tu_leak_begin();
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    assert_int_equal(shexec_session_set_cwd(s, "/"), SHEXEC_OK);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    shexec_session_free(*state);
    tu_leak_end();
    return 0;
}

/* ---- the sentinel ------------------------------------------------------- */

static void test_nonce_per_session(void **state)
{
    shexec_session *a = *state, *b = NULL;
    assert_int_equal(shexec_session_new(&b), SHEXEC_OK);
    regex_t re;
    assert_int_equal(regcomp(&re, "^__SHEXEC_CWD_[0-9a-f]{16}__$", REG_EXTENDED), 0);
    assert_int_equal(regexec(&re, shx_test_sentinel_tag(a), 0, NULL, 0), 0);
    assert_int_equal(regexec(&re, shx_test_sentinel_tag(b), 0, NULL, 0), 0);
    regfree(&re);
    assert_string_not_equal(shx_test_sentinel_tag(a), shx_test_sentinel_tag(b));
    /* the whole tag never appears in the shell's argv (ps would show it) */
    assert_null(strstr(shx_test_wrapper_script(a), shx_test_sentinel_tag(a)));
    shexec_session_free(b);
}

static void test_cd_persists(void **state)
{
    shexec_session *s = *state;
    expect(s, "cd /tmp", "", 0, "/tmp");
    expect(s, "pwd", "/tmp\n", 0, "/tmp");
    expect(s, "echo hello", "hello\n", 0, "/tmp");
    expect(s, "cd /usr && cd bin", "", 0, "/usr/bin");
    expect(s, "cd ..; pwd", "/usr\n", 0, "/usr");
}

static void test_initial_cwd_is_host_cwd(void **state)
{
    (void)state;
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    char here[4096];
    assert_non_null(getcwd(here, sizeof here));
    assert_string_equal(shexec_session_cwd(s), here);
    char want[4200];
    snprintf(want, sizeof want, "%s\n", here);
    expect(s, "pwd", want, 0, here);
    shexec_session_free(s);
}

static void test_exit_codes_every_shape(void **state)
{
    shexec_session *s = *state;
    expect(s, "false", "", 1, "/");
    expect(s, "cd /tmp && false", "", 1, "/tmp");
    expect(s, "exit 3", "", 3, "/tmp");
    expect(s, "cd / && exit 4", "", 4, "/"); /* `exit` reports the cwd too */
    expect(s, "cd /tmp", "", 0, "/tmp");
    expect(s, "(exit 5)", "", 5, "/tmp");
    expect(s, "true | false", "", 1, "/tmp");
    expect(s, "set -o pipefail; false | true", "", 1, "/tmp");
    expect(s, "kill -TERM $$", "", -1, "/tmp");
    expect(s, "sh -c 'exit 200'", "", 200, "/tmp");
}

static void test_wrapper_failures_elsewhere(void **state)
{
    shexec_session *s = *state;
    int64_t t0 = tu_now_ms();
    expect(s, "sleep 0.2 &", "", 0, "/"); /* trailing & is not a syntax error */
    expect(s, "cat <<EOF\nbody line\n  indented\nEOF", "body line\n  indented\n", 0, "/");
    expect(s, "cat <<'X'\n$HOME\nX\necho after", "$HOME\nafter\n", 0, "/");
    expect(s, "cd /tmp # a trailing comment", "", 0, "/tmp");
    expect(s, "ls /nonexistent-dir 2>/dev/null # comment", "", 2, "/tmp");
    expect(s, "cd / && echo x \\\n  y", "x y\n", 0, "/");
    expect(s, "printf foo", "foo", 0, "/");
    expect(s, "printf 'a\\r\\nb\\r\\n'", "a\r\nb\r\n", 0, "/");
    expect(s, "echo 'unbalanced", NULL, 2, "/");
    assert_true(tu_now_ms() - t0 < 10000);

    /* `sleep 5 & cd /tmp`: the cd runs in the foreground shell, at once */
    t0 = tu_now_ms();
    expect(s, "sleep 5 & cd /tmp", "", 0, "/tmp");
    assert_true(tu_now_ms() - t0 < 4000);
}

static void test_timeout_keeps_cwd(void **state)
{
    shexec_session *s = *state;
    expect(s, "cd /tmp", "", 0, "/tmp");
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "cd /usr; sleep 30"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 300), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    assert_string_equal(shexec_session_cwd(s), "/tmp");
    shexec_run_free(r);
    /* closed stdout: the record has a channel of its own */
    expect(s, "cd /usr; exec >&-", "", 0, "/usr");
}

static void test_forged_sentinels_untouched(void **state)
{
    shexec_session *s = *state;
    expect(s, "echo __SHEXEC_CWD__; cd /tmp", "__SHEXEC_CWD__\n", 0, "/tmp");

    /* another session's full record, NUL-terminated, passes through */
    shexec_session *other = NULL;
    assert_int_equal(shexec_session_new(&other), SHEXEC_OK);
    char cmd[256], want[256];
    snprintf(cmd, sizeof cmd, "printf '%s/usr\\000'", shx_test_sentinel_tag(other));
    size_t wl = (size_t)snprintf(want, sizeof want, "%s/usr", shx_test_sentinel_tag(other)) + 1;
    shexec_run *r = run_streamed(s, cmd);
    size_t n;
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    assert_int_equal(n, wl);
    assert_memory_equal(out, want, wl);
    assert_string_equal(shexec_session_cwd(s), "/tmp");
    shexec_run_free(r);
    shexec_session_free(other);
}

/* A command can write a record of its own (it runs in the shell that holds
 * the channel, at 173, and it can remove the trap that reports): only an
 * absolute path naming an existing directory is adopted; anything else
 * leaves the cwd and says why. */
static void test_forged_record_validated(void **state)
{
    shexec_session *s = *state;
    expect(s, "cd /tmp", "", 0, "/tmp");
    const char *bad[] = {"/nonexistent/dir", "usr", "/etc/passwd", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd,
                 "trap - EXIT; printf '\\000status=0\\000cwd=%s\\n\\000' >&173; exit 0", bad[i]);
        shexec_run *r = run_cmd(s, cmd);
        assert_int_equal(shexec_run_exit_code(r), 0);
        assert_string_equal(shexec_session_cwd(s), "/tmp");
        assert_non_null(strstr(shexec_run_notice(r), "/tmp"));
        if (bad[i][0])
            assert_non_null(strstr(shexec_run_notice(r), bad[i]));
        shexec_run_free(r);
        expect(s, "pwd", "/tmp\n", 0, "/tmp"); /* later commands still run */
    }
    /* the shell's own record of a directory it removed is declined too */
    const char *base = tu_mkdtemp();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir '%s/gone' && cd '%s/gone' && rmdir \"$PWD\"", base, base);
    shexec_run *r = run_cmd(s, cmd);
    assert_int_equal(shexec_run_exit_code(r), 0);
    assert_string_equal(shexec_session_cwd(s), "/tmp");
    assert_non_null(strstr(shexec_run_notice(r), "does not exist"));
    shexec_run_free(r);
    /* a valid record clears nothing it should not: no notice */
    r = run_cmd(s, "cd /usr");
    assert_string_equal(shexec_run_notice(r), "");
    assert_string_equal(shexec_session_cwd(s), "/usr");
    shexec_run_free(r);
    tu_rmtree(base);
}

static void test_weird_directory_names(void **state)
{
    shexec_session *s = *state;
    const char *base = tu_mkdtemp();
    char dir[512];
    snprintf(dir, sizeof dir, "%s/sp ace 'q' \"dq\" $x\nnl\n", base);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(shexec_session_set_cwd(s, base), SHEXEC_OK);
    /* the name ends in a newline, which $(...) would strip: a glob keeps it */
    expect(s, "cd sp*", "", 0, dir);
    expect(s, "pwd | od -c | head -1 | cut -c1-7", "0000000\n", 0, dir);
    expect(s, "cd ..", "", 0, base);
    tu_rmtree(base);
}

/* A session whose directory was removed (by a command, or by anyone) is
 * not locked: the next command starts in the nearest existing ancestor,
 * the session moves there and the run's notice says so. A run's own cwd
 * that does not exist is still an error before anything runs. */
static void test_deleted_cwd_falls_back(void **state)
{
    shexec_session *s = *state;
    const char *base = tu_mkdtemp();
    char dir[PATH_MAX], cmd[2 * PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/a/b/c", base);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cd '%s'", dir, dir);
    expect(s, cmd, "", 0, dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s/a/b'", base);
    shexec_run_free(run_cmd(s, cmd));
    char want[PATH_MAX + 8];
    snprintf(want, sizeof want, "%s/a\n", base);
    shexec_run *r = run_cmd(s, "pwd");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), want);
    assert_non_null(strstr(shexec_run_notice(r), dir));
    assert_non_null(strstr(shexec_run_notice(r), "no longer exists"));
    want[strlen(want) - 1] = '\0';
    assert_string_equal(shexec_session_cwd(s), want);
    shexec_run_free(r);
    r = run_cmd(s, "pwd"); /* settled: no notice */
    assert_string_equal(shexec_run_notice(r), "");
    shexec_run_free(r);
    /* a run's own missing cwd: nothing runs */
    r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "echo should not run"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_cwd(r, dir), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_ENOCWD);
    assert_non_null(strstr(shexec_session_errmsg(s), dir));
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_NEW);
    shexec_run_free(r);
    tu_rmtree(base);
}

static void test_sentinel_split_across_reads(void **state)
{
    shexec_session *s = *state;
    /* stdout of n bytes, then the record: it lands on and around the 64 KiB
     * read boundary for some n */
    for (int n = 65536 - 40; n <= 65536 + 2; n += 7) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "head -c %d /dev/zero | tr '\\0' x; cd /tmp", n);
        shexec_session_set_output_limit(s, 1 << 20, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD);
        shexec_session_set_cwd(s, "/");
        shexec_run *r = run_streamed(s, cmd);
        size_t len;
        shexec_run_output(r, SHEXEC_STDOUT, &len);
        assert_int_equal(len, (size_t)n);
        assert_string_equal(shexec_session_cwd(s), "/tmp");
        shexec_run_free(r);
    }
}

typedef struct {
    size_t bytes;
} counter;

static void count_out(void *user, int stream, const char *data, size_t len)
{
    (void)data;
    if (stream == SHEXEC_STDOUT)
        ((counter *)user)->bytes += len;
}

static void test_forged_tag_does_not_hold_output(void **state)
{
    shexec_session *s = *state;
    char cmd[256];
    /* this session's own tag, then 100 KB and no NUL: not a record */
    snprintf(cmd, sizeof cmd, "printf '%s'; head -c 100000 /dev/zero | tr '\\0' x; sleep 2; cd /tmp",
             shx_test_sentinel_tag(s));
    counter c = {0};
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(r, count_out, &c), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    int64_t end = tu_now_ms() + 1500;
    while (c.bytes < 100000 && tu_now_ms() < end)
        shexec_session_wait(s, 50);
    /* everything but what could still be a record arrived while the command slept */
    assert_false(shexec_run_state(r) > SHEXEC_STATE_RUNNING);
    assert_int_equal(c.bytes, 100000 + strlen(shx_test_sentinel_tag(s)));
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
        shexec_session_wait(s, -1);
    assert_string_equal(shexec_session_cwd(s), "/tmp");
    shexec_run_free(r);
}

static void test_sentinel_before_truncation(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = run_streamed(s, "head -c 50000 /dev/zero | tr '\\0' x; cd /tmp");
    assert_true(shexec_run_truncated(r, SHEXEC_STDOUT));
    assert_string_equal(shexec_session_cwd(s), "/tmp");
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
    /* the sentinel is not counted: 50000 characters exactly */
    assert_non_null(strstr(out, "\n[output truncated: kept the first 30000 characters (30000 "
                                "bytes) of 50000 (50000 bytes, 1 lines); 20000 characters (20000 "
                                "bytes) omitted]\n"));
    assert_null(strstr(out, "SHEXEC"));
    shexec_run_free(r);
}

/* ---- output policies -------------------------------------------------- */

static void test_output_policies(void **state)
{
    shexec_session *s = *state;
    /* seed 002: 50 KB in bytes */
    assert_int_equal(shexec_session_set_output_limit(s, 51200, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD),
                     SHEXEC_OK);
    shexec_run *r = run_cmd(s, "head -c 100000 /dev/zero | tr '\\0' x");
    size_t n;
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    /* the limit counts bytes; the notice gives characters and bytes */
    const char *notice = "\n[output truncated: kept the first 51200 characters (51200 bytes) of "
                         "100000 (100000 bytes, 1 lines); 48800 characters (48800 bytes) "
                         "omitted]\n";
    assert_int_equal(n, 51200 + strlen(notice));
    assert_string_equal(out + 51200, notice);
    shexec_run_free(r);

    /* head and tail: build logs end with the errors */
    assert_int_equal(shexec_session_set_output_limit(s, 1000, SHEXEC_UNIT_CHARS,
                                                     SHEXEC_KEEP_HEAD_TAIL),
                     SHEXEC_OK);
    r = run_cmd(s, "seq 1 20000; echo 'error: the build failed' >&2");
    out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    /* 108894 characters: the first 500, the marker, the last 500, the notice */
    const char *marker = "\n[... 107894 characters (107894 bytes) omitted ...]\n";
    notice = "\n[output truncated: kept the first 500 and the last 500 characters (500 + 500 "
             "bytes) of 108894 (108894 bytes, 20000 lines); 107894 characters (107894 bytes) "
             "omitted in the middle]\n";
    assert_int_equal(n, 500 + strlen(marker) + 500 + strlen(notice));
    assert_true(strncmp(out, "1\n2\n3\n", 6) == 0);
    assert_memory_equal(out + 500, marker, strlen(marker));
    assert_memory_equal(out + n - strlen(notice) - 12, "19999\n20000\n", 12);
    assert_string_equal(out + n - strlen(notice), notice);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "error: the build failed\n");
    shexec_run_free(r);

    /* a run overrides the session */
    assert_int_equal(shexec_run_new(&r, s, "seq 1 1000"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_limit(r, 10, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_limit(r, 10, 5, SHEXEC_KEEP_HEAD), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
    assert_string_equal(out, "1\n2\n3\n4\n5\n"
                             "\n[output truncated: kept the first 10 characters (10 bytes) of 3893 "
                             "(3893 bytes, 1000 lines); 3883 characters (3883 bytes) omitted]\n");
    assert_int_equal(shexec_run_set_output_limit(r, 10, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD),
                     SHEXEC_ESTATE);
    shexec_run_free(r);

    /* limit 0: nothing kept, the callback still gets everything */
    assert_int_equal(shexec_session_set_output_limit(s, 0, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD),
                     SHEXEC_OK);
    counter c = {0};
    assert_int_equal(shexec_run_new(&r, s, "seq 1 1000"), SHEXEC_OK);
    shexec_run_set_output_fn(r, count_out, &c);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "");
    assert_int_equal(c.bytes, 3893);
    assert_int_equal(shexec_run_output_total(r, SHEXEC_STDOUT), 3893);
    shexec_run_free(r);
}

/* ---- environment -------------------------------------------------------- */

static void test_dangerous_variables_filtered(void **state)
{
    shexec_session *s = *state;
    const char *base = tu_mkdtemp();
    char bash_env[600], cmd[1024];
    snprintf(bash_env, sizeof bash_env, "%s/bash_env", base);
    FILE *f = fopen(bash_env, "w");
    fputs("echo BASH_ENV-WAS-SOURCED\n", f);
    fclose(f);
    setenv("LD_PRELOAD", "/nonexistent/libhijack.so", 1);
    setenv("LD_AUDIT", "/nonexistent/libaudit.so", 1);
    setenv("DYLD_INSERT_LIBRARIES", "/x.dylib", 1);
    setenv("BASH_ENV", bash_env, 1);
    setenv("BASH_FUNC_ls%%", "() { echo hijacked; }", 1);
    setenv("IFS", "x", 1);
    setenv("CDPATH", "/usr", 1);
    setenv("PROMPT_COMMAND", "echo prompt", 1);
    setenv("SHEXEC_HARMLESS", "kept", 1);
    snprintf(cmd, sizeof cmd,
             "echo \"${LD_PRELOAD-unset} ${LD_AUDIT-unset} ${DYLD_INSERT_LIBRARIES-unset} "
             "${BASH_ENV-unset} ${CDPATH-unset} ${PROMPT_COMMAND-unset} $SHEXEC_HARMLESS\"; "
             "env | grep -c BASH_FUNC; ls -d /");
    expect(s, cmd, "unset unset unset unset unset unset kept\n0\n/\n", 0, "/");
    /* IFS from the host would split words on 'x' */
    expect(s, "v='axb'; set -- $v; echo $#", "1\n", 0, "/");
    /* with the host's CDPATH=/usr, `cd bin` from /tmp would land in /usr/bin */
    expect(s, "cd /tmp; cd bin 2>/dev/null; pwd; cd /", "/tmp\n", 0, "/");

    /* explicit overrides are filtered too, unless allowed */
    assert_int_equal(shexec_session_setenv(s, "LD_LIBRARY_PATH", "/opt/lib"), SHEXEC_OK);
    expect(s, "echo ${LD_LIBRARY_PATH-unset}", "unset\n", 0, "/");
    assert_int_equal(shexec_session_env_allow(s, "LD_LIBRARY_PATH"), SHEXEC_OK);
    expect(s, "echo ${LD_LIBRARY_PATH-unset}", "/opt/lib\n", 0, "/");
    /* and the deny list can grow */
    assert_int_equal(shexec_session_env_deny(s, "SHEXEC_HARM*"), SHEXEC_OK);
    expect(s, "echo ${SHEXEC_HARMLESS-unset}", "unset\n", 0, "/");
    assert_int_equal(shexec_session_env_deny(s, ""), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_env_allow(s, NULL), SHEXEC_EINVAL);

    const char *names[] = {"LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "BASH_ENV",
                           "BASH_FUNC_ls%%", "IFS", "CDPATH", "PROMPT_COMMAND", "SHEXEC_HARMLESS"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        unsetenv(names[i]);
    tu_rmtree(base);
}

static void test_overrides_and_replace_mode(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "echo $FOO"), SHEXEC_OK);
    assert_int_equal(shexec_run_setenv(r, "FOO", "bar"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "bar\n");
    shexec_run_free(r);

    /* replace: only the given variables, plus what the shell sets itself */
    assert_int_equal(shexec_session_set_env_inherit(s, 0), SHEXEC_OK);
    assert_int_equal(shexec_session_setenv(s, "ONLY_ME", "1"), SHEXEC_OK);
    assert_int_equal(shexec_session_setenv(s, "PATH", "/usr/bin:/bin"), SHEXEC_OK);
    r = run_cmd(s, "env | cut -d= -f1 | sort | tr '\\n' ' '");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "ONLY_ME PATH PWD SHLVL _ ");
    shexec_run_free(r);
}

static void test_host_environ_untouched(void **state)
{
    shexec_session *s = *state;
    setenv("SHEXEC_SNAPSHOT", "v", 1);
    char **before_ptr = environ;
    size_t n = 0;
    while (environ[n])
        n++;
    char **copy = calloc(n + 1, sizeof *copy);
    for (size_t i = 0; i < n; i++)
        copy[i] = strdup(environ[i]);

    shexec_session_setenv(s, "SHEXEC_SNAPSHOT", "changed");
    shexec_session_setenv(s, "HOME", NULL);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "echo $SHEXEC_SNAPSHOT ${HOME-nohome}"), SHEXEC_OK);
    shexec_run_setenv(r, "NEWVAR", "1");
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "changed nohome\n");
    shexec_run_free(r);

    assert_ptr_equal(environ, before_ptr);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(environ[i], copy[i]);
        free(copy[i]);
    }
    assert_null(environ[n]);
    free(copy);
    assert_string_equal(getenv("SHEXEC_SNAPSHOT"), "v");
    assert_null(getenv("NEWVAR"));
    unsetenv("SHEXEC_SNAPSHOT");
}

/* One command after another is given an environment the session keeps
 * between them: each change of what it is built from reaches the next
 * command, the host's own setenv and putenv (also of a string changed in
 * place) as much as the session's setters. */
static void run_pty_expect(shexec_session *s, const char *cmd, const char *out)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty(r, SHEXEC_PTY_ON), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), out);
    shexec_run_free(r);
}

static void test_environment_follows_each_change(void **state)
{
    shexec_session *s = *state;
    static char entry[] = "SHEXEC_FOLLOW=put";
    const char *cmd = "printf '%s' \"${SHEXEC_FOLLOW-unset}\"";
    unsetenv("SHEXEC_FOLLOW");
    unsetenv("NO_COLOR");
    expect(s, cmd, "unset", 0, NULL);
    expect(s, cmd, "unset", 0, NULL);
    setenv("SHEXEC_FOLLOW", "host", 1);
    expect(s, cmd, "host", 0, NULL);
    setenv("SHEXEC_FOLLOW", "hosu", 1);
    expect(s, cmd, "hosu", 0, NULL);
    assert_int_equal(putenv(entry), 0);
    expect(s, cmd, "put", 0, NULL);
    entry[sizeof entry - 4] = 'P';
    expect(s, cmd, "Put", 0, NULL);

    /* a run's own variable is its alone */
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_setenv(r, "SHEXEC_FOLLOW", "run"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "run");
    shexec_run_free(r);
    expect(s, cmd, "Put", 0, NULL);

    assert_int_equal(shexec_session_setenv(s, "SHEXEC_FOLLOW", "session"), SHEXEC_OK);
    expect(s, cmd, "session", 0, NULL);
    assert_int_equal(shexec_session_setenv(s, "SHEXEC_FOLLOW", NULL), SHEXEC_OK);
    expect(s, cmd, "unset", 0, NULL);
    assert_int_equal(shexec_session_setenv(s, "SHEXEC_FOLLOW", "session"), SHEXEC_OK);
    assert_int_equal(shexec_session_env_deny(s, "SHEXEC_FOL*"), SHEXEC_OK);
    expect(s, cmd, "unset", 0, NULL);
    assert_int_equal(shexec_session_env_allow(s, "SHEXEC_FOLLOW"), SHEXEC_OK);
    expect(s, cmd, "session", 0, NULL);

    /* the host's variables, inherited or not */
    const char *host = "printf '%s' \"${SHEXEC_HOST_ONLY-unset}\"";
    setenv("SHEXEC_HOST_ONLY", "h", 1);
    expect(s, host, "h", 0, NULL);
    assert_int_equal(shexec_session_set_env_inherit(s, 0), SHEXEC_OK);
    expect(s, host, "unset", 0, NULL);
    assert_int_equal(shexec_session_set_env_inherit(s, 1), SHEXEC_OK);
    expect(s, host, "h", 0, NULL);

    /* a session that keeps the shell's state (PERSIST=0: none), and after it */
    if (shx_test_platform() & SHX_PLATFORM_PERSIST) {
        assert_int_equal(shexec_session_set_persist_env(s, 1), SHEXEC_OK);
        expect(s, cmd, "session", 0, NULL);
        assert_int_equal(shexec_session_set_persist_env(s, 0), SHEXEC_OK);
        expect(s, cmd, "session", 0, NULL);
    }

    /* the agent preset: its pipe-only variables on a pipe, not on a terminal */
    const char *color = "printf '%s' \"${NO_COLOR-unset}\"";
    expect(s, color, "unset", 0, NULL);
    assert_int_equal(shexec_session_apply_agent_env(s), SHEXEC_OK);
    expect(s, color, "1", 0, NULL);
    run_pty_expect(s, color, "unset");
    expect(s, color, "1", 0, NULL);

    unsetenv("SHEXEC_FOLLOW");
    unsetenv("SHEXEC_HOST_ONLY");
}

/* ---- shell argv and wrappers ------------------------------------------- */

static void test_shell_wrapper_prefix(void **state)
{
    shexec_session *s = *state;
    char here[4096], wrap[4200];
    assert_non_null(getcwd(here, sizeof here));
    snprintf(wrap, sizeof wrap, "%s/test/data/wrap.sh", here);
    const char *argv[] = {wrap, "/bin/bash", NULL};
    assert_int_equal(shexec_session_set_shell(s, argv, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    shexec_run *r = run_cmd(s, "cd /tmp && echo in $PWD");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "in /tmp\n");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "wrapped\n");
    assert_string_equal(shexec_session_cwd(s), "/tmp");
    shexec_run_free(r);
    expect(s, "exit 9", "", 9, "/tmp");

    /* a name looked up in PATH, with arguments: env -i clears everything */
    setenv("SHEXEC_VISIBLE", "1", 1);
    const char *envi[] = {"env", "-i", "/bin/sh", NULL};
    assert_int_equal(shexec_session_set_shell(s, envi, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    expect(s, "echo ${SHEXEC_VISIBLE-gone}; cd /usr", "gone\n", 0, "/usr");
    unsetenv("SHEXEC_VISIBLE");

    /* a name is looked up when it is set: not found is an error then, and
     * the previous setting stays */
    const char *missing[] = {"no-such-wrapper-program", "/bin/sh", NULL};
    assert_int_equal(shexec_session_set_shell(s, missing, SHEXEC_WRAPPER_LOCAL), SHEXEC_ESPAWN);
    assert_non_null(strstr(shexec_session_errmsg(s), "no-such-wrapper-program"));
    expect(s, "echo ${SHEXEC_VISIBLE-gone}", "gone\n", 0, "/usr");
    /* also with a remote kind: neither the program, nor the kind, nor the
     * cwd (which a remote kind would reset) changes */
    assert_int_equal(shexec_session_set_shell(s, missing, SHEXEC_WRAPPER_REMOTE), SHEXEC_ESPAWN);
    assert_int_equal(shexec_session_wrapper_kind(s), SHEXEC_WRAPPER_LOCAL);
    assert_string_equal(shexec_session_cwd(s), "/usr");
    const char *const *got = shexec_session_shell_argv(s);
    assert_non_null(got);
    assert_string_equal(got[0], "env");
    assert_string_equal(got[1], "-i");
    assert_string_equal(got[2], "/bin/sh");
    assert_null(got[3]);
    /* an absolute path that does not exist fails when a command starts
     * (not under valgrind: it cannot follow an execve that fails in a vfork
     * child) */
    const char *absent[] = {"/nonexistent/wrapper", "/bin/sh", NULL};
    assert_int_equal(shexec_session_set_shell(s, absent, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    const char *vg = getenv("VALGRIND");
    if (!(vg && strcmp(vg, "1") == 0)) {
        assert_int_equal(shexec_run_new(&r, s, "true"), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_ESPAWN);
        assert_non_null(strstr(shexec_session_errmsg(s), "/nonexistent/wrapper"));
        shexec_run_free(r);
    }

    const char *empty[] = {NULL};
    assert_int_equal(shexec_session_set_shell(s, empty, SHEXEC_WRAPPER_LOCAL), SHEXEC_EINVAL);
    const char *blank[] = {"", NULL};
    assert_int_equal(shexec_session_set_shell(s, blank, SHEXEC_WRAPPER_LOCAL), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_shell(s, NULL, -1), SHEXEC_EINVAL);
    assert_string_equal(shexec_session_shell_argv(s)[0], "/nonexistent/wrapper");
    assert_int_equal(shexec_session_set_shell(NULL, NULL, SHEXEC_WRAPPER_LOCAL), SHEXEC_EINVAL);
    assert_null(shexec_session_shell_argv(NULL));
    assert_int_equal(shexec_session_wrapper_kind(NULL), SHEXEC_WRAPPER_LOCAL);
    assert_int_equal(shexec_session_set_shell(s, NULL, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    assert_null(shexec_session_shell_argv(s)); /* the default */
    expect(s, "echo back", "back\n", 0, "/usr");
}

static void write_script(const char *path, const char *body)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(body, f);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
}

#ifndef SHX_TEST_NO_TOOLS /* read after a tool call */
static int file_contains(const char *path, const char *text)
{
    char buf[65536];
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, text) != NULL;
}
#endif

/*
 * The program that runs the wrapper is the host's choice: a tool call's env
 * (a PATH the model chose) or cwd cannot make another program of the same
 * name run on the host, and the run's variables reach only the command,
 * inside the wrapper; the wrapper itself sees the session's environment.
 */
static void test_wrapper_program_chosen_by_host(void **state)
{
    shexec_session *s = *state;
    const char *base = tu_mkdtemp();
    char legit[600], evil[600], script[2048], path[700], marker[700], record[700];
    snprintf(legit, sizeof legit, "%s/legit", base);
    snprintf(evil, sizeof evil, "%s/evil", base);
    snprintf(marker, sizeof marker, "%s/evil-ran", base);
    snprintf(record, sizeof record, "%s/wrapper-env", base);
    assert_int_equal(mkdir(legit, 0700), 0);
    assert_int_equal(mkdir(evil, 0700), 0);
    snprintf(path, sizeof path, "%s/fakewrap", legit);
    snprintf(script, sizeof script, "#!/bin/sh\nenv > '%s'\nexec \"$@\"\n", record);
    write_script(path, script);
    snprintf(path, sizeof path, "%s/fakewrap", evil);
    snprintf(script, sizeof script, "#!/bin/sh\n/usr/bin/touch '%s'\nexec \"$@\"\n", marker);
    write_script(path, script);

    /* the host's PATH finds the legitimate wrapper when it is set */
    char *old_path = strdup(getenv("PATH"));
    char host_path[8192];
    snprintf(host_path, sizeof host_path, "%s:%s", legit, old_path);
    setenv("PATH", host_path, 1);
    const char *argv[] = {"fakewrap", "/bin/bash", NULL};
    assert_int_equal(shexec_session_set_shell(s, argv, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    setenv("PATH", old_path, 1);
    free(old_path);

    /* the host chooses the wrapper's environment */
    assert_int_equal(shexec_session_set_env_inherit(s, 0), SHEXEC_OK);
    assert_int_equal(shexec_session_setenv(s, "PATH", "/usr/bin:/bin"), SHEXEC_OK);
    assert_int_equal(shexec_session_setenv(s, "HOSTVAR", "h"), SHEXEC_OK);
    char want[2048];
#ifndef SHX_TEST_NO_TOOLS /* TOOLS=0: the library has no tool layer */
    assert_int_equal(shexec_tool_set_enabled(s, "bash", 1), SHEXEC_OK);

    char args[4096];
    snprintf(args, sizeof args,
             "{\"command\":\"echo \\\"$RUNVAR|$PATH|${GONE-unset}|${LD_PRELOAD-none}\\\"; cd /tmp\","
             "\"cwd\":\"%s\",\"env\":{\"PATH\":\"%s\",\"RUNVAR\":\"r v\\nx\",\"LD_PRELOAD\":\"/x.so\"}}",
             evil, evil);
    char *out = NULL;
    assert_int_equal(shexec_tool_call(&out, s, "bash", args), SHEXEC_OK);
    snprintf(want, sizeof want, "\"stdout\":\"r v\\nx|%s|unset|none\\n\"", evil);
    if (!strstr(out, want))
        fail_msg("result %s, expected %s", out, want);
    free(out);
    assert_int_equal(access(marker, F_OK), -1); /* the planted program never ran */
    assert_true(file_contains(record, "HOSTVAR=h\n"));
    assert_true(file_contains(record, "PATH=/usr/bin:/bin\n"));
    assert_false(file_contains(record, "RUNVAR"));
    char evil_path[700];
    snprintf(evil_path, sizeof evil_path, "PATH=%s", evil);
    assert_false(file_contains(record, evil_path));
    assert_string_equal(shexec_session_cwd(s), "/"); /* a call with its own cwd keeps it */
#endif

    /* a run's unset reaches the command too, and so do a session variable
     * and the run's cwd */
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "echo \"${HOSTVAR-unset}\"; pwd"), SHEXEC_OK);
    assert_int_equal(shexec_run_setenv(r, "HOSTVAR", NULL), SHEXEC_OK);
    assert_int_equal(shexec_run_set_cwd(r, evil), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    snprintf(want, sizeof want, "unset\n%s\n", evil);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), want);
    shexec_run_free(r);
    assert_int_equal(access(marker, F_OK), -1);

    /* a name no shell can export is refused, not dropped */
    assert_int_equal(shexec_run_new(&r, s, "true"), SHEXEC_OK);
    assert_int_equal(shexec_run_setenv(r, "A.B", "1"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_EINVAL);
    assert_non_null(strstr(shexec_session_errmsg(s), "A.B"));
    shexec_run_free(r);

    /* a relative wrapper path is the host's, made absolute when set: a run
     * in another directory (with a planted program of that name) runs the
     * host's */
    char here[4096];
    assert_non_null(getcwd(here, sizeof here));
    assert_int_equal(chdir(legit), 0);
    const char *rel[] = {"./fakewrap", "/bin/sh", NULL};
    assert_int_equal(shexec_session_set_shell(s, rel, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    assert_int_equal(chdir(here), 0);
    assert_int_equal(unlink(record), 0);
    assert_int_equal(shexec_run_new(&r, s, "true"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_cwd(r, evil), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_exit_code(r), 0);
    shexec_run_free(r);
    assert_int_equal(access(marker, F_OK), -1);
    assert_int_equal(access(record, F_OK), 0);
    tu_rmtree(base);
}

/* A session whose shell is test/data/wrap.sh around bash: the run's own
 * variables reach the command through the prelude. */
static void set_test_wrapper(shexec_session *s)
{
    char here[4096], wrap[4200];
    assert_non_null(getcwd(here, sizeof here));
    snprintf(wrap, sizeof wrap, "%s/test/data/wrap.sh", here);
    const char *argv[] = {wrap, "/bin/bash", NULL};
    assert_int_equal(shexec_session_set_shell(s, argv, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
}

/*
 * Inside a wrapper program the run's own variables are filtered by the rule
 * an environment is built by: a name the deny list matches is dropped
 * unless an allow glob matches it too. Every kind of glob takes part
 * (literal, NAME*, *SUFFIX, fnmatch), and so does a name too long for the
 * stack copy fnmatch needs.
 */
static void test_wrapper_run_vars_denied_unless_allowed(void **state)
{
    shexec_session *s = *state;
    set_test_wrapper(s);
    assert_int_equal(shexec_session_env_deny(s, "SECRET_*"), SHEXEC_OK);
    assert_int_equal(shexec_session_env_deny(s, "TOKEN_[0-9]*"), SHEXEC_OK);
    assert_int_equal(shexec_session_env_allow(s, "SECRET_OK"), SHEXEC_OK);
    assert_int_equal(shexec_session_env_allow(s, "*_PUBLIC"), SHEXEC_OK);

    char longname[400], longpub[sizeof longname + 8];
    memset(longname, 0, sizeof longname);
    memcpy(longname, "TOKEN_9", 7);
    memset(longname + 7, 'Q', 300);
    snprintf(longpub, sizeof longpub, "%s_PUBLIC", longname);
    static const struct { const char *name, *value; } vars[] = {
        {"LD_LIBRARY_PATH", "/opt/lib"}, /* the default deny list */
        {"LD_PRELOAD", "/x.so"},
        {"SECRET_A", "a"},
        {"SECRET_OK", "ok"},
        {"TOKEN_1", "t"},
        {"TOKEN_1_PUBLIC", "p"},
        {"PLAIN", "plain"},
    };
    const char *cmd = "echo \"${LD_LIBRARY_PATH-unset}|${LD_PRELOAD-unset}|${SECRET_A-unset}|"
                      "${SECRET_OK-unset}|${TOKEN_1-unset}|${TOKEN_1_PUBLIC-unset}|"
                      "${PLAIN-unset}\"; env | grep '^TOKEN_9' | cut -c300- | sort";
    const char *want[2] = {"unset|unset|unset|ok|unset|p|plain\nQQQQQQQQ_PUBLIC=long-allowed\n",
                           "/opt/lib|unset|unset|ok|unset|p|plain\nQQQQQQQQ_PUBLIC=long-allowed\n"};
    for (int pass = 0; pass < 2; pass++) {
        /* the second time, an allow glob lets a default-denied name through */
        if (pass == 1)
            assert_int_equal(shexec_session_env_allow(s, "LD_LIBRARY_PATH"), SHEXEC_OK);
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
        for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
            assert_int_equal(shexec_run_setenv(r, vars[i].name, vars[i].value), SHEXEC_OK);
        assert_int_equal(shexec_run_setenv(r, longname, "long-denied"), SHEXEC_OK);
        assert_int_equal(shexec_run_setenv(r, longpub, "long-allowed"), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), want[pass]);
        assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "wrapped\n");
        assert_int_equal(shexec_run_exit_code(r), 0);
        shexec_run_free(r);
    }
}

/*
 * The names a shell inside a wrapper can export are the shell's
 * identifiers, [A-Za-z_][A-Za-z0-9_]*, whatever locale the host set: a
 * letter of a single-byte locale's alphabet is refused like any other
 * byte. (Skipped where no such locale can be made: localedef and its
 * sources, Debian's locales package.)
 */
static void test_wrapper_run_var_names_in_any_locale(void **state)
{
    shexec_session *s = *state;
    const char *dir = tu_mkdtemp();
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "localedef -i fr_FR -f ISO-8859-1 '%s/fr_FR.ISO-8859-1' "
             ">/dev/null 2>&1", dir);
    int made = system(cmd) == 0;
    setenv("LOCPATH", dir, 1);
    int latin1 = made && setlocale(LC_CTYPE, "fr_FR.ISO-8859-1") != NULL && isalpha(0xC9);
    if (!latin1) {
        setlocale(LC_CTYPE, "C");
        unsetenv("LOCPATH");
        tu_rmtree(dir);
        fprintf(stderr, "test_session: no ISO-8859-1 locale could be made: skipped\n");
        skip();
    }
    set_test_wrapper(s);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "true"), SHEXEC_OK);
    assert_int_equal(shexec_run_setenv(r, "CAF\xC9", "1"), SHEXEC_OK);
    int rc = shexec_run_exec(r);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", shexec_session_errmsg(s));
    shexec_run_free(r);
    setlocale(LC_CTYPE, "C");
    unsetenv("LOCPATH");
    tu_rmtree(dir);
    assert_int_equal(rc, SHEXEC_EINVAL);
    assert_non_null(strstr(msg, "CAF\xC9"));
}

/* Every setting reads back: the defaults, what was set, what a refused set
 * left, and the defaults again for a NULL session. */
static void test_settings_read_back(void **state)
{
    shexec_session *s = *state;
    uint32_t def = 1, max = 1;
    uint64_t limit = 1;
    int unit = -1, keep = -1;

    /* a new session: the documented defaults */
    assert_int_equal(shexec_session_timeouts_ms(s, &def, &max), SHEXEC_OK);
    assert_int_equal(def, SHEXEC_DEFAULT_TIMEOUT_MS);
    assert_int_equal(max, SHEXEC_DEFAULT_MAX_TIMEOUT_MS);
    assert_int_equal(shexec_session_kill_grace_ms(s), SHEXEC_DEFAULT_KILL_GRACE_MS);
    assert_int_equal(shexec_session_output_limit(s, &limit, &unit, &keep), SHEXEC_OK);
    assert_int_equal(limit, SHEXEC_DEFAULT_OUTPUT_LIMIT);
    assert_int_equal(unit, SHEXEC_UNIT_CHARS);
    assert_int_equal(keep, SHEXEC_KEEP_HEAD);
    assert_int_equal(shexec_session_env_inherit(s), 1);
    assert_null(shexec_session_shell_argv(s));
    assert_int_equal(shexec_session_wrapper_kind(s), SHEXEC_WRAPPER_LOCAL);
    assert_int_equal(shexec_session_persist_env(s), 0);
    assert_int_equal(shexec_session_max_tasks(s), SHEXEC_DEFAULT_MAX_TASKS);
    assert_int_equal(shexec_session_on_leftovers(s), SHEXEC_ON_LEFTOVERS_ADOPT);
    assert_int_equal(shexec_session_watchdog(s), 0);

    /* set, then get */
    assert_int_equal(shexec_session_set_timeouts_ms(s, 1500, 9000), SHEXEC_OK);
    assert_int_equal(shexec_session_timeouts_ms(s, &def, &max), SHEXEC_OK);
    assert_int_equal(def, 1500);
    assert_int_equal(max, 9000);
    assert_int_equal(shexec_session_set_kill_grace_ms(s, 0), SHEXEC_OK);
    assert_int_equal(shexec_session_kill_grace_ms(s), 0);
    assert_int_equal(shexec_session_set_kill_grace_ms(s, 250), SHEXEC_OK);
    assert_int_equal(shexec_session_kill_grace_ms(s), 250);
    assert_int_equal(shexec_session_set_output_limit(s, 4096, SHEXEC_UNIT_BYTES,
                                                     SHEXEC_KEEP_HEAD_TAIL), SHEXEC_OK);
    assert_int_equal(shexec_session_output_limit(s, &limit, &unit, &keep), SHEXEC_OK);
    assert_int_equal(limit, 4096);
    assert_int_equal(unit, SHEXEC_UNIT_BYTES);
    assert_int_equal(keep, SHEXEC_KEEP_HEAD_TAIL);
    assert_int_equal(shexec_session_output_limit(s, NULL, NULL, &keep), SHEXEC_OK);
    assert_int_equal(keep, SHEXEC_KEEP_HEAD_TAIL);
    assert_int_equal(shexec_session_set_env_inherit(s, 0), SHEXEC_OK);
    assert_int_equal(shexec_session_env_inherit(s), 0);
    assert_int_equal(shexec_session_set_env_inherit(s, 5), SHEXEC_OK); /* any non-zero: 1 */
    assert_int_equal(shexec_session_env_inherit(s), 1);
    assert_int_equal(shexec_session_set_max_tasks(s, 3), SHEXEC_OK);
    assert_int_equal(shexec_session_max_tasks(s), 3);
    assert_int_equal(shexec_session_set_on_leftovers(s, SHEXEC_ON_LEFTOVERS_KILL), SHEXEC_OK);
    assert_int_equal(shexec_session_on_leftovers(s), SHEXEC_ON_LEFTOVERS_KILL);
    /* PERSIST=0: turning it on fails (test_persist), and it reads off */
    int has_persist = (shx_test_platform() & SHX_PLATFORM_PERSIST) != 0;
    assert_int_equal(shexec_session_set_persist_env(s, 1), has_persist ? SHEXEC_OK : SHEXEC_ESYS);
    assert_int_equal(shexec_session_persist_env(s), has_persist);
    /* WATCHDOG=0: turning it on fails (test_watchdog), and it reads off */
    int has_watchdog = (shx_test_platform() & SHX_PLATFORM_WATCHDOG) != 0;
    assert_int_equal(shexec_session_set_watchdog(s, 1), has_watchdog ? SHEXEC_OK : SHEXEC_ESYS);
    assert_int_equal(shexec_session_watchdog(s), has_watchdog);
    assert_int_equal(shexec_session_set_watchdog(s, 0), SHEXEC_OK);
    assert_int_equal(shexec_session_watchdog(s), 0);

    /* a refused set leaves the value as it was */
    assert_int_equal(shexec_session_set_timeouts_ms(s, 9001, 9000), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_timeouts_ms(s, 0, 9000), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_timeouts_ms(s, &def, NULL), SHEXEC_OK);
    assert_int_equal(def, 1500);
    assert_int_equal(shexec_session_set_output_limit(s, 10, 9, SHEXEC_KEEP_HEAD), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_output_limit(s, (1ull << 30) + 1, SHEXEC_UNIT_BYTES,
                                                     SHEXEC_KEEP_HEAD), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_output_limit(s, &limit, &unit, &keep), SHEXEC_OK);
    assert_int_equal(limit, 4096);
    assert_int_equal(unit, SHEXEC_UNIT_BYTES);
    assert_int_equal(shexec_session_set_on_leftovers(s, 9), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_on_leftovers(s), SHEXEC_ON_LEFTOVERS_KILL);

    /* a NULL session reads as the defaults; the two-value getters say EINVAL */
    def = max = 1;
    assert_int_equal(shexec_session_timeouts_ms(NULL, &def, &max), SHEXEC_EINVAL);
    assert_int_equal(def, SHEXEC_DEFAULT_TIMEOUT_MS);
    assert_int_equal(max, SHEXEC_DEFAULT_MAX_TIMEOUT_MS);
    limit = 1;
    unit = keep = -1;
    assert_int_equal(shexec_session_output_limit(NULL, &limit, &unit, &keep), SHEXEC_EINVAL);
    assert_int_equal(limit, SHEXEC_DEFAULT_OUTPUT_LIMIT);
    assert_int_equal(unit, SHEXEC_UNIT_CHARS);
    assert_int_equal(keep, SHEXEC_KEEP_HEAD);
    assert_int_equal(shexec_session_timeouts_ms(NULL, NULL, NULL), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_kill_grace_ms(NULL), SHEXEC_DEFAULT_KILL_GRACE_MS);
    assert_int_equal(shexec_session_env_inherit(NULL), 1);
    assert_int_equal(shexec_session_max_tasks(NULL), SHEXEC_DEFAULT_MAX_TASKS);
    assert_int_equal(shexec_session_on_leftovers(NULL), SHEXEC_ON_LEFTOVERS_ADOPT);
    assert_int_equal(shexec_session_watchdog(NULL), 0);
    assert_int_equal(shexec_session_persist_env(NULL), 0);
    assert_null(shexec_session_shell_argv(NULL));
    assert_null(shexec_session_cwd(NULL));
}

static void test_logical_cwd_through_symlink(void **state)
{
    shexec_session *s = *state;
    const char *base = tu_mkdtemp();
    char real[600], link[600], cmd[1400];
    snprintf(real, sizeof real, "%s/real", base);
    snprintf(link, sizeof link, "%s/link", base);
    mkdir(real, 0700);
    assert_int_equal(symlink(real, link), 0);
    snprintf(cmd, sizeof cmd, "cd '%s'", link);
    expect(s, cmd, "", 0, link);
    /* the next command starts in the same logical directory */
    snprintf(cmd, sizeof cmd, "%s\n", link);
    expect(s, "pwd", cmd, 0, link);
    tu_rmtree(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_nonce_per_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cd_persists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_initial_cwd_is_host_cwd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_codes_every_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrapper_failures_elsewhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_keeps_cwd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged_sentinels_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged_record_validated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_weird_directory_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_cwd_falls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sentinel_split_across_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged_tag_does_not_hold_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sentinel_before_truncation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_policies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dangerous_variables_filtered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overrides_and_replace_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_environ_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_environment_follows_each_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shell_wrapper_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrapper_program_chosen_by_host, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrapper_run_vars_denied_unless_allowed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_wrapper_run_var_names_in_any_locale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_logical_cwd_through_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_settings_read_back, setup, teardown),
    };
    return cmocka_run_group_tests_name("session", tests, NULL, NULL);
}
