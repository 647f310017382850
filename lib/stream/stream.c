/*
 * stream.c - reading one output stream through its pipeline (see stream.h).
 */
#include "stream/stream.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shx/platform.h"

/* Big enough that a fast writer is read in few syscalls; lives on the stack. */
#define READ_CHUNK (64 * 1024)

void shx_stream_init(shx_stream *st, int id, int fd, const char *tag, uint64_t limit, int unit,
                     int keep, shexec_output_fn fn, void *user)
{
    st->fd = fd;
    st->held = -1;
    st->id = id;
    st->filter = tag != NULL;
    if (tag)
        shx_sentinel_init(&st->sentinel, tag);
    shx_capture_init(&st->capture, limit, unit, keep);
    st->fn = fn;
    st->user = user;
    st->failed = 0;
    st->fresh_on = 0;
    st->strip = 0;
    st->stripped = (shx_buf)SHX_BUF_INIT;
    st->redact_on = 0;
    st->redact_to = NULL;
    st->redactions_here = 0;
    st->redacted = (shx_buf)SHX_BUF_INIT;
    shx_spill_init(&st->spill, NULL, 0, "");
    st->queued = (shx_buf)SHX_BUF_INIT;
    st->in_callback = 0;
    st->grow_after = SHX_STREAM_GROW_AFTER;
}

/* The stream's last line so far, unfinished: what follows its last
 * newline, its last SHX_STREAM_TAIL bytes (a prompt is short). Only the
 * chunk's last SHX_STREAM_TAIL bytes are looked at: a newline before them
 * changes nothing that is kept, so bulk output costs no scan of its own. */
static void keep_tail(shx_stream *st, const char *data, size_t len)
{
    if (len > SHX_STREAM_TAIL) {
        st->tail_len = 0; /* what it held is further back than the kept end */
        data += len - SHX_STREAM_TAIL;
        len = SHX_STREAM_TAIL;
    }
    const char *nl = NULL;
    for (size_t i = len; i > 0 && !nl; i--)
        if (data[i - 1] == '\n')
            nl = data + i - 1;
    if (nl) {
        st->tail_len = 0;
        len -= (size_t)(nl + 1 - data);
        data = nl + 1;
    }
    if (len >= SHX_STREAM_TAIL) {
        memcpy(st->tail, data + len - SHX_STREAM_TAIL, SHX_STREAM_TAIL);
        st->tail_len = SHX_STREAM_TAIL;
        return;
    }
    if (st->tail_len + len > SHX_STREAM_TAIL) {
        size_t drop = st->tail_len + len - SHX_STREAM_TAIL;
        memmove(st->tail, st->tail + drop, st->tail_len - drop);
        st->tail_len -= drop;
    }
    memcpy(st->tail + st->tail_len, data, len);
    st->tail_len += len;
}

const char *shx_stream_tail(const shx_stream *st, size_t *len)
{
    *len = st->tail_len;
    return st->tail;
}

/* The spill file starts when the stream may first outgrow its limit (a
 * character is at least a byte): until then the capture holds every byte,
 * which the file then gets first. */
static void spill(shx_stream *st, const char *data, size_t len)
{
    shx_spill *sp = &st->spill;
    shx_capture *c = &st->capture;
    if (!sp->dir)
        return;
    if (!shx_spill_started(sp)) {
        if (c->total_bytes + len <= c->limit)
            return;
        shx_spill_open(sp);
        const unsigned char *a, *b;
        size_t a_len, b_len;
        shx_capture_tail_pieces(c, &a, &a_len, &b, &b_len);
        shx_spill_write(sp, c->head.data, c->head.len);
        shx_spill_write(sp, (const char *)a, a_len);
        shx_spill_write(sp, (const char *)b, b_len);
        shx_spill_write(sp, (const char *)c->pend, c->pend_len);
    }
    shx_spill_write(sp, data, len);
}

static void capture(shx_stream *st, const char *data, size_t len)
{
    spill(st, data, len);
    if (shx_capture_feed(&st->capture, data, len) != 0)
        st->failed = 1;
    if (st->fresh_on && shx_capture_feed(&st->fresh, data, len) != 0)
        st->failed = 1;
    keep_tail(st, data, len);
}

static void call_back(shx_stream *st, const char *data, size_t len)
{
    st->in_callback = 1;
    st->fn(st->user, st->id, data, len);
    st->in_callback = 0;
}

void shx_stream_give_queued(shx_stream *st)
{
    while (st->fn && st->queued.len && !st->in_callback) {
        /* the callback may queue more meanwhile (by reading): that goes
         * into a fresh buffer and is handed over next, in order */
        shx_buf batch = st->queued;
        st->queued = (shx_buf)SHX_BUF_INIT;
        call_back(st, batch.data, batch.len);
        if (!st->queued.data) {
            shx_buf_clear(&batch); /* keep the memory for the next batch */
            st->queued = batch;
        } else {
            shx_buf_free(&batch);
        }
    }
}

int shx_stream_has_queued(const shx_stream *st)
{
    return st->fn && st->queued.len > 0;
}

void shx_stream_set_fn(shx_stream *st, shexec_output_fn fn, void *user)
{
    st->fn = fn;
    st->user = user;
}

void shx_stream_detach(shx_stream *st)
{
    st->fn = NULL;
    st->user = NULL;
    shx_buf_free(&st->queued);
}

/* The end of the pipeline: capture (this fixes the bytes' place in the
 * stream), then the callback, after what was queued for it before. */
static int deliver(void *ctx, const char *data, size_t len)
{
    shx_stream *st = ctx;
    capture(st, data, len);
    if (!st->fn)
        return 0;
    if (st->in_callback) {
        /* the loop is never run from a callback, so this does not happen;
         * were it to, the bytes would wait their turn */
        if (shx_buf_append(&st->queued, data, len) != 0)
            st->failed = 1;
        return 0;
    }
    shx_stream_give_queued(st);
    if (st->fn) /* a queued batch's callback may have freed the command */
        call_back(st, data, len);
    shx_stream_give_queued(st); /* what the callback pushed out by reading */
    return 0;
}

/* Before the capture: the optional redaction. `last` (data NULL) settles
 * what the redactor still holds back, at the stream's end. */
static int redact_stage(shx_stream *st, const char *data, size_t len, int last)
{
    if (!st->redact_on)
        return last ? 0 : deliver(st, data, len);
    if ((last ? shx_redactor_finish(&st->redact, &st->redacted)
              : shx_redactor_feed(&st->redact, data, len, &st->redacted)) != 0)
        st->failed = 1;
    if (st->redacted.len)
        deliver(st, st->redacted.data, st->redacted.len);
    shx_buf_clear(&st->redacted); /* handed on: the next feed starts empty */
    return 0;
}

/* Between the sentinel filter and the redaction: the optional ANSI
 * stripper; `last` as above, its rest then fed on to the redaction. */
static int strip_stage(shx_stream *st, const char *data, size_t len, int last)
{
    if (!st->strip)
        return last ? 0 : redact_stage(st, data, len, 0);
    shx_buf_clear(&st->stripped);
    if ((last ? shx_ansi_finish(&st->ansi, &st->stripped)
              : shx_ansi_feed(&st->ansi, data, len, &st->stripped)) != 0)
        st->failed = 1;
    if (st->stripped.len)
        redact_stage(st, st->stripped.data, st->stripped.len, 0);
    return 0;
}

/* What the sentinel filter lets through (shx_emit_fn) enters the stages. */
static int after_sentinel(void *ctx, const char *data, size_t len)
{
    return strip_stage(ctx, data, len, 0);
}

static void enable_redact(shx_stream *st, shx_redact_set *set)
{
    shx_redactor_init(&st->redact, set);
    st->redact_on = 1;
}

uint64_t shx_stream_redactions(const shx_stream *st)
{
    /* a stage that came from another counted its occurrences there first */
    return st->redact_on ? shx_redactor_count(&st->redact) - st->redactions_here : st->redactions_here;
}

void shx_stream_hand_redaction(shx_stream *from, shx_stream *to)
{
    if (from->redact_on && to->redact_on && from->redact.set == to->redact.set)
        from->redact_to = to;
}

/* The finish of a stream whose redaction stage goes on in another: the
 * bytes it holds back are the other's to settle. */
static void pass_redaction_on(shx_stream *st)
{
    shx_stream *to = st->redact_to;
    st->redact_to = NULL;
    uint64_t seen = shx_redactor_count(&st->redact);
    shx_redactor_free(&to->redact);
    to->redact = st->redact;
    to->redactions_here = seen;
    st->redactions_here = seen;
    st->redact_on = 0;
}

static void enable_spill(shx_stream *st, shx_spill_dir *d, uint64_t run_seq)
{
    shx_spill_init(&st->spill, d, run_seq, st->id == SHEXEC_STDOUT ? "stdout" : "stderr");
}

void shx_streams_attach(shx_stream *out, shx_stream *err, shx_spill_dir *d, shx_redact_set *set)
{
    if (d) {
        uint64_t seq = ++d->seq;
        enable_spill(out, d, seq);
        enable_spill(err, d, seq);
    }
    if (set) {
        enable_redact(out, set);
        enable_redact(err, set);
    }
}

void shx_stream_enable_strip(shx_stream *st)
{
    st->strip = 1;
    shx_ansi_init(&st->ansi);
}

void shx_stream_flush_strip(shx_stream *st)
{
    if (!st->strip)
        return;
    /* Not into st->stripped: the pipeline may be handing that to the
     * callback right now (a read from inside the callback). */
    size_t before = st->queued.len;
    if (shx_ansi_flush(&st->ansi, &st->queued) != 0) {
        st->failed = 1; /* nothing was taken from the stripper */
        return;
    }
    if (st->redact_on && st->queued.len > before) {
        /* through the redaction too, into a buffer of its own for the
         * same reason */
        shx_buf hidden = SHX_BUF_INIT;
        if (shx_redactor_feed(&st->redact, st->queued.data + before, st->queued.len - before,
                              &hidden) != 0)
            st->failed = 1;
        st->queued.len = before;
        st->queued.data[before] = '\0';
        if (shx_buf_append(&st->queued, hidden.data ? hidden.data : "", hidden.len) != 0)
            st->failed = 1;
        shx_buf_free(&hidden);
    }
    if (st->queued.len > before)
        capture(st, st->queued.data + before, st->queued.len - before);
    if (!st->fn)
        shx_buf_clear(&st->queued);
}

static void push(shx_stream *st, const char *data, size_t len)
{
    if (st->filter)
        shx_sentinel_feed(&st->sentinel, data, len, after_sentinel, st);
    else
        strip_stage(st, data, len, 0);
}

void shx_stream_let_go(shx_stream *st)
{
    if (st->held >= 0) {
        close(st->held);
        st->held = -1;
    }
}

static void close_fd(shx_stream *st)
{
    shx_stream_let_go(st);
    if (st->fd >= 0) {
        close(st->fd);
        st->fd = -1;
    }
}

/*
 * Bulk output (more than a default pipe's worth so far) gets a bigger pipe:
 * the writer then blocks on a full pipe, and wakes the reader, far less
 * often. One fcntl per bulk stream, none for the small outputs most
 * commands print, so a spawn costs what it did. Best effort: the kernel
 * may refuse (a per-user budget of pipe memory), and a pty is not a pipe.
 */
static void note_read(shx_stream *st, size_t n)
{
    if (st->grow_after == 0)
        return;
    if (n < st->grow_after) {
        st->grow_after -= n;
        return;
    }
    st->grow_after = 0;
    shx_pipe_grow(st->fd, SHX_STREAM_PIPE_BYTES);
}

/* Returns bytes read, 0 at EOF, -1 when the pipe is empty (or failed). */
static ssize_t read_once(shx_stream *st, char *buf, size_t cap)
{
    for (;;) {
        ssize_t n = read(st->fd, buf, cap);
        if (n > 0) {
            note_read(st, (size_t)n);
            push(st, buf, (size_t)n);
            return n;
        }
        if (n == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return -1;
        return 0; /* EIO and friends: nothing more will come */
    }
}

int shx_stream_read(shx_stream *st)
{
    char buf[READ_CHUNK];
    if (st->fd < 0)
        return SHX_STREAM_EOF;
    int got = 0;
    /* keep reading while reads come back full: the writer is ahead of us */
    for (int round = 0; round < 16; round++) {
        ssize_t n = read_once(st, buf, sizeof buf);
        if (n == 0) {
            close_fd(st);
            return SHX_STREAM_EOF;
        }
        if (n > 0)
            got = 1;
        if (n < (ssize_t)sizeof buf)
            break;
    }
    return got ? SHX_STREAM_DATA : SHX_STREAM_EMPTY;
}

void shx_stream_drain(shx_stream *st, size_t max)
{
    char buf[READ_CHUNK];
    size_t got = 0;
    while (st->fd >= 0 && got < max) {
        size_t want = max - got < sizeof buf ? max - got : sizeof buf;
        ssize_t n = read_once(st, buf, want);
        if (n == 0) {
            close_fd(st);
            return;
        }
        if (n < 0)
            return;
        got += (size_t)n;
    }
}

void shx_stream_finish(shx_stream *st)
{
    close_fd(st);
    if (st->filter)
        shx_sentinel_finish(&st->sentinel, after_sentinel, st);
    strip_stage(st, NULL, 0, 1);
    if (st->redact_on && st->redact_to)
        pass_redaction_on(st);
    else
        redact_stage(st, NULL, 0, 1);
    shx_capture_finish(&st->capture);
    shx_spill_finish(&st->spill, shx_capture_truncated(&st->capture));
    shx_stream_give_queued(st);
}

void shx_stream_free(shx_stream *st)
{
    close_fd(st);
    if (st->filter)
        shx_sentinel_free(&st->sentinel);
    shx_capture_free(&st->capture);
    if (st->fresh_on)
        shx_capture_free(&st->fresh);
    if (st->strip)
        shx_ansi_free(&st->ansi);
    shx_buf_free(&st->stripped);
    shx_buf_free(&st->queued);
    if (st->redact_on) {
        shx_redactor_free(&st->redact);
        st->redact_on = 0;
    }
    shx_buf_free(&st->redacted);
    shx_spill_free(&st->spill);
}
