/*
 * sendsignal.c - a signal the host sends to a running command (an interrupt,
 * a hangup, a pause): the signals a command may be sent and their names,
 * the sending, and whether the command was interrupted. It reaches the
 * command's processes only (proc.c's shx_proc_signal: its group, or its
 * cgroup's members) and leaves the ending's machinery (timeout, cancel:
 * SIGTERM, grace, SIGKILL) as it is: a command that dies of such a signal
 * ends SIGNALED, as it would by a kill from elsewhere.
 */
#include <signal.h>

#include "run/run.h"
#include "session/session.h"

/* What a person or a supervisor sends a command; by their names without
 * "SIG". Not the signals of faults and timers (SIGSEGV, SIGALRM, ...): sent
 * by hand they only fake a crash. Not SIGTSTP, SIGTTIN, SIGTTOU: a command
 * leads a session of its own, so its group is orphaned and the kernel
 * drops them (SIGSTOP pauses it, SIGCONT resumes it). */
static const struct {
    int sig;
    const char *name;
} allowed[] = {
    {SIGHUP, "HUP"},   {SIGINT, "INT"},   {SIGQUIT, "QUIT"}, {SIGKILL, "KILL"}, {SIGUSR1, "USR1"},
    {SIGUSR2, "USR2"}, {SIGTERM, "TERM"}, {SIGCONT, "CONT"}, {SIGSTOP, "STOP"},
};
#define ALLOWED (sizeof allowed / sizeof *allowed)

static int is_allowed(int sig)
{
    for (size_t i = 0; i < ALLOWED; i++)
        if (allowed[i].sig == sig)
            return 1;
    return 0;
}

static int ascii_upper(char c)
{
    return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
}

/* a and b (upper case) alike, ASCII case ignored: not strcasecmp, whose
 * locale may fold 'i' to another letter than 'I' */
static int same_name(const char *a, const char *b)
{
    while (*a && ascii_upper(*a) == *b)
        a++, b++;
    return *a == '\0' && *b == '\0';
}

SHEXEC_API int shexec_signal_from_name(const char *name)
{
    if (!name)
        return SHEXEC_EINVAL;
    const char *bare = name;
    if (ascii_upper(name[0]) == 'S' && ascii_upper(name[1]) == 'I' && ascii_upper(name[2]) == 'G')
        bare = name + 3;
    for (size_t i = 0; i < ALLOWED; i++)
        if (same_name(bare, allowed[i].name))
            return allowed[i].sig;
    return SHEXEC_EINVAL;
}

SHEXEC_API int shexec_run_send_signal(shexec_run *run, int sig)
{
    if (!run)
        return SHEXEC_EINVAL;
    shexec_session *s = run->s;
    shx_ok(s);
    if (!is_allowed(sig))
        return shx_fail(s, SHEXEC_EINVAL, "signal %d is not one a command may be sent (SIGHUP, "
                        "SIGINT, SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2, SIGTERM, SIGCONT, SIGSTOP)",
                        sig);
    if (run->state == SHEXEC_STATE_NEW)
        return shx_fail(s, SHEXEC_ESTATE, "the run has not been started");
    if (run->state != SHEXEC_STATE_RUNNING || !s)
        return shx_fail(s, SHEXEC_ESTATE, "the command has finished: no signal was sent");
    if (!shx_proc_signal(&run->job.proc, sig, s->loop.jobs.use_pidfd))
        return shx_fail(s, SHEXEC_ESTATE, "none of the command's processes is left: no signal "
                        "was sent");
    if (sig == SIGINT)
        run->interrupted = 1;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_interrupted(const shexec_run *run)
{
    return run && run->interrupted;
}
