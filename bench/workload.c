/*
 * workload.c - 8. an agent-like session: the commands a coding agent runs
 * while it reads and changes a project (git status and diff, ls, cat, sed
 * -n, grep -rn over the tree, find, small python3 scripts, a unittest run
 * of a test suite's size, a cd and an export), in a git repository that is
 * a copy of this project's sources. Every contender runs the same list with
 * bash in that directory (the floor and the peer in it for each command:
 * they keep no cwd, so the list's `cd lib` is followed by a `cd ..` that
 * all run); what is timed is the whole list, so the figures
 * say what the library costs where the commands themselves do real work,
 * not on `true`.
 *
 * floor = posix_spawn of `bash -c CMD` in a group of its own, stdout and
 * stderr on pipes read in one poll() loop to their end, waitpid. lib = one
 * session on bash, shexec_run_new + shexec_run_exec + shexec_run_free per
 * command, persist_env off (8) and on (8p). Python = the agent-style Popen
 * of row 1 with bash.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define WL_SHELL "/bin/bash"

/* One pass; the full run repeats it (10 x 20 = 200 commands). Each exits 0. */
static const char *const wl_commands[] = {
    "git status",
    "ls -la",
    "cat lib/loop/loop.c",
    "grep -rn 'shx_buf_puts' lib | head -40",
    "sed -n 1,120p lib/run/run.c",
    "git diff",
    "python3 -c 'import json; print(json.dumps({\"files\": 3, \"ok\": True}))'",
    "find . -name '*.c' -not -path './.git/*' | wc -l",
    "ls -la lib | head -30",
    "wc -l lib/*/*.c | tail -1",
    "grep -rn 'int shx_' lib --include='*.h' | wc -l",
    "head -40 README.md",
    "python3 -m unittest discover -s tests -q 2>&1 | tail -3",
    "cd lib && ls | head -20",
    "cd ..",
    "export BUILD_MODE=debug; echo \"$BUILD_MODE\"",
    "grep -c SHEXEC_API include/shexec.h",
    "git diff --stat",
    "grep -n 'static' lib/session/task.c | head -30",
    "git log --oneline -5; pwd",
};
#define WL_PASS (sizeof wl_commands / sizeof *wl_commands)

/* A unittest module of a small project's size: 40 tests doing a little work. */
static const char wl_tests_py[] =
    "import json, re, unittest\n"
    "class T(unittest.TestCase):\n"
    "    pass\n"
    "def make(i):\n"
    "    def t(self):\n"
    "        d = {'k%d' % j: list(range(j)) for j in range(30)}\n"
    "        self.assertEqual(json.loads(json.dumps(d)), d)\n"
    "        self.assertTrue(re.match(r'^k\\d+$', 'k%d' % i))\n"
    "    return t\n"
    "for i in range(40):\n"
    "    setattr(T, 'test_%d' % i, make(i))\n";

static char wl_dir[PATH_MAX], wl_list[PATH_MAX];

static void sh_ok(const char *cmd)
{
    char *argv[] = {(char *)"bash", (char *)"-c", (char *)cmd, NULL};
    raw_wait_ok(raw_spawn(WL_SHELL, argv, -1, -1), cmd);
}

/* The project: this tree's sources in a fresh git repository, one file changed. */
static void wl_setup(void)
{
    char top[PATH_MAX], cmd[4 * PATH_MAX];
    strf(top, sizeof top, "%s", B.self);
    *strrchr(top, '/') = '\0';
    strf(top + strlen(top), sizeof top - strlen(top), "/../.."); /* build/bench/../.. */
    strf(wl_dir, sizeof wl_dir, "%s/project", B.tmpdir);
    strf(cmd, sizeof cmd,
         "set -e; mkdir -p '%s/tests'; cd '%s'; cp -r lib include README.md '%s'; "
         "cd '%s'; git init -q; git add -A; "
         "git -c user.name=bench -c user.email=bench@localhost commit -qm 'the project'; "
         "echo '/* a change under review */' >> lib/run/run.c",
         wl_dir, top, wl_dir, wl_dir);
    sh_ok(cmd);
    char path[PATH_MAX + 32];
    strf(path, sizeof path, "%s/tests/test_small.py", wl_dir);
    FILE *f = fopen(path, "w");
    if (!f || fputs(wl_tests_py, f) < 0 || fclose(f) != 0)
        die("cannot write %s", path);
    /* the list for the Python peer, one command a line */
    strf(wl_list, sizeof wl_list, "%s/commands.txt", B.tmpdir);
    f = fopen(wl_list, "w");
    for (size_t i = 0; f && i < WL_PASS; i++)
        fprintf(f, "%s\n", wl_commands[i]);
    if (!f || fclose(f) != 0)
        die("cannot write %s", wl_list);
}

static size_t wl_count(void)
{
    return B.z.quick ? WL_PASS : 10 * WL_PASS;
}

/* floor: bash -c CMD in its own group, both pipes read to their end, reaped */
static void raw_run(const char *cmd)
{
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
        die("pipe2: %s", strerror(errno));
    char *argv[] = {(char *)"bash", (char *)"-c", (char *)cmd, NULL};
    pid_t pid = raw_spawn_own_group_io(WL_SHELL, argv, out[1], err[1]);
    close(out[1]);
    close(err[1]);
    struct pollfd p[2] = {{.fd = out[0], .events = POLLIN}, {.fd = err[0], .events = POLLIN}};
    char buf[65536];
    while (p[0].fd >= 0 || p[1].fd >= 0) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            die("poll: %s", strerror(errno));
        }
        for (int i = 0; i < 2; i++)
            if (p[i].fd >= 0 && p[i].revents) {
                ssize_t n = read(p[i].fd, buf, sizeof buf);
                if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
                    close(p[i].fd);
                    p[i].fd = -1;
                }
            }
    }
    int status = raw_reap(pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("`%s` did not exit 0 (status 0x%x)", cmd, status);
}

static double wl_raw(void)
{
    double t0 = now_s();
    for (size_t i = 0; i < wl_count(); i++)
        raw_run(wl_commands[i % WL_PASS]);
    return now_s() - t0;
}

/* The library's time for the list; contain: "auto" (a cgroup per command,
 * the default) rather than process groups, as the other rows. Sets *why to
 * why not where "auto" could make no cgroup. */
static double wl_lib(int persist, int contain, const char **why)
{
    shexec_session *s;
    if (shexec_session_new(&s) != SHEXEC_OK)
        die("shexec_session_new failed");
    if (shexec_session_set_cwd(s, wl_dir) != SHEXEC_OK ||
        shexec_session_set_persist_env(s, persist) != SHEXEC_OK ||
        shexec_session_set_containment(s, contain ? "auto" : "off") != SHEXEC_OK)
        die("session settings: %s", shexec_session_errmsg(s));
    if (contain && shexec_session_containment(s, why) == SHEXEC_CONTAIN_CGROUP)
        *why = NULL;
    double t0 = now_s();
    for (size_t i = 0; i < wl_count(); i++)
        lib_run_ok(s, wl_commands[i % WL_PASS]);
    double dt = now_s() - t0;
    shexec_session_free(s);
    return dt;
}

static double wl_python(void)
{
    if (!peer_present(PEER_PY))
        return -1;
    char n[32];
    strf(n, sizeof n, "%zu", wl_count());
    const char *args[] = {"workload", WL_SHELL, wl_dir, n, wl_list, NULL};
    return kv_num(peer_run(PEER_PY, args), "seconds");
}

void sec_workload(void)
{
    char here[PATH_MAX];
    if (!getcwd(here, sizeof here))
        die("getcwd: %s", strerror(errno));
    wl_setup();
    if (chdir(wl_dir) != 0) /* where the floor's shells start */
        die("chdir %s: %s", wl_dir, strerror(errno));
    /* BENCH_WORKLOAD_ROUNDS: another number of rounds (1 to 8) */
    const char *want = getenv("BENCH_WORKLOAD_ROUNDS");
    int rounds = want && atoi(want) > 0 && atoi(want) <= 8 ? atoi(want) : B.z.quick ? 1 : 3;
    double raw[8], lib[8], libp[8], libc[8], py[8];
    const char *contain_why = NULL;
    for (size_t i = 0; i < WL_PASS; i++) /* warm: the first to read the tree pays its misses */
        raw_run(wl_commands[i]);
    for (int k = 0; k < rounds; k++) /* each round in another order */
        for (int c = 0; c < 5; c++)
            switch ((c + k) % 5) {
            case 0: raw[k] = wl_raw(); break;
            case 1: lib[k] = wl_lib(0, 0, NULL); break;
            case 2: libp[k] = wl_lib(1, 0, NULL); break;
            case 3: libc[k] = wl_lib(0, 1, &contain_why); break;
            default: py[k] = wl_python(); break;
            }
    size_t n = wl_count();
    bench_row *r = row_new("8", "agent-like session (bash), persist_env off", "s/run of list");
    cell(r, C_FLOOR, "%.2f", median(raw, rounds));
    cell(r, C_LIB, "%.2f", median(lib, rounds));
    cell_peer(r, PEER_PY, py, rounds, "%.2f");
    cell(r, C_RATIO, "%.3f", paired_ratio(lib, raw, rounds));
    cell(r, C_TARGET, "report");
    bench_row *rp = row_new("8p", "agent-like session (bash), persist_env on", "s/run of list");
    cell(rp, C_FLOOR, "%.2f", median(raw, rounds));
    cell(rp, C_LIB, "%.2f", median(libp, rounds));
    cell(rp, C_RATIO, "%.3f", paired_ratio(libp, raw, rounds));
    cell(rp, C_TARGET, "report");
    bench_row *rc = row_new("8c", "agent-like session (bash), a cgroup per command",
                            "s/run of list");
    if (contain_why) {
        cell(rc, C_VERDICT, "n/a (%s)", contain_why);
    } else {
        cell(rc, C_FLOOR, "%.2f", median(lib, rounds));
        cell(rc, C_LIB, "%.2f", median(libc, rounds));
        cell(rc, C_RATIO, "%.3f", paired_ratio(libc, lib, rounds));
        cell(rc, C_TARGET, "report");
        footnote("8c: row 8's list with containment \"auto\" (the default); floor = row 8's "
                 "lib, ratio = on / off per round (median)");
    }
    footnote("8, 8p: %zu commands (%zu kinds: git status/diff/log, ls, cat, sed -n, grep -rn, "
             "find, python3 -c, a 40-test unittest run, cd, export) in a git copy of this "
             "project; %d rounds; lib ratio = lib / floor per round (median); per command: "
             "floor %.2f ms, lib %.2f ms, lib persist on %.2f ms",
             n, WL_PASS, rounds, 1e3 * median(raw, rounds) / (double)n,
             1e3 * median(lib, rounds) / (double)n, 1e3 * median(libp, rounds) / (double)n);
    if (chdir(here) != 0)
        die("chdir %s: %s", here, strerror(errno));
}
