/*
 * common.c - the benchmark's shared machinery: clocks and statistics, the
 * raw posix_spawn floor, running the Python/Node peer scripts and reading
 * their result lines, and the final table.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

bench_env B;

/* ------------------------------------------------------------------------
 * time, statistics
 * ------------------------------------------------------------------------ */

int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double now_s(void)
{
    return (double)now_ns() / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(const double *v, int n)
{
    if (n <= 0)
        return NAN;
    double *tmp = malloc((size_t)n * sizeof *tmp);
    if (!tmp)
        die("out of memory");
    memcpy(tmp, v, (size_t)n * sizeof *v);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    double m = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
    free(tmp);
    return m;
}

/* nearest-rank percentile */
double percentile(double *v, int n, double p)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int rank = (int)ceil(p / 100.0 * n);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return v[rank - 1];
}

double maxof(const double *v, int n)
{
    double hi = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] > hi)
            hi = v[i];
    return hi;
}

double minof(const double *v, int n)
{
    double lo = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < lo)
            lo = v[i];
    return lo;
}

double spread_pct(const double *v, int n)
{
    return 100.0 * (maxof(v, n) - minof(v, n)) / median(v, n);
}

double paired_ratio(const double *num, const double *den, int n)
{
    double r[64];
    if (n > 64)
        die("too many rounds");
    for (int k = 0; k < n; k++)
        r[k] = num[k] / den[k];
    return median(r, n);
}

void die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "bench: BROKEN: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

void strf(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap)
        die("string too long for its buffer: %.60s...", out);
}

/* ------------------------------------------------------------------------
 * process facts
 * ------------------------------------------------------------------------ */

long vm_hwm_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kib = strtol(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    return kib;
}

long thread_nvcsw(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        die("getrusage(RUSAGE_THREAD): %s", strerror(errno));
    return ru.ru_nvcsw;
}

/* ------------------------------------------------------------------------
 * raw spawning
 * ------------------------------------------------------------------------ */

/* own: 0 the caller's group, 1 a process group of its own, 2 a session
 * of its own (and so a group, and no controlling terminal) */
static pid_t spawn_as(const char *path, char *const argv[], int out_fd, int err_fd, int own)
{
    posix_spawn_file_actions_t fa, *fap = NULL;
    posix_spawnattr_t attr, *attrp = NULL;
    if (own) {
        posix_spawnattr_init(&attr);
        posix_spawnattr_setflags(&attr, own == 2 ? POSIX_SPAWN_SETSID : POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attr, 0);
        attrp = &attr;
    }
    if (out_fd >= 0 || err_fd >= 0) {
        posix_spawn_file_actions_init(&fa);
        if (out_fd >= 0)
            posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
        if (err_fd >= 0)
            posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
        fap = &fa;
    }
    pid_t pid;
    int rc = posix_spawn(&pid, path, fap, attrp, argv, environ);
    if (fap)
        posix_spawn_file_actions_destroy(fap);
    if (attrp)
        posix_spawnattr_destroy(attrp);
    if (rc != 0)
        die("posix_spawn %s: %s", path, strerror(rc));
    return pid;
}

pid_t raw_spawn(const char *path, char *const argv[], int out_fd, int err_fd)
{
    return spawn_as(path, argv, out_fd, err_fd, 0);
}

pid_t raw_spawn_own_group(const char *path, char *const argv[])
{
    return spawn_as(path, argv, -1, -1, 1);
}

pid_t raw_spawn_own_session(const char *path, char *const argv[], int out_fd)
{
    return spawn_as(path, argv, out_fd, -1, 2);
}

pid_t raw_spawn_own_group_io(const char *path, char *const argv[], int out_fd, int err_fd)
{
    return spawn_as(path, argv, out_fd, err_fd, 1);
}

pid_t raw_spawn_sh(const char *cmd, int out_fd)
{
    char *argv[] = {(char *)"sh", (char *)"-c", (char *)cmd, NULL};
    return raw_spawn(BENCH_SHELL, argv, out_fd, -1);
}

int raw_reap(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            die("waitpid: %s", strerror(errno));
    return status;
}

void raw_wait_ok(pid_t pid, const char *what)
{
    int status = raw_reap(pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("%s did not exit 0 (status 0x%x)", what, status);
}

char *raw_capture(const char *path, char *const argv[], size_t *len, int *status)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        die("pipe2: %s", strerror(errno));
    pid_t pid = raw_spawn(path, argv, p[1], -1);
    close(p[1]);
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf)
            die("out of memory");
        if (n + 1 >= cap)
            buf = realloc(buf, cap *= 2);
        if (!buf)
            die("out of memory");
        ssize_t r = read(p[0], buf + n, cap - n - 1);
        if (r > 0)
            n += (size_t)r;
        else if (r == 0)
            break;
        else if (errno != EINTR)
            die("read: %s", strerror(errno));
    }
    close(p[0]);
    buf[n] = '\0';
    *status = raw_reap(pid);
    if (len)
        *len = n;
    return buf;
}

/* ------------------------------------------------------------------------
 * peers
 * ------------------------------------------------------------------------ */

int peer_present(peer_id p)
{
    return B.peer_exe[p][0] != '\0';
}

const char *peer_name(peer_id p)
{
    return p == PEER_PY ? "python" : "node";
}

/* Run argv (argv[0] the executable) and return its result line: the last
 * line that starts with "RESULT ", without it. A failed run or no result
 * line means a broken peer: die, showing what it printed. */
static const char *result_of(char **argv, const char *who, const char *test)
{
    static char result[4096];
    int status;
    char *out = raw_capture(argv[0], argv, NULL, &status);
    char *res = NULL;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
        if (strncmp(line, "RESULT ", 7) == 0)
            res = line + 7;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !res) {
        fprintf(stderr, "bench: %s peer output:\n%s\n", who, out);
        die("%s peer `%s` failed (status 0x%x)", who, test, status);
    }
    snprintf(result, sizeof result, "%s", res);
    free(out);
    return result;
}

const char *peer_run(peer_id p, const char *const *args)
{
    if (!peer_present(p))
        return NULL;
    char *argv[32];
    int n = 0;
    argv[n++] = B.peer_exe[p];
    argv[n++] = B.peer_script[p];
    for (; *args && n < 31; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    return result_of(argv, peer_name(p), argv[2]);
}

int bin_present(bin_id b)
{
    return B.bin_exe[b][0] != '\0';
}

const char *bin_name(bin_id b)
{
    return b == BIN_RUST ? "rust" : "go";
}

const char *bin_run(bin_id b, const char *const *args)
{
    if (!bin_present(b))
        return NULL;
    char *argv[32];
    int n = 0;
    argv[n++] = B.bin_exe[b];
    for (; *args && n < 31; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    return result_of(argv, bin_name(b), argv[1]);
}

double kv_num(const char *line, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = line; (p = strstr(p, key)); p++) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            char *end;
            double v = strtod(p + kl + 1, &end);
            if (end != p + kl + 1)
                return v;
        }
    }
    die("result line has no %s: %s", key, line);
}

/* ------------------------------------------------------------------------
 * the table
 * ------------------------------------------------------------------------ */

#define MAX_ROWS 48
#define CELL_MAX 48

struct bench_row {
    char id[8], what[64], unit[16];
    char cell[NCELLS][CELL_MAX];
    int blank; /* a separator, not a row */
};

static bench_row rows[MAX_ROWS];
static int nrows;
static char notes[32][512];
static int nnotes;

bench_row *row_new(const char *id, const char *what, const char *unit)
{
    if (nrows == MAX_ROWS)
        die("too many table rows");
    bench_row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "%s", id);
    snprintf(r->what, sizeof r->what, "%s", what);
    snprintf(r->unit, sizeof r->unit, "%s", unit);
    for (int c = 0; c < NCELLS; c++)
        snprintf(r->cell[c], CELL_MAX, "-");
    return r;
}

void rule(void)
{
    if (nrows == MAX_ROWS)
        die("too many table rows");
    memset(&rows[nrows], 0, sizeof rows[nrows]);
    rows[nrows++].blank = 1;
}

void cell(bench_row *r, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->cell[col], CELL_MAX, fmt, ap);
    va_end(ap);
}

void cell_peer_skipped(bench_row *r, peer_id p)
{
    cell(r, p == PEER_PY ? C_PY : C_NODE, "skipped");
}

void cell_peer(bench_row *r, peer_id p, const double *samples, int rounds, const char *fmt)
{
    if (samples[0] < 0)
        cell_peer_skipped(r, p);
    else
        cell(r, p == PEER_PY ? C_PY : C_NODE, fmt, median(samples, rounds));
}

void footnote(const char *fmt, ...)
{
    if (nnotes == (int)(sizeof notes / sizeof notes[0]))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes[nnotes++], sizeof notes[0], fmt, ap);
    va_end(ap);
}

void table_print(void)
{
    while (nrows > 0 && rows[nrows - 1].blank)
        nrows--;
    static const char *const head[3 + NCELLS] = {
        "#", "measurement", "unit", "floor(C)", "libshexec", "python", "node", "other",
        "lib ratio", "target", "verdict"};
    size_t w[3 + NCELLS];
    for (int c = 0; c < 3 + NCELLS; c++)
        w[c] = strlen(head[c]);
    for (int i = 0; i < nrows; i++) {
        const bench_row *r = &rows[i];
        if (r->blank)
            continue;
        const char *f[3] = {r->id, r->what, r->unit};
        for (int c = 0; c < 3; c++)
            if (strlen(f[c]) > w[c])
                w[c] = strlen(f[c]);
        for (int c = 0; c < NCELLS; c++)
            if (strlen(r->cell[c]) > w[3 + c])
                w[3 + c] = strlen(r->cell[c]);
    }
    size_t total = 0;
    for (int c = 0; c < 3 + NCELLS; c++)
        total += w[c] + 2;
    /* text columns left-aligned, figures right-aligned */
    for (int c = 0; c < 3 + NCELLS; c++)
        printf(c < 3 || c >= 3 + C_TARGET ? "%-*s  " : "%*s  ", (int)w[c], head[c]);
    printf("\n");
    for (size_t i = 0; i + 2 < total; i++)
        putchar('-');
    printf("\n");
    for (int i = 0; i < nrows; i++) {
        const bench_row *r = &rows[i];
        if (r->blank) {
            printf("\n");
            continue;
        }
        const char *f[3] = {r->id, r->what, r->unit};
        for (int c = 0; c < 3; c++)
            printf("%-*s  ", (int)w[c], f[c]);
        for (int c = 0; c < NCELLS; c++)
            printf(c >= C_TARGET ? "%-*s  " : "%*s  ", (int)w[3 + c], r->cell[c]);
        printf("\n");
    }
    if (nnotes)
        printf("\n");
    for (int i = 0; i < nnotes; i++)
        printf("%s\n", notes[i]);
}

/* ------------------------------------------------------------------------
 * library helpers
 * ------------------------------------------------------------------------ */

shexec_session *lib_session(void)
{
    shexec_session *s;
    int rc = shexec_session_new(&s);
    if (rc != SHEXEC_OK)
        die("shexec_session_new: %s", shexec_strerror(rc));
    const char *const shell[] = {BENCH_SHELL, NULL};
    if (shexec_session_set_shell(s, shell, SHEXEC_WRAPPER_LOCAL) != SHEXEC_OK)
        die("shexec_session_set_shell: %s", shexec_session_errmsg(s));
    /* the rows measure process groups, as every earlier table did; rows 1c,
     * 5d and 5e ask for a cgroup per command (the default) and say what it
     * costs against them */
    if (shexec_session_set_containment(s, "off") != SHEXEC_OK)
        die("shexec_session_set_containment: %s", shexec_session_errmsg(s));
    return s;
}

void lib_run_ok(shexec_session *s, const char *cmd)
{
    shexec_run *r;
    int rc = shexec_run_new(&r, s, cmd);
    if (rc != SHEXEC_OK)
        die("shexec_run_new: %s", shexec_strerror(rc));
    if (shexec_run_exec(r) != SHEXEC_OK)
        die("shexec_run_exec `%s`: %s", cmd, shexec_session_errmsg(s));
    if (shexec_run_state(r) != SHEXEC_STATE_EXITED || shexec_run_exit_code(r) != 0)
        die("library run `%s` did not exit 0 (state %d, exit %d)", cmd, shexec_run_state(r),
            shexec_run_exit_code(r));
    shexec_run_free(r);
}
