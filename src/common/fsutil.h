/* Small filesystem helpers shared by the exporters. */
#ifndef FDX_FSUTIL_H
#define FDX_FSUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* mkdir -p; fails when path exists and is not a directory. */
int fdx_mkdirs(const char *path, char *err, size_t errsz);
/* "dir/name", malloc'd; NULL when memory runs out. */
char *fdx_path_join(const char *dir, const char *name);

/*
 * Writes a JSONL file atomically from a line source: next() appends one line
 * to the buffer and returns 1, returns 0 at the end, or an fdx error code
 * (negated) with its reason in err.
 */
typedef int (*fdx_line_source)(void *ctx, fdx_buf *line, char *err, size_t errsz);
int fdx_write_jsonl(const char *path, fdx_line_source next, void *ctx, uint64_t *lines, char *err,
                    size_t errsz);

#endif
