/*
 * test_run.c - the core run engine: spawn, exit status, streams, timeouts,
 * process groups, descriptors, signals, bounded capture, bad input. Every
 * test checks that no descriptor and no child process is left behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shx/buf.h"
#include "shexec.h"
#include "spawn/program.h"
#include "testhook.h"
#include "testutil.h"

/* ---- helpers ---------------------------------------------------------- */

typedef struct {
    shx_buf out, err;
    int out_calls, err_calls;
} collected;

static void collect(void *user, int stream, const char *data, size_t len)
{
    collected *c = user;
    if (stream == SHEXEC_STDOUT) {
        shx_buf_append(&c->out, data, len);
        c->out_calls++;
    } else {
        shx_buf_append(&c->err, data, len);
        c->err_calls++;
    }
}

static void collected_free(collected *c)
{
    shx_buf_free(&c->out);
    shx_buf_free(&c->err);
}

/* Run cmd to completion in s; returns the run (caller frees). */
static shexec_run *run_cmd(shexec_session *s, const char *cmd)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_true(shexec_run_state(r) > SHEXEC_STATE_RUNNING);
    return r;
}

static const char *out_of(shexec_run *r)
{
    return shexec_run_output(r, SHEXEC_STDOUT, NULL);
}

static const char *err_of(shexec_run *r)
{
    return shexec_run_output(r, SHEXEC_STDERR, NULL);
}

/* 0 under valgrind: it is slow, it does not know pidfd_open (3.19), and it
 * cannot survive an execve that fails in a vfork child */
static int heavy_ok(void)
{
    const char *v = getenv("VALGRIND");
    return !(v && strcmp(v, "1") == 0);
}

static int setup(void **state)
{
    tu_leak_begin();
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    shexec_session_free(*state);
    tu_leak_end();
    return 0;
}

/* ---- seed scenarios ----------------------------------------------------- */

static void test_echo_hello(void **state)
{
    shexec_run *r = run_cmd(*state, "echo hello");
    size_t n;
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    assert_string_equal(out, "hello\n");
    assert_int_equal(n, 6);
    assert_string_equal(err_of(r), "");
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(r), 0);
    assert_int_equal(shexec_run_signal(r), 0);
    shexec_run_free(r);
}

static void test_exit_code_is_data(void **state)
{
    shexec_run *r = run_cmd(*state, "exit 42");
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(r), 42);
    shexec_run_free(r);
    r = run_cmd(*state, "false");
    assert_int_equal(shexec_run_exit_code(r), 1);
    shexec_run_free(r);
}

/* The pipe capacities one stream's descriptor had while its output came. */
typedef struct {
    shexec_run *run;
    int stream;
    int first, last, max;
    uint64_t bytes;
} pipe_sizes;

static void note_pipe_size(void *user, int stream, const char *data, size_t len)
{
    (void)data;
    pipe_sizes *p = user;
    if (stream != p->stream)
        return;
    p->bytes += len;
    int fd = shx_test_run_fd(p->run, stream);
    if (fd < 0)
        return; /* the last bytes are handed over once the pipe is closed */
    int cap = fcntl(fd, F_GETPIPE_SZ);
    assert_true(cap > 0);
    if (!p->first)
        p->first = cap;
    p->last = cap;
    if (cap > p->max)
        p->max = cap;
}

static pipe_sizes pipe_sizes_of(shexec_session *s, const char *cmd, int stream)
{
    pipe_sizes p = {.stream = stream};
    assert_int_equal(shexec_run_new(&p.run, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(p.run, note_pipe_size, &p), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(p.run), SHEXEC_OK);
    assert_int_equal(shexec_run_exit_code(p.run), 0);
    assert_int_equal(shexec_run_output_total(p.run, stream), p.bytes);
    shexec_run_free(p.run);
    p.run = NULL;
    return p;
}

/* 1 when this process may give a fresh pipe the given capacity. */
static int can_grow_pipe_to(int bytes)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    int ok = fcntl(fds[0], F_SETPIPE_SZ, bytes) >= bytes;
    close(fds[0]);
    close(fds[1]);
    return ok;
}

/*
 * A stream that has carried more than a default pipe's worth is bulk
 * output: its pipe is grown (to SHX_STREAM_PIPE_BYTES, where the kernel
 * allows it), so the writer blocks and wakes the reader less often. Small
 * outputs keep the pipe they were spawned with: nothing is added to a
 * spawn, and no pipe is grown beyond the bound.
 */
static void test_bulk_output_grows_its_pipe(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_BIG_PIPES, "F_SETPIPE_SZ"))
        return;
    shexec_session *s = *state;
    const int bound = 1 << 20;

    pipe_sizes small = pipe_sizes_of(s, "printf 'a small output'", SHEXEC_STDOUT);
    assert_true(small.first > 0);
    assert_int_equal(small.max, small.first);

    static const char *const bulk[] = {"head -c 4194304 /dev/zero",
                                       "head -c 4194304 /dev/zero >&2"};
    for (int i = 0; i < 2; i++) {
        int stream = i ? SHEXEC_STDERR : SHEXEC_STDOUT;
        pipe_sizes big = pipe_sizes_of(s, bulk[i], stream);
        assert_int_equal(big.bytes, 4194304);
        print_message("%s: pipe %d bytes at first, %d at last\n", bulk[i], big.first, big.last);
        assert_true(big.max <= bound);
        if (big.first < bound && can_grow_pipe_to(bound))
            assert_int_equal(big.last, bound);
    }
}

static void test_stderr(void **state)
{
    shexec_run *r = run_cmd(*state, "echo err >&2");
    assert_string_equal(err_of(r), "err\n");
    assert_string_equal(out_of(r), "");
    assert_int_equal(shexec_run_exit_code(r), 0);
    shexec_run_free(r);
}

/* ---- process setup ---------------------------------------------------- */

static void test_own_process_group(void **state)
{
    /* field 5 of /proc/PID/stat is the process group */
    shexec_run *r = run_cmd(*state, "echo $$; cut -d' ' -f5 /proc/$$/stat");
    int pid = 0, pgid = -1;
    assert_int_equal(sscanf(out_of(r), "%d\n%d", &pid, &pgid), 2);
    assert_int_equal(pid, pgid);
    assert_int_not_equal(pgid, (int)getpgrp());
    shexec_run_free(r);
}

/* The shell's pid, which is also its process group id: 0 until the run
 * starts (and after a start that failed), then what `$$` says, while the
 * command runs and after it ended. */
static void test_run_pid(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_run_pid(NULL), 0);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "echo $$; cut -d' ' -f5 /proc/$$/stat"), SHEXEC_OK);
    assert_int_equal(shexec_run_pid(r), 0);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    long long pid = 0, pgid = -1;
    assert_int_equal(sscanf(out_of(r), "%lld\n%lld", &pid, &pgid), 2);
    assert_true(pid > 0);
    assert_true(shexec_run_pid(r) == pid);
    assert_true(shexec_run_pid(r) == pgid);
    shexec_run_free(r);

    /* while it runs: a live process leading its own group */
    assert_int_equal(shexec_run_new(&r, s, "echo $$; sleep 30"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    int64_t live = shexec_run_pid(r);
    assert_true(live > 0);
    assert_true(tu_pid_alive((pid_t)live));
    assert_int_equal(getpgid((pid_t)live), (pid_t)live);
    int64_t end = tu_now_ms() + 10000;
    while (!strchr(out_of(r), '\n')) {
        assert_true(tu_now_ms() < end);
        assert_true(shexec_session_wait(s, 50) >= 0);
    }
    assert_true(atoll(out_of(r)) == live);
    assert_int_equal(shexec_run_cancel(r), SHEXEC_OK);
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
        assert_true(shexec_session_wait(s, 1000) >= 0);
    assert_true(shexec_run_pid(r) == live); /* kept after the end */
    shexec_run_free(r);

    /* a start that fails leaves it 0 */
    assert_int_equal(shexec_run_new(&r, s, "true"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_cwd(r, "/nonexistent/dir"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_ENOCWD);
    assert_int_equal(shexec_run_pid(r), 0);
    shexec_run_free(r);
}

static void test_child_signals_default(void **state)
{
    struct sigaction old_pipe, ignore = {.sa_handler = SIG_IGN};
    sigaction(SIGPIPE, &ignore, &old_pipe);
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, &old_mask);

    /* an exec-ed child reports its own masks. The library's own spawn
     * (Linux) resets every signal by system call, glibc's internal 32 and
     * 33 too; posix_spawn (the plain POSIX path) cannot name those, and
     * glibc leaves them ignored (musl its 32 to 34), as the header says */
    struct sigaction host_rt, rt = {.sa_handler = SIG_IGN};
    sigaction(SIGRTMIN, &rt, &host_rt); /* ignored in the host: the child's default */
    shexec_run *r = run_cmd(*state, "grep -E '^Sig(Blk|Ign)' /proc/self/status");
    sigaction(SIGRTMIN, &host_rt, NULL);
    unsigned long long blk = ~0ull, ign = ~0ull;
    const char *o = out_of(r);
    assert_int_equal(sscanf(strstr(o, "SigBlk:"), "SigBlk: %llx", &blk), 1);
    assert_int_equal(sscanf(strstr(o, "SigIgn:"), "SigIgn: %llx", &ign), 1);
    assert_int_equal(blk, 0);
    if (shx_test_platform() & SHX_PLATFORM_OWN_SPAWN)
        assert_int_equal(ign, 0); /* every signal, 32 and 33 included */
    else
        assert_int_equal(ign & ~(7ull << 31), 0); /* all but the libc's internal ones */
    shexec_run_free(r);

    /* with SIGPIPE ignored in the child, `yes` would spin forever */
    shexec_run *y = NULL;
    assert_int_equal(shexec_run_new(&y, *state, "yes | head -1"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(y, 20000), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(y), SHEXEC_OK);
    assert_int_equal(shexec_run_state(y), SHEXEC_STATE_EXITED);
    assert_string_equal(out_of(y), "y\n");
    shexec_run_free(y);

    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
}

static void test_no_inherited_descriptors(void **state)
{
    int fd = open("/dev/null", O_RDONLY); /* deliberately without O_CLOEXEC */
    assert_true(fd >= 3);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "if [ -e /proc/$$/fd/%d ]; then echo leaked; else echo clean; fi; "
                              "exec ls /proc/self/fd",
             fd);
    shexec_run *r = run_cmd(*state, cmd);
    /* 3 is ls's own handle on the directory it lists; 173 the run's own
     * channel (script.h), the one descriptor besides 0-2 a command gets */
    assert_string_equal(out_of(r), "clean\n0\n1\n173\n2\n3\n");
    shexec_run_free(r);
    close(fd);
}

/* A host descriptor without O_CLOEXEC far above the others: closefrom
 * closes it, and without closefrom (musl, older glibc, the plain POSIX
 * build) the listing or the scan up to the open-files limit must find it. */
static void test_no_inherited_descriptors_high(void **state)
{
    int low = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(low >= 0);
    int fd = dup2(low, 900); /* dup2 clears FD_CLOEXEC: inheritable */
    assert_int_equal(fd, 900);
    close(low);
    assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
    shexec_run *r = run_cmd(*state, "if [ -e /proc/$$/fd/900 ]; then echo leaked; else echo clean; fi");
    assert_string_equal(out_of(r), "clean\n");
    shexec_run_free(r);
    /* through a terminal and a task too */
    r = NULL;
    assert_int_equal(shexec_run_new(&r, *state, "test -e /proc/$$/fd/900 && echo leaked || echo clean"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty(r, SHEXEC_PTY_ON), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(out_of(r), "clean\n");
    shexec_run_free(r);
    close(fd);
}

/* Which platform paths this build takes: what the build-time probe found is
 * what the same machine runs with (on glibc the *_np file actions are looked
 * up at run time, and must be found where the headers declared them). */
static void test_platform_paths(void **state)
{
    (void)state;
    unsigned f = shx_test_platform();
    print_message("platform: pidfd %d, /proc %d, closefrom %d, addchdir %d, setsid %d, "
                  "big pipes %d\n",
                  !!(f & SHX_PLATFORM_PIDFD), !!(f & SHX_PLATFORM_PROCFS),
                  !!(f & SHX_PLATFORM_CLOSEFROM), !!(f & SHX_PLATFORM_CHDIR_NP),
                  !!(f & SHX_PLATFORM_SETSID), !!(f & SHX_PLATFORM_BIG_PIPES));
    assert_int_equal(!!(f & SHX_PLATFORM_PIDFD), SHX_HAVE_PIDFD);
    assert_int_equal(!!(f & SHX_PLATFORM_PROCFS), SHX_HAVE_PROCFS);
    assert_int_equal(!!(f & SHX_PLATFORM_CLOSEFROM), SHX_HAVE_ADDCLOSEFROM_NP);
    assert_int_equal(!!(f & SHX_PLATFORM_CHDIR_NP), SHX_HAVE_ADDCHDIR_NP);
    if (SHX_PORTABLE)
        assert_int_equal(f & (SHX_PLATFORM_PIDFD | SHX_PLATFORM_PROCFS | SHX_PLATFORM_CLOSEFROM |
                              SHX_PLATFORM_CHDIR_NP | SHX_PLATFORM_BIG_PIPES),
                         0);
}

static void test_stdin_is_dev_null(void **state)
{
    shexec_run *r = run_cmd(*state, "readlink /proc/$$/fd/0; cat; echo done");
    assert_string_equal(out_of(r), "/dev/null\ndone\n");
    shexec_run_free(r);
}

static void test_library_descriptors_cloexec(void **state)
{
    char was_open[1024];
    for (int fd = 0; fd < 1024; fd++)
        was_open[fd] = fcntl(fd, F_GETFD) >= 0;
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, *state, "sleep 0.2"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    int checked = 0;
    for (int fd = 0; fd < 1024; fd++) {
        int flags = fcntl(fd, F_GETFD);
        if (flags < 0 || was_open[fd])
            continue;
        assert_true(flags & FD_CLOEXEC);
        checked++;
    }
    assert_true(checked >= 2); /* at least the two pipes */
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
        assert_true(shexec_session_wait(*state, 1000) >= 0);
    shexec_run_free(r);
}

/* ---- shell ------------------------------------------------------------ */

static void test_shell_selection(void **state)
{
    const char *both[] = {"/bin/bash", "/bin/sh", NULL};
    const char *no_bash[] = {"/nonexistent/bash", "/bin/sh", NULL};
    const char *dir_not_exe[] = {"/tmp", "/bin/sh", NULL};
    const char *none[] = {"/nonexistent/bash", NULL};
    if (access("/bin/bash", X_OK) == 0)
        assert_string_equal(shx_pick_shell(both), "/bin/bash");
    assert_string_equal(shx_pick_shell(no_bash), "/bin/sh");
    assert_string_equal(shx_pick_shell(dir_not_exe), "/bin/sh");
    assert_null(shx_pick_shell(none));

    if (access("/bin/bash", X_OK) == 0) {
        shexec_run *r = run_cmd(*state, "echo ${BASH_VERSION:+bash}");
        assert_string_equal(out_of(r), "bash\n");
        shexec_run_free(r);
    }
    /* {path, NULL}: that program is the shell */
    const char *sh[] = {"/bin/sh", NULL};
    assert_int_equal(shexec_session_set_shell(*state, sh, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    shexec_run *r = run_cmd(*state, "echo $0");
    assert_string_equal(out_of(r), "sh\n");
    shexec_run_free(r);
    const char *empty[] = {"", NULL};
    assert_int_equal(shexec_session_set_shell(*state, empty, SHEXEC_WRAPPER_LOCAL), SHEXEC_EINVAL);
    /* a name is looked up in the host's PATH when set; not found, the setting stays */
    const char *by_name[] = {"sh", NULL};
    assert_int_equal(shexec_session_set_shell(*state, by_name, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    const char *unknown[] = {"shexec-no-such-shell", NULL};
    assert_int_equal(shexec_session_set_shell(*state, unknown, SHEXEC_WRAPPER_LOCAL), SHEXEC_ESPAWN);
    assert_non_null(strstr(shexec_session_errmsg(*state), "shexec-no-such-shell"));
    r = run_cmd(*state, "echo $0");
    assert_string_equal(out_of(r), "sh\n");
    shexec_run_free(r);

    if (!heavy_ok())
        return;
    /* an absolute path is not looked for when set: a missing one fails the start */
    const char *missing[] = {"/nonexistent/shell", NULL};
    assert_int_equal(shexec_session_set_shell(*state, missing, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    shexec_run *bad = NULL;
    assert_int_equal(shexec_run_new(&bad, *state, "true"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(bad), SHEXEC_ESPAWN);
    assert_non_null(strstr(shexec_session_errmsg(*state), "/nonexistent/shell"));
    assert_int_equal(shexec_run_state(bad), SHEXEC_STATE_NEW);
    shexec_run_free(bad);
    assert_int_equal(shexec_session_set_shell(*state, NULL, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
    r = run_cmd(*state, "echo back");
    assert_string_equal(out_of(r), "back\n");
    shexec_run_free(r);
}

static void test_command_is_an_argument(void **state)
{
    /* quotes, $, backslashes and a trailing comment reach the shell intact */
    shexec_run *r = run_cmd(*state, "echo 'a\"b' \"c'd\" \\$HOME # tail comment");
    assert_string_equal(out_of(r), "a\"b c'd $HOME\n");
    shexec_run_free(r);
    /* positional parameters are empty for the command */
    r = run_cmd(*state, "echo \"[$#][$1]\"");
    assert_string_equal(out_of(r), "[0][]\n");
    shexec_run_free(r);
}

/* ---- cwd ---------------------------------------------------------------- */

static void test_cwd_checked_before_running(void **state)
{
    const char *dir = tu_mkdtemp();
    char marker[512], cmd[600];
    snprintf(marker, sizeof marker, "%s/marker", dir);
    snprintf(cmd, sizeof cmd, "touch %s", marker);

    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, *state, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_cwd(r, "/nonexistent/dir"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_ENOCWD);
    assert_non_null(strstr(shexec_session_errmsg(*state), "/nonexistent/dir"));
    assert_int_equal(access(marker, F_OK), -1);
    shexec_run_free(r);

    /* a file is not a directory */
    assert_int_equal(shexec_run_new(&r, *state, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_cwd(r, "/etc/passwd"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_ENOCWD);
    assert_int_equal(access(marker, F_OK), -1);
    shexec_run_free(r);

    /* set_cwd validates at once and leaves the cwd unchanged */
    char *before = strdup(shexec_session_cwd(*state));
    assert_int_equal(shexec_session_set_cwd(*state, "/nonexistent/dir"), SHEXEC_ENOCWD);
    assert_string_equal(shexec_session_cwd(*state), before);
    assert_int_equal(shexec_session_set_cwd(*state, ""), SHEXEC_EINVAL);
    free(before);

    /* and the command runs where asked */
    assert_int_equal(shexec_session_set_cwd(*state, dir), SHEXEC_OK);
    r = run_cmd(*state, "pwd");
    char expect[600];
    snprintf(expect, sizeof expect, "%s\n", dir);
    assert_string_equal(out_of(r), expect);
    shexec_run_free(r);
    tu_rmtree(dir);
}

/* A directory whose name a shell could misread (a leading '-', spaces, a
 * '$'): posix_spawn's chdir takes it as is, and so must the plain path's
 * `cd -- "$1"` trampoline; the shell's own arguments arrive intact. */
static void test_cwd_with_odd_name(void **state)
{
    const char *tmp = tu_mkdtemp();
    char top[512], dir[600];
    snprintf(top, sizeof top, "%s", tmp);
    snprintf(dir, sizeof dir, "%s/-P odd $HOME dir", top);
    assert_int_equal(mkdir(dir, 0700), 0);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, *state, "pwd; echo \"$0\""), SHEXEC_OK);
    assert_int_equal(shexec_run_set_cwd(r, dir), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    char expect[800];
    snprintf(expect, sizeof expect, "%s\nbash\n", dir);
    assert_string_equal(out_of(r), expect);
    assert_int_equal(shexec_run_exit_code(r), 0);
    shexec_run_free(r);
    tu_rmtree(top);
}

static void test_run_cwd_does_not_move_session(void **state)
{
    char *before = strdup(shexec_session_cwd(*state));
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, *state, "pwd; cd /"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_cwd(r, "/tmp"), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(out_of(r), "/tmp\n");
    assert_string_equal(shexec_session_cwd(*state), before);
    shexec_run_free(r);
    free(before);
}

/* ---- environment ---------------------------------------------------------- */

static void test_env_inherit_replace_override(void **state)
{
    shexec_session *s = *state;
    setenv("SHEXEC_TEST_HOSTVAR", "from-host", 1);
    shexec_run *r = run_cmd(s, "echo \"$SHEXEC_TEST_HOSTVAR\"");
    assert_string_equal(out_of(r), "from-host\n");
    shexec_run_free(r);

    assert_int_equal(shexec_session_setenv(s, "SHEXEC_A", "session"), SHEXEC_OK);
    assert_int_equal(shexec_session_setenv(s, "SHEXEC_B", "session"), SHEXEC_OK);
    assert_int_equal(shexec_run_new(&r, s, "echo \"$SHEXEC_A $SHEXEC_B ${SHEXEC_TEST_HOSTVAR-unset}\""),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_setenv(r, "SHEXEC_B", "run"), SHEXEC_OK);
    assert_int_equal(shexec_run_setenv(r, "SHEXEC_TEST_HOSTVAR", NULL), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(out_of(r), "session run unset\n");
    shexec_run_free(r);

    /* replace mode: nothing from the host */
    assert_int_equal(shexec_session_set_env_inherit(s, 0), SHEXEC_OK);
    r = run_cmd(s, "echo \"${SHEXEC_TEST_HOSTVAR-unset} $SHEXEC_A\"");
    assert_string_equal(out_of(r), "unset session\n");
    shexec_run_free(r);

    /* bad names are errors, never silently dropped */
    assert_int_equal(shexec_session_setenv(s, "", "x"), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_setenv(s, "A=B", "x"), SHEXEC_EINVAL);
    assert_non_null(strstr(shexec_session_errmsg(s), "A=B"));
    assert_int_equal(shexec_run_new(&r, s, "true"), SHEXEC_OK);
    assert_int_equal(shexec_run_setenv(r, "X=Y", "1"), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_setenv(r, NULL, "1"), SHEXEC_EINVAL);
    shexec_run_free(r);
    unsetenv("SHEXEC_TEST_HOSTVAR");
}

/* ---- waiting: pidfd and the fallback ------------------------------------ */

static void exercise_waiting(shexec_session *s)
{
    shexec_run *r = run_cmd(s, "echo a; echo b >&2; exit 3");
    assert_string_equal(out_of(r), "a\n");
    assert_string_equal(err_of(r), "b\n");
    assert_int_equal(shexec_run_exit_code(r), 3);
    shexec_run_free(r);

    /* the shell exits while a child still holds the pipes */
    int64_t t0 = tu_now_ms();
    r = run_cmd(s, "sleep 30 & echo started");
    assert_string_equal(out_of(r), "started\n");
    assert_true(tu_now_ms() - t0 < 10000);
    shexec_run_free(r);

    /* a shell that closes its pipes long before it exits */
    r = run_cmd(s, "exec >/dev/null 2>&1; sleep 0.3; exit 4");
    assert_int_equal(shexec_run_exit_code(r), 4);
    shexec_run_free(r);

    shexec_session_set_timeouts_ms(s, 300, 600000);
    r = run_cmd(s, "sleep 30");
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    shexec_run_free(r);
}

static void test_wait_with_pidfd(void **state)
{
    shexec_session *s = *state;
    if (!tu_platform_has(SHX_PLATFORM_PIDFD, "pidfds"))
        skip();
    assert_int_equal(shx_test_uses_pidfd(s), 1);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "sleep 0.1"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    if (heavy_ok())
        assert_true(shx_test_run_pidfd(r) >= 0); /* this kernel has pidfds: the main path is the one tested */
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
        shexec_session_wait(s, -1);
    shexec_run_free(r);
    exercise_waiting(s);
}

/* The pid a pidfd stands for, from /proc/self/fdinfo; -1 when none. */
static long pidfd_pid(int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    return (long)tu_file_field(path, "Pid");
}

/* The pidfd a run waits on is its shell's, taken from the clone or, where
 * a kernel refuses that, opened after it; neither is left open. */
static void test_pidfd_is_the_shells(void **state)
{
    shexec_session *s = *state;
    if (!tu_platform_has(SHX_PLATFORM_PIDFD, "pidfds") || !heavy_ok())
        skip();
    int fds = tu_count_fds();
    for (int from_clone = 1; from_clone >= 0; from_clone--) {
        shx_test_clone_pidfd(from_clone);
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, s, "sleep 0.2; exit 3"), SHEXEC_OK);
        assert_int_equal(shexec_run_start(r), SHEXEC_OK);
        int fd = shx_test_run_pidfd(r);
        assert_true(fd >= 0);
        assert_int_equal(pidfd_pid(fd), (long)shexec_run_pid(r));
        assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
            shexec_session_wait(s, -1);
        assert_int_equal(shexec_run_exit_code(r), 3);
        shexec_run_free(r);
    }
    shx_test_clone_pidfd(1);
    assert_int_equal(tu_count_fds(), fds);
}

/* The name the kernel gives pid (its program's, 15 bytes at most), in out. */
static void comm_of(int64_t pid, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%lld/comm", (long long)pid);
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(out, (int)cap, f))
            out[strcspn(out, "\n")] = '\0';
        fclose(f);
    }
}

/* Does the command's own listing of its descriptors show the channel? */
static int sees_channel(shexec_run *r)
{
    return strstr(out_of(r), "\n173\n") != NULL;
}

/* A run that needs no report starts bare (lib/run/bare.h): the shell has
 * no channel and execs the command, as `SHELL -c` does; a command that may
 * move its shell reports, and where the host takes the status away every
 * run reports it. */
static void test_bare_runs(void **state)
{
    shexec_session *s = *state;
    int fds = tu_count_fds();
    const char *shells[] = {"/bin/bash", "/bin/sh"};
    char home[PATH_MAX];
    assert_non_null(getcwd(home, sizeof home));
    for (int i = 0; i < 2; i++) {
        int plain, bash = shx_shell_is_bash(shells[i], shells[i], &plain);
        if (!plain)
            continue;
        const char *argv[] = {shells[i], NULL};
        assert_int_equal(shexec_session_set_shell(s, argv, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
        assert_int_equal(shexec_session_set_cwd(s, home), SHEXEC_OK);
        /* inert: no channel, and bash becomes the command (Debian's dash
         * forks even its last command, in `sh -c` too) */
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, s, "sleep 0.3"), SHEXEC_OK);
        assert_int_equal(shexec_run_start(r), SHEXEC_OK);
        assert_int_equal(shx_test_run_fd(r, 0), -1);
        char comm[32] = "sleep";
        int64_t t0 = tu_now_ms();
        while (bash && tu_now_ms() - t0 < 2000) {
            comm_of(shexec_run_pid(r), comm, sizeof comm);
            if (strcmp(comm, "sleep") == 0 || usleep(2000) != 0)
                break;
        }
        assert_string_equal(comm, "sleep");
        while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
            shexec_session_wait(s, -1);
        assert_int_equal(shexec_run_exit_code(r), 0);
        shexec_run_free(r);
        r = run_cmd(s, "ls /proc/self/fd; exit 3");
        assert_false(sees_channel(r));
        assert_int_equal(shexec_run_exit_code(r), 3);
        assert_string_equal(shexec_run_notice(r), "");
        shexec_run_free(r);
        /* it may move: it reports, and the session follows */
        r = run_cmd(s, "c''d /; ls /proc/self/fd");
        assert_true(sees_channel(r));
        assert_string_equal(shexec_session_cwd(s), "/");
        shexec_run_free(r);
        /* a run with its own directory moves nothing: bare, whatever it runs */
        assert_int_equal(shexec_run_new(&r, s, "cd /tmp; ls /proc/self/fd"), SHEXEC_OK);
        assert_int_equal(shexec_run_set_cwd(r, home), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        assert_false(sees_channel(r));
        assert_string_equal(shexec_session_cwd(s), "/");
        shexec_run_free(r);
        /* a task too */
        shexec_task *t = NULL;
        assert_int_equal(shexec_run_new(&r, s, "cd /tmp; ls /proc/self/fd"), SHEXEC_OK);
        assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
        while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING)
            shexec_session_wait(s, -1);
        assert_false(sees_channel(shexec_task_run(t)));
        shexec_task_free(t);
        assert_string_equal(shexec_session_cwd(s), "/");
        /* bash's BASH_ENV (let through the deny list) would run code first: reports */
        assert_int_equal(shexec_session_env_allow(s, "BASH_ENV"), SHEXEC_OK);
        assert_int_equal(shexec_run_new(&r, s, "ls /proc/self/fd"), SHEXEC_OK);
        assert_int_equal(shexec_run_setenv(r, "BASH_ENV", "/dev/null"), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        assert_true(sees_channel(r));
        shexec_run_free(r);
        /* SIGCHLD ignored: the status comes from the report */
        struct sigaction ign = {.sa_handler = SIG_IGN}, old;
        assert_int_equal(sigaction(SIGCHLD, &ign, &old), 0);
        r = run_cmd(s, "ls /proc/self/fd; exit 3");
        assert_int_equal(sigaction(SIGCHLD, &old, NULL), 0);
        assert_true(sees_channel(r));
        assert_int_equal(shexec_run_exit_code(r), 3);
        shexec_run_free(r);
    }
    assert_int_equal(tu_count_fds(), fds);
}

/* The spawn pins the shell's start time from the clock read around it (for
 * the watchdog, which otherwise reads /proc): where it does, it is the
 * kernel's own. */
static void test_start_time_pinned(void **state)
{
    shexec_session *s = *state;
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "/proc"))
        skip();
    int pinned = 0;
    for (int i = 0; i < 20; i++) {
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, s, "sleep 0.05"), SHEXEC_OK);
        assert_int_equal(shexec_run_start(r), SHEXEC_OK);
        unsigned long long start = shx_test_run_start(r), real = 0;
        char letter;
        pid_t pgrp;
        assert_int_equal(tu_proc_stat((pid_t)shexec_run_pid(r), &letter, &pgrp, &real), 0);
        assert_true(real > 0);
        if (start) {
            pinned++;
            assert_int_equal(start, real);
        }
        while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
            shexec_session_wait(s, -1);
        shexec_run_free(r);
    }
    print_message("start time pinned by the spawn in %d of 20 runs\n", pinned);
    /* under valgrind a spawn takes longer than a tick: none may pin */
    if (heavy_ok())
        assert_true(pinned > 0);
}

static void test_wait_fallback_without_pidfd(void **state)
{
    shexec_session *s = *state;
    shx_test_use_pidfd(s, 0);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "sleep 0.1"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    assert_int_equal(shx_test_run_pidfd(r), -1);
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
        shexec_session_wait(s, -1);
    assert_int_equal(shexec_run_exit_code(r), 0);
    shexec_run_free(r);
    exercise_waiting(s);
}

/* ---- timeouts ------------------------------------------------------------ */

static void test_timeout_kills_and_keeps_output(void **state)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, *state, "echo before; sleep 300; echo after"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 1000), SHEXEC_OK);
    int64_t t0 = tu_now_ms();
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    int64_t took = tu_now_ms() - t0;
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    assert_int_equal(shexec_run_signal(r), SIGTERM);
    assert_int_equal(shexec_run_exit_code(r), -1);
    assert_string_equal(out_of(r), "before\n");
    assert_true(took >= 990);
    assert_true(took < 4000); /* the grace period (5 s) was not needed */
    assert_true(shexec_run_duration_ms(r) >= 990);
    shexec_run_free(r);
}

static void test_timeout_term_trap_cleanup_captured(void **state)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, *state,
                                     "trap 'echo cleanup; exit 7' TERM; echo ready; sleep 300 & wait"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 500), SHEXEC_OK);
    int64_t t0 = tu_now_ms();
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_true(tu_now_ms() - t0 < 4000); /* exited on TERM, no SIGKILL after 5 s */
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    assert_string_equal(out_of(r), "ready\ncleanup\n");
    /* the shell exited 7 in its trap, but the run did not end by exiting:
     * the exit code is -1 in every state but EXITED */
    assert_int_equal(shexec_run_exit_code(r), -1);
    assert_int_equal(shexec_run_signal(r), 0);
    shexec_run_free(r);

    /* the same for a cancelled run whose trap exits */
    assert_int_equal(shexec_run_new(&r, *state, "trap 'exit 9' TERM; echo ready; sleep 300 & wait"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    while (!strstr(out_of(r), "ready"))
        assert_true(shexec_session_wait(*state, 50) >= 0);
    assert_int_equal(shexec_run_cancel(r), SHEXEC_OK);
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
        assert_true(shexec_session_wait(*state, 1000) >= 0);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_CANCELLED);
    assert_int_equal(shexec_run_exit_code(r), -1);
    shexec_run_free(r);
}

static void test_timeout_term_ignored_gets_kill(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_set_kill_grace_ms(s, 300), SHEXEC_OK);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "trap '' TERM; echo stubborn; sleep 300"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 500), SHEXEC_OK);
    int64_t t0 = tu_now_ms();
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    int64_t took = tu_now_ms() - t0;
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    assert_int_equal(shexec_run_signal(r), SIGKILL);
    assert_string_equal(out_of(r), "stubborn\n");
    assert_true(took >= 790);
    shexec_run_free(r);
}

static void test_timeout_kills_whole_group(void **state)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, *state,
                                     "sleep 300 & echo $!; (sleep 300; echo never) & echo $!; "
                                     "sh -c 'sleep 300' & echo $!; wait"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 500), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    int pids[3];
    assert_int_equal(sscanf(out_of(r), "%d %d %d", &pids[0], &pids[1], &pids[2]), 3);
    for (int i = 0; i < 3; i++)
        assert_true(tu_wait_pid_gone(pids[i], 2000));
    shexec_run_free(r);
}

static void test_timeout_default_and_clamp(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_session_set_timeouts_ms(s, 0, 100), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_timeouts_ms(s, 200, 100), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_timeouts_ms(s, 300, 400), SHEXEC_OK);

    shexec_run *r = run_cmd(s, "sleep 30"); /* the session default: 300 ms */
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    assert_true(shexec_run_duration_ms(r) < 5000);
    shexec_run_free(r);

    assert_int_equal(shexec_run_new(&r, s, "sleep 30"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 0), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_set_timeout_ms(r, 900000), SHEXEC_OK); /* clamped to 400 */
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    assert_true(shexec_run_duration_ms(r) >= 390);
    assert_true(shexec_run_duration_ms(r) < 5000);
    shexec_run_free(r);
}

/*
 * The timeout in force: before the start what a foreground start would
 * give (the session default, or the run's own, clamped to the session
 * maximum), fixed at the start; a task has none unless it has its own,
 * which is not clamped.
 */
static void test_run_timeout_ms(void **state)
{
    shexec_session *s = *state;
    assert_int_equal(shexec_run_timeout_ms(NULL), 0);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "sleep 30"), SHEXEC_OK);
    assert_int_equal(shexec_run_timeout_ms(r), SHEXEC_DEFAULT_TIMEOUT_MS);
    assert_int_equal(shexec_session_set_timeouts_ms(s, 300, 400), SHEXEC_OK);
    assert_int_equal(shexec_run_timeout_ms(r), 300); /* the session's, until the start */
    assert_int_equal(shexec_run_set_timeout_ms(r, 350), SHEXEC_OK);
    assert_int_equal(shexec_run_timeout_ms(r), 350);
    assert_int_equal(shexec_run_set_timeout_ms(r, 900000), SHEXEC_OK);
    assert_int_equal(shexec_run_timeout_ms(r), 400); /* clamped */
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    assert_int_equal(shexec_run_timeout_ms(r), 400);
    /* fixed at the start: later session settings do not change it */
    assert_int_equal(shexec_session_set_timeouts_ms(s, 100, 200), SHEXEC_OK);
    assert_int_equal(shexec_run_timeout_ms(r), 400);
    shexec_run_free(r);

    assert_int_equal(shexec_run_new(&r, s, "true"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 150), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_timeout_ms(r), 150);
    shexec_run_free(r);

    /* a task without a timeout of its own has none */
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_new(&r, s, "sleep 30"), SHEXEC_OK);
    assert_int_equal(shexec_run_timeout_ms(r), 100); /* as a foreground start would give */
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    assert_int_equal(shexec_run_timeout_ms(shexec_task_run(t)), 0);
    shexec_task_free(t);

    /* a task's own is not clamped to the session maximum */
    assert_int_equal(shexec_run_new(&r, s, "sleep 30"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 900000), SHEXEC_OK);
    assert_int_equal(shexec_run_timeout_ms(r), 200);
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    assert_int_equal(shexec_run_timeout_ms(shexec_task_run(t)), 900000);
    assert_false(shexec_run_state(shexec_task_run(t)) > SHEXEC_STATE_RUNNING);
    shexec_task_free(t);
}

static void test_leftovers_do_not_hold_the_run(void **state)
{
    shexec_session *s = *state;
    int64_t t0 = tu_now_ms();
    shexec_run *r = run_cmd(s, "sleep 30 & echo $!; echo started");
    assert_true(tu_now_ms() - t0 < 5000);
    int pid = 0;
    assert_int_equal(sscanf(out_of(r), "%d\nstarted\n", &pid), 1);
    assert_non_null(strstr(out_of(r), "started\n"));
    assert_int_equal(shexec_run_exit_code(r), 0);
    /* by default the leftover is adopted as a task, still running */
    const char *id = "unset";
    assert_int_equal(shexec_run_leftovers(r, &id), SHEXEC_LEFTOVERS_ADOPTED);
    assert_non_null(id);
    assert_true(id[0] == 't' && strlen(id) == 13);
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    assert_true(tu_pid_alive(pid));
    shexec_task *t = NULL;
    assert_int_equal(shexec_session_take_task(&t, s, id), SHEXEC_OK);
    assert_string_equal(shexec_task_id(t), id);
    shexec_run_free(r);
    assert_int_equal(shexec_run_state(shexec_task_run(t)), SHEXEC_STATE_RUNNING);
    assert_int_equal(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK);
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING)
        shexec_session_wait(s, 1000);
    assert_int_equal(shexec_run_state(shexec_task_run(t)), SHEXEC_STATE_KILLED);
    assert_true(tu_wait_pid_gone(pid, 2000));
    shexec_task_free(t);

    /* the kill policy: leftovers are killed when the run completes, also one
     * that redirected its output away (found through the group) */
    assert_int_equal(shexec_session_set_on_leftovers(s, SHEXEC_ON_LEFTOVERS_KILL), SHEXEC_OK);
    assert_int_equal(shexec_session_set_on_leftovers(s, 7), SHEXEC_EINVAL);
    r = run_cmd(s, "sleep 30 >/dev/null 2>&1 & echo $!");
    assert_int_equal(sscanf(out_of(r), "%d", &pid), 1);
    assert_true(tu_wait_pid_gone(pid, 2000));
    id = "unset";
    assert_int_equal(shexec_run_leftovers(r, &id), SHEXEC_LEFTOVERS_KILLED);
    assert_null(id);
    shexec_run_free(r);

    /* nothing left: nothing adopted */
    assert_int_equal(shexec_session_set_on_leftovers(s, SHEXEC_ON_LEFTOVERS_ADOPT), SHEXEC_OK);
    r = run_cmd(s, "sleep 0.01");
    id = "unset";
    assert_int_equal(shexec_run_leftovers(r, &id), SHEXEC_LEFTOVERS_NONE);
    assert_null(id);
    shexec_run_free(r);
    /* no run: none, and no id */
    id = "unset";
    assert_int_equal(shexec_run_leftovers(NULL, &id), SHEXEC_LEFTOVERS_NONE);
    assert_null(id);
    assert_int_equal(shexec_run_leftovers(NULL, NULL), SHEXEC_LEFTOVERS_NONE);
}

/* ---- non-blocking use and cancel ------------------------------------------ */

static void test_start_wait_cancel(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "echo go; sleep 300"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    assert_false(shexec_run_state(r) > SHEXEC_STATE_RUNNING);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_RUNNING);
    assert_int_equal(shexec_run_start(r), SHEXEC_ESTATE);
    assert_int_equal(shexec_run_set_timeout_ms(r, 5), SHEXEC_ESTATE);
    assert_int_equal(shexec_session_wait(s, 100), 0); /* nothing finished in it */
    assert_false(shexec_run_state(r) > SHEXEC_STATE_RUNNING);
    assert_int_equal(shexec_run_cancel(r), SHEXEC_OK);
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
        assert_true(shexec_session_wait(s, 1000) >= 0);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_CANCELLED);
    assert_int_equal(shexec_run_signal(r), SIGTERM);
    assert_string_equal(out_of(r), "go\n");
    assert_int_equal(shexec_run_cancel(r), SHEXEC_OK); /* finished: nothing to do */
    shexec_run_free(r);

    shexec_run *fresh = NULL;
    assert_int_equal(shexec_run_new(&fresh, s, "true"), SHEXEC_OK);
    assert_int_equal(shexec_run_cancel(fresh), SHEXEC_ESTATE);
    shexec_run_free(fresh);
}

/* Pump through the host-loop calls until r is done; returns the sum of
 * what shexec_session_process() reported finished. */
static int pump_host_loop(shexec_session *s, shexec_run *r)
{
    struct pollfd fds[32];
    int finished = 0;
    int64_t end = tu_now_ms() + 20000;
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() < end);
        int32_t timeout = -1;
        int n = shexec_session_pollfds(fds, 32, &timeout, s);
        assert_true(n >= 0 && n <= 32);
        if (timeout < 0 || timeout > 1000)
            timeout = 1000;
        poll(fds, (nfds_t)n, timeout); /* EINTR: process what there is */
        int rc = shexec_session_process(s, fds, (uint32_t)n);
        assert_true(rc >= 0);
        finished += rc;
    }
    return finished;
}

/*
 * shexec_session_pollfds() only lists: a run whose deadline passed while
 * the host did not pump is told due (timeout 0) but not signalled, however
 * often it is listed; shexec_session_process() or shexec_session_wait()
 * ends it.
 */
static void test_pollfds_never_signals(void **state)
{
    shexec_session *s = *state;
    for (int by_wait = 0; by_wait < 2; by_wait++) {
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, s, "trap 'echo term; exit 3' TERM; echo ready; "
                                               "sleep 30 & wait"),
                         SHEXEC_OK);
        assert_int_equal(shexec_run_set_timeout_ms(r, 100), SHEXEC_OK);
        assert_int_equal(shexec_run_start(r), SHEXEC_OK);
        pid_t pid = (pid_t)shexec_run_pid(r);
        usleep(300 * 1000); /* past the deadline, not pumped */
        for (int i = 0; i < 3; i++) {
            struct pollfd fds[32];
            int32_t timeout = -1;
            int n = shexec_session_pollfds(fds, 32, &timeout, s);
            assert_true(n >= 2 && n <= 32);
            assert_int_equal(timeout, 0); /* overdue: process at once */
            usleep(100 * 1000);           /* time for a TERM trap to run, had one been sent */
        }
        /* a TERM would have run the trap, which exits: a zombie is not alive */
        assert_true(tu_pid_alive(pid));
        assert_int_equal(shexec_run_state(r), SHEXEC_STATE_RUNNING);

        int finished = 0;
        if (by_wait) {
            int64_t end = tu_now_ms() + 20000;
            while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING) {
                assert_true(tu_now_ms() < end);
                int rc = shexec_session_wait(s, 1000);
                assert_true(rc >= 0);
                finished += rc;
            }
        } else {
            finished = pump_host_loop(s, r);
        }
        assert_int_equal(finished, 1);
        assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
        assert_string_equal(out_of(r), "ready\nterm\n");
        assert_true(tu_wait_pid_gone(pid, 2000));
        shexec_run_free(r);
    }
}

/* shexec_session_wait() and shexec_session_process() return how many
 * runs finished in the call: 0 when nothing did. */
static void test_wait_and_process_count_finished(void **state)
{
    shexec_session *s = *state;
    /* nothing running: at once, nothing finished, nothing to watch */
    assert_int_equal(shexec_session_wait(s, 0), 0);
    assert_int_equal(shexec_session_wait(s, -1), 0);
    struct pollfd fds[8];
    int32_t timeout = 5;
    assert_int_equal(shexec_session_pollfds(fds, 8, &timeout, s), 0);
    assert_int_equal(timeout, -1);
    assert_int_equal(shexec_session_process(s, NULL, 0), 0);

    shexec_run *a = NULL, *b = NULL, *slow = NULL;
    assert_int_equal(shexec_run_new(&a, s, "true"), SHEXEC_OK);
    assert_int_equal(shexec_run_new(&b, s, "exit 2"), SHEXEC_OK);
    assert_int_equal(shexec_run_new(&slow, s, "sleep 30"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(slow), SHEXEC_OK);
    assert_int_equal(shexec_run_start(a), SHEXEC_OK);
    assert_int_equal(shexec_run_start(b), SHEXEC_OK);
    int finished = 0;
    int64_t end = tu_now_ms() + 20000;
    while (shexec_run_state(a) <= SHEXEC_STATE_RUNNING || shexec_run_state(b) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() < end);
        int rc = shexec_session_wait(s, -1); /* no limit: it returns when one finished */
        assert_true(rc >= 1);
        finished += rc;
    }
    assert_int_equal(finished, 2);
    assert_int_equal(shexec_run_exit_code(b), 2);
    assert_int_equal(shexec_session_wait(s, 50), 0); /* the time ran out */
    assert_false(shexec_run_state(slow) > SHEXEC_STATE_RUNNING);

    /* process counts the same way */
    assert_int_equal(shexec_run_cancel(slow), SHEXEC_OK);
    assert_int_equal(pump_host_loop(s, slow), 1);
    assert_int_equal(shexec_run_state(slow), SHEXEC_STATE_CANCELLED);
    shexec_run_free(a);
    shexec_run_free(b);
    shexec_run_free(slow);
}

static void cancel_on_marker(void *user, int stream, const char *data, size_t len)
{
    shexec_run **r = user;
    if (stream == SHEXEC_STDOUT && memmem(data, len, "MARK", 4))
        shexec_run_cancel(*r);
}

static void test_cancel_from_callback(void **state)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, *state, "echo MARK; sleep 300"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(r, cancel_on_marker, &r), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_CANCELLED);
    shexec_run_free(r);
}

static void test_free_running_run_and_session(void **state)
{
    (void)state;
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    shexec_session_set_kill_grace_ms(s, 200);
    shexec_run *a = NULL, *b = NULL;
    assert_int_equal(shexec_run_new(&a, s, "echo $$; sleep 300"), SHEXEC_OK);
    assert_int_equal(shexec_run_new(&b, s, "trap '' TERM; echo $$; sleep 300"), SHEXEC_OK);
    assert_int_equal(shexec_run_start(a), SHEXEC_OK);
    assert_int_equal(shexec_run_start(b), SHEXEC_OK);
    pid_t pa = (pid_t)shexec_run_pid(a), pb = (pid_t)shexec_run_pid(b);
    shexec_run_free(a); /* terminates and reaps */
    assert_false(tu_pid_alive(pa));
    shexec_session_free(s); /* b: TERM ignored, KILL after the grace */
    assert_false(tu_pid_alive(pb));
    assert_int_equal(shexec_run_state(b), SHEXEC_STATE_CANCELLED);
    assert_int_equal(shexec_run_start(b), SHEXEC_ESTATE);
    shexec_run_free(b);
}

/* ---- streaming ---------------------------------------------------------- */

static void test_streaming_chunks(void **state)
{
    collected c = {SHX_BUF_INIT, SHX_BUF_INIT, 0, 0};
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, *state,
                                     "for i in 1 2 3 4; do echo line$i; echo e$i >&2; sleep 0.05; done"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(r, collect, &c), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(c.out.data, "line1\nline2\nline3\nline4\n");
    assert_string_equal(c.err.data, "e1\ne2\ne3\ne4\n");
    assert_string_equal(out_of(r), c.out.data);
    assert_string_equal(err_of(r), c.err.data);
    /* produced 50 ms apart, so they arrived as they were produced */
    assert_true(c.out_calls >= 3);
    assert_true(c.err_calls >= 3);
    shexec_run_free(r);
    collected_free(&c);
}

/* After a round that read output the loop looks for more before it
 * sleeps; a command that prints nothing never makes it look so, and the
 * output is the same either way. */
static void test_loop_spins_only_after_output(void **state)
{
    shexec_session *s = *state;
    uint64_t before = shx_test_output_spins(s);
    shexec_run *r = run_cmd(s, "sleep 0.2");
    assert_string_equal(out_of(r), "");
    assert_true(shx_test_output_spins(s) == before);
    shexec_run_free(r);

    /* the output comes while sleep keeps the pipe open: a round reads it,
     * and the next looks again before it sleeps */
    r = run_cmd(s, "echo hi; sleep 0.2; echo there >&2");
    assert_string_equal(out_of(r), "hi\n");
    assert_string_equal(err_of(r), "there\n");
    uint64_t spins = shx_test_output_spins(s) - before;
    assert_true(spins >= 1);
    shexec_run_free(r);

    /* a bulk stream arrives whole */
    collected c = {SHX_BUF_INIT, SHX_BUF_INIT, 0, 0};
    assert_int_equal(shexec_run_new(&r, s, "head -c 3000000 /dev/zero | tr '\\0' x"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(r, collect, &c), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(c.out.len, 3000000);
    assert_null(memchr(c.out.data, '\0', c.out.len)); /* every byte went through tr */
    assert_int_equal(shexec_run_output_total(r, SHEXEC_STDOUT), 3000000);
    shexec_run_free(r);
    collected_free(&c);
}

static void test_streaming_long_line_and_binary(void **state)
{
    collected c = {SHX_BUF_INIT, SHX_BUF_INIT, 0, 0};
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, *state, "head -c 1000000 /dev/zero | tr '\\0' a"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(r, collect, &c), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(c.out.len, 1000000);
    for (size_t i = 0; i < c.out.len; i++)
        if (c.out.data[i] != 'a')
            fail_msg("byte %zu is %d", i, c.out.data[i]);
    assert_int_equal(shexec_run_output_total(r, SHEXEC_STDOUT), 1000000);
    shexec_run_free(r);
    collected_free(&c);

    collected b = {SHX_BUF_INIT, SHX_BUF_INIT, 0, 0};
    assert_int_equal(shexec_run_new(&r, *state, "printf 'a\\000b\\000\\377c'"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(r, collect, &b), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(b.out.len, 6);
    assert_memory_equal(b.out.data, "a\0b\0\377c", 6);
    size_t n;
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    assert_int_equal(n, 6);
    assert_memory_equal(out, "a\0b\0\377c", 6);
    shexec_run_free(r);
    collected_free(&b);
}

/* ---- bounded capture ------------------------------------------------------ */

static size_t count_chars(const char *s, size_t n)
{
    size_t chars = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            chars++;
    return chars;
}

static void test_capture_limits(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = run_cmd(s, "head -c 10000 /dev/zero | tr '\\0' x");
    size_t n;
    shexec_run_output(r, SHEXEC_STDOUT, &n);
    assert_int_equal(n, 10000);
    assert_false(shexec_run_truncated(r, SHEXEC_STDOUT));
    shexec_run_free(r);

    r = run_cmd(s, "head -c 50000 /dev/zero | tr '\\0' x");
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    assert_true(shexec_run_truncated(r, SHEXEC_STDOUT));
    const char *notice = "\n[output truncated: kept the first 30000 characters (30000 bytes) of "
                         "50000 (50000 bytes, 1 lines); 20000 characters (20000 bytes) omitted]\n";
    assert_int_equal(n, 30000 + strlen(notice));
    assert_string_equal(out + 30000, notice);
    assert_int_equal(shexec_run_output_total(r, SHEXEC_STDOUT), 50000);
    shexec_run_free(r);

    /* stderr is limited independently */
    r = run_cmd(s, "head -c 5000 /dev/zero | tr '\\0' o; head -c 40000 /dev/zero | tr '\\0' e >&2");
    shexec_run_output(r, SHEXEC_STDOUT, &n);
    assert_int_equal(n, 5000);
    assert_false(shexec_run_truncated(r, SHEXEC_STDOUT));
    out = shexec_run_output(r, SHEXEC_STDERR, &n);
    assert_true(shexec_run_truncated(r, SHEXEC_STDERR));
    assert_non_null(strstr(out, "\n[output truncated: kept the first 30000 characters (30000 "
                                "bytes) of 40000 (40000 bytes, 1 lines); 10000 characters (10000 "
                                "bytes) omitted]\n"));
    shexec_run_free(r);

    /* characters, not bytes: 40,000 two-byte characters keep 30,000 whole
     * ones, and the notice counts both */
    r = run_cmd(s, "for i in $(seq 400); do printf '%0100d' 0; done | sed 's/0/\xc3\xa9/g'");
    out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    notice = "\n[output truncated: kept the first 30000 characters (60000 bytes) of 40000 (80000 "
             "bytes, 1 lines); 10000 characters (20000 bytes) omitted]\n";
    const char *cut = strstr(out, notice);
    assert_non_null(cut);
    assert_int_equal(cut - out, 60000);
    assert_int_equal(n, 60000 + strlen(notice));
    assert_int_equal(count_chars(out, (size_t)(cut - out)), 30000);
    shexec_run_free(r);
}

static long rss_peak_kb(void)
{
    return (long)tu_proc_status(0, "VmHWM");
}

static void count_bytes(void *user, int stream, const char *data, size_t len)
{
    (void)stream;
    (void)data;
    *(uint64_t *)user += len;
}

static void test_capture_memory_bounded(void **state)
{
    uint64_t size = heavy_ok() ? (1ull << 30) : (64ull << 20);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "head -c %llu /dev/zero", (unsigned long long)size);
    long before = rss_peak_kb();
    uint64_t seen = 0;
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, *state, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(r, count_bytes, &seen), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 300000), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    long after = rss_peak_kb();
    assert_int_equal(seen, size);
    assert_int_equal(shexec_run_output_total(r, SHEXEC_STDOUT), size);
    assert_true(shexec_run_truncated(r, SHEXEC_STDOUT));
    print_message("peak RSS %ld kB -> %ld kB after %llu bytes\n", before, after,
                  (unsigned long long)size);
    assert_true(after - before < 8 * 1024);
    shexec_run_free(r);
}

/* ---- stdin ------------------------------------------------------------------ */

/*
 * pipe_sink shrinks its stdin pipe to one page: 96 MiB then go in 24576
 * writes of a page, each of which used to move the rest of the queue
 * (about 2 minutes here; 64 MiB took 47-70 s). Linear, it takes well under
 * a second on an idle machine; the bound leaves room for a loaded one,
 * where every page waits for the reader to be scheduled.
 */
static void test_stdin_large_input_linear(void **state)
{
    shexec_session *s = *state;
    size_t total = heavy_ok() ? (96u << 20) : (4u << 20), piece = 1u << 20;
    /* all of it queued before the loop runs: a bound on queued input to hold it */
    assert_int_equal(shexec_session_set_input_queue_max(s, total), SHEXEC_OK);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, tu_helper("pipe_sink")), SHEXEC_OK);
    assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 300000), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    char *buf = malloc(piece);
    assert_non_null(buf);
    memset(buf, 'x', piece);
    int64_t t0 = tu_now_ms();
    for (size_t done = 0; done < total; done += piece)
        assert_int_equal(shexec_run_write(r, buf, piece), SHEXEC_OK);
    free(buf);
    assert_int_equal(shexec_run_close_stdin(r), SHEXEC_OK);
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() - t0 < 30000);
        assert_true(shexec_session_wait(s, 1000) >= 0);
    }
    int64_t ms = tu_now_ms() - t0;
    print_message("%zu MiB through stdin: %lld ms\n", total >> 20, (long long)ms);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(r), 0);
    char want[32];
    snprintf(want, sizeof want, "%zu\n", total);
    assert_string_equal(out_of(r), want);
    assert_true(ms < 30000);
    shexec_run_free(r);
}

/* The timeout fires on time while input is being written: to a command
 * that never reads, and to one that reads as fast as it can. */
static void test_stdin_timeout_while_writing(void **state)
{
    shexec_session *s = *state;
    shexec_session_set_kill_grace_ms(s, 100);
    size_t total = heavy_ok() ? (64u << 20) : (4u << 20);
    char sink[512];
    snprintf(sink, sizeof sink, "%s; sleep 30", tu_helper("pipe_sink"));
    const char *cmds[] = {"sleep 30", sink};
    for (int i = 0; i < 2; i++) {
        shexec_run *r = NULL;
        assert_int_equal(shexec_run_new(&r, s, cmds[i]), SHEXEC_OK);
        assert_int_equal(shexec_run_set_stdin(r, 1), SHEXEC_OK);
        assert_int_equal(shexec_run_set_timeout_ms(r, 300), SHEXEC_OK);
        assert_int_equal(shexec_run_start(r), SHEXEC_OK);
        char *buf = calloc(1, total);
        assert_non_null(buf);
        assert_int_equal(shexec_run_write(r, buf, total), SHEXEC_OK);
        free(buf);
        int64_t t0 = tu_now_ms();
        while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
            assert_true(shexec_session_wait(s, -1) >= 0);
        int64_t ms = tu_now_ms() - t0;
        print_message("%s: timed out after %lld ms\n", cmds[i], (long long)ms);
        assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
        assert_true(ms < 5000);
        shexec_run_free(r);
    }
}

/* ---- bad input ------------------------------------------------------------ */

static void test_bad_input(void **state)
{
    shexec_session *s = *state;
    shexec_run *r = (shexec_run *)1;
    assert_int_equal(shexec_run_new(&r, s, NULL), SHEXEC_EINVAL);
    assert_null(r);
    assert_int_equal(shexec_run_new(&r, s, ""), SHEXEC_EINVAL);
    assert_non_null(strstr(shexec_session_errmsg(s), "empty"));
    assert_int_equal(shexec_run_new(&r, NULL, "true"), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_new(NULL, s, "true"), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_new_bytes(&r, s, "echo a\0b", 8), SHEXEC_EINVAL);
    assert_non_null(strstr(shexec_session_errmsg(s), "NUL"));
    assert_int_equal(shexec_session_new(NULL), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_exec(NULL), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_start(NULL), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_cancel(NULL), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_cwd(NULL, "/"), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_wait(NULL, 0), SHEXEC_EINVAL);
    struct pollfd fds[4];
    int32_t timeout = 0;
    assert_int_equal(shexec_session_pollfds(fds, 4, &timeout, NULL), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_pollfds(fds, 4, NULL, s), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_pollfds(NULL, 4, &timeout, s), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_process(NULL, fds, 0), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_process(s, NULL, 1), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_output_limit(s, 10, 7, SHEXEC_KEEP_HEAD), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_output_limit(s, 10, SHEXEC_UNIT_BYTES, 9), SHEXEC_EINVAL);
    assert_string_equal(shexec_session_errmsg(NULL), "");
    assert_int_equal(shexec_run_state(NULL), SHEXEC_STATE_NEW);
    assert_int_equal(shexec_run_exit_code(NULL), -1);
    size_t n = 99;
    assert_string_equal(shexec_run_output(NULL, SHEXEC_STDOUT, &n), "");
    assert_int_equal(n, 0);
    shexec_run_free(NULL);
    shexec_session_free(NULL);

    /* a length with a NUL-free command works */
    assert_int_equal(shexec_run_new_bytes(&r, s, "echo abc; junk", 8), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(out_of(r), "abc\n");
    size_t bad = 9;
    shexec_run_output(r, 3, &bad);
    assert_int_equal(bad, 0);
    shexec_run_free(r);
}

static void test_command_too_long(void **state)
{
    if (!heavy_ok())
        skip();
    /* one argument may not exceed 128 KiB on Linux: this one runs all the same */
    size_t len = 300 * 1024;
    char *cmd = malloc(SHEXEC_MAX_COMMAND_BYTES + 2);
    memset(cmd, ' ', SHEXEC_MAX_COMMAND_BYTES + 1);
    memcpy(cmd, "true", 4);
    cmd[len] = '\0';
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, *state, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_exit_code(r), 0);
    shexec_run_free(r);
    /* above the documented bound: refused before anything runs */
    cmd[len] = ' ';
    cmd[SHEXEC_MAX_COMMAND_BYTES + 1] = '\0';
    assert_int_equal(shexec_run_new(&r, *state, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_E2BIG);
    assert_non_null(strstr(shexec_session_errmsg(*state), "SHEXEC_MAX_COMMAND_BYTES"));
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_NEW);
    shexec_run_free(r);
    free(cmd);
}

static void test_descriptors_exhausted(void **state)
{
    (void)state;
    if (!heavy_ok())
        skip();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        shexec_session *s = NULL;
        if (shexec_session_new(&s) != SHEXEC_OK)
            _exit(10);
        int before = tu_count_fds();
        /* leave exactly one free descriptor: a pipe needs two */
        int lowest = dup(0);
        close(lowest);
        struct rlimit rl = {(rlim_t)lowest + 1, (rlim_t)lowest + 1};
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            _exit(11);
        shexec_run *r = NULL;
        if (shexec_run_new(&r, s, "echo hi") != SHEXEC_OK)
            _exit(12);
        int rc = shexec_run_exec(r);
        if (rc != SHEXEC_ESYS) {
            fprintf(stderr, "rc %d: %s\n", rc, shexec_session_errmsg(s));
            _exit(13);
        }
        if (!strstr(shexec_session_errmsg(s), "descriptors") &&
            !strstr(shexec_session_errmsg(s), "Too many open files"))
            _exit(14);
        if (tu_count_fds() != before)
            _exit(15);
        if (tu_count_children() != 0)
            _exit(16);
        shexec_run_free(r);
        shexec_session_free(s);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* A shell that closes its output and runs on is waited for: the output's
 * hang-up is not its exit. */
static void test_output_closed_then_runs_on(void **state)
{
    shexec_session *s = *state;
    const char *const shells[] = {"/bin/sh", "/bin/bash"};
    for (int i = 0; i < 2; i++) {
        const char *argv[] = {shells[i], NULL};
        assert_int_equal(shexec_session_set_shell(s, argv, SHEXEC_WRAPPER_LOCAL), SHEXEC_OK);
        shexec_run *r = run_cmd(s, "echo before; exec >&- 2>&-; sleep 0.3; exit 5");
        assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
        assert_int_equal(shexec_run_exit_code(r), 5);
        assert_string_equal(out_of(r), "before\n");
        shexec_run_free(r);
    }
}

static void test_version_and_strerror(void **state)
{
    (void)state;
    assert_string_equal(shexec_version(), SHEXEC_VERSION_STRING);
    /* the header's numbers agree with its string (the Makefile reads the string) */
    char parts[32];
    snprintf(parts, sizeof parts, "%d.%d.%d", SHEXEC_VERSION_MAJOR, SHEXEC_VERSION_MINOR,
             SHEXEC_VERSION_PATCH);
    assert_string_equal(parts, SHEXEC_VERSION_STRING);
    assert_int_equal(SHEXEC_VERSION_NUMBER, SHEXEC_VERSION_MAJOR * 10000 +
                                                SHEXEC_VERSION_MINOR * 100 + SHEXEC_VERSION_PATCH);
    assert_string_equal(shexec_strerror(SHEXEC_ENOCWD), "working directory not found");
    assert_string_equal(shexec_strerror(SHEXEC_OK), "success");
    assert_string_equal(shexec_strerror(-999), "unknown error");
    for (int c = 0; c >= SHEXEC_E2BIG; c--)
        assert_string_not_equal(shexec_strerror(c), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_echo_hello, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_code_is_data, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stderr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bulk_output_grows_its_pipe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_own_process_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_pid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_child_signals_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_inherited_descriptors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_inherited_descriptors_high, setup, teardown),
        cmocka_unit_test_setup_teardown(test_platform_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stdin_is_dev_null, setup, teardown),
        cmocka_unit_test_setup_teardown(test_library_descriptors_cloexec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shell_selection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_is_an_argument, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cwd_checked_before_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cwd_with_odd_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_cwd_does_not_move_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_inherit_replace_override, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_with_pidfd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pidfd_is_the_shells, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bare_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_time_pinned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_fallback_without_pidfd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_kills_and_keeps_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_term_trap_cleanup_captured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_term_ignored_gets_kill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_kills_whole_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_default_and_clamp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_timeout_ms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leftovers_do_not_hold_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_wait_cancel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pollfds_never_signals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_and_process_count_finished, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_from_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_free_running_run_and_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streaming_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loop_spins_only_after_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streaming_long_line_and_binary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capture_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capture_memory_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stdin_large_input_linear, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stdin_timeout_while_writing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_too_long, setup, teardown),
        cmocka_unit_test_setup_teardown(test_descriptors_exhausted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_closed_then_runs_on, setup, teardown),
        cmocka_unit_test_setup_teardown(test_version_and_strerror, setup, teardown),
    };
    return cmocka_run_group_tests_name("run", tests, NULL, NULL);
}
