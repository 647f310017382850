/*
 * cwd.c - the working directory a run's shell reports, taken as the
 * session's only when it can be (pure but for the look at the file system), and the nearest
 * existing ancestor of one that is gone: the report comes from inside the command,
 * which can write it (it runs in the same shell), so a directory is
 * checked before it is adopted, and one that is not says why in the run's
 * notice.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run/cwd.h"
#include "shx/platform.h"

static void take_cwd(char **cwd, shx_buf *notice, const char *dir, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy) {
        shx_buf_clear(notice);
        shx_buf_puts(notice, "out of memory: the working directory the shell reported was not adopted");
        return;
    }
    memcpy(copy, dir, len);
    copy[len] = '\0';
    free(*cwd);
    *cwd = copy;
}

/* The notice for a reported directory the session does not take. */
static void refuse_cwd(const char *cwd, shx_buf *notice, const char *dir, size_t len,
                       const char *why)
{
    if (notice->len)
        shx_buf_puts(notice, "; ");
    shx_buf_printf(notice, "the working directory the shell reported (\"%.*s\") %s: "
                   "the session stays in %s", len > 512 ? 512 : (int)len, dir, why, cwd);
}

/*
 * The record comes from inside the command, which can forge it (it runs in
 * the same shell): a directory that does not exist, or a relative path that
 * would be taken against the host's own cwd, would break every later
 * command, so neither is adopted.
 */
void shx_cwd_adopt(char **cwd, shx_buf *notice, const char *dir, size_t len)
{
    if (strlen(*cwd) == len && memcmp(*cwd, dir, len) == 0)
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
        refuse_cwd(*cwd, notice, dir, len, why);
    else
        take_cwd(cwd, notice, dir, len);
}

/*
 * A remote wrapper's record names a directory on the other side: here it
 * must only be an absolute path. A directory removed later is dealt with
 * there, when the next command starts (the nearest existing ancestor).
 */
void shx_cwd_adopt_remote(char **cwd, shx_buf *notice, const char *dir, size_t len)
{
    if (len == 0 || dir[0] != '/' || memchr(dir, '\0', len))
        refuse_cwd(*cwd, notice, dir, len, "is not an absolute path");
    else
        take_cwd(cwd, notice, dir, len);
}

void shx_cwd_nearest(char *dir)
{
    size_t n = strlen(dir);
    mode_t mode;
    while (n > 1) {
        while (n > 1 && dir[n - 1] != '/')
            n--; /* back to the last slash */
        while (n > 1 && dir[n - 1] == '/')
            n--;
        dir[n] = '\0';
        if (shx_path_mode(dir, &mode) == 0 && S_ISDIR(mode))
            return;
    }
    dir[0] = '/';
    dir[1] = '\0';
}
