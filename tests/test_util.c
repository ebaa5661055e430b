/* Test helpers (see test_util.h). */
#include "test_util.h"

#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FDX_TEST_DATA
#error "FDX_TEST_DATA must name tests/data"
#endif

char *tu_tempdir(void)
{
    const char *base = getenv("TMPDIR");
    char *tmpl;
    ck_assert_int_ne(asprintf(&tmpl, "%s/fdx-test-XXXXXX", base && *base ? base : "/tmp"), -1);
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    return tmpl;
}

char *tu_dir;

void tu_dir_setup(void)
{
    tu_dir = tu_tempdir();
}

void tu_dir_teardown(void)
{
    tu_rmtree(tu_dir);
    free(tu_dir);
    tu_dir = NULL;
}

const char *tu_path(const char *dir, const char *name)
{
    static char bufs[8][4096];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
    return b;
}

void tu_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    ck_assert_int_eq(fclose(f), 0);
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 2)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void tu_rmtree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *tu_data(const char *rel)
{
    return tu_path(FDX_TEST_DATA, rel);
}

fdx_store *tu_open(const char *path)
{
    fdx_store *db;
    int rc = fdx_store_open(path, FDX_OPEN_CREATE, &db);
    ck_assert_msg(rc == FDX_OK, "open %s: %s", path, fdx_store_errmsg(db));
    return db;
}

void tu_commit_miss(fdx_store *db, const char *wanted)
{
    const char *dt[] = {"F16"};
    fdx_miss m = {wanted, {"Cuda", "MatMul", dt, 1, "src", 1}, 1, {0, 0, 0, "cpu", "n/a"}};
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    ck_assert_msg(fdx_store_record_miss(db, &m) == FDX_OK, "%s", fdx_store_errmsg(db));
    ck_assert_msg(fdx_store_commit(db, NULL) == FDX_OK, "%s", fdx_store_errmsg(db));
}

int tu_ingest(fdx_store *db, const char *const *paths, size_t n)
{
    ck_assert_int_eq(fdx_store_begin(db), FDX_OK);
    for (size_t i = 0; i < n; i++) {
        int rc = fdx_store_ingest_path(db, paths[i], NULL, NULL);
        if (rc != FDX_OK) {
            fdx_store_rollback(db);
            return rc;
        }
    }
    return fdx_store_commit(db, NULL);
}

char *tu_export(fdx_store *db, const char *dir)
{
    int rc = fdx_store_export(db, dir, NULL);
    ck_assert_msg(rc == FDX_OK, "export: %s", fdx_store_errmsg(db));
    char *m = tu_read_file(tu_path(dir, "misses.jsonl"), NULL);
    char *d = tu_read_file(tu_path(dir, "dispatches.jsonl"), NULL);
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(d);
    char *all;
    ck_assert_int_ne(asprintf(&all, "%s--\n%s", m, d), -1);
    free(m);
    free(d);
    return all;
}

int tu_open_file_in(const char *dir, struct stat *st)
{
    int found = 0;
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char link[300], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        if (n > 0 && strncmp(target, dir, strlen(dir)) == 0 && stat(link, st) == 0)
            found = 1;
    }
    closedir(d);
    return found;
}

void tu_raw_exec(const char *path, const char *sql)
{
    sqlite3 *raw;
    ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
}
