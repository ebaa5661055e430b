/*
 * libFuzzer target: the one-pass check of stored dtypes and candidates texts
 * (codec/canon.h) against what it replaces, the round trip of the cell's line
 * (decode it, encode it again, compare the bytes). The first byte picks where
 * the rest of the input goes: 0 a dispatch's candidates, 1 a dispatch's
 * dtypes, 2 a miss's dtypes, 3 both of a dispatch (dtypes up to the first
 * newline, candidates after it); every other field of the cell is valid.
 * "Canonical" must mean that the round trip accepts the cell, "not
 * canonical" that it refuses it, and "don't know" is kept for texts longer
 * than any store holds. The same row, read from a statement by
 * fdx_row_read as export and merge read it, must be accepted exactly when
 * the round trip accepts it, with the same line.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/canon.h"
#include "fdx.h"
#include "store/row.h"
#include "store/store_internal.h"

static void fail(const char *what, const char *detail, const uint8_t *data, size_t size)
{
    fprintf(stderr, "%s: %s\ninput (%zu bytes): %.*s\n", what, detail, size, (int)size,
            (const char *)data);
    abort();
}

/* The columns of the export queries (sql/miss_export.sql, sql/dispatch_export.sql),
 * with the texts as ?1 and ?2. */
static const char *const queries[2] = {
    "SELECT 'w', 'cuda', 'mm', ?1, 'triton', 5, 8, 0, 'H100', '560.35', 7",
    "SELECT 1, 'k', 'cuda', 'mm', ?1, 'triton', 5, -1, -1, 'H100', '560.35', ?2, 7",
};

typedef struct target {
    fdx_store *db;
    sqlite3_stmt *st[2];
    fdx_row_reader trip[2], read[2];
} target;

static target *setup(void)
{
    static target t;
    if (t.db)
        return &t;
    if (fdx_store_open(":memory:", FDX_OPEN_CREATE, &t.db) != FDX_OK)
        fail("open", fdx_store_errmsg(t.db), NULL, 0);
    for (int k = 0; k < 2; k++)
        if (sqlite3_prepare_v2(t.db->db, queries[k], -1, &t.st[k], NULL) != SQLITE_OK ||
            fdx_row_reader_init(&t.trip[k], t.db, (fdx_kind)k) != FDX_OK ||
            fdx_row_reader_init(&t.read[k], t.db, (fdx_kind)k) != FDX_OK)
            fail("setup", sqlite3_errmsg(t.db->db), NULL, 0);
    return &t;
}

/* The cell the query gives, with the texts in place. */
static fdx_cell cell_of(fdx_kind kind, fdx_str dtypes)
{
    fdx_cell c = {kind,
                  1,
                  fdx_cstr(kind == FDX_KIND_MISS ? "w" : "k"),
                  fdx_cstr("cuda"),
                  fdx_cstr("mm"),
                  dtypes,
                  fdx_cstr("triton"),
                  (uint64_t)5 ^ FDX_HASH_FLIP,
                  kind == FDX_KIND_MISS ? 8 : FDX_CC_ABSENT,
                  kind == FDX_KIND_MISS ? 0 : FDX_CC_ABSENT,
                  fdx_cstr("H100"),
                  fdx_cstr("560.35")};
    return c;
}

static fdx_canon both(fdx_canon a, fdx_canon b)
{
    if (a == FDX_CANON_NO || b == FDX_CANON_NO)
        return FDX_CANON_NO;
    return a == FDX_CANON_YES && b == FDX_CANON_YES ? FDX_CANON_YES : FDX_CANON_UNSURE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    target *t = setup();
    int mode = data[0] & 3;
    fdx_kind kind = mode == 2 ? FDX_KIND_MISS : FDX_KIND_DISPATCH;
    fdx_str text = {(const char *)data + 1, size - 1}, dtypes = {"[\"f32\"]", 7},
            cands = FDX_NO_CANDS;
    if (mode == 0)
        cands = text;
    else if (mode == 1 || mode == 2)
        dtypes = text;
    else {
        const char *nl = memchr(text.p, '\n', text.n);
        dtypes.p = text.p;
        dtypes.n = nl ? (size_t)(nl - text.p) : text.n;
        cands.p = nl ? nl + 1 : text.p + text.n;
        cands.n = text.n - dtypes.n - (nl != NULL);
    }

    fdx_canon verdict =
        both(fdx_canon_dtypes(dtypes.p, dtypes.n), fdx_canon_candidates(cands.p, cands.n));
    if (verdict == FDX_CANON_UNSURE)
        fail("don't know", "for a text a store can hold", data, size);

    fdx_cell cell = cell_of(kind, dtypes);
    const char *field;
    char err[512] = "";
    int rc = fdx_row_round_trip(&t->trip[kind], &cell, 7, cands, &field, err, sizeof err);
    if (rc == FDX_ENOMEM)
        return 0;
    if (rc == FDX_OK && verdict == FDX_CANON_NO)
        fail("not canonical, but the round trip accepts it", t->trip[kind].line.data, data, size);
    if (rc != FDX_OK && verdict == FDX_CANON_YES)
        fail("canonical, but the round trip refuses it", field ? field : err, data, size);

    sqlite3_stmt *st = t->st[kind];
    fdx_row row;
    if (sqlite3_bind_text(st, 1, dtypes.p, (int)dtypes.n, SQLITE_STATIC) != SQLITE_OK ||
        (kind == FDX_KIND_DISPATCH &&
         sqlite3_bind_text(st, 2, cands.p, (int)cands.n, SQLITE_STATIC) != SQLITE_OK) ||
        sqlite3_step(st) != SQLITE_ROW)
        fail("query", sqlite3_errmsg(t->db->db), data, size);
    fdx_row_reader_restart(&t->read[kind]); /* each input is a query of one row */
    int read = fdx_row_read(&t->read[kind], st, &row);
    if (read != FDX_ENOMEM && (read == FDX_OK) != (rc == FDX_OK))
        fail("fdx_row_read and the round trip disagree", fdx_store_errmsg(t->db), data, size);
    if (read == FDX_OK && (row.line.n != t->trip[kind].line.len ||
                           memcmp(row.line.p, t->trip[kind].line.data, row.line.n) != 0))
        fail("fdx_row_read writes another line", row.line.p, data, size);
    sqlite3_reset(st);
    return 0;
}
