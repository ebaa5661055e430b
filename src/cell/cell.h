/*
 * The canonical form of a cell's identity, shared by the aggregator, the
 * store's upserts and both exporters so they agree byte for byte.
 *
 * Strings are (pointer, length) views, never NUL-terminated. dtypes_json is
 * the dtypes array as compact JSON exactly as exported, which is also the
 * form the export order compares.
 */
#ifndef FDX_CELL_H
#define FDX_CELL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "fdx.h"

typedef struct fdx_str {
    const char *p;
    size_t n;
} fdx_str;

/* The view of a C string. */
static inline fdx_str fdx_cstr(const char *s)
{
    fdx_str v = {s, strlen(s)};
    return v;
}

typedef enum fdx_kind { FDX_KIND_MISS = 0, FDX_KIND_DISPATCH = 1 } fdx_kind;

#define FDX_CC_ABSENT (-1)
/* Stored revision hashes have this bit flipped, so SQLite's signed order is
 * their unsigned order (see sql/schema_1.sql). */
#define FDX_HASH_FLIP (UINT64_C(1) << 63)
/* Longest string a record field may hold: the most SQLite stores in one text
 * by default (SQLITE_MAX_LENGTH), so that a feed's line is refused at its
 * line rather than at the commit. Lengths are 32-bit wherever a key is taken
 * apart (spill records, the aggregator's slots). */
#define FDX_MAX_STRING 1000000000u

typedef struct fdx_cell {
    fdx_kind kind;
    int keyed;     /* misses: always 1; dispatches: 0 when unkeyed */
    fdx_str token; /* wanted, or structure_key ("" when unkeyed) */
    fdx_str backend;
    fdx_str op;
    fdx_str dtypes_json;
    fdx_str kernel_source;
    uint64_t revision;
    int64_t cc_major; /* FDX_CC_ABSENT for a stamp without one */
    int64_t cc_minor;
    fdx_str sku;
    fdx_str driver;
} fdx_cell;

/* Serialises the identity into one byte string (the aggregator's key). */
void fdx_cell_pack(const fdx_cell *cell, fdx_buf *out);
/* Inverse of fdx_cell_pack; the views point into key. */
void fdx_cell_unpack(fdx_cell *cell, const char *key, size_t len);

/* The empty candidates list, as stored: what a miss and a dispatch without
 * candidates carry. */
#define FDX_NO_CANDS ((fdx_str){"[]", 2})

/* A stored candidates list is empty when it is "[]" (or not there at all). */
static inline int fdx_cands_empty(fdx_str cands)
{
    return cands.n == 0 || (cands.n == 2 && cands.p[0] == '[' && cands.p[1] == ']');
}

/* Raw byte order, shorter first on a common prefix (memcmp, like SQLite's BINARY). */
int fdx_str_compare(fdx_str a, fdx_str b);
/* The export order of docs/FORMAT.md ("The export"), both cells of one kind. */
int fdx_cell_compare(const fdx_cell *a, const fdx_cell *b);

#endif
