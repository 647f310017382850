/*
 * stream.h - one output stream of a running command: the read end of its
 * pipe and the pipeline its bytes go through, in order:
 *   sentinel filter (stdout) -> ANSI stripper (when asked) -> redaction
 *   (when asked) -> spill file (once the stream may outgrow its limit) and
 *   capture (and, for tasks, the capture of what is new since the last
 *   read) -> output callback.
 *
 * Bytes are captured the moment they leave the pipeline, so the capture has
 * them in stream order whoever pushes them out: the loop reading the pipe,
 * or a read of the output that pushes out a pending partial line (with
 * stripping). The callback gets them in that same order, and only from the
 * loop: never from inside itself, never from a read. What a read pushed out
 * is queued for it, and handed over first at the next emission or the next
 * loop round (shx_stream_give_queued).
 */
#ifndef SHX_STREAM_H
#define SHX_STREAM_H

#include "stream/ansi.h"
#include "stream/capture.h"
#include "output/output_hook.h"
#include "stream/sentinel.h"
#include "shexec.h"

/* A stream that has carried more than this (a default Linux pipe) is bulk
 * output, and its pipe is grown to SHX_STREAM_PIPE_BYTES where the kernel
 * allows (Linux's default pipe-max-size, what unprivileged users may ask). */
#define SHX_STREAM_GROW_AFTER ((size_t)64 * 1024)
#define SHX_STREAM_PIPE_BYTES (1 << 20)
/* How much of the last, unfinished line a stream keeps (a prompt). */
#define SHX_STREAM_TAIL 256

typedef struct shx_stream {
    int fd;        /* read end, non-blocking; -1 once closed */
    int held;      /* the pipe's write end, held by the host until the shell's exit
                      (shx_stream_let_go); -1: none */
    int id;        /* SHEXEC_STDOUT / SHEXEC_STDERR */
    int filter;    /* run the sentinel filter */
    shx_sentinel sentinel;
    int strip;     /* run the ANSI stripper */
    shx_ansi ansi;
    shx_buf stripped;   /* the stripper's output for one input chunk */
    int redact_on;      /* the redaction stage runs */
    shx_redactor redact;
    /* where the redaction stage goes on at the finish, with what it holds
     * back (the stream a task of the command's leftovers reads on), NULL:
     * it ends here; and the occurrences hidden in this stream, once the
     * stage went on (redact_on 0) or came from another (to leave out) */
    struct shx_stream *redact_to;
    uint64_t redactions_here;
    shx_buf redacted;   /* the redaction's output for one input chunk */
    shx_spill spill;    /* dir NULL: no spill file */
    shx_buf queued;     /* captured, not yet handed to the callback */
    int in_callback;    /* the callback runs: what is emitted now is queued */
    shx_capture capture;
    int fresh_on;  /* tasks: also capture what is new since the last read (fresh.h) */
    shx_capture fresh;
    shexec_output_fn fn;
    void *user;
    size_t grow_after;  /* bytes still to read before the pipe is grown; 0: done */
    int failed;    /* ENOMEM while capturing: further bytes are only counted */
    char tail[SHX_STREAM_TAIL]; /* the last line so far, unfinished (its end) */
    size_t tail_len;
} shx_stream;

/* The last line of what the stream carried so far, unfinished (after its
 * last newline; at most SHX_STREAM_TAIL bytes, not NUL-terminated). */
const char *shx_stream_tail(const shx_stream *st, size_t *len);

/* Hand the chunks read from now on to fn (NULL: none). */
void shx_stream_set_fn(shx_stream *st, shexec_output_fn fn, void *user);

void shx_stream_init(shx_stream *st, int id, int fd, const char *tag, uint64_t limit, int unit,
                     int keep, shexec_output_fn fn, void *user);
/* What shx_stream_read() found. */
enum { SHX_STREAM_EMPTY, SHX_STREAM_DATA, SHX_STREAM_EOF };
/*
 * Read what the pipe has (up to a few buffers) and push it down the pipeline.
 * SHX_STREAM_EOF at end of input (the descriptor is then closed), otherwise
 * SHX_STREAM_DATA when bytes came, SHX_STREAM_EMPTY when none did.
 */
int shx_stream_read(shx_stream *st);
/* Read until the pipe is empty or at EOF, at most `max` bytes. */
void shx_stream_drain(shx_stream *st, size_t max);
/* Occurrences hidden so far. */
uint64_t shx_stream_redactions(const shx_stream *st);
/* A starting run's two streams: keep each whole in a file of d (NULL: none)
 * once it may outgrow its limit, as the run numbered next in d, and hide
 * set's secrets from them (NULL: none; each takes a reference). */
void shx_streams_attach(shx_stream *out, shx_stream *err, shx_spill_dir *d, shx_redact_set *set);
/* Strip ANSI escape sequences from this stream from now on. */
void shx_stream_enable_strip(shx_stream *st);
/*
 * With stripping: push out a partial line held for \r resolution (a prompt)
 * into the capture. The callback does not get it here: it is queued for it.
 * Safe from inside the callback.
 */
void shx_stream_flush_strip(shx_stream *st);
/* Hand what is queued to the callback (from the loop only). */
void shx_stream_give_queued(shx_stream *st);
/* 1 when bytes wait for the callback. */
int shx_stream_has_queued(const shx_stream *st);
/* No callback from now on; what was queued for it is dropped. */
void shx_stream_detach(shx_stream *st);
/* The redaction stage of `from` goes on in `to` when `from` finishes (both
 * hide the same set): a secret the command's last bytes began and its
 * leftovers' first bytes end is hidden, in `to`. */
void shx_stream_hand_redaction(shx_stream *from, shx_stream *to);
/* No more input: close the descriptor, flush the filter, finish the capture,
 * hand the callback what is left. */
void shx_stream_finish(shx_stream *st);
/* Let go of the pipe's write end the host held (held): the pipe hangs up
 * once every process that inherited it has closed it too. */
void shx_stream_let_go(shx_stream *st);
void shx_stream_free(shx_stream *st);

#endif
