/*
 * waiting.c - sections 4 and 5: what the host pays while a command runs,
 * and how exactly a command is stopped at its deadline.
 *
 *   4. idle cost: voluntary context switches of the calling thread
 *      (getrusage RUSAGE_THREAD ru_nvcsw) across one `sleep 2`, i.e. how
 *      often the host woke up; cross-checked by counting the library's
 *      poll() and ppoll() calls (wrapped at link time, see below).
 *   5. timeouts: `sleep 100` with a 500 ms timeout (ends on SIGTERM);
 *      a TERM-ignoring command with a 200 ms kill grace (ends on SIGKILL at
 *      about 700 ms); a tree of 500 sleeping processes timed out, every one
 *      of them checked gone through /proc.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define TIMEOUT_MS 500u
#define GRACE_MS 200u
/* 5c: the return after the deadline, and every process gone after the return, at most */
#define TREE_LATE_AIM_MS 20.0
#define TREE_GONE_AIM_MS 50.0

/* ------------------------------------------------------------------------
 * 4. idle cost
 * ------------------------------------------------------------------------ */

static long poll_calls;

/* voluntary context switches over one run; its poll() calls through *polls;
 * with stdin_on, the command's stdin is a pipe (looks for a wait for input
 * go on while it is silent) */
static long lib_idle_in(shexec_session *s, const char *cmd, int stdin_on, long *polls)
{
    shexec_run *r;
    if (shexec_run_new(&r, s, cmd) != SHEXEC_OK ||
        (stdin_on && shexec_run_set_stdin(r, 1) != SHEXEC_OK))
        die("shexec_run_new: %s", shexec_session_errmsg(s));
    long polls_before = poll_calls;
    long before = thread_nvcsw();
    if (shexec_run_exec(r) != SHEXEC_OK)
        die("shexec_run_exec: %s", shexec_session_errmsg(s));
    long after = thread_nvcsw();
    *polls = poll_calls - polls_before;
    if (shexec_run_state(r) != SHEXEC_STATE_EXITED || shexec_run_exit_code(r) != 0)
        die("library `%s` did not exit 0", cmd);
    shexec_run_free(r);
    return after - before;
}

static long lib_idle(shexec_session *s, const char *cmd, long *polls)
{
    return lib_idle_in(s, cmd, 0, polls);
}

static long raw_idle(const char *cmd)
{
    long before = thread_nvcsw();
    raw_wait_ok(raw_spawn_sh(cmd, -1), cmd);
    return thread_nvcsw() - before;
}

/*
 * The library's poll() and ppoll() calls (its loop waits in ppoll where
 * there is one) are counted by the linker's wrapping (the Makefile links
 * this program with --wrap=poll and --wrap=ppoll): every reference to them
 * in the program and the static library binds to these, which count and
 * call the C library's own, so the library itself is untouched. (strace -c
 * would count too, but it slows the host so much that the command's exit
 * events pile up into fewer polls.)
 */
int __real_poll(struct pollfd *fds, nfds_t n, int timeout_ms);
int __real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout_ms);
int __wrap_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask);

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    poll_calls++;
    return __real_poll(fds, n, timeout_ms);
}

int __wrap_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask)
{
    poll_calls++;
    return __real_ppoll(fds, n, timeout, mask);
}

/*
 * 4i: what looking for a wait for input costs a silent command: wake-ups
 * over a long silent command with stdin open (looks go on once a second
 * after the first, at the session's input look time) against the same with
 * looks turned off, per second of silence.
 */
static void sec_idle_looks(void)
{
    const bench_sizes *z = &B.z;
    const char *cmd = z->quick ? "sleep 1" : "sleep 6";
    double secs = z->quick ? 1.0 : 6.0;
    uint32_t look_ms = z->quick ? 200 : SHEXEC_DEFAULT_INPUT_LOOK_MS;
    shexec_session *on = lib_session(), *off = lib_session();
    if (shexec_session_set_input_look_ms(on, look_ms) != SHEXEC_OK ||
        shexec_session_set_input_look_ms(off, 0) != SHEXEC_OK)
        die("setting the input look: %s", shexec_session_errmsg(on));
    lib_run_ok(on, "true");
    lib_run_ok(off, "true");
    int rounds = z->idle_rounds;
    double w_on[16], w_off[16], extra[16];
    for (int k = 0; k < rounds; k++) {
        long np;
        w_on[k] = (double)lib_idle_in(on, cmd, 1, &np);
        w_off[k] = (double)lib_idle_in(off, cmd, 1, &np);
        extra[k] = (w_on[k] - w_off[k]) / secs;
    }
    shexec_session_free(on);
    shexec_session_free(off);
    double m = median(extra, rounds);
    char what[80];
    snprintf(what, sizeof what, "input looks: extra wake-ups/s over `%s` (stdin open)", cmd);
    bench_row *r = row_new("4i", what, "per s");
    cell(r, C_FLOOR, "%.0f", median(w_off, rounds));
    cell(r, C_LIB, "%.0f", median(w_on, rounds));
    cell(r, C_OTHER, "extra %.2f/s", m);
    cell(r, C_TARGET, "<=1/s");
    cell(r, C_VERDICT, "%s", m <= 1.0 ? "PASS" : "MISS");
    footnote("4i: wake-ups (nvcsw) of one run of `%s` with stdin a pipe, looks for a wait for "
             "input on (first after %u ms of silence, then every second) = lib, off = floor; "
             "median of %d rounds of (lib - floor) / %.0f s", cmd, look_ms, rounds, secs);
}

/*
 * 4s: how soon `server &` returns, and with what. After the shell exits
 * the library reads what the server prints until it has been quiet for
 * the drain (shexec_session_set_leftovers_drain_ms), then adopts it: the
 * return waits for the server's first line plus the drain, and the line is
 * in the run's output. The floor is the same run without a drain (it
 * returns at the shell's exit, the line left to the adopted task).
 */
static void sec_server_return(void)
{
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    char cmd[256];
    strf(cmd, sizeof cmd, "%s -u -m http.server 0 --bind 127.0.0.1 &", py);
    int rounds = B.z.quick ? 2 : 7;
    double on[16], off[16];
    int lines = 0;
    for (int k = 0; k < rounds; k++) {
        for (int drain = 0; drain < 2; drain++) {
            shexec_session *s = lib_session();
            if (shexec_session_set_leftovers_drain_ms(s, drain ? SHEXEC_DEFAULT_LEFTOVERS_DRAIN_MS : 0) !=
                SHEXEC_OK)
                die("setting the drain: %s", shexec_session_errmsg(s));
            shexec_run *r;
            if (shexec_run_new(&r, s, cmd) != SHEXEC_OK)
                die("configuring the server run: %s", shexec_session_errmsg(s));
            int64_t t0 = now_ns();
            if (shexec_run_exec(r) != SHEXEC_OK || shexec_run_exit_code(r) != 0 ||
                shexec_run_leftovers(r, NULL) != SHEXEC_LEFTOVERS_ADOPTED)
                die("`%s` did not exit 0 leaving its server adopted: %s", cmd, shexec_session_errmsg(s));
            (drain ? on : off)[k] = (double)(now_ns() - t0) / 1e6;
            const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
            lines += drain && strstr(out, "Serving HTTP") != NULL;
            shexec_run_free(r);
            shexec_session_free(s); /* ends the server */
        }
    }
    bench_row *r = row_new("4s", "return of `python3 -m http.server 0 &`", "ms");
    cell(r, C_FLOOR, "%.0f", median(off, rounds));
    cell(r, C_LIB, "%.0f", median(on, rounds));
    cell(r, C_OTHER, "first line in the run %d/%d", lines, rounds);
    cell(r, C_TARGET, "line + drain");
    cell(r, C_VERDICT, "%s", lines == rounds ? "PASS" : "MISS");
    footnote("4s: ms from shexec_run_exec() to its return for `%s` (a session on process groups); "
             "lib = the default drain of leftovers' output (%u ms of quiet), floor = no drain; "
             "median of %d rounds; other = rounds whose run output has the server's first line",
             cmd, SHEXEC_DEFAULT_LEFTOVERS_DRAIN_MS, rounds);
}

void sec_idle(void)
{
    const bench_sizes *z = &B.z;
    const char *cmd = z->idle_cmd;
    shexec_session *s = lib_session();
    lib_run_ok(s, "true");
    int rounds = z->idle_rounds;
    double raw[16], lib[16], py[16], node[16], polls[16];
    for (int k = 0; k < rounds; k++) {
        long np;
        raw[k] = (double)raw_idle(cmd);
        lib[k] = (double)lib_idle(s, cmd, &np);
        polls[k] = (double)np;
        for (int p = 0; p < NPEERS; p++) {
            const char *args[] = {"idle", cmd, NULL};
            const char *res = peer_run((peer_id)p, args);
            (p == PEER_PY ? py : node)[k] = res ? kv_num(res, "nvcsw") : -1;
        }
    }
    shexec_session_free(s);

    double m_lib = median(lib, rounds), m_raw = median(raw, rounds);
    char what[64];
    snprintf(what, sizeof what, "idle wake-ups over `%s`", cmd);
    bench_row *r = row_new("4", what, "nvcsw");
    cell(r, C_FLOOR, "%.0f", m_raw);
    cell(r, C_LIB, "%.0f", m_lib);
    cell_peer(r, PEER_PY, py, rounds, "%.0f");
    cell_peer(r, PEER_NODE, node, rounds, "%.0f (process)");
    cell(r, C_OTHER, "lib poll() calls %.0f", median(polls, rounds));
    cell(r, C_TARGET, "<=floor+1");
    cell(r, C_VERDICT, "%s", m_lib <= m_raw + 1 ? "PASS" : "MISS");
    footnote("4: voluntary context switches of the waiting thread (RUSAGE_THREAD) across the "
             "whole run, spawn included; median of %d rounds. floor = posix_spawn + waitpid;",
             rounds);
    footnote("   python = the agent-style run of 1 (RUSAGE_THREAD); node counts its whole process "
             "(libuv/V8 threads too); other = poll()/ppoll() calls the library made in the run (median)");
    sec_idle_looks();
    sec_server_return();
    rule();
}

/* ------------------------------------------------------------------------
 * 5. timeouts
 * ------------------------------------------------------------------------ */

/* ms from exec to return of a run that must time out */
static double lib_timeout(shexec_session *s, const char *cmd, uint32_t ms, int expect_sig)
{
    shexec_run *r;
    if (shexec_run_new(&r, s, cmd) != SHEXEC_OK || shexec_run_set_timeout_ms(r, ms) != SHEXEC_OK)
        die("configuring the timeout run: %s", shexec_session_errmsg(s));
    int64_t t0 = now_ns();
    if (shexec_run_exec(r) != SHEXEC_OK)
        die("shexec_run_exec: %s", shexec_session_errmsg(s));
    int64_t t1 = now_ns();
    if (shexec_run_state(r) != SHEXEC_STATE_TIMED_OUT)
        die("`%s` with timeout %u ms ended in state %d, not TIMED_OUT", cmd, ms,
            shexec_run_state(r));
    if (expect_sig && shexec_run_signal(r) != expect_sig)
        die("`%s` timed out but its shell ended by signal %d, expected %d", cmd,
            shexec_run_signal(r), expect_sig);
    shexec_run_free(r);
    return (double)(t1 - t0) / 1e6;
}

enum { P_GONE, P_DYING, P_RUNNING };

#define PF_EXITING 0x4 /* the kernel's "in do_exit()" task flag */

/*
 * Where pid stands: gone (no /proc entry, a zombie, or no longer in group
 * pgid, unless pgid is 0: any group), dying (exiting, or a SIGTERM/SIGKILL is pending: it runs no more
 * code of its own), or running.
 */
static int proc_state(pid_t pid, pid_t pgid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return P_GONE;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    char state;
    int ppid, pgrp, sess, tty, tpgid;
    unsigned flags;
    if (!p || sscanf(p + 1, " %c %d %d %d %d %d %u", &state, &ppid, &pgrp, &sess, &tty, &tpgid,
                     &flags) != 7)
        return P_GONE;
    if (state == 'Z' || state == 'X' || (pgid && pgrp != pgid))
        return P_GONE;
    if (flags & PF_EXITING)
        return P_DYING;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "r")))
        return P_GONE;
    unsigned long long pending = 0;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "SigPnd:", 7) == 0 || strncmp(line, "ShdPnd:", 7) == 0)
            pending |= strtoull(line + 7, NULL, 16);
    fclose(f);
    const unsigned long long fatal = 1ull << (SIGKILL - 1) | 1ull << (SIGTERM - 1);
    return pending & fatal ? P_DYING : P_RUNNING;
}

typedef struct {
    double late_ms;   /* return - deadline */
    int started;      /* children that recorded their pid */
    int dying_at_ret; /* signalled or exiting, not yet gone, when exec returned */
    int running_at_ret; /* neither: the library let them be */
    double gone_ms;   /* after return, until every one was gone */
} tree_result;

/* The tree's command: its shell's pid first (it leads the group, so it is
 * the group id to check against), then each child's; with detach, every
 * second child leaves the group and session (setsid) first. */
static void tree_cmd(char *cmd, size_t cap, char *file, size_t file_cap, int procs,
                     const char *who, int round, int detach)
{
    strf(file, file_cap, "%s/tree-%s%d.pids", B.tmpdir, who, round);
    strf(cmd, cap,
         "echo $$ > '%s'; i=0; while [ $i -lt %d ]; do %s & echo $! >> '%s'; "
         "i=$((i+1)); done; wait",
         file, procs,
         detach ? "if [ $((i % 2)) = 1 ]; then setsid sleep 100; else sleep 100; fi"
                : "sleep 100",
         file);
}

/* After the return at t_ret: where each recorded process stands, then how
 * long until every one is gone. */
static void tree_settle(const char *file, int procs, int64_t t_ret, tree_result *res,
                        int any_group)
{
    FILE *f = fopen(file, "r");
    if (!f)
        die("the process tree wrote no pid file");
    pid_t pgid = 0, *pids = malloc((size_t)procs * sizeof *pids);
    if (!pids)
        die("out of memory");
    long v;
    if (fscanf(f, "%ld", &v) != 1)
        die("the process tree's pid file is empty");
    pgid = any_group ? 0 : (pid_t)v;
    while (res->started < procs && fscanf(f, "%ld", &v) == 1)
        pids[res->started++] = (pid_t)v;
    fclose(f);

    for (int i = 0; i < res->started; i++) {
        int st = proc_state(pids[i], pgid);
        res->dying_at_ret += st == P_DYING;
        res->running_at_ret += st == P_RUNNING;
    }
    int alive = res->dying_at_ret + res->running_at_ret;
    while (alive > 0 && now_ns() - t_ret < 5000000000LL) {
        usleep(1000);
        alive = 0;
        for (int i = 0; i < res->started; i++)
            alive += proc_state(pids[i], pgid) != P_GONE;
    }
    res->gone_ms = (double)(now_ns() - t_ret) / 1e6;
    if (alive > 0) {
        for (int i = 0; i < res->started; i++)
            if (proc_state(pids[i], pgid) != P_GONE)
                kill(pids[i], SIGKILL);
        die("%d of %d processes of the timed-out tree were still running 5 s after the run "
            "returned (killed now)", alive, res->started);
    }
    free(pids);
}

static tree_result lib_tree(shexec_session *s, int procs, uint32_t ms, int round, int detach)
{
    char file[512], cmd[1024];
    tree_cmd(cmd, sizeof cmd, file, sizeof file, procs, "lib", round, detach);
    tree_result res = {0};
    res.late_ms = lib_timeout(s, cmd, ms, 0) - ms;
    tree_settle(file, procs, now_ns(), &res, detach);
    return res;
}

/*
 * The floor of 5c: the same tree under `sh -c` started by posix_spawn in a
 * group of its own and, at the deadline, ended the shortest way that still
 * ends every member: SIGTERM to the group, the shell's exit awaited,
 * SIGKILL to the group while the shell's zombie still holds its id, the
 * reap. Nothing is read to find processes that left the group, and nothing
 * reads the shell's output.
 */
static tree_result raw_tree(int procs, uint32_t ms, int round)
{
    char file[512], cmd[1024];
    tree_cmd(cmd, sizeof cmd, file, sizeof file, procs, "raw", round, 0);
    char *argv[] = {(char *)"sh", (char *)"-c", cmd, NULL};
    int64_t t0 = now_ns();
    pid_t pid = raw_spawn_own_group(BENCH_SHELL, argv);
    int64_t deadline = t0 + (int64_t)ms * 1000000;
    struct timespec at = {(time_t)(deadline / 1000000000), (long)(deadline % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
        ;
    kill(-pid, SIGTERM);
    siginfo_t si;
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0)
        if (errno != EINTR)
            die("waitid: %s", strerror(errno));
    kill(-pid, SIGKILL);
    int status = raw_reap(pid);
    int64_t t_ret = now_ns();
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM)
        die("the raw tree's shell did not end by SIGTERM (status 0x%x)", status);
    tree_result res = {0};
    res.late_ms = (double)(t_ret - deadline) / 1e6;
    tree_settle(file, procs, t_ret, &res, 0);
    return res;
}

/*
 * Rows 5d, 5e: the tree of 5c with each command in a cgroup (containment
 * "auto"), procs processes, with detach every second one leaving the group
 * and session first (setsid): a process group could not end those. With
 * floor, 5c's floor runs beside it, in turns first; without, the row is
 * the library's alone.
 */
static void contained_tree_row(const char *id, shexec_session *s, int procs, uint32_t ms,
                               int rounds, int detach, int floor)
{
    double late[16], gone[16], over[16];
    int min_started = procs, max_dying = 0, max_running = 0;
    for (int k = 0; k < rounds; k++) {
        tree_result tr, fl = {0};
        if (floor && !(k & 1))
            fl = raw_tree(procs, ms, k);
        tr = lib_tree(s, procs, ms, k, detach);
        if (floor && (k & 1))
            fl = raw_tree(procs, ms, k);
        late[k] = tr.late_ms;
        gone[k] = tr.gone_ms;
        over[k] = tr.late_ms - fl.late_ms;
        if (tr.started < min_started)
            min_started = tr.started;
        if (floor && fl.started < min_started)
            min_started = fl.started;
        if (tr.dying_at_ret > max_dying)
            max_dying = tr.dying_at_ret;
        if (tr.running_at_ret > max_running)
            max_running = tr.running_at_ret;
    }
    char what[96];
    snprintf(what, sizeof what, "%d-process tree%s, timeout %u ms, cgroup", procs,
             detach ? " (half setsid)" : "", ms);
    bench_row *r = row_new(id, what, "ms late");
    double m_late = median(late, rounds), m_gone = maxof(gone, rounds);
    cell(r, C_LIB, "%.1f", m_late);
    cell(r, C_OTHER, "@ret %d dying %d running; 0 @+%.0f ms", max_dying, max_running, m_gone);
    if (floor) {
        cell(r, C_RATIO, "%+.1f ms", median(over, rounds));
        cell(r, C_TARGET, "floor +5 ms");
    } else {
        cell(r, C_TARGET, "report");
    }
    if (min_started < procs)
        cell(r, C_VERDICT, "INVALID(%d started)", min_started);
    else if (max_running)
        cell(r, C_VERDICT, "MISS(running)");
    else if (floor)
        cell(r, C_VERDICT, median(over, rounds) <= 5.0 ? "PASS" : "MISS(late)");
    else
        cell(r, C_VERDICT, "info");
}

void sec_timeouts(void)
{
    const bench_sizes *z = &B.z;
    shexec_session *s = lib_session();
    if (shexec_session_set_kill_grace_ms(s, GRACE_MS) != SHEXEC_OK)
        die("shexec_session_set_kill_grace_ms: %s", shexec_session_errmsg(s));
    lib_run_ok(s, "true");

    int rounds = z->to_rounds;
    double term[16], ign[16];
    for (int k = 0; k < rounds; k++) {
        term[k] = lib_timeout(s, "sleep 100", TIMEOUT_MS, SIGTERM) - TIMEOUT_MS;
        ign[k] = lib_timeout(s, "trap '' TERM; sleep 100", TIMEOUT_MS, SIGKILL);
    }
    double tree_late[16], tree_gone[16], raw_late[16], raw_gone[16], late_over[16];
    int min_started = z->tree_procs, max_dying = 0, max_running = 0;
    for (int k = 0; k < z->tree_rounds; k++) {
        /* the floor and the library take turns going first */
        tree_result tr, fl;
        if (k & 1) {
            tr = lib_tree(s, z->tree_procs, z->tree_timeout_ms, k, 0);
            fl = raw_tree(z->tree_procs, z->tree_timeout_ms, k);
        } else {
            fl = raw_tree(z->tree_procs, z->tree_timeout_ms, k);
            tr = lib_tree(s, z->tree_procs, z->tree_timeout_ms, k, 0);
        }
        tree_late[k] = tr.late_ms;
        tree_gone[k] = tr.gone_ms;
        raw_late[k] = fl.late_ms;
        raw_gone[k] = fl.gone_ms;
        late_over[k] = tr.late_ms - fl.late_ms;
        if (tr.started < min_started)
            min_started = tr.started;
        if (fl.started < min_started)
            min_started = fl.started;
        if (tr.dying_at_ret > max_dying)
            max_dying = tr.dying_at_ret;
        if (tr.running_at_ret > max_running)
            max_running = tr.running_at_ret;
    }
    shexec_session_free(s);

    bench_row *r = row_new("5", "timeout 500 ms, `sleep 100` (TERM)", "ms late");
    cell(r, C_LIB, "%.1f", median(term, rounds));
    cell(r, C_OTHER, "max %.1f", maxof(term, rounds));
    cell(r, C_TARGET, "report");

    r = row_new("5b", "TERM ignored, grace 200 ms", "ms total");
    double m_ign = median(ign, rounds);
    cell(r, C_LIB, "%.1f", m_ign);
    cell(r, C_OTHER, "%+.1f vs %u", m_ign - (TIMEOUT_MS + GRACE_MS), TIMEOUT_MS + GRACE_MS);
    cell(r, C_TARGET, "~%u", TIMEOUT_MS + GRACE_MS);

    char what[64];
    snprintf(what, sizeof what, "%d-process tree, timeout %u ms", z->tree_procs,
             z->tree_timeout_ms);
    r = row_new("5c", what, "ms late");
    double m_late = median(tree_late, z->tree_rounds), m_gone = maxof(tree_gone, z->tree_rounds);
    cell(r, C_FLOOR, "%.1f", median(raw_late, z->tree_rounds));
    cell(r, C_LIB, "%.1f", m_late);
    cell(r, C_OTHER, "@ret %d dying %d running; 0 @+%.0f ms", max_dying, max_running, m_gone);
    cell(r, C_RATIO, "%+.1f ms", median(late_over, z->tree_rounds));
    cell(r, C_TARGET, "<=%.0f, gone +%.0f", TREE_LATE_AIM_MS, TREE_GONE_AIM_MS);
    if (min_started < z->tree_procs)
        cell(r, C_VERDICT, "INVALID(%d started)", min_started);
    else if (max_running)
        cell(r, C_VERDICT, "MISS(running)");
    else if (m_late > TREE_LATE_AIM_MS || m_gone > TREE_GONE_AIM_MS)
        cell(r, C_VERDICT, "MISS(%s)", m_late > TREE_LATE_AIM_MS ? "late" : "gone");
    else
        cell(r, C_VERDICT, "PASS");
    /* 5d, 5e: the same ends through a cgroup per command */
    shexec_session *sc = lib_session();
    const char *why = NULL;
    if (shexec_session_set_kill_grace_ms(sc, GRACE_MS) != SHEXEC_OK ||
        shexec_session_set_containment(sc, "auto") != SHEXEC_OK)
        die("containment: %s", shexec_session_errmsg(sc));
    int contained = shexec_session_containment(sc, &why) == SHEXEC_CONTAIN_CGROUP;
    if (contained) {
        lib_run_ok(sc, "true");
        contained_tree_row("5d", sc, z->tree_procs, z->tree_timeout_ms, z->tree_rounds, 0, 1);
        /* four times the processes: four times the time to start them */
        contained_tree_row("5e", sc, z->tree_procs * 4, z->tree_timeout_ms * 4, 1, 1, 0);
    }
    shexec_session_free(sc);
    footnote("5: ms late = return of shexec_run_exec - (its call + timeout), spawn included; "
             "median of %d rounds (5c: %d); every run checked TIMED_OUT, 5/5b by TERM/KILL",
             rounds, z->tree_rounds);
    footnote("5c: the tree records its pids; at the return each is looked up in /proc: gone "
             "(no entry, zombie, out of the group), dying (PF_EXITING or SIGTERM/SIGKILL pending)");
    footnote("    or running (worst round); then polled every 1 ms until none is left (0 @+ms, "
             "worst round); one still there after 5 s fails the bench");
    footnote("    floor = the same tree spawned in its own group, at the deadline SIGTERM to the "
             "group, the shell's exit awaited, SIGKILL to the group, the reap (gone after it: "
             "+%.0f ms);", maxof(raw_gone, z->tree_rounds));
    footnote("    lib ratio = lib - floor, median of per-round differences (the rounds alternate "
             "which goes first)");
    if (contained)
        footnote("5d, 5e: containment \"auto\": TERM to the group and each member outside it, "
                 "KILL by cgroup.kill, no /proc walk; 5e's detached half counts as gone only "
                 "when its process is");
    else
        footnote("5d, 5e: not measured, no cgroup can be made here (%s)", why);
    rule();
}
