/*
 * test_wrappers.c - wrapper programs of both kinds, for real.
 *
 * A local wrapper passes descriptors (bubblewrap): the record comes back
 * on its private channel through it. A remote wrapper carries only stdin,
 * stdout and stderr (ssh, here to an sshd this test starts on a 127.0.0.1
 * port with throwaway keys): the record comes in-band, the script and the
 * command survive ssh's join-and-reparse of its arguments, the cwd names a
 * directory on the other side and is checked there, and a timeout ends
 * the remote command too (ssh -tt: the remote terminal is hung up).
 *
 * Each part skips with a message only when its program is not installed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shx/buf.h"
#include "shexec.h"
#include "testutil.h"

#define SSHD "/usr/sbin/sshd"

static char g_tmp[PATH_MAX];   /* the test's files: keys, sshd config, work dirs */
static pid_t g_sshd = -1;
static int g_port;
static char g_port_s[16], g_key[PATH_MAX + 16];

static int exists(const char *path)
{
    return access(path, X_OK) == 0;
}

static const char *find_bin(const char *name)
{
    static char buf[4][PATH_MAX];
    static int next;
    const char *dirs[] = {"/usr/bin", "/bin", "/usr/sbin", "/sbin", NULL};
    for (int i = 0; dirs[i]; i++) {
        char *b = buf[next % 4];
        snprintf(b, PATH_MAX, "%s/%s", dirs[i], name);
        if (exists(b)) {
            next++;
            return b;
        }
    }
    return NULL;
}

static int sh(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

static int port_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* sshd on 127.0.0.1:<free port>, a throwaway host key and client key. */
static int start_sshd(void)
{
    if (!exists(SSHD) || !find_bin("ssh") || !find_bin("ssh-keygen"))
        return -1;
    char cmd[5 * PATH_MAX];
    snprintf(cmd, sizeof cmd,
             "ssh-keygen -q -t ed25519 -N '' -f '%s/hostkey' && "
             "ssh-keygen -q -t ed25519 -N '' -f '%s/key' && cp '%s/key.pub' '%s/authorized_keys'",
             g_tmp, g_tmp, g_tmp, g_tmp);
    if (sh(cmd) != 0)
        return -1;
    if (geteuid() == 0)
        mkdir("/run/sshd", 0755); /* its privilege separation directory */
    g_port = free_port();
    if (g_port <= 0)
        return -1;
    snprintf(g_port_s, sizeof g_port_s, "%d", g_port);
    snprintf(g_key, sizeof g_key, "%s/key", g_tmp);
    char conf[PATH_MAX + 16];
    snprintf(conf, sizeof conf, "%s/sshd_config", g_tmp);
    FILE *f = fopen(conf, "w");
    if (!f)
        return -1;
    fprintf(f,
            "ListenAddress 127.0.0.1\nPort %d\nHostKey %s/hostkey\n"
            "AuthorizedKeysFile %s/authorized_keys\nPidFile none\nStrictModes no\n"
            "UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\n"
            "AcceptEnv none\nLogLevel ERROR\n",
            g_port, g_tmp, g_tmp);
    fclose(f);
    /* started through a middle process that exits, so that sshd is not a
     * child of the tests (their leak checks count children) */
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t mid = fork();
    if (mid < 0)
        return -1;
    if (mid == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            int null = open("/dev/null", O_RDWR);
            char log[PATH_MAX + 16];
            snprintf(log, sizeof log, "%s/sshd.log", g_tmp);
            int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
            dup2(null, 0);
            dup2(null, 1);
            dup2(logfd >= 0 ? logfd : null, 2);
            close(p[0]);
            close(p[1]);
            execl(SSHD, SSHD, "-D", "-e", "-f", conf, (char *)NULL);
            _exit(127);
        }
        ssize_t w = write(p[1], &pid, sizeof pid);
        _exit(w == (ssize_t)sizeof pid ? 0 : 1);
    }
    close(p[1]);
    pid_t pid = -1;
    if (read(p[0], &pid, sizeof pid) != (ssize_t)sizeof pid)
        pid = -1;
    close(p[0]);
    waitpid(mid, NULL, 0);
    if (pid <= 0)
        return -1;
    g_sshd = pid;
    for (int i = 0; i < 500; i++) {
        if (port_open(g_port))
            return 0;
        if (kill(pid, 0) != 0) {
            g_sshd = -1;
            return -1;
        }
        usleep(10000);
    }
    return -1;
}

static int group_setup(void **state)
{
    (void)state;
    const char *d = tu_mkdtemp();
    assert_non_null(d);
    snprintf(g_tmp, sizeof g_tmp, "%s", d);
    if (start_sshd() != 0 && exists(SSHD))
        fprintf(stderr, "test_wrappers: sshd did not start\n");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (g_sshd > 0) {
        kill(g_sshd, SIGTERM);
        tu_wait_pid_gone(g_sshd, 5000);
    }
    tu_rmtree(g_tmp);
    return 0;
}

static shexec_run *run_in(shexec_session *s, const char *cmd, uint32_t timeout_ms)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    if (timeout_ms)
        assert_int_equal(shexec_run_set_timeout_ms(r, timeout_ms), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    return r;
}

static void expect_out(shexec_run *r, const char *out, size_t out_len, const char *err)
{
    size_t n = 0;
    const char *got = shexec_run_output(r, SHEXEC_STDOUT, &n);
    if (n != out_len || memcmp(got, out, n) != 0)
        fail_msg("stdout [%.*s] (%zu bytes), expected %zu bytes; stderr [%s]", (int)n, got, n,
                 out_len, shexec_run_output(r, SHEXEC_STDERR, NULL));
    if (err)
        assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), err);
}

/* What both kinds must do: cwd, exit codes, output byte for byte, the
 * record kept out of a redirected stdout, quoting, run variables. */
static void common_checks(shexec_session *s, const char *work, int shell_is_bash)
{
    char sub[PATH_MAX + 32], cmd[4 * PATH_MAX];
    snprintf(sub, sizeof sub, "%s/sub dir", work);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cd '%s' && pwd", sub, sub);
    shexec_run *r = run_in(s, cmd, 0);
    assert_int_equal(shexec_run_exit_code(r), 0);
    char want[2 * PATH_MAX];
    snprintf(want, sizeof want, "%s\n", sub);
    expect_out(r, want, strlen(want), "");
    assert_string_equal(shexec_session_cwd(s), sub);
    shexec_run_free(r);

    /* the next command starts there */
    r = run_in(s, "pwd; exit 7", 0);
    assert_int_equal(shexec_run_exit_code(r), 7);
    expect_out(r, want, strlen(want), "");
    shexec_run_free(r);

    /* output exactly as written: NUL bytes, no final newline, both streams,
     * quotes and dollars that a reparse would break */
    r = run_in(s, "printf 'a\\000b'; printf \"it's \\$HOME %s\" 'x\"y' >&2", 0);
    assert_int_equal(shexec_run_exit_code(r), 0);
    expect_out(r, "a\0b", 3, "it's $HOME x\"y");
    shexec_run_free(r);

    /* a redirected stdout does not take the record with it */
    char file[PATH_MAX + 32];
    snprintf(file, sizeof file, "%s/redirected.txt", work);
    snprintf(cmd, sizeof cmd, "exec >'%s'; echo into-file; cd ..", file);
    r = run_in(s, cmd, 0);
    expect_out(r, "", 0, "");
    assert_string_equal(shexec_session_cwd(s), work);
    shexec_run_free(r);
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
    assert_int_equal(st.st_size, 10);

    /* set -x shows the command only */
    r = run_in(s, "set -x; echo hi", 0);
    expect_out(r, "hi\n", 3, "+ echo hi\n");
    shexec_run_free(r);

    /* the run's own variables, with characters a reparse would break */
    r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "printf '%s' \"$WRAPPED_VAR\""), SHEXEC_OK);
    assert_int_equal(shexec_run_setenv(r, "WRAPPED_VAR", "a b'c\"$d"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    expect_out(r, "a b'c\"$d", 8, "");
    shexec_run_free(r);

    /* `exit N` after cd still reports */
    snprintf(cmd, sizeof cmd, "cd '%s'; exit 4", sub);
    r = run_in(s, cmd, 0);
    assert_int_equal(shexec_run_exit_code(r), 4);
    assert_string_equal(shexec_session_cwd(s), sub);
    shexec_run_free(r);
    (void)shell_is_bash;
}

/* bash through a local wrapper reads the prelude from BASH_ENV, as it does
 * when it runs directly. Whether the wrapper passes BASH_ENV on (env does;
 * env -i and sudo clear it) is learnt before its first command by a run of
 * the library's own, so the first command already reports, and its -c
 * string is the command alone where BASH_ENV passes; where it does not, the
 * loader is on the command's first line. */
static void test_wrapper_that_clears_the_environment(void **state)
{
    (void)state;
    tu_leak_begin();
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    const char *keeps[] = {"env", "/bin/bash", NULL};
    assert_int_equal(shexec_session_set_shell(s, keeps, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    assert_int_equal(shexec_session_set_cwd(s, "/"), SHEXEC_OK);
    const char *probe = "printf '%s|' \"$BASH_EXECUTION_STRING\" \"${BASH_ENV-unset}\"; cd /usr";
    shexec_run *r = run_in(s, probe, 0);
    shx_buf want = SHX_BUF_INIT;
    shx_buf_printf(&want, "%s|unset|", probe);
    expect_out(r, want.data, want.len, "");
    shx_buf_free(&want);
    assert_string_equal(shexec_session_cwd(s), "/usr");
    assert_string_equal(shexec_run_notice(r), "");
    shexec_run_free(r);

    const char *clears[] = {"env", "-i", "/bin/bash", NULL};
    assert_int_equal(shexec_session_set_shell(s, clears, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    /* the first command already reports */
    for (int i = 0; i < 3; i++) {
        r = run_in(s, i == 0 ? "cd /tmp" : i == 1 ? "cd /usr; exit 4" : "cd /", 0);
        assert_int_equal(shexec_run_exit_code(r), i == 1 ? 4 : 0);
        assert_string_equal(shexec_session_cwd(s), i == 0 ? "/tmp" : i == 1 ? "/usr" : "/");
        assert_string_equal(shexec_run_notice(r), "");
        shexec_run_free(r);
    }
    shexec_session_free(s);
    tu_leak_end();
}

static void test_bubblewrap_passes_the_channel(void **state)
{
    (void)state;
    const char *bwrap = find_bin("bwrap");
    if (!bwrap) {
        fprintf(stderr, "test_wrappers: bwrap is not installed (Debian: bubblewrap): skipped\n");
        skip();
    }
    tu_leak_begin();
    char work[PATH_MAX + 16];
    snprintf(work, sizeof work, "%s/bwrap", g_tmp);
    assert_int_equal(mkdir(work, 0700), 0);
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    const char *argv[] = {bwrap,  "--ro-bind", "/",  "/", "--dev", "/dev", "--proc", "/proc",
                          "--bind", g_tmp,     g_tmp, "--unshare-pid", "--die-with-parent",
                          "/bin/bash", NULL};
    assert_int_equal(shexec_session_set_shell(s, argv, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    assert_int_equal(shexec_session_wrapper_kind(s), SHEXEC_WRAPPER_LOCAL);
    assert_int_equal(shexec_session_set_cwd(s, work), SHEXEC_OK);
    common_checks(s, work, 1);

    shexec_run *r;
    /* a large command travels through the descriptor */
    shx_buf big = SHX_BUF_INIT;
    shx_buf_puts(&big, "cat > big.txt <<'EOF'\n");
    for (int i = 0; i < 4000; i++)
        shx_buf_printf(&big, "%049d\n", i);
    shx_buf_puts(&big, "EOF\nwc -c < big.txt");
    r = run_in(s, big.data, 0);
    assert_int_equal(shexec_run_exit_code(r), 0);
    expect_out(r, "200000\n", 7, "");
    shexec_run_free(r);
    shx_buf_free(&big);

    /* a timeout ends it */
    int64_t t0 = tu_now_ms();
    r = run_in(s, "sleep 30", 300);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    assert_true(tu_now_ms() - t0 < 10000);
    shexec_run_free(r);
    shexec_session_free(s);
    tu_leak_end();
}

static void ssh_argv(const char **argv, int tty, const char *shell)
{
    int i = 0;
    argv[i++] = "ssh";
    argv[i++] = tty ? "-tt" : "-T";
    argv[i++] = "-p";
    argv[i++] = g_port_s;
    argv[i++] = "-i";
    argv[i++] = g_key;
    argv[i++] = "-o";
    argv[i++] = "StrictHostKeyChecking=no";
    argv[i++] = "-o";
    argv[i++] = "UserKnownHostsFile=/dev/null";
    argv[i++] = "-o";
    argv[i++] = "BatchMode=yes";
    argv[i++] = "-o";
    argv[i++] = "LogLevel=ERROR";
    argv[i++] = "127.0.0.1";
    argv[i++] = shell;
    argv[i] = NULL;
}

static void need_sshd(void)
{
    if (!exists(SSHD)) {
        fprintf(stderr, "test_wrappers: %s is not installed (Debian: openssh-server): skipped\n",
                SSHD);
        skip();
    }
    if (g_sshd <= 0)
        fail_msg("sshd is installed but did not start");
}

static void test_ssh_in_band(void **state)
{
    (void)state;
    need_sshd();
    tu_leak_begin();
    char work[PATH_MAX + 16];
    snprintf(work, sizeof work, "%s/ssh", g_tmp);
    assert_int_equal(mkdir(work, 0700), 0);
    const char *shells[] = {"sh", "bash"};
    for (int k = 0; k < 2; k++) {
        shexec_session *s = NULL;
        assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
        const char *argv[20];
        ssh_argv(argv, 0, shells[k]);
        /* an unknown kind changes nothing: program, kind and cwd stay */
        char before[PATH_MAX];
        snprintf(before, sizeof before, "%s", shexec_session_cwd(s));
        assert_int_equal(shexec_session_set_shell(s, argv, 7), SHEXEC_EINVAL);
        assert_null(shexec_session_shell_argv(s));
        assert_int_equal(shexec_session_wrapper_kind(s), SHEXEC_WRAPPER_LOCAL);
        assert_string_equal(shexec_session_cwd(s), before);
        assert_int_equal(shexec_session_set_shell(s, argv, SHEXEC_WRAPPER_REMOTE_SHELL), SHEXEC_OK);
        assert_int_equal(shexec_session_wrapper_kind(s), SHEXEC_WRAPPER_REMOTE_SHELL);
        assert_string_equal(shexec_session_shell_argv(s)[0], argv[0]);
        /* the remote side's starting directory until a command reports one */
        assert_string_equal(shexec_session_cwd(s), "");
        shexec_run *r = run_in(s, "true", 0);
        assert_int_equal(shexec_run_exit_code(r), 0);
        assert_true(shexec_session_cwd(s)[0] == '/');
        shexec_run_free(r);

        assert_int_equal(shexec_session_set_cwd(s, work), SHEXEC_OK);
        common_checks(s, work, k == 1);

        /* a directory that does not exist on the other side (removed, or a
         * forged report) locks nothing: the command starts in its nearest
         * existing ancestor there, and says so on stderr */
        assert_int_equal(shexec_session_set_cwd(s, "/nonexistent/remote dir"), SHEXEC_OK);
        r = run_in(s, "pwd", 0);
        assert_int_equal(shexec_run_exit_code(r), 0);
        expect_out(r, "/\n", 2, NULL);
        assert_non_null(strstr(shexec_run_output(r, SHEXEC_STDERR, NULL), "does not exist"));
        assert_string_equal(shexec_session_cwd(s), "/");
        shexec_run_free(r);

        /* the PWD variable does not move it */
        assert_int_equal(shexec_session_set_cwd(s, work), SHEXEC_OK);
        shexec_run_free(run_in(s, "PWD=/etc; true", 0));
        assert_string_equal(shexec_session_cwd(s), work);

        /* a command too big for the remote exec limit is refused up front */
        size_t n = 200 * 1024;
        char *big = malloc(n + 1);
        memset(big, ' ', n);
        memcpy(big, "true", 4);
        big[n] = '\0';
        assert_int_equal(shexec_run_new(&r, s, big), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_E2BIG);
        assert_non_null(strstr(shexec_session_errmsg(s), "remote"));
        shexec_run_free(r);
        free(big);

        /* back to local: the host's cwd again */
        assert_int_equal(shexec_session_set_shell(s, argv, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
        char here[PATH_MAX];
        assert_non_null(getcwd(here, sizeof here));
        assert_string_equal(shexec_session_cwd(s), here);
        shexec_session_free(s);
    }
    tu_leak_end();
}

/* With ssh -tt the remote command has a terminal, which the remote side
 * hangs up when the connection closes: a timeout that ends the local ssh
 * ends the remote command too. */
static void test_ssh_timeout_ends_remote_command(void **state)
{
    (void)state;
    need_sshd();
    tu_leak_begin();
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    const char *argv[20];
    ssh_argv(argv, 1, "sh");
    assert_int_equal(shexec_session_set_shell(s, argv, SHEXEC_WRAPPER_REMOTE_SHELL), SHEXEC_OK);
    assert_int_equal(shexec_session_set_kill_grace_ms(s, 500), SHEXEC_OK);
    assert_int_equal(shexec_session_set_cwd(s, g_tmp), SHEXEC_OK);

    /* the terminal's output: stdout and stderr together, lines end in CRLF */
    shexec_run *r = run_in(s, "echo one; cd /; exit 5", 0);
    assert_int_equal(shexec_run_exit_code(r), 5);
    expect_out(r, "one\r\n", 5, NULL);
    assert_string_equal(shexec_session_cwd(s), "/");
    shexec_run_free(r);

    char pidfile[PATH_MAX + 16], cmd[2 * PATH_MAX];
    snprintf(pidfile, sizeof pidfile, "%s/remote.pid", g_tmp);
    snprintf(cmd, sizeof cmd, "sleep 60 & echo $! > '%s'; wait", pidfile);
    int64_t t0 = tu_now_ms();
    r = run_in(s, cmd, 5000); /* long enough for ssh to connect on a loaded machine */
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    shexec_run_free(r);
    FILE *f = fopen(pidfile, "r");
    assert_non_null(f);
    int pid = 0;
    assert_int_equal(fscanf(f, "%d", &pid), 1);
    fclose(f);
    assert_true(pid > 0);
    /* the remote sleep (on this machine, under sshd) is gone */
    assert_true(tu_wait_pid_gone(pid, 10000));
    assert_true(tu_now_ms() - t0 < 30000);
    shexec_session_free(s);
    tu_leak_end();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrapper_that_clears_the_environment),
        cmocka_unit_test(test_bubblewrap_passes_the_channel),
        cmocka_unit_test(test_ssh_in_band),
        cmocka_unit_test(test_ssh_timeout_ends_remote_command),
    };
    return cmocka_run_group_tests_name("wrappers", tests, group_setup, group_teardown);
}
