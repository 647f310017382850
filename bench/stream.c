/*
 * stream.c - sections 3 and 6: output moving from a command to the host.
 *
 *   3. throughput: `head -c 1073741824 /dev/zero` through stdout (3), through
 *      stderr (3c), and through stdout into a callback that copies every
 *      chunk (3d). The floor of each row is the best, per round, of three
 *      library-free readers: posix_spawn with the stream on a pipe and a
 *      blocking read() loop of 64 KiB, of 1 MiB, and of 1 MiB on a pipe
 *      grown to 1 MiB (F_SETPIPE_SZ); 3d's readers copy what they read the
 *      same way. splice() of a 1 MiB pipe into /dev/null, which moves no
 *      byte through user space, is the ceiling (row 3, "other").
 *      libshexec: the output callback counting bytes (3d: copying them),
 *      default truncation (30000 chars kept). Python: Popen + 64 KiB reads.
 *      Node: spawn and 'data' events. Plus the host's peak RSS growth
 *      (VmHWM) over the runs (3b).
 *   6. latency: the tsline helper writes lines 1 ms apart, each stamped
 *      with CLOCK_MONOTONIC just before its write(); the reader stamps it
 *      again when it sees the line. Same clock in both processes, so the
 *      difference is the write-to-callback latency.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

#define TPUT_TARGET 0.90          /* lib MB/s / best raw reader's MB/s, at least */
#define RSS_TARGET_KIB (8 * 1024) /* VmHWM growth while streaming, below */

/* ------------------------------------------------------------------------
 * 3. throughput
 * ------------------------------------------------------------------------ */

#define MIB (1u << 20)

/* The raw readers of the floor: read size, and the pipe's size (0: the
 * kernel's default, 64 KiB on Linux). */
typedef struct {
    size_t read_size;
    int pipe_size;
    const char *name;
} raw_reader;

static const raw_reader READERS[] = {
    {64 * 1024, 0, "64K reads"},
    {MIB, 0, "1M reads"},
    {MIB, (int)MIB, "1M pipe+1M reads"},
};
#define NREADERS ((int)(sizeof READERS / sizeof READERS[0]))

/* What a copying reader copies into: one MiB, overwritten in turn. On the
 * heap behind a global pointer, so the compiler cannot drop the copies. */
unsigned char *bench_copy_sink;

static void copy_out(const char *data, size_t len)
{
    while (len > 0) {
        size_t n = len < MIB ? len : MIB;
        memcpy(bench_copy_sink, data, n);
        data += n;
        len -= n;
    }
}

/* One throughput case: which stream of the command carries the bytes, and
 * whether the reader copies them. */
typedef struct {
    int stream; /* SHEXEC_STDOUT / SHEXEC_STDERR */
    int copy;
} tput_case;

static pid_t spawn_on(const char *cmd, int stream, int fd)
{
    char *argv[] = {(char *)"sh", (char *)"-c", (char *)cmd, NULL};
    return stream == SHEXEC_STDERR ? raw_spawn(BENCH_SHELL, argv, -1, fd)
                                   : raw_spawn(BENCH_SHELL, argv, fd, -1);
}

/* returns MB/s (10^6 bytes per second, spawn to reap) */
static double raw_stream(const char *cmd, uint64_t expect, const tput_case *tc,
                         const raw_reader *rd)
{
    static char *buf;
    if (!buf && !(buf = malloc(MIB)))
        die("out of memory");
    double t0 = now_s();
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        die("pipe2: %s", strerror(errno));
    if (rd->pipe_size > 0 && fcntl(p[0], F_SETPIPE_SZ, rd->pipe_size) < 0)
        die("F_SETPIPE_SZ %d: %s", rd->pipe_size, strerror(errno));
    pid_t pid = spawn_on(cmd, tc->stream, p[1]);
    close(p[1]);
    uint64_t total = 0;
    for (;;) {
        ssize_t n = read(p[0], buf, rd->read_size);
        if (n > 0) {
            total += (uint64_t)n;
            if (tc->copy)
                copy_out(buf, (size_t)n);
        } else if (n == 0) {
            break;
        } else if (errno != EINTR) {
            die("read: %s", strerror(errno));
        }
    }
    close(p[0]);
    raw_wait_ok(pid, cmd);
    double t = now_s() - t0;
    if (total != expect)
        die("raw read %llu bytes of `%s`, expected %llu", (unsigned long long)total, cmd,
            (unsigned long long)expect);
    return (double)total / t / 1e6;
}

/* The ceiling: splice() from a 1 MiB pipe into /dev/null, no user-space copy. */
static double splice_stream(const char *cmd, uint64_t expect)
{
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0)
        die("/dev/null: %s", strerror(errno));
    double t0 = now_s();
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        die("pipe2: %s", strerror(errno));
    if (fcntl(p[0], F_SETPIPE_SZ, (int)MIB) < 0)
        die("F_SETPIPE_SZ: %s", strerror(errno));
    pid_t pid = raw_spawn_sh(cmd, p[1]);
    close(p[1]);
    uint64_t total = 0;
    for (;;) {
        ssize_t n = splice(p[0], NULL, null, NULL, MIB, SPLICE_F_MOVE);
        if (n > 0)
            total += (uint64_t)n;
        else if (n == 0)
            break;
        else if (errno != EINTR)
            die("splice: %s", strerror(errno));
    }
    close(p[0]);
    raw_wait_ok(pid, cmd);
    double t = now_s() - t0;
    close(null);
    if (total != expect)
        die("splice moved %llu bytes of `%s`, expected %llu", (unsigned long long)total, cmd,
            (unsigned long long)expect);
    return (double)total / t / 1e6;
}

typedef struct {
    int stream;
    int copy;
    uint64_t total;
} lib_counter;

static void count_fn(void *user, int stream, const char *data, size_t len)
{
    lib_counter *c = user;
    if (stream != c->stream)
        return;
    c->total += len;
    if (c->copy)
        copy_out(data, len);
}

static double lib_stream(shexec_session *s, const char *cmd, uint64_t expect, const tput_case *tc)
{
    lib_counter cnt = {tc->stream, tc->copy, 0};
    double t0 = now_s();
    shexec_run *r;
    int rc = shexec_run_new(&r, s, cmd);
    if (rc != SHEXEC_OK)
        die("shexec_run_new: %s", shexec_strerror(rc));
    if (shexec_run_set_output_fn(r, count_fn, &cnt) != SHEXEC_OK ||
        shexec_run_set_timeout_ms(r, SHEXEC_DEFAULT_MAX_TIMEOUT_MS) != SHEXEC_OK)
        die("configuring the stream run: %s", shexec_session_errmsg(s));
    if (shexec_run_exec(r) != SHEXEC_OK)
        die("shexec_run_exec: %s", shexec_session_errmsg(s));
    if (shexec_run_state(r) != SHEXEC_STATE_EXITED || shexec_run_exit_code(r) != 0)
        die("library `%s` did not exit 0", cmd);
    if (shexec_run_output_total(r, tc->stream) != cnt.total)
        die("shexec_run_output_total %llu differs from the %llu bytes the callback saw",
            (unsigned long long)shexec_run_output_total(r, tc->stream),
            (unsigned long long)cnt.total);
    size_t kept;
    shexec_run_output(r, tc->stream, &kept);
    if (!shexec_run_truncated(r, tc->stream) || kept > SHEXEC_DEFAULT_OUTPUT_LIMIT + 200)
        die("captured output (%zu bytes) is not bounded by the default limit", kept);
    shexec_run_free(r);
    double t = now_s() - t0;
    if (cnt.total != expect)
        die("library callback saw %llu bytes of `%s`, expected %llu",
            (unsigned long long)cnt.total, cmd, (unsigned long long)expect);
    return (double)cnt.total / t / 1e6;
}

/* peer MB/s, its RSS growth in KiB through *rss; -1 when absent */
static double peer_stream(peer_id p, const char *cmd, int stream, uint64_t expect, double *rss)
{
    const char *args[] = {"stream", cmd, stream == SHEXEC_STDERR ? "stderr" : "stdout", NULL};
    const char *res = peer_run(p, args);
    if (!res)
        return -1;
    double bytes = kv_num(res, "bytes");
    if ((uint64_t)bytes != expect)
        die("%s peer read %.0f bytes of `%s`, expected %llu", peer_name(p), bytes, cmd,
            (unsigned long long)expect);
    double rg = kv_num(res, "rss_growth_kib");
    if (rg > *rss)
        *rss = rg;
    return bytes / kv_num(res, "seconds") / 1e6;
}

/* The samples of one throughput row over the rounds. */
typedef struct {
    const char *id, *what;
    tput_case tc;
    int peers;                    /* run the peers for this row */
    double reader[NREADERS][16];  /* each raw reader */
    double floor[16];             /* the best raw reader of the round */
    double lib[16], py[16], node[16];
} tput_row;

static void tput_round(tput_row *t, int k, const char *cmd, uint64_t bytes, double *rss_py,
                       double *rss_node)
{
    t->floor[k] = 0;
    for (int i = 0; i < NREADERS; i++) {
        t->reader[i][k] = raw_stream(cmd, bytes, &t->tc, &READERS[i]);
        if (t->reader[i][k] > t->floor[k])
            t->floor[k] = t->reader[i][k];
    }
    if (t->peers) {
        t->py[k] = peer_stream(PEER_PY, cmd, t->tc.stream, bytes, rss_py);
        t->node[k] = peer_stream(PEER_NODE, cmd, t->tc.stream, bytes, rss_node);
    }
}

/* The row: ratio against the floor, and the verdict: at least TPUT_TARGET
 * of the floor and at least every peer present. */
static bench_row *tput_print(const tput_row *t, const double *py, const double *node, int rounds)
{
    double m_lib = median(t->lib, rounds);
    double ratio = paired_ratio(t->lib, t->floor, rounds);
    int ahead = (py[0] < 0 || m_lib >= median(py, rounds)) &&
                (node[0] < 0 || m_lib >= median(node, rounds));
    bench_row *r = row_new(t->id, t->what, "MB/s");
    cell(r, C_FLOOR, "%.0f", median(t->floor, rounds));
    cell(r, C_LIB, "%.0f", m_lib);
    cell_peer(r, PEER_PY, py, rounds, "%.0f");
    cell_peer(r, PEER_NODE, node, rounds, "%.0f");
    cell(r, C_RATIO, "%.3f", ratio);
    cell(r, C_TARGET, ">=%.2f, >=peers", TPUT_TARGET);
    cell(r, C_VERDICT, "%s", ratio >= TPUT_TARGET && ahead ? "PASS" : "MISS");
    return r;
}

/* ---- 3r, 3s: output for models: redaction and spill ---- */

#define REDACT_SECRETS 1000

/* MB/s of `cat file` through s, every byte seen by the callback. */
static double text_stream(shexec_session *s, const char *cmd, uint64_t expect_min)
{
    lib_counter cnt = {SHEXEC_STDOUT, 0, 0};
    double t0 = now_s();
    shexec_run *r;
    if (shexec_run_new(&r, s, cmd) != SHEXEC_OK ||
        shexec_run_set_output_fn(r, count_fn, &cnt) != SHEXEC_OK ||
        shexec_run_set_timeout_ms(r, SHEXEC_DEFAULT_MAX_TIMEOUT_MS) != SHEXEC_OK ||
        shexec_run_exec(r) != SHEXEC_OK)
        die("text stream run: %s", shexec_session_errmsg(s));
    if (shexec_run_state(r) != SHEXEC_STATE_EXITED || shexec_run_exit_code(r) != 0)
        die("library `%s` did not exit 0", cmd);
    shexec_run_free(r);
    double t = now_s() - t0;
    if (cnt.total < expect_min) /* replacements shorten it a little */
        die("the callback saw %llu bytes of `%s`, expected about %llu",
            (unsigned long long)cnt.total, cmd, (unsigned long long)expect_min);
    return (double)expect_min / t / 1e6;
}

/* A text file of `bytes` bytes: base64 lines of random data, with one of
 * the secrets (secret(k)) every 100 lines. */
static void make_text(const char *path, uint64_t bytes)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die("%s: %s", path, strerror(errno));
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint64_t x = 0x9E3779B97F4A7C15ull, written = 0;
    char line[80];
    for (uint64_t n = 0; written < bytes; n++) {
        size_t len;
        if (n % 100 == 99) {
            len = (size_t)snprintf(line, sizeof line, "token=sekret-%04llu-abcdefgh\n",
                                   (unsigned long long)(n / 100 % REDACT_SECRETS));
        } else {
            for (len = 0; len < 76; len++) {
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                line[len] = b64[(x * 0x2545F4914F6CDD1Dull) >> 58];
            }
            line[len++] = '\n';
        }
        fwrite(line, 1, len, f);
        written += len;
    }
    fclose(f);
}

/* A row of MB/s against the floor's, paired per round; target: the lowest
 * ratio that passes. */
static bench_row *text_row(const char *id, const char *what, const double *lib,
                           const double *floor, int rounds, double target)
{
    bench_row *r = row_new(id, what, "MB/s");
    double ratio = paired_ratio(lib, floor, rounds);
    cell(r, C_FLOOR, "%.0f", median(floor, rounds));
    cell(r, C_LIB, "%.0f", median(lib, rounds));
    cell(r, C_RATIO, "%.3f", ratio);
    cell(r, C_TARGET, ">=%.2f", target);
    cell(r, C_VERDICT, "%s", ratio >= target ? "PASS" : "MISS");
    return r;
}

static void sec_output_for_models(const bench_sizes *z)
{
    uint64_t big = z->quick ? (16ull << 20) : (100ull * 1000 * 1000);
    char file[512], small_file[512], cmd[600], small_cmd[600], spill[512];
    strf(file, sizeof file, "%s/text.txt", B.tmpdir);
    strf(small_file, sizeof small_file, "%s/text-quarter.txt", B.tmpdir);
    strf(spill, sizeof spill, "%s/spill", B.tmpdir);
    make_text(file, big);
    make_text(small_file, big / 4);
    if (mkdir(spill, 0700) != 0)
        die("mkdir %s: %s", spill, strerror(errno));
    strf(cmd, sizeof cmd, "cat '%s'", file);
    strf(small_cmd, sizeof small_cmd, "cat '%s'", small_file);

    shexec_session *off = lib_session(), *red = lib_session(), *spl = lib_session(),
                   *ht = lib_session();
    if (shexec_session_set_output_limit(ht, SHEXEC_DEFAULT_OUTPUT_LIMIT, SHEXEC_UNIT_CHARS,
                                        SHEXEC_KEEP_HEAD_TAIL) != SHEXEC_OK)
        die("shexec_session_set_output_limit: %s", shexec_session_errmsg(ht));
    for (int k = 0; k < REDACT_SECRETS; k++) {
        char name[32], value[40];
        snprintf(name, sizeof name, "SECRET_%d", k);
        int len = snprintf(value, sizeof value, "sekret-%04d-abcdefgh", k);
        if (shexec_session_redact_value(red, name, value, (size_t)len) != SHEXEC_OK)
            die("shexec_session_redact_value: %s", shexec_session_errmsg(red));
    }
    if (shexec_session_set_spill_dir(spl, spill, 256ull << 20, 1ull << 30, 0) != SHEXEC_OK)
        die("shexec_session_set_spill_dir: %s", shexec_session_errmsg(spl));
    int rounds = z->tput_rounds;
    double v_off[16], v_red[16], v_spl[16], v_red_small[16], v_off_small[16], v_ht[16];
    for (int k = 0; k < rounds; k++) {
        v_off[k] = text_stream(off, cmd, big);
        v_ht[k] = text_stream(ht, cmd, big);
        v_red[k] = text_stream(red, cmd, big - big / 100);
        v_spl[k] = text_stream(spl, cmd, big);
        v_off_small[k] = text_stream(off, small_cmd, big / 4);
        v_red_small[k] = text_stream(red, small_cmd, big / 4 - big / 400);
    }
    shexec_session_free(off);
    shexec_session_free(red);
    shexec_session_free(spl);
    shexec_session_free(ht);

    char what[96];
    snprintf(what, sizeof what, "redaction, %d secrets, %llu MB of text", REDACT_SECRETS,
             (unsigned long long)(big / 1000000));
    bench_row *r = text_row("3r", what, v_red, v_off, rounds, 0.5);
    cell(r, C_OTHER, "1/4 size %.0f", median(v_red_small, rounds));
    snprintf(what, sizeof what, "spill on, %llu MB of text", (unsigned long long)(big / 1000000));
    text_row("3s", what, v_spl, v_off, rounds, 0.5);
    snprintf(what, sizeof what, "head and tail kept, %llu MB of text",
             (unsigned long long)(big / 1000000));
    text_row("3t", what, v_ht, v_off, rounds, 0.9);
    footnote("3r/3s/3t: floor = the same `cat` of base64 text through the library with nothing "
             "hidden and no spill (default limit); 3r lib = %d literal secrets, one occurring "
             "every 100 lines; other = 3r on a quarter of the text: the same MB/s means a cost "
             "linear in the output (the floor there: %.0f MB/s)",
             REDACT_SECRETS, median(v_off_small, rounds));
    footnote("3s: lib = the whole stream also written to a spill file in /tmp (the capture "
             "keeps 30000 characters)");
    footnote("3t: lib = the first and the last 15000 characters kept "
             "(SHEXEC_KEEP_HEAD_TAIL) instead of the first 30000");
}

void sec_throughput(void)
{
    const bench_sizes *z = &B.z;
    char cmd[128], cmd_err[160];
    snprintf(cmd, sizeof cmd, "head -c %llu /dev/zero", (unsigned long long)z->tput_bytes);
    strf(cmd_err, sizeof cmd_err, "%s >&2", cmd);
    if (!bench_copy_sink && !(bench_copy_sink = malloc(MIB)))
        die("out of memory");
    memset(bench_copy_sink, 0, MIB);
    shexec_session *s = lib_session();
    if (shexec_session_set_output_limit(s, SHEXEC_DEFAULT_OUTPUT_LIMIT, SHEXEC_UNIT_CHARS,
                                        SHEXEC_KEEP_HEAD) != SHEXEC_OK)
        die("shexec_session_set_output_limit: %s", shexec_session_errmsg(s));
    lib_run_ok(s, "true"); /* first-run paths out of the way before VmHWM is taken */

    char what[3][64];
    unsigned long long mib = (unsigned long long)(z->tput_bytes >> 20);
    snprintf(what[0], sizeof what[0], "stdout throughput, %llu MiB", mib);
    snprintf(what[1], sizeof what[1], "stderr throughput, %llu MiB", mib);
    snprintf(what[2], sizeof what[2], "stdout, copying callback, %llu MiB", mib);
    static tput_row rows[3];
    rows[0] = (tput_row){.id = "3", .what = what[0], .tc = {SHEXEC_STDOUT, 0}, .peers = 1};
    rows[1] = (tput_row){.id = "3c", .what = what[1], .tc = {SHEXEC_STDERR, 0}, .peers = 1};
    rows[2] = (tput_row){.id = "3d", .what = what[2], .tc = {SHEXEC_STDOUT, 1}, .peers = 0};

    int rounds = z->tput_rounds;
    double ceiling[16];
    double rss_py = -1, rss_node = -1;
    long hwm_before = -1;
    for (int k = 0; k < rounds; k++) {
        for (int i = 0; i < 3; i++) {
            tput_row *t = &rows[i];
            const char *c = t->tc.stream == SHEXEC_STDERR ? cmd_err : cmd;
            tput_round(t, k, c, z->tput_bytes, &rss_py, &rss_node);
            if (i == 0)
                ceiling[k] = splice_stream(c, z->tput_bytes);
            if (k == 0 && i == 0)
                hwm_before = vm_hwm_kib();
            t->lib[k] = lib_stream(s, c, z->tput_bytes, &t->tc);
        }
    }
    long hwm_after = vm_hwm_kib();
    shexec_session_free(s);

    bench_row *r = tput_print(&rows[0], rows[0].py, rows[0].node, rounds);
    cell(r, C_OTHER, "splice %.0f", median(ceiling, rounds));

    r = row_new("3b", "host peak RSS growth (VmHWM)", "KiB");
    long grow = hwm_after - hwm_before;
    if (hwm_before >= 0 && hwm_after >= 0) {
        cell(r, C_LIB, "+%ld", grow);
        cell(r, C_TARGET, "<%d", RSS_TARGET_KIB);
        cell(r, C_VERDICT, "%s", grow < RSS_TARGET_KIB ? "PASS" : "MISS");
    } else {
        cell(r, C_LIB, "n/a");
    }
    cell_peer(r, PEER_PY, &rss_py, 1, "+%.0f");
    cell_peer(r, PEER_NODE, &rss_node, 1, "+%.0f");

    tput_print(&rows[1], rows[1].py, rows[1].node, rounds);
    /* the peers' chunks are fresh objects (bytes, Buffer) already: row 3's
     * runs are their copying runs */
    tput_print(&rows[2], rows[0].py, rows[0].node, rounds);

    sec_output_for_models(z);
    footnote("3: MB/s = 10^6 bytes/s spawn to reap, every byte count verified; median of %d "
             "interleaved rounds (spread floor %.0f%%, lib %.0f%%); lib ratio = median of "
             "per-round lib/floor; lib keeps the default 30000 chars",
             rounds, spread_pct(rows[0].floor, rounds), spread_pct(rows[0].lib, rounds));
    for (int i = 0; i < 3; i++)
        footnote("%s: floor = best per round of blocking read() loops (median MB/s): %s %.0f, "
                 "%s %.0f, %s %.0f%s",
                 rows[i].id, READERS[0].name, median(rows[i].reader[0], rounds), READERS[1].name,
                 median(rows[i].reader[1], rounds), READERS[2].name,
                 median(rows[i].reader[2], rounds),
                 i == 0 ? "; other = splice() of a 1M pipe to /dev/null, the ceiling" : "");
    footnote("3: python = Popen(stdout=PIPE, bufsize=0) + stdout.read(65536) to EOF; node = "
             "spawn + 'data' events counting bytes; 3c: the same on stderr (`... >&2`); 3b "
             "peers: max ru_maxrss growth over a run");
    footnote("3d: the callback and the floor's readers memcpy every chunk into a 1 MiB buffer; "
             "peers as 3 (their chunks are fresh bytes/Buffer objects: copies already)");
    rule();
}

/* ------------------------------------------------------------------------
 * 6. streaming latency
 * ------------------------------------------------------------------------ */

typedef struct {
    char part[128];
    size_t plen;
    double *lat_us;
    int n, cap;
} lat_parser;

/* Complete lines of `data`, each "SEQ STAMP_NS\n", seen at time t. */
static void lat_feed(lat_parser *lp, const char *data, size_t len, int64_t t)
{
    for (size_t i = 0; i < len; i++) {
        char c = data[i];
        if (c != '\n') {
            if (lp->plen + 1 >= sizeof lp->part)
                die("latency line too long");
            lp->part[lp->plen++] = c;
            continue;
        }
        lp->part[lp->plen] = '\0';
        lp->plen = 0;
        const char *sp = strchr(lp->part, ' ');
        if (!sp)
            die("malformed latency line \"%s\"", lp->part);
        long long stamp = strtoll(sp + 1, NULL, 10);
        if (lp->n == lp->cap)
            die("more latency lines than written");
        lp->lat_us[lp->n++] = (double)(t - stamp) / 1e3;
    }
}

static void lat_fn(void *user, int stream, const char *data, size_t len)
{
    if (stream == SHEXEC_STDOUT)
        lat_feed(user, data, len, now_ns());
}

static void lat_summary(lat_parser *lp, double *p50, double *p99)
{
    if (lp->n != lp->cap)
        die("saw %d timestamped lines, expected %d", lp->n, lp->cap);
    *p50 = percentile(lp->lat_us, lp->n, 50);
    *p99 = percentile(lp->lat_us, lp->n, 99);
}

static void raw_latency(const char *cmd, lat_parser *lp)
{
    char buf[64 * 1024];
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        die("pipe2: %s", strerror(errno));
    pid_t pid = raw_spawn_sh(cmd, p[1]);
    close(p[1]);
    for (;;) {
        ssize_t n = read(p[0], buf, sizeof buf);
        if (n > 0)
            lat_feed(lp, buf, (size_t)n, now_ns());
        else if (n == 0)
            break;
        else if (errno != EINTR)
            die("read: %s", strerror(errno));
    }
    close(p[0]);
    raw_wait_ok(pid, cmd);
}

static void lib_latency(shexec_session *s, const char *cmd, lat_parser *lp)
{
    shexec_run *r;
    if (shexec_run_new(&r, s, cmd) != SHEXEC_OK ||
        shexec_run_set_output_fn(r, lat_fn, lp) != SHEXEC_OK)
        die("configuring the latency run: %s", shexec_session_errmsg(s));
    if (shexec_run_exec(r) != SHEXEC_OK)
        die("shexec_run_exec: %s", shexec_session_errmsg(s));
    if (shexec_run_state(r) != SHEXEC_STATE_EXITED || shexec_run_exit_code(r) != 0)
        die("library `%s` did not exit 0", cmd);
    shexec_run_free(r);
}

void sec_latency(void)
{
    const bench_sizes *z = &B.z;
    char cmd[4300], nlines[32];
    strf(cmd, sizeof cmd, "'%s' %d %d", B.tsline, z->lat_lines, z->lat_spacing_us);
    snprintf(nlines, sizeof nlines, "%d", z->lat_lines);
    shexec_session *s = lib_session();
    double *buf = malloc((size_t)z->lat_lines * sizeof *buf);
    if (!buf)
        die("out of memory");

    int rounds = z->lat_rounds;
    enum { RAW, LIB, PY, NODE, NV };
    double p50[NV][16], p99[NV][16];
    for (int k = 0; k < rounds; k++) {
        lat_parser lp = {.lat_us = buf, .cap = z->lat_lines};
        raw_latency(cmd, &lp);
        lat_summary(&lp, &p50[RAW][k], &p99[RAW][k]);
        lp = (lat_parser){.lat_us = buf, .cap = z->lat_lines};
        lib_latency(s, cmd, &lp);
        lat_summary(&lp, &p50[LIB][k], &p99[LIB][k]);
        for (int p = 0; p < NPEERS; p++) {
            const char *args[] = {"latency", cmd, nlines, NULL};
            const char *res = peer_run((peer_id)p, args);
            p50[PY + p][k] = res ? kv_num(res, "p50_us") : -1;
            p99[PY + p][k] = res ? kv_num(res, "p99_us") : -1;
        }
    }
    free(buf);
    shexec_session_free(s);

    for (int which = 0; which < 2; which++) {
        double(*v)[16] = which ? p99 : p50;
        bench_row *r = row_new(which ? "6b" : "6", which ? "latency write->callback, p99"
                                                         : "latency write->callback, p50",
                               "us");
        cell(r, C_FLOOR, "%.0f", median(v[RAW], rounds));
        cell(r, C_LIB, "%.0f", median(v[LIB], rounds));
        for (int p = 0; p < NPEERS; p++)
            cell_peer(r, (peer_id)p, v[PY + p], rounds, "%.0f");
        cell(r, C_RATIO, "%+.0f us", median(v[LIB], rounds) - median(v[RAW], rounds));
        cell(r, C_TARGET, "report");
    }
    footnote("6: %d lines %d us apart (bench/helpers/tsline.c), latency = reader's CLOCK_MONOTONIC "
             "- writer's; per-sample percentile, median of %d rounds; lib ratio = lib - floor",
             z->lat_lines, z->lat_spacing_us, rounds);
    footnote("6: floor = blocking read() on the pipe; python = `for line in proc.stdout`; node = "
             "'data' events split into lines");
    rule();
}
