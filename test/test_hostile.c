/*
 * test_hostile.c - the library inside hosts that make life hard: SIGCHLD
 * ignored or SA_NOCLDWAIT (the kernel reaps our shells), every signal
 * blocked and odd dispositions, a thousand inheritable descriptors,
 * descriptors exhausted, an EINTR storm from a 1 ms timer, host children of
 * its own, a host that pumps late, commands that fork hundreds of processes
 * or leave their process group. Each case runs in a forked child so that
 * what it does to the process (dispositions, masks, limits, timers) dies
 * with it; the child reports through its exit status and says on stderr
 * what went wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shx/buf.h"
#include "shexec.h"
#include "testhook.h"
#include "testutil.h"

extern char **environ;

/* ---- running a case in a child ------------------------------------------ */

/* Inside a case the cmocka state belongs to the parent: fail by exit status. */
#define CHECK(c)                                                                        \
    do {                                                                                \
        if (!(c)) {                                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);       \
            fflush(stderr);                                                             \
            _exit(1);                                                                   \
        }                                                                               \
    } while (0)

#define CHECK_INT(a, b)                                                                 \
    do {                                                                                \
        long long a_ = (long long)(a), b_ = (long long)(b);                             \
        if (a_ != b_) {                                                                 \
            fprintf(stderr, "%s:%d: %s is %lld, expected %lld\n", __FILE__, __LINE__,   \
                    #a, a_, b_);                                                        \
            fflush(stderr);                                                             \
            _exit(1);                                                                   \
        }                                                                               \
    } while (0)

#define CHECK_STR(a, b)                                                                 \
    do {                                                                                \
        const char *a_ = (a), *b_ = (b);                                                \
        if (strcmp(a_, b_) != 0) {                                                      \
            fprintf(stderr, "%s:%d: %s is \"%.200s\", expected \"%.200s\"\n", __FILE__, \
                    __LINE__, #a, a_, b_);                                              \
            fflush(stderr);                                                             \
            _exit(1);                                                                   \
        }                                                                               \
    } while (0)

/* 0 under valgrind: it is slow and does not know pidfd_open (3.19) */
static int heavy_ok(void)
{
    return !tu_under_valgrind();
}

/* A case's variant, chosen by the parent before the fork. */
static int g_variant;

/*
 * Run fn in a forked child and fail unless it exits 0 within limit_s
 * seconds. The watchdog is the parent's: a child that blocks every signal
 * could not be woken by an alarm of its own.
 */
static void run_forked(void (*fn)(void), int variant, int limit_s)
{
    tu_leak_begin();
    g_variant = variant;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        fn();
        fflush(stdout);
        _exit(0);
    }
    int64_t end = tu_now_ms() + (int64_t)limit_s * 1000 * (heavy_ok() ? 1 : 4);
    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        assert_true(w == 0 || (w < 0 && errno == EINTR));
        if (tu_now_ms() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            fail_msg("the case hung (killed after %d s)", limit_s);
        }
        usleep(5000);
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("the case failed: %s %d", WIFEXITED(st) ? "exit" : "signal",
                 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    tu_leak_end();
}

/* ---- helpers for use inside a case -------------------------------------- */

static shexec_session *new_session(int use_pidfd)
{
    shexec_session *s = NULL;
    CHECK_INT(shexec_session_new(&s), SHEXEC_OK);
    shx_test_use_pidfd(s, use_pidfd);
    CHECK_INT(shexec_session_set_kill_grace_ms(s, 300), SHEXEC_OK);
    return s;
}

/* A session on the process-group path, whatever this machine's cgroups:
 * the path that finds processes that left the group through /proc. */
static shexec_session *new_group_session(int use_pidfd)
{
    shexec_session *s = new_session(use_pidfd);
    CHECK_INT(shexec_session_set_containment(s, "off"), SHEXEC_OK);
    return s;
}

static shexec_run *xrun(shexec_session *s, const char *cmd, uint32_t timeout_ms)
{
    shexec_run *r = NULL;
    CHECK_INT(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    if (timeout_ms)
        CHECK_INT(shexec_run_set_timeout_ms(r, timeout_ms), SHEXEC_OK);
    int rc = shexec_run_exec(r);
    if (rc != SHEXEC_OK)
        fprintf(stderr, "run \"%s\": %d %s\n", cmd, rc, shexec_session_errmsg(s));
    CHECK_INT(rc, SHEXEC_OK);
    CHECK(shexec_run_state(r) > SHEXEC_STATE_RUNNING);
    return r;
}

static const char *out_of(shexec_run *r)
{
    return shexec_run_output(r, SHEXEC_STDOUT, NULL);
}

/* Start cmd in the background as a task of s. */
static shexec_task *start_task(shexec_session *s, const char *cmd)
{
    shexec_run *r = NULL;
    shexec_task *t = NULL;
    CHECK_INT(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    CHECK_INT(shexec_run_start_task(&t, r), SHEXEC_OK);
    return t;
}

static void wait_task(shexec_session *s, shexec_task *t)
{
    int64_t end = tu_now_ms() + 30000;
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING) {
        CHECK(tu_now_ms() < end);
        CHECK(shexec_session_wait(s, 1000) >= 0);
    }
}

/* Every pid listed in file (one a line) is gone within ms; returns how many. */
static int pids_gone(const char *file, int ms)
{
    FILE *f = fopen(file, "r");
    CHECK(f != NULL);
    int n = 0, pid;
    while (fscanf(f, "%d", &pid) == 1) {
        if (!tu_wait_pid_gone(pid, ms)) {
            fprintf(stderr, "pid %d (from %s) is still alive\n", pid, file);
            CHECK(0);
        }
        n++;
    }
    fclose(f);
    return n;
}

/* ---- SIGCHLD ignored / SA_NOCLDWAIT ------------------------------------ */

/*
 * The kernel reaps the shells the moment they exit, so their status is
 * lost: a run still completes with all its output and the exact exit code
 * (the shell reports it on its channel), a run the library ended
 * reports -1 (and no signal) instead of a made-up status, and what the
 * command left in its group is still adopted or killed.
 */
static void case_sigchld_reaped_by_kernel(void)
{
    if (g_variant == 0) {
        CHECK(signal(SIGCHLD, SIG_IGN) != SIG_ERR);
    } else {
        struct sigaction sa = {.sa_handler = SIG_DFL, .sa_flags = SA_NOCLDWAIT};
        CHECK(sigaction(SIGCHLD, &sa, NULL) == 0);
    }
    const char *dir = tu_mkdtemp();
    CHECK(dir != NULL);
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (int use_pidfd = 1; use_pidfd >= 0; use_pidfd--) {
        int fds = tu_count_fds();
        shexec_session *s = new_session(use_pidfd);

        shexec_run *r = xrun(s, "echo out; echo err >&2; exit 3", 0);
        CHECK_INT(shexec_run_state(r), SHEXEC_STATE_EXITED);
        CHECK_INT(shexec_run_exit_code(r), 3);
        CHECK_INT(shexec_run_signal(r), 0);
        CHECK_STR(out_of(r), "out\n");
        CHECK_STR(shexec_run_output(r, SHEXEC_STDERR, NULL), "err\n");
        CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_NONE);
        shexec_run_free(r);

        /* the cwd still travels by the record; so does a status of 0 */
        char cmd[512];
        snprintf(cmd, sizeof cmd, "cd '%s'", tmp);
        shexec_run_free(xrun(s, cmd, 0));
        CHECK_STR(shexec_session_cwd(s), tmp);

        /* a timeout still ends the run promptly */
        int64_t t0 = tu_now_ms();
        r = xrun(s, "sleep 10", 300);
        CHECK_INT(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
        CHECK_INT(shexec_run_exit_code(r), -1);
        CHECK(tu_now_ms() - t0 < 5000);
        shexec_run_free(r);

        /* a member that ignores SIGTERM outlives the shell: it is still
         * killed. Once the kernel has reaped the shell for the host, only
         * /proc can show that the group id is still the command's (anchors),
         * so a build without it may not signal the group then. */
        if (shx_test_platform() & SHX_PLATFORM_PROCFS) {
            r = xrun(s, "sh -c 'trap \"\" TERM; echo $$; while :; do sleep 0.05; done'", 300);
            CHECK_INT(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
            int stubborn = atoi(out_of(r));
            CHECK(stubborn > 0);
            CHECK(tu_wait_pid_gone(stubborn, 3000));
            shexec_run_free(r);
        }

        /* leftovers are still adopted, and the task can kill them (with
         * /proc only: see above; without it they are not followed) */
        shexec_task *t = NULL;
        if (shx_test_platform() & SHX_PLATFORM_PROCFS) {
            r = xrun(s, "sleep 100 & echo $!", 0);
            CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
            int left = atoi(out_of(r));
            CHECK(left > 0 && tu_pid_alive(left));
            CHECK_INT(shexec_session_take_task(&t, s, tu_leftover_id(r)), SHEXEC_OK);
            CHECK_INT(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK);
            wait_task(s, t);
            CHECK_INT(shexec_run_state(shexec_task_run(t)), SHEXEC_STATE_KILLED);
            CHECK(tu_wait_pid_gone(left, 3000));
            shexec_task_free(t);
            shexec_run_free(r);

            /* with the KILL policy they die with the shell */
            CHECK_INT(shexec_session_set_on_leftovers(s, SHEXEC_ON_LEFTOVERS_KILL), SHEXEC_OK);
            r = xrun(s, "sleep 100 & echo $!", 0);
            CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_KILLED);
            CHECK(tu_wait_pid_gone(atoi(out_of(r)), 3000));
            shexec_run_free(r);
            CHECK_INT(shexec_session_set_on_leftovers(s, SHEXEC_ON_LEFTOVERS_ADOPT), SHEXEC_OK);
        }

        /* a task: output kept, status reported the same way */
        t = start_task(s, "echo task; exit 4");
        wait_task(s, t);
        CHECK_INT(shexec_run_state(shexec_task_run(t)), SHEXEC_STATE_EXITED);
        CHECK_INT(shexec_run_exit_code(shexec_task_run(t)), 4);
        CHECK_STR(shexec_run_output(shexec_task_run(t), SHEXEC_STDOUT, NULL), "task\n");
        shexec_task_free(t);

        /* freeing the session with a leftover task and a running run */
        int left = -1;
        if (shx_test_platform() & SHX_PLATFORM_PROCFS) {
            r = xrun(s, "sleep 100 & echo $!", 0);
            left = atoi(out_of(r));
            shexec_run_free(r);
        }
        r = NULL;
        CHECK_INT(shexec_run_new(&r, s, "sleep 100"), SHEXEC_OK);
        CHECK_INT(shexec_run_start(r), SHEXEC_OK);
        shexec_session_free(s);
        CHECK_INT(shexec_run_state(r), SHEXEC_STATE_CANCELLED);
        shexec_run_free(r);
        CHECK(left < 0 || tu_wait_pid_gone(left, 3000));

        CHECK_INT(tu_count_fds(), fds);
        /* the kernel reaps here: a child the free killed has ended when the
         * wait says so (ECHILD), but may stay listed a moment longer, while
         * the kernel releases it */
        int64_t listed_until = tu_now_ms() + 2000;
        while (tu_count_children() > 0 && tu_now_ms() < listed_until)
            usleep(1000);
        CHECK_INT(tu_count_children(), 0);
    }
    tu_rmtree(tmp);
}

static void test_sigchld_ignored(void **state)
{
    (void)state;
    run_forked(case_sigchld_reaped_by_kernel, 0, 60);
}

static void test_sigchld_nocldwait(void **state)
{
    (void)state;
    run_forked(case_sigchld_reaped_by_kernel, 1, 60);
}

/*
 * A host whose SIGCHLD handler reaps every child (waitpid(-1)) takes the
 * shells' statuses at any moment, also between the library's look and its
 * reap: runs must neither hang nor report a status they did not see.
 */
static void reap_all(int sig)
{
    (void)sig;
    int e = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    errno = e;
}

static void case_host_reaps_everything(void)
{
    struct sigaction sa = {.sa_handler = reap_all, .sa_flags = SA_RESTART};
    CHECK(sigaction(SIGCHLD, &sa, NULL) == 0);
    for (int use_pidfd = 1; use_pidfd >= 0; use_pidfd--) {
        shexec_session *s = new_session(use_pidfd);
        for (int i = 0; i < 30; i++) {
            char cmd[64];
            snprintf(cmd, sizeof cmd, "echo %d; exit %d", i, i);
            shexec_run *r = xrun(s, cmd, 0);
            char want[32];
            snprintf(want, sizeof want, "%d\n", i);
            CHECK_STR(out_of(r), want);
            CHECK_INT(shexec_run_state(r), SHEXEC_STATE_EXITED);
            int code = shexec_run_exit_code(r);
            CHECK(code == i || code == -1);
            shexec_run_free(r);
        }
        shexec_run *r = xrun(s, "sleep 10", 200);
        CHECK_INT(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
        shexec_run_free(r);
        shexec_session_free(s);
    }
    CHECK_INT(tu_count_children(), 0);
}

static void test_host_reaps_every_child(void **state)
{
    (void)state;
    run_forked(case_host_reaps_everything, 0, 60);
}

/* ---- signal dispositions and masks ------------------------------------- */

/* signals 32 and 33 belong to glibc, which keeps them ignored across spawn */
#define GLIBC_INTERNAL_SIGS (3ull << 31)

static volatile sig_atomic_t g_host_signals;

static void count_signal(int sig)
{
    (void)sig;
    g_host_signals++;
}

static void parse_masks(const char *text, unsigned long long *blk, unsigned long long *ign)
{
    const char *b = strstr(text, "SigBlk:"), *i = strstr(text, "SigIgn:");
    CHECK(b && i);
    CHECK(sscanf(b, "SigBlk: %llx", blk) == 1);
    CHECK(sscanf(i, "SigIgn: %llx", ign) == 1);
}

/* What a plainly spawned grep reports: proof the hostile setup would leak. */
static void baseline_masks(unsigned long long *blk, unsigned long long *ign)
{
    int p[2];
    CHECK(pipe2(p, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    char *argv[] = {"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status", NULL};
    pid_t pid;
    CHECK(posix_spawnp(&pid, "grep", &fa, NULL, argv, environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    char buf[512];
    size_t n = 0;
    ssize_t got;
    while (n < sizeof buf - 1 && ((got = read(p[0], buf + n, sizeof buf - 1 - n)) > 0 ||
                                  (got < 0 && errno == EINTR)))
        if (got > 0)
            n += (size_t)got;
    buf[n] = '\0';
    close(p[0]);
    CHECK(waitpid(pid, NULL, 0) == pid);
    parse_masks(buf, blk, ign);
}

static void case_signals(void)
{
    struct sigaction handler = {.sa_handler = count_signal};
    struct sigaction ignore = {.sa_handler = SIG_IGN};
    CHECK(sigaction(SIGINT, &handler, NULL) == 0);
    CHECK(sigaction(SIGTERM, &handler, NULL) == 0);
    CHECK(sigaction(SIGQUIT, &ignore, NULL) == 0);
    CHECK(sigaction(SIGPIPE, &ignore, NULL) == 0);
    CHECK(sigaction(SIGUSR1, &ignore, NULL) == 0);
    CHECK(sigaction(SIGRTMIN + 3, &ignore, NULL) == 0);
    sigset_t all, now;
    sigfillset(&all);
    CHECK(sigprocmask(SIG_BLOCK, &all, NULL) == 0);

    unsigned long long blk, ign;
    baseline_masks(&blk, &ign);
    CHECK(blk & (1ull << (SIGINT - 1)));
    CHECK(ign & (1ull << (SIGPIPE - 1)));
    CHECK(ign & (1ull << (SIGQUIT - 1)));

    for (int use_pidfd = 1; use_pidfd >= 0; use_pidfd--) {
        shexec_session *s = new_session(use_pidfd);
        shexec_run *r = xrun(s, "grep -E '^Sig(Blk|Ign):' /proc/self/status", 0);
        parse_masks(out_of(r), &blk, &ign);
        CHECK_INT(blk, 0);
        CHECK_INT(ign & ~GLIBC_INTERNAL_SIGS, 0);
        shexec_run_free(r);

        /* the same for the shell itself, minus what bash sets up for itself */
        r = xrun(s, "exec grep -E '^Sig(Blk|Ign):' /proc/self/status", 0);
        parse_masks(out_of(r), &blk, &ign);
        CHECK_INT(blk, 0);
        CHECK_INT(ign & ~GLIBC_INTERNAL_SIGS, 0);
        shexec_run_free(r);

        /* SIGPIPE at its default in the child: `yes` ends */
        r = xrun(s, "yes | head -1", 20000);
        CHECK_INT(shexec_run_state(r), SHEXEC_STATE_EXITED);
        CHECK_INT(shexec_run_exit_code(r), 0);
        CHECK_STR(out_of(r), "y\n");
        shexec_run_free(r);

        /* SIGTERM at its default: a command can still be ended by it */
        r = xrun(s, "kill -TERM $$; sleep 5", 0);
        CHECK_INT(shexec_run_state(r), SHEXEC_STATE_SIGNALED);
        CHECK_INT(shexec_run_signal(r), SIGTERM);
        shexec_run_free(r);

        /* a timeout still works when the host blocks everything */
        r = xrun(s, "sleep 10", 200);
        CHECK_INT(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
        CHECK_INT(shexec_run_signal(r), SIGTERM);
        shexec_run_free(r);

        /* input to a command that already left: no SIGPIPE for the host */
        r = NULL;
        CHECK_INT(shexec_run_new(&r, s, "exec 0<&-; sleep 0.2"), SHEXEC_OK);
        CHECK_INT(shexec_run_set_stdin(r, 1), SHEXEC_OK);
        CHECK_INT(shexec_run_start(r), SHEXEC_OK);
        usleep(50000);
        static char big[256 * 1024];
        CHECK_INT(shexec_run_write(r, big, sizeof big), SHEXEC_OK);
        while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
            CHECK(shexec_session_wait(s, -1) >= 0);
        shexec_run_free(r);
        shexec_session_free(s);
    }

    /* the host's own settings are as it left them, and nothing is pending */
    CHECK(sigprocmask(SIG_BLOCK, NULL, &now) == 0);
    for (int sig = 1; sig < 32; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            CHECK(sigismember(&now, sig));
    sigset_t pending;
    CHECK(sigpending(&pending) == 0);
    for (int sig = 1; sig < 32; sig++)
        if (sig != SIGCHLD) /* our own children's exits may be pending: that is the host's */
            CHECK(!sigismember(&pending, sig));
    struct sigaction cur;
    CHECK(sigaction(SIGPIPE, NULL, &cur) == 0 && cur.sa_handler == SIG_IGN);
    CHECK(sigaction(SIGINT, NULL, &cur) == 0 && cur.sa_handler == count_signal);
    CHECK(sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler == count_signal);
    CHECK(sigaction(SIGQUIT, NULL, &cur) == 0 && cur.sa_handler == SIG_IGN);
    CHECK_INT(g_host_signals, 0);
    CHECK_INT(tu_count_children(), 0);
}

static void test_hostile_signal_state(void **state)
{
    (void)state;
    run_forked(case_signals, 0, 60);
}

/* ---- inheritable descriptors ---------------------------------------------- */

#define HOST_FDS 1000

static void case_many_inheritable_fds(void)
{
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    if (rl.rlim_cur < HOST_FDS + 64) {
        rl.rlim_cur = rl.rlim_max < HOST_FDS + 64 ? rl.rlim_max : HOST_FDS + 64;
        CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    }
    static int fd[HOST_FDS];
    static struct stat st[HOST_FDS];
    for (int i = 0; i < HOST_FDS; i++) {
        if (i % 100 == 50 && i + 1 < HOST_FDS) { /* no SOCK_CLOEXEC */
            CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, &fd[i]) == 0);
            i++;
            continue;
        }
        if (i % 3 == 0) {
            int p[2];
            if (i + 1 < HOST_FDS) {
                CHECK(pipe(p) == 0);
                fd[i] = p[0];
                fd[++i] = p[1];
                continue;
            }
        }
        fd[i] = open(i % 2 ? "/dev/null" : "/dev/zero", O_RDONLY);
        CHECK(fd[i] >= 0);
    }
    for (int i = 0; i < HOST_FDS; i++) {
        CHECK(fstat(fd[i], &st[i]) == 0);
        CHECK_INT(fcntl(fd[i], F_GETFD), 0);
    }
    int total = tu_count_fds();

    for (int use_pidfd = 1; use_pidfd >= 0; use_pidfd--) {
        shexec_session *s = new_session(use_pidfd);
        /* 3 is ls's own handle on the directory it lists: a command that
         * cannot move its shell runs bare (no channel) */
        shexec_run *r = xrun(s, "ls /proc/self/fd", 0);
        CHECK_STR(out_of(r), "0\n1\n2\n3\n");
        shexec_run_free(r);
        /* the shell's own table, listed by its globbing (3 is the listing,
         * 173 the run's channel, script.h: this command reports) */
        r = xrun(s, "for f in /proc/$$/fd/*; do echo ${f##*/}; done", 0);
        CHECK_STR(out_of(r), "0\n1\n173\n2\n3\n");
        shexec_run_free(r);

        /* the same through a terminal, a task and stdin */
        r = NULL;
        CHECK_INT(shexec_run_new(&r, s, "ls /proc/self/fd | tr '\\n' ' '"), SHEXEC_OK);
        CHECK_INT(shexec_run_set_pty(r, SHEXEC_PTY_ON), SHEXEC_OK);
        CHECK_INT(shexec_run_exec(r), SHEXEC_OK);
        CHECK_STR(out_of(r), "0 1 173 2 3 ");
        shexec_run_free(r);
        shexec_task *t = NULL;
        CHECK_INT(shexec_run_new(&r, s, "cat >/dev/null; ls /proc/self/fd"), SHEXEC_OK);
        CHECK_INT(shexec_run_set_stdin(r, 1), SHEXEC_OK);
        CHECK_INT(shexec_run_start_task(&t, r), SHEXEC_OK);
        CHECK_INT(shexec_run_close_stdin(shexec_task_run(t)), SHEXEC_OK);
        wait_task(s, t);
        /* a task reports nothing (bare): no channel either */
        CHECK_STR(shexec_run_output(shexec_task_run(t), SHEXEC_STDOUT, NULL), "0\n1\n2\n3\n");
        shexec_task_free(t);

        /* the proof a reader sees: had the write end of a host pipe leaked
         * into a process that lives on, the host would never read EOF */
        int p[2];
        CHECK(pipe(p) == 0);
        r = xrun(s, "sleep 100 & echo $!", 0);
        CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
        int left = atoi(out_of(r));
        CHECK(tu_pid_alive(left));
        close(p[1]);
        CHECK(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0);
        char c;
        CHECK_INT(read(p[0], &c, 1), 0);
        close(p[0]);
        shexec_run_free(r);
        shexec_session_free(s);
        CHECK(tu_wait_pid_gone(left, 3000));
    }

    /* the host's descriptors are untouched: same files, still inheritable */
    CHECK_INT(tu_count_fds(), total);
    for (int i = 0; i < HOST_FDS; i++) {
        struct stat now;
        CHECK(fstat(fd[i], &now) == 0);
        CHECK(now.st_dev == st[i].st_dev && now.st_ino == st[i].st_ino);
        CHECK_INT(fcntl(fd[i], F_GETFD), 0);
    }
    for (int i = 0; i < HOST_FDS; i++)
        close(fd[i]);
}

static void test_thousand_inheritable_fds(void **state)
{
    (void)state;
    run_forked(case_many_inheritable_fds, 0, 60);
}

/* ---- descriptors exhausted -------------------------------------------------- */

static void case_nofile_limit(void)
{
    shexec_session *s = new_session(heavy_ok());
    struct rlimit old;
    CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
    int base = tu_count_fds();
    CHECK(base < 12);
    struct rlimit low = {16, old.rlim_max};
    CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);

    /* leave `room` descriptors free below the limit, from none up to enough */
    int failed = 0, worked = 0;
    for (int room = 0; room <= 8; room++) {
        int held[16], nheld = 0, fd;
        while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
            held[nheld++] = fd;
        CHECK(errno == EMFILE);
        for (int i = 0; i < room && nheld > 0; i++)
            close(held[--nheld]);
        /* opendir needs one: count with room >= 2 only (the record file the
         * session keeps after its first run may take the last one); that
         * file is not a leak */
        int before = tu_count_fds() - tu_count_record_files();

        shexec_run *r = NULL;
        CHECK_INT(shexec_run_new(&r, s, "echo fine"), SHEXEC_OK);
        int rc = shexec_run_exec(r);
        if (rc == SHEXEC_OK && tu_under_valgrind() && !*out_of(r)) {
            /* valgrind runs a child as a fork, whose exec needs a free
             * descriptor of valgrind's own, and the first one's failure is
             * its exit status alone (as glibc's posix_spawn's is there) */
        } else if (rc == SHEXEC_OK) {
            CHECK_STR(out_of(r), "fine\n");
            worked++;
        } else {
            CHECK_INT(rc, SHEXEC_ESYS);
            CHECK(strlen(shexec_session_errmsg(s)) > 0);
            /* the C library's words for EMFILE (glibc and musl differ) */
            CHECK(strstr(shexec_session_errmsg(s), strerror(EMFILE)) != NULL);
            CHECK_INT(shexec_run_state(r), SHEXEC_STATE_NEW);
            failed++;
        }
        if (room < 2)
            CHECK_INT(rc, SHEXEC_ESYS); /* not even one pipe */
        shexec_run_free(r);

        /* the same through shexec_run_start */
        r = NULL;
        CHECK_INT(shexec_run_new(&r, s, "echo started"), SHEXEC_OK);
        int rc2 = shexec_run_start(r);
        if (rc2 == SHEXEC_OK) {
            while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
                CHECK(shexec_session_wait(s, -1) >= 0);
            CHECK_STR(out_of(r), "started\n");
        } else {
            CHECK_INT(rc2, SHEXEC_ESYS);
            CHECK(strlen(shexec_session_errmsg(s)) > 0);
            CHECK_INT(shexec_run_state(r), SHEXEC_STATE_NEW);
        }
        shexec_run_free(r);

        /* and as a task: a start that fails leaves the run the caller's, not started */
        shexec_task *t = NULL;
        r = NULL;
        CHECK_INT(shexec_run_new(&r, s, "echo task"), SHEXEC_OK);
        rc = shexec_run_start_task(&t, r);
        if (rc == SHEXEC_OK) {
            wait_task(s, t);
            CHECK_STR(shexec_run_output(shexec_task_run(t), SHEXEC_STDOUT, NULL), "task\n");
            shexec_task_free(t);
        } else {
            CHECK_INT(rc, SHEXEC_ESYS);
            CHECK(t == NULL);
            CHECK_INT(shexec_run_state(r), SHEXEC_STATE_NEW);
            shexec_run_free(r);
        }

        if (room >= 2) {
            CHECK(tu_count_record_files() <= 1); /* one run at a time: one kept */
            CHECK_INT(tu_count_fds() - tu_count_record_files(), before);
        }
        for (int i = 0; i < nheld; i++)
            close(held[i]);
        CHECK(tu_count_record_files() <= 1);
        CHECK_INT(tu_count_fds() - tu_count_record_files(), base);
        CHECK_INT(tu_count_children(), 0); /* no child, no zombie */
    }
    CHECK(failed >= 2);
    CHECK(worked >= 1 || tu_under_valgrind()); /* there: see above */

    /* with the limit back, the same session works */
    CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
    shexec_run *r = xrun(s, "echo again", 0);
    CHECK_STR(out_of(r), "again\n");
    shexec_run_free(r);
    shexec_session_free(s);
    CHECK_INT(tu_count_fds(), base);
}

static void test_descriptor_limit(void **state)
{
    (void)state;
    run_forked(case_nofile_limit, 0, 60);
}

/* ---- a file-size limit ----------------------------------------------------- */

/* Lower the soft RLIMIT_FSIZE of this process to `bytes`. */
static void limit_file_size(uint64_t bytes)
{
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_FSIZE, &rl) == 0);
    rl.rlim_cur = (rlim_t)bytes;
    CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
}

/*
 * A host under RLIMIT_FSIZE (`ulimit -f`, systemd's LimitFSIZE=) whose
 * commands outgrow their output limit into spill files: a write past the
 * limit would raise SIGXFSZ, which kills the host. The spill file stops
 * below the limit and says why (CAPPED, EFBIG, its last line, the notice);
 * a limit lowered while a command runs to where no byte fits fails its
 * spill, saying why. The output itself is whole either way.
 */
static void case_file_size_limit(void)
{
    const uint64_t limit = 256 << 10;
    char dir[256];
    snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
    limit_file_size(limit);
    shexec_session *s = new_session(1);
    CHECK_INT(shexec_session_set_spill_dir(s, dir, 0, 0, 0), SHEXEC_OK);
    shexec_run *r = xrun(s, "head -c 2000000 /dev/zero | tr '\\0' x", 0);
    CHECK_INT(shexec_run_exit_code(r), 0);
    CHECK_INT(shexec_run_output_total(r, SHEXEC_STDOUT), 2000000);
    const char *path;
    uint64_t bytes;
    int err;
    CHECK_INT(shexec_run_spill(r, SHEXEC_STDOUT, &path, &bytes, &err), SHEXEC_SPILL_CAPPED);
    CHECK_INT(err, EFBIG);
    CHECK(bytes > 0 && bytes < limit);
    struct stat st;
    CHECK(stat(path, &st) == 0);
    CHECK((uint64_t)st.st_size > bytes); /* the closing line, within the limit */
    CHECK((uint64_t)st.st_size <= limit);
    char line[160] = "";
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    CHECK(fseek(f, (long)bytes, SEEK_SET) == 0);
    CHECK(fread(line, 1, sizeof line - 1, f) > 0);
    fclose(f);
    char want[256];
    snprintf(want, sizeof want, "\n[spill file ends here: %llu more bytes were not written "
             "(file-size limit)]\n", (unsigned long long)(2000000 - bytes));
    CHECK_STR(line, want);
    snprintf(want, sizeof want, "(%llu more bytes not saved: the process's file-size limit, "
             "RLIMIT_FSIZE, is %llu bytes)]\n", (unsigned long long)(2000000 - bytes),
             (unsigned long long)limit);
    const char *out = out_of(r);
    CHECK(strlen(out) > strlen(want));
    CHECK_STR(out + strlen(out) - strlen(want), want);
    shexec_run_free(r);

    /* lowered after the start, before the overflow: no byte fits */
    r = NULL;
    CHECK_INT(shexec_run_new(&r, s, "sleep 0.2; head -c 100000 /dev/zero | tr '\\0' y"),
              SHEXEC_OK);
    CHECK_INT(shexec_run_start(r), SHEXEC_OK);
    limit_file_size(100);
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
        CHECK(shexec_session_wait(s, 1000) >= 0);
    CHECK_INT(shexec_run_exit_code(r), 0);
    CHECK_INT(shexec_run_output_total(r, SHEXEC_STDOUT), 100000);
    CHECK_INT(shexec_run_spill(r, SHEXEC_STDOUT, &path, NULL, &err), SHEXEC_SPILL_FAILED);
    CHECK(path == NULL);
    CHECK_INT(err, EFBIG);
    CHECK(strstr(out_of(r), "; full output not saved: the spill failed (the process's "
                            "file-size limit, RLIMIT_FSIZE, is 100 bytes)]\n") != NULL);
    shexec_run_free(r);
    limit_file_size(limit);
    shexec_session_free(s);
    tu_rmtree(dir);
}

static void test_file_size_limit(void **state)
{
    (void)state;
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (the spill)"))
        skip();
    run_forked(case_file_size_limit, 0, 60);
}

/* ---- an EINTR storm ------------------------------------------------------- */

static volatile sig_atomic_t g_ticks;

static void tick(int sig)
{
    (void)sig;
    g_ticks++;
}

static void collect(void *user, int stream, const char *data, size_t len)
{
    if (stream == SHEXEC_STDOUT)
        shx_buf_append(user, data, len);
}

static void case_eintr_storm(void)
{
    struct sigaction sa = {.sa_handler = tick, .sa_flags = 0}; /* no SA_RESTART */
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    struct itimerval every_ms = {{0, 1000}, {0, 1000}};
    CHECK(setitimer(ITIMER_REAL, &every_ms, NULL) == 0);

    shx_buf want = SHX_BUF_INIT;
    for (int i = 1; i <= 20000; i++)
        shx_buf_printf(&want, "%d\n", i);

    for (int use_pidfd = 1; use_pidfd >= 0; use_pidfd--) {
        int fds = tu_count_fds();
        shexec_session *s = new_session(use_pidfd);
        CHECK_INT(shexec_session_set_output_limit(s, 1u << 20, SHEXEC_UNIT_BYTES,
                                                  SHEXEC_KEEP_HEAD),
                  SHEXEC_OK);
        /* output exact, through the capture and through the callback */
        for (int round = 0; round < 3; round++) {
            shx_buf got = SHX_BUF_INIT;
            shexec_run *r = NULL;
            CHECK_INT(shexec_run_new(&r, s, "seq 1 20000"), SHEXEC_OK);
            CHECK_INT(shexec_run_set_output_fn(r, collect, &got), SHEXEC_OK);
            CHECK_INT(shexec_run_exec(r), SHEXEC_OK);
            CHECK_INT(shexec_run_state(r), SHEXEC_STATE_EXITED);
            CHECK_INT(shexec_run_exit_code(r), 0);
            size_t n;
            const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
            CHECK_INT(n, want.len);
            CHECK(memcmp(out, want.data, n) == 0);
            CHECK_INT(got.len, want.len);
            CHECK(memcmp(got.data, want.data, got.len) == 0);
            shexec_run_free(r);
            shx_buf_free(&got);
        }

        /* input through the storm comes back intact */
        shexec_run *r = NULL;
        CHECK_INT(shexec_run_new(&r, s, "cat"), SHEXEC_OK);
        CHECK_INT(shexec_run_set_stdin(r, 1), SHEXEC_OK);
        CHECK_INT(shexec_run_start(r), SHEXEC_OK);
        CHECK_INT(shexec_run_write(r, want.data, want.len), SHEXEC_OK);
        CHECK_INT(shexec_run_close_stdin(r), SHEXEC_OK);
        while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
            CHECK(shexec_session_wait(s, -1) >= 0);
        size_t n;
        const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
        CHECK_INT(n, want.len);
        CHECK(memcmp(out, want.data, n) == 0);
        shexec_run_free(r);

        /* a timeout fires on time, neither early nor late */
        int64_t t0 = tu_now_ms();
        r = xrun(s, "sleep 10", 300);
        int64_t took = tu_now_ms() - t0;
        CHECK_INT(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
        CHECK(shexec_run_duration_ms(r) >= 300);
        CHECK(took < 5000);
        shexec_run_free(r);

        /* tasks: start, wait, kill */
        shexec_task *t = start_task(s, "echo up; sleep 100");
        int64_t end = tu_now_ms() + 10000;
        while (shexec_run_output_total(shexec_task_run(t), SHEXEC_STDOUT) < 3) {
            CHECK(tu_now_ms() < end);
            CHECK(shexec_session_wait(s, 100) >= 0);
        }
        CHECK_INT(shexec_session_wait(s, 50), 0); /* nothing finished */
        CHECK(shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING);
        CHECK_INT(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK);
        wait_task(s, t);
        CHECK_INT(shexec_run_state(shexec_task_run(t)), SHEXEC_STATE_KILLED);
        CHECK_STR(shexec_run_output(shexec_task_run(t), SHEXEC_STDOUT, NULL), "up\n");
        shexec_task_free(t);

        t = start_task(s, "seq 1 20000; exit 6");
        wait_task(s, t);
        CHECK_INT(shexec_run_exit_code(shexec_task_run(t)), 6);
        out = shexec_run_output(shexec_task_run(t), SHEXEC_STDOUT, &n);
        CHECK_INT(n, want.len);
        CHECK(memcmp(out, want.data, n) == 0);
        shexec_task_free(t);

        shexec_session_free(s);
        CHECK_INT(tu_count_fds(), fds);
        CHECK_INT(tu_count_children(), 0);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    shx_buf_free(&want);
    CHECK(g_ticks > 100); /* the storm did blow */
}

static void test_eintr_storm(void **state)
{
    (void)state;
    run_forked(case_eintr_storm, 0, 120);
}

/* ---- the host's own children ---------------------------------------------- */

static pid_t host_child(int delay_ms, int status)
{
    /* a program of its own, not a fork that exits: under valgrind a forked
     * copy of this process would run a leak check at its exit and report
     * what its parent holds */
    char script[64];
    snprintf(script, sizeof script, "sleep %d.%03d; exit %d", delay_ms / 1000, delay_ms % 1000,
             status);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void expect_status(pid_t pid, int status)
{
    int st = 0;
    pid_t w;
    while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    CHECK_INT(w, pid);
    CHECK(WIFEXITED(st));
    CHECK_INT(WEXITSTATUS(st), status);
}

static void case_host_children(void)
{
    for (int use_pidfd = 1; use_pidfd >= 0; use_pidfd--) {
        pid_t already = host_child(0, 5);  /* a zombie before the library runs */
        pid_t early = host_child(150, 7);  /* exits while a run is waited for */
        while (tu_pid_alive(already))
            usleep(1000);
        shexec_session *s = new_session(use_pidfd);
        shexec_run *r = xrun(s, "sleep 0.4; echo done", 0);
        CHECK_STR(out_of(r), "done\n");
        CHECK_INT(shexec_run_exit_code(r), 0);
        shexec_run_free(r);

        /* one that exits while a task is waited for, and one still running
         * when the library finishes */
        pid_t during = host_child(100, 8);
        int gate[2];
        CHECK(pipe2(gate, O_CLOEXEC) == 0);
        pid_t after = fork(); /* runs until the gate closes */
        CHECK(after >= 0);
        if (after == 0) { /* a program of its own, as in host_child() */
            dup2(gate[0], 0);
            execl("/bin/sh", "sh", "-c", "read line; exit 9", (char *)NULL);
            _exit(127);
        }
        close(gate[0]);
        shexec_task *t = start_task(s, "sleep 0.3; exit 2");
        wait_task(s, t);
        CHECK_INT(shexec_run_exit_code(shexec_task_run(t)), 2);
        shexec_task_free(t);

        /* timeouts, leftovers, cancel and free: none reaps what is not ours */
        r = xrun(s, "sleep 10", 200);
        CHECK_INT(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
        shexec_run_free(r);
        r = xrun(s, "sleep 100 & echo started", 0);
        CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
        shexec_run_free(r);
        r = NULL;
        CHECK_INT(shexec_run_new(&r, s, "sleep 100"), SHEXEC_OK);
        CHECK_INT(shexec_run_start(r), SHEXEC_OK);
        CHECK_INT(shexec_run_cancel(r), SHEXEC_OK);
        while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
            CHECK(shexec_session_wait(s, -1) >= 0);
        shexec_run_free(r);
        shexec_session_free(s);

        CHECK(tu_pid_alive(after)); /* still running: the library did not wait for it */
        close(gate[1]);
        expect_status(already, 5);
        expect_status(early, 7);
        expect_status(during, 8);
        expect_status(after, 9);
        CHECK_INT(tu_count_children(), 0);
    }
}

static void test_host_children_untouched(void **state)
{
    (void)state;
    run_forked(case_host_children, 0, 60);
}

/* ---- a command that forks hundreds of processes --------------------------- */

static void case_fork_bomb_timeout(void)
{
    int count = heavy_ok() ? 500 : 100;
    const char *dir = tu_mkdtemp();
    CHECK(dir != NULL);
    char tmp[256], file[300], cmd[1024];
    snprintf(tmp, sizeof tmp, "%s", dir);
    shexec_session *s = new_session(heavy_ok());
    CHECK_INT(shexec_session_set_output_limit(s, 1u << 20, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD),
              SHEXEC_OK);

    /* variant 0: the group is terminated by the timeout while it waits */
    snprintf(file, sizeof file, "%s/timeout", tmp);
    snprintf(cmd, sizeof cmd,
             "for i in $(seq %d); do sleep 100 & echo $! >> '%s'; done; echo started; wait",
             count, file);
    shexec_run *r = xrun(s, cmd, 1500);
    CHECK_INT(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    int n = pids_gone(file, 5000);
    CHECK(n > 0);
    if (!strstr(out_of(r), "started")) {
        /* a busy machine: the timeout came before all were forked; again, longer */
        unlink(file);
        shexec_run_free(r);
        r = xrun(s, cmd, 20000);
        CHECK_INT(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
        CHECK(strstr(out_of(r), "started") != NULL);
        n = pids_gone(file, 5000);
    }
    CHECK_INT(n, count);
    shexec_run_free(r);

    /* variant 1: the shell leaves them all behind; freeing the session ends them */
    snprintf(file, sizeof file, "%s/adopted", tmp);
    snprintf(cmd, sizeof cmd,
             "for i in $(seq %d); do sleep 100 & echo $! >> '%s'; done; echo started", count,
             file);
    r = xrun(s, cmd, 60000);
    CHECK_STR(out_of(r), "started\n");
    CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    shexec_run_free(r);
    shexec_session_free(s);
    CHECK_INT(pids_gone(file, 5000), count);

    /* variant 2: the KILL policy ends them when the shell exits */
    s = new_session(heavy_ok());
    CHECK_INT(shexec_session_set_on_leftovers(s, SHEXEC_ON_LEFTOVERS_KILL), SHEXEC_OK);
    snprintf(file, sizeof file, "%s/killed", tmp);
    snprintf(cmd, sizeof cmd,
             "for i in $(seq %d); do sleep 100 & echo $! >> '%s'; done; echo started", count,
             file);
    r = xrun(s, cmd, 60000);
    CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_KILLED);
    CHECK_INT(pids_gone(file, 5000), count);
    shexec_run_free(r);
    shexec_session_free(s);
    CHECK_INT(tu_count_children(), 0);
    tu_rmtree(tmp);
}

static void test_many_processes_all_gone(void **state)
{
    (void)state;
    run_forked(case_fork_bomb_timeout, 0, 120);
}

/* ---- a host that pumps late -------------------------------------------- */

/*
 * A busy host may not pump the loop for longer than the grace period. When
 * it does again, the overdue SIGKILL finds every member of a killed task's
 * group already gone; the loop must still finish the task then, not poll
 * with nothing left to wake it.
 */
static void case_late_pump(void)
{
    for (int use_pidfd = heavy_ok(); use_pidfd >= 0; use_pidfd--) {
        shexec_session *s = new_session(use_pidfd);
        CHECK_INT(shexec_session_set_kill_grace_ms(s, 100), SHEXEC_OK);
        for (int i = 0; i < 3; i++) {
            /* leftovers that do not hold the output pipes */
            shexec_run *r = xrun(s, "sleep 100 >/dev/null 2>&1 & echo $!", 0);
            CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
            int pid = atoi(out_of(r));
            shexec_task *t = NULL;
            CHECK_INT(shexec_session_take_task(&t, s, tu_leftover_id(r)), SHEXEC_OK);
            int64_t end = tu_now_ms() + 10000;
            while (shx_test_run_fd(shexec_task_run(t), SHEXEC_STDOUT) >= 0 || shx_test_run_fd(shexec_task_run(t), SHEXEC_STDERR) >= 0) {
                CHECK(tu_now_ms() < end);
                CHECK(shexec_session_wait(s, 10) >= 0);
            }
            CHECK_INT(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK);
            CHECK(tu_wait_pid_gone(pid, 3000));
            usleep(300000); /* past the grace period, without pumping */
            if (i < 2) {
                /* no deadline of its own, yet it returns: the killed task ends */
                CHECK_INT(shexec_session_wait(s, -1), 1);
                CHECK(shexec_run_state(shexec_task_run(t)) > SHEXEC_STATE_RUNNING);
                CHECK_INT(shexec_run_state(shexec_task_run(t)), SHEXEC_STATE_KILLED);
            } /* else: the session's free waits for it */
            if (i < 2)
                shexec_task_free(t);
            shexec_run_free(r);
        }
        shexec_session_free(s);
    }
}

static void test_late_pump_after_kill(void **state)
{
    (void)state;
    /* leftovers that let go of the pipes are adopted only where /proc can
     * anchor them (without it they are killed: test_leftovers_without_proc) */
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "/proc, to adopt leftovers that leave the pipes"))
        skip();
    run_forked(case_late_pump, 0, 30);
}

/* ---- processes that leave the command's process group ------------------ */

/* Shell text: wait until the pid in "$F" runs outside our group ($$ is its id). */
#define AWAIT_ESCAPE                                                                    \
    "until g=$(cut -d' ' -f5 \"/proc/$(cat \"$F\" 2>/dev/null)/stat\" 2>/dev/null) && "  \
    "[ -n \"$g\" ] && [ \"$g\" != $$ ]; do sleep 0.01; done; "

static int read_pid(const char *file)
{
    /* a process that writes its pid while the machine is busy may do so
     * after the command's time is up */
    int pid = 0, got = 0;
    int64_t until = tu_now_ms() + 5000;
    for (;;) {
        FILE *f = fopen(file, "r");
        if (f) {
            got = fscanf(f, "%d", &pid) == 1;
            fclose(f);
        }
        if (got || tu_now_ms() >= until)
            break;
        usleep(10 * 1000);
    }
    CHECK(got);
    unlink(file);
    return pid;
}

static void escape_cmd(char *cmd, size_t cap, const char *file, const char *body)
{
    snprintf(cmd, cap, "F='%s'; %s", file, body);
}

static void wait_output(shexec_session *s, shexec_run *r, const char *text)
{
    int64_t end = tu_now_ms() + 20000;
    while (!strstr(out_of(r), text)) {
        CHECK(shexec_run_state(r) <= SHEXEC_STATE_RUNNING);
        CHECK(tu_now_ms() < end);
        CHECK(shexec_session_wait(s, 50) >= 0);
    }
}

/* cmd started, cancelled once it printed "escaped" (its escapee runs
 * outside the group by then, its pid written), and waited for. */
static shexec_run *cancel_once_escaped(shexec_session *s, const char *cmd)
{
    shexec_run *r = NULL;
    CHECK_INT(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    CHECK_INT(shexec_run_start(r), SHEXEC_OK);
    wait_output(s, r, "escaped");
    CHECK_INT(shexec_run_cancel(r), SHEXEC_OK);
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING)
        CHECK(shexec_session_wait(s, -1) >= 0);
    CHECK_INT(shexec_run_state(r), SHEXEC_STATE_CANCELLED);
    return r;
}

static void case_escapees(void)
{
    /* variant 1: the way without children lists, every /proc entry read */
    shx_test_procfs_children(g_variant != 1);
    const char *dir = tu_mkdtemp();
    CHECK(dir != NULL);
    char tmp[256], file[300], cmd[2048];
    snprintf(tmp, sizeof tmp, "%s", dir);
    snprintf(file, sizeof file, "%s/pid", tmp);
    static const char *const timed_out[] = {
        /* setsid(1) in a background job: not a group leader, so it does not fork */
        "setsid sleep 100 & echo $! > \"$F\"; " AWAIT_ESCAPE "echo escaped; wait",
        /* job control puts each job in a group of its own */
        "set -m; sleep 100 & echo $! > \"$F\"; " AWAIT_ESCAPE "echo escaped; wait",
        /* an escapee's own child, in the escapee's new session */
        "setsid sh -c 'sleep 100 & echo $! > \"$0\"; wait' \"$F\" & " AWAIT_ESCAPE
        "echo escaped; wait",
    };
    for (int use_pidfd = heavy_ok(); use_pidfd >= 0; use_pidfd--) {
        int fds = tu_count_fds();
        shexec_session *s = new_group_session(use_pidfd);

        /* timeout: found through the shell, their parent, and killed with the group */
        for (size_t i = 0; i < sizeof timed_out / sizeof *timed_out; i++) {
            escape_cmd(cmd, sizeof cmd, file, timed_out[i]);
            shexec_run *r = xrun(s, cmd, 600);
            if (!strstr(out_of(r), "escaped")) {
                /* a busy machine: not escaped yet when the time was up (nor,
                 * when it was busier still, its pid written) */
                if (access(file, F_OK) == 0)
                    pids_gone(file, 3000);
                unlink(file);
                shexec_run_free(r);
                r = xrun(s, cmd, 8000);
            }
            CHECK_INT(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
            CHECK_STR(out_of(r), "escaped\n");
            int pid = read_pid(file);
            if (!tu_wait_pid_gone(pid, 3000)) {
                fprintf(stderr, "escapee %d of \"%s\" survived\n", pid, timed_out[i]);
                kill(pid, SIGKILL);
                CHECK(0);
            }
            shexec_run_free(r);
        }

        /* cancel, and a session freed while its command runs */
        escape_cmd(cmd, sizeof cmd, file, timed_out[0]);
        shexec_run *r = cancel_once_escaped(s, cmd);
        CHECK(tu_wait_pid_gone(read_pid(file), 3000));
        shexec_run_free(r);

        /* a leftover member is the escapee's parent: killing the task ends both */
        escape_cmd(cmd, sizeof cmd, file,
                   "(setsid sleep 100 & echo $! > \"$F\"; wait) & " AWAIT_ESCAPE "echo escaped");
        r = xrun(s, cmd, 0);
        CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
        int pid = read_pid(file);
        shexec_task *t = NULL;
        CHECK_INT(shexec_session_take_task(&t, s, tu_leftover_id(r)), SHEXEC_OK);
        CHECK_INT(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK);
        wait_task(s, t);
        CHECK(tu_wait_pid_gone(pid, 3000));
        shexec_task_free(t);
        shexec_run_free(r);

        /* the same under the KILL policy */
        CHECK_INT(shexec_session_set_on_leftovers(s, SHEXEC_ON_LEFTOVERS_KILL), SHEXEC_OK);
        r = xrun(s, cmd, 0);
        CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_KILLED);
        CHECK(tu_wait_pid_gone(read_pid(file), 3000));
        shexec_run_free(r);
        CHECK_INT(shexec_session_set_on_leftovers(s, SHEXEC_ON_LEFTOVERS_ADOPT), SHEXEC_OK);

        /* and when the session is freed with that task still running */
        r = xrun(s, cmd, 0);
        pid = read_pid(file);
        shexec_run_free(r);
        r = NULL;
        escape_cmd(cmd, sizeof cmd, file, timed_out[1]);
        CHECK_INT(shexec_run_new(&r, s, cmd), SHEXEC_OK);
        CHECK_INT(shexec_run_start(r), SHEXEC_OK);
        wait_output(s, r, "escaped");
        int pid2 = read_pid(file);
        shexec_session_free(s);
        shexec_run_free(r);
        CHECK(tu_wait_pid_gone(pid, 3000));
        CHECK(tu_wait_pid_gone(pid2, 3000));

        /*
         * The limit, as documented: an escapee whose parent has exited
         * belongs to init, and nothing links it to the command any more. It
         * outlives the command and the session.
         */
        s = new_group_session(use_pidfd);
        escape_cmd(cmd, sizeof cmd, file,
                   "setsid sleep 100 & echo $! > \"$F\"; " AWAIT_ESCAPE "echo escaped");
        r = xrun(s, cmd, 0);
        CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_NONE);
        int orphan = read_pid(file);
        shexec_run_free(r);
        /* setsid -f forks and its parent exits at once: orphaned from the
         * start. Ended once it has escaped: a timeout could kill the fork
         * before its setsid on a busy machine, and nothing would escape */
        escape_cmd(cmd, sizeof cmd, file,
                   "setsid -f sh -c 'echo $$ > \"$0\"; exec sleep 100' \"$F\"; " AWAIT_ESCAPE
                   "echo escaped; sleep 100");
        r = cancel_once_escaped(s, cmd);
        int forked = read_pid(file);
        shexec_run_free(r);
        shexec_session_free(s);
        usleep(100000);
        int survived = tu_pid_alive(orphan) && tu_pid_alive(forked);
        kill(orphan, SIGKILL);
        kill(forked, SIGKILL);
        CHECK(survived);

        CHECK_INT(tu_count_fds(), fds);
        CHECK_INT(tu_count_children(), 0);
    }
    tu_rmtree(tmp);
}

/* The cases that find processes that left the group need /proc. */
static void run_escapee_case(void (*fn)(void), int variant)
{
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "/proc, to find processes that left the group"))
        skip();
    run_forked(fn, variant, 120);
}

static void test_escaped_processes(void **state)
{
    (void)state;
    run_escapee_case(case_escapees, 0);
}

static void test_escaped_processes_scanning_proc(void **state)
{
    (void)state;
    run_escapee_case(case_escapees, 1);
}

/* /proc files the library reads to time out `sleep 100` ([0]), and to adopt
 * the leftovers of `sleep 100 &` and kill them ([1]); the most over both
 * wait paths */
static void count_reads(unsigned long reads[2])
{
    reads[0] = reads[1] = 0;
    for (int use_pidfd = heavy_ok(); use_pidfd >= 0; use_pidfd--) {
        shexec_session *s = new_session(use_pidfd);
        unsigned long before = shx_test_procfs_reads();
        shexec_run *r = xrun(s, "sleep 100", 300);
        unsigned long n = shx_test_procfs_reads() - before;
        CHECK_INT(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
        shexec_run_free(r);
        if (n > reads[0])
            reads[0] = n;

        before = shx_test_procfs_reads();
        r = xrun(s, "sleep 100 & echo started", 0);
        CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
        shexec_task *t = NULL;
        CHECK_INT(shexec_session_take_task(&t, s, tu_leftover_id(r)), SHEXEC_OK);
        CHECK_INT(shexec_run_cancel(shexec_task_run(t)), SHEXEC_OK);
        wait_task(s, t);
        n = shx_test_procfs_reads() - before;
        CHECK_INT(shexec_run_state(shexec_task_run(t)), SHEXEC_STATE_KILLED);
        shexec_task_free(t);
        shexec_run_free(r);
        if (n > reads[1])
            reads[1] = n;
        shexec_session_free(s);
    }
}

/*
 * The reapers an orphaned member can have (this process, its ancestors,
 * init) are listed once per process, not by every search: three timeouts,
 * each searched twice, list them once.
 */
static void case_reapers_listed_once(void)
{
    shexec_session *s = new_group_session(heavy_ok());
    unsigned long before = shx_test_reaper_listings();
    for (int i = 0; i < 3; i++) {
        shexec_run *r = xrun(s, "sleep 100", 300);
        CHECK_INT(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
        shexec_run_free(r);
    }
    shexec_session_free(s);
    unsigned long listed = shx_test_reaper_listings() - before;
    if (listed != 1) {
        fprintf(stderr, "reapers listed %lu times for three timeouts\n", listed);
        CHECK(0);
    }
}

static void test_reapers_listed_once(void **state)
{
    (void)state;
    run_escapee_case(case_reapers_listed_once, 0);
}

/*
 * Finding what to signal and what is left reads the command's own
 * processes, not the whole process table: 200 more processes on the
 * machine, unrelated to the session, add (almost) nothing to what is read.
 */
static void case_find_reads_candidates_only(void)
{
    const char *dir = tu_mkdtemp();
    CHECK(dir != NULL);
    char tmp[256], ready[300], crowd_cmd[512];
    snprintf(tmp, sizeof tmp, "%s", dir);
    snprintf(ready, sizeof ready, "%s/ready", tmp);
    snprintf(crowd_cmd, sizeof crowd_cmd,
             "i=0; while [ $i -lt 200 ]; do sleep 100 & i=$((i+1)); done; : > '%s'; wait",
             ready);
    unsigned long alone[2], crowded[2];
    count_reads(alone);

    pid_t crowd = fork();
    CHECK(crowd >= 0);
    if (crowd == 0) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", crowd_cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(crowd, crowd);
    int64_t end = tu_now_ms() + 20000;
    while (access(ready, F_OK) != 0 && tu_now_ms() < end)
        usleep(10000);
    int crowd_ready = access(ready, F_OK) == 0;
    if (crowd_ready)
        count_reads(crowded);
    kill(-crowd, SIGKILL);
    waitpid(crowd, NULL, 0);
    tu_rmtree(tmp);
    CHECK(crowd_ready);
    /* a whole-table scan reads each of the 200 at least once per search */
    if (crowded[0] > alone[0] + 100 || crowded[1] > alone[1] + 100) {
        fprintf(stderr, "/proc files read, without and with 200 unrelated processes around: "
                        "timing out `sleep 100` %lu, %lu; adopting and killing `sleep 100 &` "
                        "%lu, %lu\n",
                alone[0], crowded[0], alone[1], crowded[1]);
        CHECK(0);
    }
}

static void test_find_reads_candidates_only(void **state)
{
    (void)state;
    run_escapee_case(case_find_reads_candidates_only, 0);
}

/*
 * A member of the group that lost its parent before the command was
 * terminated (a double fork that stays in the group) still counts as one
 * of the command's live processes: what left the group under it goes too.
 */
static void case_escapee_under_orphaned_member(void)
{
    /* variant 1: the way without children lists, every /proc entry read */
    shx_test_procfs_children(g_variant != 1);
    const char *dir = tu_mkdtemp();
    CHECK(dir != NULL);
    char tmp[256], file[300], cmd[2048];
    snprintf(tmp, sizeof tmp, "%s", dir);
    snprintf(file, sizeof file, "%s/pid", tmp);
    for (int use_pidfd = heavy_ok(); use_pidfd >= 0; use_pidfd--) {
        shexec_session *s = new_session(use_pidfd);
        for (int attempt = 0; attempt < 2; attempt++) {
            escape_cmd(cmd, sizeof cmd, file,
                       "(sh -c 'setsid sleep 100 & echo $! > \"$0\"; wait' \"$F\" &); "
                       AWAIT_ESCAPE "echo escaped; wait; sleep 100");
            shexec_run *r = xrun(s, cmd, attempt ? 8000 : 1500);
            CHECK_INT(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
            int escaped = strstr(out_of(r), "escaped") != NULL;
            shexec_run_free(r);
            if (!escaped && attempt == 0) {
                /* a busy machine: not escaped yet when the time was up */
                if (access(file, F_OK) == 0)
                    CHECK(tu_wait_pid_gone(read_pid(file), 3000));
                continue;
            }
            CHECK(escaped);
            int pid = read_pid(file);
            if (!tu_wait_pid_gone(pid, 3000)) {
                fprintf(stderr, "escapee %d under an orphaned member survived\n", pid);
                kill(pid, SIGKILL);
                CHECK(0);
            }
            break;
        }
        shexec_session_free(s);
    }
    tu_rmtree(tmp);
}

/*
 * The kernel hands a children list over a page at a time: an escapee
 * started after 700 other children of the shell is past the first page,
 * and must be found all the same.
 */
static void case_escapee_past_first_page(void)
{
    /* variant 1: the way without children lists, every /proc entry read */
    shx_test_procfs_children(g_variant != 1);
    const char *dir = tu_mkdtemp();
    CHECK(dir != NULL);
    char tmp[256], file[300], cmd[2048];
    snprintf(tmp, sizeof tmp, "%s", dir);
    snprintf(file, sizeof file, "%s/pid", tmp);
    escape_cmd(cmd, sizeof cmd, file,
               "i=0; while [ $i -lt 700 ]; do sleep 100 & i=$((i+1)); done; "
               "setsid sleep 100 & echo $! > \"$F\"; " AWAIT_ESCAPE "echo escaped; wait");
    shexec_session *s = new_session(heavy_ok());
    shexec_run *r = cancel_once_escaped(s, cmd);
    int pid = read_pid(file);
    /* a bound for "ended", not a speed: 700 processes end on a loaded machine too */
    if (!tu_wait_pid_gone(pid, 10000)) {
        fprintf(stderr, "escapee %d, the shell's 701st child, survived\n", pid);
        kill(pid, SIGKILL);
        CHECK(0);
    }
    shexec_run_free(r);
    shexec_session_free(s);
    tu_rmtree(tmp);
}

static void test_escapee_past_first_page(void **state)
{
    (void)state;
    run_escapee_case(case_escapee_past_first_page, 0);
}

static void test_escapee_under_orphaned_member(void **state)
{
    (void)state;
    run_escapee_case(case_escapee_under_orphaned_member, 0);
    run_escapee_case(case_escapee_under_orphaned_member, 1);
}

/* ---- no /proc ------------------------------------------------------------- */

static char g_noproc_pids[256];

/* Hide /proc from this process: a private mount namespace with an empty
 * tmpfs on /proc (root only). 0 when hidden. */
static int hide_proc(void)
{
    if (unshare(CLONE_NEWNS) != 0)
        return -1;
    if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0)
        return -1;
    if (mount("none", "/proc", "tmpfs", 0, NULL) != 0)
        return -1;
    return access("/proc/self/stat", F_OK) == 0 ? -1 : 0;
}

static void probe_hide_proc(void)
{
    _exit(hide_proc() == 0 ? 0 : 1);
}

static shexec_task *task_of(shexec_session *s, shexec_run *r)
{
    CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    shexec_task *t = NULL;
    CHECK_INT(shexec_session_take_task(&t, s, tu_leftover_id(r)), SHEXEC_OK);
    return t;
}

static int first_int(const char *text)
{
    int v = 0;
    CHECK(sscanf(text, "%d", &v) == 1 && v > 0);
    return v;
}

/* A task stays running for at least ms while the session is pumped. */
static void still_running(shexec_session *s, shexec_task *t, int ms)
{
    int64_t end = tu_now_ms() + ms;
    while (tu_now_ms() < end) {
        CHECK(shexec_session_wait(s, 50) >= 0);
        CHECK(shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING);
    }
}

/*
 * Without /proc nothing lists a group's members, so none can be anchored:
 * the leader's zombie is what holds the group id. Leftovers that hold the
 * command's output are adopted and stay held; leftovers that let go of it
 * cannot be followed and are killed at once; everything held is stopped by
 * kill and by freeing the session. The pids go to the parent, which can see
 * /proc, to check that they are gone.
 */
static void case_no_proc(void)
{
    CHECK_INT(hide_proc(), 0);
    shexec_session *s = new_session(g_variant);
    int pids[5], np = 0;

    /* a foreground run's leftover holding stdout: adopted, held */
    shexec_run *r = xrun(s, "(exec -a shexec-noproc-mark sleep 30) & echo $!", 0);
    pids[np++] = first_int(out_of(r));
    shexec_task *adopted = task_of(s, r);
    shexec_run_free(r);
    still_running(s, adopted, 300);

    /* a background task whose shell exited, its member holding the pipe */
    shexec_task *t = start_task(s, "sleep 30 & echo $!");
    int64_t end = tu_now_ms() + 10000;
    while (!strstr(shexec_run_output(shexec_task_run(t), SHEXEC_STDOUT, NULL), "\n")) {
        CHECK(tu_now_ms() < end);
        CHECK(shexec_session_wait(s, 50) >= 0);
    }
    pids[np++] = first_int(shexec_run_output(shexec_task_run(t), SHEXEC_STDOUT, NULL));
    still_running(s, t, 300);

    /* a leftover that let go of the output cannot be held: killed at once,
     * or, if it still held a pipe when the shell exited (its redirection
     * may come after the shell's exit), as soon as it lets go */
    r = xrun(s, "sleep 30 >/dev/null 2>&1 & echo $!", 0);
    pids[np++] = first_int(out_of(r));
    if (shexec_run_leftovers(r, NULL) == SHEXEC_LEFTOVERS_ADOPTED) {
        shexec_task *let_go = task_of(s, r);
        wait_task(s, let_go);
        shexec_task_free(let_go);
    } else {
        CHECK_INT(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_KILLED);
    }
    shexec_run_free(r);

    /* leftovers that end by themselves end their task */
    r = xrun(s, "sleep 0.3 & echo started", 0);
    shexec_task *brief = task_of(s, r);
    shexec_run_free(r);
    wait_task(s, brief);
    shexec_task_free(brief);

    /* a held task is killed through the pinned group id */
    shexec_task *k = start_task(s, "trap '' TERM; sleep 30 & echo $!");
    end = tu_now_ms() + 10000;
    while (!strstr(shexec_run_output(shexec_task_run(k), SHEXEC_STDOUT, NULL), "\n")) {
        CHECK(tu_now_ms() < end);
        CHECK(shexec_session_wait(s, 50) >= 0);
    }
    pids[np++] = first_int(shexec_run_output(shexec_task_run(k), SHEXEC_STDOUT, NULL));
    CHECK_INT(shexec_run_cancel(shexec_task_run(k)), SHEXEC_OK);
    wait_task(s, k);
    CHECK_INT(shexec_run_state(shexec_task_run(k)), SHEXEC_STATE_KILLED);
    shexec_task_free(k);

    /* freeing the session stops what it still holds */
    shexec_session_free(s);
    FILE *f = fopen(g_noproc_pids, "w");
    CHECK(f != NULL);
    for (int i = 0; i < np; i++)
        fprintf(f, "%d\n", pids[i]);
    fclose(f);
}

static void test_leftovers_without_proc(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* hiding /proc needs a mount namespace */
    pid_t probe = fork();
    assert_true(probe >= 0);
    if (probe == 0)
        probe_hide_proc();
    int st = 0;
    assert_int_equal(waitpid(probe, &st, 0), probe);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        skip(); /* no mount namespaces here */
    for (int use_pidfd = 0; use_pidfd <= (heavy_ok() ? 1 : 0); use_pidfd++) {
        snprintf(g_noproc_pids, sizeof g_noproc_pids, "/tmp/shexec-noproc-%d", (int)getpid());
        unlink(g_noproc_pids);
        run_forked(case_no_proc, use_pidfd, 60);
        FILE *f = fopen(g_noproc_pids, "r");
        assert_non_null(f);
        int pid, n = 0;
        while (fscanf(f, "%d", &pid) == 1) {
            if (!tu_wait_pid_gone(pid, 2000))
                fail_msg("pid %d is still running (pidfd %d)", pid, use_pidfd);
            n++;
        }
        fclose(f);
        unlink(g_noproc_pids);
        assert_int_equal(n, 4);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigchld_ignored),
        cmocka_unit_test(test_sigchld_nocldwait),
        cmocka_unit_test(test_host_reaps_every_child),
        cmocka_unit_test(test_hostile_signal_state),
        cmocka_unit_test(test_thousand_inheritable_fds),
        cmocka_unit_test(test_descriptor_limit),
        cmocka_unit_test(test_file_size_limit),
        cmocka_unit_test(test_eintr_storm),
        cmocka_unit_test(test_host_children_untouched),
        cmocka_unit_test(test_many_processes_all_gone),
        cmocka_unit_test(test_escaped_processes),
        cmocka_unit_test(test_escaped_processes_scanning_proc),
        cmocka_unit_test(test_find_reads_candidates_only),
        cmocka_unit_test(test_reapers_listed_once),
        cmocka_unit_test(test_escapee_under_orphaned_member),
        cmocka_unit_test(test_escapee_past_first_page),
        cmocka_unit_test(test_late_pump_after_kill),
        cmocka_unit_test(test_leftovers_without_proc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
