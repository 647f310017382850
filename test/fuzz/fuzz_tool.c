/*
 * fuzz_tool.c - libFuzzer target for the JSON tool layer (lib/tool.c):
 * shexec_tool_call with a model's arguments.
 *
 * Nothing may run. The session's shell is an absolute path in a directory
 * that does not exist, and this file defines posix_spawn and posix_openpt
 * itself (the library's calls bind to these): posix_spawn of that path
 * fails with ENOENT, as exec would, without making a process, and aborts
 * for any other path; posix_openpt opens /dev/ptmx as libc's does (a
 * terminal is only descriptors). So every call that passes validation
 * ends in SHEXEC_ESPAWN (or SHEXEC_ENOCWD first, for a cwd argument that
 * is not a directory), after the library opened its pipes or terminal:
 * they must all be closed again. The session inherits no environment.
 *
 * Input: byte 0 picks the tool (bash, task_output, task_kill, or a name
 * taken from the input up to a NUL) and whether it is disabled, renamed,
 * or called by its old name after a rename, or with NULL arguments; the
 * rest, up to a NUL, is the arguments JSON. A model of the validation in
 * tool.c and shexec_tool.h decides which code the call must return. What must
 * hold for every call:
 *   - out_json is valid JSON (read with the library's parser): an object
 *     whose only member is "error", a string equal to the session's
 *     error message (as the writer renders it);
 *   - the return code is not SHEXEC_OK (nothing can succeed without a
 *     process) and is the one the model predicts;
 *   - no descriptor is left open, no child process appears, nothing leaks.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shx/env.h"
#include "fuzzutil.h"
#include "shx/json.h"
#include "shexec.h"
#include <shexec_tool.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NO_SUCH_SHELL "/shexec-fuzz-no-such-dir/sh"

/* ------------------------------------------------------------------------
 * Where a start ends: no process is ever made.
 * ------------------------------------------------------------------------ */

int posix_spawn(pid_t *restrict pid, const char *restrict path,
                const posix_spawn_file_actions_t *restrict fa, const posix_spawnattr_t *restrict attr,
                char *const argv[restrict], char *const envp[restrict])
{
    (void)pid, (void)fa, (void)attr, (void)envp;
    FZ_CHECK(strcmp(path, NO_SUCH_SHELL) == 0, "posix_spawn(\"%s\") reached", path);
    FZ_CHECK(argv[0] && strcmp(argv[0], NO_SUCH_SHELL) == 0, "argv[0] is not the shell");
    return ENOENT; /* what exec says of a path in a missing directory */
}

int posix_openpt(int flags)
{
    return open("/dev/ptmx", flags);
}

/* ------------------------------------------------------------------------
 * The model of tool.c's validation
 * ------------------------------------------------------------------------ */

static int only_fields(const shx_json *args, const char *const *names, size_t n,
                       const shx_json_type *types)
{
    for (size_t i = 0; i < shx_json_count(args); i++) {
        size_t klen;
        const char *k = shx_json_key(args, i, &klen);
        size_t f;
        for (f = 0; f < n; f++)
            if (fz_mem_eq(k, klen, names[f], strlen(names[f])))
                break;
        if (f == n || !shx_json_is(shx_json_item(args, i), types[f]))
            return 0;
    }
    return 1;
}

static int nul_free_string(const shx_json *v)
{
    size_t len;
    const char *s = shx_json_string(v, &len);
    return s && !memchr(s, '\0', len);
}

static int expect_bash(const shx_json *args, const char *session_cwd)
{
    static const char *const names[] = {"command", "timeout", "run_in_background", "cwd", "env",
                                        "pty"};
    static const shx_json_type types[] = {SHX_JSON_STRING, SHX_JSON_NUMBER, SHX_JSON_BOOL,
                                          SHX_JSON_STRING, SHX_JSON_OBJECT, SHX_JSON_BOOL};
    if (!shx_json_is(args, SHX_JSON_OBJECT) || !only_fields(args, names, 6, types))
        return SHEXEC_EINVAL;
    const shx_json *cmd = shx_json_get(args, "command");
    if (!nul_free_string(cmd) || cmd->len == 0)
        return SHEXEC_EINVAL;
    const shx_json *t = shx_json_get(args, "timeout");
    int64_t ms;
    /* any whole number >= 1 that fits int64 (larger ones are clamped) */
    if (t && (shx_json_int64(t, &ms) != SHEXEC_OK || ms < 1))
        return SHEXEC_EINVAL;
    const shx_json *cwd = shx_json_get(args, "cwd");
    if (cwd && !nul_free_string(cwd))
        return SHEXEC_EINVAL;
    const shx_json *env = shx_json_get(args, "env");
    for (size_t i = 0; i < shx_json_count(env); i++) {
        size_t klen;
        const char *k = shx_json_key(env, i, &klen);
        if (!nul_free_string(shx_json_item(env, i)) || memchr(k, '\0', klen) ||
            !shx_env_name_is_identifier(k, klen))
            return SHEXEC_EINVAL;
    }
    /* valid: the run is set up, then the start fails */
    if (cwd) {
        if (cwd->len == 0)
            return SHEXEC_EINVAL;
        size_t cl = strlen(session_cwd);
        char *full = malloc(cl + cwd->len + 2);
        FZ_CHECK(full, "out of memory");
        if (cwd->str[0] == '/')
            full[0] = '\0';
        else
            strcpy(full, session_cwd);
        if (cwd->str[0] != '/' && cl && full[cl - 1] != '/')
            strcat(full, "/");
        strcat(full, cwd->str);
        struct stat st;
        int dir = stat(full, &st) == 0 && S_ISDIR(st.st_mode);
        free(full);
        if (!dir)
            return SHEXEC_ENOCWD;
    }
    return SHEXEC_ESPAWN;
}

static int expect_task(const shx_json *args, int with_new_only)
{
    static const char *const names[] = {"task_id", "new_only"};
    static const shx_json_type types[] = {SHX_JSON_STRING, SHX_JSON_BOOL};
    if (!shx_json_is(args, SHX_JSON_OBJECT) || !only_fields(args, names, with_new_only ? 2 : 1,
                                                           types))
        return SHEXEC_EINVAL;
    if (!nul_free_string(shx_json_get(args, "task_id")))
        return SHEXEC_EINVAL;
    return SHEXEC_ENOTASK; /* no task can exist: none was ever started */
}

/* ------------------------------------------------------------------------
 * Resources
 * ------------------------------------------------------------------------ */

/* The lowest free descriptor: a leaked one would take it. */
static int lowest_free_fd(void)
{
    int fd = fcntl(0, F_DUPFD, 0);
    if (fd < 0) /* stdin closed: 0 itself is free */
        fd = open("/dev/null", O_RDONLY);
    FZ_CHECK(fd >= 0, "cannot probe descriptors");
    close(fd);
    return fd;
}

/*
 * The children of this thread, as the kernel lists them. Not waitpid(-1):
 * the sanitizers keep an llvm-symbolizer child of their own, and reaping
 * it would be wrong too. Empty when /proc is not there.
 */
static void children(char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/children", (long)gettid());
    buf[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
}

/* ------------------------------------------------------------------------ */

static const char *const tool_ids[3] = {"bash", "task_output", "task_kill"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    /* bits 0-1: the tool (3: a name from the input); bits 2-4: 7 disables
     * it, 6 passes NULL arguments; bit 5 renames it, and with bit 4 too
     * the call still uses the old name */
    unsigned flags = fz_u8(&in);
    int tool = (int)(flags & 3);
    int disable = (flags >> 2 & 7) == 7;
    int rename = flags >> 5 & 1, by_old_name = rename && (flags >> 4 & 1);
    int null_args = (flags >> 2 & 7) == 6;

    /* NUL-terminated copies: the API takes C strings */
    char *name = NULL;
    if (tool == 3) {
        size_t k = 0;
        while (k < in.n && in.p[k])
            k++;
        name = strndup((const char *)in.p, k);
        in.p += k < in.n ? k + 1 : k;
        in.n -= k < in.n ? k + 1 : k;
    }
    char *args = strndup((const char *)in.p, in.n);
    FZ_CHECK(args && (tool != 3 || name), "out of memory");

    char kids_before[256], kids_after[256];
    children(kids_before, sizeof kids_before);
    int fd_before = lowest_free_fd();
    shexec_session *s = NULL;
    FZ_CHECK(shexec_session_new(&s) == SHEXEC_OK, "session");
    FZ_CHECK(shexec_session_set_env_inherit(s, 0) == SHEXEC_OK, "env inherit");
    const char *const shell[] = {NO_SUCH_SHELL, NULL};
    FZ_CHECK(shexec_session_set_shell(s, shell, SHEXEC_WRAPPER_LOCAL) == SHEXEC_OK, "shell");
    const char *exposed[3];
    for (int i = 0; i < 3; i++) {
        exposed[i] = tool_ids[i];
        FZ_CHECK(shexec_tool_set_enabled(s, tool_ids[i], 1) == SHEXEC_OK, "enable");
    }
    static const char *const renamed[3] = {"run_shell", "read-task", "stop_task"};
    const char *call = name;
    if (tool < 3) {
        call = tool_ids[tool];
        if (rename) {
            FZ_CHECK(shexec_tool_rename(s, tool_ids[tool], renamed[tool]) == SHEXEC_OK, "rename");
            exposed[tool] = renamed[tool];
            if (!by_old_name)
                call = renamed[tool];
        }
        if (disable)
            FZ_CHECK(shexec_tool_set_enabled(s, exposed[tool], 0) == SHEXEC_OK, "disable");
    }

    /* which tool the name reaches, if any */
    int target = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(call, exposed[i]) == 0)
            target = i;
    int want;
    shx_json *parsed = NULL;
    const char *text = null_args ? "{}" : args;
    if (target < 0 || (disable && tool < 3 && target == tool)) {
        want = SHEXEC_ENOTOOL;
    } else if (shx_json_parse(&parsed, text, strlen(text), NULL, NULL) != SHEXEC_OK) {
        want = SHEXEC_EINVAL;
    } else if (target == 0) {
        want = expect_bash(parsed, shexec_session_cwd(s));
    } else {
        want = expect_task(parsed, target == 1);
    }
    shx_json_free(parsed);

    char *out = (char *)1;
    int rc = shexec_tool_call(&out, s, call, null_args ? NULL : args);

    FZ_CHECK(out != NULL, "no result JSON (rc %d)", rc);
    shx_json *res = NULL;
    shx_buf err = SHX_BUF_INIT;
    FZ_CHECK(shx_json_parse(&res, out, strlen(out), NULL, &err) == SHEXEC_OK,
             "result is not valid JSON: %s\n  %s", err.data, out);
    FZ_CHECK(shx_json_is(res, SHX_JSON_OBJECT), "result is not an object: %s", out);
    const shx_json *e = shx_json_get(res, "error");
    FZ_CHECK(rc != SHEXEC_OK, "a call succeeded without a process: %s", out);
    FZ_CHECK(e && shx_json_count(res) == 1 && shx_json_is(e, SHX_JSON_STRING),
             "rc %d but the result is not {\"error\": string}: %s", rc, out);
    FZ_CHECK(rc == want, "rc %d, want %d: %s", rc, want, out);
    if (rc == SHEXEC_ENOTOOL)
        FZ_CHECK(strncmp(e->str, "Tool not available: ", 20) == 0, "message: %s", e->str);
    if (rc == SHEXEC_ENOTASK)
        FZ_CHECK(strncmp(e->str, "Task not found: ", 16) == 0, "message: %s", e->str);
    /* the same message for the host, rendered as the writer would */
    shx_buf a = SHX_BUF_INIT, b = SHX_BUF_INIT;
    const char *msg = shexec_session_errmsg(s);
    shx_json_put_string(&a, msg, strlen(msg));
    shx_json_write(&b, e);
    FZ_CHECK(fz_mem_eq(a.data, a.len, b.data, b.len), "errmsg %s, result %s", a.data, b.data);
    shx_buf_free(&a);
    shx_buf_free(&b);
    shx_buf_free(&err);
    shx_json_free(res);
    shexec_free(out);
    shexec_session_free(s);

    FZ_CHECK(lowest_free_fd() == fd_before, "a descriptor was left open");
    children(kids_after, sizeof kids_after);
    FZ_CHECK(strcmp(kids_before, kids_after) == 0, "children before: [%s], after: [%s]",
             kids_before, kids_after);
    free(name);
    free(args);
    return 0;
}
