/*
 * taskslots.h - what holds a session's task slots, in words a model can
 * act on: the running tasks (id, the start of the command), the finished
 * ones not yet read, the calls that keep a slot for their yield. The tool
 * layer says it when it refuses a call for want of a slot.
 */
#ifndef SHX_TASKSLOTS_H
#define SHX_TASKSLOTS_H

#include "shx/buf.h"
#include "shexec.h"

/* What holds the session's task slots, appended to b. */
void shx_task_describe_slots(const shexec_session *s, shx_buf *b);

#endif
