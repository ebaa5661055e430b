/* Shared helpers of the fdx command-line programs. */
#include "tool_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fdx.h"

void tool_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int tool_usage_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help'.\n", prog);
    return EXIT_USAGE;
}

void tool_version(const char *prog)
{
    printf("%s (fdx) %s, wire schema %d\n", prog, FDX_VERSION, FDX_WIRE_SCHEMA);
}

int tool_parse_size(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

int tool_open_for_reading(const char *prog, const char *path, int busy_ms, fdx_store **db)
{
    int rc = fdx_store_open_v2(path, FDX_OPEN_FOR_READING, busy_ms, db);
    if (rc != FDX_OK)
        tool_error(prog, "%s", fdx_store_errmsg(*db));
    return rc;
}

int tool_parse_when(const char *prog, const char *name, const char *arg, long long *out)
{
    int64_t v;
    if (fdx_parse_time(arg, &v) != FDX_OK)
        return tool_usage_error(prog, "--%s: expected %s; got '%s'", name, TOOL_WHEN_FORMS, arg);
    *out = (long long)v;
    return 0;
}
