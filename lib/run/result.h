/*
 * result.h - result.c's internal call: the captured output as the host
 * reads it.
 */
#ifndef SHX_RESULT_H
#define SHX_RESULT_H

#include <stddef.h>

#include "shexec.h"

const char *shx_run_rendered(shexec_run *r, int stream, size_t *len);

#endif
