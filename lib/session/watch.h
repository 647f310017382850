/*
 * watch.h - following a running command from outside its call: pump the
 * session until it has printed nothing for a while, has ended, waits for
 * input, or a time is up, and say which (shexec_task_watch(), the task
 * tools' quiet_ms). The quiet is the job's (quiet.h): it counts from the
 * later of the command's last output and the watch's start.
 */
#ifndef SHX_WATCH_H
#define SHX_WATCH_H

#include <stdint.h>

#include "shexec.h"

/*
 * Pump run's session (run started, not from inside its loop) until run has
 * ended, waits for input, has printed nothing for quiet_ns (0: not
 * watched for), or max_ns passed (0: one round, taking in what is there).
 * The run is held meanwhile (a callback's free of it waits). Returns
 * SHEXEC_WATCH_*, or SHEXEC_ESYS when the loop failed.
 */
int shx_run_watch(shexec_run *run, int64_t quiet_ns, int64_t max_ns);

#endif
