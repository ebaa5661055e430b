/*
 * A store's identity and the proof that goes with it, for fdx_store_merge.
 *
 * The identity is a random id tied to the file it was given in (device and
 * inode). The first write transaction in a file that is not that one (a
 * copy: cp, a restored backup, a template) gives the store a new id and
 * records the old one in merged_store as 'copied', with the ledger position
 * and digest it had: copies fed different runs never pass for one another,
 * and the history the copy holds as its own goes under the original's
 * identity, so that merging both counts it once. A moved file
 * keeps its inode, and so its identity; a store only read (a snapshot being
 * merged) is never changed.
 *
 * The ledger digest is a SHA-256 over every ingest_ledger row, in id order,
 * each column typed and length-prefixed. A merge records it and a later
 * merge recomputes it from the source's actual ledger, so that a repeat is
 * recognised by its content, not by an id and a position alone.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sql_text.h"
#include "store/conn.h"
#include "store/identity.h"
#include "store/row.h"

int fdx_store_id_valid(const unsigned char *id)
{
    size_t n = 0;
    if (!id)
        return 0;
    for (; id[n]; n++)
        if (!((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f')))
            return 0;
    return n == FDX_STORE_ID_HEX - 1;
}

typedef struct file_mark {
    int known;
    int64_t dev;
    int64_t ino;
} file_mark;

static int read_identity(fdx_store *s, char id[FDX_STORE_ID_HEX], file_mark *m)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, FDX_STMT_STORE_ID, &st);
    if (rc != FDX_OK)
        return rc;
    int src = sqlite3_step(st);
    int valid =
        src == SQLITE_ROW && fdx_store_id_valid((const unsigned char *)fdx_row_text_or_null(st, 0));
    if (valid) {
        memcpy(id, sqlite3_column_text(st, 0), FDX_STORE_ID_HEX);
        m->known = sqlite3_column_type(st, 1) == SQLITE_INTEGER &&
                   sqlite3_column_type(st, 2) == SQLITE_INTEGER;
        m->dev = sqlite3_column_int64(st, 1);
        m->ino = sqlite3_column_int64(st, 2);
    }
    sqlite3_reset(st);
    if (src != SQLITE_ROW && src != SQLITE_DONE)
        return fdx_store_fail_sqlite(s, src, "reading the store identity");
    if (src == SQLITE_DONE)
        return fdx_store_fail(s, FDX_ENOTSTORE,
                              "%s: has no store identity (the store_identity table is empty)",
                              s->path);
    if (!valid)
        return fdx_store_fail(s, FDX_ENOTSTORE,
                              "%s: malformed store identity in store_identity (not 32 hex digits)",
                              s->path);
    return FDX_OK;
}

int fdx_identity_read(fdx_store *s, char id[FDX_STORE_ID_HEX])
{
    file_mark m = {0};
    return read_identity(s, id, &m);
}

static void digest_u64(fdx_sha256 *h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (56 - 8 * i));
    fdx_sha256_update(h, b, sizeof b);
}

static void digest_column(fdx_sha256 *h, sqlite3_stmt *st, int i)
{
    int type = sqlite3_column_type(st, i);
    unsigned char tag = (unsigned char)type;
    fdx_sha256_update(h, &tag, 1);
    if (type == SQLITE_INTEGER) {
        digest_u64(h, (uint64_t)sqlite3_column_int64(st, i));
    } else if (type != SQLITE_NULL) {
        const void *p = type == SQLITE_BLOB ? sqlite3_column_blob(st, i)
                                            : (const void *)sqlite3_column_text(st, i);
        size_t n = (size_t)sqlite3_column_bytes(st, i);
        digest_u64(h, n);
        if (p && n)
            fdx_sha256_update(h, p, n);
    }
}

int fdx_identity_ledger_digest(fdx_store *s, int64_t *high, char hex[FDX_SHA256_HEX])
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, FDX_STMT_LEDGER_DIGEST, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_int64(st, 1, INT64_MAX);
    fdx_sha256 h;
    fdx_sha256_init(&h);
    *high = 0;
    int columns = sqlite3_column_count(st);
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        *high = sqlite3_column_int64(st, 0);
        for (int i = 0; i < columns; i++)
            digest_column(&h, st, i);
    }
    sqlite3_reset(st);
    if (src != SQLITE_DONE)
        return fdx_store_fail_sqlite(s, src, "reading the ledger");
    unsigned char digest[32];
    fdx_sha256_final(&h, digest);
    fdx_sha256_hex(digest, hex);
    return FDX_OK;
}

/* Records the store this file was copied from, when the copy holds anything
 * of it: cells, or a ledger (a store whose cells were all pruned still holds
 * its runs, which must stay the original's). A store that never wrote
 * shares nothing with its copy. */
static int record_origin(fdx_store *s, const char *id)
{
    sqlite3_stmt *st;
    int has_cells;
    int64_t high;
    char hex[FDX_SHA256_HEX];
    int rc = fdx_store_has_cells(s, &has_cells);
    if (rc == FDX_OK)
        rc = fdx_identity_ledger_digest(s, &high, hex);
    if (rc != FDX_OK || (!has_cells && high <= 0))
        return rc;
    if ((rc = fdx_store_stmt(s, FDX_STMT_MERGED_INSERT, &st)) != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, high);
    sqlite3_bind_text(st, 3, s->path, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, hex, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, "copied", -1, SQLITE_STATIC);
    return fdx_store_step_done(s, st, "recording the store this one was copied from");
}

/* The copy's own history so far is the original's: it goes under the
 * original's origin number, so that merging both the original and the copy
 * counts it once (a merge keeps the larger count per origin). */
static int relabel(fdx_store *s, const char *old_id)
{
    sqlite3_stmt *st;
    int rc = fdx_store_stmt(s, FDX_STMT_HISTORY_ORIGIN_ID, &st);
    if (rc != FDX_OK)
        return rc;
    sqlite3_bind_text(st, 1, old_id, -1, SQLITE_TRANSIENT);
    int src = sqlite3_step(st);
    int64_t origin = src == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (src != SQLITE_ROW)
        return fdx_store_fail_sqlite(s, src, "numbering the store this one was copied from");
    const char *what = "handing the copied history to the store it came from";
    if ((rc = fdx_store_script(s, fdx_sql_identity_relabel_stage, what)) != FDX_OK)
        return rc;
    const fdx_stmt_id ids[] = {FDX_STMT_IDENTITY_RELABEL, FDX_STMT_IDENTITY_RELABEL_PRUNED};
    for (size_t i = 0; rc == FDX_OK && i < sizeof ids / sizeof ids[0]; i++) {
        if ((rc = fdx_store_stmt(s, ids[i], &st)) != FDX_OK)
            return rc;
        sqlite3_bind_int64(st, 1, origin);
        rc = fdx_store_step_done(s, st, what);
    }
    return rc == FDX_OK ? fdx_store_script(s, fdx_sql_identity_relabel_done, what) : rc;
}

int fdx_identity_check_file(fdx_store *s, int may_fork)
{
    char id[FDX_STORE_ID_HEX];
    file_mark m = {0};
    struct stat fs;
    const char *file = sqlite3_db_filename(s->db, "main");
    if (!file || !*file)
        return FDX_OK; /* an in-memory store cannot be copied */
    int rc = read_identity(s, id, &m);
    if (rc != FDX_OK)
        return rc;
    if (stat(file, &fs) != 0)
        return fdx_store_fail(s, FDX_EIO, "%s: %s", s->path, strerror(errno));
    int64_t dev = (int64_t)fs.st_dev, ino = (int64_t)fs.st_ino;
    if (m.known && ((m.dev == dev && m.ino == ino) || !may_fork))
        return FDX_OK;
    sqlite3_stmt *st;
    if (m.known && (rc = record_origin(s, id)) != FDX_OK)
        return rc;
    if ((rc = fdx_store_stmt(s, FDX_STMT_IDENTITY_MARK, &st)) != FDX_OK)
        return rc;
    sqlite3_bind_int64(st, 1, dev);
    sqlite3_bind_int64(st, 2, ino);
    sqlite3_bind_int(st, 3, m.known);
    if ((rc = fdx_store_step_done(s, st, "writing the store identity")) != FDX_OK || !m.known)
        return rc;
    return relabel(s, id);
}
