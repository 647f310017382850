/*
 * watchdog_fork.c - what the fork of the host does to become the watchdog
 * (see contain_hook.h): its own session, default signal dispositions, nothing
 * of the host's open, and the host's memory given back. Async-signal-safe
 * calls only, as in watchdog_proc.c.
 */

#include "shx_config.h"
#include "contain/watchdog_fork.h"

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

#if SHX_HAVE_PROCFS && !defined(SANITIZED)
#define MIB ((uintptr_t)1 << 20)

static uintptr_t page_down(uintptr_t x)
{
    return x & ~(uintptr_t)4095;
}

static uintptr_t page_up(uintptr_t x)
{
    return page_down(x + 4095);
}

/* Note [lo, hi) minus the kept intervals as ranges to drop. */
static void note_drops(shx_wd_arena *a, int *ndrop, uintptr_t lo, uintptr_t hi,
                       const uintptr_t keep[][2], int nkeep)
{
    for (int k = 0; k < nkeep && lo < hi; k++) {
        uintptr_t k_lo = page_down(keep[k][0]), k_hi = page_up(keep[k][1]);
        if (k_hi <= lo || k_lo >= hi)
            continue;
        if (k_lo > lo) /* the part below this one: against the other keeps */
            note_drops(a, ndrop, lo, k_lo, keep + k + 1, nkeep - k - 1);
        lo = k_hi;
    }
    if (lo < hi && hi - lo >= (uintptr_t)16 * 4096 && *ndrop < SHX_WD_DROPS) {
        a->drop[*ndrop][0] = lo;
        a->drop[*ndrop][1] = hi;
        ++*ndrop;
    }
}

static uintptr_t hex(const char **p)
{
    uintptr_t v = 0;
    for (const char *s = *p;; s++) {
        int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
        if (d < 0) {
            *p = s;
            return v;
        }
        v = v * 16 + (uintptr_t)d;
    }
}

/*
 * The fork shares the host's memory copy-on-write: every page the host
 * writes while the watchdog lives would be copied once, for as long as the
 * session lives. So the watchdog gives back the host's big anonymous
 * mappings (its heap, other threads' stacks), all but what it uses itself:
 * its tables, its stack (from a MiB below where it is now to the top of the
 * mapping, where a thread's storage also lies) and a MiB either side of its
 * thread storage (errno, the thread control block), which may share one
 * mapping with the host's heap. Not under sanitizers or valgrind, which
 * keep their own books in such mappings.
 */
static void drop_host_memory(shx_wd_arena *a)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    uintptr_t sp = (uintptr_t)&fd, tls = (uintptr_t)&errno;
    uintptr_t keep[3][2] = {{(uintptr_t)a, (uintptr_t)a + sizeof *a},
                            {tls > MIB ? tls - MIB : 0, tls + MIB},
                            {sp > MIB ? sp - MIB : 0, sp + MIB}};
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
            const char *p = line;
            uintptr_t lo = hex(&p);
            p += *p == '-';
            uintptr_t hi = hex(&p);
            int rw_private = p[0] == ' ' && p[1] == 'r' && p[2] == 'w' && p[4] == 'p';
            const char *path = p;
            for (int f = 0; f < 4 && *path; f++) { /* perms, offset, dev, inode */
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
            if (rw_private && anon && hi - lo >= MIB) {
                keep[2][1] = sp >= lo && sp < hi ? hi : sp + MIB; /* the stack's top */
                note_drops(a, &ndrop, lo, hi, (const uintptr_t(*)[2])keep, 3);
            }
            line = nl + 1;
        }
        len -= (size_t)(line - buf);
        memmove(buf, line, len);
    }
    close(fd);
    for (int i = 0; i < ndrop && !tooling; i++)
        // NOLINTNEXTLINE(performance-no-int-to-ptr): /proc/self/maps gives numbers
        munmap((void *)a->drop[i][0], a->drop[i][1] - a->drop[i][0]);
}
#else
static void drop_host_memory(shx_wd_arena *a)
{
    (void)a;
}
#endif

#ifdef NSIG
#define SIGNALS_MAX NSIG
#else
#define SIGNALS_MAX 128 /* NSIG is not POSIX.1-2008 */
#endif

/* Its own session (no terminal's signals), default dispositions (no host
 * handler may run here), nothing of the host's open but the read end. */
static void detach(shx_wd_arena *a)
{
    setsid();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < SIGNALS_MAX; sig++) /* past the last: EINVAL, harmless */
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
#if SHX_HAVE_PROCFS && defined(SYS_close_range)
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
