/* What every fdx command-line program shares: exit codes and messages. */
#ifndef FDX_TOOL_UTIL_H
#define FDX_TOOL_UTIL_H

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* "prog: message\n" on stderr. */
void tool_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the usage error and the hint to run --help; returns EXIT_USAGE. */
int tool_usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tool_version(const char *prog);
/* Parses a non-negative decimal number; 0 on success. */
int tool_parse_size(const char *s, unsigned long long max, unsigned long long *out);

/* Parses the WHEN of option --name (fdx_parse_time); 0, or the usage error
 * naming the accepted forms (EXIT_USAGE). */
int tool_parse_when(const char *prog, const char *name, const char *arg, long long *out);
#define TOOL_WHEN_FORMS                                                                            \
    "YYYY-MM-DD (midnight UTC), an RFC 3339 UTC time such as 2026-10-01T12:00:00Z, or "            \
    "@UNIX_SECONDS"

/* Opens a store for reading (FDX_OPEN_FOR_READING) with a busy timeout;
 * reports a failure. */
struct fdx_store;
int tool_open_for_reading(const char *prog, const char *path, int busy_ms, struct fdx_store **db);

#endif
