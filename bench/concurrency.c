/*
 * concurrency.c - section 7: 64 commands each printing 10 MB at once.
 *
 *   libshexec: 64 tasks (shexec_run_new + shexec_run_start_task) in one
 *   session, driven by shexec_session_wait until all are done, each with
 *   the default output limit (the bytes still flow through the loop, only
 *   30000 chars are kept); every task's output_total must be 10,000,000.
 *   Floor: the same 64 commands posix_spawn'ed with stdout on pipes, one
 *   poll() loop reading them all. Other: `xargs -P64`, the shell way, whose
 *   commands write to /dev/null (no pipe, no reader). Python: asyncio
 *   subprocesses; Node: 64 spawns with 'data' events, Promise.all.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define CONC_TARGET 1.15 /* lib time / raw reader's time, at most */

static double lib_conc(int k, const char *cmd, uint64_t bytes)
{
    shexec_session *s = lib_session();
    if (shexec_session_set_max_tasks(s, (uint32_t)k) != SHEXEC_OK)
        die("shexec_session_set_max_tasks: %s", shexec_session_errmsg(s));
    shexec_task **t = calloc((size_t)k, sizeof *t);
    if (!t)
        die("out of memory");
    double t0 = now_s();
    for (int i = 0; i < k; i++) {
        shexec_run *r;
        if (shexec_run_new(&r, s, cmd) != SHEXEC_OK)
            die("shexec_run_new: %s", shexec_session_errmsg(s));
        if (shexec_run_start_task(&t[i], r) != SHEXEC_OK)
            die("shexec_run_start_task #%d: %s", i, shexec_session_errmsg(s));
    }
    for (;;) {
        int done = 0;
        for (int i = 0; i < k; i++)
            done += shexec_run_state(shexec_task_run(t[i])) > SHEXEC_STATE_RUNNING;
        if (done == k)
            break;
        if (shexec_session_wait(s, -1) < 0)
            die("shexec_session_wait: %s", shexec_session_errmsg(s));
    }
    double secs = now_s() - t0;
    for (int i = 0; i < k; i++) {
        shexec_run *r = shexec_task_run(t[i]);
        if (shexec_run_state(r) != SHEXEC_STATE_EXITED || shexec_run_exit_code(r) != 0)
            die("task #%d ended in state %d, exit %d", i, shexec_run_state(r),
                shexec_run_exit_code(r));
        uint64_t got = shexec_run_output_total(r, SHEXEC_STDOUT);
        if (got != bytes)
            die("task #%d output_total %llu, expected %llu", i, (unsigned long long)got,
                (unsigned long long)bytes);
        size_t kept;
        shexec_run_output(r, SHEXEC_STDOUT, &kept);
        if (kept > SHEXEC_DEFAULT_OUTPUT_LIMIT + 200)
            die("task #%d kept %zu bytes, more than the default limit", i, kept);
        shexec_task_free(t[i]);
    }
    free(t);
    shexec_session_free(s);
    return secs;
}

static double raw_conc(int k, const char *cmd, uint64_t bytes)
{
    static char buf[64 * 1024];
    struct pollfd *fds = calloc((size_t)k, sizeof *fds);
    pid_t *pid = calloc((size_t)k, sizeof *pid);
    uint64_t *got = calloc((size_t)k, sizeof *got);
    if (!fds || !pid || !got)
        die("out of memory");
    double t0 = now_s();
    for (int i = 0; i < k; i++) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0)
            die("pipe2: %s", strerror(errno));
        pid[i] = raw_spawn_sh(cmd, p[1]);
        close(p[1]);
        fcntl(p[0], F_SETFL, O_NONBLOCK);
        fds[i] = (struct pollfd){.fd = p[0], .events = POLLIN};
    }
    int open_fds = k;
    while (open_fds > 0) {
        if (poll(fds, (nfds_t)k, -1) < 0) {
            if (errno == EINTR)
                continue;
            die("poll: %s", strerror(errno));
        }
        for (int i = 0; i < k; i++) {
            if (fds[i].fd < 0 || !fds[i].revents)
                continue;
            /* drain while reads come back full: the writer is ahead */
            for (int round = 0; round < 16; round++) {
                ssize_t n = read(fds[i].fd, buf, sizeof buf);
                if (n > 0) {
                    got[i] += (uint64_t)n;
                    if (n < (ssize_t)sizeof buf)
                        break;
                } else if (n == 0) {
                    close(fds[i].fd);
                    fds[i].fd = -1;
                    open_fds--;
                    break;
                } else if (errno == EAGAIN || errno == EINTR) {
                    break;
                } else {
                    die("read: %s", strerror(errno));
                }
            }
        }
    }
    for (int i = 0; i < k; i++)
        raw_wait_ok(pid[i], cmd);
    double secs = now_s() - t0;
    for (int i = 0; i < k; i++)
        if (got[i] != bytes)
            die("raw reader got %llu bytes from command #%d, expected %llu",
                (unsigned long long)got[i], i, (unsigned long long)bytes);
    free(fds);
    free(pid);
    free(got);
    return secs;
}

static double xargs_conc(int k, uint64_t bytes)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "seq %d | xargs -P%d -I{} sh -c 'head -c %llu /dev/zero >/dev/null'",
             k, k, (unsigned long long)bytes);
    double t0 = now_s();
    raw_wait_ok(raw_spawn_sh(cmd, -1), cmd);
    return now_s() - t0;
}

static double peer_conc(peer_id p, int k, const char *cmd, uint64_t bytes)
{
    char ks[16];
    snprintf(ks, sizeof ks, "%d", k);
    const char *args[] = {"concurrency", ks, cmd, NULL};
    const char *res = peer_run(p, args);
    if (!res)
        return -1;
    double lo = kv_num(res, "min_bytes"), hi = kv_num(res, "max_bytes");
    if ((uint64_t)lo != bytes || (uint64_t)hi != bytes)
        die("%s peer read %.0f..%.0f bytes per command, expected %llu", peer_name(p), lo, hi,
            (unsigned long long)bytes);
    return kv_num(res, "seconds");
}

void sec_concurrency(void)
{
    const bench_sizes *z = &B.z;
    int k = z->conc_tasks;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "head -c %llu /dev/zero", (unsigned long long)z->conc_bytes);
    int rounds = z->conc_rounds;
    double raw[16], lib[16], xa[16], py[16], node[16];
    for (int r = 0; r < rounds; r++) {
        raw[r] = raw_conc(k, cmd, z->conc_bytes);
        lib[r] = lib_conc(k, cmd, z->conc_bytes);
        xa[r] = xargs_conc(k, z->conc_bytes);
        py[r] = peer_conc(PEER_PY, k, cmd, z->conc_bytes);
        node[r] = peer_conc(PEER_NODE, k, cmd, z->conc_bytes);
    }
    double m_raw = median(raw, rounds), m_lib = median(lib, rounds), m_xa = median(xa, rounds);
    char what[64];
    snprintf(what, sizeof what, "%d tasks x %llu B stdout at once", k,
             (unsigned long long)z->conc_bytes);
    bench_row *row = row_new("7", what, "s wall");
    cell(row, C_FLOOR, "%.3f", m_raw);
    cell(row, C_LIB, "%.3f", m_lib);
    cell_peer(row, PEER_PY, py, rounds, "%.3f");
    cell_peer(row, PEER_NODE, node, rounds, "%.3f");
    cell(row, C_OTHER, "xargs -P%d %.3f (lib x%.2f)", k, m_xa, paired_ratio(lib, xa, rounds));
    double ratio = paired_ratio(lib, raw, rounds);
    int ahead = (py[0] < 0 || m_lib < median(py, rounds)) &&
                (node[0] < 0 || m_lib < median(node, rounds));
    cell(row, C_RATIO, "%.3f", ratio);
    cell(row, C_TARGET, "<=%.2f, <peers", CONC_TARGET);
    cell(row, C_VERDICT, "%s", ratio <= CONC_TARGET && ahead ? "PASS" : "MISS");
    footnote("7: wall time, first spawn to last reap, median of %d rounds; lib ratio = lib time / "
             "floor's per round (one poll() loop over %d pipes); every command's byte count "
             "verified; PASS: ratio within the target and faster than every peer",
             rounds, k);
    footnote("7: lib = shexec_run_new/start_task x%d in one session, default output limit, "
             "shexec_session_wait; python = asyncio subprocesses, 64 KiB reads; node = spawn, "
             "Promise.all; xargs output goes to /dev/null",
             k);
}
