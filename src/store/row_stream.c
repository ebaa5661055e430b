/*
 * An export spends about half of its time in SQLite, stepping its query and
 * reading the columns, and the other half checking each row and writing its
 * line. Here a thread of its own steps the statement and copies each row's
 * columns into blocks it hands over (common/handoff.h), so both halves run
 * at once on two CPUs. The connection is used by that thread alone until the
 * stream stops: connections are opened without SQLite's mutex, and the
 * caller touches nothing of SQLite's meanwhile.
 */
#include "store/row_stream.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/handoff.h"

/* A column in a block: its type, then its value or its text's length; the
 * texts of a row follow its columns. */
typedef struct col_head {
    int64_t v;
    int32_t type;
    int32_t pad;
} col_head;

struct fdx_row_stream {
    sqlite3_stmt *st;
    int threaded;
    pthread_t stepper;
    fdx_handoff ho;
    int rc;         /* SQLITE_DONE or the code that ended the statement */
    fdx_buf *block; /* the taker's, and where its next row starts */
    size_t at;
    fdx_row_cols cols;
};

/* ---- the stepping thread ---- */

/* Copies st's current row into the block being filled: SQLITE_OK,
 * SQLITE_NOMEM, or SQLITE_DONE when the taker wants no more. */
static int copy_row(fdx_row_stream *rs)
{
    fdx_row_cols c;
    if (fdx_row_cols_of(rs->st, &c) != SQLITE_OK)
        return SQLITE_NOMEM;
    col_head heads[FDX_ROW_MAX_COLUMNS];
    size_t bytes = sizeof(int32_t) + (size_t)c.n * sizeof(col_head);
    for (int i = 0; i < c.n; i++) {
        heads[i] =
            (col_head){c.type[i] == SQLITE_TEXT ? (int64_t)c.text[i].n : c.i64[i], c.type[i], 0};
        bytes += c.text[i].n;
    }
    fdx_buf *b = fdx_handoff_room(&rs->ho, bytes);
    if (!b)
        return SQLITE_DONE;
    int32_t n32 = c.n;
    fdx_buf_append(b, &n32, sizeof n32);
    fdx_buf_append(b, heads, (size_t)c.n * sizeof *heads);
    for (int i = 0; i < c.n; i++)
        fdx_buf_append(b, c.text[i].p, c.text[i].n);
    if (b->oom)
        return SQLITE_NOMEM;
    return fdx_handoff_appended(&rs->ho) == 0 ? SQLITE_OK : SQLITE_DONE;
}

static void *stepping(void *arg)
{
    fdx_row_stream *rs = arg;
    int rc;
    while ((rc = sqlite3_step(rs->st)) == SQLITE_ROW && (rc = copy_row(rs)) == SQLITE_OK)
        ;
    rs->rc = rc;
    /* a row whose copy ran out of memory is in the block only in part */
    fdx_handoff_finish(&rs->ho, rc != SQLITE_NOMEM);
    return NULL;
}

/* ---- the calling thread ---- */

int fdx_row_stream_start(fdx_row_stream **out, sqlite3_stmt *st)
{
    fdx_row_stream *rs = calloc(1, sizeof *rs);
    *out = rs;
    if (!rs)
        return FDX_ENOMEM;
    rs->st = st;
    if (fdx_handoff_init(&rs->ho) != 0)
        return FDX_OK;
    rs->threaded = pthread_create(&rs->stepper, NULL, stepping, rs) == 0;
    if (!rs->threaded)
        fdx_handoff_destroy(&rs->ho);
    return FDX_OK;
}

/* The row at rs->at of the block, into rs->cols. */
static void read_row(fdx_row_stream *rs)
{
    const char *p = rs->block->data + rs->at;
    int32_t n;
    memcpy(&n, p, sizeof n);
    p += sizeof n;
    const char *text = p + (size_t)n * sizeof(col_head);
    rs->cols.n = n;
    for (int i = 0; i < n; i++, p += sizeof(col_head)) {
        col_head h;
        memcpy(&h, p, sizeof h);
        rs->cols.type[i] = h.type;
        rs->cols.i64[i] = h.type == SQLITE_INTEGER ? h.v : 0;
        rs->cols.text[i] = (fdx_str){"", 0};
        if (h.type == SQLITE_TEXT) {
            rs->cols.text[i] = (fdx_str){text, (size_t)h.v};
            text += h.v;
        }
    }
    rs->at = (size_t)(text - rs->block->data);
}

int fdx_row_stream_next(fdx_row_stream *rs, const fdx_row_cols **cols)
{
    if (!rs->threaded) {
        int rc = sqlite3_step(rs->st);
        if (rc != SQLITE_ROW)
            return rc == SQLITE_DONE ? 0 : rc;
        if (fdx_row_cols_of(rs->st, &rs->cols) != SQLITE_OK)
            return SQLITE_NOMEM;
        *cols = &rs->cols;
        return 1;
    }
    if (rs->block && rs->at == rs->block->len) {
        fdx_handoff_give_back(&rs->ho, rs->block, 0);
        rs->block = NULL;
    }
    if (!rs->block) {
        rs->block = fdx_handoff_next(&rs->ho);
        rs->at = 0;
    }
    if (!rs->block) /* the stepper has finished: rs->rc is read after its last handoff */
        return rs->rc == SQLITE_DONE ? 0 : rs->rc;
    read_row(rs);
    *cols = &rs->cols;
    return 1;
}

void fdx_row_stream_stop(fdx_row_stream *rs)
{
    if (!rs)
        return;
    if (rs->threaded) {
        fdx_handoff_stop(&rs->ho);
        pthread_join(rs->stepper, NULL);
        fdx_handoff_destroy(&rs->ho);
    }
    free(rs);
}
