/*
 * platform.h - the C library's half of the platform seam: what POSIX.1-2008
 * leaves out or spells differently, each behind one small function, with
 * the Linux and libc extensions used where lib/probe.sh found them at build
 * time (shx_config.h: SHX_HAVE_*) and the plain POSIX way where not. The
 * process half (pidfds here, /proc in procfs.h) is what proc.c and group.c
 * build on.
 *
 * glibc versions its symbols, and the library must load on glibc 2.28: a
 * function newer than that is either avoided (stat, pthread_sigmask: see
 * platform.c) or referenced weakly and used only when the running glibc
 * has it (the *_np file actions and _Fork: libc_ext.c).
 */
#ifndef SHX_PLATFORM_H
#define SHX_PLATFORM_H

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "shx_config.h"

/* ---- processes ------------------------------------------------------------ */

/* A pidfd on pid (close-on-exec), or -1 with errno (ENOSYS where pidfds are
 * compiled out or the kernel has none, ESRCH when pid is gone). */
int shx_pidfd_open(pid_t pid);
/* Signal the process a pidfd refers to; -1 with errno. */
int shx_pidfd_send_signal(int pidfd, int sig);
/* 1 when this build can use pidfds at all (the kernel may still refuse). */
int shx_pidfd_compiled(void);

/* ---- descriptors and files ------------------------------------------------ */

/* A pipe whose both ends are close-on-exec. With pipe2 atomically; without
 * it, a fork+exec by another host thread between pipe() and fcntl() can
 * inherit an end (POSIX.1-2008 has no atomic way). */
int shx_pipe_cloexec(int fds[2]);
/* Raise a pipe's capacity where the kernel allows it (Linux); best effort. */
void shx_pipe_grow(int fd, int bytes);
/* stat()'s st_mode for path; 0, or -1 with errno. */
int shx_path_mode(const char *path, mode_t *mode);
/* What a file is, as stat() says (the type and mode, the device and inode
 * it is on, and the device a device file is), by path or (path NULL) by
 * descriptor; devices as makedev() makes them. 0, or -1 with errno. */
typedef struct shx_file_id {
    mode_t mode;
    unsigned long long dev, ino, rdev;
} shx_file_id;
int shx_file_id_of(const char *path, int fd, shx_file_id *out);
/* What the file open at fd is (device and inode), to tell later whether the
 * descriptor still holds it: 0, or -1 (fd not open). */
int shx_fd_identity(int fd, unsigned long long id[2]);
/*
 * The calling process's descriptors >= from that an exec would pass on (open
 * and without FD_CLOEXEC), for a spawn without closefrom: into a malloc'd
 * array *fds (NULL when none), their count in *n. Listed from /proc/self/fd
 * on Linux; elsewhere every descriptor below the open-files limit is
 * checked, 1024 to a poll() call. 0, or -1 (ENOMEM).
 */
int shx_inheritable_fds(int from, int **fds, size_t *n);

/* An anonymous file (close-on-exec, no name left in any directory) to
 * write and hand on: a memfd where there is one, else a file made in /tmp
 * and unlinked at once. -1 with errno. */
int shx_anon_file(void);

/* len bytes of zeroed private memory, backed only as it is touched where
 * the system allows; MAP_FAILED with errno. Anonymous mappings are
 * POSIX.1-2024; before it, a private mapping of /dev/zero. */
void *shx_map_zeroed(size_t len);

/*
 * poll() with the timeout in nanoseconds (negative: none): ppoll where
 * there is one, so that a deadline is kept to the timer's precision; else
 * poll() with the timeout rounded up to whole milliseconds (never early).
 */
int shx_poll_ns(struct pollfd *fds, nfds_t n, int64_t timeout_ns);

/* ---- signals, strings, terminals ----------------------------------------- */

/* The calling thread's signal mask, as pthread_sigmask. */
int shx_thread_sigmask(int how, const sigset_t *set, sigset_t *old);
/* The first occurrence of needle in hay, or NULL (memmem is POSIX.1-2024). */
static inline const void *shx_memmem(const void *hay, size_t hay_len, const void *needle,
                                     size_t needle_len)
{
#if SHX_HAVE_MEMMEM
    return memmem(hay, hay_len, needle, needle_len);
#else
    if (needle_len == 0)
        return hay;
    const unsigned char *h = hay, *nd = needle;
    while (hay_len >= needle_len) {
        const unsigned char *first = memchr(h, nd[0], hay_len - needle_len + 1);
        if (!first)
            return NULL;
        if (memcmp(first, nd, needle_len) == 0)
            return first;
        hay_len -= (size_t)(first - h) + 1;
        h = first + 1;
    }
    return NULL;
#endif
}
/* The slave's path of pty master fd into buf; 0, or -1 with errno. */
int shx_ptsname(int fd, char *buf, size_t cap);

/* ---- what this build has, for the tests and the documentation ----------- */

enum {
    SHX_PLATFORM_PIDFD = 1 << 0,     /* pidfds: waiting without polling, anchors */
    SHX_PLATFORM_PROCFS = 1 << 1,    /* /proc: members and escapees found */
    SHX_PLATFORM_CLOSEFROM = 1 << 2, /* posix_spawn closes every inherited descriptor */
    SHX_PLATFORM_CHDIR_NP = 1 << 3,  /* posix_spawn changes directory (else a sh trampoline) */
    SHX_PLATFORM_SETSID = 1 << 4,    /* a pty becomes the command's controlling terminal */
    SHX_PLATFORM_BIG_PIPES = 1 << 5, /* task pipes can be grown */
    SHX_PLATFORM_PPOLL = 1 << 6,     /* deadlines waited for to the nanosecond */
    SHX_PLATFORM_WATCHDOG = 1 << 7,  /* the host-death watchdog (WATCHDOG=0 leaves it out) */
    SHX_PLATFORM_PERSIST = 1 << 8,   /* persisted shell state (PERSIST=0 leaves it out) */
    SHX_PLATFORM_OWN_SPAWN = 1 << 9, /* the library's own spawn (forkexec.c), which resets every
                                        signal, a libc's internal ones too; else posix_spawn */
    SHX_PLATFORM_OUTPUT = 1 << 10,   /* the output filters: redaction, spill (OUTPUT=0 leaves them out) */
};
/* The SHX_PLATFORM_* this build has and (for the *_np ones) the running
 * libc provides. */
unsigned shx_platform_features(void);

#endif
