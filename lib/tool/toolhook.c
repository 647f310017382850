/*
 * toolhook.c - the tool layer's door into the internals (see toolhook.h for
 * what passes through it and why): small reads and the session-owned task
 * rules, each a few lines over the handles' layouts.
 */
#include "tool/toolhook.h"

#include "session/session.h"
#include "run/run.h"
#include "session/task.h"
#include "loop/loop.h"
#include "session/taskslots.h"
#include "session/watch.h"

void shx_hook_settings(const shexec_session *s, shx_tool_settings *out)
{
    out->default_timeout_ms = s->default_timeout_ms;
    out->max_timeout_ms = s->max_timeout_ms;
    out->limit = s->limit;
    out->unit = s->unit;
    out->max_tasks = s->max_tasks;
    out->persist_env = s->persist != NULL;
    size_t n = 0;
    while (s->shell_argv && s->shell_argv[n])
        n++;
    out->shell = n ? s->shell_argv[n - 1] : s->default_shell;
    out->shell_bash = s->shell_bash;
    out->in_callback = s->loop.in_loop;
}

void **shx_hook_tools(shexec_session *s, void (*free_fn)(void *))
{
    s->tools_free = free_fn;
    return &s->tools;
}

shexec_session *shx_hook_run_session(const shexec_run *run, int *is_task)
{
    *is_task = run->task != NULL;
    return run->s;
}

void shx_hook_run_hold(shexec_run *run, int hold)
{
    if (hold)
        run->held++;
    else
        run->held--;
}

int shx_hook_run_wait(shexec_session *s, shexec_run *run, int64_t ms, int64_t quiet_ms)
{
    if (s->loop.in_loop)
        return SHEXEC_WATCH_TIME;
    int why = shx_run_watch(run, quiet_ms * 1000000, ms * 1000000);
    return why < 0 ? SHEXEC_WATCH_TIME : why;
}

int shx_hook_task_room(shexec_session *s, shx_buf *why)
{
    if (shx_task_room(s))
        return 1;
    shx_task_describe_slots(s, why);
    return 0;
}

void shx_hook_run_reserve_slot(shexec_run *run)
{
    run->reserves_slot = 1;
}

int shx_hook_task_is_last_read(const shexec_task *t, int stream, const char *data)
{
    const shx_buf *b = &t->read_out[stream == SHEXEC_STDOUT ? 0 : 1];
    return b->data && data == b->data;
}

shexec_task *shx_hook_task_lookup(shexec_session *s, const char *id, int *released)
{
    shexec_task *t = shx_task_find(s, id);
    *released = !t && shx_task_was_released(s, id);
    return t;
}

void shx_hook_task_disown(shexec_task *t)
{
    t->host_held = 0;
}

void shx_hook_task_spent(shexec_task *t)
{
    if (t->host_held)
        t->withdrawn = 1;
    else
        shexec_task_free(t);
}
