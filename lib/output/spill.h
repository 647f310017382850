/*
 * spill.h - the whole text of a stream that outgrew its output limit, kept
 * in a file: the session's spill directory with its disk budget (its files
 * in the order they were made, the oldest removed first when the budget is
 * short), and one stream's file (made mode 0600 and exclusively, written
 * up to a cap, removed again when the stream stayed within its limit).
 * A write error ends the file (it is removed) and is remembered for the
 * notice; it never reaches the command or its result. No write takes a
 * file past the process's file-size limit (RLIMIT_FSIZE): that write
 * would raise SIGXFSZ in the host, whose default action kills it. The
 * limit caps the file as the file's own cap does.
 *
 * The directory is counted: the session holds it while it is set, and
 * each stream that may spill into it holds it from its run's start, so a
 * directory the session lets go of (turned off, or another set) stays
 * valid for the streams of runs still going. Those make no file there
 * any more: its files are removed (unless kept) when the session lets go.
 */
#ifndef SHX_SPILL_H
#define SHX_SPILL_H

#include <stddef.h>
#include <stdint.h>

#include "shx/buf.h"

typedef struct shx_spill shx_spill;
typedef struct shx_spill_file shx_spill_file;

typedef struct shx_spill_dir {
    char *path;
    uint64_t file_max;     /* bytes one stream's file takes at most */
    uint64_t total_max;    /* bytes all the session's files take at most */
    int keep;              /* the files stay when the session is freed */
    shx_spill_file *oldest, *newest;
    uint64_t total;        /* bytes in the files that are there */
    uint64_t seq;          /* runs that asked for a name */
    unsigned refs;         /* the session's (until it lets go) and its streams' */
    int retired;           /* the session let go of it: no file is made any more */
} shx_spill_dir;

/* SHEXEC_SPILL_* (shexec.h) says what became of a stream's file. */
struct shx_spill {
    shx_spill_dir *dir;    /* NULL: no spill (or the session is gone) */
    shx_spill_file *file;  /* its record in dir while it is there */
    int fd;                /* -1 unless being written */
    int state;             /* SHEXEC_SPILL_* */
    int err;               /* errno of the failure (SHEXEC_SPILL_FAILED) */
    uint64_t written;      /* bytes in the file */
    uint64_t dropped;      /* bytes past the caps, not in the file */
    uint64_t fsize;        /* the file-size limit that cut the file short, 0: none did */
    char *path;            /* the file's name, kept after it is removed */
    char label[48];        /* "<pid>-<run>-stdout": which run and stream */
};

/* A spill directory (path copied), held once, by the caller (the
 * session). NULL on ENOMEM. */
shx_spill_dir *shx_spill_dir_new(const char *path, uint64_t file_max, uint64_t total_max,
                                 int keep);
/* The session lets go of d: every file is forgotten, and removed unless
 * `keep`; their streams' spills are told (their state becomes REMOVED
 * unless kept), and no stream makes a file in d from now on. d goes when
 * the last stream holding it lets go. */
void shx_spill_dir_release(shx_spill_dir *d);

/* Ready a stream's spill into d (NULL: off; the stream holds d until
 * shx_spill_free) under a label saying which run (`run_seq`) and stream
 * ("stdout", "stderr"). */
void shx_spill_init(shx_spill *sp, shx_spill_dir *d, uint64_t run_seq, const char *stream);
/* Make the file (the caller then writes what came before). Failing to
 * make it sets FAILED; a directory the session let go of makes none, and
 * the stream lets go of it (dir NULL: no spill). */
void shx_spill_open(shx_spill *sp);
/* 1 once shx_spill_open() was called (whatever came of it). */
int shx_spill_started(const shx_spill *sp);
/* Append bytes while the file is being written. */
void shx_spill_write(shx_spill *sp, const char *data, size_t len);
/* End of the stream: `needed` 0 removes the file (the capture held it all);
 * otherwise it is closed, with a last line saying what the caps dropped. */
void shx_spill_finish(shx_spill *sp, int needed);
/* The notice's last clause for this spill into out ("" when none): where
 * the whole text is, or why it is not (wording: shexec.h). */
void shx_spill_describe(const shx_spill *sp, shx_buf *out);
/* Stop writing and let go of the directory (the file stays there; the
 * directory goes if the session let go of it and no other stream holds it). */
void shx_spill_free(shx_spill *sp);

#endif
