/*
 * shexec-mcp - an MCP (Model Context Protocol) server over stdio that hands a
 * model a shell: the tools `bash`, `task_output`, `task_kill` and
 * `task_write`.
 *
 * Transport: JSON-RPC 2.0, one message per line on stdin/stdout, UTF-8; logs
 * go to stderr only. One poll() loop watches stdin, stdout (when replies are
 * queued), a self-pipe for SIGTERM/SIGINT/SIGHUP and every descriptor the
 * libshexec session needs, so the server keeps answering (ping, further
 * calls, cancellations) while commands run or a task_kill waits for its task
 * to end, and never blocks on a slow client. The bash tool's arguments are
 * checked by the library (shexec_tool_prepare), exactly as its own tool
 * layer checks them; the server starts the run and formats the result.
 * Foreground commands stream their output as notifications/progress when
 * the request carried a progress token. A command called with
 * yield_time_ms (or moved by the session's background on timeout or idle
 * yield) is answered while it still runs, with its output so far, and goes
 * on as a task the model reads, answers and stops with the task tools; a
 * task_output or task_write that waits (yield_time_ms) is a pending call
 * too, answered when the task ends, waits for input, or the time is up.
 * At stdin EOF or a termination
 * signal every command still running is stopped (SIGTERM to its process
 * group, a grace period, SIGKILL) before the server exits.
 * If the server itself dies without that chance (SIGKILL, an OOM kill, a
 * crash), the session's watchdog (shexec_session_set_watchdog(), turned on
 * here) stops them the same way: no command outlives the server.
 *
 * A command's exit code, and a signal that ended it, are data for the model:
 * isError marks what the tool could not do (a timeout, bad arguments, a
 * command that could not start), unless --error-on-nonzero-exit asks for
 * the stricter rule.
 *
 * Two eras of MCP are served at once, chosen per request (see `era`): the
 * stateless 2026-07-28 (server/discover, the version and the client's
 * capabilities in every request's _meta, resultType in every result, -32022
 * for a version of no era we speak) and the initialize era (2025-11-25 down
 * to 2024-11-05). A client of 2026-07-28 that declares the Tasks extension
 * gets a background command, or one that yields, as an MCP task (tasks/get,
 * tasks/update for the input a command waits for, tasks/cancel).
 *
 * A result is one text block, the form a model reads. A client of MCP
 * 2025-06-18 or later also gets the tool layer's JSON result object (as
 * shexec_tool_call() would return it, include/shexec_tool.h) as
 * structuredContent, described by each tool's outputSchema in tools/list;
 * a tool error, {"error": ...} there, has none.
 *
 * Output reaches a model, and whatever logs it, with secrets hidden: the
 * values of the environment's sensitive variables, key-shaped words and PEM
 * private keys become [REDACTED:NAME] unless --no-redact (OUTPUT FOR MODELS
 * in shexec.h). With --spill-dir the whole text of a stream cut at its
 * limit is kept in a file the result names.
 *
 * Client messages are read strictly: a repeated key or a NUL inside a
 * method name is refused, never half-matched, and every message that needs
 * an answer gets exactly one.
 *
 * Uses only the public API (include/shexec_tool.h, shexec.h), and the library's strict
 * JSON parser and writer (lib/shx/json.c, lib/shx/buf.c) compiled into it: one
 * JSON reading for the tool arguments and the messages around them.
 */
#include <shexec_tool.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "shx/buf.h"
#include "shx/json.h"
#include "shx/utf8.h"

#define SERVER_NAME "shexec-mcp"
/* Two eras of MCP in one server, chosen per request. A request that names
 * its protocol version in _meta is of the stateless era (2026-07-28): no
 * initialize, the client's capabilities in every request, server/discover,
 * a resultType in every result. One that does not is of the initialize era
 * (2024-11-05 to 2025-11-25), whose version the initialize request chose. */
#define MODERN_PROTOCOL "2026-07-28"
#define LATEST_PROTOCOL "2025-11-25"
static const char *const protocols[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
#define SUPPORTED_VERSIONS_JSON                                                                    \
    "[\"" MODERN_PROTOCOL "\",\"2025-11-25\",\"2025-06-18\",\"2025-03-26\",\"2024-11-05\"]"
#define META_PROTOCOL_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CLIENT_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define TASKS_EXTENSION "io.modelcontextprotocol/tasks"
#define LIST_TTL_MS 600000            /* tools/list's cache hint: it never changes while we run */
#define TASK_POLL_MS 500              /* the tasks/get interval suggested to clients */
#define TASKS_KEPT_DONE 64            /* finished tasks whose result tasks/get still gives */
/* The first version with a tool's outputSchema and a result's
 * structuredContent. Versions are dates: a later one compares greater. */
#define STRUCTURED_OUTPUT_SINCE "2025-06-18"

#define MAX_TIMEOUT_MS 600000u
#define MAX_LINE (32u << 20)          /* a request larger than this is refused */
/* The values a message may hold: a floor no real request comes near, and
 * one more per LINE_BYTES_PER_VALUE bytes of its line. The parser spends
 * some 140 bytes on each value it keeps (its node, its text, its place in
 * its container), and two bytes of `[0,0,...]` are a value: bounded only
 * by the line's 32 MiB, one line would cost some 2 GiB. So bounded, a line
 * costs at most about 4 times its length, besides the 9 MiB of the floor. */
#define MSG_VALUES_FLOOR 65536u
#define LINE_BYTES_PER_VALUE 32u
#define IN_KEEP_CAP (1u << 20)        /* an empty input buffer above this is freed */
#define PROGRESS_FLUSH_BYTES (16u << 10)
#define PROGRESS_FLUSH_MS 50
#define PROGRESS_HEARTBEAT_MS 10000
#define PROGRESS_BUDGET (1u << 20)    /* live output streamed per call, at most */
#define OUTQ_SOFT_LIMIT (8u << 20)    /* above this, progress is not queued */
#define SHUTDOWN_GRACE_MS 1000u       /* a client gives us ~2 s after EOF */
#define TASK_WAIT_MAX_MS 300000       /* the longest a task tool waits (more is cut to it) */
#define TASK_WRITE_WAIT_MS 1000       /* task_write's wait when the model gives none */

/* JSON-RPC error codes */
#define RPC_PARSE_ERROR (-32700)
#define RPC_INVALID_REQUEST (-32600)
#define RPC_METHOD_NOT_FOUND (-32601)
#define RPC_INVALID_PARAMS (-32602)
#define RPC_UNSUPPORTED_VERSION (-32022) /* 2026-07-28: data.supported lists ours */

/* How a reply is written: what the request it answers said about its
 * client. Kept per request (and per pending call), never per process: a
 * client of the stateless era may send any request to any server. */
typedef struct {
    int modern;     /* 2026-07-28: resultType and the server's info in every result */
    int structured; /* tools/list has outputSchema, results structuredContent */
    int tasks;      /* the client declared the Tasks extension: long commands become tasks */
} era;

/* A request answered later, so that the loop keeps serving meanwhile: a
 * foreground bash command (once it has finished, or yielded: moved to the
 * background still running), a task_kill waiting for the task it stopped
 * to end (SIGTERM, grace, SIGKILL), or a task_output / task_write waiting
 * (yield_time_ms) for its task to end or wait for input. */
enum { CALL_BASH, CALL_KILL, CALL_WAIT };

typedef struct call call;
struct call {
    call *next;
    char *id;          /* the request id as sent (JSON text) */
    char *token;       /* the progress token as sent (JSON text), or NULL */
    int kind;          /* CALL_* */
    era era;           /* of the request it answers */
    shexec_run *run;   /* ours (bash), or the run of `task` (owned by the task) */
    shexec_task *task; /* task_kill, a waiting task tool: its task, freed once reported done */
    int new_only;      /* CALL_WAIT: report only the output not read yet */
    int64_t until_ms;  /* CALL_WAIT: answer by then at the latest */
    int64_t quiet_ms;  /* CALL_WAIT: or once the task printed nothing for so long; 0: not */
    int takes_input;   /* CALL_BASH: its stdin is a pipe or a terminal the model writes */
    int cancelled;     /* the client cancelled: stop, send nothing more */
    int64_t start_ms;
    /* live output not yet sent as progress */
    shx_buf pending;
    int64_t pending_since_ms;
    int64_t last_sent_ms;
    double last_progress;
    uint64_t streamed;
    int budget_spent;
};

typedef struct {
    shexec_session *s;
    call *calls;
    shx_buf outq;          /* serialized messages waiting for stdout */
    size_t outq_off;
    int out_nonblock;
    int stdin_open;
    int stop;             /* a signal or a write error: leave now */
    int sig_pipe[2];
    char *in;             /* bytes read from stdin, not yet a full line */
    size_t in_len, in_cap;
    int discarding;       /* inside an oversized line: drop until newline */
    uint32_t default_timeout_ms;
    uint32_t task_timeout_ms; /* 0: background tasks have no limit */
    int error_on_nonzero_exit; /* isError also for a non-zero exit or a signal */
    int legacy_structured; /* the initialize era's client chose STRUCTURED_OUTPUT_SINCE or
                            * later: its replies have outputSchema and structuredContent */
    era req;               /* the era of the reply being written (the request's, or the
                            * pending call's) */
    struct mtask *tasks;   /* commands answered as MCP tasks (Tasks extension) */
} server;

static void answer_as_task(server *sv, const char *id, shexec_task *t, int takes_input);
static int is_mtask(const server *sv, const char *task_id);

static volatile sig_atomic_t signal_seen;
static int signal_fd = -1;

static void log_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, SERVER_NAME ": ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_signal(int sig)
{
    int saved = errno;
    signal_seen = sig;
    if (signal_fd >= 0) {
        char c = 1;
        ssize_t w = write(signal_fd, &c, 1);
        (void)w;
    }
    errno = saved;
}

/* ---- output ---------------------------------------------------------- */

static void flush_out(server *sv, int block)
{
    while (sv->outq_off < sv->outq.len) {
        ssize_t w = write(STDOUT_FILENO, sv->outq.data + sv->outq_off, sv->outq.len - sv->outq_off);
        if (w > 0) {
            sv->outq_off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            if (!block)
                return;
            struct pollfd p = {STDOUT_FILENO, POLLOUT, 0};
            if (poll(&p, 1, 5000) <= 0)
                break; /* the client stopped reading: give up on it */
            continue;
        }
        sv->stop = 1; /* EPIPE: nobody is listening any more */
        break;
    }
    if (sv->outq_off >= sv->outq.len) {
        sv->outq.len = 0;
        sv->outq_off = 0;
    }
}

/* A value as JSON text (malloc'd): ids and progress tokens are echoed in
 * this form, the same value as the client's (numbers exactly as written,
 * strings escaped anew); a tool's arguments are handed on in it. */
static char *json_text(const shx_json *v)
{
    shx_buf b = SHX_BUF_INIT;
    if (shx_json_write(&b, v) != 0) {
        shx_buf_free(&b);
        return NULL;
    }
    return shx_buf_steal(&b, NULL);
}

/* 1 when v is a string of exactly the bytes of s (a NUL inside v differs) */
static int str_eq(const shx_json *v, const char *s)
{
    size_t n = strlen(s);
    return shx_json_is(v, SHX_JSON_STRING) && v->len == n && memcmp(v->str, s, n) == 0;
}

/* How many members of obj are named key (repeated keys are kept) */
static size_t count_key(const shx_json *obj, const char *key)
{
    size_t klen = strlen(key), n = 0;
    for (size_t i = 0; shx_json_is(obj, SHX_JSON_OBJECT) && i < obj->count; i++)
        n += obj->keys[i].len == klen && memcmp(obj->keys[i].str, key, klen) == 0;
    return n;
}

/* Length of the longest prefix of s[0..n) that does not end inside a UTF-8
 * character the next bytes could still complete: progress is sent in whole
 * characters. */
static size_t complete_prefix(const char *s, size_t n)
{
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        const unsigned char *p = (const unsigned char *)s + n - back;
        if ((*p & 0xC0) == 0x80)
            continue; /* a continuation byte: look further back for the lead */
        return shx_utf8_char_len(p, back, 0) == 0 ? n - back : n;
    }
    return n;
}

/* Queue one message; `body` is the JSON object text without the newline. */
static void send_msg(server *sv, const shx_buf *body)
{
    if (body->failed) {
        log_msg("out of memory building a reply");
        return;
    }
    shx_buf_append(&sv->outq, body->data, body->len);
    shx_buf_append(&sv->outq, "\n", 1);
    if (sv->outq.failed) {
        log_msg("out of memory queueing a reply");
        sv->stop = 1;
    }
}

static void put_server_info(shx_buf *b)
{
    shx_buf_puts(b, "{\"name\":\"" SERVER_NAME "\",\"version\":");
    (void)shx_json_put_string(b, shexec_version(), strlen(shexec_version()));
    shx_buf_puts(b, "}");
}

/* The start of a result object: "{", and for the stateless era the members
 * every result of it has (resultType, the server's info in _meta) and, when
 * `more`, the comma before the result's own members. */
static void put_result_open(const server *sv, shx_buf *b, const char *result_type, int more)
{
    shx_buf_puts(b, "{");
    if (!sv->req.modern)
        return;
    shx_buf_printf(b, "\"resultType\":\"%s\",\"_meta\":{\"" META_SERVER_INFO "\":", result_type);
    put_server_info(b);
    shx_buf_puts(b, more ? "}," : "}");
}

/* A result: result_json is the object's text, completed with what its
 * era's results carry. */
static void send_result(server *sv, const char *id, const char *result_json)
{
    shx_buf b = {0};
    shx_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":", id);
    int more = result_json[0] == '{' && result_json[1] != '}';
    put_result_open(sv, &b, "complete", more);
    shx_buf_puts(&b, result_json[0] == '{' ? result_json + 1 : "}");
    shx_buf_puts(&b, "}");
    send_msg(sv, &b);
    shx_buf_free(&b);
}

/* An error response; the message is n bytes and may hold client text with
 * NUL in it (a method or key name), escaped on output; data_json, JSON
 * text or NULL, is the error's data. */
static void send_error_data(server *sv, const char *id, int code, const char *message, size_t n,
                            const char *data_json)
{
    shx_buf b = {0};
    shx_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":",
              id ? id : "null", code);
    (void)shx_json_put_string(&b, message, n);
    if (data_json) {
        shx_buf_puts(&b, ",\"data\":");
        shx_buf_puts(&b, data_json);
    }
    shx_buf_puts(&b, "}}");
    send_msg(sv, &b);
    shx_buf_free(&b);
}

static void send_error(server *sv, const char *id, int code, const char *message)
{
    send_error_data(sv, id, code, message, strlen(message), NULL);
}

/* An error whose message was built in m; a generic one if that failed. */
static void send_error_buf(server *sv, const char *id, int code, const shx_buf *m,
                           const char *fallback)
{
    if (m->failed || !m->data)
        send_error(sv, id, code, fallback);
    else
        send_error_data(sv, id, code, m->data, m->len, NULL);
}

/* Up to 64 bytes of a client's name (a key, a method) for a message, quoted. */
static void put_name(shx_buf *m, const char *name, size_t len)
{
    shx_buf_puts(m, "\"");
    shx_buf_append(m, name, len > 64 ? 64 : len);
    shx_buf_puts(m, len > 64 ? "...\"" : "\"");
}

/* A tools/call result: one text content block for the model, isError as
 * given, and the tool's result object as structuredContent when there is
 * one (`structured`: JSON object text, or NULL) and the client's protocol
 * version has it. The object goes in as the tool layer wrote it. */
static void put_tool_result_members(const server *sv, shx_buf *b, const shx_buf *text,
                                    const char *structured, int is_error)
{
    shx_buf_puts(b, "\"content\":[{\"type\":\"text\",\"text\":");
    (void)shx_json_put_string(b, text->data ? text->data : "", text->len);
    shx_buf_puts(b, "}]");
    if (structured && sv->req.structured) {
        shx_buf_puts(b, ",\"structuredContent\":");
        shx_buf_puts(b, structured);
    }
    shx_buf_printf(b, ",\"isError\":%s", is_error ? "true" : "false");
    if (text->failed)
        b->failed = 1;
}

static void send_tool_result(server *sv, const char *id, const shx_buf *text,
                             const char *structured, int is_error)
{
    shx_buf b = {0};
    shx_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":", id);
    put_result_open(sv, &b, "complete", 1);
    put_tool_result_members(sv, &b, text, structured, is_error);
    shx_buf_puts(&b, "}}");
    send_msg(sv, &b);
    shx_buf_free(&b);
}

/* A tool error whose message was built in m (it may hold NUL). What the
 * tool layer would answer as {"error": ...} is text only: no result
 * object, so no structuredContent. */
static void send_tool_error_buf(server *sv, const char *id, const shx_buf *m, const char *fallback)
{
    if (m->failed || !m->data) {
        shx_buf t = {0};
        shx_buf_puts(&t, fallback);
        send_tool_result(sv, id, &t, NULL, 1);
        shx_buf_free(&t);
    } else {
        send_tool_result(sv, id, m, NULL, 1);
    }
}

static void send_tool_error(server *sv, const char *id, const char *message)
{
    shx_buf t = {0};
    shx_buf_puts(&t, message);
    send_tool_result(sv, id, &t, NULL, 1);
    shx_buf_free(&t);
}

/* ---- formatting results for a model ------------------------------------ */

static void put_section(shx_buf *t, const char *name, const char *data, size_t len)
{
    if (!len)
        return;
    shx_buf_printf(t, "%s:\n", name);
    shx_buf_append(t, data, len);
    if (data[len - 1] != '\n')
        shx_buf_printf(t, "\n\\ no newline at end of %s\n", name);
}

static void put_output(shx_buf *t, shexec_run *r)
{
    size_t olen, elen;
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, &olen);
    const char *err = shexec_run_output(r, SHEXEC_STDERR, &elen);
    put_section(t, "stdout", out, olen);
    put_section(t, "stderr", err, elen);
    if (!olen && !elen)
        shx_buf_puts(t, "(no output)\n");
}

/* What the command cost, in a line: CPU time (the whole process tree's
 * where a cgroup counted it, else the shell's and what it waited for) and
 * peak memory. */
static void put_cost(shx_buf *t, shexec_run *r)
{
    uint64_t user, sys, peak;
    int source = shexec_run_cost(r, &user, &sys, &peak);
    if (source == SHEXEC_COST_NONE)
        return;
    shx_buf_printf(t, "cost: cpu %.2f s (user %.2f, system %.2f; %s)", (double)(user + sys) / 1e6,
                   (double)user / 1e6, (double)sys / 1e6,
                   source == SHEXEC_COST_CGROUP ? "every process of the command"
                                                : "the shell and what it waited for");
    if (peak)
        shx_buf_printf(t, ", peak memory %.1f MiB", (double)peak / (1 << 20));
    shx_buf_puts(t, "\n");
}

/* The text form of the tool layer's "full_output" and "redacted": where
 * the whole text of a stream cut at its limit is kept (the spill file; the
 * truncation notice names it too, but a line of its own is what a model
 * scanning the result finds) and how many secrets were hidden. */
static void put_kept(shx_buf *t, const shexec_run *r)
{
    for (int stream = SHEXEC_STDOUT; stream <= SHEXEC_STDERR; stream++) {
        const char *path;
        uint64_t bytes;
        int state = shexec_run_spill(r, stream, &path, &bytes, NULL);
        if (!path || state == SHEXEC_SPILL_REMOVED)
            continue; /* none, or gone: the notice says why */
        shx_buf_printf(t, "full_output: %s in ", stream == SHEXEC_STDOUT ? "stdout" : "stderr");
        shx_buf_puts(t, path);
        if (state == SHEXEC_SPILL_WRITING)
            shx_buf_printf(t, " (%llu bytes so far: the command still writes it)\n",
                           (unsigned long long)bytes);
        else if (state == SHEXEC_SPILL_CAPPED)
            shx_buf_printf(t, " (only its first %llu bytes: the spill file's cap)\n",
                           (unsigned long long)bytes);
        else
            shx_buf_printf(t, " (the whole stream, %llu bytes: read the parts you need with "
                           "grep, sed -n, head or tail)\n", (unsigned long long)bytes);
    }
    uint64_t hidden = shexec_run_redactions(r, SHEXEC_STDOUT) +
                      shexec_run_redactions(r, SHEXEC_STDERR);
    if (hidden)
        shx_buf_printf(t, "redacted: %llu (secrets hidden from the output, each shown as "
                       "[REDACTED:NAME])\n", (unsigned long long)hidden);
}

/* Whether the result of a command that ended is isError: see the comment
 * at the end of format_run(). */
static int run_is_error(const server *sv, const shexec_run *r)
{
    switch (shexec_run_state(r)) {
    case SHEXEC_STATE_EXITED: return sv->error_on_nonzero_exit && shexec_run_exit_code(r) != 0;
    case SHEXEC_STATE_SIGNALED: return sv->error_on_nonzero_exit;
    default: return 1;
    }
}

/* The signal that ended the command (not its timeout: the library's
 * SIGTERM), and whether a SIGINT reached it (a Ctrl+C: task_kill's signal,
 * or ^C typed with task_write), in lines: the tool layer's "signal" and
 * "interrupted". */
static void put_ending(shx_buf *t, const shexec_run *r)
{
    int sig = shexec_run_signal(r);
    if (sig && shexec_run_state(r) != SHEXEC_STATE_TIMED_OUT) {
        const char *name = sigabbrev_np(sig);
        shx_buf_printf(t, "signal: %d (SIG%s)\n", sig, name ? name : "?");
    }
    if (shexec_run_interrupted(r))
        shx_buf_puts(t, "interrupted: true (a SIGINT, Ctrl+C, reached the command)\n");
}

static void format_run(server *sv, const call *c, shx_buf *t, int *is_error)
{
    shexec_run *r = c->run;
    put_output(t, r);
    int state = shexec_run_state(r);
    int code = shexec_run_exit_code(r);
    if (state == SHEXEC_STATE_TIMED_OUT) {
        int printed = shexec_run_output_total(r, SHEXEC_STDOUT) ||
                      shexec_run_output_total(r, SHEXEC_STDERR);
        int action;
        if (shexec_run_deadline(r) == SHEXEC_DEADLINE_IDLE)
            shx_buf_printf(t, "timed_out: true (Command ended: no output for its idle timeout of "
                           "%u ms, after %llu ms",
                           shexec_session_idle_timeout_ms(sv->s, &action),
                           (unsigned long long)shexec_run_duration_ms(r));
        else
            shx_buf_printf(t, "timed_out: true (Command timed out after %u ms",
                           shexec_run_timeout_ms(r));
        shx_buf_printf(t, "; its process group was terminated, %s)\n",
                  printed ? "the output above is what it printed before"
                          : "it printed nothing before");
        code = -1;
    }
    shx_buf_printf(t, "exit_code: %d\n", code);
    put_ending(t, r);
    shx_buf_puts(t, "cwd: ");
    shx_buf_puts(t, shexec_session_cwd(sv->s));
    shx_buf_printf(t, "\nelapsed_ms: %llu\n", (unsigned long long)shexec_run_duration_ms(r));
    const char *left;
    int leftovers = shexec_run_leftovers(r, &left);
    if (left)
        shx_buf_printf(t, "leftover_task_id: %s (processes the command left running keep running as "
                     "this background task: read their output with task_output, stop them with "
                     "task_kill)\n",
                  left);
    else if (leftovers == SHEXEC_LEFTOVERS_KILLED)
        shx_buf_puts(t, "leftovers: killed (the command left processes running that could not be "
                   "kept as a background task: the task table was full or they could not be "
                   "tracked)\n");
    put_kept(t, r);
    const char *notice = shexec_run_notice(r);
    if (*notice)
        shx_buf_printf(t, "notice: %s\n", notice);
    put_cost(t, r);
    /* A command that ran and ended is a result, whatever its status: an exit
     * code, or a signal it got from elsewhere (kill, the OOM killer, its own
     * abort()) is what the command did, for the model to read. What the tool
     * could not finish is an error: a timeout (cancelled calls get no
     * result at all). --error-on-nonzero-exit makes every end other than
     * exit 0 an error, for hosts that want that rule. */
    *is_error = run_is_error(sv, r);
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

/* What the tool layer's "hint" says of a wait for input with no question. */
#define SILENT_QUESTION_HINT                                                                       \
    "It waits for input but printed no question: the program may print its question only on "    \
    "a terminal. Answer with task_write if you know what it asks, or stop it with task_kill and "  \
    "run it again with pty: true to see the question."

/* Whether a running command waits for input, in lines: with the prompt it
 * shows (its last line, unfinished, quoted so that its spaces show) and
 * whether the terminal echoes what is typed (a password prompt does not). */
static void put_input_wait(shx_buf *t, const shexec_run *r)
{
    const char *prompt;
    size_t len;
    int password;
    int waiting = shexec_run_input_wait(r, &prompt, &len, &password) == SHEXEC_INPUT_WAITING;
    shx_buf_printf(t, "waiting_for_input: %s\n", waiting ? "true" : "false");
    if (!waiting)
        return;
    shx_buf_puts(t, "prompt: ");
    (void)shx_json_put_string(t, prompt ? prompt : "", prompt ? len : 0);
    shx_buf_printf(t, "\npassword: %s\n", password ? "true" : "false");
    /* a pipe's program may ask only on a terminal: the model is told why
     * it sees no question, as the tool layer's "hint" tells it */
    if ((!prompt || !len) && shexec_run_pty(r) == SHEXEC_PTY_OFF)
        shx_buf_puts(t, "hint: " SILENT_QUESTION_HINT "\n");
}

/* A task's status and output as text: all output so far, or with new_only
 * what arrived since the previous read; a running task's wait for input.
 * `status` NULL: running or completed. Into `json` (NULL: not wanted) the
 * task tools' result object of the same output (shexec_tool_task_result():
 * shexec_tool_call() would read the new output a second time and, for
 * task_kill, wait for the task on its own). */
static void format_task(shexec_task *t, int new_only, const char *status,
                        const char *wait_reason, int quiet_asked, shx_buf *text, shx_buf *json)
{
    shexec_run *r = shexec_task_run(t);
    int done = shexec_run_state(r) > SHEXEC_STATE_RUNNING;
    const char *status_word = status ? status : done ? "completed" : "running";
    shx_buf_printf(text, "task_id: %s\nstatus: %s\n", shexec_task_id(t), status_word);
    if (done)
        shx_buf_printf(text, "exit_code: %d\nstate: %s%s\n", shexec_run_exit_code(r),
                  state_word(shexec_run_state(r)),
                  shexec_run_deadline(r) == SHEXEC_DEADLINE_IDLE
                      ? " (ended: no output for its idle timeout)" : "");
    put_ending(text, r);
    /* read once, for both forms: a read of the new output marks it read */
    size_t olen, elen;
    const char *out = new_only ? shexec_task_read(t, SHEXEC_STDOUT, &olen)
                               : shexec_run_output(r, SHEXEC_STDOUT, &olen);
    const char *err = new_only ? shexec_task_read(t, SHEXEC_STDERR, &elen)
                               : shexec_run_output(r, SHEXEC_STDERR, &elen);
    put_section(text, "stdout", out, olen);
    put_section(text, "stderr", err, elen);
    if (!olen && !elen)
        shx_buf_puts(text, "(no output)\n");
    if (!done && !status) /* a cancelled one waits for nothing any more */
        put_input_wait(text, r);
    /* only where it says more than the status and the wait for input do
     * (as the tool layer's): whether a watch for quiet ended in quiet or
     * at its time */
    if (wait_reason && quiet_asked)
        shx_buf_printf(text, "wait_reason: %s\n", wait_reason);
    put_kept(text, r);
    if (!json)
        return;
    /* the object the task tools give, of the output read here (a new-only
     * read passed as it came is counted as its chunk); the wait was the
     * server's, so its reason is added at the end, as the tool layer's
     * wait_reason */
    char *obj = NULL;
    if (shexec_tool_task_result(&obj, t, status, out, olen, err, elen) == SHEXEC_OK) {
        size_t n = strlen(obj);
        if (wait_reason && quiet_asked && n && obj[n - 1] == '}') {
            shx_buf_append(json, obj, n - 1);
            shx_buf_printf(json, ",\"wait_reason\":\"%s\"}", wait_reason);
        } else {
            shx_buf_puts(json, obj);
        }
    }
    shexec_free(obj);
}

/* A foreground command answered while it still runs (shexec_run_yielded():
 * why, and the task it goes on as): its output so far and how to go on. */
static void format_yielded(server *sv, const call *c, int why, const char *task_id, shx_buf *t)
{
    shexec_run *r = c->run;
    int action;
    shx_buf_printf(t, "task_id: %s\nstatus: running\nyield_reason: ", task_id);
    switch (why) {
    case SHEXEC_YIELD_TIME:
        shx_buf_puts(t, "yield_time (its yield_time_ms passed)\n");
        break;
    case SHEXEC_YIELD_INPUT:
        shx_buf_puts(t, "input (it waits for input)\n");
        break;
    case SHEXEC_YIELD_TIMEOUT:
        shx_buf_printf(t, "timeout (its timeout of %u ms passed: moved to the background instead "
                       "of being ended; it is ended %u ms after its start)\n",
                       shexec_run_timeout_ms(r), shexec_session_background_on_timeout(sv->s));
        break;
    default:
        shx_buf_printf(t, "idle_timeout (no output for %u ms: moved to the background)\n",
                       shexec_session_idle_timeout_ms(sv->s, &action));
        break;
    }
    put_output(t, r);
    put_input_wait(t, r);
    put_kept(t, r);
    shx_buf_printf(t, "elapsed_ms: %llu\n", (unsigned long long)shexec_run_duration_ms(r));
    if (shexec_run_input_wait(r, NULL, NULL, NULL) == SHEXEC_INPUT_WAITING && c->takes_input)
        shx_buf_puts(t, "The command waits for input and goes on as this background task: "
                        "answer it with task_write (end a line with \\n; close_stdin sends "
                        "end of input), stop it with task_kill.\n");
    else
        shx_buf_printf(t, "The command goes on as this background task: read what it prints "
                       "next with task_output (yield_time_ms waits for it to finish or ask for "
                       "input)%s, stop it with task_kill.\n",
                       c->takes_input ? ", give it input with task_write" : "");
}

/* ---- progress ------------------------------------------------------------ */

static void send_progress(server *sv, call *c, int final)
{
    int64_t now = now_ms();
    size_t n = c->pending.len;
    if (!final)
        n = complete_prefix(c->pending.data ? c->pending.data : "", n);
    if (sv->outq.len - sv->outq_off > OUTQ_SOFT_LIMIT) {
        c->pending.len = 0; /* the client is not reading: do not pile up more */
        return;
    }
    /* progress must increase: milliseconds since the call started */
    double progress = (double)(now - c->start_ms);
    if (progress <= c->last_progress)
        progress = c->last_progress + 1;
    c->last_progress = progress;
    shx_buf b = {0};
    shx_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{"
                  "\"progressToken\":%s,\"progress\":%.0f",
              c->token, progress);
    if (n) {
        shx_buf_puts(&b, ",\"message\":");
        (void)shx_json_put_string(&b, c->pending.data, n);
    }
    shx_buf_puts(&b, "}}");
    send_msg(sv, &b);
    shx_buf_free(&b);
    c->streamed += n;
    if (n && c->pending.data) /* nothing taken: nothing to move, maybe no buffer */
        memmove(c->pending.data, c->pending.data + n, c->pending.len - n);
    c->pending.len -= n;
    c->last_sent_ms = now;
    c->pending_since_ms = c->pending.len ? now : 0;
}

static void on_output(void *user, int stream, const char *data, size_t len)
{
    (void)stream; /* live output interleaves both streams, as a terminal would */
    call *c = user;
    if (!c->token || c->cancelled || c->budget_spent)
        return;
    if (c->streamed + c->pending.len + len > PROGRESS_BUDGET) {
        static const char note[] =
            "\n[live output stops here: the result of the call holds the output]\n";
        c->budget_spent = 1;
        shx_buf_puts(&c->pending, note);
    } else {
        shx_buf_append(&c->pending, data, len);
    }
    if (!c->pending_since_ms)
        c->pending_since_ms = now_ms();
}

/* Send what is due; returns ms until the next progress deadline (-1: none). */
static int progress_tick(server *sv)
{
    int64_t now = now_ms(), next = -1;
    for (call *c = sv->calls; c; c = c->next) {
        if (!c->token || c->cancelled)
            continue;
        int due = c->pending.len >= PROGRESS_FLUSH_BYTES ||
                  (c->pending.len && now - c->pending_since_ms >= PROGRESS_FLUSH_MS) ||
                  now - c->last_sent_ms >= PROGRESS_HEARTBEAT_MS;
        if (due && shexec_run_state(c->run) <= SHEXEC_STATE_RUNNING)
            send_progress(sv, c, 0);
        int64_t at = c->pending.len ? c->pending_since_ms + PROGRESS_FLUSH_MS
                                    : c->last_sent_ms + PROGRESS_HEARTBEAT_MS;
        int64_t wait = at > now ? at - now : 0;
        if (next < 0 || wait < next)
            next = wait;
    }
    return (int)next;
}

/* ---- calls ----------------------------------------------------------------- */

static void call_free(call *c)
{
    if (c->kind == CALL_BASH)
        shexec_run_free(c->run); /* a task's run goes with its task (a yielded one's too) */
    shx_buf_free(&c->pending);
    free(c->id);
    free(c->token);
    free(c);
}


/* 1 when a pending task_kill or waiting task tool still needs t: it must
 * not be freed yet. */
static int task_in_use(const server *sv, const shexec_task *t)
{
    for (const call *c = sv->calls; c; c = c->next)
        if (c->task == t)
            return 1;
    return 0;
}

/* ms until a waiting task tool's task has been quiet long enough (0: it
 * has; -1: not waited for): no output for quiet_ms, counted from the later
 * of its last output and the call, as shexec_task_watch() counts it. */
static int64_t quiet_left(const call *c, int64_t now)
{
    if (!c->quiet_ms)
        return -1;
    int64_t quiet = (int64_t)shexec_run_quiet_ms(c->run);
    if (quiet > now - c->start_ms)
        quiet = now - c->start_ms;
    return quiet >= c->quiet_ms ? 0 : c->quiet_ms - quiet;
}

/* 1 when call c is to be answered now (or, cancelled, dropped): its run
 * has ended; a bash command was moved to the background (its yield time
 * passed, it waits for input, or the session's background on timeout or
 * idle yield moved it: the loop round that did it has just ended); a
 * waiting task tool's task waits for input, or its time is up. */
static int call_due(const call *c, int64_t now)
{
    if (shexec_run_state(c->run) > SHEXEC_STATE_RUNNING)
        return 1;
    const char *task_id;
    switch (c->kind) {
    case CALL_BASH:
        return shexec_run_yielded(c->run, &task_id) != SHEXEC_YIELD_NONE;
    case CALL_WAIT:
        return c->cancelled || now >= c->until_ms ||
               shexec_run_input_wait(c->run, NULL, NULL, NULL) == SHEXEC_INPUT_WAITING ||
               quiet_left(c, now) == 0;
    default:
        return 0;
    }
}

/* ms until the first waiting task tool's time is up (-1: none waits). */
static int wait_tick(const server *sv)
{
    int64_t now = now_ms(), next = -1;
    for (const call *c = sv->calls; c; c = c->next) {
        if (c->kind != CALL_WAIT)
            continue;
        int64_t wait = c->until_ms > now ? c->until_ms - now : 0;
        int64_t quiet = quiet_left(c, now); /* output meanwhile only puts it off */
        if (quiet >= 0 && quiet < wait)
            wait = quiet;
        if (next < 0 || wait < next)
            next = wait;
    }
    return (int)next;
}

/* A task tool's answer: the task's status and output, as text and as the
 * result object (see format_task()). A task that has ended is data, however
 * it ended: never isError. */
static void send_task_result(server *sv, const char *id, shexec_task *t, int new_only,
                             const char *status, const char *wait_reason, int quiet_asked)
{
    shx_buf text = {0}, json = {0};
    format_task(t, new_only, status, wait_reason, quiet_asked, &text,
                sv->req.structured ? &json : NULL);
    send_tool_result(sv, id, &text, json.failed ? NULL : json.data, 0);
    shx_buf_free(&text);
    shx_buf_free(&json);
}

/* A foreground bash call's answer, its command finished or yielded: the
 * text, and the result object the tool layer renders for the run
 * (shexec_tool_result(), the same object its bash tool returns). A timeout
 * is isError and still a result object: it goes with the text. */
static void send_run_result(server *sv, const call *c, const shx_buf *text, int is_error)
{
    char *json = NULL;
    if (sv->req.structured && shexec_tool_result(&json, c->run) != SHEXEC_OK)
        log_msg("a result without structuredContent: %s", shexec_session_errmsg(sv->s));
    send_tool_result(sv, c->id, text, json, is_error);
    shexec_free(json);
}

/* Why a waiting task tool answers now, as the tool layer's wait_reason. */
static const char *wait_reason(const call *c, int64_t now)
{
    if (shexec_run_state(c->run) > SHEXEC_STATE_RUNNING)
        return "ended";
    if (shexec_run_input_wait(c->run, NULL, NULL, NULL) == SHEXEC_INPUT_WAITING)
        return "input";
    return quiet_left(c, now) == 0 ? "quiet" : "time";
}

/* Answer every call that is due, in the order they come due. */
static void finish_calls(server *sv)
{
    int64_t now = now_ms();
    for (call **pc = &sv->calls; *pc;) {
        call *c = *pc;
        if (!call_due(c, now)) {
            pc = &c->next;
            continue;
        }
        *pc = c->next;
        sv->req = c->era; /* the reply is written for its request's client */
        const char *task_id;
        int why = c->kind == CALL_BASH ? shexec_run_yielded(c->run, &task_id) : SHEXEC_YIELD_NONE;
        if (c->kind != CALL_BASH) {
            /* task_kill: the task it stopped has ended, its final output
             * once; task_output / task_write: the task's status now. A
             * second call on the task still waiting answers next, and the
             * last one frees a task that has ended. */
            if (!c->cancelled)
                send_task_result(sv, c->id, c->task, c->new_only,
                                 c->kind == CALL_KILL ? "killed" : NULL,
                                 c->kind == CALL_WAIT ? wait_reason(c, now) : NULL,
                                 c->quiet_ms > 0);
            /* (a cancelled wait leaves an ended task for a later read) */
            if (shexec_run_state(c->run) > SHEXEC_STATE_RUNNING && !task_in_use(sv, c->task) &&
                (!c->cancelled || c->kind == CALL_KILL))
                shexec_task_free(c->task);
        } else if (why != SHEXEC_YIELD_NONE) {
            /* still running, as a task of the session now: what it printed
             * so far; the model goes on with the task tools. Its output no
             * longer streams to this call. */
            shexec_run_set_output_fn(c->run, NULL, NULL);
            if (!c->cancelled) {
                if (c->token && c->pending.len)
                    send_progress(sv, c, 1);
                shexec_task *t = NULL;
                if (!c->era.tasks) {
                    shx_buf text = {0};
                    format_yielded(sv, c, why, task_id, &text);
                    send_run_result(sv, c, &text, 0);
                    shx_buf_free(&text);
                } else if (shexec_session_take_task(&t, sv->s, task_id) == SHEXEC_OK) {
                    /* a client of the Tasks extension drives it with tasks/get */
                    answer_as_task(sv, c->id, t, c->takes_input);
                } else {
                    send_tool_error(sv, c->id, shexec_session_errmsg(sv->s));
                }
            }
        } else if (!c->cancelled) {
            if (c->token && c->pending.len)
                send_progress(sv, c, 1); /* progress always precedes the result */
            shx_buf t = {0};
            int is_error;
            format_run(sv, c, &t, &is_error);
            send_run_result(sv, c, &t, is_error);
            shx_buf_free(&t);
        }
        call_free(c);
    }
}

/* A pending call for request `id`, not yet linked in; NULL (and answered)
 * when out of memory. */
static call *call_new(server *sv, const char *id, const shx_json *token)
{
    call *c = calloc(1, sizeof *c);
    if (!c || !(c->id = strdup(id)) || (token && !(c->token = json_text(token)))) {
        if (c) {
            free(c->id);
            free(c);
        }
        send_error(sv, id, -32603, "out of memory");
        return NULL;
    }
    c->start_ms = c->last_sent_ms = now_ms();
    c->era = sv->req;
    return c;
}

/* The library checks the arguments (shexec_tool_prepare(): the same rules and
 * messages as its own bash tool); the server starts the run and streams it. */
static void tool_bash(server *sv, const char *id, const shx_json *args, const shx_json *token)
{
    char *args_json = args ? json_text(args) : NULL;
    if (args && !args_json) {
        send_error(sv, id, -32603, "out of memory");
        return;
    }
    shexec_run *run = NULL;
    int background = 0;
    int rc = shexec_tool_prepare(&run, &background, sv->s, "bash", args_json);
    free(args_json);
    if (rc != SHEXEC_OK) {
        send_tool_error(sv, id, shexec_session_errmsg(sv->s));
        return;
    }
    /* with yield_time_ms the library gave it a stdin pipe; pty, a terminal */
    const shx_json *pty = shx_json_get(args, "pty");
    int takes_input = shx_json_get(args, "yield_time_ms") || (pty && pty->boolean);
    char msg[1200];
    if (background) {
        /* a model that gave no timeout gets the server's limit, if any
         * (the arguments were checked: a "timeout" member is the model's) */
        if (sv->task_timeout_ms && !shx_json_get(args, "timeout"))
            rc = shexec_run_set_timeout_ms(run, sv->task_timeout_ms);
        /* --idle-timeout is for foreground commands: a server or a watcher
         * in the background may well be silent for long */
        if (rc == SHEXEC_OK)
            rc = shexec_run_set_idle_timeout_ms(run, 0, SHEXEC_IDLE_END);
        shexec_task *t = NULL;
        if (rc == SHEXEC_OK)
            rc = shexec_run_start_task(&t, run);
        if (rc != SHEXEC_OK) {
            /* the model can free a slot itself: tell it how */
            snprintf(msg, sizeof msg, "%s%s", shexec_session_errmsg(sv->s),
                     rc == SHEXEC_ELIMIT ? ": read finished tasks with task_output, or stop one "
                                           "with task_kill, to make room"
                                         : "");
            shexec_run_free(run); /* not started: still ours */
            send_tool_error(sv, id, msg);
            return;
        }
        if (sv->req.tasks) { /* the client drives it with tasks/get */
            answer_as_task(sv, id, t, takes_input);
            return;
        }
        /* the task is ours (host-held) until task_output reads it to the
         * end, task_kill stops it, or the session ends */
        shx_buf text = {0}, json = {0};
        shx_buf_printf(&text, "task_id: %s\nstatus: running\nThe command runs in the background: read "
                         "its output with task_output, stop it with task_kill.\n",
                  shexec_task_id(t));
        /* the tool layer's object for a command started in the background */
        shx_buf_puts(&json, "{\"task_id\":");
        (void)shx_json_put_string(&json, shexec_task_id(t), strlen(shexec_task_id(t)));
        shx_buf_puts(&json, ",\"status\":\"running\"}");
        send_tool_result(sv, id, &text, json.failed ? NULL : json.data, 0);
        shx_buf_free(&text);
        shx_buf_free(&json);
        return;
    }

    call *c = call_new(sv, id, token);
    if (!c) {
        shexec_run_free(run);
        return;
    }
    c->kind = CALL_BASH;
    c->run = run;
    c->takes_input = takes_input;
    rc = shexec_run_set_output_fn(run, on_output, c);
    if (rc == SHEXEC_OK)
        rc = shexec_run_start(run);
    if (rc != SHEXEC_OK) {
        snprintf(msg, sizeof msg, "%s", shexec_session_errmsg(sv->s));
        call_free(c);
        send_tool_error(sv, id, msg);
        return;
    }
    c->next = sv->calls;
    sv->calls = c;
}

/* The arguments a task tool may take besides task_id, in the order the
 * schemas list them (a tool takes those whose TAKES_ bit it gives), and
 * their values once checked. */
enum {
    ARG_NEW_ONLY, ARG_INPUT, ARG_CLOSE_STDIN, ARG_YIELD, ARG_SIGNAL, ARG_QUIET, TASK_ARGS,
    ARG_TASK_ID, ARG_UNKNOWN
};
enum {
    TAKES_NEW_ONLY = 1u << ARG_NEW_ONLY,
    TAKES_INPUT = 1u << ARG_INPUT,
    TAKES_CLOSE_STDIN = 1u << ARG_CLOSE_STDIN,
    TAKES_YIELD = 1u << ARG_YIELD,
    TAKES_SIGNAL = 1u << ARG_SIGNAL,
    TAKES_QUIET = 1u << ARG_QUIET
};
static const char *const task_arg_names[TASK_ARGS] = {"new_only", "input", "close_stdin",
                                                      "yield_time_ms", "signal", "quiet_ms"};

typedef struct {
    const char *task_id;
    int new_only;
    const char *input; /* NULL: none; may hold NUL (written as it is) */
    size_t input_len;
    int close_stdin;
    int64_t yield_ms;  /* as given, cut to TASK_WAIT_MAX_MS; -1: not given */
    int signal;        /* task_kill's signal (shexec_signal_from_name()); 0: not given */
    const char *signal_name; /* as given */
    int64_t quiet_ms;  /* as given, cut to TASK_WAIT_MAX_MS; 0: not given */
} task_args;

/* The arguments of task_output ({task_id, new_only, yield_time_ms,
 * quiet_ms}), task_kill ({task_id, signal}) or task_write ({task_id, input,
 * close_stdin, yield_time_ms, quiet_ms}), checked as their schemas say (a
 * signal by its name, as the library's task_kill reads it); a message in
 * err otherwise. */
static int parse_task_args(const shx_json *args, unsigned takes, task_args *a, shx_buf *err)
{
    memset(a, 0, sizeof *a);
    a->yield_ms = -1;
    size_t dup_len;
    const char *dup = shx_json_duplicate_key(args, 0, &dup_len);
    if (dup) {
        shx_buf_puts(err, "argument ");
        put_name(err, dup, dup_len);
        shx_buf_puts(err, " given twice");
        return -1;
    }
    for (size_t i = 0; args && i < args->count; i++) {
        const shx_json *v = args->items[i];
        const shx_json_str *key = &args->keys[i];
        int arg = ARG_UNKNOWN;
        /* compared with the key's full length: "task_id\u0000x" is unknown */
        if (key->len == 7 && memcmp(key->str, "task_id", 7) == 0)
            arg = ARG_TASK_ID;
        for (int k = 0; arg == ARG_UNKNOWN && k < TASK_ARGS; k++)
            if ((takes & (1u << k)) && key->len == strlen(task_arg_names[k]) &&
                memcmp(key->str, task_arg_names[k], key->len) == 0)
                arg = k;
        if (arg == ARG_UNKNOWN) {
            shx_buf_puts(err, "unknown argument ");
            put_name(err, key->str, key->len);
            shx_buf_puts(err, " (the arguments are: task_id");
            for (int k = 0; k < TASK_ARGS; k++)
                if (takes & (1u << k))
                    shx_buf_printf(err, ", %s", task_arg_names[k]);
            shx_buf_puts(err, ")");
            return -1;
        }
        if (arg == ARG_TASK_ID) {
            if (v->type != SHX_JSON_STRING) {
                shx_buf_puts(err, "argument \"task_id\" must be a string");
                return -1;
            }
            if (memchr(v->str, '\0', v->len)) {
                shx_buf_puts(err, "argument \"task_id\" contains a NUL character");
                return -1;
            }
            a->task_id = v->str;
        } else if (arg == ARG_INPUT) {
            if (v->type != SHX_JSON_STRING) {
                shx_buf_puts(err, "argument \"input\" must be a string");
                return -1;
            }
            a->input = v->str;
            a->input_len = v->len;
        } else if (arg == ARG_YIELD) {
            int64_t ms;
            if (v->type != SHX_JSON_NUMBER || shx_json_int64(v, &ms) != 0 || ms < 0) {
                shx_buf_puts(err, "argument \"yield_time_ms\" must be a whole number of "
                                  "milliseconds >= 0");
                return -1;
            }
            a->yield_ms = ms > TASK_WAIT_MAX_MS ? TASK_WAIT_MAX_MS : ms; /* cut, as the library */
        } else if (arg == ARG_SIGNAL) {
            if (v->type != SHX_JSON_STRING) {
                shx_buf_puts(err, "argument \"signal\" must be a string");
                return -1;
            }
            /* a name with NUL inside names no signal */
            a->signal = memchr(v->str, '\0', v->len) ? SHEXEC_EINVAL
                                                     : shexec_signal_from_name(v->str);
            if (a->signal < 0) {
                shx_buf_puts(err, "unknown signal ");
                put_name(err, v->str, v->len);
                shx_buf_puts(err, ": task_kill takes SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGKILL, "
                                  "SIGUSR1, SIGUSR2, SIGSTOP or SIGCONT (or the name without "
                                  "SIG)");
                return -1;
            }
            a->signal_name = v->str;
        } else if (arg == ARG_QUIET) {
            int64_t ms;
            if (v->type != SHX_JSON_NUMBER || shx_json_int64(v, &ms) != 0 || ms < 1) {
                shx_buf_puts(err, "argument \"quiet_ms\" must be a whole number of "
                                  "milliseconds >= 1");
                return -1;
            }
            a->quiet_ms = ms > TASK_WAIT_MAX_MS ? TASK_WAIT_MAX_MS : ms;
        } else {
            if (v->type != SHX_JSON_BOOL) {
                shx_buf_printf(err, "argument \"%s\" must be a boolean", task_arg_names[arg]);
                return -1;
            }
            *(arg == ARG_NEW_ONLY ? &a->new_only : &a->close_stdin) = v->boolean;
        }
    }
    if (!a->task_id) {
        shx_buf_puts(err, "missing required argument \"task_id\"");
        return -1;
    }
    return 0;
}

/* The task a task tool names, or NULL with the error sent. Looking it up
 * makes it ours (never released for room): it is freed once reported done. */
static shexec_task *find_task(server *sv, const char *id, const char *task_id)
{
    /* an MCP task is the client's to drive (tasks/get): a task tool that
     * read it to its end would free it under its record */
    if (is_mtask(sv, task_id)) {
        shx_buf msg = {0};
        shx_buf_printf(&msg, "Task %.64s is an MCP task of the client: it is read with "
                       "tasks/get and ended with tasks/cancel, not with the task tools",
                       task_id);
        send_tool_error_buf(sv, id, &msg, "Task not found");
        shx_buf_free(&msg);
        return NULL;
    }
    shexec_task *t = NULL;
    int rc = shexec_session_take_task(&t, sv->s, task_id);
    if (rc == SHEXEC_OK)
        return t;
    shx_buf m = {0};
    if (rc == SHEXEC_ENOTASK && strstr(shexec_session_errmsg(sv->s), "released unread"))
        /* leftovers nobody looked up make room for new tasks once finished */
        shx_buf_printf(&m, "Task %.64s finished and was released unread (retention limit: the "
                      "session keeps at most %u tasks; read finished tasks with task_output)",
                  task_id, SHEXEC_DEFAULT_MAX_TASKS);
    else if (rc == SHEXEC_ENOTASK)
        shx_buf_printf(&m, "Task not found: %.64s", task_id);
    else
        shx_buf_puts(&m, shexec_session_errmsg(sv->s));
    send_tool_error_buf(sv, id, &m, "Task not found");
    shx_buf_free(&m);
    return NULL;
}

/* The task a task tool names, its arguments checked (those it takes:
 * TAKES_*); NULL once the error has been answered. */
static shexec_task *task_of_call(server *sv, const char *id, const shx_json *args,
                                 unsigned takes, task_args *a)
{
    shx_buf err = {0};
    if (parse_task_args(args, takes, a, &err) != 0) {
        send_tool_error_buf(sv, id, &err, "invalid arguments");
        shx_buf_free(&err);
        return NULL;
    }
    return find_task(sv, id, a->task_id);
}

/* The task's status and output now, or, with wait_ms, once it has ended,
 * waits for input, has printed nothing for quiet_ms (0: not waited for),
 * or wait_ms has passed (a pending call: the loop keeps serving
 * meanwhile); a finished task is reported once, then freed. */
static void report_task(server *sv, const char *id, shexec_task *t, int new_only,
                        int64_t wait_ms, int64_t quiet_ms)
{
    /* take in what has already arrived (no done callbacks: t stays valid) */
    shexec_session_wait(sv->s, 0);
    shexec_run *r = shexec_task_run(t);
    if (wait_ms > 0 && shexec_run_state(r) <= SHEXEC_STATE_RUNNING &&
        shexec_run_input_wait(r, NULL, NULL, NULL) != SHEXEC_INPUT_WAITING) {
        call *c = call_new(sv, id, NULL);
        if (!c)
            return;
        c->kind = CALL_WAIT;
        c->task = t;
        c->run = r;
        c->new_only = new_only;
        c->until_ms = c->start_ms + wait_ms;
        c->quiet_ms = quiet_ms;
        c->next = sv->calls;
        sv->calls = c;
        return;
    }
    /* answered at once: a wait asked for ended before it began */
    const char *why = NULL;
    if (wait_ms > 0 || quiet_ms > 0)
        why = shexec_run_state(r) > SHEXEC_STATE_RUNNING ? "ended"
              : shexec_run_input_wait(r, NULL, NULL, NULL) == SHEXEC_INPUT_WAITING ? "input"
                                                                                 : "time";
    send_task_result(sv, id, t, new_only, NULL, why, quiet_ms > 0);
    /* a task a pending call waits on is freed by the last of them */
    if (shexec_run_state(r) > SHEXEC_STATE_RUNNING && !task_in_use(sv, t))
        shexec_task_free(t);
}

/* task_output: the task's status and output, at once or after a wait
 * (yield_time_ms, default 0; with quiet_ms, TASK_WAIT_MAX_MS). */
static void tool_task_output(server *sv, const char *id, const shx_json *args)
{
    task_args a;
    shexec_task *t = task_of_call(sv, id, args, TAKES_NEW_ONLY | TAKES_YIELD | TAKES_QUIET, &a);
    if (t)
        report_task(sv, id, t, a.new_only,
                    a.yield_ms >= 0 ? a.yield_ms : a.quiet_ms ? TASK_WAIT_MAX_MS : 0, a.quiet_ms);
}

/* task_write: the input written to the task's stdin (a pipe, or its
 * terminal: a command started with yield_time_ms or pty), stdin closed
 * with close_stdin, then what it printed since the last read, after a wait
 * as task_output's (yield_time_ms, default 1000). */
static void tool_task_write(server *sv, const char *id, const shx_json *args)
{
    task_args a;
    shexec_task *t = task_of_call(sv, id, args,
                                  TAKES_INPUT | TAKES_CLOSE_STDIN | TAKES_YIELD | TAKES_QUIET, &a);
    if (!t)
        return;
    shexec_run *r = shexec_task_run(t);
    shx_buf m = {0};
    int rc = SHEXEC_OK;
    shexec_session_wait(sv->s, 0); /* one that has just ended is seen as ended */
    if (shexec_run_state(r) > SHEXEC_STATE_RUNNING) {
        shx_buf_printf(&m, "Task %s has finished: it takes no input (read its output with "
                       "task_output)", shexec_task_id(t));
    } else {
        /* the model's input is held to the bound even into an empty queue */
        if (a.input_len > shexec_session_input_queue_max(sv->s))
            rc = SHEXEC_ELIMIT;
        else if (a.input_len) /* typed: ^C on a pipe is an interrupt, as at a terminal */
            rc = shexec_run_type_input(r, a.input, a.input_len);
        if (rc == SHEXEC_ELIMIT && a.input_len > shexec_session_input_queue_max(sv->s))
            shx_buf_printf(&m, "Task %s: the input was not written: %zu bytes are more than "
                           "the bound of %llu bytes on unread input (send it in parts)",
                           shexec_task_id(t), a.input_len,
                           (unsigned long long)shexec_session_input_queue_max(sv->s));
        else
        if (rc == SHEXEC_ELIMIT) /* refused whole, stdin left open: it may come again */
            shx_buf_printf(&m, "Task %s: the input was not written: %s; read its output with "
                           "task_output meanwhile", shexec_task_id(t),
                           shexec_session_errmsg(sv->s));
        else if (rc == SHEXEC_ESTATE) /* its ^C found none of its processes */
            shx_buf_printf(&m, "Task %s: %s (read its output with task_output)",
                           shexec_task_id(t), shexec_session_errmsg(sv->s));
        else if (rc == SHEXEC_OK && a.close_stdin)
            rc = shexec_run_close_stdin(r);
        if (rc != SHEXEC_OK && rc != SHEXEC_ELIMIT && rc != SHEXEC_ESTATE)
            shx_buf_printf(&m, "Task %s takes no input: %s (a command gets input when started "
                           "with yield_time_ms or pty)", shexec_task_id(t),
                           shexec_session_errmsg(sv->s));
    }
    if (m.len || m.failed) {
        send_tool_error_buf(sv, id, &m, "the task takes no input");
        shx_buf_free(&m);
        return;
    }
    report_task(sv, id, t, 1,
                a.yield_ms >= 0 ? a.yield_ms : a.quiet_ms ? TASK_WAIT_MAX_MS : TASK_WRITE_WAIT_MS,
                a.quiet_ms);
}

/* task_kill with a signal: only that signal is sent (no grace, no
 * SIGKILL), then what the task printed since the last read, after a wait
 * as task_write's; a finished task is sent nothing and stays to be read. */
static void signal_task(server *sv, const char *id, shexec_task *t, const task_args *a)
{
    shexec_run *r = shexec_task_run(t);
    shexec_session_wait(sv->s, 0); /* one that has just ended is seen as ended */
    int rc = shexec_run_state(r) > SHEXEC_STATE_RUNNING ? SHEXEC_ESTATE
                                                         : shexec_run_send_signal(r, a->signal);
    if (rc != SHEXEC_OK) {
        shx_buf m = {0};
        shx_buf_printf(&m, "Task %s: no %.32s was sent: %s (read its output with task_output)",
                       shexec_task_id(t), a->signal_name,
                       shexec_run_state(r) > SHEXEC_STATE_RUNNING ? "it has finished"
                                                               : shexec_session_errmsg(sv->s));
        send_tool_error_buf(sv, id, &m, "no signal was sent");
        shx_buf_free(&m);
        return;
    }
    report_task(sv, id, t, 1, TASK_WRITE_WAIT_MS, 0);
}

/* task_kill: SIGTERM to the task's group now, SIGKILL after the grace; the
 * answer waits (as a pending call) for the task to end, while the loop
 * keeps serving. A task that had already finished is reported at once.
 * With a signal: signal_task(). */
static void tool_task_kill(server *sv, const char *id, const shx_json *args)
{
    task_args a;
    shexec_task *t = task_of_call(sv, id, args, TAKES_SIGNAL, &a);
    if (!t)
        return;
    if (a.signal) {
        signal_task(sv, id, t, &a);
        return;
    }
    if (shexec_run_state(shexec_task_run(t)) > SHEXEC_STATE_RUNNING && !task_in_use(sv, t)) {
        send_task_result(sv, id, t, 0, "completed", NULL, 0);
        shexec_task_free(t);
        return;
    }
    call *c = call_new(sv, id, NULL);
    if (!c)
        return;
    c->kind = CALL_KILL;
    c->task = t;
    c->run = shexec_task_run(t);
    c->next = sv->calls;
    sv->calls = c;
    shexec_run_cancel(shexec_task_run(t));
}

/* ---- MCP tasks (the Tasks extension of 2026-07-28) ------------------------------ */

/* A command answered as an MCP task: started with run_in_background, or a
 * foreground command that yielded, for a client that declared the Tasks
 * extension. The client polls it with tasks/get, answers its input
 * requests (the command waits for input) with tasks/update, and ends it
 * with tasks/cancel. Its library task is ours until the command ends; its
 * final result is then kept as JSON text, for the last TASKS_KEPT_DONE
 * tasks that ended. */
typedef struct mtask mtask;
struct mtask {
    mtask *next;
    char id[40];          /* the library task's id ("t" and 12 hex digits) */
    shexec_task *task;    /* NULL once ended: `result` holds what it gave */
    int takes_input;      /* its stdin is a pipe or a terminal */
    int cancel_asked;     /* tasks/cancel ended it: its status is cancelled */
    unsigned inputs;      /* input requests answered: the open one is "stdin-<inputs+1>" */
    char status[16];      /* as last reported (a change moves lastUpdatedAt) */
    char created[32], updated[32];
    char *result;         /* once ended: the CallToolResult object */
    char *summary;        /* once ended: its statusMessage */
};

/* 1 when task_id names one of the MCP tasks. */
static int is_mtask(const server *sv, const char *task_id)
{
    for (const mtask *m = sv->tasks; m; m = m->next)
        if (strcmp(m->id, task_id) == 0)
            return 1;
    return 0;
}

/* Now as ISO 8601 in UTC, to the millisecond. */
static void iso_now(char out[32])
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 32 - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

static const char *mtask_status(const mtask *m)
{
    if (m->cancel_asked)
        return "cancelled";
    if (!m->task)
        return "completed";
    shexec_run *r = shexec_task_run(m->task);
    if (m->takes_input && shexec_run_input_wait(r, NULL, NULL, NULL) == SHEXEC_INPUT_WAITING)
        return "input_required";
    return "working";
}

static unsigned char ascii_lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

/* 1 when the n bytes of s name a secret (ASCII, any case). */
static int names_secret(const char *s, size_t n)
{
    static const char *const words[] = {"password", "passphrase", "passcode", "secret",
                                        "token",    "api key",    "api_key",  "apikey"};
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        size_t k = strlen(words[w]);
        for (size_t i = 0; i + k <= n; i++) {
            size_t j = 0;
            while (j < k && ascii_lower((unsigned char)s[i + j]) == (unsigned char)words[w][j])
                j++;
            if (j == k)
                return 1;
        }
    }
    return 0;
}

/*
 * 1 when the task's command waits for a password or another secret: the
 * terminal does not echo (the library's judgement), or the prompt names
 * one. The prompt is needed as well, since the bash tool's terminal never
 * echoes: a reader that turns off only echo (sudo, ssh) changes nothing
 * the library can see there, and a pipe has no echo at all. MCP 2026-07-28
 * forbids a server to ask for such a thing with a form, and its URL mode
 * would need a page this stdio server does not serve: such a wait is
 * input_required with no input request, and its status message says what
 * the command asks for.
 */
static int mtask_wants_secret(const mtask *m)
{
    const char *prompt = NULL;
    size_t len = 0;
    int echo_off = 0;
    return m->task && m->takes_input &&
           shexec_run_input_wait(shexec_task_run(m->task), &prompt, &len, &echo_off) ==
               SHEXEC_INPUT_WAITING &&
           (echo_off || (prompt && names_secret(prompt, len)));
}

/* The command ended: its result as the bash tool's final answer would
 * be (the task tools' form: it no longer changes the session's cwd), kept
 * as text; its library task is freed. */
static void mtask_finish(server *sv, mtask *m)
{
    shexec_run *r = shexec_task_run(m->task);
    shx_buf text = {0}, json = {0}, result = {0}, summary = {0};
    era saved = sv->req;
    sv->req.structured = 1; /* a client of tasks is of 2026-07-28 */
    format_task(m->task, 0, NULL, NULL, 0, &text, &json);
    shx_buf_puts(&result, "{\"resultType\":\"complete\","); /* a whole result of the era */
    put_tool_result_members(sv, &result, &text, json.failed ? NULL : json.data,
                            run_is_error(sv, r));
    shx_buf_puts(&result, "}");
    sv->req = saved;
    switch (shexec_run_state(r)) {
    case SHEXEC_STATE_EXITED:
        shx_buf_printf(&summary, "exited with code %d", shexec_run_exit_code(r));
        break;
    case SHEXEC_STATE_SIGNALED:
        shx_buf_printf(&summary, "ended by signal %d", shexec_run_signal(r));
        break;
    default:
        shx_buf_printf(&summary, "ended: %s", state_word(shexec_run_state(r)));
        break;
    }
    m->result = result.failed ? NULL : shx_buf_steal(&result, NULL);
    m->summary = summary.failed ? NULL : shx_buf_steal(&summary, NULL);
    shx_buf_free(&result);
    shx_buf_free(&summary);
    shx_buf_free(&text);
    shx_buf_free(&json);
    shexec_task_free(m->task);
    m->task = NULL;
}

static void mtask_free(mtask *m)
{
    shexec_task_free(m->task); /* a running one is ended */
    free(m->result);
    free(m->summary);
    free(m);
}

/* The status as it is now; a change moves lastUpdatedAt. */
static void mtask_refresh(mtask *m)
{
    const char *status = mtask_status(m);
    if (strcmp(status, m->status) != 0) {
        snprintf(m->status, sizeof m->status, "%s", status);
        iso_now(m->updated);
    }
}

/* Each loop round: a task whose command ended is finished, its status
 * refreshed, and of the ended tasks only the last TASKS_KEPT_DONE are kept
 * (the list is newest first). */
static void mtasks_tick(server *sv)
{
    unsigned done = 0;
    for (mtask **pm = &sv->tasks; *pm;) {
        mtask *m = *pm;
        if (m->task && shexec_run_state(shexec_task_run(m->task)) > SHEXEC_STATE_RUNNING)
            mtask_finish(sv, m);
        mtask_refresh(m);
        if (!m->task && ++done > TASKS_KEPT_DONE) {
            *pm = m->next;
            mtask_free(m);
            continue;
        }
        pm = &m->next;
    }
}

/* The members every form of a task has. */
static void put_task_base(shx_buf *b, const mtask *m)
{
    shx_buf_puts(b, "\"taskId\":");
    (void)shx_json_put_string(b, m->id, strlen(m->id));
    shx_buf_printf(b, ",\"status\":\"%s\",\"createdAt\":\"%s\",\"lastUpdatedAt\":\"%s\","
                   "\"ttlMs\":null,\"pollIntervalMs\":%d",
                   m->status, m->created, m->updated, TASK_POLL_MS);
}

/* Answer tools/call with a task: t (ours now) runs on, driven by tasks/get. */
static void answer_as_task(server *sv, const char *id, shexec_task *t, int takes_input)
{
    mtask *m = calloc(1, sizeof *m);
    if (!m) {
        shexec_task_free(t);
        send_error(sv, id, -32603, "out of memory");
        return;
    }
    snprintf(m->id, sizeof m->id, "%s", shexec_task_id(t));
    m->task = t;
    m->takes_input = takes_input;
    mtask_refresh(m);
    memcpy(m->created, m->updated, sizeof m->created);
    m->next = sv->tasks;
    sv->tasks = m;
    shx_buf b = {0};
    shx_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":", id);
    put_result_open(sv, &b, "task", 1);
    put_task_base(&b, m);
    shx_buf_puts(&b, "}}");
    send_msg(sv, &b);
    shx_buf_free(&b);
}

/* The task params.taskId names, as it is now (what has arrived taken in,
 * the tasks ticked: before the lookup, since a tick may drop an ended
 * task); NULL with the error sent. */
static mtask *mtask_of(server *sv, const char *id, const shx_json *params)
{
    shexec_session_wait(sv->s, 0);
    mtasks_tick(sv);
    const shx_json *tid = shx_json_get(params, "taskId");
    if (!shx_json_is(tid, SHX_JSON_STRING)) {
        send_error(sv, id, RPC_INVALID_PARAMS, "params.taskId must be a string");
        return NULL;
    }
    for (mtask *m = sv->tasks; m; m = m->next)
        if (str_eq(tid, m->id))
            return m;
    shx_buf msg = {0};
    shx_buf_puts(&msg, "Task not found: ");
    put_name(&msg, tid->str, tid->len);
    send_error_buf(sv, id, RPC_INVALID_PARAMS, &msg, "Task not found");
    shx_buf_free(&msg);
    return NULL;
}

/* The input request of a task whose command waits for input: a form with
 * the line to type (a newline is added unless newline is false) and
 * whether to end the input after it. A prompt for a secret gets none (see
 * mtask_wants_secret). */
static void put_input_request(shx_buf *b, const mtask *m)
{
    const char *prompt;
    size_t len;
    shexec_run *r = shexec_task_run(m->task);
    if (mtask_wants_secret(m)) {
        shx_buf_puts(b, ",\"inputRequests\":{}");
        return;
    }
    if (shexec_run_input_wait(r, &prompt, &len, NULL) != SHEXEC_INPUT_WAITING) {
        prompt = "";
        len = 0;
    }
    shx_buf msg = {0};
    shx_buf_puts(&msg, "The command waits for input");
    if (len) {
        shx_buf_puts(&msg, ". Its prompt: ");
        shx_buf_append(&msg, prompt, len);
    }
    shx_buf_printf(b, ",\"inputRequests\":{\"stdin-%u\":{\"method\":\"elicitation/create\","
                   "\"params\":{\"mode\":\"form\",\"message\":", m->inputs + 1);
    (void)shx_json_put_string(b, msg.data ? msg.data : "", msg.len);
    if (msg.failed)
        b->failed = 1;
    shx_buf_free(&msg);
    shx_buf_puts(b, ",\"requestedSchema\":{\"type\":\"object\",\"properties\":{"
                    "\"input\":{\"type\":\"string\",\"title\":\"Input\",\"description\":\"What "
                    "to type at the command's prompt\"},"
                    "\"newline\":{\"type\":\"boolean\",\"description\":\"End it with a newline "
                    "(default true)\",\"default\":true},"
                    "\"end_of_input\":{\"type\":\"boolean\",\"description\":\"Then close the "
                    "command's input: it reads end of file (default false)\",\"default\":false}"
                    "},\"required\":[\"input\"]}}}}");
}

/* tasks/get: the task's status; while it runs its output so far as the
 * status message (the text a model reads), with its input request when it
 * waits for input; once ended, its result. */
static void method_tasks_get(server *sv, const char *id, const shx_json *params)
{
    mtask *m = mtask_of(sv, id, params);
    if (!m)
        return;
    shx_buf b = {0};
    shx_buf_puts(&b, "{");
    put_task_base(&b, m);
    if (m->task) {
        shx_buf text = {0};
        if (m->cancel_asked) {
            /* tasks/cancel answers before the command has ended: its
             * status is cancelled at once, and so is what it says */
            shx_buf_puts(&text, "Cancelled: the command is being ended (SIGTERM to its "
                                "processes, SIGKILL after the grace).\n");
        } else if (strcmp(m->status, "input_required") == 0 && mtask_wants_secret(m)) {
            /* what the client is not asked: said first, where a person or
             * a model reading the status sees it */
            const char *prompt;
            size_t len;
            (void)shexec_run_input_wait(shexec_task_run(m->task), &prompt, &len, NULL);
            shx_buf_puts(&text, "The command waits for a password or another secret at its "
                                "prompt ");
            (void)shx_json_put_string(&text, prompt ? prompt : "", prompt ? len : 0);
            shx_buf_puts(&text, ". MCP allows no form for one, so the client is not asked for "
                                "it: end the command with tasks/cancel.\n");
        }
        format_task(m->task, 0, m->cancel_asked ? "cancelled" : NULL, NULL, 0, &text, NULL);
        shx_buf_puts(&b, ",\"statusMessage\":");
        (void)shx_json_put_string(&b, text.data ? text.data : "", text.len);
        if (text.failed)
            b.failed = 1;
        shx_buf_free(&text);
        if (strcmp(m->status, "input_required") == 0)
            put_input_request(&b, m);
    } else {
        if (m->summary) {
            shx_buf_puts(&b, ",\"statusMessage\":");
            (void)shx_json_put_string(&b, m->summary, strlen(m->summary));
        }
        if (!m->cancel_asked) {
            shx_buf_puts(&b, ",\"result\":");
            shx_buf_puts(&b, m->result ? m->result
                                       : "{\"content\":[{\"type\":\"text\",\"text\":\"(the "
                                         "result was lost: out of memory)\"}],\"isError\":true}");
        }
    }
    shx_buf_puts(&b, "}");
    if (b.failed)
        send_error(sv, id, -32603, "out of memory");
    else
        send_result(sv, id, b.data);
    shx_buf_free(&b);
}

/* tasks/update: the answer to the open input request is typed at the
 * command (accept), or its input is closed (decline); cancel, and answers
 * to requests that are not open, change nothing. */
static void method_tasks_update(server *sv, const char *id, const shx_json *params)
{
    mtask *m = mtask_of(sv, id, params);
    if (!m)
        return;
    const shx_json *responses = shx_json_get(params, "inputResponses");
    if (!shx_json_is(responses, SHX_JSON_OBJECT)) {
        send_error(sv, id, RPC_INVALID_PARAMS, "params.inputResponses must be an object");
        return;
    }
    char key[32];
    snprintf(key, sizeof key, "stdin-%u", m->inputs + 1);
    const shx_json *answer = shx_json_get(responses, key);
    /* a prompt for a secret has no open request: nothing is typed at it */
    if (answer && m->task && strcmp(m->status, "input_required") == 0 &&
        !mtask_wants_secret(m)) {
        const shx_json *action = shx_json_get(answer, "action");
        const shx_json *content = shx_json_get(answer, "content");
        const shx_json *input = shx_json_get(content, "input");
        const shx_json *newline = shx_json_get(content, "newline");
        const shx_json *eof = shx_json_get(content, "end_of_input");
        if (!shx_json_is(action, SHX_JSON_STRING) ||
            (str_eq(action, "accept") && !shx_json_is(input, SHX_JSON_STRING)) ||
            (newline && !shx_json_is(newline, SHX_JSON_BOOL)) ||
            (eof && !shx_json_is(eof, SHX_JSON_BOOL))) {
            send_error(sv, id, RPC_INVALID_PARAMS,
                       "an input response is {\"action\":\"accept\",\"content\":{\"input\":"
                       "STRING, \"newline\":BOOL, \"end_of_input\":BOOL}}, or action decline "
                       "(close the command's input) or cancel");
            return;
        }
        shexec_run *r = shexec_task_run(m->task);
        int rc = SHEXEC_OK;
        if (str_eq(action, "accept")) {
            /* the line in one write: refused past the bound on queued
             * input (SHEXEC_ELIMIT), none of it is queued, and the request
             * stays open for the client to answer again */
            shx_buf line = {0};
            shx_buf_append(&line, input->str, input->len);
            if (!newline || newline->boolean)
                shx_buf_append(&line, "\n", 1);
            if (line.len > shexec_session_input_queue_max(sv->s)) {
                /* the model's answer is held to the bound even into an
                 * empty queue */
                shx_buf_free(&line);
                send_error(sv, id, -32602, "the answer is more than the bound on input a "
                                           "command has not read: send it in parts");
                return;
            }
            /* typed: ^C on a pipe is an interrupt, as at a terminal */
            rc = line.failed ? SHEXEC_ENOMEM : shexec_run_type_input(r, line.data, line.len);
            shx_buf_free(&line);
            if (rc == SHEXEC_OK && eof && eof->boolean)
                rc = shexec_run_close_stdin(r);
        } else if (str_eq(action, "decline")) {
            rc = shexec_run_close_stdin(r);
        }
        /* EPIPE, ESTATE: it has just ended */
        if (rc != SHEXEC_OK && rc != SHEXEC_EPIPE && rc != SHEXEC_ESTATE) {
            send_error(sv, id, -32603, shexec_session_errmsg(sv->s));
            return;
        }
        if (!str_eq(action, "cancel"))
            m->inputs++;
    }
    send_result(sv, id, "{}");
}

/* tasks/cancel: the command is ended (SIGTERM, the grace, SIGKILL); the
 * answer does not wait for that. Its status is cancelled from now on; one
 * that had already ended keeps its result. */
static void method_tasks_cancel(server *sv, const char *id, const shx_json *params)
{
    mtask *m = mtask_of(sv, id, params);
    if (!m)
        return;
    if (m->task && shexec_run_state(shexec_task_run(m->task)) <= SHEXEC_STATE_RUNNING) {
        shexec_run_cancel(shexec_task_run(m->task));
        m->cancel_asked = 1;
        mtask_refresh(m);
    }
    send_result(sv, id, "{}");
}

/* ---- methods ----------------------------------------------------------------- */

#define INSTRUCTIONS                                                                               \
    "A shell on this machine. `bash` runs a command and returns its output and exit code; the "    \
    "working directory persists between calls. Long or never-ending commands (servers, "          \
    "watchers) belong in the background (run_in_background), read with task_output, stopped "     \
    "with task_kill (or interrupted as with Ctrl+C: task_kill with signal SIGINT). With "          \
    "yield_time_ms a call returns after that long, or as soon as the command waits for input, "   \
    "with the output so far; the command goes on as a task, answered with task_write (set pty "   \
    "too for a program that asks questions: many ask only on a terminal). task_output with "      \
    "quiet_ms follows a task until it has printed nothing for that long."

static void method_initialize(server *sv, const char *id, const shx_json *params)
{
    const shx_json *pv = shx_json_get(params, "protocolVersion");
    const char *version = LATEST_PROTOCOL;
    for (size_t i = 0; i < sizeof protocols / sizeof *protocols; i++)
        if (str_eq(pv, protocols[i]))
            version = protocols[i];
    sv->legacy_structured = strcmp(version, STRUCTURED_OUTPUT_SINCE) >= 0;
    sv->req.structured = sv->legacy_structured;
    shx_buf b = {0};
    shx_buf_printf(&b,
              "{\"protocolVersion\":\"%s\",\"capabilities\":{\"tools\":{\"listChanged\":false}},"
              "\"serverInfo\":",
              version);
    put_server_info(&b);
    shx_buf_puts(&b, ",\"instructions\":");
    (void)shx_json_put_string(&b, INSTRUCTIONS, strlen(INSTRUCTIONS));
    shx_buf_puts(&b, "}");
    send_result(sv, id, b.failed ? "{}" : b.data);
    shx_buf_free(&b);
}

/* ---- output schemas ----------------------------------------------------------- */

/* What each tool's structuredContent holds: the tool layer's result object
 * as include/shexec_tool.h documents it. Lenient on purpose: no
 * additionalProperties:false (the library adds members over time) and no
 * enum (a client that validates, as the SDK clients do, would throw away a
 * result with a yield reason or state added later); the values a string
 * takes are in its description. `required` holds only what every result of
 * the tool has. Only keywords that draft-07 and 2020-12 read alike. */
#define SCHEMA_PROP(name, type, text) \
    "\"" name "\":{\"type\":\"" type "\",\"description\":\"" text "\"}"
#define SCHEMA_OBJECT(name, text, props) \
    "\"" name "\":{\"type\":\"object\",\"description\":\"" text "\",\"properties\":{" props "}}"

#define SCHEMA_TRUNCATED                                                                           \
    SCHEMA_OBJECT("truncated", "Which streams were cut at the output limit (the text then "        \
                  "holds a notice saying what was left out)",                                      \
                  SCHEMA_PROP("stdout", "boolean", "stdout was cut") ","                           \
                  SCHEMA_PROP("stderr", "boolean", "stderr was cut"))
/* (written out, not with SCHEMA_OBJECT: it goes inside one, and cppcheck's
 * preprocessor does not expand a macro inside its own argument) */
#define SCHEMA_OMITTED_STREAM(stream)                                                              \
    "\"" stream "\":{\"type\":\"object\",\"description\":\"What the limit left out of "            \
    stream "\",\"properties\":{"                                                                   \
    SCHEMA_PROP("characters", "integer", "Characters left out (a UTF-8 character or an "           \
                "invalid byte counts one)") ","                                                    \
    SCHEMA_PROP("bytes", "integer", "Bytes left out") "}}"
/* omitted, lines, full_output, redacted: each only when there is one */
#define SCHEMA_KEPT                                                                                \
    SCHEMA_OBJECT("omitted", "For each truncated stream, what its output limit left out",          \
                  SCHEMA_OMITTED_STREAM("stdout") "," SCHEMA_OMITTED_STREAM("stderr")) ","         \
    SCHEMA_OBJECT("lines", "For each truncated stream, how many lines it had in all",              \
                  SCHEMA_PROP("stdout", "integer", "Lines of stdout") ","                          \
                  SCHEMA_PROP("stderr", "integer", "Lines of stderr")) ","                         \
    SCHEMA_OBJECT("full_output", "For each stream cut at its limit whose whole text is kept "      \
                  "in a spill file, the file's path (read the parts needed with grep, sed -n, "    \
                  "head or tail)",                                                                 \
                  SCHEMA_PROP("stdout", "string", "The spill file of stdout") ","                  \
                  SCHEMA_PROP("stderr", "string", "The spill file of stderr")) ","                 \
    SCHEMA_PROP("redacted", "integer", "How many secrets were hidden from the output, each "       \
                "shown as [REDACTED:NAME]")
/* waiting_for_input of a running command; prompt and password while it waits */
#define SCHEMA_INPUT_WAIT                                                                          \
    SCHEMA_PROP("waiting_for_input", "boolean", "Whether the command waits for input now "         \
                "(answer it with task_write)") ","                                                 \
    SCHEMA_PROP("prompt", "string", "While it waits for input: its last line, unfinished") ","     \
    SCHEMA_PROP("password", "boolean", "While it waits for input: true when the terminal does "    \
                "not echo (a password prompt)") ","                                                \
    SCHEMA_PROP("hint", "string", "While it waits for input with no question shown on a pipe: "    \
                "why (the program may ask only on a terminal) and how to go on")

/* "interrupted", only when true */
#define SCHEMA_INTERRUPTED                                                                         \
    SCHEMA_PROP("interrupted", "boolean", "true once a SIGINT (Ctrl+C: task_kill's signal "        \
                "SIGINT, or \\\\u0003 typed with task_write) reached the command; how it "       \
                "ended is in state, exit_code and signal")

/* bash: the finished form, or the running form (run_in_background, or
 * answered while the command still runs); anyOf says which members each
 * form always has. */
static const char bash_output_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    SCHEMA_PROP("stdout", "string", "The command's standard output (with a notice where the "
                "output limit cut it); while it runs, its output so far") ","
    SCHEMA_PROP("stderr", "string", "Its standard error; after a timeout it ends with a line "
                "saying so") ","
    SCHEMA_PROP("exit_code", "integer", "Its exit status; -1 when it did not exit (a timeout, "
                "a signal)") ","
    SCHEMA_PROP("timed_out", "boolean", "true when its timeout or idle timeout ended it") ","
    SCHEMA_TRUNCATED ","
    SCHEMA_PROP("cwd", "string", "The working directory after the command (it persists "
                "between calls)") ","
    SCHEMA_PROP("signal", "integer", "The signal that ended the command, when one did (not "
                "after a timeout)") ","
    SCHEMA_INTERRUPTED ","
    SCHEMA_PROP("leftover_task_id", "string", "The background task that processes the "
                "command left running go on as (read it with task_output, stop it with "
                "task_kill)") ","
    SCHEMA_PROP("notice", "string", "What the library has to say about the run, e.g. a limit "
                "it hit or a working directory it did not adopt") ","
    SCHEMA_OBJECT("cost", "What the command cost",
                  SCHEMA_PROP("cpu_ms", "integer", "CPU time in ms (of every process of the "
                              "command where a cgroup counted it, else of the shell and what "
                              "it waited for)") ","
                  SCHEMA_PROP("peak_bytes", "integer", "Peak memory in bytes (0: not known)"))
    ","
    SCHEMA_KEPT ","
    SCHEMA_PROP("task_id", "string", "The background task the command runs as: started with "
                "run_in_background, or still running when the call returned") ","
    SCHEMA_PROP("status", "string", "running: the command goes on as the task task_id") ","
    SCHEMA_PROP("yield_reason", "string", "Why the call returned while the command runs: "
                "yield_time, input (it waits for input), timeout or idle_timeout (moved to "
                "the background)") ","
    SCHEMA_INPUT_WAIT ","
    SCHEMA_PROP("elapsed_ms", "integer", "How long the command ran (while it runs: so far), in "
                "ms")
    "},\"anyOf\":["
    "{\"description\":\"The command finished\",\"required\":[\"stdout\",\"stderr\","
    "\"exit_code\",\"timed_out\",\"truncated\",\"cwd\"]},"
    "{\"description\":\"The command goes on as a background task\",\"required\":"
    "[\"task_id\",\"status\"]}]}";

/* task_output, task_write and task_kill: one form, the status and the
 * output described as each tool gives them */
#define TASK_OUTPUT_SCHEMA(status_text, output_text)                                               \
    "{\"type\":\"object\",\"properties\":{"                                                        \
    SCHEMA_PROP("task_id", "string", "The task") ","                                               \
    SCHEMA_PROP("status", "string", status_text) ","                                               \
    SCHEMA_PROP("stdout", "string", output_text " standard output (with a notice where the "       \
                "output limit cut it)") ","                                                        \
    SCHEMA_PROP("stderr", "string", output_text " standard error") ","                             \
    SCHEMA_PROP("exit_code", "integer", "Once it ended: its exit status; -1 when it did not "      \
                "exit") ","                                                                        \
    SCHEMA_PROP("state", "string", "Once it ended, how: exited, signaled, timed_out, killed "      \
                "or cancelled") ","                                                                \
    SCHEMA_PROP("signal", "integer", "Once it ended: the signal that ended it, when one did "      \
                "(not after a timeout)") ","                                                       \
    SCHEMA_INTERRUPTED ","                                                                         \
    SCHEMA_TRUNCATED ","                                                                           \
    SCHEMA_INPUT_WAIT ","                                                                          \
    SCHEMA_PROP("wait_reason", "string", "With quiet_ms: why the call answered: ended, input, "    \
                "quiet (nothing printed for quiet_ms) or time (yield_time_ms passed)") ","          \
    SCHEMA_KEPT                                                                                    \
    "},\"required\":[\"task_id\",\"status\",\"stdout\",\"stderr\",\"truncated\"]}"

static const struct {
    const char *tool;
    const char *schema;
} output_schemas[] = {
    {"bash", bash_output_schema},
    {"task_output",
     TASK_OUTPUT_SCHEMA("running, or completed: the task ended and is removed (its final "
                        "output is returned once)", "Its")},
    {"task_write",
     TASK_OUTPUT_SCHEMA("running, or completed: the task ended and is removed (its final "
                        "output is returned once)", "What it printed since the last read on its")},
    {"task_kill",
     TASK_OUTPUT_SCHEMA("killed, or completed when it had already ended; the task is removed. "
                        "With signal: running (the task goes on) or completed (it ended and is "
                        "removed)", "Its final (with signal: what it printed since the last "
                        "read on its)")},
};

static const char *output_schema_of(const shx_json *name)
{
    for (size_t i = 0; i < sizeof output_schemas / sizeof *output_schemas; i++)
        if (str_eq(name, output_schemas[i].tool))
            return output_schemas[i].schema;
    return NULL;
}

/* The library's tool list with each tool's outputSchema added, for a client
 * that reads it; as the library wrote it otherwise. */
static void method_tools_list(server *sv, const char *id)
{
    char *tools = NULL;
    if (shexec_tool_list(&tools, sv->s) != SHEXEC_OK) {
        send_error(sv, id, -32603, shexec_session_errmsg(sv->s));
        return;
    }
    shx_json *list = NULL;
    shx_buf b = {0};
    /* the list is the same for every client and request while we run */
    if (sv->req.modern)
        shx_buf_printf(&b, "{\"ttlMs\":%d,\"cacheScope\":\"private\",\"tools\":", LIST_TTL_MS);
    else
        shx_buf_puts(&b, "{\"tools\":");
    if (!sv->req.structured ||
        shx_json_parse(&list, tools, strlen(tools), NULL, NULL) != SHEXEC_OK ||
        !shx_json_is(list, SHX_JSON_ARRAY)) {
        shx_buf_puts(&b, tools);
    } else {
        for (size_t i = 0; i < list->count; i++) {
            const shx_json *tool = list->items[i];
            const char *schema = output_schema_of(shx_json_get(tool, "name"));
            shx_buf_puts(&b, i ? "," : "[");
            size_t start = b.len;
            (void)shx_json_write(&b, tool);
            /* a tool object ends with its '}': the schema goes before it */
            if (schema && !shx_json_get(tool, "outputSchema") && !b.failed &&
                b.len > start && b.data[b.len - 1] == '}') {
                b.len--;
                shx_buf_puts(&b, ",\"outputSchema\":");
                shx_buf_puts(&b, schema);
                shx_buf_puts(&b, "}");
            }
        }
        shx_buf_puts(&b, list->count ? "]" : "[]");
    }
    shx_buf_puts(&b, "}");
    send_result(sv, id, b.failed ? "{\"tools\":[]}" : b.data);
    shx_buf_free(&b);
    shx_json_free(list);
    shexec_free(tools);
}

static void method_tools_call(server *sv, const char *id, const shx_json *params)
{
    const shx_json *name = shx_json_get(params, "name");
    if (!name || name->type != SHX_JSON_STRING) {
        send_error(sv, id, RPC_INVALID_PARAMS, "tools/call needs params.name (a string)");
        return;
    }
    /* the library takes C strings: a name with NUL inside names no tool */
    if (memchr(name->str, '\0', name->len) || !shexec_tool_is_enabled(sv->s, name->str)) {
        shx_buf m = {0};
        shx_buf_puts(&m, "Unknown tool: ");
        shx_buf_append(&m, name->str, name->len > 64 ? 64 : name->len);
        send_error_buf(sv, id, RPC_INVALID_PARAMS, &m, "Unknown tool");
        shx_buf_free(&m);
        return;
    }
    const shx_json *args = shx_json_get(params, "arguments");
    if (args && args->type == SHX_JSON_NULL)
        args = NULL;
    if (args && args->type != SHX_JSON_OBJECT) {
        send_tool_error(sv, id, "arguments must be a JSON object");
        return;
    }
    /* no tool has an argument with NUL in its name; said here, where the
     * name can be quoted whole (the library's messages are C strings) */
    for (size_t i = 0; args && i < args->count; i++)
        if (memchr(args->keys[i].str, '\0', args->keys[i].len)) {
            shx_buf m = {0};
            shx_buf_puts(&m, "unknown argument ");
            put_name(&m, args->keys[i].str, args->keys[i].len);
            send_tool_error_buf(sv, id, &m, "unknown argument");
            shx_buf_free(&m);
            return;
        }
    const shx_json *token = shx_json_get(shx_json_get(params, "_meta"), "progressToken");
    if (token && token->type != SHX_JSON_STRING && token->type != SHX_JSON_NUMBER)
        token = NULL;
    if (str_eq(name, "bash"))
        tool_bash(sv, id, args, token);
    else if (str_eq(name, "task_output"))
        tool_task_output(sv, id, args);
    else if (str_eq(name, "task_write"))
        tool_task_write(sv, id, args);
    else
        tool_task_kill(sv, id, args);
}

static void cancel_call(server *sv, const shx_json *params)
{
    const shx_json *rid = shx_json_get(params, "requestId");
    if (!rid)
        return;
    char *rtext = json_text(rid); /* ids are kept in this form */
    for (call *c = sv->calls; c; c = c->next)
        if (!c->cancelled && rtext && strcmp(c->id, rtext) == 0) {
            c->cancelled = 1;
            if (c->kind != CALL_WAIT) /* a wait is only dropped: its task goes on */
                shexec_run_cancel(c->run);
        }
    free(rtext);
}

/* server/discover: the versions we speak, our capabilities (tools, and
 * the Tasks extension), how to use the tools; the same for every client. */
static void method_discover(server *sv, const char *id)
{
    shx_buf b = {0};
    shx_buf_printf(&b, "{\"ttlMs\":%d,\"cacheScope\":\"private\",\"supportedVersions\":"
                   SUPPORTED_VERSIONS_JSON ",\"capabilities\":{\"tools\":{\"listChanged\":false},"
                   "\"extensions\":{\"" TASKS_EXTENSION "\":{}}},\"instructions\":", LIST_TTL_MS);
    (void)shx_json_put_string(&b, INSTRUCTIONS, strlen(INSTRUCTIONS));
    shx_buf_puts(&b, "}");
    send_result(sv, id, b.failed ? "{}" : b.data);
    shx_buf_free(&b);
}

/* The era of a request, from its _meta (see era): 0, with sv->req set, or
 * -1 once the error has been answered. A request without a version in
 * _meta is of the initialize era, but the methods only the stateless era
 * has need the version. */
static int request_era(server *sv, const char *id, const shx_json *method,
                       const shx_json *params)
{
    const shx_json *meta = shx_json_is(params, SHX_JSON_OBJECT) ? shx_json_get(params, "_meta")
                                                               : NULL;
    const shx_json *version = shx_json_get(meta, META_PROTOCOL_VERSION);
    int modern_only = str_eq(method, "server/discover") || str_eq(method, "tasks/get") ||
                      str_eq(method, "tasks/update") || str_eq(method, "tasks/cancel");
    if (!version && !modern_only) {
        sv->req = (era){.structured = sv->legacy_structured};
        return 0;
    }
    if (!version) {
        send_error(sv, id, RPC_INVALID_PARAMS,
                   "Request is missing the required _meta envelope for protocol revision "
                   MODERN_PROTOCOL " (" META_PROTOCOL_VERSION ", " META_CLIENT_CAPABILITIES ")");
        return -1;
    }
    if (!shx_json_is(version, SHX_JSON_STRING)) {
        send_error(sv, id, RPC_INVALID_PARAMS,
                   "Invalid _meta envelope: " META_PROTOCOL_VERSION " must be a string");
        return -1;
    }
    if (!str_eq(version, MODERN_PROTOCOL)) {
        /* an older version is chosen by initialize, never per request */
        shx_buf m = {0}, data = {0};
        shx_buf_puts(&m, "Unsupported protocol version: ");
        shx_buf_append(&m, version->str, version->len > 64 ? 64 : version->len);
        shx_buf_puts(&data, "{\"supported\":" SUPPORTED_VERSIONS_JSON ",\"requested\":");
        (void)shx_json_put_string(&data, version->str, version->len);
        shx_buf_puts(&data, "}");
        if (m.failed || data.failed)
            send_error(sv, id, RPC_UNSUPPORTED_VERSION, "Unsupported protocol version");
        else
            send_error_data(sv, id, RPC_UNSUPPORTED_VERSION, m.data, m.len, data.data);
        shx_buf_free(&m);
        shx_buf_free(&data);
        return -1;
    }
    const shx_json *caps = shx_json_get(meta, META_CLIENT_CAPABILITIES);
    if (!shx_json_is(caps, SHX_JSON_OBJECT)) {
        send_error(sv, id, RPC_INVALID_PARAMS,
                   "Invalid _meta envelope: " META_CLIENT_CAPABILITIES " must be an object");
        return -1;
    }
    const shx_json *tasks = shx_json_get(shx_json_get(caps, "extensions"), TASKS_EXTENSION);
    sv->req = (era){.modern = 1, .structured = 1, .tasks = shx_json_is(tasks, SHX_JSON_OBJECT)};
    return 0;
}

/* A key that params names twice, anywhere inside: which value a repeated
 * key stands for is anyone's guess, so the request is refused. The
 * arguments of tools/call are the tool's input and checked by the tool,
 * whose errors the model reads (a result with isError). */
static const char *params_duplicate_key(const shx_json *method, const shx_json *params,
                                        size_t *len)
{
    const char *key = shx_json_duplicate_key(params, 0, len);
    int tools_call = str_eq(method, "tools/call");
    for (size_t i = 0; !key && params && i < params->count; i++) {
        if (tools_call && params->type == SHX_JSON_OBJECT && params->keys[i].len == 9 &&
            memcmp(params->keys[i].str, "arguments", 9) == 0)
            continue;
        key = shx_json_duplicate_key(params->items[i], 1, len);
    }
    return key;
}

/* A well-formed request: its era first (request_era()), then its method,
 * as that era has it. */
static void dispatch_request(server *sv, const char *id, const shx_json *method,
                             const shx_json *params)
{
    if (request_era(sv, id, method, params) != 0)
        return; /* answered: a version or envelope the stateless era refuses */
    if (!sv->req.modern && str_eq(method, "initialize")) {
        method_initialize(sv, id, params);
    } else if (!sv->req.modern && str_eq(method, "ping")) {
        send_result(sv, id, "{}");
    } else if (str_eq(method, "server/discover")) {
        method_discover(sv, id);
    } else if (str_eq(method, "tools/list")) {
        method_tools_list(sv, id);
    } else if (str_eq(method, "tools/call")) {
        method_tools_call(sv, id, params);
    } else if (str_eq(method, "tasks/get")) {
        method_tasks_get(sv, id, params);
    } else if (str_eq(method, "tasks/update")) {
        method_tasks_update(sv, id, params);
    } else if (str_eq(method, "tasks/cancel")) {
        method_tasks_cancel(sv, id, params);
    } else {
        shx_buf m = {0};
        shx_buf_puts(&m, "Method not found: ");
        shx_buf_append(&m, method->str, method->len > 100 ? 100 : method->len);
        send_error_buf(sv, id, RPC_METHOD_NOT_FOUND, &m, "Method not found");
        shx_buf_free(&m);
    }
}

/* Answer one message: every message that needs an answer gets exactly one. */
static void handle_message(server *sv, const char *line, size_t len)
{
    shx_json *msg = NULL;
    shx_buf perr = SHX_BUF_INIT;
    /* a repeated key is kept: such a request is still answered, with its id;
     * the values are bounded by the line's length (MSG_VALUES_FLOOR) */
    const shx_json_limits lim = {.max_size = MAX_LINE,
                                 .max_items = MSG_VALUES_FLOOR + len / LINE_BYTES_PER_VALUE,
                                 .keep_duplicate_keys = 1};
    if (shx_json_parse(&msg, line, len, &lim, &perr) != SHEXEC_OK) {
        char m[200];
        snprintf(m, sizeof m, "Parse error: %s", perr.data ? perr.data : "out of memory");
        shx_buf_free(&perr);
        send_error(sv, NULL, RPC_PARSE_ERROR, m);
        return;
    }
    shx_buf_free(&perr);
    /* the id is echoed only when the message has exactly one usable id */
    const shx_json *idv = shx_json_get(msg, "id");
    char *id = NULL;
    if (count_key(msg, "id") == 1 && (idv->type == SHX_JSON_STRING || idv->type == SHX_JSON_NUMBER))
        id = json_text(idv);
    const shx_json *method = shx_json_get(msg, "method");
    const shx_json *version = shx_json_get(msg, "jsonrpc");
    const shx_json *params = shx_json_get(msg, "params");
    size_t dup_len = 0;
    const char *dup = shx_json_duplicate_key(msg, 0, &dup_len);
    shx_buf m = {0};
    if (msg->type != SHX_JSON_OBJECT) {
        send_error(sv, id, RPC_INVALID_REQUEST,
                   msg->type == SHX_JSON_ARRAY ? "Invalid Request: batches are not supported"
                                         : "Invalid Request");
    } else if (dup) {
        /* two ids, two methods or two params: no reading of it is the sender's */
        shx_buf_puts(&m, "Invalid Request: ");
        put_name(&m, dup, dup_len);
        shx_buf_puts(&m, " given twice");
        send_error_buf(sv, id, RPC_INVALID_REQUEST, &m, "Invalid Request");
    } else if (!str_eq(version, "2.0") || (idv && !id && idv->type != SHX_JSON_NULL) ||
               (params && params->type != SHX_JSON_OBJECT && params->type != SHX_JSON_ARRAY)) {
        send_error(sv, id, RPC_INVALID_REQUEST, "Invalid Request");
    } else if (!method) {
        /* a response to a request of ours: we send none, so nothing to match */
    } else if (method->type != SHX_JSON_STRING) {
        send_error(sv, id, RPC_INVALID_REQUEST, "Invalid Request: method must be a string");
    } else if (memchr(method->str, '\0', method->len)) {
        /* no method has a NUL in its name; compared as a C string, the part
         * before the NUL would match one */
        send_error(sv, id, RPC_INVALID_REQUEST,
                   "Invalid Request: method contains a NUL character");
    } else if (!idv) { /* a notification: never answered; ignored when its params are not clear */
        if (str_eq(method, "notifications/cancelled") &&
            !params_duplicate_key(method, params, &dup_len))
            cancel_call(sv, params);
    } else if (!id) {
        send_error(sv, NULL, RPC_INVALID_REQUEST, "Invalid Request: id must be a string or number");
    } else if ((dup = params_duplicate_key(method, params, &dup_len)) != NULL) {
        shx_buf_puts(&m, "Invalid params: ");
        put_name(&m, dup, dup_len);
        shx_buf_puts(&m, " given twice");
        send_error_buf(sv, id, RPC_INVALID_PARAMS, &m, "Invalid params");
    } else {
        dispatch_request(sv, id, method, params);
    }
    shx_buf_free(&m);
    free(id);
    shx_json_free(msg);
}

/* Read what stdin has; handle each complete line. */
static void read_stdin(server *sv)
{
    if (sv->in_cap - sv->in_len < 65536) {
        size_t cap = sv->in_cap ? sv->in_cap * 2 : 131072;
        char *p = realloc(sv->in, cap);
        if (!p) {
            log_msg("out of memory reading a request");
            sv->stop = 1;
            return;
        }
        sv->in = p;
        sv->in_cap = cap;
    }
    ssize_t n = read(STDIN_FILENO, sv->in + sv->in_len, sv->in_cap - sv->in_len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        sv->stdin_open = 0;
        return;
    }
    size_t start = 0, scan = sv->in_len;
    sv->in_len += (size_t)n;
    for (;;) {
        char *nl = memchr(sv->in + scan, '\n', sv->in_len - scan);
        if (!nl)
            break;
        size_t end = (size_t)(nl - sv->in), len = end - start;
        if (sv->discarding) {
            sv->discarding = 0;
        } else {
            if (len && sv->in[start + len - 1] == '\r')
                len--;
            size_t ws = 0;
            while (ws < len && (sv->in[start + ws] == ' ' || sv->in[start + ws] == '\t'))
                ws++;
            if (ws < len)
                handle_message(sv, sv->in + start, len);
        }
        start = scan = end + 1;
    }
    memmove(sv->in, sv->in + start, sv->in_len - start);
    sv->in_len -= start;
    if (sv->discarding) {
        /* still inside a refused line: it was answered once, drop the rest
         * as it comes, up to its newline */
        sv->in_len = 0;
    } else if (sv->in_len > MAX_LINE) { /* no newline in sight: refuse the message */
        send_error(sv, NULL, RPC_PARSE_ERROR, "Parse error: message larger than 32 MiB");
        sv->in_len = 0;
        sv->discarding = 1;
    }
    if (!sv->in_len && sv->in_cap > IN_KEEP_CAP) { /* give a large message's memory back */
        free(sv->in);
        sv->in = NULL;
        sv->in_cap = 0;
    }
}

/* ---- main ------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " SERVER_NAME " [options] [-- PROGRAM [ARG...]]\n"
            "An MCP server on stdin/stdout that gives a model a shell (tools: bash, task_output,\n"
            "task_kill, task_write), built on libshexec.\n\n"
            "  --workdir DIR                    start directory (default: the current one)\n"
            "  --timeout SECONDS                default bash timeout (default 120, at most 600)\n"
            "  --no-bash                        do not offer the bash tool\n"
            "  --persist-env                    exported variables (with bash also shell variables\n"
            "                                   and functions) carry from one command to the next,\n"
            "                                   so `source .venv/bin/activate` lasts (local kind only)\n"
            "  --disable-tools LIST             comma-separated tools not to offer\n"
            "  --background-task-timeout SECONDS  limit for background commands (default: none)\n"
            "  --idle-timeout SECONDS[:ACTION]  a foreground command silent on stdout and stderr\n"
            "                                   for SECONDS is ended (ACTION end, the default:\n"
            "                                   timed_out, and the result says so) or, with yield,\n"
            "                                   answered with its output so far and moved to the\n"
            "                                   background as a task (default: none)\n"
            "  --background-on-timeout CAP_SECONDS  at its timeout a foreground command is moved\n"
            "                                   to the background as a task (the call answered\n"
            "                                   with its output so far) instead of being ended;\n"
            "                                   it is ended CAP_SECONDS after its start\n"
            "                                   (default: ended at the timeout)\n"
            "  --input-look-ms MS               how long a command must be silent before the\n"
            "                                   server looks whether it waits for input (default\n"
            "                                   2000; 0: never look)\n"
            "  --leftovers-drain-ms MS          after a command's shell exits, what it left\n"
            "                                   running is read as its output until it prints\n"
            "                                   nothing for MS (default 100, at most 2000), then\n"
            "                                   becomes a task (leftover_task_id); 0: at once\n"
            "  --agent-env                      set the environment that keeps commands from\n"
            "                                   stopping for a person: PAGER=cat, GIT_PAGER=cat,\n"
            "                                   GIT_TERMINAL_PROMPT=0, EDITOR=false,\n"
            "                                   DEBIAN_FRONTEND=noninteractive, ...; TERM=dumb and\n"
            "                                   NO_COLOR=1 without pty\n"
            "  --error-on-nonzero-exit          set isError when a command exits non-zero or a\n"
            "                                   signal ends it (default: only on a timeout and\n"
            "                                   when the command could not run: an exit code is\n"
            "                                   data)\n"
            "  --spill-dir DIR                  keep the whole text of a stream cut at the output\n"
            "                                   limit (30000 characters) in a file of DIR (an\n"
            "                                   absolute path), named in the result; the files are\n"
            "                                   removed when the server exits (default: no files)\n"
            "  --spill-keep                     leave the spill files when the server exits\n"
            "  --spill-max BYTES                at most this much of a stream in its file (K, M, G\n"
            "                                   suffixes: binary; default 64M)\n"
            "  --notice-first                   put the truncation notice before the kept text\n"
            "                                   (default: after it)\n"
            "  --keep-tail                      of a stream cut at its limit keep the first and the\n"
            "                                   last 15000 characters (default: the first 30000)\n"
            "  --output-budget CHARS            each stream's text in a result is at most CHARS\n"
            "                                   characters, the truncation notice included (the\n"
            "                                   kept text gives it room; default: 30000\n"
            "                                   characters of text, the notice on top)\n"
            "  --redact-glob GLOB               hide the values (8 bytes or more) of the variables\n"
            "                                   whose names match GLOB, as [REDACTED:NAME]\n"
            "                                   (repeatable; replaces the defaults *KEY* *SECRET*\n"
            "                                   *TOKEN* *PASSWORD* *CREDENTIAL*)\n"
            "  --redact-file FILE               also hide the VALUE of each NAME=VALUE line of FILE\n"
            "                                   as [REDACTED:NAME] (the rest of the line, as is;\n"
            "                                   empty lines and lines starting with # skipped)\n"
            "  --no-redact                      hide nothing (default: the values of the variables\n"
            "                                   the globs match, words shaped like API keys and PEM\n"
            "                                   private keys are hidden from all output)\n"
            "  --containment WHERE              hold each command's processes in a cgroup v2 of its\n"
            "                                   own, so that daemons that detach are ended with it:\n"
            "                                   auto (default: below the server's own cgroup, where\n"
            "                                   one can be made), off, or a cgroup directory\n"
            "  --memory-max SIZE                bound each command's memory (K, M, G suffixes:\n"
            "                                   binary); the out-of-memory killer's end says so\n"
            "  --pids-max N                     bound each command's processes and threads at once\n"
            "  --cpu-max CPUS                   bound each command's CPU use (1.5: one and a half)\n"
            "                                   (the three need --containment: cgroups)\n"
            "  --wrapper-kind KIND              what the program after -- carries: local (default:\n"
            "                                   it passes descriptors, as bwrap does), remote\n"
            "                                   (only stdin/stdout/stderr: docker exec -i ctr sh)\n"
            "                                   or remote-shell (the same, arguments joined for a\n"
            "                                   remote shell: ssh host sh); with a remote kind\n"
            "                                   --workdir names a directory on the other side\n"
            "  -- PROGRAM [ARG...]              the shell, or a wrapper and the shell it runs,\n"
            "                                   that runs each command (default: /bin/bash)\n"
            "  --help                           this text\n"
            "  --version                        print the version\n\n"
            "Protocol: MCP 2026-07-28 for requests that carry their version in _meta (no\n"
            "initialize; server/discover), and 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05\n"
            "through initialize; chosen per request. A client that declares the Tasks extension\n"
            "(io.modelcontextprotocol/tasks) gets background commands, and commands that yield,\n"
            "as tasks it drives with tasks/get, tasks/update (input for a command that waits\n"
            "for it) and tasks/cancel; other clients use task_output, task_write, task_kill.\n"
            "A prompt for a password or another secret is never a form: the task is\n"
            "input_required with no input request, and its status message names the prompt.\n"
            "A request is one line of at most 32 MiB holding at most 65536 JSON values plus\n"
            "one per 32 bytes of the line.\n\n"
            "Process: as PID 1 (a container without an init) the server forks and PID 1\n"
            "stays an init that reaps the orphans of the namespace and passes SIGTERM, SIGINT\n"
            "and SIGHUP on to it. On Linux the server is not dumpable: no other process of\n"
            "its user can open /proc/PID/fd (its commands' pipes) or /proc/PID/environ.\n");
}

/* A limit's value from its flag's text: memory a size with an optional
 * binary suffix (K, M, G, T), CPU a decimal number of CPUs (to thousandths),
 * processes a whole number. 0, or -1 when it is none of these (or 0). */
static int parse_limit(int limit, const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    if (limit == SHEXEC_LIMIT_CPU) {
        double cpus = strtod(text, &end);
        if (end == text || *end || errno || !(cpus > 0) || cpus > 1e6)
            return -1;
        *out = (uint64_t)(cpus * 1000 + 0.5);
        return *out ? 0 : -1;
    }
    if (text[0] < '0' || text[0] > '9')
        return -1;
    unsigned long long v = strtoull(text, &end, 10);
    int shift = 0;
    if (limit == SHEXEC_LIMIT_MEMORY && *end) {
        const char *units = "KMGT", *u = strchr(units, end[0] & ~0x20);
        if (!u || !end[0])
            return -1;
        shift = 10 * (int)(u - units + 1);
        end++;
        if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0) /* 512MiB, 512MB: the same */
            end += strlen(end);
    }
    if (*end || errno || !v || v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

/* A flag's whole number of `unit` (seconds, milliseconds) from min to
 * max; out of range, one message that gives the range. */
static int parse_whole(const char *flag, const char *text, uint32_t min, uint32_t max,
                       const char *unit, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (!*text || *end || errno || v < min || v > max || text[0] == '-') {
        log_msg("%s wants a whole number of %s from %u to %u, not \"%s\"", flag, unit, min, max,
                text);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static int parse_seconds(const char *flag, const char *text, uint32_t min, uint32_t max,
                         uint32_t *out)
{
    return parse_whole(flag, text, min, max, "seconds", out);
}

/* --idle-timeout's value: SECONDS, SECONDS:end or SECONDS:yield. */
static int parse_idle(const char *text, uint32_t *ms, int *action)
{
    char secs[32];
    const char *colon = strchr(text, ':');
    size_t n = colon ? (size_t)(colon - text) : strlen(text);
    uint32_t v;
    *action = SHEXEC_IDLE_END;
    if (colon && strcmp(colon + 1, "yield") == 0) {
        *action = SHEXEC_IDLE_YIELD;
    } else if (colon && strcmp(colon + 1, "end") != 0) {
        log_msg("--idle-timeout wants SECONDS, SECONDS:end or SECONDS:yield, not \"%s\"", text);
        return -1;
    }
    if (n >= sizeof secs) {
        log_msg("--idle-timeout wants a whole number of seconds, not \"%s\"", text);
        return -1;
    }
    memcpy(secs, text, n);
    secs[n] = '\0';
    if (parse_seconds("--idle-timeout", secs, 0, UINT32_MAX / 1000, &v) != 0)
        return -1;
    *ms = v * 1000;
    return 0;
}

/* Match "--name VALUE" or "--name=VALUE"; *i advances past a separate value. */
static const char *flag_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (!argv[*i] || strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0')
        return NULL;
    if (*i + 1 >= argc || !argv[*i + 1]) {
        log_msg("%s needs a value", name);
        exit(2);
    }
    return argv[++*i];
}

static int configure_tools(server *sv, int no_bash, const char *disable)
{
    static const char *const tools[] = {"bash", "task_output", "task_kill", "task_write"};
    for (size_t i = 0; i < sizeof tools / sizeof *tools; i++)
        shexec_tool_set_enabled(sv->s, tools[i], 1);
    if (no_bash)
        shexec_tool_set_enabled(sv->s, "bash", 0);
    char *list = disable ? strdup(disable) : NULL, *save = NULL;
    if (disable && !list)
        return -1;
    for (char *name = list ? strtok_r(list, ", ", &save) : NULL; name;
         name = strtok_r(NULL, ", ", &save))
        if (shexec_tool_set_enabled(sv->s, name, 0) != SHEXEC_OK) {
            log_msg("--disable-tools: no tool named \"%s\" (tools: bash, task_output, task_kill, "
                    "task_write)", name);
            free(list);
            return -1;
        }
    free(list);
    return 0;
}

/* The flags that shape what the model reads of a command's output. */
typedef struct {
    const char *spill_dir;  /* NULL: no spill files */
    const char *spill_max;  /* --spill-max as given, or NULL */
    int spill_keep;
    int notice_first;
    int keep_tail;
    const char *output_budget; /* --output-budget as given, or NULL */
    int no_redact;
    const char **redact_globs; /* --redact-glob values (room for argc) */
    size_t n_redact_globs;
    const char **redact_files; /* --redact-file values (room for argc) */
    size_t n_redact_files;
} output_flags;

/* Hide the value of each NAME=VALUE line of a file under its NAME: secrets
 * the server cannot find in its environment (a value on the command line
 * would show in ps). The value is the rest of the line after the first
 * '=', as it is: no quotes, no escapes (a CR before the newline is
 * dropped: a file saved with CRLF). Empty lines and lines that start with
 * '#' are skipped. A bad line stops the server, named by its number only:
 * its text may be a secret, and the server's log is no place for it. */
static int load_redact_file(shexec_session *s, const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        log_msg("--redact-file %s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned long number = 0;
    int rc = 0;
    errno = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        number++;
        if (len && line[len - 1] == '\n')
            len--;
        if (len && line[len - 1] == '\r')
            len--;
        if (!len || line[0] == '#')
            continue;
        char *eq = memchr(line, '=', (size_t)len);
        if (!eq) {
            log_msg("--redact-file %s: line %lu is not NAME=VALUE", path, number);
            rc = -1;
            break;
        }
        *eq = '\0';
        /* a NUL in the name would cut it short as a C string */
        if (memchr(line, '\0', (size_t)(eq - line))) {
            log_msg("--redact-file %s: line %lu: a name is letters, digits and '_' only", path,
                    number);
            rc = -1;
        } else if (shexec_session_redact_value(s, line, eq + 1,
                                               (size_t)(line + len - (eq + 1))) != SHEXEC_OK) {
            /* the library's message names the rule broken, never the value */
            log_msg("--redact-file %s: line %lu: %s", path, number, shexec_session_errmsg(s));
            rc = -1;
        }
    }
    if (rc == 0 && ferror(f)) {
        log_msg("--redact-file %s: %s", path, strerror(errno ? errno : EIO));
        rc = -1;
    }
    if (line)
        explicit_bzero(line, cap); /* the library keeps its own copy */
    free(line);
    fclose(f);
    return rc;
}

/* Spill files, the notice's place and redaction, as the flags say. Hidden
 * by default: the output goes to a model (and whatever it logs), and the
 * environment a client starts the server with often holds its API tokens. */
static int configure_output(shexec_session *s, const output_flags *o)
{
    if (!o->spill_dir && (o->spill_keep || o->spill_max)) {
        log_msg("%s needs --spill-dir", o->spill_keep ? "--spill-keep" : "--spill-max");
        return -1;
    }
    if (o->spill_dir) {
        uint64_t file_max = 0, total_max = 0; /* 0: the library's defaults */
        if (o->spill_max && parse_limit(SHEXEC_LIMIT_MEMORY, o->spill_max, &file_max) != 0) {
            log_msg("--spill-max: \"%s\" is no size (64M, 1G, bytes)", o->spill_max);
            return -1;
        }
        /* the session's budget holds at least one whole file */
        if (file_max > SHEXEC_DEFAULT_SPILL_TOTAL_MAX)
            total_max = file_max;
        if (shexec_session_set_spill_dir(s, o->spill_dir, file_max, total_max,
                                         o->spill_keep ? SHEXEC_SPILL_KEEP_FILES : 0) !=
            SHEXEC_OK) {
            log_msg("--spill-dir %s: %s", o->spill_dir, shexec_session_errmsg(s));
            return -1;
        }
    }
    if (o->notice_first &&
        shexec_session_set_notice_position(s, SHEXEC_NOTICE_FIRST) != SHEXEC_OK) {
        log_msg("--notice-first: %s", shexec_session_errmsg(s));
        return -1;
    }
    /* a build's or a test run's verdict is at its end; a client that
     * bounds what it reads gets a budget the notice fits in */
    uint32_t budget = 0;
    if (o->output_budget &&
        parse_whole("--output-budget", o->output_budget, 1, 1u << 30, "characters", &budget) != 0)
        return -1;
    int keep = (o->keep_tail ? SHEXEC_KEEP_HEAD_TAIL : SHEXEC_KEEP_HEAD) |
               (budget ? SHEXEC_KEEP_WITHIN_LIMIT : 0);
    if ((o->keep_tail || budget) &&
        shexec_session_set_output_limit(s, budget ? budget : SHEXEC_DEFAULT_OUTPUT_LIMIT,
                                        SHEXEC_UNIT_CHARS, keep) != SHEXEC_OK) {
        log_msg("%s: %s", budget ? "--output-budget" : "--keep-tail", shexec_session_errmsg(s));
        return -1;
    }
    if (o->no_redact) {
        /* asked to hide some secrets and none: which was meant is unclear */
        if (o->n_redact_globs || o->n_redact_files) {
            log_msg("--no-redact contradicts --redact-%s", o->n_redact_globs ? "glob" : "file");
            return -1;
        }
        return 0;
    }
    /* no --redact-glob: NULL, the library's default globs */
    if (shexec_session_redact_env(s, o->n_redact_globs ? o->redact_globs : NULL,
                                  o->n_redact_globs) != SHEXEC_OK) {
        log_msg("--redact-glob: %s", shexec_session_errmsg(s));
        return -1;
    }
    if (shexec_session_redact_shapes(s, SHEXEC_REDACT_KEY_SHAPES | SHEXEC_REDACT_PRIVATE_KEYS) !=
        SHEXEC_OK) {
        log_msg("redaction: %s", shexec_session_errmsg(s));
        return -1;
    }
    for (size_t i = 0; i < o->n_redact_files; i++)
        if (load_redact_file(s, o->redact_files[i]) != 0)
            return -1;
    return 0;
}

static void install_signals(server *sv)
{
    if (pipe2(sv->sig_pipe, O_CLOEXEC | O_NONBLOCK) == 0)
        signal_fd = sv->sig_pipe[1];
    else
        sv->sig_pipe[0] = sv->sig_pipe[1] = -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = SIG_IGN; /* a vanished client shows up as EPIPE instead */
    sigaction(SIGPIPE, &sa, NULL);
}

static void serve(server *sv)
{
    struct pollfd *fds = NULL;
    uint32_t cap = 0;
    while (!sv->stop && !signal_seen && sv->stdin_open) {
        /* fill the session's entries after our three; only when they do not
         * fit is the array grown and filled again */
        int32_t lib_timeout = -1;
        int n = 0;
        for (;;) {
            if (cap > 3) {
                n = shexec_session_pollfds(fds + 3, cap - 3, &lib_timeout, sv->s);
                if (n < 0)
                    n = 0; /* only a call from a callback fails */
                if ((uint32_t)n <= cap - 3)
                    break;
            }
            uint32_t ncap = (uint32_t)n + 19;
            struct pollfd *p = realloc(fds, ncap * sizeof *p);
            if (!p) {
                log_msg("out of memory");
                free(fds);
                return;
            }
            fds = p;
            cap = ncap;
        }
        fds[0] = (struct pollfd){STDIN_FILENO, POLLIN, 0};
        fds[1] = (struct pollfd){sv->sig_pipe[0], POLLIN, 0};
        fds[2] = (struct pollfd){STDOUT_FILENO, sv->outq.len > sv->outq_off ? POLLOUT : 0, 0};
        if (!fds[2].events)
            fds[2].fd = -1;
        int timeout = progress_tick(sv), waits = wait_tick(sv);
        if (waits >= 0 && (timeout < 0 || waits < timeout))
            timeout = waits;
        if (lib_timeout >= 0 && (timeout < 0 || lib_timeout < timeout))
            timeout = lib_timeout;
        int rc = poll(fds, 3 + (nfds_t)n, timeout);
        if (rc < 0 && errno != EINTR) {
            log_msg("poll: %s", strerror(errno));
            break;
        }
        if (rc < 0)
            for (int i = 0; i < 3 + n; i++)
                fds[i].revents = 0;
        /* the session first: its descriptors must be matched before any other
         * call; also when poll timed out, as process() enforces the deadlines */
        shexec_session_process(sv->s, fds + 3, (uint32_t)n);
        finish_calls(sv);
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
            read_stdin(sv);
        finish_calls(sv); /* a call may have failed at once */
        mtasks_tick(sv);
        progress_tick(sv);
        if (fds[2].revents & (POLLERR | POLLHUP))
            sv->stop = 1;
        flush_out(sv, 0);
    }
    free(fds);
}

/*
 * Not dumpable: /proc/PID/fd, /proc/PID/mem, /proc/PID/environ, ptrace and
 * pidfd_getfd() of the server are refused to every other process of the
 * same user (one with CAP_SYS_PTRACE, as root has, still may). Through them
 * such a process could read a command's output from its pipes before the
 * server redacts it, write into a command's stdin or terminal, or read the
 * tokens of the environment the server hides in output. Commands are not
 * affected: exec makes a program dumpable again. The price is that a
 * crashed server leaves no core dump.
 */
static void harden(void)
{
#ifdef __linux__
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        log_msg("cannot make the server undumpable (other processes of this user can read "
                "its descriptors): %s", strerror(errno));
#endif
}

/*
 * As PID 1 of its pid namespace (a container started without an init,
 * `docker run -i IMAGE shexec-mcp`), the server would be the parent of
 * every process orphaned there: a daemon a command detached, what a
 * command ended at its timeout leaves behind. Nothing of ours waits for
 * them, as the library waits for each child of its own by its pid and never
 * with waitpid(-1) (a host's other children are not its to reap), so each
 * would stay a zombie until the container ends. Reaping with waitpid(-1)
 * in the server would take the exit statuses of the library's own children
 * from it.
 *
 * So PID 1 forks: the child serves as usual, with the same stdin, stdout
 * and stderr, the parent of its commands as ever; PID 1 stays a minimal
 * init that reaps whatever reaches it, passes SIGTERM, SIGINT and SIGHUP
 * (what `docker stop` and a terminal send PID 1) on to the server, and once
 * the server ends exits as it did (128 + the signal that ended it), which
 * ends the namespace and whatever was left in it.
 *
 * Returns in the server; in PID 1 only when the fork failed (then it serves
 * as PID 1, as it did before, and says so).
 */
static void init_if_pid1(void)
{
    if (getpid() != 1)
        return;
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGCHLD);
    /* blocked from before the fork: none is lost while the init gets ready,
     * and a blocked signal is queued for PID 1 even without a handler (an
     * unblocked one it has no handler for never arrives) */
    sigprocmask(SIG_BLOCK, &set, &old);
    pid_t child = fork();
    if (child <= 0) {
        if (child < 0)
            log_msg("cannot fork as PID 1 (%s): processes orphaned here stay zombies",
                    strerror(errno));
        sigprocmask(SIG_SETMASK, &old, NULL);
        return;
    }
    /* only the server reads the requests, and the client's end of file on
     * our answers is the server's closing of stdout */
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        if (null > STDOUT_FILENO)
            close(null);
    }
    for (;;) {
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
            if (pid == child)
                exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
        if (pid < 0 && errno == ECHILD)
            exit(1); /* the server is gone unseen: cannot be, but never spin */
        int sig = sigwaitinfo(&set, NULL);
        if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
            kill(child, sig);
    }
}

static int serve_main(int argc, char **argv, output_flags out);

/* The flags' lists, sized by argc, live around the rest of main, so that
 * every way out of it frees them. */
int main(int argc, char **argv)
{
    harden();
    init_if_pid1();
    output_flags out = {0};
    out.redact_globs = calloc((size_t)argc, sizeof *out.redact_globs);
    out.redact_files = calloc((size_t)argc, sizeof *out.redact_files);
    int rc = 1;
    if (!out.redact_globs || !out.redact_files)
        log_msg("out of memory");
    else
        rc = serve_main(argc, argv, out);
    free(out.redact_globs);
    free(out.redact_files);
    return rc;
}

static int serve_main(int argc, char **argv, output_flags out)
{
    server sv;
    memset(&sv, 0, sizeof sv);
    sv.stdin_open = 1;
    sv.default_timeout_ms = 120000;
    const char *workdir = NULL, *disable = NULL, *containment = "auto", *v;
    const char *limit_text[SHEXEC_LIMITS] = {NULL};
    const char *const *shell_argv = NULL;
    int no_bash = 0, persist_env = 0, wrapper_kind = SHEXEC_WRAPPER_LOCAL;
    int agent_env = 0, idle_action = SHEXEC_IDLE_END;
    uint32_t secs = 0, idle_ms = 0, background_cap_ms = 0, input_look_ms = SHEXEC_DEFAULT_INPUT_LOOK_MS;
    uint32_t drain_ms = SHEXEC_DEFAULT_LEFTOVERS_DRAIN_MS;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf(SERVER_NAME " %s\n", shexec_version());
            return 0;
        } else if (strcmp(argv[i], "--no-bash") == 0) {
            no_bash = 1;
        } else if (strcmp(argv[i], "--persist-env") == 0) {
            persist_env = 1;
        } else if (strcmp(argv[i], "--error-on-nonzero-exit") == 0) {
            sv.error_on_nonzero_exit = 1;
        } else if (strcmp(argv[i], "--agent-env") == 0) {
            agent_env = 1;
        } else if (strcmp(argv[i], "--spill-keep") == 0) {
            out.spill_keep = 1;
        } else if (strcmp(argv[i], "--notice-first") == 0) {
            out.notice_first = 1;
        } else if (strcmp(argv[i], "--keep-tail") == 0) {
            out.keep_tail = 1;
        } else if (strcmp(argv[i], "--no-redact") == 0) {
            out.no_redact = 1;
        } else if ((v = flag_value(argc, argv, &i, "--spill-dir"))) {
            out.spill_dir = v;
        } else if ((v = flag_value(argc, argv, &i, "--spill-max"))) {
            out.spill_max = v;
        } else if ((v = flag_value(argc, argv, &i, "--output-budget"))) {
            out.output_budget = v;
        } else if ((v = flag_value(argc, argv, &i, "--redact-glob"))) {
            out.redact_globs[out.n_redact_globs++] = v;
        } else if ((v = flag_value(argc, argv, &i, "--redact-file"))) {
            out.redact_files[out.n_redact_files++] = v;
        } else if ((v = flag_value(argc, argv, &i, "--workdir"))) {
            workdir = v;
        } else if ((v = flag_value(argc, argv, &i, "--timeout"))) {
            if (parse_seconds("--timeout", v, 1, MAX_TIMEOUT_MS / 1000, &secs) != 0)
                return 2;
            sv.default_timeout_ms = secs * 1000;
        } else if ((v = flag_value(argc, argv, &i, "--background-task-timeout"))) {
            if (parse_seconds("--background-task-timeout", v, 0, UINT32_MAX / 1000, &secs) != 0)
                return 2;
            sv.task_timeout_ms = secs * 1000;
        } else if ((v = flag_value(argc, argv, &i, "--idle-timeout"))) {
            if (parse_idle(v, &idle_ms, &idle_action) != 0)
                return 2;
        } else if ((v = flag_value(argc, argv, &i, "--background-on-timeout"))) {
            if (parse_seconds("--background-on-timeout", v, 0, UINT32_MAX / 1000, &secs) != 0)
                return 2;
            background_cap_ms = secs * 1000;
        } else if ((v = flag_value(argc, argv, &i, "--input-look-ms"))) {
            if (parse_whole("--input-look-ms", v, 0, 3600000, "milliseconds", &input_look_ms) != 0)
                return 2;
        } else if ((v = flag_value(argc, argv, &i, "--leftovers-drain-ms"))) {
            if (parse_whole("--leftovers-drain-ms", v, 0, SHEXEC_MAX_LEFTOVERS_DRAIN_MS, "milliseconds",
                            &drain_ms) != 0)
                return 2;
        } else if ((v = flag_value(argc, argv, &i, "--containment"))) {
            containment = v;
        } else if ((v = flag_value(argc, argv, &i, "--memory-max"))) {
            limit_text[SHEXEC_LIMIT_MEMORY] = v;
        } else if ((v = flag_value(argc, argv, &i, "--pids-max"))) {
            limit_text[SHEXEC_LIMIT_PIDS] = v;
        } else if ((v = flag_value(argc, argv, &i, "--cpu-max"))) {
            limit_text[SHEXEC_LIMIT_CPU] = v;
        } else if ((v = flag_value(argc, argv, &i, "--disable-tools"))) {
            disable = v;
        } else if ((v = flag_value(argc, argv, &i, "--wrapper-kind"))) {
            if (strcmp(v, "local") == 0)
                wrapper_kind = SHEXEC_WRAPPER_LOCAL;
            else if (strcmp(v, "remote") == 0)
                wrapper_kind = SHEXEC_WRAPPER_REMOTE;
            else if (strcmp(v, "remote-shell") == 0)
                wrapper_kind = SHEXEC_WRAPPER_REMOTE_SHELL;
            else {
                log_msg("--wrapper-kind wants local, remote or remote-shell, not \"%s\"", v);
                return 2;
            }
        } else if (strcmp(argv[i], "--") == 0) {
            if (i + 1 >= argc) {
                log_msg("-- wants the program that runs each command after it");
                return 2;
            }
            shell_argv = (const char *const *)argv + i + 1;
            break;
        } else {
            log_msg("unknown option \"%s\"", argv[i]);
            usage(stderr);
            return 2;
        }
    }

    int rc = shexec_session_new(&sv.s);
    if (rc != SHEXEC_OK) {
        log_msg("cannot create a session: %s", shexec_strerror(rc));
        return 1;
    }
    /* the program and its kind first: a remote kind's cwd is on the other side */
    if ((shell_argv || wrapper_kind != SHEXEC_WRAPPER_LOCAL) &&
        shexec_session_set_shell(sv.s, shell_argv, wrapper_kind) != SHEXEC_OK) {
        log_msg("--: %s", shexec_session_errmsg(sv.s));
        shexec_session_free(sv.s);
        return 2;
    }
    if (persist_env && shexec_session_set_persist_env(sv.s, 1) != SHEXEC_OK) {
        log_msg("--persist-env: %s", shexec_session_errmsg(sv.s));
        shexec_session_free(sv.s);
        return 2;
    }
    if (workdir && shexec_session_set_cwd(sv.s, workdir) != SHEXEC_OK) {
        log_msg("--workdir: %s", shexec_session_errmsg(sv.s));
        shexec_session_free(sv.s);
        return 2;
    }
    shexec_session_set_timeouts_ms(sv.s, sv.default_timeout_ms, MAX_TIMEOUT_MS);
    /* commands that outlive their call: answered early, not ended (see
     * LONG-RUNNING AND INTERACTIVE COMMANDS in shexec.h) */
    shexec_session_set_idle_timeout_ms(sv.s, idle_ms, idle_action);
    shexec_session_set_background_on_timeout(sv.s, background_cap_ms);
    shexec_session_set_input_look_ms(sv.s, input_look_ms);
    shexec_session_set_leftovers_drain_ms(sv.s, drain_ms);
    if (agent_env && shexec_session_apply_agent_env(sv.s) != SHEXEC_OK) {
        log_msg("--agent-env: %s", shexec_session_errmsg(sv.s));
        shexec_session_free(sv.s);
        return 2;
    }
    /* a cgroup per command where one can be made: what detaches goes too */
    if (shexec_session_set_containment(sv.s, containment) != SHEXEC_OK) {
        log_msg("--containment: %s", shexec_session_errmsg(sv.s));
        shexec_session_free(sv.s);
        return 2;
    }
    const char *why = NULL;
    if (strcmp(containment, "off") != 0 &&
        shexec_session_containment(sv.s, &why) != SHEXEC_CONTAIN_CGROUP)
        log_msg("no cgroups (%s): a daemon a command detaches may outlive it", why);
    for (int k = 0; k < SHEXEC_LIMITS; k++) {
        static const char *const flag[SHEXEC_LIMITS] = {"--memory-max", "", "--pids-max",
                                                         "--cpu-max"};
        uint64_t value;
        if (!limit_text[k])
            continue;
        if (parse_limit(k, limit_text[k], &value) != 0) {
            log_msg("%s: \"%s\" is no %s", flag[k], limit_text[k],
                    k == SHEXEC_LIMIT_MEMORY ? "size (512M, 2G, bytes)"
                    : k == SHEXEC_LIMIT_CPU  ? "number of CPUs (0.5, 2)"
                                             : "whole number above 0");
            shexec_session_free(sv.s);
            return 2;
        }
        if (shexec_session_set_limit(sv.s, k, value) != SHEXEC_OK) {
            log_msg("%s: %s", flag[k], shexec_session_errmsg(sv.s));
            shexec_session_free(sv.s);
            return 2;
        }
    }
    /* a server killed outright must not leave its commands running */
    if (shexec_session_set_watchdog(sv.s, 1) != SHEXEC_OK)
        log_msg("no watchdog (commands would outlive a killed server): %s",
                shexec_session_errmsg(sv.s));
    if (configure_tools(&sv, no_bash, disable) != 0) {
        shexec_session_free(sv.s);
        return 2;
    }
    if (configure_output(sv.s, &out) != 0) {
        shexec_session_free(sv.s);
        return 2;
    }
    install_signals(&sv);
    struct stat st;
    if (fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
        int fl = fcntl(STDOUT_FILENO, F_GETFL);
        if (fl >= 0 && fcntl(STDOUT_FILENO, F_SETFL, fl | O_NONBLOCK) == 0)
            sv.out_nonblock = 1;
    }

    serve(&sv);

    /* stop everything that still runs, at once, with a short grace period */
    if (signal_seen)
        log_msg("%s: stopping every command", strsignal(signal_seen));
    uint32_t grace = SHUTDOWN_GRACE_MS;
    shexec_session_set_kill_grace_ms(sv.s, grace);
    for (call *c = sv.calls; c; c = c->next)
        c->cancelled = 1;
    flush_out(&sv, 1);
    while (sv.tasks) { /* their commands end with the session's */
        mtask *m = sv.tasks;
        sv.tasks = m->next;
        mtask_free(m);
    }
    shexec_session_free(sv.s);
    while (sv.calls) {
        call *c = sv.calls;
        sv.calls = c->next;
        call_free(c);
    }
    if (sv.out_nonblock) {
        int fl = fcntl(STDOUT_FILENO, F_GETFL);
        if (fl >= 0)
            fcntl(STDOUT_FILENO, F_SETFL, fl & ~O_NONBLOCK);
    }
    shx_buf_free(&sv.outq);
    free(sv.in);
    if (sv.sig_pipe[0] >= 0) {
        close(sv.sig_pipe[0]);
        close(sv.sig_pipe[1]);
    }
    return 0;
}
