/* What every fdx command-line program shares: exit codes, messages and the
 * options every program takes the same way. */
#ifndef FDX_TOOL_UTIL_H
#define FDX_TOOL_UTIL_H

#include <getopt.h>
#include <stddef.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* "prog: message\n" on stderr. */
void tool_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line to stderr (the progress line broken first), its control
 * characters shown as escapes, as tool_error writes its message. */
void tool_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The exit code of a run that would end with code: a run that would succeed
 * fails (EXIT_FAIL, said) when what it wrote to stdout could not all be
 * written, so that a script reading it never takes a cut output for the
 * whole. */
int tool_finish_stdout(const char *prog, int code);
/* Prints the usage error and the hint to run --help; returns EXIT_USAGE. */
int tool_usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tool_version(const char *prog);
/* Process-wide settings a library must not choose for the program that
 * embeds it, and standard descriptors closed at start opened on /dev/null;
 * first thing in main. */
void tool_tune_process(void);
/* 1 when standard input was closed at start (it reads as empty since). */
int tool_stdin_closed(void);
/* Makes room for n items of size bytes in *v (*room of them now), growing
 * it by half again at least; 0 on success, -1 (*v kept) when memory runs
 * out. One item at a time, a realloc each costs quadratic time wherever
 * realloc copies (sanitizers, other C libraries). The programs' own of the
 * library's fdx_grow, which fdx.h does not declare. */
int tool_room(void **v, size_t *room, size_t n, size_t size);
/* Parses a non-negative decimal number; 0 on success. */
int tool_parse_size(const char *s, unsigned long long max, unsigned long long *out);

/* Options shared by the programs, with getopt_long values beyond any char.
 * Option strings start with ':' so that a missing value is told apart. */
enum { TOOL_OPT_PROGRESS = 0x100, TOOL_OPT_NO_PROGRESS };
#define TOOL_QUIET_LONG                                                                            \
    {                                                                                              \
        "quiet", no_argument, NULL, 'q'                                                            \
    }
#define TOOL_PROGRESS_LONGS                                                                        \
    {"progress", no_argument, NULL, TOOL_OPT_PROGRESS},                                            \
    {                                                                                              \
        "no-progress", no_argument, NULL, TOOL_OPT_NO_PROGRESS                                     \
    }

typedef struct tool_common {
    int quiet;
    int progress; /* -1: when stderr is a terminal and not quiet; 0 never; 1 always */
} tool_common;
#define TOOL_COMMON_INIT                                                                           \
    {                                                                                              \
        0, -1                                                                                      \
    }

/* Takes getopt_long's c when it is a shared option (0) or a bad one (the
 * usage error, EXIT_USAGE, reported: a missing value or an unknown option);
 * -1 when c is the caller's own. */
int tool_common_option(const char *prog, int c, char **argv, tool_common *co);

/* Refuses, as a usage error naming the usage, a store argument that is a
 * feed (a .jsonl file, a run directory, "-"): the arguments were swapped.
 * 0 when it may be a store. */
int tool_check_store_arg(const char *prog, const char *path, const char *usage);
/* Sets *slot to value, or refuses (a usage error, nonzero) an option given
 * twice: a second --op or --run-id would silently replace the first. why
 * ends the message (NULL: "it takes one value"). */
/* Refuses (a usage error, nonzero) an empty one of n paths: "WHAT is empty". */
int tool_check_nonempty(const char *prog, char *const *paths, int n, const char *what);
/* A usage error (nonzero) when option --name was given already; why says
 * why it takes one value (NULL: "it takes one value"). */
int tool_once(const char *prog, int given, const char *name, const char *why);
/* tool_once of *slot, which it then sets to value. */
int tool_set_once(const char *prog, const char **slot, const char *name, const char *value,
                  const char *why);
/* Refuses (a usage error, nonzero) the second value of any option of longs
 * that takes one, for getopt_long's c, so that no value silently replaces
 * another. seen marks the options given so far (zeroed by the caller, room
 * for every option character). Options in own are left to the program,
 * which refuses a repeat with a reason of its own. */
int tool_value_once(const char *prog, const struct option *longs, int c, const char *own,
                    unsigned char seen[256]);

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

/* Shows the store's progress on stderr (tool_progress.c) when co asks for it;
 * tool_progress_end ends the line it drew with the final count. */
void tool_progress_start(const char *prog, struct fdx_store *db, const tool_common *co);
void tool_progress_end(unsigned long long done);
/* Ends the progress line, if one is drawn, before a message. */
void tool_progress_break(void);

#endif
