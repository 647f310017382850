/*
 * quiet.h - what a job's silence means: the idle timeout (no output for so
 * long ends the command, or hands it to the background), the yield a
 * foreground call asks for (at a time, at the timeout, at the idle
 * timeout, or when the command waits for input), and the looks that find a
 * command waiting for the host's input (inputwait.h), made only after the
 * command has been silent for a while, so output that flows costs nothing.
 */
#ifndef SHX_QUIET_H
#define SHX_QUIET_H

#include <stdint.h>

#include "shexec.h"

struct shx_job;

typedef struct shx_quiet {
    int64_t start_ns;         /* the job's start */
    int64_t active_ns;        /* output read, input written, or the start */
    int64_t output_ns;        /* output read, or the start: what a watch's quiet counts from */
    int64_t idle_ns;          /* no output this long: the idle timeout; 0 none */
    int idle_yields;          /* at the idle timeout: yield rather than end */
    int64_t lifetime_ns;      /* at the timeout: yield, the command then capped at
                                 start + lifetime_ns; 0: end at the timeout */
    int can_yield;            /* a foreground run: it may be handed to the background */
    int64_t yield_at_ns;      /* its yield time; 0: none */
    int yield_on_input;       /* a wait for input asks for the yield too */
    int yield;                /* SHEXEC_YIELD_* asked for (0: none) */
    int64_t look_after_ns;    /* silence before the first look for input; 0: no looks */
    int64_t next_look_ns;     /* the next look; 0: none due until activity */
    int input;                /* SHEXEC_INPUT_*: what the last look found */
    int echo_off;             /* with input WAITING on a pty: a password is read */
    int pty_lflag_known;      /* pty_lflag is the terminal's c_lflag at the start */
    unsigned long pty_lflag;
    uint64_t looks;           /* looks made (the bench and tests count them) */
    void (*on_input)(void *ctx); /* a wait was found (the job's ctx) */
    int stop_on_input;        /* a caller waiting on the job returns once it waits for input */
    /* a caller watching the job returns once it has printed nothing for
     * watch_quiet_ns, counted from the later of its last output and
     * watch_from_ns (the watch's start): watch_fired; 0: no watch */
    int64_t watch_quiet_ns;
    int64_t watch_from_ns;
    int watch_fired;
} shx_quiet;

/* Whether a caller waiting on the job (its loop's `until`) returns now: a
 * yield was asked, the wait for input it stops on was found, or the quiet
 * it watches for came. */
static inline int shx_quiet_stops(const shx_quiet *q)
{
    return q->yield || (q->stop_on_input && q->input == SHEXEC_INPUT_WAITING) || q->watch_fired;
}

/* The job started at now: its quiet time counts from there. */
void shx_quiet_start(struct shx_job *j, int64_t now);
/* Output came, or input went: not idle, not waiting; looks start again
 * after the next silence. */
void shx_quiet_activity(struct shx_job *j, int64_t now);
/* Output came: activity, and the end of a quiet spell (a watch's). */
void shx_quiet_output(struct shx_job *j, int64_t now);

/* Read what the job's pipes hold now, as output (its quiet ends): 1 when
 * some came. A silence judged at a deadline is judged on this, not on
 * the loop's last poll. */
int shx_quiet_read_held(struct shx_job *j);

/* The earliest of the job's quiet deadlines into *next (min, -1: none). */
void shx_quiet_next(const struct shx_job *j, int64_t *next);
/* What is due at now: a timeout that yields, the idle timeout (a yield
 * asked, or 1: the caller ends the job, SHX_END_IDLE), a look for input,
 * a watch's quiet. Output the job's pipes already hold is read first (its
 * callbacks called): a silence that output ended is not acted on. 0 when
 * the job goes on. */
int shx_quiet_enforce(struct shx_job *j, int64_t now);

#endif
