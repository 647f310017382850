/*
 * start.h - start.c: starting a run (its channel, its shell, the loop
 * following it).
 */
#ifndef SHX_START_H
#define SHX_START_H

#include "shexec.h"

int shx_run_begin(shexec_run *r);

#endif
