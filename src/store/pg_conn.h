/*
 * The PostgreSQL connection of a store (pg_conn.c): telling a URI from a
 * path, keeping its password out of every message, connecting, running
 * statements with bound parameters, and reporting libpq's errors.
 */
#ifndef FDX_STORE_PG_CONN_H
#define FDX_STORE_PG_CONN_H

#include "store/pg_lib.h"

#include "store/store_internal.h"

typedef struct fdx_pg {
    PGconn *conn;
    char *uri; /* as given: never shown */
    /* What may be the URI's password, for scrubbing: libpq's reading, and
     * the pieces its writer may have meant (read_secrets in pg_conn.c). */
    char *secrets[8];
    int n_secrets;
    char working[4096];
    int working_slot; /* in common/temp_files.h, or -1 */
    char *prune[8];   /* a pending prune (pg_prune.h): 7 filter values, its JSON */
    int pruning;
} fdx_pg;

/* Whether path is a postgresql:// or postgres:// URI. */
int fdx_pg_is_uri(const char *path);
/* uri with its password (user:PASSWORD@ and password=...) replaced by ***;
 * malloc'd, NULL when memory ran out. */
char *fdx_pg_redact(const char *uri);

/* Connects (s->backend_data is the fdx_pg); a URI without connect_timeout
 * waits 10 s at most, unless PGCONNECT_TIMEOUT says otherwise. */
int fdx_pg_connect(fdx_store *s, fdx_pg *pg);
/* Connects again (PQreset) and sets fdx's settings of the session again. */
int fdx_pg_reset(fdx_store *s, fdx_pg *pg);
/* Sets how long statements wait for a lock, the store's busy timeout: for
 * the session, or (local) for the transaction under way. */
int fdx_pg_lock_timeout(fdx_store *s, fdx_pg *pg, int local);
/* Sets errmsg to "<store>: what: <libpq's message>" (the password scrubbed),
 * r the failed result or NULL for the connection's message; returns the
 * fdx code (FDX_EIO for a lost or refused connection). */
int fdx_pg_fail(fdx_store *s, fdx_pg *pg, const PGresult *r, const char *what);

/* PQexecParams with text parameters (NULL entries bind NULL) and results. */
PGresult *fdx_pg_exec(fdx_pg *pg, const char *sql, int n, const char *const *values);
/* Runs a statement that returns no rows; FDX_OK or fdx_pg_fail's code. */
int fdx_pg_run(fdx_store *s, fdx_pg *pg, const char *sql, const char *what);
/* Whether r failed in a way that running the transaction again can cure
 * (serialization failure 40001, deadlock 40P01). */
int fdx_pg_retryable(const PGresult *r);

#endif
