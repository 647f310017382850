/*
 * main.c - the libshexec benchmark driver: picks the sizes (full or
 * BENCH_QUICK), finds the helper and the Python/Node peers, runs the eight
 * sections in order and prints the one result table. Also the entry point
 * of the child modes the sections start this executable in.
 *
 * It reports; a missed target never fails it. The exit status is non-zero
 * only when something is broken: a command that should exit 0 did not, a
 * byte count is wrong, a process survived a timeout, a peer script failed.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static void pick_sizes(int quick)
{
    bench_sizes *z = &B.z;
    z->quick = quick;
    if (!quick) {
        *z = (bench_sizes){
            .spawn_n = 150, .spawn_rounds = 7,
            .host_mib = 4096, .host_n = 200, .host_fork_n = 6, .host_rounds = 3,
            .host_budget_s = 1.0,
            .tput_bytes = 1073741824ull, .tput_rounds = 4,
            .idle_cmd = "sleep 2", .idle_rounds = 3,
            .to_rounds = 5, .tree_procs = 500, .tree_rounds = 3, .tree_timeout_ms = 2000,
            .lat_lines = 1000, .lat_spacing_us = 1000, .lat_rounds = 3,
            .conc_tasks = 64, .conc_bytes = 10000000, .conc_rounds = 3,
        };
    } else {
        *z = (bench_sizes){
            .quick = 1,
            .spawn_n = 40, .spawn_rounds = 1,
            .host_mib = 256, .host_n = 40, .host_fork_n = 4, .host_rounds = 1,
            .host_budget_s = 0.3,
            .tput_bytes = 64ull << 20, .tput_rounds = 1,
            .idle_cmd = "sleep 0.3", .idle_rounds = 1,
            .to_rounds = 1, .tree_procs = 50, .tree_rounds = 1, .tree_timeout_ms = 600,
            .lat_lines = 100, .lat_spacing_us = 1000, .lat_rounds = 1,
            .conc_tasks = 64, .conc_bytes = 1000000, .conc_rounds = 1,
        };
    }
}

/* path of an executable `name` on PATH, or "" */
static void which(const char *name, char *out, size_t cap)
{
    out[0] = '\0';
    const char *path = getenv("PATH");
    if (!path)
        return;
    for (const char *p = path; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char cand[PATH_MAX];
        if (n > 0 && n < sizeof cand - strlen(name) - 2) {
            snprintf(cand, sizeof cand, "%.*s/%s", (int)n, p, name);
            struct stat st;
            if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
                snprintf(out, cap, "%s", cand);
                return;
            }
        }
        if (!end)
            break;
        p = end + 1;
    }
}

/* The word after `key` (e.g. "version=") in a result line into out; out
 * is left as it is when the line has no such key. */
static void result_word(const char *res, const char *key, char *out, size_t cap)
{
    const char *at = strstr(res, key);
    if (at) {
        at += strlen(key);
        snprintf(out, cap, "%.*s", (int)strcspn(at, " "), at);
    }
}

/*
 * Find a peer's runtime (BENCH_PYTHON / BENCH_NODE override PATH; "none"
 * skips it) and ask it for its real executable and version: a version
 * manager's shim on PATH would otherwise add its own start-up to every call.
 */
static void find_peer(peer_id p, const char *env, const char *name, const char *script_dir)
{
    char found[4096];
    const char *o = getenv(env);
    if (o && *o) {
        if (strcmp(o, "none") == 0) {
            B.peer_exe[p][0] = '\0';
            return;
        }
        snprintf(found, sizeof found, "%s", o);
    } else {
        which(name, found, sizeof found);
    }
    strf(B.peer_script[p], sizeof B.peer_script[p], "%s/peers/%s", script_dir,
             p == PEER_PY ? "peer.py" : "peer.js");
    if (!found[0] || access(found, X_OK) != 0)
        return;
    snprintf(B.peer_exe[p], sizeof B.peer_exe[p], "%s", found);
    const char *args[] = {"version", NULL};
    const char *res = peer_run(p, args);
    result_word(res, "exe=", B.peer_exe[p], sizeof B.peer_exe[p]);
    result_word(res, "version=", B.peer_version[p], sizeof B.peer_version[p]);
}

/* A compiled peer: BENCH_RUST / BENCH_GO name it ("none" skips it), else
 * the one `make bench` built next to this program, if it did. */
static void find_bin(bin_id b, const char *env, const char *bindir, const char *file)
{
    const char *o = getenv(env);
    if (o && strcmp(o, "none") == 0)
        return;
    if (o && *o)
        snprintf(B.bin_exe[b], sizeof B.bin_exe[b], "%s", o);
    else
        strf(B.bin_exe[b], sizeof B.bin_exe[b], "%s/%s", bindir, file);
    if (access(B.bin_exe[b], X_OK) != 0) {
        B.bin_exe[b][0] = '\0';
        return;
    }
    const char *args[] = {"version", NULL};
    result_word(bin_run(b, args), "version=", B.bin_version[b], sizeof B.bin_version[b]);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void cleanup_tmp(void)
{
    if (B.tmpdir[0])
        nftw(B.tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void cpu_model(char *out, size_t cap)
{
    snprintf(out, cap, "?");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            char *v = strchr(line, ':');
            if (v) {
                v += 1 + strspn(v + 1, " \t");
                v[strcspn(v, "\n")] = '\0';
                snprintf(out, cap, "%s", v);
            }
            break;
        }
    fclose(f);
}

/* the 1-minute load average, or -1: other work on the machine shows here */
static double loadavg1(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

typedef struct {
    const char *name;
    void (*fn)(void);
} section;

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *q = getenv("BENCH_QUICK");
    pick_sizes(q && *q && strcmp(q, "0") != 0);

    if (argc > 1 && strcmp(argv[1], "--host-size") == 0)
        return child_host_size(argc, argv);
    /* optional section numbers: run only those (the table then has only their rows) */
    int want[9] = {0}, any = 0;
    for (int i = 1; i < argc; i++) {
        int n = atoi(argv[i]);
        if (n < 1 || n > 8 || strspn(argv[i], "0123456789") != strlen(argv[i])) {
            fprintf(stderr, "usage: %s [SECTION 1-8]...   (BENCH_QUICK=1: smoke run)\n",
                    argv[0]);
            return 2;
        }
        want[n] = any = 1;
    }

    /* the executable lives in build/bench; the peers in bench/peers */
    ssize_t n = readlink("/proc/self/exe", B.self, sizeof B.self - 1);
    if (n <= 0)
        die("readlink /proc/self/exe: %s", strerror(errno));
    B.self[n] = '\0';
    char bindir[4096], benchdir[4096];
    snprintf(bindir, sizeof bindir, "%s", B.self);
    *strrchr(bindir, '/') = '\0';
    strf(benchdir, sizeof benchdir, "%s/../../bench", bindir);
    strf(B.tsline, sizeof B.tsline, "%s/tsline", bindir);
    if (access(B.tsline, X_OK) != 0)
        die("%s is missing: build it with `make bench`", B.tsline);

    snprintf(B.tmpdir, sizeof B.tmpdir, "/tmp/shexec-bench.XXXXXX");
    if (!mkdtemp(B.tmpdir))
        die("mkdtemp: %s", strerror(errno));
    atexit(cleanup_tmp);

    find_peer(PEER_PY, "BENCH_PYTHON", "python3", benchdir);
    find_peer(PEER_NODE, "BENCH_NODE", "node", benchdir);
    find_bin(BIN_RUST, "BENCH_RUST", bindir, "peer-rust");
    find_bin(BIN_GO, "BENCH_GO", bindir, "peer-go");

    struct utsname u;
    uname(&u);
    char date[64], cpu[256];
    time_t wall = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&wall));
    cpu_model(cpu, sizeof cpu);
    printf("libshexec %s benchmark, %s%s\n", shexec_version(), date,
           B.z.quick ? "  [BENCH_QUICK smoke run: figures are not meaningful]" : "");
    printf("machine: %ld cores (%s), %s %s %s\n", sysconf(_SC_NPROCESSORS_ONLN), cpu, u.sysname,
           u.release, u.machine);
    for (int p = 0; p < NPEERS; p++) {
        if (peer_present((peer_id)p))
            printf("peer %-6s: %s %s\n", peer_name((peer_id)p), B.peer_exe[p],
                   B.peer_version[p]);
        else
            printf("peer %-6s: not found, skipped\n", peer_name((peer_id)p));
    }
    for (int b = 0; b < NBINS; b++) {
        if (bin_present((bin_id)b))
            printf("peer %-6s: %s %s\n", bin_name((bin_id)b), B.bin_exe[b], B.bin_version[b]);
        else
            printf("peer %-6s: not built (no toolchain) or turned off, skipped\n",
                   bin_name((bin_id)b));
    }
    printf("\n");

    static const section sections[] = {
        {"1 spawn overhead", sec_spawn},
        {"2 spawn vs host size", sec_host_size},
        {"3 throughput", sec_throughput},
        {"4 idle cost", sec_idle},
        {"5 timeout precision", sec_timeouts},
        {"6 streaming latency", sec_latency},
        {"7 concurrency", sec_concurrency},
        {"8 agent-like session", sec_workload},
    };
    double t_all = now_s(), load_start = loadavg1();
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        if (any && !want[i + 1])
            continue;
        double t0 = now_s();
        printf("[%s] ...", sections[i].name);
        fflush(stdout);
        sections[i].fn();
        printf(" %.1f s\n", now_s() - t0);
    }
    printf("\n");
    table_print();
    printf("\ntotal bench time %.1f s; load average (1 min) %.2f at the start, %.2f at the end, "
           "%ld cores\n",
           now_s() - t_all, load_start, loadavg1(), sysconf(_SC_NPROCESSORS_ONLN));
    return 0;
}
