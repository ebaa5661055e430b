/*
 * Reading cells back out of a store, checked (row.c).
 */
#ifndef FDX_STORE_ROW_H
#define FDX_STORE_ROW_H

#include <string.h>

#include "store/store_internal.h"

/*
 * Reading cells from a store, each checked as strictly as a feed line (row.c).
 * The rows are those of the export and merge-read queries, in export order.
 */
struct fdx_decoder;
typedef struct fdx_row_reader {
    fdx_store *s;
    const char *path; /* the store its messages name: s's, unless it reads another attached */
    fdx_kind kind;
    struct fdx_decoder *dec;
    fdx_buf line, dtypes, cands; /* scratch */
    uint64_t rows;
    fdx_buf prev; /* the packed key of the row before: each follows it */
} fdx_row_reader;
typedef struct fdx_row {
    fdx_cell cell;
    fdx_str cands;
    uint64_t count;
    int has_set_at; /* merge reads: candidates_set_at is not NULL */
    int64_t set_at;
    fdx_str line; /* the export line, '\n' included */
} fdx_row;
/* The columns of one row, as a statement holds them or as a copy of them
 * holds them (store/row_stream.h): each column's SQLite type, its value when
 * that is SQLITE_INTEGER, its bytes when that is SQLITE_TEXT. */
enum { FDX_ROW_MAX_COLUMNS = 16 };
typedef struct fdx_row_cols {
    int n;
    int type[FDX_ROW_MAX_COLUMNS];
    int64_t i64[FDX_ROW_MAX_COLUMNS];
    fdx_str text[FDX_ROW_MAX_COLUMNS];
} fdx_row_cols;
/* st's current row (its first FDX_ROW_MAX_COLUMNS columns), valid until st
 * steps again: SQLITE_OK, or SQLITE_NOMEM when SQLite had no memory for a
 * text (which then reads as ""). */
int fdx_row_cols_of(sqlite3_stmt *st, fdx_row_cols *cols);
int fdx_row_reader_init(fdx_row_reader *r, fdx_store *s, fdx_kind kind);
/* Column i's text, or NULL when it holds another type or a U+0000 (which
 * the C string would cut short: "id\0forged" would read as "id"). */
static inline const char *fdx_row_text_or_null(sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) != SQLITE_TEXT)
        return NULL;
    const char *text = (const char *)sqlite3_column_text(st, i);
    return text && strlen(text) == (size_t)sqlite3_column_bytes(st, i) ? text : NULL;
}
void fdx_row_reader_free(fdx_row_reader *r);
/* The current row of st, valid until the next call; FDX_EDATA (with the
 * file, the table, the cell and what is wrong) for a row fdx would not write,
 * or for one that does not come after the row before it: a reader serves one
 * pass of a query in export order. */
int fdx_row_read(fdx_row_reader *r, sqlite3_stmt *st, fdx_row *row);
/* The same, of a row's columns: *row points into cols's text. */
int fdx_row_read_cols(fdx_row_reader *r, const fdx_row_cols *cols, fdx_row *row);
/* Starts another pass: the next row read follows no row before it. */
void fdx_row_reader_restart(fdx_row_reader *r);
/* Writes the cell's export line into r->line, decodes it and checks that it
 * gives back exactly the cell, count and candidates: FDX_OK, FDX_ENOMEM, or
 * FDX_EDATA with the field it does not give back in *field, or with *field
 * NULL and the decoder's reason in err when it does not decode. What
 * fdx_row_read does with a dtypes or candidates text not known to be in the
 * encoder's spelling. */
int fdx_row_round_trip(fdx_row_reader *r, const fdx_cell *cell, uint64_t count, fdx_str cands,
                       const char **field, char *err, size_t errsz);
/* A row's key columns (as the export queries order them) into a cell, unchecked
 * (for lookups only); returns the index of the next column. */
int fdx_row_key(sqlite3_stmt *st, fdx_kind kind, fdx_cell *c);
/* Checks every cell of one kind (the merge-read query). */
int fdx_row_check_all(fdx_store *s, fdx_kind kind);
/* Checks every cell that statement id reads, rows of kind in the merge-read
 * query's columns and order; path names their store in messages. */
int fdx_row_check_rows(fdx_store *s, fdx_kind kind, fdx_stmt_id id, const char *path);
/* Checks every cell of both kinds. */
int fdx_row_check_cells(fdx_store *s);

#endif
