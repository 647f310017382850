/*
 * testhook.c - the internals the test suites may see (see testhook.h).
 */
#include "testhook.h"

#include <string.h>

#include "shx/platform.h"
#include "spawn/clone3.h"
#include "spawn/forkexec.h"
#include "shell/script.h"
#include "session/session.h"
#include "contain/contain_hook.h"
#include "run/run.h"
#include "session/task.h"
#include "shx/procfs.h"
#include "loop/walk.h"

void shx_test_use_pidfd(shexec_session *s, int on)
{
    s->loop.jobs.use_pidfd = on && shx_pidfd_compiled() ? 1 : 0;
}

int shx_test_uses_pidfd(const shexec_session *s)
{
    return s->loop.jobs.use_pidfd;
}

int shx_test_run_pidfd(const shexec_run *r)
{
    return r->job.proc.pidfd;
}

void shx_test_clone_pidfd(int on)
{
    shx_forkexec_test_clone_pidfd(on);
}

void shx_test_clone_into_cgroup(int on)
{
    shx_clone3_test_enable(on);
}

unsigned long long shx_test_run_start(const shexec_run *r)
{
    return r->job.proc.start;
}

int shx_test_run_fd(const shexec_run *r, int stream)
{
    if (stream == 0)
        return r->report.fd;
    return stream == SHEXEC_STDOUT ? r->job.out.fd : r->job.err.fd;
}

uint64_t shx_test_output_spins(const shexec_session *s)
{
    return s->loop.output_spins;
}

int shx_test_run_listed(const shexec_run *r)
{
    return r->record.has_decl || r->record.has_env;
}

const char *shx_test_sentinel_tag(const shexec_session *s)
{
    return s->tag;
}

const char *shx_test_wrapper_script(shexec_session *s)
{
    char hex[17];
    memcpy(hex, s->tag + strlen("__SHEXEC_CWD_"), 16);
    hex[16] = '\0';
    int remote = s->wrapper_kind != SHEXEC_WRAPPER_LOCAL;
    shx_script_opts o = {.mode = remote ? SHX_LAUNCH_REMOTE
                                 : s->shell_bash ? SHX_LAUNCH_BASH_ENV : SHX_LAUNCH_POSIX,
                         .channel_fd = SHX_CHANNEL_FD, .hex = hex};
    shx_buf_clear(&s->test_script);
    if (shx_script_prelude(&s->test_script, &o) != 0 || shx_script_line(&s->test_script, &o) != 0)
        return "";
    return s->test_script.data ? s->test_script.data : "";
}

size_t shx_test_runs(const shexec_session *s)
{
    size_t n = 0;
    for (const shexec_run *r = s->runs; r; r = r->next)
        n++;
    return n;
}

size_t shx_test_tasks(const shexec_session *s)
{
    size_t n = 0;
    for (const shexec_task *t = s->tasks; t; t = t->next)
        n++;
    return n;
}

size_t shx_test_active(const shexec_session *s)
{
    size_t n = 0;
    for (const shx_job *j = s->loop.active; j; j = j->next_active)
        n++;
    return n;
}

unsigned shx_test_platform(void)
{
    return shx_platform_features() | (SHX_WITH_WATCHDOG ? SHX_PLATFORM_WATCHDOG : 0) |
           (SHX_WITH_PERSIST ? SHX_PLATFORM_PERSIST : 0) | (SHX_WITH_OUTPUT ? SHX_PLATFORM_OUTPUT : 0);
}

int64_t shx_test_watchdog_pid(const shexec_session *s)
{
    return shx_watchdog_pid(s->watchdog);
}

void shx_test_watchdog_claim(shexec_session *s, int64_t pgid, uint64_t start)
{
    shx_watchdog_claim(s->watchdog, pgid, start);
}

void shx_test_watchdog_pause(uint32_t ms)
{
    shx_watchdog_test_pause(ms);
}

uint64_t shx_test_start_time(int64_t pid)
{
    return shx_watchdog_start_time(pid);
}

unsigned long shx_test_procfs_reads(void)
{
    return shx_procfs_test_reads();
}

unsigned long shx_test_reaper_listings(void)
{
    return shx_walk_test_listings();
}

int shx_test_signal_default(int64_t pid, int64_t pgid, int sig)
{
    return shx_procfs_signal_default((pid_t)pid, (pid_t)pgid, sig);
}

void shx_test_procfs_children(int on)
{
    shx_procfs_test_children(on);
}
