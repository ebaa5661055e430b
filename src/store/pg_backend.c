/*
 * The PostgreSQL backend behind the store seam (backend.h): a store named by
 * a postgresql:// or postgres:// URI lives in PostgreSQL; its handle works on
 * a local SQLite working copy under $TMPDIR, removed at close, which a reader
 * fills with a snapshot of the store and a writer's commit pushes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/temp_files.h"
#include "store/backend.h"
#include "store/conn.h"
#include "store/pg_conn.h"
#include "store/pg_merge.h"
#include "store/pg_prune.h"
#include "store/pg_push.h"
#include "store/pg_schema.h"
#include "store/pg_snapshot.h"

static fdx_pg *pg_of(const fdx_store *s)
{
    return (fdx_pg *)s->backend_data;
}

/* An empty file for the working copy, which only this process can read. */
static int make_working(fdx_store *s, fdx_pg *pg)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    if (snprintf(pg->working, sizeof pg->working, "%s/fdx-pg-XXXXXX", dir) >=
        (int)sizeof pg->working)
        return fdx_store_fail(s, FDX_EIO, "%s: TMPDIR is too long", s->path);
    int fd = mkstemp(pg->working);
    if (fd < 0) {
        pg->working[0] = '\0';
        return fdx_store_fail(s, FDX_EIO, "%s: cannot create a working copy in %s: %m", s->path,
                              dir);
    }
    close(fd);
    pg->working_slot = fdx_temp_files_note(pg->working, 1);
    return FDX_OK;
}

static int pg_connect(fdx_store *s, int flags, char *working, size_t size)
{
    fdx_pg *pg = calloc(1, sizeof *pg);
    if (!pg)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    s->backend_data = pg;
    pg->working_slot = -1;
    char *shown = fdx_pg_redact(s->path);
    if (!shown)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    pg->uri = s->path;
    s->path = shown;
    int rc = fdx_pg_connect(s, pg);
    if (rc == FDX_OK)
        rc = fdx_pg_schema_ready(s, pg, (flags & FDX_OPEN_CREATE) && !(flags & FDX_OPEN_READONLY));
    if (rc == FDX_OK)
        rc = make_working(s, pg);
    if (rc == FDX_OK)
        snprintf(working, size, "%s", pg->working);
    return rc;
}

static int pg_fill(fdx_store *s)
{
    return fdx_pg_pull(s, pg_of(s), s->readonly);
}

static int pg_push(fdx_store *s)
{
    return fdx_pg_push(s, pg_of(s));
}

static int pg_prune(fdx_store *s, const char *const values[7], const char *json,
                    fdx_prune_stats *stats)
{
    return fdx_pg_prune_count(s, pg_of(s), values, json, stats);
}

static const char *pg_refuses(const fdx_store *s, const char *op)
{
    (void)s;
    (void)op;
    return NULL;
}

static void pg_close(fdx_store *s)
{
    fdx_pg *pg = pg_of(s);
    if (!pg)
        return;
    fdx_temp_files_forget(pg->working_slot); /* first: the name may be another's next */
    if (pg->working[0])
        fdx_temp_files_remove(pg->working);
    fdx_pg_prune_forget(pg);
    if (pg->conn)
        PQfinish(pg->conn);
    free(pg->uri);
    for (int i = 0; i < pg->n_secrets; i++)
        free(pg->secrets[i]);
    free(pg);
    s->backend_data = NULL;
}

static const fdx_backend_ops pg_ops = {pg_connect, pg_fill,  pg_push,          pg_prune,
                                       pg_refuses, pg_close, &fdx_merge_pg_ops};

const fdx_backend_ops *fdx_backend_for(const char *path)
{
    return fdx_pg_is_uri(path) ? &pg_ops : NULL;
}
