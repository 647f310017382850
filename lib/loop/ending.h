/*
 * ending.h - ending.c: how a job ends (terminating it, its shell's exit,
 * what its group leaves, finishing it), with what the loop's jobs share
 * (job.h's shx_job_policy).
 */
#ifndef SHX_ENDING_H
#define SHX_ENDING_H

#include <stdint.h>

#include "loop/job.h"

/* Begin terminating a live job: SIGTERM now, SIGKILL after the grace
 * (policy NULL: no pidfds, no grace). */
void shx_job_terminate(shx_job *j, const shx_job_policy *policy, int reason, int64_t now);

/* The command is over: processes finished, streams drained, input closed,
 * the ending reported through the job's on_ended. */
void shx_job_finish(shx_job *j, const shx_job_policy *policy, int64_t now);

/* Its shell has exited: 1 when the job is finished, 0 when it stays active
 * to follow what is left in its group; a job adopting leftovers joins
 * *born. */
int shx_job_shell_exited(shx_job *j, shx_job_policy *policy, int64_t now, shx_job **born);

/* A draining job (job.draining): 1 once its leftovers closed the output or
 * stayed quiet for the drain, or its longest drain passed. */
int shx_job_drain_over(shx_job *j, int64_t now);

/* The drain is over: what is still running goes to the leftovers policy (a
 * job adopting it joins *born) or is killed, and the job finishes. 1. */
int shx_job_drain_end(shx_job *j, shx_job_policy *policy, int64_t now, shx_job **born);

#endif
