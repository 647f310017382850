/*
 * watchdog_fork.c - what the fork of the host does to become the watchdog
 * (see watchdog.h): its own session, default signal dispositions, nothing
 * of the host's open, and the host's memory given back. Async-signal-safe
 * calls only, as in watchdog_proc.c.
 */
#include "watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

#if defined(__linux__) && !defined(SANITIZED)
/*
 * The fork shares the host's memory copy-on-write: every page the host
 * writes while the watchdog lives would be copied once, for as long as the
 * session lives. So the watchdog gives back the big anonymous mappings (the
 * host's heap, other threads' stacks), keeping its own stack, thread
 * storage and tables. Not under sanitizers or valgrind, which keep their
 * own books in such mappings.
 */
static void drop_host_memory(shx_wd_arena *a)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    uintptr_t keep[3] = {(uintptr_t)&fd, (uintptr_t)&errno, (uintptr_t)a};
    uintptr_t (*drop)[2] = a->drop; /* in the arena: kept whatever the host's storage is */
    int ndrop = 0, tooling = 0;
    char *buf = a->dents;
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, sizeof a->dents - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        char *line = buf, *nl;
        while ((nl = memchr(line, '\n', len - (size_t)(line - buf)))) {
            *nl = '\0';
            /* "start-end perms offset dev inode   path" */
            unsigned long long lo = 0, hi = 0;
            const char *p = line;
            while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))
                lo = lo * 16 + (unsigned long long)(*p <= '9' ? *p - '0' : *p - 'a' + 10), p++;
            if (*p == '-')
                p++;
            while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))
                hi = hi * 16 + (unsigned long long)(*p <= '9' ? *p - '0' : *p - 'a' + 10), p++;
            int rw_private = p[0] == ' ' && p[1] == 'r' && p[2] == 'w' && p[4] == 'p';
            const char *path = p;
            for (int f = 0; f < 5 && *path; f++) { /* to the sixth field */
                while (*path == ' ')
                    path++;
                while (*path && *path != ' ')
                    path++;
            }
            while (*path == ' ')
                path++;
            if (strstr(path, "valgrind") || strstr(path, "vgpreload"))
                tooling = 1;
            int anon = !*path || strcmp(path, "[heap]") == 0;
            int kept = 0;
            for (int k = 0; k < 3; k++)
                kept |= keep[k] >= lo && keep[k] < hi;
            if (rw_private && anon && !kept && hi - lo >= (1u << 20) && ndrop < SHX_WD_DROPS) {
                drop[ndrop][0] = (uintptr_t)lo;
                drop[ndrop][1] = (uintptr_t)hi;
                ndrop++;
            }
            line = nl + 1;
        }
        len -= (size_t)(line - buf);
        memmove(buf, line, len);
    }
    close(fd);
    /* the arena is one mapping, possibly merged with a neighbour: never
     * drop a range that overlaps it */
    uintptr_t a_lo = (uintptr_t)a, a_hi = a_lo + sizeof *a;
    for (int i = 0; i < ndrop && !tooling; i++)
        if (drop[i][1] <= a_lo || drop[i][0] >= a_hi)
            munmap((void *)drop[i][0], drop[i][1] - drop[i][0]);
}
#else
static void drop_host_memory(shx_wd_arena *a)
{
    (void)a;
}
#endif

/* Its own session (no terminal's signals), default dispositions (no host
 * handler may run here), nothing of the host's open but the read end. */
static void detach(shx_wd_arena *a)
{
    setsid();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd < 3 && null >= 0; fd++)
        if (fd != null)
            dup2(null, fd);
    if (a->fd != 3) {
        dup2(a->fd, 3);
        a->fd = 3;
    }
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 4u, ~0u, 0u) == 0)
        return;
#endif
    for (int fd = 4; fd <= a->max_fd; fd++)
        close(fd);
}

void shx_wd_become(shx_wd_arena *a)
{
    detach(a);
    drop_host_memory(a);
}
