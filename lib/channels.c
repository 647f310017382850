/*
 * channels.c - the run's channel: the one descriptor a command's shell gets
 * besides its standard ones. It is a file of the run's own, made for it and
 * closed once read: the prelude the library wrote at its start, then
 * (opened for appending) whatever the shell reports. A file, not a pipe:
 * the shell's writes never wake the host nor wait for it, whatever their
 * size. A new one per run, never reused: the shell's children inherit it,
 * so a process left behind by one run holds that run's file and nothing of
 * a later one. Also: whether /dev/fd/N opens the file behind descriptor N
 * here (a shell reads the prelude that way).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "channels.h"
#include "script.h"

#include "platform.h"
#include "base.h"

/* fd, moved to 10 or above when it is lower (it is closed either way), in
 * *out. A limit on open descriptors of 10 or less leaves no such number. */
static int move_high(shexec_session *s, int fd, int *out)
{
    if (fd >= 10) {
        *out = fd;
        return SHEXEC_OK;
    }
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    int e = errno;
    close(fd);
    if (high < 0)
        return shx_fail(s, SHEXEC_ESYS, "cannot move a descriptor to 10 or above: %s",
                        e == EINVAL ? "the limit on open descriptors is 10 or less" : strerror(e));
    *out = high;
    return SHEXEC_OK;
}

/* The prelude at the file's start, written without moving the file's
 * offset: the shell reads it from there (a loader, through this very
 * offset); what the shell writes goes after it, whatever the offset, as the
 * file is opened for appending. */
static int write_prelude(int fd, const char *p, size_t n)
{
    off_t at = 0;
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : ENOSPC;
        p += w;
        n -= (size_t)w;
        at += w;
    }
    return fcntl(fd, F_SETFL, O_APPEND) == 0 ? 0 : errno;
}

int shx_channel_open(shexec_session *s, const shx_buf *prelude, int *out)
{
    *out = -1;
    int fd = shx_anon_file();
    if (fd < 0)
        return shx_fail(s, errno == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS,
                        "cannot make the run's channel: %s", strerror(errno));
    int e = write_prelude(fd, prelude->data ? prelude->data : "", prelude->len);
    if (e != 0) {
        close(fd);
        return shx_fail(s, e == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS,
                        "cannot write the run's channel: %s", strerror(e));
    }
    /* passed from 10 up, like every descriptor the child gets at a fixed number */
    return move_high(s, fd, out);
}

int shx_channel_read(int fd, size_t from, shx_record *rec)
{
    /* its size (lseek, not fstat: glibc before 2.33 has no fstat symbol) */
    off_t end = lseek(fd, 0, SEEK_END);
    if (end < 0)
        return -1;
    char buf[16384];
    off_t at = (off_t)from;
    while (at < end && !rec->over && !rec->nomem) {
        size_t want = end - at < (off_t)sizeof buf ? (size_t)(end - at) : sizeof buf;
        ssize_t n = pread(fd, buf, want, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        shx_record_feed(rec, buf, (size_t)n);
        at += n;
    }
    return 0;
}

int shx_devfd_works(int fd)
{
    char path[32];
    (void)snprintf(path, sizeof path, "/dev/fd/%d", fd);
    int again = open(path, O_RDONLY | O_CLOEXEC);
    if (again < 0)
        return 0;
    close(again);
    return 1;
}

/* The channel's number in the shell: SHX_CHANNEL_FD, or lower where the
 * limit on open descriptors is lower (a dup2 above it fails). */
int shx_channel_number(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur <= (rlim_t)SHX_CHANNEL_FD + 1)
        return rl.rlim_cur >= 12 ? (int)rl.rlim_cur - 1 : -1;
    return SHX_CHANNEL_FD;
}
