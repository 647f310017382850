/*
 * tooltask.c - the task tools (see tooltask.h). A model polls a background
 * command with task_output (waiting up to yield_time_ms for it to finish or
 * ask for input, so that it need not poll in a tight loop), answers it with
 * task_write (where ^C is an interrupt, as at a terminal), and ends it with
 * task_kill, or sends it a signal with task_kill's `signal`. A finished
 * task is read once: its id is then spent.
 */
#include "tool/tooltask.h"

#include <string.h>

#include "shx/base.h"
#include "shexec_tool.h"
#include "tool/toolargs.h"
#include "tool/tooldef.h"
#include "tool/toolhook.h"

/* The longest a task tool waits (a model's value past it is cut to it). */
#define TOOL_WAIT_MAX_MS 300000
/* How long task_write waits for the answer's output by default. */
#define TOOL_WRITE_WAIT_MS 1000

void shx_tool_put_input_wait(shx_buf *b, const shexec_run *r)
{
    const char *prompt;
    size_t len;
    int password;
    int waiting = shexec_run_input_wait(r, &prompt, &len, &password) == SHEXEC_INPUT_WAITING;
    shx_buf_puts(b, ",\"waiting_for_input\":");
    shx_json_put_bool(b, waiting);
    if (!waiting)
        return;
    shx_tool_put_output(b, "prompt", prompt ? prompt : "", prompt ? len : 0);
    shx_buf_puts(b, ",\"password\":");
    shx_json_put_bool(b, password);
    /* On a pipe a program may ask its question only on a terminal (bash's
     * `read -p`, many CLIs): an empty prompt there must not leave the model
     * waiting on a silence it cannot read. */
    if ((!prompt || !len) && shexec_run_pty(r) == SHEXEC_PTY_OFF) {
        int is_task;
        shexec_session *s = shx_hook_run_session(r, &is_task);
        shx_buf hint = SHX_BUF_INIT;
        shx_buf_printf(&hint, "It waits for input but printed no question: the program may print "
                       "its question only on a terminal. Answer with %s if you know what it "
                       "asks, or stop it with %s and run it again with pty: true to see the "
                       "question.", shx_tool_exposed_name(s, SHX_TOOL_TASK_WRITE),
                       shx_tool_exposed_name(s, SHX_TOOL_TASK_KILL));
        shx_tool_put_output(b, "hint", hint.data ? hint.data : "", hint.len);
        shx_buf_free(&hint);
    }
}

void shx_tool_put_ending(shx_buf *b, const shexec_run *r)
{
    /* a timeout's SIGTERM is the library's: timed_out or the state says so */
    if (shexec_run_signal(r) && shexec_run_state(r) != SHEXEC_STATE_TIMED_OUT) {
        shx_buf_puts(b, ",\"signal\":");
        shx_json_put_int64(b, shexec_run_signal(r));
    }
    if (shexec_run_interrupted(r))
        shx_buf_puts(b, ",\"interrupted\":true");
}

/* A stream's counts (kept characters and bytes, all characters and bytes)
 * and whether it was cut: of the chunk the task's last new-only read
 * returned (chunk), else of the whole run. SHEXEC_OK or SHEXEC_EINVAL. */
static int counts_of(const shexec_run *r, const shexec_task *t, int stream, int chunk,
                     uint64_t n[4], int *cut)
{
    if (chunk) {
        int rc = shexec_task_read_counts(t, stream, &n[0], &n[1], &n[2], &n[3]);
        *cut = rc == SHEXEC_OK && n[3] > n[1];
        return rc;
    }
    *cut = shexec_run_truncated(r, stream);
    return shexec_run_output_counts(r, stream, &n[0], &n[1], &n[2], &n[3]);
}

/* shx_tool_put_kept(), its "omitted" of the chunks chunk[] names (NULL:
 * none; t their task). */
static void put_kept(shx_buf *b, const shexec_run *r, const shexec_task *t, const int *chunk)
{
    int any = 0;
    for (int stream = SHEXEC_STDOUT; stream <= SHEXEC_STDERR; stream++) {
        uint64_t n[4];
        int cut;
        if (counts_of(r, t, stream, chunk && chunk[stream - SHEXEC_STDOUT], n, &cut) !=
                SHEXEC_OK || !cut)
            continue;
        uint64_t kept_chars = n[0], kept_bytes = n[1], chars = n[2], bytes = n[3];
        shx_buf_puts(b, any ? "," : ",\"omitted\":{");
        shx_tool_put_key(b, stream == SHEXEC_STDOUT ? "stdout" : "stderr");
        shx_buf_printf(b, "{\"characters\":%llu,\"bytes\":%llu}",
                       (unsigned long long)(chars - kept_chars),
                       (unsigned long long)(bytes - kept_bytes));
        any = 1;
    }
    if (any)
        shx_buf_putc(b, '}');
    /* how long a cut stream is in lines: what a model pages through */
    any = 0;
    for (int stream = SHEXEC_STDOUT; stream <= SHEXEC_STDERR; stream++) {
        if (!shexec_run_truncated(r, stream))
            continue;
        shx_buf_puts(b, any ? "," : ",\"lines\":{");
        shx_tool_put_key(b, stream == SHEXEC_STDOUT ? "stdout" : "stderr");
        shx_buf_printf(b, "%llu", (unsigned long long)shexec_run_output_lines(r, stream));
        any = 1;
    }
    if (any)
        shx_buf_putc(b, '}');
    any = 0;
    for (int stream = SHEXEC_STDOUT; stream <= SHEXEC_STDERR; stream++) {
        const char *path;
        int state = shexec_run_spill(r, stream, &path, NULL, NULL);
        if (!path || state == SHEXEC_SPILL_REMOVED)
            continue;
        shx_buf_puts(b, any ? "," : ",\"full_output\":{");
        shx_tool_put_key(b, stream == SHEXEC_STDOUT ? "stdout" : "stderr");
        shx_json_put_string(b, path, strlen(path));
        any = 1;
    }
    if (any)
        shx_buf_putc(b, '}');
    uint64_t hidden = shexec_run_redactions(r, SHEXEC_STDOUT) +
                      shexec_run_redactions(r, SHEXEC_STDERR);
    if (hidden)
        shx_buf_printf(b, ",\"redacted\":%llu", (unsigned long long)hidden);
}

void shx_tool_put_kept(shx_buf *b, const shexec_run *r)
{
    put_kept(b, r, NULL, NULL);
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

/* A task's result object into b, its output given (data[0] stdout, data[1]
 * stderr; chunk[i]: data[i] is what the task's last new-only read returned,
 * whose "truncated" and "omitted" are that chunk's, as its notice is), and
 * why a wait returned (NULL: it did not wait): nothing is read or freed. */
static void task_json(shx_buf *b, shexec_task *t, const char *status, const char *const data[2],
                      const size_t len[2], const int chunk[2], const char *wait_reason)
{
    shexec_run *r = shexec_task_run(t);
    int done = shexec_run_state(r) > SHEXEC_STATE_RUNNING;
    shx_buf_puts(b, "{\"task_id\":");
    shx_json_put_string(b, shexec_task_id(t), strlen(shexec_task_id(t)));
    shx_buf_puts(b, ",\"status\":");
    const char *st = status ? status : done ? "completed" : "running";
    shx_json_put_string(b, st, strlen(st));
    shx_tool_put_output(b, "stdout", data[0], len[0]);
    shx_tool_put_output(b, "stderr", data[1], len[1]);
    if (done) {
        shx_buf_puts(b, ",\"exit_code\":");
        shx_json_put_int64(b, shexec_run_exit_code(r));
        shx_buf_puts(b, ",\"state\":");
        const char *w = state_word(shexec_run_state(r));
        shx_json_put_string(b, w, strlen(w));
    }
    else
        shx_tool_put_input_wait(b, r);
    shx_tool_put_ending(b, r);
    if (wait_reason)
        shx_tool_put_output(b, "wait_reason", wait_reason, strlen(wait_reason));
    for (int i = 0; i < 2; i++) {
        uint64_t n[4];
        int cut = 0;
        (void)counts_of(r, t, SHEXEC_STDOUT + i, chunk[i], n, &cut);
        shx_buf_puts(b, i ? ",\"stderr\":" : ",\"truncated\":{\"stdout\":");
        shx_json_put_bool(b, cut);
    }
    shx_buf_putc(b, '}');
    put_kept(b, r, t, chunk);
    shx_buf_putc(b, '}');
}

/* What a wait's SHEXEC_WATCH_* says in a result. */
static const char *wait_word(int why)
{
    switch (why) {
    case SHEXEC_WATCH_ENDED: return "ended";
    case SHEXEC_WATCH_QUIET: return "quiet";
    case SHEXEC_WATCH_INPUT: return "input";
    default: return "time";
    }
}

/* Status and output of a task; a finished one is freed (read once).
 * wait_reason: why the wait before returned (NULL: none was asked). */
static int task_report(shexec_session *s, shexec_task *t, int new_only, const char *status,
                       const char *wait_reason, char **out)
{
    shx_buf b = SHX_BUF_INIT;
    shexec_run *r = shexec_task_run(t);
    int done = shexec_run_state(r) > SHEXEC_STATE_RUNNING;
    const char *data[2];
    size_t len[2];
    const int chunk[2] = {new_only, new_only};
    for (int i = 0; i < 2; i++)
        data[i] = new_only ? shexec_task_read(t, SHEXEC_STDOUT + i, &len[i])
                           : shexec_run_output(r, SHEXEC_STDOUT + i, &len[i]);
    task_json(&b, t, status, data, len, chunk, wait_reason);
    /* read once: the model's id is spent. A task the host holds a pointer
     * to (shexec_session_take_task) is not freed behind its back: it is
     * only no longer found, and the host frees it. */
    if (done)
        shx_hook_task_spent(t);
    return shx_tool_hand_out(s, &b, out);
}

SHEXEC_API int shexec_tool_task_result(char **out_json, shexec_task *t, const char *status,
                                       const char *out, size_t out_len, const char *err,
                                       size_t err_len)
{
    if (out_json)
        *out_json = NULL;
    if (!out_json || !t || (!out && out_len) || (!err && err_len))
        return SHEXEC_EINVAL;
    int is_task;
    shexec_session *s = shx_hook_run_session(shexec_task_run(t), &is_task);
    shx_ok(s);
    const char *data[2] = {out ? out : "", err ? err : ""};
    const size_t len[2] = {out_len, err_len};
    /* the host's new-only read, passed as it came, is counted as a chunk */
    const int chunk[2] = {shx_hook_task_is_last_read(t, SHEXEC_STDOUT, out),
                          shx_hook_task_is_last_read(t, SHEXEC_STDERR, err)};
    shx_buf b = SHX_BUF_INIT;
    task_json(&b, t, status, data, len, chunk, NULL);
    return shx_tool_hand_out(s, &b, out_json);
}

/* The task a call names, its arguments checked against fields first (and
 * its wait, yield_time_ms, into *wait_ms when there is one, and quiet_ms
 * into *quiet_ms: a quiet to wait for makes the wait default to the
 * longest, TOOL_WAIT_MAX_MS). */
static int task_lookup(shexec_session *s, const shx_json *args, const shx_tool_field *fields,
                       size_t nfields, int64_t *wait_ms, int64_t *quiet_ms, shexec_task **t,
                       int *new_only, char **out)
{
    int rc = shx_tool_check_fields(s, args, fields, nfields, out);
    if (rc == SHEXEC_OK && wait_ms)
        rc = shx_tool_ms_arg(s, args, "yield_time_ms", 0, TOOL_WAIT_MAX_MS, wait_ms, out);
    if (rc == SHEXEC_OK && quiet_ms)
        rc = shx_tool_ms_arg(s, args, "quiet_ms", 1, TOOL_WAIT_MAX_MS, quiet_ms, out);
    if (rc != SHEXEC_OK)
        return rc;
    if (quiet_ms && *quiet_ms && wait_ms && !shx_json_get(args, "yield_time_ms"))
        *wait_ms = TOOL_WAIT_MAX_MS;
    const char *id = NULL;
    if ((rc = shx_tool_required_string(s, args, "task_id", &id, out)) != SHEXEC_OK)
        return rc;
    *new_only = 0;
    shx_json_bool(shx_json_get(args, "new_only"), new_only);
    /* not shexec_session_take_task(): that would make the task the host's */
    int released;
    *t = shx_hook_task_lookup(s, id, &released);
    if (released) {
        shx_tool_settings set;
        shx_hook_settings(s, &set);
        return shx_tool_error(s, SHEXEC_ENOTASK, out,
                            "Task %.64s finished and was released unread (retention limit: the "
                            "session keeps at most %u tasks; read finished tasks with %s)",
                            id, set.max_tasks, shx_tool_exposed_name(s, SHX_TOOL_TASK_OUTPUT));
    }
    if (!*t)
        return shx_tool_error(s, SHEXEC_ENOTASK, out, "Task not found: %.64s", id);
    return SHEXEC_OK;
}

static int task_output_call(shexec_session *s, const shx_json *args, char **out)
{
    static const shx_tool_field fields[] = {{"task_id", SHX_JSON_STRING},
                                            {"new_only", SHX_JSON_BOOL},
                                            {"yield_time_ms", SHX_JSON_NUMBER},
                                            {"quiet_ms", SHX_JSON_NUMBER}};
    shexec_task *t;
    int new_only;
    int64_t wait_ms = 0, quiet_ms = 0;
    int rc = task_lookup(s, args, fields, 4, &wait_ms, &quiet_ms, &t, &new_only, out);
    if (rc != SHEXEC_OK)
        return rc;
    /* take in what is already there, or wait as asked */
    int why = shx_hook_run_wait(s, shexec_task_run(t), wait_ms, quiet_ms);
    /* why, where it says more than the status and waiting_for_input do:
     * whether a watch for quiet ended in quiet or at its time */
    return task_report(s, t, new_only, NULL, quiet_ms ? wait_word(why) : NULL, out);
}

static int task_write_call(shexec_session *s, const shx_json *args, char **out)
{
    static const shx_tool_field fields[] = {{"task_id", SHX_JSON_STRING},
                                            {"input", SHX_JSON_STRING},
                                            {"close_stdin", SHX_JSON_BOOL},
                                            {"yield_time_ms", SHX_JSON_NUMBER},
                                            {"quiet_ms", SHX_JSON_NUMBER}};
    shexec_task *t;
    int new_only, close_stdin = 0;
    int64_t wait_ms = TOOL_WRITE_WAIT_MS, quiet_ms = 0;
    int rc = task_lookup(s, args, fields, 5, &wait_ms, &quiet_ms, &t, &new_only, out);
    if (rc != SHEXEC_OK)
        return rc;
    shx_json_bool(shx_json_get(args, "close_stdin"), &close_stdin);
    shexec_run *r = shexec_task_run(t);
    const shx_json *jin = shx_json_get(args, "input");
    size_t len = 0;
    const char *input = jin ? shx_json_string(jin, &len) : "";
    if (shexec_run_state(r) > SHEXEC_STATE_RUNNING)
        return shx_tool_error(s, SHEXEC_EPIPE, out, "Task %s has finished: it takes no input "
                              "(read its output with %s)", shexec_task_id(t),
                              shx_tool_exposed_name(s, SHX_TOOL_TASK_OUTPUT));
    /* the model's input is held to the bound even into an empty queue (the
     * C caller's one large write is its own buffer; the model's is not) */
    uint64_t max = shexec_session_input_queue_max(s);
    if (len > max)
        rc = shx_fail(s, SHEXEC_ELIMIT, "%zu bytes of input are more than the bound of %llu "
                      "bytes on input a command has not read (send it in parts)", len,
                      (unsigned long long)max);
    else if (len) /* typed: ^C on a pipe is an interrupt, as at a terminal */
        rc = shexec_run_type_input(r, input, len);
    if (rc == SHEXEC_ELIMIT) /* refused whole: the model may send it again later */
        return shx_tool_error(s, rc, out, "Task %s: the input was not written: %s; read its "
                              "output with %s meanwhile", shexec_task_id(t),
                              shexec_session_errmsg(s),
                              shx_tool_exposed_name(s, SHX_TOOL_TASK_OUTPUT));
    if (rc == SHEXEC_ESTATE) /* its ^C found none of its processes */
        return shx_tool_error(s, rc, out, "Task %s: %s (read its output with %s)",
                              shexec_task_id(t), shexec_session_errmsg(s),
                              shx_tool_exposed_name(s, SHX_TOOL_TASK_OUTPUT));
    if (rc == SHEXEC_OK && close_stdin)
        rc = shexec_run_close_stdin(r);
    if (rc != SHEXEC_OK)
        return shx_tool_error(s, rc, out, "Task %s takes no input: %s (a command gets input "
                              "when started with yield_time_ms or pty)", shexec_task_id(t),
                              shexec_session_errmsg(s));
    int why = shx_hook_run_wait(s, r, wait_ms, quiet_ms);
    return task_report(s, t, 1, NULL, quiet_ms ? wait_word(why) : NULL, out);
}

/* task_kill with `signal`: the signal sent (the task is not ended by the
 * library), then what it printed since the last read after a wait as
 * task_write's; a task that ended is read to its end. */
static int task_signal_call(shexec_session *s, shexec_task *t, const shx_json *jsig, char **out)
{
    const char *name;
    int rc = shx_tool_string_arg(s, jsig, "signal", &name, out);
    if (rc != SHEXEC_OK)
        return rc;
    int sig = shexec_signal_from_name(name);
    if (sig < 0)
        return shx_tool_error(s, SHEXEC_EINVAL, out, "unknown signal \"%.32s\": %s takes "
                              SHX_TOOL_SIGNALS " (or the name without SIG)", name,
                              shx_tool_exposed_name(s, SHX_TOOL_TASK_KILL));
    shexec_run *r = shexec_task_run(t);
    shx_hook_run_wait(s, r, 0, 0); /* one that has just ended is seen as ended */
    if (shexec_run_state(r) > SHEXEC_STATE_RUNNING)
        rc = shx_fail(s, SHEXEC_ESTATE, "it has finished");
    else
        rc = shexec_run_send_signal(r, sig);
    if (rc != SHEXEC_OK)
        return shx_tool_error(s, rc, out, "Task %s: no %.32s was sent: %s (read its output with "
                              "%s)", shexec_task_id(t), name, shexec_session_errmsg(s),
                              shx_tool_exposed_name(s, SHX_TOOL_TASK_OUTPUT));
    shx_hook_run_wait(s, r, TOOL_WRITE_WAIT_MS, 0);
    return task_report(s, t, 1, NULL, NULL, out);
}

static int task_kill_call(shexec_session *s, const shx_json *args, char **out)
{
    static const shx_tool_field fields[] = {{"task_id", SHX_JSON_STRING},
                                            {"signal", SHX_JSON_STRING}};
    shexec_task *t;
    int new_only;
    int rc = task_lookup(s, args, fields, 2, NULL, NULL, &t, &new_only, out);
    if (rc != SHEXEC_OK)
        return rc;
    const shx_json *jsig = shx_json_get(args, "signal");
    if (jsig)
        return task_signal_call(s, t, jsig, out);
    int was_running = shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING;
    shexec_run_cancel(shexec_task_run(t));
    shx_hook_run_hold(shexec_task_run(t), 1); /* a callback may free t while we wait */
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING)
        if (shexec_session_wait(s, -1) < 0)
            break;
    shx_hook_run_hold(shexec_task_run(t), 0);
    return task_report(s, t, 0, was_running ? "killed" : "completed", NULL, out);
}


int shx_tool_task_call(shexec_session *s, int i, const shx_json *args, char **out)
{
    if (i == SHX_TOOL_TASK_OUTPUT)
        return task_output_call(s, args, out);
    if (i == SHX_TOOL_TASK_WRITE)
        return task_write_call(s, args, out);
    return task_kill_call(s, args, out);
}
