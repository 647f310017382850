/*
 * spawnfa.h - spawnfa.c's calls, for spawn.c: the platform's file actions.
 */
#ifndef SHX_SPAWNFA_H
#define SHX_SPAWNFA_H

#include <spawn.h>

/* What the child runs and where: the fields of the spawn request that
 * decide how it gets to its working directory. */
typedef struct shx_workdir_req {
    const char *path;
    char *const *argv;
    char *const *envp;
    const char *cwd;       /* NULL: where the host is */
} shx_workdir_req;

/* What posix_spawn executes once the working directory is planned: the
 * request's program, or the trampoline that changes directory first. */
typedef struct shx_workdir_plan {
    const char *path;      /* what posix_spawn executes */
    char *const *argv;
    const char **tramp;    /* the trampoline's argv, malloc'd; NULL without it */
    char *abs_path;        /* the program's absolute path for the trampoline */
} shx_workdir_plan;

/*
 * The child starts in req->cwd (NULL: where the host is): a file action
 * where the libc has one, or the trampoline. Returns 0, or an errno value;
 * with the trampoline, an errno that posix_spawn would have reported for
 * the program itself (ENOENT, EACCES) is found here, before anything starts.
 */
int shx_spawn_add_workdir(posix_spawn_file_actions_t *fa, const shx_workdir_req *req,
                          shx_workdir_plan *w);
void shx_workdir_plan_free(shx_workdir_plan *w);
/* Close every descriptor from `from` up in the child; 0 or an errno value. */
int shx_spawn_add_hygiene(posix_spawn_file_actions_t *fa, int from);

#endif
