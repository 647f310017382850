/*
 * toolargs.h - a tool call's arguments, as a model sends them: checked
 * strictly (only the listed fields, each of its type; strings without NUL;
 * whole milliseconds in range), and the {"error": ...} result a model reads
 * when they are wrong. Shared by the bash tool (tool.c) and the task tools
 * (tooltask.c).
 */
#ifndef SHX_TOOLARGS_H
#define SHX_TOOLARGS_H

#include <stdint.h>

#include "shx/buf.h"
#include "shx/json.h"
#include "shexec.h"

typedef struct shx_tool_field {
    const char *name;
    shx_json_type type;
} shx_tool_field;

/* {"error": message} into *out (malloc'd), the message also the session's;
 * returns code (SHEXEC_ENOMEM when *out could not be made). */
int shx_tool_error(shexec_session *s, int code, char **out, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Refuse anything but the n listed fields with their types. */
int shx_tool_check_fields(shexec_session *s, const shx_json *args, const shx_tool_field *fields,
                          size_t n, char **out);
/* A string argument (v) as a C string; NUL inside is refused. */
int shx_tool_string_arg(shexec_session *s, const shx_json *v, const char *what, const char **str,
                        char **out);
/* The required string argument `name`. */
int shx_tool_required_string(shexec_session *s, const shx_json *args, const char *name,
                             const char **str, char **out);
/* The optional argument `name`: whole milliseconds from min to max (*ms
 * unchanged when absent). */
int shx_tool_ms_arg(shexec_session *s, const shx_json *args, const char *name, int64_t min,
                    int64_t max, int64_t *ms, char **out);
/* ,"key":"data" into b. */
void shx_tool_put_output(shx_buf *b, const char *key, const char *data, size_t len);

#endif
