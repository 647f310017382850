/*
 * none.c - the tool layer's public calls (shexec_tool.h) in a build without
 * it (TOOLS=0: the Makefile builds this file instead of the rest of tool/).
 * Every build exports the same symbols, as with the other switches, whose
 * setters stay and fail: here each call fails with SHEXEC_ESYS, saying so
 * in the session's message where it has a session, and nothing is handed
 * out (shexec_free() still frees).
 */
#include <stdlib.h>

#include "shx/base.h"
#include "shexec_tool.h"

#define WHY "this build of the library has no tool layer (TOOLS=0)"

/* SHEXEC_ESYS with the session's message; SHEXEC_EINVAL without a session. */
static int refused(shexec_session *s)
{
    return s ? shx_fail(s, SHEXEC_ESYS, WHY) : SHEXEC_EINVAL;
}

SHEXEC_API int shexec_tool_set_enabled(shexec_session *s, const char *name, int enabled)
{
    (void)name, (void)enabled;
    return refused(s);
}

SHEXEC_API int shexec_tool_is_enabled(shexec_session *s, const char *name)
{
    (void)s, (void)name;
    return 0;
}

SHEXEC_API int shexec_tool_rename(shexec_session *s, const char *name, const char *new_name)
{
    (void)name, (void)new_name;
    return refused(s);
}

SHEXEC_API int shexec_tool_list(char **out_json, shexec_session *s)
{
    if (out_json)
        *out_json = NULL;
    return refused(s);
}

SHEXEC_API int shexec_tool_call(char **out_json, shexec_session *s, const char *name,
                                const char *args_json)
{
    (void)name, (void)args_json;
    if (out_json)
        *out_json = NULL;
    return refused(s);
}

SHEXEC_API int shexec_tool_prepare(shexec_run **out_run, int *out_background, shexec_session *s,
                                   const char *name, const char *args_json)
{
    (void)name, (void)args_json;
    if (out_run)
        *out_run = NULL;
    if (out_background)
        *out_background = 0;
    return refused(s);
}

SHEXEC_API int shexec_tool_result(char **out_json, shexec_run *run)
{
    (void)run;
    if (out_json)
        *out_json = NULL;
    return SHEXEC_ESYS;
}

SHEXEC_API int shexec_tool_task_result(char **out_json, shexec_task *t, const char *status,
                                       const char *out, size_t out_len, const char *err,
                                       size_t err_len)
{
    (void)t, (void)status, (void)out, (void)out_len, (void)err, (void)err_len;
    if (out_json)
        *out_json = NULL;
    return SHEXEC_ESYS;
}

SHEXEC_API void shexec_free(void *p)
{
    free(p);
}
