/*
 * spawn.c - sections 1 and 2: what one command costs to start and reap.
 *
 *   1. `true` run N times in a row by each contender, as `/bin/sh -c true`
 *      and again as `/bin/bash -c true` (the library's default shell):
 *      raw posix_spawn + waitpid (the floor), libshexec (run_new + exec +
 *      free, sentinel wrapper and all), Python Popen + communicate the way
 *      agent hosts call it (with and without a timeout), Node async spawn
 *      and spawnSync, and Node through its libshexec binding (examples/node).
 *   1t. `sh -c true` with 16 commands alive at once, each replaced as it
 *      ends: tasks of one session (shexec_run_start_task) against raw
 *      posix_spawn children behind one poll().
 *   2. the same with the host holding 4 GiB of touched memory, each size in
 *      a fresh child process of this executable (--host-size), next to a
 *      fork()+exec spawn, whose cost grows with the host's page tables.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* lib time per run / raw, at most: the wrapper is part of what is measured;
 * bash's own start costs twice dash's, so the same overhead is half the ratio */
#define SPAWN_TARGET_SH 1.10
#define SPAWN_TARGET_BASH 1.05
#define HOST_TARGET 1.10  /* lib time per run at 4 GiB / at a small host, at most */

extern char **environ;

/* N raw spawns of `shell -c true`; returns runs/s. */
static double raw_loop(const char *shell, int n)
{
    char *argv[] = {(char *)shell, (char *)"-c", (char *)"true", NULL};
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        raw_wait_ok(raw_spawn(shell, argv, -1, -1), "raw `true`");
    return n / (now_s() - t0);
}

/* N raw spawns of `shell -c true`, each in a cgroup of its own below dir,
 * the floor of a contained run: mkdir, posix_spawn, the pid written to its
 * cgroup.procs, waitpid, rmdir (the kernel's share of containment, with
 * none of the library's); returns runs/s. */
static double raw_contained_loop(const char *shell, int n, const char *dir)
{
    char *argv[] = {(char *)shell, (char *)"-c", (char *)"true", NULL};
    char cg[4200], procs[4300], pid_text[24];
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        snprintf(cg, sizeof cg, "%s/floor-%d", dir, i);
        snprintf(procs, sizeof procs, "%s/cgroup.procs", cg);
        if (mkdir(cg, 0755) != 0)
            die("mkdir %s: %s", cg, strerror(errno));
        pid_t pid = raw_spawn(shell, argv, -1, -1);
        int fd = open(procs, O_WRONLY | O_CLOEXEC);
        int len = snprintf(pid_text, sizeof pid_text, "%ld", (long)pid);
        if (fd < 0 || write(fd, pid_text, (size_t)len) != len)
            die("move into %s: %s", cg, strerror(errno));
        close(fd);
        raw_wait_ok(pid, "contained raw `true`");
        while (rmdir(cg) != 0) {
            if (errno != EBUSY)
                die("rmdir %s: %s", cg, strerror(errno));
            sched_yield(); /* the reaped shell is not yet out of it */
        }
    }
    return n / (now_s() - t0);
}

/* N fork()+execve spawns, the way hosts without posix_spawn do it. */
static double fork_loop(const char *shell, int n)
{
    char *argv[] = {(char *)shell, (char *)"-c", (char *)"true", NULL};
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            die("fork: %s", strerror(errno));
        if (pid == 0) {
            execve(shell, argv, environ);
            _exit(127);
        }
        raw_wait_ok(pid, "fork+exec `true`");
    }
    return n / (now_s() - t0);
}

static double lib_loop_cmd(shexec_session *s, int n, const char *cmd)
{
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        lib_run_ok(s, cmd);
    return n / (now_s() - t0);
}

static double lib_loop(shexec_session *s, int n)
{
    return lib_loop_cmd(s, n, "true");
}

/*
 * Where a contender's time per run goes, from getrusage around its loop:
 * CPU of this process (the caller: spawning, waiting, reading, reaping),
 * CPU of the shells it reaped, and the context switches of the calling
 * thread. The CPU totals are exact (the kernel scales them to the
 * scheduler's runtime), so they tell apart host-side and shell-side
 * overhead where wall times are too noisy to.
 */
typedef struct {
    struct rusage self, kids, thread;
} usage_mark;

static void usage_take(usage_mark *m)
{
    if (getrusage(RUSAGE_SELF, &m->self) != 0 || getrusage(RUSAGE_CHILDREN, &m->kids) != 0 ||
        getrusage(RUSAGE_THREAD, &m->thread) != 0)
        die("getrusage: %s", strerror(errno));
}

/* user + system CPU in microseconds */
static double cpu_of(const struct rusage *u)
{
    return (double)(u->ru_utime.tv_sec + u->ru_stime.tv_sec) * 1e6 +
           (double)(u->ru_utime.tv_usec + u->ru_stime.tv_usec);
}

static double cpu_us(const struct rusage *a, const struct rusage *b)
{
    return cpu_of(b) - cpu_of(a);
}

enum { U_HOST, U_KIDS, U_VCSW, U_IVCSW, NU };

/* per run between two marks, into u[NU][round] */
static void usage_per_run(const usage_mark *a, const usage_mark *b, int n, double u[NU][16],
                          int round)
{
    u[U_HOST][round] = cpu_us(&a->self, &b->self) / n;
    u[U_KIDS][round] = cpu_us(&a->kids, &b->kids) / n;
    u[U_VCSW][round] = (double)(b->thread.ru_nvcsw - a->thread.ru_nvcsw) / n;
    u[U_IVCSW][round] = (double)(b->thread.ru_nivcsw - a->thread.ru_nivcsw) / n;
}

static void usage_footnote(const char *id, double raw[NU][16], double lib[NU][16], int rounds)
{
    footnote("%s per run (medians): host CPU raw %.0f us, lib %.0f us; shell CPU raw %.0f us, lib "
             "%.0f us; host context switches raw %.2f+%.2f, lib %.2f+%.2f (voluntary+involuntary)",
             id, median(raw[U_HOST], rounds), median(lib[U_HOST], rounds),
             median(raw[U_KIDS], rounds), median(lib[U_KIDS], rounds), median(raw[U_VCSW], rounds),
             median(raw[U_IVCSW], rounds), median(lib[U_VCSW], rounds),
             median(lib[U_IVCSW], rounds));
}

/* cmd n times in session on and in off, back to back; which goes first
 * takes turns with the round k */
static void on_off(shexec_session *on, shexec_session *off, const char *cmd, int n, int k,
                   double *v_on, double *v_off)
{
    for (int turn = 0; turn < 2; turn++) {
        if ((turn ^ k) & 1)
            *v_on = lib_loop_cmd(on, n, cmd);
        else
            *v_off = lib_loop_cmd(off, n, cmd);
    }
}

/* runs/s of a peer's spawn measurement, or -1 when the peer is absent;
 * budget_s > 0: the peer stops after that many seconds (3 runs at least).
 * `run` is peer_run or bin_run, through an adapter taking the id as int. */
static double spawn_rate(const char *(*run)(int, const char *const *), int id, const char *mode,
                         const char *shell, int n, uint64_t host_mib, double budget_s)
{
    char ns[32], mib[32], budget[32];
    snprintf(ns, sizeof ns, "%d", n);
    snprintf(mib, sizeof mib, "%llu", (unsigned long long)host_mib);
    snprintf(budget, sizeof budget, "%.3f", budget_s);
    const char *args[] = {"spawn", mode, shell, ns, mib, budget, NULL};
    const char *res = run(id, args);
    return res ? kv_num(res, "runs_per_s") : -1;
}

static const char *run_script_peer(int id, const char *const *args)
{
    return peer_run((peer_id)id, args);
}

static const char *run_bin_peer(int id, const char *const *args)
{
    return bin_run((bin_id)id, args);
}

static double peer_spawn(peer_id p, const char *mode, const char *shell, int n, uint64_t host_mib,
                         double budget_s)
{
    return spawn_rate(run_script_peer, (int)p, mode, shell, n, host_mib, budget_s);
}

/* The same with a compiled peer. */
static double bin_spawn(bin_id b, const char *mode, const char *shell, int n, uint64_t host_mib,
                        double budget_s)
{
    return spawn_rate(run_bin_peer, (int)b, mode, shell, n, host_mib, budget_s);
}

/* How each compiled peer runs a command without the library: as Codex CLI
 * (Rust) and Go hosts do, in a process group of its own, with a timeout. */
static const char *const bin_std_mode[NBINS] = {"std", "osexec"};
static const char *const bin_std_name[NBINS] = {"std::process::Command", "os/exec"};
static const char *const bin_title[NBINS] = {"Rust", "Go"};
enum { B_STD, B_SHX, NB };

/* "1234" or "skipped" */
static void rate_cell(bench_row *r, int col, const double *v, int n)
{
    if (v[0] < 0)
        cell(r, col, "skipped");
    else
        cell(r, col, "%.0f", median(v, n));
}

/* ------------------------------------------------------------------------
 * 1. spawn overhead
 * ------------------------------------------------------------------------ */

/* Rows 1r and 1g: each compiled language's own way against its binding,
 * beside the floor and the C library of the same rounds; the ratio is the
 * binding's time per run over the C library's (what the binding adds). */
static void bin_spawn_rows(const double *raw, const double *lib, double vb[NBINS][NB][16],
                           int rounds)
{
    for (int b = 0; b < NBINS; b++) {
        char id[8], what[96];
        snprintf(id, sizeof id, "1%c", b == BIN_RUST ? 'r' : 'g');
        snprintf(what, sizeof what, "same, %s: %s / the binding", bin_title[b], bin_std_name[b]);
        bench_row *r = row_new(id, what, "runs/s");
        cell(r, C_FLOOR, "%.0f", median(raw, rounds));
        cell(r, C_LIB, "%.0f", median(lib, rounds));
        if (vb[b][B_STD][0] < 0) {
            cell(r, C_OTHER, "skipped");
            continue;
        }
        cell(r, C_OTHER, "%.0f / %.0f", median(vb[b][B_STD], rounds),
             median(vb[b][B_SHX], rounds));
        cell(r, C_RATIO, "%.3f", paired_ratio(lib, vb[b][B_SHX], rounds));
        cell(r, C_TARGET, "report");
    }
    footnote("1r, 1g: sh; Rust std::process::Command (own process group, pipes read to EOF, a "
             "120 s timeout as Codex CLI runs commands) / Go exec.CommandContext (120 s, Setpgid) "
             "/ the Rust or Go binding (one session, timeout 120 s); lib ratio = binding time "
             "per run / the C library's, per round");
}

enum { V_RAW, V_LIB, V_PY, V_PYNT, V_NODE, V_SYNC, V_NSHX, NV };

static void spawn_rows(const char *shell, const char *id, double target, double v[NV][16],
                       int rounds)
{
    double med[NV];
    for (int k = 0; k < NV; k++)
        med[k] = v[k][0] < 0 ? -1 : median(v[k], rounds);
    char what[64];
    snprintf(what, sizeof what, "spawn `%s -c true`", shell);
    bench_row *r = row_new(id, what, "runs/s");
    rate_cell(r, C_FLOOR, v[V_RAW], rounds);
    rate_cell(r, C_LIB, v[V_LIB], rounds);
    if (med[V_PY] < 0)
        cell_peer_skipped(r, PEER_PY);
    else
        cell(r, C_PY, "%.0f / %.0f", med[V_PY], med[V_PYNT]);
    /* child_process.spawn / the binding ("-" when its koffi is not installed) */
    if (med[V_NODE] < 0)
        cell(r, C_NODE, "skipped");
    else if (med[V_NSHX] < 0)
        cell(r, C_NODE, "%.0f / -", med[V_NODE]);
    else
        cell(r, C_NODE, "%.0f / %.0f", med[V_NODE], med[V_NSHX]);
    if (med[V_SYNC] >= 0)
        cell(r, C_OTHER, "spawnSync %.0f", med[V_SYNC]);
    else
        cell(r, C_OTHER, "spawnSync skipped");
    /* time ratio: lib time per run / raw time per run, paired per round */
    double ratio = paired_ratio(v[V_RAW], v[V_LIB], rounds);
    cell(r, C_RATIO, "%.3f", ratio);
    /* ahead of each peer's faster variant */
    int behind_py = med[V_PY] >= 0 && (med[V_LIB] <= med[V_PY] || med[V_LIB] <= med[V_PYNT]);
    int behind_node =
        med[V_NODE] >= 0 && (med[V_LIB] <= med[V_NODE] || med[V_LIB] <= med[V_SYNC]);
    cell(r, C_TARGET, "<=%.2f, >py,node", target);
    if (ratio <= target && !behind_py && !behind_node)
        cell(r, C_VERDICT, "PASS");
    else
        cell(r, C_VERDICT, "MISS(%s%s%s)", ratio > target ? "ratio" : "",
             behind_py ? (ratio > target ? ",py" : "py") : "",
             behind_node ? (ratio > target || behind_py ? ",node" : "node") : "");
    /* the ranges show how far a median can move on a loaded machine */
    char peers[160] = "";
    if (med[V_PY] >= 0)
        snprintf(peers, sizeof peers, ", python %.0f..%.0f / %.0f..%.0f", minof(v[V_PY], rounds),
                 maxof(v[V_PY], rounds), minof(v[V_PYNT], rounds), maxof(v[V_PYNT], rounds));
    footnote("%s samples (runs/s, min..max): raw %.0f..%.0f, lib %.0f..%.0f%s", id,
             minof(v[V_RAW], rounds), maxof(v[V_RAW], rounds), minof(v[V_LIB], rounds),
             maxof(v[V_LIB], rounds), peers);
}

/* The cells of a row that sets a session setting on against off, paired
 * per round (1w, 1c, 1p, 1bp): the floor, both rates, the ratio of time on
 * to time off and its verdict against 1.05. */
static void on_off_cells(bench_row *r, const double *raw, const double *off, const double *on,
                         int rounds)
{
    rate_cell(r, C_FLOOR, raw, rounds);
    rate_cell(r, C_LIB, on, rounds);
    cell(r, C_OTHER, "off %.0f", median(off, rounds));
    double ratio = paired_ratio(off, on, rounds); /* time on / time off */
    cell(r, C_RATIO, "%.3f", ratio);
    cell(r, C_TARGET, "<=1.05 of off");
    cell(r, C_VERDICT, ratio <= 1.05 ? "PASS" : "MISS");
}

/* Row 1w: row 1's library runs with the session's watchdog on, against the
 * same runs with it off (paired per round). */
static void watchdog_row(const char *shell, const double *raw, const double *off,
                         const double *on, int rounds, double start_ms)
{
    char what[80];
    snprintf(what, sizeof what, "spawn `%s -c true`, watchdog on", shell);
    bench_row *r = row_new("1w", what, "runs/s");
    on_off_cells(r, raw, off, on, rounds);
    footnote("1w: ratio = lib time per run with the watchdog on / off, measured back to back "
             "(median of per-round ratios); turning it on took %.2f ms (one fork of this host)",
             start_ms);
}

/* Row 1c: row 1's library runs with each command in a cgroup of its own
 * (shexec_session_set_containment "auto"), against the same runs with
 * process groups (paired per round); "n/a" where no cgroup can be made. */
static void contain_row(const char *shell, const double *raw, const double *off,
                        const double *on, int rounds, const char *why)
{
    char what[80];
    snprintf(what, sizeof what, "spawn `%s -c true`, a cgroup per command", shell);
    bench_row *r = row_new("1c", what, "runs/s");
    if (why) {
        cell(r, C_VERDICT, "n/a");
        footnote("1c: no cgroup can be made here (%s)", why);
        return;
    }
    on_off_cells(r, raw, off, on, rounds);
    footnote("1c: ratio = lib time per run with containment on / off, back to back (median of "
             "per-round ratios); on = a cgroup made, the child born in it (clone3) or joining it "
             "before exec, read and removed per command");
}

/* Row 1cf: the contained session against the contained floor (mkdir,
 * posix_spawn, move, waitpid, rmdir), paired per round. */
static void contain_floor_row(const char *shell, const double *floor, const double *on,
                              int rounds, const char *why)
{
    char what[80];
    snprintf(what, sizeof what, "spawn `%s -c true`, contained, vs contained floor", shell);
    bench_row *r = row_new("1cf", what, "runs/s");
    if (why) {
        cell(r, C_VERDICT, "n/a");
        return;
    }
    rate_cell(r, C_FLOOR, floor, rounds);
    rate_cell(r, C_LIB, on, rounds);
    double ratio = paired_ratio(floor, on, rounds); /* lib time / floor time */
    cell(r, C_RATIO, "%.3f", ratio);
    cell(r, C_TARGET, "<=1.10");
    cell(r, C_VERDICT, ratio <= 1.10 ? "PASS" : "MISS");
    footnote("1cf: floor = mkdir of a cgroup, posix_spawn, the pid written to its cgroup.procs, "
             "waitpid, rmdir (in the contained session's own cgroup); lib = row 1c's contained "
             "runs of the same round; ratio = lib time per run / the floor's");
}

/* Rows 1p, 1bp: rows 1 and 1b with the session keeping the shell's state
 * (shexec_session_set_persist_env), against the same runs with it off. */
static void persist_row(const char *id, const char *shell, const double *raw, const double *off,
                        const double *on, int rounds)
{
    char what[80];
    snprintf(what, sizeof what, "spawn `%s -c true`, persist_env on", shell);
    bench_row *r = row_new(id, what, "runs/s");
    on_off_cells(r, raw, off, on, rounds);
    (void)shell;
    footnote("%s: ratio = lib time per run with persist_env on / off, measured back to back "
             "(median of per-round ratios); `true` can change no state, and runs bare (no "
             "prelude, no report, no listing) unless bash must be given kept variables or "
             "functions it could read: 1bp's session keeps row 1bx's x, a name bash never reads "
             "itself, which `true` cannot read either, so it runs bare (row 1bq: the quiet "
             "prelude)",
             id);
}

/* Row 1bq: 1bp with a kept variable bash could read itself (upper case),
 * so its bash gets the quiet prelude; against persist_env off. No target. */
static void persist_quiet_row(const double *off, const double *on, int rounds)
{
    bench_row *r = row_new("1bq", "spawn `bash -c true`, persist_env on, X kept (quiet)", "runs/s");
    footnote("1bq: ratio = lib time per run with persist_env on / off, back to back (median of "
             "per-round ratios); the session keeps X, a name bash could read itself, so `true` "
             "gets the quiet prelude that gives it (no trap, no channel, no listing)");
    rate_cell(r, C_LIB, on, rounds);
    cell(r, C_OTHER, "off %.0f", median(off, rounds));
    cell(r, C_RATIO, "%.3f", paired_ratio(off, on, rounds));
    cell(r, C_VERDICT, "info");
}

/* Row 1bx: 1bp with a command that changes the state (the same change
 * each time, so the listing after it is compared with the last and not
 * parsed again); against the same command with persist_env off. No target. */
static void persist_listed_row(const double *off, const double *on, int rounds)
{
    bench_row *r = row_new("1bx", "spawn `bash -c x=1`, persist_env on (listed)", "runs/s");
    footnote("1bx: ratio = lib time per run with persist_env on / off, back to back (median of "
             "per-round ratios); bash lists its variables and functions after each run");
    rate_cell(r, C_LIB, on, rounds);
    cell(r, C_OTHER, "off %.0f", median(off, rounds));
    cell(r, C_RATIO, "%.3f", paired_ratio(off, on, rounds));
    cell(r, C_VERDICT, "info");
}

/* ------------------------------------------------------------------------
 * 1t. spawn throughput with 16 commands live at once
 * ------------------------------------------------------------------------ */

#define TASKS_LIVE 16
#define TASKS_TARGET 1.15 /* lib time per run / raw, at most */

/* `sh -c true` with its stdout on a close-on-exec pipe; *out_fd the read
 * end; session: the child leads a session of its own */
static pid_t raw_start_piped(int *out_fd, int session)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        die("pipe2: %s", strerror(errno));
    char *argv[] = {(char *)"sh", (char *)"-c", (char *)"true", NULL};
    pid_t pid = session ? raw_spawn_own_session(BENCH_SHELL, argv, p[1])
                        : raw_spawn(BENCH_SHELL, argv, p[1], -1);
    close(p[1]);
    *out_fd = p[0];
    return pid;
}

/*
 * The floor: n runs of `true`, TASKS_LIVE children alive at once, one poll()
 * over their stdout pipes; a child's hang-up is its end: reap it and start
 * the next in its slot; session: each leads a session of its own. Returns
 * runs/s.
 */
static double raw_tasks(int n, int session)
{
    struct pollfd fds[TASKS_LIVE];
    pid_t pid[TASKS_LIVE];
    int started = 0, done = 0, live = 0;
    double t0 = now_s();
    for (int i = 0; i < TASKS_LIVE; i++) {
        fds[i] = (struct pollfd){.fd = -1, .events = POLLIN};
        if (started < n) {
            pid[i] = raw_start_piped(&fds[i].fd, session);
            started++;
            live++;
        }
    }
    while (live > 0) {
        if (poll(fds, TASKS_LIVE, -1) < 0) {
            if (errno == EINTR)
                continue;
            die("poll: %s", strerror(errno));
        }
        for (int i = 0; i < TASKS_LIVE; i++) {
            if (fds[i].fd < 0 || !fds[i].revents)
                continue;
            char buf[512];
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got > 0 || (got < 0 && errno == EINTR))
                continue;
            close(fds[i].fd);
            fds[i].fd = -1;
            raw_wait_ok(pid[i], "raw `true` (16 live)");
            done++;
            live--;
            if (started < n) {
                pid[i] = raw_start_piped(&fds[i].fd, session);
                started++;
                live++;
            }
        }
    }
    return done / (now_s() - t0);
}

/* "on", "off" or "unknown": /proc/sys/kernel/sched_autogroup_enabled */
static const char *autogroup_state(void)
{
    FILE *fp = fopen("/proc/sys/kernel/sched_autogroup_enabled", "r");
    int c = fp ? fgetc(fp) : EOF;
    if (fp)
        fclose(fp);
    return c == '1' ? "on" : c == '0' ? "off" : "unknown";
}

static shexec_task *lib_start_task(shexec_session *s)
{
    shexec_run *r;
    shexec_task *t;
    if (shexec_run_new(&r, s, "true") != SHEXEC_OK)
        die("shexec_run_new: %s", shexec_session_errmsg(s));
    if (shexec_run_start_task(&t, r) != SHEXEC_OK)
        die("shexec_run_start_task: %s", shexec_session_errmsg(s));
    return t;
}

/*
 * The library: n runs of `true` as tasks of one session, TASKS_LIVE of them
 * running at once, driven by shexec_session_wait(); each finished task is
 * checked, freed, and a new one started in its place. Returns runs/s.
 */
static double lib_tasks(shexec_session *s, int n)
{
    shexec_task *t[TASKS_LIVE] = {0};
    int started = 0, done = 0, live = 0;
    double t0 = now_s();
    for (int i = 0; i < TASKS_LIVE && started < n; i++, started++, live++)
        t[i] = lib_start_task(s);
    while (live > 0) {
        if (shexec_session_wait(s, -1) < 0)
            die("shexec_session_wait: %s", shexec_session_errmsg(s));
        for (int i = 0; i < TASKS_LIVE; i++) {
            if (!t[i] || shexec_run_state(shexec_task_run(t[i])) <= SHEXEC_STATE_RUNNING)
                continue;
            shexec_run *r = shexec_task_run(t[i]);
            if (shexec_run_state(r) != SHEXEC_STATE_EXITED || shexec_run_exit_code(r) != 0)
                die("task `true` ended in state %d, exit %d", shexec_run_state(r),
                    shexec_run_exit_code(r));
            shexec_task_free(t[i]);
            t[i] = NULL;
            done++;
            live--;
            if (started < n) {
                t[i] = lib_start_task(s);
                started++;
                live++;
            }
        }
    }
    return done / (now_s() - t0);
}

/* Row 1t: raw and lib back to back in each round, paired ratio. */
static void spawn_tasks_row(void)
{
    const bench_sizes *z = &B.z;
    int n = z->spawn_n * 2, rounds = z->spawn_rounds;
    shexec_session *s = lib_session();
    if (shexec_session_set_max_tasks(s, TASKS_LIVE) != SHEXEC_OK)
        die("shexec_session_set_max_tasks: %s", shexec_session_errmsg(s));
    raw_tasks(TASKS_LIVE * 2, 1); /* warm-up */
    raw_tasks(TASKS_LIVE * 2, 0);
    lib_tasks(s, TASKS_LIVE * 2);
    double raw[16], lib[16], plain[16];
    for (int k = 0; k < rounds; k++) {
        /* in turns first, as the on/off rows: the order moves a sample */
        for (int turn = 0; turn < 2; turn++) {
            if ((turn ^ k) & 1)
                lib[k] = lib_tasks(s, n);
            else
                raw[k] = raw_tasks(n, 1);
        }
        plain[k] = raw_tasks(n, 0);
    }
    shexec_session_free(s);

    char what[64];
    snprintf(what, sizeof what, "spawn `%s -c true`, %d live tasks", BENCH_SHELL, TASKS_LIVE);
    bench_row *r = row_new("1t", what, "runs/s");
    rate_cell(r, C_FLOOR, raw, rounds);
    rate_cell(r, C_LIB, lib, rounds);
    cell(r, C_OTHER, "raw %.0f..%.0f, lib %.0f..%.0f", minof(raw, rounds), maxof(raw, rounds),
         minof(lib, rounds), maxof(lib, rounds));
    double ratio = paired_ratio(raw, lib, rounds); /* lib time per run / raw */
    cell(r, C_RATIO, "%.3f", ratio);
    cell(r, C_TARGET, "<=%.2f", TASKS_TARGET);
    cell(r, C_VERDICT, "%s", ratio <= TASKS_TARGET ? "PASS" : "MISS");
    footnote("1t: N=%d runs of `true` per sample, %d alive at once (each one that ends is "
             "replaced), median of %d interleaved samples; other = sample ranges (runs/s)",
             n, TASKS_LIVE, rounds);
    footnote("    lib = shexec_run_start_task in one session driven by shexec_session_wait, each "
             "finished task checked (exit 0), freed and replaced;");
    footnote("    floor = posix_spawn with stdout on a pipe, each child leading a session of its "
             "own (POSIX_SPAWN_SETSID, as every command of the library does), one poll() over "
             "the %d pipes, waitpid at the hang-up; lib ratio = lib time per run / floor's "
             "(median of per-round ratios), target <= %.2f",
             TASKS_LIVE, TASKS_TARGET);
    footnote("    the same floor with no session of their own: %.0f runs/s (%.0f..%.0f), lib / it "
             "%.3f; the difference is the kernel's per session (an autogroup each where "
             "sched_autogroup is on: it is %s here)",
             median(plain, rounds), minof(plain, rounds), maxof(plain, rounds),
             paired_ratio(plain, lib, rounds), autogroup_state());
}

void sec_spawn(void)
{
    const bench_sizes *z = &B.z;
    static const char *const shells[2] = {"/bin/sh", "/bin/bash"};
    shexec_session *s[2];
    s[0] = lib_session();
    s[1] = lib_session();
    if (shexec_session_set_shell(s[1], NULL, SHEXEC_WRAPPER_LOCAL) != SHEXEC_OK) /* the default: /bin/bash */
        die("shexec_session_set_shell(NULL, SHEXEC_WRAPPER_LOCAL): %s", shexec_session_errmsg(s[1]));
    /* the same as s[0] with the watchdog on; what turning it on costs */
    shexec_session *sw = lib_session();
    double w0 = now_s();
    if (shexec_session_set_watchdog(sw, 1) != SHEXEC_OK)
        die("shexec_session_set_watchdog: %s", shexec_session_errmsg(sw));
    double watchdog_start_ms = (now_s() - w0) * 1e3;
    /* the same as s[0] with a cgroup per command, where one can be made */
    shexec_session *sc = lib_session();
    const char *contain_why = NULL;
    char contain_dir[4096] = "";
    if (shexec_session_set_containment(sc, "auto") != SHEXEC_OK)
        die("shexec_session_set_containment: %s", shexec_session_errmsg(sc));
    if (shexec_session_containment(sc, &contain_why) == SHEXEC_CONTAIN_CGROUP) {
        snprintf(contain_dir, sizeof contain_dir, "%s", contain_why);
        contain_why = NULL;
    }
    /* s[0] and s[1] with the shell's state kept */
    shexec_session *sp[2] = {lib_session(), lib_session()};
    if (shexec_session_set_shell(sp[1], NULL, SHEXEC_WRAPPER_LOCAL) != SHEXEC_OK)
        die("shexec_session_set_shell(NULL, SHEXEC_WRAPPER_LOCAL): %s", shexec_session_errmsg(sp[1]));
    /* and sq: bash keeping a variable it could read itself (row 1bq) */
    shexec_session *sq = lib_session();
    if (shexec_session_set_shell(sq, NULL, SHEXEC_WRAPPER_LOCAL) != SHEXEC_OK)
        die("shexec_session_set_shell(NULL, SHEXEC_WRAPPER_LOCAL): %s", shexec_session_errmsg(sq));
    for (int sh = 0; sh < 3; sh++)
        if (shexec_session_set_persist_env(sh < 2 ? sp[sh] : sq, 1) != SHEXEC_OK)
            die("shexec_session_set_persist_env: %s", shexec_session_errmsg(sh < 2 ? sp[sh] : sq));

    /* warm-up: page cache, loader caches, the library's first-run paths */
    for (int sh = 0; sh < 2; sh++) {
        raw_loop(shells[sh], 10);
        lib_loop(s[sh], 10);
    }
    lib_loop(sw, 10);
    lib_loop(sc, 10);
    lib_loop(sp[0], 10);
    lib_loop(sp[1], 10);
    /* the kept variables, from the first round on: 1bp's x (as row 1bx
     * keeps it), 1bq's X */
    lib_run_ok(sp[1], "x=1");
    lib_run_ok(sq, "X=1");
    lib_loop(sq, 10);

    double v[2][NV][16];
    double use_raw[2][NU][16], use_lib[2][NU][16];
    double vw[16], vwo[16], vp[2][16], vpo[2][16], vx[2][16], vq[16], vqo[16], vc[16], vco[16],
        vcf[16];
    double vb[NBINS][NB][16];
    int rounds = z->spawn_rounds;
    for (int k = 0; k < rounds; k++) {
        /* raw and lib back to back: their ratio is taken per round */
        for (int sh = 0; sh < 2; sh++) {
            usage_mark m0, m1, m2;
            usage_take(&m0);
            v[sh][V_RAW][k] = raw_loop(shells[sh], z->spawn_n);
            usage_take(&m1);
            v[sh][V_LIB][k] = lib_loop(s[sh], z->spawn_n);
            usage_take(&m2);
            usage_per_run(&m0, &m1, z->spawn_n, use_raw[sh], k);
            usage_per_run(&m1, &m2, z->spawn_n, use_lib[sh], k);
        }
        /* the watchdog and persistence on and off back to back, in turns
         * first: their ratio is a few per cent, below the drift across a
         * round */
        on_off(sw, s[0], "true", z->spawn_n, k, &vw[k], &vwo[k]);
        if (!contain_why) {
            on_off(sc, s[0], "true", z->spawn_n, k, &vc[k], &vco[k]);
            vcf[k] = raw_contained_loop(shells[0], z->spawn_n, contain_dir);
        }
        for (int sh = 0; sh < 2; sh++)
            on_off(sp[sh], s[sh], "true", z->spawn_n, k, &vp[sh][k], &vpo[sh][k]);
        on_off(sp[1], s[1], "x=1", z->spawn_n, k, &vx[1][k], &vx[0][k]);
        on_off(sq, s[1], "true", z->spawn_n, k, &vq[k], &vqo[k]);
        for (int sh = 0; sh < 2; sh++) {
            v[sh][V_PY][k] = peer_spawn(PEER_PY, "run", shells[sh], z->spawn_n, 0, 0);
            v[sh][V_PYNT][k] = peer_spawn(PEER_PY, "run-notimeout", shells[sh], z->spawn_n, 0, 0);
            v[sh][V_NODE][k] = peer_spawn(PEER_NODE, "async", shells[sh], z->spawn_n, 0, 0);
            v[sh][V_SYNC][k] = peer_spawn(PEER_NODE, "sync", shells[sh], z->spawn_n, 0, 0);
            v[sh][V_NSHX][k] = peer_spawn(PEER_NODE, "shexec", shells[sh], z->spawn_n, 0, 0);
        }
        for (int b = 0; b < NBINS; b++) {
            vb[b][B_STD][k] = bin_spawn((bin_id)b, bin_std_mode[b], shells[0], z->spawn_n, 0, 0);
            vb[b][B_SHX][k] = bin_spawn((bin_id)b, "shexec", shells[0], z->spawn_n, 0, 0);
        }
    }
    shexec_session_free(s[0]);
    shexec_session_free(s[1]);
    shexec_session_free(sw);
    shexec_session_free(sc);
    shexec_session_free(sp[0]);
    shexec_session_free(sp[1]);
    shexec_session_free(sq);

    spawn_rows(shells[0], "1", SPAWN_TARGET_SH, v[0], rounds);
    spawn_rows(shells[1], "1b", SPAWN_TARGET_BASH, v[1], rounds);
    bin_spawn_rows(v[0][V_RAW], v[0][V_LIB], vb, rounds);
    usage_footnote("1", use_raw[0], use_lib[0], rounds);
    usage_footnote("1b", use_raw[1], use_lib[1], rounds);
    watchdog_row(shells[0], v[0][V_RAW], vwo, vw, rounds, watchdog_start_ms);
    contain_row(shells[0], v[0][V_RAW], vco, vc, rounds, contain_why);
    contain_floor_row(shells[0], vcf, vc, rounds, contain_why);
    persist_row("1p", shells[0], v[0][V_RAW], vpo[0], vp[0], rounds);
    persist_row("1bp", shells[1], v[1][V_RAW], vpo[1], vp[1], rounds);
    persist_listed_row(vx[0], vx[1], rounds);
    persist_quiet_row(vqo, vq, rounds);
    footnote("1: N=%d sequential runs per sample, median of %d interleaved samples; lib ratio = "
             "lib time per run / floor's (median of per-round ratios); target also: lib runs/s "
             "above every python and node variant",
             z->spawn_n, rounds);
    footnote("1: python = Popen(cmd, shell=True, executable=SHELL, text=True, stdout=PIPE, "
             "stderr=STDOUT, start_new_session=True).communicate(timeout=120), as");
    footnote("   mini-swe-agent's local environment does / the same without a timeout (with one, "
             "Popen.wait sleep-polls for the exit);");
    footnote("   node = child_process.spawn(SHELL, ['-c', cmd], {stdio: ['ignore','pipe','pipe'], "
             "detached: true}) with 'data' listeners, awaited on 'close', as CLI agents do; "
             "other = spawnSync(SHELL, ['-c', cmd], {stdio: ['ignore','pipe','pipe']})");
    footnote("   node a / b: a = child_process.spawn as above, b = Node via libshexec: await "
             "session.run('true') of the binding examples/node (one session, shell SHELL)");
    spawn_tasks_row();
    rule();
}

/* ------------------------------------------------------------------------
 * 2. spawn vs host size
 * ------------------------------------------------------------------------ */

/* --host-size MIB N FORK_N: hold MIB of touched memory, then measure. */
int child_host_size(int argc, char **argv)
{
    if (argc != 5)
        die("--host-size MIB N FORK_N");
    size_t bytes = (size_t)strtoull(argv[2], NULL, 10) << 20;
    int n = atoi(argv[3]), fork_n = atoi(argv[4]);
    if (bytes) {
        /* MAP_POPULATE write-faults every page in (a private writable mapping
         * gets its own pages, not the shared zero page): resident, like a heap
         * in use, and faster than touching it page by page */
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (p == MAP_FAILED)
            die("mmap %zu bytes: %s", bytes, strerror(errno));
    }
    shexec_session *s = lib_session();
    raw_loop(BENCH_SHELL, 5);
    lib_loop(s, 5);
    fork_loop(BENCH_SHELL, 2);
    double raw = raw_loop(BENCH_SHELL, n);
    double lib = lib_loop(s, n);
    double frk = fork_loop(BENCH_SHELL, fork_n);
    shexec_session_free(s);
    printf("RESULT raw=%.3f lib=%.3f fork=%.3f hwm_kib=%ld\n", raw, lib, frk, vm_hwm_kib());
    return 0;
}

static void host_child(uint64_t mib, int n, int fork_n, double *raw, double *lib, double *frk,
                       long *hwm)
{
    char a_mib[32], a_n[32], a_f[32];
    snprintf(a_mib, sizeof a_mib, "%llu", (unsigned long long)mib);
    snprintf(a_n, sizeof a_n, "%d", n);
    snprintf(a_f, sizeof a_f, "%d", fork_n);
    char *argv[] = {B.self, (char *)"--host-size", a_mib, a_n, a_f, NULL};
    int status;
    char *out = raw_capture(B.self, argv, NULL, &status);
    char *res = strstr(out, "RESULT ");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !res)
        die("--host-size %s child failed (status 0x%x): %s", a_mib, status, out);
    *raw = kv_num(res + 7, "raw");
    *lib = kv_num(res + 7, "lib");
    *frk = kv_num(res + 7, "fork");
    *hwm = (long)kv_num(res + 7, "hwm_kib");
    free(out);
}

void sec_host_size(void)
{
    const bench_sizes *z = &B.z;
    int rounds = z->host_rounds;
    enum { SMALL, BIG };
    double raw[2][16], lib[2][16], frk[2][16], py[2][16], node[2][16], nshx[2][16];
    double hb[NBINS][NB][2][16];
    long hwm[2] = {0, 0};
    for (int k = 0; k < rounds; k++) {
        for (int sz = SMALL; sz <= BIG; sz++) {
            uint64_t mib = sz == BIG ? z->host_mib : 0;
            host_child(mib, z->host_n, z->host_fork_n, &raw[sz][k], &lib[sz][k], &frk[sz][k],
                       &hwm[sz]);
            double budget = z->host_budget_s;
            py[sz][k] = peer_spawn(PEER_PY, "run", BENCH_SHELL, z->host_n, mib, budget);
            node[sz][k] = peer_spawn(PEER_NODE, "async", BENCH_SHELL, z->host_n, mib, budget);
            nshx[sz][k] = peer_spawn(PEER_NODE, "shexec", BENCH_SHELL, z->host_n, mib, budget);
            for (int b = 0; b < NBINS; b++) {
                hb[b][B_STD][sz][k] = bin_spawn((bin_id)b, bin_std_mode[b], BENCH_SHELL,
                                                z->host_n, mib, budget);
                hb[b][B_SHX][sz][k] = bin_spawn((bin_id)b, "shexec", BENCH_SHELL, z->host_n,
                                                mib, budget);
            }
        }
    }
    /* the big child must really have held the memory, or the row means nothing */
    if (hwm[BIG] < (long)(z->host_mib * 1024 * 9 / 10))
        die("the --host-size child's peak RSS was %ld KiB, expected about %llu MiB", hwm[BIG],
            (unsigned long long)z->host_mib);

    double m_lib_s = median(lib[SMALL], rounds), m_lib_b = median(lib[BIG], rounds);
    double m_frk_s = median(frk[SMALL], rounds), m_frk_b = median(frk[BIG], rounds);
    double ratio = paired_ratio(lib[SMALL], lib[BIG], rounds); /* time at 4 GiB / small */

    char what[64];
    snprintf(what, sizeof what, "spawn `sh -c true`, %llu MiB host",
             (unsigned long long)z->host_mib);
    bench_row *r = row_new("2", what, "runs/s");
    cell(r, C_FLOOR, "%.0f", median(raw[BIG], rounds));
    cell(r, C_LIB, "%.0f", m_lib_b);
    for (int p = 0; p < NPEERS; p++) {
        double (*v)[16] = p == PEER_PY ? py : node;
        int col = p == PEER_PY ? C_PY : C_NODE;
        if (v[BIG][0] < 0)
            cell(r, col, "skipped");
        else if (p == PEER_NODE && nshx[BIG][0] >= 0) /* spawn / the binding */
            cell(r, col, "%.0f (x%.0f) / %.0f (x%.2f)", median(v[BIG], rounds),
                 median(v[SMALL], rounds) / median(v[BIG], rounds), median(nshx[BIG], rounds),
                 median(nshx[SMALL], rounds) / median(nshx[BIG], rounds));
        else
            cell(r, col, "%.0f (x%.2f)", median(v[BIG], rounds),
                 median(v[SMALL], rounds) / median(v[BIG], rounds));
    }
    cell(r, C_OTHER, "fork+exec %.1f (x%.0f)", m_frk_b, m_frk_s / m_frk_b);
    cell(r, C_RATIO, "%.3f", ratio);
    cell(r, C_TARGET, "<=%.2f big/small", HOST_TARGET);
    cell(r, C_VERDICT, "%s", ratio <= HOST_TARGET ? "PASS" : "MISS");

    r = row_new("2b", "same, small host (no ballast)", "runs/s");
    cell(r, C_FLOOR, "%.0f", median(raw[SMALL], rounds));
    cell(r, C_LIB, "%.0f", m_lib_s);
    cell_peer(r, PEER_PY, py[SMALL], rounds, "%.0f");
    if (node[SMALL][0] >= 0 && nshx[SMALL][0] >= 0)
        cell(r, C_NODE, "%.0f / %.0f", median(node[SMALL], rounds), median(nshx[SMALL], rounds));
    else
        cell_peer(r, PEER_NODE, node[SMALL], rounds, "%.0f");
    cell(r, C_OTHER, "fork+exec %.0f", m_frk_s);
    cell(r, C_RATIO, "%.3f", paired_ratio(raw[SMALL], lib[SMALL], rounds));
    for (int b = 0; b < NBINS; b++) {
        char id[8], title[96];
        snprintf(id, sizeof id, "2%c", b == BIN_RUST ? 'r' : 'g');
        snprintf(title, sizeof title, "same, %llu MiB %s host: %s / the binding",
                 (unsigned long long)z->host_mib, bin_title[b], bin_std_name[b]);
        r = row_new(id, title, "runs/s");
        if (hb[b][B_STD][BIG][0] < 0) {
            cell(r, C_OTHER, "skipped");
            continue;
        }
        double (*h)[2][16] = hb[b];
        double flat = paired_ratio(h[B_SHX][SMALL], h[B_SHX][BIG], rounds);
        cell(r, C_OTHER, "%.0f (x%.2f) / %.0f (x%.2f)", median(h[B_STD][BIG], rounds),
             paired_ratio(h[B_STD][SMALL], h[B_STD][BIG], rounds), median(h[B_SHX][BIG], rounds),
             flat);
        cell(r, C_RATIO, "%.3f", flat);
        cell(r, C_TARGET, "<=%.2f big/small", HOST_TARGET);
        cell(r, C_VERDICT, "%s", flat <= HOST_TARGET ? "PASS" : "MISS");
    }
    footnote("2r, 2g: the Rust and Go peers hold the ballast themselves (a touched buffer); "
             "(xR) = time per run at %llu MiB / small host, per round; lib ratio = the "
             "binding's", (unsigned long long)z->host_mib);
    footnote("2: each sample in a fresh process holding %llu MiB of resident memory (mmap "
             "MAP_POPULATE; python the same via mmap, node Buffer.alloc(n, 1)) or none;",
             (unsigned long long)z->host_mib);
    footnote("   N=%d (fork+exec: %d) per sample, median of %d interleaved rounds; (xR) = time per "
             "run at %llu MiB / small host; lib ratio on row 2 = lib at %llu MiB / lib small, "
             "per round",
             z->host_n, z->host_fork_n, rounds, (unsigned long long)z->host_mib,
             (unsigned long long)z->host_mib);
    footnote("   node a / b: child_process.spawn / Node via libshexec (the binding, the ballast "
             "held by the same node process)");
    rule();
}
