/*
 * group.h - what is left of a process group after its leader (the command's
 * shell) has exited: finding its members through /proc and holding pidfds
 * on a few of them ("anchors"). While an anchor lives and is still in the
 * group, the group id cannot have been reused, so it may be signalled.
 */
#ifndef SHX_GROUP_H
#define SHX_GROUP_H

#include <sys/types.h>

#define SHX_GROUP_ANCHORS 8
/* Escapees held per command at most: a bound on memory, not a policy. */
#define SHX_ESCAPEES_MAX 4096

typedef struct shx_group {
    pid_t pgid;
    int n;
    pid_t pid[SHX_GROUP_ANCHORS];
    int pidfd[SHX_GROUP_ANCHORS]; /* -1 when pidfds are unavailable */
    unsigned long long start[SHX_GROUP_ANCHORS]; /* as /proc gave it when anchored */
} shx_group;

/* Find members of pgid (up to SHX_GROUP_ANCHORS) other than its leader (the
 * command's shell, which has exited when this is called) and anchor them; returns
 * how many were found (0: the group is empty). With the leader gone, each
 * member lost its parent or descends from one that did: where the kernel
 * lists children, only the members among the children of init and of the
 * subreapers this process may have above it (and their descendants) are
 * read; elsewhere every process in /proc. */
int shx_group_anchor(shx_group *g, pid_t pgid, int use_pidfd);
/* Drop anchor i (its process ended). */
void shx_group_drop(shx_group *g, int i);
/* Drop anchors that ended or left the group; returns how many remain. */
int shx_group_prune(shx_group *g);
/* Signal the group if it provably still exists (re-anchoring when every
 * anchor is gone). Returns 1 when signalled, 0 when the group is empty. */
int shx_group_signal(shx_group *g, int sig, int use_pidfd);
/*
 * Send sig to each anchor still in the group on which it would take its
 * default action (neither blocked, ignored nor caught); returns how many
 * were sent. After a terminal's hangup, a member alive with SIGHUP at its
 * default missed it: a shell's child that had not yet exec'd took it in
 * the shell's handler, then reset its signals and exec'd. Without /proc
 * nothing can tell, and nothing is sent.
 */
int shx_group_signal_missed(shx_group *g, int sig);
void shx_group_release(shx_group *g);
/* 1 when /proc lists processes, so members can be found and anchored; 0 in
 * a container, chroot or hardened system without it. */
int shx_group_can_list(void);
/* 1 when some anchor has no pidfd, so its end must be looked for. */
int shx_group_unwatched(const shx_group *g);

/*
 * Escapees: processes that descend from a command but left its process
 * group (setsid, setpgid, `set -m` job control), so a group signal misses
 * them. They can be found only through their parent links, while their
 * parent is still one of the command's processes: an orphan is adopted by
 * init (or a subreaper) and nothing ties it to the command any more. Each
 * one found is pinned by a pidfd, or without pidfds identified by its start
 * time, so that signalling it later can never hit a process that reused
 * its pid.
 */
typedef struct shx_escapee {
    pid_t pid;
    int pidfd;                 /* -1 without pidfds */
    unsigned long long start;  /* start time in clock ticks after boot */
} shx_escapee;

typedef struct shx_escapees {
    int n, cap;
    shx_escapee *e;
    /* the group's members the last search met (pid and start time; no
     * pidfd): where the next one starts, as they may have lost their parent
     * (the shell) since */
    int members_n, members_cap;
    shx_escapee *members;
} shx_escapees;

/*
 * Find the descendants of pgid's live members that are outside the group
 * and hold them (ones already held are kept). Only call it while the group
 * id provably belongs to the command. Returns how many are held.
 *
 * Where the kernel lists each process's children, only the command's own
 * processes are read: its shell's descendants, the members and escapees
 * met before and theirs, and the members that lost their parent (those are
 * children of init, or of a subreaper among this process's ancestors or
 * this process itself: their lists are read and each child's group asked
 * by getpgid()). Without those lists every process in /proc is read.
 */
int shx_escapees_find(shx_escapees *x, pid_t pgid, int use_pidfd);
/* Send sig to every held escapee that is still the process it was. */
void shx_escapees_signal(const shx_escapees *x, int sig);
void shx_escapees_release(shx_escapees *x);

#endif
