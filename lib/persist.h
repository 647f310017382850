/*
 * persist.h - the session's shell state under shexec_session_set_persist_env()
 * (persist.c): what a finished foreground run reported (its exported
 * environment; with bash, its other variables and its functions) taken as
 * the session's, by the documented rules. pstate.h gives it out.
 */
#ifndef SHX_PERSIST_H
#define SHX_PERSIST_H

#include "shexec.h"

/* Take what the run's record reports as the session's state (the run ended
 * by itself, in the foreground); a report that is not taken says why in
 * the run's notice. */
void shx_persist_adopt(shexec_run *r);

/* The run's shell could not define some of the functions it was given (its
 * record says which): the session forgets them, and the run's notice says
 * so. */
void shx_persist_forget_lost(shexec_run *r);

#endif
