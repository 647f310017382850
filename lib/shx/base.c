/*
 * base.c - what every other file of the library needs and nothing below it
 * provides: result codes and their names, the per-session error message,
 * the monotonic clock deadlines are measured on, and random bits (the
 * sentinel nonce, task ids).
 */
#include "shx/base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "shx_config.h"
#if SHX_HAVE_GETRANDOM
#include <sys/random.h>
#endif

SHEXEC_API const char *shexec_version(void)
{
    return SHEXEC_VERSION_STRING;
}

SHEXEC_API const char *shexec_strerror(int code)
{
    switch (code) {
    case SHEXEC_OK: return "success";
    case SHEXEC_EINVAL: return "invalid argument";
    case SHEXEC_ENOMEM: return "out of memory";
    case SHEXEC_ENOCWD: return "working directory not found";
    case SHEXEC_ESPAWN: return "the shell could not be executed";
    case SHEXEC_ESYS: return "system call failed";
    case SHEXEC_ESTATE: return "wrong state for this call";
    case SHEXEC_E2BIG: return "command or environment too long";
    case SHEXEC_ELIMIT: return "a limit was reached (tasks held, environment variables)";
    case SHEXEC_ENOTASK: return "no such task";
    case SHEXEC_EPIPE: return "input cannot be written";
    case SHEXEC_ENOTOOL: return "tool not available";
    default: return "unknown error";
    }
}

int64_t shx_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The session's own part (its first member). */
static shx_base *base_of(const shexec_session *s)
{
    return (shx_base *)(void *)s;
}

int shx_fail(shexec_session *s, int code, const char *fmt, ...)
{
    if (!s)
        return code;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof msg, fmt, ap); /* a long message is cut, not lost */
    va_end(ap);
    shx_buf_clear(&base_of(s)->errmsg);
    shx_buf_puts(&base_of(s)->errmsg, msg);
    return code;
}

void shx_ok(shexec_session *s)
{
    if (s)
        shx_buf_clear(&base_of(s)->errmsg);
}

SHEXEC_API const char *shexec_session_errmsg(const shexec_session *s)
{
    if (!s || !base_of(s)->errmsg.data)
        return "";
    return base_of(s)->errmsg.data;
}

int shx_random64(unsigned long long *out)
{
    ssize_t n;
#if SHX_HAVE_GETRANDOM
    n = getrandom(out, sizeof *out, 0);
    if (n == (ssize_t)sizeof *out)
        return 0;
#endif
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = read(fd, out, sizeof *out);
    close(fd);
    return n == (ssize_t)sizeof *out ? 0 : -1;
}
