/*
 * How big a store grows under long-running accumulation: DAYS daily
 * transactions, each recording CELLS miss cells (the same cells every day,
 * as a fleet's demand mostly recurs, with counts that vary), captured a day
 * apart. The history's daily window rolls into months as it would in the
 * field. bench/run.py reports the file's size and the history's share.
 * Usage: history_size DB DAYS CELLS
 */
#include <stdio.h>
#include <stdlib.h>

#include "fdx.h"

static const char *const dtypes[] = {"F16", "F16"};

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: history_size DB DAYS CELLS\n");
        return 2;
    }
    int days = atoi(argv[2]), cells = atoi(argv[3]);
    fdx_store *db;
    if (fdx_store_open(argv[1], FDX_OPEN_CREATE, &db) != FDX_OK) {
        fprintf(stderr, "%s\n", fdx_store_errmsg(db));
        return 1;
    }
    char key[64];
    fdx_miss m = {key,
                  {"Cuda", "MatMul", dtypes, 2, "baracuda-generic-strided", 0xabcdef0123456789u},
                  1,
                  {1, 8, 9, "NVIDIA GeForce RTX 4090", "552.44"}};
    const int64_t start = 1735689600; /* 2025-01-01 */
    int rc = FDX_OK;
    for (int d = 0; rc == FDX_OK && d < days; d++) {
        rc = fdx_store_begin(db);
        if (rc == FDX_OK)
            rc = fdx_store_set_time(db, start + (int64_t)d * 86400);
        for (int c = 0; rc == FDX_OK && c < cells; c++) {
            snprintf(key, sizeof key, "matmul:innerdiv%d:vec%d:contig", c, c % 8);
            m.count = (uint64_t)(1 + (c * 7 + d * 13) % 50);
            rc = fdx_store_record_miss(db, &m);
        }
        if (rc == FDX_OK)
            rc = fdx_store_commit(db, NULL);
    }
    if (rc != FDX_OK)
        fprintf(stderr, "%s\n", fdx_store_errmsg(db));
    fdx_store_close(db);
    return rc == FDX_OK ? 0 : 1;
}
