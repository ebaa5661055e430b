/* Shared helpers of the fdx command-line programs. */
#include "tool_util.h"

#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdx.h"
#include "tool_text.h"

/*
 * glibc gives each decoding thread a malloc arena of its own, and what is
 * freed there stays resident: with one arena, peak memory on flush-shaped
 * feeds is 3-7 MiB lower, at no measurable cost. Its mmap threshold, left
 * to itself, rises to the size of the largest block freed, so the cells'
 * buffers, freed and grown again at every spill, end up in a heap that
 * never shrinks: a fixed threshold took a 5,000,000-cell ingest from 79 to
 * 57 MiB. SQLite's allocation statistics take a global mutex around every
 * malloc and free, 5% of a large commit, and no tool reads them
 * (docs/PERFORMANCE.md).
 */
/* Standard descriptors closed when the program started (see tool_tune_process). */
static int closed_at_start[3];

/* A standard descriptor closed at start is opened on /dev/null: else the
 * first file opened takes its number, and what is printed to stderr or
 * stdout goes into that file (a rejects file, an export's temporary file). */
static void hold_standard_descriptors(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (got >= 0 && got != fd)
            close(got);
        closed_at_start[fd] = got == fd;
    }
}

int tool_stdin_closed(void)
{
    return closed_at_start[0];
}

/* A signal that ends the program: the library's temporary files go first
 * (a PostgreSQL store's working copy), then the signal does what it would. */
static void end_on_signal(int sig)
{
    fdx_remove_temporary_files();
    raise(sig); /* SA_RESETHAND: its default action once this handler returns */
}

static void remove_temporaries_on_signals(void)
{
    static const int ending[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof ending / sizeof *ending; i++) {
        struct sigaction was, sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = end_on_signal;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        /* one ignored (nohup) stays ignored */
        if (sigaction(ending[i], NULL, &was) == 0 && was.sa_handler != SIG_IGN)
            (void)sigaction(ending[i], &sa, NULL);
    }
}

void tool_tune_process(void)
{
    hold_standard_descriptors();
    remove_temporaries_on_signals();
#ifdef __GLIBC__
    (void)mallopt(M_ARENA_MAX, 1);
    (void)mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); /* fails only after SQLite started */
}

int tool_finish_stdout(const char *prog, int code)
{
    errno = 0;
    int failed = fflush(stdout) != 0 || ferror(stdout);
    if (!failed && closed_at_start[1]) /* what was printed went to /dev/null */
        failed = 1, errno = EBADF;
    if (!failed || code != EXIT_OK)
        return code;
    tool_error(prog, "standard output: %s", errno ? strerror(errno) : "write error");
    return EXIT_FAIL;
}

/* The message to stderr, its control characters shown as escapes: messages
 * quote feeds' text and file names, which could otherwise move the cursor,
 * erase lines or forge "file:line:" rows on a terminal. */
static void put_shown(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *raw = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (raw)
        vsnprintf(raw, (size_t)n + 1, fmt, again);
    va_end(again);
    char *shown = raw ? tool_visible_message(raw) : NULL;
    fputs(shown   ? shown
          : n < 0 ? "(a message that could not be formatted)"
                  : "(out of memory for the message)",
          stderr);
    free(shown);
    free(raw);
}

void tool_say(const char *fmt, ...)
{
    va_list ap;
    tool_progress_break();
    va_start(ap, fmt);
    put_shown(fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void tool_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    tool_progress_break();
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    put_shown(fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int tool_usage_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    tool_progress_break();
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    put_shown(fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help'.\n", prog);
    return EXIT_USAGE;
}

void tool_version(const char *prog)
{
    printf("%s (fdx) %s, wire schema %d\n", prog, FDX_VERSION, FDX_WIRE_SCHEMA);
}

int tool_room(void **v, size_t *room, size_t n, size_t size)
{
    if (n <= *room)
        return 0;
    size_t want = *room + *room / 2 > n ? *room + *room / 2 : n;
    if (want < 16)
        want = 16;
    void *grown = want <= SIZE_MAX / size ? realloc(*v, want * size) : NULL;
    if (!grown)
        return -1;
    *v = grown;
    *room = want;
    return 0;
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

/* getopt's '?': a short option inside a cluster getopt has not left yet
 * (argv[optind] still holds it), a long option given a value it does not
 * take, or an unknown option. */
static int unknown_option(const char *prog, char **argv)
{
    const char *last = argv[optind - 1], *next = argv[optind], *eq = strchr(last, '=');
    int short_opt = optopt > 0 && optopt < 0x100;
    int in_cluster = short_opt && next && next[0] == '-' && next[1] && next[1] != '-' &&
                     strchr(next + 1, optopt);
    if (!in_cluster && strncmp(last, "--", 2) == 0 && eq && optopt)
        return tool_usage_error(prog, "option '%.*s' takes no value", (int)(eq - last), last);
    if (in_cluster || (short_opt && last[0] == '-' && last[1] != '-'))
        return tool_usage_error(prog, "unknown option '-%c'", optopt);
    return tool_usage_error(prog, "unknown option '%s'", last);
}

int tool_common_option(const char *prog, int c, char **argv, tool_common *co)
{
    switch (c) {
    case 'q': co->quiet = 1; return 0;
    case TOOL_OPT_PROGRESS: co->progress = 1; return 0;
    case TOOL_OPT_NO_PROGRESS: co->progress = 0; return 0;
    case ':': return tool_usage_error(prog, "option '%s' needs a value", argv[optind - 1]);
    case '?': return unknown_option(prog, argv);
    default: return -1;
    }
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_run_dir(const char *path)
{
    struct stat st;
    char name[4096];
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    snprintf(name, sizeof name, "%s/misses.jsonl", path);
    if (stat(name, &st) == 0)
        return 1;
    snprintf(name, sizeof name, "%s/dispatches.jsonl", path);
    return stat(name, &st) == 0;
}

int tool_check_nonempty(const char *prog, char *const *paths, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (!*paths[i])
            return tool_usage_error(prog, "%s is empty", what);
    return 0;
}

int tool_once(const char *prog, int given, const char *name, const char *why)
{
    return given ? tool_usage_error(prog, "--%s given twice: %s", name,
                                    why ? why : "it takes one value")
                 : 0;
}

int tool_set_once(const char *prog, const char **slot, const char *name, const char *value,
                  const char *why)
{
    int rc = tool_once(prog, *slot != NULL, name, why);
    if (rc == 0)
        *slot = value;
    return rc;
}

int tool_value_once(const char *prog, const struct option *longs, int c, const char *own,
                    unsigned char seen[256])
{
    if (c <= 0 || c > 255 || strchr(own, c))
        return 0;
    for (const struct option *o = longs; o->name; o++) {
        if (o->val != c || o->has_arg != required_argument)
            continue;
        int rc = tool_once(prog, seen[c], o->name, NULL);
        seen[c] = 1;
        return rc;
    }
    return 0;
}

int tool_check_store_arg(const char *prog, const char *path, const char *usage)
{
    if (!*path)
        return tool_usage_error(prog, "the store's path is empty");
    const char *what = strcmp(path, "-") == 0      ? "standard input"
                       : ends_with(path, ".jsonl") ? "a feed (.jsonl)"
                       : is_run_dir(path)          ? "a run directory"
                                                   : NULL;
    if (!what && fdx_fd_is_store_file(STDOUT_FILENO, path))
        return tool_usage_error(prog,
                                "standard output is the store %s or one of its files, which "
                                "the output would be written into: redirect it elsewhere",
                                path);
    if (!what)
        return 0;
    return tool_usage_error(prog, "'%s' is %s, not a store (usage: %s %s)", path, what, prog,
                            usage);
}

int tool_parse_when(const char *prog, const char *name, const char *arg, long long *out)
{
    int64_t v;
    if (fdx_parse_time(arg, &v) != FDX_OK)
        return tool_usage_error(prog, "--%s: expected %s; got '%s'", name, TOOL_WHEN_FORMS, arg);
    *out = (long long)v;
    return 0;
}
