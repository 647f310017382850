/*
 * inputwait.c - whether a command waits for the host's input (see
 * inputwait.h).
 *
 * The signals are the ones Linux gives without tracing anyone: a process
 * blocked in read(2) (or readv, pread) of a descriptor, in select(2) of
 * descriptor 0 alone (Python's REPL, readline's wait), or in poll(2) of one
 * descriptor (read from /proc/PID/mem, which the kernel allows us for our
 * own descendants); the descriptor, looked up in /proc/PID/fd, is the pty's
 * terminal (or /dev/tty, the controlling terminal, which for a command's
 * processes is the run's pty) or the stdin pipe the host writes. A process
 * blocked in epoll (Node's readline) is not recognised.
 */
#include "loop/inputwait.h"

#include <stdlib.h>
#include <string.h>

#include "shx_config.h"

#if defined(__linux__)
#include <sys/syscall.h>
#endif

/* One number of the text at *p (decimal, or hex after 0x); 0 when none. */
static int number(const char **p, const char *end, uint64_t *out)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    int neg = s < end && *s == '-';
    if (neg)
        s++;
    int base = 10;
    if (end - s > 2 && s[0] == '0' && s[1] == 'x') {
        base = 16;
        s += 2;
    }
    uint64_t v = 0;
    const char *start = s;
    for (; s < end; s++) {
        int d = *s >= '0' && *s <= '9'   ? *s - '0'
                : base == 16 && *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
                                                        : -1;
        if (d < 0)
            break;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return 0; /* larger than any call or argument */
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (s == start || (s < end && *s != ' ' && *s != '\n'))
        return 0;
    *p = s;
    *out = neg ? (uint64_t)0 - v : v;
    return 1;
}

/* Whether nr is one of the calls listed (each -1 where this machine lacks it). */
static int is_one_of(uint64_t nr, const long *calls, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (calls[i] >= 0 && nr == (uint64_t)calls[i])
            return 1;
    return 0;
}

#if defined(SYS_read)
#define NR(x) (long)(x)
#else
#define NR(x) -1L
#endif

int shx_inputwait_parse(const char *text, size_t len, int *fd, uint64_t *addr)
{
    *fd = -1;
    *addr = 0;
    const char *p = text, *end = text + len;
    uint64_t nr, arg[6];
    if (!number(&p, end, &nr))
        return SHX_WAIT_NONE; /* "running", or nothing */
    for (int i = 0; i < 6; i++)
        if (!number(&p, end, &arg[i]))
            return SHX_WAIT_NONE; /* "-1 SP PC": blocked outside a call */
#if defined(SYS_read)
    static const long reads[] = {NR(SYS_read), NR(SYS_readv), NR(SYS_pread64),
#if defined(SYS_preadv)
                                 NR(SYS_preadv),
#endif
    };
    static const long selects[] = {
#if defined(SYS_select)
        NR(SYS_select),
#endif
        NR(SYS_pselect6)};
    static const long polls[] = {
#if defined(SYS_poll)
        NR(SYS_poll),
#endif
        NR(SYS_ppoll)};
    if (is_one_of(nr, reads, sizeof reads / sizeof *reads) && arg[0] <= 0x7fffffff) {
        *fd = (int)arg[0];
        return SHX_WAIT_FD;
    }
    if (is_one_of(nr, selects, sizeof selects / sizeof *selects) && arg[0] == 1) {
        *fd = 0; /* nfds 1: descriptor 0 is the only one it can watch */
        return SHX_WAIT_FD;
    }
    if (is_one_of(nr, polls, sizeof polls / sizeof *polls) && arg[1] == 1 && arg[0]) {
        *addr = arg[0];
        return SHX_WAIT_POLL1;
    }
#endif
    return SHX_WAIT_NONE;
}

#if SHX_HAVE_PROCFS || defined(__linux__)
#include <termios.h>

/* The flags a password reader may clear besides ECHO: the echo details
 * (pty.c leaves them set on a terminal without echo, where they do
 * nothing) and ISIG (glibc's getpass()). */
#if defined(ECHOCTL) && defined(ECHOKE)
#define READER_FLAGS (ECHOE | ECHOK | ECHONL | ISIG | ECHOCTL | ECHOKE)
#else
#define READER_FLAGS (ECHOE | ECHOK | ECHONL | ISIG)
#endif

int shx_inputwait_password(unsigned long lflag, int start_known, unsigned long start_lflag)
{
    if ((lflag & ECHO) || !(lflag & ICANON))
        return 0;
    if (!start_known || (start_lflag & ECHO))
        return 1;
    return ((lflag ^ start_lflag) & READER_FLAGS) != 0;
}
#endif

#if SHX_HAVE_PROCFS

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "shx/platform.h"
#include <termios.h>
#include <unistd.h>

/* What a descriptor of pid is, through /proc (0, or -1). */
static int fd_id(pid_t pid, int fd, shx_file_id *id)
{
    char path[64];
    (void)snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
    return shx_file_id_of(path, -1, id);
}

/* The descriptor pid polls alone, from its memory at addr; -1 unknown. */
static int polled_fd(pid_t pid, uint64_t addr)
{
    char path[64];
    (void)snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int mem = open(path, O_RDONLY | O_CLOEXEC);
    if (mem < 0)
        return -1;
    struct pollfd pfd;
    ssize_t got = pread(mem, &pfd, sizeof pfd, (off_t)addr);
    close(mem);
    return got == (ssize_t)sizeof pfd && (pfd.events & POLLIN) ? pfd.fd : -1;
}

/* What pid is blocked reading: a descriptor number, or -1. */
static int reading_fd(pid_t pid)
{
    char path[64], text[256];
    (void)snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return -1;
    ssize_t len = read(f, text, sizeof text - 1);
    close(f);
    if (len <= 0)
        return -1;
    int fd;
    uint64_t addr;
    switch (shx_inputwait_parse(text, (size_t)len, &fd, &addr)) {
    case SHX_WAIT_FD:
        return fd;
    case SHX_WAIT_POLL1:
        return polled_fd(pid, addr);
    default:
        return -1;
    }
}

int shx_inputwait_probe(const pid_t *pids, size_t n, const shx_inputwait_target *target,
                        int *echo_off)
{
    *echo_off = 0;
    shx_file_id want;
    int pty = target->pty_master >= 0;
    if (pty) {
        char slave[128];
        if (ptsname_r(target->pty_master, slave, sizeof slave) != 0 ||
            shx_file_id_of(slave, -1, &want) != 0)
            return -1;
    } else if (target->stdin_pipe < 0 || shx_file_id_of(NULL, target->stdin_pipe, &want) != 0) {
        return 0; /* stdin is /dev/null: nothing waits for the host */
    }
    for (size_t i = 0; i < n; i++) {
        int fd = reading_fd(pids[i]);
        shx_file_id st;
        if (fd < 0 || fd_id(pids[i], fd, &st) != 0)
            continue;
        /* the pty's terminal, or /dev/tty (5,0): a command's controlling
         * terminal is the run's pty */
        int match = pty ? S_ISCHR(st.mode) && (st.rdev == want.rdev || st.rdev == makedev(5, 0))
                        : S_ISFIFO(st.mode) && st.ino == want.ino && st.dev == want.dev;
        if (!match)
            continue;
        struct termios tio;
        if (pty && tcgetattr(target->pty_master, &tio) == 0)
            *echo_off = shx_inputwait_password(tio.c_lflag, target->start_known,
                                               target->start_lflag);
        return 1;
    }
    return 0;
}

#else /* !SHX_HAVE_PROCFS */

int shx_inputwait_probe(const pid_t *pids, size_t n, const shx_inputwait_target *target,
                        int *echo_off)
{
    (void)pids;
    (void)n;
    (void)target;
    *echo_off = 0;
    return -1;
}

#endif
