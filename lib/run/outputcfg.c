/*
 * outputcfg.c - the notice's place, the spill directory and redaction, as a
 * session and a run are set (the public calls of OUTPUT FOR MODELS in
 * shexec.h; output/ does the work, through output_hook.h, and stream.h
 * puts it on a run's streams when it starts).
 */
#include "output/output_hook.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "shx/platform.h"
#include "run/run.h"
#include "session/session.h"

SHEXEC_API int shexec_session_set_notice_position(shexec_session *s, int where)
{
    if (!s)
        return SHEXEC_EINVAL;
    if (where != SHEXEC_NOTICE_LAST && where != SHEXEC_NOTICE_FIRST)
        return shx_fail(s, SHEXEC_EINVAL, "unknown notice position %d", where);
    shx_ok(s);
    s->notice_first = where == SHEXEC_NOTICE_FIRST;
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_notice_position(const shexec_session *s)
{
    return s && s->notice_first ? SHEXEC_NOTICE_FIRST : SHEXEC_NOTICE_LAST;
}

/* OUTPUT=0: asking for a filter fails; turning one off is done already. */
static int no_filters(shexec_session *s)
{
    return shx_fail(s, SHEXEC_ESYS, "this build has no output filters (OUTPUT=0): "
                    "no redaction and no spill");
}

/* The session lets go of its directory: runs still going hold it until
 * they end, and make no file there (output_hook.h). */
static void spill_off(shexec_session *s)
{
    if (s->spill) {
        shx_spill_dir_release(s->spill);
        s->spill = NULL;
    }
}

SHEXEC_API int shexec_session_set_spill_dir(shexec_session *s, const char *dir, uint64_t file_max,
                                            uint64_t total_max, unsigned flags)
{
    if (!s)
        return SHEXEC_EINVAL;
    if (flags & ~(unsigned)SHEXEC_SPILL_KEEP_FILES)
        return shx_fail(s, SHEXEC_EINVAL, "unknown spill flags 0x%x", flags);
    if (!dir) {
        shx_ok(s);
        spill_off(s);
        return SHEXEC_OK;
    }
    if (!SHX_WITH_OUTPUT)
        return no_filters(s);
    if (dir[0] != '/')
        return shx_fail(s, SHEXEC_EINVAL, "the spill directory must be an absolute path");
    if (!file_max)
        file_max = SHEXEC_DEFAULT_SPILL_FILE_MAX;
    if (!total_max)
        total_max = SHEXEC_DEFAULT_SPILL_TOTAL_MAX;
    if (file_max > total_max)
        return shx_fail(s, SHEXEC_EINVAL, "a spill file's cap (%llu bytes) is above the total "
                        "(%llu bytes)", (unsigned long long)file_max,
                        (unsigned long long)total_max);
    mode_t mode;
    if (shx_path_mode(dir, &mode) != 0 || !S_ISDIR(mode))
        return shx_fail(s, SHEXEC_EINVAL, "the spill directory %s is not a directory", dir);
    shx_spill_dir *d = shx_spill_dir_new(dir, file_max, total_max,
                                         (flags & SHEXEC_SPILL_KEEP_FILES) != 0);
    if (!d)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    shx_ok(s);
    spill_off(s);
    s->spill = d;
    return SHEXEC_OK;
}

SHEXEC_API const char *shexec_session_spill_dir(const shexec_session *s)
{
    return s && s->spill ? s->spill->path : NULL;
}


/* A value fit to be hidden under a name fit for a marker. */
static int check_value(shexec_session *s, const char *name, const void *value, size_t len)
{
    if (!shx_redact_name_valid(name))
        return shx_fail(s, SHEXEC_EINVAL, "a redaction name is 1 to %d letters, digits or '_'",
                        SHX_REDACT_NAME_MAX);
    if (!value || len < SHX_REDACT_VALUE_MIN || len > SHX_REDACT_VALUE_MAX)
        return shx_fail(s, SHEXEC_EINVAL, "a redacted value is %d to %d bytes",
                        SHX_REDACT_VALUE_MIN, SHX_REDACT_VALUE_MAX);
    return SHEXEC_OK;
}

static int add_value(shexec_session *s, shx_secrets *l, const char *name, const void *value,
                     size_t len)
{
    int rc = check_value(s, name, value, len);
    if (rc != SHEXEC_OK)
        return rc;
    if (l->n >= SHX_REDACT_MAX_VALUES)
        return shx_fail(s, SHEXEC_ELIMIT, "at most %d redacted values", SHX_REDACT_MAX_VALUES);
    if (shx_secrets_add(l, name, value, len) != 0)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    shx_ok(s);
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_redact_value(shexec_session *s, const char *name, const void *value,
                                           size_t len)
{
    if (!s)
        return SHEXEC_EINVAL;
    return SHX_WITH_OUTPUT ? add_value(s, &s->redact.values, name, value, len) : no_filters(s);
}

SHEXEC_API int shexec_session_redact_env(shexec_session *s, const char *const *globs, size_t n)
{
    if (!s)
        return SHEXEC_EINVAL;
    for (size_t i = 0; globs && i < n; i++)
        if (!globs[i] || !globs[i][0])
            return shx_fail(s, SHEXEC_EINVAL, "an empty glob");
    if (!SHX_WITH_OUTPUT && !(globs && n == 0))
        return no_filters(s);
    if (SHX_WITH_OUTPUT && shx_redact_cfg_set_globs(&s->redact, globs, globs ? n : 0) != 0)
        return shx_fail(s, SHEXEC_ENOMEM, "out of memory");
    shx_ok(s);
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_redact_shapes(shexec_session *s, unsigned which)
{
    if (!s)
        return SHEXEC_EINVAL;
    if (which & ~(unsigned)(SHEXEC_REDACT_KEY_SHAPES | SHEXEC_REDACT_PRIVATE_KEYS))
        return shx_fail(s, SHEXEC_EINVAL, "unknown redaction shapes 0x%x", which);
    if (!SHX_WITH_OUTPUT && which)
        return no_filters(s);
    shx_ok(s);
    s->redact.shapes = ((which & SHEXEC_REDACT_KEY_SHAPES) ? SHX_KEYSCAN_TOKENS : 0) |
                       ((which & SHEXEC_REDACT_PRIVATE_KEYS) ? SHX_KEYSCAN_PEM : 0);
    return SHEXEC_OK;
}

SHEXEC_API int shexec_session_redact_clear(shexec_session *s)
{
    if (!s)
        return SHEXEC_EINVAL;
    shx_ok(s);
    shx_redact_cfg_free(&s->redact);
    return SHEXEC_OK;
}

SHEXEC_API int shexec_run_redact_value(shexec_run *run, const char *name, const void *value,
                                       size_t len)
{
    int rc = shx_run_configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    return SHX_WITH_OUTPUT ? add_value(run->s, &run->redact_values, name, value, len)
                           : no_filters(run->s);
}

SHEXEC_API int shexec_run_redact_own_env(shexec_run *run, int on)
{
    int rc = shx_run_configurable(run);
    if (rc != SHEXEC_OK)
        return rc;
    if (!SHX_WITH_OUTPUT && on)
        return no_filters(run->s);
    run->redact_own_env = on != 0;
    return SHEXEC_OK;
}
