/*
 * spill.c - a stream's whole text in a file (see output_hook.h).
 */
#include "output/output_hook.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "shx/buf.h"
#include "shexec.h"

struct shx_spill_file {
    shx_spill_file *prev, *next;  /* oldest to newest */
    shx_spill *owner;             /* the stream writing or having written it, or NULL */
    char *path;
    uint64_t size;
};

/* Room for the closing line that tells what was not written: the file-size
 * limit leaves it this much (the line itself is shorter). */
#define CLOSING_LINE_MAX 128

shx_spill_dir *shx_spill_dir_new(const char *path, uint64_t file_max, uint64_t total_max,
                                 int keep)
{
    shx_spill_dir *d = calloc(1, sizeof *d);
    if (!d || !(d->path = strdup(path))) {
        free(d);
        return NULL;
    }
    d->file_max = file_max;
    d->total_max = total_max;
    d->pid = (long)getpid();
    d->keep = keep;
    d->refs = 1;
    return d;
}

static void unref(shx_spill_dir *d)
{
    if (--d->refs > 0)
        return;
    free(d->path);
    free(d);
}

static void unlink_record(shx_spill_dir *d, shx_spill_file *f)
{
    if (f->prev)
        f->prev->next = f->next;
    else
        d->oldest = f->next;
    if (f->next)
        f->next->prev = f->prev;
    else
        d->newest = f->prev;
    d->total -= f->size;
}

static void close_fd(shx_spill *sp)
{
    if (sp->fd >= 0) {
        close(sp->fd);
        sp->fd = -1;
    }
}

/* Remove a file and its record; its stream is told. */
static void remove_file(shx_spill_dir *d, shx_spill_file *f, int state)
{
    unlink_record(d, f);
    if (f->owner) {
        close_fd(f->owner);
        f->owner->file = NULL;
        f->owner->state = state;
    }
    (void)unlink(f->path);
    free(f->path);
    free(f);
}

void shx_spill_dir_release(shx_spill_dir *d)
{
    shx_spill_file *f = d->oldest, *next;
    d->oldest = d->newest = NULL;
    d->total = 0;
    d->retired = 1;
    for (; f; f = next) {
        next = f->next;
        shx_spill *sp = f->owner;
        if (sp) { /* it keeps d (its reference) and writes no more */
            close_fd(sp);
            sp->file = NULL;
            if (!d->keep)
                sp->state = SHEXEC_SPILL_REMOVED;
            else if (sp->state == SHEXEC_SPILL_WRITING)
                sp->state = sp->dropped ? SHEXEC_SPILL_CAPPED : SHEXEC_SPILL_WHOLE;
        }
        if (!d->keep)
            (void)unlink(f->path);
        free(f->path);
        free(f);
    }
    unref(d);
}

void shx_spill_init(shx_spill *sp, shx_spill_dir *d, uint64_t run_seq, const char *stream)
{
    memset(sp, 0, sizeof *sp);
    sp->dir = d;
    if (d)
        d->refs++;
    sp->fd = -1;
    sp->state = SHEXEC_SPILL_NONE;
    /* named only where there is a directory to spill into */
    if (d)
        (void)snprintf(sp->label, sizeof sp->label, "%ld-%llu-%s", d->pid, (unsigned long long)run_seq,
                       stream);
}

int shx_spill_started(const shx_spill *sp)
{
    return sp->path != NULL || sp->state != SHEXEC_SPILL_NONE;
}

static void fail(shx_spill *sp, int err)
{
    sp->err = err;
    if (sp->file)
        remove_file(sp->dir, sp->file, SHEXEC_SPILL_FAILED);
    close_fd(sp);
    sp->state = SHEXEC_SPILL_FAILED;
}

/* Room for n more bytes within the session's budget, the oldest files of
 * others removed first to make it. How many bytes may be written. */
static uint64_t make_room(shx_spill *sp, uint64_t n)
{
    shx_spill_dir *d = sp->dir;
    shx_spill_file *next;
    for (shx_spill_file *f = d->oldest; f && d->total + n > d->total_max; f = next) {
        next = f->next;
        if (f->owner != sp)
            remove_file(d, f, SHEXEC_SPILL_REMOVED);
    }
    uint64_t room = d->total_max > d->total ? d->total_max - d->total : 0;
    return n < room ? n : room;
}

/* The most bytes a file of this process may hold: the soft RLIMIT_FSIZE,
 * read before each write because the host may change it at any time (one
 * system call beside the write it guards), or UINT64_MAX when unlimited. */
static uint64_t fsize_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    return (uint64_t)rl.rlim_cur;
}

/* n, or what the file-size limit leaves of it (less the closing line's
 * room): a write past the limit would raise SIGXFSZ in the host, so the
 * limit caps the file as the file's own cap does, and says so (EFBIG). A
 * file it leaves no room in at all would hold nothing: the spill fails. */
static uint64_t fsize_room(shx_spill *sp, uint64_t n)
{
    uint64_t limit = fsize_limit();
    uint64_t room = limit > CLOSING_LINE_MAX + sp->written
                        ? limit - CLOSING_LINE_MAX - sp->written : 0;
    if (n <= room)
        return n;
    sp->fsize = limit;
    sp->err = EFBIG;
    if (sp->written == 0 && room == 0)
        fail(sp, EFBIG);
    return room;
}

void shx_spill_write(shx_spill *sp, const char *data, size_t len)
{
    if (sp->state != SHEXEC_SPILL_WRITING || len == 0)
        return;
    if (sp->dropped) { /* the file is the stream's first bytes: after a gap, none go in */
        sp->dropped += len;
        return;
    }
    uint64_t want = len;
    uint64_t own_room = sp->dir->file_max > sp->written ? sp->dir->file_max - sp->written : 0;
    if (want > own_room)
        want = own_room;
    want = fsize_room(sp, want);
    if (sp->state != SHEXEC_SPILL_WRITING)
        return;
    want = make_room(sp, want);
    sp->dropped += len - want;
    size_t off = 0;
    while (off < want) {
        ssize_t n = write(sp->fd, data + off, (size_t)want - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fail(sp, n < 0 ? errno : ENOSPC);
            return;
        }
        off += (size_t)n;
        sp->written += (uint64_t)n;
        sp->file->size += (uint64_t)n;
        sp->dir->total += (uint64_t)n;
    }
}

void shx_spill_open(shx_spill *sp)
{
    if (!sp->dir || shx_spill_started(sp))
        return;
    if (sp->dir->retired) { /* its files were removed: none is made there now */
        unref(sp->dir);
        sp->dir = NULL;
        return;
    }
    shx_buf name = SHX_BUF_INIT;
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        shx_buf_clear(&name);
        if (shx_buf_printf(&name, "%s/shexec-%s%s%.0d.txt", sp->dir->path, sp->label,
                           attempt ? "-" : "", attempt) != 0) {
            shx_buf_free(&name);
            sp->state = SHEXEC_SPILL_FAILED;
            sp->err = ENOMEM;
            return;
        }
        fd = open(name.data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    int err = errno;
    shx_spill_file *f = fd >= 0 ? calloc(1, sizeof *f) : NULL;
    if (!f) {
        if (fd >= 0) {
            (void)unlink(name.data);
            close(fd);
            err = ENOMEM;
        }
        shx_buf_free(&name);
        sp->state = SHEXEC_SPILL_FAILED;
        sp->err = err;
        return;
    }
    const char *made = name.data ? name.data : "";
    f->path = strdup(made);
    sp->path = strdup(made);
    if (!f->path || !sp->path) {
        (void)unlink(made);
        close(fd);
        free(f->path);
        free(f);
        free(sp->path);
        sp->path = NULL;
        shx_buf_free(&name);
        sp->state = SHEXEC_SPILL_FAILED;
        sp->err = ENOMEM;
        return;
    }
    shx_buf_free(&name);
    f->owner = sp;
    f->prev = sp->dir->newest;
    if (sp->dir->newest)
        sp->dir->newest->next = f;
    else
        sp->dir->oldest = f;
    sp->dir->newest = f;
    sp->file = f;
    sp->fd = fd;
    sp->state = SHEXEC_SPILL_WRITING;
}

void shx_spill_finish(shx_spill *sp, int needed)
{
    if (sp->state != SHEXEC_SPILL_WRITING)
        return;
    if (!needed) {
        shx_spill_file *f = sp->file;
        remove_file(sp->dir, f, SHEXEC_SPILL_NONE);
        free(sp->path);
        sp->path = NULL;
        return;
    }
    if (sp->dropped) {
        char line[CLOSING_LINE_MAX];
        int n = snprintf(line, sizeof line,
                         "\n[spill file ends here: %llu more bytes were not written (%s)]\n",
                         (unsigned long long)sp->dropped, sp->fsize ? "file-size limit" : "cap");
        /* past the caps by design: a few bytes more than the file's share;
         * never past the file-size limit (SIGXFSZ): then there is no line */
        ssize_t w = n > 0 && sp->written + (uint64_t)n <= fsize_limit()
                        ? write(sp->fd, line, (size_t)n) : -1;
        if (w > 0) {
            sp->file->size += (uint64_t)w;
            sp->dir->total += (uint64_t)w;
        }
    }
    close_fd(sp);
    sp->state = sp->dropped ? SHEXEC_SPILL_CAPPED : SHEXEC_SPILL_WHOLE;
}

void shx_spill_free(shx_spill *sp)
{
    close_fd(sp);
    if (sp->file) {
        sp->file->owner = NULL;
        sp->file = NULL;
    }
    free(sp->path);
    sp->path = NULL;
    if (sp->dir)
        unref(sp->dir);
    sp->dir = NULL;
}

/* Why a spill failed, in words that do not depend on the C library. */
static const char *why(int err)
{
    switch (err) {
    case ENOSPC: return "no space left on device";
    case EDQUOT: return "disk quota exceeded";
    case EIO: return "input/output error";
    case EACCES:
    case EPERM: return "permission denied";
    case ENOENT: return "the directory is gone";
    case EROFS: return "read-only file system";
    case ENOMEM: return "out of memory";
    case EFBIG: return "file too large";
    default: return "write error";
    }
}

/* The file-size limit that cut a file short, in the notice. */
#define FSIZE_WHY "the process's file-size limit, RLIMIT_FSIZE, is %llu bytes"

void shx_spill_describe(const shx_spill *sp, shx_buf *out)
{
    unsigned long long n = sp->written;
    shx_buf_clear(out);
    switch (sp->state) {
    case SHEXEC_SPILL_WRITING:
        (void)shx_buf_printf(out, "full output so far (%llu bytes) in %s", n, sp->path);
        break;
    case SHEXEC_SPILL_WHOLE:
        (void)shx_buf_printf(out, "full output (%llu bytes) in %s", n, sp->path);
        break;
    case SHEXEC_SPILL_CAPPED:
        (void)shx_buf_printf(out, "the first %llu bytes in %s (%llu more bytes not saved: ", n,
                             sp->path, (unsigned long long)sp->dropped);
        if (sp->fsize)
            (void)shx_buf_printf(out, FSIZE_WHY ")", (unsigned long long)sp->fsize);
        else
            (void)shx_buf_puts(out, "spill cap)");
        break;
    case SHEXEC_SPILL_FAILED:
        if (sp->err == EFBIG && sp->fsize)
            (void)shx_buf_printf(out, "full output not saved: the spill failed (" FSIZE_WHY ")",
                                 (unsigned long long)sp->fsize);
        else
            (void)shx_buf_printf(out, "full output not saved: the spill failed (%s)",
                                 why(sp->err));
        break;
    case SHEXEC_SPILL_REMOVED:
        (void)shx_buf_printf(out, "full output was in %s, since removed (spill budget)", sp->path);
        break;
    default:
        break;
    }
}
