/*
 * The PostgreSQL connection: libpq parses the URI (and reads PGPASSFILE,
 * PGSERVICE, PGSSLMODE ...); fdx only tells a URI by its scheme and keeps
 * its password out of every message, since messages end up in logs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql_text.h"
#include "store/conn.h"
#include "store/pg_conn.h"

int fdx_pg_is_uri(const char *path)
{
    return path &&
           (strncmp(path, "postgresql://", 13) == 0 || strncmp(path, "postgres://", 11) == 0);
}

/* Appends n bytes of p to out at *len (out has room: see fdx_pg_redact). */
static void put(char *out, size_t *len, const char *p, size_t n)
{
    memcpy(out + *len, p, n);
    *len += n;
}

/* The end of a query's password value whose first '&' is at amp: a piece
 * after an '&' that holds no '=' is not a parameter, but the password's
 * (libpq refuses it as one, naming it). */
static const char *password_value(const char *amp)
{
    while (*amp == '&') {
        size_t next = strcspn(amp + 1, "&");
        if (memchr(amp + 1, '=', next))
            break;
        amp += 1 + next;
    }
    return amp;
}

char *fdx_pg_redact(const char *uri)
{
    size_t n = strlen(uri);
    char *out = malloc(n * 4 + 8); /* every "=v" or ":v" can become "=***" */
    if (!out)
        return NULL;
    size_t len = 0;
    const char *p = strstr(uri, "://");
    p = p ? p + 3 : uri;
    put(out, &len, uri, (size_t)(p - uri));
    /* libpq takes the user and password up to an '@' before the first '/',
     * whatever comes between: "?" and "#" can be a password's */
    size_t auth = strcspn(p, "/");
    const char *at = NULL;
    for (const char *q = p; q < p + auth; q++)
        if (*q == '@')
            at = q;
    if (at) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        if (colon) {
            put(out, &len, p, (size_t)(colon - p + 1));
            put(out, &len, "***", 3);
            p = at;
        }
    }
    /* The query: every password=... (or its percent-encoded key) hidden; in
     * any case, though libpq reads only "password": a key misspelt so is a
     * password all the same, named in a message that says it is unknown. */
    while (*p) {
        size_t k = strcspn(p, "?&");
        put(out, &len, p, k);
        p += k;
        if (!*p)
            break;
        put(out, &len, p, 1);
        p++;
        size_t field = strcspn(p, "&"); /* libpq splits on '&' alone: '#' is a value's */
        const char *eq = memchr(p, '=', field);
        if (eq && ((size_t)(eq - p) == 8 && strncasecmp(p, "password", 8) == 0)) {
            put(out, &len, p, (size_t)(eq - p + 1));
            put(out, &len, "***", 3);
            p += password_value(p + field) - p;
        } else if (eq && memchr(p, '%', (size_t)(eq - p))) {
            put(out, &len, "***", 3); /* an encoded key could spell password */
            p += field;
        }
    }
    out[len] = '\0';
    return out;
}

/* libpq's message about a URI it could not parse, with every quoted part
 * (the piece it could not read, which may be the password) left out. */
static void unquote(char *out, size_t size, const char *msg)
{
    size_t len = 0;
    int quoted = 0;
    for (; *msg && len + 5 < size; msg++) {
        if (*msg == '"') {
            quoted = !quoted;
            if (quoted) {
                memcpy(out + len, "\"***\"", 5);
                len += 5;
            }
        } else if (!quoted && *msg != '\n') {
            out[len++] = *msg;
        }
    }
    out[len] = '\0';
}

static int word_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The length of the secret of pg that text starts with, standing alone (no
 * letter or digit on either side: a short password must not hide, and so
 * point out, every place its letters occur in), or 0. */
static size_t secret_at(const fdx_pg *pg, const char *start, const char *text)
{
    if (text > start && word_char(text[-1]))
        return 0;
    for (int i = 0; i < pg->n_secrets; i++) {
        size_t n = strlen(pg->secrets[i]);
        if (strncmp(text, pg->secrets[i], n) == 0 && !word_char(text[n]))
            return n;
    }
    return 0;
}

/* text with every secret of pg replaced by ***, trailing newlines dropped
 * and inner ones turned into "; ". */
static void scrub(char *out, size_t size, const char *text, const fdx_pg *pg)
{
    size_t len = 0, sn;
    const char *start = text;
    while (*text && len + 4 < size) {
        if ((sn = secret_at(pg, start, text)) > 0) {
            memcpy(out + len, "***", 3);
            len += 3;
            text += sn;
        } else if (*text == '\n') {
            text++;
            if (*text && len + 3 < size) {
                memcpy(out + len, "; ", 2);
                len += 2;
            }
        } else {
            out[len++] = *text++;
        }
    }
    out[len] = '\0';
}

static int code_of(fdx_pg *pg, const PGresult *r)
{
    if (!pg->conn || PQstatus(pg->conn) != CONNECTION_OK)
        return FDX_EIO;
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (!state)
        return FDX_ERROR;
    if (strncmp(state, "08", 2) == 0 || strncmp(state, "57P", 3) == 0)
        return FDX_EIO;
    if (strcmp(state, "42501") == 0)
        return FDX_EREADONLY; /* insufficient privilege */
    if (strncmp(state, "53", 2) == 0)
        return strcmp(state, "53200") == 0 ? FDX_ENOMEM : FDX_EIO;
    if (strcmp(state, "55P03") == 0)
        return FDX_EBUSY; /* a lock not granted within the busy timeout */
    if (strncmp(state, "22", 2) == 0 || strncmp(state, "23", 2) == 0)
        return FDX_EDATA;
    return FDX_ERROR;
}

int fdx_pg_fail(fdx_store *s, fdx_pg *pg, const PGresult *r, const char *what)
{
    const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    const char *detail = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL) : NULL;
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    char both[1024];
    if (msg && detail) {
        snprintf(both, sizeof both, "%s (%s)", msg, detail);
        msg = both;
    } else if (msg && state && strcmp(state, "55P03") == 0) {
        snprintf(both, sizeof both,
                 "busy: another writer held the store for longer than the busy timeout (%d ms) "
                 "(%s)",
                 s->busy_ms, msg);
        msg = both;
    }
    if (!msg || !*msg)
        msg = pg->conn ? PQerrorMessage(pg->conn) : "out of memory";
    if (!*msg)
        msg = "unknown error";
    char clean[768];
    scrub(clean, sizeof clean, msg, pg);
    return fdx_store_fail(s, code_of(pg, r), "%s: %s: %s", s->path, what, clean);
}

/* Adds p's n bytes as a secret, and each of its pieces between sep bytes
 * (libpq may have read a piece as something else and named it). */
static void add_secret(fdx_pg *pg, const char *p, size_t n, char sep)
{
    int max = (int)(sizeof pg->secrets / sizeof pg->secrets[0]);
    if (n > 0 && pg->n_secrets < max && (pg->secrets[pg->n_secrets] = strndup(p, n)))
        pg->n_secrets++;
    const char *cut = sep ? memchr(p, sep, n) : NULL;
    if (cut) {
        add_secret(pg, p, (size_t)(cut - p), 0);
        add_secret(pg, cut + 1, n - (size_t)(cut - p) - 1, sep);
    }
}

/* The password as the URI's writer may have meant it, where libpq read
 * less of it: the userinfo's up to the last '@' before the first '/' (an
 * unencoded '@' in it), and a query's password up to the next parameter (an
 * unencoded '&'), with any key spelt in another case. */
static void read_secrets(fdx_pg *pg)
{
    const char *p = strstr(pg->uri, "://"), *at = NULL, *colon;
    p = p ? p + 3 : pg->uri;
    size_t auth = strcspn(p, "/");
    for (const char *q = p; q < p + auth; q++)
        if (*q == '@')
            at = q;
    if (at && (colon = memchr(p, ':', (size_t)(at - p))))
        add_secret(pg, colon + 1, (size_t)(at - colon - 1), '@');
    for (const char *q = strchr(p, '?'); q && *q; q += strcspn(q + 1, "&") + 1) {
        if (strncasecmp(q + 1, "password=", 9) != 0)
            continue;
        const char *v = q + 10, *end = password_value(v + strcspn(v, "&"));
        add_secret(pg, v, (size_t)(end - v), '&');
    }
}

/* The password libpq would use from the URI itself, for scrubbing. */
static int read_password(fdx_store *s, fdx_pg *pg)
{
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(pg->uri, &err);
    if (!opts) {
        char clean[512];
        unquote(clean, sizeof clean, err ? err : "out of memory");
        PQfreemem(err);
        return fdx_store_fail(s, FDX_EMISUSE, "%s: not a valid PostgreSQL URI: %s", s->path, clean);
    }
    for (PQconninfoOption *o = opts; o->keyword; o++)
        if (strcmp(o->keyword, "password") == 0 && o->val && *o->val)
            add_secret(pg, o->val, strlen(o->val), 0);
    PQconninfoFree(opts);
    read_secrets(pg);
    return FDX_OK;
}

/* The server's notices (a WARNING as it shuts down, say) went to stderr
 * unprefixed, through -q; what fails is said by the failure itself. */
static void drop_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* fdx's settings of a session, at every connection and reconnection (a
 * reset session has the role's and database's own again). */
static int configure(fdx_store *s, fdx_pg *pg)
{
    PGresult *r = PQexec(pg->conn, fdx_sql_pg_connection);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    int rc = ok ? FDX_OK : fdx_pg_fail(s, pg, r, "configuring the connection");
    PQclear(r);
    return rc == FDX_OK ? fdx_pg_lock_timeout(s, pg, 0) : rc;
}

int fdx_pg_connect(fdx_store *s, fdx_pg *pg)
{
    char why[512];
    if (!fdx_libpq_load(why, sizeof why))
        return fdx_store_fail(s, FDX_EIO, "%s: PostgreSQL stores need libpq: %s", s->path, why);
    int rc = read_password(s, pg);
    if (rc != FDX_OK)
        return rc;
    /* Later keywords override earlier ones: the URI's own connect_timeout
     * and options win over the defaults (notices are not sent, from the
     * start: those sent before drop_notice is set go to stderr); the
     * encoding is fdx's (feeds are UTF-8). */
    const char *timeout = getenv("PGCONNECT_TIMEOUT");
    const char *keys[] = {"connect_timeout", "application_name", "options",
                          "dbname",          "client_encoding",  NULL};
    const char *vals[] = {timeout && *timeout ? timeout : "10",
                          "fdx",
                          "-c client_min_messages=error",
                          pg->uri,
                          "UTF8",
                          NULL};
    pg->conn = PQconnectdbParams(keys, vals, 1);
    if (!pg->conn)
        return fdx_store_fail(s, FDX_ENOMEM, "out of memory");
    if (PQstatus(pg->conn) != CONNECTION_OK)
        return fdx_pg_fail(s, pg, NULL, "cannot connect");
    PQsetNoticeProcessor(pg->conn, drop_notice, NULL);
    return configure(s, pg);
}

int fdx_pg_reset(fdx_store *s, fdx_pg *pg)
{
    PQreset(pg->conn);
    if (PQstatus(pg->conn) != CONNECTION_OK)
        return fdx_pg_fail(s, pg, NULL, "reconnecting");
    return configure(s, pg);
}

int fdx_pg_lock_timeout(fdx_store *s, fdx_pg *pg, int local)
{
    char ms[32];
    snprintf(ms, sizeof ms, "%dms", s->busy_ms > 0 ? s->busy_ms : 1); /* 0 would wait for ever */
    const char *vals[] = {ms, local ? "true" : "false"};
    PGresult *r = fdx_pg_exec(pg, fdx_sql_pg_lock_timeout, 2, vals);
    int rc = PQresultStatus(r) == PGRES_TUPLES_OK
                 ? FDX_OK
                 : fdx_pg_fail(s, pg, r, "setting the busy timeout");
    PQclear(r);
    return rc;
}

PGresult *fdx_pg_exec(fdx_pg *pg, const char *sql, int n, const char *const *values)
{
    return PQexecParams(pg->conn, sql, n, NULL, values, NULL, NULL, 0);
}

int fdx_pg_run(fdx_store *s, fdx_pg *pg, const char *sql, const char *what)
{
    PGresult *r = fdx_pg_exec(pg, sql, 0, NULL);
    ExecStatusType st = PQresultStatus(r);
    int rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? FDX_OK : fdx_pg_fail(s, pg, r, what);
    PQclear(r);
    return rc;
}

int fdx_pg_retryable(const PGresult *r)
{
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    return state && (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0);
}
