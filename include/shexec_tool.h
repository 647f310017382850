/*
 * shexec_tool.h - libshexec's tool layer: the shell handed to a model as
 * JSON tools (bash, task_output, task_kill, task_write), ready for MCP tools/list and
 * tools/call or an LLM API's tool use.
 *
 * It is built on the API of shexec.h, which it includes: a session's tools
 * run commands in that session, with its settings. Link with -lshexec, as
 * for shexec.h.
 */
#ifndef SHEXEC_TOOL_H
#define SHEXEC_TOOL_H

#include "shexec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * TOOLS: the shell as tools handed to a model
 *
 * Each session has a registry of four tools, registered but DISABLED until
 * the host enables them:
 *   bash         {command: string (required), timeout: integer ms,
 *                 run_in_background: boolean, cwd: string,
 *                 env: object of strings, pty: boolean,
 *                 yield_time_ms: integer ms >= 1}
 *   task_output  {task_id: string (required), new_only: boolean,
 *                 yield_time_ms: integer ms >= 0 (default 0),
 *                 quiet_ms: integer ms >= 1}
 *   task_kill    {task_id: string (required), signal: string (one of
 *                 SIGINT SIGTERM SIGHUP SIGQUIT SIGKILL SIGUSR1 SIGUSR2
 *                 SIGSTOP SIGCONT; the tool also takes "INT", "int")}
 *   task_write   {task_id: string (required), input: string,
 *                 close_stdin: boolean, yield_time_ms: integer ms >= 0
 *                 (default 1000), quiet_ms: integer ms >= 1}
 *                 (with quiet_ms, yield_time_ms defaults to 300000)
 * Results are JSON objects:
 *   bash:        {"stdout","stderr","exit_code","timed_out",
 *                 "truncated":{"stdout":bool,"stderr":bool},"cwd",
 *                 "elapsed_ms" (how long it ran, shexec_run_duration_ms())} plus
 *                 "signal" when a signal ended the command (not its
 *                 timeout) and "interrupted": true once a SIGINT reached
 *                 it (shexec_run_interrupted()) and
 *                 "leftover_task_id" when it left processes running and
 *                 "notice" when shexec_run_notice() has something to say (a
 *                 limit hit: "killed: out of memory (limit 64 MiB)") and
 *                 "cost":{"cpu_ms","peak_bytes"} (shexec_run_cost()) and
 *                 "omitted":{"stdout"/"stderr":{"characters","bytes"}} for
 *                 each truncated stream (what its limit left out;
 *                 shexec_run_output_counts()) and
 *                 "lines":{"stdout"/"stderr": N} for each truncated stream
 *                 (all its lines, kept or not; shexec_run_output_lines()) and
 *                 "full_output":{"stdout"/"stderr": path} for each stream
 *                 whose whole text is in a spill file (see OUTPUT FOR MODELS
 *                 in shexec.h; the notice in the text names it too) and
 *                 "redacted": N when N secrets were hidden; on
 *                 timeout exit_code is -1, timed_out true and stderr ends with
 *                 "Command timed out after N ms" (an idle timeout, see
 *                 shexec_session_set_idle_timeout_ms(): "Command ended: no
 *                 output for its idle timeout ..."). With run_in_background:
 *                 {"task_id","status":"running"}. With yield_time_ms the
 *                 command's stdin is a pipe the model writes with task_write
 *                 (without it, stdin is empty unless pty), and a command
 *                 still running when the call returns (its yield time passed,
 *                 it waits for input, or the session's background on timeout
 *                 or idle yield moved it; see LONG-RUNNING AND INTERACTIVE
 *                 COMMANDS in shexec.h) gives {"task_id","status":"running",
 *                 "yield_reason":"yield_time"|"input"|"timeout"|
 *                 "idle_timeout","stdout","stderr" (so far),
 *                 "waiting_for_input", "elapsed_ms"} (and "omitted",
 *                 "lines", "full_output", "redacted" as above); while it waits for
 *                 input, "prompt" (its last line, unfinished) and
 *                 "password" (the terminal does not echo, as
 *                 shexec_run_input_wait() judges it: with pty, whose
 *                 terminal never echoes, bash's `read -s` and getpass()
 *                 are seen, while sudo, ssh and Python's getpass, which
 *                 turn off only echo, give false) too, and, for a
 *                 command on pipes that printed no question ("prompt"
 *                 empty), "hint": many programs ask only on a terminal;
 *                 answer with task_write, or run it again with pty. A call
 *                 with yield_time_ms or run_in_background when every task
 *                 slot is taken (after releasing finished tasks nobody
 *                 holds) is refused at once (SHEXEC_ELIMIT, the error
 *                 naming the tasks that hold them and what to do); a call
 *                 with yield_time_ms keeps a slot from its start until it
 *                 yields or ends, so its yield is never held up.
 *   task_output: {"task_id","status":"running"|"completed","stdout","stderr",
 *                 "truncated":{...}} ("omitted", "lines", "full_output",
 *                 "redacted" as bash's)
 *                 plus "exit_code" and "state" once
 *                 completed ("signal" when a signal ended it, not its
 *                 timeout, as bash's); "interrupted": true once a SIGINT
 *                 reached it, running or not; a completed task is then
 *                 removed (its final
 *                 output is returned once). Background tasks count against
 *                 the session's task limit until then; finished ones are
 *                 released unread, oldest first, when a new task needs
 *                 room (see TASKS in shexec.h).
 *                 A running task's result has "waiting_for_input" (and
 *                 then "prompt", "password", "hint" as bash's). With
 *                 yield_time_ms the call first waits up to that long for
 *                 the task to finish or to wait for input; with quiet_ms
 *                 also until the task has printed nothing for quiet_ms
 *                 (from its last output, at the earliest from the call),
 *                 and "wait_reason":"quiet"|"time"|"ended"|"input" says
 *                 which came first (shexec_task_watch()). With new_only,
 *                 "truncated" and "omitted" count the chunk returned (its
 *                 notice's numbers), not the whole run.
 *   task_write:  the input written (then stdin closed with close_stdin),
 *                then task_output's result with new_only, after a wait of
 *                yield_time_ms as task_output's. A task started without
 *                yield_time_ms or pty, or finished, takes no input:
 *                SHEXEC_EPIPE. The input is typed (shexec_run_type_input()):
 *                on a pipe each ^C ("\u0003") is a SIGINT to the command,
 *                not input, as a terminal's Ctrl+C, and a task that takes
 *                no input takes a ^C all the same (SHEXEC_ESTATE when none
 *                of its processes is left); on a terminal it goes as
 *                typed, the terminal interrupts. Input is refused whole
 *                while what the task has not read yet would pass the session's bound on
 *                queued input (shexec_session_set_input_queue_max()):
 *                SHEXEC_ELIMIT, saying how much waits; nothing is written
 *                and stdin is not closed, so it may be sent again.
 *   task_kill:   the same, with "status":"killed"; the task is removed.
 *                With `signal`: only that signal is sent
 *                (shexec_run_send_signal(); no grace, no SIGKILL), then
 *                task_write's result after its wait of 1000 ms: the task
 *                is removed only once it ended and was read so. A bad
 *                name is SHEXEC_EINVAL (the message lists the names), a
 *                finished task SHEXEC_ESTATE ("Task ID: no SIGINT was
 *                sent: it has finished ..."; it stays to be read).
 *   errors:      {"error": "message for the model"}.
 * Strings are valid UTF-8 JSON: invalid bytes become U+FFFD.
 * `env` takes at most SHEXEC_MAX_ENV_VARS variables (the schema says so
 * with maxProperties); more is SHEXEC_ELIMIT before anything is created.
 * Its names are shell identifiers, [A-Za-z_][A-Za-z0-9_]* (the schema's
 * propertyNames): any other is SHEXEC_EINVAL before anything is created,
 * the error naming each ("invalid environment variable names \"A-B\",
 * \"1X\" in \"env\": ..."). The host's own shexec_run_setenv() keeps
 * POSIX's wider rule.
 * A task the tool layer started or adopted is freed by the tool layer
 * (read to completion, killed, or released for room), unless the host
 * holds it: once the host got a pointer to it from
 * shexec_session_take_task(), a task_output or task_kill that completes it
 * only withdraws its id (it is no longer found, as the model expects) and
 * the host frees it with shexec_task_free(); it still holds its slot
 * until then.
 * ------------------------------------------------------------------------ */

/*
 * Enable or disable a tool.
 * Enable (non-zero) or disable (0) a tool by its exposed name. An unknown
 * name is SHEXEC_ENOTOOL, which is also how to ask whether a name exists.
 * Errors: SHEXEC_EINVAL (s NULL), SHEXEC_ENOTOOL (no such tool).
 */
SHEXEC_API int shexec_tool_set_enabled(shexec_session *s, const char *name, int enabled);

/* 1 when a tool is exposed under `name` and enabled, else 0. */
SHEXEC_API int shexec_tool_is_enabled(shexec_session *s, const char *name);

/*
 * Expose a tool under another name.
 * E.g. "bash" as "run_bash"; later calls use the new name. Names are 1-64 of
 * [A-Za-z0-9_-]. Errors: SHEXEC_ENOTOOL, SHEXEC_EINVAL (bad or taken name),
 * SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_tool_rename(shexec_session *s, const char *name, const char *new_name);

/*
 * List the enabled tools as JSON.
 * A JSON array of {"name","description","inputSchema"} (JSON Schema, draft
 * 2020-12 compatible), ready for MCP tools/list or an LLM API. The bash
 * tool's description is made from the session as it is now: its timeouts,
 * output limit and task slots, the other tools' names, and its shell
 * ("bash -c", or the POSIX shell's name and that it is not bash) with what
 * persists between calls (shexec_session_set_persist_env(): bash keeps
 * shell variables and functions too, a POSIX shell exported variables
 * only); list the tools again after changing them. *out_json is
 * malloc'd: free it with shexec_free(). Errors: SHEXEC_EINVAL,
 * SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_tool_list(char **out_json, shexec_session *s);

/*
 * Call a tool and wait for its JSON result.
 * `args_json` (NUL-terminated JSON object; NULL means {}) is parsed strictly
 * (RFC 8259, bounded depth and size; unknown fields, wrong types, duplicate
 * keys refused). *out_json receives the result, also on most errors
 * ({"error": ...}); free it with shexec_free(). Returns SHEXEC_OK when the
 * tool ran (a non-zero exit or a timeout is data), else: SHEXEC_ENOTOOL
 * ("Tool not available: NAME": unknown or disabled), SHEXEC_EINVAL
 * (malformed JSON or arguments), SHEXEC_ENOTASK ("Task not found: ID", or
 * "Task ID finished and was released unread (retention limit: ...)"),
 * SHEXEC_ELIMIT (no task slot, more than SHEXEC_MAX_ENV_VARS in `env`, or
 * task_write's input past the bound on queued input),
 * SHEXEC_EPIPE (task_write to a task that takes no input), SHEXEC_ESTATE
 * (task_kill's signal, or task_write's ^C, for a task whose processes
 * have ended),
 * SHEXEC_ENOCWD, SHEXEC_ESPAWN, SHEXEC_E2BIG, SHEXEC_ESYS, SHEXEC_ESTATE
 * (from a callback), SHEXEC_ENOMEM (then *out_json may be NULL).
 */
SHEXEC_API int shexec_tool_call(char **out_json, shexec_session *s, const char *name,
                                const char *args_json);

/*
 * Prepare the bash tool's run without starting it.
 * For hosts that run their own loop (an MCP server answering pings while
 * commands run, streaming their output): `name` must be the bash tool's
 * exposed name (enabled), and `args_json` is checked exactly as
 * shexec_tool_call() checks it. *out_run receives a run configured from the
 * arguments (command, timeout, cwd, env, pty) and not started, and
 * *out_background whether run_in_background was asked for. The caller sets
 * what it wants (an output callback), starts it (shexec_run_start(),
 * shexec_run_exec() or shexec_run_start_task()) and owns it. Tasks the
 * caller starts this way are the caller's (see TASKS in shexec.h). A run
 * with yield_time_ms keeps a task slot from its start until it yields or
 * ends (so a task started meanwhile cannot take it and its yield comes on
 * time); with every slot taken now, it is refused here (SHEXEC_ELIMIT, the
 * message naming what holds them), while a run_in_background one is
 * refused by shexec_run_start_task() when it is started. Errors
 * (*out_run NULL; the message for the model is in shexec_session_errmsg()):
 * as shexec_tool_call() before anything runs.
 */
SHEXEC_API int shexec_tool_prepare(shexec_run **out_run, int *out_background,
                                   shexec_session *s, const char *name, const char *args_json);

/*
 * Render a finished run as the bash tool's JSON result.
 * A finished foreground run, rendered as the bash tool's JSON result (see
 * above; the session's cwd as it is now); a run that yielded (while its
 * task is there) as the yielded result, {"task_id","status":"running",...},
 * whatever its state: what the model was to be told when it yielded. *out_json is malloc'd: free it
 * with shexec_free(). Errors: SHEXEC_EINVAL (run NULL), SHEXEC_ESTATE (not
 * finished, and not yielded), SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_tool_result(char **out_json, shexec_run *run);

/*
 * task_output's form, see
 * above): {"task_id","status","stdout","stderr",...}, with `out` and `err`
 * (out_len, err_len bytes; NULL with length 0: empty) as its output, e.g.
 * what the caller read with shexec_task_read(): passed as that call
 * returned it (the same pointer), a stream's "truncated" and "omitted"
 * count that chunk (shexec_task_read_counts()); any other text, the whole
 * run's (shexec_run_output_counts()). Nothing is read from the
 * task and nothing is freed: a host that shows a task's output its own way
 * gets the same object the tools would give. `status` NULL: "completed"
 * once the task's command ended, else "running" ("killed" is what
 * task_kill says). *out_json is malloc'd: free it with shexec_free().
 * Errors: SHEXEC_EINVAL (out_json or t NULL, data NULL with a length),
 * SHEXEC_ENOMEM.
 */
SHEXEC_API int shexec_tool_task_result(char **out_json, shexec_task *t, const char *status,
                                       const char *out, size_t out_len, const char *err,
                                       size_t err_len);

/* Free a string the library handed out (tool JSON). NULL is a no-op. */
SHEXEC_API void shexec_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* SHEXEC_TOOL_H */
