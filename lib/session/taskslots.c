/*
 * taskslots.c - what holds a session's task slots, in words (see
 * taskslots.h). Which task holds a slot is task.c's rule; this only
 * lists them, bounded: a few of each kind, each command cut short.
 */
#include "session/taskslots.h"

#include "session/session.h"
#include "session/task.h"

/* How much of a command is quoted, and how many of each kind are listed:
 * the message must fit the tool layer's error (1 KiB). */
#define QUOTE_BYTES 40
#define LIST_MAX 8

/* The start of a command on one line, cut at a character's start. */
static void quote_command(shx_buf *b, const char *cmd, size_t len)
{
    size_t n = len;
    if (n > QUOTE_BYTES) {
        n = QUOTE_BYTES;
        while (n > 0 && ((unsigned char)cmd[n] & 0xC0) == 0x80)
            n--;
    }
    shx_buf_putc(b, '`');
    for (size_t i = 0; i < n; i++) {
        char c = cmd[i];
        if (c == '\n' || c == '\r' || c == '\t')
            c = ' ';
        shx_buf_putc(b, c);
    }
    shx_buf_puts(b, n < len ? "...`" : "`");
}

void shx_task_describe_slots(const shexec_session *s, shx_buf *b)
{
    uint32_t running = 0, finished = 0, reserved = 0;
    for (const shexec_task *t = s->tasks; t; t = t->next) {
        if (shx_task_holds_slot(t) && t->run->state == SHEXEC_STATE_RUNNING)
            running++;
        else if (shx_task_holds_slot(t))
            finished++;
    }
    for (const shexec_run *r = s->runs; r; r = r->next)
        reserved += shx_run_reserves_slot(r) ? 1 : 0;
    shx_buf_printf(b, "the session keeps at most %u background tasks and all are taken: %u "
                   "running", s->max_tasks, running);
    const char *sep = " (";
    uint32_t listed = 0;
    for (const shexec_task *t = s->tasks; t && listed < LIST_MAX; t = t->next) {
        if (!shx_task_holds_slot(t) || t->run->state != SHEXEC_STATE_RUNNING)
            continue;
        shx_buf_printf(b, "%s%s ", sep, t->id[0] ? t->id : "(no id)");
        quote_command(b, t->run->command, t->run->command_len);
        sep = ", ";
        listed++;
    }
    if (listed)
        shx_buf_puts(b, running > listed ? ", ...)" : ")");
    if (finished) {
        shx_buf_printf(b, ", %u finished, their output not yet read", finished);
        sep = " (";
        listed = 0;
        for (const shexec_task *t = s->tasks; t && listed < LIST_MAX; t = t->next) {
            if (!shx_task_holds_slot(t) || t->run->state == SHEXEC_STATE_RUNNING)
                continue;
            shx_buf_printf(b, "%s%s", sep, t->id[0] ? t->id : "(no id)");
            sep = ", ";
            listed++;
        }
        if (listed)
            shx_buf_puts(b, finished > listed ? ", ...)" : ")");
    }
    if (reserved)
        shx_buf_printf(b, ", %u kept for commands started with a yield time that may still "
                       "go on in the background", reserved);
}
