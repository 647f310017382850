/*
 * output_hook.h - the core's one door into output/: the filters a
 * command's output passes through on its way to the host, as the core
 * holds and calls them. The types are here whatever the build (each stream
 * holds its stages by value); the calls are declared while the folder is
 * built (SHX_WITH_OUTPUT) and are static inline stubs when OUTPUT=0 leaves
 * it out, so that no call site of the core needs an #if: no set is ever
 * built and no spill directory made, and the public setters of redaction
 * and spill fail with SHEXEC_ESYS (outputcfg.c). What the filters are made
 * of (the replacement of many literals at once, acreplace.h; the shapes of
 * keys, keyscan.h and pemscan.h) and how a set is built (redact.h) are the
 * folder's own.
 *
 * Redaction (redact.c): what is hidden from a command's output, and the
 * stage of a stream that hides it. A session (and a run) names secrets:
 * literal values under a name, the values of environment variables whose
 * names match globs, and the shapes of known keys (keyscan.h). Before a
 * run starts they become one immutable set, shared by reference (a
 * session reuses its last set while nothing in it changed); each stream
 * then replaces every literal with "[REDACTED:NAME]" (acreplace.h, one
 * pass whatever the number of secrets), then every key shape.
 *
 * The spill (spill.c): the whole text of a stream that outgrew its output
 * limit, kept in a file: the session's spill directory with its disk
 * budget (its files in the order they were made, the oldest removed first
 * when the budget is short), and one stream's file (made mode 0600 and
 * exclusively, written up to a cap, removed again when the stream stayed
 * within its limit). A write error ends the file (it is removed) and is
 * remembered for the notice; it never reaches the command or its result.
 * No write takes a file past the process's file-size limit (RLIMIT_FSIZE):
 * that write would raise SIGXFSZ in the host, whose default action kills
 * it. The limit caps the file as the file's own cap does.
 *
 * The directory is counted: the session holds it while it is set, and
 * each stream that may spill into it holds it from its run's start, so a
 * directory the session lets go of (turned off, or another set) stays
 * valid for the streams of runs still going. Those make no file there
 * any more: its files are removed (unless kept) when the session lets go.
 */
#ifndef SHX_OUTPUT_HOOK_H
#define SHX_OUTPUT_HOOK_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "output/acreplace.h"
#include "output/keyscan.h"
#include "shx/buf.h"
#include "shx/env.h"

/* OUTPUT=0 builds the library without the output filters (the .c files of
 * lib/output/ left out). The Makefile sets this. */
#ifndef SHX_WITH_OUTPUT
#define SHX_WITH_OUTPUT 1
#endif

/* Values shorter than this are not taken from the environment (too common
 * to hide without hiding ordinary text), and the host may not register
 * shorter ones. */
#define SHX_REDACT_ENV_MIN 8
#define SHX_REDACT_VALUE_MIN 4
#define SHX_REDACT_VALUE_MAX 65536
#define SHX_REDACT_NAME_MAX 64
#define SHX_REDACT_MAX_VALUES 100000

typedef struct shx_secret {
    char *name;
    char *value;
    size_t len;
} shx_secret;

/* Literal secrets, in the order registered. */
typedef struct shx_secrets {
    shx_secret *v;
    size_t n, cap;
} shx_secrets;

#if SHX_WITH_OUTPUT
/* A name fit for a marker: [A-Za-z0-9_], 1 to SHX_REDACT_NAME_MAX bytes. */
int shx_redact_name_valid(const char *name);
/* Add a copy. 0, -1 on ENOMEM or a full list (SHX_REDACT_MAX_VALUES). */
int shx_secrets_add(shx_secrets *l, const char *name, const void *value, size_t len);
void shx_secrets_free(shx_secrets *l);
#endif

/* An immutable set, built for runs. */
typedef struct shx_redact_set {
    shx_acr *literals;   /* NULL: none */
    unsigned shapes;     /* SHX_KEYSCAN_* */
    unsigned refs;
    uint64_t fingerprint;
} shx_redact_set;

/* What a session asks for. */
typedef struct shx_redact_cfg {
    shx_secrets values;
    char **globs;        /* env names to take values of; NULL with env_on: none yet */
    size_t nglobs;
    int env_on;
    unsigned shapes;
    shx_redact_set *last; /* the set last built, reused while nothing changed */
} shx_redact_cfg;

#if SHX_WITH_OUTPUT
/* Take the env globs (copied; NULL: the defaults; n 0: env values off).
 * 0 or -1 (ENOMEM: the previous globs stay). */
int shx_redact_cfg_set_globs(shx_redact_cfg *c, const char *const *globs, size_t n);
void shx_redact_cfg_free(shx_redact_cfg *c);

void shx_redact_set_release(shx_redact_set *set);
/*
 * shx_redact_set_for() for a run about to start, its environment built
 * here: the base (NULL: none) with the session's variables and, with
 * `own_env`, the run's (then the default globs stand in for none).
 * 0 or -1 (ENOMEM).
 */
int shx_redact_set_for_run(shx_redact_cfg *c, const char *const *base,
                           const shx_envlist *session_env, const shx_envlist *run_env,
                           int own_env, const shx_secrets *run_values, shx_redact_set **out);
#endif

/* One stream's stage. */
typedef struct shx_redactor {
    shx_redact_set *set;  /* a reference */
    shx_acr_stream literals;
    shx_keyscan keys;
    shx_buf mid;          /* between literals and shapes */
} shx_redactor;

#if SHX_WITH_OUTPUT
/* Start a stream's stage with a reference of its own to set. */
void shx_redactor_init(shx_redactor *r, shx_redact_set *set);
/* Hide what is in data; the settled bytes are appended to out. 0 or -1
 * (ENOMEM: some bytes may have passed unhidden, never been lost). */
int shx_redactor_feed(shx_redactor *r, const char *data, size_t len, shx_buf *out);
/* End of stream: what was held back is appended to out. */
int shx_redactor_finish(shx_redactor *r, shx_buf *out);
/* Occurrences hidden so far. */
uint64_t shx_redactor_count(const shx_redactor *r);
void shx_redactor_free(shx_redactor *r);
#endif

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
    long pid;              /* the host's, as the files are named (taken once, not per run) */
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

#if SHX_WITH_OUTPUT
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

#if !SHX_WITH_OUTPUT
/* OUTPUT=0: no secret is ever registered (the setters refuse first), no
 * set is built, and no spill directory is made; a stream's stages stay off. */
static inline int shx_redact_name_valid(const char *name)
{
    (void)name;
    return 0;
}
static inline int shx_secrets_add(shx_secrets *l, const char *name, const void *value, size_t len)
{
    (void)l, (void)name, (void)value, (void)len;
    errno = ENOSYS;
    return -1;
}
static inline void shx_secrets_free(shx_secrets *l)
{
    (void)l;
}
static inline int shx_redact_cfg_set_globs(shx_redact_cfg *c, const char *const *globs, size_t n)
{
    (void)c, (void)globs, (void)n;
    errno = ENOSYS;
    return -1;
}
static inline void shx_redact_cfg_free(shx_redact_cfg *c)
{
    (void)c;
}
static inline void shx_redact_set_release(shx_redact_set *set)
{
    (void)set;
}
static inline int shx_redact_set_for_run(shx_redact_cfg *c, const char *const *base,
                                         const shx_envlist *session_env, const shx_envlist *run_env,
                                         int own_env, const shx_secrets *run_values,
                                         shx_redact_set **out)
{
    (void)c, (void)base, (void)session_env, (void)run_env, (void)own_env, (void)run_values;
    *out = NULL;
    return 0;
}
static inline void shx_redactor_init(shx_redactor *r, shx_redact_set *set)
{
    memset(r, 0, sizeof *r);
    r->set = set;
}
static inline int shx_redactor_feed(shx_redactor *r, const char *data, size_t len, shx_buf *out)
{
    (void)r; /* never called (no set is built): passes what it is given */
    return shx_buf_append(out, data, len);
}
static inline int shx_redactor_finish(shx_redactor *r, shx_buf *out)
{
    (void)r, (void)out;
    return 0;
}
static inline uint64_t shx_redactor_count(const shx_redactor *r)
{
    (void)r;
    return 0;
}
static inline void shx_redactor_free(shx_redactor *r)
{
    (void)r;
}
static inline shx_spill_dir *shx_spill_dir_new(const char *path, uint64_t file_max,
                                               uint64_t total_max, int keep)
{
    (void)path, (void)file_max, (void)total_max, (void)keep;
    errno = ENOSYS;
    return NULL;
}
static inline void shx_spill_dir_release(shx_spill_dir *d)
{
    (void)d;
}
static inline void shx_spill_init(shx_spill *sp, shx_spill_dir *d, uint64_t run_seq,
                                  const char *stream)
{
    (void)d, (void)run_seq, (void)stream;
    memset(sp, 0, sizeof *sp);
    sp->fd = -1;
}
static inline void shx_spill_open(shx_spill *sp)
{
    (void)sp;
}
static inline int shx_spill_started(const shx_spill *sp)
{
    (void)sp;
    return 0;
}
static inline void shx_spill_write(shx_spill *sp, const char *data, size_t len)
{
    (void)sp, (void)data, (void)len;
}
static inline void shx_spill_finish(shx_spill *sp, int needed)
{
    (void)sp, (void)needed;
}
static inline void shx_spill_describe(const shx_spill *sp, shx_buf *out)
{
    (void)sp, (void)out;
}
static inline void shx_spill_free(shx_spill *sp)
{
    (void)sp;
}
#endif

#endif
