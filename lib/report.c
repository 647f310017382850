/*
 * report.c - what the shell reports when a command ends, taken: the record
 * channel read (local wrappers), and the working directory it names adopted
 * as the session's when it can be (local: an existing directory; remote: an
 * absolute path, checked on the other side).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session.h"

/*
 * The record comes from inside the command, which can forge it (it runs in
 * the same shell): a directory that does not exist, or a relative path that
 * would be taken against the host's own cwd, would break every later
 * command, so neither is adopted.
 */
void shx_run_adopt_cwd(shexec_run *r, const char *dir, size_t len)
{
    shexec_session *s = r->s;
    struct stat st;
    const char *why = NULL;
    if (len == 0 || dir[0] != '/')
        why = "is not an absolute path";
    else if (memchr(dir, '\0', len))
        why = "contains a NUL byte";
    else if (len >= PATH_MAX)
        why = "is longer than the kernel's path limit";
    else if (stat(dir, &st) != 0)
        why = errno == ENAMETOOLONG ? "is longer than the kernel's path limit" : "does not exist";
    else if (!S_ISDIR(st.st_mode))
        why = "is not a directory";
    if (why) {
        shx_buf_clear(&r->notice);
        shx_buf_printf(&r->notice, "the working directory the shell reported (\"%.*s\") %s: "
                       "the session stays in %s", len > 512 ? 512 : (int)len, dir, why, s->cwd);
        return;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        shx_buf_clear(&r->notice);
        shx_buf_puts(&r->notice, "out of memory: the working directory the shell reported was not adopted");
        return;
    }
    memcpy(copy, dir, len + 1);
    free(s->cwd);
    s->cwd = copy;
}

void shx_run_read_record(shexec_run *r, int at_end)
{
    char buf[16384];
    while (r->rec_fd >= 0) {
        ssize_t n = read(r->rec_fd, buf, sizeof buf);
        if (n > 0) {
            shx_record_feed(&r->record, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !at_end)
            return;
        /* end of the channel, or (the shell gone) all there will be */
        close(r->rec_fd);
        r->rec_fd = -1;
    }
}

/*
 * A remote wrapper's record names a directory on the other side, which the
 * wrapper script checked there: here it must only be an absolute path.
 */
void shx_run_adopt_remote_cwd(shexec_run *r, const char *dir, size_t len)
{
    shexec_session *s = r->s;
    if (len == 0 || dir[0] != '/') {
        shx_buf_clear(&r->notice);
        shx_buf_printf(&r->notice, "the working directory the shell reported (\"%.*s\") is not "
                       "an absolute path: the session stays in %s", len > 512 ? 512 : (int)len,
                       dir, s->cwd);
        return;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        shx_buf_clear(&r->notice);
        shx_buf_puts(&r->notice, "out of memory: the working directory the shell reported was not adopted");
        return;
    }
    memcpy(copy, dir, len + 1);
    free(s->cwd);
    s->cwd = copy;
}
