/*
 * testutil.c - see testutil.h.
 */
#include "testutil.h"

#include <shexec.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
/* again, now that cmocka.h declares what the sharding takes */
#include "testutil.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "testhook.h"

/* What descriptor `name` of /proc/self/fd is open on, in target ("" when
 * unknown). */
static void fd_target(const char *name, char target[256])
{
    char path[300];
    (void)snprintf(path, sizeof path, "/proc/self/fd/%s", name);
    ssize_t len = readlink(path, target, 255);
    target[len > 0 ? len : 0] = '\0';
}

/* The prelude a session keeps for all its runs (channels.h). */
static int is_kept_prelude(const char *target)
{
    return strncmp(target, "/memfd:shexec-kept", 18) == 0 ||
           strncmp(target, "/tmp/shexec-kept", 16) == 0;
}

/* The open descriptors, opendir's own included, but the prelude a session
 * keeps for all its runs (one per session: tu_kept_prelude_fd); with
 * records_only, only those of a run's files (a memfd named "shexec", or
 * the /tmp fallback). */
static int count_fds(int records_only)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char target[256];
        fd_target(e->d_name, target);
        if (is_kept_prelude(target))
            continue;
        if (records_only && strncmp(target, "/memfd:shexec", 13) != 0 &&
            strncmp(target, "/tmp/shexec-", 12) != 0)
            continue;
        n++;
    }
    closedir(d);
    return n;
}

int tu_kept_prelude_fd(ino_t *ino)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int found = -1, n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char target[256];
        fd_target(e->d_name, target);
        if (is_kept_prelude(target)) {
            found = atoi(e->d_name);
            n++;
        }
    }
    closedir(d);
    struct stat st;
    if (n == 1 && fstat(found, &st) == 0)
        *ino = st.st_ino;
    return n > 1 ? -2 : found;
}

int tu_count_fds(void)
{
    int n = count_fds(0);
    return n < 0 ? -1 : n - 1; /* the directory's own descriptor */
}

int tu_count_record_files(void)
{
    return count_fds(1);
}

int tu_count_children(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0, pid;
    while (fscanf(f, "%d", &pid) == 1)
        n++;
    fclose(f);
    return n;
}

int tu_under_valgrind(void)
{
    const char *v = getenv("VALGRIND");
    return v && strcmp(v, "1") == 0;
}

int tu_proc_stat(pid_t pid, char *state, pid_t *pgrp, unsigned long long *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* after the name: state, ppid, pgrp, then 18 fields to starttime (22) */
    const char *p = strrchr(buf, ')');
    int group;
    if (!p || sscanf(p + 1, " %c %*d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                     "%*d %*d %*d %llu", state, &group, start) != 3)
        return -1;
    *pgrp = (pid_t)group;
    return 0;
}

long long tu_proc_status(pid_t pid, const char *key)
{
    char path[64];
    if (pid)
        snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    else
        snprintf(path, sizeof path, "/proc/self/status");
    return tu_file_field(path, key);
}

long long tu_file_field(const char *path, const char *key)
{
    char line[256];
    FILE *f = fopen(path, "r");
    size_t klen = strlen(key);
    long long n = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, klen) && line[klen] == ':' &&
            sscanf(line + klen + 1, "%lld", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

int tu_pid_alive(pid_t pid)
{
    char state;
    pid_t pgrp;
    unsigned long long start;
    return tu_proc_stat(pid, &state, &pgrp, &start) == 0 && state != 'Z' && state != 'X';
}

int64_t tu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tu_wait_pid_gone(pid_t pid, int ms)
{
    int64_t end = tu_now_ms() + ms;
    while (tu_pid_alive(pid)) {
        if (tu_now_ms() > end)
            return 0;
        usleep(2000);
    }
    return 1;
}

const char *tu_helper(const char *name)
{
    static char path[4096];
    const char *dir = getenv("SHEXEC_TEST_HELPERS");
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "build/default/test/helpers", name);
    return path;
}

const char *tu_mkdtemp(void)
{
    static char dir[256];
    snprintf(dir, sizeof dir, "/tmp/shexec-test-XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    return dir;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void tu_rmtree(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int leak_fds = -1;

void tu_leak_begin(void)
{
    leak_fds = tu_count_fds();
}

void tu_leak_end(void)
{
    int fds = tu_count_fds();
    if (fds != leak_fds)
        fail_msg("descriptor leak: %d open before, %d after", leak_fds, fds);
    int kids = tu_count_children();
    if (kids != 0)
        fail_msg("%d child process(es) left behind", kids);
}

int tu_count_children_all(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* the thread just ended; its children went to another */
        int pid;
        while (fscanf(f, "%d", &pid) == 1)
            n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

long tu_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

void tu_compiled_out(const char *what)
{
    printf("[ SKIPPED  ] needs %s: compiled out of this build (TOOLS=0)\n", what);
    skip();
}

int tu_platform_has(unsigned feature, const char *what)
{
    if (shx_test_platform() & feature)
        return 1;
    printf("[ SKIPPED  ] needs %s: compiled out of this build (PORTABLE=1, WATCHDOG=0, PERSIST=0, "
           "OUTPUT=0)\n",
           what);
    return 0;
}

const char *tu_leftover_id(const struct shexec_run *run)
{
    const char *id = "unset";
    shexec_run_leftovers(run, &id);
    return id;
}

int tu_http_get(const char *text, int ms)
{
    const char *port = text ? strstr(text, " port ") : NULL;
    if (!port)
        return 0;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port + 6))};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct timeval bound = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    static const char get[] = "GET / HTTP/1.0\r\n\r\n";
    char reply[16] = "", rest[4096];
    size_t got = 0;
    ssize_t n = -1;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound) == 0 &&
        connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0 &&
        write(fd, get, sizeof get - 1) == (ssize_t)(sizeof get - 1)) {
        while (got < sizeof reply - 1 && (n = read(fd, reply + got, sizeof reply - 1 - got)) > 0)
            got += (size_t)n;
        while (n > 0 && (n = read(fd, rest, sizeof rest)) > 0) /* to its end: it is over */
            ;
    }
    close(fd);
    return n == 0 && strncmp(reply, "HTTP/1.0 200", 12) == 0;
}

int tu_run_group_tests(const char *group, const struct CMUnitTest *tests, size_t n,
                       CMFixtureFunction setup, CMFixtureFunction teardown)
{
    const char *spec = getenv("SHEXEC_TEST_SHARD");
    unsigned k = 0, shards = 0;
    char end;
    if (!spec || sscanf(spec, "%u/%u%c", &k, &shards, &end) != 2 || shards < 2 || k < 1 || k > shards)
        return _cmocka_run_group_tests(group, tests, n, setup, teardown);
    struct CMUnitTest *part = calloc(n ? n : 1, sizeof *part);
    if (!part) {
        fprintf(stderr, "testutil: out of memory for shard %s\n", spec);
        return 1;
    }
    size_t m = 0;
    for (size_t i = k - 1; i < n; i += shards)
        part[m++] = tests[i];
    int rc = _cmocka_run_group_tests(group, part, m, setup, teardown);
    free(part);
    return rc;
}
