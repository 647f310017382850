/*
 * spawnfa.c - the two file actions of a spawn that differ by platform:
 * where the child starts (addchdir_np, or a `cd` trampoline through
 * /bin/sh where POSIX.1-2008 has no such action) and which descriptors it
 * keeps (addclosefrom_np, or each inheritable host descriptor listed and
 * closed). spawn.c builds the rest of the request.
 */
#include "spawn/spawnfa.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shx/buf.h"
#include "shx/libc_ext.h"
#include "shx/platform.h"

/*
 * Where posix_spawn cannot change directory (no addchdir_np: POSIX.1-2008
 * has no such file action), the program is started through /bin/sh as
 * `cd -- DIR && exec PROGRAM ARGS...`: the same process (exec keeps the pid
 * and so the process group), in the same directory and with the same
 * environment as the program itself would have had; the cost is one more
 * exec. The other ways are worse: chdir() in the host around the spawn
 * moves every host thread's cwd, and fork() then chdir() runs our code in
 * a child of a possibly huge, multi-threaded host (the reason for
 * posix_spawn). The program sees its absolute path as argv[0] (POSIX sh's
 * exec cannot set argv[0]).
 */
#define TRAMPOLINE_SH "/bin/sh"
/* $1 the directory; $2-$5 whether PWD and OLDPWD were in the environment and
 * their values, which `cd` changes and are put back (unset when they were
 * not there), so the program gets the environment it was given */
#define TRAMPOLINE_SCRIPT                                                                          \
    "cd -- \"$1\" || exit 127; "                                                                  \
    "if [ \"$2\" = 1 ]; then PWD=$3; else unset PWD; fi; "                                         \
    "if [ \"$4\" = 1 ]; then OLDPWD=$5; else unset OLDPWD; fi; "                                   \
    "shift 5; exec \"$@\""

/* The value of name in envp, or NULL. */
static const char *env_value(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (; envp && *envp; envp++)
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}

void shx_workdir_plan_free(shx_workdir_plan *w)
{
    free(w->tramp);
    free(w->abs_path);
    w->tramp = NULL;
    w->abs_path = NULL;
}

/*
 * The child starts in req->cwd: a file action where the libc has one, or
 * the trampoline. Returns 0, or an errno value; with the trampoline, an
 * errno that posix_spawn would have reported for the program itself
 * (ENOENT, EACCES) is found here, before anything starts.
 */
int shx_spawn_add_workdir(posix_spawn_file_actions_t *fa, const shx_workdir_req *req,
                          shx_workdir_plan *w)
{
    w->path = req->path;
    w->argv = req->argv;
    w->tramp = NULL;
    w->abs_path = NULL;
    if (!req->cwd)
        return 0;
    int rc = shx_fa_chdir(fa, req->cwd);
    if (rc != ENOSYS)
        return rc;
    mode_t mode;
    if (shx_path_mode(req->path, &mode) != 0)
        return errno;
    if (!S_ISREG(mode) || access(req->path, X_OK) != 0)
        return EACCES;
    /* the program's path was relative to the host's cwd, which the child leaves */
    shx_buf abs = SHX_BUF_INIT;
    if (req->path[0] != '/') {
        char here[4096];
        if (!getcwd(here, sizeof here))
            return errno;
        shx_buf_printf(&abs, "%s/", here);
    }
    shx_buf_puts(&abs, req->path);
    size_t argc = 0;
    while (req->argv[argc])
        argc++;
    w->tramp = malloc((argc + 10) * sizeof *w->tramp); /* 10 of its own, argv[1..], NULL */
    if (abs.failed || !w->tramp) {
        shx_buf_free(&abs);
        shx_workdir_plan_free(w);
        return ENOMEM;
    }
    w->abs_path = abs.data;
    w->tramp[0] = "sh";
    w->tramp[1] = "-c";
    w->tramp[2] = TRAMPOLINE_SCRIPT;
    w->tramp[3] = "sh";
    w->tramp[4] = req->cwd;
    const char *pwd = env_value(req->envp, "PWD"), *oldpwd = env_value(req->envp, "OLDPWD");
    w->tramp[5] = pwd ? "1" : "0";
    w->tramp[6] = pwd ? pwd : "";
    w->tramp[7] = oldpwd ? "1" : "0";
    w->tramp[8] = oldpwd ? oldpwd : "";
    w->tramp[9] = w->abs_path;
    for (size_t i = 1; i <= argc; i++) /* argv[1..], and its NULL */
        w->tramp[9 + i] = req->argv[i];
    w->path = TRAMPOLINE_SH;
    w->argv = (char *const *)w->tramp;
    return 0;
}

/*
 * Only the descriptors below `from` (0-2: the command's stdio, set up by
 * the file actions before this one) reach the command. Every descriptor
 * the library opens is close-on-exec; the host's own may not be. With
 * addclosefrom_np (glibc 2.34+, FreeBSD) the child closes everything from
 * `from` up. Without it (musl, older glibc, plain POSIX) each host descriptor
 * that an exec would pass on is listed now and closed by its own file
 * action: one opened without O_CLOEXEC by another host thread between the
 * listing and the spawn still reaches the command, as with any
 * fork-and-exec that has no closefrom.
 */
int shx_spawn_add_hygiene(posix_spawn_file_actions_t *fa, int from)
{
    int rc = shx_fa_closefrom(fa, from);
    if (rc != ENOSYS)
        return rc;
    int *fds;
    size_t n;
    if (shx_inheritable_fds(from, &fds, &n) != 0)
        return ENOMEM;
    rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = posix_spawn_file_actions_addclose(fa, fds[i]);
    free(fds);
    return rc;
}
