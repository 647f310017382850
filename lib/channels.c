/*
 * channels.c - the descriptors a command's shell gets besides its pipes:
 * the record channel (a file it gets at SHX_RECORD_FD) and,
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
    return move_high(s, fd, out);
}

/* The record channel: an anonymous file the shell gets at SHX_RECORD_FD
 * (the same open file, so its writes advance one offset from 0: where it
 * ends is where the record ends) and the library reads from its start once
 * the shell has exited. A file, not a pipe: the shell's writes never wake
 * the host nor wait for it, whatever the record's size. Like every
 * descriptor the child gets at a fixed number, it is kept at 10 or above
 * (spawn.h). The session keeps the files of finished runs for the next
 * ones: making and destroying a memfd per run costs more than the rest of
 * the host's system calls around a run together. Only the wrapper holds
 * the file while a command runs (the command's group has descriptor 3
 * closed), so a file handed back is no one else's. */
int shx_record_file(shexec_session *s, int *out)
{
    if (s->n_spare_records) {
        *out = s->spare_records[--s->n_spare_records];
        return SHEXEC_OK;
    }
    int fd = shx_anon_file();
    if (fd < 0)
        return shx_fail(s, errno == ENOMEM ? SHEXEC_ENOMEM : SHEXEC_ESYS,
                        "cannot make the record file: %s", strerror(errno));
    return move_high(s, fd, out);
}

void shx_record_file_put(shexec_session *s, int fd, off_t used)
{
    if (fd < 0)
        return;
    int keep = s && used >= 0 && s->n_spare_records < SHX_SPARE_RECORDS;
    if (keep && used > SHX_RECORD_KEEP_BYTES && ftruncate(fd, 0) != 0)
        keep = 0;
    if (keep && lseek(fd, 0, SEEK_SET) != 0)
        keep = 0;
    if (keep)
        s->spare_records[s->n_spare_records++] = fd;
    else
        close(fd);
}

void shx_record_files_close(shexec_session *s)
{
    while (s->n_spare_records)
        close(s->spare_records[--s->n_spare_records]);
}
