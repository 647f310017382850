/*
 * watchdog_fork.h - watchdog_fork.c: the child side of the fork that makes
 * the watchdog, before its main loop (what it closes, gives back and
 * becomes).
 */
#ifndef SHX_WATCHDOG_FORK_H
#define SHX_WATCHDOG_FORK_H

#include "contain/watchdog_proc.h"

/* Become the watchdog, in the fork (watchdog_fork.c). */
void shx_wd_become(shx_wd_arena *a);

#endif
