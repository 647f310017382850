/*
 * persist.h - the session's shell state taken from a finished run
 * (persist.c): what a foreground run reported (its exported environment;
 * with bash, its other variables and its functions) taken as the
 * session's (pstate.h), by the rules of shexec_session_set_persist_env().
 * It sees neither the session nor the run: the caller hands over what the
 * run reported and what it started with.
 */
#ifndef SHX_PERSIST_H
#define SHX_PERSIST_H

#include "shx/buf.h"
#include "shx/env.h"
#include "shx/glob.h"
#include "persist/pstate.h"
#include "shell/record.h"

/* What a run that reports its state carries (run.h holds one): set when it
 * starts, read when it ends. */
typedef struct shx_persist_run {
    int on;                       /* its shell reports its state (a foreground local run) */
    char **start_env;             /* the environment the shell got */
    char **prior_env;             /* the same without the run's own variables;
                                     NULL when the run has none (start_env then) */
} shx_persist_run;

/* A finished run's report, and what judging it needs. */
typedef struct shx_persist_report {
    const shx_record *record;     /* what the shell reported */
    const shx_envlist *run_env;   /* the run's own variables */
    const shx_persist_run *run;   /* what it started with */
    const shx_globlist *deny, *allow; /* the session's name rules */
    int shell_bash;               /* the session's shell is bash (lists with declare -p) */
    shx_buf *notice;              /* the run's notice: what is not taken, and why */
} shx_persist_report;

#if SHX_WITH_PERSIST
/* Take what the report says as p's state (the run ended by itself, in the
 * foreground); a report that is not taken says why in the notice. */
void shx_persist_adopt(shx_persist *p, const shx_persist_report *in);

/* The run's shell could not define some of the functions it was given (lost:
 * their names, each with its NUL): p forgets them, and the notice says so. */
void shx_persist_forget_lost(shx_persist *p, const shx_buf *lost, shx_buf *notice);
#else
static inline void shx_persist_adopt(shx_persist *p, const shx_persist_report *in)
{
    (void)p, (void)in;
}
static inline void shx_persist_forget_lost(shx_persist *p, const shx_buf *lost, shx_buf *notice)
{
    (void)p, (void)lost, (void)notice;
}
#endif

#endif
