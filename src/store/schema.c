/*
 * The schema fdx creates, and whether a store has exactly it. A store read
 * from another host is untrusted: a table replaced by a view, a trigger or
 * index added, a column changed would make fdx's queries run someone else's
 * SQL or read something other than cells. So before anything else is read,
 * the store's sqlite_schema is compared with the one the migrations make: with
 * the image of it the build took, and only when that differs with the one they
 * make in an in-memory database with this process's SQLite.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "sql_text.h"
#include "store/conn.h"
#include "store/migrations.h"
#include "store/schema.h"
#include "store/schema_image.h"

typedef fdx_schema_row object;

/* sqlite_schema's rows: read from a database (owned, freed by objects_free)
 * or the image's (borrowed). */
typedef struct objects {
    const object *v;
    size_t n;
    object *owned;
    size_t cap; /* of owned */
} objects;

static void objects_free(objects *o)
{
    for (size_t i = 0; o->owned && i < o->n; i++) {
        free((char *)o->owned[i].type);
        free((char *)o->owned[i].name);
        free((char *)o->owned[i].tbl_name);
        free((char *)o->owned[i].sql);
    }
    free(o->owned);
    *o = (objects){NULL, 0, NULL, 0};
}

static char *column_dup(sqlite3_stmt *st, int i)
{
    const char *p = (const char *)sqlite3_column_text(st, i);
    return strdup(p ? p : "");
}

/* Reads the rows of sql, shaped like sqlite_schema's (schema_objects.sql);
 * returns an SQLite status (SQLITE_NOMEM when memory ran out). */
static int read_objects(sqlite3 *db, const char *sql, objects *o)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (fdx_grow(&o->owned, &o->cap, o->n + 1, sizeof *o->owned) != 0) {
            rc = SQLITE_NOMEM;
            break;
        }
        o->v = o->owned;
        object *x = &o->owned[o->n++];
        *x = (object){column_dup(st, 0), column_dup(st, 1), column_dup(st, 2), column_dup(st, 3)};
        if (!x->type || !x->name || !x->tbl_name || !x->sql) {
            rc = SQLITE_NOMEM;
            break;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The object named name, of type type (any, when NULL): a trigger may bear
 * the name of a table, since SQLite keeps the names of triggers apart. */
static const object *find(const objects *o, const char *type, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->v[i].name, name) == 0 && (!type || strcmp(o->v[i].type, type) == 0))
            return &o->v[i];
    return NULL;
}

/* The object a trigger or index is on: SQLite keeps the table's name as the
 * statement spelled it, and finds tables whatever the case of ASCII letters. */
static const object *find_table(const objects *o, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (sqlite3_stricmp(o->v[i].name, name) == 0)
            return &o->v[i];
    return NULL;
}

/* The image, or the rows a test put in its place. */
static const fdx_schema_row *image_rows;
static size_t image_n;
static const char *image_sqlite;

void fdx_schema_image_set(const fdx_schema_row *rows, size_t n, const char *sqlite_version)
{
    image_rows = rows;
    image_n = n;
    image_sqlite = sqlite_version;
}

static objects the_image(void)
{
    return image_rows ? (objects){image_rows, image_n, NULL, 0}
                      : (objects){fdx_schema_image, fdx_schema_image_rows, NULL, 0};
}

/* The image holds the text the build's SQLite kept for what the migrations
 * altered. With another SQLite, a new store is migrated, so that it holds
 * what this one keeps, as every store it made before did. */
int fdx_schema_create(sqlite3 *db, char *err, size_t errsz)
{
    static const char *const kinds[] = {"table", "index", "view", "trigger"};
    const char *made_by = image_rows ? image_sqlite : fdx_schema_image_sqlite;
    if (strcmp(made_by, sqlite3_libversion()) != 0)
        return fdx_schema_migrate(db, 0, err, errsz);
    objects image = the_image();
    int rc = SQLITE_OK;
    for (size_t k = 0; rc == SQLITE_OK && k < sizeof kinds / sizeof kinds[0]; k++)
        for (size_t i = 0; rc == SQLITE_OK && i < image.n; i++) {
            const object *r = &image.v[i];
            if (strcmp(r->type, kinds[k]) != 0 || !*r->sql)
                continue;
            char doing[160];
            snprintf(doing, sizeof doing, "creating the schema (%s)", r->name);
            rc = fdx_schema_exec(db, r->sql, doing, err, errsz);
        }
    return rc == SQLITE_OK ? fdx_schema_exec(db, fdx_sql_schema_new,
                                             "creating the schema (its first rows)", err, errsz)
                           : rc;
}

/* What fdx reads of a store's schema: its objects, and the links that
 * could tie fdx's tables to others (schema_links.sql). */
typedef struct schema {
    objects objects, links;
} schema;

/* A link of the store's that ties a table of fdx's to something else; names
 * are fdx's tables and views. */
static int foreign_link(const objects *want, const objects *names, const object *l, char *why,
                        size_t whysz)
{
    if (strcmp(l->type, "double") == 0)
        return snprintf(why, whysz, "it has two objects named %s", l->name), 1;
    if (strcmp(l->type, "shared page") == 0)
        return snprintf(why, whysz, "%s shares its pages with another object", l->name), 1;
    if (strcmp(l->type, "reserved name") == 0)
        return snprintf(why, whysz, "it has an object named %s, as SQLite names only its own",
                        l->name),
               1;
    if (!find(want, "table", l->name) && find_table(names, l->tbl_name))
        return snprintf(why, whysz, "it has a table %s with a foreign key to %s", l->name,
                        l->tbl_name),
               1;
    return 0;
}

/* fdx's own objects must be exactly as fdx creates them (want), and nothing
 * fdx did not create may hang on its tables (names): an index, a trigger, a
 * foreign key. Other objects of a user's own are left alone: fdx never reads
 * them. fdx's views are not compared when any_views is set. 0 when have is
 * want; otherwise 1, and what differs in why. */
static const char *article(const char *type)
{
    return strcmp(type, "index") == 0 ? "an" : "a";
}

/* An older store's views are not compared, but the names of the views its
 * migrations make must be free for them: a table or index that took one (the
 * three share one namespace, whatever the case of ASCII letters) would fail
 * the migration, while the readers read the store as it is. */
static int view_name_taken(const objects *names, const objects *have, char *why, size_t whysz)
{
    for (size_t i = 0; i < names->n; i++) {
        if (strcmp(names->v[i].type, "view") != 0)
            continue;
        for (size_t k = 0; k < have->n; k++) {
            const object *h = &have->v[k];
            if (sqlite3_stricmp(h->name, names->v[i].name) == 0 && strcmp(h->type, "view") != 0 &&
                strcmp(h->type, "trigger") != 0)
                return snprintf(why, whysz, "%s is %s %s, not a view", h->name, article(h->type),
                                h->type),
                       1;
        }
    }
    return 0;
}

static int compare(const objects *want, const objects *names, const schema *have, int any_views,
                   char *why, size_t whysz)
{
    if (any_views && view_name_taken(names, &have->objects, why, whysz))
        return 1;
    for (size_t i = 0; i < want->n; i++) {
        const object *w = &want->v[i], *h = find(&have->objects, w->type, w->name);
        if (any_views && strcmp(w->type, "view") == 0)
            continue;
        if (!h && (h = find(&have->objects, NULL, w->name)) != NULL)
            return snprintf(why, whysz, "%s is %s %s, not %s %s", w->name, article(h->type),
                            h->type, article(w->type), w->type),
                   1;
        if (!h)
            return snprintf(why, whysz, "the %s %s is missing", w->type, w->name), 1;
        if (strcmp(w->tbl_name, h->tbl_name) != 0 || strcmp(w->sql, h->sql) != 0)
            return snprintf(why, whysz, "the %s %s is defined differently", w->type, w->name), 1;
    }
    for (size_t i = 0; i < have->objects.n; i++) {
        const object *h = &have->objects.v[i];
        if (!find(want, h->type, h->name) && find_table(names, h->tbl_name))
            return snprintf(why, whysz, "it has %s %s %s on %s", article(h->type), h->type, h->name,
                            h->tbl_name),
                   1;
    }
    for (size_t i = 0; i < have->links.n; i++)
        if (foreign_link(want, names, &have->links.v[i], why, whysz))
            return 1;
    return 0;
}

static _Atomic size_t reference_builds;

size_t fdx_schema_reference_builds(void)
{
    return reference_builds;
}

/* The rows the migrations up to version make with the SQLite this process
 * runs. */
static int build_reference(fdx_store *s, int64_t version, objects *want)
{
    char err[512] = "";
    sqlite3 *ref = NULL;
    reference_builds++;
    int rc = sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK)
        rc = fdx_schema_migrate_to(ref, 0, version, err, sizeof err);
    if (rc == SQLITE_OK)
        rc = read_objects(ref, fdx_sql_schema_objects, want);
    sqlite3_close(ref);
    if (rc == SQLITE_OK)
        return FDX_OK;
    return fdx_store_fail(s, rc == SQLITE_NOMEM ? FDX_ENOMEM : FDX_ERROR,
                          "building the reference schema: %s", *err ? err : sqlite3_errstr(rc));
}

static int read_schema(fdx_store *s, schema *have)
{
    int rc = read_objects(s->db, fdx_sql_schema_objects, &have->objects);
    if (rc == SQLITE_OK)
        rc = read_objects(s->db, fdx_sql_schema_links, &have->links);
    if (rc == SQLITE_OK)
        return FDX_OK;
    return rc == SQLITE_NOMEM ? fdx_store_fail(s, FDX_ENOMEM, "out of memory")
                              : fdx_store_fail_sqlite(s, rc, "reading the schema");
}

/* The objects of a and of b (when not NULL), borrowed. */
static int join(const objects *a, const objects *b, objects *out)
{
    size_t nb = b ? b->n : 0;
    object *v = malloc((a->n + nb + 1) * sizeof *v);
    if (!v)
        return FDX_ENOMEM;
    memcpy(v, a->v, a->n * sizeof *v);
    if (nb)
        memcpy(v + a->n, b->v, nb * sizeof *v);
    *out = (objects){v, a->n + nb, NULL, 0};
    return FDX_OK;
}

static int differs(fdx_store *s, const char *why)
{
    return fdx_store_fail(s, FDX_ENOTSTORE,
                          "%s: not an fdx store (its schema is not the one fdx creates): %s",
                          s->path, why);
}

/* Compares have with the reference of version; the tables nothing of the
 * store's own may hang on are the reference's and, for an older store, also
 * the current ones (the image's), which its migrations will make. */
static int by_reference(fdx_store *s, int64_t version, const objects *also, const schema *have)
{
    objects want = {NULL, 0, NULL, 0}, names = {NULL, 0, NULL, 0};
    char why[512];
    int code = build_reference(s, version, &want);
    if (code == FDX_OK && join(&want, also, &names) != FDX_OK)
        code = fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    if (code == FDX_OK && compare(&want, &names, have, also != NULL, why, sizeof why) != 0)
        code = differs(s, why);
    free((object *)names.v);
    objects_free(&want);
    return code;
}

/* SQLite compares text as the bytes of the database's encoding: a UTF-16
 * store's keys would be in an order other than export order (docs/FORMAT.md),
 * and fdx makes its stores UTF-8. */
int fdx_schema_check_encoding(fdx_store *s)
{
    sqlite3_stmt *st;
    char encoding[16] = "";
    int rc = sqlite3_prepare_v2(s->db, fdx_sql_encoding, -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *e = (const char *)sqlite3_column_text(st, 0);
        snprintf(encoding, sizeof encoding, "%s", e ? e : "");
        rc = e ? SQLITE_OK : SQLITE_NOMEM;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK)
        return rc == SQLITE_NOMEM ? fdx_store_fail(s, FDX_ENOMEM, "out of memory")
                                  : fdx_store_fail_sqlite(s, rc, "reading the text encoding");
    if (strcmp(encoding, "UTF-8") == 0)
        return FDX_OK;
    return fdx_store_fail(s, FDX_ENOTSTORE,
                          "%s: not an fdx store: its text encoding is %s (fdx stores are UTF-8)",
                          s->path, encoding[0] ? encoding : "unknown");
}

/* Judges the store against the schema of version: the current one, or an
 * older one before its migrations run. A store like the image is fdx's
 * schema as a real SQLite wrote it. One that is not may still be: the
 * image's SQLite was the build's, and another may word the text it keeps
 * differently; so the reference built with this process's SQLite judges it,
 * and names what differs. An older store's views are those the fdx that made
 * it wrote, which today's migrations do not make: they are not compared,
 * since the migrations drop every view before anything reads one, and make
 * them again. */
static int check(fdx_store *s, int64_t version)
{
    int current = version == fdx_schema_version();
    objects image = the_image();
    schema have = {{NULL, 0, NULL, 0}, {NULL, 0, NULL, 0}};
    char why[512];
    int code = read_schema(s, &have);
    if (code == FDX_OK && !(current && compare(&image, &image, &have, 0, why, sizeof why) == 0))
        code = by_reference(s, version, current ? NULL : &image, &have);
    objects_free(&have.objects);
    objects_free(&have.links);
    return code;
}

int fdx_schema_check(fdx_store *s)
{
    return check(s, fdx_schema_version());
}

int fdx_schema_check_older(fdx_store *s, int64_t version)
{
    return check(s, version);
}
