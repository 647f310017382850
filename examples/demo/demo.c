/*
 * demo.c - a short agent-like session through libshexec, printed as a
 * transcript: cwd tracking, streamed output, exit codes, stderr, a timeout,
 * truncation, a command that leaves a process running (adopted as a task),
 * a background task read while it runs, a question answered, and the
 * session's directory removed under it (the next command starts in the
 * nearest existing ancestor, and the run's notice says so).
 * Uses only the public API (include/shexec.h).
 */
#include <shexec.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double started;

/* Streamed output: show each chunk as it arrives, with its time. */
static void stream_to_terminal(void *user, int stream, const char *data, size_t len)
{
    (void)user;
    printf("  %5.2fs %s| %.*s", now_s() - started, stream == SHEXEC_STDOUT ? "out" : "err",
           (int)len, data);
    if (len && data[len - 1] != '\n')
        printf("\n");
    fflush(stdout);
}

static const char *state_name(int state)
{
    switch (state) {
    case SHEXEC_STATE_EXITED: return "exited";
    case SHEXEC_STATE_SIGNALED: return "killed by a signal";
    case SHEXEC_STATE_TIMED_OUT: return "TIMED OUT";
    case SHEXEC_STATE_CANCELLED: return "cancelled";
    case SHEXEC_STATE_KILLED: return "killed";
    default: return "?";
    }
}

static void print_block(const char *label, const char *text, size_t len)
{
    if (!len)
        return;
    printf("  %s:\n", label);
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        printf("    %.*s\n", (int)n, p);
        p += n + (nl ? 1 : 0);
    }
}

/* Run one command; stream it live or print its captured result. */
static void step(shexec_session *s, const char *note, const char *cmd, uint32_t timeout_ms,
                 int stream)
{
    printf("\n# %s\n$ %s\n", note, cmd);
    shexec_run *r = NULL;
    if (shexec_run_new(&r, s, cmd) != SHEXEC_OK) {
        printf("  error: %s\n", shexec_session_errmsg(s));
        return;
    }
    if (timeout_ms)
        shexec_run_set_timeout_ms(r, timeout_ms);
    if (stream)
        shexec_run_set_output_fn(r, stream_to_terminal, NULL);
    started = now_s();
    int rc = shexec_run_exec(r);
    if (rc != SHEXEC_OK) {
        printf("  error %d (%s): %s\n", rc, shexec_strerror(rc), shexec_session_errmsg(s));
        shexec_run_free(r);
        return;
    }
    if (!stream) {
        size_t n;
        const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
        print_block("stdout", out, n);
        out = shexec_run_output(r, SHEXEC_STDERR, &n);
        print_block("stderr", out, n);
    }
    printf("  [%s", state_name(shexec_run_state(r)));
    if (shexec_run_exit_code(r) >= 0)
        printf(", exit %d", shexec_run_exit_code(r));
    if (shexec_run_signal(r))
        printf(", signal %d", shexec_run_signal(r));
    printf(", %llu ms, cwd %s]\n", (unsigned long long)shexec_run_duration_ms(r),
           shexec_session_cwd(s));
    /* what the library declined or changed for this run, in words */
    if (*shexec_run_notice(r))
        printf("  notice: %s\n", shexec_run_notice(r));
    shexec_run_free(r);
}

int main(void)
{
    shexec_session *s = NULL;
    int rc = shexec_session_new(&s);
    if (rc != SHEXEC_OK) {
        fprintf(stderr, "shexec_session_new: %s\n", shexec_strerror(rc));
        return 1;
    }
    printf("libshexec %s demo: one session, like an agent's terminal\n", shexec_version());

    step(s, "where are we?", "pwd", 0, 0);
    step(s, "cd persists across commands (the shell reports its directory apart from the output)",
         "mkdir -p /tmp/shexec-demo && cd /tmp/shexec-demo && printf 'alpha\\nbeta\\n' > notes.txt",
         0, 0);
    step(s, "the next command starts where the last one left off", "pwd; ls; wc -l notes.txt", 0,
         0);
    step(s, "output is streamed while the command runs",
         "for i in 1 2 3; do echo \"step $i\"; sleep 0.3; done; echo done >&2", 0, 1);
    step(s, "a non-zero exit is data, not an error", "grep gamma notes.txt", 0, 0);
    step(s, "stderr is kept apart", "ls /nonexistent", 0, 0);
    step(s, "a timeout: SIGTERM to the whole process group, output so far kept",
         "echo starting; sleep 30; echo never printed", 1000, 0);

    shexec_session_set_output_limit(s, 60, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD_TAIL);
    step(s, "a flood is bounded (limit set to 60 characters, head and tail kept)",
         "seq 1 100000", 0, 0);
    /* what a model cannot read is kept on disk, and the notice names the file */
    shexec_session_set_output_limit(s, 60, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD);
    shexec_session_set_spill_dir(s, "/tmp", 0, 0, 0);
    step(s, "with a spill directory the whole stream is also kept in a file the notice names",
         "seq 1 100000", 0, 0);
    shexec_session_set_spill_dir(s, NULL, 0, 0, 0); /* and removed again */
    shexec_session_set_output_limit(s, SHEXEC_DEFAULT_OUTPUT_LIMIT, SHEXEC_UNIT_CHARS,
                                    SHEXEC_KEEP_HEAD);

    /* a secret the host knows never reaches the output, however it is printed */
    shexec_session_redact_value(s, "DEMO_TOKEN", "hunter2-s3cret", 14);
    shexec_session_redact_shapes(s, SHEXEC_REDACT_KEY_SHAPES);
    step(s, "secrets are hidden: a registered value, split across two writes, and a key-shaped word",
         "echo token=hunter2-s3cret; printf 'hunter2-'; sleep 0.1; echo s3cret; "
         "echo ghp_0123456789abcdefghijklmnopqrstuvwxyz",
         0, 0);
    shexec_session_redact_clear(s);

    /* a command that leaves a server running returns at once; the server
     * becomes a background task of the session */
    printf("\n# a command that leaves a server running returns at once\n"
           "$ sleep 30 & echo \"server started as $!\"\n");
    shexec_run *r = NULL;
    shexec_run_new(&r, s, "sleep 30 & echo \"server started as $!\"");
    shexec_run_exec(r);
    const char *left;
    shexec_run_leftovers(r, &left);
    printf("  stdout: %s", shexec_run_output(r, SHEXEC_STDOUT, NULL));
    printf("  [exited, exit %d, %llu ms; the server was adopted as task %s]\n",
           shexec_run_exit_code(r), (unsigned long long)shexec_run_duration_ms(r),
           left ? left : "(none)");
    shexec_task *server = NULL;
    shexec_session_take_task(&server, s, left);
    shexec_run_free(r);

    /* a background task: start, read what is new, read again */
    printf("\n# a background task: read its output while it runs\n"
           "$ for i in 1 2 3 4; do echo tick $i; sleep 0.25; done   (in the background)\n");
    shexec_task *bg = NULL;
    shexec_run *bg_run = NULL;
    shexec_run_new(&bg_run, s, "for i in 1 2 3 4; do echo tick $i; sleep 0.25; done");
    if (shexec_run_start_task(&bg, bg_run) != SHEXEC_OK) {
        printf("  error: %s\n", shexec_session_errmsg(s));
        shexec_run_free(bg_run); /* not started: still ours */
        shexec_session_free(s);
        return 1;
    }
    bg_run = shexec_task_run(bg); /* the task's now: state and results are read here */
    printf("  started task %s, state running\n", shexec_task_id(bg));
    for (int round = 1; shexec_run_state(bg_run) <= SHEXEC_STATE_RUNNING; round++) {
        shexec_session_wait(s, 400); /* the host would do other work here */
        size_t n;
        const char *fresh = shexec_task_read(bg, SHEXEC_STDOUT, &n);
        char label[32];
        snprintf(label, sizeof label, "read %d", round);
        if (n)
            print_block(label, fresh, n);
        else
            printf("  %s: nothing new\n", label);
    }
    printf("  [task %s %s, exit %d]\n", shexec_task_id(bg), state_name(shexec_run_state(bg_run)),
           shexec_run_exit_code(bg_run));
    shexec_task_free(bg);

    /* a command that asks a question: the call comes back with the prompt
     * instead of hanging until the timeout; the answer finishes it */
    printf("\n# a command that waits for input comes back with its prompt\n"
           "$ read -p 'Name: ' n; echo hello $n   (on a terminal, yield after 10 s at most)\n");
    shexec_session_set_input_look_ms(s, 500);
    shexec_run *ask = NULL;
    shexec_run_new(&ask, s, "read -p 'Name: ' n; echo hello $n");
    shexec_run_set_pty(ask, SHEXEC_PTY_ON);
    shexec_run_set_yield_ms(ask, 10000);
    shexec_run_exec(ask);
    const char *prompt = NULL, *ask_id = NULL;
    size_t plen = 0;
    int waiting = shexec_run_input_wait(ask, &prompt, &plen, NULL);
    if (shexec_run_yielded(ask, &ask_id) && waiting == SHEXEC_INPUT_WAITING) {
        printf("  [waiting for input after %llu ms, prompt \"%.*s\"; task %s]\n",
               (unsigned long long)shexec_run_duration_ms(ask), (int)plen, prompt, ask_id);
        printf("  answer: Ada\n");
        shexec_run_write(ask, "Ada\n", 4);
        while (shexec_run_state(ask) <= SHEXEC_STATE_RUNNING)
            shexec_session_wait(s, 1000);
    }
    printf("  stdout: %s", shexec_run_output(ask, SHEXEC_STDOUT, NULL));
    printf("  [%s, exit %d]\n", state_name(shexec_run_state(ask)), shexec_run_exit_code(ask));
    shexec_run_free(ask);

    if (server) {
        printf("\n# kill the adopted server (SIGTERM to its process group)\n");
        shexec_run_cancel(shexec_task_run(server));
        shexec_run *server_run = shexec_task_run(server);
        while (shexec_run_state(server_run) <= SHEXEC_STATE_RUNNING)
            shexec_session_wait(s, 1000);
        printf("  [task %s %s]\n", shexec_task_id(server), state_name(shexec_run_state(server_run)));
        shexec_task_free(server);
    }
    step(s, "clean up from inside the directory", "rm -rf /tmp/shexec-demo", 0, 0);
    step(s, "the cwd is gone: the next command starts in its nearest existing ancestor, and "
            "the session moves there",
         "pwd", 0, 0);

    shexec_session_free(s);
    return 0;
}
