/*
 * channels.c - the descriptors a command's shell gets besides its pipes:
 * the record channel (a pipe whose write end it gets at SHX_RECORD_FD) and,
 * for a command too large for one argument, the file its script is read
 * from.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform.h"
#include "session.h"

/* A descriptor holding the script, read from its start by whoever opens
 * /dev/fd/N: a memfd where there is one, else an unlinked temporary file. */
int shx_script_file(shexec_session *s, const shx_buf *script, int *out)
{
    int fd = shx_anon_file();
    if (fd < 0)
        return shx_fail(s, errno == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS,
                        "cannot make a file for a large command: %s", strerror(errno));
    size_t done = 0;
    while (done < script->len) {
        ssize_t w = write(fd, script->data + done, script->len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            close(fd);
            return shx_fail(s, e == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS,
                            "cannot write a large command to its file: %s", strerror(e));
        }
        done += (size_t)w;
    }
    /* passed from 10 up, like every descriptor the child gets at a fixed number */
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    int e = errno;
    close(fd);
    if (high < 0)
        return shx_fail(s, SHEXEC_ESYS, "cannot move a descriptor: %s", strerror(e));
    *out = high;
    return SHEXEC_OK;
}

/* The record channel: a pipe, both ends close-on-exec, the read end
 * non-blocking; the write end, passed at a fixed number, is moved to 10 or
 * above when it is lower (spawn.h), which costs calls only in a host that
 * has few descriptors open. */
int shx_record_pipe(shexec_session *s, int fds[2])
{
    if (shx_pipe_cloexec(fds) != 0)
        return shx_fail(s, errno == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS,
                        "cannot create a pipe: %s", strerror(errno));
    if (fds[1] < 10) {
        int high = fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
        int e = errno;
        close(fds[1]);
        fds[1] = high;
        if (high < 0) {
            close(fds[0]);
            fds[0] = -1;
            return shx_fail(s, SHEXEC_ESYS, "cannot move a descriptor: %s", strerror(e));
        }
    }
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    return SHEXEC_OK;
}
