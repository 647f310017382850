/*
 * tool.c - the JSON front end's calls: tool name + JSON arguments -> JSON
 * result (shexec_tool_call), or the bash tool's arguments -> a configured
 * run (shexec_tool_prepare) and its result (shexec_tool_result). The tools
 * themselves are defined in tooldef.c. Arguments come from a model and are
 * never trusted: parsed strictly, unknown fields and wrong types refused.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shx/base.h"
#include "shx/env.h"
#include "shx/json.h"
#include "shexec_tool.h"
#include "tool/toolargs.h"
#include "tool/tooltask.h"
#include "tool/tooldef.h"
#include "tool/toolhook.h"

/*
 * Room for the task a call may go on as (yield) or start as. Without it
 * the call is refused before anything runs, with what holds the slots and
 * what the model can do: started, a call with a yield time would run on
 * past the time the model was promised, to its end. 1, or 0 with the
 * error in *out.
 */
static int room_for_task(shexec_session *s, int yield, char **out)
{
    shx_buf why = SHX_BUF_INIT;
    int room = shx_hook_task_room(s, &why);
    if (!room)
        (void)shx_tool_error(s, SHEXEC_ELIMIT, out,
                             "No room for another background task, so the command was not "
                             "started (%s): stop a task with %s, or read a finished one with "
                             "%s, then call again; or call without yield_time_ms and "
                             "run_in_background to run it to its end in this call. Now %s.",
                             yield ? "with yield_time_ms it may go on as one"
                                   : "run_in_background starts it as one",
                             shx_tool_exposed_name(s, SHX_TOOL_TASK_KILL),
                             shx_tool_exposed_name(s, SHX_TOOL_TASK_OUTPUT),
                             why.data ? why.data : "");
    shx_buf_free(&why);
    return room;
}

/*
 * The bash tool's arguments checked and turned into a configured run, not
 * started; *background: run_in_background. On error *out has the result.
 */
static int bash_prepare(shexec_session *s, const shx_json *args, shexec_run **run, int *background,
                        char **out)
{
    *run = NULL;
    static const shx_tool_field fields[] = {{"command", SHX_JSON_STRING}, {"timeout", SHX_JSON_NUMBER},
                                   {"run_in_background", SHX_JSON_BOOL}, {"cwd", SHX_JSON_STRING},
                                   {"env", SHX_JSON_OBJECT}, {"pty", SHX_JSON_BOOL},
                                   {"yield_time_ms", SHX_JSON_NUMBER}};
    int rc = shx_tool_check_fields(s, args, fields, sizeof fields / sizeof *fields, out);
    if (rc != SHEXEC_OK)
        return rc;
    const char *command = NULL;
    if ((rc = shx_tool_required_string(s, args, "command", &command, out)) != SHEXEC_OK)
        return rc;
    /* command is set when rc is SHEXEC_OK; the analyzer cannot see that
     * through the variadic shx_tool_error(). */
    if (!command || !*command)
        return shx_tool_error(s, SHEXEC_EINVAL, out, "argument \"command\" is empty");
    int64_t timeout = 0;
    const shx_json *jt = shx_json_get(args, "timeout");
    if (jt && (shx_json_int64(jt, &timeout) != SHEXEC_OK || timeout < 1))
        return shx_tool_error(s, SHEXEC_EINVAL, out,
                            "argument \"timeout\" must be a whole number of milliseconds >= 1");
    if (timeout > UINT32_MAX)
        timeout = UINT32_MAX; /* clamped to the session maximum like any large value */
    int64_t yield = 0;
    if ((rc = shx_tool_ms_arg(s, args, "yield_time_ms", 1, UINT32_MAX, &yield, out)) != SHEXEC_OK)
        return rc;
    int pty = 0;
    *background = 0;
    shx_json_bool(shx_json_get(args, "run_in_background"), background);
    shx_json_bool(shx_json_get(args, "pty"), &pty);
    const char *cwd = NULL;
    const shx_json *jcwd = shx_json_get(args, "cwd");
    if (jcwd && (rc = shx_tool_string_arg(s, jcwd, "cwd", &cwd, out)) != SHEXEC_OK)
        return rc;
    const shx_json *env = shx_json_get(args, "env");
    /* Refused before anything is made: setting the variables one by one
     * would fail at the same bound, but only after the rest was built. */
    if (shx_json_count(env) > SHEXEC_MAX_ENV_VARS)
        return shx_tool_error(s, SHEXEC_ELIMIT, out,
                            "argument \"env\" has %zu variables: at most %u are allowed",
                            shx_json_count(env), SHEXEC_MAX_ENV_VARS);
    /* A model's names are the shell's: an identifier. POSIX's wider rule
     * (anything but '=') is for the host, whose programs may read such
     * names; from a model "A-B" is a mistake, and the shell cannot expand
     * it. Every bad name is named, so one answer corrects them all. */
    shx_buf bad = SHX_BUF_INIT;
    size_t nbad = 0;
    for (size_t i = 0; env && i < shx_json_count(env); i++) {
        size_t klen;
        const char *key = shx_json_key(env, i, &klen);
        const char *val;
        if (!shx_json_is(shx_json_item(env, i), SHX_JSON_STRING))
            rc = shx_tool_error(s, SHEXEC_EINVAL, out, "env values must be strings");
        else
            rc = shx_tool_string_arg(s, shx_json_item(env, i), "env", &val, out);
        if (rc != SHEXEC_OK) {
            shx_buf_free(&bad);
            return rc;
        }
        if (shx_env_name_is_identifier(key, klen))
            continue;
        if (nbad++ < 8)
            shx_buf_printf(&bad, "%s\"%.*s\"", nbad > 1 ? ", " : "", (int)(klen > 64 ? 64 : klen),
                           key);
    }
    if (nbad) {
        if (nbad > 8)
            shx_buf_printf(&bad, " and %zu more", nbad - 8);
        rc = shx_tool_error(s, SHEXEC_EINVAL, out,
                            "invalid environment variable name%s %s in \"env\": a name is "
                            "letters, digits and _, not starting with a digit",
                            nbad > 1 ? "s" : "", bad.data);
        shx_buf_free(&bad);
        return rc;
    }

    /* with a yield time, refused now when it could not yield (a host's
     * run_in_background start refuses at its start, as any start) */
    if (yield && !*background && !room_for_task(s, 1, out))
        return SHEXEC_ELIMIT;
    shexec_run *r = NULL;
    if ((rc = shexec_run_new(&r, s, command)) != SHEXEC_OK)
        return shx_tool_error(s, rc, out, "%s", shexec_session_errmsg(s));
    if (timeout)
        rc = shexec_run_set_timeout_ms(r, (uint32_t)timeout);
    if (rc == SHEXEC_OK && cwd)
        rc = shexec_run_set_cwd(r, cwd);
    if (rc == SHEXEC_OK && pty)
        rc = shexec_run_set_pty(r, SHEXEC_PTY_ON);
    /* a command that may be answered later gets a stdin the model writes */
    if (rc == SHEXEC_OK && yield && !*background) {
        rc = shexec_run_set_yield_ms(r, (uint32_t)yield);
        shx_hook_run_reserve_slot(r); /* its yield takes the slot found above */
    }
    if (rc == SHEXEC_OK && yield && !*background && !pty)
        rc = shexec_run_set_stdin(r, 1);
    for (size_t i = 0; rc == SHEXEC_OK && env && i < shx_json_count(env); i++)
        rc = shexec_run_setenv(r, shx_json_key(env, i, NULL),
                               shx_json_string(shx_json_item(env, i), NULL));
    if (rc != SHEXEC_OK) {
        char msg[1024];
        (void)snprintf(msg, sizeof msg, "%s", shexec_session_errmsg(s)); /* cut if long */
        shexec_run_free(r);
        return shx_tool_error(s, rc, out, "%s", msg);
    }
    *run = r;
    return SHEXEC_OK;
}

/* A finished foreground run as the bash tool's result. */
static int bash_result(shexec_session *s, shexec_run *r, char **out)
{
    shx_buf b = SHX_BUF_INIT;
    int timed_out = shexec_run_state(r) == SHEXEC_STATE_TIMED_OUT;
    size_t olen, elen;
    const char *o = shexec_run_output(r, SHEXEC_STDOUT, &olen);
    const char *e = shexec_run_output(r, SHEXEC_STDERR, &elen);
    shx_buf err = SHX_BUF_INIT;
    shx_buf_append(&err, e, elen);
    if (timed_out) {
        if (err.len && err.data[err.len - 1] != '\n')
            shx_buf_putc(&err, '\n');
        if (shexec_run_deadline(r) == SHEXEC_DEADLINE_IDLE)
            shx_buf_printf(&err, "Command ended: no output for its idle timeout (after %llu "
                           "ms)\n", (unsigned long long)shexec_run_duration_ms(r));
        else
            shx_buf_printf(&err, "Command timed out after %u ms\n", shexec_run_timeout_ms(r));
    }
    shx_buf_putc(&b, '{');
    shx_tool_put_key(&b, "stdout");
    shx_json_put_string(&b, o, olen);
    shx_tool_put_output(&b, "stderr", err.data ? err.data : "", err.len);
    shx_buf_puts(&b, ",\"exit_code\":");
    shx_json_put_int64(&b, shexec_run_exit_code(r));
    shx_buf_puts(&b, ",\"timed_out\":");
    shx_json_put_bool(&b, timed_out);
    shx_buf_puts(&b, ",\"truncated\":{\"stdout\":");
    shx_json_put_bool(&b, shexec_run_truncated(r, SHEXEC_STDOUT));
    shx_buf_puts(&b, ",\"stderr\":");
    shx_json_put_bool(&b, shexec_run_truncated(r, SHEXEC_STDERR));
    shx_buf_putc(&b, '}');
    shx_tool_put_ending(&b, r);
    const char *cwd = shexec_session_cwd(s);
    shx_tool_put_output(&b, "cwd", cwd, strlen(cwd));
    const char *left;
    if (shexec_run_leftovers(r, &left) == SHEXEC_LEFTOVERS_ADOPTED && left)
        shx_tool_put_output(&b, "leftover_task_id", left, strlen(left));
    shx_tool_put_kept(&b, r);
    const char *notice = shexec_run_notice(r);
    if (*notice)
        shx_tool_put_output(&b, "notice", notice, strlen(notice));
    uint64_t user, sys, peak; /* what it cost: the whole tree's CPU where a cgroup counted it */
    if (shexec_run_cost(r, &user, &sys, &peak) != SHEXEC_COST_NONE)
        shx_buf_printf(&b, ",\"cost\":{\"cpu_ms\":%llu,\"peak_bytes\":%llu}",
                       (unsigned long long)((user + sys) / 1000), (unsigned long long)peak);
    shx_buf_printf(&b, ",\"elapsed_ms\":%llu}", (unsigned long long)shexec_run_duration_ms(r));
    shx_buf_free(&err);
    return shx_tool_hand_out(s, &b, out);
}

/* A command moved to the background by its yield: the output so far, and
 * the task it goes on as. */
static int yielded_result(shexec_session *s, shexec_run *r, int why, const char *task_id,
                          char **out)
{
    static const char *const reason[] = {"", "yield_time", "timeout", "idle_timeout", "input"};
    shx_buf b = SHX_BUF_INIT;
    shx_buf_puts(&b, "{\"task_id\":");
    shx_json_put_string(&b, task_id, strlen(task_id));
    shx_buf_puts(&b, ",\"status\":\"running\"");
    shx_tool_put_output(&b, "yield_reason", reason[why], strlen(reason[why]));
    for (int stream = SHEXEC_STDOUT; stream <= SHEXEC_STDERR; stream++) {
        size_t len;
        const char *data = shexec_run_output(r, stream, &len);
        shx_tool_put_output(&b, stream == SHEXEC_STDOUT ? "stdout" : "stderr", data, len);
    }
    shx_tool_put_input_wait(&b, r);
    shx_tool_put_kept(&b, r);
    shx_buf_printf(&b, ",\"elapsed_ms\":%llu}", (unsigned long long)shexec_run_duration_ms(r));
    return shx_tool_hand_out(s, &b, out);
}

static int bash_call(shexec_session *s, const shx_json *args, char **out)
{
    shexec_run *r;
    int background;
    int rc = bash_prepare(s, args, &r, &background, out);
    if (rc != SHEXEC_OK)
        return rc;
    shexec_task *t = NULL;
    if (background && !room_for_task(s, 0, out)) {
        shexec_run_free(r);
        return SHEXEC_ELIMIT;
    }
    rc = background ? shexec_run_start_task(&t, r) : shexec_run_exec(r);
    if (rc != SHEXEC_OK) {
        char msg[1024];
        (void)snprintf(msg, sizeof msg, "%s", shexec_session_errmsg(s)); /* cut if long */
        shexec_run_free(r);
        return shx_tool_error(s, rc, out, "%s", msg);
    }
    if (background) {
        /* The tool layer's own: the host never gets this pointer (unless it
         * looks the id up), so once finished it may be released for room. */
        shx_hook_task_disown(t);
        shx_buf b = SHX_BUF_INIT;
        shx_buf_puts(&b, "{\"task_id\":");
        shx_json_put_string(&b, shexec_task_id(t), strlen(shexec_task_id(t)));
        shx_buf_puts(&b, ",\"status\":\"running\"}");
        return shx_tool_hand_out(s, &b, out);
    }
    const char *task_id;
    int why = shexec_run_yielded(r, &task_id);
    rc = why ? yielded_result(s, r, why, task_id, out) : bash_result(s, r, out);
    shexec_run_free(r); /* a yielded one's task goes on: the session's */
    return rc;
}

SHEXEC_API int shexec_tool_call(char **out_json, shexec_session *s, const char *name,
                                const char *args_json)
{
    if (out_json)
        *out_json = NULL;
    if (!s || !out_json)
        return SHEXEC_EINVAL;
    shx_ok(s);
    shx_tool_settings set;
    shx_hook_settings(s, &set);
    if (set.in_callback)
        return shx_fail(s, SHEXEC_ESTATE, "shexec_tool_call called from a callback");
    if (!shexec_tool_is_enabled(s, name))
        return shx_tool_error(s, SHEXEC_ENOTOOL, out_json, "Tool not available: %.64s",
                            name ? name : "(null)");
    shx_json *args = NULL;
    shx_buf perr = SHX_BUF_INIT;
    const char *text = args_json ? args_json : "{}";
    int rc = shx_json_parse(&args, text, strlen(text), NULL, &perr);
    if (rc != SHEXEC_OK) {
        rc = shx_tool_error(s, rc, out_json, "%s", perr.data ? perr.data : "invalid JSON");
        shx_buf_free(&perr);
        return rc;
    }
    shx_buf_free(&perr);
    int i = shx_tool_index(s, name);
    if (i == SHX_TOOL_BASH)
        rc = bash_call(s, args, out_json);
    else
        rc = shx_tool_task_call(s, i, args, out_json);
    shx_json_free(args);
    return rc;
}

SHEXEC_API int shexec_tool_prepare(shexec_run **out_run, int *out_background, shexec_session *s,
                                   const char *name, const char *args_json)
{
    if (out_run)
        *out_run = NULL;
    if (!out_run || !out_background || !s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    *out_background = 0;
    if (shx_tool_index(s, name) != SHX_TOOL_BASH || !shexec_tool_is_enabled(s, name))
        return shx_fail(s, SHEXEC_ENOTOOL, "Tool not available: %.64s", name ? name : "(null)");
    shx_json *args = NULL;
    shx_buf perr = SHX_BUF_INIT;
    const char *text = args_json ? args_json : "{}";
    int rc = shx_json_parse(&args, text, strlen(text), NULL, &perr);
    if (rc != SHEXEC_OK) {
        rc = shx_fail(s, rc, "%s", perr.data ? perr.data : "invalid JSON");
        shx_buf_free(&perr);
        return rc;
    }
    shx_buf_free(&perr);
    char *result = NULL; /* the error as a JSON result: the message is in errmsg too */
    rc = bash_prepare(s, args, out_run, out_background, &result);
    free(result);
    shx_json_free(args);
    return rc;
}

SHEXEC_API int shexec_tool_result(char **out_json, shexec_run *run)
{
    if (out_json)
        *out_json = NULL;
    if (!out_json || !run)
        return SHEXEC_EINVAL;
    int is_task;
    shexec_session *s = shx_hook_run_session(run, &is_task);
    shx_ok(s);
    const char *task_id;
    int why = shexec_run_yielded(run, &task_id);
    if (s && why && task_id)
        return yielded_result(s, run, why, task_id, out_json);
    if (!s || shexec_run_state(run) <= SHEXEC_STATE_RUNNING || is_task)
        return shx_fail(s, SHEXEC_ESTATE, "the run is not a finished foreground run of a session");
    return bash_result(s, run, out_json);
}
