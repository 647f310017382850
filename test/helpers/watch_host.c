/*
 * watch_host - a host on the library for test_watchdog, which kills it.
 *
 *   watch_host MODE DIR
 *
 * It starts, in one session (kill grace 300 ms, the watchdog on unless
 * MODE is "off"): two background tasks that each start a `sleep`, a
 * foreground command whose two leftover `sleep`s are adopted as a task (one
 * lets go of the command's pipes, one holds them: where /proc is compiled
 * out, the one holding them is what lets the group be adopted), and a
 * foreground command still running that started a `sleep` and a `setsid
 * sleep`. Every pid of theirs goes to DIR/pids, one a line, but the setsid
 * one's, which goes to DIR/escapee; the watchdog's to DIR/watchdog. Then,
 * by MODE:
 *   kill, off  wait to be killed
 *   late       the same, with the watchdog turned on only after the
 *              commands started
 *   segv       crash (SIGSEGV) in an output callback of its own
 *   exit       return from main without freeing the session
 *   forkexec   fork()+exec an unrelated `sleep` (pid in DIR/unrelated),
 *              then wait to be killed
 *   claim-wrong, claim-right
 *              start an unrelated `sleep` in a process group of its own
 *              (DIR/unrelated) and tell the watchdog it is one of the
 *              session's groups, with a start time that is not its own /
 *              that is; then wait to be killed
 *   late-setsid
 *              only a task whose one member (DIR/pids) leaves the group
 *              (setsid) 1 s after it starts, with the watchdog made to
 *              wait 2 s between looking and signalling; wait to be killed
 *   term-ignored
 *              only a task whose shell starts one process that leaves the
 *              group (setsid) and ignores SIGTERM (its pid in DIR/pids): its
 *              parent dies of the watchdog's SIGTERM, which leaves it
 *              linked to the command by nothing; wait to be killed
 * DIR/ready appears when all is in place; segv and exit then wait for
 * DIR/go. Exit status 2: a setup failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "shx/platform.h"
#include "shexec.h"
#include "testhook.h"

extern char **environ;

static char dir[1024];

static void die(const char *what, shexec_session *s)
{
    fprintf(stderr, "watch_host: %s: %s\n", what, s ? shexec_session_errmsg(s) : strerror(errno));
    exit(2);
}

static void write_file(const char *name, long long v)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        die(path, NULL);
    fprintf(f, "%lld\n", v);
    fclose(f);
}

static long long read_num(const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    long long v = -1;
    if (f) {
        if (fscanf(f, "%lld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static int count_pids(void)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/pids", dir);
    FILE *f = fopen(path, "r");
    int n = 0, pid;
    if (!f)
        return 0;
    while (fscanf(f, "%d", &pid) == 1)
        n++;
    fclose(f);
    return n;
}

static shexec_run *new_run(shexec_session *s, const char *fmt)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, fmt, dir, dir, dir);
    shexec_run *r = NULL;
    if (shexec_run_new(&r, s, cmd) != SHEXEC_OK)
        die("shexec_run_new", s);
    return r;
}

static void crash(void *user, int stream, const char *data, size_t len)
{
    (void)user;
    (void)stream;
    (void)data;
    (void)len;
    volatile int *nowhere = NULL;
    *nowhere = 1; /* the host's own bug */
}

static pid_t spawn_sleep(int own_group)
{
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    if (own_group) {
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attr, 0);
    }
    char *argv[] = {(char *)"sleep", (char *)"1000", NULL};
    pid_t pid;
    if (posix_spawnp(&pid, "sleep", NULL, &attr, argv, environ) != 0)
        die("spawn sleep", NULL);
    posix_spawnattr_destroy(&attr);
    return pid;
}

/* Pump the session until killed. A session with nothing left running
 * returns from the wait at once: then sleep, never spin (a test that
 * failed before its kill must not leave a processor busy). */
static void wait_to_be_killed(shexec_session *s)
{
    for (;;) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        if (shexec_session_wait(s, 1000) < 0)
            die("shexec_session_wait", s);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 5000000L)
            usleep(200000);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: watch_host MODE DIR\n");
        return 2;
    }
#ifdef __linux__
    /* it never outlives the test that started it, whatever fails there
     * (its watchdog then ends what it started, as for any host's death) */
    pid_t test = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != test)
        return 2;
#endif
    const char *mode = argv[1];
    snprintf(dir, sizeof dir, "%s", argv[2]);
    int watch = strcmp(mode, "off") != 0 && strcmp(mode, "late") != 0;

    shexec_session *s = NULL;
    if (shexec_session_new(&s) != SHEXEC_OK)
        die("shexec_session_new", NULL);
    if (shexec_session_set_kill_grace_ms(s, 300) != SHEXEC_OK)
        die("grace", s);
    int late_setsid = strcmp(mode, "late-setsid") == 0;
    int term_ignored = strcmp(mode, "term-ignored") == 0;
    /* a claimed group is the process-group path's proof: cgroups need none.
     * Off: what the host leaves outlives it, but any session started later
     * beside it (another suite running at the same time) ends a dead host's
     * cgroups (contain.c): on process groups, nothing can */
    if ((strncmp(mode, "claim-", 6) == 0 || !strcmp(mode, "off")) &&
        shexec_session_set_containment(s, "off") != SHEXEC_OK)
        die("shexec_session_set_containment", s);
    if (late_setsid)
        shx_test_watchdog_pause(2000);
    if (watch && shexec_session_set_watchdog(s, 1) != SHEXEC_OK)
        die("shexec_session_set_watchdog", s);
    if (late_setsid || term_ignored) {
        /* late-setsid: one member, which leaves its group 1 s after it
         * starts: after the watchdog has looked, before it signals.
         * term-ignored: the pid is written once the process is in place */
        shexec_task *t = NULL;
        shexec_run *r = new_run(s, late_setsid ? "(sleep 1; exec setsid sleep 1000) & echo $! >> %s/pids; wait"
                                               : "setsid sh -c 'trap \"\" TERM; echo $$ >> %s/pids; "
                                                 "exec sleep 1000' & wait");
        if (shexec_run_start_task(&t, r) != SHEXEC_OK)
            die("shexec_run_start_task", s);
        while (count_pids() < 1)
            if (shexec_session_wait(s, 20) < 0)
                die("shexec_session_wait", s);
        write_file("watchdog", (long long)shx_test_watchdog_pid(s));
        write_file("ready", 1);
        wait_to_be_killed(s);
    }

    for (int i = 0; i < 2; i++) {
        shexec_task *t = NULL;
        shexec_run *r = new_run(s, "sleep 1000 & echo $! >> %s/pids; echo $$ >> %s/pids; wait");
        if (shexec_run_start_task(&t, r) != SHEXEC_OK)
            die("shexec_run_start_task", s);
    }
    shexec_run *left = new_run(s, "sleep 1000 >/dev/null 2>&1 & echo $! >> %s/pids; "
                                  "sleep 1000 & echo $! >> %s/pids");
    if (shexec_run_exec(left) != SHEXEC_OK || shexec_run_leftovers(left, NULL) != SHEXEC_LEFTOVERS_ADOPTED)
        die("the leftover was not adopted", s);
    shexec_run *fg = new_run(s, "sleep 1000 & echo $! >> %s/pids; setsid sleep 1000 & "
                                "echo $! > %s/escapee; echo $$ >> %s/pids; wait");
    if (shexec_run_start(fg) != SHEXEC_OK)
        die("shexec_run_start", s);
    /* 2 tasks x 2, the two leftovers, the foreground shell and its sleep;
     * the setsid sleep */
    while (count_pids() < 8 || read_num("escapee") <= 0)
        if (shexec_session_wait(s, 20) < 0)
            die("shexec_session_wait", s);
    if (!watch && strcmp(mode, "late") == 0 && shexec_session_set_watchdog(s, 1) != SHEXEC_OK)
        die("shexec_session_set_watchdog (late)", s);
    write_file("watchdog", (long long)shx_test_watchdog_pid(s));

    if (strcmp(mode, "forkexec") == 0) {
        pid_t pid = fork();
        if (pid < 0)
            die("fork", NULL);
        if (pid == 0) {
            execlp("sleep", "sleep", "1000", (char *)NULL);
            _exit(127);
        }
        write_file("unrelated", pid);
    } else if (strncmp(mode, "claim-", 6) == 0) {
        pid_t pid = spawn_sleep(1);
        /* it is our child: the pid is its own until we reap it. Without
         * /proc no start time is known (0), and none is checked */
        uint64_t start = 0;
        while (!start && (shx_test_platform() & SHX_PLATFORM_PROCFS))
            start = shx_test_start_time(pid);
        shx_test_watchdog_claim(s, pid, strcmp(mode, "claim-right") == 0 ? start : start + 1);
        write_file("unrelated", pid);
    }
    write_file("ready", 1);

    /* a host that ends by itself waits for DIR/go, so that what it leaves
     * is looked at while it is still alive */
    if (strcmp(mode, "segv") == 0 || strcmp(mode, "exit") == 0)
        while (read_num("go") != 1)
            usleep(5000);

    if (strcmp(mode, "segv") == 0) {
        shexec_run *r = new_run(s, "echo boom");
        shexec_run_set_output_fn(r, crash, NULL);
        shexec_run_exec(r);
        return 3; /* not reached */
    }
    if (strcmp(mode, "exit") == 0)
        return 0; /* the session is never freed */
    wait_to_be_killed(s);
}
