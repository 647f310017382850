/*
 * tooltask.h - the task tools (task_output, task_write, task_kill): a
 * background command's status and output, input to it, its end; and the
 * part of a result that says a command waits for input, which the bash
 * tool's result of a yielded command shares.
 */
#ifndef SHX_TOOLTASK_H
#define SHX_TOOLTASK_H

#include "shx/buf.h"
#include "shx/json.h"
#include "shexec.h"

/* Call task tool i (SHX_TOOL_TASK_*, tooldef.h) with its parsed arguments;
 * as shexec_tool_call(). */
int shx_tool_task_call(shexec_session *s, int i, const shx_json *args, char **out);

/* ,"waiting_for_input":true,"prompt":...,"password":... into b when r's
 * command waits for input; else ,"waiting_for_input":false. */
void shx_tool_put_input_wait(shx_buf *b, const shexec_run *r);
/* ,"signal":N when a signal ended r's shell (not its timeout) and
 * ,"interrupted":true once a SIGINT reached it (shexec_run_interrupted()). */
void shx_tool_put_ending(shx_buf *b, const shexec_run *r);
/* The result's "omitted" (what the limit left out of a truncated stream,
 * in characters and bytes), "full_output" (the spill files there are, by
 * stream) and "redacted" (occurrences hidden), each only when there is one. */
void shx_tool_put_kept(shx_buf *b, const shexec_run *r);

#endif
