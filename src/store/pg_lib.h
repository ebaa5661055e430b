/*
 * libpq, loaded when the first PostgreSQL store opens (pg_lib.c). Every
 * file that speaks to PostgreSQL includes this after <libpq-fe.h>: the
 * libpq names it uses then call through fdx_libpq's table, so a process
 * that never opens a postgresql:// store never maps libpq.
 */
#ifndef FDX_STORE_PG_LIB_H
#define FDX_STORE_PG_LIB_H

#include <libpq-fe.h>
#include <stddef.h>

#define FDX_LIBPQ_FUNCTIONS(X)                                                                     \
    X(PQclear)                                                                                     \
    X(PQcmdTuples)                                                                                 \
    X(PQconnectdbParams)                                                                           \
    X(PQconninfoFree)                                                                              \
    X(PQconninfoParse)                                                                             \
    X(PQerrorMessage)                                                                              \
    X(PQexec)                                                                                      \
    X(PQexecParams)                                                                                \
    X(PQfinish)                                                                                    \
    X(PQfreemem)                                                                                   \
    X(PQftype)                                                                                     \
    X(PQgetResult)                                                                                 \
    X(PQgetisnull)                                                                                 \
    X(PQgetlength)                                                                                 \
    X(PQgetvalue)                                                                                  \
    X(PQnfields)                                                                                   \
    X(PQntuples)                                                                                   \
    X(PQputCopyData)                                                                               \
    X(PQputCopyEnd)                                                                                \
    X(PQreset)                                                                                     \
    X(PQresultErrorField)                                                                          \
    X(PQresultStatus)                                                                              \
    X(PQsetNoticeProcessor)                                                                        \
    X(PQstatus)

#define FDX_LIBPQ_MEMBER(name) __typeof__(name) *name;
typedef struct fdx_libpq {
    FDX_LIBPQ_FUNCTIONS(FDX_LIBPQ_MEMBER)
} fdx_libpq;
#undef FDX_LIBPQ_MEMBER

extern fdx_libpq fdx_libpq_fns;

/* Loads libpq once per process ($FDX_LIBPQ names another file than
 * libpq.so.5) and fills fdx_libpq_fns. 1 when every function is there;
 * otherwise 0 with why in err (which also says it on later calls). */
int fdx_libpq_load(char *err, size_t size);

#ifndef FDX_PG_LIB_IMPL
#define PQclear              (fdx_libpq_fns.PQclear)
#define PQcmdTuples          (fdx_libpq_fns.PQcmdTuples)
#define PQconnectdbParams    (fdx_libpq_fns.PQconnectdbParams)
#define PQconninfoFree       (fdx_libpq_fns.PQconninfoFree)
#define PQconninfoParse      (fdx_libpq_fns.PQconninfoParse)
#define PQerrorMessage       (fdx_libpq_fns.PQerrorMessage)
#define PQexec               (fdx_libpq_fns.PQexec)
#define PQexecParams         (fdx_libpq_fns.PQexecParams)
#define PQfinish             (fdx_libpq_fns.PQfinish)
#define PQfreemem            (fdx_libpq_fns.PQfreemem)
#define PQftype              (fdx_libpq_fns.PQftype)
#define PQgetResult          (fdx_libpq_fns.PQgetResult)
#define PQgetisnull          (fdx_libpq_fns.PQgetisnull)
#define PQgetlength          (fdx_libpq_fns.PQgetlength)
#define PQgetvalue           (fdx_libpq_fns.PQgetvalue)
#define PQnfields            (fdx_libpq_fns.PQnfields)
#define PQntuples            (fdx_libpq_fns.PQntuples)
#define PQputCopyData        (fdx_libpq_fns.PQputCopyData)
#define PQputCopyEnd         (fdx_libpq_fns.PQputCopyEnd)
#define PQreset              (fdx_libpq_fns.PQreset)
#define PQresultErrorField   (fdx_libpq_fns.PQresultErrorField)
#define PQresultStatus       (fdx_libpq_fns.PQresultStatus)
#define PQsetNoticeProcessor (fdx_libpq_fns.PQsetNoticeProcessor)
#define PQstatus             (fdx_libpq_fns.PQstatus)
#endif

#endif
