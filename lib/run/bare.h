/*
 * bare.h - whether a run's shell reports (bare.c). One that needs no report
 * is started bare: as `SHELL -c CMD` with nothing of the library's, no
 * prelude, no EXIT trap, no report channel (script.h: SHX_LAUNCH_BARE);
 * or, where bash must be given kept state, with a prelude that gives it
 * and nothing else (no trap, no channel: shx_script_opts.quiet).
 */
#ifndef SHX_BARE_H
#define SHX_BARE_H

#include "shexec.h"

/* 1 when the run needs nothing the shell would report, by construction:
 *   - the shell is bash or dash started directly (no wrapper), which runs
 *     no startup file and no function of the environment env (no BASH_ENV,
 *     no BASH_FUNC_ entry); the caller sees to it that no kept state is to
 *     be given to bash in a prelude;
 *   - the host leaves the shell's status to the library (SIGCHLD is not
 *     ignored), so no status needs to come from the shell;
 *   - and where the run ends, no working directory is taken from it: a
 *     task's or a run's with its own directory never moves the session,
 *     and a command inert.h finds inert cannot move its shell; in a
 *     session that keeps the shell's state, a foreground run's command
 *     must also be one that can change none of it (shx_inert_stateless).
 * 0 otherwise: the run's shell gets its prelude and reports. */
int shx_run_is_bare(const shexec_session *s, const shexec_run *r, char *const *env);

/* For a run shx_run_is_bare() said needs no report, in a session whose
 * bash must be given kept state: 1 when its prelude may give that state
 * and nothing else, so the state is not listed after it. A task never
 * lists; a foreground run's text must be one shx_persist_settled() allows
 * (the state is the last listing's, under the rules now, and the text
 * names no kept function, which could do what the text cannot). */
int shx_run_is_given(const shexec_session *s, const shexec_run *r);

/* For a run shx_run_is_bare() said needs no report, in a session whose
 * bash would be given kept state: 1 when its command can read none of it
 * (its text is stateless, and the state is nothing bash reads by itself:
 * shx_persist_unread), so it runs bare, given nothing. A task's text is
 * read here (shx_run_is_bare() does not look at it); a foreground run's
 * was found stateless there. */
int shx_run_reads_no_state(const shexec_session *s, const shexec_run *r);

#endif
