/*
 * clone3.h - a child born in a cgroup (clone3.c): clone3 with
 * CLONE_INTO_CGROUP (Linux 5.7), for forkexec.c, which puts each command's
 * shell in its cgroup before it runs any code.
 */
#ifndef SHX_CLONE3_H
#define SHX_CLONE3_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Start fn(arg) in a child that shares the caller's memory and holds it
 * until it execs or exits (CLONE_VM | CLONE_VFORK), on stack (size bytes,
 * its top 16-byte aligned), born in the cgroup v2 directory `dir`; with
 * pidfd, *pidfd is the child's pidfd (CLONE_PIDFD). The child exits with
 * what fn returns. Returns the child's pid, or 0 where no child was made
 * this way: not compiled for this architecture (x86-64 only), the
 * directory cannot be opened, or the kernel or a seccomp filter refused
 * the call (remembered: later calls return 0 at once). The caller then
 * starts the child another way.
 */
pid_t shx_clone3_into(const char *dir, char *stack, size_t size, int *pidfd, int (*fn)(void *),
                      void *arg);

/* For the tests (testhook.c): 0 makes every call return 0, as on a kernel
 * without CLONE_INTO_CGROUP; 1 lets them try again. */
void shx_clone3_test_enable(int on);

#endif
