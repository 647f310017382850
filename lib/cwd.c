/*
 * cwd.c - the working directory a run's shell reports, taken as the
 * session's only when it can be: the report comes from inside the command,
 * which can write it (it runs in the same shell), so a directory is
 * checked before it is adopted, and one that is not says why in the run's
 * notice.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "platform.h"
#include "session.h"
#include "cwd.h"
#include "run.h"

static void take_cwd(shexec_run *r, const char *dir, size_t len) /* dir: the session cwd */
{
    char *copy = malloc(len + 1);
    if (!copy) {
        shx_buf_clear(&r->notice);
        shx_buf_puts(&r->notice, "out of memory: the working directory the shell reported was not adopted");
        return;
    }
    memcpy(copy, dir, len);
    copy[len] = '\0';
    free(r->s->cwd);
    r->s->cwd = copy;
}

/* The notice for a reported directory the session does not take. */
static void refuse_cwd(shexec_run *r, const char *dir, size_t len, const char *why)
{
    if (r->notice.len)
        shx_buf_puts(&r->notice, "; ");
    shx_buf_printf(&r->notice, "the working directory the shell reported (\"%.*s\") %s: "
                   "the session stays in %s", len > 512 ? 512 : (int)len, dir, why, r->s->cwd);
}

/*
 * The record comes from inside the command, which can forge it (it runs in
 * the same shell): a directory that does not exist, or a relative path that
 * would be taken against the host's own cwd, would break every later
 * command, so neither is adopted.
 */
void shx_run_adopt_cwd(shexec_run *r, const char *dir, size_t len)
{
    shexec_session *s = r->s;
    if (strlen(s->cwd) == len && memcmp(s->cwd, dir, len) == 0)
        return; /* where the session is already (most commands): nothing to do */
    mode_t mode;
    const char *why = NULL;
    if (len == 0 || dir[0] != '/')
        why = "is not an absolute path";
    else if (memchr(dir, '\0', len))
        why = "contains a NUL byte";
    else if (len >= PATH_MAX)
        why = "is longer than the kernel's path limit";
    else if (shx_path_mode(dir, &mode) != 0)
        why = errno == ENAMETOOLONG ? "is longer than the kernel's path limit" : "does not exist";
    else if (!S_ISDIR(mode))
        why = "is not a directory";
    if (why)
        refuse_cwd(r, dir, len, why);
    else
        take_cwd(r, dir, len);
}

/*
 * A remote wrapper's record names a directory on the other side: here it
 * must only be an absolute path. A directory removed later is dealt with
 * there, when the next command starts (the nearest existing ancestor).
 */
void shx_run_adopt_remote_cwd(shexec_run *r, const char *dir, size_t len)
{
    if (len == 0 || dir[0] != '/' || memchr(dir, '\0', len))
        refuse_cwd(r, dir, len, "is not an absolute path");
    else
        take_cwd(r, dir, len);
}

