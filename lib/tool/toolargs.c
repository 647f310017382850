/*
 * toolargs.c - a tool call's arguments checked, and the error a model reads
 * (see toolargs.h). Arguments come from a model and are never trusted.
 */
#include "tool/toolargs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shx/base.h"

int shx_tool_error(shexec_session *s, int code, char **out, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof msg, fmt, ap); /* a long message is cut, not lost */
    va_end(ap);
    shx_buf b = SHX_BUF_INIT;
    shx_buf_puts(&b, "{\"error\":");
    shx_json_put_string(&b, msg, strlen(msg));
    shx_buf_putc(&b, '}');
    *out = shx_buf_steal(&b, NULL);
    shx_fail(s, code, "%s", msg);
    return *out ? code : SHEXEC_ENOMEM;
}

int shx_tool_check_fields(shexec_session *s, const shx_json *args, const shx_tool_field *fields,
                          size_t n, char **out)
{
    if (!shx_json_is(args, SHX_JSON_OBJECT))
        return shx_tool_error(s, SHEXEC_EINVAL, out, "arguments must be a JSON object");
    for (size_t i = 0; i < shx_json_count(args); i++) {
        size_t klen;
        const char *key = shx_json_key(args, i, &klen);
        const shx_json *v = shx_json_item(args, i);
        size_t f;
        for (f = 0; f < n; f++)
            if (strlen(fields[f].name) == klen && memcmp(fields[f].name, key, klen) == 0)
                break;
        if (f == n) { /* named with the ones there are: "cmd" is meant as "command" */
            shx_buf known = SHX_BUF_INIT;
            for (f = 0; f < n; f++) {
                shx_buf_puts(&known, f ? ", " : "");
                shx_buf_puts(&known, fields[f].name);
            }
            int rc = shx_tool_error(s, SHEXEC_EINVAL, out,
                                  "unknown argument \"%.*s\" (the arguments are: %s)",
                                  (int)(klen > 64 ? 64 : klen), key, known.data ? known.data : "");
            shx_buf_free(&known);
            return rc;
        }
        if (!shx_json_is(v, fields[f].type)) {
            static const char *const tn[] = {"null", "boolean", "number", "string", "array",
                                             "object"};
            return shx_tool_error(s, SHEXEC_EINVAL, out, "argument \"%s\" must be a %s",
                                fields[f].name, tn[fields[f].type]);
        }
    }
    return SHEXEC_OK;
}

int shx_tool_string_arg(shexec_session *s, const shx_json *v, const char *what, const char **str,
                        char **out)
{
    size_t len;
    *str = shx_json_string(v, &len);
    if (memchr(*str, '\0', len))
        return shx_tool_error(s, SHEXEC_EINVAL, out, "argument \"%s\" contains a NUL character",
                            what);
    return SHEXEC_OK;
}

int shx_tool_required_string(shexec_session *s, const shx_json *args, const char *name,
                             const char **str, char **out)
{
    const shx_json *v = shx_json_get(args, name);
    if (!v)
        return shx_tool_error(s, SHEXEC_EINVAL, out, "missing required argument \"%s\"", name);
    return shx_tool_string_arg(s, v, name, str, out);
}

void shx_tool_put_output(shx_buf *b, const char *key, const char *data, size_t len)
{
    shx_buf_putc(b, ',');
    shx_json_put_string(b, key, strlen(key));
    shx_buf_putc(b, ':');
    shx_json_put_string(b, data, len);
}

int shx_tool_ms_arg(shexec_session *s, const shx_json *args, const char *name, int64_t min,
                    int64_t max, int64_t *ms, char **out)
{
    const shx_json *v = shx_json_get(args, name);
    int64_t value;
    if (!v)
        return SHEXEC_OK;
    if (shx_json_int64(v, &value) != SHEXEC_OK || value < min)
        return shx_tool_error(s, SHEXEC_EINVAL, out,
                              "argument \"%s\" must be a whole number of milliseconds >= %lld",
                              name, (long long)min);
    *ms = value > max ? max : value; /* clamped like any large value */
    return SHEXEC_OK;
}

