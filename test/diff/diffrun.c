/*
 * diffrun - the differential fidelity judge for libshexec.
 *
 * The library promises that a command run through it behaves exactly as
 * `bash -c CMD` (or `sh -c CMD`) would. diffrun checks that promise case by
 * case: it runs every case of a corpus once through the library and once
 * through the plain shell started the same way, and compares, byte for
 * byte, stdout, stderr, how the shell ended (exit code, signal, timeout) and
 * the final working directory.
 *
 * CORPUS. Text files (a directory means its *.txt files, in name order).
 * Lines before the first case are a free preamble (comments). A case is
 *
 *     %% case: NAME                  unique across all files; [A-Za-z0-9._-]
 *     %% shells: bash sh             optional; default both
 *     %% setup: SHELL TEXT           optional, may repeat (joined by newlines);
 *                                    run by /bin/sh -c in the case's fresh
 *                                    directory before each of the two runs
 *     %% normalize: digits           optional; every run of digits -> <N>, the
 *                                    spaces that pad one to a width -> one
 *     %% timeout: SECONDS            optional; default 10
 *     %% newline: keep               optional; keep the final newline
 *     COMMAND TEXT...
 *
 * The command is every line after the header lines up to the next
 * `%% case:` line (or the end of the file), raw bytes, without the newline
 * that ends its last line unless `%% newline: keep`. No other line of a
 * command starts with `%%`.
 *
 * HOW A CASE RUNS, for the shell S (--shell, default /bin/bash; its name
 * decides whether it is "bash" or "sh"): a directory D with the same path
 * for every run of the case is emptied (removed and made again), with a
 * fresh HOME and TMPDIR beside it, and the setup runs there; this is done
 * again before each run. Each worker process has its own D, so cases run
 * concurrently and each alone in its directory.
 *   - the plain shell, once: `S -c CMD` with argv[0] "bash" or "sh", in its
 *     own process group, stdin /dev/null, stdout and stderr to pipes, cwd
 *     D, default signal dispositions, an empty mask, no other descriptor,
 *     the fixed environment plus PWD=D. Its output is read until it has
 *     exited and both pipes are at end of file, or 300 ms after its exit,
 *     when its process group is killed (leftover background processes).
 *     The shell alone is traced with ptrace, only to read its working
 *     directory as it ends: /proc/PID/cwd at PTRACE_EVENT_EXIT, or at
 *     PTRACE_EVENT_EXEC when it replaced itself with a program (`exec cmd`,
 *     or its last command run without a fork: the program may change
 *     directory on its own, as git does). Signals are passed on unchanged.
 *     Without ptrace the cwd is not compared (said once). A command longer
 *     than the kernel's limit for one argument (128 KiB) cannot be given
 *     with -c: the plain shell then reads it from a file (`S FILE`: the
 *     same text, parsed the same way; $0 is the file).
 *   - the library, once per mode: a new session, shell argv {S} (or the
 *     wrapper's argv and S), the environment not inherited but the fixed
 *     list (PATH, HOME, LANG, LC_ALL, TERM, USER, LOGNAME, TZ, GIT_*,
 *     PYTHONDONTWRITEBYTECODE, TMPDIR), cwd D, a 64 MiB byte output limit,
 *     the case's timeout, leftovers drained for 300 ms of quiet (as long as
 *     the plain run waits for its pipes), then killed; shexec_run_exec();
 *     the session cwd afterwards.
 * Compared: stdout, stderr, the ending (exit N, signal N, timed out), and
 * realpath() of the session cwd against the shell's physical cwd (when both
 * have one: not after a timeout). Normalised: when the outputs differ as
 * they are, each side's own shell pid (as a decimal number) becomes <PID>
 * before they are compared again; `normalize: digits` turns every run of
 * digits into <N>, and the spaces that pad one to a width (bash's job
 * reports print a pid as "%5d") into one. Nothing else is normalised.
 *
 * MODES. By default the library runs S directly. --wrapper-local PROG
 * ARG... -- runs it through a wrapper that passes descriptors
 * (SHEXEC_WRAPPER_LOCAL, e.g. bwrap); --wrapper-remote-shell PROG ARG...
 * -- through one that joins its arguments for a remote shell
 * (SHEXEC_WRAPPER_REMOTE_SHELL, e.g. test/diff/joinsh, as ssh does). The
 * plain side is the plain local shell all the same. Several modes can run
 * in one invocation (--direct names the direct one explicitly); they share
 * each case's plain run.
 *
 * KNOWN DIFFERENCES. --known FILE lists cases (one `NAME: reason` a line,
 * `#` comments) that are allowed to differ, for the mode named just before
 * it (before any mode: for the first). A listed case that no longer
 * differs, or that names no case of this run, is stale: the list must stay
 * honest. Exit status 0 only when no case differs unexpectedly, no entry of
 * a direct mode is stale (a wrapper mode reports its stale entries without
 * failing), and no case left a process or descriptor behind in diffrun.
 *
 * USAGE
 *   diffrun [--shell PATH] [-v] [-j N] [--only NAME] [--self-check]
 *           [--suggest] [--list] [--times]
 *           [MODE [--known FILE]]...  [CORPUS-FILE-OR-DIR...]
 *   MODE: --direct | --wrapper-local PROG ARG... -- |
 *         --wrapper-remote-shell PROG ARG... --
 *   (corpus default: test/diff/corpus)
 *   -v              print both sides in full (64 KiB of each stream) for
 *                   every case that differs
 *   -j N            N worker processes (default: twice the CPUs, 2 to 8)
 *   --only NAME     run one case and print both sides
 *   --self-check    run each case twice through the plain shell: a case
 *                   that differs from itself is not deterministic
 *   --suggest       end with a `NAME: fields` line per unexpected
 *                   difference, for a known-differences file
 *   --list          list the cases (name, shells, where) and exit
 *   --times         end with the time spent, by file and slowest cases
 * One line per case that differs, then per mode a summary and a
 * machine-readable line:
 *   result: mode=LABEL cases=N passed=N differ=N known=N stale=N
 */
#include <shexec.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_S 10
#define OUTPUT_CAP ((size_t)64 << 20)
#define EXIT_GRACE_MS 300
#define ARG_LIMIT 131072 /* MAX_ARG_STRLEN: one argument with its NUL */
#define SNIPPET 72       /* characters of a line shown in a one-line report */
#define DUMP_CAP 65536   /* bytes of a stream printed by -v / --only */

enum { SH_BASH = 1, SH_SH = 2 };
enum { END_EXIT, END_SIGNAL, END_TIMEOUT, END_ERROR };
enum { V_SAME = 0, V_DIFFER = 1 };
enum { W_NONE, W_LOCAL, W_REMOTE_SHELL };

/* ------------------------------------------------------------------------
 * small utilities
 * ------------------------------------------------------------------------ */

typedef struct {
    char *p;
    size_t n, cap;
} buf_t;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("diffrun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n);
    memcpy(d, s, n);
    return d;
}

static void buf_reserve(buf_t *b, size_t more)
{
    if (b->n + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more + 1)
        cap *= 2;
    b->p = xrealloc(b->p, cap);
    b->cap = cap;
}

static void buf_add(buf_t *b, const void *data, size_t len)
{
    buf_reserve(b, len);
    if (len)
        memcpy(b->p + b->n, data, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static void buf_puts(buf_t *b, const char *s) { buf_add(b, s, strlen(s)); }

static void buf_printf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    buf_reserve(b, (size_t)n);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    b->n += (size_t)n;
}

static void buf_clear(buf_t *b)
{
    b->n = 0;
    if (b->p)
        b->p[0] = '\0';
}

static void buf_free(buf_t *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

static const char *buf_str(const buf_t *b) { return b->p ? b->p : ""; }

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int write_full(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static int read_full(int fd, void *data, size_t len)
{
    char *p = data;
    while (len) {
        ssize_t r = read(fd, p, len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static int read_file(const char *path, buf_t *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char tmp[65536];
    for (;;) {
        ssize_t r = read(fd, tmp, sizeof tmp);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        buf_add(out, tmp, (size_t)r);
    }
    close(fd);
    buf_reserve(out, 0);
    out->p[out->n] = '\0';
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP || flag == FTW_D)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

/* rm -rf PATH (not following symlinks, not crossing mounts) */
static void rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static void mkdir_fresh(const char *path)
{
    rm_rf(path);
    if (mkdir(path, 0755) != 0)
        die("mkdir %s: %s", path, strerror(errno));
}

static void close_from(int lowfd)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lowfd, ~0u, 0u) == 0)
        return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    for (int fd = lowfd; fd < max; fd++)
        close(fd);
}

/* ------------------------------------------------------------------------
 * the corpus
 * ------------------------------------------------------------------------ */

typedef struct {
    char *name;
    char *file;
    int line;
    int shells;
    char *setup; /* NULL: none */
    int digits;
    int timeout_s;
    char *cmd;
    size_t cmdlen;
} dcase;

static dcase *g_cases;
static size_t g_ncases;

static int valid_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.'))
            return 0;
    return 1;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

static dcase *find_case(const char *name)
{
    for (size_t i = 0; i < g_ncases; i++)
        if (strcmp(g_cases[i].name, name) == 0)
            return &g_cases[i];
    return NULL;
}

static void finish_case(dcase *c, const char *text, size_t len, int keep_nl)
{
    if (len == 0)
        die("%s:%d: case %s has no command", c->file, c->line, c->name);
    if (!keep_nl && text[len - 1] == '\n')
        len--;
    if (len == 0)
        die("%s:%d: case %s has an empty command", c->file, c->line, c->name);
    if (memchr(text, '\0', len))
        die("%s:%d: case %s holds a NUL byte", c->file, c->line, c->name);
    c->cmd = xmalloc(len + 1);
    memcpy(c->cmd, text, len);
    c->cmd[len] = '\0';
    c->cmdlen = len;
}

static void parse_header(dcase *c, const char *file, int lineno, char *line, int *keep_nl)
{
    char *colon = strchr(line + 2, ':');
    if (!colon)
        die("%s:%d: malformed header line", file, lineno);
    *colon = '\0';
    char *key = trim(line + 2);
    char *val = colon + 1;
    if (*val == ' ')
        val++;
    if (strcmp(key, "setup") == 0) {
        size_t n = strlen(val);
        while (n && val[n - 1] == '\r')
            val[--n] = '\0';
        if (c->setup) {
            size_t m = strlen(c->setup);
            c->setup = xrealloc(c->setup, m + n + 2);
            c->setup[m] = '\n';
            memcpy(c->setup + m + 1, val, n + 1);
        } else {
            c->setup = xstrdup(val);
        }
        return;
    }
    val = trim(val);
    if (strcmp(key, "shells") == 0) {
        c->shells = 0;
        for (char *tok = strtok(val, " \t"); tok; tok = strtok(NULL, " \t")) {
            if (strcmp(tok, "bash") == 0)
                c->shells |= SH_BASH;
            else if (strcmp(tok, "sh") == 0)
                c->shells |= SH_SH;
            else
                die("%s:%d: unknown shell \"%s\" (bash, sh)", file, lineno, tok);
        }
        if (!c->shells)
            die("%s:%d: no shell named", file, lineno);
    } else if (strcmp(key, "normalize") == 0) {
        if (strcmp(val, "digits") == 0)
            c->digits = 1;
        else if (strcmp(val, "none") == 0)
            c->digits = 0;
        else
            die("%s:%d: unknown normalisation \"%s\" (digits)", file, lineno, val);
    } else if (strcmp(key, "timeout") == 0) {
        char *end;
        long t = strtol(val, &end, 10);
        if (*end || t < 1 || t > 600)
            die("%s:%d: bad timeout \"%s\" (1..600 seconds)", file, lineno, val);
        c->timeout_s = (int)t;
    } else if (strcmp(key, "newline") == 0) {
        if (strcmp(val, "keep") == 0)
            *keep_nl = 1;
        else if (strcmp(val, "strip") == 0)
            *keep_nl = 0;
        else
            die("%s:%d: bad newline setting \"%s\" (keep)", file, lineno, val);
    } else {
        die("%s:%d: unknown header \"%s\"", file, lineno, key);
    }
}

static void parse_corpus_file(const char *path)
{
    buf_t b = {0};
    if (read_file(path, &b) != 0)
        die("cannot read %s: %s", path, strerror(errno));
    const char *p = buf_str(&b), *end = p + b.n;
    int lineno = 0;
    dcase *cur = NULL;
    int in_header = 0, keep_nl = 0;
    const char *cmd_start = NULL;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *next = nl ? nl + 1 : end;
        lineno++;
        int is_pct = (end - p >= 2 && p[0] == '%' && p[1] == '%');
        int is_case = is_pct && (size_t)(end - p) >= 8 && memcmp(p, "%% case:", 8) == 0;
        if (is_case) {
            if (cur)
                finish_case(cur, cmd_start ? cmd_start : p, cmd_start ? (size_t)(p - cmd_start) : 0,
                            keep_nl);
            size_t len = (size_t)((nl ? nl : end) - (p + 8));
            char *name = xmalloc(len + 1);
            memcpy(name, p + 8, len);
            name[len] = '\0';
            char *t = trim(name);
            if (!valid_name(t))
                die("%s:%d: bad case name \"%s\"", path, lineno, t);
            dcase *dup = find_case(t);
            if (dup)
                die("%s:%d: case %s already defined at %s:%d", path, lineno, t, dup->file,
                    dup->line);
            g_cases = xrealloc(g_cases, (g_ncases + 1) * sizeof *g_cases);
            cur = &g_cases[g_ncases++];
            memset(cur, 0, sizeof *cur);
            cur->name = xstrdup(t);
            free(name);
            cur->file = xstrdup(path);
            cur->line = lineno;
            cur->shells = SH_BASH | SH_SH;
            cur->timeout_s = DEFAULT_TIMEOUT_S;
            in_header = 1;
            keep_nl = 0;
            cmd_start = NULL;
        } else if (cur && in_header && is_pct) {
            size_t len = (size_t)((nl ? nl : end) - p);
            char *line = xmalloc(len + 1);
            memcpy(line, p, len);
            line[len] = '\0';
            parse_header(cur, path, lineno, line, &keep_nl);
            free(line);
        } else if (cur) {
            if (is_pct)
                die("%s:%d: a line starting with %%%% inside the command of %s", path, lineno,
                    cur->name);
            if (in_header) {
                in_header = 0;
                cmd_start = p;
            }
        }
        p = next;
    }
    if (cur)
        finish_case(cur, cmd_start ? cmd_start : end, cmd_start ? (size_t)(end - cmd_start) : 0,
                    keep_nl);
    buf_free(&b);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void load_corpus(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        die("%s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        parse_corpus_file(path);
        return;
    }
    DIR *d = opendir(path);
    if (!d)
        die("%s: %s", path, strerror(errno));
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".txt") == 0) {
            names = xrealloc(names, (n + 1) * sizeof *names);
            names[n] = xmalloc(strlen(path) + len + 2);
            sprintf(names[n], "%s/%s", path, e->d_name);
            n++;
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        parse_corpus_file(names[i]);
        free(names[i]);
    }
    free(names);
}

/* ------------------------------------------------------------------------
 * the known-differences list
 * ------------------------------------------------------------------------ */

typedef struct {
    char *name;
    char *reason;
    int line;
    int used;
} known_t;

typedef struct {
    known_t *v;
    size_t n;
    const char *file; /* NULL: no list */
} klist;

static void load_known(klist *kl, const char *path)
{
    buf_t b = {0};
    if (read_file(path, &b) != 0)
        die("cannot read %s: %s", path, strerror(errno));
    int lineno = 0;
    char *text = b.p ? b.p : (char *)"";
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        lineno++;
        char *t = trim(line);
        if (*t && *t != '#') {
            char *colon = strchr(t, ':');
            if (!colon)
                die("%s:%d: expected \"NAME: reason\"", path, lineno);
            *colon = '\0';
            char *name = trim(t);
            if (!valid_name(name))
                die("%s:%d: bad case name \"%s\"", path, lineno, name);
            for (size_t i = 0; i < kl->n; i++)
                if (strcmp(kl->v[i].name, name) == 0)
                    die("%s:%d: %s is listed twice", path, lineno, name);
            kl->v = xrealloc(kl->v, (kl->n + 1) * sizeof *kl->v);
            kl->v[kl->n].name = xstrdup(name);
            kl->v[kl->n].reason = xstrdup(trim(colon + 1));
            kl->v[kl->n].line = lineno;
            kl->v[kl->n].used = 0;
            kl->n++;
        }
        line = nl ? nl + 1 : NULL;
    }
    kl->file = path;
    buf_free(&b);
}

static known_t *find_known(const klist *kl, const char *name)
{
    for (size_t i = 0; i < kl->n; i++)
        if (strcmp(kl->v[i].name, name) == 0)
            return &kl->v[i];
    return NULL;
}

/* ------------------------------------------------------------------------
 * the settings of this run
 * ------------------------------------------------------------------------ */

static const char *g_shell = "/bin/bash";
static int g_kind = SH_BASH;           /* which shell g_shell is */
static const char *g_argv0 = "bash";   /* its argv[0] for the plain run */

/* a way of running the library side; one plain run serves them all */
typedef struct {
    int wrapper;       /* W_* */
    char **argv;       /* the wrapper's program and arguments */
    size_t argc;
    char label[128];   /* "bash", "bash+local:bwrap", ... */
    klist known;
    size_t passed, differ, known_n, stale;
} lmode;

#define MAX_MODES 8
static lmode g_modes[MAX_MODES];
static size_t g_nmodes;
static int g_verbose;
static int g_self_check;
static const char *g_shname = "bash";
static int g_have_ptrace = 1;
static char g_base[PATH_MAX];          /* $TMPDIR/shexec-diff-PID */

/* dst (PATH_MAX bytes) = a/b */
static void path_join(char *dst, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la + lb + 2 > PATH_MAX)
        die("path too long: %s/%s", a, b);
    memcpy(dst, a, la);
    dst[la] = '/';
    memcpy(dst + la + 1, b, lb + 1);
}

/* one worker's directories: D, its HOME, its TMPDIR, the big-command file */
typedef struct {
    char dir[PATH_MAX];
    char home[PATH_MAX];
    char tmp[PATH_MAX];
    char cmdfile[PATH_MAX];
    int sfd; /* signalfd for SIGCHLD */
} wctx;

static void wctx_init(wctx *w, int index)
{
    char root[PATH_MAX], num[16];
    snprintf(num, sizeof num, "%d", index);
    path_join(root, g_base, num);
    mkdir_fresh(root);
    path_join(w->dir, root, "w");
    path_join(w->home, root, "home");
    path_join(w->tmp, root, "tmp");
    path_join(w->cmdfile, root, "command");
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    w->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (w->sfd < 0)
        die("signalfd: %s", strerror(errno));
}

/* the fixed environment both sides get (the plain side also PWD) */
#define N_ENV 17
static void build_env(const wctx *w, char names[N_ENV][32], char *values[N_ENV])
{
    static const char *const fixed[][2] = {
        {"PATH", "/usr/local/bin:/usr/bin:/bin"},
        {"HOME", NULL},
        {"LANG", "C.UTF-8"},
        {"LC_ALL", "C.UTF-8"},
        {"TERM", "dumb"},
        {"USER", "root"},
        {"LOGNAME", "root"},
        {"TZ", "UTC"},
        {"GIT_AUTHOR_NAME", "Diff Author"},
        {"GIT_AUTHOR_EMAIL", "author@example.invalid"},
        {"GIT_COMMITTER_NAME", "Diff Committer"},
        {"GIT_COMMITTER_EMAIL", "committer@example.invalid"},
        {"GIT_AUTHOR_DATE", "2024-01-02T03:04:05+0000"},
        {"GIT_COMMITTER_DATE", "2024-01-02T03:04:05+0000"},
        {"PYTHONDONTWRITEBYTECODE", "1"},
        {"TMPDIR", NULL},
        {"PWD", NULL},
    };
    for (int i = 0; i < N_ENV; i++) {
        snprintf(names[i], 32, "%s", fixed[i][0]);
        if (strcmp(fixed[i][0], "HOME") == 0)
            values[i] = (char *)w->home;
        else if (strcmp(fixed[i][0], "TMPDIR") == 0)
            values[i] = (char *)w->tmp;
        else if (strcmp(fixed[i][0], "PWD") == 0)
            values[i] = (char *)w->dir;
        else
            values[i] = (char *)fixed[i][1];
    }
}

/* ------------------------------------------------------------------------
 * one side's result
 * ------------------------------------------------------------------------ */

typedef struct {
    buf_t out, err;
    int end;     /* END_* */
    int code;    /* exit code or signal */
    char *cwd;   /* physical; NULL: unknown */
    long pid;    /* the shell's pid, for normalisation */
    char msg[512];
} side_t;

static void side_free(side_t *s)
{
    buf_free(&s->out);
    buf_free(&s->err);
    free(s->cwd);
    memset(s, 0, sizeof *s);
}

static const char *signame(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
        {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
        {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
        {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
        {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGCHLD, "SIGCHLD"},
        {SIGCONT, "SIGCONT"}, {SIGSTOP, "SIGSTOP"}, {SIGTSTP, "SIGTSTP"}, {SIGTTIN, "SIGTTIN"},
        {SIGTTOU, "SIGTTOU"}, {SIGURG, "SIGURG"},   {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
        {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"}, {SIGWINCH, "SIGWINCH"}, {SIGSYS, "SIGSYS"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (names[i].sig == sig)
            return names[i].name;
    return "?";
}

static void describe_end(buf_t *b, const side_t *s)
{
    switch (s->end) {
    case END_EXIT:
        buf_printf(b, "exit %d", s->code);
        break;
    case END_SIGNAL:
        buf_printf(b, "signal %d (%s)", s->code, signame(s->code));
        break;
    case END_TIMEOUT:
        buf_puts(b, "timed out");
        break;
    default:
        buf_printf(b, "error: %s", s->msg);
        break;
    }
}

/* ------------------------------------------------------------------------
 * the plain shell (and the setup), traced for its final directory
 * ------------------------------------------------------------------------ */

static void drain_sfd(int sfd)
{
    struct signalfd_siginfo si[16];
    while (read(sfd, si, sizeof si) > 0) {
    }
}

static void read_some(int *fd, buf_t *b, size_t *total)
{
    char tmp[65536];
    ssize_t r = read(*fd, tmp, sizeof tmp);
    if (r > 0) {
        *total += (size_t)r;
        if (b->n < OUTPUT_CAP) {
            size_t keep = (size_t)r;
            if (b->n + keep > OUTPUT_CAP)
                keep = OUTPUT_CAP - b->n;
            buf_add(b, tmp, keep);
        }
    } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(*fd);
        *fd = -1;
    }
}

static void read_cwd(pid_t pid, char **out)
{
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof link, "/proc/%ld/cwd", (long)pid);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n >= 0) {
        target[n] = '\0';
        free(*out);
        *out = xstrdup(target);
    }
}

static void record_status(side_t *res, int status)
{
    if (WIFEXITED(status)) {
        res->end = END_EXIT;
        res->code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        res->end = END_SIGNAL;
        res->code = WTERMSIG(status);
    }
}

static void record_siginfo(side_t *res, const siginfo_t *si)
{
    if (si->si_code == CLD_EXITED) {
        res->end = END_EXIT;
        res->code = si->si_status;
    } else {
        res->end = END_SIGNAL;
        res->code = si->si_status;
    }
}

/*
 * Run argv (already prepared) in `dir` with `envp`, capturing stdout and
 * stderr. trace: follow the shell with ptrace for its final directory.
 */
static void spawn_capture(const wctx *w, const char *path, char *const argv[], char *const envp[],
                          int timeout_s, int trace, side_t *res)
{
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0)
        die("pipe: %s", strerror(errno));
    drain_sfd(w->sfd);
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        int nul = open("/dev/null", O_RDONLY);
        if (nul < 0 || dup2(nul, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
            _exit(126);
        if (chdir(w->dir) != 0)
            _exit(126);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        sigemptyset(&sa.sa_mask);
        for (int sig = 1; sig < NSIG; sig++)
            sigaction(sig, &sa, NULL);
        sigset_t empty;
        sigemptyset(&empty);
        sigprocmask(SIG_SETMASK, &empty, NULL);
        close_from(3);
        if (trace && ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
            _exit(125);
        execve(path, argv, envp);
        _exit(127);
    }
    setpgid(pid, pid);
    close(po[1]);
    close(pe[1]);
    fcntl(po[0], F_SETFL, O_NONBLOCK);
    fcntl(pe[0], F_SETFL, O_NONBLOCK);
    res->pid = pid;
    int fo = po[0], fe = pe[0];
    size_t tot_out = 0, tot_err = 0;
    int exited = 0, reaped = 0, timed_out = 0, traced = 0, replaced = 0;
    int64_t deadline = now_ms() + (int64_t)timeout_s * 1000, exit_at = 0;

    for (;;) {
        /* every wait event of the shell: ptrace stops, then its exit */
        while (!exited) {
            siginfo_t si;
            memset(&si, 0, sizeof si);
            if (waitid(P_PID, (id_t)pid, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT) != 0 ||
                si.si_pid == 0)
                break;
            if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) {
                record_siginfo(res, &si); /* left unreaped: it holds the group id */
                exited = 1;
                exit_at = now_ms();
                break;
            }
            int st;
            if (waitpid(pid, &st, WNOHANG) <= 0)
                break;
            if (!WIFSTOPPED(st)) {
                record_status(res, st);
                exited = reaped = 1;
                exit_at = now_ms();
                break;
            }
            int sig = WSTOPSIG(st), event = (st >> 16) & 0xff, inject = 0;
            if (!traced && sig == SIGTRAP && event == 0) {
                traced = 1; /* the stop after execve */
                ptrace(PTRACE_SETOPTIONS, pid, NULL,
                       (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC));
            } else if (sig == SIGTRAP &&
                       (event == PTRACE_EVENT_EXIT || event == PTRACE_EVENT_EXEC)) {
                /* the shell's directory as it ends: at its exit, or when it
                 * replaced itself with a program (`exec cmd`, or the last
                 * command run without a fork), which may change directory
                 * on its own (git does) */
                if (!replaced)
                    read_cwd(pid, &res->cwd);
                if (event == PTRACE_EVENT_EXEC)
                    replaced = 1;
            } else if (event == 0) {
                siginfo_t ssi;
                /* a signal-delivery stop (passed on); a group-stop fails this */
                if (ptrace(PTRACE_GETSIGINFO, pid, NULL, &ssi) == 0)
                    inject = sig;
            }
            ptrace(PTRACE_CONT, pid, NULL, (void *)(long)inject);
        }
        int64_t now = now_ms();
        if (exited && fo < 0 && fe < 0)
            break;
        if (exited && now >= exit_at + EXIT_GRACE_MS)
            break;
        if (!exited && now >= deadline) {
            timed_out = 1;
            break;
        }
        int64_t until = exited ? exit_at + EXIT_GRACE_MS : deadline;
        struct pollfd pf[3];
        int n = 0, io = -1, ie = -1, is = -1;
        if (fo >= 0) {
            io = n;
            pf[n++] = (struct pollfd){.fd = fo, .events = POLLIN};
        }
        if (fe >= 0) {
            ie = n;
            pf[n++] = (struct pollfd){.fd = fe, .events = POLLIN};
        }
        if (!exited) {
            is = n;
            pf[n++] = (struct pollfd){.fd = w->sfd, .events = POLLIN};
        }
        int r = poll(pf, (nfds_t)n, (int)(until - now));
        if (r < 0 && errno != EINTR)
            die("poll: %s", strerror(errno));
        if (r <= 0)
            continue;
        if (io >= 0 && pf[io].revents)
            read_some(&fo, &res->out, &tot_out);
        if (ie >= 0 && pf[ie].revents)
            read_some(&fe, &res->err, &tot_err);
        if (is >= 0 && pf[is].revents)
            drain_sfd(w->sfd);
    }
    /* leftovers (and, on a timeout, the shell) go with their group */
    if (!reaped)
        kill(-pid, SIGKILL);
    if (fo >= 0)
        close(fo);
    if (fe >= 0)
        close(fe);
    while (!reaped) {
        int st;
        pid_t r = waitpid(pid, &st, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        if (WIFSTOPPED(st)) {
            ptrace(PTRACE_CONT, pid, NULL, NULL);
            continue;
        }
        if (!exited)
            record_status(res, st);
        reaped = 1;
    }
    if (timed_out) {
        res->end = END_TIMEOUT;
        res->code = 0;
        free(res->cwd); /* it did not finish: no final directory */
        res->cwd = NULL;
    }
    if (tot_out > OUTPUT_CAP)
        buf_printf(&res->out, "\n[diffrun: %zu bytes in total, the first %zu kept]\n", tot_out,
                   OUTPUT_CAP);
    if (tot_err > OUTPUT_CAP)
        buf_printf(&res->err, "\n[diffrun: %zu bytes in total, the first %zu kept]\n", tot_err,
                   OUTPUT_CAP);
    drain_sfd(w->sfd);
}

static char **make_envp(const wctx *w)
{
    char names[N_ENV][32];
    char *values[N_ENV];
    build_env(w, names, values);
    char **envp = xmalloc((N_ENV + 1) * sizeof *envp);
    for (int i = 0; i < N_ENV; i++) {
        envp[i] = xmalloc(strlen(names[i]) + strlen(values[i]) + 2);
        sprintf(envp[i], "%s=%s", names[i], values[i]);
    }
    envp[N_ENV] = NULL;
    return envp;
}

static void free_envp(char **envp)
{
    for (int i = 0; envp[i]; i++)
        free(envp[i]);
    free(envp);
}

/* empty D, HOME and TMPDIR, and run the setup; 0 or -1 with why in *why */
static int prepare(const wctx *w, const dcase *c, buf_t *why)
{
    mkdir_fresh(w->dir);
    mkdir_fresh(w->home);
    mkdir_fresh(w->tmp);
    if (!c->setup)
        return 0;
    char **envp = make_envp(w);
    char *argv[] = {(char *)"sh", (char *)"-c", c->setup, NULL};
    side_t s;
    memset(&s, 0, sizeof s);
    spawn_capture(w, "/bin/sh", argv, envp, 30, 0, &s);
    free_envp(envp);
    int ok = s.end == END_EXIT && s.code == 0;
    if (!ok) {
        buf_puts(why, "setup failed (");
        describe_end(why, &s);
        buf_printf(why, "): %.300s", buf_str(&s.err));
    }
    side_free(&s);
    return ok ? 0 : -1;
}

static void plain_run(const wctx *w, const dcase *c, side_t *res)
{
    char **envp = make_envp(w);
    if (c->cmdlen < ARG_LIMIT) {
        char *argv[] = {(char *)g_argv0, (char *)"-c", c->cmd, NULL};
        spawn_capture(w, g_shell, argv, envp, c->timeout_s, g_have_ptrace, res);
    } else {
        /* too long for one argument: the shell reads it from a file */
        int fd = open(w->cmdfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write_full(fd, c->cmd, c->cmdlen) != 0)
            die("%s: %s", w->cmdfile, strerror(errno));
        close(fd);
        char *argv[] = {(char *)g_argv0, (char *)w->cmdfile, NULL};
        spawn_capture(w, g_shell, argv, envp, c->timeout_s, g_have_ptrace, res);
    }
    free_envp(envp);
}

/* ------------------------------------------------------------------------
 * the library side
 * ------------------------------------------------------------------------ */

static int lib_fail(side_t *res, shexec_session *s, const char *what, int rc)
{
    res->end = END_ERROR;
    snprintf(res->msg, sizeof res->msg, "%s: %s (%s)", what, shexec_strerror(rc),
             shexec_session_errmsg(s));
    return -1;
}

static int lib_setup(shexec_session *s, const wctx *w, const dcase *c, const lmode *m,
                     side_t *res)
{
    int rc;
    const char **argv = xmalloc((m->argc + 2) * sizeof *argv);
    for (size_t i = 0; i < m->argc; i++)
        argv[i] = m->argv[i];
    argv[m->argc] = g_shell;
    argv[m->argc + 1] = NULL;
    rc = shexec_session_set_shell(s, argv, m->wrapper == W_REMOTE_SHELL
                                               ? SHEXEC_WRAPPER_REMOTE_SHELL
                                               : SHEXEC_WRAPPER_LOCAL);
    free(argv);
    if (rc != SHEXEC_OK)
        return lib_fail(res, s, "shexec_session_set_shell", rc);
    if ((rc = shexec_session_set_env_inherit(s, 0)) != SHEXEC_OK)
        return lib_fail(res, s, "shexec_session_set_env_inherit", rc);
    char names[N_ENV][32];
    char *values[N_ENV];
    build_env(w, names, values);
    for (int i = 0; i < N_ENV; i++) {
        if (strcmp(names[i], "PWD") == 0)
            continue; /* the library sets PWD itself */
        if ((rc = shexec_session_setenv(s, names[i], values[i])) != SHEXEC_OK)
            return lib_fail(res, s, "shexec_session_setenv", rc);
    }
    if ((rc = shexec_session_set_cwd(s, w->dir)) != SHEXEC_OK)
        return lib_fail(res, s, "shexec_session_set_cwd", rc);
    if ((rc = shexec_session_set_output_limit(s, OUTPUT_CAP, SHEXEC_UNIT_BYTES,
                                              SHEXEC_KEEP_HEAD)) != SHEXEC_OK)
        return lib_fail(res, s, "shexec_session_set_output_limit", rc);
    uint32_t ms = (uint32_t)c->timeout_s * 1000u;
    if ((rc = shexec_session_set_timeouts_ms(s, ms, ms)) != SHEXEC_OK)
        return lib_fail(res, s, "shexec_session_set_timeouts_ms", rc);
    if ((rc = shexec_session_set_kill_grace_ms(s, 200)) != SHEXEC_OK)
        return lib_fail(res, s, "shexec_session_set_kill_grace_ms", rc);
    if ((rc = shexec_session_set_on_leftovers(s, SHEXEC_ON_LEFTOVERS_KILL)) != SHEXEC_OK)
        return lib_fail(res, s, "shexec_session_set_on_leftovers", rc);
    if ((rc = shexec_session_set_leftovers_drain_ms(s, 300)) != SHEXEC_OK)
        return lib_fail(res, s, "shexec_session_set_leftovers_drain_ms", rc);
    return 0;
}

static void lib_run(const wctx *w, const dcase *c, const lmode *m, side_t *res)
{
    shexec_session *s = NULL;
    shexec_run *r = NULL;
    int rc = shexec_session_new(&s);
    if (rc != SHEXEC_OK) {
        lib_fail(res, s, "shexec_session_new", rc);
        return;
    }
    if (lib_setup(s, w, c, m, res) != 0)
        goto out;
    if ((rc = shexec_run_new_bytes(&r, s, c->cmd, c->cmdlen)) != SHEXEC_OK) {
        lib_fail(res, s, "shexec_run_new_bytes", rc);
        goto out;
    }
    if ((rc = shexec_run_exec(r)) != SHEXEC_OK) {
        lib_fail(res, s, "shexec_run_exec", rc);
        goto out;
    }
    size_t n;
    const char *o = shexec_run_output(r, SHEXEC_STDOUT, &n);
    buf_add(&res->out, o, n);
    o = shexec_run_output(r, SHEXEC_STDERR, &n);
    buf_add(&res->err, o, n);
    res->pid = (long)shexec_run_pid(r);
    switch (shexec_run_state(r)) {
    case SHEXEC_STATE_EXITED:
        res->end = END_EXIT;
        res->code = shexec_run_exit_code(r);
        break;
    case SHEXEC_STATE_SIGNALED:
        res->end = END_SIGNAL;
        res->code = shexec_run_signal(r);
        break;
    case SHEXEC_STATE_TIMED_OUT:
        res->end = END_TIMEOUT;
        res->code = 0;
        break;
    default:
        res->end = END_ERROR;
        snprintf(res->msg, sizeof res->msg, "run state %d", shexec_run_state(r));
        break;
    }
    const char *cwd = shexec_session_cwd(s);
    if (cwd && res->end != END_TIMEOUT) {
        char real[PATH_MAX];
        res->cwd = xstrdup(realpath(cwd, real) ? real : cwd);
    }
out:
    shexec_run_free(r);
    shexec_session_free(s);
}

/* ------------------------------------------------------------------------
 * comparing and describing
 * ------------------------------------------------------------------------ */

static int is_digit(char ch) { return ch >= '0' && ch <= '9'; }

static void normalize(buf_t *dst, const buf_t *src, long pid, int digits)
{
    char pidstr[32];
    size_t plen = (size_t)snprintf(pidstr, sizeof pidstr, "%ld", pid);
    const char *p = buf_str(src);
    size_t n = src->n, i = 0;
    buf_clear(dst);
    buf_reserve(dst, n);
    while (i < n) {
        if (is_digit(p[i]) && (i == 0 || !is_digit(p[i - 1]))) {
            size_t j = i;
            while (j < n && is_digit(p[j]))
                j++;
            if (digits)
                buf_puts(dst, "<N>");
            else if (pid > 0 && j - i == plen && memcmp(p + i, pidstr, plen) == 0)
                buf_puts(dst, "<PID>");
            else
                buf_add(dst, p + i, j - i);
            i = j;
        } else if (digits && p[i] == ' ' && i + 1 < n && p[i + 1] == ' ') {
            /* spaces that pad a number to a width (bash's "%5d" of a
             * job's pid) follow from its value: one space, as for any */
            size_t j = i;
            while (j < n && p[j] == ' ')
                j++;
            buf_add(dst, p + i, j < n && is_digit(p[j]) ? 1 : j - i);
            i = j;
        } else {
            buf_add(dst, p + i, 1);
            i++;
        }
    }
}

static int buf_eq(const buf_t *a, const buf_t *b)
{
    return a->n == b->n && (a->n == 0 || memcmp(a->p, b->p, a->n) == 0);
}

static void escape_into(buf_t *b, const char *p, size_t n, size_t max)
{
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        if (shown >= max) {
            buf_puts(b, "...");
            return;
        }
        unsigned char ch = (unsigned char)p[i];
        if (ch == '\n')
            buf_puts(b, "\\n");
        else if (ch == '\t')
            buf_puts(b, "\\t");
        else if (ch == '\r')
            buf_puts(b, "\\r");
        else if (ch == '\\' || ch == '"')
            buf_printf(b, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            buf_printf(b, "\\x%02x", ch);
        else
            buf_add(b, &p[i], 1);
        shown++;
    }
}

static size_t count_lines(const buf_t *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->p[i] == '\n')
            n++;
    if (b->n && b->p[b->n - 1] != '\n')
        n++;
    return n;
}

/* "stdout: line 3: lib "..." | plain "..." (lib 20 B/3 lines, plain 18 B/3 lines)" */
static void describe_text(buf_t *rep, const char *label, const char *la, const buf_t *a,
                          const char *lb, const buf_t *b)
{
    const char *pa = buf_str(a), *pb = buf_str(b);
    size_t i = 0, line = 1, start = 0;
    while (i < a->n && i < b->n && pa[i] == pb[i]) {
        if (pa[i] == '\n') {
            line++;
            start = i + 1;
        }
        i++;
    }
    buf_printf(rep, "%s: line %zu: ", label, line);
    const buf_t *sides[2] = {a, b};
    const char *labels[2] = {la, lb};
    for (int k = 0; k < 2; k++) {
        const buf_t *s = sides[k];
        buf_printf(rep, "%s%s ", k ? " | " : "", labels[k]);
        if (start >= s->n) {
            buf_puts(rep, "<end>");
            continue;
        }
        const char *ls = buf_str(s) + start;
        const char *nl = memchr(ls, '\n', s->n - start);
        size_t len = nl ? (size_t)(nl - ls) + 1 : s->n - start;
        buf_puts(rep, "\"");
        escape_into(rep, ls, len, SNIPPET);
        buf_puts(rep, "\"");
    }
    buf_printf(rep, " (%s %zu B/%zu lines, %s %zu B/%zu lines)", la, a->n, count_lines(a), lb,
               b->n, count_lines(b));
}

static void dump_stream(buf_t *rep, const char *title, const buf_t *b)
{
    buf_printf(rep, "----- %s: %zu bytes -----\n", title, b->n);
    size_t n = b->n > DUMP_CAP ? DUMP_CAP : b->n;
    const char *p = buf_str(b);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '\n' || ch == '\t' || ch >= 0x20)
            buf_add(rep, &p[i], 1);
        else
            buf_printf(rep, "\\x%02x", ch);
    }
    if (b->n > n)
        buf_printf(rep, "\n[... %zu more bytes]\n", b->n - n);
    else if (n && p[n - 1] != '\n')
        buf_puts(rep, "\n[no newline at end]\n");
}

static void dump_side(buf_t *rep, const char *label, const side_t *s)
{
    char title[64];
    buf_printf(rep, "===== %s: ", label);
    describe_end(rep, s);
    buf_printf(rep, ", cwd %s, pid %ld\n", s->cwd ? s->cwd : "(unknown)", s->pid);
    snprintf(title, sizeof title, "%s stdout", label);
    dump_stream(rep, title, &s->out);
    snprintf(title, sizeof title, "%s stderr", label);
    dump_stream(rep, title, &s->err);
}

/* compare two sides; 1 when they differ, with the description in rep */
static int compare_sides(buf_t *rep, const dcase *c, const char *la, const side_t *a,
                         const char *lb, const side_t *b, int check_cwd)
{
    int differ = 0;
    buf_t na = {0}, nb = {0};
    const buf_t *sa[2] = {&a->out, &a->err}, *sb[2] = {&b->out, &b->err};
    const char *label[2] = {"stdout", "stderr"};
    for (int k = 0; k < 2; k++) {
        int same;
        if (!c->digits && buf_eq(sa[k], sb[k])) {
            same = 1;
        } else {
            normalize(&na, sa[k], a->pid, c->digits);
            normalize(&nb, sb[k], b->pid, c->digits);
            same = buf_eq(&na, &nb);
        }
        if (!same) {
            buf_puts(rep, differ++ ? "; " : "");
            describe_text(rep, label[k], la, &na, lb, &nb);
        }
    }
    if (a->end != b->end || a->code != b->code || a->end == END_ERROR || b->end == END_ERROR) {
        buf_puts(rep, differ++ ? "; " : "");
        buf_printf(rep, "ending: %s ", la);
        describe_end(rep, a);
        buf_printf(rep, " | %s ", lb);
        describe_end(rep, b);
    }
    /* the cwd is compared when both sides have one: not after a timeout, nor
     * when the shell died before the tracer saw its exit (SIGKILL) */
    if (check_cwd && a->cwd && b->cwd) {
        const char *ca = a->cwd, *cb = b->cwd;
        if (strcmp(ca, cb) != 0) {
            buf_puts(rep, differ++ ? "; " : "");
            buf_printf(rep, "cwd: %s %s | %s %s", la, ca, lb, cb);
        }
    }
    buf_free(&na);
    buf_free(&nb);
    return differ;
}

/*
 * Run one case: the plain shell once, then the library once per mode (with
 * self_check, the plain shell a second time instead). verdicts[m] is V_SAME
 * or V_DIFFER, the description of a difference in reps[m]; full: also both
 * sides in full.
 */
static void run_case(const wctx *w, const dcase *c, int self_check, int full, buf_t *reps,
                     int *verdicts)
{
    side_t plain;
    memset(&plain, 0, sizeof plain);
    buf_t why = {0};
    size_t n = self_check ? 1 : g_nmodes;
    const char *la = self_check ? "first" : "lib", *lb = self_check ? "second" : "plain";
    int setup_ok = prepare(w, c, &why) == 0;
    if (setup_ok)
        plain_run(w, c, &plain);
    for (size_t m = 0; m < n; m++) {
        side_t a;
        memset(&a, 0, sizeof a);
        if (!setup_ok || prepare(w, c, &reps[m]) != 0) {
            buf_puts(&reps[m], buf_str(&why));
            verdicts[m] = V_DIFFER;
            continue;
        }
        if (self_check)
            plain_run(w, c, &a);
        else
            lib_run(w, c, &g_modes[m], &a);
        verdicts[m] = compare_sides(&reps[m], c, la, &a, lb, &plain, g_have_ptrace) ? V_DIFFER
                                                                                  : V_SAME;
        if (full || (g_verbose && verdicts[m] != V_SAME)) {
            buf_puts(&reps[m], "\n");
            dump_side(&reps[m], la, &a);
            dump_side(&reps[m], lb, &plain);
        }
        side_free(&a);
    }
    side_free(&plain);
    buf_free(&why);
}

/* ------------------------------------------------------------------------
 * workers: each runs whole cases in its own directory
 * ------------------------------------------------------------------------ */

/* worker -> parent: a header, then per mode a verdict, a length and the text */
typedef struct {
    int32_t job;
    uint32_t ms;   /* how long the case took, all its runs */
    int32_t leaks; /* processes or descriptors the case left in the worker */
} msg_hdr;

typedef struct {
    int32_t verdict;
    uint32_t len;
} msg_mode;

typedef struct {
    pid_t pid;
    int to, from;
    int busy;
} worker_t;

static size_t g_leaks;

typedef struct {
    int done;
    uint32_t ms;
    int verdict[MAX_MODES];
    char *text[MAX_MODES];
} result_t;

static size_t n_result_modes(void) { return g_self_check ? 1 : g_nmodes; }

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* after a case the worker has no child left and no more descriptors than
 * before it: anything else is a leak of the harness or of the library */
static int check_leaks(const char *name, int fds_before)
{
    int leaks = 0, st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        fprintf(stderr, "diffrun: after %s: child %ld was left unreaped\n", name, (long)pid);
        leaks++;
    }
    if (pid == 0) {
        fprintf(stderr, "diffrun: after %s: a child process is still running\n", name);
        leaks++;
    }
    int fds = count_fds();
    if (fds_before >= 0 && fds > fds_before) {
        fprintf(stderr, "diffrun: after %s: %d descriptors more than before\n", name,
                fds - fds_before);
        leaks++;
    }
    return leaks;
}

static void worker_main(int index, int jobfd, int resfd, const size_t *jobs)
{
    wctx w;
    wctx_init(&w, index);
    size_t nm = n_result_modes();
    buf_t reps[MAX_MODES];
    int verdicts[MAX_MODES];
    memset(reps, 0, sizeof reps);
    for (;;) {
        int32_t job;
        if (read_full(jobfd, &job, sizeof job) != 0 || job < 0)
            break;
        for (size_t m = 0; m < nm; m++)
            buf_clear(&reps[m]);
        int64_t t0 = now_ms();
        int fds = count_fds();
        run_case(&w, &g_cases[jobs[job]], g_self_check, 0, reps, verdicts);
        msg_hdr h = {job, (uint32_t)(now_ms() - t0), check_leaks(g_cases[jobs[job]].name, fds)};
        int bad = write_full(resfd, &h, sizeof h) != 0;
        for (size_t m = 0; m < nm && !bad; m++) {
            msg_mode mm = {verdicts[m], (uint32_t)reps[m].n};
            bad = write_full(resfd, &mm, sizeof mm) != 0 ||
                  write_full(resfd, buf_str(&reps[m]), reps[m].n) != 0;
        }
        if (bad)
            break;
    }
    for (size_t m = 0; m < nm; m++)
        buf_free(&reps[m]);
    close(w.sfd);
    _exit(0);
}

static void run_all(const size_t *jobs, size_t njobs, int nworkers, result_t *results,
                    void (*emit)(size_t, result_t *))
{
    size_t nm = n_result_modes();
    if (nworkers > (int)njobs)
        nworkers = njobs ? (int)njobs : 1;
    worker_t *wk = xmalloc((size_t)nworkers * sizeof *wk);
    struct pollfd *pf = xmalloc((size_t)nworkers * sizeof *pf);
    fflush(NULL);
    for (int i = 0; i < nworkers; i++) {
        int a[2], b[2];
        if (pipe2(a, O_CLOEXEC) != 0 || pipe2(b, O_CLOEXEC) != 0)
            die("pipe: %s", strerror(errno));
        pid_t pid = fork();
        if (pid < 0)
            die("fork: %s", strerror(errno));
        if (pid == 0) {
            close(a[1]);
            close(b[0]);
            for (int k = 0; k < i; k++) {
                close(wk[k].to);
                close(wk[k].from);
            }
            worker_main(i, a[0], b[1], jobs);
        }
        close(a[0]);
        close(b[1]);
        wk[i] = (worker_t){pid, a[1], b[0], 0};
    }
    size_t next = 0, finished = 0, printed = 0;
    while (finished < njobs) {
        for (int i = 0; i < nworkers; i++) {
            if (!wk[i].busy && next < njobs) {
                int32_t job = (int32_t)next++;
                if (write_full(wk[i].to, &job, sizeof job) != 0)
                    die("worker %d is gone", i);
                wk[i].busy = 1;
            }
        }
        for (int i = 0; i < nworkers; i++)
            pf[i] = (struct pollfd){.fd = wk[i].busy ? wk[i].from : -1, .events = POLLIN};
        int r = poll(pf, (nfds_t)nworkers, -1);
        if (r < 0 && errno != EINTR)
            die("poll: %s", strerror(errno));
        for (int i = 0; r > 0 && i < nworkers; i++) {
            if (!pf[i].revents)
                continue;
            msg_hdr h;
            if (read_full(wk[i].from, &h, sizeof h) != 0 || h.job < 0 || (size_t)h.job >= njobs)
                die("worker %d died", i);
            result_t *res = &results[h.job];
            for (size_t m = 0; m < nm; m++) {
                msg_mode mm;
                if (read_full(wk[i].from, &mm, sizeof mm) != 0)
                    die("worker %d died", i);
                res->verdict[m] = mm.verdict;
                res->text[m] = xmalloc((size_t)mm.len + 1);
                if (read_full(wk[i].from, res->text[m], mm.len) != 0)
                    die("worker %d died", i);
                res->text[m][mm.len] = '\0';
            }
            res->ms = h.ms;
            res->done = 1;
            g_leaks += (size_t)(h.leaks > 0 ? h.leaks : 0);
            wk[i].busy = 0;
            finished++;
        }
        while (printed < njobs && results[printed].done) {
            emit(printed, &results[printed]);
            printed++;
        }
    }
    for (int i = 0; i < nworkers; i++) {
        int32_t quit = -1;
        write_full(wk[i].to, &quit, sizeof quit);
        close(wk[i].to);
        close(wk[i].from);
    }
    for (int i = 0; i < nworkers; i++)
        while (waitpid(wk[i].pid, NULL, 0) < 0 && errno == EINTR) {
        }
    free(pf);
    free(wk);
}

/* ------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------ */

static const size_t *g_jobs;

static void emit_result(size_t i, result_t *r)
{
    const dcase *c = &g_cases[g_jobs[i]];
    if (g_self_check) {
        lmode *md = &g_modes[0];
        if (r->verdict[0] != V_SAME) {
            printf("UNSTABLE %s %s: %s\n", g_shname, c->name, r->text[0]);
            md->differ++;
        } else {
            md->passed++;
        }
        fflush(stdout);
        return;
    }
    for (size_t m = 0; m < g_nmodes; m++) {
        lmode *md = &g_modes[m];
        known_t *k = find_known(&md->known, c->name);
        if (r->verdict[m] != V_SAME) {
            if (k) {
                k->used = 1;
                md->known_n++;
                printf("known  %s %s: %s\n", md->label, c->name, r->text[m]);
            } else {
                md->differ++;
                printf("DIFF   %s %s: %s\n", md->label, c->name, r->text[m]);
            }
        } else {
            md->passed++;
            if (k) {
                k->used = 2;
                md->stale++;
                printf("STALE  %s %s: listed in %s:%d (%s) but no longer differs\n", md->label,
                       c->name, md->known.file, k->line, k->reason);
            }
        }
    }
    fflush(stdout);
}

static void usage(void)
{
    fputs("usage: diffrun [--shell PATH] [-v] [-j N] [--only NAME] [--self-check] [--suggest]\n"
          "               [--list] [--times] [MODE [--known FILE]]... [CORPUS-FILE-OR-DIR...]\n"
          "  MODE: --direct | --wrapper-local PROG ARG... -- | --wrapper-remote-shell PROG ARG... --\n",
          stderr);
    exit(2);
}

static pid_t g_main_pid;

/* at exit of the main process (die() included), not of a worker */
static void cleanup_base(void)
{
    if (g_base[0] && getpid() == g_main_pid) {
        rm_rf(g_base);
        g_base[0] = '\0';
    }
}

/* can this process trace a child of its (fork, TRACEME, exec, exit event)? */
static int probe_ptrace(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return 0;
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, 1);
            dup2(nul, 2);
        }
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
            _exit(125);
        char *argv[] = {(char *)"sh", (char *)"-c", (char *)":", NULL};
        char *envp[] = {NULL};
        execve("/bin/sh", argv, envp);
        _exit(127);
    }
    int ok = 0, saw_exit = 0, st;
    while (waitpid(pid, &st, 0) == pid) {
        if (WIFSTOPPED(st)) {
            int event = (st >> 16) & 0xff;
            if (WSTOPSIG(st) == SIGTRAP && event == 0 &&
                ptrace(PTRACE_SETOPTIONS, pid, NULL,
                       (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)) != 0)
                kill(pid, SIGKILL);
            if (event == PTRACE_EVENT_EXIT)
                saw_exit = 1;
            ptrace(PTRACE_CONT, pid, NULL, NULL);
            continue;
        }
        ok = saw_exit && WIFEXITED(st) && WEXITSTATUS(st) == 0;
        break;
    }
    return ok;
}

static lmode *add_mode(int wrapper, char **argv, size_t argc)
{
    if (g_nmodes >= MAX_MODES)
        die("at most %d modes", MAX_MODES);
    lmode *m = &g_modes[g_nmodes++];
    memset(m, 0, sizeof *m);
    m->wrapper = wrapper;
    m->argv = argv;
    m->argc = argc;
    return m;
}

static const char *kind_name(int wrapper)
{
    return wrapper == W_LOCAL ? "local" : wrapper == W_REMOTE_SHELL ? "remote-shell" : "direct";
}

/* the `NAME: fields` lines a known list lacks, for --suggest */
static void suggest_entries(const lmode *md, const size_t *jobs, size_t njobs,
                            const result_t *results, size_t m)
{
    printf("# entries %s lacks for %s:\n", md->known.file ? md->known.file : "(no list)",
           md->label);
    for (size_t i = 0; i < njobs; i++) {
        const char *name = g_cases[jobs[i]].name;
        if (results[i].verdict[m] == V_SAME || find_known(&md->known, name))
            continue;
        buf_t why = {0};
        const char *t = results[i].text[m];
        static const char *const fields[] = {"stdout:", "stderr:", "ending:", "cwd:",
                                             "setup failed"};
        for (size_t f = 0; f < sizeof fields / sizeof *fields; f++)
            if (strstr(t, fields[f]))
                buf_printf(&why, "%s%.*s", why.n ? ", " : "", (int)strcspn(fields[f], ":"),
                           fields[f]);
        printf("%s: %s differ\n", name, buf_str(&why));
        buf_free(&why);
    }
}

int main(int argc, char **argv)
{
    const char *only = NULL, *pending_known = NULL;
    int jobs_n = 0, suggest = 0, list = 0, times = 0;
    const char **corpus = xmalloc((size_t)argc * sizeof *corpus);
    size_t ncorpus = 0;
    lmode *last = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--shell") == 0 && i + 1 < argc) {
            g_shell = argv[++i];
        } else if (strcmp(a, "--known") == 0 && i + 1 < argc) {
            /* the list of the mode just named; before any mode, of the first one */
            if (last) {
                if (last->known.file)
                    die("two --known for one mode");
                load_known(&last->known, argv[++i]);
            } else {
                if (pending_known)
                    die("two --known for one mode");
                pending_known = argv[++i];
            }
        } else if (strcmp(a, "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(a, "-j") == 0 && i + 1 < argc) {
            jobs_n = atoi(argv[++i]);
            if (jobs_n < 1 || jobs_n > 64)
                usage();
        } else if (strcmp(a, "-v") == 0) {
            g_verbose = 1;
        } else if (strcmp(a, "--self-check") == 0) {
            g_self_check = 1;
        } else if (strcmp(a, "--times") == 0) {
            times = 1;
        } else if (strcmp(a, "--list") == 0) {
            list = 1;
        } else if (strcmp(a, "--suggest") == 0) {
            suggest = 1;
        } else if (strcmp(a, "--direct") == 0) {
            last = add_mode(W_NONE, NULL, 0);
        } else if (strcmp(a, "--wrapper-local") == 0 || strcmp(a, "--wrapper-remote-shell") == 0) {
            int kind = strcmp(a, "--wrapper-local") == 0 ? W_LOCAL : W_REMOTE_SHELL;
            int start = ++i;
            while (i < argc && strcmp(argv[i], "--") != 0)
                i++;
            if (i >= argc || i == start)
                die("%s needs PROG [ARG...] ending with --", a);
            last = add_mode(kind, &argv[start], (size_t)(i - start));
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage();
        } else if (a[0] == '-' && a[1]) {
            usage();
        } else {
            corpus[ncorpus++] = a;
        }
    }
    if (g_nmodes == 0)
        add_mode(W_NONE, NULL, 0);
    if (pending_known) {
        if (g_modes[0].known.file)
            die("two --known for one mode");
        load_known(&g_modes[0].known, pending_known);
    }
    if (g_shell[0] != '/')
        die("--shell takes an absolute path");
    if (access(g_shell, X_OK) != 0)
        die("%s: %s", g_shell, strerror(errno));
    const char *base = strrchr(g_shell, '/') + 1;
    if (strstr(base, "bash")) {
        g_kind = SH_BASH;
        g_argv0 = "bash";
    } else {
        g_kind = SH_SH;
        g_argv0 = "sh";
    }
    g_shname = g_argv0;
    for (size_t m = 0; m < g_nmodes; m++) {
        lmode *md = &g_modes[m];
        if (md->wrapper == W_NONE) {
            snprintf(md->label, sizeof md->label, "%s", g_shname);
        } else {
            const char *prog = strrchr(md->argv[0], '/') ? strrchr(md->argv[0], '/') + 1
                                                         : md->argv[0];
            snprintf(md->label, sizeof md->label, "%s+%s:%.60s", g_shname,
                     kind_name(md->wrapper), prog);
        }
    }
    if (ncorpus == 0) {
        struct stat st;
        if (stat("test/diff/corpus", &st) != 0)
            die("no corpus given (and no test/diff/corpus here)");
        corpus[ncorpus++] = "test/diff/corpus";
    }
    for (size_t i = 0; i < ncorpus; i++)
        load_corpus(corpus[i]);
    free(corpus);
    if (g_ncases == 0)
        die("the corpus holds no case");
    if (list) {
        for (size_t i = 0; i < g_ncases; i++)
            printf("%s%s%s %s:%d\n", g_cases[i].name, g_cases[i].shells & SH_BASH ? " bash" : "",
                   g_cases[i].shells & SH_SH ? " sh" : "", g_cases[i].file, g_cases[i].line);
        return 0;
    }

    const dcase *only_case = NULL;
    if (only) {
        only_case = find_case(only);
        if (!only_case)
            die("no case named %s", only);
        if (!(only_case->shells & g_kind))
            die("case %s is not for %s", only, g_shname);
    }

    signal(SIGPIPE, SIG_IGN);
    g_main_pid = getpid();
    atexit(cleanup_base);
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || tmpdir[0] != '/')
        tmpdir = "/tmp";
    char tmpreal[PATH_MAX];
    if (!realpath(tmpdir, tmpreal))
        die("%s: %s", tmpdir, strerror(errno));
    char leaf[64];
    snprintf(leaf, sizeof leaf, "shexec-diff-%ld", (long)getpid());
    path_join(g_base, tmpreal, leaf);
    mkdir_fresh(g_base);

    g_have_ptrace = probe_ptrace();
    if (!g_have_ptrace)
        printf("diffrun: ptrace is not available here: the final working directory is not "
               "compared\n");
    for (size_t m = 0; m < g_nmodes && !g_self_check; m++) {
        const lmode *md = &g_modes[m];
        printf("diffrun: mode %s: the library runs", md->label);
        for (size_t i = 0; i < md->argc; i++)
            printf(" %s", md->argv[i]);
        printf(" %s (%s wrapper kind); known differences: %s\n", g_shell,
               md->wrapper == W_REMOTE_SHELL ? "SHEXEC_WRAPPER_REMOTE_SHELL"
                                            : "SHEXEC_WRAPPER_LOCAL",
               md->known.file ? md->known.file : "(none)");
    }

    if (only_case) {
        const dcase *c = only_case;
        wctx w;
        wctx_init(&w, 0);
        buf_t reps[MAX_MODES];
        int verdicts[MAX_MODES];
        memset(reps, 0, sizeof reps);
        run_case(&w, c, g_self_check, 1, reps, verdicts);
        int fail = 0;
        for (size_t m = 0; m < n_result_modes(); m++) {
            const lmode *md = &g_modes[m];
            const known_t *k = g_self_check ? NULL : find_known(&md->known, only);
            printf("%s %s %s (%s:%d): %s%s\n", verdicts[m] == V_SAME ? "SAME" : "DIFF",
                   g_self_check ? g_shname : md->label, only, c->file, c->line,
                   verdicts[m] == V_SAME ? "no difference" : "", buf_str(&reps[m]));
            if (k)
                printf("listed as known in %s:%d: %s\n", md->known.file, k->line, k->reason);
            if (verdicts[m] != V_SAME && !k)
                fail = 1;
            if (verdicts[m] == V_SAME && k && md->wrapper == W_NONE)
                fail = 1;
            buf_free(&reps[m]);
        }
        close(w.sfd);
        cleanup_base();
        return fail;
    }

    size_t *jobs = xmalloc(g_ncases * sizeof *jobs), njobs = 0;
    for (size_t i = 0; i < g_ncases; i++)
        if (g_cases[i].shells & g_kind)
            jobs[njobs++] = i;
    g_jobs = jobs;
    if (jobs_n == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs_n = cpus < 1 ? 2 : (int)(cpus * 2);
        if (jobs_n < 2)
            jobs_n = 2;
        if (jobs_n > 8)
            jobs_n = 8;
    }
    printf("diffrun: %s (%s): %zu cases%s\n", g_shname, g_shell, njobs,
           g_self_check ? ", self-check (the plain shell against itself)" : "");
    fflush(stdout);
    int64_t t0 = now_ms();
    result_t *results = calloc(njobs ? njobs : 1, sizeof *results);
    if (!results)
        die("out of memory");
    run_all(jobs, njobs, jobs_n, results, emit_result);
    double secs = (double)(now_ms() - t0) / 1000.0;

    int fail = 0;
    if (g_self_check) {
        printf("diffrun: %s self-check: %zu cases in %.1f s: %zu stable, %zu unstable\n",
               g_shname, njobs, secs, g_modes[0].passed, g_modes[0].differ);
        printf("result: mode=%s-self-check cases=%zu passed=%zu differ=%zu known=0 stale=0\n",
               g_shname, njobs, g_modes[0].passed, g_modes[0].differ);
        fail = g_modes[0].differ > 0;
    }
    for (size_t m = 0; m < g_nmodes && !g_self_check; m++) {
        lmode *md = &g_modes[m];
        /* entries that name no case of this run are stale too */
        for (size_t i = 0; i < md->known.n; i++) {
            if (md->known.v[i].used)
                continue;
            const dcase *c = find_case(md->known.v[i].name);
            md->stale++;
            printf("STALE  %s %s: listed in %s:%d but %s\n", md->label, md->known.v[i].name,
                   md->known.file, md->known.v[i].line,
                   c ? "that case does not run for this shell" : "no case has that name");
        }
        if (suggest && md->differ)
            suggest_entries(md, jobs, njobs, results, m);
    }
    if (times) {
        /* the slowest cases, slowest first */
        size_t *order = xmalloc((njobs ? njobs : 1) * sizeof *order);
        for (size_t i = 0; i < njobs; i++)
            order[i] = i;
        for (size_t i = 1; i < njobs; i++)
            for (size_t j = i; j > 0 && results[order[j]].ms > results[order[j - 1]].ms; j--) {
                size_t t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        uint64_t sum = 0;
        for (size_t i = 0; i < njobs; i++)
            sum += results[i].ms;
        printf("# time spent in cases: %.1f s; by file:\n", (double)sum / 1000.0);
        for (size_t i = 0; i < njobs; i++) {
            const char *f = g_cases[jobs[i]].file;
            size_t k;
            for (k = 0; k < i && strcmp(g_cases[jobs[k]].file, f) != 0; k++) {
            }
            if (k < i)
                continue; /* counted with its first case */
            uint64_t fsum = 0;
            size_t fn = 0;
            for (k = i; k < njobs; k++)
                if (strcmp(g_cases[jobs[k]].file, f) == 0) {
                    fsum += results[k].ms;
                    fn++;
                }
            printf("#   %8.1f s  %4zu cases  %s\n", (double)fsum / 1000.0, fn, f);
        }
        printf("# the slowest cases:\n");
        for (size_t i = 0; i < njobs && i < 20; i++)
            printf("#   %6u ms  %s\n", results[order[i]].ms, g_cases[jobs[order[i]]].name);
        free(order);
    }
    for (size_t m = 0; m < g_nmodes && !g_self_check; m++) {
        lmode *md = &g_modes[m];
        int stale_fails = md->wrapper == W_NONE;
        printf("diffrun: %s: %zu cases in %.1f s: %zu passed, %zu differ (unexpected), %zu known, "
               "%zu stale-known%s\n",
               md->label, njobs, secs, md->passed, md->differ, md->known_n, md->stale,
               stale_fails || !md->stale ? "" : " (not failing: wrapper mode)");
        printf("result: mode=%s cases=%zu passed=%zu differ=%zu known=%zu stale=%zu\n", md->label,
               njobs, md->passed, md->differ, md->known_n, stale_fails ? md->stale : 0);
        if (md->differ || (stale_fails && md->stale))
            fail = 1;
    }
    if (g_leaks) {
        printf("diffrun: %zu leaks of processes or descriptors (see above): failing\n", g_leaks);
        fail = 1;
    }
    for (size_t i = 0; i < njobs; i++)
        for (size_t m = 0; m < n_result_modes(); m++)
            free(results[i].text[m]);
    free(results);
    free(jobs);
    cleanup_base();
    return fail;
}
