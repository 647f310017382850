/*
 * tooldef.h - what the tools' registry and definitions (tooldef.c) share with
 * their calls (tool.c). The registry is tooldef.c's own, hung on the
 * session through the tool layer's door (toolhook.h) once a tool is
 * enabled or renamed.
 */
#ifndef SHX_TOOLDEF_H
#define SHX_TOOLDEF_H

#include "shx/buf.h"
#include "shexec.h"

enum {
    SHX_TOOL_BASH = 0,
    SHX_TOOL_TASK_OUTPUT = 1,
    SHX_TOOL_TASK_KILL = 2,
    SHX_TOOL_TASK_WRITE = 3,
    SHX_TOOL_COUNT = 4
};

/* The signals task_kill's `signal` takes (shexec_signal_from_name()), as its
 * errors name them; its schema's enum lists the same. */
#define SHX_TOOL_SIGNALS "SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2, " \
                         "SIGSTOP or SIGCONT"

/* The registry entry exposed as `name` (SHX_TOOL_*), or -1. */
int shx_tool_index(shexec_session *s, const char *name);
/* The name tool i (SHX_TOOL_*) is exposed under. */
const char *shx_tool_exposed_name(shexec_session *s, int i);
/* "key": into b. */
void shx_tool_put_key(shx_buf *b, const char *key);
/* b's text as a malloc'd string in *out (SHEXEC_OK), or SHEXEC_ENOMEM. */
int shx_tool_hand_out(shexec_session *s, shx_buf *b, char **out);

#endif
