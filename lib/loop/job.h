/*
 * job.h - the job: what the loop drives for one command. Its process (the
 * shell and its group, proc.c), its two output streams (stream.c), its
 * stdin queue (job.c), the looks after a terminal's hangup, its link in
 * the loop's active list, and how its ending is reported to its owner
 * (through the callbacks its owner sets, as libuv's per-handle exit
 * callback). It knows nothing of what the command was set to or what its
 * ending means: that is the run's (run.h), which embeds a job. How a job
 * ends is ending.c's; the loop that drives jobs is loop.c's.
 */
#ifndef SHX_JOB_H
#define SHX_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "shx/buf.h"
#include "loop/proc.h"
#include "loop/quiet.h"
#include "stream/stream.h"

typedef struct shx_job shx_job;

struct shx_job {
    shx_proc proc;                /* the shell, its group, deadlines (proc.c) */
    shx_stream out, err;
    shx_job *next_active;         /* jobs the loop drives */
    int stdin_fd;                 /* write end, non-blocking; -1 when closed */
    int side_fd;                  /* what its owner reads while the shell runs (a run's
                                     report channel), through on_side; -1: none */
    int64_t side_from_ns;         /* side_fd is watched from then on while the shell
                                     runs (SHX_SIDE_AT_END: never; what is there is
                                     taken when the job ends) */
    shx_buf stdin_buf;            /* queued input: bytes from stdin_off on are not written */
    size_t stdin_off;
    int stdin_close;              /* close once stdin_buf is written */
    int pty;                      /* on a terminal: its hangup is sent again after the exit */
    int hangup_checks;            /* looks left for members that missed the
                                     terminal's hangup (loop.c) */
    int64_t hangup_check_ns;      /* when the next look is due */
    int follows_leftovers;        /* what its shell leaves is followed to its end (a
                                     task's); else the loop's leftovers policy decides */
    int leftovers_killed;         /* processes its shell left were killed */
    /* its shell exited and what it left still holds the output: read on
     * until they end or close it, or print nothing for drain_quiet_ns (from
     * the later of their last output and drain_from_ns), until drain_end_ns
     * at the latest; then the leftovers policy decides (ending.c) */
    int draining;
    int64_t drain_from_ns, drain_quiet_ns, drain_end_ns;
    shx_quiet quiet;              /* idle timeout, yield, input-wait looks (quiet.h) */
    int last_stream;              /* SHEXEC_STDOUT/STDERR: the one that wrote last */
    int ended;                    /* its ending was reported (on_ended) */
    /* how its ending is reported (set by its owner, with ctx): its
     * processes are done and its output read (at `now`); then, after the
     * round that ended it, once the active list is consistent again
     * (NULL: nothing) */
    void (*on_ended)(void *ctx, int64_t now);
    void (*on_finished)(void *ctx);
    void (*on_side)(void *ctx);   /* side_fd is readable */
    void *ctx;
};

/*
 * What the jobs of one loop share, set by its owner: whether descriptors
 * for processes are used, the grace between SIGTERM and SIGKILL, whether
 * /proc was seen to list processes, and the policy for what a foreground
 * command's shell leaves (adopt_leftovers: the job that now follows them,
 * joining the loop, or NULL: they are killed).
 */
typedef struct shx_job_policy {
    int use_pidfd;
    uint32_t kill_grace_ms;
    int procfs_seen;              /* /proc listed processes once: not asked again */
    uint32_t drain_ms;            /* leftovers' output read this quiet long (job.draining) */
    shx_job *(*adopt_leftovers)(void *ctx, shx_job *from);
    void *ctx;
} shx_job_policy;

#define SHX_SIDE_AT_END INT64_MAX

/* After a terminal's hangup, members that missed it are looked for this
 * many times, the first SHX_HANGUP_FIRST_NS after it, each wait four times
 * the one before (5 ms to 1.7 s after). */
#define SHX_HANGUP_CHECKS 5
#define SHX_HANGUP_FIRST_NS ((int64_t)5000000)

/* While it drains leftovers' output: when the drain is over if nothing more comes. */
int64_t shx_job_drain_due(const shx_job *j);

/* No process, no streams, no input yet; events to observer. */
void shx_job_init(shx_job *j, const shx_proc_observer *observer);

/* Queued input not yet written. */
size_t shx_job_input_left(const shx_job *j);

/* Write queued input to the command's stdin, as much as it takes without
 * blocking and at most a round's share; when the reader is gone (gone: a
 * hangup or error poll() saw; or EPIPE) the rest is dropped and stdin
 * closed, as it is once all is written and the host asked for the close. */
void shx_job_input_flush(shx_job *j, int gone);

/* Close the command's stdin and drop what was queued for it. */
void shx_job_input_close(shx_job *j);

#endif
