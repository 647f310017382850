/*
 * pty.c - pseudo-terminals (see pty.h). The child becomes a session leader
 * (POSIX_SPAWN_SETSID) and opens the slave without O_NOCTTY, which makes it
 * its controlling terminal; spawn.c does that with file actions.
 */
#if !defined(_GNU_SOURCE) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt: the XSI part of POSIX */
#endif
#include "spawn/pty.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "shx/platform.h"

/* ^X shown as "^X" and line kill erasing the line: not POSIX, but where the
 * terminal has them they belong with echo */
#if defined(ECHOCTL) && defined(ECHOKE)
#define ECHO_EXTRA (ECHOCTL | ECHOKE)
#else
#define ECHO_EXTRA 0
#endif

static int fail(shx_buf *err, const char *what, int fd)
{
    int e = errno;
    shx_buf_clear(err);
    shx_buf_printf(err, "cannot set up a pseudo-terminal (%s): %s", what, strerror(e));
    if (fd >= 0)
        close(fd);
    errno = e;
    return -1;
}

/* A master, close-on-exec: atomically where posix_openpt takes O_CLOEXEC
 * (Linux); POSIX.1-2008 allows only O_RDWR and O_NOCTTY there. */
static int open_master(void)
{
#if SHX_PORTABLE
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m >= 0 && fcntl(m, F_SETFD, FD_CLOEXEC) != 0) {
        int e = errno;
        close(m);
        errno = e;
        return -1;
    }
    return m;
#else
    return posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
#endif
}

int shx_pty_resize(int master, uint16_t cols, uint16_t rows)
{
    struct winsize ws = {.ws_row = rows, .ws_col = cols};
    return ioctl(master, TIOCSWINSZ, &ws);
}

int shx_pty_open(uint16_t cols, uint16_t rows, int echo, char *slave_path, size_t cap,
                 unsigned long *lflag, shx_buf *err)
{
    int m = open_master();
    if (m < 0)
        return fail(err, "posix_openpt", -1);
    if (grantpt(m) != 0)
        return fail(err, "grantpt", m);
    if (unlockpt(m) != 0)
        return fail(err, "unlockpt", m);
    if (shx_ptsname(m, slave_path, cap) != 0)
        return fail(err, "ptsname", m);

    /* the line discipline belongs to the pty: set it through a slave handle
     * that is not our controlling terminal */
    int sl = open(slave_path, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (sl < 0)
        return fail(err, "open slave", m);
    struct termios t;
    if (tcgetattr(sl, &t) != 0) {
        close(sl);
        return fail(err, "tcgetattr", m);
    }
    /* without echo too the echo details stay set: they do nothing while
     * ECHO is off, and a password reader clears some of them (bash's `read
     * -s` ECHOK), which is how a terminal that never echoes still tells a
     * password prompt (inputwait.h) */
    t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
    t.c_lflag |= ECHOE | ECHOK | ECHO_EXTRA | ICANON | ISIG;
    if (echo)
        t.c_lflag |= ECHO;
    t.c_oflag &= ~(tcflag_t)OPOST;
    t.c_iflag &= ~(tcflag_t)(IXON | IXOFF); /* ^S in output must not freeze the command */
    if (tcsetattr(sl, TCSANOW, &t) != 0) {
        close(sl);
        return fail(err, "tcsetattr", m);
    }
    close(sl);
    *lflag = t.c_lflag;
    struct winsize ws = {.ws_row = rows, .ws_col = cols};
    if (ioctl(m, TIOCSWINSZ, &ws) != 0)
        return fail(err, "TIOCSWINSZ", m);
    fcntl(m, F_SETFL, O_NONBLOCK);
    return m;
}
