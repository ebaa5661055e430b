/*
 * Writing a set of JSONL files (an export's pair, a sink's flush) as one
 * replacement: every file is written to a temporary file and fsynced before
 * any is renamed, so a failure while writing leaves all the previous files.
 */
#ifndef FDX_JSONL_FILES_H
#define FDX_JSONL_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/*
 * A line source: next() appends one line to the buffer and returns 1, returns
 * 0 at the end, or an fdx error code (negated) with its reason in err.
 */
typedef int (*fdx_line_source)(void *ctx, fdx_buf *line, char *err, size_t errsz);

typedef struct fdx_jsonl_file {
    const char *path;
    fdx_line_source next;
    void *ctx;
    uint64_t lines; /* set on success */
} fdx_jsonl_file;

/*
 * Writes and fsyncs a temporary file for each (sources are drained in order),
 * then renames each over its path in order and fsyncs the directories. Until
 * the first rename any failure removes the temporary files and leaves every
 * target as it was; a failure or a kill between two renames leaves the files
 * renamed so far new and the rest old (err says which).
 */
int fdx_write_jsonl_files(fdx_jsonl_file *files, size_t n, char *err, size_t errsz);

#endif
