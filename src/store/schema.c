/*
 * The schema fdx creates, and whether a store has exactly it. A store read
 * from another host is untrusted: a table replaced by a view, a trigger or
 * index added, a column changed would make fdx's queries run someone else's
 * SQL or read something other than cells. So before anything else is read,
 * the store's sqlite_schema is compared with the one the migrations build in
 * an in-memory database.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_text.h"
#include "store/conn.h"
#include "store/schema.h"

/* migrations[v] upgrades a store from schema version v to v + 1. */
static const char *const migrations[][2] = {
    {fdx_sql_schema_1, NULL}, {fdx_sql_schema_2, NULL},          {fdx_sql_views, fdx_sql_schema_3},
    {fdx_sql_schema_4, NULL}, {fdx_sql_schema_5, fdx_sql_views}, {fdx_sql_schema_6, NULL},
};

int fdx_schema_version(void)
{
    return (int)(sizeof migrations / sizeof migrations[0]);
}

int fdx_schema_migrate(sqlite3 *db, int64_t from, char *err, size_t errsz)
{
    for (int64_t v = from; v < fdx_schema_version(); v++)
        for (int k = 0; k < 2 && migrations[v][k]; k++) {
            char *msg = NULL;
            int rc = sqlite3_exec(db, migrations[v][k], NULL, NULL, &msg);
            if (rc != SQLITE_OK) {
                snprintf(err, errsz, "migrating to schema %lld: %s", (long long)v + 1,
                         msg ? msg : sqlite3_errstr(rc));
                sqlite3_free(msg);
                return rc;
            }
        }
    return SQLITE_OK;
}

/* One row of sqlite_schema. */
typedef struct object {
    char *type, *name, *tbl_name, *sql;
} object;

typedef struct objects {
    object *v;
    size_t n;
} objects;

static void objects_free(objects *o)
{
    for (size_t i = 0; i < o->n; i++) {
        free(o->v[i].type);
        free(o->v[i].name);
        free(o->v[i].tbl_name);
        free(o->v[i].sql);
    }
    free(o->v);
    o->v = NULL;
    o->n = 0;
}

static char *column_dup(sqlite3_stmt *st, int i)
{
    const char *p = (const char *)sqlite3_column_text(st, i);
    return strdup(p ? p : "");
}

/* Reads sqlite_schema; returns an SQLite status (SQLITE_NOMEM when memory ran out). */
static int read_objects(sqlite3 *db, objects *o)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, fdx_sql_schema_objects, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        object *v = realloc(o->v, (o->n + 1) * sizeof *v);
        if (!v) {
            rc = SQLITE_NOMEM;
            break;
        }
        o->v = v;
        object *x = &v[o->n++];
        *x = (object){column_dup(st, 0), column_dup(st, 1), column_dup(st, 2), column_dup(st, 3)};
        if (!x->type || !x->name || !x->tbl_name || !x->sql)
            rc = SQLITE_NOMEM;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static const object *find(const objects *o, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->v[i].name, name) == 0)
            return &o->v[i];
    return NULL;
}

/* fdx's own objects must be exactly as fdx creates them, and nothing fdx did
 * not create may hang on its tables (an index, a trigger). Other objects of
 * a user's own are left alone: fdx never reads them. */
static int compare(fdx_store *s, const objects *want, const objects *have)
{
    const char *what = "not an fdx store (its schema is not the one fdx creates)";
    for (size_t i = 0; i < want->n; i++) {
        const object *w = &want->v[i], *h = find(have, w->name);
        if (!h)
            return fdx_store_fail(s, FDX_ENOTSTORE, "%s: %s: the %s %s is missing", s->path, what,
                                  w->type, w->name);
        if (strcmp(w->type, h->type) != 0)
            return fdx_store_fail(s, FDX_ENOTSTORE, "%s: %s: %s is a %s, not a %s", s->path, what,
                                  w->name, h->type, w->type);
        if (strcmp(w->tbl_name, h->tbl_name) != 0 || strcmp(w->sql, h->sql) != 0)
            return fdx_store_fail(s, FDX_ENOTSTORE, "%s: %s: the %s %s is defined differently",
                                  s->path, what, w->type, w->name);
    }
    for (size_t i = 0; i < have->n; i++) {
        const object *h = &have->v[i];
        if (!find(want, h->name) && find(want, h->tbl_name))
            return fdx_store_fail(s, FDX_ENOTSTORE, "%s: %s: it has %s %s %s on %s", s->path, what,
                                  strcmp(h->type, "index") ? "a" : "an", h->type, h->name,
                                  h->tbl_name);
    }
    return FDX_OK;
}

int fdx_schema_check(fdx_store *s)
{
    char err[512] = "";
    objects want = {NULL, 0}, have = {NULL, 0};
    sqlite3 *ref = NULL;
    int rc = sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK)
        rc = fdx_schema_migrate(ref, 0, err, sizeof err);
    if (rc == SQLITE_OK)
        rc = read_objects(ref, &want);
    sqlite3_close(ref);
    int code = rc == SQLITE_OK ? FDX_OK
                               : fdx_store_fail(s, rc == SQLITE_NOMEM ? FDX_ENOMEM : FDX_ERROR,
                                                "building the reference schema: %s",
                                                *err ? err : sqlite3_errstr(rc));
    if (code == FDX_OK && (rc = read_objects(s->db, &have)) != SQLITE_OK)
        code = rc == SQLITE_NOMEM ? fdx_store_fail(s, FDX_ENOMEM, "out of memory")
                                  : fdx_store_fail_sqlite(s, rc, "reading the schema");
    if (code == FDX_OK)
        code = compare(s, &want, &have);
    objects_free(&want);
    objects_free(&have);
    return code;
}
