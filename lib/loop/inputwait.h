/*
 * inputwait.h - whether a command's processes wait for input that only the
 * host can give: one of them blocked reading its terminal (a pty run) or
 * the stdin pipe the host writes (a pipe run with stdin open). What /proc
 * says about a blocked process (/proc/PID/syscall: the call and its
 * arguments; /proc/PID/fd: what a descriptor is) decides it; a process that
 * sleeps, computes or reads another pipe is not waiting for the host.
 */
#ifndef SHX_INPUTWAIT_H
#define SHX_INPUTWAIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What a blocked process is reading (shx_inputwait_parse). */
enum {
    SHX_WAIT_NONE = 0, /* running, sleeping, or a call that reads no descriptor */
    SHX_WAIT_FD = 1,   /* a read of *fd; or select() of descriptor 0 alone */
    SHX_WAIT_POLL1 = 2 /* poll()/ppoll() of one descriptor: its struct pollfd at *addr */
};

/*
 * What the text of /proc/PID/syscall ("NR ARG1 ... ARG6 SP PC", "running",
 * or "-1 SP PC") says a process is blocked reading, for this machine's
 * system call numbers. Pure: any text is safe.
 */
int shx_inputwait_parse(const char *text, size_t len, int *fd, uint64_t *addr);

/* What the host's side of the input is: the pty's master (else -1), or the
 * write end of the stdin pipe (else -1). */
typedef struct shx_inputwait_target {
    int pty_master;
    int stdin_pipe;
    int start_known;         /* start_lflag is the pty's c_lflag at the start */
    unsigned long start_lflag;
} shx_inputwait_target;

/*
 * Whether a terminal whose local flags are now lflag (and were start_lflag
 * when the command started, if start_known) reads a password: no echo, yet
 * line by line (a line editor such as readline turns both off and echoes
 * itself). A terminal the library opened without echo (SHEXEC_PTY_ON)
 * tells only when the program changed another of the flags a password
 * reader clears (bash's `read -s`: ECHOK; glibc's getpass(): ISIG); one
 * that clears ECHO alone, or ECHO and ECHONL, changes nothing there. Pure.
 */
int shx_inputwait_password(unsigned long lflag, int start_known, unsigned long start_lflag);

/* The answer of a look (SHEXEC_INPUT_* values). */
/*
 * Whether one of pids (the command's processes) is blocked reading the
 * target: 1 (and *echo_off: the terminal does not echo, a password
 * prompt; 0 for a pipe), 0 when none is, -1 when /proc cannot tell (not
 * Linux, no /proc).
 */
int shx_inputwait_probe(const pid_t *pids, size_t n, const shx_inputwait_target *target,
                        int *echo_off);

#endif
