/*
 * spawn.h - starting one command: its pipes, a child that leads a new
 * session (its own process group, no controlling terminal but its pty),
 * joined to its cgroups before exec, default signal dispositions, an empty signal mask, stdin from
 * /dev/null, only descriptors 0-2 inherited (and those passed at fixed
 * numbers), and a pidfd to wait on.
 */
#ifndef SHX_SPAWN_H
#define SHX_SPAWN_H

#include <stdint.h>
#include <sys/types.h>

#include "shx/buf.h"

typedef struct shx_spawn_req {
    const char *path;        /* program to execute (absolute or relative to the host cwd) */
    char *const *argv;
    char *const *envp;
    const char *cwd;         /* directory the child starts in; NULL: the host's */
    const int *pass_fds;     /* descriptors the child gets (each >= 10) ... */
    const int *pass_at;      /* ... at these numbers (each >= 9, distinct) */
    int n_pass;              /* at most 3 */
    const char *const *join; /* cgroup.procs files: the child joins each before exec
                                (only where shx_forkexec_compiled()) */
    int n_join;
    const char *into;        /* join[0]'s cgroup v2 directory, to be born in (forkexec.h) */
    int use_pidfd;           /* 0: do not open a pidfd (the fallback path) */
    int stdin_pipe;          /* 1: stdin is a pipe (in_fd), else /dev/null */
    int big_pipes;           /* 1: raise the output pipes' capacity (tasks) */
    int pty;                 /* 1: a pseudo-terminal is stdin, stdout and stderr */
    int echo;                /* with pty: echo input */
    uint16_t cols, rows;     /* its window size */
} shx_spawn_req;

typedef struct shx_child {
    pid_t pid;               /* also the process group id */
    unsigned long long start; /* its start time as /proc gives it (clock ticks after boot)
                                 where the clock read before and after the spawn agree;
                                 0 when not known that way */
    int pidfd;               /* -1 when unavailable */
    int out_fd, err_fd;      /* read ends, non-blocking, close-on-exec; with a pty,
                                out_fd is its master and err_fd is -1 */
    int in_fd;               /* write end of stdin, non-blocking; -1 without stdin_pipe;
                                with a pty, a second handle on the master */
    int out_held, err_held;  /* with a pidfd and no pty: the output pipes' write ends,
                                close-on-exec, kept so that the pipes hang up only
                                once the host lets go of them (at the shell's exit,
                                which its pidfd shows), not a wake-up before the exit
                                as the shell's descriptors close; else -1 */
    unsigned long pty_lflag; /* with a pty, the local flags it started with: set before
                                the child existed, so no change of the command's is in it */
} shx_child;

/*
 * Start the child. Returns SHEXEC_OK or SHEXEC_ENOCWD / SHEXEC_ESPAWN /
 * SHEXEC_E2BIG / SHEXEC_ESYS / SHEXEC_ENOMEM with a message in err. On
 * failure nothing is left open and no child exists.
 */
int shx_spawn(const shx_spawn_req *req, shx_child *out, shx_buf *err);

/*
 * write(2) that cannot raise SIGPIPE in the host: SIGPIPE is blocked in the
 * calling thread around the write, and one it caused is consumed before the
 * mask is restored. Returns as write(2) (EPIPE when the reader is gone).
 */
ssize_t shx_write_nosigpipe(int fd, const void *data, size_t len);

#endif
