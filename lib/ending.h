/*
 * ending.h - ending.c: how a run ends (terminating it, its shell's exit, what
 * its group leaves, its channel read, its final report).
 */
#ifndef SHX_ENDING_H
#define SHX_ENDING_H

#include <stdint.h>

#include "shexec.h"

/* Begin terminating a live run: SIGTERM now, SIGKILL after the grace. */
void shx_run_terminate(shexec_run *r, int reason, int64_t now);

/* Close the command's stdin and drop what was queued for it. */
void shx_run_input_close(shexec_run *r);

/* The command is over: processes finished, streams drained, input closed,
 * the ending reported through the ended hook. */
void shx_run_finish(shexec_run *r, int64_t now);

/* Its shell has exited: 1 when the run is finished, 0 when it stays active
 * to follow what is left in its group; a task adopting leftovers joins
 * *born. */
int shx_run_shell_exited(shexec_session *s, shexec_run *r, int64_t now, shexec_run **born);

/* Read the run's channel (the shell has exited), up to the record's bound,
 * and close it (ending.c). */
void shx_run_read_record(shexec_run *r);

#endif
