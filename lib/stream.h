/*
 * stream.h - one output stream of a running command: the read end of its
 * pipe and the pipeline its bytes go through, in order:
 *   sentinel filter (stdout) -> ANSI stripper (when asked) -> output callback
 *   -> capture (and, for tasks, the capture of what is new since the last read).
 */
#ifndef SHX_STREAM_H
#define SHX_STREAM_H

#include "ansi.h"
#include "capture.h"
#include "sentinel.h"
#include "shexec.h"

typedef struct shx_stream {
    int fd;        /* read end, non-blocking; -1 once closed */
    int id;        /* SHEXEC_STDOUT / SHEXEC_STDERR */
    int filter;    /* run the sentinel filter */
    shx_sentinel sentinel;
    int strip;     /* run the ANSI stripper */
    shx_ansi ansi;
    shx_buf stripped;
    shx_capture capture;
    int fresh_on;  /* tasks: also capture what is new since the last read */
    shx_capture fresh;
    shexec_output_fn fn;
    void *user;
    int failed;    /* ENOMEM while capturing: further bytes are only counted */
} shx_stream;

void shx_stream_init(shx_stream *st, int id, int fd, const char *tag, uint64_t limit, int unit,
                     int keep, shexec_output_fn fn, void *user);
/*
 * Read what the pipe has (up to a few buffers) and push it down the pipeline.
 * Returns 1 at EOF (the descriptor is then closed), 0 otherwise.
 */
int shx_stream_read(shx_stream *st);
/* Read until the pipe is empty or at EOF, at most `max` bytes. */
void shx_stream_drain(shx_stream *st, size_t max);
/* Strip ANSI escape sequences from this stream from now on. */
void shx_stream_enable_strip(shx_stream *st);
/* With stripping: push out a partial line held for \r resolution (a prompt). */
void shx_stream_flush_strip(shx_stream *st);
/* Keep a second capture of what is new since the last shx_stream_take_fresh(). */
void shx_stream_enable_fresh(shx_stream *st);
/* Render what is new into out and start a new "fresh" capture. 0 or -1. */
int shx_stream_take_fresh(shx_stream *st, shx_buf *out);
/* No more input: close the descriptor, flush the filter, finish the capture. */
void shx_stream_finish(shx_stream *st);
void shx_stream_free(shx_stream *st);

#endif
