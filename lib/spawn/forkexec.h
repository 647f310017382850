/*
 * forkexec.h - starting a child where the library's own code runs between
 * fork and exec (forkexec.c): Linux, clone(CLONE_VM | CLONE_VFORK), as
 * posix_spawn does it inside glibc and musl, with the steps a posix_spawn
 * has no file action for. The one that matters: the child joins the
 * command's cgroups itself, before exec, so the shell is in them before it
 * runs any code of its own, whatever it reads at startup.
 */
#ifndef SHX_FORKEXEC_H
#define SHX_FORKEXEC_H

#include <sys/types.h>

#define SHX_FX_PASS_MAX 3

/* What the child does before exec, in this order. */
typedef struct shx_fx_plan {
    const char *path;             /* what to execute */
    char *const *argv;
    char *const *envp;
    const char *const *join;      /* cgroup.procs files: "0" written to each */
    int n_join;
    const char *into;             /* the cgroup v2 directory of join[0]: the child is born
                                     in it where the kernel can (clone3, CLONE_INTO_CGROUP),
                                     and join[0] is then not written; NULL: none */
    const char *tty;              /* a pty's slave: opened as 0, 1, 2 (and so the controlling
                                     terminal of the new session); NULL: the three below */
    int in_fd;                    /* stdin; -1: /dev/null */
    int out_fd, err_fd;           /* stdout, stderr (each >= 3) */
    const int *pass_fds;          /* more descriptors (each >= 10) ... */
    const int *pass_at;           /* ... at these numbers (each >= 9) */
    int n_pass;                   /* at most SHX_FX_PASS_MAX */
    const char *cwd;              /* NULL: where the host is */
} shx_fx_plan;

/* The step of the plan that failed (shx_forkexec's *failed_step). */
enum { SHX_FX_OK = 0, SHX_FX_JOIN, SHX_FX_SETSID, SHX_FX_STDIO, SHX_FX_FDS, SHX_FX_CWD,
       SHX_FX_EXEC };

/* 1 when this build starts children this way (else posix_spawn). */
int shx_forkexec_compiled(void);
/* 1 once a step's failure in the child is known to reach the caller: the
 * first child tells whether the clone shares memory; where it does not, a
 * plain fork's failure shows only as its exit status 127 (later ones have
 * a pipe). */
int shx_forkexec_reports_failure(void);

/*
 * Start the child: a new session (it leads it, and its process group, with
 * no controlling terminal unless plan->tty), default dispositions for every
 * signal, an empty signal mask, no descriptor but 0-2 and the passed ones
 * (every other one is close-on-exec in the child whatever the host set),
 * then exec. The host's signals are blocked in the calling thread while the
 * child shares its memory, and restored. Returns 0 with *pid set, or an
 * errno value with *failed_step saying where (the child, if one began, is
 * reaped: nothing is left). With pidfd, *pidfd is the child's pidfd
 * (close-on-exec) where the clone can give it, else -1.
 */
int shx_forkexec(const shx_fx_plan *plan, pid_t *pid, int *pidfd, int *failed_step);
/* For the tests (testhook.c): 0 takes the path of a kernel that refuses
 * CLONE_PIDFD, 1 the clone's pidfd again. */
void shx_forkexec_test_clone_pidfd(int on);


#endif
