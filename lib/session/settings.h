/*
 * settings.h - settings.c: a session's settings, their defaults, and the
 * checks the run's setters share with the session's.
 */
#ifndef SHX_SETTINGS_H
#define SHX_SETTINGS_H

#include <stdint.h>

#include "shexec.h"

int shx_settings_init(shexec_session *s);

void shx_settings_free(shexec_session *s);

int shx_check_limit(shexec_session *s, uint64_t limit, int unit, int keep);

int shx_env_error(shexec_session *s, int rc, const char *name);

int shx_session_resolve_dir(shexec_session *s, const char *dir, char **out);

int shx_session_check_dir(shexec_session *s, const char *dir);

#endif
