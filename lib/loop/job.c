/*
 * job.c - a job's own state: made empty, its stdin queue (what is
 * left, written to the command, dropping what was written, closing it),
 * and when a drain of leftovers' output is due to end.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "loop/job.h"
#include "spawn/spawn.h"

void shx_job_init(shx_job *j, const shx_proc_observer *observer)
{
    shx_proc_init(&j->proc, observer);
    j->out.fd = j->err.fd = -1;
    j->out.held = j->err.held = -1;
    j->stdin_fd = -1;
    j->side_fd = -1;
}

/* At most this much queued input is written to one command per round, so
 * that a reader as fast as the writer cannot keep the loop from its
 * deadlines and from the other commands. */
#define STDIN_ROUND_MAX (1u << 20)

/* A drained queue bigger than this is given back rather than kept. */
#define STDIN_KEEP_MAX (1u << 20)

size_t shx_job_input_left(const shx_job *j)
{
    return j->stdin_buf.len - j->stdin_off;
}

/*
 * Write queued input, at most STDIN_ROUND_MAX bytes this round; on EPIPE
 * the reader is gone and the rest is dropped, as on a hangup (gone).
 *
 * Written bytes are only counted (stdin_off) and stay in front of the
 * queue until they are at least as many as those left; only then are the
 * rest moved to the front. Each move is paid for by the writes since the
 * last one, so the bytes moved never exceed the bytes written, and the
 * buffer never holds more than twice what is left (plus what is appended).
 */
void shx_job_input_flush(shx_job *j, int gone)
{
    size_t budget = STDIN_ROUND_MAX;
    while (!gone && j->stdin_fd >= 0 && budget > 0) {
        size_t left = shx_job_input_left(j);
        if (left == 0)
            break;
        ssize_t w = shx_write_nosigpipe(j->stdin_fd, j->stdin_buf.data + j->stdin_off,
                                        left < budget ? left : budget);
        if (w > 0) {
            j->stdin_off += (size_t)w;
            budget -= (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else if (!(w < 0 && errno == EINTR)) {
            gone = 1;
        }
    }
    size_t left = shx_job_input_left(j);
    if (gone || (j->stdin_fd >= 0 && j->stdin_close && left == 0)) {
        shx_job_input_close(j);
    } else if (left == 0) {
        j->stdin_off = 0;
        if (j->stdin_buf.cap > STDIN_KEEP_MAX)
            shx_buf_free(&j->stdin_buf);
        else
            shx_buf_clear(&j->stdin_buf);
    } else if (j->stdin_off >= left) {
        memmove(j->stdin_buf.data, j->stdin_buf.data + j->stdin_off, left);
        j->stdin_buf.len = left;
        j->stdin_buf.data[left] = '\0';
        j->stdin_off = 0;
    }
}

void shx_job_input_close(shx_job *j)
{
    if (j->stdin_fd >= 0) {
        close(j->stdin_fd);
        j->stdin_fd = -1;
    }
    shx_buf_free(&j->stdin_buf);
    j->stdin_off = 0;
}

int64_t shx_job_drain_due(const shx_job *j)
{
    int64_t from = j->quiet.output_ns > j->drain_from_ns ? j->quiet.output_ns : j->drain_from_ns;
    int64_t due = from + j->drain_quiet_ns;
    return due < j->drain_end_ns ? due : j->drain_end_ns;
}
