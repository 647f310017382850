/*
 * bare.c - whether a run's shell is started bare (bare.h). What the shell
 * reports (script.h) is what the host cannot learn itself: the directory
 * it ended in, its state, and its status where the host takes that away.
 * A run that needs none of it gets the plain shell, which then runs the
 * command as `SHELL -c CMD` does in every way (bash execs a last simple
 * command: no EXIT trap waits for it), and costs the shell no trap, no
 * opening of the channel through /dev/fd, and the host no channel.
 */
#include "run/bare.h"

#include <signal.h>
#include <string.h>

#include "persist/persist_hook.h"
#include "run/run.h"
#include "session/session.h"
#include "shell/inert.h"

/* A variable that makes bash run code of its own before the command */
static int runs_code(const char *entry)
{
    return strncmp(entry, "BASH_ENV=", 9) == 0 || strncmp(entry, "BASH_FUNC_", 10) == 0;
}

/* Does the host leave its children's exit to be waited for? Where SIGCHLD
 * is ignored (or SA_NOCLDWAIT set) the kernel reaps them, and the status
 * comes only from the shell's report. */
static int host_leaves_status(void)
{
    struct sigaction sa;
    if (sigaction(SIGCHLD, NULL, &sa) != 0)
        return 0;
    return sa.sa_handler != SIG_IGN && !(sa.sa_flags & SA_NOCLDWAIT);
}

int shx_run_is_bare(const shexec_session *s, const shexec_run *r, char *const *env)
{
    int wrapped = s->shell_argv && s->shell_argv[1];
    if (wrapped || s->wrapper_kind != SHEXEC_WRAPPER_LOCAL || !s->shell_plain || r->probe)
        return 0;
    for (size_t i = 0; env && env[i]; i++)
        if (runs_code(env[i]))
            return 0;
    if (!host_leaves_status())
        return 0;
    /* a session that keeps the shell's state takes it from every
     * foreground run's report, unless the command can change none */
    if (s->persist && !r->task)
        return shx_inert_stateless(r->command, r->command_len);
    return r->task || r->cwd || shx_inert_command(r->command, r->command_len);
}

int shx_run_is_given(const shexec_session *s, const shexec_run *r)
{
    return s->devfd > 0 && (r->task || shx_persist_settled(s->persist, r->command, r->command_len));
}

int shx_run_reads_no_state(const shexec_session *s, const shexec_run *r)
{
    /* a foreground run in a session that keeps state is stateless already
     * (shx_run_is_bare): only a task's text is read here */
    return shx_persist_unread(s->persist) &&
           ((s->persist && !r->task) || shx_inert_stateless(r->command, r->command_len));
}
