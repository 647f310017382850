/*
 * clone3.c - a child born in a cgroup (clone3.h).
 *
 * Writing a child's pid into cgroup.procs migrates it, under the kernel's
 * cgroup-wide lock for writers; a child cloned into the cgroup is never
 * anywhere else: about 40-60 us a spawn less on Linux 6.18 (bench/README).
 * glibc has no clone3 that runs a function on a stack of the caller's (its
 * clone() takes no CLONE_INTO_CGROUP: the flag is above 32 bits), so the
 * system call is made here, for x86-64: the kernel sets the child's stack
 * pointer to the top of the given stack; the child, in the same registers
 * the call preserves, calls fn(arg) and exits with its value. The parent
 * returns from the system call as from any other.
 */
#include "spawn/clone3.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shx_config.h"

/* where the library clones its children itself (forkexec.c), on x86-64 */
#if SHX_HAVE_CLONE_VFORK && defined(__x86_64__) && defined(SYS_clone3) && defined(O_PATH)

#ifndef CLONE_VM
#define CLONE_VM 0x00000100
#endif
#ifndef CLONE_VFORK
#define CLONE_VFORK 0x00004000
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* The kernel's struct clone_args as of 5.7 (its `cgroup` is the last field read) */
typedef struct clone_args_v2 {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
        set_tid_size, cgroup;
} clone_args_v2;

/* 1 once the kernel or a filter refused the call (atomic) */
static int refused;

/* The system call; in the child, fn(arg) then exit. The parent's return:
 * the child's pid, or -errno. */
static long clone3_call(clone_args_v2 *args, int (*fn)(void *), void *arg)
{
    register long rax __asm__("rax") = SYS_clone3;
    register clone_args_v2 *rdi __asm__("rdi") = args;
    register long rsi __asm__("rsi") = (long)sizeof *args;
    register int (*r12)(void *) __asm__("r12") = fn;
    register void *r13 __asm__("r13") = arg;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "xor %%ebp, %%ebp\n\t"
                     "mov %%r13, %%rdi\n\t"
                     "call *%%r12\n\t"
                     "mov %%eax, %%edi\n\t"
                     "mov %[nr_exit], %%eax\n\t"
                     "syscall\n\t"
                     "hlt\n"
                     "1:"
                     : "+r"(rax)
                     : "r"(rdi), "r"(rsi), "r"(r12), "r"(r13), [nr_exit] "i"(SYS_exit)
                     : "rcx", "r11", "memory");
    return rax;
}

pid_t shx_clone3_into(const char *dir, char *stack, size_t size, int *pidfd, int (*fn)(void *),
                      void *arg)
{
    if (__atomic_load_n(&refused, __ATOMIC_RELAXED))
        return 0;
    int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    clone_args_v2 a = {.flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP,
                       .exit_signal = SIGCHLD,
                       .stack = (uint64_t)(uintptr_t)stack,
                       .stack_size = size,
                       .cgroup = (uint64_t)fd};
    if (pidfd) {
        a.flags |= CLONE_PIDFD;
        a.pidfd = (uint64_t)(uintptr_t)pidfd;
    }
    long child = clone3_call(&a, fn, arg);
    close(fd);
    if (child > 0)
        return (pid_t)child;
    /* ENOSYS, E2BIG (no cgroup field), EINVAL: a kernel without it; EPERM
     * (or ENOSYS): a seccomp filter's answer */
    if (child == -ENOSYS || child == -E2BIG || child == -EINVAL || child == -EPERM)
        __atomic_store_n(&refused, 1, __ATOMIC_RELAXED);
    return 0;
}

void shx_clone3_test_enable(int on)
{
    __atomic_store_n(&refused, !on, __ATOMIC_RELAXED);
}

#else

pid_t shx_clone3_into(const char *dir, char *stack, size_t size, int *pidfd, int (*fn)(void *),
                      void *arg)
{
    (void)dir, (void)stack, (void)size, (void)pidfd, (void)fn, (void)arg;
    return 0;
}

void shx_clone3_test_enable(int on)
{
    (void)on;
}

#endif
