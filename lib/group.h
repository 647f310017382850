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

typedef struct shx_group {
    pid_t pgid;
    int n;
    pid_t pid[SHX_GROUP_ANCHORS];
    int pidfd[SHX_GROUP_ANCHORS]; /* -1 when pidfds are unavailable */
} shx_group;

/* Find members of pgid (up to SHX_GROUP_ANCHORS) and anchor them; returns
 * how many were found (0: the group is empty). */
int shx_group_anchor(shx_group *g, pid_t pgid, int use_pidfd);
/* Drop anchor i (its process ended). */
void shx_group_drop(shx_group *g, int i);
/* Drop anchors that ended or left the group; returns how many remain. */
int shx_group_prune(shx_group *g);
/* Signal the group if it provably still exists (re-anchoring when every
 * anchor is gone). Returns 1 when signalled, 0 when the group is empty. */
int shx_group_signal(shx_group *g, int sig, int use_pidfd);
void shx_group_release(shx_group *g);
/* 1 when some anchor has no pidfd, so its end must be looked for. */
int shx_group_unwatched(const shx_group *g);

#endif
