/*
 * test_deadline.c - the loop waits for a deadline to the nanosecond: what
 * it asks the kernel to sleep is the deadline's distance, not that distance
 * rounded up to whole milliseconds (up to 1 ms late). poll() and ppoll()
 * are defined in this program, so the static library's calls come through
 * them; they make the same system calls as the C library's. No time is
 * measured: only what the library asked for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shexec.h"
#include "testhook.h"
#include "testutil.h"

static int waits_exact;   /* ppoll calls with a timeout not a whole number of ms */
static int waits_rounded; /* poll calls with a timeout: whole ms */

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask)
{
    struct timespec left, *tp = NULL;
    if (timeout) {
        if (timeout->tv_nsec % 1000000 != 0)
            waits_exact++;
        left = *timeout; /* the kernel writes the time left back */
        tp = &left;
    }
    return (int)syscall(SYS_ppoll, fds, n, tp, mask, (size_t)(_NSIG / 8));
}

int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
    struct timespec ts, *tp = NULL;
    if (timeout_ms > 0)
        waits_rounded++;
    if (timeout_ms >= 0) {
        ts.tv_sec = timeout_ms / 1000;
        ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
        tp = &ts;
    }
    return (int)syscall(SYS_ppoll, fds, n, tp, NULL, (size_t)(_NSIG / 8));
}

static void test_timeout_waited_to_the_nanosecond(void **state)
{
    (void)state;
    if (!tu_platform_has(SHX_PLATFORM_PPOLL, "ppoll, to wait for a deadline to the nanosecond"))
        skip();
    shexec_session *s = NULL;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    shexec_run *r = NULL;
    assert_int_equal(shexec_run_new(&r, s, "sleep 100"), SHEXEC_OK);
    assert_int_equal(shexec_run_set_timeout_ms(r, 300), SHEXEC_OK);
    waits_exact = waits_rounded = 0;
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_TIMED_OUT);
    print_message("waits for a deadline: %d to the nanosecond, %d in whole ms\n", waits_exact,
                  waits_rounded);
    /* each wait is for what is left of the 300 ms: a whole number of ms
     * only by a one-in-a-million chance, however many there are */
    assert_true(waits_exact > 0);
    assert_int_equal(waits_rounded, 0);
    shexec_run_free(r);
    shexec_session_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeout_waited_to_the_nanosecond),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
