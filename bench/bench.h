/*
 * bench.h - what the parts of the libshexec benchmark share: the run's
 * configuration and sizes, timing and sample statistics, raw (library-free)
 * spawning, the Python and Node peers, and the result table every section
 * writes its rows into.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shexec.h"

/* Every contender runs its command as `/bin/sh -c CMD` unless a row says otherwise. */
#define BENCH_SHELL "/bin/sh"

/* Sizes and counts of one run: full, or the BENCH_QUICK smoke run. */
typedef struct {
    int quick;
    /* 1. spawn overhead */
    int spawn_n, spawn_rounds;
    /* 2. spawn vs host size */
    uint64_t host_mib;
    int host_n, host_fork_n, host_rounds;
    double host_budget_s; /* a peer's spawn loop at either size stops after this */
    /* 3. throughput */
    uint64_t tput_bytes;
    int tput_rounds;
    /* 4. idle */
    const char *idle_cmd;
    int idle_rounds;
    /* 5. timeouts */
    int to_rounds, tree_procs, tree_rounds;
    uint32_t tree_timeout_ms;
    /* 6. latency */
    int lat_lines, lat_spacing_us, lat_rounds;
    /* 7. concurrency */
    int conc_tasks;
    uint64_t conc_bytes;
    int conc_rounds;
} bench_sizes;

typedef enum { PEER_PY, PEER_NODE, NPEERS } peer_id;
/* Compiled contenders: a program of their own (no script), built by `make
 * bench` where the toolchain is installed: Rust's std::process::Command and
 * the Rust binding (bench/peers/rust), Go's os/exec and the Go binding
 * (bench/peers/go). They speak the script peers' protocol. */
typedef enum { BIN_RUST, BIN_GO, NBINS } bin_id;

typedef struct {
    bench_sizes z;
    char self[4096];     /* this executable, for the child modes */
    char tsline[4096];   /* the timestamped-line writer (bench/helpers/tsline.c) */
    char peer_script[NPEERS][4096];
    char peer_exe[NPEERS][4096];     /* "" when the runtime is absent */
    char peer_version[NPEERS][64];
    char bin_exe[NBINS][4096];       /* "" when not built */
    char bin_version[NBINS][64];
    char tmpdir[256];    /* scratch directory of this run, removed at exit */
} bench_env;

extern bench_env B;

/* --- time, statistics ---------------------------------------------------- */
int64_t now_ns(void);
double now_s(void);
double median(const double *v, int n);
double percentile(double *v, int n, double p); /* sorts v in place */
double spread_pct(const double *v, int n);     /* (max - min) / median, % */
double maxof(const double *v, int n);
double minof(const double *v, int n);
/*
 * Median over rounds of num[k] / den[k]: each ratio pairs two samples taken
 * back to back, so a burst of outside load shifts both, not one of them.
 */
double paired_ratio(const double *num, const double *den, int n);

/* snprintf that dies instead of truncating (paths, command lines) */
void strf(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Something is broken (not merely slow): say what and exit 1. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- process facts -------------------------------------------------------- */
long vm_hwm_kib(void);    /* this process's peak RSS from /proc/self/status, or -1 */
long thread_nvcsw(void);  /* voluntary context switches of the calling thread */

/* --- raw spawning, the floor ---------------------------------------------- */
/* posix_spawn BENCH_SHELL -c cmd; stdout to out_fd unless it is -1. */
pid_t raw_spawn_sh(const char *cmd, int out_fd);
/* posix_spawn path argv, stdout to out_fd unless -1, stderr to err_fd unless -1. */
pid_t raw_spawn(const char *path, char *const argv[], int out_fd, int err_fd);
/* The same, the child leading a process group of its own; stdio inherited. */
pid_t raw_spawn_own_group(const char *path, char *const argv[]);
/* In a group of its own, stdout to out_fd and stderr to err_fd. */
pid_t raw_spawn_own_group_io(const char *path, char *const argv[], int out_fd, int err_fd);
/* Leading a session of its own (POSIX_SPAWN_SETSID), as the library's
 * commands do; stdout to out_fd unless -1. */
pid_t raw_spawn_own_session(const char *path, char *const argv[], int out_fd);
/* Reap pid (EINTR retried); its wait status. */
int raw_reap(pid_t pid);
/* Reap pid; die unless it exited 0. */
void raw_wait_ok(pid_t pid, const char *what);
/* Raw spawn of `sh -c cmd` with stdout on a pipe: everything it prints. */
char *raw_capture(const char *path, char *const argv[], size_t *len, int *status);

/* --- peers ---------------------------------------------------------------- */
int peer_present(peer_id p);
const char *peer_name(peer_id p);
/*
 * Run the peer script with args (NULL-terminated) and return its result
 * line ("key=value ..."), or NULL when the runtime is absent. A peer that
 * fails or prints no result is broken: die.
 */
const char *peer_run(peer_id p, const char *const *args);
int bin_present(bin_id b);
const char *bin_name(bin_id b);
/* Run a compiled peer with args, as peer_run(); NULL when it is not built. */
const char *bin_run(bin_id b, const char *const *args);
/* The number after "key=" in a result line; die when missing. */
double kv_num(const char *line, const char *key);

/* --- the table ------------------------------------------------------------ */
enum { C_FLOOR, C_LIB, C_PY, C_NODE, C_OTHER, C_RATIO, C_TARGET, C_VERDICT, NCELLS };
typedef struct bench_row bench_row;
bench_row *row_new(const char *id, const char *what, const char *unit);
void cell(bench_row *r, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rule(void); /* a blank line between groups of rows */
void footnote(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void table_print(void);
/* "skipped" in the peer cells of a row whose runtime is absent */
void cell_peer_skipped(bench_row *r, peer_id p);
/* A peer's cell: the median of its samples formatted with fmt (one double),
 * or "skipped" when they are negative (its runtime is absent). */
void cell_peer(bench_row *r, peer_id p, const double *samples, int rounds, const char *fmt);

/* --- sections ------------------------------------------------------------- */
void sec_spawn(void);        /* 1 */
void sec_host_size(void);    /* 2 */
void sec_throughput(void);   /* 3 */
void sec_idle(void);         /* 4 */
void sec_timeouts(void);     /* 5 */
void sec_latency(void);      /* 6 */
void sec_concurrency(void);  /* 7 */
void sec_workload(void);     /* 8 */

/* child modes of this executable (argv[1]) */
int child_host_size(int argc, char **argv); /* --host-size MIB N FORK_N */

/* a session on BENCH_SHELL with the default limits, on process groups
 * (containment off: the rows that measure cgroups ask for them); dies on failure */
shexec_session *lib_session(void);
/* one library run of cmd, dies unless it exited 0 */
void lib_run_ok(shexec_session *s, const char *cmd);

#endif
