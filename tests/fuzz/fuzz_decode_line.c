/*
 * libFuzzer target: the line decoder. Any input either decodes or is refused
 * with a reason; a decoded record, exported and decoded again, must export to
 * the very same bytes (the codec round-trips).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cell/cell.h"
#include "codec/decode.h"
#include "codec/encode.h"
#include "codec/record_cell.h"

static void encode_record(const fdx_record *r, fdx_buf *line)
{
    fdx_buf dtypes = FDX_BUF_INIT, cands = FDX_BUF_INIT;
    fdx_cell cell;
    char err[256];
    int rc = r->kind == FDX_KIND_MISS
                 ? fdx_cell_from_miss(&cell, &r->miss, 0, &dtypes, err, sizeof err)
                 : fdx_cell_from_dispatch(&cell, &r->dispatch, 0, &dtypes, &cands, err, sizeof err);
    if (rc != FDX_OK) {
        fprintf(stderr, "decoded record refused by the cell builder: %s\n", err);
        abort();
    }
    fdx_str c = {cands.data ? cands.data : "[]", cands.data ? cands.len : 2};
    fdx_buf_clear(line);
    fdx_enc_cell_line(line, &cell, r->kind == FDX_KIND_MISS ? r->miss.count : r->dispatch.count, c);
    fdx_buf_free(&dtypes);
    fdx_buf_free(&cands);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fdx_decoder *dec, *dec2;
    if (!dec) {
        dec = fdx_decoder_new(0);
        dec2 = fdx_decoder_new(0);
    }
    char err[512];
    fdx_record r, r2;
    err[0] = '\0';
    int rc = fdx_decode_line(dec, (const char *)data, size, &r, err, sizeof err);
    if (rc != FDX_OK) {
        if (rc != FDX_EDATA || !err[0])
            abort();
        return 0;
    }
    fdx_buf first = FDX_BUF_INIT, second = FDX_BUF_INIT;
    encode_record(&r, &first);
    if (fdx_decode_line(dec2, first.data, first.len - 1, &r2, err, sizeof err) != FDX_OK) {
        fprintf(stderr, "exported line does not decode: %s\n%s", err, first.data);
        abort();
    }
    encode_record(&r2, &second);
    if (first.len != second.len || memcmp(first.data, second.data, first.len) != 0) {
        fprintf(stderr, "round trip differs:\n%s%s", first.data, second.data);
        abort();
    }
    fdx_buf_free(&first);
    fdx_buf_free(&second);
    return 0;
}
