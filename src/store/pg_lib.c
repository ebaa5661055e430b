/*
 * Loading libpq at first use. Linked in, libpq and the TLS, Kerberos and
 * LDAP libraries it needs cost every process about 6 MiB of resident memory
 * from its first instruction, though most never open a PostgreSQL store:
 * an ingest on a GPU host, a runtime embedding the sink. It stays loaded
 * until the process exits, as a linked library would.
 */
#define FDX_PG_LIB_IMPL
#include "store/pg_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FDX_LIBPQ_SONAME
#define FDX_LIBPQ_SONAME "libpq.so.5"
#endif

fdx_libpq fdx_libpq_fns;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[512]; /* empty once every function is found */

/* ISO C has no conversion from void * to a function pointer; POSIX
 * guarantees dlsym's answer has the function's representation. */
static int find(void *lib, const char *file, const char *name, void *slot, size_t size)
{
    void *p = dlsym(lib, name);
    if (!p) {
        snprintf(why, sizeof why, "%s has no %s", file, name);
        return 0;
    }
    memcpy(slot, &p, size);
    return 1;
}

static void load(void)
{
    const char *file = secure_getenv("FDX_LIBPQ");
    if (!file || !*file)
        file = FDX_LIBPQ_SONAME;
    void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(why, sizeof why, "cannot load %s (install libpq5): %s", file,
                 e ? e : "unknown error");
        return;
    }
    fdx_libpq found;
#define FDX_LIBPQ_FIND(name)                                                                       \
    if (!find(lib, file, #name, &found.name, sizeof found.name)) {                                 \
        dlclose(lib);                                                                              \
        return;                                                                                    \
    }
    FDX_LIBPQ_FUNCTIONS(FDX_LIBPQ_FIND)
#undef FDX_LIBPQ_FIND
    fdx_libpq_fns = found;
}

int fdx_libpq_load(char *err, size_t size)
{
    if (pthread_once(&once, load) != 0)
        snprintf(why, sizeof why, "cannot load %s", FDX_LIBPQ_SONAME);
    if (fdx_libpq_fns.PQstatus)
        return 1;
    snprintf(err, size, "%s", why[0] ? why : "libpq was not loaded");
    return 0;
}
