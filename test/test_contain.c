/*
 * test_contain.c - commands held in cgroups (shexec_session_set_containment):
 * the setting and its reasons, daemons that detach (setsid, setsid -f, a
 * double fork) ended after the run, at a timeout and at the session's free,
 * adopted leftovers followed through the cgroup until its last member ends,
 * the cgroups removed, what a command put in cgroups below its own or moved
 * into the session's own cgroup (also as another uid, through a delegated
 * cgroup.procs) ended and removed with the run, the session, a dead host's
 * stale tree and the watchdog, CPU accounting of the whole tree, and a host
 * whose cgroup2 mount is read-only falling back to process groups. Each live test
 * skips, saying why, where this machine cannot make cgroups; each marks
 * its processes (exec -a) and fails when one is left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shexec.h"
#include "testhook.h"
#include "testutil.h"

/* The marker of this process's test processes (their argv[0]): its own,
 * so that suites run side by side (another build's) never count each
 * other's; commands read it from the environment. */
static char g_mark[64];
#define MARK "\"$SHEXEC_TEST_MARK\""

/* Processes whose argv[0] is the mark. */
static int count_marked(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], argv0[64] = "";
        (void)snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t got = read(fd, argv0, sizeof argv0 - 1);
        close(fd);
        if (got > 0 && strcmp(argv0, g_mark) == 0)
            n += tu_pid_alive((pid_t)atoi(e->d_name)); /* a zombie is gone */
    }
    closedir(d);
    return n;
}

/* Wait up to ms for no marked process to be left; their count then. */
static int marked_after(int ms)
{
    int64_t end = tu_now_ms() + ms;
    int n;
    while ((n = count_marked()) > 0 && tu_now_ms() < end)
        usleep(10000);
    return n;
}

/* SIGKILL every marked process (a failed test's cleanup). */
static void kill_marked(void)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], argv0[64] = "";
        (void)snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t got = read(fd, argv0, sizeof argv0 - 1);
        close(fd);
        if (got > 0 && strcmp(argv0, g_mark) == 0)
            kill((pid_t)atoi(e->d_name), SIGKILL);
    }
    if (d)
        closedir(d);
}

typedef struct fixture {
    shexec_session *s;
    char dir[4096]; /* the session's cgroup */
    pid_t host;     /* a forked host not yet killed and reaped (a failed test's) */
} fixture;

/* A session with containment "auto": 1, or 0 after skip() says why not. */
static int contained(fixture *f)
{
    const char *detail = NULL;
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "cgroups"))
        return 0;
    assert_int_equal(shexec_session_set_containment(f->s, "auto"), SHEXEC_OK);
    if (shexec_session_containment(f->s, &detail) != SHEXEC_CONTAIN_CGROUP) {
        print_message("skipped: no cgroup can be made here (%s)\n", detail);
        return 0;
    }
    (void)snprintf(f->dir, sizeof f->dir, "%s", detail);
    return 1;
}

static int setup(void **state)
{
    tu_leak_begin();
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(shexec_session_new(&f->s), SHEXEC_OK);
    /* each test asks for containment itself (contained()) */
    assert_int_equal(shexec_session_set_containment(f->s, "off"), SHEXEC_OK);
    shexec_session_set_kill_grace_ms(f->s, 300);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f->host > 0) {
        kill(f->host, SIGKILL);
        (void)waitpid(f->host, NULL, 0);
    }
    shexec_session_free(f->s);
    int left = count_marked();
    kill_marked();
    struct stat st;
    int dir_left = f->dir[0] && stat(f->dir, &st) == 0;
    free(f);
    tu_leak_end();
    assert_int_equal(left, 0);
    assert_false(dir_left); /* the session's cgroup is removed at its free */
    return 0;
}

static shexec_run *run_cmd(shexec_session *s, const char *cmd, uint32_t timeout_ms)
{
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    if (timeout_ms)
        assert_int_equal(shexec_run_set_timeout_ms(r, timeout_ms), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    return r;
}

/* The session's cgroup's children (run-N) left now. */
static int run_cgroups(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strncmp(e->d_name, "run-", 4) == 0;
    closedir(d);
    return n;
}

/* Wait up to ms for n marked processes to be up; 1 when they are. */
static int marked_reach(int n, int ms)
{
    int64_t end = tu_now_ms() + ms;
    while (count_marked() < n && tu_now_ms() < end)
        usleep(10000);
    return count_marked() == n;
}

/* A command's shell: cg set to its own cgroup's directory below the
 * session's (format with the session's cgroup). */
#define OWN_CGROUP "p=$(sed -n 's/^0:://p' /proc/self/cgroup); cg='%s'/${p##*/}; "

/* A command that makes cgroups below its own (two deep, and an empty one)
 * and leaves a marked process in each of the first two. */
#define NESTED                                                                                     \
    OWN_CGROUP "mkdir -p \"$cg/inner/deeper\" \"$cg/empty\" || exit; "                             \
    "(echo 0 > \"$cg/inner/cgroup.procs\" && exec -a " MARK " sleep 1000) & "                   \
    "(echo 0 > \"$cg/inner/deeper/cgroup.procs\" && exec -a " MARK " sleep 1000) & "            \
    "until [ \"$(cat \"$cg/inner/cgroup.procs\" \"$cg/inner/deeper/cgroup.procs\" | wc -l)\" = 2 ]; " \
    "do sleep 0.01; done; echo ok"

/* The first line of out (a path a command printed) ends dir. */
static int ends_with_line(const char *dir, const char *out)
{
    size_t n = strcspn(out, "\n"), d = strlen(dir);
    return n > 0 && n <= d && strncmp(dir + d - n, out, n) == 0;
}

static void test_setting_and_reasons(void **state)
{
    fixture *f = *state;
    const char *detail = NULL;
    assert_int_equal(shexec_session_containment(f->s, &detail), SHEXEC_CONTAIN_GROUP);
    assert_string_equal(detail, "turned off");
    /* a new session is contained wherever "auto" can make a cgroup: the default */
    shexec_session *fresh = NULL;
    assert_int_equal(shexec_session_new(&fresh), SHEXEC_OK);
    const char *fresh_detail = NULL;
    int fresh_kind = shexec_session_containment(fresh, &fresh_detail);
    char fresh_dir[4096];
    (void)snprintf(fresh_dir, sizeof fresh_dir, "%s", fresh_detail);
    assert_int_equal(shexec_session_set_containment(f->s, "auto"), SHEXEC_OK);
    assert_int_equal(fresh_kind, shexec_session_containment(f->s, &detail));
    print_message("a new session: %s (%s)\n", fresh_kind == SHEXEC_CONTAIN_CGROUP ? "cgroup" : "groups",
                  fresh_dir);
    if (fresh_kind == SHEXEC_CONTAIN_CGROUP) {
        assert_non_null(strstr(fresh_dir, "/shexec-"));
        assert_string_not_equal(fresh_dir, detail); /* a cgroup of its own */
    } else {
        assert_string_equal(fresh_dir, detail); /* the same reason */
    }
    shexec_session_free(fresh);
    struct stat st;
    if (fresh_kind == SHEXEC_CONTAIN_CGROUP)
        assert_int_not_equal(stat(fresh_dir, &st), 0); /* removed at its free */
    assert_int_equal(shexec_session_set_containment(f->s, "off"), SHEXEC_OK);
    assert_int_equal(shexec_session_containment(NULL, &detail), SHEXEC_CONTAIN_GROUP);
    assert_int_equal(shexec_session_set_containment(NULL, "auto"), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_containment(f->s, "relative/dir"), SHEXEC_EINVAL);
    assert_non_null(strstr(shexec_session_errmsg(f->s), "relative/dir"));
    /* a named parent that is no cgroup is an error; the setting stays */
    assert_int_equal(shexec_session_set_containment(f->s, "/tmp"), SHEXEC_ESYS);
    assert_non_null(strstr(shexec_session_errmsg(f->s), !SHX_HAVE_PROCFS ? "not in this build"
                                                        : strstr(fresh_dir, "CONTAIN=0") ? "CONTAIN=0"
                                                        : "not a cgroup v2 directory"));
    assert_int_equal(shexec_session_containment(f->s, NULL), SHEXEC_CONTAIN_GROUP);
    if (!contained(f))
        return;
    assert_int_equal(shexec_session_containment(f->s, &detail), SHEXEC_CONTAIN_CGROUP);
    assert_non_null(strstr(detail, "/shexec-"));
    /* not while a command runs */
    shexec_run *r = NULL;
    shexec_task *t = NULL;
    assert_int_equal(shexec_run_new(&r, f->s, "sleep 5"), SHEXEC_OK);
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    assert_int_equal(shexec_session_set_containment(f->s, "off"), SHEXEC_ESTATE);
    shexec_task_free(t);
    /* off: the session's cgroup goes, the reason says so */
    assert_int_equal(shexec_session_set_containment(f->s, "off"), SHEXEC_OK);
    assert_int_equal(shexec_session_containment(f->s, &detail), SHEXEC_CONTAIN_GROUP);
    assert_string_equal(detail, "turned off");
    assert_int_not_equal(stat(f->dir, &st), 0);
    f->dir[0] = '\0';
}

/* A host that died without ending its session (no watchdog) leaves its
 * cgroups; the next session beside them removes them, when empty and the
 * host's pid is gone, and keeps those of a live pid. */
/* The host's own cgroup in the cgroup v1 hierarchy of controller, into
 * dir: 0, or -1 where this machine has no such hierarchy. */
static int v1_self_dir(const char *controller, char *dir, size_t cap)
{
    char line[4096], path[4096] = "", mount_at[4096] = "";
    FILE *f = fopen("/proc/self/cgroup", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *ctrls = strchr(line, ':'), *at = ctrls ? strchr(ctrls + 1, ':') : NULL;
        if (!at)
            continue;
        *at = '\0';
        at[strcspn(at + 1, "\n") + 1] = '\0';
        if (strcmp(ctrls + 1, controller) == 0)
            snprintf(path, sizeof path, "%s", at + 1);
    }
    if (f)
        fclose(f);
    f = fopen("/proc/mounts", "r");
    while (f && fgets(line, sizeof line, f)) {
        char dev[256], where[4096], type[64], opts[1024];
        if (sscanf(line, "%255s %4095s %63s %1023s", dev, where, type, opts) == 4 &&
            strcmp(type, "cgroup") == 0 && strstr(opts, controller))
            snprintf(mount_at, sizeof mount_at, "%s", where);
    }
    if (f)
        fclose(f);
    if (!path[0] || !mount_at[0])
        return -1;
    int n = snprintf(dir, cap, "%s%s", mount_at, strcmp(path, "/") == 0 ? "" : path);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* A session's cgroup named like a dead host's (stale) and a live one's,
 * with a command cgroup in the first, made in parent. */
static void make_stale(const char *parent, pid_t dead, char stale[4200], char stale_run[4300],
                       char live[4200])
{
    snprintf(stale, 4200, "%s/shexec-%ld-7", parent, (long)dead);
    snprintf(stale_run, 4300, "%s/run-3", stale);
    snprintf(live, 4200, "%s/shexec-%ld-99", parent, (long)getpid());
    assert_int_equal(mkdir(stale, 0755), 0);
    assert_int_equal(mkdir(stale_run, 0755), 0);
    assert_int_equal(mkdir(live, 0755), 0);
}

static void test_stale_cgroups_removed(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", f->dir);
    *strrchr(parent, '/') = '\0';
    pid_t dead = fork();
    assert_true(dead >= 0);
    if (dead == 0)
        _exit(0);
    assert_int_equal(waitpid(dead, NULL, 0), dead);
    char stale[4200], stale_run[4300], live[4200];
    make_stale(parent, dead, stale, stale_run, live);
    shexec_session *other = NULL;
    assert_int_equal(shexec_session_new(&other), SHEXEC_OK);
    assert_int_equal(shexec_session_set_containment(other, "auto"), SHEXEC_OK);
    struct stat st;
    int stale_left = stat(stale, &st) == 0, live_left = stat(live, &st) == 0;
    rmdir(stale_run);
    rmdir(stale);
    rmdir(live);
    assert_false(stale_left);
    assert_true(live_left);
    /* the next names taken (another copy of the library in this process
     * counts its own sessions; a dead host whose pid was ours left its
     * cgroups): a new session skips them, and is still contained */
    const char *detail = NULL;
    (void)shexec_session_containment(other, &detail);
    const char *n_at = strchr(strstr(detail, "/shexec-") + 8, '-') + 1; /* shexec-PID-N-pNS */
    unsigned long next = strtoul(n_at, NULL, 10) + 1;
    char taken[8][4200];
    for (int i = 0; i < 8; i++) {
        snprintf(taken[i], sizeof taken[i], "%s/shexec-%ld-%lu%s", parent, (long)getpid(), next + i,
                 strchr(n_at, '-') ? strchr(n_at, '-') : "");
        assert_int_equal(mkdir(taken[i], 0755), 0);
    }
    shexec_session *third = NULL;
    assert_int_equal(shexec_session_new(&third), SHEXEC_OK);
    int third_kind = shexec_session_containment(third, &detail);
    char third_dir[4200];
    snprintf(third_dir, sizeof third_dir, "%s", detail);
    shexec_session_free(third);
    for (int i = 0; i < 8; i++)
        rmdir(taken[i]);
    assert_int_equal(third_kind, SHEXEC_CONTAIN_CGROUP);
    for (int i = 0; i < 8; i++)
        assert_string_not_equal(third_dir, taken[i]);
    /* on a hybrid machine a process limit may need the pids controller's
     * v1 hierarchy: the same there, when the session first uses it */
    char v1[4096], v1_session[8300];
    if (v1_self_dir("pids", v1, sizeof v1) != 0 || access(v1, W_OK) != 0) {
        shexec_session_free(other);
        print_message("no writable cgroup v1 pids hierarchy: its stale cgroups not tried\n");
        return;
    }
    make_stale(v1, dead, stale, stale_run, live);
    int limited = shexec_session_set_limit(other, SHEXEC_LIMIT_PIDS, 100) == SHEXEC_OK;
    (void)shexec_session_containment(other, &detail);
    snprintf(v1_session, sizeof v1_session, "%s%s", v1, strrchr(detail, '/'));
    int in_v1 = limited && stat(v1_session, &st) == 0;
    stale_left = stat(stale, &st) == 0;
    live_left = stat(live, &st) == 0;
    shexec_session_free(other);
    rmdir(stale_run);
    rmdir(stale);
    rmdir(live);
    if (!in_v1) {
        print_message("the pids limit is not held in cgroup v1 here\n");
        return;
    }
    assert_false(stale_left);
    assert_true(live_left);
}

/* A process a command moved into the session's own cgroup belongs to no
 * run: the session's free ends it all the same, and removes the cgroup. */
static void test_moved_into_session_cgroup(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    char cmd[8400];
    snprintf(cmd, sizeof cmd,
             "exec -a " MARK " sleep 1000 & echo $! > '%s/cgroup.procs' && "
             "sed -n 's/^0:://p' /proc/$!/cgroup",
             f->dir);
    shexec_run *r = run_cmd(f->s, cmd, 0);
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
    print_message("moved into %s", out);
    assert_true(ends_with_line(f->dir, out)); /* the session's, not the run's */
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_NONE);
    assert_true(marked_reach(1, 2000));
    shexec_run_free(r);
    /* teardown's free ends it, and finds the cgroup gone */
}

/* The same move made by a process of another uid, which a supervisor let
 * write the session's cgroup.procs (a delegated subtree). */
static void test_moved_by_delegated_uid(void **state)
{
    fixture *f = *state;
    if (geteuid() != 0) {
        print_message("skipped: delegating a cgroup to another uid needs root\n");
        return;
    }
    if (access("/usr/bin/setpriv", X_OK) != 0) {
        print_message("skipped: no setpriv to run as another uid\n");
        return;
    }
    if (!contained(f))
        return;
    char procs[4200], cmd[8400];
    snprintf(procs, sizeof procs, "%s/cgroup.procs", f->dir);
    /* as a delegating supervisor would: the directory and its cgroup.procs */
    assert_int_equal(chown(f->dir, 65534, 65534), 0);
    assert_int_equal(chown(procs, 65534, 65534), 0);
    snprintf(cmd, sizeof cmd,
             "setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "
             "'exec -a " MARK " sleep 1000 & echo $! > \"$0\" && sed -n s/^0:://p /proc/$!/cgroup "
             "&& id -u' '%s'",
             procs);
    shexec_run *r = run_cmd(f->s, cmd, 0);
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
    print_message("moved by uid 65534 into %s", out);
    assert_true(ends_with_line(f->dir, out));
    assert_non_null(strstr(out, "\n65534\n"));
    assert_true(marked_reach(1, 2000));
    shexec_run_free(r);
}

/* Cgroups a command makes below its own go with its cgroup: killed with
 * the run's leftovers, removed by the next start at the latest. */
static void test_nested_cgroups_end_with_run(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    assert_int_equal(shexec_session_set_on_leftovers(f->s, SHEXEC_ON_LEFTOVERS_KILL), SHEXEC_OK);
    char cmd[8400];
    snprintf(cmd, sizeof cmd, NESTED, f->dir);
    shexec_run *r = run_cmd(f->s, cmd, 0);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "ok\n");
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_KILLED);
    assert_int_equal(marked_after(2000), 0);
    shexec_run_free(r);
    int64_t end = tu_now_ms() + 2000;
    while (run_cgroups(f->dir) > 0 && tu_now_ms() < end) {
        usleep(10000);
        shexec_run_free(run_cmd(f->s, "true", 0));
    }
    assert_int_equal(run_cgroups(f->dir), 0);
}

/* The same adopted as leftovers (they are the run's cgroup's members too),
 * then ended by the session's free with every cgroup. */
static void test_nested_cgroups_end_with_session(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    char cmd[8400];
    snprintf(cmd, sizeof cmd, NESTED, f->dir);
    shexec_run *r = run_cmd(f->s, cmd, 0);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "ok\n");
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    assert_int_equal(count_marked(), 2);
    shexec_run_free(r);
    /* teardown's free ends them, and finds no cgroup of the session */
}

/* A process in cgroup dir, marked: a child of this process. */
static pid_t spawn_marked_in(const char *dir)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char procs[4300];
        snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
        int fd = open(procs, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "0", 1) != 1)
            _exit(126);
        execlp("sleep", g_mark, "1000", (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* A dead host's session left a tree (a command's cgroup, two below it)
 * with processes in it, one in the session's own cgroup: the next session
 * beside it ends them and removes the tree. */
static void test_stale_nested_tree_ended(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", f->dir);
    *strrchr(parent, '/') = '\0';
    pid_t dead = fork();
    assert_true(dead >= 0);
    if (dead == 0)
        _exit(0);
    assert_int_equal(waitpid(dead, NULL, 0), dead);
    static const char *const below[] = {"/run-2", "/run-2/inner", "/run-2/inner/deeper"};
    char stale[4200], tree[4][4200];
    /* named in this pid namespace, as the library names its sessions */
    struct stat ns;
    assert_int_equal(stat("/proc/self/ns/pid", &ns), 0);
    snprintf(stale, sizeof stale, "%s/shexec-%ld-8-p%llu", parent, (long)dead,
             (unsigned long long)ns.st_ino);
    for (int i = 0; i < 4; i++)
        snprintf(tree[i], sizeof tree[i], "%.4000s%s", stale, i ? below[i - 1] : "");
    for (int i = 0; i < 4; i++)
        assert_int_equal(mkdir(tree[i], 0755), 0);
    pid_t kids[2] = {spawn_marked_in(tree[0]), spawn_marked_in(tree[3])};
    int up = marked_reach(2, 5000);
    shexec_session *other = NULL;
    assert_int_equal(shexec_session_new(&other), SHEXEC_OK);
    struct stat st;
    int left = stat(tree[0], &st) == 0, alive = count_marked();
    shexec_session_free(other);
    for (int i = 0; i < 2; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    for (int i = 3; i >= 0; i--)
        rmdir(tree[i]);
    assert_true(up);
    assert_int_equal(alive, 0);
    assert_false(left);
}

/* A session's cgroup named in another pid namespace (a container's host
 * under the same parent), or without a namespace, is not judged by its pid
 * here: what runs in it is left alone. */
static void test_stale_of_another_namespace_left(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", f->dir);
    *strrchr(parent, '/') = '\0';
    pid_t dead = fork();
    assert_true(dead >= 0);
    if (dead == 0)
        _exit(0);
    assert_int_equal(waitpid(dead, NULL, 0), dead);
    char other[2][4200];
    snprintf(other[0], sizeof other[0], "%s/shexec-%ld-9-p1", parent, (long)dead);
    snprintf(other[1], sizeof other[1], "%s/shexec-%ld-10", parent, (long)dead);
    for (int i = 0; i < 2; i++)
        assert_int_equal(mkdir(other[i], 0755), 0);
    pid_t kids[2] = {spawn_marked_in(other[0]), spawn_marked_in(other[1])};
    int up = marked_reach(2, 5000);
    if (!up)
        fprintf(stderr, "marked: %d\n", count_marked());
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    int alive = count_marked();
    struct stat st;
    int kept = stat(other[0], &st) == 0 && stat(other[1], &st) == 0;
    shexec_session_free(s);
    for (int i = 0; i < 2; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    for (int i = 0; i < 2; i++)
        for (int tries = 0; rmdir(other[i]) != 0 && errno == EBUSY && tries < 200; tries++)
            usleep(10000);
    assert_true(up);
    assert_int_equal(alive, 2);
    assert_true(kept);
}

/* Three ways a daemon leaves its command, each ended with the run. */
static const char *const detach[] = {
    "setsid bash -c 'exec -a " MARK " sleep 300' & sleep 0.2; echo ok",
    "( (exec -a " MARK " sleep 300 &) & ); sleep 0.1; echo ok",
    "setsid -f bash -c 'exec -a " MARK " sleep 300'; sleep 0.1; echo ok",
};

static void test_detached_killed_with_policy_kill(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    assert_int_equal(shexec_session_set_on_leftovers(f->s, SHEXEC_ON_LEFTOVERS_KILL), SHEXEC_OK);
    for (size_t i = 0; i < sizeof detach / sizeof *detach; i++) {
        shexec_run *r = run_cmd(f->s, detach[i], 0);
        assert_int_equal(shexec_run_exit_code(r), 0);
        assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_KILLED);
        assert_int_equal(marked_after(2000), 0);
        shexec_run_free(r);
    }
    /* the killed runs' cgroups are removed, at the latest by the next start */
    shexec_run_free(run_cmd(f->s, "true", 0));
    int64_t end = tu_now_ms() + 2000;
    while (run_cgroups(f->dir) > 0 && tu_now_ms() < end) {
        usleep(10000);
        shexec_run_free(run_cmd(f->s, "true", 0));
    }
    assert_int_equal(run_cgroups(f->dir), 0);
}

static void test_detached_killed_at_timeout(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    shexec_run *r = run_cmd(f->s, "setsid -f bash -c 'exec -a " MARK " sleep 300'; "
                                  "( (exec -a " MARK " sleep 300 &) & ); sleep 300", 400);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    assert_int_equal(marked_after(2000), 0);
    shexec_run_free(r);
}

static void test_adopted_detached_end_with_session(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    /* nothing of it is left in the process group: the cgroup alone shows it */
    shexec_run *r = run_cmd(f->s, detach[2], 0);
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    assert_int_equal(count_marked(), 1);
    shexec_run_free(r);
    /* teardown's free ends it, and finds no marked process */
}

static void test_adopted_followed_to_last_member(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    shexec_run *r = run_cmd(f->s, "setsid -f bash -c 'exec -a " MARK " sleep 0.4'; echo ok", 0);
    const char *id = NULL;
    assert_int_equal(shexec_run_leftovers(r, &id), SHEXEC_LEFTOVERS_ADOPTED);
    shexec_task *t = NULL;
    assert_int_equal(shexec_session_take_task(&t, f->s, id), SHEXEC_OK);
    int64_t end = tu_now_ms() + 5000;
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING && tu_now_ms() < end)
        assert_true(shexec_session_wait(f->s, 500) >= 0);
    /* it ended by itself, when its sleep did: not killed, not before */
    assert_int_equal(shexec_run_state(shexec_task_run(t)), SHEXEC_STATE_EXITED);
    assert_true(shexec_run_duration_ms(shexec_task_run(t)) >= 250);
    assert_int_equal(count_marked(), 0);
    shexec_task_free(t);
    shexec_run_free(r);
}

/* A busy loop of 0.5 s that prints the CPU time it used by its own count
 * (getrusage of itself), the reference the library's numbers are held to:
 * on a loaded machine the loop gets less than 0.5 s of CPU. */
#define BUSY                                                                                      \
    "/usr/bin/python3 -c 'import time, resource\nt = time.monotonic() + 0.5\n"                            \
    "while time.monotonic() < t: pass\nu = resource.getrusage(resource.RUSAGE_SELF)\n"           \
    "print(int((u.ru_utime + u.ru_stime) * 1e6))'"

static void check_cost(shexec_run *r, int want_source)
{
    uint64_t user = 0, sys = 0, peak = 0;
    assert_int_equal(shexec_run_cost(r, &user, &sys, &peak), want_source);
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
    double self = strtod(out, NULL), total = (double)(user + sys);
    print_message("cpu %.0f us (user %llu, system %llu; the program's own count %.0f), "
                  "peak %llu bytes\n", total, (unsigned long long)user, (unsigned long long)sys,
                  self, (unsigned long long)peak);
    assert_true(self > 100000);
    assert_true(total >= self * 0.8 && total <= self * 1.2);
    assert_true(peak > 1000000); /* python's resident size at least */
}

/* A contained session whose directory went away: the child's chdir tells,
 * and the run starts again from the nearest existing ancestor. The first
 * attempt's cgroup goes with it: the command sees only its own. */
static void test_vanished_cwd_starts_again(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    const char *base = tu_mkdtemp();
    char dir[PATH_MAX], cmd[2 * PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/a/b", base);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cd '%s'", dir, dir);
    shexec_run_free(run_cmd(f->s, cmd, 0));
    assert_string_equal(shexec_session_cwd(f->s), dir);
    snprintf(cmd, sizeof cmd, "rmdir '%s'", dir);
    shexec_run_free(run_cmd(f->s, cmd, 0));
    snprintf(cmd, sizeof cmd, "pwd; ls -d '%s'/run-* | wc -l", f->dir);
    shexec_run *r = run_cmd(f->s, cmd, 0);
    char want[PATH_MAX + 16];
    snprintf(want, sizeof want, "%s/a\n1\n", base);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), want);
    assert_non_null(strstr(shexec_run_notice(r), "no longer exists"));
    assert_int_equal(shexec_run_exit_code(r), 0);
    shexec_run_free(r);
    assert_int_equal(run_cgroups(f->dir), 0);
    tu_rmtree(base);
}

/* The shell is in its own cgroup as it starts, born there (clone3's
 * CLONE_INTO_CGROUP) or joined before exec where the kernel has no such
 * clone, and none is left after either way. */
static void test_born_in_its_cgroup(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    for (int born = 1; born >= 0; born--) {
        shx_test_clone_into_cgroup(born);
        for (int i = 0; i < 2; i++) {
            shexec_run *r = run_cmd(f->s, i ? "sed -n 's/^0:://p' /proc/self/cgroup"
                                            : "cat /proc/self/cgroup | sed -n 's/^0:://p'", 0);
            const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
            const char *last = strrchr(out, '/');
            assert_non_null(last);
            assert_int_equal(strncmp(last, "/run-", 5), 0);
            /* the run's cgroup is the session's child */
            char parent[PATH_MAX];
            snprintf(parent, sizeof parent, "%.*s", (int)(last - out), out);
            size_t d = strlen(f->dir), p = strlen(parent);
            assert_true(p > 0 && p <= d && strcmp(f->dir + d - p, parent) == 0);
            shexec_run_free(r);
        }
    }
    shx_test_clone_into_cgroup(1);
    assert_int_equal(run_cgroups(f->dir), 0);
}

static void test_cpu_accounting(void **state)
{
    fixture *f = *state;
    if (!tu_platform_has(SHX_PLATFORM_PROCFS, "the kernel's wait with its usage (wait4)"))
        return;
    if (access("/usr/bin/python3", X_OK) != 0) {
        print_message("skipped: no python3\n");
        return;
    }
    /* without a cgroup: the shell's wait */
    shexec_run *r = run_cmd(f->s, BUSY, 0);
    check_cost(r, SHEXEC_COST_RUSAGE);
    shexec_run_free(r);
    if (!contained(f))
        return;
    /* with one: the whole tree */
    r = run_cmd(f->s, BUSY, 0);
    check_cost(r, SHEXEC_COST_CGROUP);
    shexec_run_free(r);
    assert_int_equal(shexec_run_cost(NULL, NULL, NULL, NULL), SHEXEC_COST_NONE);
}

/* Limits: set where the session's cgroups can honour them (v2, or the v1
 * hierarchies of a hybrid machine), refused where not; a fork bomb under a
 * process limit and an allocation loop under a memory limit end with a
 * result that says which limit, and leave nothing behind. */
static void test_limit_settings(void **state)
{
    fixture *f = *state;
    assert_int_equal(shexec_session_set_limit(NULL, SHEXEC_LIMIT_PIDS, 10), SHEXEC_EINVAL);
    /* no containment: refused, not ignored */
    assert_int_equal(shexec_session_set_limit(f->s, SHEXEC_LIMIT_PIDS, 10), SHEXEC_ESTATE);
    assert_int_equal(shexec_session_limit(f->s, SHEXEC_LIMIT_PIDS), 0);
    assert_int_equal(shexec_session_set_limit(f->s, SHEXEC_LIMIT_PIDS, 0), SHEXEC_OK);
    assert_int_equal(shexec_session_set_limit(f->s, 7, 10), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_limit(f->s, SHEXEC_LIMIT_MEMORY, 4096), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_limit(f->s, SHEXEC_LIMIT_CPU, 5), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_limit(NULL, SHEXEC_LIMIT_CPU), 0);
    /* a run's limit without containment: its start says so */
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, f->s, "true"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_limit(r, 9, 1), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_set_limit(r, SHEXEC_LIMIT_PIDS, 20), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_ESTATE);
    assert_non_null(strstr(shexec_session_errmsg(f->s), "containment"));
    /* a start refused leaves the run as it was: without the limit it runs */
    assert_int_equal(shexec_run_set_limit(r, SHEXEC_LIMIT_PIDS, 0), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_exit_code(r), 0);
    assert_int_equal(shexec_run_set_limit(r, SHEXEC_LIMIT_PIDS, 20), SHEXEC_ESTATE);
    shexec_run_free(r);
}

/* The session's limit "which" can be set here: 1, or 0 after saying why not. */
static int limit_available(fixture *f, int which, uint64_t value)
{
    int rc = shexec_session_set_limit(f->s, which, value);
    if (rc == SHEXEC_ESYS) {
        print_message("skipped: %s\n", shexec_session_errmsg(f->s));
        return 0;
    }
    assert_int_equal(rc, SHEXEC_OK);
    assert_int_equal(shexec_session_limit(f->s, which), value);
    return 1;
}

static void test_fork_bomb_under_pids_limit(void **state)
{
    fixture *f = *state;
    if (!contained(f) || !limit_available(f, SHEXEC_LIMIT_PIDS, 40))
        return;
    shexec_run *r = run_cmd(f->s, "b() { b | b & }; b; sleep 1; echo survived", 3000);
    assert_true(shexec_run_limit_hit(r) & (1 << SHEXEC_LIMIT_PIDS));
    assert_non_null(strstr(shexec_run_notice(r), "the process limit (40) was reached"));
    shexec_run_free(r);
    /* the session runs on, without the bomb's processes */
    r = run_cmd(f->s, "echo alive", 0);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "alive\n");
    assert_int_equal(shexec_run_limit_hit(r), 0);
    shexec_run_free(r);
    /* a run's own limit replaces the session's: 0 is none */
    assert_int_equal(shexec_run_new(&r, f->s, "for i in 1 2 3 4 5 6 7 8; do sleep 0.3 & done; wait"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_limit(r, SHEXEC_LIMIT_PIDS, 0), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_exit_code(r), 0);
    assert_int_equal(shexec_run_limit_hit(r), 0);
    shexec_run_free(r);
}

static void test_allocation_under_memory_limit(void **state)
{
    fixture *f = *state;
    if (access("/usr/bin/python3", X_OK) != 0) {
        print_message("skipped: no python3\n");
        return;
    }
    if (!contained(f) || !limit_available(f, SHEXEC_LIMIT_MEMORY, 64u << 20))
        return;
    shexec_run *r = run_cmd(f->s, "/usr/bin/python3 -c 'a = []\nwhile True: "
                                  "a.append(bytearray(1 << 20))'; echo \"exit $?\"", 20000);
    print_message("notice: %s\n", shexec_run_notice(r));
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "exit 137\n");
    assert_true(shexec_run_limit_hit(r) & (1 << SHEXEC_LIMIT_MEMORY));
    assert_non_null(strstr(shexec_run_notice(r), "killed: out of memory (limit 64 MiB)"));
    shexec_run_free(r);
    r = run_cmd(f->s, "echo alive", 0);
    assert_int_equal(shexec_run_limit_hit(r), 0);
    shexec_run_free(r);
}

/* A CPU limit of a quarter of a CPU holds a busy loop of 1 s to about a
 * quarter second of CPU time (the whole tree's, from the cgroup). */
static void test_cpu_limit(void **state)
{
    fixture *f = *state;
    if (access("/usr/bin/python3", X_OK) != 0) {
        print_message("skipped: no python3\n");
        return;
    }
    if (!contained(f) || !limit_available(f, SHEXEC_LIMIT_CPU, 250))
        return;
    shexec_run *r = run_cmd(f->s, "/usr/bin/python3 -c 'import time\nt = time.monotonic() + 1\n"
                                  "while time.monotonic() < t: pass'", 0);
    uint64_t user = 0, sys = 0;
    assert_int_equal(shexec_run_cost(r, &user, &sys, NULL), SHEXEC_COST_CGROUP);
    print_message("cpu %llu us in 1 s under a limit of 0.25 CPU\n",
                  (unsigned long long)(user + sys));
    assert_true(user + sys <= 500000); /* unbounded: about 1 s */
    assert_true(user + sys >= 100000);
    shexec_run_free(r);
}

/* On cgroup v1 swap is bounded with memory: a swap limit alone is refused
 * when the command starts, and says why. */
static void test_swap_limit_needs_memory_on_v1(void **state)
{
    fixture *f = *state;
    if (!contained(f) || !limit_available(f, SHEXEC_LIMIT_SWAP, 8u << 20))
        return;
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, f->s, "true"), SHEXEC_OK);
    int rc = shexec_run_exec(r);
    if (rc == SHEXEC_OK) {
        print_message("swap is bounded in cgroup v2 here: no v1 rule to check\n");
    } else {
        assert_int_equal(rc, SHEXEC_ESYS);
        assert_non_null(strstr(shexec_session_errmsg(f->s), "a swap limit needs a memory limit"));
        /* with a memory limit beside it, the command runs */
        assert_int_equal(shexec_run_set_limit(r, SHEXEC_LIMIT_MEMORY, 64u << 20), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    }
    assert_int_equal(shexec_run_exit_code(r), 0);
    shexec_run_free(r);
}

/* On a terminal: a child that took the hangup in its handler, then set
 * SIGHUP back to its default, is sent it again (the group path's anchors
 * are not there with a cgroup: its members are looked at). */
static void test_missed_hangup_sent_to_members(void **state)
{
    fixture *f = *state;
    if (!contained(f) || !tu_platform_has(SHX_PLATFORM_SETSID, "a controlling terminal"))
        return;
    const char *dir = tu_mkdtemp();
    assert_non_null(dir);
    char ready[300], cmd[1200];
    snprintf(ready, sizeof ready, "%s/ready", dir);
    snprintf(cmd, sizeof cmd, "'%s' '%s' & until [ -e '%s' ]; do sleep 0.01; done; echo $!",
             tu_helper("hup_late"), ready, ready);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, f->s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_pty(r, SHEXEC_PTY_ON), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    pid_t child = (pid_t)atoi(shexec_run_output(r, SHEXEC_STDOUT, NULL));
    assert_true(child > 0);
    assert_int_equal(shexec_run_leftovers(r, NULL), SHEXEC_LEFTOVERS_ADOPTED);
    shexec_run_free(r);
    int64_t end = tu_now_ms() + 10000;
    while (tu_pid_alive(child) && tu_now_ms() < end)
        shexec_session_wait(f->s, 50);
    int gone = !tu_pid_alive(child);
    if (!gone)
        kill(child, SIGKILL);
    unlink(ready);
    rmdir(dir);
    assert_true(gone);
}

/* fork() for a host the test kills: 0 in the child, which never outlives
 * the test whatever fails; in the test, its pid, kept in f until reaped
 * (a failed test's teardown kills it). */
static pid_t fork_host(fixture *f)
{
    pid_t parent = getpid();
    pid_t host = fork();
    assert_true(host >= 0);
    if (host == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(4);
        return 0;
    }
    f->host = host;
    return host;
}

/* A forked host's last act: its session kept (the watchdog must see it
 * die, not end), its run pumped while it lasts, until the test kills it. */
static void host_waits_to_be_killed(shexec_session *s, shexec_run *r)
{
    for (;;) {
        if (shexec_run_state(r) > SHEXEC_STATE_RUNNING)
            pause();
        else
            (void)shexec_session_wait(s, 1000);
    }
}

/* A host killed with SIGKILL: its watchdog ends what detached, through
 * the cgroups (the process groups would not find them). */
static void test_watchdog_ends_detached(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    if (!tu_platform_has(SHX_PLATFORM_WATCHDOG, "the watchdog"))
        return;
    assert_int_equal(shexec_session_set_containment(f->s, "off"), SHEXEC_OK);
    f->dir[0] = '\0';
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t host = fork_host(f);
    if (host == 0) {
        close(ready[0]);
        shexec_session *s = NULL;
        shexec_run *r = NULL;
        /* containment before and after the watchdog: both orders tell it */
        if (shexec_session_new(&s) != SHEXEC_OK || shexec_session_set_kill_grace_ms(s, 300) ||
            shexec_session_set_containment(s, "auto") != SHEXEC_OK ||
            shexec_session_set_watchdog(s, 1) != SHEXEC_OK ||
            shexec_session_set_containment(s, "auto") != SHEXEC_OK)
            _exit(1);
        if (shexec_run_new(&r, s, "setsid -f bash -c 'exec -a " MARK " sleep 300'; "
                                  "setsid bash -c 'exec -a " MARK " sleep 300' & sleep 0.2; "
                                  "exec -a " MARK " sleep 300") != SHEXEC_OK ||
            shexec_run_start(r) != SHEXEC_OK)
            _exit(2);
        /* pump until the three are up, then say so and wait to be killed */
        int64_t end = tu_now_ms() + 20000;
        while (count_marked() < 3)
            if (shexec_session_wait(s, 20) < 0 || tu_now_ms() > end)
                _exit(3);
        const char *dir = NULL;
        shexec_session_containment(s, &dir);
        (void)!write(ready[1], dir, strlen(dir) + 1);
        host_waits_to_be_killed(s, r);
    }
    close(ready[1]);
    char dir[4096] = "";
    ssize_t got = read(ready[0], dir, sizeof dir - 1);
    close(ready[0]);
    assert_true(got > 1 && strstr(dir, "/shexec-"));
    assert_int_equal(count_marked(), 3);
    kill(host, SIGKILL);
    int status;
    assert_int_equal(waitpid(host, &status, 0), host);
    f->host = 0;
    assert_int_equal(marked_after(3000), 0);
    /* and its cgroups are removed, which the dead host could not do */
    struct stat st;
    int64_t end = tu_now_ms() + 3000;
    while (stat(dir, &st) == 0 && tu_now_ms() < end)
        usleep(10000);
    assert_int_not_equal(stat(dir, &st), 0);
}

/* A host killed with SIGKILL: its watchdog ends, as a timeout would (TERM
 * first), what a command put in cgroups below its own and in the
 * session's own cgroup, and removes the whole tree. */
static void test_watchdog_ends_nested_and_moved(void **state)
{
    fixture *f = *state;
    if (!contained(f))
        return;
    if (!tu_platform_has(SHX_PLATFORM_WATCHDOG, "the watchdog"))
        return;
    assert_int_equal(shexec_session_set_containment(f->s, "off"), SHEXEC_OK);
    f->dir[0] = '\0';
    const char *tmp = tu_mkdtemp();
    assert_non_null(tmp);
    char termed[300], fifo[300];
    snprintf(termed, sizeof termed, "%s/termed", tmp);
    /* the marked bash waits on a FIFO no one writes, in a builtin: a
     * `sleep` it forked would be a fourth marked process until its exec */
    snprintf(fifo, sizeof fifo, "%s/fifo", tmp);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t host = fork_host(f);
    if (host == 0) {
        close(ready[0]);
        shexec_session *s = NULL;
        shexec_run *r = NULL;
        const char *dir = NULL;
        if (shexec_session_new(&s) != SHEXEC_OK || shexec_session_set_kill_grace_ms(s, 2000) ||
            shexec_session_set_containment(s, "auto") != SHEXEC_OK ||
            shexec_session_containment(s, &dir) != SHEXEC_CONTAIN_CGROUP ||
            shexec_session_set_watchdog(s, 1) != SHEXEC_OK)
            _exit(1);
        char cmd[16384];
        snprintf(cmd, sizeof cmd,
                 OWN_CGROUP "mkdir -p \"$cg/inner/deeper\" || exit; "
                 "(echo 0 > \"$cg/inner/deeper/cgroup.procs\" && exec -a " MARK " bash -c "
                 "'trap \"echo term > %s; exit\" TERM; while :; do read -t 1 <> %s; done' "
                 ">/dev/null 2>&1) & " /* the dead host's pipes would end it by SIGPIPE */
                 "exec -a " MARK " sleep 1000 & echo $! > '%s/cgroup.procs'; "
                 "exec -a " MARK " sleep 1000",
                 dir, termed, fifo, dir);
        if (shexec_run_new(&r, s, cmd) != SHEXEC_OK || shexec_run_start(r) != SHEXEC_OK)
            _exit(2);
        int64_t end = tu_now_ms() + 20000;
        while (count_marked() < 3)
            if (shexec_session_wait(s, 20) < 0 || tu_now_ms() > end)
                _exit(3);
        (void)!write(ready[1], dir, strlen(dir) + 1);
        host_waits_to_be_killed(s, r);
    }
    close(ready[1]);
    char dir[4096] = "";
    ssize_t got = read(ready[0], dir, sizeof dir - 1);
    close(ready[0]);
    assert_true(got > 1 && strstr(dir, "/shexec-"));
    assert_int_equal(count_marked(), 3);
    kill(host, SIGKILL);
    assert_int_equal(waitpid(host, NULL, 0), host);
    f->host = 0;
    int left = marked_after(5000);
    struct stat st;
    int64_t end = tu_now_ms() + 3000;
    while (stat(dir, &st) == 0 && tu_now_ms() < end)
        usleep(10000);
    int dir_left = stat(dir, &st) == 0, was_termed = stat(termed, &st) == 0;
    unlink(termed);
    unlink(fifo);
    rmdir(tmp);
    assert_int_equal(left, 0);
    assert_true(was_termed); /* SIGTERM reached the cgroup two below the run's */
    assert_false(dir_left);
}

/* In a mount namespace where the cgroup2 mount is read-only, "auto" keeps
 * process groups and says why; the commands still run. */
static void test_read_only_mount_falls_back(void **state)
{
    fixture *f = *state;
    const char *detail = NULL;
    if (!contained(f))
        return;
    assert_int_equal(shexec_session_set_containment(f->s, "off"), SHEXEC_OK);
    f->dir[0] = '\0';
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* the mount point: from the session's own view of the machine; the
         * kernel ignores the source and type of these three ("none": valgrind
         * checks them all the same) */
        shexec_session *s = NULL;
        if (unshare(CLONE_NEWNS) != 0)
            _exit(77);
        if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0)
            _exit(77);
        const char *mnt = access("/sys/fs/cgroup/unified/cgroup.procs", F_OK) == 0
                              ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup";
        if (mount(mnt, mnt, "none", MS_BIND, NULL) != 0 ||
            mount("none", mnt, "none", MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0)
            _exit(77);
        if (shexec_session_new(&s) != SHEXEC_OK ||
            shexec_session_set_containment(s, "auto") != SHEXEC_OK)
            _exit(1);
        int kind = shexec_session_containment(s, &detail);
        if (kind != SHEXEC_CONTAIN_GROUP || !strstr(detail, "read-only"))
            _exit(2);
        shexec_run *r = NULL;
        if (shexec_run_new(&r, s, "exit 7") != SHEXEC_OK || shexec_run_exec(r) != SHEXEC_OK ||
            shexec_run_exit_code(r) != 7)
            _exit(3);
        shexec_run_free(r);
        shexec_session_free(s);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77) {
        print_message("skipped: no mount namespace here\n");
        return;
    }
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    (void)snprintf(g_mark, sizeof g_mark, "shexec-contain-mark-%ld", (long)getpid());
    setenv("SHEXEC_TEST_MARK", g_mark, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_setting_and_reasons, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_cgroups_removed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_nested_tree_ended, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_of_another_namespace_left, setup, teardown),
        cmocka_unit_test_setup_teardown(test_moved_into_session_cgroup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_moved_by_delegated_uid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_cgroups_end_with_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_cgroups_end_with_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_detached_killed_with_policy_kill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_detached_killed_at_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopted_detached_end_with_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopted_followed_to_last_member, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vanished_cwd_starts_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_born_in_its_cgroup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_accounting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fork_bomb_under_pids_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_allocation_under_memory_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swap_limit_needs_memory_on_v1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missed_hangup_sent_to_members, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watchdog_ends_detached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watchdog_ends_nested_and_moved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only_mount_falls_back, setup, teardown),
    };
    return cmocka_run_group_tests_name("contain", tests, NULL, NULL);
}
