/*
 * program.c - which program a command runs (program.h): the session's shell
 * picked from candidates and told to be bash or not, a script told from a
 * binary, a name found on a PATH as execvp would.
 */
#if !defined(_GNU_SOURCE) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 700 /* realpath: the XSI part of POSIX */
#endif
#include "spawn/program.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shx/platform.h"

/* A regular file this process may execute. */
static int is_executable(const char *path)
{
    mode_t mode;
    return shx_path_mode(path, &mode) == 0 && S_ISREG(mode) && access(path, X_OK) == 0;
}

const char *shx_pick_shell(const char *const *candidates)
{
    for (; *candidates; candidates++) {
        if (is_executable(*candidates))
            return *candidates;
    }
    return NULL;
}

const char *shx_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

int shx_shell_is_bash(const char *name, const char *path, int *plain)
{
    char *real = path ? realpath(path, NULL) : NULL;
    const char *base = shx_base_name(real ? real : name);
    /* bash run as "sh" is bash in POSIX mode: no BASH_ENV, POSIX listings */
    int bash = strncmp(base, "bash", 4) == 0 && strcmp(shx_base_name(name), "sh") != 0;
    if (plain)
        *plain = real && (strcmp(base, "bash") == 0 || strcmp(base, "dash") == 0);
    free(real);
    return bash;
}

int shx_is_script(const char *path)
{
    char head[2];
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0)
        return 0;
    ssize_t n;
    while ((n = read(fd, head, sizeof head)) < 0 && errno == EINTR)
        ;
    close(fd);
    return n == 2 && head[0] == '#' && head[1] == '!';
}

int shx_find_program(const char *name, const char *path_var, shx_buf *out)
{
    shx_buf_clear(out);
    if (strchr(name, '/'))
        return shx_buf_puts(out, name);
    const char *p = path_var ? path_var : "/usr/bin:/bin";
    for (;;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        shx_buf_clear(out);
        if (n == 0)
            shx_buf_puts(out, "."); /* an empty PATH element is the cwd */
        else
            shx_buf_append(out, p, n);
        shx_buf_putc(out, '/');
        if (shx_buf_puts(out, name) != 0)
            return -1;
        if (is_executable(out->data))
            return 0;
        if (!end)
            break;
        p = end + 1;
    }
    shx_buf_clear(out);
    return -1;
}
