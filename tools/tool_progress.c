/*
 * Progress on stderr for the long runs of ingest, merge and export: one line
 * redrawn in place at most ten times a second, shown only when stderr is a
 * terminal (or --progress asks), never under -q or --no-progress, so that a
 * pipe or a log file gets no carriage returns.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fdx.h"
#include "tool_util.h"

static struct {
    const char *prog;
    const char *what;
    long long last_ms;
    int shown;
} state;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *unit(const char *what)
{
    return strcmp(what, "merge") == 0 ? "cells" : "lines";
}

static void draw(const char *what, uint64_t done, const char *end)
{
    fprintf(stderr, "\r%s: %s: %llu %s%s", state.prog, what, (unsigned long long)done, unit(what),
            end);
    fflush(stderr);
}

static void on_progress(void *ctx, const char *what, uint64_t done)
{
    (void)ctx;
    long long t = now_ms();
    if (state.shown && t - state.last_ms < 100)
        return;
    state.what = what;
    state.last_ms = t;
    state.shown = 1;
    draw(what, done, "");
}

void tool_progress_start(const char *prog, fdx_store *db, const tool_common *co)
{
    int on = co->progress >= 0 ? co->progress : !co->quiet && isatty(STDERR_FILENO);
    state.prog = prog;
    if (on && db)
        fdx_store_set_progress(db, on_progress, NULL);
}

void tool_progress_break(void)
{
    if (state.shown == 1) {
        fputc('\n', stderr);
        state.shown = 2; /* the next draw starts a new line */
    }
}

void tool_progress_end(unsigned long long done)
{
    if (state.shown)
        draw(state.what, done, ", done.\n");
    state.shown = 0;
}
