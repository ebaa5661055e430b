/*
 * Cells read back from a store. A store may come from another host and be
 * crafted, so every row is checked as strictly as a line read from a feed:
 * the cell is written as its export line, that line is decoded by the feed
 * decoder, and the decoded record must give back exactly the row (the same
 * strings, the compact JSON fdx writes for dtypes and candidates, a count in
 * range). An export line is then always one fdx-ingest accepts, and a merge
 * only ever adds cells an ingest could have added. The string fields are
 * checked directly, and dtypes and candidates spelled exactly as the encoder
 * spells them (codec/canon.h) need no decode; anything else is decoded.
 */
#include <stdio.h>
#include <string.h>

#include "codec/canon.h"
#include "codec/decode.h"
#include "codec/encode.h"
#include "codec/record_cell.h"
#include "common/utf8.h"
#include "common/when.h"
#include "store/conn.h"
#include "store/row.h"

int fdx_row_cols_of(sqlite3_stmt *st, fdx_row_cols *cols)
{
    int n = sqlite3_column_count(st), rc = SQLITE_OK;
    cols->n = n < FDX_ROW_MAX_COLUMNS ? n : FDX_ROW_MAX_COLUMNS;
    for (int i = 0; i < cols->n; i++) {
        int type = sqlite3_column_type(st, i);
        const char *text = type == SQLITE_TEXT ? (const char *)sqlite3_column_text(st, i) : "";
        if (!text) { /* SQLite ran out of memory for it */
            rc = SQLITE_NOMEM;
            text = "";
        }
        cols->type[i] = type;
        cols->i64[i] = type == SQLITE_INTEGER ? sqlite3_column_int64(st, i) : 0;
        cols->text[i] =
            (fdx_str){text, type == SQLITE_TEXT ? (size_t)sqlite3_column_bytes(st, i) : 0};
    }
    return rc;
}

/* Reads the key columns (in the order of the export queries) into a cell. */
static int key_of(const fdx_row_cols *cols, fdx_kind kind, fdx_cell *c)
{
    int i = 0;
    c->kind = kind;
    c->keyed = kind == FDX_KIND_MISS ? 1 : (int)cols->i64[i++];
    c->token = cols->text[i++];
    c->backend = cols->text[i++];
    c->op = cols->text[i++];
    c->dtypes_json = cols->text[i++];
    c->kernel_source = cols->text[i++];
    c->revision = (uint64_t)cols->i64[i++] ^ FDX_HASH_FLIP;
    c->cc_major = cols->i64[i++];
    c->cc_minor = cols->i64[i++];
    c->sku = cols->text[i++];
    c->driver = cols->text[i++];
    return i;
}

int fdx_row_key(sqlite3_stmt *st, fdx_kind kind, fdx_cell *c)
{
    fdx_row_cols cols;
    fdx_row_cols_of(st, &cols); /* a text SQLite had no memory for reads as "" */
    return key_of(&cols, kind, c);
}

int fdx_row_reader_init(fdx_row_reader *r, fdx_store *s, fdx_kind kind)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    r->path = s->path;
    r->kind = kind;
    r->dec = fdx_decoder_new(0);
    return r->dec ? FDX_OK : fdx_store_fail(s, FDX_ENOMEM, "out of memory");
}

void fdx_row_reader_free(fdx_row_reader *r)
{
    fdx_decoder_free(r->dec);
    fdx_buf_free(&r->line);
    fdx_buf_free(&r->dtypes);
    fdx_buf_free(&r->cands);
    fdx_buf_free(&r->prev);
    r->dec = NULL;
}

/* The columns of the cell queries, in their order: name and SQLite type
 * (dispatches: all of them; misses: from structure_key, which is wanted). */
static const struct {
    const char *name;
    int type;
} columns[] = {
    {"keyed", SQLITE_INTEGER},
    {"structure_key", SQLITE_TEXT},
    {"backend", SQLITE_TEXT},
    {"op", SQLITE_TEXT},
    {"dtypes", SQLITE_TEXT},
    {"kernel_source", SQLITE_TEXT},
    {"kernel_revision_hash", SQLITE_INTEGER},
    {"cc_major", SQLITE_INTEGER},
    {"cc_minor", SQLITE_INTEGER},
    {"hardware_sku", SQLITE_TEXT},
    {"driver_version", SQLITE_TEXT},
    {"candidates", SQLITE_TEXT},
    {"count", SQLITE_INTEGER},
    {"candidates_set_at", SQLITE_INTEGER}, /* or NULL */
};
#define N_COLUMNS ((int)(sizeof columns / sizeof columns[0]))

/* Index into columns of the query's column i. */
static int column_of(fdx_kind kind, int i)
{
    if (kind == FDX_KIND_DISPATCH)
        return i;
    return i + 1 + (i >= 10); /* misses have no keyed and no candidates */
}

static const char *column_name(fdx_kind kind, int i)
{
    return kind == FDX_KIND_MISS && i == 0 ? "wanted" : columns[column_of(kind, i)].name;
}

/* "path: not a valid fdx store: table, cell N: what text detail" */
static int bad(fdx_row_reader *r, const char *text, const char *what, const char *detail)
{
    return fdx_store_fail(r->s, FDX_EDATA, "%s: not a valid fdx store: %s, cell %llu: %s%s%s",
                          r->path, r->kind == FDX_KIND_MISS ? "miss_cell" : "dispatch_cell",
                          (unsigned long long)r->rows, what, text, detail);
}

/* Every column of the row has its declared type. */
static int check_types(fdx_row_reader *r, const fdx_row_cols *cols)
{
    for (int i = 0; i < cols->n; i++) {
        int c = column_of(r->kind, i), type = cols->type[i];
        if (c >= N_COLUMNS || (type == SQLITE_NULL && c == N_COLUMNS - 1))
            continue;
        if (type != columns[c].type)
            return bad(r, ": not ", column_name(r->kind, i),
                       columns[c].type == SQLITE_TEXT ? "text" : "an integer");
    }
    return FDX_OK;
}

/* The first text column that is not valid UTF-8, if any. */
static const char *bad_utf8(fdx_row_reader *r, const fdx_row_cols *cols)
{
    for (int i = 0; i < cols->n; i++) {
        size_t at;
        fdx_str v = cols->text[i];
        if (cols->type[i] == SQLITE_TEXT && !fdx_utf8_valid(v.p, v.n, &at))
            return column_name(r->kind, i);
    }
    return NULL;
}

static int same(fdx_str a, fdx_str b)
{
    return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

/* The field of the row that the decoded line does not give back, if any. */
static const char *differs(const fdx_cell *a, const fdx_cell *b)
{
    if (a->keyed != b->keyed)
        return "keyed";
    if (!same(a->token, b->token))
        return a->kind == FDX_KIND_MISS ? "wanted" : "structure_key";
    if (!same(a->backend, b->backend))
        return "backend";
    if (!same(a->op, b->op))
        return "op";
    if (!same(a->dtypes_json, b->dtypes_json))
        return "dtypes";
    if (!same(a->kernel_source, b->kernel_source))
        return "kernel_source";
    if (a->revision != b->revision)
        return "kernel_revision_hash";
    if (a->cc_major != b->cc_major || a->cc_minor != b->cc_minor)
        return "cc_major, cc_minor";
    if (!same(a->sku, b->sku))
        return "hardware_sku";
    if (!same(a->driver, b->driver))
        return "driver_version";
    return NULL;
}

/* Writes the cell's export line into r->line and decodes it back into
 * *back (FDX_EDATA with the decoder's reason in err when it does not decode). */
static int round_trip(fdx_row_reader *r, const fdx_cell *cell, uint64_t count, fdx_str cands,
                      fdx_cell *back, uint64_t *back_count, char *err, size_t errsz)
{
    fdx_record rec;
    fdx_buf_clear(&r->line);
    fdx_enc_cell_line(&r->line, cell, count, cands);
    if (r->line.oom)
        return FDX_ENOMEM;
    int rc = fdx_decode_line(r->dec, r->line.data, r->line.len - 1, &rec, err, errsz);
    if (rc != FDX_OK)
        return rc;
    if (rec.kind != cell->kind) {
        snprintf(err, errsz, "it decodes as another kind of record");
        return FDX_EDATA;
    }
    if (rec.kind == FDX_KIND_MISS) {
        *back_count = rec.miss.count;
        return fdx_cell_from_miss(back, &rec.miss, 1, &r->dtypes, err, errsz);
    }
    *back_count = rec.dispatch.count;
    return fdx_cell_from_dispatch(back, &rec.dispatch, 1, &r->dtypes, &r->cands, err, errsz);
}

int fdx_row_round_trip(fdx_row_reader *r, const fdx_cell *cell, uint64_t count, fdx_str cands,
                       const char **field, char *err, size_t errsz)
{
    fdx_cell back;
    uint64_t back_count;
    *field = NULL;
    int rc = round_trip(r, cell, count, cands, &back, &back_count, err, errsz);
    if (rc != FDX_OK)
        return rc;
    *field = differs(cell, &back);
    if (!*field && back_count != count)
        *field = "count";
    fdx_str again = {r->cands.data ? r->cands.data : "", r->cands.len};
    if (!*field && cell->kind == FDX_KIND_DISPATCH && !same(again, cands))
        *field = "candidates";
    return *field ? FDX_EDATA : FDX_OK;
}

/* A row whose line does not decode: the column that is not UTF-8, or which
 * of dtypes and candidates (compact JSON kept as text) is at fault, or else
 * the decoder's reason. */
static int not_decoding(fdx_row_reader *r, const fdx_row_cols *cols, const fdx_row *row,
                        const char *reason)
{
    char err[512];
    fdx_cell probe = row->cell, back;
    uint64_t n;
    const char *field = bad_utf8(r, cols);
    if (field)
        return bad(r, ": invalid UTF-8", field, "");
    probe.dtypes_json = (fdx_str){"[]", 2};
    if (round_trip(r, &probe, row->count, FDX_NO_CANDS, &back, &n, err, sizeof err) != FDX_OK)
        return bad(r, "", "its line would not decode: ", reason);
    int dtypes =
        round_trip(r, &row->cell, row->count, FDX_NO_CANDS, &back, &n, err, sizeof err) != FDX_OK;
    return bad(r, ": not the compact JSON fdx writes; its line would not decode: ",
               dtypes ? "dtypes" : "candidates", reason);
}

/* A string field as the decoder gives them: UTF-8, no U+0000, not too long. */
static int good_text(fdx_str v)
{
    size_t at;
    return v.n <= FDX_MAX_STRING && !memchr(v.p, 0, v.n) && fdx_utf8_valid(v.p, v.n, &at);
}

/* The checks of every field but dtypes and candidates, which are JSON. */
static int check_fields(fdx_row_reader *r, const fdx_row_cols *cols, const fdx_row *row,
                        int64_t count)
{
    const fdx_cell *c = &row->cell;
    const fdx_str texts[] = {c->token, c->backend, c->op, c->kernel_source, c->sku, c->driver};
    static const int text_columns[] = {0, 1, 2, 4, 8, 9}; /* in a miss row */
    int first = r->kind == FDX_KIND_DISPATCH;
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++)
        if (!good_text(texts[k])) {
            size_t at;
            return bad(r,
                       fdx_utf8_valid(texts[k].p, texts[k].n, &at) ? ": holds U+0000 or is too long"
                                                                   : ": invalid UTF-8",
                       column_name(r->kind, text_columns[k] + first), "");
        }
    if (count < 1)
        return bad(r, ": not a count of at least 1", "count", "");
    if (first && cols->i64[0] != 0 && cols->i64[0] != 1)
        return bad(r, ": neither 0 nor 1", "keyed", "");
    if (first && !c->keyed && c->token.n)
        return bad(r, ": not empty in an unkeyed cell", "structure_key", "");
    int absent = c->cc_major == FDX_CC_ABSENT && c->cc_minor == FDX_CC_ABSENT;
    if (!absent && (c->cc_major < 0 || c->cc_major > UINT32_MAX || c->cc_minor < 0 ||
                    c->cc_minor > UINT32_MAX))
        return bad(r, ": not a compute capability (both -1, or both 0 ..= 2^32-1)",
                   "cc_major, cc_minor", "");
    /* a merge keeps the later list: a time no capture has would pin one */
    if (row->has_set_at && (row->set_at < 0 || row->set_at > FDX_TIME_MAX * 1000 + 999))
        return bad(r, ": not a capture time (Unix ms, 1970 to 9999)", "candidates_set_at", "");
    return FDX_OK;
}

/* The queries in export order walk the primary key's B-tree, whose order
 * SQLite trusts: a page edited in place (a key's bytes changed) would put
 * lines out of order or twice in an export, and a cell twice into a merge. */
static int follows_previous(fdx_row_reader *r, const fdx_cell *cell)
{
    if (r->prev.len) {
        fdx_cell before;
        fdx_cell_unpack(&before, r->prev.data, r->prev.len);
        if (fdx_cell_compare(&before, cell) >= 0)
            return bad(r, " in key order (the table's B-tree is damaged)",
                       "not after the cell before it", "");
    }
    fdx_buf_clear(&r->prev);
    fdx_cell_pack(cell, &r->prev);
    return r->prev.oom ? fdx_store_fail(r->s, FDX_ENOMEM, "out of memory") : FDX_OK;
}

void fdx_row_reader_restart(fdx_row_reader *r)
{
    fdx_buf_clear(&r->prev);
}

int fdx_row_read(fdx_row_reader *r, sqlite3_stmt *st, fdx_row *row)
{
    fdx_row_cols cols;
    if (fdx_row_cols_of(st, &cols) != SQLITE_OK)
        return fdx_store_fail(r->s, FDX_ENOMEM, "out of memory");
    return fdx_row_read_cols(r, &cols, row);
}

int fdx_row_read_cols(fdx_row_reader *r, const fdx_row_cols *cols, fdx_row *row)
{
    char err[512];
    r->rows++;
    int rc = check_types(r, cols);
    if (rc != FDX_OK)
        return rc;
    int i = key_of(cols, r->kind, &row->cell);
    row->cands = r->kind == FDX_KIND_DISPATCH ? cols->text[i++] : FDX_NO_CANDS;
    int64_t count = cols->i64[i++];
    row->has_set_at = i < cols->n && cols->type[i] != SQLITE_NULL;
    row->set_at = row->has_set_at ? cols->i64[i] : 0;
    if ((rc = check_fields(r, cols, row, count)) != FDX_OK)
        return rc;
    if ((rc = follows_previous(r, &row->cell)) != FDX_OK)
        return rc;
    row->count = (uint64_t)count;

    /* The fields above are checked as the decoder checks them; dtypes and
     * candidates the encoder would write as they are leave nothing a decode
     * would add. */
    fdx_str dt = row->cell.dtypes_json;
    if (fdx_canon_dtypes(dt.p, dt.n) == FDX_CANON_YES &&
        fdx_canon_candidates(row->cands.p, row->cands.n) == FDX_CANON_YES) {
        fdx_buf_clear(&r->line);
        fdx_enc_cell_line(&r->line, &row->cell, row->count, row->cands);
        if (r->line.oom)
            return fdx_store_fail(r->s, FDX_ENOMEM, "out of memory");
    } else {
        const char *field;
        rc = fdx_row_round_trip(r, &row->cell, row->count, row->cands, &field, err, sizeof err);
        if (rc == FDX_ENOMEM)
            return fdx_store_fail(r->s, rc, "out of memory");
        if (field)
            return bad(r, ": not as fdx writes it (its line would not decode to the same cell)",
                       field, "");
        if (rc != FDX_OK)
            return not_decoding(r, cols, row, err);
    }
    row->line.p = r->line.data;
    row->line.n = r->line.len;
    return FDX_OK;
}

int fdx_row_check_rows(fdx_store *s, fdx_kind kind, fdx_stmt_id id, const char *path)
{
    fdx_row_reader r;
    fdx_row row;
    sqlite3_stmt *st = NULL;
    int rc = fdx_row_reader_init(&r, s, kind);
    r.path = path;
    if (rc == FDX_OK)
        rc = fdx_store_stmt(s, id, &st);
    int src = SQLITE_DONE;
    while (rc == FDX_OK && (src = sqlite3_step(st)) == SQLITE_ROW)
        rc = fdx_row_read(&r, st, &row);
    if (rc == FDX_OK && src != SQLITE_DONE)
        rc = fdx_store_fail_sqlite(s, src, "reading cells");
    sqlite3_reset(st);
    fdx_row_reader_free(&r);
    return rc;
}

int fdx_row_check_all(fdx_store *s, fdx_kind kind)
{
    return fdx_row_check_rows(s, kind,
                              kind == FDX_KIND_MISS ? FDX_STMT_MERGE_READ_MISSES
                                                    : FDX_STMT_MERGE_READ_DISPATCHES,
                              s->path);
}

int fdx_row_check_cells(fdx_store *s)
{
    int rc = fdx_row_check_all(s, FDX_KIND_MISS);
    return rc == FDX_OK ? fdx_row_check_all(s, FDX_KIND_DISPATCH) : rc;
}
