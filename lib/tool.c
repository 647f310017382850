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

#include "base.h"
#include "env.h"
#include "json.h"
#include "shexec_tool.h"
#include "tooldef.h"
#include "toolhook.h"

/* {"error": msg} as the result, and code as the return value. */
static __attribute__((format(printf, 4, 5))) int
error_result(shexec_session *s, int code, char **out, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof msg, fmt, ap); /* a long message is cut, not lost */
    va_end(ap);
    shx_buf b = SHX_BUF_INIT;
    shx_buf_puts(&b, "{\"error\":");
    shx_json_put_string(&b, msg, strlen(msg));
    shx_buf_putc(&b, '}');
    *out = shx_buf_steal(&b, NULL);
    shx_fail(s, code, "%s", msg);
    return *out ? code : SHEXEC_ENOMEM;
}

typedef struct {
    const char *name;
    shx_json_type type;
} field;

/* Refuse anything but the listed fields with the listed types. */
static int check_fields(shexec_session *s, const shx_json *args, const field *fields, size_t n,
                        char **out)
{
    if (!shx_json_is(args, SHX_JSON_OBJECT))
        return error_result(s, SHEXEC_EINVAL, out, "arguments must be a JSON object");
    for (size_t i = 0; i < shx_json_count(args); i++) {
        size_t klen;
        const char *key = shx_json_key(args, i, &klen);
        const shx_json *v = shx_json_item(args, i);
        size_t f;
        for (f = 0; f < n; f++)
            if (strlen(fields[f].name) == klen && memcmp(fields[f].name, key, klen) == 0)
                break;
        if (f == n) { /* named with the ones there are: "cmd" is meant as "command" */
            shx_buf known = SHX_BUF_INIT;
            for (f = 0; f < n; f++) {
                shx_buf_puts(&known, f ? ", " : "");
                shx_buf_puts(&known, fields[f].name);
            }
            int rc = error_result(s, SHEXEC_EINVAL, out,
                                  "unknown argument \"%.*s\" (the arguments are: %s)",
                                  (int)(klen > 64 ? 64 : klen), key, known.data ? known.data : "");
            shx_buf_free(&known);
            return rc;
        }
        if (!shx_json_is(v, fields[f].type)) {
            static const char *const tn[] = {"null", "boolean", "number", "string", "array",
                                             "object"};
            return error_result(s, SHEXEC_EINVAL, out, "argument \"%s\" must be a %s",
                                fields[f].name, tn[fields[f].type]);
        }
    }
    return SHEXEC_OK;
}

/* A string argument as a C string; NUL inside is refused. */
static int string_arg(shexec_session *s, const shx_json *v, const char *what, const char **str,
                      char **out)
{
    size_t len;
    *str = shx_json_string(v, &len);
    if (memchr(*str, '\0', len))
        return error_result(s, SHEXEC_EINVAL, out, "argument \"%s\" contains a NUL character",
                            what);
    return SHEXEC_OK;
}

/* A required, NUL-free string argument. */
static int required_string(shexec_session *s, const shx_json *args, const char *name,
                           const char **str, char **out)
{
    const shx_json *v = shx_json_get(args, name);
    if (!v)
        return error_result(s, SHEXEC_EINVAL, out, "missing required argument \"%s\"", name);
    return string_arg(s, v, name, str, out);
}

static void put_output(shx_buf *b, const char *key, const char *data, size_t len)
{
    shx_buf_putc(b, ',');
    shx_tool_put_key(b, key);
    shx_json_put_string(b, data, len);
}

/*
 * The bash tool's arguments checked and turned into a configured run, not
 * started; *background: run_in_background. On error *out has the result.
 */
static int bash_prepare(shexec_session *s, const shx_json *args, shexec_run **run, int *background,
                        char **out)
{
    *run = NULL;
    static const field fields[] = {{"command", SHX_JSON_STRING}, {"timeout", SHX_JSON_NUMBER},
                                   {"run_in_background", SHX_JSON_BOOL}, {"cwd", SHX_JSON_STRING},
                                   {"env", SHX_JSON_OBJECT}, {"pty", SHX_JSON_BOOL}};
    int rc = check_fields(s, args, fields, sizeof fields / sizeof *fields, out);
    if (rc != SHEXEC_OK)
        return rc;
    const char *command = NULL;
    if ((rc = required_string(s, args, "command", &command, out)) != SHEXEC_OK)
        return rc;
    /* command is set when rc is SHEXEC_OK; the analyzer cannot see that
     * through the variadic error_result(). */
    if (!command || !*command)
        return error_result(s, SHEXEC_EINVAL, out, "argument \"command\" is empty");
    int64_t timeout = 0;
    const shx_json *jt = shx_json_get(args, "timeout");
    if (jt && (shx_json_int64(jt, &timeout) != SHEXEC_OK || timeout < 1))
        return error_result(s, SHEXEC_EINVAL, out,
                            "argument \"timeout\" must be a whole number of milliseconds >= 1");
    if (timeout > UINT32_MAX)
        timeout = UINT32_MAX; /* clamped to the session maximum like any large value */
    int pty = 0;
    *background = 0;
    shx_json_bool(shx_json_get(args, "run_in_background"), background);
    shx_json_bool(shx_json_get(args, "pty"), &pty);
    const char *cwd = NULL;
    const shx_json *jcwd = shx_json_get(args, "cwd");
    if (jcwd && (rc = string_arg(s, jcwd, "cwd", &cwd, out)) != SHEXEC_OK)
        return rc;
    const shx_json *env = shx_json_get(args, "env");
    /* Refused before anything is made: setting the variables one by one
     * would fail at the same bound, but only after the rest was built. */
    if (shx_json_count(env) > SHEXEC_MAX_ENV_VARS)
        return error_result(s, SHEXEC_ELIMIT, out,
                            "argument \"env\" has %zu variables: at most %u are allowed",
                            shx_json_count(env), SHEXEC_MAX_ENV_VARS);
    for (size_t i = 0; env && i < shx_json_count(env); i++) {
        size_t klen;
        const char *key = shx_json_key(env, i, &klen);
        const char *val;
        if (!shx_json_is(shx_json_item(env, i), SHX_JSON_STRING))
            return error_result(s, SHEXEC_EINVAL, out, "env values must be strings");
        if ((rc = string_arg(s, shx_json_item(env, i), "env", &val, out)) != SHEXEC_OK)
            return rc;
        if (memchr(key, '\0', klen) || !shx_env_name_valid(key))
            return error_result(s, SHEXEC_EINVAL, out, "invalid environment variable name \"%.*s\"",
                                (int)(klen > 64 ? 64 : klen), key);
    }

    shexec_run *r = NULL;
    if ((rc = shexec_run_new(&r, s, command)) != SHEXEC_OK)
        return error_result(s, rc, out, "%s", shexec_session_errmsg(s));
    if (timeout)
        rc = shexec_run_set_timeout_ms(r, (uint32_t)timeout);
    if (rc == SHEXEC_OK && cwd)
        rc = shexec_run_set_cwd(r, cwd);
    if (rc == SHEXEC_OK && pty)
        rc = shexec_run_set_pty(r, SHEXEC_PTY_ON);
    for (size_t i = 0; rc == SHEXEC_OK && env && i < shx_json_count(env); i++)
        rc = shexec_run_setenv(r, shx_json_key(env, i, NULL),
                               shx_json_string(shx_json_item(env, i), NULL));
    if (rc != SHEXEC_OK) {
        char msg[1024];
        (void)snprintf(msg, sizeof msg, "%s", shexec_session_errmsg(s)); /* cut if long */
        shexec_run_free(r);
        return error_result(s, rc, out, "%s", msg);
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
        shx_buf_printf(&err, "Command timed out after %u ms\n", shexec_run_timeout_ms(r));
    }
    shx_buf_putc(&b, '{');
    shx_tool_put_key(&b, "stdout");
    shx_json_put_string(&b, o, olen);
    put_output(&b, "stderr", err.data ? err.data : "", err.len);
    shx_buf_puts(&b, ",\"exit_code\":");
    shx_json_put_int64(&b, shexec_run_exit_code(r));
    shx_buf_puts(&b, ",\"timed_out\":");
    shx_json_put_bool(&b, timed_out);
    shx_buf_puts(&b, ",\"truncated\":{\"stdout\":");
    shx_json_put_bool(&b, shexec_run_truncated(r, SHEXEC_STDOUT));
    shx_buf_puts(&b, ",\"stderr\":");
    shx_json_put_bool(&b, shexec_run_truncated(r, SHEXEC_STDERR));
    shx_buf_putc(&b, '}');
    if (shexec_run_signal(r) && !timed_out) {
        shx_buf_puts(&b, ",\"signal\":");
        shx_json_put_int64(&b, shexec_run_signal(r));
    }
    const char *cwd = shexec_session_cwd(s);
    put_output(&b, "cwd", cwd, strlen(cwd));
    const char *left;
    if (shexec_run_leftovers(r, &left) == SHEXEC_LEFTOVERS_ADOPTED && left)
        put_output(&b, "leftover_task_id", left, strlen(left));
    const char *notice = shexec_run_notice(r);
    if (*notice)
        put_output(&b, "notice", notice, strlen(notice));
    uint64_t user, sys, peak; /* what it cost: the whole tree's CPU where a cgroup counted it */
    if (shexec_run_cost(r, &user, &sys, &peak) != SHEXEC_COST_NONE)
        shx_buf_printf(&b, ",\"cost\":{\"cpu_ms\":%llu,\"peak_bytes\":%llu}",
                       (unsigned long long)((user + sys) / 1000), (unsigned long long)peak);
    shx_buf_putc(&b, '}');
    shx_buf_free(&err);
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
    rc = background ? shexec_run_start_task(&t, r) : shexec_run_exec(r);
    if (rc != SHEXEC_OK) {
        char msg[1024];
        (void)snprintf(msg, sizeof msg, "%s", shexec_session_errmsg(s)); /* cut if long */
        shexec_run_free(r);
        return error_result(s, rc, out, "%s", msg);
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
    rc = bash_result(s, r, out);
    shexec_run_free(r);
    return rc;
}

static const char *state_word(int state)
{
    switch (state) {
    case SHEXEC_STATE_EXITED: return "exited";
    case SHEXEC_STATE_SIGNALED: return "signaled";
    case SHEXEC_STATE_TIMED_OUT: return "timed_out";
    case SHEXEC_STATE_KILLED: return "killed";
    case SHEXEC_STATE_CANCELLED: return "cancelled";
    default: return "running";
    }
}

/* Status and output of a task; a finished one is freed (read once). */
static int task_report(shexec_session *s, shexec_task *t, int new_only, const char *status,
                       char **out)
{
    shx_buf b = SHX_BUF_INIT;
    shexec_run *r = shexec_task_run(t);
    int done = shexec_run_state(r) > SHEXEC_STATE_RUNNING;
    shx_buf_puts(&b, "{\"task_id\":");
    shx_json_put_string(&b, shexec_task_id(t), strlen(shexec_task_id(t)));
    shx_buf_puts(&b, ",\"status\":");
    const char *st = status ? status : done ? "completed" : "running";
    shx_json_put_string(&b, st, strlen(st));
    for (int stream = SHEXEC_STDOUT; stream <= SHEXEC_STDERR; stream++) {
        size_t len;
        const char *data = new_only ? shexec_task_read(t, stream, &len)
                                    : shexec_run_output(r, stream, &len);
        put_output(&b, stream == SHEXEC_STDOUT ? "stdout" : "stderr", data, len);
    }
    if (done) {
        shx_buf_puts(&b, ",\"exit_code\":");
        shx_json_put_int64(&b, shexec_run_exit_code(r));
        shx_buf_puts(&b, ",\"state\":");
        const char *w = state_word(shexec_run_state(r));
        shx_json_put_string(&b, w, strlen(w));
    }
    shx_buf_puts(&b, ",\"truncated\":{\"stdout\":");
    shx_json_put_bool(&b, shexec_run_truncated(r, SHEXEC_STDOUT));
    shx_buf_puts(&b, ",\"stderr\":");
    shx_json_put_bool(&b, shexec_run_truncated(r, SHEXEC_STDERR));
    shx_buf_puts(&b, "}}");
    /* read once: the model's id is spent. A task the host holds a pointer
     * to (shexec_session_take_task) is not freed behind its back: it is
     * only no longer found, and the host frees it. */
    if (done)
        shx_hook_task_spent(t);
    return shx_tool_hand_out(s, &b, out);
}

static int task_lookup(shexec_session *s, const shx_json *args, int with_new_only,
                       shexec_task **t, int *new_only, char **out)
{
    static const field fields[] = {{"task_id", SHX_JSON_STRING}, {"new_only", SHX_JSON_BOOL}};
    int rc = check_fields(s, args, fields, with_new_only ? 2 : 1, out);
    if (rc != SHEXEC_OK)
        return rc;
    const char *id = NULL;
    if ((rc = required_string(s, args, "task_id", &id, out)) != SHEXEC_OK)
        return rc;
    *new_only = 0;
    shx_json_bool(shx_json_get(args, "new_only"), new_only);
    /* not shexec_session_take_task(): that would make the task the host's */
    int released;
    *t = shx_hook_task_lookup(s, id, &released);
    if (released) {
        shx_tool_settings set;
        shx_hook_settings(s, &set);
        return error_result(s, SHEXEC_ENOTASK, out,
                            "Task %.64s finished and was released unread (retention limit: the "
                            "session keeps at most %u tasks; read finished tasks with %s)",
                            id, set.max_tasks, shx_tool_exposed_name(s, SHX_TOOL_TASK_OUTPUT));
    }
    if (!*t)
        return error_result(s, SHEXEC_ENOTASK, out, "Task not found: %.64s", id);
    return SHEXEC_OK;
}

static int task_output_call(shexec_session *s, const shx_json *args, char **out)
{
    shexec_task *t;
    int new_only;
    int rc = task_lookup(s, args, 1, &t, &new_only, out);
    if (rc != SHEXEC_OK)
        return rc;
    /* take in what is already there; held, as a callback may free t */
    shx_hook_run_hold(shexec_task_run(t), 1);
    shexec_session_wait(s, 0);
    shx_hook_run_hold(shexec_task_run(t), 0);
    return task_report(s, t, new_only, NULL, out);
}

static int task_kill_call(shexec_session *s, const shx_json *args, char **out)
{
    shexec_task *t;
    int new_only;
    int rc = task_lookup(s, args, 0, &t, &new_only, out);
    if (rc != SHEXEC_OK)
        return rc;
    int was_running = shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING;
    shexec_run_cancel(shexec_task_run(t));
    shx_hook_run_hold(shexec_task_run(t), 1); /* a callback may free t while we wait */
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING)
        if (shexec_session_wait(s, -1) < 0)
            break;
    shx_hook_run_hold(shexec_task_run(t), 0);
    return task_report(s, t, 0, was_running ? "killed" : "completed", out);
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
        return error_result(s, SHEXEC_ENOTOOL, out_json, "Tool not available: %.64s",
                            name ? name : "(null)");
    shx_json *args = NULL;
    shx_buf perr = SHX_BUF_INIT;
    const char *text = args_json ? args_json : "{}";
    int rc = shx_json_parse(&args, text, strlen(text), NULL, &perr);
    if (rc != SHEXEC_OK) {
        rc = error_result(s, rc, out_json, "%s", perr.data ? perr.data : "invalid JSON");
        shx_buf_free(&perr);
        return rc;
    }
    shx_buf_free(&perr);
    int i = shx_tool_index(s, name);
    if (i == SHX_TOOL_BASH)
        rc = bash_call(s, args, out_json);
    else if (i == SHX_TOOL_TASK_OUTPUT)
        rc = task_output_call(s, args, out_json);
    else
        rc = task_kill_call(s, args, out_json);
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
    if (!s || shexec_run_state(run) <= SHEXEC_STATE_RUNNING || is_task)
        return shx_fail(s, SHEXEC_ESTATE, "the run is not a finished foreground run of a session");
    return bash_result(s, run, out_json);
}
