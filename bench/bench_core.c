/*
 * bench_core.c - the core costs of libshexec, each against a raw floor
 * measured in the same process, in the same run:
 *
 *   1. spawn overhead: `true` run N times through the library
 *      (shexec_run_new + shexec_run_exec + shexec_run_free per run, one
 *      session) vs. raw posix_spawn("/bin/sh" or "/bin/bash", -c true) +
 *      waitpid. Library with its default shell (/bin/bash) and with
 *      shexec_session_set_shell("/bin/sh").
 *   2. throughput: `head -c 1G /dev/zero` streamed through the output
 *      callback vs. raw posix_spawn(/bin/sh -c ...) + read() of a pipe with a
 *      64 KiB buffer; plus the process's peak RSS (VmHWM) around the library
 *      runs.
 *
 * Samples are interleaved (raw, lib, raw, lib, ...) and medians reported: the
 * machine is shared and noisy. Targets are printed next to the figures; a
 * missed target is reported, never fatal. The exit status is non-zero only
 * when something is broken (a run fails, a byte count is wrong).
 *
 * BENCH_QUICK=1 shrinks N, the sample counts and the stream size for a smoke
 * run. Only the public API (shexec.h) is used.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shexec.h"

extern char **environ;

#define SPAWN_TARGET 1.15 /* lib time per run / raw time per run, at most */
#define TPUT_TARGET 0.90  /* lib MB/s / raw MB/s, at least */
#define RSS_TARGET_KIB (8 * 1024)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "bench_core: BROKEN: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double tmp[16];
    memcpy(tmp, v, (size_t)n * sizeof *v);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* (max - min) / median, in percent: how noisy the samples were. */
static double spread_pct(const double *v, int n)
{
    double lo = v[0], hi = v[0];
    for (int i = 1; i < n; i++) {
        if (v[i] < lo)
            lo = v[i];
        if (v[i] > hi)
            hi = v[i];
    }
    return 100.0 * (hi - lo) / median(v, n);
}

/* VmHWM of this process in KiB, or -1. */
static long vm_hwm_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kib = strtol(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kib;
}

/* ------------------------------------------------------------------------
 * 1. spawn overhead
 * ------------------------------------------------------------------------ */

/* N raw spawns of `shell -c true`; returns seconds. */
static double raw_spawn_loop(const char *shell, int n)
{
    char *argv[] = {(char *)shell, (char *)"-c", (char *)"true", NULL};
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        pid_t pid;
        int rc = posix_spawn(&pid, shell, NULL, NULL, argv, environ);
        if (rc != 0)
            die("posix_spawn", strerror(rc));
        int status;
        while (waitpid(pid, &status, 0) < 0)
            if (errno != EINTR)
                die("waitpid", strerror(errno));
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            die("raw `true` did not exit 0", shell);
    }
    return now_s() - t0;
}

/* N library runs of `true` in session s; returns seconds. */
static double lib_spawn_loop(shexec_session *s, int n)
{
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        shexec_run *r;
        int rc = shexec_run_new(&r, s, "true");
        if (rc != SHEXEC_OK)
            die("shexec_run_new", shexec_strerror(rc));
        rc = shexec_run_exec(r);
        if (rc != SHEXEC_OK)
            die("shexec_run_exec", shexec_session_errmsg(s));
        if (shexec_run_state(r) != SHEXEC_STATE_EXITED || shexec_run_exit_code(r) != 0)
            die("library `true` did not exit 0", NULL);
        shexec_run_free(r);
    }
    return now_s() - t0;
}

/* ------------------------------------------------------------------------
 * 2. throughput
 * ------------------------------------------------------------------------ */

/* Raw: sh -c CMD with stdout to a pipe, read() 64 KiB at a time to EOF. */
static double raw_stream(const char *cmd, uint64_t *bytes)
{
    static char buf[64 * 1024];
    char *argv[] = {(char *)"sh", (char *)"-c", (char *)cmd, NULL};
    double t0 = now_s();
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        die("pipe2", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    pid_t pid;
    int rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        die("posix_spawn", strerror(rc));
    close(p[1]);
    uint64_t total = 0;
    for (;;) {
        ssize_t n = read(p[0], buf, sizeof buf);
        if (n > 0)
            total += (uint64_t)n;
        else if (n == 0)
            break;
        else if (errno != EINTR)
            die("read", strerror(errno));
    }
    close(p[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            die("waitpid", strerror(errno));
    double t = now_s() - t0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("raw stream command did not exit 0", cmd);
    *bytes = total;
    return t;
}

static void count_fn(void *user, int stream, const char *data, size_t len)
{
    (void)data;
    if (stream == SHEXEC_STDOUT)
        *(uint64_t *)user += len;
}

static double lib_stream(shexec_session *s, const char *cmd, uint64_t *bytes)
{
    uint64_t total = 0;
    double t0 = now_s();
    shexec_run *r;
    int rc = shexec_run_new(&r, s, cmd);
    if (rc != SHEXEC_OK)
        die("shexec_run_new", shexec_strerror(rc));
    if (shexec_run_set_output_fn(r, count_fn, &total) != SHEXEC_OK ||
        shexec_run_set_timeout_ms(r, SHEXEC_DEFAULT_MAX_TIMEOUT_MS) != SHEXEC_OK)
        die("configuring the stream run", shexec_session_errmsg(s));
    rc = shexec_run_exec(r);
    if (rc != SHEXEC_OK)
        die("shexec_run_exec", shexec_session_errmsg(s));
    if (shexec_run_state(r) != SHEXEC_STATE_EXITED || shexec_run_exit_code(r) != 0)
        die("library stream command did not exit 0", cmd);
    if (shexec_run_output_total(r, SHEXEC_STDOUT) != total)
        die("shexec_run_output_total differs from the bytes the callback saw", NULL);
    size_t kept;
    shexec_run_output(r, SHEXEC_STDOUT, &kept);
    shexec_run_free(r);
    double t = now_s() - t0;
    /* capture must stay bounded: 30000 chars of ASCII plus the notice */
    if (kept > SHEXEC_DEFAULT_OUTPUT_LIMIT + 200)
        die("captured stdout exceeds the output limit", NULL);
    *bytes = total;
    return t;
}

/* ------------------------------------------------------------------------ */

static const char *verdict_le(double v, double target)
{
    return v <= target ? "ok" : "MISS";
}

int main(void)
{
    const char *q = getenv("BENCH_QUICK");
    int quick = q && *q && strcmp(q, "0") != 0;
    int n_spawn = quick ? 50 : 500;
    int spawn_samples = quick ? 3 : 5;
    int tput_samples = 3;
    uint64_t tput_bytes = quick ? 64ull << 20 : 1ull << 30;
    const char *tput_cmd = quick ? "head -c 64M /dev/zero" : "head -c 1G /dev/zero";

    struct utsname u;
    if (uname(&u) != 0)
        die("uname", strerror(errno));
    char date[64];
    time_t wall = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&wall));
    printf("bench_core: libshexec %s, %s%s\n", shexec_version(), date, quick ? "  [BENCH_QUICK]" : "");
    printf("machine: nproc %ld, %s %s %s\n", sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release,
           u.machine);

    double t_start = now_s();

    /* --- 1. spawn overhead ---------------------------------------------- */
    shexec_session *s_bash, *s_sh;
    if (shexec_session_new(&s_bash) != SHEXEC_OK || shexec_session_new(&s_sh) != SHEXEC_OK)
        die("shexec_session_new", NULL);
    if (shexec_session_set_shell(s_sh, "/bin/sh") != SHEXEC_OK)
        die("shexec_session_set_shell", shexec_session_errmsg(s_sh));

    /* warm-up: page cache, dynamic loader caches, the library's first-run paths */
    raw_spawn_loop("/bin/sh", 10);
    raw_spawn_loop("/bin/bash", 10);
    lib_spawn_loop(s_sh, 10);
    lib_spawn_loop(s_bash, 10);

    enum { RAW_SH, LIB_SH, RAW_BASH, LIB_BASH, NV };
    double rate[NV][16];
    for (int k = 0; k < spawn_samples; k++) {
        rate[RAW_SH][k] = n_spawn / raw_spawn_loop("/bin/sh", n_spawn);
        rate[LIB_SH][k] = n_spawn / lib_spawn_loop(s_sh, n_spawn);
        rate[RAW_BASH][k] = n_spawn / raw_spawn_loop("/bin/bash", n_spawn);
        rate[LIB_BASH][k] = n_spawn / lib_spawn_loop(s_bash, n_spawn);
    }
    shexec_session_free(s_sh);
    shexec_session_free(s_bash);

    double med[NV];
    for (int v = 0; v < NV; v++)
        med[v] = median(rate[v], spawn_samples);
    /* ratio = lib time per run / raw time per run = raw rate / lib rate */
    static const char *const names[NV] = {"raw posix_spawn /bin/sh", "lib, shell /bin/sh",
                                          "raw posix_spawn /bin/bash", "lib, default /bin/bash"};

    printf("\n1. spawn overhead: `true` x %d per sample, median of %d interleaved samples\n",
           n_spawn, spawn_samples);
    printf("   ratio = time per run / raw floor's; target <= %.2f against the same shell\n",
           SPAWN_TARGET);
    printf("   %-26s %9s %8s %7s %10s %11s  %s\n", "variant", "runs/s", "us/run", "spread",
           "vs raw sh", "vs raw bash", "target");
    for (int v = 0; v < NV; v++) {
        int lib = v == LIB_SH || v == LIB_BASH;
        printf("   %-26s %9.0f %8.0f %6.0f%%", names[v], med[v], 1e6 / med[v],
               spread_pct(rate[v], spawn_samples));
        if (lib) {
            double vs_sh = med[RAW_SH] / med[v], vs_bash = med[RAW_BASH] / med[v];
            double same = v == LIB_SH ? vs_sh : vs_bash;
            printf(" %9.3fx %10.3fx  %s (%.3f vs %s)\n", vs_sh, vs_bash,
                   verdict_le(same, SPAWN_TARGET), same, v == LIB_SH ? "sh" : "bash");
        } else {
            printf(" %10s %11s  floor\n", "-", "-");
        }
    }
    fflush(stdout);

    /* --- 2. throughput -------------------------------------------------- */
    shexec_session *s;
    if (shexec_session_new(&s) != SHEXEC_OK)
        die("shexec_session_new", NULL);
    if (shexec_session_set_output_limit(s, SHEXEC_DEFAULT_OUTPUT_LIMIT, SHEXEC_UNIT_CHARS,
                                        SHEXEC_KEEP_HEAD) != SHEXEC_OK)
        die("shexec_session_set_output_limit", shexec_session_errmsg(s));

    double raw_mbs[16], lib_mbs[16];
    long hwm_before = -1, hwm_after = -1;
    for (int k = 0; k < tput_samples; k++) {
        uint64_t got = 0;
        double t = raw_stream(tput_cmd, &got);
        if (got != tput_bytes) {
            fprintf(stderr, "bench_core: raw read %llu bytes, expected %llu\n",
                    (unsigned long long)got, (unsigned long long)tput_bytes);
            die("raw byte count", NULL);
        }
        raw_mbs[k] = (double)got / t / 1e6;

        if (k == 0)
            hwm_before = vm_hwm_kib();
        got = 0;
        t = lib_stream(s, tput_cmd, &got);
        if (got != tput_bytes) {
            fprintf(stderr, "bench_core: library callback saw %llu bytes, expected %llu\n",
                    (unsigned long long)got, (unsigned long long)tput_bytes);
            die("library byte count", NULL);
        }
        lib_mbs[k] = (double)got / t / 1e6;
    }
    hwm_after = vm_hwm_kib();
    shexec_session_free(s);

    double raw_med = median(raw_mbs, tput_samples), lib_med = median(lib_mbs, tput_samples);
    double tratio = lib_med / raw_med;
    long grow = hwm_after - hwm_before;

    printf("\n2. throughput: `%s` (%llu bytes, verified), median of %d interleaved samples\n",
           tput_cmd, (unsigned long long)tput_bytes, tput_samples);
    printf("   MB/s = 10^6 bytes/s; lib = output callback counting bytes, capture limit %u chars\n",
           SHEXEC_DEFAULT_OUTPUT_LIMIT);
    printf("   %-26s %9s %7s %10s  %s\n", "variant", "MB/s", "spread", "lib/raw", "target");
    printf("   %-26s %9.0f %6.0f%% %10s  floor\n", "raw pipe read, 64 KiB buf", raw_med,
           spread_pct(raw_mbs, tput_samples), "-");
    printf("   %-26s %9.0f %6.0f%% %9.3fx  %s (>= %.2f)\n", "lib output callback", lib_med,
           spread_pct(lib_mbs, tput_samples), tratio, tratio >= TPUT_TARGET ? "ok" : "MISS",
           TPUT_TARGET);
    if (hwm_before >= 0 && hwm_after >= 0)
        printf("   peak RSS (VmHWM): %ld KiB before lib runs, %ld KiB after, +%ld KiB  %s (< %d KiB)\n",
               hwm_before, hwm_after, grow, grow < RSS_TARGET_KIB ? "ok" : "MISS", RSS_TARGET_KIB);
    else
        printf("   peak RSS (VmHWM): unavailable (no /proc/self/status)\n");

    printf("\ntotal bench time %.1f s\n", now_s() - t_start);
    return 0;
}
