/*
 * watchdog_wait.h - the watchdog process's main loop (watchdog_wait.c): it
 * keeps the table of the session's groups from the host's messages until
 * the host is gone, then ends them (watchdog_proc.h); on a normal free it
 * exits without signalling.
 */
#ifndef SHX_WATCHDOG_WAIT_H
#define SHX_WATCHDOG_WAIT_H

#include "contain/watchdog_proc.h"

/* The watchdog process: never returns. */
void shx_wd_main(shx_wd_arena *a) __attribute__((noreturn));

#endif
