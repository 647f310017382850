/*
 * watchdog_cgroup.h - the watchdog process's way through a session's
 * cgroups (watchdog_cgroup.c), when the session holds its commands in
 * cgroups (contain.h): every member of the session's command cgroups
 * signalled, emptiness read, all of them killed at once. Async-signal-safe
 * (the watchdog is a fork of a host that may have threads): system calls
 * on buffers the caller gives, no allocation.
 */
#ifndef SHX_WATCHDOG_CGROUP_H
#define SHX_WATCHDOG_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* Send sig to each member of each child cgroup of dir (the session's);
 * buf (cap bytes) holds one directory listing or member list at a time. */
void shx_wd_cgroup_signal(const char *dir, int sig, char *buf, size_t cap);

/* 1 while dir (or a cgroup below it) has a live member, 0 when not, -1
 * when unreadable (gone). */
int shx_wd_cgroup_populated(const char *dir);

/* SIGKILL every member of dir and below (cgroup.kill); where the kernel
 * has no cgroup.kill, each member signalled as shx_wd_cgroup_signal. */
void shx_wd_cgroup_kill(const char *dir, char *buf, size_t cap);

/*
 * The host is gone: end every member of dir's command cgroups as a timeout
 * would (SIGTERM and SIGCONT to each, up to grace_ms for them to go, then
 * cgroup.kill), after pause_ms (the tests' pause); remove the cgroups
 * (the host cannot any more); then exit.
 */
void shx_wd_cgroup_terminate(const char *dir, uint32_t grace_ms, uint32_t pause_ms, char *buf,
                             size_t cap) __attribute__((noreturn));

#endif
