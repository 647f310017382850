/*
 * channels.h - the descriptors a run's shell gets besides its standard ones
 * (channels.c): the prelude, a sealed anonymous file the shell reads, and
 * the report socket, on which only the run's own shell is heard.
 */
#ifndef SHX_CHANNELS_H
#define SHX_CHANNELS_H

#include <stddef.h>
#include <sys/types.h>

#include "shx/buf.h"
#include "shell/record.h"
#include "shexec.h"

/*
 * A new anonymous file holding prelude, read-only from here on: a memfd
 * sealed against writes, growth and shrinking where the platform has one
 * (a process that reopens it through /proc can read it, never change it),
 * else an unlinked temporary file of mode 0400. Its offset is at 0,
 * close-on-exec, at 10 or above, in *out. A prelude larger than the
 * process's file-size limit is refused before anything is written (a write
 * past it would raise SIGXFSZ in the host). SHEXEC_OK, or SHEXEC_ENOMEM /
 * SHEXEC_ESYS / SHEXEC_E2BIG with the session's message set (nothing left
 * open).
 */
int shx_prelude_open(shexec_session *s, const shx_buf *prelude, int *out);

/*
 * The same as shx_prelude_open, for a prelude the shell opens by path
 * (/dev/fd/N: a new open file each time, its offset its own), made once and
 * kept by the session while its bytes stay the same: `*kept` is the
 * session's (NULL at first; shx_prelude_kept_free ends it), and *out is
 * the kept descriptor, the session's still (the caller passes it, never
 * closes it). Before it is given again it is checked to be the file that
 * was made (a host that closes every descriptor may have put another at its
 * number), else a new one is made. kept NULL: shx_prelude_open itself (a
 * shell that reads the descriptor moves its offset: each gets its own).
 * Errors as shx_prelude_open's.
 */
struct shx_prelude_kept;
int shx_prelude_kept_open(shexec_session *s, struct shx_prelude_kept **kept,
                          const shx_buf *prelude, int *out);
void shx_prelude_kept_free(struct shx_prelude_kept *kept);

/* The report socket's host end and what it has heard (shx_report_*). */
typedef struct shx_report {
    int fd;          /* the host's end, close-on-exec, never waited on (a pipe is
                        non-blocking, a socket read with MSG_DONTWAIT); -1: none */
    pid_t shell;     /* the sender heard; 0: the first that speaks (a wrapped shell) */
    int sock;        /* a socket (else a pipe) */
    int checked;     /* senders are known (SO_PASSCRED): others are refused */
    size_t refused;  /* bytes from other senders, dropped */
    int never_waits; /* the shell's writes never wait for the host (a socket whose
                        shell end is non-blocking): it is read once the shell is gone */
} shx_report;

/*
 * The report channel. sock: a connected pair of Unix stream sockets, rep->fd
 * the host's end (with SO_PASSCRED where the platform has it, so every
 * message names its sender's pid); else a pipe (for a POSIX shell, which
 * can reach a descriptor above 9 only by opening /dev/fd/N, and a socket
 * cannot be opened so: no sender is checked). *shell_end is the end the
 * shell gets (close-on-exec, at 10 or above). big: the report may hold
 * the shell's state, more than a socket holds; else a socket's shell end
 * is non-blocking (rep->never_waits): a report of status and directory
 * always fits, and a command that fills the socket first makes its own
 * report fail, never its shell wait. SHEXEC_OK, or SHEXEC_ENOMEM /
 * SHEXEC_ESYS with the message set (nothing left open).
 */
int shx_report_open(shexec_session *s, shx_report *rep, int *shell_end, int sock, int big);

/*
 * Take what has come on the socket, without waiting: the bytes whose sender
 * is the run's shell (rep->shell; where it is 0, the first sender becomes
 * it) go to rec, in order; bytes from anyone else (a process the command
 * started, which inherited the descriptor) are dropped and counted. At most
 * `budget` bytes are read in all (a sender that never stops cannot hold the
 * host). Returns 1 when the socket is at its end (every holder closed it),
 * else 0.
 */
int shx_report_take(shx_report *rep, shx_record *rec, size_t budget);

/* Close the host's end (nothing more is heard). */
void shx_report_close(shx_report *rep);

/* The report channel's number in the shell: SHX_CHANNEL_FD (script.h), or
 * lower where the limit on open descriptors is lower (a dup2 above it
 * fails); -1 when that limit is below 12. */
int shx_channel_number(void);

/* 1 when /dev/fd/N opens what is open at descriptor N in this process
 * (Linux: /proc is mounted; elsewhere fdescfs or its like), else 0. */
int shx_devfd_works(void);

#endif
