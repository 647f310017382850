/*
 * base.h - base.c's calls: the per-session error message every call that
 * can fail sets, the monotonic clock, random bits.
 */
#ifndef SHX_BASE_H
#define SHX_BASE_H

#include <stdint.h>

#include "shx/buf.h"
#include "shexec.h"

/*
 * The part of a session base.c owns: the message of its last failure. It
 * is the session's first member (session.h checks), so a session pointer
 * converts to a pointer to it and base.c needs no more of the session.
 */
typedef struct shx_base {
    shx_buf errmsg;
} shx_base;

/* Record a failure: message into the session's errmsg (if s), returns code. */
int shx_fail(shexec_session *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Clear the message at the start of a call that can fail. */
void shx_ok(shexec_session *s);
int64_t shx_now_ns(void);
int shx_random64(unsigned long long *out);

#endif
