/*
 * tooldef.c - the shell as tools handed to a model, defined: a registry
 * per session (bash, task_output, task_kill, task_write; registered disabled,
 * renameable) and each tool's description and JSON Schema. Calling them is
 * tool.c's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shexec_tool.h"
#include "shx/json.h"
#include "tool/toolhook.h"
#include "tool/tooldef.h"
#include "shx/base.h"

static const char *const tool_ids[SHX_TOOL_COUNT] = {"bash", "task_output", "task_kill",
                                                     "task_write"};

/* What the host changed: made on the first change, so a session that never
 * uses the tool layer carries none of it. */
typedef struct shx_tool_registry {
    char *name[SHX_TOOL_COUNT];   /* exposed names; NULL: the tool's own */
    int enabled[SHX_TOOL_COUNT];
} shx_tool_registry;

static void free_registry(void *p)
{
    shx_tool_registry *reg = p;
    for (int i = 0; i < SHX_TOOL_COUNT; i++)
        free(reg->name[i]);
    free(reg);
}

/* The session's registry; made when `make` (NULL when that fails, or when
 * none was made and `make` is 0: every tool as it is by default). */
static shx_tool_registry *registry(shexec_session *s, int make)
{
    void **slot = shx_hook_tools(s, free_registry);
    if (!*slot && make)
        *slot = calloc(1, sizeof(shx_tool_registry));
    return *slot;
}

/* The registry entry whose exposed name is `name`, or -1. */
int shx_tool_index(shexec_session *s, const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < SHX_TOOL_COUNT; i++) {
        if (strcmp(shx_tool_exposed_name(s, i), name) == 0)
            return i;
    }
    return -1;
}

const char *shx_tool_exposed_name(shexec_session *s, int i)
{
    const shx_tool_registry *reg = registry(s, 0);
    return reg && reg->name[i] ? reg->name[i] : tool_ids[i];
}

SHEXEC_API int shexec_tool_is_enabled(shexec_session *s, const char *name)
{
    int i = s ? shx_tool_index(s, name) : -1;
    const shx_tool_registry *reg = i >= 0 ? registry(s, 0) : NULL;
    return reg && reg->enabled[i];
}

/* The registry entry of a tool the host names, for a call that changes it. */
static int registered(shexec_session *s, const char *name, int *i)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    *i = shx_tool_index(s, name);
    if (*i < 0)
        return shx_fail(s, SHEXEC_ENOTOOL, "no tool named \"%.64s\"", name ? name : "(null)");
    return SHEXEC_OK;
}

SHEXEC_API int shexec_tool_set_enabled(shexec_session *s, const char *name, int enabled)
{
    int i;
    int rc = registered(s, name, &i);
    if (rc != SHEXEC_OK)
        return rc;
    shx_tool_registry *reg = registry(s, enabled);
    if (reg)
        reg->enabled[i] = enabled ? 1 : 0;
    else if (enabled)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    return SHEXEC_OK;
}

static int valid_tool_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

SHEXEC_API int shexec_tool_rename(shexec_session *s, const char *name, const char *new_name)
{
    int i;
    int rc = registered(s, name, &i);
    if (rc != SHEXEC_OK)
        return rc;
    if (!new_name || !valid_tool_name(new_name))
        return shx_fail(s, SHEXEC_EINVAL,
                        "tool names are 1-64 characters of letters, digits, '_' and '-'");
    int other = shx_tool_index(s, new_name);
    if (other >= 0 && other != i)
        return shx_fail(s, SHEXEC_EINVAL, "another tool is already named \"%s\"", new_name);
    shx_tool_registry *reg = registry(s, 1);
    char *copy = reg ? strdup(new_name) : NULL;
    if (!copy)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    free(reg->name[i]);
    reg->name[i] = copy;
    return SHEXEC_OK;
}

SHEXEC_API void shexec_free(void *p)
{
    free(p);
}

/* ---- descriptions and schemas ------------------------------------------- */

void shx_tool_put_key(shx_buf *b, const char *key)
{
    shx_json_put_string(b, key, strlen(key));
    shx_buf_putc(b, ':');
}

static void put_str(shx_buf *b, const char *key, const char *value)
{
    shx_tool_put_key(b, key);
    shx_json_put_string(b, value, strlen(value));
}

/* What the model is told persists between calls, by the session's setting
 * and its shell: bash gives back its shell variables and functions too, a
 * POSIX shell only its exported variables (shexec_session_set_persist_env()). */
static const char persist_off[] =
    "Shell variables, aliases and exports do not persist between calls. ";
static const char persist_bash[] =
    "Exported variables persist between calls too (`export`, `unset`, `source "
    ".venv/bin/activate`, `nvm use` carry over), and so do shell variables and functions; "
    "aliases and `set` options do not. A call's own `env` is for that call only. ";
static const char persist_posix[] =
    "Exported variables persist between calls too (`export`, `unset`, `. "
    ".venv/bin/activate` carry over); shell variables that are not exported, functions, "
    "aliases and `set` options do not. A call's own `env` is for that call only. ";

/* The shell the model writes for: bash, or the POSIX shell it is (by the
 * name it runs as), which has no bash syntax to offer. */
static void describe_shell(const shx_tool_settings *set, char *out, size_t cap)
{
    if (set->shell_bash) {
        (void)snprintf(out, cap, "bash -c");
        return;
    }
    const char *slash = strrchr(set->shell, '/');
    const char *name = slash && slash[1] ? slash + 1 : set->shell;
    (void)snprintf(out, cap, "%.64s -c: a POSIX shell, not bash, so no `[[ ]]`, arrays or "
                   "`source`", name);
}

static void describe(shexec_session *s, int i, shx_buf *b)
{
    shx_buf_putc(b, '{');
    put_str(b, "name", shx_tool_exposed_name(s, i));
    shx_buf_putc(b, ',');
    if (i == SHX_TOOL_BASH) {
        shx_tool_settings set;
        shx_hook_settings(s, &set);
        char shell[160];
        describe_shell(&set, shell, sizeof shell);
        /* Tool names are at most 64 characters, the shell's 64: the text always fits. */
        char text[3072];
        (void)snprintf(text, sizeof text,
                       "Run a shell command (%s) and return its stdout, stderr and exit code. "
                       "The shell session persists the working directory: a `cd` in one call is "
                       "where the next call starts (the result's `cwd` says where you are). %s"
                       "Commands get no input (stdin is empty) unless `pty` or yield_time_ms is set. "
                       "Timeout: %u ms by default, "
                       "at most %u ms; on timeout the whole process group is terminated and the "
                       "output so far is returned with timed_out true. stdout and stderr are each "
                       "cut at %llu %s (with a notice giving the total). A non-zero exit code is a "
                       "normal result, not an error. For long-running commands (dev servers, "
                       "watchers, long builds) set run_in_background: the call returns a task_id "
                       "at once; read its output with %s and stop it with %s. With yield_time_ms "
                       "the call returns after that long with the output so far if the command is "
                       "still running (status \"running\", a task_id; it goes on in the "
                       "background), or as soon as it waits for input (waiting_for_input true, "
                       "with its prompt): answer with %s, which also gives the command's input "
                       "(stdin is then a pipe). Many programs (bash's `read -p` among them) print "
                       "their question only on a terminal: for an interactive program set pty "
                       "too, or it may wait with an empty prompt (the result then says so). A "
                       "call that may go on as a task is refused at once when every task slot "
                       "is taken. Processes a command "
                       "leaves running (`server &`) are kept as a background task whose id is "
                       "returned as leftover_task_id. At most %u background tasks are kept: when "
                       "a new one needs room, the one that finished first without its final "
                       "output being read is discarded.",
                       shell,
                       !set.persist_env ? persist_off : set.shell_bash ? persist_bash : persist_posix,
                       set.default_timeout_ms, set.max_timeout_ms, (unsigned long long)set.limit,
                       set.unit == SHEXEC_UNIT_BYTES ? "bytes" : "characters",
                       shx_tool_exposed_name(s, SHX_TOOL_TASK_OUTPUT), shx_tool_exposed_name(s, SHX_TOOL_TASK_KILL),
                       shx_tool_exposed_name(s, SHX_TOOL_TASK_WRITE), set.max_tasks);
        put_str(b, "description", text);
        shx_buf_printf(b,
                       ",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
                       "\"command\":{\"type\":\"string\",\"minLength\":1,\"description\":"
                       "\"The shell command to run.\"},"
                       "\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":%u,"
                       "\"description\":\"Timeout in milliseconds (default %u).\"},"
                       "\"run_in_background\":{\"type\":\"boolean\",\"description\":"
                       "\"Start the command in the background and return a task_id at once.\"},"
                       "\"yield_time_ms\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":%u,"
                       "\"description\":\"Return after this many milliseconds (or when the command "
                       "waits for input) with the output so far; the command goes on as a "
                       "task. Set pty too for a program that asks questions.\"},"
                       "\"cwd\":{\"type\":\"string\",\"description\":"
                       "\"Run in this directory for this call only.\"},"
                       "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":"
                       "\"string\"},\"propertyNames\":{\"pattern\":\"^[A-Za-z_][A-Za-z0-9_]*$\"},"
                       "\"maxProperties\":%u,\"description\":"
                       "\"Extra environment variables.\"},"
                       "\"pty\":{\"type\":\"boolean\",\"description\":"
                       "\"Run on a pseudo-terminal (for programs that need a TTY).\"}},"
                       "\"required\":[\"command\"],\"additionalProperties\":false}}",
                       set.max_timeout_ms, set.default_timeout_ms, set.max_timeout_ms,
                       SHEXEC_MAX_ENV_VARS);
        return;
    }
    if (i == SHX_TOOL_TASK_OUTPUT) {
        put_str(b, "description",
                "Get the output and status of a background task started with "
                "run_in_background. While it runs, status is \"running\" and you get the output "
                "so far (or, with new_only, only what is new since your last read). Once it has "
                "finished, status is \"completed\" with its exit_code, and the task is removed: "
                "its final output is returned once. With yield_time_ms it waits up to that long "
                "for the task to finish or to wait for input (waiting_for_input true, with its "
                "prompt) before answering. With quiet_ms it also answers once the task has "
                "printed nothing for that long (to follow a build or a server's log without "
                "polling); wait_reason then says why it answered: ended, input, quiet or time.");
        shx_buf_puts(b, ",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
                        "\"task_id\":{\"type\":\"string\",\"minLength\":1,\"description\":"
                        "\"The task_id returned when the task was started.\"},"
                        "\"new_only\":{\"type\":\"boolean\",\"description\":"
                        "\"Return only output produced since the previous read.\"},"
                        "\"yield_time_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":300000,"
                        "\"description\":\"Wait up to this long for the task to finish or ask for "
                        "input (default 0: answer at once; with quiet_ms, 300000).\"},"
                        "\"quiet_ms\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":300000,"
                        "\"description\":\"Also answer once the task has printed nothing for "
                        "this long (counted from its last output, at the earliest from this "
                        "call).\"}},"
                        "\"required\":[\"task_id\"],\"additionalProperties\":false}}");
        return;
    }
    if (i == SHX_TOOL_TASK_WRITE) {
        put_str(b, "description",
                "Send input to a background task (a command started with yield_time_ms or pty "
                "that waits for input, e.g. a prompt), then wait up to yield_time_ms (default "
                "1000) for it to finish or ask again; returns what it printed since your last "
                "read, its status, and waiting_for_input with the new prompt. Include the "
                "newline to end a line. close_stdin ends its input (EOF) after the text. "
                "\\u0003 (Ctrl+C) interrupts the command as at a terminal: it is sent SIGINT "
                "(also when it takes no other input), and the result says interrupted. With "
                "quiet_ms it answers once the task has printed nothing for that long (a REPL "
                "that finished its answer).");
        shx_buf_puts(b, ",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
                        "\"task_id\":{\"type\":\"string\",\"minLength\":1,\"description\":"
                        "\"The task_id of the task.\"},"
                        "\"input\":{\"type\":\"string\",\"description\":"
                        "\"The text to send (e.g. \\\"yes\\\\n\\\").\"},"
                        "\"close_stdin\":{\"type\":\"boolean\",\"description\":"
                        "\"End the task's input after the text.\"},"
                        "\"yield_time_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":300000,"
                        "\"description\":\"Wait up to this long for the answer (default 1000; "
                        "with quiet_ms, 300000).\"},"
                        "\"quiet_ms\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":300000,"
                        "\"description\":\"Also answer once the task has printed nothing for "
                        "this long (counted from its last output, at the earliest from this "
                        "call).\"}},"
                        "\"required\":[\"task_id\"],\"additionalProperties\":false}}");
        return;
    }
    put_str(b, "description",
            "Stop a background task: SIGTERM to its whole process group, then SIGKILL after a "
            "grace period. Returns its final output; the task is removed. With signal, send "
            "only that signal instead (SIGINT is Ctrl+C: a server shuts down as at a terminal; "
            "SIGSTOP pauses, SIGCONT resumes) and wait up to 1000 ms for the task to end: "
            "returns what it printed since your last read, its status, and once it ended its "
            "exit_code, state and signal; a task that goes on is not removed.");
    shx_buf_puts(b, ",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
                    "\"task_id\":{\"type\":\"string\",\"minLength\":1,\"description\":"
                    "\"The task_id of the task to stop.\"},"
                    "\"signal\":{\"type\":\"string\",\"enum\":[\"SIGINT\",\"SIGTERM\","
                    "\"SIGHUP\",\"SIGQUIT\",\"SIGKILL\",\"SIGUSR1\",\"SIGUSR2\",\"SIGSTOP\","
                    "\"SIGCONT\"],\"description\":\"Send this signal to the task's processes "
                    "instead of stopping it.\"}},"
                    "\"required\":[\"task_id\"],\"additionalProperties\":false}}");
}

int shx_tool_hand_out(shexec_session *s, shx_buf *b, char **out)
{
    *out = shx_buf_steal(b, NULL);
    if (!*out)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    return SHEXEC_OK;
}

SHEXEC_API int shexec_tool_list(char **out_json, shexec_session *s)
{
    if (out_json)
        *out_json = NULL;
    if (!s || !out_json)
        return SHEXEC_EINVAL;
    shx_ok(s);
    shx_buf b = SHX_BUF_INIT;
    shx_buf_putc(&b, '[');
    int first = 1;
    for (int i = 0; i < SHX_TOOL_COUNT; i++) {
        const shx_tool_registry *reg = registry(s, 0);
        if (!reg || !reg->enabled[i])
            continue;
        if (!first)
            shx_buf_putc(&b, ',');
        first = 0;
        describe(s, i, &b);
    }
    if (shx_buf_putc(&b, ']') != 0) {
        shx_buf_free(&b);
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    }
    return shx_tool_hand_out(s, &b, out_json);
}

