/*
 * poll_host.c - a host with its own event loop that drives a libshexec
 * session from inside it.
 *
 * What it shows: ONE poll() call per round watches the host's own descriptor
 * (stdin, where commands arrive) together with every descriptor the session
 * needs (shexec_session_pollfds), sleeps no longer than the session's
 * deadline, then hands the results to shexec_session_process(). No thread,
 * no second loop, no shexec_session_wait(): background tasks stream their
 * output while the host is idle waiting for its next input line.
 *
 * Commands, one per line on stdin:
 *   run CMD...   start CMD as a background task; prints "[ID started] CMD"
 *   input ID TEXT  write TEXT and a newline to a task's stdin (a pipe)
 *   close ID     close a task's stdin (end of input)
 *   kill ID      terminate a task (SIGTERM to its process group, then SIGKILL)
 *   list         every task started so far, with its state
 *   wait         read no more input until every running task has finished
 * Output lines of a task are printed as "[ID out] line" / "[ID err] line",
 * its end as "[ID done] exit N" (or killed, timed out, signal N). A task
 * found waiting for input (blocked reading its stdin after a silence) is
 * announced as "[ID input] waiting: PROMPT", its last unfinished line.
 * At the end of input the host finishes the running tasks (or, with
 * --kill-on-eof, kills them), frees everything and exits 0.
 *
 * The transcript has no timestamps so that a test can compare it.
 * Uses only the public API (include/shexec.h).
 *
 *   printf 'run for i in 1 2 3; do echo $i; sleep 0.1; done\nrun echo hi\n' | ./poll_host
 */
#include <shexec.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * A partial line is held back until its newline arrives, so that lines of
 * different tasks never mix on one transcript line. A line longer than this
 * is printed in pieces: the host's memory must not depend on what a command
 * prints.
 */
#define LINE_MAX_HELD 8192

struct held_line {
    char data[LINE_MAX_HELD];
    size_t len;
};

struct host;

struct host_task {
    struct host *h;
    shexec_task *task;
    char *command;
    struct held_line held[2]; /* [0] stdout, [1] stderr */
    struct host_task *next;
};

struct host {
    shexec_session *s;
    struct host_task *first, *last; /* in start order, for `list` */
    int running;                    /* counted by us: done callbacks decrement it */
    int waiting;                    /* a `wait` is in effect */
    int kill_on_eof;
    int input_eof;   /* stdin reached its end (or failed) */
    int eof_handled; /* the end of input has been acted on */
    char *in;        /* stdin bytes not yet consumed as lines */
    size_t in_len, in_cap;
};

static const char *state_name(int state)
{
    switch (state) {
    case SHEXEC_STATE_NEW: return "new";
    case SHEXEC_STATE_RUNNING: return "running";
    case SHEXEC_STATE_EXITED: return "exited";
    case SHEXEC_STATE_SIGNALED: return "signaled";
    case SHEXEC_STATE_TIMED_OUT: return "timed out";
    case SHEXEC_STATE_CANCELLED: return "cancelled";
    case SHEXEC_STATE_KILLED: return "killed";
    default: return "unknown";
    }
}

/* "exit 3", "signal 9", "killed", "running": one vocabulary for done and list. */
static void describe(shexec_task *t, char *buf, size_t size)
{
    const shexec_run *r = shexec_task_run(t); /* how a task ended is its run's */
    int state = shexec_run_state(r);
    if (state == SHEXEC_STATE_EXITED)
        snprintf(buf, size, "exit %d", shexec_run_exit_code(r));
    else if (state == SHEXEC_STATE_SIGNALED)
        snprintf(buf, size, "signal %d", shexec_run_signal(r));
    else
        snprintf(buf, size, "%s", state_name(state));
}

static void print_line(struct host_task *ht, int index, const char *data, size_t len)
{
    /* fwrite, not %.*s: command output may contain NUL bytes */
    printf("[%s %s] ", shexec_task_id(ht->task), index ? "err" : "out");
    fwrite(data, 1, len, stdout);
    putchar('\n');
}

static void flush_held(struct host_task *ht, int index)
{
    struct held_line *hl = &ht->held[index];
    if (hl->len > 0)
        print_line(ht, index, hl->data, hl->len);
    hl->len = 0;
}

/* Chunks split output anywhere; reassemble lines per task and per stream. */
static void on_output(void *user, int stream, const char *data, size_t len)
{
    struct host_task *ht = user;
    int index = stream == SHEXEC_STDERR;
    struct held_line *hl = &ht->held[index];
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t part = nl ? (size_t)(nl - data) : len;
        if (hl->len == 0 && nl) {
            print_line(ht, index, data, part); /* the common case: no copy */
        } else {
            size_t room = LINE_MAX_HELD - hl->len;
            size_t take = part < room ? part : room;
            memcpy(hl->data + hl->len, data, take);
            hl->len += take;
            if (nl || hl->len == LINE_MAX_HELD)
                flush_held(ht, index);
            /* cppcheck-suppress knownConditionTrueFalse ; room < part when the held line is long */
            if (take < part) { /* the line goes on past the held size */
                data += take;
                len -= take;
                continue;
            }
        }
        data += part + (nl ? 1 : 0);
        len -= part + (nl ? 1 : 0);
    }
}

static void on_done(void *user, shexec_task *t)
{
    struct host_task *ht = user;
    /* output without a final newline is still output: show it */
    flush_held(ht, 0);
    flush_held(ht, 1);
    char how[64];
    describe(t, how, sizeof how);
    printf("[%s done] %s\n", shexec_task_id(t), how);
    ht->h->running--;
}

/* The library found the task blocked reading its stdin: ask the person. */
static void on_input(void *user, shexec_run *run)
{
    struct host_task *ht = user;
    const char *prompt;
    size_t len;
    shexec_run_input_wait(run, &prompt, &len, NULL);
    printf("[%s input] waiting: ", shexec_task_id(ht->task));
    fwrite(prompt ? prompt : "", 1, prompt ? len : 0, stdout);
    putchar('\n');
}

static void usage_hint(const char *line)
{
    fprintf(stderr, "unknown command: %s\n"
                    "commands: run CMD... | input ID TEXT | close ID | kill ID | list | wait\n",
            line);
}

static void cmd_run(struct host *h, const char *command)
{
    struct host_task *ht = calloc(1, sizeof *ht);
    char *copy = strdup(command);
    if (!ht || !copy) {
        fprintf(stderr, "run: out of memory\n");
        free(ht);
        free(copy);
        return;
    }
    ht->h = h;
    ht->command = copy;
    shexec_run *r = NULL;
    shexec_task *t = NULL;
    int rc = shexec_run_new(&r, h->s, command);
    /* we stream through the callback, so the library need keep no copy */
    if (rc == SHEXEC_OK)
        rc = shexec_run_set_output_limit(r, 0, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD);
    if (rc == SHEXEC_OK)
        rc = shexec_run_set_output_fn(r, on_output, ht);
    /* its stdin is a pipe this host writes (`input`), watched for a wait */
    if (rc == SHEXEC_OK)
        rc = shexec_run_set_stdin(r, 1);
    if (rc == SHEXEC_OK)
        rc = shexec_run_set_input_fn(r, on_input, ht);
    if (rc == SHEXEC_OK)
        rc = shexec_run_start_task(&t, r);
    /* the done callback is set once the task exists; callbacks only run when
     * the loop is pumped, so the end cannot be missed in between */
    if (rc == SHEXEC_OK)
        rc = shexec_task_set_done_fn(t, on_done, ht);
    if (rc != SHEXEC_OK) {
        /* the message belongs to the session and the next call may replace it */
        const char *msg = shexec_session_errmsg(h->s);
        fprintf(stderr, "run: %s\n", *msg ? msg : shexec_strerror(rc));
        if (t)
            shexec_task_free(t); /* started: freeing stops it; the run goes with it */
        else
            shexec_run_free(r); /* not started: the run is still ours */
        free(copy);
        free(ht);
        return;
    }
    ht->task = t;
    if (h->last)
        h->last->next = ht;
    else
        h->first = ht;
    h->last = ht;
    h->running++;
    printf("[%s started] %s\n", shexec_task_id(t), command);
}

static void cmd_kill(struct host *h, const char *id)
{
    shexec_task *t = NULL;
    if (shexec_session_take_task(&t, h->s, id) != SHEXEC_OK) {
        fprintf(stderr, "kill: %s\n", shexec_session_errmsg(h->s));
        return;
    }
    if (shexec_run_state(shexec_task_run(t)) > SHEXEC_STATE_RUNNING) {
        /* the library would accept this silently; a person typing it wants to know */
        char how[64];
        describe(t, how, sizeof how);
        fprintf(stderr, "kill: task %s has already finished (%s)\n", id, how);
        return;
    }
    if (shexec_run_cancel(shexec_task_run(t)) != SHEXEC_OK) {
        fprintf(stderr, "kill: %s\n", shexec_session_errmsg(h->s));
        return;
    }
    /* it ends as the loop is pumped; the done callback reports "killed" */
    printf("[%s killing]\n", id);
}

/* `input ID TEXT` (text non-NULL) or `close ID`. */
static void cmd_input(struct host *h, char *id, const char *text)
{
    shexec_task *t = NULL;
    if (shexec_session_take_task(&t, h->s, id) != SHEXEC_OK) {
        fprintf(stderr, "%s: %s\n", text ? "input" : "close", shexec_session_errmsg(h->s));
        return;
    }
    shexec_run *r = shexec_task_run(t);
    int rc = SHEXEC_OK;
    if (text) {
        /* the line in one write: past the bound on queued input it is
         * refused whole (SHEXEC_ELIMIT), never left without its newline */
        size_t n = strlen(text) + 1;
        char *line = malloc(n + 1);
        if (line)
            (void)snprintf(line, n + 1, "%s\n", text);
        rc = line ? shexec_run_write(r, line, n) : SHEXEC_ENOMEM;
        free(line);
    } else {
        rc = shexec_run_close_stdin(r);
    }
    if (rc != SHEXEC_OK)
        fprintf(stderr, "%s: %s\n", text ? "input" : "close", shexec_session_errmsg(h->s));
}

static void cmd_list(struct host *h)
{
    if (!h->first)
        printf("[list] no tasks\n");
    for (struct host_task *ht = h->first; ht; ht = ht->next) {
        char how[64];
        describe(ht->task, how, sizeof how);
        printf("[list] %s %s: %s\n", shexec_task_id(ht->task), how, ht->command);
    }
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Words are matched whole: "running" is not "run" with an argument. */
static const char *word_arg(const char *line, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(line, word, n) != 0 || (line[n] && !is_space(line[n])))
        return NULL;
    line += n;
    while (is_space(*line))
        line++;
    return line;
}

/* `line` is NUL-terminated and may be modified. */
static void handle_line(struct host *h, char *line)
{
    while (is_space(*line))
        line++;
    size_t n = strlen(line);
    while (n > 0 && is_space(line[n - 1]))
        line[--n] = '\0';
    if (n == 0)
        return;
    const char *arg;
    if ((arg = word_arg(line, "run")) && *arg) {
        cmd_run(h, arg);
    } else if ((arg = word_arg(line, "input")) && *arg && strpbrk(arg, " \t")) {
        char *id = (char *)arg, *text = strpbrk(id, " \t");
        *text++ = '\0';
        while (is_space(*text))
            text++;
        cmd_input(h, id, text);
    } else if ((arg = word_arg(line, "close")) && *arg && !strpbrk(arg, " \t")) {
        cmd_input(h, (char *)arg, NULL);
    } else if ((arg = word_arg(line, "kill")) && *arg && !strpbrk(arg, " \t")) {
        cmd_kill(h, arg);
    } else if ((arg = word_arg(line, "list")) && !*arg) {
        cmd_list(h);
    } else if ((arg = word_arg(line, "wait")) && !*arg) {
        h->waiting = 1; /* lifted by the main loop once nothing runs */
    } else {
        usage_hint(line);
    }
}

/*
 * Consume complete lines, but stop at a `wait`: lines typed after it must
 * not run before the tasks it waits for have ended.
 */
static void handle_input(struct host *h)
{
    size_t pos = 0;
    while (!h->waiting && pos < h->in_len) {
        char *start = h->in + pos;
        char *nl = memchr(start, '\n', h->in_len - pos);
        if (!nl && !h->input_eof)
            break; /* the rest of this line has not arrived yet */
        size_t len = nl ? (size_t)(nl - start) : h->in_len - pos;
        start[len] = '\0'; /* the buffer keeps a spare byte for this */
        pos += len + (nl ? 1 : 0);
        handle_line(h, start);
    }
    if (pos > 0) {
        memmove(h->in, h->in + pos, h->in_len - pos);
        h->in_len -= pos;
    }
}

/* One read per readable event: poll said it will not block. */
static int read_stdin(struct host *h)
{
    if (h->in_cap - h->in_len < 4096 + 1) {
        size_t cap = h->in_cap ? h->in_cap * 2 : 8192;
        char *p = realloc(h->in, cap);
        if (!p) {
            fprintf(stderr, "poll_host: out of memory\n");
            return -1;
        }
        h->in = p;
        h->in_cap = cap;
    }
    ssize_t got = read(STDIN_FILENO, h->in + h->in_len, h->in_cap - h->in_len - 1);
    if (got > 0)
        h->in_len += (size_t)got;
    else if (got == 0)
        h->input_eof = 1;
    else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
        /* an unreadable stdin ends the input like EOF: tasks still finish */
        fprintf(stderr, "poll_host: reading stdin: %s\n", strerror(errno));
        h->input_eof = 1;
    }
    return 0;
}

static void kill_all(struct host *h)
{
    for (struct host_task *ht = h->first; ht; ht = ht->next)
        if (shexec_run_state(shexec_task_run(ht->task)) <= SHEXEC_STATE_RUNNING &&
            shexec_run_cancel(shexec_task_run(ht->task)) == SHEXEC_OK)
            printf("[%s killing]\n", shexec_task_id(ht->task));
}

static int pump(struct host *h)
{
    /* fds[0] is ours; the session's entries follow, so they are one slice */
    struct pollfd *fds = NULL;
    uint32_t cap = 0;
    int status = 0;

    for (;;) {
        handle_input(h);
        if (h->waiting && h->running == 0) {
            h->waiting = 0;
            printf("[wait] no task running\n");
            continue; /* lines held back by the wait can run now */
        }
        if (h->input_eof && h->in_len == 0 && !h->waiting && !h->eof_handled) {
            h->eof_handled = 1;
            if (h->kill_on_eof)
                kill_all(h);
        }
        if (h->eof_handled && h->running == 0)
            break;

        int32_t timeout_ms = -1;
        int n = shexec_session_pollfds(cap > 0 ? fds + 1 : NULL, cap > 0 ? cap - 1 : 0,
                                       &timeout_ms, h->s);
        if (n < 0) {
            fprintf(stderr, "poll_host: %s\n", shexec_session_errmsg(h->s));
            status = 1;
            break;
        }
        if (cap == 0 || (uint32_t)n > cap - 1) {
            /* the set grows with every task; ask again with room for all of it */
            uint32_t want = (uint32_t)n + 1 + 8;
            struct pollfd *bigger = realloc(fds, want * sizeof *fds);
            if (!bigger) {
                fprintf(stderr, "poll_host: out of memory\n");
                status = 1;
                break;
            }
            fds = bigger;
            cap = want;
            continue;
        }
        int want_input = !h->input_eof && !h->waiting;
        /* a negative fd keeps the slot but poll() skips it */
        fds[0] = (struct pollfd){.fd = want_input ? STDIN_FILENO : -1, .events = POLLIN};
        if (!want_input && n == 0 && timeout_ms < 0) {
            /* tasks run but the library names nothing to wait on: poll would
             * sleep forever, so say so instead of hanging */
            fprintf(stderr, "poll_host: %d task(s) running but nothing to wait for\n",
                    h->running);
            status = 1;
            break;
        }
        int got = poll(fds, (nfds_t)n + 1, timeout_ms);
        if (got < 0 && errno != EINTR) {
            fprintf(stderr, "poll_host: poll: %s\n", strerror(errno));
            status = 1;
            break;
        }
        if (got < 0)
            continue; /* the session's deadlines are absolute: next round recomputes them */
        /* also when nothing is ready: the timeout may be a kill or check
         * deadline, and process() is what enforces deadlines (it returns how
         * many tasks finished; done callbacks have counted them already) */
        if (shexec_session_process(h->s, fds + 1, (uint32_t)n) < 0) {
            fprintf(stderr, "poll_host: %s\n", shexec_session_errmsg(h->s));
            status = 1;
            break;
        }
        if (fds[0].revents && read_stdin(h) != 0) {
            status = 1;
            break;
        }
    }
    free(fds);
    return status;
}

int main(int argc, char **argv)
{
    struct host h;
    memset(&h, 0, sizeof h);
    int redact = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--kill-on-eof") == 0) {
            h.kill_on_eof = 1;
        } else if (strcmp(argv[i], "--redact") == 0) {
            redact = 1;
        } else {
            fprintf(stderr, "usage: %s [--kill-on-eof] [--redact] < commands\n", argv[0]);
            return 2;
        }
    }
    /* a reader on the other end of a pipe sees each event as it happens */
    setvbuf(stdout, NULL, _IOLBF, 0);

    int rc = shexec_session_new(&h.s);
    if (rc != SHEXEC_OK) {
        fprintf(stderr, "poll_host: cannot create a session: %s\n", shexec_strerror(rc));
        return 1;
    }
    /* --redact: what the tasks print hides the environment's secrets (the
     * values of *TOKEN*, *KEY*, ... variables) and key-shaped words: the
     * callbacks, which is all this host reads, get [REDACTED:NAME] */
    if (redact && (shexec_session_redact_env(h.s, NULL, 0) != SHEXEC_OK ||
                   shexec_session_redact_shapes(h.s, SHEXEC_REDACT_KEY_SHAPES |
                                                         SHEXEC_REDACT_PRIVATE_KEYS) != SHEXEC_OK)) {
        fprintf(stderr, "poll_host: --redact: %s\n", shexec_session_errmsg(h.s));
        shexec_session_free(h.s);
        return 1;
    }
    int status = pump(&h);

    /* after an error tasks may still run: freeing them terminates and reaps them */
    for (struct host_task *ht = h.first, *next; ht; ht = next) {
        next = ht->next;
        shexec_task_free(ht->task);
        free(ht->command);
        free(ht);
    }
    shexec_session_free(h.s);
    free(h.in);
    return status;
}
