/*
 * watchdog_cgroup.h - the watchdog process's way through a session's
 * cgroups (watchdog_cgroup.c), when the session holds its commands in
 * cgroups (contain_hook.h): the members of the session's whole cgroup tree
 * signalled, killed at once, and the tree removed (cgtree.h).
 * Async-signal-safe (the watchdog is a fork of a host that may have
 * threads): system calls on buffers the caller gives, no allocation.
 */
#ifndef SHX_WATCHDOG_CGROUP_H
#define SHX_WATCHDOG_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/*
 * The host is gone: end every process anywhere in the tree of dir (the
 * session's cgroup: its commands' cgroups, those they made below, its own)
 * as a timeout would (SIGTERM and SIGCONT to each, up to grace_ms for them
 * to go, then SIGKILL to all), after pause_ms (the tests' pause); remove
 * the cgroups, deepest first (the host cannot any more); then exit. buf
 * (cap bytes, at least SHX_CGTREE_BUF) holds the walks' listings.
 */
void shx_wd_cgroup_terminate(const char *dir, uint32_t grace_ms, uint32_t pause_ms, char *buf,
                             size_t cap) __attribute__((noreturn));

#endif
