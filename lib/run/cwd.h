/*
 * cwd.h - cwd.c: the directory a run's shell reported, adopted as the
 * session cwd or refused with the reason; the nearest that still exists.
 */
#ifndef SHX_CWD_H
#define SHX_CWD_H

#include <stddef.h>

#include "shx/buf.h"

/* Make dir (len bytes) *cwd (the session cwd, malloc'd) if it is an
 * absolute path naming an existing directory now; else keep *cwd and say
 * why in notice (appended after "; " when it holds something). */
void shx_cwd_adopt(char **cwd, shx_buf *notice, const char *dir, size_t len);

/* The same for a remote wrapper's report (a directory on the other side):
 * only absolute. */
void shx_cwd_adopt_remote(char **cwd, shx_buf *notice, const char *dir, size_t len);

/* Cut dir (an absolute path, in place) back to its nearest ancestor that
 * is an existing directory, "/" at the last. */
void shx_cwd_nearest(char *dir);

#endif
