/*
 * script.h - the wrapper script around one command (script.c).
 */
#ifndef SHX_SCRIPT_H
#define SHX_SCRIPT_H

#include <stddef.h>

#include "buf.h"

/* The descriptor the wrapper writes its record to (local wrappers), and the
 * one a large script is read from. */
#define SHX_RECORD_FD 3
#define SHX_SCRIPT_FD 4
/* The record's first key, which the local wrapper does not write (its
 * report begins with `pwd`'s output): the library puts it before what it
 * reads from the file. */
#define SHX_RECORD_HEAD "cwd="
#define SHX_RECORD_HEAD_LEN 4

/* How the shell lists its state: as the shell finds (bash or not), or as
 * the session's shell is known to (by an earlier listing). */
enum { SHX_CAPTURE_NONE, SHX_CAPTURE_ANY, SHX_CAPTURE_DECL, SHX_CAPTURE_EXPORT };

typedef struct shx_script_opts {
    int remote;          /* the record goes in-band on stdout, tagged with hex */
    const char *hex;     /* the session's nonce, for remote */
    int with_vars;       /* the run's variables follow as NAME=VALUE / NAME arguments */
    int from_fd;         /* the script is read from SHX_SCRIPT_FD, which it closes */
    int capture;         /* local: the record also carries the shell's state (SHX_CAPTURE_*) */
    const char *replay;  /* bash text run (quietly) before the command, or NULL */
    size_t replay_len;
} shx_script_opts;

/* Append the wrapper script for the command (len bytes) to out. 0 or -1. */
int shx_script_build(shx_buf *out, const char *cmd, size_t len, const shx_script_opts *o);

/* Append s as one single-quoted word for a POSIX shell. 0 or -1. */
int shx_script_quote(shx_buf *out, const char *s);

#endif
