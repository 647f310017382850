/*
 * watchdog.h - the helper process that ends a session's commands when the
 * host dies without freeing the session (shexec_session_set_watchdog()).
 *
 * The host side (watchdog.c) forks it and tells it, over a channel whose host
 * end is close-on-exec, which process groups the session's commands lead
 * and which members hold a group once its leader is gone; the host's death
 * closes that end, and the watchdog reads EOF. The process side
 * (watchdog_proc.c) then proves each group still the command's before it
 * signals it, finds the processes that left the groups through their live
 * parents, and terminates them all as a timeout would (TERM, the grace,
 * KILL); then it exits. A normal free tells it to exit without signalling.
 */
#ifndef SHX_WATCHDOG_H
#define SHX_WATCHDOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "group.h"
#include "shexec.h"

/* Each is a no-op without a watchdog. */

/* Start the session's watchdog (SHEXEC_OK when it runs already) and tell it
 * the commands running now. SHEXEC_ENOMEM or SHEXEC_ESYS, with the message. */
int shx_watchdog_start(shexec_session *s);
/* Tell it to exit without signalling, and reap it. */
void shx_watchdog_stop(shexec_session *s);
/* A command started: its group, led by pgid (our unreaped child, whose
 * start time is read now). */
void shx_watchdog_group(shexec_session *s, pid_t pgid);
/* The group's leader is gone: the members g anchors hold its id. */
void shx_watchdog_anchors(shexec_session *s, const shx_group *g);
/* The command of pgid is over (before its leader is reaped). */
void shx_watchdog_forget(shexec_session *s, pid_t pgid);
/* The session's kill grace changed. */
void shx_watchdog_grace(shexec_session *s);

#endif
