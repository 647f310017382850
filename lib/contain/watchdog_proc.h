/*
 * watchdog_proc.h - the watchdog process (watchdog_proc.c): the messages the
 * host sends it, the arena it lives in (allocated by the host before the
 * fork), and its end: on the host's death it proves each group still
 * the command's, finds the processes that left the groups through their
 * live parents, and terminates them all as a timeout would (TERM, the
 * grace, KILL). Its main loop is watchdog_wait.h's.
 */
#ifndef SHX_WATCHDOG_PROC_H
#define SHX_WATCHDOG_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "contain/contain_hook.h"

/* One message from host to watchdog: a fixed size below PIPE_BUF, so each
 * write is atomic and never interleaves or splits. */
typedef struct shx_wd_msg {
    int32_t type;        /* SHX_WD_* */
    int32_t pgid;
    int32_t pid;         /* SHX_WD_ANCHOR: the member */
    uint32_t grace_ms;   /* SHX_WD_GRACE */
    uint64_t start;      /* start time (clock ticks after boot) of the leader
                            (SHX_WD_GROUP) or member (SHX_WD_ANCHOR); 0: unknown */
} shx_wd_msg;

enum {
    SHX_WD_GROUP = 1,    /* a command's group, led by pgid, the leader's start time */
    SHX_WD_ANCHOR = 2,   /* a live member of pgid, which its leader has left */
    SHX_WD_FORGET = 3,   /* the command of pgid is over: no longer the session's */
    SHX_WD_GRACE = 4,    /* the time between SIGTERM and SIGKILL */
    SHX_WD_QUIT = 5      /* the session is freed: exit without signalling */
};

/* Capacity of the watchdog's tables (a bound on its memory). */
#define SHX_WD_GROUPS 8192
#define SHX_WD_ANCHORS 4
#define SHX_WD_PROCS (1 << 17)
#define SHX_WD_DROPS 512
#define SHX_WD_SENT 4096 /* processes signalled one by one, remembered */
#define SHX_WD_SLOTS ((size_t)2 * SHX_WD_PROCS) /* the pid hash */

typedef struct shx_wd_anchor {
    pid_t pid;
    uint64_t start;
} shx_wd_anchor;

typedef struct shx_wd_group {
    pid_t pgid;          /* 0: a free slot */
    int proven;          /* at the last scan: provably the command's group */
    uint64_t start;      /* the leader's */
    int n;
    shx_wd_anchor a[SHX_WD_ANCHORS];
} shx_wd_group;

typedef struct shx_wd_proc {
    pid_t pid, ppid, pgrp;
    int zombie;
    int mark;            /* a proven group's member or one of their descendants
                            (1), or one signalled on its own before (2) */
    uint64_t start;
} shx_wd_proc;

/*
 * Everything the watchdog process uses, allocated by the host before the
 * fork (the child makes no allocation: it may be the copy of one thread of
 * a multithreaded host, where only async-signal-safe calls are allowed).
 */
typedef struct shx_wd_arena {
    int fd;              /* the read end */
    int max_fd;          /* the highest descriptor to close without close_range */
    uint32_t grace_ms;
    pid_t host;          /* the host: the watchdog's parent while it lives */
    uint32_t test_pause_ms; /* the tests' pause between its look and its signals */
    int ngroups;         /* slots in use, some freed (pgid 0) */
    shx_wd_group groups[SHX_WD_GROUPS];
    size_t nprocs;
    shx_wd_proc procs[SHX_WD_PROCS];
    int32_t index[SHX_WD_SLOTS]; /* procs index + 1 by pid hash, 0 empty */
    /* processes signalled one by one (they had left their group): once
     * their parent dies nothing links them to the command any more, so the
     * later rounds find them by pid and start time */
    int nsent;
    shx_wd_anchor sent[SHX_WD_SENT];
    char dents[32768];
    uintptr_t drop[SHX_WD_DROPS][2]; /* the host's mappings the watchdog gives back */
    unsigned char inbuf[4096];
    size_t inlen;
    char cgroup[SHX_CGROUP_PATH_MAX]; /* the session's cgroup (contain_hook.h), "": none */
} shx_wd_arena;

/* The host is gone: every command of the session ended (SIGTERM and
 * SIGCONT, the grace, SIGKILL, each step after a fresh look), then the
 * process exits. */
void shx_wd_terminate_all(shx_wd_arena *a) __attribute__((noreturn));

/* The start time of pid from /proc (clock ticks after boot), zombies
 * included; 0 when it cannot be read or this build has no /proc.
 * Async-signal-safe. */
uint64_t shx_wd_start_time(pid_t pid);

#endif
