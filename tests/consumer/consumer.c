/* A program outside the fdx tree, built against an installed fdx: records a
 * miss in a new store, commits, exports and checks the exported line. */
#include <fdx.h>
#include <stdio.h>
#include <string.h>

static const char expected[] =
    "{\"schema\":2,\"wanted\":\"gelu:innerdiv8:vec1:contig\",\"fallback\":{\"backend\":\"Cuda\","
    "\"op\":\"Gelu\",\"dtypes\":[\"F16\",\"F16\"],\"kernel_source\":\"cutlass-generic\","
    "\"kernel_revision_hash\":18446744073709551615},\"count\":42,\"hw\":{\"compute_capability\":"
    "[9,0],\"hardware_sku\":\"NVIDIA H100 80GB HBM3\",\"driver_version\":\"560.35\"}}\n";

static int fail(fdx_store *db, const char *what, int rc)
{
    fprintf(stderr, "consumer: %s: %s (%s)\n", what, db ? fdx_store_errmsg(db) : "",
            fdx_strerror(rc));
    fdx_store_close(db);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: consumer DIR\n");
        return 2;
    }
    static const char *const dtypes[] = {"F16", "F16"};
    fdx_miss miss = {"gelu:innerdiv8:vec1:contig",
                     {"Cuda", "Gelu", dtypes, 2, "cutlass-generic", UINT64_MAX},
                     42,
                     {1, 9, 0, "NVIDIA H100 80GB HBM3", "560.35"}};
    char path[4096], line[1024];
    fdx_store *db = NULL;
    int rc;
    snprintf(path, sizeof path, "%s/consumer.db", argv[1]);
    if ((rc = fdx_store_open(path, FDX_OPEN_CREATE, &db)) != FDX_OK)
        return fail(db, "open", rc);
    if ((rc = fdx_store_begin(db)) != FDX_OK)
        return fail(db, "begin", rc);
    if ((rc = fdx_store_record_miss(db, &miss)) != FDX_OK)
        return fail(db, "record", rc);
    if ((rc = fdx_store_commit(db, NULL)) != FDX_OK)
        return fail(db, "commit", rc);
    snprintf(path, sizeof path, "%s/export", argv[1]);
    if ((rc = fdx_store_export(db, path, NULL)) != FDX_OK)
        return fail(db, "export", rc);
    if ((rc = fdx_store_close(db)) != FDX_OK)
        return fail(NULL, "close", rc);

    snprintf(path, sizeof path, "%s/export/misses.jsonl", argv[1]);
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    if (strcmp(line, expected) != 0) {
        fprintf(stderr, "consumer: %s holds\n%s\nexpected\n%s", path, line, expected);
        return 1;
    }
    printf("consumer: fdx %s: recorded, committed and exported one miss\n", FDX_VERSION);
    return 0;
}
