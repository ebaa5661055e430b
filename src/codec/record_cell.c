/*
 * Cells from API records: every string checked (present, not too long, valid
 * UTF-8 unless the decoder already checked it), dtypes and candidates written
 * as the JSON the store keeps and the export prints.
 */
#include "codec/record_cell.h"

#include <stdio.h>
#include <string.h>

#include "codec/encode.h"
#include "common/utf8.h"

/* A string field must be present, not absurdly long, and (unless the caller
 * vouches for it, as the decoder does) valid UTF-8. The field's name is only
 * formatted when something is wrong. Fields of a list's items (candidates)
 * are named with the item's index: list[item].prefix.field. */
typedef struct check_ctx {
    int trusted;
    char *err;
    size_t errsz;
    const char *list; /* NULL: the field is not in a list's item */
    size_t item;
} check_ctx;

typedef enum text_problem {
    TEXT_OK,
    TEXT_MISSING,
    TEXT_TOO_LONG,
    TEXT_BAD_UTF8, /* at a byte offset */
} text_problem;

#define NO_INDEX ((size_t)-1)

/* Writes "<field's name>: <what>" into the context's error buffer. */
static void name_field(const check_ctx *c, const char *prefix, const char *field, size_t index,
                       const char *what)
{
    char list[48] = "", idx[32] = "";
    if (c->list)
        snprintf(list, sizeof list, "%s[%zu].", c->list, c->item);
    if (index != NO_INDEX)
        snprintf(idx, sizeof idx, "[%zu]", index);
    snprintf(c->err, c->errsz, "%s%s%s%s: %s", list, prefix, field, idx, what);
}

/* On FDX_OK, *len (when not NULL) is the string's length. */
static int check_text(const check_ctx *c, const char *s, const char *prefix, const char *field,
                      size_t index, size_t *len)
{
    static const char *const what[] = {
        [TEXT_MISSING] = "missing (NULL)",
        [TEXT_TOO_LONG] = "too long",
        [TEXT_BAD_UTF8] = "invalid UTF-8",
    };
    text_problem problem = TEXT_OK;
    size_t bad = 0, n = s ? strlen(s) : 0;
    if (!s)
        problem = TEXT_MISSING;
    else if (n > FDX_MAX_STRING)
        problem = TEXT_TOO_LONG;
    else if (!c->trusted && !fdx_utf8_valid(s, n, &bad))
        problem = TEXT_BAD_UTF8;
    if (problem == TEXT_OK) {
        if (len)
            *len = n;
        return FDX_OK;
    }
    char at[64] = "";
    if (problem == TEXT_BAD_UTF8)
        snprintf(at, sizeof at, "%s at byte %zu", what[problem], bad);
    else if (problem == TEXT_TOO_LONG)
        snprintf(at, sizeof at, "%s (%zu bytes; at most %u)", what[problem], n, FDX_MAX_STRING);
    name_field(c, prefix, field, index, at[0] ? at : what[problem]);
    return FDX_EDATA;
}

/* Fills the lengths of backend, op and kernel_source in lens. */
static int check_impl(const check_ctx *c, const fdx_impl *id, const char *prefix, size_t lens[3])
{
    if (check_text(c, id->backend, prefix, "backend", NO_INDEX, &lens[0]) ||
        check_text(c, id->op, prefix, "op", NO_INDEX, &lens[1]) ||
        check_text(c, id->kernel_source, prefix, "kernel_source", NO_INDEX, &lens[2]))
        return FDX_EDATA;
    if (id->n_dtypes && !id->dtypes) {
        name_field(c, prefix, "dtypes", NO_INDEX, "missing (NULL)");
        return FDX_EDATA;
    }
    for (size_t i = 0; i < id->n_dtypes; i++)
        if (check_text(c, id->dtypes[i], prefix, "dtypes", i, NULL))
            return FDX_EDATA;
    return FDX_OK;
}

static int fill_common(const check_ctx *c, fdx_cell *cell, const fdx_impl *id, const fdx_hw *hw,
                       const char *prefix, fdx_buf *dtypes)
{
    size_t lens[3], sku_len, driver_len;
    if (check_impl(c, id, prefix, lens) != FDX_OK ||
        check_text(c, hw->hardware_sku, "hw.", "hardware_sku", NO_INDEX, &sku_len) != FDX_OK ||
        check_text(c, hw->driver_version, "hw.", "driver_version", NO_INDEX, &driver_len) != FDX_OK)
        return FDX_EDATA;
    fdx_buf_clear(dtypes);
    fdx_enc_string_array(dtypes, id->dtypes, id->n_dtypes);
    if (dtypes->oom) {
        snprintf(c->err, c->errsz, "out of memory");
        return FDX_ENOMEM;
    }
    cell->backend = (fdx_str){id->backend, lens[0]};
    cell->op = (fdx_str){id->op, lens[1]};
    cell->dtypes_json.p = dtypes->data;
    cell->dtypes_json.n = dtypes->len;
    cell->kernel_source = (fdx_str){id->kernel_source, lens[2]};
    cell->revision = id->kernel_revision_hash;
    cell->cc_major = hw->has_compute_capability ? (int64_t)hw->cc_major : FDX_CC_ABSENT;
    cell->cc_minor = hw->has_compute_capability ? (int64_t)hw->cc_minor : FDX_CC_ABSENT;
    cell->sku = (fdx_str){hw->hardware_sku, sku_len};
    cell->driver = (fdx_str){hw->driver_version, driver_len};
    return FDX_OK;
}

int fdx_cell_from_miss(fdx_cell *cell, const fdx_miss *m, int trusted, fdx_buf *dtypes, char *err,
                       size_t errsz)
{
    check_ctx c = {trusted, err, errsz, NULL, 0};
    size_t len;
    if (check_text(&c, m->wanted, "", "wanted", NO_INDEX, &len) != FDX_OK)
        return FDX_EDATA;
    cell->kind = FDX_KIND_MISS;
    cell->keyed = 1;
    cell->token = (fdx_str){m->wanted, len};
    return fill_common(&c, cell, &m->fallback, &m->hw, "fallback.", dtypes);
}

int fdx_cands_encode(const fdx_candidate *cands, size_t n, int trusted, fdx_buf *out, char *err,
                     size_t errsz)
{
    check_ctx c = {trusted, err, errsz, "candidates", 0};
    if (n && !cands) {
        snprintf(err, errsz, "candidates: missing (NULL)");
        return FDX_EDATA;
    }
    size_t lens[3];
    for (c.item = 0; c.item < n; c.item++)
        if (check_impl(&c, &cands[c.item].impl_id, "impl_id.", lens) != FDX_OK)
            return FDX_EDATA;
    fdx_buf_clear(out);
    fdx_enc_candidates(out, cands, n);
    if (out->oom) {
        snprintf(err, errsz, "out of memory");
        return FDX_ENOMEM;
    }
    return FDX_OK;
}

int fdx_cell_from_dispatch(fdx_cell *cell, const fdx_dispatch *d, int trusted, fdx_buf *dtypes,
                           fdx_buf *cands, char *err, size_t errsz)
{
    check_ctx c = {trusted, err, errsz, NULL, 0};
    size_t len = 0;
    if (d->structure_key &&
        check_text(&c, d->structure_key, "", "structure_key", NO_INDEX, &len) != FDX_OK)
        return FDX_EDATA;
    int rc = fdx_cands_encode(d->candidates, d->n_candidates, trusted, cands, err, errsz);
    if (rc != FDX_OK)
        return rc;
    cell->kind = FDX_KIND_DISPATCH;
    cell->keyed = d->structure_key != NULL;
    cell->token = (fdx_str){d->structure_key ? d->structure_key : "", len};
    return fill_common(&c, cell, &d->chosen, &d->hw, "chosen.", dtypes);
}
