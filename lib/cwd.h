/*
 * cwd.h - cwd.c: adopting the directory a run's shell reported as the
 * session cwd, or saying why not.
 */
#ifndef SHX_CWD_H
#define SHX_CWD_H

#include <stddef.h>

#include "shexec.h"

/* Make dir (len bytes) the session cwd if it is an absolute path naming an
 * existing directory now; else keep the cwd and say why in the run's
 * notice (cwd.c). */
void shx_run_adopt_cwd(shexec_run *r, const char *dir, size_t len);

/* The same for a remote wrapper's report (a directory on the other side):
 * only absolute (cwd.c). */
void shx_run_adopt_remote_cwd(shexec_run *r, const char *dir, size_t len);

#endif
