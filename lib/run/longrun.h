/*
 * longrun.h - a run that outlives the call that started it: its yield,
 * idle timeout, background-on-timeout and input-wait settings (the
 * session's and the run's own, the public setters and getters are in
 * longrun.c), put into its job's quiet watch (quiet.h) at its start.
 */
#ifndef SHX_LONGRUN_H
#define SHX_LONGRUN_H

#include "shexec.h"

/* Set the started run's quiet watch from its settings and the session's;
 * its quiet time counts from r->start_ns. */
void shx_longrun_start(shexec_run *r);

#endif
