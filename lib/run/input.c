/*
 * input.c - a command's input: the stdin pipe a run asks for, what the
 * host writes to it (queued until the loop can write it to the pipe:
 * loop.c), the session's bound on what may wait there, the end of input,
 * and input typed as at a terminal (^C an interrupt). The public calls of
 * shexec.h; the queue itself is the job's (job.h).
 */
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "run/run.h"
#include "session/session.h"
#include "shx/platform.h"

SHEXEC_API int shexec_run_set_stdin(shexec_run *run, int enable)
{
    int rc = shx_run_configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    run->want_stdin = enable ? 1 : 0;
    return SHEXEC_OK;
}

/* The session's bound, read at each write, so that a host may raise it
 * for a command that runs already. */
static uint64_t queue_max(const shexec_session *s)
{
    return s && s->input_queue_max ? s->input_queue_max : SHEXEC_DEFAULT_INPUT_QUEUE_MAX;
}

/*
 * Queue input for the loop to write. Bounded, it is taken whole or not at
 * all: refused (SHEXEC_ELIMIT) when input already waits and this would take
 * it past the bound, so the caller may write the same bytes again once the
 * command has read. A command that never reads then pins the bound, not
 * every write the host (or a model through it) makes. A write into an
 * empty queue is always taken: input given all at once (a file fed to
 * `sort`) is a buffer the host holds itself, and its size the host's
 * choice. End of input is not bounded: it must always get through.
 */
static int input_open(shexec_run *r, const void *data, size_t len, int bounded)
{
    if (!data && len)
        return shx_fail(r->s, SHEXEC_EINVAL, "input is NULL");
    if (!r->want_stdin && !r->pty)
        return shx_fail(r->s, SHEXEC_EPIPE, "stdin was not enabled for this command");
    if (r->state != SHEXEC_STATE_RUNNING || r->job.stdin_fd < 0 || r->job.stdin_close)
        return shx_fail(r->s, SHEXEC_EPIPE, "the command's stdin is closed");
    size_t queued = shx_job_input_left(&r->job);
    uint64_t max = queue_max(r->s);
    if (bounded && queued > 0 && (len > max || queued > max - len))
        return shx_fail(r->s, SHEXEC_ELIMIT,
                        "the command has not read the %zu bytes of input queued for it; %zu "
                        "more would pass the bound of %llu bytes, so none of them was queued "
                        "(write them again once it has read)",
                        queued, len, (unsigned long long)max);
    return SHEXEC_OK;
}

static int queue_input(shexec_run *r, const void *data, size_t len, int bounded)
{
    shx_ok(r->s);
    int rc = input_open(r, data, len, bounded);
    if (rc != SHEXEC_OK)
        return rc;
    if (shx_buf_append(&r->job.stdin_buf, data, len) != 0)
        return shx_fail(r->s, SHEXEC_ENOMEM, "out of memory");
    shx_quiet_activity(&r->job, shx_now_ns()); /* answered: no longer waiting */
    return SHEXEC_OK;
}

static int end_input(shexec_run *r)
{
    shx_ok(r->s);
    if (!r->want_stdin && !r->pty)
        return shx_fail(r->s, SHEXEC_EPIPE, "stdin was not enabled for this command");
    if (r->pty) /* a terminal's end of input is ^D, not a closed descriptor */
        return queue_input(r, "\x04", 1, 0);
    r->job.stdin_close = 1;
    shx_quiet_activity(&r->job, shx_now_ns());
    if (r->job.stdin_fd >= 0 && shx_job_input_left(&r->job) == 0) {
        close(r->job.stdin_fd);
        r->job.stdin_fd = -1;
    }
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_write(shexec_run *run, const void *data, size_t len)
{
    return run ? queue_input(run, data, len, 1) : SHEXEC_EINVAL;
}

/* The ^C key: the terminal's interrupt character (VINTR) by default. */
#define INTERRUPT_KEY '\x03'

/* 1 when the terminal of a pty run makes its interrupt key, ^C, a SIGINT
 * (ISIG on: not a program that reads raw keys). */
static int terminal_interrupts(const shexec_run *r)
{
    struct termios tio;
    return r->job.out.fd >= 0 && tcgetattr(r->job.out.fd, &tio) == 0 && (tio.c_lflag & ISIG) &&
           tio.c_cc[VINTR] == (cc_t)INTERRUPT_KEY;
}

/* 1 when a ^C typed to the run is the library's to turn into SIGINT: a
 * pipe has no line discipline, and a pty that is nobody's controlling
 * terminal (a platform without POSIX_SPAWN_SETSID) has one that signals
 * no group; unless the program read raw keys (ISIG off). */
static int interrupt_key_is_ours(const shexec_run *r)
{
    if (!r->pty)
        return 1;
    return !SHX_HAVE_SPAWN_SETSID && terminal_interrupts(r);
}

/*
 * Input as a person types it. A controlling terminal has a line discipline
 * that turns ^C into a SIGINT for its foreground group: there the keys go
 * as they are. A pipe has none, so each ^C is taken for the key, not a byte
 * of input: the text before it is queued, the command is sent SIGINT
 * (shexec_run_send_signal), the text after it is queued next. The text is
 * checked against stdin and the bound whole first, so that a refused call
 * sent no signal: it may be typed again.
 */
SHEXEC_API int shexec_run_type_input(shexec_run *run, const void *data, size_t len)
{
    if (!run)
        return SHEXEC_EINVAL;
    const char *p = data;
    if (!p || !memchr(p, INTERRUPT_KEY, len) || !interrupt_key_is_ours(run)) {
        int rc = queue_input(run, data, len, 1);
        if (rc == SHEXEC_OK && p && memchr(p, INTERRUPT_KEY, len) && terminal_interrupts(run))
            run->interrupted = 1;
        return rc;
    }
    shx_ok(run->s);
    size_t text = 0;
    for (size_t i = 0; i < len; i++)
        text += p[i] != INTERRUPT_KEY;
    if (run->state != SHEXEC_STATE_RUNNING)
        return shx_fail(run->s, SHEXEC_EPIPE, "the command is not running: nothing was typed");
    int rc = text ? input_open(run, data, text, 1) : SHEXEC_OK;
    for (const char *end = p + len; rc == SHEXEC_OK && p < end;) {
        const char *key = memchr(p, INTERRUPT_KEY, (size_t)(end - p));
        size_t n = (size_t)((key ? key : end) - p);
        /* the bound was met by the whole: each part goes in unbounded */
        if (n)
            rc = queue_input(run, p, n, 0);
        if (rc == SHEXEC_OK && key)
            rc = shexec_run_send_signal(run, SIGINT);
        p = key ? key + 1 : end;
    }
    return rc;
}

SHEXEC_API int shexec_run_close_stdin(shexec_run *run)
{
    return run ? end_input(run) : SHEXEC_EINVAL;
}

SHEXEC_API int shexec_session_set_input_queue_max(shexec_session *s, uint64_t bytes)
{
    if (!s)
        return SHEXEC_EINVAL;
    if (bytes == 0)
        return shx_fail(s, SHEXEC_EINVAL, "the bound on queued input is at least 1 byte");
    shx_ok(s);
    s->input_queue_max = bytes;
    return SHEXEC_OK;
}

SHEXEC_API uint64_t shexec_session_input_queue_max(const shexec_session *s)
{
    return queue_max(s);
}
