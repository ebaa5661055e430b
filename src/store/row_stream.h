/*
 * A statement's rows stepped on a thread of their own (row_stream.c).
 */
#ifndef FDX_STORE_ROW_STREAM_H
#define FDX_STORE_ROW_STREAM_H

#include "store/row.h"

typedef struct fdx_row_stream fdx_row_stream;

/* Starts stepping st (whose connection no one else uses until the stream is
 * stopped) on a thread that copies its rows ahead of the caller. Where no
 * thread or memory can be had, the stream steps st in fdx_row_stream_next
 * instead: the rows are the same either way. *out is NULL only when even
 * that cannot be had (FDX_ENOMEM). */
int fdx_row_stream_start(fdx_row_stream **out, sqlite3_stmt *st);
/* The next row: 1 with *cols (valid until the next call), 0 after the last
 * row, or the SQLite code that ended the statement with an error; the
 * connection's error message is said once the stream is stopped. */
int fdx_row_stream_next(fdx_row_stream *rs, const fdx_row_cols **cols);
/* Stops stepping (at once, wherever the caller is) and frees the stream; the
 * statement is then the caller's again, to reset. NULL is a no-op. */
void fdx_row_stream_stop(fdx_row_stream *rs);

#endif
